//! The two headline measures (host inclusive and GPU-projected time per iteration) of a
//! head against its history: the change, the prediction interval, the verdict and what the
//! history could have seen, and the change within the pair of the first head run and the
//! reference base run.

use super::history::{change_pct_of, Learned};
use super::interval;
use super::noise::{self, Direction, MIN_BASE_RUNS};
use super::points::Point;
use super::run_level::RunLevel;
use nsys_gate_core::artifact::comparison::{
    ChangeVerdict, HeadSummary, HistorySummary, Measure, MeasureName, PairChange,
};

/// One measure of the head (its runs, one point) against the history as `learned` from the
/// alike points; `reference` is the base run of the within-pair interval, `alpha` the
/// measure's level.
pub fn measure(
    name: MeasureName,
    head: &Point<'_>,
    alike: &[Point<'_>],
    learned: &Learned,
    reference: &RunLevel,
    floor: f64,
    alpha: f64,
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
        detectable_pct: None,
    };
    if name == MeasureName::GpuProjected {
        let head_gpu = head.first().gpu_available;
        let base_gpu = alike.iter().any(|p| p.runs.iter().any(|r| r.gpu_available));
        match (base_gpu, head_gpu) {
            (true, true) => {}
            (false, false) => return empty("no GPU projection in either".into()),
            (false, true) => return empty("no GPU projection in the base runs".into()),
            (true, false) => return empty("no GPU projection in the head run".into()),
        }
    }
    let base: Vec<f64> = alike
        .iter()
        .zip(&learned.kept)
        .filter(|(_, &k)| k)
        .filter_map(|(p, _)| p.value(name))
        .collect();
    let head_value = head.value(name);
    let mut m = Measure {
        name,
        base: history_summary(&base, learned),
        head: head_value.map(|v| HeadSummary {
            runs: head.runs.iter().filter(|r| r.value(name).is_some()).count() as u64,
            value_ns: v,
            iterations: head.first().iterations,
        }),
        change_pct: None,
        interval_pct: None,
        p_value: None,
        verdict: None,
        within_pair: within_pair(name, head.first(), reference),
        note: None,
        detectable_pct: None,
    };
    let (Some(h), false) = (head_value, base.is_empty()) else {
        m.note = Some(match base.len() {
            0 => "nothing to compare: no usable base run has a value".to_owned(),
            _ => "nothing to compare: the head run has no counted iteration".to_owned(),
        });
        return m;
    };
    let Some(prediction) = learned.prediction else {
        // No noise known: the change against the points' geometric mean, no verdict.
        m.change_pct = Some(change_pct_of(h / noise::geometric_mean(&base)));
        m.verdict = Some(ChangeVerdict::NoiseUnknown);
        m.note = Some(format!(
            "{} usable base {} with a value: the run-to-run noise is unknown ({MIN_BASE_RUNS} needed)",
            base.len(),
            if base.len() == 1 { "run" } else { "runs" }
        ));
        return m;
    };
    let thin = head.within(name).unwrap_or(0.0);
    let j = noise::judge_measure(&prediction, h.ln(), thin, alpha, floor);
    m.change_pct = Some(change_pct_of(j.ratio));
    m.interval_pct = Some([change_pct_of(j.interval.0), change_pct_of(j.interval.1)]);
    m.p_value = Some(j.p_value);
    m.verdict = Some(verdict(j.ratio, j.p_value < alpha, floor));
    m.detectable_pct = Some(change_pct_of(noise::detectable(
        &prediction,
        thin,
        alpha,
        floor,
    )));
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

/// The used points of a measure: how many, the level the head is judged against (the
/// prediction's, else their geometric mean), their range and their run-to-run spread.
fn history_summary(values: &[f64], learned: &Learned) -> Option<HistorySummary> {
    if values.is_empty() {
        return None;
    }
    let spread = match learned.prediction {
        Some(p) => Some(round2(p.spread * 100.0)),
        None if values.len() >= 2 => {
            let logs: Vec<f64> = values.iter().map(|v| v.max(1.0).ln()).collect();
            let (_, squares) = noise::mean_and_squares(&logs);
            Some(round2((squares / (logs.len() as f64 - 1.0)).sqrt() * 100.0))
        }
        None => None,
    };
    Some(HistorySummary {
        runs: values.len() as u64,
        level_ns: learned
            .prediction
            .map_or_else(|| noise::geometric_mean(values), |p| p.level.exp()),
        minimum_ns: values.iter().copied().fold(f64::INFINITY, f64::min),
        maximum_ns: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        spread_pct: spread,
    })
}

/// The Hodges-Lehmann change of the head run against `base` from their iterations, with its
/// interval within this pair of runs.
fn within_pair(name: MeasureName, head: &RunLevel, base: &RunLevel) -> Option<PairChange> {
    let shift = interval::shift(base.samples(name), head.samples(name))?;
    Some(PairChange {
        change_pct: change_pct_of(shift.ratio),
        interval_pct: shift
            .interval
            .map(|(lo, hi)| [change_pct_of(lo), change_pct_of(hi)]),
    })
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
