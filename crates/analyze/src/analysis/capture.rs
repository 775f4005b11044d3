//! The capture range: a top-level range named as the manifest's `capture_range`, or
//! `DOMAIN:capture_range`.
//!
//! Owns the warnings `capture_range_missing` (none found: iterations are then read as with
//! no capture range) and `capture_range_multiple` (more than one: the iterations of each
//! count). `capture_range_without_gpu_work` needs the projection and is in `gpu`.

use super::tree::Tree;
use crate::reports::{Interner, PushPopRow};
use nsys_gate_core::artifact::{Warning, WarningCode};

/// The capture ranges by start time (then row), and the warning about how many there are.
/// With no `capture_range` in the manifest: none, and no warning.
pub(super) fn find(
    tree: &Tree,
    rows: &[PushPopRow],
    names: &Interner,
    capture_range: Option<&str>,
) -> (Vec<u32>, Option<Warning>) {
    let Some(cap) = capture_range else {
        return (Vec::new(), None);
    };
    let mut captures: Vec<u32> = tree
        .roots()
        .filter(|&i| is_capture_name(names.resolve(rows[i as usize].name), cap))
        .collect();
    captures.sort_by_key(|&i| (rows[i as usize].start_ns, i));
    let warning = match captures.len() {
        0 => Some(Warning::new(
            WarningCode::CaptureRangeMissing,
            format!(
                "no top-level range named `{cap}` in the push/pop report; iterations were read from the whole trace"
            ),
        )),
        1 => None,
        n => Some(
            Warning::new(
                WarningCode::CaptureRangeMultiple,
                format!("{n} top-level ranges named `{cap}`; the iterations of each are counted"),
            )
            .with_count(n as u64),
        ),
    };
    (captures, warning)
}

pub(super) fn is_capture_name(name: &str, capture: &str) -> bool {
    name == capture
        || name
            .split_once(':')
            .is_some_and(|(_, rest)| rest == capture)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_names_may_carry_a_domain() {
        assert!(is_capture_name("profile-target", "profile-target"));
        assert!(is_capture_name("harness:profile-target", "profile-target"));
        assert!(!is_capture_name("profile-target-2", "profile-target"));
    }
}
