//! Whether a change is beyond the run-to-run noise: the base branch's history predicts where
//! a new run of unchanged code lands, and the head is judged against that prediction.
//!
//! Every run is one number per measure (the median of its counted iterations, say), taken as
//! a logarithm so that changes are ratios and the noise is relative. The history
//! ([`super::history`]) gives a [`Prediction`]: the level a run of unchanged code is expected
//! at (the mean of the history's points, or of its newest level after a shift, or its trend's
//! value at the newest point, for the head's runner), the run-to-run standard deviation `s`
//! of the points about it with its degrees of freedom `df`, and how well the level is known
//! (`leverage`: its variance in units of `s²`, `1/n` for a plain mean of `n` points). A head
//! `h` of unchanged code then lies within
//!
//! ```text
//! level ± t(df, 1 - α/2) · √(s² · (1 + leverage) + thin)
//! ```
//!
//! with probability `1 - α`: the prediction interval of a new observation of a normal linear
//! model (Hahn & Meeker, *Statistical Intervals*, 1991, section 4.7; Meeker, Hahn & Escobar,
//! 2nd ed., 2017, section 4.4). `thin` is what the head's own median adds to the noise
//! beyond what the history's medians hold: a head with 5 counted iterations knows its value
//! less well than runs of 64 ([`super::points::Point::within`]).
//!
//! Two guards: `s` is never taken as less than [`SPREAD_FLOOR`] times the noise floor (a
//! history that agrees more closely than that is more likely copies of one run than a machine
//! that quiet, and would otherwise give certainty: p = 0 for any change), and nothing is
//! judged with fewer than [`MIN_BASE_RUNS`] points. A measure takes the floor as a spread
//! known without error ([`judge_measure`]): beyond the noise when beyond both the interval of
//! the history's spread (with `t`) and that of the floor (with the normal quantile).
//!
//! The verdict is `slower` (`faster`) when the head lies above (below) the interval **and** the
//! change is at least the noise floor (a change too small to matter is not called one, however
//! certain); `within_noise` otherwise; `noise_unknown` without a prediction. Everything is
//! deterministic: no resampling, no seed.

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};

/// Points needed to estimate the run-to-run noise: with fewer, the verdict is that the noise
/// is unknown. Three give two degrees of freedom, whose wide `t` (4.30 at 95 %) keeps a
/// verdict from so few runs honest.
pub const MIN_BASE_RUNS: usize = 3;

/// The confidence of one profile's verdicts together: the measures of its legs share
/// `1 - VERDICT_CONFIDENCE` (each judged at its share), the ranges and kernels have their own
/// false-discovery rate.
pub const VERDICT_CONFIDENCE: f64 = 0.95;

/// The run-to-run standard deviation is never taken as less than this share of the noise
/// floor: with the default floor of 1 %, 0.8 %, so that a head 1.5 % from a history of
/// identical runs is within noise however many runs agree.
pub const SPREAD_FLOOR: f64 = 0.8;

/// The chance with which [`detectable`]'s change is found.
pub const POWER: f64 = 0.8;

/// What a history says a run of unchanged code does (logarithms of the measure).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// Where it lands, on average.
    pub level: f64,
    /// The run-to-run standard deviation about the history's shape.
    pub spread: f64,
    /// Its degrees of freedom (the points used less the shape's parameters).
    pub df: f64,
    /// The variance of `level` in units of `spread²`.
    pub leverage: f64,
    /// The part of `spread²` that the used points' own iterations explain (their medians'
    /// variance, averaged).
    pub within: f64,
}

/// What the history predicts, and where the head is against it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The head against the predicted level, as a ratio (head / level).
    pub ratio: f64,
    /// Where a head of unchanged code lands (at the level asked for), as ratios to the
    /// level (low, high).
    pub interval: (f64, f64),
    /// The two-sided probability, under unchanged code, of a head at least this far from the
    /// level.
    pub p_value: f64,
}

/// The head (`head`: the logarithm of its value, `thin`: its median's own variance) against
/// a prediction, at level `alpha` (two-sided), with `floor` the noise floor (relative).
pub fn judge(prediction: &Prediction, head: f64, thin: f64, alpha: f64, floor: f64) -> Judgement {
    let scale = scale(prediction, thin, floor);
    let t = students_t(prediction.df);
    let distance = head - prediction.level;
    let half = t.inverse_cdf(1.0 - alpha / 2.0) * scale;
    Judgement {
        ratio: distance.exp(),
        interval: ((-half).exp(), half.exp()),
        p_value: two_sided_p(&t, distance.abs(), scale).clamp(0.0, 1.0),
    }
}

/// [`judge`] for a measure: the spread floor is a spread known without error, so where it
/// decides, the head is judged with the normal quantile, not with Student's t of the history's
/// degrees of freedom. The head is beyond the noise when it lies beyond **both** the interval
/// of the history's own spread (`t(df, 1 - α/2)`, the spread as estimated) and that of the
/// floor (`z(1 - α/2)`, the spread floor in the spread's place); `p_value` is the larger of the
/// two tests' p-values. Each test alone holds the level `α` whatever the true spread is (the
/// first exactly, under the normal model; the second whenever the true spread is at most the
/// floor, and the first decides when it is more), so both together hold it too. With a quiet
/// history of few runs, whose spread is floored, this keeps the floor's guard (identical runs
/// are never certain) without paying `t` of few degrees of freedom for an uncertainty the
/// floor does not have: 5 points at 0.5 % see a +3 % change, where `t(4) · 0.8 %` did not.
pub fn judge_measure(
    prediction: &Prediction,
    head: f64,
    thin: f64,
    alpha: f64,
    floor: f64,
) -> Judgement {
    let (own, known) = (
        scale(prediction, thin, 0.0),
        floor_scale(prediction, thin, floor),
    );
    let t = students_t(prediction.df);
    let normal = Normal::standard();
    let distance = head - prediction.level;
    let half =
        (t.inverse_cdf(1.0 - alpha / 2.0) * own).max(normal.inverse_cdf(1.0 - alpha / 2.0) * known);
    let p_normal = if known > 0.0 {
        2.0 * (1.0 - normal.cdf(distance.abs() / known))
    } else if distance != 0.0 {
        0.0
    } else {
        1.0
    };
    Judgement {
        ratio: distance.exp(),
        interval: ((-half).exp(), half.exp()),
        p_value: two_sided_p(&t, distance.abs(), own)
            .max(p_normal)
            .clamp(0.0, 1.0),
    }
}

/// The standard deviation of a head of unchanged code about the predicted level: the
/// history's spread (never under the floor) over the level's own uncertainty, and the head's
/// own thinness.
fn scale(prediction: &Prediction, thin: f64, floor: f64) -> f64 {
    let s = prediction.spread.max(SPREAD_FLOOR * (1.0 + floor).ln());
    (s * s * (1.0 + prediction.leverage) + (thin - prediction.within).max(0.0)).sqrt()
}

/// [`scale`] with the spread floor in the history's spread's place.
fn floor_scale(prediction: &Prediction, thin: f64, floor: f64) -> f64 {
    let s = SPREAD_FLOOR * (1.0 + floor).ln();
    (s * s * (1.0 + prediction.leverage) + (thin - prediction.within).max(0.0)).sqrt()
}

/// Points of the grid over the spread's own uncertainty in [`detectable`].
const POWER_GRID: usize = 400;

/// The smallest slowdown, as a ratio, that this history would call `slower` with probability
/// [`POWER`] for this head (never under the noise floor). The test divides the head's
/// distance by a spread estimated from `df` degrees of freedom, so its power at a true change
/// `δ` is that of the noncentral t: `P(T'(df, δ/σ) > t(df, 1 - α/2))`, which is
/// `E[Φ(δ/σ - t(df, 1 - α/2) · √(V/df))]` over `V ~ χ²(df)`. That mean is taken over
/// [`POWER_GRID`] equally likely values of `V` (its quantiles' midpoints), and `δ/σ` found by
/// bisection. `σ` is the history's own spread made median-unbiased (divided by the median of
/// `√(χ²(df)/df)`: 0.83 for 2 degrees of freedom, 0.96 for 9), so that over many histories
/// the figure is as often over as under the truth. With many runs this is about
/// `(t(df, 1 - α/2) + 0.84) · σ`; with three runs, whose spread is itself uncertain, it takes a
/// good deal more than that.
///
/// A measure is judged by [`judge_measure`]: the change must also pass the test of the floor,
/// a spread known without error, found 4 times in 5 at `(z(1 - α/2) + z(0.8)) · σ_floor`;
/// the detectable change is the larger of the two (each test's own), as the verdict needs
/// both.
pub fn detectable(prediction: &Prediction, thin: f64, alpha: f64, floor: f64) -> f64 {
    let standard = Normal::standard();
    let known = (standard.inverse_cdf(1.0 - alpha / 2.0) + standard.inverse_cdf(POWER))
        * floor_scale(prediction, thin, floor);
    let own = detectable_scales(prediction.df, alpha) * scale(prediction, thin, 0.0);
    own.max(known).exp().max(1.0 + floor)
}

/// [`detectable`] from its number of scales (what `df` and `alpha` give,
/// [`detectable_scales`]): many items of one table share it, only their spreads differ.
pub fn detectable_at(scales: f64, prediction: &Prediction, thin: f64, floor: f64) -> f64 {
    (scales * scale(prediction, thin, floor))
        .exp()
        .max(1.0 + floor)
}

/// How many of the interval's scales a change must be to be found with probability
/// [`POWER`] by a test at `alpha` with `df` degrees of freedom (the noncentral t of
/// [`detectable`], over the median spread factor).
pub fn detectable_scales(df: f64, alpha: f64) -> f64 {
    let df = df.max(1.0);
    let critical = students_t(df).inverse_cdf(1.0 - alpha / 2.0);
    let chi = ChiSquared::new(df).expect("df >= 1");
    let roots: Vec<f64> = (0..POWER_GRID)
        .map(|i| (chi.inverse_cdf((i as f64 + 0.5) / POWER_GRID as f64) / df).sqrt())
        .collect();
    let standard = Normal::standard();
    let power = |ncp: f64| {
        roots
            .iter()
            .map(|r| standard.cdf(ncp - critical * r))
            .sum::<f64>()
            / POWER_GRID as f64
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    while power(hi) < POWER && hi < 1e6 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if power(mid) < POWER {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The history's spread is as likely under the true one as over it: taken as the median
    // of what a true spread of 1 gives with `df` degrees of freedom.
    let median_spread = (chi.inverse_cdf(0.5) / df).sqrt();
    hi / median_spread
}

/// Student's t distribution with `df` degrees of freedom (at least 1).
pub fn students_t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df.max(1.0)).expect("a location of 0, a scale of 1 and df >= 1")
}

/// The two-sided p-value under `t` of a distance (at least 0) of `distance / scale`; with no
/// scale (no spread at all), 0 for any distance and 1 for none.
pub fn two_sided_p(t: &StudentsT, distance: f64, scale: f64) -> f64 {
    if scale > 0.0 {
        2.0 * (1.0 - t.cdf(distance / scale))
    } else if distance > 0.0 {
        0.0
    } else {
        1.0
    }
}

/// The largest lag-1 autocorrelation believed: beyond it a history of 20 runs would have one
/// effective run, and a test none.
pub const MAX_AUTOCORRELATION: f64 = 0.9;

/// How much a history's order tells: the lag-1 autocorrelation `r1` of a fit's `residuals`
/// (in the points' order), `Σ e_t e_(t-1) / Σ e_t²`, with the small-sample bias of the
/// estimate added back (about `(1 + 4 r1) / n` for `n` residuals of a fitted mean: Kendall,
/// 1954), then taken as at least 0 and at most [`MAX_AUTOCORRELATION`], and the share of
/// independent runs a history of such runs is worth, `(1 - r1) / (1 + r1)` (the effective
/// number of runs of an AR(1) series, `n (1 - r1) / (1 + r1)`, over `n`). 1 for independent
/// runs; 0.11 for runs that follow each other with `r1 = 0.8`. A machine that is slow for a
/// few runs in a row makes a history look shifted or drifting: the test of a drift counts its
/// runs by this share; a share under 1 sends the search for level shifts to its test for
/// AR(1) runs ([`super::change_point::ar1_split_p`]).
pub fn independent_share(residuals: &[f64]) -> f64 {
    let n = residuals.len();
    let squares: f64 = residuals.iter().map(|e| e * e).sum();
    if n < 4 || squares <= 0.0 {
        return 1.0;
    }
    let lagged: f64 = residuals.windows(2).map(|w| w[0] * w[1]).sum();
    let r1 = lagged / squares;
    let r1 = (r1 + (1.0 + 4.0 * r1) / n as f64).clamp(0.0, MAX_AUTOCORRELATION);
    (1.0 - r1) / (1.0 + r1)
}

/// [`independent_share`] of a series that may hold a trend: the geometric mean of the share
/// from a fit's `residuals` and the share from the `values`' first differences, whose lag-1
/// autocorrelation is `-(1 - φ) / 2` for AR(1) runs of coefficient `φ` whatever straight line
/// they follow (a fitted trend takes up a slow wander of the runs, and its residuals hide it;
/// the differences' estimate, on the other hand, varies more: each alone either missed AR(1)
/// runs or a real drift in the simulation, cases `a1` and `d1`).
pub fn independent_share_of_trend(values: &[f64], residuals: &[f64]) -> f64 {
    let n = values.len();
    let fitted = independent_share(residuals);
    if n < 5 {
        return fitted;
    }
    let differences: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    let (mean, squares) = mean_and_squares(&differences);
    if squares <= 0.0 {
        return fitted;
    }
    let lagged: f64 = differences
        .windows(2)
        .map(|w| (w[0] - mean) * (w[1] - mean))
        .sum();
    let phi = (1.0 + 2.0 * lagged / squares).clamp(0.0, MAX_AUTOCORRELATION);
    (fitted * (1.0 - phi) / (1.0 + phi)).sqrt()
}

/// The mean of `values` and the sum of their squared deviations from it.
pub fn mean_and_squares(values: &[f64]) -> (f64, f64) {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    (mean, values.iter().map(|v| (v - mean).powi(2)).sum())
}

/// The verdict on a change of `ratio` (head / base): beyond the noise when `significant`, and
/// at least `floor` (a relative change, 0.01 for 1 %) either way.
pub fn verdict(ratio: f64, significant: bool, floor: f64) -> Direction {
    let change = ratio - 1.0;
    if !significant || change.abs() < floor {
        Direction::Within
    } else if change > 0.0 {
        Direction::Slower
    } else {
        Direction::Faster
    }
}

/// Which way a change went, once it is beyond the noise and the floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Slower,
    Faster,
    Within,
}

/// The geometric mean of positive values (each at least 1 ns), or the value itself for one;
/// 0 for none.
pub fn geometric_mean(values: &[f64]) -> f64 {
    match values {
        [] => 0.0,
        [one] => *one,
        _ => (values.iter().map(|v| v.max(1.0).ln()).sum::<f64>() / values.len() as f64).exp(),
    }
}

/// Benjamini and Hochberg's step-up procedure ("Controlling the false discovery rate", J. R.
/// Stat. Soc. B 57, 1995): which of `p_values` are discoveries at false-discovery rate `q`.
/// Sort the `m` p-values, find the largest rank `i` with `p(i) <= i q / m`, and reject the `i`
/// smallest. Over ranges that all did not change, the chance of flagging any is at most `q`.
pub fn benjamini_hochberg(p_values: &[f64], q: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]).then(a.cmp(&b)));
    let cutoff = order
        .iter()
        .enumerate()
        .filter(|(rank, &i)| p_values[i] <= (rank + 1) as f64 * q / m as f64)
        .map(|(rank, _)| rank + 1)
        .max()
        .unwrap_or(0);
    let mut rejected = vec![false; m];
    for &i in &order[..cutoff] {
        rejected[i] = true;
    }
    rejected
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The prediction of a plain history: the mean and sample standard deviation of `logs`.
    fn plain(logs: &[f64]) -> Prediction {
        let n = logs.len() as f64;
        let (mean, squares) = mean_and_squares(logs);
        Prediction {
            level: mean,
            spread: (squares / (n - 1.0)).sqrt(),
            df: n - 1.0,
            leverage: 1.0 / n,
            within: 0.0,
        }
    }

    #[test]
    fn the_interval_matches_a_hand_computation() {
        // logs 0, 0.01, 0.02 (three runs), one head run at 0.05: mean 0.01, s 0.01,
        // t(2, 0.975) 4.302653, half width 4.302653 · 0.01 · √(1/3 + 1) = 0.049683. No
        // noise floor, so that the spread is the history's own.
        let j = judge(&plain(&[0.0, 0.01, 0.02]), 0.05, 0.0, 0.05, 0.0);
        assert!((j.ratio - 0.04f64.exp()).abs() < 1e-9, "{}", j.ratio);
        let (lo, hi) = j.interval;
        assert!((hi.ln() - 0.049683).abs() < 1e-5, "{}", hi.ln());
        assert!((lo.ln() + 0.049683).abs() < 1e-5, "{}", lo.ln());
        // t = 0.04 / (0.01 · √(4/3)) = 3.4641; two-sided p with 2 df = 0.0742.
        assert!((j.p_value - 0.0742).abs() < 5e-4, "{}", j.p_value);
        // Found 4 times in 5 with 2 degrees of freedom: a noncentral t of 5.65 (its survival
        // function at 4.3027 is 0.80) over the median spread factor 0.8326: 6.79 scales, well
        // beyond the (4.30 + 1.06) of a known spread.
        let d = detectable(&plain(&[0.0, 0.01, 0.02]), 0.0, 0.05, 0.0).ln() / 0.011547;
        assert!((d - 6.79).abs() < 0.02, "{d}");
    }

    #[test]
    fn a_thin_head_widens_the_interval() {
        let history = Prediction {
            within: 0.0001,
            ..plain(&[0.0, 0.01, 0.02, -0.01, 0.005])
        };
        let long = judge(&history, 0.03, 0.0001, 0.05, 0.0);
        let short = judge(&history, 0.03, 0.0009, 0.05, 0.0);
        assert!(short.interval.1 > long.interval.1);
        assert!(short.p_value > long.p_value);
        assert!(detectable(&history, 0.0009, 0.05, 0.0) > detectable(&history, 0.0001, 0.05, 0.0));
        // A head that knows its value better than the history's runs is not narrowed.
        assert_eq!(judge(&history, 0.03, 0.0, 0.05, 0.0), long);
    }

    #[test]
    fn identical_runs_are_judged_with_the_spread_floor() {
        let same = plain(&[0.0; 10]);
        assert_eq!(same.spread, 0.0);
        // Spread floor 0.8 % (noise floor 1 %): a 1.5 % head is within it, a 3 % one not.
        let j = judge(&same, 1.015f64.ln(), 0.0, 0.05, 0.01);
        assert!(j.p_value > 0.05, "{}", j.p_value);
        let j = judge(&same, 1.03f64.ln(), 0.0, 0.05, 0.01);
        assert!(j.p_value < 0.05, "{}", j.p_value);
        // Nothing is ever smaller than the noise floor to find.
        assert!(detectable(&same, 0.0, 0.05, 0.01) >= 1.01);
        // Without a noise floor, no change at all is no distance at all.
        let j = judge(&same, 0.0, 0.0, 0.05, 0.0);
        assert_eq!((j.ratio, j.p_value), (1.0, 1.0));
    }

    #[test]
    fn the_floor_is_a_known_spread_for_a_measure() {
        // Five runs about 0.3 % apart (floored at 0.8 %, noise floor 1 %): judged with t(4)
        // the interval's half width would be 2.776 · 0.8 % · √1.2 = 2.43 %; the floor is no
        // estimate, so the normal quantile: 1.960 · 0.008 · √1.2 = 1.72 %.
        let quiet = plain(&[0.0, 0.003, -0.003, 0.002, -0.002]);
        let least = SPREAD_FLOOR * 1.01f64.ln() * 1.2f64.sqrt();
        let j = judge_measure(&quiet, quiet.level + 0.03, 0.0, 0.05, 0.01);
        assert!(
            (j.interval.1.ln() - 1.959964 * least).abs() < 1e-4,
            "{:?}",
            j.interval
        );
        assert!(j.p_value < 0.05);
        assert!(judge(&quiet, quiet.level + 0.02, 0.0, 0.05, 0.01).p_value > 0.05);
        assert!(judge_measure(&quiet, quiet.level + 0.02, 0.0, 0.05, 0.01).p_value < 0.05);
        // Identical runs are still never certain: 1.5 % is within the floor's interval.
        let same = plain(&[0.0; 10]);
        let j = judge_measure(&same, 1.015f64.ln(), 0.0, 0.05, 0.01);
        assert!(j.p_value > 0.05, "{}", j.p_value);
        // A spread over the floor: both tests are the t test's.
        let noisy = plain(&[0.0, 0.03, -0.03, 0.02, -0.02]);
        assert_eq!(
            judge_measure(&noisy, 0.04, 0.0, 0.05, 0.01),
            judge(&noisy, 0.04, 0.0, 0.05, 0.01)
        );
        // Found 4 times in 5 from (1.96 + 0.84) floors' scales.
        let d = detectable(&quiet, 0.0, 0.05, 0.01).ln();
        assert!((d - (1.959964 + 0.841621) * least).abs() < 1e-4, "{d}");
    }

    #[test]
    fn runs_that_follow_each_other_are_worth_fewer() {
        // Independent-looking residuals: worth all their runs.
        let pattern = [0.3, -1.1, 0.8, -0.2, 1.2, -0.7, -0.3, 0.5, -0.9, 0.1];
        assert_eq!(independent_share(&pattern), 1.0);
        // A slow wander (each run near the one before): r1 about 0.8, worth a handful.
        let wander: Vec<f64> = (0..20)
            .map(|i| (i as f64 * std::f64::consts::PI / 10.0).sin())
            .collect();
        let share = independent_share(&wander);
        assert!(share < 0.15, "{share}");
        // A straight line through the wander changes nothing the differences see.
        let tilted: Vec<f64> = wander
            .iter()
            .enumerate()
            .map(|(i, w)| w + 0.1 * i as f64)
            .collect();
        assert!(independent_share_of_trend(&tilted, &pattern) < 0.5);
        assert_eq!(independent_share(&[1.0, -1.0]), 1.0);
    }

    #[test]
    fn the_floor_keeps_small_changes_within_noise() {
        assert_eq!(verdict(1.005, true, 0.01), Direction::Within);
        assert_eq!(verdict(1.02, true, 0.01), Direction::Slower);
        assert_eq!(verdict(0.97, true, 0.01), Direction::Faster);
        assert_eq!(verdict(1.5, false, 0.01), Direction::Within);
    }

    #[test]
    fn benjamini_hochberg_steps_up() {
        // m = 5, q = 0.05: thresholds 0.01, 0.02, 0.03, 0.04, 0.05 for ranks 1-5. Sorted:
        // 0.001 (passes), 0.025 (above 0.02), 0.03 (passes at rank 3), 0.5, 0.9. The step-up
        // takes the largest passing rank, 3: the three smallest are rejected, 0.025 with them.
        let p = [0.03, 0.001, 0.5, 0.025, 0.9];
        assert_eq!(
            benjamini_hochberg(&p, 0.05),
            vec![true, true, false, true, false]
        );
        assert_eq!(benjamini_hochberg(&[0.2, 0.3], 0.05), vec![false, false]);
        assert_eq!(benjamini_hochberg(&[], 0.05), Vec::<bool>::new());
    }

    proptest! {
        #[test]
        fn the_interval_is_symmetric_and_p_agrees_with_it(
            logs in prop::collection::vec(-0.05f64..0.05, 3..30),
            change in -0.3f64..0.3,
            alpha in 0.01f64..0.2,
        ) {
            let history = plain(&logs);
            let j = judge_measure(&history, history.level + change, 0.0, alpha, 0.01);
            prop_assert!((j.ratio.ln() - change).abs() < 1e-9);
            let (lo, hi) = j.interval;
            prop_assert!((lo.ln() + hi.ln()).abs() < 1e-9);
            prop_assert!((0.0..=1.0).contains(&j.p_value));
            // Outside the interval exactly when p < alpha.
            let outside = j.ratio < lo || j.ratio > hi;
            prop_assert_eq!(outside, j.p_value < alpha, "p {} lo {} hi {}", j.p_value, lo, hi);
            let d = detectable(&history, 0.0, alpha, 0.01);
            prop_assert!(d > hi && d >= 1.01);
        }
    }
}
