//! `advice[]`: what to look at in a run, decided by the analysis (`analysis::advice`, which
//! holds the rule and its thresholds) and only worded by the report. Each item names a group
//! of ranges (`host_range_groups[].group`) and carries every number the rule rested on, so a
//! reader of analysis.json can check it, and the report can say it without deciding anything.

use serde::{Deserialize, Serialize};

use super::{OtherKernels, RangeKernel};

/// What the rule found about a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdviceKind {
    /// A large share of the counted iterations' host time is the range's own (exclusive) host
    /// time, and the GPU work it launched spans well under its host inclusive time (or it
    /// launched none): the time goes to preparation, orchestration, synchronization or I/O.
    HostBound,
    /// The range takes a large share of the host time and the GPU work it launched spans most
    /// of its host inclusive time: look at its kernels.
    GpuBound,
    /// nsys made no GPU projection: the range with the largest host exclusive time, which
    /// cannot be told to be host work or waiting for the GPU.
    NoGpuProjection,
}

/// One item of `advice`: a group of ranges (names that differ only in decimal numbers; a name
/// without digits is a group of one), what the rule found, and the numbers it rests on. Times
/// are totals over the counted iterations unless named `mean` (per instance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    pub kind: AdviceKind,
    /// The range as the report names it: the exact scoped name when the group holds one name,
    /// else the group (`layer_#_token_#.forward_layer_#`).
    pub range: String,
    /// The group's key, as in `host_range_groups[].group`.
    pub group: String,
    /// The group of each scope level (`["layer_#_token_#", "forward_layer_#"]`).
    pub path: Vec<String>,
    /// Distinct scoped names in the group.
    pub names: u64,
    /// Instances of the group's ranges in the counted iterations.
    pub instances: u64,
    /// Host exclusive total of the group.
    pub host_exclusive_ns: i64,
    /// Host exclusive time per instance.
    pub host_exclusive_mean_ns: f64,
    /// Host inclusive total of the group.
    pub host_inclusive_ns: i64,
    /// Host inclusive time per instance.
    pub host_inclusive_mean_ns: f64,
    /// The counted iterations' host inclusive total: what the shares are shares of.
    pub iterations_host_inclusive_ns: i64,
    /// `host_exclusive_ns / iterations_host_inclusive_ns`.
    pub host_exclusive_share: f64,
    /// `host_inclusive_ns / iterations_host_inclusive_ns`.
    pub host_inclusive_share: f64,
    /// GPU-projected total of the group's instances that launched GPU work
    /// (`gpu_projected_range_groups`); `null` when they launched none or there is no
    /// projection. Another clock than host time: compared with it, never added to it.
    pub projected_ns: Option<i64>,
    /// Projected time per instance that launched GPU work; `null` as `projected_ns`.
    pub projected_mean_ns: Option<f64>,
    /// Instances that launched GPU work; `null` as `projected_ns`.
    pub projected_instances: Option<u64>,
    /// GPU operations those instances launched; `null` as `projected_ns`.
    pub gpu_operation_count: Option<u64>,
    /// `projected_ns / host_inclusive_ns`: how much of the range's host inclusive time its GPU
    /// work spans; `null` as `projected_ns`.
    pub projected_to_host_inclusive: Option<f64>,
    /// The rule's share: a range under it (of `iterations_host_inclusive_ns`) gets no item.
    pub threshold_share: f64,
    /// The rule's ratio: host-bound under it (`projected_to_host_inclusive`), GPU-bound at or
    /// over it.
    pub threshold_ratio: f64,
    /// `gpu_bound`: the kernels launched inside the group's ranges (nested ranges included);
    /// `null` for the other kinds, and when the kernels could not be attributed to ranges.
    pub kernels: Option<AdviceKernels>,
}

/// The kernels of a GPU-bound group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviceKernels {
    /// Kernels launched inside the group's ranges in the counted iterations.
    pub launches: u64,
    /// Sum of their durations: GPU busy time of kernels, not the projection.
    pub total_ns: i64,
    /// The first kernels by time, each with its share of `total_ns`.
    pub kernels: Vec<RangeKernel>,
    /// The rest together; `null` when none.
    pub other_kernels: Option<OtherKernels>,
}
