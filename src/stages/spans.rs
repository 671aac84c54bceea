//! Span building: `enter`/`leave` pairs become complete `state` rows.
//!
//! A `state` row is emitted when its `leave` arrives, which is its completion
//! time, so the output stays in stream order without buffering other rows.
//! Memory: the open frames of every location.

use crate::fasthash::FastMap;

use crate::error::{Error, Result, Warnings};
use crate::model::record::{flags, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::RecordSink;

#[derive(Default)]
struct Stack {
    /// Frames; slots past `depth` are kept to reuse their buffers.
    frames: Vec<Record>,
    depth: usize,
}

/// A sink stage that turns `enter`/`leave` pairs into `state` rows and passes
/// every other row through unchanged.
pub struct SpanBuilder<S> {
    next: S,
    symbols: Symbols,
    stacks: FastMap<Sym, Stack>,
    out: Record,
    last_time: Option<i64>,
    warnings: Warnings,
}

impl<S: RecordSink> SpanBuilder<S> {
    /// A span builder writing into `next` (rows whose identifiers are in
    /// `symbols`), reporting frames left open to `warnings`.
    pub fn new(next: S, symbols: Symbols, warnings: Warnings) -> SpanBuilder<S> {
        SpanBuilder {
            next,
            symbols,
            stacks: FastMap::default(),
            out: Record::new(Kind::State),
            last_time: None,
            warnings,
        }
    }

    /// Fills `out` with the state of `frame` closed at `end` by `leave` (if any).
    fn close(out: &mut Record, frame: &Record, end: i64, depth: usize, leave: Option<&Record>) {
        out.clone_from(frame);
        out.kind = Kind::State;
        out.end = Some(end);
        out.depth = Some(u32::try_from(depth).unwrap_or(u32::MAX));
        // A frame a slice entered again at its window's start (S, with the
        // true start) makes a clipped state, as slicing the state would.
        let resliced = frame.flags.contains(flags::SYNTHETIC) && frame.attrs.contains("orig_time=");
        if resliced {
            out.flags.retain(|c| c != flags::SYNTHETIC);
        }
        if let Some(leave) = leave {
            for c in leave.flags.chars() {
                out.add_flag(c);
            }
            if !leave.attrs.is_empty() {
                if !out.attrs.is_empty() {
                    out.attrs.push(';');
                }
                out.attrs.push_str(&leave.attrs);
            }
        }
        if resliced {
            out.add_flag(flags::CLIPPED);
        }
        out.place_orig_times_last();
    }
}

impl<S: RecordSink> RecordSink for SpanBuilder<S> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.time.is_some() {
            self.last_time = rec.completion();
        }
        match rec.kind {
            Kind::Enter => {
                let stack = self.stacks.entry(rec.loc).or_default();
                if stack.depth < stack.frames.len() {
                    stack.frames[stack.depth].clone_from(rec);
                } else {
                    stack.frames.push(rec.clone());
                }
                stack.depth += 1;
                Ok(())
            }
            Kind::Leave => {
                let text = |sym| self.symbols.text(sym);
                let Some(stack) = self.stacks.get_mut(&rec.loc).filter(|s| s.depth > 0) else {
                    return Err(Error::Record(format!(
                        "`leave` of `{}` on `{}` with no open frame",
                        text(rec.name),
                        text(rec.loc)
                    )));
                };
                let frame = &stack.frames[stack.depth - 1];
                if !rec.name.is_empty() && rec.name != frame.name {
                    return Err(Error::Record(format!(
                        "`leave` of `{}` on `{}` does not match the open frame `{}`",
                        text(rec.name),
                        text(rec.loc),
                        text(frame.name)
                    )));
                }
                stack.depth -= 1;
                let end = rec.time.unwrap_or_default();
                Self::close(&mut self.out, frame, end, stack.depth, Some(rec));
                self.next.write(&self.out)
            }
            _ => self.next.write(rec),
        }
    }

    fn finish(&mut self) -> Result<()> {
        let end = self.last_time.unwrap_or_default();
        let mut open = 0usize;
        let mut locs: Vec<Sym> = self
            .stacks
            .iter()
            .filter(|(_, s)| s.depth > 0)
            .map(|(&l, _)| l)
            .collect();
        // By name, so the output does not depend on the symbols' numbers.
        locs.sort_by_key(|&l| self.symbols.text(l));
        let mut closing = Vec::new();
        for loc in locs {
            let stack = &self.stacks[&loc];
            for depth in (0..stack.depth).rev() {
                let mut out = Record::new(Kind::State);
                Self::close(&mut out, &stack.frames[depth], end, depth, None);
                out.add_flag(flags::CLIPPED);
                closing.push(out);
                open += 1;
            }
        }
        if open > 0 {
            self.warnings.warn(format!(
                "{open} frame(s) still open at the end of the input: written as `state` rows ending at {end} ns, flagged C"
            ));
        }
        for out in &closing {
            self.next.write(out)?;
        }
        self.next.finish()
    }
}
