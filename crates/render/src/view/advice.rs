//! The analysis's advice in words: `advice[]` of analysis.json, decided by the analysis, with
//! the numbers each item rests on. Nothing is decided here: an analysis.json written before
//! advice existed has none, and its report gives none.

use super::gpu_work::{kernel_mix_text, KernelNames, ADVICE_KERNELS};
use crate::escape::inline_shortened as esc;
use crate::format::{duration, duration_i, share_pct};
use crate::limit::Caps;
use nsys_gate_core::artifact::{Advice, AdviceKind, Analysis};

/// One sentence per item of `advice`, in its order.
pub(super) fn advice(a: &Analysis, caps: &Caps) -> Vec<String> {
    let names = KernelNames::of(a);
    let iterations = if a.steady_state.is_some() {
        "steady iterations'"
    } else {
        "counted iterations'"
    };
    a.advice
        .iter()
        .map(|item| sentence(item, &names, caps, iterations))
        .collect()
}

/// Which iterations the advice leaves out (`steady_state.left_out`), when it leaves some out.
pub(super) fn advice_note(a: &Analysis) -> Option<String> {
    let s = a.steady_state.as_ref().filter(|_| !a.advice.is_empty())?;
    Some(format!(
        "The advice leaves out the slow {}\u{a0}{} (see the warnings): it rests on the other {} counted iterations, the steady state, never on one slow pass.",
        if s.left_out.len() == 1 {
            "iteration"
        } else {
            "iterations"
        },
        crate::format::index_list(&s.left_out, 20),
        s.host_inclusive.count
    ))
}

/// The range as the tables show a group: its one exact name, or the group with how many names.
fn shown(item: &Advice, caps: &Caps) -> String {
    if item.names > 1 {
        esc(
            &format!("{} ({} names)", item.range, item.names),
            caps.name_chars,
        )
    } else {
        esc(&item.range, caps.name_chars)
    }
}

fn sentence(item: &Advice, names: &KernelNames<'_>, caps: &Caps, iterations: &str) -> String {
    let name = shown(item, caps);
    let host_share = share_pct(item.host_exclusive_share, 1.0);
    match item.kind {
        AdviceKind::NoGpuProjection => format!(
            "**{name}** has the largest host exclusive time ({} per instance on average). Without a GPU projection it cannot be told whether that is host work (preparation, orchestration, synchronization, I/O) or waiting for the GPU: record with CUDA tracing on (`nsys profile --trace cuda,nvtx`) to find out.",
            duration(item.host_exclusive_mean_ns)
        ),
        AdviceKind::HostBound => format!(
            "**{name}**: {} of host exclusive time per instance ({host_share} of the {iterations} host time), {}. That time is spent on the host: look at preparation, orchestration, synchronization and I/O in this range.",
            duration(item.host_exclusive_mean_ns),
            match (item.projected_ns, item.projected_to_host_inclusive) {
                (Some(projected), Some(ratio)) => format!(
                    "while the GPU work it launched spans only {} in all, {} of its {} host inclusive time (under {})",
                    duration_i(projected),
                    share_pct(ratio, 1.0),
                    duration_i(item.host_inclusive_ns),
                    share_pct(item.threshold_ratio, 1.0)
                ),
                _ => "and it launched no GPU work".to_owned(),
            }
        ),
        AdviceKind::GpuBound => {
            let kernels = item
                .kernels
                .as_ref()
                .filter(|k| !k.kernels.is_empty())
                .map(|k| {
                    let top = &k.kernels[..k.kernels.len().min(ADVICE_KERNELS)];
                    format!(
                        ": {} of its kernel time",
                        kernel_mix_text(top, None, names, caps.name_chars)
                    )
                })
                .unwrap_or_default();
            format!(
                "**{name}**: the GPU work it launched spans {} per instance (projected, {} GPU operations in all). Look at the kernels launched in this range{kernels}.",
                duration(item.projected_mean_ns.unwrap_or(0.0)),
                item.gpu_operation_count.unwrap_or(0)
            )
        }
    }
}
