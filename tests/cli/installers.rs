//! The install scripts and the check of the tools they install (`scripts/lib/check-libs.sh`,
//! `scripts/check-tools.sh`): a tool whose shared library is missing fails by name (the tool,
//! the binary, the library and the Debian package to add), not later in a test with "error
//! while loading shared libraries".
//!
//! The missing library is made by copying the real cmark-gfm install (Debian's binary and its
//! two libraries, from `scripts/install-cmark-gfm.sh`) and removing one library from the copy:
//! the one thing a real install on this machine cannot show.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{installed_or_skip, repo};

fn cmark_prefix() -> Option<PathBuf> {
    let prefix = repo().join(".tools/cmark-gfm/prefix");
    let missing = format!(
        "cmark-gfm is not installed at {} (run `scripts/install-cmark-gfm.sh`)",
        prefix.display()
    );
    installed_or_skip(
        Some(prefix).filter(|p| p.join("usr/bin/cmark-gfm").is_file()),
        &missing,
    )
}

/// A copy of the installed prefix (`usr/bin/cmark-gfm`, `usr/lib/x86_64-linux-gnu/*.so*`).
fn copy_prefix(from: &Path, to: &Path) {
    for sub in ["usr/bin", "usr/lib/x86_64-linux-gnu"] {
        std::fs::create_dir_all(to.join(sub)).unwrap();
        for entry in std::fs::read_dir(from.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let dest = to.join(sub).join(path.file_name().unwrap());
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&path).unwrap(), &dest).unwrap();
            } else if meta.is_file() {
                std::fs::copy(&path, &dest).unwrap();
            }
        }
    }
}

fn check_libs(tool: &str, libdir: &Path, binary: &Path) -> Output {
    Command::new(repo().join("scripts/lib/check-libs.sh"))
        .arg(tool)
        .arg(libdir)
        .arg(binary)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_missing_library_is_named_with_its_tool_binary_and_debian_package() {
    let Some(prefix) = cmark_prefix() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("prefix");
    copy_prefix(&prefix, &copy);
    let libdir = copy.join("usr/lib/x86_64-linux-gnu");
    let binary = copy.join("usr/bin/cmark-gfm");

    // The whole install: every library resolves, nothing said.
    let out = check_libs("cmark-gfm", &libdir, &binary);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");

    // One library gone, as when an installer forgets a package.
    for entry in std::fs::read_dir(&libdir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("libcmark-gfm-extensions.so") {
            std::fs::remove_file(&path).unwrap();
        }
    }
    let out = check_libs("cmark-gfm", &libdir, &binary);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let binary = std::fs::canonicalize(&binary).unwrap();
    assert_eq!(
        err.trim_end(),
        format!(
            "check-libs: cmark-gfm: {} needs libcmark-gfm-extensions.so.0.29.0.gfm.6, which is not installed: add the Debian package libcmark-gfm-extensions0.29.0.gfm.6 to the tool's installer (or apt-get install libcmark-gfm-extensions0.29.0.gfm.6)",
            binary.display()
        )
    );
    // Only the missing one is named: libcmark-gfm.so is still there.
    assert!(!err.contains("libcmark-gfm.so."), "{err}");
}

#[test]
fn a_library_of_no_known_package_is_named_with_how_to_find_it() {
    let Some(prefix) = cmark_prefix() else {
        return;
    };
    // No library folder at all: both libraries are missing, each named.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("prefix");
    copy_prefix(&prefix, &copy);
    let binary = copy.join("usr/bin/cmark-gfm");
    let out = check_libs("cmark-gfm", &tmp.path().join("nowhere"), &binary);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 2, "{err}");
    for (lib, package) in [
        ("libcmark-gfm.so.0.29.0.gfm.6", "libcmark-gfm0.29.0.gfm.6"),
        (
            "libcmark-gfm-extensions.so.0.29.0.gfm.6",
            "libcmark-gfm-extensions0.29.0.gfm.6",
        ),
    ] {
        assert!(
            err.contains(&format!(
                "needs {lib}, which is not installed: add the Debian package {package} "
            )),
            "{err}"
        );
    }

    // A library the table does not know (nsys's own, looked for without its folder): how to
    // find its package.
    let Some(nsys) = crate::common::nsys("2024.2") else {
        return;
    };
    let tool = nsys
        .parent()
        .unwrap()
        .join("prefix/usr/lib/nsight-systems/host-linux-x64/ResolveSymbols");
    let out = check_libs("nsys 2024.2", &tmp.path().join("nowhere"), &tool);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "needs libAnalysis.so, which is not installed: find its Debian package with `apt-file search libAnalysis.so` and add it to the tool's installer"
        ),
        "{err}"
    );
}

/// A binary of the base system's libraries alone passes; one that is not there fails, named.
#[test]
fn a_binary_of_base_libraries_passes_and_a_missing_binary_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("nsys-gate");
    let out = check_libs("nsys-gate", tmp.path(), &binary);
    // The debug build links glibc dynamically: its libraries are the base system's.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let missing = tmp.path().join("gone");
    let out = check_libs("ghost", tmp.path(), &missing);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "check-libs: ghost: {} does not exist",
            missing.display()
        )),
        "{}",
        stderr(&out)
    );
}

/// A tool unpacked with its libraries that takes one from this machine's extra packages fails
/// too, naming the package: on a fresh Debian 12 that library would be missing, and this
/// machine's packages must not hide it (the installed rsync that ran only where the host had
/// libpopt). curl, which every installer needs, links libcurl, not in a minimal Debian 12.
#[test]
fn a_library_only_this_machines_packages_hold_is_named() {
    let has_dpkg = Command::new("dpkg-query").arg("--version").output().is_ok();
    let curl = Path::new("/usr/bin/curl");
    if !has_dpkg || !curl.is_file() {
        installed_or_skip(None, "dpkg-query and /usr/bin/curl (a Debian machine)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = check_libs("curl", tmp.path(), curl);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "check-libs: curl: /usr/bin/curl takes libcurl.so.4 from this machine's package libcurl4, which a minimal Debian 12 does not have: add the Debian package libcurl4 to the tool's installer"
        ),
        "{}",
        stderr(&out)
    );
    // The base system's own libraries (glibc) never are.
    assert!(!stderr(&out).contains("libc.so.6"), "{}", stderr(&out));
    // A system tool checked without a library folder (the machine's own rsync, node) is the
    // system's business: only its missing libraries count.
    let out = Command::new(repo().join("scripts/lib/check-libs.sh"))
        .args(["curl", ""])
        .arg(curl)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Every install script that unpacks Debian packages checks what it unpacked before marking the
/// install complete, and scripts/test.sh checks every tool before the tests.
#[test]
fn every_installer_checks_its_libraries_and_the_suite_checks_every_tool() {
    let scripts = repo().join("scripts");
    let mut installers = 0;
    for entry in std::fs::read_dir(&scripts).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("install-") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("fetch_debs ") {
            continue;
        }
        installers += 1;
        let check = text
            .find("check_libs ")
            .unwrap_or_else(|| panic!("{name} never calls check_libs"));
        let complete = text
            .rfind("> \"$dest/.complete\"")
            .unwrap_or_else(|| panic!("{name} writes no .complete"));
        assert!(
            check < complete,
            "{name} marks the install complete before checking its libraries"
        );
    }
    assert_eq!(
        installers, 3,
        "install-nsys, install-cmark-gfm, install-gitlab-ci-local"
    );
    let test = std::fs::read_to_string(scripts.join("test.sh")).unwrap();
    let check = test
        .find("scripts/check-tools.sh")
        .expect("test.sh runs check-tools.sh");
    assert!(check < test.find("cargo test").unwrap());
}

/// The tools installed on this machine pass the check (under CI, all of them).
#[test]
fn the_installed_tools_pass_the_check() {
    if cmark_prefix().is_none() || crate::common::nsys("2024.2").is_none() {
        return;
    }
    let out = Command::new(repo().join("scripts/check-tools.sh"))
        .args(["nsys", "cmark-gfm"])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let err = stderr(&out);
    if std::env::var_os("CI").is_none() && err.contains("is not installed") {
        eprintln!("SKIPPED: not every nsys version is installed: {err}");
        crate::skips::record("not every nsys version is installed (scripts/check-tools.sh)");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("cmark-gfm") && err.contains("nsys 2024.2"),
        "{err}"
    );
}

/// `scripts/render-report.sh` without Chromium stops at once and names the script that
/// installs it, before rendering anything.
#[test]
fn render_report_without_chromium_names_its_installer() {
    let tmp = tempfile::tempdir().unwrap();
    // A PATH of the few tools the script runs before it looks for chromium, chromium not
    // among them, and a cmark-gfm that is never reached.
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["bash", "dirname", "mktemp", "rm", "cat", "realpath"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{tool} not in /usr/bin or /bin"));
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    std::fs::write(bin.join("cmark-gfm"), "#!/bin/sh\nexit 9\n").unwrap();
    std::fs::set_permissions(
        bin.join("cmark-gfm"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // A copy of the script alone, so that the repository's .tools/cmark-gfm is not found.
    let scripts = tmp.path().join("repo/scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::copy(
        repo().join("scripts/render-report.sh"),
        scripts.join("render-report.sh"),
    )
    .unwrap();
    let report = tmp.path().join("report.md");
    std::fs::write(&report, "# report\n").unwrap();
    let out = Command::new(bin.join("bash"))
        .arg(scripts.join("render-report.sh"))
        .arg(&report)
        .arg(tmp.path().join("out.png"))
        .env_clear()
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "render-report: chromium not found: scripts/install-chromium.sh installs Debian's (as root)"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!tmp.path().join("out.png").exists());
}
