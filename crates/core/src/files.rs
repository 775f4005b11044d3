//! The files nsys-gate reads and writes. Reads: regular files only, and never more than a
//! bound. Writes: atomically ([`write_atomically`]), so that a reader sees the old file or
//! the new one, never a partial one; the files a CI runner names for a step to append to,
//! only when they are regular files ([`open_append_regular`]).
//!
//! Inputs are data from outside the tool's control: the profiled program (a pull request's
//! code) writes the run directory, and a fork's artifact carries the analysis.json files that
//! `post --analyses` reads (found with [`find_named`], which follows no symlink, and read
//! with [`read_regular_no_symlink_until`]). A FIFO blocks `open` until a writer comes, which may be
//! never, and `/dev/zero` never ends; so every input is opened without blocking
//! (`O_NONBLOCK`, which changes nothing for a regular file's reads), checked on the opened
//! file's own metadata (a separate `stat` before the `open` could be outrun by a swap), and
//! read through [`Read::take`].

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::text::shown_path;

/// Why an input could not be read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {}: {source}", shown_path(.path))]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not a regular file (it is {what}); refusing to read it", shown_path(.path))]
    NotAFile { path: PathBuf, what: &'static str },
    #[error("{} is larger than {limit} bytes; refusing to read it", shown_path(.path))]
    TooLarge { path: PathBuf, limit: u64 },
}

/// Why [`find_named`] could not search a folder. Every variant names the path.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not a directory (it is {what})", .path.display())]
    NotADirectory { path: PathBuf, what: &'static str },
    #[error("{} holds more than {limit} {what}; refusing to search it", .path.display())]
    TooMany {
        path: PathBuf,
        what: String,
        limit: usize,
    },
}

impl InputError {
    /// The error as an [`io::Error`] that does not repeat the path, for callers whose
    /// message names it already.
    pub fn into_io_error(self) -> io::Error {
        match self {
            InputError::Io { source, .. } => source,
            InputError::NotAFile { what, .. } => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a regular file (it is {what}); refusing to read it"),
            ),
            InputError::TooLarge { limit, .. } => io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {limit} bytes; refusing to read it"),
            ),
        }
    }

    /// True when the file does not exist (callers often have a better word for that).
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// Opens `path` for reading when it is a regular file (a symlink to one is fine); returns
/// the file and its size.
pub fn open_regular(path: &Path) -> Result<(File, u64), InputError> {
    open_regular_with(path, Follow::Yes)
}

/// Whether the last component of a path may be a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follow {
    Yes,
    No,
}

fn open_regular_with(path: &Path, follow: Follow) -> Result<(File, u64), InputError> {
    let io_error = |source| InputError::Io {
        path: path.to_owned(),
        source,
    };
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if follow == Follow::No {
        flags |= libc::O_NOFOLLOW;
    }
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
    {
        Ok(file) => file,
        // O_NOFOLLOW on a symlink fails with ELOOP.
        Err(e) if follow == Follow::No && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(InputError::NotAFile {
                path: path.to_owned(),
                what: "a symlink",
            })
        }
        Err(e) => return Err(io_error(e)),
    };
    let meta = file.metadata().map_err(io_error)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(InputError::NotAFile {
            path: path.to_owned(),
            what: describe(kind),
        });
    }
    Ok((file, meta.len()))
}

/// Reads the regular file `path` whole, refusing one over `limit` bytes (checked on what is
/// read, not only on the size the file had when it was opened).
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    read_regular_with(path, limit, Follow::Yes, &|| false)
}

/// [`read_regular`], refusing a symlink too (for files found in a folder that someone else
/// filled, an artifact, where a symlink could point anywhere on the machine), a piece at a
/// time, asking `stop` before each piece: an
/// [`InputError::Io`] ("stopped") when it says so (a signal, a stage's deadline), which the
/// caller tells apart by asking `stop` again.
pub fn read_regular_no_symlink_until(
    path: &Path,
    limit: u64,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<u8>, InputError> {
    read_regular_with(path, limit, Follow::No, stop)
}

/// The most read between two questions to `stop`.
const READ_PIECE: u64 = 4 << 20;

fn read_regular_with(
    path: &Path,
    limit: u64,
    follow: Follow,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<u8>, InputError> {
    let (file, size) = open_regular_with(path, follow)?;
    let too_large = || InputError::TooLarge {
        path: path.to_owned(),
        limit,
    };
    if size > limit {
        return Err(too_large());
    }
    // The size is a hint only: the file may grow while it is read.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    let mut from = file.take(limit.saturating_add(1));
    loop {
        if stop() {
            return Err(InputError::Io {
                path: path.to_owned(),
                source: io::Error::other("stopped"),
            });
        }
        let n = (&mut from)
            .take(READ_PIECE)
            .read_to_end(&mut bytes)
            .map_err(|source| InputError::Io {
                path: path.to_owned(),
                source,
            })?;
        if n == 0 {
            break;
        }
    }
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let bytes = read_regular(path, limit)?;
    String::from_utf8(bytes).map_err(|e| InputError::Io {
        path: path.to_owned(),
        source: io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

/// How far [`find_named`] looks: a folder that someone else filled may be deep or huge.
#[derive(Debug, Clone, Copy)]
pub struct SearchBounds {
    /// Deepest level searched: the root's own entries are level 1.
    pub max_depth: usize,
    /// Folder entries looked at, in all.
    pub max_entries: usize,
    /// Files found, at most.
    pub max_found: usize,
}

/// What [`find_named`] found: the regular files of the name, and what it passed over; each
/// list sorted.
#[derive(Debug, Default)]
pub struct Found {
    pub files: Vec<PathBuf>,
    /// Entries of the name that are not regular files (a symlink is not followed), and what
    /// each is.
    pub skipped: Vec<(PathBuf, &'static str)>,
    /// Folders not searched because they are deeper than `max_depth`.
    pub too_deep: Vec<PathBuf>,
}

/// The regular files named `name` in the folder `root` and the folders below it, found
/// without following a symlink (`root` itself may be one) and within `bounds`: more entries
/// or more files than the bounds allow is an error, folders deeper than `max_depth` are
/// passed over (and listed).
pub fn find_named(root: &Path, name: &str, bounds: SearchBounds) -> Result<Found, SearchError> {
    let io_error = |path: &Path| {
        let path = path.to_owned();
        move |source| SearchError::Io { path, source }
    };
    let meta = std::fs::metadata(root).map_err(io_error(root))?;
    if !meta.is_dir() {
        return Err(SearchError::NotADirectory {
            path: root.to_owned(),
            what: describe(meta.file_type()),
        });
    }
    let too_many = |what: String, limit| SearchError::TooMany {
        path: root.to_owned(),
        what,
        limit,
    };
    let mut found = Found::default();
    let mut entries = 0usize;
    // Depth first with a stack of its own: no recursion, so no depth can overflow it.
    let mut stack = vec![(root.to_owned(), 1usize)];
    while let Some((dir, depth)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io_error(&dir))? {
            let entry = entry.map_err(io_error(&dir))?;
            entries += 1;
            if entries > bounds.max_entries {
                return Err(too_many("entries".into(), bounds.max_entries));
            }
            let path = entry.path();
            // The entry's own type: a symlink is a symlink here, never what it points to.
            let kind = entry.file_type().map_err(io_error(&path))?;
            if kind.is_dir() {
                if depth < bounds.max_depth {
                    stack.push((path, depth + 1));
                } else {
                    found.too_deep.push(path);
                }
            } else if entry.file_name() == name {
                if !kind.is_file() {
                    found.skipped.push((path, describe(kind)));
                    continue;
                }
                if found.files.len() == bounds.max_found {
                    return Err(too_many(format!("files named {name}"), bounds.max_found));
                }
                found.files.push(path);
            }
        }
    }
    found.files.sort();
    found.skipped.sort();
    found.too_deep.sort();
    Ok(found)
}

/// What kind of file it is, for messages.
fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_file() {
        "a regular file"
    } else if kind.is_symlink() {
        "a symlink"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` to append to it (created when missing) when it is a regular file: the files a
/// CI runner names for a step to write (`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`). A FIFO would
/// block `open` until a reader comes, which may be never: it is opened without blocking
/// (`O_NONBLOCK`, which changes nothing for a regular file's writes; a FIFO without a reader
/// fails at once) and anything but a regular file is refused, on the opened file's own
/// metadata.
pub fn open_append_regular(path: &Path) -> io::Result<File> {
    let refused = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file (it is {what}); refusing to write to it"),
        )
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() => refused(describe(meta.file_type())),
            _ => e,
        })?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(refused(describe(kind)));
    }
    Ok(file)
}

/// Writes `bytes` to `path` atomically: see [`write_atomically_with`].
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomically_with(path, |out| out.write_all(bytes))
}

/// Writes what `write` makes to `path` atomically: a temporary file in the same folder
/// (through a buffer), then renamed over `path`. A reader sees the old file or the new one,
/// never a partial one, and a failure or a kill leaves the old file as it was.
///
/// The file gets the umask's mode (0666 less the umask), as a file made by `>` or `cp`
/// would, also when it replaces an existing file.
///
/// The file is not fsynced: that would guard against a power cut between the write and the
/// next writeback, at 0.1 s per 60 MB (a large analysis), for a file any rerun rebuilds from
/// the CSVs; and ext4, the usual runner file system, flushes a file renamed over another
/// before the rename itself reaches the disk.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<tempfile::NamedTempFile>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".nsys-gate-")
        .suffix(".tmp")
        // The mode any tool's new file gets (0666 less the umask), not tempfile's private
        // 0600: a later step running as another user reads these files.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", shown_path(dir)))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp);
    write(&mut out)
        .and_then(|()| out.flush())
        .with_context(|| format!("cannot write a temporary file in {}", shown_path(dir)))?;
    let tmp = out
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("cannot write a temporary file in {}", shown_path(dir)))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot replace {}", shown_path(path)))?;
    Ok(())
}

/// The absolute form of a path, without resolving symlinks when it does not exist.
pub fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_by_their_kind() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_regular(dir.path(), 10).unwrap_err();
        assert!(
            e.to_string()
                .contains("is not a regular file (it is a directory)"),
            "{e}"
        );
        let e = read_regular(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(
            e.to_string().ends_with(
                "/dev/zero is not a regular file (it is a character device); refusing to read it"
            ),
            "{e}"
        );
        let e = read_regular(&dir.path().join("missing"), 10).unwrap_err();
        assert!(e.is_not_found(), "{e}");
        // A FIFO with no writer: refused at once, not waited on.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let e = read_regular(&fifo, 10).unwrap_err();
        assert!(
            e.to_string()
                .contains("is not a regular file (it is a FIFO)"),
            "{e}"
        );
    }

    #[test]
    fn a_step_file_that_is_not_a_regular_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let e = open_append_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("(it is a FIFO)"), "{e}");
        // With a reader at the other end, the open succeeds and the kind refuses it.
        let _reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let e = open_append_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("(it is a FIFO)"), "{e}");
        let e = open_append_regular(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let file = dir.path().join("summary.md");
        open_append_regular(&file).unwrap().write_all(b"x").unwrap();
        open_append_regular(&file).unwrap().write_all(b"y").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"xy");
    }

    #[test]
    fn a_symlink_is_refused_when_it_may_not_be_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"data").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(read_regular(&link, 10).unwrap(), b"data");
        let e = read_regular_no_symlink_until(&link, 10, &|| false).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("link is not a regular file (it is a symlink); refusing to read it"),
            "{e}"
        );
        assert_eq!(
            read_regular_no_symlink_until(&target, 10, &|| false).unwrap(),
            b"data"
        );
    }

    fn bounds(max_depth: usize, max_entries: usize, max_found: usize) -> SearchBounds {
        SearchBounds {
            max_depth,
            max_entries,
            max_found,
        }
    }

    #[test]
    fn the_search_follows_no_symlink_and_keeps_to_its_bounds() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        for dir in [&root.join("a/b"), &root.join("c"), &outside] {
            std::fs::create_dir_all(dir).unwrap();
        }
        for file in ["a/b/x.json", "c/x.json", "x.json", "a/other.json"] {
            std::fs::write(root.join(file), b"{}").unwrap();
        }
        std::fs::write(outside.join("x.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("to-outside")).unwrap();
        std::os::unix::fs::symlink(outside.join("x.json"), root.join("a/x.json")).unwrap();
        let found = find_named(&root, "x.json", bounds(16, 100, 10)).unwrap();
        let rel = |paths: &[PathBuf]| -> Vec<String> {
            paths
                .iter()
                .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(rel(&found.files), ["a/b/x.json", "c/x.json", "x.json"]);
        assert_eq!(found.skipped, [(root.join("a/x.json"), "a symlink")]);
        assert!(found.too_deep.is_empty());
        // Depth: the root's entries are level 1.
        let found = find_named(&root, "x.json", bounds(2, 100, 10)).unwrap();
        assert_eq!(rel(&found.files), ["c/x.json", "x.json"]);
        assert_eq!(rel(&found.too_deep), ["a/b"]);
        // Counts.
        let e = find_named(&root, "x.json", bounds(16, 100, 2)).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("holds more than 2 files named x.json; refusing to search it"),
            "{e}"
        );
        let e = find_named(&root, "x.json", bounds(16, 3, 10)).unwrap_err();
        assert!(e.to_string().contains("holds more than 3 entries"), "{e}");
        // The root must be a folder (a symlink to one is fine: the caller named it).
        let e = find_named(&root.join("x.json"), "x.json", bounds(16, 100, 10)).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("x.json is not a directory (it is a regular file)"),
            "{e}"
        );
        let found = find_named(&root.join("to-outside"), "x.json", bounds(16, 100, 10)).unwrap();
        assert_eq!(found.files.len(), 1);
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_one_at_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_regular(&path, 5).unwrap(), b"12345");
        let e = read_regular(&path, 4).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 4, .. }), "{e}");
        std::fs::write(&path, b"\xff").unwrap();
        assert!(read_regular_text(&path, 5).is_err());
    }
}
