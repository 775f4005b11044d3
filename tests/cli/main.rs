//! The one integration-test binary: the built `nsys-gate` run on real traces with real nsys.
#![allow(clippy::too_many_lines)] // test functions may be long; the limit is for src/

mod action;
mod advice;
mod baseline_auto;
mod baseline_faults;
mod common;
mod compare;
mod compare_where;
mod csv_input;
mod environment;
mod faults;
mod file_server;
mod files;
mod fixtures;
mod github_server;
mod gitlab;
mod gitlab_pipeline;
mod gitlab_server;
mod gpu_work;
mod gpu_work_per_iteration;
mod help;
mod history_sources;
mod injection;
mod junit;
mod nsys_failures;
mod output;
mod post;
mod report;
mod report_layout;
mod run_dir;
mod secrets;
mod signals;
mod trust;
mod workflows;
