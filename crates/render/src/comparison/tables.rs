//! The comparison's tables: the measures, the conditions and the base runs of the history
//! (the items judged one by one, ranges, kernels and copies, are in [`super::items`]). Every
//! cell computed, formatted and escaped here.

use serde::Serialize;

use super::words::{commit, date, differ, range_pct, signed_pct};
use crate::escape::{self, inline_shortened as esc};
use crate::format::{column, plural, ColumnUnit, NBSP};
use nsys_gate_core::artifact::comparison::{
    BaseRun, ChangeVerdict, Condition, ConditionName, History, LeftOutReason, Measure,
};

/// [`NBSP`] as a pattern's replacement.
const NBSP_STR: &str = "\u{a0}";
use crate::limit::Caps;

#[derive(Debug, Serialize)]
pub struct MeasureRow {
    pub name: &'static str,
    /// The history's level and how many runs.
    pub base: String,
    pub head: String,
    pub change: String,
    /// Where a run of unchanged code lands (95 %), as changes.
    pub expected: String,
    pub verdict: String,
}

#[derive(Debug, Serialize)]
pub struct ConditionRow {
    pub name: String,
    pub base: String,
    pub head: String,
    /// `differs`, `same`, or `shown, not judged`.
    pub status: &'static str,
}

/// One base run of the history, in its collapsed table.
#[derive(Debug, Serialize)]
pub struct BaseRunRow {
    pub commit: String,
    pub date: String,
    pub host: String,
    pub gpu: String,
    /// `left out: …` for the runs not used.
    pub note: String,
}

/// The measures' rows: the history's level and the head in one unit (the largest value's).
pub fn measure_rows(measures: &[Measure]) -> Vec<MeasureRow> {
    let values: Vec<f64> = measures
        .iter()
        .flat_map(|m| {
            [
                m.base.as_ref().map_or(f64::NAN, |b| b.level_ns),
                m.head.as_ref().map_or(f64::NAN, |h| h.value_ns),
            ]
        })
        .collect();
    let shown = column(&values);
    measures
        .iter()
        .zip(shown.chunks(2))
        .map(|(m, pair)| MeasureRow {
            name: m.name.label(),
            base: m.base.as_ref().map_or("none".to_owned(), |b| {
                let runs = plural(b.runs as usize, "run", "runs").replace(' ', NBSP_STR);
                format!("{}{NBSP}({runs})", pair[0])
            }),
            head: m.head.as_ref().map_or("none".to_owned(), |h| {
                if h.runs > 1 {
                    format!("{}{NBSP}({}{NBSP}runs)", pair[1], h.runs)
                } else {
                    pair[1].clone()
                }
            }),
            change: m.change_pct.map_or("n/a".to_owned(), signed_pct),
            expected: match m.interval_pct {
                Some(i) => range_pct(i),
                None if m.change_pct.is_some() => "unknown".to_owned(),
                None => "n/a".to_owned(),
            },
            verdict: m
                .verdict
                .map_or("not\u{a0}compared", verdict_cell)
                .to_owned(),
        })
        .collect()
}

/// A verdict in a table cell: `slower` and `faster`, the verdicts beyond the noise, in bold;
/// the others' words held together by a no-break space (a cell never wraps).
pub fn verdict_cell(v: ChangeVerdict) -> &'static str {
    match v {
        ChangeVerdict::Slower => "**slower**",
        ChangeVerdict::Faster => "**faster**",
        ChangeVerdict::WithinNoise => "within\u{a0}noise",
        ChangeVerdict::NoiseUnknown => "noise\u{a0}unknown",
    }
}

/// A recorded value for a table cell: a string as it is, anything else as compact JSON.
fn shown_value(v: &serde_json::Value, caps: &Caps) -> String {
    match v {
        serde_json::Value::Null => "not recorded".to_owned(),
        serde_json::Value::String(s) => esc(s, caps.name_chars),
        other => esc(&other.to_string(), caps.message_chars.min(400)),
    }
}

/// A condition's recorded value in words: the device with its GPU names, the data source
/// with its record count and the start of the record ids' digest, a commit short, anything
/// else as it is.
fn condition_text(
    name: &ConditionName,
    v: &serde_json::Value,
    caps: &Caps,
    commit_prefix: Option<&str>,
) -> String {
    match name {
        ConditionName::Device => {
            let mut text = shown_value(&v["device"], caps);
            if let Some(gpus) = v["gpus"].as_array().filter(|g| !g.is_empty()) {
                let names: Vec<String> = gpus.iter().map(|g| shown_value(g, caps)).collect();
                text.push_str(&format!(" ({})", names.join(", ")));
            }
            text
        }
        ConditionName::DataSource => {
            let mut text = shown_value(&v["data_source"], caps);
            if let Some(n) = v["record_count"].as_u64() {
                text.push_str(&format!("; {n} records"));
            }
            if let Some(sha) = v["record_ids_sha256"].as_str() {
                let short: String = sha.chars().take(12).collect();
                text.push_str(&format!("; ids SHA-256 {}…", esc(&short, 12)));
            }
            text
        }
        ConditionName::GitCommit => commit(v.as_str(), commit_prefix),
        ConditionName::Gpu => match v.as_array() {
            Some(gpus) => gpu_text(gpus, caps),
            None => shown_value(v, caps),
        },
        ConditionName::Clock => match v.as_u64() {
            Some(mhz) => format!("{} MHz", nsys_gate_core::units::thousands(mhz as usize)),
            None => shown_value(v, caps),
        },
        _ => shown_value(v, caps),
    }
}

/// The GPUs of the `gpu` condition: `NVIDIA A100-SXM4-80GB (108 SMs, 80 GiB) x 2`, each kind
/// once with its count.
fn gpu_text(gpus: &[serde_json::Value], caps: &Caps) -> String {
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for g in gpus {
        let mut text = g["name"]
            .as_str()
            .map_or("unnamed GPU".to_owned(), |n| esc(n, caps.name_chars));
        let mut details = Vec::new();
        if let Some(sm) = g["sm_count"].as_u64() {
            details.push(format!("{sm} SMs"));
        }
        if let Some(bytes) = g["memory_bytes"].as_u64() {
            details.push(format!("{:.0} GiB", bytes as f64 / f64::from(1u32 << 30)));
        }
        if !details.is_empty() {
            text.push_str(&format!(" ({})", details.join(", ")));
        }
        match kinds.iter_mut().find(|(k, _)| *k == text) {
            Some((_, n)) => *n += 1,
            None => kinds.push((text, 1)),
        }
    }
    kinds
        .into_iter()
        .map(|(k, n)| if n == 1 { k } else { format!("{k} x {n}") })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The conditions table: every judged condition that differs, then the ones shown but never
/// judged.
pub fn condition_rows(
    conditions: &[Condition],
    caps: &Caps,
    commit_prefix: Option<&str>,
) -> Vec<ConditionRow> {
    let row = |c: &Condition| ConditionRow {
        name: super::words::condition(&c.name),
        base: condition_text(&c.name, &c.base, caps, commit_prefix),
        head: condition_text(&c.name, &c.head, caps, commit_prefix),
        status: if !c.judged {
            "shown, not judged"
        } else if c.differs {
            "differs"
        } else {
            "same"
        },
    };
    // The CPU and the operating system are listed when a run records them.
    let recorded = |c: &&Condition| {
        !matches!(c.name, ConditionName::Cpu | ConditionName::Os)
            || !c.base.is_null()
            || !c.head.is_null()
    };
    conditions
        .iter()
        .filter(|c| c.judged && c.differs)
        .chain(conditions.iter().filter(|c| !c.judged).filter(recorded))
        .map(row)
        .collect()
}

/// The history's base runs, oldest first, used and left out together, each with its values.
pub fn base_run_rows(h: &History, commit_prefix: Option<&str>) -> Vec<BaseRunRow> {
    let mut runs: Vec<(&BaseRun, String)> = h
        .used
        .iter()
        .map(|r| (r, String::new()))
        .chain(h.left_out.iter().map(|l| {
            let why = match l.reason {
                LeftOutReason::BeforeChangePoint => "left out: before the level shift".to_owned(),
                LeftOutReason::Outlier => format!(
                    "left out: an outlier of its {} ({})",
                    l.measure.map_or("time", |m| m.label()),
                    l.change_pct.map(signed_pct).unwrap_or_default()
                ),
                LeftOutReason::Invalid => format!(
                    "left out: {}",
                    escape::inline(l.why.as_deref().unwrap_or("impossible numbers"))
                ),
                LeftOutReason::Conditions => {
                    let labels: Vec<String> =
                        l.differs.iter().map(super::words::condition).collect();
                    format!("left out: {}", differ(&labels))
                }
            };
            (&l.run, why)
        }))
        .collect();
    runs.sort_by_key(|(r, _)| r.position);
    let host = ColumnUnit::of(runs.iter().filter_map(|(r, _)| r.host_inclusive_ns));
    let gpu = ColumnUnit::of(runs.iter().filter_map(|(r, _)| r.gpu_projected_ns));
    runs.into_iter()
        .map(|(r, note)| BaseRunRow {
            commit: commit(r.git_commit.as_deref(), commit_prefix),
            date: date(r.created_at.as_deref()),
            host: r
                .host_inclusive_ns
                .map_or("none".to_owned(), |v| host.show(v)),
            gpu: r
                .gpu_projected_ns
                .map_or("none".to_owned(), |v| gpu.show(v)),
            note,
        })
        .collect()
}
