//! History points far from the rest: one hiccup run (a busy machine, a cold cache) must not
//! widen the noise for every pull request after it, nor move the level they are judged
//! against.
//!
//! Two passes, both on the logarithms of the points' values:
//!
//! - [`gross`], before the history's shape is looked for: a point further from both the
//!   median of the three points before it and of the three after it than [`GROSS_SDS`] times
//!   the history's robust spread (a point next to a level shift is near one side), unless two
//!   other points within two places of it are close to it: three together are a level of
//!   their own, not outliers. The spread comes from the differences of neighbouring points
//!   (their median absolute deviation, over √2), which a level shift, a slow trend or one
//!   outlier hardly move.
//! - [`esd`], once the shape is known (a level, a shift, a trend, the runners' offsets):
//!   Rosner's generalized extreme studentized deviate test ("Percentage points for a
//!   generalized ESD many-outlier procedure", Technometrics 25, 1983) on the fit's residuals.
//!   The most extreme point is taken out, the fit made again, and so on up to
//!   [`MAX_OUTLIER_SHARE`] of the points; each step's deviate is its residual over the spread
//!   of the others (externally studentized), and the outliers are the points up to the last
//!   step whose deviate exceeds Student's t at [`ESD_ALPHA`] (Bonferroni over the points).
//!   The spread a deviate is measured against is never less than the robust spread of all
//!   the points (their residuals' MAD): in a small history of one level, nine runs close
//!   together and one further out are common, and without that the test would take the tenth
//!   out because the nine are close, leaving a spread too small for the next head.

use super::fit::Fit;
use super::noise::students_t;
use nsys_gate_core::stats::median;
use statrs::distribution::ContinuousCDF;

/// A point this many robust standard deviations from its neighbours is left out before the
/// history's shape is looked for.
pub const GROSS_SDS: f64 = 8.0;

/// The generalized ESD test's level over the whole history.
pub const ESD_ALPHA: f64 = 0.05;

/// At most this share of a history's points are outliers (rounded down, at least one).
pub const MAX_OUTLIER_SHARE: f64 = 0.3;

/// Deviates this close (relatively) are a tie, broken by a rule: the older point is taken
/// out first.
pub const TIE: f64 = 1e-9;

/// The normal distribution's standard deviation from a median absolute deviation.
const MAD_TO_SD: f64 = 1.482_602_218_505_602;

/// The median absolute deviation from the median, scaled to a normal standard deviation; 0
/// for fewer than two values.
pub fn mad_sd(values: &[f64]) -> f64 {
    let Some(m) = median(values).filter(|_| values.len() >= 2) else {
        return 0.0;
    };
    let deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    median(&deviations).unwrap_or(0.0) * MAD_TO_SD
}

/// The spread of a series from its neighbours' differences: the MAD of the differences over
/// √2. A level shift moves one difference, an outlier two, a slow trend all of them a little
/// (and the MAD is about their median): none of them moves it much.
pub fn neighbour_spread(values: &[f64]) -> f64 {
    if values.len() < 3 {
        return 0.0;
    }
    let differences: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    mad_sd(&differences) / std::f64::consts::SQRT_2
}

/// The points of `values` (oldest first) far from their neighbours: `true` for a gross
/// outlier. `floor` is the smallest spread believed.
pub fn gross(values: &[f64], floor: f64) -> Vec<bool> {
    let n = values.len();
    let mut out = vec![false; n];
    if n < 4 {
        return out;
    }
    let spread = neighbour_spread(values).max(floor);
    let deviation: Vec<f64> = (0..n).map(|i| from_neighbours(values, i)).collect();
    // Far from both sides, and not one of a cluster: three points together beyond the rule
    // (two others within two places of it, close to it) are a level of their own.
    let close = GROSS_SDS / 2.0 * spread;
    for i in 0..n {
        let twins = (i.saturating_sub(2)..(i + 3).min(n))
            .filter(|&j| j != i && (values[j] - values[i]).abs() <= close)
            .count();
        out[i] = deviation[i].abs() > GROSS_SDS * spread && twins < 2;
    }
    out
}

/// How far point `i` is from its neighbours: from the median of the three before it or of
/// the three after it, whichever is nearer (a side of at least two points; both sides when
/// neither has two). A point just before or after a level shift is near one of its sides; a
/// hiccup is near neither.
fn from_neighbours(values: &[f64], i: usize) -> f64 {
    let before = &values[i.saturating_sub(3)..i];
    let after = &values[(i + 1).min(values.len())..(i + 4).min(values.len())];
    let sides: Vec<&[f64]> = [before, after]
        .into_iter()
        .filter(|side| side.len() >= 2)
        .collect();
    let sides = if sides.is_empty() {
        vec![before, after]
    } else {
        sides
    };
    sides
        .into_iter()
        .filter_map(median)
        .map(|m| values[i] - m)
        .min_by(|a, b| a.abs().total_cmp(&b.abs()))
        .unwrap_or(0.0)
}

/// Rosner's generalized ESD test on the residuals of the least-squares fit of `y` on `rows`,
/// among the points `keep` marks (the others are already out); returns `keep` with the
/// outliers taken out. `floor` is the smallest spread believed.
pub fn esd(rows: &[Vec<f64>], y: &[f64], keep: &[bool], floor: f64) -> Vec<bool> {
    let mut current = keep.to_vec();
    let most =
        ((current.iter().filter(|&&k| k).count() as f64 * MAX_OUTLIER_SHARE) as usize).max(1);
    let mut steps: Vec<(usize, bool)> = Vec::new();
    for _ in 0..most {
        let Some((worst, beyond)) = most_extreme(rows, y, &current, floor) else {
            break;
        };
        steps.push((worst, beyond));
        current[worst] = false;
    }
    let outliers = steps
        .iter()
        .rposition(|(_, beyond)| *beyond)
        .map_or(0, |i| i + 1);
    let mut out = keep.to_vec();
    for &(i, _) in &steps[..outliers] {
        out[i] = false;
    }
    out
}

/// The kept point with the largest externally studentized residual, and whether it is beyond
/// the step's critical value; `None` when too few points are left to judge one.
fn most_extreme(rows: &[Vec<f64>], y: &[f64], keep: &[bool], floor: f64) -> Option<(usize, bool)> {
    let index: Vec<usize> = (0..y.len()).filter(|&i| keep[i]).collect();
    let sub_rows: Vec<Vec<f64>> = index.iter().map(|&i| rows[i].clone()).collect();
    let sub_y: Vec<f64> = index.iter().map(|&i| y[i]).collect();
    let fit = Fit::new(&sub_rows, &sub_y)?;
    let n = index.len();
    // Degrees of freedom of the spread without the point: n - rank - 1, at least 2.
    let df = n.checked_sub(fit.rank + 1).filter(|&d| d >= 2)?;
    let rss = fit.rss();
    let robust = mad_sd(&fit.residuals).max(floor);
    let mut best: Option<(usize, f64)> = None;
    for (k, row) in sub_rows.iter().enumerate() {
        let h = fit.leverage(row).min(1.0 - 1e-9);
        let e = fit.residuals[k];
        let without = ((rss - e * e / (1.0 - h)) / df as f64).max(robust * robust);
        let deviate = e.abs() / (without * (1.0 - h)).sqrt();
        // Ties (deviates equal but for rounding) go to the older point: a rule, not the
        // last bits of a floating-point sum.
        if best.is_none_or(|(_, d)| deviate > d * (1.0 + TIE)) {
            best = Some((k, deviate));
        }
    }
    let (k, deviate) = best?;
    let critical = students_t(df as f64).inverse_cdf(1.0 - ESD_ALPHA / (2.0 * n as f64));
    Some((index[k], deviate > critical))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten points about 0 with a fixed pattern of deviations of about `sd`.
    fn level(n: usize, sd: f64) -> Vec<f64> {
        const PATTERN: [f64; 10] = [0.3, -1.1, 0.8, -0.2, 1.2, -0.7, -0.3, 0.5, -0.9, 0.1];
        (0..n).map(|i| sd * PATTERN[i % 10]).collect()
    }

    fn constant(n: usize) -> Vec<Vec<f64>> {
        vec![vec![1.0]; n]
    }

    /// Two points equally far out (their deviates equal but for the last bits of a sum): the
    /// older is taken out first, whichever way each lies and whatever rounding does; a point
    /// really farther out is taken first wherever it is.
    #[test]
    fn a_tie_goes_to_the_older_point() {
        let rows: Vec<Vec<f64>> = (0..10).map(|_| vec![1.0]).collect();
        let keep = vec![true; 10];
        let with = |early: f64, late: f64| {
            let mut y = vec![
                0.0, 0.001, -0.001, 0.002, -0.002, 0.0, 0.001, -0.001, 0.0, 0.0,
            ];
            y[5] = early;
            y[8] = late;
            most_extreme(&rows, &y, &keep, 0.001).map(|(i, _)| i)
        };
        assert_eq!(with(0.1, -0.1), Some(5));
        assert_eq!(with(-0.1, 0.1), Some(5));
        assert_eq!(with(0.1, -0.1 * (1.0 + 1e-12)), Some(5));
        assert_eq!(with(0.1 * (1.0 + 1e-12), -0.1), Some(5));
        assert_eq!(with(0.1, -0.1 * 1.01), Some(8));
        assert_eq!(with(0.1 * 1.01, -0.1), Some(5));
    }

    #[test]
    fn medians_and_spreads() {
        // MAD of 1..5 is 1: 1.4826.
        assert!((mad_sd(&[1.0, 2.0, 3.0, 4.0, 5.0]) - MAD_TO_SD).abs() < 1e-12);
        assert_eq!(mad_sd(&[7.0]), 0.0);
        // A step moves one difference: the neighbours' spread stays the noise's.
        let mut stepped = level(10, 0.01);
        for v in &mut stepped[5..] {
            *v += 0.2;
        }
        let s = neighbour_spread(&stepped);
        assert!(s > 0.003 && s < 0.02, "{s}");
    }

    #[test]
    fn a_hiccup_is_gross_and_a_new_level_is_not() {
        let mut y = level(10, 0.005);
        y[4] += 0.18;
        let g = gross(&y, 0.0);
        assert_eq!(g.iter().filter(|&&o| o).count(), 1);
        assert!(g[4]);
        // The newest three 20 % up: a level of their own, not three outliers.
        let mut y = level(10, 0.005);
        for v in &mut y[7..] {
            *v += 0.18;
        }
        assert!(gross(&y, 0.0).iter().all(|&o| !o));
        // Two of them only: each is its own outlier.
        let mut y = level(10, 0.005);
        for v in &mut y[8..] {
            *v += 0.18;
        }
        assert_eq!(gross(&y, 0.0), [vec![false; 8], vec![true; 2]].concat());
    }

    #[test]
    fn esd_takes_out_outliers_and_nothing_of_one_level() {
        let y = level(10, 0.01);
        let keep = vec![true; 10];
        assert_eq!(esd(&constant(10), &y, &keep, 0.0), keep);
        let mut y = level(10, 0.01);
        y[2] += 0.08;
        y[7] -= 0.09;
        let out = esd(&constant(10), &y, &keep, 0.0);
        assert_eq!((0..10).filter(|&i| !out[i]).collect::<Vec<_>>(), vec![2, 7]);
        // A point already out stays out and is not counted again.
        let mut start = keep.clone();
        start[7] = false;
        let out = esd(&constant(10), &y, &start, 0.0);
        assert_eq!((0..10).filter(|&i| !out[i]).collect::<Vec<_>>(), vec![2, 7]);
    }

    #[test]
    fn esd_judges_residuals_of_the_shape() {
        // A line through the points: a trend is not an outlier, a point off it is.
        let rows: Vec<Vec<f64>> = (0..12).map(|i| vec![1.0, i as f64]).collect();
        let mut y: Vec<f64> = (0..12)
            .map(|i| 0.01 * i as f64 + level(12, 0.002)[i])
            .collect();
        assert!(esd(&rows, &y, &[true; 12], 0.0).iter().all(|&k| k));
        y[6] += 0.05;
        let out = esd(&rows, &y, &[true; 12], 0.0);
        assert_eq!((0..12).filter(|&i| !out[i]).collect::<Vec<_>>(), vec![6]);
    }
}
