//! Calls: each location's frames followed from `enter`/`leave` and `state`
//! rows, and handed to a report as each closes, with its duration, its
//! exclusive time (its duration less its direct children's) and its depth.
//! `profile`, `top` and `calltree` see frames through [`Calls`], so they
//! agree on every rule:
//!
//! * A `leave` closes the innermost frame ([`FrameStack`]'s check).
//! * Frames still open at the end close at their location's latest time,
//!   location by location in name order, innermost first.
//! * A frame cut by a `leave` that crossed it (`model::nesting`) is one call
//!   from its first `enter` to its last `leave`; one cut and never entered
//!   again ends where it was cut.
//! * A `state` row is a complete frame; its children (one level deeper, by
//!   `depth`) came before it, since rows come in completion order. One
//!   without a `depth` has no children.

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::frames::{self, FrameStack, OpenFrame};
use crate::model::nesting;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::stats::elapsed;

/// A frame that closed.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a, T> {
    /// Its location.
    pub loc: Sym,
    /// Its name.
    pub name: Sym,
    /// When it was entered (first entered, for a frame cut and resumed).
    pub start: i64,
    /// When it was left.
    pub end: i64,
    /// `end - start`.
    pub duration: i64,
    /// Its duration less its direct children's.
    pub exclusive: i64,
    /// Frames around it (0: outermost); `None` for a `state` row without
    /// a depth.
    pub depth: Option<u32>,
    /// Where it came from.
    pub from: From<'a, T>,
}

/// Where a [`Call`] came from.
#[derive(Debug, Clone, Copy)]
pub enum From<'a, T> {
    /// An `enter` and its `leave` (or the end of the input), with what the
    /// report attached when it opened ([`CallSink::open`]).
    Frame(&'a T),
    /// A `state` row, which opens and closes at once.
    State(&'a Record),
}

/// A report that follows calls.
pub trait CallSink {
    /// What the report attaches to an open frame (its key, its node...).
    type Tag: Copy + Default;

    /// A frame opens for `enter` row `rec`, inside the frame tagged
    /// `parent` (if any): its tag.
    fn open(&mut self, rec: &Record, parent: Option<&Self::Tag>) -> Self::Tag;

    /// A frame closed.
    fn close(&mut self, call: &Call<'_, Self::Tag>) -> Result<()>;
}

/// An open frame.
#[derive(Debug, Default, Clone, Copy)]
struct Open<T> {
    name: Sym,
    start: i64,
    /// Since when its parent holds it: its start, or where a frame cut by
    /// a crossing `leave` was entered again.
    since: i64,
    children: i64,
    depth: u32,
    tag: T,
}

impl<T: Default> OpenFrame for Open<T> {
    fn name(&self) -> Sym {
        self.name
    }
}

/// Per location, its open frames, and for `state` rows the time of the
/// finished children per depth.
#[derive(Default)]
struct LocationCalls<T> {
    frames: FrameStack<Open<T>>,
    children_at: Vec<i64>,
}

/// The calls of a stream, handed to a [`CallSink`] as they close.
pub struct Calls<T> {
    symbols: Symbols,
    locations: FastMap<Sym, LocationCalls<T>>,
}

impl<T: Copy + Default> Calls<T> {
    /// Calls of rows whose identifiers are in `symbols`.
    pub fn new(symbols: Symbols) -> Calls<T> {
        Calls {
            symbols,
            locations: FastMap::default(),
        }
    }

    /// Follows `rec` (rows of other kinds than `enter`, `leave` and `state`
    /// are passed over).
    pub fn write<S: CallSink<Tag = T>>(&mut self, rec: &Record, sink: &mut S) -> Result<()> {
        match rec.kind {
            Kind::Enter => {
                self.enter(rec, sink);
                Ok(())
            }
            Kind::Leave => {
                let at = (rec.name, rec.time.unwrap_or_default());
                self.leave(rec.loc, at, nesting::is_cut(rec), sink)
            }
            Kind::State => self.state(rec, sink),
            _ => Ok(()),
        }
    }

    fn enter<S: CallSink<Tag = T>>(&mut self, rec: &Record, sink: &mut S) {
        let time = rec.time.unwrap_or_default();
        let stack = &mut self.locations.entry(rec.loc).or_default().frames;
        if nesting::is_cut(rec) {
            if let Some(frame) = stack.resume(rec.name, time) {
                frame.since = time;
                return;
            }
        }
        let tag = sink.open(rec, stack.innermost().map(|f| &f.tag));
        let depth = u32::try_from(stack.depth()).unwrap_or(u32::MAX);
        *stack.enter(time) = Open {
            name: rec.name,
            start: time,
            since: time,
            children: 0,
            depth,
            tag,
        };
    }

    /// A `leave` closes the innermost frame; one that cuts it for a
    /// crossing `leave` (`cut`) keeps it for its re-entry, as one call.
    fn leave<S: CallSink<Tag = T>>(
        &mut self,
        loc: Sym,
        (name, time): (Sym, i64),
        cut: bool,
        sink: &mut S,
    ) -> Result<()> {
        let stack = &mut self.locations.entry(loc).or_default().frames;
        let closed = stack.leave((loc, name), time, &self.symbols)?;
        let frame = *closed.frame;
        if let Some(parent) = closed.parent {
            parent.children = parent.children.saturating_add(elapsed(frame.since, time)?);
        }
        if cut {
            // Kept with the time it was cut at, should it never resume.
            stack.set_aside(Open {
                since: time,
                ..frame
            });
            return Ok(());
        }
        close(sink, loc, &frame, time)
    }

    /// A complete frame: its children (one level deeper) finished before it.
    fn state<S: CallSink<Tag = T>>(&mut self, rec: &Record, sink: &mut S) -> Result<()> {
        let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
        let duration = elapsed(start, end)?;
        let location = self.locations.entry(rec.loc).or_default();
        let exclusive = match rec.depth {
            Some(depth) => {
                let depth = depth as usize;
                let at = &mut location.children_at;
                if at.len() < depth + 2 {
                    at.resize(depth + 2, 0);
                }
                let children = std::mem::take(&mut at[depth + 1]);
                at[depth] = at[depth].saturating_add(duration);
                duration - children
            }
            None => duration,
        };
        let call = Call {
            loc: rec.loc,
            name: rec.name,
            start,
            end,
            duration,
            exclusive,
            depth: rec.depth,
            from: From::State(rec),
        };
        sink.close(&call)
    }

    /// Closes the frames still open (at their location's latest time) and
    /// those cut and never entered again (where they were cut).
    pub fn finish<S: CallSink<Tag = T>>(&mut self, sink: &mut S) -> Result<()> {
        let stacks = self.locations.iter().map(|(l, s)| (l, &s.frames));
        for (loc, last) in frames::still_open(stacks, &self.symbols) {
            while self.locations[&loc].frames.depth() > 0 {
                self.leave(loc, (Sym::EMPTY, last), false, sink)?;
            }
        }
        let mut locations: Vec<Sym> = self.locations.keys().copied().collect();
        locations.sort_by_key(|&loc| self.symbols.text(loc));
        for loc in locations {
            let aside = self.locations.get_mut(&loc).map(|l| l.frames.take_aside());
            for frame in aside.unwrap_or_default() {
                close(sink, loc, &frame, frame.since)?;
            }
        }
        Ok(())
    }
}

/// Hands `frame`, closed at `end`, to `sink`.
fn close<S: CallSink>(sink: &mut S, loc: Sym, frame: &Open<S::Tag>, end: i64) -> Result<()> {
    let duration = elapsed(frame.start, end)?;
    let call = Call {
        loc,
        name: frame.name,
        start: frame.start,
        end,
        duration,
        exclusive: duration - frame.children,
        depth: Some(frame.depth),
        from: From::Frame(&frame.tag),
    };
    sink.close(&call)
}
