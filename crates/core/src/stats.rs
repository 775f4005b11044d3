//! Descriptive statistics over integer nanosecond samples.
//!
//! The definitions are the contract's: percentiles interpolate linearly between the closest
//! ranks (numpy's default), `stddev` is the sample standard deviation (n - 1; 0 for one value)
//! and `cv` is stddev / mean. Everything is computed in a fixed order so that the same samples
//! always give the same bits, which keeps `analysis.json` byte-identical between runs.

use serde::{Deserialize, Serialize};

/// Statistics of the per-iteration durations (`iteration_summary.host_inclusive` and friends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationStats {
    pub count: u64,
    pub total_ns: i64,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub minimum_ns: i64,
    pub maximum_ns: i64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub stddev_ns: f64,
    pub cv: f64,
}

/// Statistics of one named range's instances (`host_ranges[].inclusive` and friends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeStats {
    pub total_ns: i64,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub minimum_ns: i64,
    pub maximum_ns: i64,
    pub stddev_ns: f64,
}

/// Sorted samples with their sum: the one pass every statistic below starts from.
#[derive(Debug, Clone)]
pub struct Sample {
    sorted: Vec<i64>,
    total: i128,
}

impl Sample {
    /// Takes the values in any order; the statistics do not depend on it.
    pub fn new(mut values: Vec<i64>) -> Self {
        values.sort_unstable();
        let total = values.iter().map(|&v| i128::from(v)).sum();
        Sample {
            sorted: values,
            total,
        }
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    pub fn total(&self) -> i64 {
        saturate(self.total)
    }

    pub fn mean(&self) -> f64 {
        if self.sorted.is_empty() {
            return 0.0;
        }
        self.total as f64 / self.sorted.len() as f64
    }

    pub fn median(&self) -> f64 {
        self.percentile(50.0)
    }

    /// Linear interpolation between closest ranks, as `numpy.percentile(..., method="linear")`.
    pub fn percentile(&self, p: f64) -> f64 {
        percentile_sorted(&self.sorted, p)
    }

    /// Sample standard deviation (n - 1 in the denominator; 0 for fewer than two values).
    pub fn stddev(&self) -> f64 {
        let n = self.sorted.len();
        if n < 2 {
            return 0.0;
        }
        let mean = self.mean();
        let sum_sq: f64 = self
            .sorted
            .iter()
            .map(|&v| {
                let d = v as f64 - mean;
                d * d
            })
            .sum();
        (sum_sq / (n - 1) as f64).sqrt()
    }

    /// Coefficient of variation; 0 when the mean is 0.
    pub fn cv(&self) -> f64 {
        let mean = self.mean();
        if mean == 0.0 {
            0.0
        } else {
            self.stddev() / mean
        }
    }

    /// Median absolute deviation from the median, unscaled.
    pub fn mad(&self) -> f64 {
        mad_around(self.sorted.iter().map(|&v| v as f64), self.median())
    }

    pub fn minimum(&self) -> i64 {
        self.sorted.first().copied().unwrap_or(0)
    }

    pub fn maximum(&self) -> i64 {
        self.sorted.last().copied().unwrap_or(0)
    }

    /// `None` for an empty sample: there is nothing to summarise.
    pub fn iteration_stats(&self) -> Option<IterationStats> {
        if self.is_empty() {
            return None;
        }
        Some(IterationStats {
            count: self.len() as u64,
            total_ns: self.total(),
            mean_ns: self.mean(),
            median_ns: self.median(),
            minimum_ns: self.minimum(),
            maximum_ns: self.maximum(),
            p90_ns: self.percentile(90.0),
            p99_ns: self.percentile(99.0),
            stddev_ns: self.stddev(),
            cv: self.cv(),
        })
    }

    pub fn range_stats(&self) -> RangeStats {
        RangeStats {
            total_ns: self.total(),
            mean_ns: self.mean(),
            median_ns: self.median(),
            minimum_ns: self.minimum(),
            maximum_ns: self.maximum(),
            stddev_ns: self.stddev(),
        }
    }
}

/// An outlier lies more than this many MADs (unscaled) above the median: the rule of the
/// `slow_iterations` warning, and where the report's charts clip their axis.
pub const OUTLIER_MADS: f64 = 5.0;

/// The value above which one of a sample with this median and MAD is an outlier: median +
/// [`OUTLIER_MADS`] x MAD.
pub fn outlier_limit(median: f64, mad: f64) -> f64 {
    median + OUTLIER_MADS * mad
}

/// The median of `values` and their median absolute deviation (unscaled), as [`Sample`]
/// computes them, for values that are not whole nanoseconds.
pub fn median_and_mad(values: &[f64]) -> (f64, f64) {
    let mut values = values.to_vec();
    let median = median_in_place(&mut values);
    (median, mad_around(values.into_iter(), median))
}

/// The median of the values' absolute deviations from `median`.
fn mad_around(values: impl Iterator<Item = f64>, median: f64) -> f64 {
    let mut deviations: Vec<f64> = values.map(|v| (v - median).abs()).collect();
    median_in_place(&mut deviations)
}

/// The median of `values` as a percentile of 50 of them sorted is (0 for none), found by
/// selection rather than a sort: linear in their number. The values are left reordered.
pub fn median_in_place(values: &mut [f64]) -> f64 {
    middle_two(values).map_or(0.0, |(lower, upper)| lerp(lower, upper, 0.5))
}

/// The median of `values` (`None` for none), the values left as they are: the middle one, or
/// the midpoint of the middle two.
pub fn median(values: &[f64]) -> Option<f64> {
    let (lower, upper) = middle_two(&mut values.to_vec())?;
    Some(if lower == upper {
        upper
    } else {
        0.5 * (lower + upper)
    })
}

/// The two middle values of `values` in sorted order (the same one twice for an odd number;
/// `None` for none), found by selection: linear in their number. The values are left
/// reordered.
pub fn middle_two(values: &mut [f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let (below, &mut upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return Some((upper, upper));
    }
    // The lower middle value is the largest of those below the upper one.
    let lower = below
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(upper);
    Some((lower, upper))
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

fn percentile_sorted(sorted: &[i64], p: f64) -> f64 {
    percentile_by(sorted.len(), p, |i| sorted[i] as f64)
}

/// Linear interpolation between the closest ranks of `n` sorted values read through `at`.
fn percentile_by(n: usize, p: f64, at: impl Fn(usize) -> f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let pos = (n - 1) as f64 * p / 100.0;
    let lo = pos.floor() as usize;
    let hi = (pos.ceil() as usize).min(n - 1);
    // numpy's `_lerp`: a + (b - a) * t, switching ends for t >= 0.5 to stay monotonic.
    lerp(at(lo), at(hi), pos - lo as f64)
}

fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_a_slice() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
    use proptest::prelude::*;

    #[test]
    fn matches_numpy_on_a_small_sample() {
        // numpy: np.percentile([1,2,3,4,10], [50, 90, 99]) = [3., 7.6, 9.76]
        // np.std(..., ddof=1) = 3.5355339059327378
        let s = Sample::new(vec![10, 2, 4, 1, 3]);
        assert_eq!(s.median(), 3.0);
        assert!((s.percentile(90.0) - 7.6).abs() < 1e-9);
        assert!((s.percentile(99.0) - 9.76).abs() < 1e-9);
        assert!((s.stddev() - 3.535_533_905_932_737_8).abs() < 1e-12);
        assert_eq!(s.total(), 20);
        assert_eq!(s.mean(), 4.0);
        assert!((s.cv() - 3.535_533_905_932_737_8 / 4.0).abs() < 1e-12);
        // MAD: |x - 3| = [2, 1, 0, 1, 7] -> median 1
        assert_eq!(s.mad(), 1.0);
    }

    #[test]
    fn even_count_median_is_the_midpoint() {
        let s = Sample::new(vec![1, 2, 3, 100]);
        assert_eq!(s.median(), 2.5);
    }

    #[test]
    fn one_value_has_zero_spread() {
        let s = Sample::new(vec![42]);
        let st = s.iteration_stats().unwrap();
        assert_eq!(st.stddev_ns, 0.0);
        assert_eq!(st.cv, 0.0);
        assert_eq!(st.p90_ns, 42.0);
        assert_eq!(st.median_ns, 42.0);
    }

    #[test]
    fn empty_sample_has_no_iteration_stats() {
        assert!(Sample::new(vec![]).iteration_stats().is_none());
    }

    proptest! {
        /// Selection finds what sorting does, to the bit.
        #[test]
        fn the_median_by_selection_is_the_sorted_one(values in prop::collection::vec(-1.0e12f64..1.0e12, 1..300)) {
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let by_sorting = percentile_by(sorted.len(), 50.0, |i| sorted[i]);
            let mut selected = values.clone();
            prop_assert_eq!(median_in_place(&mut selected).to_bits(), by_sorting.to_bits());
            let n = sorted.len();
            prop_assert_eq!(middle_two(&mut values.clone()), Some((sorted[(n - 1) / 2], sorted[n / 2])));
            let whole: Vec<i64> = values.iter().map(|&v| v as i64).collect();
            let mut as_f64: Vec<f64> = whole.iter().map(|&v| v as f64).collect();
            prop_assert_eq!(median_in_place(&mut as_f64).to_bits(), Sample::new(whole).median().to_bits());
        }

        #[test]
        fn order_does_not_matter(mut values in prop::collection::vec(0i64..1_000_000_000, 1..200), seed in any::<u64>()) {
            let a = Sample::new(values.clone()).iteration_stats().unwrap();
            // A deterministic shuffle driven by the seed.
            let mut state = seed | 1;
            for i in (1..values.len()).rev() {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                values.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let b = Sample::new(values).iteration_stats().unwrap();
            prop_assert_eq!(a, b);
        }

        #[test]
        fn order_statistics_are_ordered(values in prop::collection::vec(0i64..1_000_000_000, 1..200)) {
            let s = Sample::new(values).iteration_stats().unwrap();
            prop_assert!(s.minimum_ns as f64 <= s.median_ns);
            prop_assert!(s.median_ns <= s.p90_ns);
            prop_assert!(s.p90_ns <= s.p99_ns);
            prop_assert!(s.p99_ns <= s.maximum_ns as f64);
            prop_assert!(s.minimum_ns as f64 <= s.mean_ns + 1e-6 && s.mean_ns <= s.maximum_ns as f64 + 1e-6);
            prop_assert!(s.stddev_ns >= 0.0);
        }
    }
}
