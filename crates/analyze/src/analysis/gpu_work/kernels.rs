//! `gpu_work.kernels`: `cuda_gpu_kern_sum`'s rows merged by kernel name (nsys 2022.4 splits a
//! name by grid and block), with the share of all kernel time and the base name.

use rustc_hash::FxHashMap;

use super::share;
use crate::reports::{Interner, KernelSummaryRow, NameId};
use nsys_gate_core::artifact::{kernel_base_name, KernelStats};

/// `cuda_gpu_kern_sum`'s rows as `gpu_work.kernels`: merged by name, largest total first.
pub fn kernel_table(rows: &[KernelSummaryRow], names: &Interner) -> Vec<KernelStats> {
    let mut by_name: FxHashMap<NameId, Vec<&KernelSummaryRow>> = FxHashMap::default();
    for r in rows {
        by_name.entry(r.name).or_default().push(r);
    }
    let all: i128 = rows.iter().map(|r| i128::from(r.total_ns)).sum();
    let mut out: Vec<KernelStats> = by_name
        .into_iter()
        .map(|(name, parts)| {
            let instances: u64 = parts.iter().map(|r| r.instances).sum();
            let total: i64 = parts.iter().map(|r| r.total_ns).sum();
            let (mean, median, stddev) = match parts.as_slice() {
                [one] => (one.mean_ns, Some(one.median_ns), one.stddev_ns),
                _ => {
                    let mean = if instances > 0 {
                        total as f64 / instances as f64
                    } else {
                        0.0
                    };
                    (mean, None, pooled_stddev(&parts, mean))
                }
            };
            KernelStats {
                name: names.resolve(name).to_owned(),
                base_name: Some(kernel_base_name(names.resolve(name)).to_owned()),
                instances,
                total_ns: total,
                mean_ns: mean,
                median_ns: median,
                minimum_ns: parts.iter().map(|r| r.minimum_ns).min().unwrap_or(0),
                maximum_ns: parts.iter().map(|r| r.maximum_ns).max().unwrap_or(0),
                stddev_ns: stddev,
                share: share(i128::from(total), all),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The sample standard deviation of rows merged into one (n - 1), from their own.
fn pooled_stddev(parts: &[&KernelSummaryRow], mean: f64) -> Option<f64> {
    let n: u64 = parts.iter().map(|r| r.instances).sum();
    if n < 2 {
        return Some(0.0);
    }
    let mut sum = 0.0;
    for r in parts {
        let k = r.instances as f64;
        let s = r.stddev_ns?;
        let m = r.total_ns as f64 / k;
        sum += (k - 1.0) * s * s + k * (m - mean) * (m - mean);
    }
    Some((sum / (n as f64 - 1.0)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        name: NameId,
        total: i64,
        instances: u64,
        min: i64,
        max: i64,
        sd: f64,
    ) -> KernelSummaryRow {
        KernelSummaryRow {
            name,
            total_ns: total,
            instances,
            mean_ns: total as f64 / instances as f64,
            median_ns: total as f64 / instances as f64,
            minimum_ns: min,
            maximum_ns: max,
            stddev_ns: Some(sd),
        }
    }

    #[test]
    fn rows_of_one_kernel_name_merge_without_a_median() {
        let mut names = Interner::new();
        let a = names.intern_bytes(b"a<int, 2>(int)").unwrap();
        let b = names.intern_bytes(b"b").unwrap();
        // `a` ran as 10, 10 (one grid) and 20, 20 (another): mean 15, sample stddev 5.77.
        let rows = [
            row(a, 20, 2, 10, 10, 0.0),
            row(a, 40, 2, 20, 20, 0.0),
            row(b, 40, 1, 40, 40, 0.0),
        ];
        let table = kernel_table(&rows, &names);
        assert_eq!(table.len(), 2);
        let k = &table[0];
        assert_eq!(
            (k.name.as_str(), k.instances, k.total_ns),
            ("a<int, 2>(int)", 4, 60)
        );
        assert_eq!(k.base_name.as_deref(), Some("a"));
        assert_eq!((k.minimum_ns, k.maximum_ns, k.median_ns), (10, 20, None));
        assert!((k.stddev_ns.unwrap() - (100.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert!((k.share - 0.6).abs() < 1e-12);
        assert_eq!(table[1].median_ns, Some(40.0));
    }
}
