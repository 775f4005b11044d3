//! The GPU work of the capture, from NVIDIA's GPU-work reports.
//!
//! Owns the rules of `gpu_work`, one report's job per module:
//! - [`kernels`] — **kernels** (`cuda_gpu_kern_sum`): one entry per kernel name (nsys 2022.4
//!   splits a name by grid and block: those rows are merged; their median is then unknown),
//!   the share of all kernel time computed from the totals;
//! - [`names`] — each kernel's **base name** from `cuda_gpu_kern_sum:base`, matched by its sums,
//!   else derived from the demangled name;
//! - [`trace`] — **memory copies and memsets** (`cuda_gpu_trace`, read in one pass into a
//!   [`GpuTraceSummary`]: copies grouped by copy kind, source and destination memory kind as
//!   they stream by, memsets counted apart, kernels kept as 24-byte launches for the join);
//!   `pageable_memory_copies` when host-to-device or device-to-host copies use pageable host
//!   memory; **devices**: the `Device` column's distinct values (`NAME (ID)`);
//! - [`by_base_name`] — **kernels by base name**: the kernel table summed by base name, with
//!   each base name's time inside the counted iterations and the range groups that launched it
//!   (from [`mix`]), and the memory copies' time inside the counted iterations;
//! - [`mix`] — **kernels per range**: each kernel is attributed to the innermost push/pop range
//!   on its launching thread that contains its CUDA API call (contained as nsys's projection
//!   has it: the range starts at or before the call and ends at or after it), with the range
//!   tables' scoped names and counted iterations, and per group of names. A range's mix holds
//!   the kernels of the ranges nested in it, as its projection does. The calls come from
//!   `cuda_kern_exec_trace`, which nsys joins with the kernels on correlation id and process;
//!   with an nsys that lacks it, from `cuda_api_trace`, joined here with `cuda_gpu_trace` on
//!   `CorrId` alone: a correlation id seen on calls of more than one process cannot be joined
//!   then (nsys's GPU trace has no process column), and those kernels are counted as
//!   ambiguous and left out;
//! - [`merge`] — the GPU work of **several traces as one** (one trace per rank): kernel tables
//!   summed by name, the GPU traces' devices, copies and memsets summed, their launches kept
//!   with distinct correlation ids.

mod by_base_name;
mod devices;
mod kernels;
mod merge;
mod mix;
mod names;
mod trace;

pub use by_base_name::{attach_iteration_copies, kernels_by_base_name, IterationLaunches};
pub use devices::attach_device_work;
pub use kernels::kernel_table;
pub use merge::{merge_kernel_tables, merge_trace_parts, TraceParts};
pub(super) use mix::{kernel_mix, MixInput};
pub use mix::{KernelMix, Launches};
pub use names::attach_base_names;
pub use trace::{pageable_warning, GpuTraceParts, GpuTraceSummary, KernelLaunch, NO_DEVICE};

/// `part` as a share of `all` (0 when `all` is not positive).
fn share(part: i128, all: i128) -> f64 {
    if all > 0 {
        part as f64 / all as f64
    } else {
        0.0
    }
}
