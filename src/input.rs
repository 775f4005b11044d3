//! Opening the files nsys-gate reads: regular files only, and never more than a bound.
//!
//! Inputs are data from outside the tool's control: the profiled program (a pull request's
//! code) writes the run directory, and a fork's artifact carries the report that `post`
//! reads. A FIFO blocks `open` until a writer comes, which may be never, and `/dev/zero`
//! never ends; so every input is opened without blocking (`O_NONBLOCK`, which changes
//! nothing for a regular file's reads), checked on the opened file's own metadata (a
//! separate `stat` before the `open` could be outrun by a swap), and read through
//! [`Read::take`].

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::say::shown_path;

/// Why an input could not be read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InputError {
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

impl InputError {
    /// The error as an [`io::Error`] that does not repeat the path, for callers whose
    /// message names it already.
    pub(crate) fn into_io_error(self) -> io::Error {
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
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// Opens `path` for reading when it is a regular file (a symlink to one is fine); returns
/// the file and its size.
pub(crate) fn open_regular(path: &Path) -> Result<(File, u64), InputError> {
    let io_error = |source| InputError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io_error)?;
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
pub(crate) fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let (file, size) = open_regular(path)?;
    let too_large = || InputError::TooLarge {
        path: path.to_owned(),
        limit,
    };
    if size > limit {
        return Err(too_large());
    }
    // The size is a hint only: the file may grow while it is read.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub(crate) fn read_regular_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let bytes = read_regular(path, limit)?;
    String::from_utf8(bytes).map_err(|e| InputError::Io {
        path: path.to_owned(),
        source: io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

/// What a file that is not a regular file is, for messages.
fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
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
