//! The pull request of a GitHub Actions event (`GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`).

use std::path::Path;

use serde_json::Value;

use crate::http::ApiError;

/// What the event says about the pull request to comment on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventPr {
    /// `pull_request`, `pull_request_target`, or a `workflow_run` listing its pull request.
    Number(u64),
    /// A `workflow_run` of a pull request with an empty `pull_requests` list (as for a
    /// fork's): the pull request is the open one whose head is this commit.
    HeadSha(String),
    /// An event without a pull request (push, schedule, workflow_dispatch, …).
    None { event: String },
}

/// Largest event file read: GitHub caps webhook payloads at 25 MB.
const MAX_EVENT_BYTES: u64 = 64 << 20;

/// Reads the event. Without `GITHUB_EVENT_NAME` there is no pull request.
pub fn read(event_name: Option<&str>, event_path: Option<&Path>) -> Result<EventPr, ApiError> {
    let Some(name) = event_name.filter(|n| !n.is_empty()) else {
        return Ok(EventPr::None {
            event: "none (GITHUB_EVENT_NAME is not set)".into(),
        });
    };
    if !matches!(
        name,
        "pull_request" | "pull_request_target" | "workflow_run"
    ) {
        return Ok(EventPr::None {
            event: name.to_owned(),
        });
    }
    let path = event_path.ok_or_else(|| {
        ApiError::Config(format!(
            "GITHUB_EVENT_NAME is {name} but GITHUB_EVENT_PATH is not set (pass --pr N)"
        ))
    })?;
    let event = load(path).map_err(ApiError::Config)?;
    parse(name, &event).map_err(|problem| {
        ApiError::Config(format!(
            "the {name} event in {}: {problem} (pass --pr N)",
            path.display()
        ))
    })
}

/// The pull request of an event payload; `Err` says what is missing or wrong.
pub fn parse(name: &str, event: &Value) -> Result<EventPr, String> {
    match name {
        "pull_request" | "pull_request_target" => {
            let inner = number(event.get("pull_request"), "pull_request.number")?;
            let outer = number(Some(event), "number")?;
            match (outer, inner) {
                (Some(o), Some(i)) if o != i => {
                    Err(format!("number is {o} but pull_request.number is {i}"))
                }
                (_, Some(n)) | (Some(n), None) => Ok(EventPr::Number(n)),
                (None, None) => Err("no pull_request.number".into()),
            }
        }
        "workflow_run" => {
            let run = event.get("workflow_run").ok_or("no workflow_run")?;
            let listed = run.get("pull_requests").and_then(Value::as_array);
            for (i, pr) in listed.into_iter().flatten().enumerate() {
                let field = format!("workflow_run.pull_requests[{i}].number");
                if let Some(n) = number(Some(pr), &field)? {
                    return Ok(EventPr::Number(n));
                }
            }
            let triggering = run.get("event").and_then(Value::as_str);
            if !matches!(
                triggering,
                None | Some("pull_request") | Some("pull_request_target")
            ) {
                return Ok(EventPr::None {
                    event: format!("workflow_run of a {} run", triggering.unwrap_or("")),
                });
            }
            run.get("head_sha")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit()))
                .map(|s| EventPr::HeadSha(s.to_owned()))
                .ok_or_else(|| "no workflow_run.pull_requests or workflow_run.head_sha".into())
        }
        other => Ok(EventPr::None {
            event: other.to_owned(),
        }),
    }
}

/// What `--baseline auto` needs of the event: the pull request's base branch and commit, for
/// a `workflow_run` the workflow file of the run that triggered it, and for a `push` the
/// branch pushed to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaseOf {
    pub base_ref: Option<String>,
    pub base_sha: Option<String>,
    /// `workflow_run.path`'s file name: the profiling workflow of a fork-safe pair.
    pub triggering_workflow: Option<String>,
    /// `workflow_run.head_sha` when the run lists no pull request (a fork's): the pull
    /// request, and so its base, is found by this head commit.
    pub head_sha: Option<String>,
    /// `push`: the branch pushed to (`ref` `refs/heads/NAME`), whose own history the run is
    /// compared with.
    pub pushed_branch: Option<String>,
}

/// The base of the event's pull request (reads the event file); an empty [`BaseOf`] when the
/// event has none.
pub fn base_of(event_name: Option<&str>, event_path: Option<&Path>) -> Result<BaseOf, String> {
    let (Some(name), Some(path)) = (event_name, event_path) else {
        return Ok(BaseOf::default());
    };
    let event = load(path)?;
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let pull = match name {
        "pull_request" | "pull_request_target" => event.get("pull_request"),
        "workflow_run" => event
            .get("workflow_run")
            .and_then(|r| r.get("pull_requests"))
            .and_then(Value::as_array)
            .and_then(|a| a.first()),
        _ => None,
    };
    let base = pull.and_then(|p| p.get("base"));
    Ok(BaseOf {
        base_ref: text(base.and_then(|b| b.get("ref"))),
        base_sha: text(base.and_then(|b| b.get("sha")))
            .filter(|s| s.chars().all(|c| c.is_ascii_hexdigit())),
        triggering_workflow: text(event.get("workflow_run").and_then(|r| r.get("path")))
            .and_then(|p| p.rsplit('/').next().map(str::to_owned)),
        // As `parse` reads it: only a run of a pull request, and a hexadecimal commit.
        head_sha: match parse(name, &event) {
            Ok(EventPr::HeadSha(sha)) => Some(sha),
            _ => None,
        },
        pushed_branch: (name == "push")
            .then(|| text(event.get("ref")))
            .flatten()
            .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_owned))
            .filter(|b| !b.is_empty()),
    })
}

/// The event file, read with a bound and parsed; `Err` says which file and why not.
fn load(path: &Path) -> Result<Value, String> {
    let bytes = nsys_gate_core::files::read_regular(path, MAX_EVENT_BYTES).map_err(|e| {
        format!(
            "cannot read the event file {} (GITHUB_EVENT_PATH): {}",
            path.display(),
            e.into_io_error()
        )
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("the event file {} is not JSON: {e}", path.display()))
}

/// `holder.number`: `None` when absent (or null), else a pull-request number, a whole number
/// from 1 (the event file may come from anywhere: 0 or -1 is never taken as a pull request).
fn number(holder: Option<&Value>, field: &str) -> Result<Option<u64>, String> {
    match holder.and_then(|h| h.get("number")) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!(
                "{field} is {}, not a pull-request number (a whole number from 1)",
                shown(v)
            )),
        },
    }
}

/// A JSON value as a message shows it: short.
fn shown(v: &Value) -> String {
    match v {
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
        other => {
            let text = other.to_string();
            if text.chars().count() > 40 {
                format!("{}…", text.chars().take(40).collect::<String>())
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pull_request_events() {
        let e = json!({"number": 7, "pull_request": {"number": 7}});
        assert_eq!(parse("pull_request", &e), Ok(EventPr::Number(7)));
        assert_eq!(
            parse("pull_request_target", &json!({"number": 9})),
            Ok(EventPr::Number(9))
        );
        assert!(parse("pull_request", &json!({})).is_err());
    }

    #[test]
    fn workflow_run_events() {
        let listed = json!({"workflow_run": {"event": "pull_request", "head_sha": "abc1",
            "pull_requests": [{"number": 12, "head": {"sha": "abc1"}}]}});
        assert_eq!(parse("workflow_run", &listed), Ok(EventPr::Number(12)));
        let fork = json!({"workflow_run": {"event": "pull_request", "head_sha": "abc1", "pull_requests": []}});
        assert_eq!(
            parse("workflow_run", &fork),
            Ok(EventPr::HeadSha("abc1".into()))
        );
        let push =
            json!({"workflow_run": {"event": "push", "head_sha": "abc1", "pull_requests": []}});
        assert!(matches!(
            parse("workflow_run", &push),
            Ok(EventPr::None { .. })
        ));
    }

    #[test]
    fn pull_request_numbers_are_whole_numbers_from_1() {
        for (event, problem) in [
            (json!({"number": 0}), "number is 0"),
            (
                json!({"pull_request": {"number": -1}}),
                "pull_request.number is -1",
            ),
            (
                json!({"pull_request": {"number": 2.5}}),
                "pull_request.number is 2.5",
            ),
            (
                json!({"pull_request": {"number": "7"}}),
                "pull_request.number is \"7\"",
            ),
            (
                json!({"pull_request": {"number": [7]}}),
                "pull_request.number is an array",
            ),
            (
                json!({"number": 7, "pull_request": {"number": 0}}),
                "pull_request.number is 0",
            ),
        ] {
            let err = parse("pull_request", &event).unwrap_err();
            assert_eq!(
                err,
                format!("{problem}, not a pull-request number (a whole number from 1)")
            );
        }
        assert_eq!(
            parse(
                "pull_request",
                &json!({"number": 7, "pull_request": {"number": 8}})
            ),
            Err("number is 7 but pull_request.number is 8".to_owned())
        );
        assert_eq!(
            parse(
                "pull_request",
                &json!({"number": 7, "pull_request": {"number": null}})
            ),
            Ok(EventPr::Number(7))
        );
        let zero = json!({"workflow_run": {"pull_requests": [{"number": 0}], "head_sha": "ab"}});
        assert_eq!(
            parse("workflow_run", &zero),
            Err("workflow_run.pull_requests[0].number is 0, not a pull-request number (a whole number from 1)".to_owned())
        );
        let long = "9".repeat(60);
        let err = parse("pull_request", &json!({"number": long})).unwrap_err();
        assert!(
            err.starts_with(&format!("number is \"{}…,", &long[..39])),
            "{err}"
        );
    }

    #[test]
    fn other_events_have_no_pull_request() {
        for name in ["push", "schedule", "workflow_dispatch"] {
            assert_eq!(
                read(Some(name), None).unwrap(),
                EventPr::None { event: name.into() }
            );
        }
        assert!(matches!(read(None, None), Ok(EventPr::None { .. })));
    }
}
