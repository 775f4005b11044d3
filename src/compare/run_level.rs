//! One run reduced to what the comparison needs: its key, its conditions, one value per
//! measure (the median of its counted iterations), each range's time per counted iteration,
//! its GPU work's totals, and (for the within-pair interval) its per-iteration durations.
//!
//! A base branch's history can be a hundred runs of tens of thousands of iterations each, so
//! each analysis is reduced as soon as it is read and dropped: what is kept is a few numbers
//! per range and two lists of durations.

use std::collections::BTreeMap;

use serde_json::Value;

use super::conditions;
use crate::artifact::comparison::{BaseRun, ConditionName, RunKey, RunRef};
use crate::artifact::{Analysis, GpuWork, MemoryCopies};
use crate::stats::Sample;

/// A run as the comparison uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLevel {
    pub run: RunRef,
    pub key: RunKey,
    /// What the run recorded for each condition, in [`ConditionName::ALL`] order.
    pub conditions: Vec<Value>,
    /// Whether nsys made a GPU projection for the run.
    pub gpu_available: bool,
    /// Counted iterations.
    pub iterations: u64,
    /// The median host inclusive time of the counted iterations.
    pub host_inclusive_ns: Option<f64>,
    /// The median GPU-projected time of the counted iterations that launched GPU work.
    pub gpu_projected_ns: Option<f64>,
    /// Host exclusive time per counted iteration, by scoped range name.
    pub host_ranges: BTreeMap<String, f64>,
    /// GPU-projected time per counted iteration, by scoped range name (empty without a
    /// projection).
    pub gpu_ranges: BTreeMap<String, f64>,
    /// The capture's kernels by name and memory copies by kind, total time of each; `None`
    /// when the run records no GPU work.
    pub gpu_work: Option<WorkTotals>,
    /// The counted iterations' host inclusive durations, in index order.
    pub host_samples: Vec<f64>,
    /// The counted iterations' GPU-projected durations (those that launched GPU work).
    pub gpu_samples: Vec<f64>,
    /// `auto`: the workflow run the analysis came from, and when the forge created it.
    pub workflow_run_id: Option<u64>,
    pub created_at: Option<String>,
}

/// A run's GPU work, item by item: total time of each in the capture.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkTotals {
    pub kernels: BTreeMap<String, f64>,
    pub memory_copies: BTreeMap<String, f64>,
}

impl RunLevel {
    /// `analysis` (read from `path`, as people should see it) reduced.
    pub fn of(analysis: &Analysis, path: &str) -> RunLevel {
        let gpu_available = analysis.gpu_projection_available();
        let host_samples: Vec<f64> = analysis
            .counted_iterations()
            .map(|i| i.host.inclusive_ns as f64)
            .collect();
        let gpu_samples: Vec<f64> = if gpu_available {
            analysis
                .counted_iterations()
                .filter_map(|i| i.gpu_projection.as_ref().map(|g| g.projected_ns as f64))
                .collect()
        } else {
            Vec::new()
        };
        let counted = analysis.counted();
        let per_iteration = |total: i64| {
            if counted == 0 {
                0.0
            } else {
                total as f64 / counted as f64
            }
        };
        RunLevel {
            run: run_ref(analysis, path),
            key: key(analysis),
            conditions: ConditionName::ALL
                .iter()
                .map(|&name| conditions::value(name, analysis))
                .collect(),
            gpu_available,
            iterations: counted,
            host_inclusive_ns: median(&host_samples),
            gpu_projected_ns: median(&gpu_samples),
            host_ranges: analysis
                .host_ranges
                .iter()
                .map(|r| (r.name.clone(), per_iteration(r.exclusive.total_ns)))
                .collect(),
            gpu_ranges: if gpu_available {
                analysis
                    .gpu_projected_ranges
                    .iter()
                    .map(|r| (r.name.clone(), per_iteration(r.projected.total_ns)))
                    .collect()
            } else {
                BTreeMap::new()
            },
            gpu_work: analysis.gpu_work.as_ref().map(work_totals),
            host_samples,
            gpu_samples,
            workflow_run_id: None,
            created_at: None,
        }
    }

    /// The run's value of a measure.
    pub fn value(&self, measure: crate::artifact::comparison::MeasureName) -> Option<f64> {
        use crate::artifact::comparison::MeasureName;
        match measure {
            MeasureName::HostInclusive => self.host_inclusive_ns,
            MeasureName::GpuProjected => self.gpu_projected_ns.filter(|_| self.gpu_available),
        }
    }

    /// The run as a base run of a history, at `position` (oldest 0).
    pub fn base_run(&self, position: usize) -> BaseRun {
        BaseRun {
            position: position as u64,
            run_id: self.run.run_id.clone(),
            git_commit: self.run.git_commit.clone(),
            analysis_path: self.run.analysis_path.clone(),
            workflow_run_id: self.workflow_run_id,
            created_at: self.created_at.clone(),
            iterations: self.iterations,
            host_inclusive_ns: self.host_inclusive_ns,
            gpu_projected_ns: self.gpu_projected_ns.filter(|_| self.gpu_available),
        }
    }
}

/// The run as the comparison names it.
pub fn run_ref(a: &Analysis, path: &str) -> RunRef {
    let run = &a.run;
    RunRef {
        profile_name: run.profile_name.clone(),
        target: target_name(a),
        run_id: run.run_id.clone(),
        git_commit: run.git_commit.clone(),
        analysis_path: path.to_owned(),
    }
}

/// The run's key: profile, target, and its leg (the label, else the GPU names).
pub fn key(a: &Analysis) -> RunKey {
    let gpus = a
        .gpu_work
        .as_ref()
        .map(|w| w.gpu_names().join(", "))
        .filter(|n| !n.is_empty());
    RunKey {
        profile_name: a.run.profile_name.clone(),
        target: target_name(a),
        leg: a.label.clone().or(gpus),
    }
}

/// `run.target.name`, when the target is a mapping with a string name.
pub fn target_name(a: &Analysis) -> Option<String> {
    a.run
        .target
        .as_ref()
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The median of durations, as the analysis computes medians; `None` when there are none.
fn median(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| Sample::new(values.iter().map(|&v| v as i64).collect()).median())
}

fn work_totals(w: &GpuWork) -> WorkTotals {
    let mut totals = WorkTotals::default();
    for k in w.kernels.iter().flatten() {
        *totals.kernels.entry(k.name.clone()).or_default() += k.total_ns as f64;
    }
    for c in w.memory_copies.iter().flatten() {
        *totals.memory_copies.entry(copy_label(c)).or_default() += c.total_ns as f64;
    }
    totals
}

/// `Host-to-Device · Pageable → Device`.
fn copy_label(c: &MemoryCopies) -> String {
    format!(
        "{} · {} → {}",
        c.copy_kind,
        c.source.as_deref().unwrap_or("?"),
        c.destination.as_deref().unwrap_or("?")
    )
}
