//! Comparing the current runs with the base branch's history: plain data in (runs reduced by
//! [`run_level`]), plain data out ([`crate::artifact::comparison::Comparison`]). Nothing here
//! reads a file or the network, and nothing here changes a gate or an exit status.
//!
//! - [`matching`]: which base runs go with which current runs (the same key: profile, target,
//!   leg); current runs of one key are repeats, combined;
//! - [`conditions`]: what differs between two runs besides the code (the first nine make the
//!   comparison "not like for like" and leave a base run out of the history);
//! - [`history`]: the base runs a head is judged against, since the history's last level shift
//!   ([`change_point`]);
//! - [`noise`]: the verdict: the head against the prediction interval the history gives for a
//!   run of unchanged code;
//! - [`measures`]: host inclusive and GPU-projected time per iteration, each with the change
//!   within the pair of runs ([`interval`]: Hodges-Lehmann, Mann-Whitney);
//! - [`ranges`]: range by range, with the false-discovery rate controlled;
//! - [`gpu_work`]: the capture's kernels and memory copies, when both runs record them.

pub mod change_point;
pub mod conditions;
pub mod gpu_work;
pub mod history;
pub mod interval;
pub mod matching;
pub mod measures;
pub mod noise;
pub mod ranges;
pub mod run_level;

use crate::artifact::comparison::{
    BaselineSource, Comparison, MeasureName, Method, RunComparison, COMPARISON_SCHEMA_VERSION,
};
use crate::artifact::TOOL_VERSION;

pub use run_level::RunLevel;

/// The noise floor by default: 1 %. Smaller changes are never `slower` or `faster`.
pub const DEFAULT_NOISE_FLOOR_PCT: f64 = 1.0;

/// What the comparison is asked to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criteria {
    /// The smallest change called `slower` or `faster`, in %.
    pub noise_floor_pct: f64,
}

impl Default for Criteria {
    fn default() -> Self {
        Criteria {
            noise_floor_pct: DEFAULT_NOISE_FLOOR_PCT,
        }
    }
}

impl Criteria {
    fn floor(self) -> f64 {
        self.noise_floor_pct / 100.0
    }

    /// The method as comparison.json records it.
    pub fn method(self) -> Method {
        Method {
            name: "prediction_interval".to_owned(),
            confidence: noise::CONFIDENCE,
            noise_floor_pct: self.noise_floor_pct,
            min_base_runs: noise::MIN_BASE_RUNS as u64,
            ranges_false_discovery_rate: ranges::FALSE_DISCOVERY_RATE,
            change_point_alpha: change_point::CHANGE_ALPHA,
            change_point_min_runs: change_point::MIN_SEGMENT as u64,
        }
    }
}

/// Compares every current run with the base runs of its key. `bases` are oldest first.
pub fn compare(
    heads: &[RunLevel],
    bases: &[RunLevel],
    source: BaselineSource,
    notes: Vec<String>,
    criteria: Criteria,
) -> Comparison {
    let matched = matching::pair(heads, bases);
    Comparison {
        schema_version: COMPARISON_SCHEMA_VERSION,
        tool_version: TOOL_VERSION.to_owned(),
        baseline: source,
        method: criteria.method(),
        notes,
        runs: matched
            .groups
            .iter()
            .map(|(h, b)| {
                let heads: Vec<&RunLevel> = h.iter().map(|&i| &heads[i]).collect();
                let candidates: Vec<&RunLevel> = b.iter().map(|&i| &bases[i]).collect();
                compare_key(&heads, &candidates, criteria)
            })
            .collect(),
        unmatched_head: matched
            .heads
            .iter()
            .map(|&i| heads[i].run.clone())
            .collect(),
        unmatched_base: matched
            .bases
            .iter()
            .map(|&i| bases[i].run.clone())
            .collect(),
    }
}

/// The head runs of one key against its base runs (oldest first, at least one).
pub fn compare_key(
    heads: &[&RunLevel],
    candidates: &[&RunLevel],
    criteria: Criteria,
) -> RunComparison {
    let head = heads[0];
    let floor = criteria.floor();
    let chosen = history::choose(candidates, head, floor);
    let used = chosen.used;
    // The base run the conditions and the within-pair intervals are about: the newest used
    // one, else the newest of all.
    let reference = used
        .last()
        .copied()
        .or(candidates.last().copied())
        .expect("a key has base runs");
    let conditions = conditions::list(&reference.conditions, &head.conditions);
    let like_for_like = !conditions.iter().any(|c| c.judged && c.differs);
    // With no base run of the head's conditions, the numbers are still shown against the
    // newest base run (labelled "not like for like"), with no verdict.
    let against: Vec<&RunLevel> = if used.is_empty() {
        vec![reference]
    } else {
        used.clone()
    };
    let gpu_both = head.gpu_available && against.iter().any(|r| r.gpu_available);
    RunComparison {
        key: head.key.clone(),
        heads: heads.iter().map(|r| r.run.clone()).collect(),
        base: reference.run.clone(),
        history: chosen.history,
        like_for_like,
        conditions,
        measures: [MeasureName::HostInclusive, MeasureName::GpuProjected]
            .into_iter()
            .map(|m| {
                let mut measure = measures::measure(m, heads, &against, reference, floor);
                if used.is_empty() && measure.verdict.is_some() {
                    measure.note = Some(
                        "no base run has the head's conditions (compared with the newest base run, whose conditions differ)".to_owned(),
                    );
                }
                measure
            })
            .collect(),
        host_ranges: ranges::changes(heads, &against, ranges::Clock::HostExclusive, floor),
        gpu_ranges: gpu_both
            .then(|| ranges::changes(heads, &against, ranges::Clock::GpuProjected, floor)),
        gpu_work: gpu_work::changes(reference.gpu_work.as_ref(), head.gpu_work.as_ref()),
    }
}
