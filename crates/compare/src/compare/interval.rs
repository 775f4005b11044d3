//! The change between two sets of per-iteration durations, with a 95 % interval: the
//! Hodges-Lehmann estimate of the shift and its Mann-Whitney (Wilcoxon rank-sum) confidence
//! interval, computed on the logarithms of the durations so that the shift is a ratio.
//!
//! Why this and not a bootstrap: it is deterministic without a seed, distribution-free, exact
//! for small samples (the exact null distribution of the Mann-Whitney U for up to
//! [`EXACT_MAX_PAIRS`] pairs, its normal approximation above), and it never pretends to more
//! than the samples hold: with too few iterations for a 95 % interval (fewer than 4 a side,
//! for instance) it gives none instead of a falsely narrow one.
//!
//! - The pairwise log-ratios are `ln(head_j) - ln(base_i)` for every base `i` and head `j`.
//! - The estimate is their median; the change is `exp(median) - 1` (head 1.2x base: +20 %).
//! - The 95 % interval is `[D(k), D(nm+1-k)]` of the sorted log-ratios, `k` the largest rank
//!   with `P(U <= k-1) <= 2.5 %` under the null hypothesis (Hollander & Wolfe, section 4.3).
//!   Ties (equal nanosecond durations) are rare and treated as distinct: the interval is then
//!   approximately, not exactly, 95 %.
//!
//! The `n * m` log-ratios are never held: an order statistic is found by bisection on its value,
//! counting the log-ratios below a value in one pass over the two sorted samples.

/// The exact null distribution of U is computed up to this many pairs (`n * m`); the normal
/// approximation, which is very close by then, above.
pub const EXACT_MAX_PAIRS: usize = 4096;

/// The confidence level of every interval.
pub const WITHIN_PAIR_CONFIDENCE: f64 = 0.95;

/// `z` of the two-sided 95 % level.
const Z_95: f64 = 1.959_963_984_540_054;

/// The change of head against base, as ratios (head / base).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Hodges-Lehmann estimate of head / base.
    pub ratio: f64,
    /// The 95 % interval of head / base; `None` when the samples are too few for one.
    pub interval: Option<(f64, f64)>,
}

/// The shift of `head` against `base` (durations in nanoseconds); `None` when either is empty.
/// A duration of zero or less counts as 1 ns (a logarithm needs a positive value).
pub fn shift(base: &[f64], head: &[f64]) -> Option<Shift> {
    if base.is_empty() || head.is_empty() {
        return None;
    }
    let logs = |v: &[f64]| {
        let mut out: Vec<f64> = v.iter().map(|x| x.max(1.0).ln()).collect();
        out.sort_by(f64::total_cmp);
        out
    };
    let (x, y) = (logs(base), logs(head));
    let pairs = x.len() * y.len();
    let median = if pairs % 2 == 1 {
        kth(&x, &y, pairs / 2 + 1)
    } else {
        0.5 * (kth(&x, &y, pairs / 2) + kth(&x, &y, pairs / 2 + 1))
    };
    let k = lower_rank(x.len(), y.len());
    let interval = (k >= 1).then(|| (kth(&x, &y, k).exp(), kth(&x, &y, pairs + 1 - k).exp()));
    Some(Shift {
        ratio: median.exp(),
        interval,
    })
}

/// How many of the pairwise differences `y_j - x_i` are at most `t` (both sorted ascending).
fn count_at_most(x: &[f64], y: &[f64], t: f64) -> usize {
    // For rising y_j the bound y_j - t rises: the first x_i >= it only moves right.
    let mut first = 0;
    let mut count = 0;
    for &yj in y {
        let bound = yj - t;
        while first < x.len() && x[first] < bound {
            first += 1;
        }
        count += x.len() - first;
    }
    count
}

/// The `k`-th smallest (from 1) of the differences `y_j - x_i`, by bisection on its value.
fn kth(x: &[f64], y: &[f64], k: usize) -> f64 {
    let mut lo = y[0] - x[x.len() - 1];
    let mut hi = y[y.len() - 1] - x[0];
    if count_at_most(x, y, lo) >= k {
        return lo;
    }
    // Invariant: fewer than k at most `lo`, at least k at most `hi`.
    for _ in 0..200 {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if count_at_most(x, y, mid) >= k {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The largest `k` with `P(U <= k - 1) <= 2.5 %` for samples of `n` and `m` under the null
/// hypothesis; 0 when there is none (too few values for a 95 % interval).
pub fn lower_rank(n: usize, m: usize) -> usize {
    let alpha_half = (1.0 - WITHIN_PAIR_CONFIDENCE) / 2.0;
    if n * m <= EXACT_MAX_PAIRS {
        let dist = u_distribution(n, m);
        let mut cumulative = 0.0;
        let mut k = 0;
        // P(U <= k) for k = 0, 1, …: the rank is one past the last k within alpha / 2.
        for (u, p) in dist.iter().enumerate() {
            cumulative += p;
            // A hair of tolerance: the exact sums are rationals rounded to f64.
            if cumulative <= alpha_half * (1.0 + 1e-12) {
                k = u + 1;
            } else {
                break;
            }
        }
        k
    } else {
        let (n, m) = (n as f64, m as f64);
        let sigma = (n * m * (n + m + 1.0) / 12.0).sqrt();
        // P(U <= k - 1) ~ Phi((k - 1 + 0.5 - nm/2) / sigma) <= alpha / 2.
        let k = (n * m / 2.0 + 0.5 - Z_95 * sigma).floor();
        if k < 1.0 {
            0
        } else {
            k as usize
        }
    }
}

/// `P(U = u)` for `u = 0 ..= n*m` under the null hypothesis (every ordering of the `n + m`
/// values equally likely), by the recursion `P(a, b; u) = a/(a+b) P(a-1, b; u-b) +
/// b/(a+b) P(a, b-1; u)` (U counts the pairs with the head value above the base value).
fn u_distribution(n: usize, m: usize) -> Vec<f64> {
    // prev[b] = distribution for (a - 1, b); cur[b] for (a, b).
    let mut prev: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for a in 1..=n {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        cur.push(vec![1.0]);
        for b in 1..=m {
            let mut d = vec![0.0; a * b + 1];
            let (wa, wb) = (a as f64 / (a + b) as f64, b as f64 / (a + b) as f64);
            // The largest of the a + b values is a base value (with probability a/(a+b)): it
            // is above all b head values, and adds b to U.
            for (u, p) in prev[b].iter().enumerate() {
                d[u + b] += wa * p;
            }
            // …or a head value: it adds nothing.
            for (u, p) in cur[b - 1].iter().enumerate() {
                d[u] += wb * p;
            }
            cur.push(d);
        }
        prev = cur;
    }
    prev.pop().expect("m + 1 entries")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_ranks_match_published_tables() {
        // Two-sided 95 %: the lower critical value of U (Mann-Whitney tables) + 1.
        assert_eq!(lower_rank(3, 3), 0, "1/20 per tail is too much");
        assert_eq!(lower_rank(4, 4), 1, "P(U=0) = 1/70 <= 0.025");
        assert_eq!(lower_rank(5, 5), 3, "critical U 2");
        assert_eq!(lower_rank(8, 8), 14, "critical U 13");
        assert_eq!(lower_rank(10, 10), 24, "critical U 23");
        assert_eq!(lower_rank(20, 20), 128, "critical U 127");
        // The normal approximation continues the exact values closely.
        let exact = lower_rank(64, 64);
        let normal = {
            let (n, m) = (64.0f64, 64.0f64);
            let sigma = (n * m * (n + m + 1.0) / 12.0).sqrt();
            (n * m / 2.0 + 0.5 - Z_95 * sigma).floor() as usize
        };
        assert!(exact.abs_diff(normal) <= 2, "{exact} vs {normal}");
    }

    #[test]
    fn the_distribution_sums_to_one_and_is_symmetric() {
        let d = u_distribution(4, 6);
        assert_eq!(d.len(), 25);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for u in 0..d.len() {
            assert!((d[u] - d[d.len() - 1 - u]).abs() < 1e-12);
        }
        // 1 / C(10, 4)
        assert!((d[0] - 1.0 / 210.0).abs() < 1e-15);
    }

    #[test]
    fn order_statistics_match_the_sorted_differences() {
        let x = [1.0, 2.5, 3.0, 7.0];
        let y = [0.5, 2.0, 4.0];
        let mut all: Vec<f64> = y
            .iter()
            .flat_map(|b| x.iter().map(move |a| b - a))
            .collect();
        all.sort_by(f64::total_cmp);
        let (mut xs, mut ys) = (x.to_vec(), y.to_vec());
        xs.sort_by(f64::total_cmp);
        ys.sort_by(f64::total_cmp);
        for (k, want) in all.iter().enumerate() {
            let got = kth(&xs, &ys, k + 1);
            assert!((got - want).abs() < 1e-9, "k={} {got} {want}", k + 1);
        }
    }

    #[test]
    fn too_few_values_give_no_interval() {
        let s = shift(&[100.0, 101.0, 102.0], &[120.0, 121.0, 122.0]).unwrap();
        assert_eq!(s.interval, None);
        assert!((s.ratio - 1.2).abs() < 0.01);
        assert_eq!(shift(&[], &[1.0]), None);
    }

    fn samples() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(1_000_000.0f64..5_000_000.0, 4..40)
    }

    proptest! {
        #[test]
        fn identical_samples_contain_no_change(base in samples()) {
            let s = shift(&base, &base).unwrap();
            prop_assert!((s.ratio - 1.0).abs() < 1e-9, "{}", s.ratio);
            let (lo, hi) = s.interval.expect("4 or more values a side");
            prop_assert!(lo <= 1.0 && 1.0 <= hi, "{lo} {hi}");
        }

        #[test]
        fn a_shift_by_k_percent_is_centred_on_k(base in samples(), k in -50.0f64..100.0) {
            let head: Vec<f64> = base.iter().map(|v| v * (1.0 + k / 100.0)).collect();
            let s = shift(&base, &head).unwrap();
            prop_assert!(((s.ratio - 1.0) * 100.0 - k).abs() < 1e-6, "{} vs {k}", s.ratio);
            let (lo, hi) = s.interval.unwrap();
            prop_assert!(lo <= s.ratio && s.ratio <= hi, "{lo} {} {hi}", s.ratio);
        }

        #[test]
        fn the_interval_holds_the_estimate_and_swapping_inverts_it(
            base in samples(),
            head in samples(),
        ) {
            let s = shift(&base, &head).unwrap();
            let (lo, hi) = s.interval.unwrap();
            prop_assert!(lo <= s.ratio && s.ratio <= hi);
            let back = shift(&head, &base).unwrap();
            prop_assert!((back.ratio * s.ratio - 1.0).abs() < 1e-9);
            let (blo, bhi) = back.interval.unwrap();
            prop_assert!((blo * hi - 1.0).abs() < 1e-9 && (bhi * lo - 1.0).abs() < 1e-9);
        }

        #[test]
        fn large_samples_use_the_normal_approximation_sensibly(
            base in prop::collection::vec(1_000_000.0f64..1_100_000.0, 70..120),
            k in 5.0f64..40.0,
        ) {
            // Separated samples: base within 10 %, head k % above all of base's range.
            let head: Vec<f64> = base.iter().map(|v| v * (1.0 + k / 100.0)).collect();
            let s = shift(&base, &head).unwrap();
            let (lo, _) = s.interval.unwrap();
            prop_assert!(lo > 1.0 || k < 10.0, "k {k}: low {lo}");
        }
    }
}
