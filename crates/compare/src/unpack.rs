//! The analysis.json files of a downloaded GitHub Actions artifact (a zip), unpacked safely:
//! the artifact is data that another run made (a fork's, possibly), so
//!
//! - an entry whose path is absolute or climbs out with `..` refuses the whole artifact;
//! - symlinks are never made (a symlink entry refuses the artifact), nor anything but regular
//!   files named analysis.json: every other entry is passed over, unread;
//! - two entries that land on one path (one name twice, or `a/x` and `./a/x`) refuse the
//!   artifact: which one it meant cannot be told;
//! - the count of entries and of analysis.json files, each file's size and the total are
//!   bounded on the bytes actually decompressed, never on the sizes the archive claims.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use nsys_gate_core::artifact::ANALYSIS_FILE;
use nsys_gate_core::units::thousands;

/// How much an artifact may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Entries in the archive, of any kind.
    pub max_entries: usize,
    /// analysis.json files unpacked.
    pub max_files: usize,
    /// One analysis.json, decompressed.
    pub max_file_bytes: u64,
    /// All analysis.json files together, decompressed.
    pub max_total_bytes: u64,
}

impl Limits {
    /// An artifact of analyses for the history: a few files of at most a few tens of MB (a
    /// trace of a million ranges makes about 42 MB). The history needs each run's run-level
    /// numbers, not a gigabyte: one analysis.json over 64 MiB refuses the artifact.
    pub const ARTIFACT: Limits = Limits {
        max_entries: 10_000,
        max_files: 256,
        max_file_bytes: 64 << 20,
        max_total_bytes: 256 << 20,
    };
}

#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("the artifact is not a zip archive nsys-gate can read: {0}")]
    Zip(String),
    #[error("the artifact's entry `{0}` would land outside the folder it is unpacked to (an absolute path or `..`): the artifact is refused")]
    Escapes(String),
    #[error("the artifact's entry `{0}` is a symbolic link: the artifact is refused")]
    Symlink(String),
    #[error(
        "the artifact holds {0}: which one is meant cannot be told, so the artifact is refused"
    )]
    Duplicate(String),
    #[error("the artifact holds more than {0}: it is refused")]
    TooMuch(String),
    #[error("unpacking was interrupted")]
    Interrupted,
    #[error("cannot unpack the artifact into {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What was unpacked: the analysis.json files (in archive order) and how many other entries
/// were passed over.
#[derive(Debug, Default)]
pub struct Unpacked {
    pub files: Vec<PathBuf>,
    pub passed_over: usize,
}

/// [`analyses_until`] without a way to stop it.
#[cfg(test)]
fn analyses(zip_path: &Path, dest: &Path, limits: Limits) -> Result<Unpacked, UnpackError> {
    analyses_until(zip_path, dest, limits, &|| false)
}

/// Unpacks the analysis.json files of the zip at `zip_path` into the folder `dest`, stopping
/// with [`UnpackError::Interrupted`] as soon as `stop` says so (a signal): it is asked before
/// each entry and after each piece of [`PIECE`] bytes written. What was written until then
/// stays in `dest`, for the caller to remove with it.
pub fn analyses_until(
    zip_path: &Path,
    dest: &Path,
    limits: Limits,
    stop: &dyn Fn() -> bool,
) -> Result<Unpacked, UnpackError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| UnpackError::Io { path, source }
    };
    let file = File::open(zip_path).map_err(io(zip_path))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| UnpackError::Zip(e.to_string()))?;
    if archive.len() > limits.max_entries {
        return Err(UnpackError::TooMuch(format!(
            "{} entries",
            limits.max_entries
        )));
    }
    let shown = |name: &str| name.escape_debug().to_string();
    // Two entries of one name: the reader keeps one of them, silently. Which one the artifact
    // meant cannot be told, so it is refused (the name is not known here: the reader merged
    // the two).
    if archive.has_duplicate_names() {
        return Err(UnpackError::Duplicate(
            "two entries of one name (its central directory lists a name twice)".into(),
        ));
    }
    let mut paths = std::collections::HashSet::new();
    // Every entry's path first: an artifact that holds one bad entry is refused whole, before
    // anything is written.
    for i in 0..archive.len() {
        let entry = archive
            .by_index_raw(i)
            .map_err(|e| UnpackError::Zip(e.to_string()))?;
        let name = entry
            .name()
            .map_err(|e| UnpackError::Zip(e.to_string()))?
            .into_owned();
        // The zip crate reads a leading `/` as relative; an absolute name is refused all the
        // same, as is a `\` (a Windows separator, which could hide a `..\`).
        if entry.enclosed_name().is_none() || name.starts_with('/') || name.contains('\\') {
            return Err(UnpackError::Escapes(shown(&name)));
        }
        if entry.is_symlink() {
            return Err(UnpackError::Symlink(shown(&name)));
        }
        // Two names for one path (`a/x`, `./a/x`, `a//x`): the same refusal.
        let landing = entry.enclosed_name().expect("checked above");
        if entry.is_file() && !paths.insert(landing) {
            return Err(UnpackError::Duplicate(format!(
                "two entries that land on one path, the second `{}`",
                shown(&name)
            )));
        }
    }
    let mut out = Unpacked::default();
    let mut total: u64 = 0;
    for i in 0..archive.len() {
        if stop() {
            return Err(UnpackError::Interrupted);
        }
        let mut entry = archive
            .by_index(i)
            .map_err(|e| UnpackError::Zip(e.to_string()))?;
        let Some(relative) = entry.enclosed_name() else {
            unreachable!("checked above");
        };
        if !entry.is_file() || relative.file_name() != Some(ANALYSIS_FILE.as_ref()) {
            out.passed_over += 1;
            continue;
        }
        if out.files.len() == limits.max_files {
            return Err(UnpackError::TooMuch(format!(
                "{} {ANALYSIS_FILE} files",
                limits.max_files
            )));
        }
        let target = dest.join(&relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let mut written = File::create_new(&target).map_err(io(&target))?;
        let room = limits
            .max_file_bytes
            .min(limits.max_total_bytes.saturating_sub(total));
        let copied = match copy_at_most(&mut entry, &mut written, room, stop) {
            Ok(copied) => copied,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                return Err(UnpackError::Interrupted)
            }
            Err(e) => return Err(io(&target)(e)),
        };
        let Some(copied) = copied else {
            return Err(UnpackError::TooMuch(format!(
                "{} bytes of analyses (decompressed), or {} bytes in one file",
                thousands(limits.max_total_bytes as usize),
                thousands(limits.max_file_bytes as usize)
            )));
        };
        total += copied;
        out.files.push(target);
    }
    Ok(out)
}

/// The most written between two questions to `stop`.
const PIECE: usize = 1 << 20;

/// Copies at most `limit` bytes, a [`PIECE`] at a time; `None` when there was more, an error
/// of kind `Interrupted` when `stop` said so between two pieces.
fn copy_at_most(
    from: &mut impl Read,
    to: &mut impl Write,
    limit: u64,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Option<u64>> {
    let mut from = from.take(limit.saturating_add(1));
    let mut copied: u64 = 0;
    loop {
        if stop() {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let n = std::io::copy(&mut (&mut from).take(PIECE as u64), to)?;
        if n == 0 {
            break;
        }
        copied += n;
    }
    Ok((copied <= limit).then_some(copied))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    fn zip_with(entries: &[(&str, &[u8])]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut w = zip::ZipWriter::new(file.reopen().unwrap());
        for (name, bytes) in entries {
            if name.ends_with('/') {
                w.add_directory(*name, SimpleFileOptions::default())
                    .unwrap();
            } else {
                w.start_file(*name, SimpleFileOptions::default()).unwrap();
                w.write_all(bytes).unwrap();
            }
        }
        w.finish().unwrap();
        file
    }

    #[test]
    fn only_analyses_are_unpacked_where_they_belong() {
        let z = zip_with(&[
            ("a/", b""),
            ("a/analysis.json", b"{}"),
            ("b/c/analysis.json", b"[]"),
            ("a/report.md", b"# x"),
            ("trace.nsys-rep", b"x"),
        ]);
        let dest = tempfile::tempdir().unwrap();
        let u = analyses(z.path(), dest.path(), Limits::ARTIFACT).unwrap();
        assert_eq!(
            u.files,
            [
                dest.path().join("a/analysis.json"),
                dest.path().join("b/c/analysis.json")
            ]
        );
        assert_eq!(u.passed_over, 3);
        assert_eq!(std::fs::read(&u.files[1]).unwrap(), b"[]");
        assert!(!dest.path().join("a/report.md").exists());
    }

    #[test]
    fn climbing_out_refuses_the_artifact() {
        let outside = tempfile::tempdir().unwrap();
        let dest = outside.path().join("in");
        std::fs::create_dir(&dest).unwrap();
        for name in [
            "../analysis.json",
            "a/../../analysis.json",
            "/tmp/analysis.json",
        ] {
            let z = zip_with(&[("ok/analysis.json", b"{}"), (name, b"{}")]);
            let err = analyses(z.path(), &dest, Limits::ARTIFACT).unwrap_err();
            assert!(matches!(err, UnpackError::Escapes(_)), "{name}: {err}");
            assert!(!outside.path().join("analysis.json").exists());
        }
    }

    /// Also seen: of two entries with the same name, the later silently won. Two entries that
    /// land on one path refuse the artifact.
    #[test]
    fn two_entries_of_one_name_refuse_the_artifact() {
        // The zip writer refuses a repeated name, so one is renamed in the bytes.
        let z = zip_with(&[("a/analysis.json", b"{}"), ("b/analysis.json", b"[]")]);
        let bytes = std::fs::read(z.path()).unwrap();
        let from = b"b/analysis.json";
        let mut patched = bytes.clone();
        let mut at = 0;
        while let Some(i) = patched[at..].windows(from.len()).position(|w| w == from) {
            patched[at + i..at + i + from.len()].copy_from_slice(b"a/analysis.json");
            at += i + from.len();
        }
        assert_ne!(patched, bytes);
        std::fs::write(z.path(), &patched).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let err = analyses(z.path(), dest.path(), Limits::ARTIFACT).unwrap_err();
        assert!(matches!(err, UnpackError::Duplicate(_)), "{err}");
        assert!(err.to_string().contains("lists a name twice"), "{err}");
        assert!(!dest.path().join("a").exists());
        // Two names for one path (`a//analysis.json`, `./a/analysis.json`) likewise.
        let z = zip_with(&[("a/analysis.json", b"{}"), ("./a/analysis.json", b"[]")]);
        let dest = tempfile::tempdir().unwrap();
        let err = analyses(z.path(), dest.path(), Limits::ARTIFACT).unwrap_err();
        assert!(matches!(err, UnpackError::Duplicate(_)), "{err}");
    }

    #[test]
    fn unpacking_stops_when_asked() {
        let big = vec![b' '; 3 * PIECE];
        let z = zip_with(&[("a/analysis.json", &big), ("b/analysis.json", b"{}")]);
        let dest = tempfile::tempdir().unwrap();
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > 2
        };
        let err = analyses_until(z.path(), dest.path(), Limits::ARTIFACT, &stop).unwrap_err();
        assert!(matches!(err, UnpackError::Interrupted), "{err}");
        // Stopped inside the first file: one piece written, the second file never started.
        let written = std::fs::metadata(dest.path().join("a/analysis.json"))
            .unwrap()
            .len();
        assert_eq!(written, PIECE as u64);
        assert!(!dest.path().join("b").exists());
    }

    #[test]
    fn sizes_and_counts_are_bounded_on_what_is_decompressed() {
        let big = vec![b' '; 10_000];
        let z = zip_with(&[("a/analysis.json", &big)]);
        let dest = tempfile::tempdir().unwrap();
        let small = Limits {
            max_file_bytes: 9_999,
            ..Limits::ARTIFACT
        };
        assert!(matches!(
            analyses(z.path(), dest.path(), small),
            Err(UnpackError::TooMuch(_))
        ));
        let z = zip_with(&[("a/analysis.json", b"{}"), ("b/analysis.json", b"{}")]);
        let dest = tempfile::tempdir().unwrap();
        let one = Limits {
            max_files: 1,
            ..Limits::ARTIFACT
        };
        assert!(matches!(
            analyses(z.path(), dest.path(), one),
            Err(UnpackError::TooMuch(_))
        ));
        let z = zip_with(&[]);
        assert!(analyses(z.path(), dest.path(), Limits::ARTIFACT)
            .unwrap()
            .files
            .is_empty());
        let not_zip = tempfile::NamedTempFile::new().unwrap();
        assert!(matches!(
            analyses(not_zip.path(), dest.path(), Limits::ARTIFACT),
            Err(UnpackError::Zip(_))
        ));
    }
}
