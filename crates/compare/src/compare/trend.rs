//! A base branch that drifts: each merge a little slower (or faster), none of them beyond the
//! noise on its own. A steady trend is not a level shift (there is no one run where the level
//! changed) and not noise (its runs are not independent of their order), and a window of the
//! newest runs lags behind it: a pull request judged against their mean is blamed for the
//! branch's own drift.
//!
//! The trend is a line through the history's points (the logarithms of their values) from
//! some point on, flat before it (a "hinge"): every start that leaves at least
//! [`MIN_RUNS`] points in the trend is fitted by least squares, the start with the smallest
//! squared residuals is kept, and its slope is tested (Student's t with `n - 2` degrees of
//! freedom), the p-value multiplied by the number of starts tried (Bonferroni). The history
//! drifts when that is under [`ALPHA`] and the line moved at least the noise floor from its
//! start to the newest point. Runs that follow each other (a machine slow for a few runs in a
//! row) look like a trend: the slope's variance is divided by the share of independent runs
//! the history is worth ([`super::noise::independent_share_of_trend`], from the fit's residuals and the runs'
//! differences), and its degrees of
//! freedom are those of the effective number of runs.

use super::fit::Fit;
use super::noise::{independent_share_of_trend, students_t, two_sided_p};

/// Points in a trend, at least: a drift needs more points than a level shift.
pub const MIN_RUNS: usize = 6;

/// The family-wise level of the test over all starts tried.
pub const ALPHA: f64 = 0.01;

/// A trend in a history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// The index (into the values) of the trend's first point: flat up to it, a line from it.
    pub since: usize,
    /// The change per position (of the logarithms).
    pub slope: f64,
    /// How far the line moved from `since` to the newest point (of the logarithms).
    pub change: f64,
    /// The slope's two-sided p-value, Bonferroni-adjusted over the starts tried.
    pub p_adjusted: f64,
    /// The fit's squared residuals, to weigh it against a level shift.
    pub rss: f64,
}

/// The design row of a point at `position` for a trend starting at `start`.
pub fn row(position: f64, start: f64) -> Vec<f64> {
    vec![1.0, (position - start).max(0.0)]
}

/// The trend in `values` (oldest first) at `positions` (rising), at least `floor` (a relative
/// change) from its start to the newest point; `None` when the history has none.
pub fn drift(values: &[f64], positions: &[f64], floor: f64) -> Option<Trend> {
    let n = values.len();
    if n < MIN_RUNS + 2 {
        return None;
    }
    let starts = n - MIN_RUNS + 1;
    let mut best: Option<(usize, Fit)> = None;
    for since in 0..starts {
        let rows: Vec<Vec<f64>> = positions
            .iter()
            .map(|&p| row(p, positions[since]))
            .collect();
        let Some(fit) = Fit::new(&rows, values) else {
            continue;
        };
        if fit.rank < 2 {
            continue;
        }
        if best.as_ref().is_none_or(|(_, b)| fit.rss() < b.rss()) {
            best = Some((since, fit));
        }
    }
    let (since, fit) = best?;
    let slope = fit.beta[1];
    let s2 = fit.rss() / (n - 2) as f64;
    // The slope's variance: s² times the (1, 1) element of (X'X)^-1, which is the leverage of
    // the row (0, 1); with runs that follow each other (the residuals' autocorrelation), over
    // the share of independent runs they are worth, with as many degrees of freedom.
    let share = independent_share_of_trend(values, &fit.residuals);
    let df = (n as f64 * share - 2.0).max(1.0);
    let se = (s2 * fit.leverage(&[0.0, 1.0]) / share).sqrt();
    let p = two_sided_p(&students_t(df), slope.abs(), se);
    let p_adjusted = (p * starts as f64).min(1.0);
    let change = slope * (positions[n - 1] - positions[since]);
    (p_adjusted < ALPHA && change.abs() >= (1.0 + floor).ln()).then_some(Trend {
        since,
        slope,
        change,
        p_adjusted,
        rss: fit.rss(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATTERN: [f64; 10] = [0.3, -1.1, 0.8, -0.2, 1.2, -0.7, -0.3, 0.5, -0.9, 0.1];

    fn positions(n: usize) -> Vec<f64> {
        (0..n).map(|i| i as f64).collect()
    }

    #[test]
    fn a_steady_trend_is_found_from_where_it_starts() {
        // 8 flat points, then 12 each 0.8 % up, noise 0.3 %.
        let values: Vec<f64> = (0..20)
            .map(|i| 0.003 * PATTERN[i % 10] + 0.008 * (i as f64 - 7.0).max(0.0))
            .collect();
        let t = drift(&values, &positions(20), 0.01).expect("a drift");
        assert!((6..=8).contains(&t.since), "{}", t.since);
        assert!((t.slope - 0.008).abs() < 0.001, "{}", t.slope);
        assert!((t.change - 0.096).abs() < 0.015, "{}", t.change);
        // The pattern repeats every 10 runs: its differences look a little autocorrelated.
        assert!(t.p_adjusted < ALPHA, "{}", t.p_adjusted);
    }

    #[test]
    fn a_flat_history_and_a_short_one_do_not_drift() {
        let flat: Vec<f64> = (0..20).map(|i| 0.01 * PATTERN[i % 10]).collect();
        assert_eq!(drift(&flat, &positions(20), 0.01), None);
        let rising: Vec<f64> = (0..7).map(|i| 0.01 * i as f64).collect();
        assert_eq!(drift(&rising, &positions(7), 0.01), None);
        // A trend too small to matter: 0.05 % a run over 12 runs is 0.6 %, under the floor.
        let slight: Vec<f64> = (0..12).map(|i| 0.0005 * i as f64).collect();
        assert_eq!(drift(&slight, &positions(12), 0.01), None);
    }
}
