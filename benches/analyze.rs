//! Benchmark: reading both CSV reports, analysing them and writing analysis.json, over a
//! generated push/pop report (1,000,000 rows by default) with its GPU projection.
//!
//!     cargo bench --bench analyze                 # 1,000,000 push/pop rows
//!     cargo bench --bench analyze -- --rows 100000
//!     cargo bench --bench analyze -- --keep DIR   # leave the generated CSVs in DIR
//!
//! Under `cargo test --all-targets` it runs once on 20,000 rows as a smoke test.
//!
//! Prints the time of each stage, rows per second and the process's peak memory (VmHWM).
//! The CSVs are written the way nsys writes them (quoted names with commas, raw quotes).

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use nsys_gate::analysis::{self, Reports, Settings};
use nsys_gate::reports::{self, Interner};

/// Ranges per iteration: the iteration, preprocessing > (resize, normalize),
/// inference > LAYERS x (layer N > (matmul, "act,fn \"gelu\"")), postprocessing > resize.
const LAYERS: usize = 32;
const PER_ITERATION: usize = 1 + 3 + 1 + LAYERS * 3 + 2;

struct Gen<W: Write> {
    pushpop: W,
    gpu: W,
    next_id: u64,
    clock: i64,
    rows: usize,
}

struct Open {
    id: u64,
    start: i64,
    name: String,
    lvl: usize,
    stack: String,
    child_total: i64,
    children: usize,
}

fn field(name: &str) -> String {
    if name.contains(',') {
        format!("\"{name}\"")
    } else {
        name.to_owned()
    }
}

impl<W: Write> Gen<W> {
    fn push(&mut self, parent: Option<&Open>, name: &str) -> Open {
        self.next_id += 1;
        self.clock += 250;
        let stack = match parent {
            Some(p) => format!("{}:{}", p.stack, self.next_id),
            None => format!(":{}", self.next_id),
        };
        Open {
            id: self.next_id,
            start: self.clock,
            name: name.to_owned(),
            lvl: parent.map_or(0, |p| p.lvl + 1),
            stack,
            child_total: 0,
            children: 0,
        }
    }

    fn pop(&mut self, r: Open, parent: Option<&mut Open>, work: i64, gpu_ops: u64) {
        self.clock += work;
        let end = self.clock;
        let duration = end - r.start;
        let parent_id = parent.as_ref().map_or(String::new(), |p| p.id.to_string());
        writeln!(
            self.pushpop,
            "{},{},{},{},{},{},4242,4242,{},{},{},{},{},{}",
            r.start,
            end,
            duration,
            r.child_total,
            duration - r.child_total,
            field(&r.name),
            r.lvl,
            r.children,
            r.id,
            parent_id,
            r.stack,
            field(&format!("{}{}", "-".repeat(2 * r.lvl), r.name)),
        )
        .unwrap();
        self.rows += 1;
        if gpu_ops > 0 {
            writeln!(
                self.gpu,
                "{},{},{},{},{},PushPop,4242,4242,{},{},{},{},{},{}",
                field(&r.name),
                r.start + 5_000,
                duration,
                r.start,
                duration,
                gpu_ops,
                r.lvl,
                r.children,
                r.id,
                parent_id,
                r.stack
            )
            .unwrap();
        }
        if let Some(p) = parent {
            p.child_total += duration;
            p.children += 1;
        }
    }
}

fn generate(dir: &Path, target_rows: usize) -> usize {
    let pushpop = std::fs::File::create(dir.join("nsys_nvtx_pushpop_trace.csv")).unwrap();
    let gpu = std::fs::File::create(dir.join("nsys_nvtx_gpu_proj_trace.csv")).unwrap();
    let mut g = Gen {
        pushpop: BufWriter::new(pushpop),
        gpu: BufWriter::new(gpu),
        next_id: 0,
        clock: 1_000_000,
        rows: 0,
    };
    writeln!(g.pushpop, "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree").unwrap();
    writeln!(g.gpu, "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack").unwrap();
    let iterations = target_rows.saturating_sub(1) / PER_ITERATION;
    let mut capture = g.push(None, "profile-target");
    for i in 0..iterations {
        let mut it = g.push(Some(&capture), &format!("iteration {i}"));
        let mut pre = g.push(Some(&it), "preprocessing");
        for name in ["resize", "normalize"] {
            let r = g.push(Some(&pre), name);
            g.pop(r, Some(&mut pre), 40_000 + (i as i64 % 7) * 100, 1);
        }
        g.pop(pre, Some(&mut it), 2_000, 2);
        let mut inf = g.push(Some(&it), "inference");
        for l in 0..LAYERS {
            let mut layer = g.push(Some(&inf), &format!("layer {l}"));
            for name in ["matmul", "act,fn \"gelu\""] {
                let r = g.push(Some(&layer), name);
                g.pop(r, Some(&mut layer), 20_000 + (l as i64) * 10, 1);
            }
            g.pop(layer, Some(&mut inf), 1_000, 2);
        }
        g.pop(inf, Some(&mut it), 3_000, (LAYERS * 2) as u64);
        let mut post = g.push(Some(&it), "postprocessing");
        let r = g.push(Some(&post), "resize");
        g.pop(r, Some(&mut post), 30_000, 0);
        g.pop(post, Some(&mut it), 1_000, 0);
        g.pop(it, Some(&mut capture), 500, (LAYERS * 2 + 2) as u64);
    }
    g.pop(capture, None, 1_000, (iterations * (LAYERS * 2 + 2)) as u64);
    g.pushpop.flush().unwrap();
    g.gpu.flush().unwrap();
    g.rows
}

fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
    // and then a small smoke run checks that the benchmark still works.
    let benching = std::env::args().any(|a| a == "--bench");
    let mut rows = if benching { 1_000_000usize } else { 20_000 };
    let mut keep: Option<std::path::PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--rows" {
            rows = args.next().and_then(|v| v.parse().ok()).expect("--rows N");
        }
        if arg == "--keep" {
            keep = Some(std::path::PathBuf::from(args.next().expect("--keep DIR")));
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = keep.unwrap_or_else(|| tmp.path().to_owned());
    std::fs::create_dir_all(&dir).unwrap();
    let t = Instant::now();
    let written = generate(&dir, rows);
    let pushpop_path = dir.join("nsys_nvtx_pushpop_trace.csv");
    let gpu_path = dir.join("nsys_nvtx_gpu_proj_trace.csv");
    let size = std::fs::metadata(&pushpop_path).unwrap().len();
    let gpu_size = std::fs::metadata(&gpu_path).unwrap().len();
    println!(
        "generated {written} push/pop rows ({:.1} MB) and a GPU projection ({:.1} MB) in {:.2} s",
        size as f64 / 1e6,
        gpu_size as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let base_memory = peak_memory_kib();

    let start = Instant::now();
    let mut names = Interner::new();
    let pushpop = reports::read_pushpop(&pushpop_path, &mut names).unwrap();
    let t_pushpop = start.elapsed();
    let gpu = reports::read_gpu_proj(&gpu_path, &mut names).unwrap();
    let t_gpu = start.elapsed() - t_pushpop;
    let settings = Settings {
        capture_range: Some("profile-target".into()),
        iteration_pattern: analysis::full_match_regex(r"^iteration (\d+)$").unwrap(),
        expected_iterations: (written.saturating_sub(1) / PER_ITERATION) as u64,
    };
    let t_analysis_start = start.elapsed();
    let findings = analysis::analyze(
        &settings,
        &Reports {
            names: &names,
            pushpop: &pushpop,
            pushpop_path: &pushpop_path,
            gpu: Some(&gpu),
            gpu_path: &gpu_path,
        },
    )
    .unwrap();
    let t_analysis = start.elapsed() - t_analysis_start;
    let t_json_start = start.elapsed();
    let json = serde_json::to_vec_pretty(&findings.host_ranges)
        .unwrap()
        .len()
        + serde_json::to_vec_pretty(&findings.iterations)
            .unwrap()
            .len();
    let t_json = start.elapsed() - t_json_start;
    let total = start.elapsed();

    assert_eq!(pushpop.len(), written);
    println!(
        "read push/pop:     {:>8.3} s  ({:.0} rows/s, {:.0} MB/s)",
        t_pushpop.as_secs_f64(),
        written as f64 / t_pushpop.as_secs_f64(),
        size as f64 / 1e6 / t_pushpop.as_secs_f64()
    );
    println!(
        "read GPU proj:     {:>8.3} s  ({} rows)",
        t_gpu.as_secs_f64(),
        gpu.len()
    );
    println!(
        "analysis:          {:>8.3} s  ({} iterations, {} host ranges)",
        t_analysis.as_secs_f64(),
        findings.iterations.len(),
        findings.host_ranges.len()
    );
    println!("JSON ({json} bytes): {:>8.3} s", t_json.as_secs_f64());
    println!(
        "total:             {:>8.3} s  ({:.0} push/pop rows/s)",
        total.as_secs_f64(),
        written as f64 / total.as_secs_f64()
    );
    if let (Some(peak), Some(base)) = (peak_memory_kib(), base_memory) {
        println!(
            "peak memory:       {:.1} MiB ({:.0} bytes per push/pop row above the generator's {:.1} MiB)",
            peak as f64 / 1024.0,
            (peak.saturating_sub(base) * 1024) as f64 / written as f64,
            base as f64 / 1024.0
        );
    }
}
