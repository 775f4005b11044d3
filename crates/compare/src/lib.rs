//! Stage 7 of nsys-gate: the current runs against the base branch's history
//! (docs/architecture.md).
//!
//! - [`load`]: analysis.json read back (bounded, no-follow);
//! - [`unpack`]: a CI artifact's archive, unpacked with bounds;
//! - [`history`]: `--baseline auto`'s loop over the runs a forge lists (download, unpack, read,
//!   reduce), a forge implementing [`history::Archives`];
//! - [`compare`]: the verdict: each run reduced to its level, the runners' and the history's
//!   noise, the conditions, the ranges and the GPU work.

pub mod compare;
pub mod history;
pub mod load;
pub mod unpack;
