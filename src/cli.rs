//! Command-line interface: clap derive types only. Everything here is converted into plain
//! option structs before any work starts.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

use crate::artifact::WarningCode;

/// `--noise-floor PCT`: a percentage from 0 to 100; `-0` is 0 (comparison.json never holds
/// `-0.0`).
fn noise_floor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        // Adding +0.0 turns -0.0 into 0.0 and leaves every other number as it is.
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v + 0.0),
        _ => Err(format!("`{text}` is not a percentage from 0 to 100")),
    }
}

/// `--gate-on CODE`: one of the warning codes, listed in `--help` and in clap's errors.
fn warning_code() -> impl clap::builder::TypedValueParser<Value = WarningCode> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(WarningCode::ALL.map(WarningCode::as_str))
        .map(|name| WarningCode::from_name(&name).expect("clap accepts only the codes' names"))
}

/// Turns Nsight Systems NVTX reports of a profiling run into analysis.json and a CI gate.
#[derive(Debug, Parser)]
#[command(name = "nsys-gate", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyse one run directory: run `nsys stats`, read its CSVs, write analysis.json.
    ///
    /// Exit status: 0 analysis written and no gating warning; 1 analysis written with a
    /// gating warning; 2 no analysis (bad arguments, bad manifest, nsys missing or failed,
    /// unreadable reports).
    Analyze(AnalyzeArgs),

    /// Render the analysis.json of run directories as one markdown report.
    ///
    /// Writes DIR/report.md (the first run directory's) or --output. Inside GitHub Actions
    /// (GITHUB_ACTIONS=true) also appends the report to $GITHUB_STEP_SUMMARY, turns warnings
    /// into annotations and sets the step outputs analysis-paths, report-path, gate,
    /// warnings and comparison-path. With --baseline, the report compares the runs with a
    /// baseline and comparison.json is written beside report.md (never changing the exit
    /// status).
    ///
    /// Exit status over all run directories: 0 no gating warning; 1 a gating warning; 2 a run
    /// directory without a readable analysis.json, or a broken template.
    Report(ReportArgs),

    /// Analyse run directories, render one report covering all of them, and gate.
    ///
    /// Runs `analyze` on each run directory, renders the report (also for run directories
    /// that could not be analysed), writes it to the first run directory's report.md (or
    /// --output), prints it, and in GitHub Actions writes the step summary, annotations and
    /// step outputs as `report` does. On a pull request it then posts the report as one
    /// pull-request comment per key, updated in place (see `post`), unless --no-post.
    ///
    /// Exit status over all run directories: 0 no gating warning; 1 a gating warning in
    /// any; 2 any could not be analysed (or bad arguments, or a broken template). A failed
    /// post is a warning and does not change it, unless --fail-on-post-error (then 2).
    Run(RunArgs),

    /// Post the report as the pull request's comment, updated in place.
    ///
    /// Two sources: --report FILE posts a report.md that this same job rendered, as it is;
    /// --analyses DIR renders the comment here from the analysis.json files under DIR (the
    /// artifact of another job, such as a fork's pull request's: the `workflow_run` half of
    /// the fork-safe pattern) and posts that.
    ///
    /// The comment of a key (default: for --report the key in the report's first line,
    /// `<!-- nsys-gate:KEY -->`, which `run` and `report` set to the profile names; for
    /// --analyses the profile names of the analyses read) is found by that marker and its
    /// author, updated with PATCH when it differs, created when missing. The token comes
    /// from $GITHUB_TOKEN (or --token-env), the repository from --repo or
    /// $GITHUB_REPOSITORY, the API from --api-url or $GITHUB_API_URL, the pull request from --pr or the
    /// event at $GITHUB_EVENT_PATH (pull_request, pull_request_target, workflow_run). Without
    /// a pull request (push, schedule, …) nothing is posted.
    ///
    /// Exit status: 0 posted, unchanged or skipped (no pull request); 2 posting failed.
    Post(PostArgs),

    /// Compare the base runs with the current runs: conditions first, then each measure's
    /// change against the run-to-run noise the base runs show, range by range.
    ///
    /// `compare BASE... HEAD`: every path but the last is a base path, oldest first; the last
    /// is HEAD. Each is an analysis.json, a run directory holding one, or a folder searched
    /// for analysis.json files (16 levels at most, symlinks not followed; a folder's files in
    /// path order). Runs are matched by key (profile, target, label or GPU names); the base
    /// runs of a key are its history, its current runs repeats of the head. A verdict
    /// (`slower`, `faster`) needs 3 base runs of the head's conditions. Prints the
    /// comparison as markdown; --json FILE also writes comparison.json.
    ///
    /// A base path that gives no run while others do is a warning naming it (`BASE: PATH:
    /// why`) and a note in the comparison.
    ///
    /// Exit status: 0 compared (whatever the timings say: a difference is never a gate); 2
    /// not compared: HEAD has no readable analysis.json, or none of the base paths has one.
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base runs (every path but the last, oldest first), then the current runs (the
    /// last): each an analysis.json, a run directory, or a folder of them.
    #[arg(value_name = "PATH", num_args = 2.., required = true)]
    pub paths: Vec<PathBuf>,

    /// Changes smaller than this many percent are never `slower` or `faster`, however far
    /// outside the noise.
    #[arg(long, value_name = "PCT", default_value_t = crate::compare::DEFAULT_NOISE_FLOOR_PCT, value_parser = noise_floor)]
    pub noise_floor: f64,

    /// A top-level manifest key nsys-gate does not know (kept in `run.extra`), or `cpu` or `os`
    /// (as the trace recorded them), judged as a condition: runs that differ in it are not
    /// like for like (repeatable). Without it such a key is only shown when it differs; every
    /// key under `workload` is always judged.
    #[arg(long = "condition", value_name = "KEY")]
    pub conditions: Vec<String>,

    /// Also write comparison.json to FILE (`-`: standard output, instead of the markdown).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Rows of each range table.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..))]
    pub top: u16,

    /// Compare ranges by their exact names; by default names that differ only in decimal
    /// numbers (`layer_3_token_6`) are compared together (`layer_#_token_#`), as the report
    /// shows them.
    #[arg(long)]
    pub exact_names: bool,
}

/// The baseline the report compares the runs with: shared by `report`, `run` and `post`.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Baseline options")]
pub struct BaselineArgs {
    /// Compare with the base branch's history: PATH (an analysis.json, a run directory, or a
    /// folder of them; repeatable, oldest first), or `auto`: the analysis.json files of the
    /// artifacts --baseline-artifact of the newest --baseline-runs successful push runs of
    /// --baseline-workflow on the pull request's base branch (up to its base commit), or on a
    /// push the branch's own, through the REST API. Whatever is missing is a note in the
    /// report, never an error, and timings never change the exit status.
    #[arg(long, value_name = "PATH|auto")]
    pub baseline: Vec<String>,

    /// `auto`: how many of the base branch's newest successful push runs make the history
    /// (1 to 100; a verdict needs 3).
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub baseline_runs: u16,

    /// Changes smaller than this many percent are never `slower` or `faster`, however far
    /// outside the noise.
    #[arg(long, value_name = "PCT", default_value_t = crate::compare::DEFAULT_NOISE_FLOOR_PCT, value_parser = noise_floor)]
    pub noise_floor: f64,

    /// A top-level manifest key nsys-gate does not know (kept in `run.extra`), or `cpu` or `os`
    /// (as the trace recorded them), judged as a condition: runs that differ in it are not
    /// like for like (repeatable). Without it such a key is only shown when it differs; every
    /// key under `workload` is always judged.
    #[arg(long = "condition", value_name = "KEY")]
    pub conditions: Vec<String>,

    /// `auto`: the workflow whose runs hold the baseline: its file name (`profile.yml`) or
    /// numeric ID [default: this run's workflow file, from $GITHUB_WORKFLOW_REF].
    #[arg(long, value_name = "FILE|ID")]
    pub baseline_workflow: Option<String>,

    /// `auto`: how many of the base runs' requests are under way at once (a run's locating
    /// and its download, redirect included, each count one); 1 fetches one after another.
    #[arg(long, value_name = "N", default_value_t = crate::history::CONCURRENT_REQUESTS, value_parser = clap::value_parser!(u16).range(1..=16), hide = true)]
    pub baseline_concurrency: u16,

    /// `auto` on GitLab: the job whose artifacts hold the analysis.json files in each of the
    /// target branch's push pipelines [default: this job's name, $CI_JOB_NAME].
    #[arg(long, value_name = "NAME")]
    pub baseline_job: Option<String>,

    /// `auto`: the name of the artifact holding the base branch's analysis.json files.
    #[arg(long, value_name = "NAME", default_value = "nsys-gate-analysis")]
    pub baseline_artifact: String,

    /// `auto`: the deadline of finding and fetching the base runs. One deadline for the whole
    /// stage, covering every request, page, redirect and byte of the body (each download, and
    /// every wait for a retry, included), not a limit per request: the runs fetched by then
    /// are the history, the others a note in the report.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub baseline_timeout: u64,
}

/// The REST API for `--baseline auto` in `report` (`run` uses its comment options).
#[derive(Debug, Args)]
#[command(next_help_heading = "Forge options")]
pub struct ApiArgs {
    /// Repository OWNER/NAME [default: the CI's own].
    #[arg(long, value_name = "OWNER/NAME", env = "GITHUB_REPOSITORY")]
    pub repo: Option<String>,

    /// The REST API's base URL [default: the CI's own, else `https://api.github.com`] (GitHub
    /// Enterprise Server: `https://HOST/api/v3`).
    #[arg(long, value_name = "URL", env = "GITHUB_API_URL")]
    pub api_url: Option<String>,

    /// Environment variable holding the API token [default: GITHUB_TOKEN; GitLab:
    /// GITLAB_TOKEN].
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
}

/// Where and as whom the pull-request comment is posted.
#[derive(Debug, Args)]
#[command(next_help_heading = "Comment options")]
pub struct CommentArgs {
    /// Repository OWNER/NAME [default: the CI's own].
    #[arg(long, value_name = "OWNER/NAME", env = "GITHUB_REPOSITORY")]
    pub repo: Option<String>,

    /// The REST API's base URL [default: the CI's own, else `https://api.github.com`] (GitHub
    /// Enterprise Server: `https://HOST/api/v3`; Gitea and Forgejo: `https://HOST/api/v1`;
    /// GitLab: `https://HOST/api/v4`).
    #[arg(long, value_name = "URL", env = "GITHUB_API_URL")]
    pub api_url: Option<String>,

    /// Pull-request number (GitLab: the merge request's IID) [default: from the event at
    /// $GITHUB_EVENT_PATH; GitLab: $CI_MERGE_REQUEST_IID].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub pr: Option<u64>,

    /// One comment per key: the key of this report's comment [default: the report's profile
    /// names, sorted, joined with `,`].
    #[arg(long, value_name = "KEY")]
    pub comment_key: Option<String>,

    /// Environment variable holding the API token [default: GITHUB_TOKEN; GitLab:
    /// GITLAB_TOKEN].
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,

    /// Login of the comment's author to update (`*`: any author) [default: github-actions[bot],
    /// as which the workflow token posts; GitLab: the token's own user].
    #[arg(long, value_name = "LOGIN")]
    pub comment_author: Option<String>,

    /// The deadline of posting. One deadline for the whole stage, covering every request,
    /// page, redirect and byte of the body (every retry and wait for a rate limit included),
    /// not a limit per request: what is not done by then is not done.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub post_timeout: u64,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["report", "analyses"])))]
pub struct PostArgs {
    /// A report that this same job rendered (`run`'s or `report`'s report.md), posted as it
    /// is, word for word, under the key of its first line's marker. Never a report from
    /// another job's artifact, such as a fork's (whatever it says would be posted with this
    /// job's token): use --analyses for that.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Render the comment from the analysis.json files under DIR and post it: for an
    /// artifact of another job, such as a fork's pull request's (the fork-safe pattern).
    /// DIR and the folders below it (16 levels at most) are searched for regular files named
    /// analysis.json (256 at most; symlinks are not followed; anything else, report.md
    /// included, is ignored). They are read as data: rendered with the built-in template,
    /// every name escaped as in any report, under the key of their profile names (or
    /// --comment-key, which comes from this command line, never from the artifact).
    #[arg(long, value_name = "DIR")]
    pub analyses: Option<PathBuf>,

    /// With --analyses: show exact range names instead of groups (see `run --exact-names`).
    #[arg(long, requires = "analyses")]
    pub exact_names: bool,

    /// With --analyses: also write the gate this command recomputed as a JUnit XML report to
    /// FILE (see `run --junit`).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// With --analyses: the gate the comment shows is recomputed from each analysis's
    /// warnings with this command's gate settings (the default set, --gate-on, --no-gate-on),
    /// never the gate the artifact says it had: another job's artifact, such as a fork's,
    /// can say anything.
    #[command(flatten)]
    pub gate: GateArgs,
    /// With --analyses: compare them with a baseline (see `report --baseline`); in the
    /// fork-safe pair, `auto` takes the base branch's artifact of the workflow that triggered
    /// this `workflow_run`.
    #[command(flatten)]
    pub baseline: BaselineArgs,

    #[command(flatten)]
    pub comment: CommentArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directory holding analysis.json (repeatable: one report covers all).
    #[arg(long = "run-dir", value_name = "DIR", required = true)]
    pub run_dirs: Vec<PathBuf>,

    /// Where to write the report (`-`: standard output) [default: DIR/report.md of the first
    /// run directory].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write the gate as a JUnit XML report to FILE, whether it passes or fails: one
    /// test case per warning code of the gate set, failed when a warning of it was raised
    /// (GitLab shows it in the merge request with `artifacts: reports: junit: FILE`).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    #[command(flatten)]
    pub render: RenderArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    #[command(flatten)]
    pub api: ApiArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run directory holding manifest.yaml and the trace (repeatable: one report covers all).
    #[arg(long = "run-dir", value_name = "DIR", required = true)]
    pub run_dirs: Vec<PathBuf>,

    /// Do not post the report as a pull-request comment.
    #[arg(long)]
    pub no_post: bool,

    /// Exit with status 2 when posting the comment fails (by default a warning).
    #[arg(long)]
    pub fail_on_post_error: bool,

    /// Where to write the report [default: DIR/report.md of the first run directory].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write the gate as a JUnit XML report to FILE, whether it passes or fails: one
    /// test case per warning code of the gate set, failed when a warning of it was raised
    /// (GitLab shows it in the merge request with `artifacts: reports: junit: FILE`).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    #[command(flatten)]
    pub render: RenderArgs,

    #[command(flatten)]
    pub analysis: AnalysisArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    #[command(flatten)]
    pub comment: CommentArgs,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Run directory holding manifest.yaml and the trace.
    #[arg(long, value_name = "DIR")]
    pub run_dir: PathBuf,

    /// Where to write the analysis [default: RUN_DIR/analysis.json].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

/// How the report is rendered: shared by `report` and `run`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// minijinja template to render instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,

    /// Rows of each range table.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..))]
    pub top: u16,

    /// Show exact range names in the report's tables; by default names that differ only in
    /// decimal numbers (`layer_3_token_6`) are shown together (`layer_#_token_#`). Advice is
    /// always about such groups.
    #[arg(long)]
    pub exact_names: bool,
}

/// Which warning codes fail the gate: shared by `analyze`, `run` and `post --analyses` (which
/// recomputes the gate of another job's analyses with them).
#[derive(Debug, Args, Clone, Default)]
pub struct GateArgs {
    /// Also fail the job on this warning code (repeatable).
    #[arg(long, value_name = "CODE", value_parser = warning_code())]
    pub gate_on: Vec<WarningCode>,

    /// Do not fail the job on this warning code (repeatable).
    #[arg(long, value_name = "CODE", value_parser = warning_code())]
    pub no_gate_on: Vec<WarningCode>,
}

impl GateArgs {
    /// Whether any code was given.
    pub fn is_empty(&self) -> bool {
        self.gate_on.is_empty() && self.no_gate_on.is_empty()
    }
}

/// How run directories are analysed: shared by `analyze` and `run`.
#[derive(Debug, Args)]
pub struct AnalysisArgs {
    /// nsys executable [default: PATH, then the usual install places]. Empty: the default.
    #[arg(long, value_name = "PATH", env = "NSYS", value_parser = clap::value_parser!(OsString))]
    pub nsys: Option<OsString>,

    /// Kill nsys and fail the run directory when `nsys stats` runs longer than this.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    pub nsys_timeout: u64,

    /// How many `nsys stats` processes run the reports at once [default: 3 with two cores or
    /// more, else 1]. 1: one `nsys stats` call makes the export and every report.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub nsys_processes: Option<u8>,

    /// Analyse the CSVs already under DIR/stats/ without running nsys.
    #[arg(long)]
    pub reuse_stats: bool,

    /// Keep nsys's SQLite export DIR/stats/trace.sqlite (removed by default once the reports
    /// are written: it holds the whole trace, the profiled process's environment included).
    #[arg(long)]
    pub keep_export: bool,

    #[command(flatten)]
    pub gate: GateArgs,

    /// A label for the run directory, kept in analysis.json (`label`): the report titles run
    /// directories of one profile and run id with their GPU's name, else with this.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_noise_floor_of_minus_zero_is_zero() {
        for text in ["-0", "-0.0", " -0 ", "0"] {
            let v = noise_floor(text).unwrap();
            assert!(v == 0.0 && v.is_sign_positive(), "{text}: {v:?}");
        }
        assert_eq!(noise_floor("2.5"), Ok(2.5));
        for bad in ["-1", "100.1", "nan", "inf", "-inf", "x"] {
            assert!(noise_floor(bad).is_err(), "{bad}");
        }
    }
}
