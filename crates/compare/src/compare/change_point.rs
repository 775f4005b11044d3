//! A base branch that changed speed: the level shifts in a history of runs (oldest first), so
//! that the head is judged against the newest level, and the noise is learned within each
//! level, not from two levels mixed.
//!
//! Binary segmentation with a two-sample test: every split of the history into an older and
//! a newer part, each of at least [`MIN_SEGMENT`] runs, is scored by the two-sample t
//! statistic of the runs' logarithms (pooled variance, `n - 2` degrees of freedom); the best
//! split is a shift when its two-sided p-value, times the number of splits tried (Bonferroni),
//! is under [`CHANGE_ALPHA`] and the shift is at least the noise floor. Each part is then
//! searched again, so that every shift is found. Same idea as the change-point
//! detection of Apache Otava (E-divisive means with a significance test), reduced to mean
//! shifts of normal logarithms, and deterministic (no permutations).
//!
//! One slow run now and then is not a shift: a part needs three runs at least (as many as a
//! verdict needs), and a single outlier raises the pooled variance more than it moves a mean
//! (the gross ones are left out before, [`super::outliers`]). All shifts are found, so that
//! the noise can be learned within each level ([`super::history`]).

use super::noise::{independent_share, mean_and_squares, students_t, two_sided_p};

/// Runs on each side of a shift, at least: as many as a verdict needs
/// ([`super::noise::MIN_BASE_RUNS`]), so that the runs since a shift can always judge a head.
pub const MIN_SEGMENT: usize = super::noise::MIN_BASE_RUNS;

/// The family-wise level of the test over all splits tried.
pub const CHANGE_ALPHA: f64 = 0.01;

/// Every level shift in `logs` (logarithms of positive values, oldest first), each at least
/// `floor` (a relative change, 0.01 for 1 %): the index of the first run of each new level,
/// oldest first. Binary segmentation: the best split of the whole history, if it is a shift,
/// then the best split of each side, and so on.
///
/// Runs that follow each other (a machine slow for a few runs in a row) look like shifts: once
/// the shifts are found, the lag-1 autocorrelation of the residuals about the levels' means
/// gives the share of independent runs the history is worth ([`independent_share`]), and the
/// search is made again with every test counting the runs by it (the difference's variance
/// over the share, the degrees of freedom those of the effective number of runs).
pub fn boundaries_of_logs(logs: &[f64], floor: f64) -> Vec<usize> {
    let min_log = (1.0 + floor).ln();
    let search = |share: f64| {
        let mut found = Vec::new();
        split_all(logs, 0, min_log, share, &mut found);
        found.sort_unstable();
        found
    };
    let found = search(1.0);
    let mut residuals = Vec::with_capacity(logs.len());
    let mut start = 0;
    for end in found.iter().copied().chain([logs.len()]) {
        let (mean, _) = mean_and_squares(&logs[start..end]);
        residuals.extend(logs[start..end].iter().map(|v| v - mean));
        start = end;
    }
    match independent_share(&residuals) {
        share if share < 1.0 => search(share),
        _ => found,
    }
}

fn split_all(logs: &[f64], offset: usize, min_log: f64, share: f64, found: &mut Vec<usize>) {
    let Some(split) = best_split(logs, share) else {
        return;
    };
    if split.p_adjusted >= CHANGE_ALPHA || split.shift.abs() < min_log {
        return;
    }
    found.push(offset + split.at);
    let (older, newer) = logs.split_at(split.at);
    split_all(older, offset, min_log, share, found);
    split_all(newer, offset + split.at, min_log, share, found);
}

/// The best split of `logs`.
struct BestSplit {
    at: usize,
    /// Mean of the newer part less the mean of the older part.
    shift: f64,
    /// The p-value times the number of splits tried.
    p_adjusted: f64,
}

/// The best split of `logs`, its runs worth `share` of independent ones.
fn best_split(logs: &[f64], share: f64) -> Option<BestSplit> {
    let n = logs.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    let splits = n - 2 * MIN_SEGMENT + 1;
    let t_dist = students_t((n as f64 * share - 2.0).max(1.0));
    let mut best: Option<BestSplit> = None;
    for at in MIN_SEGMENT..=n - MIN_SEGMENT {
        let (older, newer) = logs.split_at(at);
        let (m_old, ss_old) = mean_and_squares(older);
        let (m_new, ss_new) = mean_and_squares(newer);
        let shift = m_new - m_old;
        let pooled = ((ss_old + ss_new) / (n - 2) as f64).sqrt();
        let scale = pooled * ((1.0 / older.len() as f64 + 1.0 / newer.len() as f64) / share).sqrt();
        let p = two_sided_p(&t_dist, shift.abs(), scale);
        let p_adjusted = (p * splits as f64).min(1.0);
        // The smallest p-value; among equal ones, the larger shift, then the newer split.
        let better = best.as_ref().is_none_or(|b| {
            p_adjusted < b.p_adjusted
                || (p_adjusted == b.p_adjusted && shift.abs() >= b.shift.abs())
        });
        if better {
            best = Some(BestSplit {
                at,
                shift,
                p_adjusted,
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level shift in a history.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct LevelShift {
        /// The index of the first run of the new level.
        at: usize,
        /// The new level against the one before it (the runs since the previous shift, or since
        /// the start), as a ratio of their geometric means.
        ratio: f64,
    }

    /// [`boundaries_of_logs`] of positive values.
    fn boundaries(values: &[f64], floor: f64) -> Vec<usize> {
        let logs: Vec<f64> = values.iter().map(|v| v.max(1.0).ln()).collect();
        boundaries_of_logs(&logs, floor)
    }

    /// The newest level shift in `values` (positive, oldest first), at least `floor`; `None` when
    /// the history holds one level. Its ratio is the new level against the one before it.
    fn last_shift(values: &[f64], floor: f64) -> Option<LevelShift> {
        let bounds = boundaries(values, floor);
        let at = *bounds.last()?;
        let before = bounds.iter().rev().nth(1).copied().unwrap_or(0);
        let logs: Vec<f64> = values.iter().map(|v| v.max(1.0).ln()).collect();
        let end = logs.len();
        let mean = |a: usize, b: usize| logs[a..b].iter().sum::<f64>() / (b - a) as f64;
        Some(LevelShift {
            at,
            ratio: (mean(at, end) - mean(before, at)).exp(),
        })
    }

    /// `n` values around `level` with a fixed pattern of ±`noise` (relative) deviations.
    fn level(n: usize, level: f64, noise: f64) -> Vec<f64> {
        const PATTERN: [f64; 7] = [0.3, -1.1, 0.8, -0.2, 1.2, -0.7, -0.3];
        (0..n)
            .map(|i| level * (1.0 + noise * PATTERN[i % PATTERN.len()]))
            .collect()
    }

    #[test]
    fn one_level_has_no_shift() {
        assert_eq!(last_shift(&level(10, 1e7, 0.01), 0.01), None);
        assert_eq!(last_shift(&[1e7; 10], 0.01), None);
        assert_eq!(last_shift(&[1e7; 3], 0.01), None);
    }

    #[test]
    fn a_step_three_runs_ago_is_found_with_its_size() {
        let mut history = level(7, 1e7, 0.005);
        history.extend(level(3, 1.05e7, 0.005));
        let shift = last_shift(&history, 0.01).unwrap();
        assert_eq!(shift.at, 7);
        assert!((shift.ratio - 1.05).abs() < 0.01, "{}", shift.ratio);
    }

    #[test]
    fn the_newest_of_two_steps_is_the_one_returned() {
        let mut history = level(5, 1e7, 0.003);
        history.extend(level(5, 1.1e7, 0.003));
        history.extend(level(4, 1.04e7, 0.003));
        let shift = last_shift(&history, 0.01).unwrap();
        assert_eq!(shift.at, 10);
        assert!((shift.ratio - 1.04 / 1.1).abs() < 0.01, "{}", shift.ratio);
    }

    #[test]
    fn one_slow_run_is_not_a_step() {
        let mut history = level(10, 1e7, 0.01);
        history[9] *= 1.05;
        assert_eq!(last_shift(&history, 0.01), None);
        let mut history = level(10, 1e7, 0.01);
        history[4] *= 1.05;
        assert_eq!(last_shift(&history, 0.01), None);
    }

    #[test]
    fn counting_runs_by_their_autocorrelation_keeps_real_steps() {
        // Independent runs about a real step: the residuals about the two levels are not
        // autocorrelated, the search made again finds the step.
        let mut step = level(10, 1e7, 0.005);
        step.extend(level(10, 1.05e7, 0.005));
        assert_eq!(last_shift(&step, 0.01).map(|s| s.at), Some(10));
        // Runs that follow each other about one level (a slow wander of ±1.5 % over 8 runs
        // each way): worth a fraction of their number.
        let wander: Vec<f64> = (0..24)
            .map(|i| 0.015 * (i as f64 * std::f64::consts::PI / 8.0).sin())
            .collect();
        assert!(crate::compare::noise::independent_share(&wander) < 0.2);
    }

    #[test]
    fn a_step_below_the_floor_is_ignored() {
        let mut history = level(6, 1e7, 0.0005);
        history.extend(level(6, 1.005e7, 0.0005));
        assert_eq!(last_shift(&history, 0.01), None);
        assert_eq!(last_shift(&history, 0.001).map(|s| s.at), Some(6));
    }
}
