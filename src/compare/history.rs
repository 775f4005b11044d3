//! Which base runs make a head's history: the runs of its key with its judged conditions,
//! since the history's last level shift; the others are left out, each with why.

use super::change_point::{self, LevelShift};
use super::conditions;
use super::run_level::RunLevel;
use crate::artifact::comparison::{ChangePoint, History, LeftOut, LeftOutReason, MeasureName};

/// A head's base runs, sorted out.
pub struct Chosen<'a> {
    /// The used runs, oldest first.
    pub used: Vec<&'a RunLevel>,
    /// What comparison.json says of them.
    pub history: History,
}

/// Sorts `candidates` (the base runs of the head's key, oldest first) against the head's
/// conditions (`head`), with changes under `floor` (relative) never a level shift.
pub fn choose<'a>(
    candidates: &[&'a RunLevel],
    head: &RunLevel,
    floor: f64,
    judge: conditions::Judge<'_>,
) -> Chosen<'a> {
    let mut left_out = Vec::new();
    let mut alike = Vec::new();
    for (position, &run) in candidates.iter().enumerate() {
        let differs = conditions::judged_differences(&run.conditions, &head.conditions, judge);
        if differs.is_empty() {
            alike.push((position, run));
        } else {
            left_out.push(LeftOut {
                run: run.base_run(position),
                reason: LeftOutReason::Conditions,
                differs,
            });
        }
    }
    let runs: Vec<&RunLevel> = alike.iter().map(|(_, r)| *r).collect();
    let shift = [MeasureName::HostInclusive, MeasureName::GpuProjected]
        .into_iter()
        .find_map(|measure| last_shift(&runs, measure, floor).map(|s| (measure, s)));
    let (used, change_point) = match shift {
        Some((measure, (at, ratio))) => {
            for &(position, run) in &alike[..at] {
                left_out.push(LeftOut {
                    run: run.base_run(position),
                    reason: LeftOutReason::BeforeChangePoint,
                    differs: Vec::new(),
                });
            }
            let first = alike[at].1;
            let point = ChangePoint {
                measure,
                run_id: first.run.run_id.clone(),
                git_commit: first.run.git_commit.clone(),
                created_at: first.created_at.clone(),
                change_pct: percent(ratio),
                runs: (alike.len() - at) as u64,
            };
            (alike[at..].to_vec(), Some(point))
        }
        None => (alike, None),
    };
    left_out.sort_by_key(|l| l.run.position);
    let history = History {
        used: used.iter().map(|&(p, r)| r.base_run(p)).collect(),
        left_out,
        change_point,
    };
    Chosen {
        used: used.into_iter().map(|(_, r)| r).collect(),
        history,
    }
}

/// The newest level shift of a measure among `runs`: the index (into `runs`) of the first run
/// of the new level, and its ratio to the level before.
fn last_shift(runs: &[&RunLevel], measure: MeasureName, floor: f64) -> Option<(usize, f64)> {
    let with_value: Vec<(usize, f64)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.value(measure).map(|v| (i, v)))
        .collect();
    let values: Vec<f64> = with_value.iter().map(|(_, v)| *v).collect();
    let LevelShift { at, ratio } = change_point::last_shift(&values, floor)?;
    Some((with_value[at].0, ratio))
}

/// A ratio as a change in %, rounded to 0.01 % so that comparison.json stays readable (and
/// never `-0.0`).
pub fn percent(ratio: f64) -> f64 {
    ((ratio - 1.0) * 10_000.0).round() / 100.0 + 0.0
}
