//! Every way running nsys fails ([`NsysError`]), with what the report needs of each: its
//! kind, the nsys version, nsys's words and the command tried.

use std::path::PathBuf;

use nsys_gate_core::artifact::ReportName;
use nsys_gate_core::outcome::FailureKind;
use nsys_gate_core::text::shown_path;

/// The push/pop report's name, as [`NsysError::MissingReports`] names it.
const PUSHPOP: &str = ReportName::PushPop.as_str();
/// The projection's name, as [`NsysError::MissingReports`] names it.
const GPU_PROJ: &str = ReportName::GpuProjection.as_str();
/// nsys 2022.x's name of the push/pop report.
const LEGACY_PUSHPOP: &str = ReportName::PushPop.legacy_name();
/// nsys 2022.x's name of the projection.
const LEGACY_GPU_PROJ: &str = ReportName::GpuProjection.legacy_name();

/// Why a path given for nsys cannot be run: it does not exist, is a folder (then which nsys
/// inside it to pass), or is a file without an execute bit.
fn not_executable(path: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            "does not exist (hint: pass the path of the nsys executable, such as `/opt/nvidia/nsight-systems/2024.2.3/bin/nsys`)".to_owned()
        }
        Err(e) => format!("cannot be read: {e}"),
        Ok(m) if m.is_dir() => {
            let inside = ["nsys", "bin/nsys"]
                .iter()
                .map(|n| path.join(n))
                .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
                .unwrap_or_else(|| path.join("nsys"));
            format!(
                "is a folder, not the nsys executable (hint: pass the executable inside it, such as `{}`)",
                nsys_gate_core::text::shown_path(inside)
            )
        }
        Ok(m) if !m.is_file() => "is not a regular file".to_owned(),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => {
            "is not executable (no execute permission: `chmod +x` it, or pass the real nsys)"
                .to_owned()
        }
        Ok(_) => "is not an executable file".to_owned(),
    }
}

/// Why nsys could not be found, identified or run, or did not write a required report: each
/// message says what was tried and, where nsys said something, its words.
#[derive(Debug, thiserror::Error)]
pub enum NsysError {
    #[error("no nsys executable found; searched:\n{}\n(hint: install NVIDIA Nsight Systems, run `scripts/install-nsys.sh`, or pass `--nsys PATH`)", searched.iter().map(|s| format!("  - {s}")).collect::<Vec<_>>().join("\n"))]
    NotFound { searched: Vec<String> },

    #[error(
        "{what} `{}` {}",
        nsys_gate_core::text::shown_path(path),
        not_executable(path)
    )]
    NotExecutable { what: &'static str, path: PathBuf },

    #[error("could not run `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },

    #[error("`{command}` did not report a version ({status}); nsys said:\n{words}")]
    Version {
        command: String,
        status: String,
        words: String,
    },

    #[error("`{command}` is not Nsight Systems: it did not print `NVIDIA Nsight Systems version …` but:\n{words}\n(hint: pass --nsys or $NSYS the path of the nsys executable, such as /opt/nvidia/nsight-systems/2024.2.3/bin/nsys, or leave both unset to search PATH and the usual install places)")]
    NotNsys { command: String, words: String },

    #[error("nsys {version} has neither `{PUSHPOP}`/`{GPU_PROJ}` nor the legacy `{LEGACY_PUSHPOP}`/`{LEGACY_GPU_PROJ}` reports (tried `{command}`)\n(hint: use Nsight Systems 2022.4 or newer)")]
    MissingReports { version: String, command: String },

    #[error("the trace was recorded by Nsight Systems {trace_version}, newer than this nsys {nsys_version}; nsys said: {words}\ntried: `{command}`\n(hint: read the trace with Nsight Systems {trace_version} or newer: install it from NVIDIA's installers ({url}, or the CUDA toolkit's), then pass `--nsys PATH` or set `NSYS` to its `nsys`)", url = super::DOWNLOAD_URL)]
    IncompatibleTrace {
        trace_version: String,
        nsys_version: String,
        words: String,
        command: String,
    },

    #[error("nsys {version} ran past the {seconds} s timeout and was killed\ntried: `{command}`\n(hint: raise `--nsys-timeout` for large traces)")]
    Timeout {
        version: String,
        seconds: u64,
        command: String,
    },

    #[error("nsys {version} {status} and wrote no `{report}` report\ntried: `{command}`\nnsys said:\n{words}")]
    Failed {
        version: String,
        status: String,
        report: &'static str,
        command: String,
        words: String,
    },

    #[error("nsys-gate received {signal}: stopped `{command}` and its process group")]
    Interrupted {
        signal: &'static str,
        command: String,
    },

    #[error("could not prepare {}: {source}", shown_path(path))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl NsysError {
    /// What kind of failure this is, for the report. The one place where nsys's words are
    /// read to tell kinds apart (a `Failed` report that names NVTX: no NVTX data).
    pub fn kind(&self) -> FailureKind {
        match self {
            NsysError::NotFound { .. }
            | NsysError::NotExecutable { .. }
            | NsysError::Spawn { .. }
            | NsysError::Version { .. }
            | NsysError::NotNsys { .. } => FailureKind::MissingExecutable,
            NsysError::MissingReports { .. } => FailureKind::NsysTooOld,
            NsysError::IncompatibleTrace { .. } => FailureKind::IncompatibleTrace,
            NsysError::Timeout { .. } => FailureKind::Timeout,
            NsysError::Failed { words, .. } => {
                if words.contains("NVTX") || words.contains("NV Tools Extension") {
                    FailureKind::NoNvtxData
                } else {
                    FailureKind::NsysFailed
                }
            }
            NsysError::Io { .. } => FailureKind::NsysFailed,
            NsysError::Interrupted { .. } => FailureKind::Other,
        }
    }

    /// The exact version of the nsys that failed, once it is known.
    pub fn version(&self) -> Option<&str> {
        match self {
            NsysError::MissingReports { version, .. }
            | NsysError::Timeout { version, .. }
            | NsysError::Failed { version, .. } => Some(version),
            NsysError::IncompatibleTrace { nsys_version, .. } => Some(nsys_version),
            _ => None,
        }
    }

    /// nsys's own words, when it said something.
    pub fn words(&self) -> Option<&str> {
        match self {
            NsysError::Version { words, .. }
            | NsysError::NotNsys { words, .. }
            | NsysError::IncompatibleTrace { words, .. }
            | NsysError::Failed { words, .. } => Some(words),
            _ => None,
        }
    }

    /// The command that was tried.
    pub fn command(&self) -> Option<&str> {
        match self {
            NsysError::Spawn { command, .. }
            | NsysError::Version { command, .. }
            | NsysError::NotNsys { command, .. }
            | NsysError::MissingReports { command, .. }
            | NsysError::IncompatibleTrace { command, .. }
            | NsysError::Timeout { command, .. }
            | NsysError::Interrupted { command, .. }
            | NsysError::Failed { command, .. } => Some(command),
            _ => None,
        }
    }
}
