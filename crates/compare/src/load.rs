//! analysis.json read back: the one place that turns the bytes of an analysis.json into an
//! [`Analysis`] of this schema version, for every reader (`report`, `post --analyses`,
//! `compare`, `--baseline`).
//!
//! - [`run_dir`]: a run directory's own analysis.json (`report`), as a [`RunOutcome`];
//! - [`under`]: every analysis.json under a folder that someone else filled (an artifact,
//!   a fork's included), found without following a symlink and read with bounds;
//! - [`each`]: an analysis.json, a run directory holding one, or a folder searched for them
//!   (`compare`'s sides and `--baseline PATH`), one analysis at a time, read as the whole
//!   [`Analysis`] or as a reader's slimmer view of it ([`Readable`]: the comparison's
//!   [`Recorded`] skips the iterations' details).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::de::DeserializeOwned;

use crate::compare::run_level::Recorded;
use nsys_gate_analyze::{manifest, rundir};
use nsys_gate_core::artifact::ANALYSIS_FILE;
use nsys_gate_core::artifact::{self, Analysis};
use nsys_gate_core::files::{self, SearchBounds};
use nsys_gate_core::outcome::{Failure, FailureKind, RunFacts, RunOutcome};
use nsys_gate_core::say::say;
use nsys_gate_core::text::{shown_path, shown_shortened};

/// Largest analysis.json read: a trace of a million ranges makes about 42 MB.
pub const MAX_ANALYSIS_BYTES: u64 = 1 << 30;

/// How far [`under`] searches: an artifact's folders are a few levels deep and hold a few
/// analyses; a larger one is refused rather than read without end.
pub const SEARCH: SearchBounds = SearchBounds {
    max_depth: 16,
    max_entries: 100_000,
    max_found: 256,
};

/// The analysis.json files [`under`] reads, in all.
const MAX_TOTAL_BYTES: u64 = 1 << 30;

/// Characters of artifact text (a path, a parse error) shown in one message at most.
const SHOWN_CHARS: usize = 300;

/// What an analysis.json can be read as: the whole [`Analysis`], or a reader's view of it
/// that leaves out what that reader does not use (and so need not keep): the comparison's
/// [`Recorded`]. Either is checked against the same schema version, with the same messages.
pub trait Readable: DeserializeOwned + Send + 'static {
    /// The file's `schema_version`.
    fn schema_version(&self) -> u32;
}

impl Readable for Analysis {
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

impl Readable for Recorded {
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

/// An analysis.json's bytes as an [`Analysis`] of this schema version; `Err` says why not,
/// naming `path`.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Analysis, String> {
    parse_as(path, bytes)
}

/// [`parse`], read as `T`.
pub fn parse_as<T: Readable>(path: &Path, bytes: &[u8]) -> Result<T, String> {
    // Never asked to stop: parsed here, whatever its size.
    judged(path, parse_bytes::<T>(bytes)).map_err(|e| match e {
        Unread::Refused(why) => why,
        Unread::Stopped => unreachable!("never asked to stop"),
    })
}

/// Why a file gave no analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// Not an analysis.json of this schema version, or not readable: why, in words.
    Refused(String),
    /// `stop` said so while it was read or parsed (a signal, the stage's deadline).
    Stopped,
}

/// Files larger than this are parsed on the parse thread ([`parser`]) while the caller asks
/// `stop`: parsing a file of a gigabyte takes seconds, and a signal is answered within one.
/// Smaller ones are parsed where they were read: at slice speed (about 0.5 GB/s here) 64 MiB
/// take about 0.13 s, well inside the second even on a loaded runner, and a history's usual
/// files (a few MB each) pay no hand-over to another thread (which cost 15-35 % of
/// `compare`'s time in system time and page faults, `scripts/bench-compare.sh`).
const PARSE_ALONE: usize = 64 << 20;

/// How often a caller waiting for the parse thread asks `stop`.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// `text` as JSON of type `U`, at slice speed.
fn from_text<U: DeserializeOwned>(text: &[u8]) -> Result<U, serde_json::Error> {
    // JSON is UTF-8: checked once for the whole file, so that serde_json does not check each
    // string again (`from_str`). Bytes that are not UTF-8 take `from_slice`, for its error.
    match std::str::from_utf8(text) {
        Ok(text) => serde_json::from_str::<U>(text),
        Err(_) => serde_json::from_slice::<U>(text),
    }
}

/// A file that did not parse as `T`: serde's error, and the `schema_version` the file holds
/// (only that is looked for, never the rest).
type Unparsed = (serde_json::Error, Option<serde_json::Value>);

/// `bytes` as `T`, or why not ([`Unparsed`]).
fn parse_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Unparsed> {
    from_text::<T>(bytes).map_err(|e| {
        #[derive(serde::Deserialize)]
        struct Version {
            schema_version: Option<serde_json::Value>,
        }
        let version = from_text::<Version>(bytes)
            .ok()
            .and_then(|v| v.schema_version);
        (e, version)
    })
}

/// A piece of work for the parse thread.
type Job = Box<dyn FnOnce() + Send>;

/// The one thread that parses large files, started on first use and kept for the process:
/// one thread (not one per file) keeps the parsed values in one allocator arena, and a caller
/// told to stop returns at once, leaving the parse it no longer wants to finish unseen.
fn parser() -> std::sync::mpsc::Sender<Job> {
    static PARSER: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<Job>>> =
        std::sync::OnceLock::new();
    PARSER
        .get_or_init(|| {
            let (send, jobs) = std::sync::mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("parse".into())
                // A job that panics (a bug, said by the panic hook) drops its sender, which
                // its caller reads as a failed parse; the thread lives on for the next file.
                .spawn(move || {
                    jobs.into_iter().for_each(|job| {
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    });
                })
                .expect("a thread can be started");
            std::sync::Mutex::new(send)
        })
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// `bytes` as `T`: at once when small, else on the parse thread while `stop` is asked every
/// [`STOP_POLL`]; `None` when `stop` said so first.
fn parse_asking<T: Readable>(
    bytes: Vec<u8>,
    stop: &dyn Fn() -> bool,
) -> Option<Result<T, Unparsed>> {
    if bytes.len() <= PARSE_ALONE {
        return Some(parse_bytes(&bytes));
    }
    let (send, parsed) = std::sync::mpsc::channel();
    let job: Job = Box::new(move || {
        // The caller may have stopped waiting: then nobody wants the result.
        let _ = send.send(parse_bytes::<T>(&bytes));
    });
    if parser().send(job).is_err() {
        return None;
    }
    loop {
        if stop() {
            return None;
        }
        match parsed.recv_timeout(STOP_POLL) {
            Ok(result) => return Some(result),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            // The parse panicked (a bug, said by the panic hook): the file is not read, and
            // says so; nothing asked to stop.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let failed = <serde_json::Error as serde::de::Error>::custom("the parse failed");
                return Some(Err((failed, None)));
            }
        }
    }
}

/// A parse error in words that never quote the file: serde's own message quotes values of
/// the file (`invalid type: string "…"`, `unknown variant `…``), and a file may hold anything,
/// a credential a symlink led to included. What is kept is the kind of error, what the
/// schema expected (nsys-gate's own words), a missing field's name (the schema's), and where.
fn parse_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("at line {}, column {}", e.line(), e.column());
    let what = match e.classify() {
        Category::Syntax => "not valid JSON".to_owned(),
        Category::Eof => "the JSON ends early".to_owned(),
        Category::Io => "it could not be read".to_owned(),
        Category::Data => {
            let text = e.to_string();
            let text = text.split(" at line ").next().unwrap_or_default();
            // The expected part is the schema's; it comes after the file's value, so the
            // last `, expected ` is serde's own.
            let expected = text
                .rsplit_once(", expected ")
                .map(|(_, expected)| format!(", expected {expected}"))
                .unwrap_or_default();
            let field = text
                .strip_prefix("missing field `")
                .and_then(|rest| rest.strip_suffix('`'))
                .filter(|f| f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            match field {
                Some(field) => format!("the field `{field}` is missing"),
                None if text.starts_with("invalid type") => {
                    format!("a value of the wrong type{expected}")
                }
                None if text.starts_with("invalid value") || text.starts_with("invalid length") => {
                    format!("a value out of its range{expected}")
                }
                None if text.starts_with("unknown variant") => format!("an unknown name{expected}"),
                None => "a value that does not fit the schema".to_owned(),
            }
        }
    };
    format!("{what} ({at}; the file's text is not quoted)")
}

/// [`parse_as`], asking `stop` while a large file is parsed.
pub fn parse_until<T: Readable>(
    path: &Path,
    bytes: Vec<u8>,
    stop: &dyn Fn() -> bool,
) -> Result<T, Unread> {
    let parsed = parse_asking::<T>(bytes, stop).ok_or(Unread::Stopped)?;
    judged(path, parsed)
}

/// A parse's result as an analysis of this schema version, or the refusal naming `path`.
fn judged<T: Readable>(path: &Path, parsed: Result<T, Unparsed>) -> Result<T, Unread> {
    let wrong_version = |v: &dyn std::fmt::Display| {
        format!(
            "{} has schema_version {v}; this nsys-gate reads {}",
            shown_path(path),
            artifact::SCHEMA_VERSION
        )
    };
    match parsed {
        Ok(analysis) if analysis.schema_version() == artifact::SCHEMA_VERSION => Ok(analysis),
        Ok(analysis) => Err(Unread::Refused(wrong_version(&analysis.schema_version()))),
        // A number is shown; anything else the file put there is not.
        Err((_, Some(v))) if v != serde_json::json!(artifact::SCHEMA_VERSION) => {
            Err(Unread::Refused(match v.as_u64() {
                Some(n) => wrong_version(&n),
                None => wrong_version(&"that is not a whole number"),
            }))
        }
        Err((e, _)) => Err(Unread::Refused(format!(
            "{} is not an analysis.json that nsys-gate wrote: {}",
            shown_path(path),
            parse_error(&e)
        ))),
    }
}

/// Reads `DIR/analysis.json`; a missing or unreadable one is a failed outcome, with the
/// manifest's profile name when the manifest reads.
pub fn run_dir(dir: &Path) -> RunOutcome {
    let dir = files::absolute(dir);
    let path = dir.join(ANALYSIS_FILE);
    match read_in_run_dir(&dir, &path) {
        Ok(analysis) => RunOutcome::Analysed {
            analysis: Box::new(analysis),
            path,
        },
        Err(error) => {
            let mut failure = Failure::new(dir.clone(), FailureKind::NoAnalysis, error);
            failure.facts = facts_of(&dir);
            RunOutcome::Failed(failure)
        }
    }
}

fn read_in_run_dir(dir: &Path, path: &Path) -> Result<Analysis, String> {
    let bytes = match files::read_regular(path, MAX_ANALYSIS_BYTES) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => {
            return Err(format!(
                "no {ANALYSIS_FILE} in {} (run `nsys-gate analyze --run-dir {}` first)",
                shown_path(dir),
                shown_path(dir)
            ))
        }
        Err(e) => return Err(e.to_string()),
    };
    parse(path, &bytes)
}

/// What the run directory's manifest says, when it reads.
fn facts_of(dir: &Path) -> RunFacts {
    let path = dir.join(rundir::MANIFEST_FILE);
    let manifest = manifest::read_bytes(&path)
        .ok()
        .and_then(|bytes| manifest::parse(&bytes, &path).ok());
    RunFacts {
        run_id: manifest.as_ref().map(|m| m.run_id.clone()),
        profile_name: manifest.map(|m| m.profile_name),
    }
}

/// Every analysis.json under `dir`, in path order: an analysis, or a failed outcome saying
/// why the file could not be read. Each is named by its path inside `dir`. No file at all is
/// an error, whose message ends with `nothing` (what that means for the caller).
pub fn under(dir: &Path, nothing: &str) -> anyhow::Result<Vec<RunOutcome>> {
    let mut outcomes = Vec::new();
    found_each::<Analysis>(dir, nothing, &|| false, |path, read| {
        outcomes.push(match read {
            Ok(analysis) => RunOutcome::Analysed {
                analysis: Box::new(analysis),
                path,
            },
            Err(failure) => RunOutcome::Failed(failure),
        });
    })?;
    Ok(outcomes)
}

/// [`under`], each file read as `T` and handed to `visit` with its path inside `dir`, or the
/// failure saying why it could not be read.
fn found_each<T: Readable>(
    dir: &Path,
    nothing: &str,
    stop: &dyn Fn() -> bool,
    mut visit: impl FnMut(PathBuf, Result<T, Failure>),
) -> anyhow::Result<()> {
    let found = files::find_named(dir, ANALYSIS_FILE, SEARCH)
        .with_context(|| format!("cannot search {} for {ANALYSIS_FILE}", shown_path(dir)))?;
    for (path, what) in &found.skipped {
        say!(
            "nsys-gate: warning: {} is {what}, not a regular file; not read",
            inside(dir, path)
        );
    }
    if let Some(first) = found.too_deep.first() {
        say!(
            "nsys-gate: warning: {} folders deeper than {} levels were not searched, the first {}",
            found.too_deep.len(),
            SEARCH.max_depth,
            inside(dir, first)
        );
    }
    anyhow::ensure!(
        !found.files.is_empty(),
        "no {ANALYSIS_FILE} under {} (searched {} levels deep for regular files; symlinks are not followed): {nothing}",
        shown_path(dir),
        SEARCH.max_depth
    );
    let mut left = MAX_TOTAL_BYTES;
    for path in &found.files {
        let name = path.strip_prefix(dir).unwrap_or(path).to_owned();
        let read = match read_found(path, &name, &mut left, stop) {
            Ok(analysis) => Ok(analysis),
            // The caller, which asked to stop, says so.
            Err(Unread::Stopped) => break,
            Err(Unread::Refused(error)) => Err(failed(&name, error)),
        };
        visit(name, read);
    }
    Ok(())
}

/// One analysis.json [`under`] found (`path`), named in the report by its path inside the
/// folder searched (`name`, as the artifact has it).
fn read_found<T: Readable>(
    path: &Path,
    name: &Path,
    left: &mut u64,
    stop: &dyn Fn() -> bool,
) -> Result<T, Unread> {
    let bytes = read_no_symlink(path, MAX_ANALYSIS_BYTES.min(*left), stop)
        .map_err(|e| e.naming(&name.display().to_string()))?;
    *left = left.saturating_sub(bytes.len() as u64);
    parse_until(name, bytes, stop)
}

/// The bytes of the regular file `path` (never a symlink), read with `stop` asked between
/// pieces; a refusal says why without the path, for the caller to name it.
fn read_no_symlink(path: &Path, limit: u64, stop: &dyn Fn() -> bool) -> Result<Vec<u8>, Unread> {
    files::read_regular_no_symlink_until(path, limit, stop).map_err(|e| {
        if stop() {
            Unread::Stopped
        } else {
            Unread::Refused(e.into_io_error().to_string())
        }
    })
}

impl Unread {
    /// A refusal as `NAME: why`.
    fn naming(self, name: &str) -> Unread {
        match self {
            Unread::Refused(why) => Unread::Refused(format!("{name}: {why}")),
            Unread::Stopped => Unread::Stopped,
        }
    }
}

/// A file [`under`] found (`name`) that could not be read (`error` says why): said on
/// standard error, and a failed outcome.
fn failed(name: &Path, error: String) -> Failure {
    say!(
        "nsys-gate: warning: {}",
        shown_shortened(&error, SHOWN_CHARS * 2)
    );
    let folder = match name.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    Failure::new(folder, FailureKind::NoAnalysis, error)
}

/// A path inside the artifact, on one line of standard error: a line break or other control
/// character in it is shown escaped (`\n`), so that no line it holds can start a workflow
/// command (`::add-mask::`, `::error::`, …) in a privileged job.
fn inside(dir: &Path, path: &Path) -> String {
    shown_shortened(
        &path.strip_prefix(dir).unwrap_or(path).to_string_lossy(),
        SHOWN_CHARS,
    )
}

/// Every analysis an analysis.json, a run directory holding one, or a folder searched for
/// them ([`under`]) holds, read as `T`, handed to `visit` one at a time with its path for
/// people (inside the folder searched, or as given), so that a caller that reduces them never
/// holds more than one. Returns the notes on the files that could not be read; `Err` says why
/// nothing could be.
///
/// A file is never read through a symlink (the file given, or `analysis.json` in the folder
/// given; a folder given may be one), as the folder search does: a symlink could lead to any
/// file of the machine, and the notes are shown in the report. `stop` is asked between pieces
/// of the reading and parsing (a signal, the stage's deadline): when it says so, `each`
/// returns what it has, and the caller says why it stopped.
pub fn each<T: Readable>(
    path: &Path,
    stop: &dyn Fn() -> bool,
    mut visit: impl FnMut(T, String),
) -> Result<Vec<String>, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", shown_path(path)))?;
    let file = if meta.is_dir() {
        // Its analysis.json, whatever it is (a symlink, a FIFO: refused by the reading).
        Some(path.join(ANALYSIS_FILE)).filter(|f| std::fs::symlink_metadata(f).is_ok())
    } else {
        Some(path.to_owned())
    };
    if let Some(file) = file {
        let shown = shown_path(&file);
        let read = read_no_symlink(&file, MAX_ANALYSIS_BYTES, stop)
            .map_err(|e| e.naming(&format!("cannot read {shown}")))
            .and_then(|bytes| parse_until(&file, bytes, stop));
        match read {
            Ok(analysis) => visit(analysis, file.display().to_string()),
            Err(Unread::Stopped) => {}
            Err(Unread::Refused(why)) => return Err(why),
        }
        return Ok(Vec::new());
    }
    each_under(path, stop, visit)
}

/// Every analysis.json found in the folder `dir` ([`under`]: its own included, beside its run
/// directories'), read as `T`, handed to `visit` one at a time with its path inside `dir`, as
/// [`each`] hands them; for a folder that is not a run directory (an unpacked artifact).
pub fn each_under<T: Readable>(
    dir: &Path,
    stop: &dyn Fn() -> bool,
    mut visit: impl FnMut(T, String),
) -> Result<Vec<String>, String> {
    let path = dir;
    let mut read = 0;
    let mut notes = Vec::new();
    found_each::<T>(
        path,
        "nothing to compare",
        stop,
        |found, read_as| match read_as {
            Ok(analysis) => {
                read += 1;
                visit(analysis, found.display().to_string());
            }
            Err(f) => notes.push(f.error),
        },
    )
    .map_err(|e| format!("{e:#}"))?;
    if read == 0 && !stop() {
        return Err(format!(
            "no readable {ANALYSIS_FILE} in {}: {}",
            shown_path(path),
            notes.join("; ")
        ));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::RunLevel;
    use nsys_gate_core::artifact::fake;
    use nsys_gate_core::artifact::{GpuDevice, GpuWork, KernelStats, MemoryCopies};

    /// Made-up analyses of every shape the comparison reads differently.
    fn analyses() -> Vec<Analysis> {
        let host = [2_500_000, 2_600_000, 2_400_000, 9_000_000, 2_550_000];
        let mut out = Vec::new();
        for gpu in [false, true] {
            let mut a = fake::analysis(&host, &[("inference", 7_500_000), ("post", 10)], gpu);
            // Counted are the complete iterations that are not duplicates.
            a.iterations[1].complete = false;
            a.iterations[3].duplicate = true;
            out.push(a.clone());
            a.label = Some("leg".into());
            a.iterations[2].gpu_projection = None;
            a.gpu_work = Some(GpuWork {
                devices: Some(vec![GpuDevice {
                    device: "NVIDIA T4 (0)".into(),
                    name: Some("NVIDIA T4".into()),
                    id: Some(0),
                    kernels: 2,
                    memory_operations: 1,
                    ..Default::default()
                }]),
                kernels: Some(vec![KernelStats {
                    name: "k".into(),
                    base_name: None,
                    instances: 2,
                    total_ns: 40,
                    mean_ns: 20.0,
                    median_ns: None,
                    minimum_ns: 10,
                    maximum_ns: 30,
                    stddev_ns: None,
                    share: 1.0,
                }]),
                memory_copies: Some(vec![MemoryCopies {
                    copy_kind: "Host-to-Device".into(),
                    source: Some("Pageable".into()),
                    destination: None,
                    count: 1,
                    bytes: 8,
                    total_ns: 5,
                    bandwidth_bytes_per_s: None,
                    pageable_host: true,
                    iteration_count: None,
                    iteration_bytes: None,
                    iteration_total_ns: None,
                    per_iteration_ns: None,
                }]),
                ..GpuWork::default()
            });
            out.push(a);
        }
        out
    }

    #[test]
    fn a_recorded_analysis_gives_the_run_level_of_the_whole_one() {
        for analysis in analyses() {
            let bytes = analysis.to_json();
            let path = Path::new("base/analysis.json");
            let whole = RunLevel::of(&parse(path, &bytes).unwrap(), "a.json");
            let recorded = RunLevel::read(parse_as::<Recorded>(path, &bytes).unwrap(), "a.json");
            assert_eq!(recorded, whole);
            assert_eq!(whole.host_samples, [2_500_000.0, 2_400_000.0, 2_550_000.0]);
        }
    }

    /// `bytes` read both ways: the same error, or both read.
    fn same_verdict(bytes: &[u8]) -> Result<(), String> {
        let path = Path::new("base/analysis.json");
        let whole = parse(path, bytes).map(|_| ());
        let recorded = parse_as::<Recorded>(path, bytes).map(|_| ());
        assert_eq!(recorded, whole, "{}", String::from_utf8_lossy(bytes));
        whole
    }

    #[test]
    fn a_recorded_analysis_is_refused_as_the_whole_one_is() {
        let good = serde_json::to_value(&analyses()[3]).unwrap();
        let edited = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut v = good.clone();
            edit(&mut v);
            serde_json::to_vec(&v).unwrap()
        };
        assert_eq!(same_verdict(&edited(&|_| {})), Ok(()));
        let refused: Vec<Vec<u8>> = vec![
            edited(&|v| v["schema_version"] = 2.into()),
            edited(&|v| {
                v["iterations"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("pid")
                    .map(drop)
                    .unwrap()
            }),
            edited(&|v| {
                v["iterations"][0]["host"]
                    .as_object_mut()
                    .unwrap()
                    .remove("end_ns")
                    .map(drop)
                    .unwrap()
            }),
            edited(&|v| {
                v["iterations"][1]["gpu_projection"]
                    .as_object_mut()
                    .unwrap()
                    .remove("start_ns")
                    .map(drop)
                    .unwrap()
            }),
            edited(&|v| v["iterations"][0]["complete"] = "yes".into()),
            edited(&|v| v["iterations"][2]["host"]["inclusive_ns"] = 1.5.into()),
            edited(&|v| v["iterations"][0]["gpu_projection"]["projected_ns"] = "x".into()),
            edited(&|v| v["iterations"] = serde_json::json!({})),
            edited(&|v| v["gate"]["result"] = "maybe".into()),
            edited(&|v| v["advice"] = serde_json::json!([{"kind": "unheard_of"}])),
            edited(&|v| v["host_range_groups"] = serde_json::json!([{}])),
            edited(&|v| v.as_object_mut().unwrap().remove("gate").map(drop).unwrap()),
            edited(&|v| {
                v.as_object_mut()
                    .unwrap()
                    .remove("iterations")
                    .map(drop)
                    .unwrap()
            }),
            b"{\"schema_version\": 1, \"provenance\": \xff}".to_vec(),
            {
                let text = good.to_string();
                text.as_bytes()[..text.len() / 2].to_vec()
            },
        ];
        for bytes in &refused {
            assert!(same_verdict(bytes).is_err());
        }
    }
}
