//! Stages 1-6 of nsys-gate for one run directory (docs/architecture.md draws them):
//!
//! 1. [`rundir`] + [`manifest`]: read `manifest.yaml`, check the trace belongs to the run;
//! 2. [`nsys`]: find nsys, run `nsys stats` for the five reports (one call, or concurrent
//!    processes over one export: [`nsys::StatsPlan`]), classify what it did with each;
//!    [`trace_env`] reads what the trace recorded of its machine (the GPUs, the driver, the
//!    environment's names);
//! 3. [`reports`]: read the CSV reports into compact rows: the two NVTX ones (required) and
//!    the three GPU-work ones (each optional);
//! 4. [`analysis`]: iterations, statistics, range tables, warnings, advice;
//! 5. and 6. the gate and analysis.json, whose types are `nsys_gate_core`'s.
//!
//! [`pipeline`] runs them in order, with [`progress`] on standard error.

pub mod analysis;
pub mod manifest;
pub mod nsys;
pub mod pipeline;
pub mod progress;
pub mod reports;
pub mod rundir;
pub mod trace_env;
