//! Shared helpers: finding the project's real nsys installs, copying fixtures into temporary
//! run directories, running the built binary, and an independent reading of the CSVs.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use assert_fs::TempDir;
use rustix::process::{kill_process, Pid, Signal};
use serde_json::Value;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A tool a test needs: `found` when it is there. When it is not (`missing` says what is
/// missing and how to install it), a failure under CI; locally `None`, the test skipped, loudly
/// (counted in the summary of skips at the end of the run, [`crate::skips`]).
pub fn installed_or_skip(found: Option<PathBuf>, missing: &str) -> Option<PathBuf> {
    if found.is_some() {
        return found;
    }
    if std::env::var_os("CI").is_some() {
        panic!("{missing}; CI is set, so this is a failure, not a skip");
    }
    eprintln!("SKIPPED: {missing}; set CI=1 to make this a failure");
    // Said again, with every other skip, at the end of the run.
    crate::skips::record(missing);
    None
}

/// The nsys that `scripts/install-nsys.sh VERSION` installed. Under CI a missing install is a
/// failure; locally the test is skipped, loudly.
pub fn nsys(version: &str) -> Option<PathBuf> {
    let path = repo().join(".nsys").join(version).join("nsys");
    let missing = format!(
        "nsys {version} is not installed at {} (run `scripts/install-nsys.sh {version}`)",
        path.display()
    );
    installed_or_skip(Some(path).filter(|p| p.is_file()), &missing)
}

/// `let nsys = require_nsys!("2024.2");` returns from the test when it is skipped.
#[macro_export]
macro_rules! require_nsys {
    ($version:expr) => {
        match $crate::common::nsys($version) {
            Some(path) => path,
            None => return,
        }
    };
    ($version:expr, $otherwise:expr) => {
        match $crate::common::nsys($version) {
            Some(path) => path,
            None => return $otherwise,
        }
    };
}

/// A real nsys whose install lacks some report scripts: a hard-linked copy of the project's
/// install of `real` (an `nsys` path from [`nsys`]) with `scripts` removed (cheap, and the
/// original is untouched). Returns the copy's folder (kept while it lives) and its nsys.
pub fn nsys_without(real: &Path, scripts: &[&str]) -> (TempDir, PathBuf) {
    let install = real.parent().expect("nsys in its install folder");
    let scratch = repo().join("target/test-installs");
    std::fs::create_dir_all(&scratch).unwrap();
    let tmp = TempDir::new_in(&scratch).unwrap();
    let copy = tmp
        .path()
        .join(install.file_name().expect("version folder"));
    let status = std::process::Command::new("cp")
        .arg("-al")
        .arg(install)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let reports =
        copy.join("prefix/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/reports");
    for script in scripts {
        std::fs::remove_file(reports.join(script)).unwrap();
    }
    let nsys = copy.join("nsys");
    (tmp, nsys)
}

/// A fixture copied to a temporary folder, keeping its directory name (the manifest's
/// `expected_trace_path` names it).
pub struct Run {
    _tmp: TempDir,
    pub dir: PathBuf,
}

pub fn fixture(name: &str) -> Run {
    copy_run(&repo().join("tests/fixtures").join(name))
}

pub fn copy_run(source: &Path) -> Run {
    copy_run_as(source, source.file_name().expect("fixture name"))
}

/// A fixture copied to a temporary folder under another directory name.
pub fn fixture_as(name: &str, dir_name: impl AsRef<std::ffi::OsStr>) -> Run {
    copy_run_as(&repo().join("tests/fixtures").join(name), dir_name)
}

fn copy_run_as(source: &Path, dir_name: impl AsRef<std::ffi::OsStr>) -> Run {
    let tmp = TempDir::new().expect("temp dir");
    let dir = tmp.path().join(dir_name.as_ref());
    copy_dir(source, &dir);
    Run { _tmp: tmp, dir }
}

/// Whether a process is still running (a zombie waiting for its parent to reap it is not).
pub fn alive(pid: &str) -> bool {
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    std::fs::read_to_string(stat).is_ok_and(|s| !s.contains(") Z "))
}

/// Waits (60 s at most, looking every 5 ms) until `ready`; `what` names it in the failure.
pub fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `signal` to the spawned `child`.
pub fn send(child: &Child, signal: Signal) {
    kill_process(Pid::from_child(child), signal).expect("send the signal");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

impl Run {
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn analysis(&self) -> Value {
        read_json(&self.path("analysis.json"))
    }

    pub fn manifest(&self) -> String {
        std::fs::read_to_string(self.path("manifest.yaml")).expect("manifest")
    }

    pub fn set_manifest(&self, text: &str) {
        std::fs::write(self.path("manifest.yaml"), text).expect("write manifest");
    }

    /// Replaces one line of the manifest (which must exist) by another.
    pub fn edit_manifest(&self, from: &str, to: &str) {
        let text = self.manifest();
        assert!(text.contains(from), "manifest has no {from:?}:\n{text}");
        self.set_manifest(&text.replacen(from, to, 1));
    }
}

pub fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_slice(&bytes).expect("valid JSON")
}

pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::from_std(bin_process())
}

/// [`bin`] as a `std::process::Command`, for a test that spawns it and signals it.
pub fn bin_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("nsys-gate"));
    // Nothing from the caller's environment decides which nsys runs, and no test reaches a
    // real GitHub (a CI job's token and pull-request event stay out).
    cmd.env_remove("NSYS");
    for var in [
        "GITHUB_TOKEN",
        "GITHUB_EVENT_NAME",
        "GITHUB_EVENT_PATH",
        "GITHUB_API_URL",
        "GITHUB_REPOSITORY",
        "GITLAB_CI",
        "GITLAB_TOKEN",
        "CI_API_V4_URL",
        "CI_JOB_TOKEN",
        // The fake forges are on loopback: a proxy of the machine's (which nsys-gate honours)
        // must not stand between them and the binary; the proxy tests set their own.
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "NSYS_GATE_CA_CERTS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// `nsys-gate analyze --run-dir DIR --nsys NSYS ARGS…`
pub fn analyze(dir: &Path, nsys: &Path, args: &[&str]) -> Output {
    bin()
        .arg("analyze")
        .arg("--run-dir")
        .arg(dir)
        .arg("--nsys")
        .arg(nsys)
        .args(args)
        .output()
        .expect("run nsys-gate")
}

/// A fixture copied and analysed with `nsys` (a gating warning is fine: status 0 or 1).
pub fn analysed(name: &str, nsys: &Path) -> Run {
    let run = fixture(name);
    let out = analyze(&run.dir, nsys, &[]);
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{}",
        stderr(&out)
    );
    run
}

/// A fixture copied and analysed with `nsys`, which must exit with `status`.
pub fn analysed_with_status(name: &str, nsys: &Path, status: i32) -> Run {
    let run = fixture(name);
    assert_status(&analyze(&run.dir, nsys, &[]), status);
    run
}

/// An analysis.json (`bytes`) as another run of the same code would give it: every duration
/// (`*_ns` but the start and end times) times `factor`, and `run_id` and `git_commit` set.
pub fn rerun_of(bytes: &[u8], factor: f64, run_id: &str, commit: &str) -> Vec<u8> {
    fn scale(v: &mut Value, factor: f64) {
        match v {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    let duration = key.ends_with("_ns") && key != "start_ns" && key != "end_ns";
                    match value {
                        Value::Number(n) if duration => {
                            *value = if let Some(i) = n.as_i64() {
                                Value::from((i as f64 * factor).round() as i64)
                            } else {
                                Value::from(n.as_f64().unwrap_or(0.0) * factor)
                            };
                        }
                        other => scale(other, factor),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| scale(i, factor)),
            _ => {}
        }
    }
    let mut analysis: Value = serde_json::from_slice(bytes).expect("an analysis.json");
    scale(&mut analysis, factor);
    analysis["run"]["run_id"] = Value::from(run_id);
    analysis["run"]["git_commit"] = Value::from(commit);
    serde_json::to_vec_pretty(&analysis).unwrap()
}

/// `nsys-gate run --no-post --run-dir DIR… --nsys NSYS ARGS…`, outside GitHub Actions.
pub fn run_cmd(dirs: &[&Path], nsys: &Path, args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.arg("run").arg("--no-post").arg("--nsys").arg(nsys);
    for d in dirs {
        cmd.arg("--run-dir").arg(d);
    }
    cmd.args(args)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("run nsys-gate")
}

/// The report.md that `run` wrote in a run directory.
pub fn report_md(run: &Run) -> String {
    std::fs::read_to_string(run.path("report.md")).expect("report.md")
}

#[track_caller]
pub fn assert_status(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit status\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn codes(analysis: &Value) -> Vec<String> {
    let mut codes: Vec<String> = analysis["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w["code"].as_str().expect("code").to_owned())
        .collect();
    codes.dedup();
    codes
}

pub fn warning<'a>(analysis: &'a Value, code: &str) -> &'a Value {
    analysis["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .find(|w| w["code"] == code)
        .unwrap_or_else(|| panic!("no {code} warning in {}", analysis["warnings"]))
}

/// One push/pop row as an ordinary CSV reader sees it: an independent check on the tool's
/// own reader, usable on fixtures whose names hold no commas, quotes or newlines.
#[derive(Debug, Clone)]
pub struct CsvRange {
    pub start: i64,
    pub end: i64,
    pub duration: i64,
    pub dur_child: i64,
    pub dur_non_child: i64,
    pub name: String,
    pub pid: u64,
    pub tid: u64,
    pub range_id: u64,
    pub parent_id: Option<u64>,
}

pub fn plain_pushpop(path: &Path) -> Vec<CsvRange> {
    let mut reader = csv::Reader::from_path(path).expect("open CSV");
    let headers = reader.headers().expect("headers").clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (start, end, dur, child, nonchild, name, pid, tid, id, parent) = (
        col("Start (ns)"),
        col("End (ns)"),
        col("Duration (ns)"),
        col("DurChild (ns)"),
        col("DurNonChild (ns)"),
        col("Name"),
        col("PID"),
        col("TID"),
        col("RangeId"),
        col("ParentId"),
    );
    reader
        .records()
        .map(|r| {
            let r = r.expect("record");
            CsvRange {
                start: r[start].parse().unwrap(),
                end: r[end].parse().unwrap(),
                duration: r[dur].parse().unwrap(),
                dur_child: r[child].parse().unwrap(),
                dur_non_child: r[nonchild].parse().unwrap(),
                name: r[name].trim_start_matches(':').to_owned(),
                pid: r[pid].parse().unwrap(),
                tid: r[tid].parse().unwrap(),
                range_id: r[id].parse().unwrap(),
                parent_id: match &r[parent] {
                    "" | "None" => None,
                    p => Some(p.parse().unwrap()),
                },
            }
        })
        .collect()
}

/// Scoped name -> (instances, inclusive total, exclusive total) below the given iteration
/// ranges, computed straight from the rows.
pub fn scoped_totals(rows: &[CsvRange], iteration_ids: &[u64]) -> HashMap<String, (u64, i64, i64)> {
    let by_id: HashMap<u64, &CsvRange> = rows.iter().map(|r| (r.range_id, r)).collect();
    let mut totals: HashMap<String, (u64, i64, i64)> = HashMap::new();
    for r in rows {
        // Walk up to an iteration, collecting names.
        let mut names = vec![r.name.clone()];
        let mut parent = r.parent_id;
        let mut under = None;
        while let Some(p) = parent {
            if iteration_ids.contains(&p) {
                under = Some(p);
                break;
            }
            let pr = by_id[&p];
            names.push(pr.name.clone());
            parent = pr.parent_id;
        }
        if under.is_some() {
            names.reverse();
            let e = totals.entry(names.join(".")).or_default();
            e.0 += 1;
            e.1 += r.duration;
            e.2 += r.dur_non_child;
        }
    }
    totals
}

/// A stand-in nsys that answers `--version` and `--help-reports` like 2024.2 and runs `stats`
/// as the given shell snippet.
pub fn fake_nsys(dir: &Path, stats: &str) -> PathBuf {
    let path = dir.join("nsys");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             case \"$1 $2\" in\n\
               --version*) echo 'NVIDIA Nsight Systems version 2024.2.3.38-242334140272v0'; exit 0;;\n\
               'stats --help-reports') echo '  nvtx_gpu_proj_trace -- x'; echo '  nvtx_pushpop_trace -- x'; exit 0;;\n\
             esac\n\
             {stats}\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `nsys-gate analyze --reuse-stats --run-dir DIR`, with no nsys involved.
pub fn reuse_stats(dir: &Path) -> Output {
    bin()
        .args(["analyze", "--reuse-stats", "--run-dir"])
        .arg(dir)
        .output()
        .expect("run nsys-gate")
}

/// `nsys-gate analyze --reuse-stats --run-dir DIR`, killed (SIGKILL) as soon as its peak
/// resident memory passes `cap_kib`, so that a regression fails the test instead of eating
/// the machine: its output, and its peak resident memory in KiB (over the cap when it was
/// killed for it) as [`output_and_peak_kib`] measures it: the kernel's count for the child
/// (`wait4`) when that is above this test process's own peak, else the child's largest
/// `VmHWM` sampled while it ran.
pub fn reuse_stats_capped(dir: &Path, cap_kib: u64) -> (Output, u64) {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("nsys-gate"));
    cmd.args(["analyze", "--reuse-stats", "--run-dir"])
        .arg(dir)
        .env_remove("NSYS");
    output_and_peak_kib(cmd, cap_kib)
}

/// Runs `cmd` (killed when its peak resident memory passes `cap_kib`): its output, and its
/// peak resident memory in KiB (over the cap when it was killed for it).
///
/// The kernel's count for this child alone (`wait4`'s `ru_maxrss`) starts from the resident
/// memory of the test process it was forked from (exec keeps the larger of the two), so when
/// it is no more than this process's own peak it says nothing about the child: the child's
/// `VmHWM`, sampled every 2 ms while it runs, is used instead.
#[allow(unsafe_code)]
#[allow(clippy::zombie_processes)] // `wait4` reaps it, which `Child::wait` cannot see
pub fn output_and_peak_kib(mut cmd: std::process::Command, cap_kib: u64) -> (Output, u64) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run nsys-gate");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let status_file = PathBuf::from(format!("/proc/{pid}/status"));
    let inherited_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| vm_hwm_kib(&t))
        .unwrap_or(0);
    let mut sampled_kib = 0;
    // Between fork and exec the child's memory is this process's: not sampled.
    let program: String = Path::new(cmd.get_program())
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(15).collect())
        .unwrap_or_default();
    let mut status: libc::c_int = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    loop {
        // SAFETY: waits for this child only (std never reaps it behind our back); both
        // pointers are valid for writes for the whole call.
        let waited = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, usage.as_mut_ptr()) };
        if waited == pid {
            break;
        }
        assert_eq!(waited, 0, "wait4: {}", std::io::Error::last_os_error());
        // Not reaped yet, so the pid is still this child's. One read: its name and its peak
        // from the same moment.
        let status_text = std::fs::read_to_string(&status_file).unwrap_or_default();
        let execed = status_text.lines().next() == Some(&format!("Name:\t{program}"));
        if let Some(kib) = vm_hwm_kib(&status_text).filter(|_| execed) {
            sampled_kib = sampled_kib.max(kib);
            if kib > cap_kib {
                child.kill().expect("kill nsys-gate");
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // SAFETY: `wait4` returned the child, so it filled `usage` (and it was zeroed before).
    let usage = unsafe { usage.assume_init() };
    let out = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    let counted_kib = u64::try_from(usage.ru_maxrss).unwrap();
    let peak_kib = if counted_kib > inherited_kib {
        counted_kib
    } else {
        sampled_kib
    };
    (out, peak_kib)
}

/// A running process's peak resident memory (`VmHWM`, KiB), from the text of its
/// `/proc/PID/status`.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Every file under `dir`, at any depth (folders descended, not listed); none when it cannot
/// be read.
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(files_in(&p));
        } else {
            files.push(p);
        }
    }
    files
}
