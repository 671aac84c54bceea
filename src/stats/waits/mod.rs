//! The `waits` report: wait states, after Scalasca's patterns (Geimer et
//! al., "The Scalasca performance toolset architecture", 2010; the
//! pattern definitions of Scalasca's documentation, "Performance
//! properties").
//!
//! * `late-sender`: a receive (blocking, or the wait that completes a
//!   nonblocking one) entered before its message's send was entered waits
//!   from its enter to the send's enter (at most its own duration);
//! * `late-receiver`: a send whose frame lasts past its receive's enter,
//!   entered before it, waits from its enter to the receive's enter;
//! * `wait-nxn`: in an all-to-all style collective or a barrier, each
//!   participant waits from its arrival to the last participant's;
//! * `late-broadcast`: in a 1-to-N collective, a non-root arriving before
//!   the root waits until the root arrives;
//! * `early-reduce`: in an N-to-1 collective, a root arriving before the
//!   last non-root waits until that one arrives.
//!
//! A half's frame is the innermost frame open on its location (or on its
//! `thread`) when it comes; a half outside every frame waits for nothing.
//! Where one frame completes several receives (a wait for all), it waits
//! once, until its latest sender: the largest of its waits counts, for
//! the location it waited for. A collective participant's waiting is
//! bounded by its own extent. Halves are paired as `trace-match` pairs
//! them (posting order included); collective instances are numbered as it
//! numbers them (`stages::collectives`). Only patterns with a positive
//! waiting time count. The whole trace must be read in one run.

mod collective;
mod p2p;

use crate::error::{Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stages::collectives::Instances;
use crate::stages::matcher::MatchSummary;
use crate::stats::labels::{Labels, Role};
use crate::stats::{key_texts, Key, Report, Style};
use crate::table::{Cell, TableWriter};

/// The wait-state patterns, in the order rows of equal time print.
pub const PATTERNS: [&str; 5] = [
    "late-sender",
    "late-receiver",
    "wait-nxn",
    "late-broadcast",
    "early-reduce",
];

/// A pattern, as its index in [`PATTERNS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// A receive waited for its sender.
    LateSender = 0,
    /// A send waited for its receiver.
    LateReceiver = 1,
    /// A participant of an N-to-N collective waited for the last one.
    WaitNxN = 2,
    /// A non-root waited for the root of a 1-to-N collective.
    LateBroadcast = 3,
    /// The root of an N-to-1 collective waited for the last non-root.
    EarlyReduce = 4,
}

/// What a waits row is per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitKey {
    /// The pattern.
    Pattern,
    /// The location that waited, and the pattern.
    LocPattern,
    /// The function that waited (its frame's name), and the pattern.
    NamePattern,
    /// Who waited for whom, and the pattern.
    PairPattern,
}

impl WaitKey {
    /// The keys `--by` takes for the waits report.
    pub const KEYS: [&'static str; 4] = ["pattern", "loc,pattern", "name,pattern", "pair,pattern"];

    /// Parses one of [`By::KEYS`].
    pub fn parse(text: &str) -> Option<WaitKey> {
        let at = WaitKey::KEYS.iter().position(|k| *k == text)?;
        Some(
            [
                WaitKey::Pattern,
                WaitKey::LocPattern,
                WaitKey::NamePattern,
                WaitKey::PairPattern,
            ][at],
        )
    }

    fn columns(self) -> &'static [&'static str] {
        match self {
            WaitKey::Pattern => &["pattern"],
            WaitKey::LocPattern => &["loc", "pattern"],
            WaitKey::NamePattern => &["name", "pattern"],
            WaitKey::PairPattern => &["waiter", "waited_for", "pattern"],
        }
    }

    fn roles(self) -> &'static [Role] {
        match self {
            WaitKey::Pattern => &[Role::Plain],
            WaitKey::LocPattern => &[Role::Loc, Role::Plain],
            WaitKey::NamePattern => &[Role::Plain, Role::Plain],
            WaitKey::PairPattern => &[Role::Loc, Role::Loc, Role::Plain],
        }
    }
}

/// One wait: which pattern, who waited (in which function) for whom, and
/// how long.
#[derive(Debug, Clone, Copy)]
pub struct Wait {
    /// The pattern.
    pub pattern: Pattern,
    /// The location that waited.
    pub waiter: Sym,
    /// The function (frame name) it waited in.
    pub name: Sym,
    /// The location it waited for.
    pub waited_for: Sym,
    /// How long, in ns (positive).
    pub time: i64,
}

/// A wait the critical path follows: the path to `waiter` after time
/// `at` comes from `to`'s path up to `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jump {
    /// The location that waited.
    pub waiter: Sym,
    /// The location it waited for.
    pub to: Sym,
    /// When the path crosses (a late sender's send, the last or root
    /// arrival of a collective).
    pub at: i64,
}

/// Count and total time of one key.
#[derive(Debug, Default, Clone, Copy)]
struct Figures {
    count: u64,
    time: i128,
}

/// The waits found, summed per key.
pub struct Tally {
    by: WaitKey,
    patterns: [Sym; 5],
    figures: FastMap<Key, Figures>,
    /// The crossings found since last taken, when asked for.
    jumps: Option<Vec<Jump>>,
}

impl Tally {
    fn new(by: WaitKey, symbols: &Symbols) -> Tally {
        Tally {
            by,
            patterns: PATTERNS.map(|p| symbols.intern(p)),
            figures: FastMap::default(),
            jumps: None,
        }
    }

    /// Notes a crossing of the critical path (when they are asked for).
    pub fn jump(&mut self, jump: Jump) {
        if let Some(jumps) = &mut self.jumps {
            jumps.push(jump);
        }
    }

    /// Counts `wait` when it is positive.
    pub fn add(&mut self, wait: Wait) {
        if wait.time <= 0 {
            return;
        }
        let pattern = self.patterns[wait.pattern as usize];
        let key = match self.by {
            WaitKey::Pattern => [pattern, Sym::EMPTY, Sym::EMPTY],
            WaitKey::LocPattern => [wait.waiter, pattern, Sym::EMPTY],
            WaitKey::NamePattern => [wait.name, pattern, Sym::EMPTY],
            WaitKey::PairPattern => [wait.waiter, wait.waited_for, pattern],
        };
        let f = self.figures.entry(key).or_default();
        f.count += 1;
        f.time += i128::from(wait.time);
    }

    /// The total of each pattern (the summary's rows), in [`PATTERNS`] order.
    pub fn per_pattern(&self) -> [(u64, i128); 5] {
        let mut totals = [(0, 0); 5];
        for (key, f) in &self.figures {
            let pattern = key[self.by.columns().len() - 1];
            if let Some(at) = self.patterns.iter().position(|p| *p == pattern) {
                totals[at].0 += f.count;
                totals[at].1 += f.time;
            }
        }
        totals
    }
}

/// What the report's inner sink finds in the stream: frames, halves and
/// collective participants, the waits they make.
struct Finder {
    frames: p2p::WaitFinder,
    tally: Tally,
}

impl RecordSink for Finder {
    fn write(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Enter => self.frames.enter(rec),
            Kind::Leave => self.frames.leave(rec, &mut self.tally)?,
            Kind::Coll => collective::participant(rec, &self.frames, &mut self.tally),
            _ => {}
        }
        self.frames.pair(rec, &mut self.tally)
    }

    fn finish(&mut self) -> Result<()> {
        self.frames.finish(&mut self.tally)
    }
}

/// The `waits` report.
pub struct Waits {
    instances: Instances<Finder>,
}

impl Waits {
    /// The report per `by` of rows whose identifiers are in `symbols`;
    /// odd collective instances are told to `warnings`.
    pub fn new(by: WaitKey, symbols: Symbols, warnings: Warnings) -> Waits {
        let finder = Finder {
            frames: p2p::WaitFinder::new(symbols.clone(), warnings.clone()),
            tally: Tally::new(by, &symbols),
        };
        Waits {
            instances: Instances::new(finder, symbols, warnings).with_details(),
        }
    }

    /// The waits found.
    pub fn tally(&self) -> &Tally {
        &self.instances.inner().tally
    }

    /// What pairing the halves found: messages made, halves unmatched.
    pub fn matching(&self) -> &MatchSummary {
        self.instances.inner().frames.matching()
    }

    /// From now on, keeps the crossings of the critical path found (late
    /// senders and collective waits) for [`Waits::take_jumps`].
    pub fn keep_jumps(&mut self) {
        self.instances
            .inner_mut()
            .tally
            .jumps
            .get_or_insert_with(Vec::new);
    }

    /// The crossings found since the last call, in the order found.
    pub fn take_jumps(&mut self) -> std::vec::Drain<'_, Jump> {
        let jumps = self
            .instances
            .inner_mut()
            .tally
            .jumps
            .get_or_insert_with(Vec::new);
        jumps.drain(..)
    }
}

impl RecordSink for Waits {
    /// Every column: halves are paired on theirs.
    fn reads(&self) -> Reads {
        Reads::ALL
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        self.instances.write(rec)
    }

    fn finish(&mut self) -> Result<()> {
        self.instances.finish()
    }
}

impl Report for Waits {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let by = self.instances_by();
        let names = by.columns().iter().chain(&["count", "time"]);
        names.map(|c| c.to_string()).collect()
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let by = self.instances_by();
        let tally = &self.instances.inner_mut().tally;
        let mut rows: Vec<(Vec<String>, Figures)> = tally
            .figures
            .iter()
            .map(|(key, f)| (key_texts(labels, key, by.roles()), *f))
            .collect();
        let order = |label: &[String]| {
            PATTERNS
                .iter()
                .position(|p| Some(*p) == label.last().map(String::as_str))
        };
        rows.sort_by(|a, b| {
            (b.1.time.cmp(&a.1.time))
                .then(order(&a.0).cmp(&order(&b.0)))
                .then(a.0.cmp(&b.0))
        });
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (key, f) in &rows {
            let mut cells: Vec<Cell> = key.iter().map(|k| Cell::Text(k)).collect();
            cells.extend([Cell::UInt(f.count), style.total(f.time)]);
            table.row(&cells)?;
        }
        Ok(())
    }
}

impl Waits {
    fn instances_by(&self) -> WaitKey {
        self.instances.inner().tally.by
    }
}
