//! Reading a manifest: its bytes ([`read_bytes`], at most [`MAX_MANIFEST_BYTES`], from a
//! regular file only), their decoding (UTF-8, or UTF-16 with a byte order mark, like PyYAML's
//! reader), and [`parse`], which runs the three steps: decoding, composing the YAML
//! ([`super::yaml`]) and checking the keys ([`super::validate`]).

use std::borrow::Cow;
use std::path::Path;

use super::error::{ManifestError, ManifestErrorKind};
use super::model::Manifest;
use super::validate::Validator;
use super::yaml;
use nsys_gate_core::files::InputError;

/// Largest manifest accepted, in bytes. Real manifests are a few kilobytes; the limit only
/// keeps a wrong path (a trace, a log) from being loaded into memory.
pub const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// Reads a manifest file's bytes, refusing files over [`MAX_MANIFEST_BYTES`] without reading
/// them whole, and anything but a regular file (a FIFO would block forever) without waiting on
/// it. The caller hashes these bytes for provenance and hands them to [`parse`].
///
/// # Errors
///
/// [`ManifestErrorKind::Io`] when the file cannot be read, [`ManifestErrorKind::NotAFile`]
/// when it is not a regular file, [`ManifestErrorKind::TooLarge`] when it is over the limit.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ManifestError> {
    nsys_gate_core::files::read_regular(path, MAX_MANIFEST_BYTES).map_err(|e| match e {
        InputError::Io { source, .. } => {
            ManifestError::new(path, None, ManifestErrorKind::Io(source))
        }
        InputError::NotAFile { what, .. } => {
            ManifestError::new(path, None, ManifestErrorKind::NotAFile { what })
        }
        InputError::TooLarge { .. } => too_large(path),
    })
}

/// Parses and validates a manifest. `file_label` names the file in error messages.
///
/// # Errors
///
/// Any [`ManifestErrorKind`] but `Io`: the bytes are too many or not text, the YAML is
/// malformed or hostile, or a key the tool needs is missing or ill-typed. The error names the
/// file, the key and its line (or the line and column of a syntax error).
pub fn parse(text: &[u8], file_label: &Path) -> Result<Manifest, ManifestError> {
    let text = decode(text, file_label)?;
    let root = yaml::load(&text, file_label)?;
    Validator { file: file_label }.manifest(root)
}

/// The error of a file over [`MAX_MANIFEST_BYTES`].
fn too_large(file: &Path) -> ManifestError {
    ManifestError::new(
        file,
        None,
        ManifestErrorKind::TooLarge {
            limit: MAX_MANIFEST_BYTES,
        },
    )
}

/// Decodes the bytes the way PyYAML's reader does: UTF-16 when a byte order mark says so,
/// UTF-8 otherwise (a UTF-8 byte order mark is left for the YAML parser, which skips it).
fn decode<'t>(bytes: &'t [u8], file: &Path) -> Result<Cow<'t, str>, ManifestError> {
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(too_large(file));
    }
    let encoding_error = |line: Option<usize>, message: String| {
        ManifestError::new(file, line, ManifestErrorKind::Encoding { message })
    };
    let utf16 = match bytes {
        [0xFF, 0xFE, rest @ ..] => Some((rest, u16::from_le_bytes as fn([u8; 2]) -> u16)),
        [0xFE, 0xFF, rest @ ..] => Some((rest, u16::from_be_bytes as fn([u8; 2]) -> u16)),
        _ => None,
    };
    if let Some((rest, unit)) = utf16 {
        if rest.len() % 2 != 0 {
            return Err(encoding_error(
                None,
                "not valid utf-16: the file has an odd number of bytes".to_owned(),
            ));
        }
        let units = rest.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
        let mut text = String::with_capacity(rest.len() / 2);
        for (index, c) in char::decode_utf16(units).enumerate() {
            match c {
                Ok(c) => text.push(c),
                Err(e) => {
                    let line = text.matches('\n').count() + 1;
                    return Err(encoding_error(
                        Some(line),
                        format!(
                            "not valid utf-16: unpaired surrogate 0x{:04x} at byte offset {}",
                            e.unpaired_surrogate(),
                            2 + 2 * index
                        ),
                    ));
                }
            }
        }
        return Ok(Cow::Owned(text));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Cow::Borrowed(text)),
        Err(e) => {
            let offset = e.valid_up_to();
            let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
            let message = match e.error_len() {
                Some(_) => format!(
                    "not valid utf-8: byte 0x{:02x} at byte offset {offset} \
                     (the manifest must be utf-8 text)",
                    bytes[offset]
                ),
                None => format!(
                    "not valid utf-8: the file ends inside a character at byte offset {offset}"
                ),
            };
            Err(encoding_error(Some(line), message))
        }
    }
}
