//! The environment nsys recorded in the trace, and which of its variables look like credentials.
//!
//! nsys stores the environment of the profiled process in every trace; no report shows it, but
//! anyone with the trace (or its SQLite export) can read every value. This is the one read of
//! the SQLite export itself (contract section 2): one query on its `TARGET_INFO_SYSTEM_ENV`
//! table, whose `DeviceEnvironment` row holds the environment as `NAME=VALUE` entries joined by
//! `;` (nsys 2023.4, 2024.2) or by NUL bytes in a TEXT value (2022.4). Only the variables'
//! names ever leave this module; their values are looked at here and dropped.
//!
//! [`environment`] reads the hardware and software the trace was recorded on from the same
//! export: `TARGET_INFO_GPU` (one row per GPU) and five named rows of `TARGET_INFO_SYSTEM_ENV`,
//! never its host name, paths or variables. Both tables have the same columns in the exports
//! of nsys 2022.4, 2023.4 and 2024.2; a trace recorded with no GPU has no `TARGET_INFO_GPU`
//! and an `NvDriverVersion` of `0`.

use std::path::Path;
use std::sync::LazyLock;

use rusqlite::{Connection, OpenFlags};

use nsys_gate_core::artifact::{Environment, GpuInfo};

/// The table and the row of the export that hold the recorded environment.
const QUERY: &str =
    "SELECT CAST(value AS BLOB) FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'";

/// At most this many names are kept; the warning says how many there were.
pub const MAX_NAMES: usize = 50;

/// The names of the variables in the export's recorded environment that look like credentials,
/// sorted and without repeats. An export without the table (another nsys version, a `.sqlite`
/// made otherwise) has none.
pub fn credential_variables(export: &Path) -> Result<Vec<String>, rusqlite::Error> {
    let db = Connection::open_with_flags(
        export,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let mut statement = match db.prepare(QUERY) {
        Ok(statement) => statement,
        Err(e) if is_missing_table(&e) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = std::collections::BTreeSet::new();
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let value: Option<Vec<u8>> = row.get(0)?;
        for (name, value) in variables(value.as_deref().unwrap_or_default()) {
            if looks_like_credential(name, &value) {
                names.insert(name.to_owned());
            }
        }
    }
    Ok(names.into_iter().collect())
}

/// The rows of `TARGET_INFO_GPU` read, in device id order.
const GPU_QUERY: &str = "SELECT id, name, uuid, smCount, clockRate, totalMemory, computeMajor, computeMinor FROM TARGET_INFO_GPU ORDER BY id";

/// The rows of `TARGET_INFO_SYSTEM_ENV` read: nothing else of that table leaves this module.
const SYSTEM_QUERY: &str = "SELECT name, CAST(value AS TEXT) FROM TARGET_INFO_SYSTEM_ENV WHERE name IN ('NvDriverVersion', 'CudaDriverVersion', 'CpuDescription', 'OsDescription', 'SoftwareReleaseVersion')";

/// The GPUs (every one the trace lists), driver and system recorded in a SQLite export. A
/// missing table or row leaves its fields `null`.
pub fn environment(export: &Path) -> Result<Environment, rusqlite::Error> {
    let db = Connection::open_with_flags(
        export,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let mut out = Environment::default();
    match db.prepare(GPU_QUERY) {
        Ok(mut statement) => {
            let mut rows = statement.query([])?;
            while let Some(row) = rows.next()? {
                out.gpus.push(gpu(row)?);
            }
        }
        Err(e) if is_missing_table(&e) => {}
        Err(e) => return Err(e),
    }
    match db.prepare(SYSTEM_QUERY) {
        Ok(mut statement) => {
            let mut rows = statement.query([])?;
            while let Some(row) = rows.next()? {
                let name: String = row.get(0)?;
                let value: Option<String> = row.get(1)?;
                let Some(value) = value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
                else {
                    continue;
                };
                match name.as_str() {
                    "NvDriverVersion" => out.driver_version = driver_version(&value),
                    "CudaDriverVersion" => out.cuda_driver_version = cuda_version(&value),
                    "CpuDescription" => out.cpu = Some(value),
                    "OsDescription" => out.os = Some(value),
                    "SoftwareReleaseVersion" => out.kernel = Some(value),
                    _ => {}
                }
            }
        }
        Err(e) if is_missing_table(&e) => {}
        Err(e) => return Err(e),
    }
    Ok(out)
}

/// The SM clock samples of the export's GPU metrics: the `GPC Clock Frequency` metric of
/// `GPU_METRICS`, named in `TARGET_INFO_GPU_METRICS` (`metricId` is not stable from one
/// trace to the next, so it is looked up by name, per `typeId`). The GPU is the low byte of
/// `typeId` (`<hardware:8><VM:8><source:16><event tag:24><GPU:8>`, as NVIDIA's own recipes
/// decompose it).
const CLOCK_QUERY: &str = "SELECT g.typeId & 255, g.timestamp, g.value FROM GPU_METRICS AS g JOIN (SELECT DISTINCT typeId, metricId FROM TARGET_INFO_GPU_METRICS WHERE metricName = 'GPC Clock Frequency') AS m ON g.typeId = m.typeId AND g.metricId = m.metricId WHERE g.timestamp IS NOT NULL ORDER BY g.typeId & 255, g.timestamp";

/// At most this many runs of one clock are kept per GPU (in the stamp); a longer series is
/// cut into this many spans of equal time, each holding its samples' median.
pub const MAX_CLOCK_RUNS: usize = 20_000;

/// One GPU's SM clock as nsys sampled it: runs of one whole number of MHz, each from the
/// sample that started it (`[start_ns, mhz]`, in time order) until the next run starts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClockSeries {
    /// The device id (`TARGET_INFO_GPU.id`).
    pub gpu: u64,
    pub runs: Vec<(i64, u32)>,
}

/// The SM clock of each GPU the export holds GPU metrics for, in device id order; none when
/// nsys sampled no GPU metrics (the tables are missing: 2022.4's export never has them).
pub fn gpu_clocks(export: &Path) -> Result<Vec<ClockSeries>, rusqlite::Error> {
    let db = Connection::open_with_flags(
        export,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let mut statement = match db.prepare(CLOCK_QUERY) {
        Ok(statement) => statement,
        Err(e) if is_missing_table(&e) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out: Vec<ClockSeries> = Vec::new();
    let mut samples: Vec<(i64, u32)> = Vec::new();
    let mut current: Option<u64> = None;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let gpu: i64 = row.get(0)?;
        let gpu = u64::try_from(gpu).unwrap_or_default();
        let timestamp: i64 = row.get(1)?;
        let value: i64 = row.get(2)?;
        if current != Some(gpu) {
            if let Some(done) = current {
                out.push(series(done, std::mem::take(&mut samples)));
            }
            current = Some(gpu);
        }
        if let Some(mhz) = clock_mhz(value) {
            samples.push((timestamp, mhz));
        }
    }
    if let Some(done) = current {
        out.push(series(done, samples));
    }
    out.retain(|s| !s.runs.is_empty());
    Ok(out)
}

/// A sample's value in whole MHz. NVIDIA documents the metric in hertz; a value above 2^31
/// Hz has been seen exported as a negative number (an unsigned 32-bit value read as signed),
/// so a negative value is read as unsigned. Values up to 100,000 are taken as MHz already. 0
/// (no reading) is no sample.
fn clock_mhz(value: i64) -> Option<u32> {
    let value = if value < 0 {
        u64::from(u32::try_from(value & 0xFFFF_FFFF).ok()?)
    } else {
        u64::try_from(value).ok()?
    };
    let mhz = if value > 100_000 {
        (value + 500_000) / 1_000_000
    } else {
        value
    };
    u32::try_from(mhz).ok().filter(|m| *m > 0)
}

/// Samples in time order as runs of one value; more than [`MAX_CLOCK_RUNS`] runs are made
/// that many spans of equal time, each its samples' median.
fn series(gpu: u64, samples: Vec<(i64, u32)>) -> ClockSeries {
    let mut runs = runs_of(samples.iter().copied());
    if runs.len() > MAX_CLOCK_RUNS {
        let first = samples[0].0;
        let span = (samples[samples.len() - 1].0 - first).max(1);
        let width = span / MAX_CLOCK_RUNS as i64 + 1;
        let mut binned: Vec<(i64, u32)> = Vec::with_capacity(MAX_CLOCK_RUNS);
        let mut i = 0;
        while i < samples.len() {
            let bin = (samples[i].0 - first) / width;
            let mut values = Vec::new();
            while i < samples.len() && (samples[i].0 - first) / width == bin {
                values.push(samples[i].1);
                i += 1;
            }
            values.sort_unstable();
            binned.push((first + bin * width, values[values.len() / 2]));
        }
        runs = runs_of(binned.into_iter());
    }
    ClockSeries { gpu, runs }
}

fn runs_of(samples: impl Iterator<Item = (i64, u32)>) -> Vec<(i64, u32)> {
    let mut runs: Vec<(i64, u32)> = Vec::new();
    for (t, mhz) in samples {
        if runs.last().is_none_or(|(_, last)| *last != mhz) {
            runs.push((t, mhz));
        }
    }
    runs
}

/// One row of [`GPU_QUERY`]. Sizes and counts of 0 or less are not recorded (`null`).
fn gpu(row: &rusqlite::Row<'_>) -> Result<GpuInfo, rusqlite::Error> {
    let positive = |i: usize| -> Result<Option<u64>, rusqlite::Error> {
        let v: Option<i64> = row.get(i)?;
        Ok(v.and_then(|v| u64::try_from(v).ok()).filter(|v| *v > 0))
    };
    let text = |i: usize| -> Result<Option<String>, rusqlite::Error> {
        let v: Option<String> = row.get(i)?;
        Ok(v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()))
    };
    let id: i64 = row.get(0)?;
    let major: Option<i64> = row.get(6)?;
    let minor: Option<i64> = row.get(7)?;
    Ok(GpuInfo {
        id: u64::try_from(id).unwrap_or_default(),
        name: text(1)?,
        uuid: text(2)?,
        sm_count: positive(3)?,
        // Hz; the maximum clock is a whole number of MHz.
        max_clock_mhz: positive(4)?.map(|hz| (hz + 500_000) / 1_000_000),
        memory_bytes: positive(5)?,
        compute_capability: match (major, minor) {
            (Some(major), Some(minor)) if major > 0 && minor >= 0 => {
                Some(format!("{major}.{minor}"))
            }
            _ => None,
        },
        clock_mhz: None,
    })
}

/// The driver's version as recorded; `0` is what nsys records on a machine without an NVIDIA
/// driver.
fn driver_version(value: &str) -> Option<String> {
    (value != "0").then(|| value.to_owned())
}

/// The CUDA version the driver supports, as `12.8`: recorded as the CUDA API writes it
/// (`1000 * major + 10 * minor`, `12080`), or already dotted. `0` (no driver) is `null`.
fn cuda_version(value: &str) -> Option<String> {
    if value.contains('.') {
        return Some(value.to_owned());
    }
    let number: u64 = value.parse().ok()?;
    (number >= 1000).then(|| format!("{}.{}", number / 1000, number % 1000 / 10))
}

fn is_missing_table(e: &rusqlite::Error) -> bool {
    let text = e.to_string();
    text.contains("no such table") || text.contains("no such column")
}

/// `NAME=VALUE` entries of a recorded environment. Entries are joined by `;` or NUL; a piece
/// that does not start with a variable name continues the previous value (a value holding `;`).
fn variables(recorded: &[u8]) -> Vec<(&str, Vec<u8>)> {
    let mut out: Vec<(&str, Vec<u8>)> = Vec::new();
    for piece in recorded.split(|b| *b == b';' || *b == 0) {
        match split_entry(piece) {
            Some((name, value)) => out.push((name, value.to_vec())),
            None => {
                if let Some((_, value)) = out.last_mut() {
                    value.push(b';');
                    value.extend_from_slice(piece);
                }
            }
        }
    }
    out
}

/// `NAME=VALUE` with NAME a shell variable name (`[A-Za-z_][A-Za-z0-9_]*`, at most 256 bytes).
fn split_entry(piece: &[u8]) -> Option<(&str, &[u8])> {
    let eq = piece.iter().position(|b| *b == b'=')?;
    let name = &piece[..eq];
    let valid = (1..=256).contains(&name.len())
        && !name[0].is_ascii_digit()
        && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if !valid {
        return None;
    }
    Some((std::str::from_utf8(name).ok()?, &piece[eq + 1..]))
}

/// Whether a variable looks like a credential, by its name or by its value.
pub fn looks_like_credential(name: &str, value: &[u8]) -> bool {
    (name_looks_secret(name) && !value.is_empty())
        || SECRET_VALUE.is_match(&String::from_utf8_lossy(value))
}

/// Names that end like `_TOKEN`, `_KEY`, `_SECRET` or hold `PASSWORD`, `SECRET`, `CREDENTIAL`.
fn name_looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    // Well-known names that say "key" or "token" and hold none: a public-key fingerprint the
    // official Python images set, and tokenizer settings.
    if NOT_SECRET.contains(&upper.as_str()) {
        return false;
    }
    let words: Vec<&str> = upper.split('_').filter(|w| !w.is_empty()).collect();
    if words.contains(&"PUBLIC") {
        return false;
    }
    let anywhere = ["PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "CREDENTIAL"];
    if anywhere.iter().any(|w| upper.contains(w)) {
        return true;
    }
    let last = [
        "TOKEN",
        "KEY",
        "APIKEY",
        "ACCESSKEY",
        "PAT",
        "PASS",
        "PWD",
        "AUTH",
    ];
    words
        .last()
        .is_some_and(|w| last.contains(w) && !matches!(upper.as_str(), "PWD" | "OLDPWD"))
}

const NOT_SECRET: &[&str] = &["GPG_KEY", "PWD", "OLDPWD", "SSH_AUTH_SOCK"];

/// Values that are credentials whatever the variable is called: GitHub tokens, AWS access key
/// ids, GitLab, Slack, Hugging Face, Google and OpenAI-style keys, private keys, and URLs with
/// a password in them.
static SECRET_VALUE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(concat!(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
        r"|\bglpat-[A-Za-z0-9_-]{20,}",
        r"|\bxox[abposr]-[A-Za-z0-9-]{10,}",
        r"|\bhf_[A-Za-z0-9]{30,}",
        r"|\bAIza[A-Za-z0-9_-]{35}",
        r"|\bsk-[A-Za-z0-9_-]{32,}",
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----",
        r"|[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@",
    ))
    .expect("valid regex")
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_recorded_and_none_for_no_driver() {
        assert_eq!(cuda_version("12080").as_deref(), Some("12.8"));
        assert_eq!(cuda_version("12020").as_deref(), Some("12.2"));
        assert_eq!(cuda_version("11080").as_deref(), Some("11.8"));
        assert_eq!(cuda_version("12.8").as_deref(), Some("12.8"));
        assert_eq!(cuda_version("0"), None);
        assert_eq!(cuda_version("n/a"), None);
        assert_eq!(driver_version("0"), None);
        assert_eq!(driver_version("570.172.08").as_deref(), Some("570.172.08"));
    }

    #[test]
    fn clock_values_in_hertz_mhz_or_read_as_signed() {
        assert_eq!(clock_mhz(1_980_000_000), Some(1980));
        assert_eq!(clock_mhz(1_410_400_000), Some(1410));
        assert_eq!(clock_mhz(1980), Some(1980));
        // 2,625 MHz in hertz, as a signed 32-bit number.
        assert_eq!(clock_mhz(2_625_000_000 - (1_i64 << 32)), Some(2625));
        assert_eq!(clock_mhz(0), None);
    }

    #[test]
    fn long_series_are_kept_as_runs_then_spans_of_equal_time() {
        let s = series(0, vec![(0, 1980), (100, 1980), (200, 1380), (300, 1980)]);
        assert_eq!(s.runs, [(0, 1980), (200, 1380), (300, 1980)]);
        let alternating: Vec<(i64, u32)> = (0..3 * MAX_CLOCK_RUNS as i64)
            .map(|i| (i * 100, if i % 2 == 0 { 1980 } else { 1965 }))
            .collect();
        let s = series(1, alternating);
        assert!(s.runs.len() <= MAX_CLOCK_RUNS, "{}", s.runs.len());
        assert!(s.runs.iter().all(|(_, m)| *m == 1980 || *m == 1965));
    }

    fn flagged(recorded: &[u8]) -> Vec<&str> {
        let mut names: Vec<&str> = variables(recorded)
            .into_iter()
            .filter(|(n, v)| looks_like_credential(n, v))
            .map(|(n, _)| n)
            .collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn reads_both_separators_and_values_holding_semicolons() {
        let v = variables(b"PATH=/usr/bin:/bin;HOME=/h;X=a;b=c;d\0Y=1");
        let names: Vec<&str> = v.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["PATH", "HOME", "X", "b", "Y"]);
        // "d" continues b's value.
        assert_eq!(v[3].1, b"c;d");
        assert!(variables(b"").is_empty());
        assert!(variables(b"=x;1A=2;no equals").is_empty());
    }

    #[test]
    fn names_credentials_by_name_or_value() {
        let recorded = concat!(
            "PATH=/usr/bin;HOME=/root;GITHUB_TOKEN=abc;MY_API_KEY=k;DB_PASSWORD=p;",
            "AWS_SECRET_ACCESS_KEY=s;AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP;",
            "ANYTHING=ghp_0123456789abcdefghijABCDEFGHIJ;REPO=https://u:pw@host/x;",
            "GPG_KEY=A035C8C19219BA821ECEA86B64E628F8D684696D;TOKENIZERS_PARALLELISM=false;",
            "SSH_PUBLIC_KEY=ssh-ed25519 AAAA;PWD=/w;OLDPWD=/v;EMPTY_TOKEN=;",
            "ACTIONS_ID_TOKEN_REQUEST_URL=https://x/y;NSYS_NVTX_PROFILER_REGISTER_ONLY=0"
        );
        assert_eq!(
            flagged(recorded.as_bytes()),
            [
                "ANYTHING",
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "DB_PASSWORD",
                "GITHUB_TOKEN",
                "MY_API_KEY",
                "REPO"
            ]
        );
    }

    #[test]
    fn the_fixtures_recorded_environments_hold_no_credentials() {
        // What nsys 2023.4/2024.2 (`;`) and 2022.4 (NUL) recorded for the fixtures.
        let semicolons = b"PATH=/usr/bin:/bin;HOME=/tmp/f/run-clean;LD_LIBRARY_PATH=/tmp/f/nsight-systems-2024.2/usr/lib/x86_64-linux-gnu;NSYS_NVTX_PROFILER_REGISTER_ONLY=0";
        assert!(flagged(semicolons).is_empty());
        let nuls = semicolons.map(|b| if b == b';' { 0 } else { b });
        assert_eq!(variables(&nuls).len(), 4);
        assert!(flagged(&nuls).is_empty());
    }
}
