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
    /// The kernels summed by base name (`kernels[].base_name`), with their time inside the
    /// counted iterations and the range groups that launched it: what a comparison of two runs'
    /// kernels needs. Largest total first. Absent in files written before it was added.
    #[serde(default)]
    pub kernels_by_base_name: Option<Vec<KernelBaseName>>,
    /// Memory copies grouped by copy kind, source and destination memory kind, largest total
    /// time first.
    pub memory_copies: Option<Vec<MemoryCopies>>,
    pub memsets: Option<Memsets>,
    /// The kernels launched inside the counted iterations (complete, not duplicate).
    pub iteration_kernels: Option<IterationKernels>,
    /// The kernels launched inside the ranges with the largest GPU-projected totals (scoped
    /// names, counted iterations only), largest first.
    pub per_range_kernels: Option<Vec<RangeKernels>>,
    /// The same for groups of ranges whose names differ only in decimal numbers (as
    /// `host_range_groups`), the groups with the largest GPU-projected totals first. Absent in
    /// files written before it was added.
    #[serde(default)]
    pub per_range_kernel_groups: Option<Vec<RangeKernelGroup>>,
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

/// One GPU's work: what ran on it over the capture (`cuda_gpu_trace`), and, per counted
/// iteration, its compute, its communication and the communication no compute hid. The
/// fields after `memory_operations` are absent in files written before they were added.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GpuDevice {
    /// As nsys writes it: `NAME (ID)`, e.g. `NVIDIA A100-SXM4-80GB (0)`.
    pub device: String,
    /// The GPU's name (`NAME`), `null` when nsys had none.
    pub name: Option<String>,
    /// The CUDA device id (`ID`).
    pub id: Option<u64>,
    pub kernels: u64,
    pub memory_operations: u64,
    /// Sum of its kernels' durations over the capture.
    #[serde(default)]
    pub kernel_total_ns: Option<i64>,
    /// Sum of its memory copies' and memsets' durations over the capture.
    #[serde(default)]
    pub memory_total_ns: Option<i64>,
    /// Its memory copies by copy kind (`Peer-to-Peer` a kind of its own; memsets left out),
    /// largest total first.
    #[serde(default)]
    pub memory_copies: Option<Vec<DeviceCopies>>,
    /// Kernels launched inside the counted iterations that ran on this device; `null` when the
    /// kernels could not be attributed (`kernel_attribution` is `null`) or the device has no id.
    #[serde(default)]
    pub iteration_kernels: Option<u64>,
    /// Per counted iteration: the time at least one compute kernel (a kernel not NCCL's)
    /// launched inside the counted iterations ran on this device (overlapping kernels counted
    /// once). `null` as `iteration_kernels`, or without a counted iteration.
    #[serde(default)]
    pub compute_ns: Option<f64>,
    /// Per counted iteration: the time at least one communication kernel (NCCL's: a base name
    /// starting with `nccl`) launched inside the counted iterations ran on this device.
    #[serde(default)]
    pub communication_ns: Option<f64>,
    /// Per counted iteration: the part of `communication_ns` during which no compute kernel
    /// (launched anywhere) ran on this device: communication that compute did not hide.
    #[serde(default)]
    pub exposed_communication_ns: Option<f64>,
}

/// A device's memory copies of one copy kind (`devices[].memory_copies`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceCopies {
    /// As `memory_copies[].copy_kind`: `Host-to-Device`, `Peer-to-Peer`, …
    pub copy_kind: String,
    pub count: u64,
    pub bytes: u64,
    pub total_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    /// Exactly as nsys wrote it (a demangled signature).
    pub name: String,
    /// The kernel's base name ([`kernel_base_name`]): what the report shows. Absent in files
    /// written before it was added (the report then derives it).
    #[serde(default)]
    pub base_name: Option<String>,
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
    /// The copies launched inside the counted iterations, when their launching calls are known
    /// (`cuda_api_trace`, joined here); `null` otherwise, and in files written before it was
    /// added.
    #[serde(default)]
    pub iteration_count: Option<u64>,
    #[serde(default)]
    pub iteration_bytes: Option<u64>,
    /// Sum of their durations (busy time, not a projection).
    #[serde(default)]
    pub iteration_total_ns: Option<i64>,
    /// `iteration_total_ns` over the counted iterations.
    #[serde(default)]
    pub per_iteration_ns: Option<f64>,
}

/// The kernels of one base name (`kernels_by_base_name`), summed: over the whole capture, and
/// launched inside the counted iterations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelBaseName {
    /// As `kernels[].base_name`.
    pub base_name: String,
    /// Entries of `kernels` with this base name.
    pub names: u64,
    /// Their instances and total over the whole capture (`cuda_gpu_kern_sum`).
    pub instances: u64,
    pub total_ns: i64,
    /// Launched inside the counted iterations; `null` when the kernels could not be attributed
    /// (`kernel_attribution` is `null`).
    pub iteration_launches: Option<u64>,
    /// Sum of those kernels' durations: GPU busy time, not a projection.
    pub iteration_total_ns: Option<i64>,
    /// `iteration_total_ns` over the counted iterations (`iteration_kernels.iterations`);
    /// `null` without attribution or without a counted iteration.
    pub per_iteration_ns: Option<f64>,
    /// The range groups whose ranges launched most of `iteration_total_ns`: by the innermost
    /// range around each launch, largest first, until they hold more than half of it, at most
    /// [`LAUNCHING_GROUPS`]. Kernels launched by an iteration outside every range below it
    /// belong to no group.
    pub launched_by: Option<Vec<LaunchingGroup>>,
}

/// Groups named in a [`KernelBaseName::launched_by`] at most.
pub const LAUNCHING_GROUPS: usize = 3;

/// A range group and the kernel time its ranges launched (`launched_by`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchingGroup {
    /// As `host_range_groups[].group`: the innermost range's scoped name, each run of digits
    /// written `#`.
    pub group: String,
    pub total_ns: i64,
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
    /// As [`KernelStats::base_name`].
    #[serde(default)]
    pub base_name: Option<String>,
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

/// The kernels of a group of ranges (`per_range_kernel_groups`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeKernelGroup {
    /// The group, as `host_range_groups[].group` (each run of digits written `#`).
    pub group: String,
    /// Distinct scoped names in the group (`host_range_groups[].names`).
    pub names: u64,
    /// Instances of the group's ranges in the counted iterations.
    pub instances: u64,
    /// The group's GPU-projected total (`gpu_projected_range_groups`); `null` without one.
    pub projected_total_ns: Option<i64>,
    /// Kernels launched inside the group's ranges, nested ranges included.
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
    /// Their correlation id is on API calls of more than one process: left out (only when the
    /// kernels were joined here, by `cuda_api_trace`).
    pub ambiguous: u64,
    /// The report that gave each kernel's launching call: `cuda_kern_exec_trace` (nsys joins
    /// kernel and call on correlation id and process) or `cuda_api_trace` (joined here on the
    /// correlation id alone, for an nsys without the former). Absent in files written before
    /// it was added (they used `cuda_api_trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

/// A kernel's base name, as Nsight Systems' `base` naming has it: the function's identifier,
/// without its namespaces, its template arguments, its parameter list and its return type
/// (`void at::native::<unnamed>::fill_kernel<float, (int)4>(float*, long)` -> `fill_kernel`).
///
/// Read from the end: a balanced parameter list `(…)` ending the name is dropped, then a
/// balanced template argument list `<…>` ending what is left (angle brackets inside
/// parentheses or brackets, as in `(int)4` or `[lambda(int) (instance 1)]`, do not count),
/// then everything up to the last `::` outside brackets, then a return type (up to the last
/// space outside brackets). A name that is not a demangled signature (`ampere_sgemm_128x64_tn`,
/// a Triton kernel, a mangled `_Z…` name) is its own base name; so is one where nothing would
/// be left.
pub fn kernel_base_name(name: &str) -> &str {
    let whole = name.trim();
    let mut head = whole;
    if head.ends_with(')') {
        if let Some(open) = opening(head, b'(', b')') {
            head = head[..open].trim_end();
        }
    }
    if head.ends_with('>') {
        if let Some(open) = opening(head, b'<', b'>') {
            head = head[..open].trim_end();
        }
    }
    let mut depth = 0i32;
    let bytes = head.as_bytes();
    let mut start = 0;
    for i in (0..bytes.len()).rev() {
        match bytes[i] {
            b')' | b']' | b'>' => depth += 1,
            b'(' | b'[' | b'<' => depth -= 1,
            b':' if depth == 0 && i > 0 && bytes[i - 1] == b':' => {
                start = i + 1;
                break;
            }
            b' ' if depth == 0 => {
                start = i + 1;
                break;
            }
            _ => {}
        }
    }
    let base = head[start..].trim();
    if base.is_empty() {
        whole
    } else {
        base
    }
}

/// Where the bracket closed by the last byte of `text` opens: `open`/`close` counted from the
/// end, other brackets (`()`, `[]`, `<>` besides the pair itself) skipped when `open` is `<`.
fn opening(text: &str, open: u8, close: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut other = 0usize;
    for i in (0..bytes.len()).rev() {
        let b = bytes[i];
        if open == b'<' && matches!(b, b')' | b']') {
            other += 1;
        } else if open == b'<' && matches!(b, b'(' | b'[') {
            other = other.saturating_sub(1);
        } else if other == 0 && b == close {
            depth += 1;
        } else if other == 0 && b == open {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::kernel_base_name as base;
    use super::GpuWork;

    /// A `gpu_work` written before `kernels_by_base_name` and the copies' `iteration_*` fields
    /// reads, with them `null`.
    #[test]
    fn gpu_work_of_older_files_reads() {
        let old = r#"{"devices": null, "kernels": [], "memory_copies": [{"copy_kind": "Host-to-Device",
            "source": "Pinned", "destination": "Device", "count": 1, "bytes": 8, "total_ns": 5,
            "bandwidth_bytes_per_s": null, "pageable_host": false}], "memsets": null,
            "iteration_kernels": null, "per_range_kernels": null, "kernel_attribution": null,
            "unavailable": {}}"#;
        let w: GpuWork = serde_json::from_str(old).unwrap();
        assert_eq!(w.kernels_by_base_name, None);
        let c = &w.memory_copies.unwrap()[0];
        assert_eq!((c.iteration_count, c.iteration_total_ns), (None, None));
        assert_eq!((c.iteration_bytes, c.per_iteration_ns), (None, None));
    }

    #[test]
    fn base_names_drop_namespaces_templates_parameters_and_return_types() {
        assert_eq!(base("gemm"), "gemm");
        assert_eq!(base("void gemm<float, 2>(float*, int)"), "gemm");
        assert_eq!(base("gemm<float, 2>"), "gemm");
        assert_eq!(
            base(
                r#"void attention_kernel<"causal",64, cutlass::half_t>(int, float const*, "x",1,2)"#
            ),
            "attention_kernel"
        );
        assert_eq!(
            base("void (anonymous namespace)::softmax<float>(float*)"),
            "softmax"
        );
        assert_eq!(
            base("void cutlass::Kernel2<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8::Params)"),
            "Kernel2"
        );
        // nsys's demangler: `<unnamed>` namespaces, `(int)4` arguments, bracketed lambdas.
        let pytorch = concat!(
            "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, voi",
            "d at::native::templates::cuda::normal_and_transform<float, float, (unsigned long)4, at::CU",
            "DAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *",
            ">(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() cons",
            "t::[lambda() (instance 2)]::operator ()() const::[lambda(curandStatePhilox4_32_10 *) (inst",
            "ance 2)]>(at::TensorIteratorBase &, T4)::[lambda(int, float) (instance 1)], void at::nativ",
            "e::<unnamed>::distribution_nullary_kernel<float, float, (int)4, at::CUDAGeneratorImpl *, v",
            "oid at::native::templates::cuda::normal_and_transform<float, float, (unsigned long)4, at::",
            "CUDAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl",
            " *>(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() co",
            "nst::[lambda() (instance 2)]::operator ()() const::[lambda(curandStatePhilox4_32_10 *) (in",
            "stance 2)]>(at::TensorIteratorBase &, T4)::[lambda(int, float) (instance 1)]>(at::TensorIt",
            "eratorBase &, T4, const T3 &, T5)::[lambda(int, float4) (instance 1)]>(long, at::PhiloxCud",
            "aState, T3, T4)",
        );
        assert_eq!(base(pytorch), "distribution_elementwise_grid_stride_kernel");
        // c++filt's spelling of the same things.
        assert_eq!(
            base("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1})"),
            "elementwise_kernel"
        );
        assert_eq!(base("void ns::Outer<int>::inner(int)"), "inner");
        // Not a signature: the name itself.
        for plain in [
            "ampere_sgemm_128x64_tn",
            "triton_poi_fused_add_0",
            "_Z3fooPf",
            "(weird)",
            "<>",
            "",
        ] {
            assert_eq!(base(plain), plain, "{plain:?}");
        }
        // Unbalanced brackets: something of the name, never nothing.
        for odd in ["void f<int(int)", "f>(x)", "a::(b", ")", "::"] {
            assert!(!base(odd).is_empty(), "{odd:?}");
        }
    }
}
