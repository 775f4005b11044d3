//! The item comparisons of `comparison.json`: ranks (`runs[].ranks`), NVTX ranges
//! (`runs[].host_ranges`, `runs[].gpu_ranges`), GPU work (`runs[].gpu_work`) and kernels
//! (`runs[].kernels`).

use super::{is_zero, ChangeVerdict};
use serde::{Deserialize, Serialize};

/// A distributed run's ranks against their history (`runs[].ranks`), in the shape of
/// `runs[].kernels`' items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankChanges {
    /// The ranks judged, by how much they moved (the largest change first).
    pub changed: Vec<RankChange>,
    /// Ranks the head has and its history does not.
    pub new: Vec<RankOnly>,
    /// Ranks the history has and the head does not.
    pub gone: Vec<RankOnly>,
    /// What one rank alone would be called `slower` from, in %, as a range table's
    /// `detectable_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankChange {
    pub rank: u64,
    /// The rank's median host inclusive time: where its history puts it, and the head's.
    pub base_median_ns: f64,
    pub head_median_ns: f64,
    pub change_pct: Option<f64>,
    pub base_runs: u64,
    pub p_value: Option<f64>,
    pub verdict: ChangeVerdict,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankOnly {
    pub rank: u64,
    pub median_ns: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeChanges {
    /// Ranges in the head and the history, the largest absolute change first (then by name).
    pub changed: Vec<RangeChange>,
    /// Ranges only the head runs have, the largest first.
    pub new: Vec<RangeOnly>,
    /// Ranges of the newest used base run that no head run has, the largest first.
    pub gone: Vec<RangeOnly>,
    /// Ranges in both that `changed` leaves out (it lists 1,000 at most: every range beyond
    /// the noise, then the largest changes); absent when none is.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub changed_omitted: u64,
    /// Ranges only the head runs have that `new` leaves out (1,000 at most listed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub new_omitted: u64,
    /// Ranges only the base run has that `gone` leaves out (1,000 at most listed: a base file
    /// can hold any number of ranges).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gone_omitted: u64,
    /// The smallest change, in %, one item of this table alone would be called `slower` 4
    /// times in 5 for (the median over its judged items, each with its own run-to-run noise,
    /// at the share of the false-discovery rate one discovery among the run's items gets);
    /// absent when no item is judged, and in files written before it was computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable_pct: Option<f64>,
    /// Which iterations a run's number of an item is over: the steady state (the counted
    /// iterations but the slow ones, as the report's range tables show them) or every
    /// counted iteration; absent where it does not apply (a capture's totals, ranks), and
    /// in files written before it was said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<IterationBasis>,
    /// Why the range groups are over every counted iteration when some runs leave slow ones
    /// out (a run that records no steady state); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations_note: Option<String>,
}

/// Which iterations a table's numbers are over ([`RangeChanges::iterations`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IterationBasis {
    /// The counted iterations but the slow ones (`steady_state` of analysis.json): what the
    /// report's range tables show.
    SteadyState,
    /// Every counted iteration.
    Counted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeChange {
    pub name: String,
    /// The geometric mean of the used base runs' time per counted iteration.
    pub base_per_iteration_ns: f64,
    /// The head runs' (geometric mean).
    pub head_per_iteration_ns: f64,
    pub change_ns: f64,
    /// `None` when the base time is zero.
    pub change_pct: Option<f64>,
    /// Base runs that have the range.
    pub base_runs: u64,
    /// Before the false-discovery-rate correction; `null` with too few base runs.
    pub p_value: Option<f64>,
    pub verdict: ChangeVerdict,
    /// A range group: how many distinct range names the head runs have in it. Absent for
    /// exact names, kernels and copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<u64>,
    /// A range group of more than one name: its largest ranges in the head, at most
    /// [`LARGEST_MEMBERS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub largest_members: Vec<Member>,
    /// Kernels and copies: the item's share of the head's time per iteration in its table
    /// (0..1; a kernel's share of all kernel time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Kernels: the range groups whose ranges launched most of the kernel's time in the head
    /// (`gpu_work.kernels_by_base_name[].launched_by`), largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launched_by: Vec<String>,
}

/// Members of a range group listed in `largest_members` at most.
pub const LARGEST_MEMBERS: usize = 3;

/// One range of a group: its time per counted iteration in the head and in the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    /// The used base runs' (geometric mean over the runs that have it); `null` when none has
    /// it.
    pub base_per_iteration_ns: Option<f64>,
    pub head_per_iteration_ns: f64,
    /// Its mean time per instance (exclusive, or projected; every counted iteration), in the
    /// used base runs (`null` when none has it) and in the head: a range that runs once a
    /// run reads as its own time, not spread over the iterations. Absent in files written
    /// before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_per_instance_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_per_instance_ns: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeOnly {
    pub name: String,
    pub per_iteration_ns: f64,
}

/// Capture-wide GPU work of both runs, item by item (kernels by name, memory copies by kind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuWorkChanges {
    pub kernels: Vec<WorkChange>,
    pub memory_copies: Vec<WorkChange>,
    /// Kernels that `kernels` leaves out (1,000 at most listed, the largest changes).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kernels_omitted: u64,
    /// Memory copies that `memory_copies` leaves out (1,000 at most listed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub memory_copies_omitted: u64,
}

/// Kernels (by base name) or memory copies (by kind) judged item by item, as ranges are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkChanges {
    /// What a run's number of an item is: its time per counted iteration, or its capture total
    /// over the counted iterations.
    pub basis: WorkBasis,
    /// `changed`, `new`, `gone` and their `*_omitted`, as in a range table.
    #[serde(flatten)]
    pub items: RangeChanges,
    /// Why the basis is the capture's totals, or what was left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The number a run gives an item of [`WorkChanges`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkBasis {
    /// Time launched inside the counted iterations over their count
    /// (`kernels_by_base_name[].per_iteration_ns`, `memory_copies[].per_iteration_ns`).
    PerIteration,
    /// The capture's total over the counted iterations: warm-up and uncounted passes
    /// included, the same in every run of like conditions.
    Capture,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkChange {
    pub name: String,
    /// Total time in the capture; `None` on the side that does not have it.
    pub base_total_ns: Option<f64>,
    pub head_total_ns: Option<f64>,
}
