//! The per-iteration chart and the sparklines: numbers only.
//!
//! One slow iteration (a first pass 15 times the others, loading weights or compiling) would
//! size the chart's axis for itself and flatten every other bar onto the floor. So the axis
//! stops above the slowest iteration that is not slow by the `slow_iterations` rule (over the
//! median + 5 x MAD of host inclusive time, MAD unscaled), with room above it; the iterations
//! above it are bars of their own colour cut at the axis's top, named in the caption with
//! their real value. The headline's sparkline starts at zero (a bar's height is the time).

use nsys_gate_core::stats::{median_and_mad, outlier_limit};

/// The sparkline's bars, lowest first.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// At most this many characters in a sparkline: longer series are cut into equal buckets,
/// each drawn by its largest value.
pub const SPARKLINE_WIDTH: usize = 64;

/// The threshold above which a value is an outlier: median + 5 x MAD (unscaled), the
/// `slow_iterations` rule's.
pub fn outlier_threshold(values: &[f64]) -> f64 {
    let (median, mad) = median_and_mad(values);
    outlier_limit(median, mad)
}

/// The top of the axis for `values`: the largest value that is not an outlier (all of them
/// when none is an outlier, or when every one is).
pub fn axis_top(values: &[f64]) -> f64 {
    let threshold = outlier_threshold(values);
    let kept = values
        .iter()
        .copied()
        .filter(|v| *v <= threshold)
        .fold(f64::NAN, f64::max);
    if kept.is_nan() {
        values.iter().copied().fold(0.0, f64::max)
    } else {
        kept
    }
}

/// A sparkline of `values` from `low` (the lowest bar) to `top` (the highest): values above
/// `top` are drawn as the highest bar. The caption gives both ends (the headline's starts at
/// zero).
pub fn sparkline(values: &[f64], low: f64, top: f64) -> String {
    if values.is_empty() {
        return String::new();
    }
    let buckets = values.len().div_ceil(SPARKLINE_WIDTH).max(1);
    values
        .chunks(buckets)
        .map(|chunk| {
            let v = chunk.iter().copied().fold(0.0, f64::max);
            let span = top - low;
            let level = if span <= 0.0 {
                BARS.len() - 1
            } else {
                (((v - low) / span) * (BARS.len() - 1) as f64)
                    .round()
                    .clamp(0.0, 7.0) as usize
            };
            BARS[level]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_slow_first_pass_does_not_size_the_axis() {
        // 64 passes: the first 152 ms, the others about 9.9 ms.
        let mut values = vec![152.0];
        values.extend((0..63).map(|i| 9.8 + f64::from(i % 3) * 0.1));
        let top = axis_top(&values);
        assert!((9.9..=10.0).contains(&top), "{top}");
        let line = sparkline(&values, 9.8, top);
        assert_eq!(line.chars().count(), 64);
        assert!(line.starts_with("█▁▅█"), "{line}");
    }

    #[test]
    fn steady_values_keep_their_maximum_and_equal_values_have_no_outlier() {
        assert_eq!(axis_top(&[1.0, 2.0, 3.0]), 3.0);
        assert_eq!(axis_top(&[5.0; 10]), 5.0);
        assert_eq!(axis_top(&[]), 0.0);
        assert_eq!(sparkline(&[0.0, 5.0, 10.0], 0.0, 10.0), "▁▅█");
        assert_eq!(sparkline(&[4.0, 4.0], 4.0, 4.0), "██");
        assert_eq!(sparkline(&[], 0.0, 1.0), "");
    }

    proptest! {
        /// The axis top is one of the values, at most their maximum; the sparkline has one
        /// character per value up to its width.
        #[test]
        fn the_top_is_a_value_and_the_line_fits(values in proptest::collection::vec(0.0f64..1e9, 1..300)) {
            let top = axis_top(&values);
            prop_assert!(values.contains(&top));
            prop_assert!(top <= values.iter().copied().fold(0.0, f64::max));
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let line = sparkline(&values, low, top);
            prop_assert_eq!(line.chars().count(), values.len().div_ceil(values.len().div_ceil(SPARKLINE_WIDTH)));
            prop_assert!(line.chars().count() <= SPARKLINE_WIDTH);
        }
    }
}
