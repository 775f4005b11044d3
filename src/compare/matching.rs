//! Which baseline run goes with which current run: the same profile name, and among several
//! baseline runs of that profile, the one with the same target (else the first, in path
//! order). A target that differs is then a condition the comparison names.

use super::Side;

/// Indexes into the current runs (`heads`) and the baseline runs (`bases`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Matched {
    /// (head, base) pairs, in the current runs' order.
    pub pairs: Vec<(usize, usize)>,
    /// Current runs with no baseline.
    pub heads: Vec<usize>,
    /// Baseline runs no current run took.
    pub bases: Vec<usize>,
}

pub fn pair(heads: &[Side<'_>], bases: &[Side<'_>]) -> Matched {
    let mut taken = vec![false; bases.len()];
    let mut matched = Matched::default();
    for (h, head) in heads.iter().enumerate() {
        let run = &head.analysis.run;
        let same_profile =
            |b: &usize| !taken[*b] && bases[*b].analysis.run.profile_name == run.profile_name;
        let candidates: Vec<usize> = (0..bases.len()).filter(same_profile).collect();
        let chosen = candidates
            .iter()
            .find(|&&b| bases[b].analysis.run.target == run.target)
            .or(candidates.first())
            .copied();
        match chosen {
            Some(b) => {
                taken[b] = true;
                matched.pairs.push((h, b));
            }
            None => matched.heads.push(h),
        }
    }
    matched.bases = (0..bases.len()).filter(|&b| !taken[b]).collect();
    matched
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::fake::analysis;
    use serde_json::json;

    #[test]
    fn profile_first_then_target() {
        let a = analysis(&[1], &[], false);
        let mut other_target = a.clone();
        other_target.run.target = Some(json!({"name": "other"}));
        let mut other_profile = a.clone();
        other_profile.run.profile_name = "other".into();
        let side = |a| Side {
            analysis: a,
            path: "x",
        };
        let bases = [side(&other_target), side(&a), side(&other_profile)];
        let heads = [side(&a), side(&a), side(&a)];
        let m = pair(&heads, &bases);
        // The same target first, then the other one of the profile; the third has none.
        assert_eq!(m.pairs, vec![(0, 1), (1, 0)]);
        assert_eq!(m.heads, vec![2]);
        assert_eq!(m.bases, vec![2]);
    }
}
