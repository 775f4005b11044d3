//! Which base runs go with which current runs: the same key (profile, target, and leg: the
//! label, else the GPU names). Current runs of one key are repeats of the head, combined.
//!
//! A base run that records no leg (an analysis written before GPU work was recorded, or of a
//! run without CUDA data) still serves a head of the same profile and target when no base run
//! has the head's own leg: its conditions then decide whether it is used. A head that records
//! no leg takes the base runs of its profile and target when they are all of one leg.

use std::collections::BTreeSet;

use super::run_level::RunLevel;
use nsys_gate_core::artifact::comparison::RunKey;

/// Indexes into the current runs (`heads`) and the base runs (`bases`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Matched {
    /// (heads of one key, their base runs), in the order of each key's first current run;
    /// each list in its input order.
    pub groups: Vec<(Vec<usize>, Vec<usize>)>,
    /// Current runs with no base run of their key.
    pub heads: Vec<usize>,
    /// The newest (last) base run of each key no current run took.
    pub bases: Vec<usize>,
}

pub fn pair(heads: &[RunLevel], bases: &[RunLevel]) -> Matched {
    let mut matched = Matched::default();
    let mut keys: Vec<&RunKey> = Vec::new();
    for h in heads {
        if !keys.contains(&&h.key) {
            keys.push(&h.key);
        }
    }
    let mut taken = vec![false; bases.len()];
    for key in keys {
        let of_key: Vec<usize> = (0..heads.len()).filter(|&i| heads[i].key == *key).collect();
        let chosen = bases_for(key, bases);
        if chosen.is_empty() {
            matched.heads.extend(of_key);
            continue;
        }
        for &b in &chosen {
            taken[b] = true;
        }
        matched.groups.push((of_key, chosen));
    }
    let mut seen: Vec<&RunKey> = Vec::new();
    for b in (0..bases.len()).rev() {
        if !taken[b] && !seen.contains(&&bases[b].key) {
            seen.push(&bases[b].key);
            matched.bases.push(b);
        }
    }
    matched.bases.reverse();
    matched
}

/// The base runs of a head's key, in input order.
fn bases_for(key: &RunKey, bases: &[RunLevel]) -> Vec<usize> {
    let same_target =
        |b: &RunLevel| b.key.profile_name == key.profile_name && b.key.target == key.target;
    let exact: Vec<usize> = (0..bases.len()).filter(|&b| bases[b].key == *key).collect();
    if !exact.is_empty() {
        return exact;
    }
    let unknown_leg: Vec<usize> = (0..bases.len())
        .filter(|&b| same_target(&bases[b]) && bases[b].key.leg.is_none())
        .collect();
    if !unknown_leg.is_empty() || key.leg.is_some() {
        return unknown_leg;
    }
    let of_target: Vec<usize> = (0..bases.len())
        .filter(|&b| same_target(&bases[b]))
        .collect();
    let legs: BTreeSet<&Option<String>> = of_target.iter().map(|&b| &bases[b].key.leg).collect();
    if legs.len() == 1 {
        of_target
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::fake::analysis;
    use serde_json::json;

    fn run(profile: &str, target: &str, leg: Option<&str>) -> RunLevel {
        let mut a = analysis(&[1_000_000; 3], &[], false);
        a.run.profile_name = profile.into();
        a.run.target = Some(json!({ "name": target }));
        a.label = leg.map(str::to_owned);
        RunLevel::of(&a, "x")
    }

    #[test]
    fn runs_of_one_key_are_grouped_and_legs_kept_apart() {
        let bases = [
            run("p", "t", Some("A100")),
            run("p", "t", Some("H100")),
            run("p", "t", Some("A100")),
            run("q", "t", None),
            run("p", "other", None),
        ];
        let heads = [
            run("p", "t", Some("A100")),
            run("p", "t", Some("H100")),
            run("p", "t", Some("A100")),
            run("r", "t", None),
        ];
        let m = pair(&heads, &bases);
        assert_eq!(m.groups, vec![(vec![0, 2], vec![0, 2]), (vec![1], vec![1])]);
        assert_eq!(m.heads, vec![3]);
        assert_eq!(m.bases, vec![3, 4]);
    }

    #[test]
    fn a_base_run_without_a_leg_serves_a_head_with_one() {
        let bases = [run("p", "t", None), run("p", "t", None)];
        let heads = [run("p", "t", Some("A100"))];
        assert_eq!(pair(&heads, &bases).groups, vec![(vec![0], vec![0, 1])]);
        // A head without a leg takes the base runs of one leg, not of two.
        let one_leg = [run("p", "t", Some("A100"))];
        let heads = [run("p", "t", None)];
        assert_eq!(pair(&heads, &one_leg).groups, vec![(vec![0], vec![0])]);
        let two_legs = [run("p", "t", Some("A100")), run("p", "t", Some("H100"))];
        let m = pair(&heads, &two_legs);
        assert_eq!((m.groups.len(), m.heads.len(), m.bases.len()), (0, 1, 2));
    }
}
