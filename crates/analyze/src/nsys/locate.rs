//! Finding the nsys executable: `--nsys`, else `$NSYS`, else `PATH`, else the usual install
//! places, else a copy `scripts/install-nsys.sh` installed for the project.

use std::path::{Path, PathBuf};

use super::error::NsysError;

/// Usual install places, searched after `--nsys`, `$NSYS` and `PATH`.
const USUAL_PLACES: &[&str] = &[
    "/usr/local/cuda/bin/nsys",
    "/opt/nvidia/nsight-systems/*/bin/nsys",
    "/usr/lib/nsight-systems/bin/nsys",
];

/// Folder (in this repository or one above the working folder) that
/// `scripts/install-nsys.sh` installs into.
const PROJECT_INSTALLS: &str = ".nsys";
/// The project install preferred when there are several.
const PREFERRED_PROJECT_VERSION: &str = "2024.2";

/// Which nsys the user asked for: errors name where the path came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NsysChoice {
    /// `--nsys PATH`.
    Flag(PathBuf),
    /// `$NSYS`.
    Env(PathBuf),
    /// Neither: search `PATH`, the usual install places and the project's installs.
    #[default]
    Search,
}

/// Finds nsys: `--nsys`, else `$NSYS`, else `PATH`, else the usual install places, else a
/// copy installed by `scripts/install-nsys.sh` in the working folder or one above it.
pub fn locate(choice: &NsysChoice) -> Result<PathBuf, NsysError> {
    match choice {
        NsysChoice::Flag(path) => return check_executable("`--nsys`", path),
        NsysChoice::Env(path) => return check_executable("`$NSYS`", path),
        NsysChoice::Search => {}
    }
    let mut searched = vec![
        "`--nsys` (not given)".to_owned(),
        "`$NSYS` (not set)".to_owned(),
    ];
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path_var) {
        let candidate = dir.join("nsys");
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    // The folders are not named: the error goes into the report, and the runner's PATH has no
    // business in a pull request.
    let folders = std::env::split_paths(&path_var).count();
    searched.push(format!(
        "`PATH` ({folders} {}; `echo $PATH` lists {})",
        if folders == 1 { "folder" } else { "folders" },
        if folders == 1 { "it" } else { "them" }
    ));
    for place in USUAL_PLACES {
        for candidate in expand_star(place) {
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
        searched.push((*place).to_owned());
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    for root in &roots {
        if let Some(found) = project_install(&root.join(PROJECT_INSTALLS)) {
            return Ok(found);
        }
    }
    searched.push(format!(
        "{PROJECT_INSTALLS}/*/nsys in the working folder, the nsys-gate executable's folder and the folders above them (installed by scripts/install-nsys.sh)"
    ));
    Err(NsysError::NotFound { searched })
}

/// `path` when it is an executable file, else an error naming `what` gave it.
fn check_executable(what: &'static str, path: &Path) -> Result<PathBuf, NsysError> {
    if is_executable(path) {
        Ok(path.to_owned())
    } else {
        Err(NsysError::NotExecutable {
            what,
            path: path.to_owned(),
        })
    }
}

/// Whether `path` is a file with an execute bit.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `/opt/x/*/bin/nsys` -> the existing matches, newest name last-sorted first.
fn expand_star(pattern: &str) -> Vec<PathBuf> {
    let Some((head, tail)) = pattern.split_once("/*/") else {
        return vec![PathBuf::from(pattern)];
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(head)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join(tail))
        .collect();
    found.sort();
    found.reverse();
    found
}

/// The nsys of a project install folder: the preferred version's, else the newest name's.
fn project_install(dir: &Path) -> Option<PathBuf> {
    let preferred = dir.join(PREFERRED_PROJECT_VERSION).join("nsys");
    if is_executable(&preferred) {
        return Some(preferred);
    }
    expand_star(&format!("{}/*/nsys", dir.display()))
        .into_iter()
        .find(|p| is_executable(p))
}
