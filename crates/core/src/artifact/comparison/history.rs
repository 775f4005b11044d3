//! A key's history in `comparison.json` (`runs[].history`): the base runs used and left out,
//! the head's runner, and the shifts, drift and newest moves found in it.

use super::{ConditionName, MeasureName};
use serde::{Deserialize, Serialize};

/// The base runs of a key, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The runs the noise and the level are learned from: since the last level shift, with the
    /// head's judged conditions.
    pub used: Vec<BaseRun>,
    /// The runs that are not: another judged condition, or before the last level shift.
    pub left_out: Vec<LeftOut>,
    /// The newest level shift of the host inclusive time (else of the GPU projection), when
    /// the history has one.
    pub change_point: Option<ChangePoint>,
    /// A steady trend of the host inclusive time (else of the GPU projection), when the
    /// history has one: the base branch drifting, merge after merge. Absent in files written
    /// before it was looked for.
    #[serde(default)]
    pub drift: Option<Drift>,
    /// The newest one or two base runs, when they lie beyond the rest of the history's
    /// interval the way the head went: the change may already be on the base branch. Absent
    /// in files written before it was looked for.
    #[serde(default)]
    pub newest_moved: Option<NewestMoved>,
    /// The head's runner as the history knows it; `null` when the head names none. Absent in
    /// files written before it was said.
    #[serde(default)]
    pub head_runner: Option<HeadRunner>,
}

/// The newest base runs beyond the rest of the history, the way the head went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewestMoved {
    /// The measure they moved in.
    pub measure: MeasureName,
    /// How many (1 or 2): two that agree are a provisional new level the head is judged
    /// against; one decides nothing.
    pub runs: u64,
    /// Their change against what the rest of the history predicts at their place, in %.
    pub change_pct: f64,
    /// Whether the head was judged against them (two that agree with each other).
    pub provisional_level: bool,
    /// The first of them.
    pub since: RunMark,
}

/// The head's runner, as the history knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadRunner {
    pub name: String,
    /// Used base points that ran on it.
    pub points: u64,
    /// Its base points left out (as outliers): a runner that ran 1 base run, left out, has
    /// `points` 0 and `left_out` 1. Absent (0) in files written before it.
    #[serde(default)]
    pub left_out: u64,
    /// Whether it has a level of its own (3 points or more, and other runners beside it);
    /// else the head is judged against the history's level and spread, runners mixed.
    pub own_level: bool,
    /// Whether it has a spread of its own (an F test says the runners' spreads differ).
    pub own_spread: bool,
    /// Whether some runner of the history has a level of its own while the head's has not:
    /// the head's runner is barely known, and what the history sees is wider.
    pub barely_known: bool,
}

/// The base branch's level moving steadily, run after run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// The measure that drifts.
    pub measure: MeasureName,
    /// How far the trend moved from its first run to the newest, in %.
    pub change_pct: f64,
    /// Points in the trend (its first to the newest).
    pub runs: u64,
    /// The trend's p-value, adjusted for the starts tried.
    pub p_value: f64,
    /// The trend's first run.
    pub since: RunMark,
}

/// A run of the history, named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMark {
    pub run_id: String,
    pub git_commit: Option<String>,
    pub created_at: Option<String>,
}

/// One base run reduced to its run-level statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseRun {
    /// Its place among the key's base runs, oldest 0.
    pub position: u64,
    pub run_id: String,
    pub git_commit: Option<String>,
    pub analysis_path: String,
    /// `auto`: the CI run it came from (the same as `ci_run_id`, by its name from before
    /// GitLab: on GitLab a pipeline's id).
    pub workflow_run_id: Option<u64>,
    /// `auto`: the CI run (GitHub's workflow run, GitLab's pipeline) whose artifact held it.
    #[serde(default)]
    pub ci_run_id: Option<u64>,
    /// `auto`: when the forge created that run.
    pub created_at: Option<String>,
    /// Counted iterations.
    pub iterations: u64,
    /// Median host inclusive time of the counted iterations.
    pub host_inclusive_ns: Option<f64>,
    /// Median GPU-projected time of the counted iterations that launched GPU work; `null`
    /// without a projection.
    pub gpu_projected_ns: Option<f64>,
    /// The analyses of this point (one CI run): their paths. The numbers above combine them
    /// (geometric means); `analysis_path` and `run_id` are the first's.
    #[serde(default)]
    pub analyses: Vec<String>,
    /// How many analyses the point combines.
    #[serde(default)]
    pub repeats: u64,
    /// The CI run (`provenance.ci_run`) and runner (`provenance.runner`) of its first
    /// analysis, when recorded.
    #[serde(default)]
    pub ci_run: Option<crate::artifact::CiRun>,
    #[serde(default)]
    pub runner: Option<String>,
    /// The level of the history the point is in (0 the oldest): after a level shift, the
    /// newest level sets the level the head is judged against, and every level teaches the
    /// noise. 0 throughout without a shift.
    #[serde(default)]
    pub segment: u64,
    /// The NVIDIA driver its trace recorded (`environment.driver_version`), when it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub driver_version: Option<String>,
    /// The median SM clock its trace recorded (the `clock` condition, MHz), when it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clock_mhz: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub run: BaseRun,
    /// `conditions` (a judged condition differs from the head's: `differs` names them) or
    /// `before_change_point`.
    pub reason: LeftOutReason,
    /// The judged conditions that differ.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub differs: Vec<ConditionName>,
    /// `outlier`: the measure whose value was far from the rest (an outlier of one measure
    /// is still used for the other, and is then also in `used`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub measure: Option<MeasureName>,
    /// `outlier`: how far its value was from what the rest of the history predicts, in %.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub change_pct: Option<f64>,
    /// `invalid`: what is impossible in it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftOutReason {
    Conditions,
    /// Written before schema 2 learned the noise of every level: no longer given.
    BeforeChangePoint,
    /// Far from the rest of its history (a hiccup run).
    Outlier,
    /// Numbers that cannot be true: a duration of zero or less, no counted iteration.
    Invalid,
}

/// Where the history changed level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The measure whose level shifted.
    pub measure: MeasureName,
    /// The first run of the new level.
    pub run_id: String,
    pub git_commit: Option<String>,
    pub created_at: Option<String>,
    /// The new level against the one before, in % (geometric means).
    pub change_pct: f64,
    /// Runs of the new level.
    pub runs: u64,
}
