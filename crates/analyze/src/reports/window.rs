//! A bounded, refillable read window over the report file.
//!
//! The parsers work on `&[u8]` slices of this window, so numbers are parsed in place and
//! nothing is copied per field. Memory is the window, which only grows (by doubling, up to
//! a hard limit) when a single record plus the one after it (the look-ahead) does not fit.

use std::io::{self, Read};

pub enum FillError {
    Io(io::Error),
    /// The unconsumed data already fills the largest window allowed.
    TooLong,
}

pub struct Window<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// 1-based line number of `buf[start]` (u64: names with many newlines can push a file
    /// past `u32::MAX` lines; rows saturate when converting).
    line: u64,
    /// Bytes consumed so far, plus where the reader started in its file.
    offset: u64,
    max_len: usize,
}

impl<R: Read> Window<R> {
    pub fn new(reader: R, initial_len: usize, max_len: usize) -> Self {
        let max_len = max_len.max(1);
        Window {
            reader,
            buf: vec![0; initial_len.clamp(1, max_len)],
            start: 0,
            end: 0,
            eof: false,
            line: 1,
            offset: 0,
            max_len,
        }
    }

    /// For a reader that starts at `offset` in its file, on line `line` (1-based).
    pub fn starting_at(mut self, offset: u64, line: u64) -> Self {
        self.offset = offset;
        self.line = line;
        self
    }

    /// The data read and not yet consumed.
    pub fn data(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or(&[])
    }

    /// True once the reader reported end of file: `data()` then holds all that is left.
    pub fn eof(&self) -> bool {
        self.eof
    }

    pub fn line(&self) -> u64 {
        self.line
    }

    /// Offset in the file of `data()[0]`.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Drops the first `n` bytes of `data()`, counting the lines they end.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.line = self
            .line
            .saturating_add(count_newlines(&self.buf[self.start..self.start + n]));
        self.start += n;
        self.offset += n as u64;
    }

    /// Reads more after the current data (moving it to the front, and doubling the window
    /// when it is full), until the window is full or the input ends.
    pub fn fill(&mut self) -> Result<(), FillError> {
        if self.eof {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= self.max_len {
                return Err(FillError::TooLong);
            }
            let new_len = self.buf.len().saturating_mul(2).min(self.max_len);
            self.buf.resize(new_len, 0);
        }
        while self.end < self.buf.len() {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                // `min` guards against a reader that claims more than it was given.
                Ok(n) => self.end = (self.end + n).min(self.buf.len()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(FillError::Io(e)),
            }
        }
        Ok(())
    }
}

pub fn count_newlines(bytes: &[u8]) -> u64 {
    // Records are short: per-chunk byte sums (no overflow: 64 < 256) vectorize well.
    bytes
        .chunks(64)
        .map(|chunk| chunk.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>() as u64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `chunk` bytes per call.
    struct Trickle<'a> {
        data: &'a [u8],
        chunk: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.chunk.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn grows_and_counts_lines() {
        let input = b"ab\ncd\nef";
        let mut w = Window::new(
            Trickle {
                data: input,
                chunk: 1,
            },
            2,
            64,
        );
        assert!(w.fill().is_ok());
        assert_eq!(w.data(), b"ab");
        assert!(w.fill().is_ok());
        assert_eq!(w.data(), b"ab\nc");
        w.consume(3);
        assert_eq!(w.line(), 2);
        assert!(w.fill().is_ok());
        assert_eq!(w.data(), b"cd\ne");
        assert!(!w.eof());
        assert!(w.fill().is_ok());
        assert_eq!(w.data(), b"cd\nef");
        assert!(w.eof());
        w.consume(100);
        assert_eq!(w.line(), 3);
        assert!(w.data().is_empty());
    }

    #[test]
    fn refuses_to_grow_past_the_limit() {
        let input = [b'x'; 100];
        let mut w = Window::new(&input[..], 4, 8);
        assert!(w.fill().is_ok());
        assert!(w.fill().is_ok());
        assert_eq!(w.data().len(), 8);
        assert!(matches!(w.fill(), Err(FillError::TooLong)));
    }
}
