//! The points of a history: one per CI run. A harness that profiles three times a push, or an
//! artifact that holds several analyses of one profile, gives one point, never three: the
//! analyses of one key inside a CI run are combined (geometric means) before anything else,
//! so that a run's repeats never count as several runs, never make a level of their own, and
//! one artifact cannot outvote the rest of the history. The head's repeats are one point too.
//!
//! With `--baseline auto` a point is a workflow run; with paths, the analyses that record
//! one `provenance.ci_run`; an analysis that records none (written outside CI, or before it
//! was recorded) is a point of its own.

use super::run_level::{PointKey, RunLevel};
use nsys_gate_core::artifact::comparison::MeasureName;

/// The relative standard deviation of a median of `n` normal values is about this times
/// theirs over √n.
const MEDIAN_EFFICIENCY: f64 = 1.253_314_137_315_500_3;

/// One point of a history (or the head): the analyses of one key in one CI run.
#[derive(Debug, Clone)]
pub struct Point<'a> {
    /// The analyses, in the order given.
    pub runs: Vec<&'a RunLevel>,
}

impl<'a> Point<'a> {
    /// The first analysis: what names the point.
    pub fn first(&self) -> &'a RunLevel {
        self.runs[0]
    }

    /// The point's value of a measure: the geometric mean of its analyses' values; `None`
    /// when none has one.
    pub fn value(&self, measure: MeasureName) -> Option<f64> {
        geometric(self.runs.iter().filter_map(|r| r.value(measure)))
    }

    /// The logarithm of [`Point::value`].
    pub fn log(&self, measure: MeasureName) -> Option<f64> {
        self.value(measure).map(f64::ln)
    }

    /// How far the point's value of a measure may be from its run's true level by the noise
    /// of its own iterations alone (the variance of the logarithm of a median of its counted
    /// iterations, averaged over its analyses); `None` when no analysis knows it. A head with
    /// few counted iterations knows its own value less well than a history of long runs.
    pub fn within(&self, measure: MeasureName) -> Option<f64> {
        let parts: Vec<f64> = self
            .runs
            .iter()
            .filter_map(|r| {
                let sd = r.iteration_sd(measure)?;
                let n = r.samples(measure).len() as f64;
                Some((MEDIAN_EFFICIENCY * sd).powi(2) / n)
            })
            .collect();
        (!parts.is_empty()).then(|| parts.iter().sum::<f64>() / (parts.len() * parts.len()) as f64)
    }

    /// Counted iterations over the point's analyses.
    pub fn iterations(&self) -> u64 {
        self.runs.iter().map(|r| r.iterations).sum()
    }

    /// The runner of the point, when its analyses name one.
    pub fn runner(&self) -> Option<&'a str> {
        self.runs.iter().find_map(|r| r.runner.as_deref())
    }

    /// Why the point cannot be used, if it cannot: the first of its analyses' reasons.
    pub fn invalid(&self) -> Option<&'a str> {
        self.runs.iter().find_map(|r| r.invalid.as_deref())
    }
}

/// The geometric mean of positive values; `None` for none.
pub fn geometric(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v.max(1e-9).ln(), n + 1));
    (n > 0).then(|| (sum / n as f64).exp())
}

/// The base runs of a key (oldest first) as points, oldest first: the runs of one CI run (or
/// workflow run) together, in the place of the first of them.
pub fn group<'a>(runs: &[&'a RunLevel]) -> Vec<Point<'a>> {
    let mut points: Vec<(PointKey, Point<'a>)> = Vec::new();
    for (i, &run) in runs.iter().enumerate() {
        let key = run.point_key(i);
        match points.iter_mut().find(|(k, _)| *k == key) {
            Some((_, point)) => point.runs.push(run),
            None => points.push((key, Point { runs: vec![run] })),
        }
    }
    points.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::fake::analysis;
    use nsys_gate_core::artifact::CiRun;

    fn run(ms: f64, ci: Option<u64>, workflow: Option<u64>) -> RunLevel {
        let host: Vec<i64> = (0..9)
            .map(|i| (ms * 1e6 * (1.0 + 0.001 * (i % 3) as f64)) as i64)
            .collect();
        let mut level = RunLevel::of(&analysis(&host, &[("a", (ms * 9e6) as i64)], false), "x");
        level.ci_run = ci.map(|id| CiRun {
            id,
            attempt: Some(1),
        });
        level.ci_run_id = workflow;
        level
    }

    #[test]
    fn repeats_of_one_ci_run_are_one_point() {
        let runs = [
            run(10.0, Some(1), None),
            run(10.0, None, None),
            run(12.0, Some(1), None),
            run(11.0, Some(2), None),
            run(10.0, None, None),
        ];
        let refs: Vec<&RunLevel> = runs.iter().collect();
        let points = group(&refs);
        let sizes: Vec<usize> = points.iter().map(|p| p.runs.len()).collect();
        assert_eq!(sizes, [2, 1, 1, 1]);
        // Combined by the geometric mean: √(10 × 12) ms, about the median of each.
        let v = points[0].value(MeasureName::HostInclusive).unwrap();
        assert!((v / 1e6 - (10.01f64 * 12.012).sqrt()).abs() < 0.01, "{v}");
        assert_eq!(points[0].iterations(), 18);
        let tables: Vec<_> = points[0].runs.iter().map(|r| &r.host_ranges).collect();
        let range = crate::compare::ranges::value(&tables, "a").unwrap();
        assert!(
            (range / 1e6 - (10.0f64 * 12.0).sqrt()).abs() < 1e-6,
            "{range}"
        );
    }

    #[test]
    fn a_workflow_run_is_one_point_whatever_its_files_say() {
        let mut a = run(10.0, Some(7), Some(500));
        let b = run(10.0, Some(8), Some(500));
        a.runner = Some("gpu-1".into());
        let refs = [&a, &b];
        let points = group(&refs);
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].runner(), Some("gpu-1"));
        // Two analyses know their median half as... their mean variance over 2.
        let one = Point { runs: vec![&a] }
            .within(MeasureName::HostInclusive)
            .unwrap();
        let two = points[0].within(MeasureName::HostInclusive).unwrap();
        assert!(
            (two - one / 2.0).abs() < 1e-15 * one.max(1.0),
            "{one} {two}"
        );
    }
}
