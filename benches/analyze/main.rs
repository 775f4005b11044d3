//! Benchmark of what `nsys-gate analyze --reuse-stats` and the report do with large traces:
//! reading both CSV reports, the analysis, writing analysis.json, and rendering the report,
//! over generated reports of realistic shape (see `gen.rs`).
//!
//!     cargo bench --bench analyze                        # 100k, 1M and 5M push/pop rows
//!     cargo bench --bench analyze -- --rows 1000000      # one size
//!     cargo bench --bench analyze -- --keep DIR          # leave the generated run directory
//!
//! The run directories are generated first; then three rounds over the sizes each run the
//! pipeline once per size in a process of its own (so that its peak memory, VmHWM, is its
//! own), and each size's best round is reported. The
//! 1M-row size is also timed through the release binary (`analyze --reuse-stats`), the way a
//! second CI job would run it. Under `cargo test --all-targets` this runs once on 20,000 rows
//! as a smoke test.

// The 120-line limit is for the program's own code (src/).
#![allow(clippy::too_many_lines)]

mod gen;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nsys_gate::gate::GateConfig;
use nsys_gate::outcome::RunOutcome;
use nsys_gate::progress::Progress;
use nsys_gate::render::{Budget, RenderOptions, Renderer, Template};
use nsys_gate::{AnalyzeOptions, NsysChoice, StatsPlan};

const SIZES: &[usize] = &[100_000, 1_000_000, 5_000_000];

/// Rounds over the sizes; each size's best round is reported.
const ROUNDS: usize = 3;

fn peak_memory_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// A run directory `DIR/clean` holding the clean fixture's manifest (with the generated
/// number of iterations), a trace file, and generated CSVs with the stamp an earlier
/// `nsys stats` would have left.
fn make_run_dir(root: &Path, rows: usize) -> (PathBuf, usize) {
    let dir = root.join("clean");
    std::fs::create_dir_all(dir.join("stats")).unwrap();
    let (written, iterations) = gen::generate(&dir.join("stats"), rows).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(repo.join("tests/fixtures/clean/manifest.yaml"))
        .unwrap()
        .replace(
            "  iterations: 5\n",
            &format!("  iterations: {iterations}\n"),
        );
    std::fs::write(dir.join("manifest.yaml"), manifest).unwrap();
    std::fs::write(dir.join("trace.nsys-rep"), b"").unwrap();
    std::fs::write(
        dir.join("stats/nsys-gate-stats.json"),
        r#"{"nsys_version": "2024.2.3.38-242334140272v0", "legacy_reports": false,
            "reports": {"nvtx_pushpop_trace": {"status": "written"},
                        "nvtx_gpu_proj_trace": {"status": "written"}}}"#,
    )
    .unwrap();
    (dir, written)
}

/// One pipeline run on the run directory `dir` (`written` push/pop rows), in this process:
/// prints one `result` line.
fn measure(dir: &Path, written: usize) {
    let csv_bytes = std::fs::metadata(dir.join("stats/nsys_nvtx_pushpop_trace.csv"))
        .unwrap()
        .len();
    let base = peak_memory_kib();
    let options = AnalyzeOptions {
        run_dir: dir.to_path_buf(),
        nsys: NsysChoice::Search,
        nsys_timeout: Duration::from_secs(1),
        stats_plan: StatsPlan { processes: 1 },
        output: None,
        reuse_stats: true,
        keep_export: false,
        gate: GateConfig::default(),
        label: None,
        ci_run: None,
        runner: None,
    };
    let started = Instant::now();
    let (analysis, path) = nsys_gate::analyze(&options, &mut Progress::quiet()).unwrap();
    let pipeline = started.elapsed();
    let peak = peak_memory_kib();
    let started = Instant::now();
    let template = Template::builtin();
    let report = Renderer::new(&template)
        .unwrap()
        .render(
            &[RunOutcome::Analysed {
                analysis: Box::new(analysis),
                path,
            }],
            &RenderOptions {
                top: 10,
                budget: Budget::Chars(65_536),
                exact_names: false,
                links: nsys_gate::render::Links::default(),
                from_artifact: false,
            },
        )
        .unwrap();
    let render = started.elapsed();
    assert!(report.len() <= 65_536 * 4);
    println!(
        "result rows={written} csv_mb={:.1} pipeline_s={:.3} render_s={:.3} peak_kib={peak} base_kib={base}",
        csv_bytes as f64 / 1e6,
        pipeline.as_secs_f64(),
        render.as_secs_f64(),
    );
}

/// Runs [`measure`] in a process of its own, so that its peak memory is its own.
fn measure_in_child(dir: &Path, written: usize) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--child", "--written", &written.to_string(), "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.starts_with("result "))
        .unwrap_or_else(|| {
            panic!(
                "no result for {}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .to_owned()
}

fn field(line: &str, key: &str) -> f64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Times the release binary on the 1M-row run directory, as a CI job would run it.
fn time_cli(dir: &Path, written: usize) {
    let bin = env!("CARGO_BIN_EXE_nsys-gate");
    let mut times = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let out = Command::new(bin)
            .args(["analyze", "--reuse-stats", "--run-dir"])
            .arg(dir)
            .output()
            .unwrap();
        times.push(started.elapsed().as_secs_f64());
        assert!(
            out.status.code() == Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort_by(f64::total_cmp);
    println!(
        "\nnsys-gate analyze --reuse-stats, {written} push/pop rows: best {:.3} s, median {:.3} s (3 runs)",
        times[0], times[1]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let rows: Option<usize> = value("--rows").map(|v| v.parse().expect("--rows N"));
    let keep = value("--keep").map(PathBuf::from);
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it.
    let benching = args.iter().any(|a| a == "--bench");

    if args.iter().any(|a| a == "--child") {
        let dir = PathBuf::from(value("--dir").expect("--dir DIR"));
        measure(
            &dir,
            value("--written").and_then(|v| v.parse().ok()).unwrap_or(0),
        );
        return;
    }
    if !benching {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, written) = make_run_dir(tmp.path(), rows.unwrap_or(20_000));
        measure(&dir, written);
        return;
    }

    let sizes: Vec<usize> = rows.map(|r| vec![r]).unwrap_or_else(|| SIZES.to_vec());
    let tmp = tempfile::tempdir().unwrap();
    let root = keep.unwrap_or_else(|| tmp.path().to_path_buf());
    eprintln!("generating {sizes:?} push/pop rows in {}", root.display());
    let dirs: Vec<(PathBuf, usize)> = sizes
        .iter()
        .map(|&size| make_run_dir(&root.join(size.to_string()), size))
        .collect();
    // Rounds over the sizes, so that each size is measured at about the same times as the
    // others (the load of a shared machine drifts); each size's best time is kept, and the
    // rest of its first round (the peak memory is the same in every round).
    let mut first: Vec<String> = Vec::new();
    let mut best = vec![f64::INFINITY; dirs.len()];
    for round in 1..=ROUNDS {
        eprintln!("round {round} of {ROUNDS}");
        for (k, (dir, written)) in dirs.iter().enumerate() {
            let line = measure_in_child(dir, *written);
            best[k] = best[k].min(field(&line, "pipeline_s"));
            if round == 1 {
                first.push(line);
            }
        }
    }
    println!(
        "{:>10} {:>9} {:>12} {:>14} {:>10} {:>14} {:>12}",
        "rows", "CSV MB", "pipeline s", "rows/s", "render s", "peak MiB", "bytes/row"
    );
    let mut results = Vec::new();
    for (line, pipeline) in first.iter().zip(best) {
        let (n, mb, render, peak) = (
            field(line, "rows"),
            field(line, "csv_mb"),
            field(line, "render_s"),
            field(line, "peak_kib"),
        );
        println!(
            "{n:>10} {mb:>9.1} {pipeline:>12.3} {:>14.0} {render:>10.3} {:>14.1} {:>12.0}",
            n / pipeline,
            peak / 1024.0,
            peak * 1024.0 / n
        );
        results.push((n, pipeline));
    }
    if let (Some(one), Some(five)) = (
        results
            .iter()
            .find(|r| r.0 >= 900_000.0 && r.0 <= 1_100_000.0),
        results.iter().find(|r| r.0 >= 4_500_000.0),
    ) {
        println!(
            "\n5M / 1M pipeline time: {:.2}x for {:.2}x the rows",
            five.1 / one.1,
            five.0 / one.0
        );
    }
    if let Some((dir, written)) = dirs.iter().find(|(_, w)| (900_000..=1_100_000).contains(w)) {
        time_cli(dir, *written);
    }
}
