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
//! The slicer reads to the end of its input: a row that completes after T1
//! (a frame's leave, a state, a claim, a message) may have begun in the
//! window, and carries the true end the output records. Memory: the held
//! container rows, the open frames, the last sample of each counter, the
//! message halves in flight, the rows crossing T1, and the rows held behind
//! a half (`Inside`) or a receive's posting waiting in the window.

use std::collections::VecDeque;

use crate::error::{Error, Location, Result, Warnings};
use crate::fasthash::{FastMap, FastSet, OrderedMap};
use crate::model::record::{flags, Kind, Record, Sym, ATTR_ORIG_END, ATTR_ORIG_TIME, META_ORIGIN};
use crate::model::symbol::Symbols;
use crate::pipe::{Demand, RecordSink, RecordSource, Supply};
use crate::stages::matcher::{is_posting, Matcher, Outbox, Pairing, Unmatched};
use crate::stages::window::{parse_time, Window};

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

/// One location's stack: the open frames' `enter` rows (slots past `depth`
/// kept for their buffers), and how many of them were open at T1.
#[derive(Default)]
struct Stack {
    frames: Vec<Record>,
    depth: usize,
    open_at_end: usize,
}

impl Stack {
    /// Opens a frame, keeping a copy of its `enter` row when asked.
    fn push(&mut self, rec: &Record, copy: bool) {
        if copy && self.depth < self.frames.len() {
            self.frames[self.depth].clone_from(rec);
        } else if copy {
            self.frames.push(rec.clone());
        }
        self.depth += 1;
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

/// A sink for what the pairer makes (the slicer only wants its pairings).
struct Discard;

impl RecordSink for Discard {
    fn write(&mut self, _: &Record) -> Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// The slicing state machine: rows in, rows out into an [`Outbox`].
struct Slicer {
    options: SliceOptions,
    symbols: Symbols,
    phase: Phase,
    out: Outbox,
    /// Rows crossing T1, written (sorted) at the end.
    tail: Outbox,
    /// Containers declared before T0, in order, until the window starts.
    held: OrderedMap<Sym, Record>,
    /// Containers gone before T0: declared only if a kept row needs them.
    dead: FastMap<Sym, Record>,
    /// Declared containers, in order, and whether each is still alive.
    alive: OrderedMap<Sym, bool>,
    stacks: FastMap<Sym, Stack>,
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
    gate: VecDeque<(Record, Gate)>,
    gate_base: u64,
    /// Postings of nonblocking receives in the gate, by (poster, request).
    postings: FastMap<(String, String), u64>,
    /// Locations whose frames open at T0 are not entered again yet.
    reentering: FastSet<Sym>,
    /// The input's first time (a start) and last completion time.
    first: Option<i64>,
    last: Option<i64>,
    scratch: Record,
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
            first: None,
            last: None,
            scratch: Record::default(),
        }
    }

    fn start(&self) -> i64 {
        self.options.window.start
    }

    fn end(&self) -> i64 {
        self.options.window.end
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
        if self.phase == Phase::Inside && at >= self.end() {
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

    /// A message half: written at once in the window (`Overlap`), held in
    /// the gate (`Inside`), or kept aside until the pairer says whether its
    /// message is in flight during the window.
    fn half(&mut self, rec: &Record) -> Result<()> {
        self.halves_seen += 1;
        let overlap = self.options.messages == MessageScope::Overlap;
        let mut flight = Flight {
            at: self.phase,
            row: None,
            written: false,
            slot: None,
            posting: self.posting_of(rec),
        };
        if let (Some(posting), Phase::Inside, true) = (flight.posting, self.phase, overlap) {
            self.decide(posting, Gate::Ready)?;
        }
        match self.phase {
            Phase::Inside if overlap => {
                self.keep(rec)?;
                flight.written = true;
            }
            Phase::Inside => {
                self.revive(rec.loc)?;
                flight.slot = Some(self.gate_base + self.gate.len() as u64);
                self.gate.push_back((rec.clone(), Gate::Waiting));
            }
            // Before T0 the pairer keeps the row (see open_window).
            Phase::After if overlap => {
                let mut row = self.spare.pop().unwrap_or_default();
                row.clone_from(rec);
                flight.row = Some(row);
            }
            _ => {}
        }
        self.flights.insert(self.halves_seen, flight);
        self.pair(rec, self.halves_seen)
    }

    /// The gate slot of the posting in the window of receive `rec`, if any.
    fn posting_of(&mut self, rec: &Record) -> Option<u64> {
        if rec.kind != Kind::Recv || rec.id.is_empty() || self.postings.is_empty() {
            return None;
        }
        let poster = self.poster(rec);
        self.postings.remove(&(poster, rec.id.clone()))
    }

    /// Who posts and completes the nonblocking receive of `rec` (as the
    /// matcher says: its `thread` attribute, else its location).
    fn poster(&self, rec: &Record) -> String {
        rec.attr("thread")
            .unwrap_or_else(|| self.symbols.text(rec.loc).to_string())
    }

    /// A posting of a nonblocking receive in the window waits in the gate
    /// for its receive, and goes with it: a posting whose receive is not in
    /// the slice would make trace-match wait for it.
    fn posting(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.loc)?;
        let slot = self.gate_base + self.gate.len() as u64;
        self.gate.push_back((rec.clone(), Gate::Waiting));
        self.postings
            .insert((self.poster(rec), rec.id.clone()), slot);
        Ok(())
    }

    /// Settles a half and the posting of its receive alike.
    fn decide_flight(&mut self, flight: &Flight, gate: Gate) -> Result<()> {
        for slot in [flight.slot, flight.posting].into_iter().flatten() {
            self.decide(slot, gate)?;
        }
        Ok(())
    }

    /// Hands `rec` to the pairer under `mark`, then acts on what it paired.
    fn pair(&mut self, rec: &Record, mark: u64) -> Result<()> {
        self.pairer.set_mark(mark);
        self.pairer.write(rec)?;
        self.settle()
    }

    /// Acts on the pairer's news: a message whose halves both reach into
    /// the window (`Inside`), or with an end in it or across it (`Overlap`:
    /// a half after T1 is written, flagged O).
    fn settle(&mut self) -> Result<()> {
        let mut news = std::mem::take(&mut self.news);
        news.extend(self.pairer.take_pairings());
        let result = news
            .drain(..)
            .try_for_each(|pairing| self.settle_one(pairing));
        self.news = news;
        result
    }

    /// Acts on one pairing (see [`Slicer::settle`]).
    fn settle_one(&mut self, pairing: Pairing) -> Result<()> {
        {
            let (a, b) = match pairing {
                Pairing::Paired(a, b) => (a, b),
                Pairing::GivenUp(a) => {
                    // Its message cannot be whole: out of the gate.
                    if let Some(flight) = self.flights.remove(&a) {
                        self.decide_flight(&flight, Gate::Dropped)?;
                        self.spare.extend(flight.row);
                    }
                    return Ok(());
                }
            };
            let (Some(mut x), Some(mut y)) = (self.flights.remove(&a), self.flights.remove(&b))
            else {
                return Ok(());
            };
            if y.at < x.at {
                std::mem::swap(&mut x, &mut y);
            }
            match (x.at, y.at) {
                (Phase::Inside, Phase::Inside) if y.slot.is_some() => {
                    self.decide_flight(&x, Gate::Ready)?;
                    self.decide_flight(&y, Gate::Ready)?;
                }
                (Phase::Before, Phase::Inside) => self.decide_flight(&y, Gate::Dropped)?,
                (_, Phase::After) if x.written => {
                    if let Some(row) = y.row.take() {
                        self.keep_changed(&row, true, outside)?;
                        self.spare.push(row);
                    }
                }
                _ => {}
            }
            self.spare.extend(x.row.into_iter().chain(y.row));
        }
        Ok(())
    }

    /// A `container` row: held before T0, written in the window unless it is
    /// created after it.
    fn container(&mut self, rec: &Record) -> Result<()> {
        // Created after the window, or below one that is not declared:
        // declared only if a kept row needs it.
        if rec.time.is_some_and(|t| t >= self.end()) || self.dead.contains_key(&rec.peer) {
            self.dead.insert(rec.loc, rec.clone());
            return Ok(());
        }
        if self.phase == Phase::Before {
            if !self.held.contains_key(&rec.loc) {
                self.held.insert(rec.loc, rec.clone());
            }
            return Ok(());
        }
        self.declare(rec)
    }

    /// Declares the containers held before T0, but those below a container
    /// gone before T0, which wait until a kept row needs them.
    fn declare_held(&mut self) -> Result<()> {
        for (_, rec) in std::mem::take(&mut self.held) {
            if self.dead.contains_key(&rec.peer) {
                self.dead.insert(rec.loc, rec);
            } else {
                self.declare(&rec)?;
            }
        }
        Ok(())
    }

    /// Writes a container row (after its parent, if that one is dead and
    /// not declared yet).
    fn declare(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.peer)?;
        self.alive.insert(rec.loc, true);
        self.out.write(rec)
    }

    /// Declares `loc` when it is a container gone before T0 that a kept row
    /// needs (it stays dead: no destroy is written for it at the end).
    fn revive(&mut self, loc: Sym) -> Result<()> {
        if self.dead.is_empty() {
            return Ok(());
        }
        let Some(rec) = self.dead.remove(&loc) else {
            return Ok(());
        };
        self.revive(rec.peer)?;
        self.alive.insert(rec.loc, false);
        self.out.write(&rec)
    }

    /// Writes a kept row of the window.
    fn keep(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.loc)?;
        if self.gate.is_empty() {
            return self.out.write(rec);
        }
        self.gate.push_back((rec.clone(), Gate::Ready));
        Ok(())
    }

    /// Settles the half at `slot` of the gate, then lets out what is settled.
    fn decide(&mut self, slot: u64, gate: Gate) -> Result<()> {
        if let Some(entry) = slot
            .checked_sub(self.gate_base)
            .and_then(|i| self.gate.get_mut(i as usize))
        {
            entry.1 = gate;
        }
        while let Some((_, gate)) = self.gate.front() {
            match gate {
                Gate::Waiting => break,
                Gate::Ready => {
                    let (row, _) = self.gate.pop_front().expect("has a front");
                    self.out.write(&row)?;
                }
                Gate::Dropped => {
                    self.gate.pop_front();
                }
            }
            self.gate_base += 1;
        }
        Ok(())
    }

    /// The window ends: halves still waiting there lose their message.
    fn close_gate(&mut self) -> Result<()> {
        self.postings.clear();
        for entry in &mut self.gate {
            if entry.1 == Gate::Waiting {
                entry.1 = Gate::Dropped;
            }
        }
        self.decide(u64::MAX, Gate::Dropped)
    }

    /// Writes a kept row that crosses T1 (sorted with the others at the end).
    fn keep_late(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.loc)?;
        self.tail.write(rec)
    }

    /// Writes a copy of `rec` changed by `change` (in the window, or with
    /// the rows crossing T1 when `late`); the copy's buffers are reused.
    fn keep_changed(
        &mut self,
        rec: &Record,
        late: bool,
        change: impl FnOnce(&mut Record) -> Result<()>,
    ) -> Result<()> {
        let mut row = std::mem::take(&mut self.scratch);
        row.clone_from(rec);
        let result = change(&mut row).and_then(|()| {
            if late {
                self.keep_late(&row)
            } else {
                self.keep(&row)
            }
        });
        self.scratch = row;
        result
    }

    /// Before T0: only the history is kept.
    fn before(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Enter => self.push(rec),
            Kind::Leave => {
                self.pop(rec)?;
            }
            Kind::Counter => match self.counters.get_mut(&(rec.loc, rec.cat, rec.name)) {
                Some(last) => last.clone_from(rec),
                None => {
                    self.counters
                        .insert((rec.loc, rec.cat, rec.name), rec.clone());
                }
            },
            Kind::Destroy => {
                if let Some(container) = self.held.shift_remove(&rec.loc) {
                    self.dead.insert(rec.loc, container);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The window starts: the held containers, the halves in flight, the
    /// frames open and the counter values in force are written.
    fn open_window(&mut self) -> Result<()> {
        self.phase = Phase::Inside;
        self.declare_held()?;
        // Halves not paired before T0 are in flight: written, in time order.
        let mut flying: Vec<(i64, u64, Record)> = Vec::new();
        if self.options.messages == MessageScope::Overlap {
            for (n, mut row) in self.pairer.waiting_halves() {
                if let Some(flight) = self.flights.get_mut(&n) {
                    row.add_flag(flags::OUTSIDE);
                    flying.push((row.time.unwrap_or_default(), n, row));
                    flight.written = true;
                }
            }
        }
        flying.sort_by_key(|(time, n, _)| (*time, *n));
        for (_, _, row) in flying {
            self.keep(&row)?;
        }
        // Frames open at T0 are entered again at the first row of their
        // location that is not a leave at T0, or once time passes T0.
        self.reentering = self
            .stacks
            .iter()
            .filter(|(_, stack)| stack.depth > 0)
            .map(|(&loc, _)| loc)
            .collect();
        let mut counters: Vec<Record> = std::mem::take(&mut self.counters).into_values().collect();
        let symbols = &self.symbols;
        counters.sort_by_key(|r| [r.loc, r.cat, r.name].map(|s| symbols.text(s)));
        for mut sample in counters {
            moved_to(&mut sample, self.start(), ATTR_ORIG_TIME);
            sample.add_flag(flags::SYNTHETIC);
            self.keep(&sample)?;
        }
        Ok(())
    }

    /// Enters again at T0 the frames of `loc` open there.
    fn reenter(&mut self, loc: Sym) -> Result<()> {
        self.reentering.remove(&loc);
        let t0 = self.start();
        let depth = self.stacks.get(&loc).map_or(0, |s| s.depth);
        for i in 0..depth {
            let frame =
                std::mem::take(&mut self.stacks.get_mut(&loc).expect("has frames").frames[i]);
            let result = self.keep_changed(&frame, false, |row| {
                moved_to(row, t0, ATTR_ORIG_TIME);
                row.add_flag(flags::SYNTHETIC);
                Ok(())
            });
            self.stacks.get_mut(&loc).expect("has frames").frames[i] = frame;
            result?;
        }
        Ok(())
    }

    /// Enters again the frames of every location still waiting, by name.
    fn reenter_all(&mut self) -> Result<()> {
        let mut locs: Vec<Sym> = self.reentering.iter().copied().collect();
        locs.sort_by_key(|&loc| self.symbols.text(loc));
        for loc in locs {
            self.reenter(loc)?;
        }
        Ok(())
    }

    /// A row completing in the window.
    fn inside(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Event if is_posting(rec) => return self.posting(rec),
            Kind::Enter => self.push(rec),
            Kind::Leave => {
                self.pop(rec)?;
            }
            Kind::Destroy => {
                if let Some(alive) = self.alive.get_mut(&rec.loc) {
                    *alive = false;
                }
            }
            Kind::Msg => {
                // The earlier end (a message received before it was sent,
                // flagged R, has its receive first).
                let starts_before = rec
                    .time
                    .zip(rec.end)
                    .is_some_and(|(t, e)| t.min(e) < self.start());
                if starts_before {
                    if self.options.messages == MessageScope::Inside {
                        return Ok(());
                    }
                    return self.keep_changed(rec, false, outside);
                }
            }
            Kind::State | Kind::Coll | Kind::Claim | Kind::Dep | Kind::Signal => {
                return self.clipped(rec, false);
            }
            _ => {}
        }
        self.keep(rec)
    }

    /// Reading passes T1: the frames open now are those that leave at T1.
    fn close_window(&mut self) -> Result<()> {
        self.close_gate()?;
        self.phase = Phase::After;
        for stack in self.stacks.values_mut() {
            stack.open_at_end = stack.depth;
        }
        Ok(())
    }

    /// A row completing at or after T1: kept only when it crosses T1.
    fn after(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Enter => self.push(rec),
            Kind::Leave => {
                let open_at_end = self.pop(rec)?;
                if open_at_end {
                    let t1 = self.end();
                    return self.keep_changed(rec, true, |row| {
                        moved_to(row, t1, ATTR_ORIG_END);
                        Ok(())
                    });
                }
            }
            Kind::Msg => {
                let overlap = self.options.messages == MessageScope::Overlap;
                let first_end = rec.time.zip(rec.end).map(|(t, e)| t.min(e));
                if overlap && first_end.is_some_and(|t| t < self.end()) {
                    return self.keep_changed(rec, true, outside);
                }
            }
            Kind::State | Kind::Coll | Kind::Claim | Kind::Dep | Kind::Signal => {
                return self.clipped(rec, true);
            }
            _ => {}
        }
        Ok(())
    }

    /// A row with an extent: kept clipped to the window when it reaches into
    /// it (ends at T0 or later, starts before T1).
    fn clipped(&mut self, rec: &Record, late: bool) -> Result<()> {
        let (Some(time), Some(end)) = (rec.time, rec.end) else {
            return self.keep(rec);
        };
        let (lo, hi) = (time.min(end), time.max(end));
        // Like a frame, a row that ends at T0 does not reach into the window
        // (unless it is an instant at T0).
        if hi < self.start() || (hi == self.start() && lo < hi) || lo >= self.end() {
            return Ok(());
        }
        if lo >= self.start() && hi <= self.end() {
            return if late {
                self.keep_late(rec)
            } else {
                self.keep(rec)
            };
        }
        let window = self.options.window;
        self.keep_changed(rec, late, |row| clip(row, window))
    }

    /// Pushes a frame on the stack of `rec.loc` (after T1 only counted: no
    /// row of a frame opened there is written).
    fn push(&mut self, rec: &Record) {
        let copy = self.phase != Phase::After;
        self.stacks.entry(rec.loc).or_default().push(rec, copy);
    }

    /// Pops the top frame of `rec.loc`; whether it was open at T1.
    fn pop(&mut self, rec: &Record) -> Result<bool> {
        let Some(stack) = self.stacks.get_mut(&rec.loc).filter(|s| s.depth > 0) else {
            return Err(Error::Record(format!(
                "`leave` of `{}` on `{}` with no open frame",
                self.symbols.text(rec.name),
                self.symbols.text(rec.loc)
            )));
        };
        stack.depth -= 1;
        if self.phase == Phase::After && stack.depth < stack.open_at_end {
            stack.open_at_end = stack.depth;
            return Ok(true);
        }
        Ok(false)
    }

    /// The input ended: frames still open at T1 leave there, the rows
    /// crossing T1 are written in order, then the containers alive end.
    fn finish(&mut self) -> Result<()> {
        self.pairer.finish()?;
        self.settle()?;
        self.reenter_all()?;
        match self.phase {
            Phase::Before => self.declare_held(),
            Phase::Inside => self.close_gate(),
            Phase::After => self.finish_after(),
        }
    }

    /// Why the window holds none of the trace, if it does not: it starts
    /// after the trace ends, or ends before it starts.
    fn outside(&self) -> Option<String> {
        let (first, last) = (self.first?, self.last?);
        let s = crate::model::record::format_seconds;
        if last < self.start() {
            return Some(format!(
                "the window starts at {} s, after the trace's last time ({} s): the slice holds none of it",
                s(self.start()),
                s(last)
            ));
        }
        (first >= self.end()).then(|| {
            format!(
                "the window ends at {} s, before the trace's first time ({} s): the slice holds none of it",
                s(self.end()),
                s(first)
            )
        })
    }

    fn finish_after(&mut self) -> Result<()> {
        let (t1, last) = (self.end(), self.last.unwrap_or_default());
        let mut locs: Vec<Sym> = self.stacks.keys().copied().collect();
        locs.sort_by_key(|&loc| self.symbols.text(loc));
        for loc in locs {
            let stack = &self.stacks[&loc];
            for depth in (0..stack.open_at_end).rev() {
                let frame = &stack.frames[depth];
                let mut leave = Record::new(Kind::Leave);
                leave.time = Some(last);
                (leave.loc, leave.cat, leave.name) = (frame.loc, frame.cat, frame.name);
                leave.depth = frame.depth;
                moved_to(&mut leave, t1, ATTR_ORIG_END);
                leave.add_flag(flags::CLIPPED);
                self.tail.write(&leave)?;
            }
        }
        self.tail.sort();
        let mut end = t1;
        let mut rec = Record::default();
        while self.tail.pop_into(&mut rec) {
            end = end.max(rec.completion().unwrap_or(end));
            self.out.set_mark(self.tail.popped_mark());
            self.out.write(&rec)?;
        }
        let alive: Vec<Sym> = self
            .alive
            .iter()
            .filter(|(_, alive)| **alive)
            .map(|(&loc, _)| loc)
            .collect();
        for &loc in alive.iter().rev() {
            let mut destroy = Record::new(Kind::Destroy);
            destroy.time = Some(end);
            destroy.loc = loc;
            destroy.add_flag(flags::SYNTHETIC);
            self.out.write(&destroy)?;
        }
        Ok(())
    }
}

/// Flags a message end kept outside the window.
fn outside(row: &mut Record) -> Result<()> {
    row.add_flag(flags::OUTSIDE);
    Ok(())
}

/// Moves a point row to `time`, keeping its true time in attribute `orig`
/// (unless an earlier slice put one there) and flagging it clipped when it
/// moves; a row already at `time` is left as it is.
fn moved_to(rec: &mut Record, time: i64, orig: &str) {
    let Some(was) = rec.time.filter(|&t| t != time) else {
        return;
    };
    if rec.attr(orig).is_none() {
        rec.push_attr(orig, &was.to_string());
    }
    rec.time = Some(time);
    if orig == ATTR_ORIG_END {
        rec.add_flag(flags::CLIPPED);
    }
    rec.place_orig_times_last();
}

/// Clips a row with an extent to `window`: each bound moved keeps its true
/// value in `orig_time` / `orig_end`; a signal's coefficients follow its
/// start (value = c + b·(t−t0) + a·(t−t0)², re-expanded at the new start).
fn clip(rec: &mut Record, window: Window) -> Result<()> {
    let (Some(time), Some(end)) = (rec.time, rec.end) else {
        return Ok(());
    };
    let bound = |t: i64| t.clamp(window.start, window.end);
    let (new_time, new_end) = (bound(time), bound(end));
    if new_time != time && rec.kind == Kind::Signal {
        recentre_signal(rec, new_time)?;
    }
    for (key, old, new) in [
        (ATTR_ORIG_TIME, time, new_time),
        (ATTR_ORIG_END, end, new_end),
    ] {
        if old != new && rec.attr(key).is_none() {
            rec.push_attr(key, &old.to_string());
        }
    }
    rec.time = Some(new_time);
    rec.end = Some(new_end);
    rec.add_flag(flags::CLIPPED);
    rec.place_orig_times_last();
    Ok(())
}

/// Re-expands a signal fragment's polynomial at `start`, from the original
/// coefficients (kept as `orig_c`, `orig_b`, `orig_a` the first time), so a
/// slice of a slice computes the same numbers as one slice.
fn recentre_signal(rec: &mut Record, start: i64) -> Result<()> {
    let coefficient = |rec: &Record, name: &str| -> Result<f64> {
        let orig = format!("orig_{name}");
        let text = rec.attr(&orig).or_else(|| rec.attr(name));
        let text = text.unwrap_or_else(|| "0".into());
        text.parse::<f64>().map_err(|_| {
            Error::Record(format!(
                "signal coefficient `{name}` is `{text}`: expected a number"
            ))
        })
    };
    let (c, b, a) = (
        coefficient(rec, "c")?,
        coefficient(rec, "b")?,
        coefficient(rec, "a")?,
    );
    if b == 0.0 && a == 0.0 {
        return Ok(());
    }
    let unit = rec.attr("time_unit").unwrap_or_else(|| "ns".into());
    let unit_ns = parse_time(&format!("1{unit}"))
        .map_err(|_| Error::Record(format!("signal time_unit `{unit}` is not a time unit")))?;
    let from = match rec.attr(ATTR_ORIG_TIME) {
        Some(t) => t.parse::<i64>().map_err(|_| {
            Error::Record(format!("attribute {ATTR_ORIG_TIME} is `{t}`: expected ns"))
        })?,
        None => rec.time.unwrap_or(start),
    };
    let dt = (start - from) as f64 / unit_ns as f64;
    for name in ["c", "b", "a"] {
        let orig = format!("orig_{name}");
        if rec.attr(&orig).is_none() {
            let text = rec.attr(name).unwrap_or_else(|| "0".into());
            rec.push_attr(&orig, &text);
        }
    }
    rec.set_attr("c", &(c + b * dt + a * dt * dt).to_string());
    rec.set_attr("b", &(b + 2.0 * a * dt).to_string());
    Ok(())
}

/// The reading-side stage: slices the rows of `inner`.
pub struct SliceSource {
    inner: Box<dyn RecordSource>,
    slicer: Slicer,
    finished: bool,
    warnings: Warnings,
}

impl SliceSource {
    /// Slices what `inner` gives (identifiers in `symbols`); a window
    /// outside the trace is told to `warnings`.
    pub fn new(
        inner: Box<dyn RecordSource>,
        options: SliceOptions,
        symbols: Symbols,
        warnings: Warnings,
    ) -> SliceSource {
        SliceSource {
            inner,
            slicer: Slicer::new(options, symbols),
            finished: false,
            warnings,
        }
    }

    /// Moves `rec`'s times (and the true times in its attributes, and the
    /// origin) so that the window starts at 0.
    fn rebase(&self, rec: &mut Record) -> Result<()> {
        let shift = self.slicer.start();
        if rec.kind == Kind::Meta {
            if rec.name == META_ORIGIN {
                let moved = rec
                    .value
                    .parse::<i64>()
                    .ok()
                    .and_then(|o| o.checked_add(shift));
                let Some(origin) = moved else {
                    return Err(Error::Record(format!(
                        "cannot rebase: origin `{}` moved by {shift} ns is out of range",
                        rec.value
                    )));
                };
                rec.value = origin.to_string();
            }
            return Ok(());
        }
        let out_of_range = || Error::Record("cannot rebase: a time moves out of range".into());
        for t in [&mut rec.time, &mut rec.end].into_iter().flatten() {
            *t = t.checked_sub(shift).ok_or_else(out_of_range)?;
        }
        // Only rows a slice made or cut carry true times.
        if !rec.attrs.contains("orig_") {
            return Ok(());
        }
        for key in [ATTR_ORIG_TIME, ATTR_ORIG_END] {
            if let Some(t) = rec.attr(key).and_then(|t| t.parse::<i64>().ok()) {
                let moved = t.checked_sub(shift).ok_or_else(out_of_range)?;
                rec.set_attr(key, &moved.to_string());
            }
        }
        Ok(())
    }
}

impl RecordSource for SliceSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if self.slicer.out.pop_into(rec) {
                if self.slicer.options.rebase {
                    self.rebase(rec).map_err(|e| e.at(self.inner.location()))?;
                }
                return Ok(true);
            }
            if self.finished {
                return Ok(false);
            }
            let more = self.inner.next_record(rec)?;
            let mark = self.inner.mark();
            self.slicer.out.set_mark(mark);
            self.slicer.tail.set_mark(mark);
            if more {
                self.slicer
                    .row(rec)
                    .map_err(|e| e.at(self.inner.location()))?;
            } else {
                self.finished = true;
                if let Some(why) = self.slicer.outside() {
                    self.warnings.warn(why);
                }
                self.slicer
                    .finish()
                    .map_err(|e| e.at(self.inner.location()))?;
            }
        }
    }

    /// The inner source's mark of the row that the row last returned was
    /// made from (a row held to the end: the last row read).
    fn mark(&self) -> u64 {
        self.slicer.out.popped_mark()
    }

    fn locate(&self, mark: u64) -> Location {
        self.inner.locate(mark)
    }

    fn extra_columns(&self) -> &[String] {
        self.inner.extra_columns()
    }

    /// The rows a slice hands out are its own (a cut row differs from the
    /// row read), so none comes with its line.
    fn raw_line(&self) -> Option<&[u8]> {
        None
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    fn agree(&mut self, _: Demand) -> Supply {
        self.inner.agree(Demand::ALL);
        Supply::WHOLE_ROWS
    }
}
