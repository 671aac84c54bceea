//! Slicing: the rows of a time window `[T0, T1)` as a self-contained stream.
//!
//! What is open, in force or in flight at the window's edges comes along:
//! frames open at T0 are entered again at T0 (flag `S`, true start in
//! `orig_time`), the counter values in force at T0 are sampled again there
//! (`S`), containers alive in the window are declared, rows with an extent
//! that cross an edge are clipped to it (`C`, true times in `orig_time` /
//! `orig_end`), frames open at T1 leave there (`C`, the true end in
//! `orig_end`), and containers alive at the end are destroyed there (`S`).
//! Messages that fly across an edge keep their outside end (flag `O`), or
//! are left out (`Inside`); halves are paired by the matcher itself
//! ([`Matcher`], observing its pairings), so a slice agrees with
//! `trace-match`, posting order included.
//!
//! After T1 the slicer reads on only while a row still to come may reach
//! into the window: a row that completes after T1 (a state, a claim, a
//! message) may have begun in it. The source tells how early a row still
//! to come can start ([`RecordSource::horizon`]); the slicer stops once
//! that is T1 or later and no message half in the slice waits for its
//! partner. Frames open at T1 then leave there, made from their `enter`
//! rows, whatever was read after T1, so the slice does not depend on
//! where reading stopped (how far the source read ahead); `true_ends`
//! reads to the end and gives each frame its true end. Memory: the held
//! container rows, the open frames, the last sample of each counter, the
//! message halves in flight, the rows crossing T1, and the rows held behind
//! a half (`Inside`) or a receive's posting waiting in the window.
//!
//! Here: the slicer's state and its dispatch of each row; `phases` before,
//! at and after the edges, `messages` the halves and postings, `held` the
//! rows held until decided, `source` the slicer on the reading side.

use std::collections::VecDeque;

use crate::error::{Error, Location, Result, Warnings};
use crate::fasthash::{FastMap, FastSet, OrderedMap};
use crate::model::frames::FrameStack;
use crate::model::record::{flags, Kind, Record, Sym, ATTR_ORIG_END, ATTR_ORIG_TIME, META_ORIGIN};
use crate::model::symbol::Symbols;
use crate::pipe::{Demand, Discard, RecordSink, RecordSource, Supply};
use crate::stages::matcher::{is_posting, Matcher, Outbox, Pairing, Unmatched};
use crate::stages::window::{parse_time, Window};

mod held;
mod messages;
mod phases;
mod source;

use phases::outside;

pub use source::SliceSource;

/// Which messages a slice keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageScope {
    /// Those in flight during the window (an end inside, or both ends on
    /// either side); the ends outside are kept as they are, flagged `O`.
    Overlap,
    /// Those whose two ends are inside (a half waits, and the rows after it
    /// with it, until its partner comes or the window ends).
    Inside,
}

/// After T1, how many rows pass between two looks at whether reading can
/// stop (a look asks the source, which may look at each row it holds).
const STOP_EVERY: u64 = 64;

/// What to cut.
#[derive(Debug, Clone, Copy)]
pub struct SliceOptions {
    /// The window.
    pub window: Window,
    /// Which messages stay.
    pub messages: MessageScope,
    /// Shift every time so that the window starts at 0 (the `origin` meta row
    /// moves the other way).
    pub rebase: bool,
    /// Read to the end of the input, so that each frame open at T1 leaves
    /// with its true end; else reading stops once nothing still to come
    /// reaches into the window (see [`RecordSource::horizon`]).
    pub true_ends: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// Rows before T0: only history is kept.
    Before,
    /// Rows completing in the window.
    Inside,
    /// Rows completing at or after T1: only what crosses T1.
    After,
}

/// One location's stack: the open frames' `enter` rows; once past T1,
/// those of the frames open at T1, how many of them are open at T1 (a
/// frame that leaves at T1 is not), and how many of them are still open.
#[derive(Default)]
struct EdgeStack {
    frames: FrameStack<Record>,
    at_t1: Vec<Record>,
    open_at_t1: usize,
    open_at_end: usize,
}

impl EdgeStack {
    /// Opens a frame, keeping a copy of its `enter` row when asked (else
    /// only its name, which its `leave` is checked against).
    fn push(&mut self, rec: &Record, copy: bool) {
        let slot = self.frames.enter(rec.time.unwrap_or_default());
        match copy {
            true => slot.clone_from(rec),
            false => slot.name = rec.name,
        }
    }
}

/// A row held in the gate (`Inside` with halves): ready to go, a half
/// waiting for its partner, or a half whose partner never came in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Ready,
    Waiting,
    Dropped,
}

/// A row in the gate, its state, and the mark of the row it came with
/// (where an error about it points).
struct Held {
    row: Record,
    gate: Gate,
    mark: u64,
}

/// A message half handed to the pairer, until it is paired or given up:
/// where it came, its row after T1 until its partner is known (before T0
/// the pairer holds it), whether it is in the slice unconditionally (in
/// the window with `Overlap`, or in flight at T0), and its place in the
/// gate.
struct Flight {
    at: Phase,
    row: Option<Record>,
    written: bool,
    slot: Option<u64>,
    /// The gate slot of the posting of this receive, in the window.
    posting: Option<u64>,
}

/// The slicing state machine: rows in, rows out into an [`Outbox`].
struct Slicer {
    options: SliceOptions,
    symbols: Symbols,
    phase: Phase,
    out: Outbox,
    /// Rows crossing T1, written (sorted) at the end.
    tail: Outbox,
    /// Without true ends, `state` rows cut at T1: written at the end with
    /// the frames open at T1.
    cut_frames: Vec<Record>,
    /// Containers declared before T0, in order, until the window starts.
    held: OrderedMap<Sym, Record>,
    /// Containers gone before T0: declared only if a kept row needs them.
    dead: FastMap<Sym, Record>,
    /// Declared containers, in order, and whether each is still alive.
    alive: OrderedMap<Sym, bool>,
    stacks: FastMap<Sym, EdgeStack>,
    /// The last sample before T0 of each counter (location, category, name).
    counters: FastMap<(Sym, Sym, Sym), Record>,
    /// Pairs halves exactly as trace-match does (channels, keys, posting
    /// order); each half is known by its number, given as the row's mark.
    pairer: Matcher<Discard>,
    flights: FastMap<u64, Flight>,
    /// The pairer's news being acted on, and rows of settled halves, reused.
    news: Vec<Pairing>,
    spare: Vec<Record>,
    halves_seen: u64,
    /// Rows held behind halves that wait for their partner (`Inside`), and
    /// the number of rows that left it.
    gate: VecDeque<Held>,
    gate_base: u64,
    /// Postings of nonblocking receives in the gate, by (poster, request).
    postings: FastMap<(String, String), u64>,
    /// Rows taken after T1 (reading may stop every [`STOP_EVERY`]).
    rows_after: u64,
    /// Locations whose frames open at T0 are not entered again yet.
    reentering: FastSet<Sym>,
    /// The input's first time (a start) and last completion time.
    first: Option<i64>,
    last: Option<i64>,
    scratch: Record,
    /// The row just read goes out as it is, before the rows written to
    /// `out` after it: kept unchanged when nothing waited to go out.
    pass_read: bool,
}

impl Slicer {
    fn new(options: SliceOptions, symbols: Symbols) -> Slicer {
        let phase = if options.window.start == i64::MIN {
            Phase::Inside
        } else {
            Phase::Before
        };
        Slicer {
            options,
            symbols: symbols.clone(),
            phase,
            out: Outbox::default(),
            tail: Outbox::default(),
            cut_frames: Vec::new(),
            held: OrderedMap::default(),
            dead: FastMap::default(),
            alive: OrderedMap::default(),
            stacks: FastMap::default(),
            counters: FastMap::default(),
            pairer: {
                let mut pairer =
                    Matcher::new(Discard, Unmatched::Drop, symbols, Warnings::default());
                pairer.observe_pairings();
                pairer
            },
            flights: FastMap::default(),
            news: Vec::new(),
            spare: Vec::new(),
            halves_seen: 0,
            reentering: FastSet::default(),
            gate: VecDeque::new(),
            gate_base: 0,
            postings: FastMap::default(),
            rows_after: 0,
            first: None,
            last: None,
            scratch: Record::default(),
            pass_read: false,
        }
    }

    fn start(&self) -> i64 {
        self.options.window.start
    }

    /// T1, the window's end, once reading passed it (`Phase::After`, which
    /// only a window with an end reaches).
    fn t1(&self) -> i64 {
        self.options.window.end.unwrap_or(i64::MAX)
    }

    /// Takes one input row.
    fn row(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Meta | Kind::Type => return self.out.write(rec),
            Kind::Container => return self.container(rec),
            _ => {}
        }
        let Some(at) = rec.completion() else {
            return Ok(());
        };
        self.last = Some(self.last.map_or(at, |l| l.max(at)));
        let start = rec.time.unwrap_or(at).min(at);
        self.first = Some(self.first.map_or(start, |f| f.min(start)));
        if self.phase == Phase::Before && at >= self.start() {
            self.open_window()?;
        }
        if !self.reentering.is_empty() {
            if at > self.start() {
                self.reenter_all()?;
            } else if self.reentering.contains(&rec.loc) {
                // A frame that ends at T0 does not reach into the window.
                if rec.kind == Kind::Leave && rec.time == Some(self.start()) {
                    return self.pop(rec).map(drop);
                }
                self.reenter(rec.loc)?;
            }
        }
        if self.phase == Phase::Inside && !self.options.window.ends_after(at) {
            self.close_window()?;
        }
        match rec.kind {
            Kind::Send | Kind::Recv => return self.half(rec),
            Kind::Destroy => self.pair(rec, 0)?,
            Kind::Event if is_posting(rec) => self.pair(rec, 0)?,
            _ => {}
        }
        match self.phase {
            Phase::Before => self.before(rec),
            Phase::Inside => self.inside(rec),
            Phase::After => self.after(rec),
        }
    }
}
