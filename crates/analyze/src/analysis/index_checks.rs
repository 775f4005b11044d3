//! The measured indexes against `workload.iterations`.
//!
//! Owns the warnings `missing_iterations` (an index in `0 .. expected-1` has no complete
//! measured iteration; incomplete passes count as missing and are named),
//! `unexpected_iterations` (indexes at or beyond the expected count) and
//! `duplicate_iterations` (an index measured more than once).

use std::collections::BTreeSet;

use super::iterations::Measured;
use super::wording::{describe_expected, list_indexes, list_named_indexes, MAX_LISTED};
use nsys_gate_core::artifact::{Warning, WarningCode};

/// The iterations' index checks: missing, unexpected and duplicate indexes.
pub(super) fn warnings(iterations: &[Measured], expected: u64) -> impl Iterator<Item = Warning> {
    missing_warning(iterations, expected)
        .into_iter()
        .chain(unexpected_warning(iterations, expected))
        .chain(duplicate_warning(iterations))
}

/// `missing_iterations`. `iterations` are in index order.
pub(super) fn missing_warning(iterations: &[Measured], expected: u64) -> Option<Warning> {
    let complete_indexes: BTreeSet<u64> = iterations
        .iter()
        .filter(|m| m.complete)
        .map(|m| m.index)
        .collect();
    let missing_count = expected.saturating_sub(
        complete_indexes
            .iter()
            .take_while(|&&i| i < expected)
            .count() as u64,
    );
    if missing_count == 0 {
        return None;
    }
    let missing: Vec<u64> = (0..expected)
        .filter(|i| !complete_indexes.contains(i))
        .take(MAX_LISTED)
        .collect();
    let incomplete: Vec<u64> = iterations
        .iter()
        .filter(|m| !m.complete && m.index < expected)
        .map(|m| m.index)
        .collect();
    let mut message = format!(
        "expected {}, missing {}",
        describe_expected(expected),
        list_indexes(&missing, missing_count)
    );
    if !incomplete.is_empty() {
        message.push_str(&format!(
            " (incomplete: {})",
            list_indexes(&incomplete, incomplete.len() as u64)
        ));
    }
    Some(
        Warning::new(WarningCode::MissingIterations, message)
            .with_iterations(missing)
            .with_count(missing_count),
    )
}

/// `unexpected_iterations`. `iterations` are in index order.
pub(super) fn unexpected_warning(iterations: &[Measured], expected: u64) -> Option<Warning> {
    let mut unexpected: Vec<u64> = iterations
        .iter()
        .filter(|m| m.index >= expected)
        .map(|m| m.index)
        .collect();
    unexpected.dedup();
    if unexpected.is_empty() {
        return None;
    }
    Some(
        Warning::new(
            WarningCode::UnexpectedIterations,
            format!(
                "found {} beyond the expected {}",
                list_named_indexes(&unexpected),
                describe_expected(expected)
            ),
        )
        .with_count(unexpected.len() as u64)
        .with_iterations(unexpected),
    )
}

/// `duplicate_iterations`. `iterations` are in index order.
pub(super) fn duplicate_warning(iterations: &[Measured]) -> Option<Warning> {
    let mut duplicated: Vec<u64> = iterations
        .iter()
        .filter(|m| m.duplicate)
        .map(|m| m.index)
        .collect();
    duplicated.dedup();
    if duplicated.is_empty() {
        return None;
    }
    Some(
        Warning::new(
            WarningCode::DuplicateIterations,
            format!(
                "{} seen more than once; later passes are left out of the statistics",
                list_named_indexes(&duplicated)
            ),
        )
        .with_count(duplicated.len() as u64)
        .with_iterations(duplicated),
    )
}
