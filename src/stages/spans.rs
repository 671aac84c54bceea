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

/// An open frame: its `enter` row's time, category and name, and the whole
/// row only when it says more (an identifier, attributes, flags...), so a
/// stack of plain frames costs 32 bytes a frame where a row costs 200.
enum Frame {
    Plain {
        time: Option<i64>,
        cat: Sym,
        name: Sym,
    },
    Full(Box<Record>),
}

impl Frame {
    fn name(&self) -> Sym {
        match self {
            Frame::Plain { name, .. } => *name,
            Frame::Full(rec) => rec.name,
        }
    }

    /// Whether `rec` (an `enter`) is told whole by its time, category and
    /// name (and its location, the stack's).
    fn is_plain(rec: &Record) -> bool {
        let texts = rec.texts().iter().all(|t| t.is_empty()) && rec.extra.is_empty();
        let syms = rec.peer.is_empty() && rec.comm.is_empty();
        texts && syms && rec.end.is_none() && rec.tag.is_none() && rec.size.is_none()
    }

    /// Puts the frame's `enter` row on `loc` into `out`.
    fn fill(&self, out: &mut Record, loc: Sym) {
        match self {
            Frame::Plain { time, cat, name } => {
                out.clear();
                out.kind = Kind::Enter;
                (out.time, out.loc, out.cat, out.name) = (*time, loc, *cat, *name);
            }
            Frame::Full(rec) => out.clone_from(rec),
        }
    }
}

#[derive(Default)]
struct Stack {
    frames: Vec<Frame>,
    /// Boxes of whole rows popped, to reuse their buffers: kept boxed, so
    /// a frame reuses the box as well.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Record>>,
}

impl Stack {
    fn push(&mut self, rec: &Record) {
        let frame = match Frame::is_plain(rec) {
            true => Frame::Plain {
                time: rec.time,
                cat: rec.cat,
                name: rec.name,
            },
            false => {
                let mut whole = self.spare.pop().unwrap_or_default();
                whole.as_mut().clone_from(rec);
                Frame::Full(whole)
            }
        };
        self.frames.push(frame);
    }
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

    /// Makes `out`, a frame's `enter` row, its state closed at `end` by
    /// `leave` (if any).
    fn close(out: &mut Record, end: i64, depth: usize, leave: Option<&Record>) {
        out.kind = Kind::State;
        out.end = Some(end);
        out.depth = Some(u32::try_from(depth).unwrap_or(u32::MAX));
        // A frame a slice entered again at its window's start (S, with the
        // true start) makes a clipped state, as slicing the state would.
        let resliced = out.flags.contains(flags::SYNTHETIC) && out.attrs.contains("orig_time=");
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
                self.stacks.entry(rec.loc).or_default().push(rec);
                Ok(())
            }
            Kind::Leave => {
                let text = |sym| self.symbols.text(sym);
                let Some(stack) = self.stacks.get_mut(&rec.loc) else {
                    return Err(no_open_frame(rec, &self.symbols));
                };
                let Some(frame) = stack.frames.pop() else {
                    return Err(no_open_frame(rec, &self.symbols));
                };
                if !rec.name.is_empty() && rec.name != frame.name() {
                    return Err(Error::Record(format!(
                        "`leave` of `{}` on `{}` does not match the open frame `{}`",
                        text(rec.name),
                        text(rec.loc),
                        text(frame.name())
                    )));
                }
                frame.fill(&mut self.out, rec.loc);
                if let Frame::Full(whole) = frame {
                    stack.spare.push(whole);
                }
                let end = rec.time.unwrap_or_default();
                Self::close(&mut self.out, end, stack.frames.len(), Some(rec));
                self.next.write(&self.out)
            }
            _ => self.next.write(rec),
        }
    }

    fn finish(&mut self) -> Result<()> {
        let end = self.last_time.unwrap_or_default();
        let mut locs: Vec<Sym> = self
            .stacks
            .iter()
            .filter(|(_, s)| !s.frames.is_empty())
            .map(|(&l, _)| l)
            .collect();
        // By name, so the output does not depend on the symbols' numbers.
        locs.sort_by_key(|&l| self.symbols.text(l));
        let open: usize = locs.iter().map(|l| self.stacks[l].frames.len()).sum();
        if open > 0 {
            self.warnings.warn(format!(
                "{open} frame(s) still open at the end of the input: written as `state` rows ending at {end} ns, flagged C"
            ));
        }
        // One at a time, innermost first: closing them holds no more than
        // they do.
        for loc in locs {
            let stack = self.stacks.get_mut(&loc).expect("listed");
            while let Some(frame) = stack.frames.pop() {
                frame.fill(&mut self.out, loc);
                Self::close(&mut self.out, end, stack.frames.len(), None);
                self.out.add_flag(flags::CLIPPED);
                self.next.write(&self.out)?;
            }
        }
        self.next.finish()
    }
}

/// The error of a `leave` on `rec`'s location with no frame open.
fn no_open_frame(rec: &Record, symbols: &Symbols) -> Error {
    Error::Record(format!(
        "`leave` of `{}` on `{}` with no open frame",
        symbols.text(rec.name),
        symbols.text(rec.loc)
    ))
}
