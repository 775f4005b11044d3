//! Base names as nsys gives them: `cuda_gpu_kern_sum:base` sums the kernels over their base
//! names (the export's `shortName`), without saying which kernel has which; the sums tell.

use rustc_hash::{FxHashMap, FxHashSet};

use nsys_gate_core::artifact::{kernel_base_name, KernelStats};

/// Sets each kernel's `base_name` from nsys's summary over base names (`base`, rows merged by
/// name), where the sums pin it down; any other kernel keeps the base name derived from its
/// demangled name ([`kernel_base_name`]). Returns how many kernels took a name nsys printed
/// that the derivation did not give.
///
/// - The derived base name stands when nsys has a base of that name whose instances and total
///   are exactly those of the kernels it is derived for (on every trace seen, all of them).
/// - For the kernels left, a base name nsys printed and no derivation matched is taken when it
///   is the only such name found in the kernel's demangled name as a whole identifier, and the
///   kernels taking it add up exactly to its instances and total.
pub fn attach_base_names(kernels: &mut [KernelStats], base: &[KernelStats]) -> usize {
    let derived: Vec<String> = kernels
        .iter()
        .map(|k| kernel_base_name(&k.name).to_owned())
        .collect();
    let nsys: FxHashMap<&str, (u64, i64)> = base
        .iter()
        .map(|b| (b.name.as_str(), (b.instances, b.total_ns)))
        .collect();
    let mut sums: FxHashMap<&str, (u64, i64)> = FxHashMap::default();
    for (k, d) in kernels.iter().zip(&derived) {
        let e = sums.entry(d.as_str()).or_default();
        e.0 += k.instances;
        e.1 += k.total_ns;
    }
    let confirmed: FxHashSet<&str> = sums
        .iter()
        .filter(|(d, sum)| nsys.get(*d) == Some(*sum))
        .map(|(d, _)| *d)
        .collect();
    let open: Vec<&str> = nsys
        .keys()
        .copied()
        .filter(|b| !confirmed.contains(b))
        .collect();
    // The kernels left, each with the one open name found in it.
    let mut taking: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, (k, d)) in kernels.iter().zip(&derived).enumerate() {
        if confirmed.contains(d.as_str()) {
            continue;
        }
        let mut found = open.iter().filter(|b| has_identifier(&k.name, b));
        if let (Some(b), None) = (found.next(), found.next()) {
            taking.entry(b).or_default().push(i);
        }
    }
    let mut taken = 0;
    let mut names: Vec<Option<String>> = derived.into_iter().map(Some).collect();
    for (b, members) in taking {
        let sum = members.iter().fold((0u64, 0i64), |s, &i| {
            (s.0 + kernels[i].instances, s.1 + kernels[i].total_ns)
        });
        if nsys.get(b) == Some(&sum) {
            for i in members {
                names[i] = Some(b.to_owned());
                taken += 1;
            }
        }
    }
    for (k, name) in kernels.iter_mut().zip(names) {
        k.base_name = name;
    }
    taken
}

/// Whether `name` holds `word` as a whole identifier (not inside a longer one).
fn has_identifier(name: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    !word.is_empty()
        && name.match_indices(word).any(|(i, _)| {
            !name[..i].chars().next_back().is_some_and(ident)
                && !name[i + word.len()..].chars().next().is_some_and(ident)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(name: &str, instances: u64, total_ns: i64) -> KernelStats {
        KernelStats {
            name: name.to_owned(),
            base_name: None,
            instances,
            total_ns,
            mean_ns: 0.0,
            median_ns: None,
            minimum_ns: 0,
            maximum_ns: 0,
            stddev_ns: None,
            share: 0.0,
        }
    }

    fn bases(kernels: &[KernelStats]) -> Vec<&str> {
        kernels
            .iter()
            .map(|k| k.base_name.as_deref().unwrap())
            .collect()
    }

    #[test]
    fn nsys_base_names_are_matched_by_their_sums() {
        let mut kernels = vec![
            k("void gemm<float>(float*)", 2, 20),
            k("void gemm<half>(half*)", 3, 30),
            k("void ns::relu<float>(float*)", 1, 5),
            // nsys's base name is not what the derivation gives: found by its sums.
            k("void outer<ns::Inner<4>::kernel_impl>(int)", 4, 40),
            // Two names that nsys's summary cannot tell apart: derived.
            k("void a_b<x, y>(int)", 1, 1),
        ];
        let base = vec![
            k("gemm", 5, 50),
            k("relu", 1, 5),
            k("kernel_impl", 4, 40),
            k("something", 1, 1),
        ];
        assert_eq!(attach_base_names(&mut kernels, &base), 1);
        assert_eq!(
            bases(&kernels),
            ["gemm", "gemm", "relu", "kernel_impl", "a_b"]
        );

        // Sums that do not add up: the derived names.
        let mut kernels = vec![k("void outer<kernel_impl>(int)", 4, 41)];
        assert_eq!(attach_base_names(&mut kernels, &base), 0);
        assert_eq!(bases(&kernels), ["outer"]);
        // No summary at all: the derived names.
        attach_base_names(&mut kernels, &[]);
        assert_eq!(bases(&kernels), ["outer"]);
    }

    #[test]
    fn identifiers_are_whole_words() {
        assert!(has_identifier("void ns::gemm<int>(int)", "gemm"));
        assert!(!has_identifier("void ns::gemm_relu<int>(int)", "gemm"));
        assert!(!has_identifier("void sgemm(int)", "gemm"));
        assert!(has_identifier("gemm", "gemm"));
        assert!(!has_identifier("gemm", ""));
    }
}
