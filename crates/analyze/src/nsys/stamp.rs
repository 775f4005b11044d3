//! The files an `nsys stats` run leaves under `stats/`: each report's CSV, the SQLite export
//! of a `.nsys-rep`, and the stamp saying which nsys made them and what it did with each
//! report, read back by `--reuse-stats`.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};

use nsys_gate_core::artifact::{ReportName, ReportStatus};
use nsys_gate_core::text::shown_path;

/// Output prefix under the stats folder: nsys writes `nsys_<report>.csv`.
pub const OUTPUT_PREFIX: &str = "nsys";
/// The stamp beside the CSVs: which nsys made them and what it said.
pub const STAMP_FILE: &str = "nsys-gate-stats.json";

/// What one `nsys stats` call produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsStamp {
    /// The version of the nsys that ran, as `nsys --version` prints it.
    pub nsys_version: String,
    /// Whether this nsys has 2022.x's legacy NVTX report names (the CSVs are renamed).
    pub legacy_reports: bool,
    /// `nvtx_pushpop_trace` / `nvtx_gpu_proj_trace` -> written or skipped with nsys's words.
    pub reports: std::collections::BTreeMap<String, ReportStatus>,
    /// Names (never values) of the variables in the trace's recorded environment that look like
    /// credentials, read from the export before it is removed, so that `--reuse-stats` warns
    /// as the first analysis did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_variables: Vec<String>,
    /// The GPUs, driver and system recorded in the trace (every GPU it lists), read from the
    /// export with the credentials, so that `--reuse-stats` records them as the first analysis
    /// did. Absent in stamps written before it was read: the analysis's `environment` is then
    /// `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<nsys_gate_core::artifact::Environment>,
    /// Each GPU's SM clock as nsys sampled it (GPU metrics), read from the export with the
    /// environment: the analysis takes its figures over the counted iterations, which are
    /// known only after the reports are read. Empty without GPU metrics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_clocks: Vec<crate::trace_env::ClockSeries>,
}

impl StatsStamp {
    /// What nsys did with `report`; a report the stamp does not name is `skipped`.
    pub fn status(&self, report: ReportName) -> ReportStatus {
        self.reports
            .get(report.as_str())
            .cloned()
            .unwrap_or_else(|| ReportStatus::skipped("not recorded in the stamp"))
    }
}

/// CSV path of a report under the stats folder. nsys writes a report's argument with `_`
/// (`cuda_gpu_kern_sum:base` -> `nsys_cuda_gpu_kern_sum_base.csv`).
pub fn csv_path(stats_dir: &Path, report: &str) -> PathBuf {
    stats_dir.join(format!("{OUTPUT_PREFIX}_{}.csv", report.replace(':', "_")))
}

/// Largest stamp read: it holds the nsys version and a line of nsys's words per report.
const MAX_STAMP_BYTES: u64 = 16 << 20;

/// Reads the stamp an earlier run left under `stats/`, for `--reuse-stats`, and checks that
/// the CSVs it says nsys wrote are there.
pub fn read_stamp(stats_dir: &Path) -> anyhow::Result<StatsStamp> {
    let path = stats_dir.join(STAMP_FILE);
    let bytes = nsys_gate_core::files::read_regular(&path, MAX_STAMP_BYTES).with_context(|| {
        format!(
            "--reuse-stats: cannot read {} (hint: run `nsys-gate analyze` without --reuse-stats once, so that nsys writes the CSVs and this stamp)",
            shown_path(&path)
        )
    })?;
    let stamp: StatsStamp = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "--reuse-stats: {} is not a stamp nsys-gate wrote",
            shown_path(&path)
        )
    })?;
    for report in ReportName::ALL {
        let csv = csv_path(stats_dir, report.as_str());
        if stamp.status(report).is_written() && !csv.is_file() {
            return Err(anyhow!(
                "--reuse-stats: {} is missing although {} says nsys wrote it",
                shown_path(&csv),
                shown_path(&path)
            ));
        }
    }
    Ok(stamp)
}

/// The SQLite export `nsys stats` makes of a `.nsys-rep` trace, under the stats folder. It holds
/// the whole trace, the profiled process's environment included: the pipeline removes it once
/// the reports are written, unless `--keep-export`.
pub const EXPORT_FILE: &str = "trace.sqlite";

/// Whether the trace is a SQLite export, used as is (contract section 1).
pub fn is_sqlite_trace(trace: &Path) -> bool {
    trace.extension().is_some_and(|e| e == "sqlite")
}
