//! Span building: `enter`/`leave` pairs become complete `state` rows.
//!
//! A `state` row is emitted when its `leave` arrives, which is its completion
//! time, so the output stays in stream order without buffering other rows.
//! Memory: the open frames of every location.

use crate::fasthash::FastMap;

use crate::error::{Result, Warnings};
use crate::model::frames::{self, FrameStack, OpenFrame};
use crate::model::record::{flags, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::RecordSink;

/// An open frame: its `enter` row's time, category and name, and the whole
/// row only when it says more (an identifier, attributes, flags...), so a
/// stack of plain frames costs 40 bytes a frame where a row costs 200. A
/// slot keeps its whole row's box when reused, for its buffers.
#[derive(Default)]
struct Frame {
    time: Option<i64>,
    cat: Sym,
    name: Sym,
    /// Whether the frame is `whole`, not its plain fields.
    is_whole: bool,
    whole: Option<Box<Record>>,
}

impl OpenFrame for Frame {
    fn name(&self) -> Sym {
        self.name
    }
}

impl Frame {
    /// Whether `rec` (an `enter`) is told whole by its time, category and
    /// name (and its location, the stack's).
    fn is_plain(rec: &Record) -> bool {
        let texts = rec.texts().iter().all(|t| t.is_empty()) && rec.extra.is_empty();
        let syms = rec.peer.is_empty() && rec.comm.is_empty();
        texts && syms && rec.end.is_none() && rec.tag.is_none() && rec.size.is_none()
    }

    /// Becomes the frame `rec` (an `enter`) opens.
    fn open(&mut self, rec: &Record) {
        (self.time, self.cat, self.name) = (rec.time, rec.cat, rec.name);
        self.is_whole = !Frame::is_plain(rec);
        if self.is_whole {
            self.whole.get_or_insert_default().as_mut().clone_from(rec);
        }
    }

    /// Puts the frame's `enter` row on `loc` into `out`.
    fn fill(&self, out: &mut Record, loc: Sym) {
        match self.whole.as_deref().filter(|_| self.is_whole) {
            Some(rec) => out.clone_from(rec),
            None => {
                out.clear();
                out.kind = Kind::Enter;
                (out.time, out.loc, out.cat, out.name) = (self.time, loc, self.cat, self.name);
            }
        }
    }
}

/// A sink stage that turns `enter`/`leave` pairs into `state` rows and passes
/// every other row through unchanged.
pub struct SpanBuilder<S> {
    next: S,
    symbols: Symbols,
    stacks: FastMap<Sym, FrameStack<Frame>>,
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
                let stack = self.stacks.entry(rec.loc).or_default();
                stack.enter(rec.time.unwrap_or_default()).open(rec);
                Ok(())
            }
            Kind::Leave => {
                let end = rec.time.unwrap_or_default();
                let stack = self.stacks.entry(rec.loc).or_default();
                let closed = stack.leave((rec.loc, rec.name), end, &self.symbols)?;
                closed.frame.fill(&mut self.out, rec.loc);
                Self::close(&mut self.out, end, closed.depth, Some(rec));
                self.next.write(&self.out)
            }
            _ => self.next.write(rec),
        }
    }

    fn finish(&mut self) -> Result<()> {
        let end = self.last_time.unwrap_or_default();
        // The frames close at the stream's last time, not their location's.
        let locs = frames::still_open(&self.stacks, &self.symbols);
        let open: usize = locs.iter().map(|(l, _)| self.stacks[l].depth()).sum();
        if open > 0 {
            self.warnings.warn(format!(
                "{open} frame(s) still open at the end of the input: written as `state` rows ending at {end} ns, flagged C"
            ));
        }
        // One at a time, innermost first: closing them holds no more than
        // they do.
        for (loc, _) in locs {
            let stack = self.stacks.get_mut(&loc).expect("listed");
            while let Some(closed) = stack.close(end) {
                closed.frame.fill(&mut self.out, loc);
                Self::close(&mut self.out, end, closed.depth, None);
                self.out.add_flag(flags::CLIPPED);
                self.next.write(&self.out)?;
            }
        }
        self.next.finish()
    }
}
