//! `gpu_work` in analysis.json: what ran on the GPU (devices, kernels, memory copies,
//! memsets) and the kernel mixes of the iterations and of the largest ranges.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `gpu_work`: what ran on the GPU, from `cuda_gpu_kern_sum`, `cuda_gpu_trace` and
/// `cuda_api_trace`. A part whose report failed is `null`, and `unavailable` says why.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GpuWork {
    /// The GPUs that ran work, by `cuda_gpu_trace`'s `Device` column (sorted).
    pub devices: Option<Vec<GpuDevice>>,
    /// Every kernel name over the whole capture (`cuda_gpu_kern_sum`), largest total first.
    pub kernels: Option<Vec<KernelStats>>,
    /// Memory copies grouped by copy kind, source and destination memory kind, largest total
    /// time first.
    pub memory_copies: Option<Vec<MemoryCopies>>,
    pub memsets: Option<Memsets>,
    /// The kernels launched inside the counted iterations (complete, not duplicate).
    pub iteration_kernels: Option<IterationKernels>,
    /// The kernels launched inside the ranges with the largest GPU-projected totals (scoped
    /// names, counted iterations only), largest first.
    pub per_range_kernels: Option<Vec<RangeKernels>>,
    /// How the kernels of `cuda_gpu_trace` were attributed to ranges.
    pub kernel_attribution: Option<KernelAttribution>,
    /// Part (`devices`, `kernels`, …) -> why it is `null`: the report and nsys's words.
    pub unavailable: BTreeMap<String, String>,
}

impl GpuWork {
    /// The names of the GPUs that ran work (nsys's `NAME (ID)` when it gave no name), sorted,
    /// each once: what tells the legs of a matrix, or a base and a head run, apart.
    pub fn gpu_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .devices
            .iter()
            .flatten()
            .map(|d| d.name.clone().unwrap_or_else(|| d.device.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuDevice {
    /// As nsys writes it: `NAME (ID)`, e.g. `NVIDIA A100-SXM4-80GB (0)`.
    pub device: String,
    /// The GPU's name (`NAME`), `null` when nsys had none.
    pub name: Option<String>,
    /// The CUDA device id (`ID`).
    pub id: Option<u64>,
    pub kernels: u64,
    pub memory_operations: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    /// Exactly as nsys wrote it (a demangled signature).
    pub name: String,
    pub instances: u64,
    pub total_ns: i64,
    pub mean_ns: f64,
    /// `null` when nsys 2022.4 split the name over several grid/block rows (medians do not
    /// merge).
    pub median_ns: Option<f64>,
    pub minimum_ns: i64,
    pub maximum_ns: i64,
    pub stddev_ns: Option<f64>,
    /// Share of all kernel time of the capture (0..1).
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryCopies {
    /// `Host-to-Device`, `Device-to-Host`, `Device-to-Device`, … (nsys's label).
    pub copy_kind: String,
    /// Source memory kind: `Pageable`, `Pinned`, `Device`, …; `null` when nsys had none.
    pub source: Option<String>,
    pub destination: Option<String>,
    pub count: u64,
    pub bytes: u64,
    pub total_ns: i64,
    /// Bytes over the copies' total duration; `null` when that is 0.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// A host-to-device copy from, or device-to-host copy to, pageable host memory.
    pub pageable_host: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memsets {
    pub count: u64,
    pub bytes: u64,
    pub total_ns: i64,
}

/// A kernel in a range's mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeKernel {
    pub name: String,
    pub launches: u64,
    pub total_ns: i64,
    /// Share of the range's kernel time (0..1).
    pub share: f64,
}

/// The kernels past the first few of a mix, together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OtherKernels {
    /// How many kernel names.
    pub kernels: u64,
    pub launches: u64,
    pub total_ns: i64,
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationKernels {
    /// Counted iterations.
    pub iterations: u64,
    pub launches: u64,
    /// Sum of the kernels' durations: GPU busy time of kernels, not a projection.
    pub total_ns: i64,
    pub kernels: Vec<RangeKernel>,
    pub other_kernels: Option<OtherKernels>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeKernels {
    /// Scoped name, as in `host_ranges` and `gpu_projected_ranges`.
    pub name: String,
    pub path: Vec<String>,
    /// Instances of the range in the counted iterations.
    pub instances: u64,
    /// Its GPU-projected total (`gpu_projected_ranges`), for reference; `null` without one.
    pub projected_total_ns: Option<i64>,
    /// Kernels launched inside the range, nested ranges included.
    pub launches: u64,
    pub total_ns: i64,
    pub kernels: Vec<RangeKernel>,
    pub other_kernels: Option<OtherKernels>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAttribution {
    /// Kernel rows of `cuda_gpu_trace`.
    pub kernels: u64,
    /// Launched (by their CUDA API call) inside a counted iteration.
    pub in_counted_iterations: u64,
    /// Launched elsewhere: outside every counted iteration, or on another thread.
    pub elsewhere: u64,
    /// No CUDA API call has their correlation id.
    pub without_api_call: u64,
    /// Their correlation id is on API calls of more than one process: left out.
    pub ambiguous: u64,
}
