//! Each device's compute and communication: kernels whose base names are NCCL's (`nccl…`)
//! are communication, every other kernel compute; per device, the time each ran inside the
//! counted iterations (overlapping kernels counted once), and the communication during which
//! no compute kernel ran on that device (exposed communication).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::super::ranges::clamp;
use super::trace::{KernelLaunch, NO_DEVICE};
use crate::reports::{Interner, NameId};
use nsys_gate_core::artifact::{kernel_base_name, GpuDevice};

/// Whether a kernel is communication: its base name is NCCL's (`ncclDevKernel_AllReduce_…`,
/// older `ncclKernel_AllReduce_…`, whatever nsys's demangler wrote around it).
pub fn is_communication(name: &str) -> bool {
    kernel_base_name(name).starts_with("nccl")
}

const COMMUNICATION: u8 = 1;
const COUNTED: u8 = 2;

/// A kernel on its device: when it ran, what it is, whether it was launched inside a counted
/// iteration.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: i64,
    end: i64,
    flags: u8,
}

/// The kernels of each device, gathered as the kernels are attributed.
#[derive(Debug, Default)]
pub struct DeviceSpans {
    spans: FxHashMap<u32, Vec<Span>>,
    communication: FxHashMap<NameId, bool>,
}

/// One device's work inside the counted iterations, over all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceWork {
    /// Kernels launched inside the counted iterations.
    pub kernels: u64,
    /// Time at least one such compute kernel ran.
    pub compute_ns: i128,
    /// Time at least one such communication kernel ran.
    pub communication_ns: i128,
    /// The part of `communication_ns` when no compute kernel (launched anywhere) ran.
    pub exposed_ns: i128,
}

impl DeviceSpans {
    /// Adds a kernel; `counted`: launched inside a counted iteration. A kernel of no known
    /// device is left out.
    pub fn add(&mut self, k: &KernelLaunch, counted: bool, names: &Interner) {
        if k.device == NO_DEVICE {
            return;
        }
        let communication = *self
            .communication
            .entry(k.name)
            .or_insert_with(|| is_communication(names.resolve(k.name)));
        let flags = u8::from(communication) * COMMUNICATION + u8::from(counted) * COUNTED;
        self.spans.entry(k.device).or_default().push(Span {
            start: k.start_ns,
            end: k.start_ns.saturating_add(k.duration_ns.max(0)),
            flags,
        });
    }

    /// Each device's work inside the counted iterations, by device id.
    pub fn finish(self) -> BTreeMap<u32, DeviceWork> {
        self.spans
            .into_iter()
            .map(|(device, mut spans)| {
                spans.sort_unstable_by_key(|s| (s.start, s.end));
                (device, work(&spans))
            })
            .collect()
    }
}

/// One device's work from its kernels sorted by start.
fn work(spans: &[Span]) -> DeviceWork {
    let counted = spans.iter().filter(|s| s.flags & COUNTED != 0);
    let kernels = counted.clone().count() as u64;
    let compute_counted = union(counted.clone().filter(|s| s.flags & COMMUNICATION == 0));
    let communication = union(counted.filter(|s| s.flags & COMMUNICATION != 0));
    let compute_all = union(spans.iter().filter(|s| s.flags & COMMUNICATION == 0));
    let communication_ns = length(&communication);
    DeviceWork {
        kernels,
        compute_ns: length(&compute_counted),
        communication_ns,
        exposed_ns: communication_ns - overlap(&communication, &compute_all),
    }
}

/// The union of spans sorted by start, as disjoint intervals in order.
fn union<'a>(spans: impl Iterator<Item = &'a Span>) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start <= last.1 => last.1 = last.1.max(s.end),
            _ => out.push((s.start, s.end)),
        }
    }
    out
}

fn length(intervals: &[(i64, i64)]) -> i128 {
    intervals
        .iter()
        .map(|&(a, b)| i128::from(b) - i128::from(a))
        .sum()
}

/// The length of the intersection of two lists of disjoint intervals in order.
fn overlap(a: &[(i64, i64)], b: &[(i64, i64)]) -> i128 {
    let (mut i, mut j, mut total) = (0, 0, 0i128);
    while i < a.len() && j < b.len() {
        let start = a[i].0.max(b[j].0);
        let end = a[i].1.min(b[j].1);
        if end > start {
            total += i128::from(end) - i128::from(start);
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// Each device's work per counted iteration onto `gpu_work.devices`; `work` `None` when the
/// kernels could not be attributed (the fields stay `null`).
pub fn attach_device_work(
    devices: &mut [GpuDevice],
    work: Option<(&BTreeMap<u32, DeviceWork>, u64)>,
) {
    let Some((work, iterations)) = work else {
        return;
    };
    for d in devices {
        let Some(id) = d.id.and_then(|i| u32::try_from(i).ok()) else {
            continue;
        };
        let w = work.get(&id).copied().unwrap_or_default();
        let per = |ns: i128| (iterations > 0).then(|| clamp(ns) as f64 / iterations as f64);
        d.iteration_kernels = Some(w.kernels);
        d.compute_ns = per(w.compute_ns);
        d.communication_ns = per(w.communication_ns);
        d.exposed_communication_ns = per(w.exposed_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(list: &[(i64, i64, bool, bool)]) -> Vec<Span> {
        let mut v: Vec<Span> = list
            .iter()
            .map(|&(start, end, communication, counted)| Span {
                start,
                end,
                flags: u8::from(communication) * COMMUNICATION + u8::from(counted) * COUNTED,
            })
            .collect();
        v.sort_unstable_by_key(|s| (s.start, s.end));
        v
    }

    #[test]
    fn nccl_kernels_are_communication_whatever_their_spelling() {
        for name in [
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
            "ncclKernel_AllReduce_RING_LL_Sum_float",
            "void ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)",
            "ncclDevKernel_Generic",
        ] {
            assert!(is_communication(name), "{name}");
        }
        for name in [
            "void gemm_relu_kernel<float, 64, 64, 8>(float const*, float*, int)",
            "all_reduce_kernel",
            "void at::native::vectorized_elementwise_kernel<4, nccl_like>(int)",
            "",
        ] {
            assert!(!is_communication(name), "{name}");
        }
    }

    /// Compute on two streams overlapping each other, communication overlapping both for part
    /// of its time: the gaps are exposed, each overlap counted once.
    #[test]
    fn exposed_communication_is_what_no_compute_covers() {
        let w = work(&spans(&[
            (0, 600, false, true),
            (500, 700, false, true),
            (400, 900, true, true),
            // the next iteration
            (1000, 1800, false, true),
            (1650, 2050, true, true),
        ]));
        assert_eq!(
            w,
            DeviceWork {
                kernels: 5,
                compute_ns: 700 + 800,
                communication_ns: 500 + 400,
                exposed_ns: 200 + 250,
            }
        );
    }

    /// Compute launched outside the counted iterations still hides communication; kernels
    /// launched outside them are not counted.
    #[test]
    fn compute_outside_the_iterations_hides_communication_too() {
        let w = work(&spans(&[
            (0, 100, false, false),
            (50, 150, true, true),
            (200, 300, true, false),
        ]));
        assert_eq!(
            w,
            DeviceWork {
                kernels: 1,
                compute_ns: 0,
                communication_ns: 100,
                exposed_ns: 50,
            }
        );
        assert_eq!(work(&[]), DeviceWork::default());
    }

    #[test]
    fn overlaps_of_interval_lists() {
        assert_eq!(overlap(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
        assert_eq!(overlap(&[(0, 10)], &[(10, 20)]), 0);
        assert_eq!(overlap(&[(0, 100)], &[(10, 20), (30, 40), (90, 120)]), 30);
        assert_eq!(overlap(&[], &[(0, 1)]), 0);
    }

    #[test]
    fn per_iteration_values_need_an_iteration_and_an_id() {
        let mut devices = vec![
            GpuDevice {
                id: Some(0),
                ..GpuDevice::default()
            },
            GpuDevice {
                id: Some(1),
                ..GpuDevice::default()
            },
            GpuDevice::default(),
        ];
        let work = BTreeMap::from([(
            0,
            DeviceWork {
                kernels: 4,
                compute_ns: 1000,
                communication_ns: 500,
                exposed_ns: 100,
            },
        )]);
        attach_device_work(&mut devices, Some((&work, 2)));
        assert_eq!(devices[0].iteration_kernels, Some(4));
        assert_eq!(devices[0].compute_ns, Some(500.0));
        assert_eq!(devices[0].communication_ns, Some(250.0));
        assert_eq!(devices[0].exposed_communication_ns, Some(50.0));
        // A device with no kernel in the iterations: zeros.
        assert_eq!(devices[1].iteration_kernels, Some(0));
        assert_eq!(devices[1].exposed_communication_ns, Some(0.0));
        // No id: nothing to join.
        assert_eq!(devices[2].iteration_kernels, None);
        attach_device_work(&mut devices, Some((&work, 0)));
        assert_eq!(devices[0].compute_ns, None);
    }
}
