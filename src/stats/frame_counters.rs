//! `profile --counters`: each counter's change over a function's frames.
//! Per key of the profile and counter, the frames counted, the counter's
//! change from their `enter` to their `leave` summed (inclusive) and that
//! less their direct children's changes (exclusive).
//!
//! Counters are read at frame boundaries, as Score-P records its metrics
//! (PAPI counters and the like: a sample on the frame's location at the
//! very time of its `enter` and of its `leave`, written just before or just
//! after the frame's row). A frame counts for a counter when the counter has
//! a sample at both of its times on its location; other frames are left out
//! of that counter's figures (a counter sampled elsewhere is not
//! interpolated), and a warning tells how many; so does one for samples
//! whose value is not a number, left out too. A counter of mode `rel`
//! (each sample a change of its own) is left out with a warning. Frames
//! come from `enter`/`leave` rows through [`Calls`]; `state` rows have no
//! boundary samples and are not read.

use crate::error::{Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::record::{Column, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::calls::{Call, CallSink, Calls, From};
use crate::stats::labels::{Labels, Role};
use crate::stats::profile::ProfileKey;
use crate::stats::{key_texts, Key, Report, Style, FRAME_READS};
use crate::table::{Cell, TableWriter};

/// A counter's value, or a change of it: exact while every value is an
/// integer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Amount {
    Int(i128),
    Real(f64),
}

impl Amount {
    fn parse(text: &str) -> Option<Amount> {
        match text.parse::<i64>() {
            Ok(n) => Some(Amount::Int(n.into())),
            Err(_) => text
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(Amount::Real),
        }
    }

    fn real(self) -> f64 {
        match self {
            Amount::Int(n) => n as f64,
            Amount::Real(x) => x,
        }
    }

    fn combine(
        self,
        other: Amount,
        int: fn(i128, i128) -> Option<i128>,
        real: fn(f64, f64) -> f64,
    ) -> Amount {
        match (self, other) {
            (Amount::Int(a), Amount::Int(b)) => match int(a, b) {
                Some(n) => Amount::Int(n),
                None => Amount::Real(real(a as f64, b as f64)),
            },
            (a, b) => Amount::Real(real(a.real(), b.real())),
        }
    }

    fn plus(self, other: Amount) -> Amount {
        self.combine(other, i128::checked_add, |a, b| a + b)
    }

    fn minus(self, other: Amount) -> Amount {
        self.combine(other, i128::checked_sub, |a, b| a - b)
    }

    fn cell(self) -> Cell<'static> {
        match self {
            Amount::Int(n) => Cell::Number(n.to_string()),
            Amount::Real(x) => Cell::shortest(x),
        }
    }
}

/// Per key and counter.
#[derive(Debug, Clone, Copy)]
struct Figures {
    frames: u64,
    inclusive: Amount,
    exclusive: Amount,
}

/// An open frame (or one closed whose `leave`-time samples may still come).
#[derive(Default)]
struct CountedFrame {
    key: Key,
    parent: Option<u32>,
    /// Each counter's value at the `enter`.
    start: Vec<(Sym, Amount)>,
    /// Each counter's value at the `leave`, once closed.
    end: Vec<(Sym, Amount)>,
    /// The changes of its direct children, per counter.
    children: Vec<(Sym, Amount)>,
}

/// A location's latest samples, and the frames at its latest time.
struct LocationSamples {
    /// Per counter, the time and value of its latest sample.
    latest: FastMap<Sym, (i64, Amount)>,
    /// The time of the latest row.
    now: i64,
    /// Slots opened at `now`: a sample at `now` gives their start.
    opened: Vec<u32>,
    /// Slots closed at `now`, innermost first: a sample at `now` gives
    /// their end; done when a later time comes.
    closed: Vec<u32>,
}

impl Default for LocationSamples {
    fn default() -> Self {
        LocationSamples {
            latest: FastMap::default(),
            now: i64::MIN,
            opened: Vec::new(),
            closed: Vec::new(),
        }
    }
}

/// The figures, as frames close.
struct CounterTally {
    by: ProfileKey,
    slots: Vec<CountedFrame>,
    free: Vec<u32>,
    locations: FastMap<Sym, LocationSamples>,
    figures: FastMap<(Key, Sym), Figures>,
    /// Per counter, the frames left out for want of a boundary sample.
    missed: FastMap<Sym, u64>,
    /// Counters of mode `rel`, left out.
    relative: FastMap<Sym, ()>,
    /// Per counter, the samples left out for a value that is no number.
    unreadable: FastMap<Sym, u64>,
}

/// Upserts `value` for `counter` in `values`.
fn set(values: &mut Vec<(Sym, Amount)>, counter: Sym, value: Amount) {
    match values.iter_mut().find(|(c, _)| *c == counter) {
        Some(entry) => entry.1 = value,
        None => values.push((counter, value)),
    }
}

fn get(values: &[(Sym, Amount)], counter: Sym) -> Option<Amount> {
    values.iter().find(|(c, _)| *c == counter).map(|e| e.1)
}

impl CounterTally {
    /// Values sampled on `location` at its current time.
    fn sampled_now(location: &LocationSamples) -> Vec<(Sym, Amount)> {
        let now = location.now;
        let at_now = location.latest.iter().filter(|(_, (t, _))| *t == now);
        at_now.map(|(&c, &(_, v))| (c, v)).collect()
    }

    fn slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(CountedFrame::default());
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// `loc` reaches `time`: the frames closed before it are done.
    fn advance(&mut self, loc: Sym, time: i64) -> Result<()> {
        let location = self.locations.entry(loc).or_default();
        if time <= location.now {
            return Ok(());
        }
        location.now = time;
        location.opened.clear();
        let closed = std::mem::take(&mut location.closed);
        for slot in closed {
            self.done(slot)?;
        }
        Ok(())
    }

    /// A sample: the latest value, and the boundary of the frames opened
    /// or closed at its time.
    fn sample(&mut self, rec: &Record) -> Result<()> {
        if rec.attr("mode").as_deref() == Some("rel") {
            self.relative.insert(rec.name, ());
            return Ok(());
        }
        let Some(value) = Amount::parse(&rec.value) else {
            *self.unreadable.entry(rec.name).or_default() += 1;
            return Ok(());
        };
        let time = rec.time.unwrap_or_default();
        self.advance(rec.loc, time)?;
        let location = self.locations.entry(rec.loc).or_default();
        location.latest.insert(rec.name, (time, value));
        if time == location.now {
            for &slot in &location.opened {
                set(&mut self.slots[slot as usize].start, rec.name, value);
            }
            for &slot in &location.closed {
                set(&mut self.slots[slot as usize].end, rec.name, value);
            }
        }
        Ok(())
    }

    /// A frame closed and its boundary samples in: its figures, and its
    /// changes to its parent's children.
    fn done(&mut self, index: u32) -> Result<()> {
        let slot = std::mem::take(&mut self.slots[index as usize]);
        self.free.push(index);
        let counters = slot.start.iter().chain(&slot.end).map(|e| e.0);
        let mut seen: Vec<Sym> = Vec::new();
        for counter in counters {
            if seen.contains(&counter) {
                continue;
            }
            seen.push(counter);
            let (Some(start), Some(end)) = (get(&slot.start, counter), get(&slot.end, counter))
            else {
                *self.missed.entry(counter).or_default() += 1;
                continue;
            };
            let change = end.minus(start);
            let children = get(&slot.children, counter).unwrap_or(Amount::Int(0));
            let figures = self.figures.entry((slot.key, counter)).or_insert(Figures {
                frames: 0,
                inclusive: Amount::Int(0),
                exclusive: Amount::Int(0),
            });
            figures.frames += 1;
            figures.inclusive = figures.inclusive.plus(change);
            figures.exclusive = figures.exclusive.plus(change.minus(children));
            if let Some(parent) = slot.parent {
                let siblings = &mut self.slots[parent as usize].children;
                let sum = get(siblings, counter)
                    .unwrap_or(Amount::Int(0))
                    .plus(change);
                set(siblings, counter, sum);
            }
        }
        Ok(())
    }
}

impl CallSink for CounterTally {
    type Tag = u32;

    fn open(&mut self, rec: &Record, parent: Option<&u32>) -> u32 {
        let index = self.slot();
        let location = self.locations.entry(rec.loc).or_default();
        let start = CounterTally::sampled_now(location);
        location.opened.push(index);
        self.slots[index as usize] = CountedFrame {
            key: self.by.key(rec),
            parent: parent.copied(),
            start,
            end: Vec::new(),
            children: Vec::new(),
        };
        index
    }

    fn close(&mut self, call: &Call<'_, u32>) -> Result<()> {
        let From::Frame(&index) = call.from else {
            return Ok(());
        };
        self.advance(call.loc, call.end)?;
        let location = self.locations.entry(call.loc).or_default();
        // A frame closed before the location's latest time (one cut and
        // never entered again) has no samples known at its end.
        let end = match call.end == location.now {
            true => CounterTally::sampled_now(location),
            false => Vec::new(),
        };
        location.closed.push(index);
        self.slots[index as usize].end = end;
        Ok(())
    }
}

/// The `profile --counters` report.
pub struct FrameCounters {
    symbols: Symbols,
    warnings: Warnings,
    calls: Calls<u32>,
    tally: CounterTally,
}

impl FrameCounters {
    /// Counters' changes per `by` key of rows whose identifiers are in
    /// `symbols`; what is left out is told to `warnings`.
    pub fn new(by: ProfileKey, symbols: Symbols, warnings: Warnings) -> FrameCounters {
        FrameCounters {
            calls: Calls::new(symbols.clone()),
            symbols,
            warnings,
            tally: CounterTally {
                by,
                slots: Vec::new(),
                free: Vec::new(),
                locations: FastMap::default(),
                figures: FastMap::default(),
                missed: FastMap::default(),
                relative: FastMap::default(),
                unreadable: FastMap::default(),
            },
        }
    }

    fn warn(&self) {
        let text = |s: Sym| self.symbols.text(s).to_string();
        let mut missed: Vec<(String, u64)> = self
            .tally
            .missed
            .iter()
            .map(|(&c, &n)| (text(c), n))
            .collect();
        missed.sort();
        for (counter, frames) in missed {
            self.warnings.warn(format!(
                "counter `{counter}`: {frames} frames left out, with no sample at their enter or leave time on their location (counters are read at frame boundaries)"
            ));
        }
        let mut unreadable: Vec<(String, u64)> = self
            .tally
            .unreadable
            .iter()
            .map(|(&c, &n)| (text(c), n))
            .collect();
        unreadable.sort();
        for (counter, samples) in unreadable {
            self.warnings.warn(format!(
                "counter `{counter}`: {samples} samples left out, their value not a number"
            ));
        }
        let mut relative: Vec<String> = self.tally.relative.keys().map(|&c| text(c)).collect();
        relative.sort();
        for counter in relative {
            self.warnings.warn(format!(
                "counter `{counter}` left out: its samples are changes of their own (mode rel)"
            ));
        }
    }
}

impl RecordSink for FrameCounters {
    fn reads(&self) -> Reads {
        Reads::only(FRAME_READS.columns.with(Column::Value).with(Column::Attrs))
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Counter => self.tally.sample(rec),
            Kind::Enter | Kind::Leave => {
                self.tally.advance(rec.loc, rec.time.unwrap_or_default())?;
                self.calls.write(rec, &mut self.tally)
            }
            _ => Ok(()),
        }
    }

    fn finish(&mut self) -> Result<()> {
        self.calls.finish(&mut self.tally)?;
        let locations: Vec<Sym> = self.tally.locations.keys().copied().collect();
        for loc in locations {
            self.tally.advance(loc, i64::MAX)?;
        }
        self.warn();
        Ok(())
    }
}

impl Report for FrameCounters {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let mut columns: Vec<String> = self
            .tally
            .by
            .columns()
            .iter()
            .map(|c| c.to_string())
            .collect();
        columns.extend(["counter", "frames", "inclusive", "exclusive"].map(String::from));
        columns
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let roles: &[Role] = self.tally.by.roles();
        let mut rows: Vec<(Vec<String>, String, Figures)> = self
            .tally
            .figures
            .iter()
            .map(|((key, counter), f)| {
                (
                    key_texts(labels, key, roles),
                    self.symbols.text(*counter).to_string(),
                    *f,
                )
            })
            .collect();
        // By counter, the largest inclusive change first, ties by key.
        rows.sort_by(|a, b| {
            let inclusive = |r: &(Vec<String>, String, Figures)| r.2.inclusive.real();
            (a.1.cmp(&b.1))
                .then(inclusive(b).total_cmp(&inclusive(a)))
                .then(a.0.cmp(&b.0))
        });
        for (key, counter, f) in rows.iter().take(style.top.unwrap_or(usize::MAX)) {
            let mut cells: Vec<Cell> = key.iter().map(|k| Cell::Text(k)).collect();
            cells.extend([
                Cell::Text(counter),
                Cell::UInt(f.frames),
                f.inclusive.cell(),
                f.exclusive.cell(),
            ]);
            table.row(&cells)?;
        }
        Ok(())
    }
}
