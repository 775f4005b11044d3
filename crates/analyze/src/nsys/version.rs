//! nsys's version: asking an executable for it (`nsys --version`) and what a version means
//! here (the versions the tests run, the 2025.1 change to default-domain range names).

use nsys_gate_core::artifact::TESTED_VERSIONS;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use super::error::NsysError;
use super::process::{run_captured, Invocation};

/// An nsys executable and its exact version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nsys {
    /// The executable, as found.
    pub path: PathBuf,
    /// As `nsys --version` prints it, e.g. `2024.2.3.38-242334140272v0`.
    pub version: String,
}

/// Runs `nsys --version` and returns the version it prints.
pub fn identify(path: &Path) -> Result<Nsys, NsysError> {
    let args: [OsString; 1] = ["--version".into()];
    let output = run_captured(
        &Invocation::new(path, &args, Duration::from_secs(120)),
        &mut |_| {},
    )?;
    let words = output.words();
    let command = format!("{} --version", path.display());
    if !output.status.as_ref().is_some_and(ExitStatus::success) {
        return Err(NsysError::Version {
            command,
            status: output.describe_status(),
            words: output.excerpt(),
        });
    }
    match version_of(&words) {
        Some(version) => Ok(Nsys {
            path: path.to_owned(),
            version,
        }),
        None => Err(NsysError::NotNsys {
            command,
            words: output.excerpt(),
        }),
    }
}

/// The version in `nsys --version`'s words (`NVIDIA Nsight Systems version 2024.2.3.38-…`):
/// the word after `version ` on the line naming Nsight Systems, when it starts with a digit.
/// Another program's `--version` (`GNU GPL version 3 or later`) has none.
fn version_of(words: &str) -> Option<String> {
    words
        .lines()
        .filter(|l| l.contains("Nsight Systems"))
        .find_map(|l| l.split_once("version ")?.1.split_whitespace().next())
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
}

/// Whether nsys `version` (`nsys --version`'s, such as `2024.2.3.38-242334140272v0`) writes
/// `:message` for a range of the default domain. Public 2025.x outputs do; 2022.4, 2023.4
/// and 2024.2 (the versions tested here) write the name as pushed, a program's own leading
/// `:` included. So 2025.1 and newer do; older versions, and a version this cannot read,
/// do not (their names are kept exactly as nsys wrote them).
pub fn adds_default_domain_prefix(version: &str) -> bool {
    let Some((year, release)) = year_release(version) else {
        return false;
    };
    match (year.parse::<u32>(), release.parse::<u32>()) {
        (Ok(year), Ok(release)) => (year, release) >= (2025, 1),
        _ => false,
    }
}

/// Whether nsys `version` (`nsys --version`'s) is one of [`TESTED_VERSIONS`].
pub fn is_tested_version(version: &str) -> bool {
    year_release(version).is_some_and(|(year, release)| {
        TESTED_VERSIONS.contains(&format!("{year}.{release}").as_str())
    })
}

/// The first two runs of digits of an nsys version, as written: `2024.2.3.38-…` -> (`2024`,
/// `2`).
fn year_release(version: &str) -> Option<(&str, &str)> {
    let mut numbers = version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty());
    Some((numbers.next()?, numbers.next()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_version_of_nsys_and_of_nothing_else() {
        for (words, version) in [
            ("NVIDIA Nsight Systems version 2022.4.2.1-df9881f\n", Some("2022.4.2.1-df9881f")),
            ("NVIDIA Nsight Systems version 2024.2.3.38-242334140272v0", Some("2024.2.3.38-242334140272v0")),
            // GNU coreutils' `true --version`.
            ("true (GNU coreutils) 9.1\nLicense GPLv3+: GNU GPL version 3 or later <https://gnu.org/licenses/gpl.html>.", None),
            ("NVIDIA Nsight Systems version unknown", None),
            ("", None),
        ] {
            assert_eq!(version_of(words).as_deref(), version, "{words}");
        }
    }

    #[test]
    fn only_nsys_2025_1_and_newer_mark_the_default_domain() {
        for tested in [
            "2022.4.2.1-df9881f",
            "2023.4.4.54-234433681190v0",
            "2024.2.3.38-242334140272v0",
            "2024.7.1.84-247134868898v0",
            "2025.0",
        ] {
            assert!(!adds_default_domain_prefix(tested), "{tested}");
        }
        for newer in [
            "2025.1.1.131-251135540420v0",
            "2025.3.2",
            "2026.1",
            "v2025.1",
        ] {
            assert!(adds_default_domain_prefix(newer), "{newer}");
        }
        // A version this cannot read: names are kept as nsys wrote them.
        for unreadable in ["", "unknown", "2025"] {
            assert!(!adds_default_domain_prefix(unreadable), "{unreadable}");
        }
    }
}
