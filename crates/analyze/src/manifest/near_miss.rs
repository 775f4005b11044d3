//! Spotting unknown keys that are probably misspellings of known ones.
//!
//! Unknown keys are kept (the harness may add keys this tool does not know), so a misspelled
//! `iteration_patern:` would otherwise silently fall back to the default pattern. A key is a near
//! miss of a known key when, compared without case and punctuation (`capture-range`,
//! `CaptureRange`), the two are equal, one or two edits apart (by length), or the unknown key is a
//! long enough prefix of the known one (`trace_sha` for `trace_sha256`).

/// The known key that `unknown` most likely misspells, if any.
pub fn suggest<'k>(unknown: &str, known: &[&'k str]) -> Option<&'k str> {
    let candidate = normalize(unknown);
    if candidate.is_empty() {
        return None;
    }
    known
        .iter()
        .filter_map(|&key| {
            let target = normalize(key);
            let score = if candidate == target {
                0
            } else {
                let distance = edit_distance(&candidate, &target);
                let allowed = if target.len() >= 8 { 2 } else { 1 };
                if distance <= allowed {
                    distance
                } else if is_long_prefix(&candidate, &target) {
                    allowed + 1
                } else {
                    return None;
                }
            };
            Some((score, key))
        })
        .min_by_key(|&(score, _)| score)
        .map(|(_, key)| key)
}

/// Lowercase letters and digits only: `Trace-SHA256` and `trace_sha256` compare equal.
fn normalize(key: &str) -> Vec<char> {
    key.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// `trace_sha` is a truncation of `trace_sha256`: at least five characters and two thirds of it.
fn is_long_prefix(candidate: &[char], target: &[char]) -> bool {
    candidate.len() >= 5 && candidate.len() * 3 >= target.len() * 2 && target.starts_with(candidate)
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions), so that
/// `iteraiton_pattern` is one edit from `iteration_pattern`. Keys are short; the two-row
/// dynamic program is plenty. Long unknown keys are not compared at all.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    if a.len().abs_diff(b.len()) > 2 || a.len() > 64 {
        return usize::MAX;
    }
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let mut best = (previous[j] + cost)
                .min(previous[j + 1] + 1)
                .min(current[j] + 1);
            if i > 0 && j > 0 && ca == b[j - 1] && a[i - 1] == cb {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        before = std::mem::replace(&mut previous, current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &[
        "capture_range",
        "iteration_pattern",
        "trace_sha256",
        "run_id",
        "device",
        "profile_name",
        "cuda",
        "target",
        "record_ids",
    ];

    #[test]
    fn misspellings_are_found() {
        for (unknown, expected) in [
            ("iteration_patern", "iteration_pattern"),
            ("iteraiton_pattern", "iteration_pattern"),
            ("iterationPattern", "iteration_pattern"),
            ("capture-range", "capture_range"),
            ("Capture Range", "capture_range"),
            ("trace_sha", "trace_sha256"),
            ("trace-sha-256", "trace_sha256"),
            ("run-id", "run_id"),
            ("runid", "run_id"),
            ("devcie", "device"),
            ("profilename", "profile_name"),
        ] {
            assert_eq!(suggest(unknown, KNOWN), Some(expected), "{unknown}");
        }
    }

    #[test]
    fn unrelated_keys_are_left_alone() {
        for unknown in [
            "notes",
            "hostname",
            "profile",
            "cuda_version",
            "device_name",
            "",
            "_",
            "git",
            "targets_list",
        ] {
            assert_eq!(suggest(unknown, KNOWN), None, "{unknown}");
        }
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        let d = |a: &str, b: &str| {
            edit_distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("abcd", "abdc"), 1);
        assert_eq!(d("kitten", "sitten"), 1);
        assert_eq!(d("abc", "abc"), 0);
        assert_eq!(d("", "ab"), 2);
    }
}
