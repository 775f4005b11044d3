//! The two headline measures (host inclusive and GPU-projected time per iteration) of a
//! head against its history: the change, the prediction interval and the verdict, and the
//! change within the pair of the first head run and the reference base run.

use super::history::percent;
use super::interval;
use super::noise::{self, Direction, CONFIDENCE, MIN_BASE_RUNS};
use super::run_level::RunLevel;
use crate::artifact::comparison::{
    ChangeVerdict, HeadSummary, HistorySummary, Measure, MeasureName, PairChange,
};

/// One measure of the head runs against the used base runs (oldest first); `reference` is
/// the base run of the within-pair interval.
pub fn measure(
    name: MeasureName,
    heads: &[&RunLevel],
    used: &[&RunLevel],
    reference: &RunLevel,
    floor: f64,
) -> Measure {
    let empty = |note: String| Measure {
        name,
        base: None,
        head: None,
        change_pct: None,
        interval_pct: None,
        p_value: None,
        verdict: None,
        within_pair: None,
        note: Some(note),
    };
    if name == MeasureName::GpuProjected {
        let head_gpu = heads[0].gpu_available;
        let base_gpu = used.iter().any(|r| r.gpu_available);
        match (base_gpu, head_gpu) {
            (true, true) => {}
            (false, false) => return empty("no GPU projection in either".into()),
            (false, true) => return empty("no GPU projection in the base runs".into()),
            (true, false) => return empty("no GPU projection in the head run".into()),
        }
    }
    let base: Vec<f64> = used.iter().filter_map(|r| r.value(name)).collect();
    let head: Vec<f64> = heads.iter().filter_map(|r| r.value(name)).collect();
    let mut m = Measure {
        name,
        base: history_summary(&base),
        head: head_summary(&head, heads[0].iterations),
        change_pct: None,
        interval_pct: None,
        p_value: None,
        verdict: None,
        within_pair: within_pair(name, heads[0], reference),
        note: None,
    };
    let Some(judgement) = noise::judge(&base, &head) else {
        m.note = Some(match (base.len(), head.len()) {
            (0, _) => "nothing to compare: no usable base run has a value".to_owned(),
            _ => "nothing to compare: the head run has no counted iteration".to_owned(),
        });
        return m;
    };
    m.change_pct = Some(percent(judgement.ratio));
    match (judgement.interval, judgement.p_value) {
        (Some((lo, hi)), Some(p)) => {
            m.interval_pct = Some([percent(lo), percent(hi)]);
            m.p_value = Some(p);
            m.verdict = Some(verdict(judgement.ratio, p < 1.0 - CONFIDENCE, floor));
        }
        _ => {
            m.verdict = Some(ChangeVerdict::NoiseUnknown);
            m.note = Some(format!(
                "{} usable base {} with a value: the run-to-run noise is unknown ({MIN_BASE_RUNS} needed)",
                base.len(),
                if base.len() == 1 { "run" } else { "runs" }
            ));
        }
    }
    m
}

/// The verdict word of a change.
pub fn verdict(ratio: f64, significant: bool, floor: f64) -> ChangeVerdict {
    match noise::verdict(ratio, significant, floor) {
        Direction::Slower => ChangeVerdict::Slower,
        Direction::Faster => ChangeVerdict::Faster,
        Direction::Within => ChangeVerdict::WithinNoise,
    }
}

fn history_summary(values: &[f64]) -> Option<HistorySummary> {
    if values.is_empty() {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.max(1.0).ln()).collect();
    let (mean, squares) = noise::mean_and_squares(&logs);
    let spread =
        (logs.len() >= 2).then(|| round2((squares / (logs.len() as f64 - 1.0)).sqrt() * 100.0));
    Some(HistorySummary {
        runs: values.len() as u64,
        level_ns: mean.exp(),
        minimum_ns: values.iter().copied().fold(f64::INFINITY, f64::min),
        maximum_ns: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        spread_pct: spread,
    })
}

fn head_summary(values: &[f64], iterations: u64) -> Option<HeadSummary> {
    if values.is_empty() {
        return None;
    }
    Some(HeadSummary {
        runs: values.len() as u64,
        value_ns: noise::geometric_mean(values),
        iterations,
    })
}

/// The Hodges-Lehmann change of the head run against `base` from their iterations, with its
/// interval within this pair of runs.
fn within_pair(name: MeasureName, head: &RunLevel, base: &RunLevel) -> Option<PairChange> {
    let shift = interval::shift(base.samples(name), head.samples(name))?;
    Some(PairChange {
        change_pct: percent(shift.ratio),
        interval_pct: shift.interval.map(|(lo, hi)| [percent(lo), percent(hi)]),
    })
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
