//! A run's call-outs: what its timing and completeness warnings mean, in words, the few slow
//! iterations that raise several warnings said once.

use crate::escape::inline_shortened as esc;
use crate::format::{self, duration, duration_i, plural};
use crate::limit::Caps;
use nsys_gate_core::artifact::{Analysis, WarningCode};
use nsys_gate_core::stats::OUTLIER_MADS;

/// What the timing and completeness warnings mean for this run, in words; each with the
/// warning it explains (`None`: no warning says it, such as no iteration found).
pub(super) fn callouts(
    a: &Analysis,
    counted: u64,
    caps: &Caps,
) -> Vec<(Option<WarningCode>, String)> {
    let s = &a.iteration_summary;
    let mut out = Vec::new();
    if s.found == 0 {
        out.push((None, format!(
            "**Missing data:** no iteration was measured, so there are no statistics. Check that the program pushes ranges matching {}{}.",
            esc(&a.run.iteration_pattern, caps.name_chars),
            match &a.run.capture_range {
                Some(c) => format!(" inside the capture range {}", esc(c, caps.name_chars)),
                None => String::new(),
            }
        )));
    } else if let Some(w) = a.warning(WarningCode::MissingIterations) {
        let missing = w.iterations.as_deref().unwrap_or(&[]);
        out.push((Some(WarningCode::MissingIterations), format!(
            "**Missing data:** {} of {} expected iterations {} no complete measurement ({}); the statistics cover {}.",
            missing.len(),
            s.expected,
            if missing.len() == 1 { "has" } else { "have" },
            format::index_list(missing, 20),
            plural(counted as usize, "iteration", "iterations")
        )));
    } else if counted < s.expected {
        out.push((
            None,
            format!(
                "**Missing data:** the statistics cover {counted} of {} expected iterations.",
                s.expected
            ),
        ));
    }
    if let (Some(_), Some(first)) = (
        a.warning(WarningCode::FirstIterationSlow),
        &s.first_iteration,
    ) {
        out.push((Some(WarningCode::FirstIterationSlow), format!(
            "**First-iteration effect:** iteration {} took {} ({} the median host inclusive time). It is counted in the statistics; {}.",
            first.index,
            duration_i(first.host_inclusive_ns),
            format::ratio(first.ratio_to_median),
            warmup_advice(a)
        )));
    }
    if let (Some(w), Some(h)) = (a.warning(WarningCode::HighVariance), &s.host_inclusive) {
        let slow = a
            .warning(WarningCode::SlowIterations)
            .and_then(|w| w.iterations.as_deref())
            .map(|_| " The slow ones are named below.")
            .unwrap_or_default();
        out.push((Some(WarningCode::HighVariance), format!(
            "**Large variance:** the host inclusive time varies a lot between iterations (cv {}{}; from {} to {}): the mean and median hide that spread, see the per-iteration timings.{slow}",
            format::significant(h.cv, 3),
            w.threshold.map(|t| format!(", over {}", format::fixed(t, 2))).unwrap_or_default(),
            duration_i(h.minimum_ns),
            duration_i(h.maximum_ns),
        )));
    } else if let Some(w) = a.warning(WarningCode::SlowIterations) {
        if let Some(i) = w.iterations.as_deref() {
            out.push((Some(WarningCode::SlowIterations), format!(
                "**Slow iterations:** {} took much longer than the median (over median + {OUTLIER_MADS} × MAD); see the per-iteration timings.",
                format::iterations_named(i)
            )));
        }
    }
    out
}

/// The warnings a few slow iterations raise together, said once.
pub(super) struct SlowTogether {
    /// The codes, in the order warnings are listed (by code).
    pub(super) codes: Vec<WarningCode>,
    pub(super) text: String,
}

/// When `slow_iterations` names only iterations that `first_iteration_slow` names too (or
/// stands alone), and `high_variance` comes from them (the other iterations' cv is under its
/// limit): one explanation for the (up to) three warnings, naming each iteration's time, the
/// slow limit as such, and the cv with and without them.
pub(super) fn one_slow_iteration(a: &Analysis) -> Option<SlowTogether> {
    let slow = a.warning(WarningCode::SlowIterations)?;
    let indexes = slow.iterations.as_deref().unwrap_or(&[]);
    let first = a
        .warning(WarningCode::FirstIterationSlow)
        .and(a.iteration_summary.first_iteration.as_ref());
    if indexes.is_empty() || indexes.len() > 3 {
        return None;
    }
    if first.is_some_and(|f| indexes != [f.index]) {
        return None;
    }
    let times: Vec<(u64, i64)> = a
        .counted_iterations()
        .filter(|i| indexes.contains(&i.index))
        .map(|i| (i.index, i.host.inclusive_ns))
        .collect();
    let mut codes = Vec::new();
    if first.is_some() {
        codes.push(WarningCode::FirstIterationSlow);
    }
    // The analysis says whether the slow ones alone make the variance (`cv_without_slow`).
    let variance = a.warning(WarningCode::HighVariance);
    let others_cv = variance.and_then(|v| v.cv_without_slow);
    match (variance, others_cv) {
        (Some(_), Some(_)) => codes.push(WarningCode::HighVariance),
        (Some(_), None) => return None,
        (None, _) => {}
    }
    codes.push(WarningCode::SlowIterations);
    let named: Vec<String> = times
        .iter()
        .map(|(i, ns)| {
            format!(
                "{} took {}",
                format::iterations_named(&[*i]),
                duration_i(*ns)
            )
        })
        .collect();
    let median = a
        .iteration_summary
        .host_inclusive
        .as_ref()
        .map(|h| h.median_ns);
    let mut text = format!(
        "**{}:** {}",
        if times.len() == 1 {
            "One slow iteration"
        } else {
            "A few slow iterations"
        },
        named.join(", ")
    );
    if let (Some(f), Some(m)) = (first, median) {
        text.push_str(&format!(
            ", {} the median ({})",
            format::ratio(f.ratio_to_median),
            duration(m)
        ));
    }
    if let Some(limit) = slow.threshold_ns {
        text.push_str(&format!(
            "; the slow limit is {} (the median + {OUTLIER_MADS} × MAD of host inclusive time)",
            duration(limit)
        ));
    }
    text.push('.');
    if let (Some(others_cv), Some(h)) = (others_cv, &a.iteration_summary.host_inclusive) {
        text.push_str(&format!(
            " {} the host time vary (cv {}); the other {} iterations: cv {}.",
            if times.len() == 1 {
                "It alone makes"
            } else {
                "They alone make"
            },
            format::significant(h.cv, 3),
            a.counted_iterations().count() - times.len(),
            format::significant(others_cv, 3)
        ));
    }
    text.push_str(&format!(
        " {} counted in the statistics{}.",
        if times.len() == 1 {
            "It is"
        } else {
            "They are"
        },
        match first {
            Some(_) => format!("; {}", warmup_advice(a)),
            None => "; see the per-iteration timings".to_owned(),
        }
    ));
    Some(SlowTogether { codes, text })
}

/// What a slow first iteration says of the warm-up (`first_iteration_slow`'s
/// `warmup_passes`): that the run had none (consider one), or that its passes did not absorb
/// the start-up cost; the per-iteration timings when the analysis does not know.
fn warmup_advice(a: &Analysis) -> String {
    let passes = a
        .warning(WarningCode::FirstIterationSlow)
        .and_then(|w| w.warmup_passes);
    match passes {
        Some(0) => "the run had no warm-up pass: consider one".to_owned(),
        Some(n) => format!(
            "{} before it did not absorb the start-up cost",
            plural(n as usize, "warm-up pass", "warm-up passes")
        ),
        None => "see the per-iteration timings".to_owned(),
    }
}
