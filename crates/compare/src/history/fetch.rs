//! The runs fetched: each run's artifact located, downloaded, unpacked into a temporary folder
//! and its analyses read and reduced, a bounded number of requests under way at a time, before
//! the deadline and until a signal; and what is being done meanwhile ([`Doing`]).

use super::places::{Places, Step};
use super::{
    forge_runner, named_runners, same_commit, Archives, BaseRuns, Download, HistoryNote, ListedRun,
    Located, MAX_ZIP_BYTES,
};
use crate::compare::RunLevel;
use crate::load;
use crate::unpack::{self, Limits};
use futures_util::stream::{self, StreamExt};
use nsys_gate_core::artifact::comparison::CiRunRef;
use nsys_gate_core::interrupt;
use nsys_gate_core::say::say;
use std::cell::{Cell, RefCell};

/// What `--baseline auto` is doing, said when a signal stops it.
#[derive(Default)]
pub struct Doing {
    what: RefCell<String>,
    /// Temporary folders (a download, an unpacking) under way.
    pub(super) temporary: Cell<usize>,
}

impl Doing {
    pub fn set(&self, what: String) {
        *self.what.borrow_mut() = what;
    }

    pub(super) fn what(&self) -> String {
        let what = self.what.borrow();
        if what.is_empty() {
            "finding the baseline's CI runs".to_owned()
        } else {
            what.clone()
        }
    }

    /// Counts a temporary folder for as long as the guard lives.
    pub(super) fn temporary(&self) -> TemporaryGuard<'_> {
        self.temporary.set(self.temporary.get() + 1);
        TemporaryGuard(self)
    }
}

pub(super) struct TemporaryGuard<'a>(&'a Doing);

impl Drop for TemporaryGuard<'_> {
    /// Uncounted when its run is over; a signal's drop leaves it counted, so that the words
    /// of the interruption say a temporary folder was removed.
    fn drop(&mut self) {
        if interrupt::received().is_none() {
            self.0
                .temporary
                .set(self.0.temporary.get().saturating_sub(1));
        }
    }
}

/// One run's outcome, before it is put in the history in the runs' order.
pub(super) enum Fetched {
    /// The run's analyses, and notes about them.
    Levels(Vec<RunLevel>, Vec<String>),
    Late,
    Note(String),
    /// A SIGINT/SIGTERM stopped it (its temporary folder removed).
    Interrupted,
}

/// Reads the artifacts of `runs` (newest first) into `found`: each run located by `source`,
/// downloaded, unpacked, read; `concurrency` locatings and downloads under way at a time, the
/// places given in `runs`' order (newest first: when the deadline comes, the older runs are
/// the ones left); the history in `runs`' order.
/// `found.source.ci_runs` lists every run read or tried (not one whose artifact could not be
/// looked for), with its artifact.
pub async fn fetch_runs(
    source: &impl Archives,
    (runs, concurrency): (&[ListedRun], usize),
    found: &RefCell<BaseRuns>,
    doing: &Doing,
) {
    // Every run asks at once; a download gets a place before any locating, the newer run
    // first (`places`), so the newest runs are read first and the older ones are left when
    // the deadline comes.
    let places = Places::new(concurrency);
    let results: Vec<(Option<CiRunRef>, Fetched)> = stream::iter(runs.iter().enumerate())
        .map(|(position, run)| one_run(source, (run, position), &places, doing))
        .buffered(runs.len().max(1))
        .collect()
        .await;
    let mut found = found.borrow_mut();
    let mut late = Vec::new();
    for (run, (listed, fetched)) in runs.iter().zip(results) {
        found.source.ci_runs.extend(listed);
        match fetched {
            Fetched::Levels(levels, notes) => {
                found.runs.extend(levels);
                found
                    .notes
                    .extend(notes.into_iter().map(HistoryNote::Partial));
            }
            Fetched::Late => late.push(run.id),
            Fetched::Note(note) => found.notes.push(HistoryNote::Partial(note)),
            // The caller says what was stopped.
            Fetched::Interrupted => return,
        }
    }
    if !late.is_empty() {
        found.notes.push(HistoryNote::Partial(format!(
            "{} of {} base runs were not fetched before {} (runs {}): the history has the newer ones only",
            late.len(),
            runs.len(),
            source.time_limit(),
            late.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        )));
    }
}

/// One run: located, then (unless the deadline has passed) fetched, each in one of `places`.
async fn one_run(
    source: &impl Archives,
    (run, position): (&ListedRun, usize),
    places: &Places,
    doing: &Doing,
) -> (Option<CiRunRef>, Fetched) {
    let located = {
        let _place = places.acquire(Step::Locate, position).await;
        if source.time_left().is_zero() {
            Located::Late
        } else {
            source.locate(run, doing).await
        }
    };
    let artifact_id = match &located {
        Located::At { id, .. } => Some(*id),
        Located::Missing { id, .. } => *id,
        Located::Failed(_) | Located::Late => None,
    };
    let listed = CiRunRef {
        id: run.id,
        commit: run.commit.clone(),
        branch: run.branch.clone(),
        url: run.url.clone(),
        created_at: run.created_at.clone(),
        artifact_id,
    };
    let (url, size, runners) = match located {
        Located::Failed(note) => return (None, Fetched::Note(note)),
        Located::Late => return (Some(listed), Fetched::Late),
        Located::Missing { note, .. } => return (Some(listed), Fetched::Note(note)),
        Located::At {
            url, size, runners, ..
        } => (url, size, runners),
    };
    let which = run.which();
    if size.is_some_and(|n| n > MAX_ZIP_BYTES) {
        return (
            Some(listed),
            Fetched::Note(format!(
                "the artifact of {which} is larger than {} MiB, the most nsys-gate downloads: left out",
                MAX_ZIP_BYTES >> 20
            )),
        );
    }
    // Held through the unpacking and the reading too: they are synchronous (nothing else
    // runs meanwhile), and at most this many temporary folders exist at once.
    let _place = places.acquire(Step::Download, position).await;
    if source.time_left().is_zero() {
        return (Some(listed), Fetched::Late);
    }
    let fetched = match download_and_read(source, (run, &runners), &url, doing).await {
        Ok((levels, notes)) => Fetched::Levels(levels, notes),
        Err(f) => f,
    };
    (Some(listed), fetched)
}

/// One run's artifact downloaded, unpacked and read; its analyses reduced, each marked with
/// the run (one point of the history), the commit the forge ran it on and the runner the forge
/// names ([`forge_runner`] of `runners`); a note when files named another commit or runner.
async fn download_and_read(
    source: &impl Archives,
    (run, runners): (&ListedRun, &[String]),
    url: &str,
    doing: &Doing,
) -> Result<(Vec<RunLevel>, Vec<String>), Fetched> {
    let which = run.which();
    let note = |what: &str, e: String| Fetched::Note(format!("{which}: {what}: {e}: left out"));
    // Dropped on every way out (a note, the deadline, a signal: the download raced against
    // it is dropped with this function's future), and the folder with it.
    let dir = tempfile::Builder::new()
        .prefix("nsys-gate-baseline-")
        .tempdir()
        .map_err(|e| note("cannot make a temporary folder", e.to_string()))?;
    let _counted = doing.temporary();
    doing.set(format!("downloading the baseline artifact of {which}"));
    let zip_path = dir.path().join("artifact.zip");
    let mut zip = std::fs::File::create_new(&zip_path)
        .map_err(|e| note("cannot write the download", e.to_string()))?;
    match source.download(url, MAX_ZIP_BYTES, &mut zip).await {
        Ok(()) => {}
        Err(Download::Late) => return Err(Fetched::Late),
        // Gone, on the zip itself: the artifact's retention ran out. (A 410 on any other
        // request, such as the list of runs, is named by that request, never as this.)
        Err(Download::Expired(message)) => {
            return Err(Fetched::Note(format!(
                "{which}: the artifact has expired (HTTP 410: {message}): left out of the history (the artifacts' retention decides how much history there is)"
            )))
        }
        Err(Download::Failed(e)) => return Err(note("downloading its artifact", e)),
    }
    drop(zip);
    let unpacked = dir.path().join("analyses");
    std::fs::create_dir(&unpacked).map_err(|e| note("unpacking its artifact", e.to_string()))?;
    doing.set(format!("unpacking the baseline artifact of {which}"));
    // Synchronous, and outside the requests' timeouts: the unpacking and the reading ask
    // between entries and pieces whether a signal came or the stage's deadline passed.
    let stop = || interrupt::received().is_some() || source.time_left().is_zero();
    let stopped = || {
        if interrupt::received().is_some() {
            Fetched::Interrupted
        } else {
            Fetched::Late
        }
    };
    match unpack::analyses_until(&zip_path, &unpacked, Limits::ARTIFACT, &stop) {
        Ok(_) => {}
        Err(unpack::UnpackError::Interrupted) => return Err(stopped()),
        Err(e) => return Err(note("unpacking its artifact", e.to_string())),
    }
    doing.set(format!("reading the baseline artifact of {which}"));
    let mut levels = Vec::new();
    let mut claims = 0usize;
    let mut runner_claims = 0usize;
    let unread = load::each_under(&unpacked, &stop, |recorded, path| {
        let mut level = RunLevel::read(recorded, &format!("run {}/{path}", run.id));
        level.ci_run_id = Some(run.id);
        level.created_at = run.created_at.clone();
        // The commit is the forge's word for the CI run, never the file's: a file can name
        // any commit, and a level shift or a drift is named by its first run's commit.
        let claimed = level.with_forge_commit(&run.commit);
        if claimed.is_some_and(|c| !same_commit(&c, &run.commit)) {
            claims += 1;
        }
        // Likewise the runner: one point naming the head's runner would set the head's level.
        let claimed = level.claimed_runner();
        let forge = forge_runner(runners, claimed.as_deref());
        level.with_forge_runner(forge);
        if claimed.is_some_and(|c| Some(c.as_str()) != forge) {
            runner_claims += 1;
        }
        levels.push(level);
    })
    // Named as the artifact, never by the temporary folder it was unpacked into.
    .map_err(|e| {
        let folder = nsys_gate_core::text::shown_path(&unpacked);
        note("reading its artifact", e.replace(&folder, "the artifact"))
    })?;
    if stop() {
        // What was read of it is dropped: a run is in the history whole or not at all.
        return Err(stopped());
    }
    for n in unread {
        say!("nsys-gate: warning: baseline: {which}: {n}");
    }
    let files = |n| nsys_gate_core::units::plural(n, "analysis.json", "analysis.json files");
    let mut notes: Vec<String> = (claims > 0)
        .then(|| {
            format!(
                "{} in the artifact of {which} named another commit than the one the forge ran it on: the forge's commit is used",
                files(claims)
            )
        })
        .into_iter()
        .collect();
    if runner_claims > 0 {
        let n = files(runner_claims);
        notes.push(match runners {
            [name] => format!(
                "{n} in the artifact of {which} named another runner than the one the forge ran it on: the forge's runner `{}` is used",
                nsys_gate_core::text::shown(name)
            ),
            [] => format!(
                "{n} in the artifact of {which} named a runner, and the forge names none for its job: the run's runner is left unknown"
            ),
            several => format!(
                "{n} in the artifact of {which} named a runner that none of the run's jobs ran on (the forge names {}): the run's runner is left unknown",
                named_runners(several)
            ),
        });
    }
    Ok((levels, notes))
}
