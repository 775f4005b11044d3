//! How warning messages name counts and iteration indexes.
//!
//! Owns the wording rules shared by the warnings: how many indexes a warning lists, and how a
//! message writes a list of them (`1, 2, 5-9`: runs of four or more collapse, at most
//! [`MESSAGE_ENTRIES`] entries, then `and N more`).

/// At most this many indexes are listed in a warning; `count` has the full number.
pub(super) const MAX_LISTED: usize = 10_000;

/// At most this many entries (single indexes or runs) are written into a message; the
/// warning's `iterations` and `count` carry the rest.
const MESSAGE_ENTRIES: usize = 20;

/// `one` for 1, else `many`: the noun of a count (the count itself is the caller's).
pub(super) fn noun_for<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

pub(super) fn describe_expected(expected: u64) -> String {
    match expected {
        0 => "no iterations".to_owned(),
        1 => "iteration 0".to_owned(),
        n => format!("iterations 0-{}", n - 1),
    }
}

pub(super) fn list_named_indexes(indexes: &[u64]) -> String {
    format!(
        "{} {}",
        noun_for(indexes.len() as u64, "iteration", "iterations"),
        list_indexes(indexes, indexes.len() as u64)
    )
}

/// `1, 2, 5-9` (runs of four or more collapse), and how many more when the list was cut.
pub(super) fn list_indexes(indexes: &[u64], total: u64) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut shown = 0u64;
    let mut i = 0;
    while i < indexes.len() && parts.len() < MESSAGE_ENTRIES {
        let mut j = i;
        while j + 1 < indexes.len() && indexes[j + 1] == indexes[j] + 1 {
            j += 1;
        }
        if j - i >= 3 {
            parts.push(format!("{}-{}", indexes[i], indexes[j]));
            shown += (j - i + 1) as u64;
        } else {
            for index in indexes[i..=j].iter().take(MESSAGE_ENTRIES - parts.len()) {
                parts.push(index.to_string());
                shown += 1;
            }
        }
        i = j + 1;
    }
    let mut out = parts.join(", ");
    if total > shown {
        out.push_str(&format!(" and {} more", total - shown));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_collapse_long_runs_only() {
        assert_eq!(list_indexes(&[17, 18, 19], 3), "17, 18, 19");
        assert_eq!(list_indexes(&[1, 3, 4, 5, 6, 9], 6), "1, 3-6, 9");
        assert_eq!(list_indexes(&[1, 2], 5), "1, 2 and 3 more");
        let many: Vec<u64> = (0..100).map(|i| i * 2).collect();
        let text = list_indexes(&many, 100);
        assert!(text.starts_with("0, 2, 4,"), "{text}");
        assert!(text.ends_with("38 and 80 more"), "{text}");
    }
}
