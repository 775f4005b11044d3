//! `environment` in analysis.json: the GPUs, the driver and the system nsys recorded in the
//! trace (its SQLite export's `TARGET_INFO_GPU` and `TARGET_INFO_SYSTEM_ENV`). Every field is
//! `null` where the trace holds none (a trace without CUDA, an older nsys): never guessed. No
//! host name, no path, no environment variable is kept.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Environment {
    /// The GPUs that ran work (`gpu_work.devices`, by device id), or every GPU the trace lists
    /// when none did or when the GPU-work reports are missing; in device id order.
    pub gpus: Vec<GpuInfo>,
    /// The NVIDIA driver (`NvDriverVersion`, e.g. `570.172.08`).
    pub driver_version: Option<String>,
    /// The CUDA version the driver supports (`CudaDriverVersion`), as `12.8`.
    pub cuda_driver_version: Option<String>,
    /// The CPU (`CpuDescription`).
    pub cpu: Option<String>,
    /// The operating system (`OsDescription`).
    pub os: Option<String>,
    /// The kernel's release (`SoftwareReleaseVersion`).
    pub kernel: Option<String>,
}

/// One GPU as the trace describes it (a row of `TARGET_INFO_GPU`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// The device id (`id`): the `ID` of `gpu_work.devices[].device`.
    pub id: u64,
    pub name: Option<String>,
    /// The physical GPU (`GPU-…`): what tells two GPUs of one host apart.
    pub uuid: Option<String>,
    /// Streaming multiprocessors: a MIG slice has fewer than the whole GPU of the same name.
    pub sm_count: Option<u64>,
    /// The maximum SM clock (`clockRate`), in MHz.
    pub max_clock_mhz: Option<u64>,
    /// The device's memory (`totalMemory`), in bytes.
    pub memory_bytes: Option<u64>,
    /// `MAJOR.MINOR` (`computeMajor`, `computeMinor`), e.g. `8.9`.
    pub compute_capability: Option<String>,
    /// The SM (GPC) clock the GPU ran at over the counted iterations, when the trace holds GPU
    /// metrics; `null` otherwise (absent in files written before it).
    #[serde(default)]
    pub clock_mhz: Option<ClockMhz>,
}

/// The SM clock over the counted iterations, in MHz, from nsys's `GPC Clock Frequency`
/// samples: `median` over the time of every counted iteration, `minimum` and `maximum` the
/// lowest and highest of the iterations' own medians (one stray sample moves neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockMhz {
    pub median: u32,
    pub minimum: u32,
    pub maximum: u32,
}

impl Environment {
    /// The same environment with only the GPUs whose device ids are in `ran_work`, unless none
    /// of the trace's GPUs is (then every GPU stays).
    pub fn of_gpus_that_ran_work(mut self, ran_work: &[u64]) -> Environment {
        if self.gpus.iter().any(|g| ran_work.contains(&g.id)) {
            self.gpus.retain(|g| ran_work.contains(&g.id));
        }
        self
    }

    /// Adds the GPUs of `gpus` this environment does not list (the same UUID, or the same
    /// device id when either has none), keeping device id order.
    pub fn add_gpus(&mut self, gpus: Vec<GpuInfo>) {
        for gpu in gpus {
            let listed = self.gpus.iter().any(|g| match (&g.uuid, &gpu.uuid) {
                (Some(a), Some(b)) => a == b,
                _ => g.id == gpu.id,
            });
            if !listed {
                self.gpus.push(gpu);
            }
        }
        self.gpus.sort_by_key(|g| g.id);
    }

    /// `NAME x N` for each GPU name (in order of first appearance), joined by `, `; `None`
    /// without GPUs.
    pub fn gpu_summary(&self) -> Option<String> {
        let mut names: Vec<(String, usize)> = Vec::new();
        for g in &self.gpus {
            let name = g.name.clone().unwrap_or_else(|| format!("GPU {}", g.id));
            match names.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => names.push((name, 1)),
            }
        }
        if names.is_empty() {
            return None;
        }
        Some(
            names
                .into_iter()
                .map(|(n, c)| if c == 1 { n } else { format!("{n} x {c}") })
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}
