//! How analysis.json is laid out on disk ([`JsonLayout`]): a serde_json formatter.

use std::io::Write;

/// How analysis.json is laid out: the top two levels one member per line (indented by two
/// spaces), anything deeper on one line (`{"index": 0, "range_id": 2, ...}`), as in the
/// contract's example. One line per iteration, warning or range keeps a large analysis
/// readable and greppable, and a large analysis a third smaller than fully indented JSON.
/// `gpu_work` goes one level deeper (one line per kernel, copy group, device or range), its
/// lists being one level further down, and so does `environment` (one line per GPU).
#[derive(Default)]
pub(super) struct JsonLayout {
    /// Containers open.
    level: usize,
    /// The innermost open container has a member already.
    has_value: bool,
    /// Reading a key of the top-level object (its text goes to `top_key`).
    in_top_key: bool,
    /// The top-level member being written.
    top_key: String,
}

/// Containers opened at this level or deeper are written on one line.
const INLINE_LEVEL: usize = 3;
/// The top-level members whose lists hold objects one level deeper.
const DEEPER_MEMBERS: [&str; 2] = ["gpu_work", "environment"];

impl JsonLayout {
    fn inline(&self) -> bool {
        let inline_level = if DEEPER_MEMBERS.contains(&self.top_key.as_str()) {
            INLINE_LEVEL + 1
        } else {
            INLINE_LEVEL
        };
        self.level >= inline_level
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        let inline = self.inline();
        self.level -= 1;
        if self.has_value && !inline {
            w.write_all(b"\n")?;
            indent(w, self.level)?;
        }
        w.write_all(bracket)
    }

    fn member<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if self.inline() {
            return w.write_all(if first { b"" } else { b", " });
        }
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.level)
    }
}

fn indent<W: ?Sized + Write>(w: &mut W, level: usize) -> std::io::Result<()> {
    for _ in 0..level {
        w.write_all(b"  ")?;
    }
    Ok(())
}

impl serde_json::ser::Formatter for JsonLayout {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.member(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if self.level == 1 {
            self.in_top_key = true;
            self.top_key.clear();
        }
        self.member(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.in_top_key = false;
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        if self.in_top_key {
            self.top_key.push_str(fragment);
        }
        w.write_all(fragment.as_bytes())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
