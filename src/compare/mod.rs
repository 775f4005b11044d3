//! Comparing the current runs with a baseline: plain data in (analyses), plain data
//! out ([`crate::artifact::comparison::Comparison`]). Nothing here reads a file or the network,
//! and nothing here changes a gate or an exit status: a timing difference is a difference, not
//! yet a regression.
//!
//! - [`matching`]: which baseline run goes with which current run (profile name, then target);
//! - [`conditions`]: what differs between the two runs besides the code (the first nine make
//!   the comparison "not like for like");
//! - [`interval`]: the change of the per-iteration durations with its 95 % interval;
//! - [`ranges`]: range by range, per counted iteration; new and gone ranges;
//! - [`gpu_work`]: the capture's kernels and memory copies, when both runs record them.

pub mod change_point;
pub mod conditions;
#[cfg(test)]
pub(crate) mod fake;
pub mod gpu_work;
pub mod interval;
pub mod matching;
pub mod noise;
pub mod ranges;

use crate::artifact::comparison::{
    BaselineSource, ChangeVerdict, Comparison, Measure, MeasureName, RunComparison, RunRef,
    SideSummary, COMPARISON_SCHEMA_VERSION,
};
use crate::artifact::{Analysis, TOOL_VERSION};

/// A run as the comparison sees it: its analysis and where it was read from.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub analysis: &'a Analysis,
    /// For people: the analysis.json's path (inside the baseline's folder for a baseline).
    pub path: &'a str,
}

/// Compares every current run with the baseline run of the same profile.
pub fn compare(
    heads: &[Side<'_>],
    bases: &[Side<'_>],
    source: BaselineSource,
    notes: Vec<String>,
) -> Comparison {
    let matched = matching::pair(heads, bases);
    Comparison {
        schema_version: COMPARISON_SCHEMA_VERSION,
        tool_version: TOOL_VERSION.to_owned(),
        baseline: source,
        notes,
        runs: matched
            .pairs
            .iter()
            .map(|&(h, b)| compare_run(bases[b], heads[h]))
            .collect(),
        unmatched_head: matched.heads.iter().map(|&i| run_ref(heads[i])).collect(),
        unmatched_base: matched.bases.iter().map(|&i| run_ref(bases[i])).collect(),
    }
}

/// One current run against its baseline run.
pub fn compare_run(base: Side<'_>, head: Side<'_>) -> RunComparison {
    let conditions = conditions::list(base.analysis, head.analysis);
    let like_for_like = !conditions.iter().any(|c| c.judged && c.differs);
    let gpu_both =
        base.analysis.gpu_projection_available() && head.analysis.gpu_projection_available();
    RunComparison {
        base: run_ref(base),
        head: run_ref(head),
        like_for_like,
        conditions,
        measures: vec![
            measure(MeasureName::HostInclusive, base.analysis, head.analysis),
            measure(MeasureName::GpuProjected, base.analysis, head.analysis),
        ],
        host_ranges: ranges::host(base.analysis, head.analysis),
        gpu_ranges: gpu_both.then(|| ranges::gpu(base.analysis, head.analysis)),
        gpu_work: gpu_work::changes(
            base.analysis.gpu_work.as_ref(),
            head.analysis.gpu_work.as_ref(),
        ),
    }
}

pub fn run_ref(side: Side<'_>) -> RunRef {
    let run = &side.analysis.run;
    RunRef {
        profile_name: run.profile_name.clone(),
        target: target_name(side.analysis),
        run_id: run.run_id.clone(),
        git_commit: run.git_commit.clone(),
        analysis_path: side.path.to_owned(),
    }
}

/// `run.target.name`, when the target is a mapping with a string name.
pub fn target_name(a: &Analysis) -> Option<String> {
    a.run
        .target
        .as_ref()
        .and_then(|t| t.get("name"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

/// The counted iterations' durations of a measure: complete, not duplicate; for the GPU
/// projection, those that launched GPU work.
pub fn samples(a: &Analysis, name: MeasureName) -> Vec<f64> {
    a.counted_iterations()
        .filter_map(|i| match name {
            MeasureName::HostInclusive => Some(i.host.inclusive_ns as f64),
            MeasureName::GpuProjected => i.gpu_projection.as_ref().map(|g| g.projected_ns as f64),
        })
        .collect()
}

fn side_summary(values: &[f64]) -> Option<SideSummary> {
    if values.is_empty() {
        return None;
    }
    let sample = crate::stats::Sample::new(values.iter().map(|&v| v as i64).collect());
    Some(SideSummary {
        count: values.len() as u64,
        median_ns: sample.median(),
    })
}

/// One measure of both runs: medians, change, interval and verdict, or a note saying why not.
fn measure(name: MeasureName, base: &Analysis, head: &Analysis) -> Measure {
    let empty = |note: String| Measure {
        name,
        base: None,
        head: None,
        change_pct: None,
        interval_pct: None,
        verdict: None,
        note: Some(note),
    };
    if name == MeasureName::GpuProjected {
        match (
            base.gpu_projection_available(),
            head.gpu_projection_available(),
        ) {
            (true, true) => {}
            (false, false) => return empty("no GPU projection in either run".into()),
            (false, true) => return empty("no GPU projection in the base run".into()),
            (true, false) => return empty("no GPU projection in the head run".into()),
        }
    }
    let (b, h) = (samples(base, name), samples(head, name));
    let mut m = Measure {
        name,
        base: side_summary(&b),
        head: side_summary(&h),
        change_pct: None,
        interval_pct: None,
        verdict: None,
        note: None,
    };
    let what = match name {
        MeasureName::HostInclusive => "complete iterations",
        MeasureName::GpuProjected => "complete iterations that launched GPU work",
    };
    let Some(shift) = interval::shift(&b, &h) else {
        m.note = Some(format!(
            "nothing to compare: {} {what} in the base run, {} in the head run",
            b.len(),
            h.len()
        ));
        return m;
    };
    m.change_pct = Some(percent(shift.ratio));
    match shift.interval {
        Some((lo, hi)) => {
            let (lo, hi) = (percent(lo), percent(hi));
            m.interval_pct = Some([lo, hi]);
            m.verdict = Some(if lo > 0.0 {
                ChangeVerdict::Slower
            } else if hi < 0.0 {
                ChangeVerdict::Faster
            } else {
                ChangeVerdict::WithinNoise
            });
        }
        None => {
            m.verdict = Some(ChangeVerdict::WithinNoise);
            m.note = Some(format!(
                "{} and {} {what} are too few for a 95 % interval (4 a side at least)",
                b.len(),
                h.len()
            ));
        }
    }
    m
}

/// A ratio as a change in %, rounded to 0.01 % so that comparison.json stays readable.
fn percent(ratio: f64) -> f64 {
    ((ratio - 1.0) * 10_000.0).round() / 100.0
}
