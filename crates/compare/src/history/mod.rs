//! `--baseline auto` on every forge: the base branch's history from its CI runs' artifacts.
//! A forge lists the runs, says where each run's artifact is and hands it over ([`Archives`]:
//! GitHub's workflow runs and their artifact, GitLab's pipelines and their job's artifacts,
//! each downloaded with the forge's client); the rest is here, the same for all, and knows no
//! forge:
//!
//! - each run's artifact located, downloaded with a bound (by the forge: a redirect followed
//!   once without the token), unpacked safely ([`crate::unpack`]) into a temporary
//!   folder, its analysis.json files read and reduced at once ([`RunLevel::read`]), the folder
//!   removed; the unpacking and the reading ask the deadline and the signal flag between
//!   pieces;
//! - [`CONCURRENT_REQUESTS`] of the runs' requests under way at a time (a run's locating and
//!   its download, redirect included, each take one place; `HistoryRequest::concurrency` says
//!   otherwise), every run started at once, a download given a place before any locating and
//!   the newer run first (`places.rs`), the history kept in the forge's order whatever order
//!   they finish in;
//! - everything before the stage's deadline (`--baseline-timeout`): the runs fetched by then
//!   are used, the others named in a note; a SIGINT/SIGTERM drops what is under way (its
//!   temporary folders with it) and says what it stopped;
//! - every run's analyses are one point of the history (`RunLevel::ci_run_id`), and every run
//!   that gives nothing (no artifact, an expired one, a failed download) is a note, never an
//!   error.

use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;

mod fetch;
mod places;

pub use self::fetch::fetch_runs;
pub use self::fetch::Doing;
use crate::compare::RunLevel;
use nsys_gate_core::artifact::comparison::{BaselineKind, BaselineSource};
use nsys_gate_core::interrupt;
use nsys_gate_core::say::say;

/// What `--baseline auto` reads.
#[derive(Debug, Clone)]
pub struct HistoryRequest {
    /// GitHub: the workflow whose runs hold the history (`None`: this run's).
    pub workflow: Option<String>,
    /// GitLab: the job whose artifacts hold the history in each pipeline (`None`: this
    /// job's).
    pub job: Option<String>,
    /// The artifact's name.
    pub artifact: String,
    /// How many of the base branch's newest runs.
    pub runs: usize,
    /// `--repo`, `--api-url`, `--token-env` (`None`: the forge's default).
    pub repo: Option<String>,
    pub api_url: Option<String>,
    pub token_env: Option<String>,
    /// The deadline of finding and fetching it all.
    pub timeout: Duration,
    /// How many of its requests are under way at once (a run's locating and its download each
    /// count one; [`CONCURRENT_REQUESTS`] by default).
    pub concurrency: usize,
}

/// The base runs a forge found: reduced, oldest first; where they came from; and notes.
pub struct BaseRuns {
    pub runs: Vec<RunLevel>,
    pub source: BaselineSource,
    pub notes: Vec<HistoryNote>,
}

/// A note on the base runs read, typed by what it means for the comparison; its words are
/// the whole sentence the comparison shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryNote {
    /// Why there is no baseline at all (`no baseline: …`): the history could not be read.
    NoBaseline(String),
    /// Something left out, late or chosen: the base runs read still stand.
    Partial(String),
}

impl HistoryNote {
    /// Whether it says why there is no baseline.
    pub fn is_no_baseline(&self) -> bool {
        matches!(self, HistoryNote::NoBaseline(_))
    }

    /// Its words.
    pub fn into_text(self) -> String {
        match self {
            HistoryNote::NoBaseline(t) | HistoryNote::Partial(t) => t,
        }
    }
}

impl BaseRuns {
    /// No base run yet: an `auto` source naming only `request`'s artifact, and no note.
    pub fn none(request: &HistoryRequest) -> BaseRuns {
        BaseRuns {
            runs: Vec::new(),
            source: BaselineSource {
                kind: BaselineKind::Auto,
                paths: Vec::new(),
                workflow: None,
                job: None,
                branch: None,
                artifact: Some(request.artifact.clone()),
                workflow_runs: Vec::new(),
                ci_runs: Vec::new(),
                analyses: Vec::new(),
            },
            notes: Vec::new(),
        }
    }
}

/// The most of one artifact downloaded.
pub const MAX_ZIP_BYTES: u64 = 1 << 30;

/// The most base runs read (`--baseline-runs`).
pub const MAX_RUNS: usize = 100;

/// How many of the history's requests are under way at once by default: a run's locating (its
/// artifact list, its pipeline's jobs) is one, its download (the API's answer and the storage
/// host's, through the redirect) another. Enough to overlap the API's and the storage host's
/// latency (10 runs from an API that answers each request after 300 ms take under a third of
/// the time one after another takes: `cargo bench --bench history`, docs/performance.md), few
/// enough for the API's rate limits (a retry waits as the server says, within the deadline).
/// Places, not runs: a run's download can start while later runs are still being located, so
/// no place waits for the slowest run of a batch.
pub const CONCURRENT_REQUESTS: u16 = 4;

/// The runs to read, newest first, from `candidates` (newest first, this run left out): from
/// the run at the base commit on when there is one (else the newest, which the note says,
/// naming the run as `words.0` and the change request as `words.1`); at most `wanted`.
pub fn choose<T: Clone>(
    candidates: &[T],
    commit: impl Fn(&T) -> &str,
    (base_sha, wanted): (Option<&str>, usize),
    words: (&str, &str),
) -> (Vec<T>, Option<String>) {
    let mut from = 0;
    let mut note = None;
    if let Some(sha) = base_sha {
        match candidates
            .iter()
            .position(|r| commit(r).eq_ignore_ascii_case(sha))
        {
            Some(at) => from = at,
            None if !candidates.is_empty() => {
                note = Some(format!(
                    "no push {} at {} base commit {}: the newest {}s of the base branch are the history",
                    words.0,
                    words.1,
                    nsys_gate_core::text::short_sha(sha),
                    words.0
                ));
            }
            None => {}
        }
    }
    let runs = candidates.iter().skip(from).take(wanted).cloned().collect();
    (runs, note)
}

/// Seconds since 1970 of an RFC 3339 time as forges write it (`2026-01-31T12:00:00.000Z`,
/// `…+00:00`); `None` when it is not exactly one: the date, `T`, the time with its optional
/// fraction, and `Z` or a `±HH:MM` offset, nothing before or after (a forge's text is
/// untrusted: `2020-01-01T00:00:00:…` followed by anything is no time).
pub fn unix_seconds(text: &str) -> Option<i64> {
    static RFC3339: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]{1,9})?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$",
        )
        .expect("a valid pattern")
    });
    let c = RFC3339.captures(text)?;
    let n = |i: usize| {
        c.get(i)
            .map_or(0, |m| m.as_str().parse::<i64>().unwrap_or(-1))
    };
    let (y, m, day, h, min, sec) = (n(1), n(2), n(3), n(4), n(5), n(6));
    let (oh, om) = (n(9), n(10));
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let valid = (1..=12).contains(&m)
        && (1..=month_days).contains(&day)
        && h <= 23
        && min <= 59
        && sec <= 60
        && oh <= 23
        && om <= 59;
    if !valid {
        return None;
    }
    let sign = if c.get(8).is_some_and(|s| s.as_str() == "-") {
        -1
    } else {
        1
    };
    let offset_secs = sign * (oh * 3600 + om * 60);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + min * 60 + sec - offset_secs)
}

/// One CI run of the base branch, as a forge lists it.
#[derive(Debug, Clone)]
pub struct ListedRun {
    pub id: u64,
    /// The commit it ran on.
    pub commit: String,
    pub branch: Option<String>,
    /// Its page.
    pub url: Option<String>,
    /// When the forge created it (ISO 8601, as it says).
    pub created_at: Option<String>,
    /// How messages name it: `workflow run 504`, `pipeline 504`.
    pub name: String,
}

impl ListedRun {
    /// `workflow run 504 (aaaaaaa)`.
    pub fn which(&self) -> String {
        format!(
            "{} ({})",
            self.name,
            nsys_gate_core::text::short_sha(&self.commit)
        )
    }
}

/// Where a run's artifact is, as its forge found it.
pub enum Located {
    /// Downloadable: its id (stored in comparison.json) and the API URL of its zip.
    At {
        id: u64,
        url: String,
        /// Its size when the forge says it.
        size: Option<u64>,
        /// The runners the job that made the artifact may have run on, as the forge names
        /// them ([`forge_runner`] picks each file's): GitLab's job's own (`runner.description`),
        /// GitHub's every job of the run (`runner_name`: the artifact does not name its job);
        /// empty when the forge names none. It replaces the files' `provenance.runner`.
        runners: Vec<String>,
    },
    /// The run is kept in the list of runs read, but gives no analysis: a note says why
    /// (no artifact of the name, an expired one); `id` when there is one.
    Missing { id: Option<u64>, note: String },
    /// Locating it failed: a note, and the run is not listed as read.
    Failed(String),
    /// The deadline came first.
    Late,
}

/// What a forge does for the history: where each listed run's artifact is, and the artifact
/// itself. Locating may send requests (a run's own artifact list, a pipeline's jobs); each
/// run's locating holds one of the [`CONCURRENT_REQUESTS`] places, its download another.
pub trait Archives {
    /// What is left of the stage's deadline (`--baseline-timeout`), which bounds everything.
    fn time_left(&self) -> Duration;
    /// The deadline in words: `the time limit of 60 s (--baseline-timeout)`.
    fn time_limit(&self) -> String;
    async fn locate(&self, run: &ListedRun, doing: &Doing) -> Located;
    /// The artifact a [`Located::At`] names (its `url`), at most `max` bytes, into `file`.
    async fn download(&self, url: &str, max: u64, file: &mut std::fs::File)
        -> Result<(), Download>;
}

/// Why an artifact was not downloaded.
pub enum Download {
    /// The deadline came first.
    Late,
    /// Gone (HTTP 410 on the artifact itself): its retention ran out. The server's words.
    Expired(String),
    /// Any other failure, in words.
    Failed(String),
}

/// Runs `fetch` (a forge's finding and fetching of the history into `found`, telling `doing`
/// what it does) within `runtime` (the forge's client's), dropped at a SIGINT/SIGTERM (its downloads and temporary
/// folders with it, said on standard error). Its `Err` is a note. Afterwards the runs are
/// made oldest first, as the comparison takes them, and `source.analyses` lists their files.
pub fn run(
    runtime: Result<tokio::runtime::Runtime, String>,
    found: &RefCell<BaseRuns>,
    doing: &Doing,
    fetch: impl Future<Output = Result<(), String>>,
) {
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            found
                .borrow_mut()
                .notes
                .push(HistoryNote::NoBaseline(format!("no baseline: {e}")));
            return;
        }
    };
    let fetched = runtime.block_on(async {
        tokio::select! {
            fetched = fetch => Some(fetched),
            _ = interrupt::wait() => None,
        }
    });
    let mut found = found.borrow_mut();
    // The fetch is over (or was dropped, with its downloads and temporary folders): nothing
    // of it is left.
    if let Some(Err(note)) = fetched {
        if interrupt::received().is_none() {
            found.notes.push(HistoryNote::NoBaseline(note));
        }
    }
    if let Some(signal) = interrupt::received() {
        say!(
            "nsys-gate: stopped by {} while {}{}",
            signal.name(),
            doing.what(),
            if doing.temporary.get() > 0 {
                "; its temporary folder was removed"
            } else {
                ""
            }
        );
        return;
    }
    found.runs.reverse();
    found.source.analyses = found
        .runs
        .iter()
        .map(|r| r.run.analysis_path.clone())
        .collect();
}

/// The runner a file's run ran on, as the forge says, from `runners` (those the job that made
/// the artifact may have run on) and the file's own claim: the one runner when the forge
/// names one (whatever the file says); none when it names none; when the jobs ran on several
/// (GitHub's artifact does not name its job), the file's claim if it is one of them (a file
/// can only choose among the runners the forge names), else none (unknown).
pub fn forge_runner<'a>(runners: &'a [String], claimed: Option<&str>) -> Option<&'a str> {
    match runners {
        [] => None,
        [one] => Some(one.as_str()),
        several => several
            .iter()
            .find(|r| Some(r.as_str()) == claimed)
            .map(String::as_str),
    }
}

/// Runners as a note names them: `` `a`, `b` ``, at most 5 and how many more.
fn named_runners(runners: &[String]) -> String {
    let mut named: Vec<String> = runners
        .iter()
        .take(5)
        .map(|r| format!("`{}`", nsys_gate_core::text::shown_shortened(r, 80)))
        .collect();
    if runners.len() > 5 {
        named.push(format!("{} more", runners.len() - 5));
    }
    named.join(", ")
}

/// Whether two commit names are the same commit: equal, or one the other's abbreviation (7
/// hex digits at least), in any case.
fn same_commit(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    short == long
        || (nsys_gate_core::text::is_commit_sha(short) && long.starts_with(short.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forges_times_are_read() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            unix_seconds("2026-01-31T12:00:00.000Z"),
            Some(1_769_860_800)
        );
        assert_eq!(
            unix_seconds("2026-01-31T13:30:00+01:30"),
            Some(1_769_860_800)
        );
        assert_eq!(unix_seconds("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(unix_seconds("not a time"), None);
        assert_eq!(unix_seconds("2026-13-01T00:00:00Z"), None);
        assert_eq!(
            unix_seconds("2026-01-31T07:00:00-05:00"),
            Some(1_769_860_800)
        );
    }

    /// Issue 37 item 3: only RFC 3339, whole; the lenient reader took the first three parts
    /// of the clock and ignored the rest, so any text after them (a token's) was "a time".
    #[test]
    fn forge_times_are_read_strictly() {
        for text in [
            "2020-01-01T00:00:00:NsysGateTestSecret7Qx2Lp9Vw4",
            "2020-01-01T00:00:00Z trailing",
            " 2020-01-01T00:00:00Z",
            "2020-01-01T00:00",
            "2020-01-01T00:00:00",
            "2020-01-01T00:00:00+01",
            "2020-1-01T00:00:00Z",
            "2020-02-30T00:00:00Z",
            "2020-01-01T24:00:00Z",
            "+2020-01-01T00:00:00Z",
            "2020-01-01T00:00:00.Z",
        ] {
            assert_eq!(unix_seconds(text), None, "{text}");
        }
        assert_eq!(unix_seconds("2020-02-29T00:00:00Z"), Some(1_582_934_400));
    }

    /// Issue 37 item 1: one runner named, it is the run's; several (GitHub's jobs), the file
    /// chooses among them only; none, unknown.
    #[test]
    fn the_forges_runner_is_chosen_among_the_jobs_runners() {
        let one = ["gpu-a100".to_owned()];
        assert_eq!(forge_runner(&one, Some("gpu-h100")), Some("gpu-a100"));
        assert_eq!(forge_runner(&one, None), Some("gpu-a100"));
        assert_eq!(forge_runner(&[], Some("gpu-h100")), None);
        let two = ["gpu-a100".to_owned(), "gpu-l4".to_owned()];
        assert_eq!(forge_runner(&two, Some("gpu-l4")), Some("gpu-l4"));
        assert_eq!(forge_runner(&two, Some("gpu-h100")), None);
        assert_eq!(forge_runner(&two, None), None);
        let many: Vec<String> = (0..7).map(|i| format!("r{i}")).collect();
        assert_eq!(named_runners(&many), "`r0`, `r1`, `r2`, `r3`, `r4`, 2 more");
    }

    #[test]
    fn a_commit_and_its_abbreviation_are_the_same() {
        let full = "0123456789abcdef0123456789abcdef01234567";
        assert!(same_commit(full, full));
        assert!(same_commit("0123456", full));
        assert!(same_commit(full, "0123456789ABCDEF"));
        assert!(
            !same_commit("012345", full),
            "too short to be an abbreviation"
        );
        assert!(!same_commit("badc0ff", full));
        assert!(!same_commit("", full));
    }

    #[test]
    fn the_history_starts_at_the_base_commits_run() {
        let runs = ["c", "b", "a"];
        let (chosen, note) = choose(&runs, |r| r, (Some("B"), 5), ("run", "the pull request's"));
        assert_eq!((chosen, note), (vec!["b", "a"], None));
        let (chosen, note) = choose(
            &runs,
            |r| r,
            (Some("f"), 2),
            ("pipeline", "the merge request's"),
        );
        assert_eq!(chosen, ["c", "b"]);
        assert_eq!(
            note.as_deref(),
            Some("no push pipeline at the merge request's base commit f: the newest pipelines of the base branch are the history")
        );
    }
}
