//! The analysis.json files of a downloaded GitHub Actions artifact (a zip), unpacked safely:
//! the artifact is data that another run made (a fork's, possibly), so
//!
//! - an entry whose path is absolute or climbs out with `..` refuses the whole artifact;
//! - symlinks are never made (a symlink entry refuses the artifact), nor anything but regular
//!   files named analysis.json: every other entry is passed over, unread;
//! - the count of entries and of analysis.json files, each file's size and the total are
//!   bounded on the bytes actually decompressed, never on the sizes the archive claims.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::units::thousands;
use crate::ANALYSIS_FILE;

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
    /// An artifact of analyses: a few files of at most a few tens of MB.
    pub const ARTIFACT: Limits = Limits {
        max_entries: 10_000,
        max_files: 256,
        max_file_bytes: 1 << 30,
        max_total_bytes: 1 << 30,
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
    #[error("the artifact holds more than {0}: it is refused")]
    TooMuch(String),
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

/// Unpacks the analysis.json files of the zip at `zip_path` into the folder `dest`.
pub fn analyses(zip_path: &Path, dest: &Path, limits: Limits) -> Result<Unpacked, UnpackError> {
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
    }
    let mut out = Unpacked::default();
    let mut total: u64 = 0;
    for i in 0..archive.len() {
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
        let copied = copy_at_most(&mut entry, &mut written, room).map_err(io(&target))?;
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

/// Copies at most `limit` bytes; `None` when there was more.
fn copy_at_most(
    from: &mut impl Read,
    to: &mut impl Write,
    limit: u64,
) -> std::io::Result<Option<u64>> {
    let copied = std::io::copy(&mut from.take(limit.saturating_add(1)), to)?;
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
