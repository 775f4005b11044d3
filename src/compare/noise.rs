//! Whether a change is beyond the run-to-run noise: the base branch's runs predict where a new
//! run of unchanged code lands, and the head is judged against that prediction.
//!
//! Every run is one number per measure (the median of its counted iterations, say), taken as
//! a logarithm so that changes are ratios and the noise is relative. With `n` base runs `y_1 …
//! y_n` (mean `ȳ`, sample standard deviation `s`) and the mean `h` of `k` head runs, a mean of
//! `k` new runs of unchanged code lies within
//!
//! ```text
//! ȳ ± t(n - 1, 1 - α/2) · s · √(1/n + 1/k)
//! ```
//!
//! with probability `1 - α`: the prediction interval for the mean of `k` future observations
//! of a normal sample (Hahn & Meeker, *Statistical Intervals*, 1991, section 4.7; Meeker, Hahn
//! & Escobar, 2nd ed., 2017, section 4.4). Assumptions: the runs are independent, and the
//! logarithms of their values are normal with one standard deviation for base and head runs
//! alike. That standard deviation holds every source of noise between runs (another runner,
//! GPU clocks, heat, other jobs) and the noise of each run's own median, so nothing of it has
//! to be known beforehand; a history with a level shift breaks the assumption, which is why
//! [`super::change_point`] cuts the history at its last shift first.
//!
//! The verdict is `slower` (`faster`) when the head lies above (below) the interval **and** the
//! change is at least the noise floor (a change too small to matter is not called one, however
//! certain); `within_noise` otherwise; `noise_unknown` with fewer than [`MIN_BASE_RUNS`] base
//! runs. Everything is deterministic: no resampling, no seed.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Base runs needed to estimate the run-to-run noise: with fewer, the verdict is that the
/// noise is unknown. Three give two degrees of freedom, whose wide `t` (4.30 at 95 %) keeps
/// a verdict from so few runs honest.
pub const MIN_BASE_RUNS: usize = 3;

/// The interval's confidence: 95 %.
pub const CONFIDENCE: f64 = 0.95;

/// What the history predicts, and where the head is against it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The head's mean against the base runs' mean, as a ratio (head / base).
    pub ratio: f64,
    /// The prediction interval for the head's mean, as ratios to the base runs' mean (low,
    /// high); `None` with too few base runs.
    pub interval: Option<(f64, f64)>,
    /// The two-sided probability, under unchanged code, of a head at least this far from the
    /// base runs' mean; `None` with too few base runs.
    pub p_value: Option<f64>,
    /// The run-to-run standard deviation of the base runs, relative (of the logarithms).
    pub spread: Option<f64>,
}

/// The head's runs against the base runs: `base` and `head` are each run's value (in
/// nanoseconds, positive). `None` when either side is empty.
pub fn judge(base: &[f64], head: &[f64]) -> Option<Judgement> {
    if base.is_empty() || head.is_empty() {
        return None;
    }
    // Logarithms relative to the first base run, so that identical runs give exact zeros.
    let origin = base[0].max(1.0).ln();
    let logs = |v: &[f64]| {
        v.iter()
            .map(|x| x.max(1.0).ln() - origin)
            .collect::<Vec<f64>>()
    };
    let (y, h) = (logs(base), logs(head));
    let (n, k) = (y.len() as f64, h.len() as f64);
    let ((y_bar, squares), (h_bar, _)) = (mean_and_squares(&y), mean_and_squares(&h));
    let ratio = (h_bar - y_bar).exp();
    if y.len() < MIN_BASE_RUNS {
        return Some(Judgement {
            ratio,
            interval: None,
            p_value: None,
            spread: None,
        });
    }
    let s = (squares / (n - 1.0)).sqrt();
    let t = students_t(n - 1.0);
    let half = t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0) * s * (1.0 / n + 1.0 / k).sqrt();
    let scale = s * (1.0 / n + 1.0 / k).sqrt();
    let p_value = two_sided_p(&t, (h_bar - y_bar).abs(), scale);
    Some(Judgement {
        ratio,
        interval: Some(((-half).exp(), half.exp())),
        p_value: Some(p_value.clamp(0.0, 1.0)),
        spread: Some(s),
    })
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

    #[test]
    fn the_interval_matches_a_hand_computation() {
        // logs 0, 0.01, 0.02 (three runs), one head run at e^0.05: mean 0.01, s 0.01,
        // t(2, 0.975) 4.302653, half width 4.302653 · 0.01 · √(1/3 + 1) = 0.049683.
        let base: Vec<f64> = [0.0f64, 0.01, 0.02].iter().map(|l| l.exp() * 1e6).collect();
        let j = judge(&base, &[0.05f64.exp() * 1e6]).unwrap();
        assert!((j.ratio - 0.04f64.exp()).abs() < 1e-9, "{}", j.ratio);
        let (lo, hi) = j.interval.unwrap();
        assert!((hi.ln() - 0.049683).abs() < 1e-5, "{}", hi.ln());
        assert!((lo.ln() + 0.049683).abs() < 1e-5, "{}", lo.ln());
        assert!((j.spread.unwrap() - 0.01).abs() < 1e-9);
        // t = 0.04 / (0.01 · √(4/3)) = 3.4641; two-sided p with 2 df = 0.0742.
        assert!(
            (j.p_value.unwrap() - 0.0742).abs() < 5e-4,
            "{:?}",
            j.p_value
        );
    }

    #[test]
    fn too_few_base_runs_give_no_interval() {
        let j = judge(&[1e6, 1.01e6], &[2e6]).unwrap();
        assert_eq!((j.interval, j.p_value, j.spread), (None, None, None));
        // Against the geometric mean of the base runs.
        assert!((j.ratio - 2.0 / 1.01f64.sqrt()).abs() < 1e-9, "{}", j.ratio);
        assert_eq!(judge(&[], &[1.0]), None);
        assert_eq!(judge(&[1.0], &[]), None);
    }

    #[test]
    fn identical_runs_have_no_spread() {
        let j = judge(&[5e6; 10], &[5e6]).unwrap();
        assert_eq!(j.ratio, 1.0);
        assert_eq!(j.interval, Some((1.0, 1.0)));
        assert_eq!(j.p_value, Some(1.0));
        let j = judge(&[5e6; 10], &[5.5e6]).unwrap();
        assert_eq!(j.p_value, Some(0.0));
        assert_eq!(
            verdict(j.ratio, j.p_value.unwrap() < 0.05, 0.01),
            Direction::Slower
        );
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
        fn swapping_base_and_head_scale_mirrors_the_interval(
            base in prop::collection::vec(1e6f64..2e6, 3..30),
            scale in 0.5f64..2.0,
        ) {
            // A head that is the base mean times `scale`: the ratio is `scale`, the interval
            // is symmetric around 1 in logarithms.
            let mean_log = base.iter().map(|v| v.ln()).sum::<f64>() / base.len() as f64;
            let head = mean_log.exp() * scale;
            let j = judge(&base, &[head]).unwrap();
            prop_assert!((j.ratio - scale).abs() < 1e-9);
            let (lo, hi) = j.interval.unwrap();
            prop_assert!((lo.ln() + hi.ln()).abs() < 1e-9);
            let p = j.p_value.unwrap();
            prop_assert!((0.0..=1.0).contains(&p));
            // Outside the interval exactly when p < 5 %.
            let outside = scale < lo || scale > hi;
            prop_assert_eq!(outside, p < 1.0 - CONFIDENCE, "p {} lo {} hi {}", p, lo, hi);
        }
    }
}
