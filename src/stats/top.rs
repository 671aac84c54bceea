//! The `top` report: the N longest frames, each with its location, name,
//! start, end, duration and depth, longest first (ties: the earlier start,
//! then location and name). Frames follow `profile`'s rules
//! ([`calls`](super::calls)): a frame still open at the end closes at its
//! location's latest time; a frame cut by a crossing `leave` is one call.
//! Memory: at most 2N frames kept, whatever the trace's length.

use std::cmp::Ordering;

use regex::Regex;

use crate::error::Result;
use crate::model::record::{Record, Sym};
use crate::model::symbol::{SymMemo, Symbols};
use crate::pipe::{Reads, RecordSink};
use crate::stats::calls::{Call, CallSink, Calls};
use crate::stats::labels::{Labels, Role};
use crate::stats::{Report, Style, FRAME_READS};
use crate::table::{Cell, TableWriter};

/// Frames `top` prints without `-n`.
pub const DEFAULT_COUNT: usize = 10;

/// A frame among the longest.
#[derive(Debug, Clone, Copy)]
struct LongFrame {
    loc: Sym,
    name: Sym,
    start: i64,
    end: i64,
    duration: i64,
    depth: Option<u32>,
}

/// The longest frames seen so far.
struct Longest {
    n: usize,
    symbols: Symbols,
    /// Only frames whose name matches, decided once per name.
    name: Option<(Regex, SymMemo)>,
    /// At most `2n` frames; cut back to the `n` longest when full.
    kept: Vec<LongFrame>,
    /// The `n`-th longest once `n` were kept: a frame ranked after it
    /// cannot enter.
    floor: Option<(i64, i64)>,
}

impl Longest {
    /// Longest first, then the earlier start, then by location and name
    /// text (never by symbol number, which follows reading order).
    fn rank(&self, a: &LongFrame, b: &LongFrame) -> Ordering {
        let text = |s: Sym| self.symbols.text(s);
        b.duration
            .cmp(&a.duration)
            .then(a.start.cmp(&b.start))
            .then_with(|| text(a.loc).cmp(text(b.loc)))
            .then_with(|| text(a.name).cmp(text(b.name)))
            .then(a.depth.cmp(&b.depth))
    }

    /// Keeps the `n` longest of those kept.
    fn cut(&mut self) {
        let mut kept = std::mem::take(&mut self.kept);
        kept.sort_by(|a, b| self.rank(a, b));
        kept.truncate(self.n);
        self.floor = kept
            .last()
            .filter(|_| kept.len() == self.n)
            .map(|f| (f.duration, f.start));
        self.kept = kept;
    }

    fn matches(&mut self, name: Sym) -> bool {
        match &mut self.name {
            None => true,
            Some((regex, memo)) => {
                let symbols = &self.symbols;
                memo.get(name, || regex.is_match(symbols.text(name)))
            }
        }
    }
}

impl CallSink for Longest {
    type Tag = ();

    fn open(&mut self, _: &Record, _: Option<&()>) {}

    fn close(&mut self, call: &Call<'_, ()>) -> Result<()> {
        if let Some((duration, start)) = self.floor {
            if call.duration < duration || (call.duration == duration && call.start > start) {
                return Ok(());
            }
        }
        if self.n == 0 || !self.matches(call.name) {
            return Ok(());
        }
        self.kept.push(LongFrame {
            loc: call.loc,
            name: call.name,
            start: call.start,
            end: call.end,
            duration: call.duration,
            depth: call.depth,
        });
        if self.kept.len() >= self.n.saturating_mul(2) {
            self.cut();
        }
        Ok(())
    }
}

/// The `top` report.
pub struct Top {
    calls: Calls<()>,
    longest: Longest,
}

impl Top {
    /// The `n` longest frames of rows whose identifiers are in `symbols`,
    /// of those whose name `name` matches (anywhere in it) when given.
    pub fn new(n: usize, name: Option<Regex>, symbols: Symbols) -> Top {
        Top {
            calls: Calls::new(symbols.clone()),
            longest: Longest {
                n,
                symbols,
                name: name.map(|r| (r, SymMemo::default())),
                kept: Vec::new(),
                floor: None,
            },
        }
    }
}

impl RecordSink for Top {
    fn reads(&self) -> Reads {
        FRAME_READS
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        self.calls.write(rec, &mut self.longest)
    }

    fn finish(&mut self) -> Result<()> {
        self.calls.finish(&mut self.longest)?;
        self.longest.cut();
        Ok(())
    }
}

impl Report for Top {
    fn columns(&self, _: &Labels) -> Vec<String> {
        ["loc", "name", "start", "end", "duration", "depth"]
            .map(String::from)
            .to_vec()
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        for frame in &self.longest.kept {
            let texts = labels.texts(&[frame.loc, frame.name], &[Role::Loc, Role::Plain]);
            table.row(&[
                Cell::Text(&texts[0]),
                Cell::Text(&texts[1]),
                style.time(frame.start),
                style.time(frame.end),
                style.time(frame.duration),
                frame.depth.map_or(Cell::Empty, |d| Cell::UInt(d.into())),
            ])?;
        }
        Ok(())
    }
}
