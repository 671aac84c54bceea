//! The `profile` report: per name (or location, category...), how often a
//! frame ran and how long: inclusive and exclusive time, and the spread of
//! its durations.
//!
//! Frames come from each location's stack (`enter`/`leave`) and from
//! `state` rows (their `depth` tells which are nested in which). The
//! exclusive time of a frame is its duration minus its direct children's.
//! **Recursion**: a name's inclusive time counts each outermost frame of it
//! once (a frame inside another of the same name on the same stack adds to
//! the count and the durations' spread, not to the inclusive time), so
//! inclusive time never exceeds the time the location spent in the name.
//! A `state` row counts its whole duration in inclusive time. Frames still
//! open at the end close at their location's last time. A frame cut by a
//! `leave` that crossed it (`model::nesting`) is one call from its first
//! enter to its last leave.

use crate::error::{Error, Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::record::{Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{FrameSums, Reads, RecordSink};
use crate::stats::calls::{Call, CallSink, Calls, From};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::{ordered, PartialRow};
use crate::stats::sketch::Sketch;
use crate::stats::{add_to, key_of_fields, key_texts, Key, Report, Style, FRAME_READS};
use crate::table::{Cell, TableWriter};

/// What a profile row is per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKey {
    /// The frame's name.
    Name,
    /// Location and name.
    LocName,
    /// Category and name.
    CatName,
    /// Location.
    Loc,
}

impl ProfileKey {
    /// Parses `name`, `loc,name`, `cat,name` or `loc`.
    pub fn parse(text: &str) -> Option<ProfileKey> {
        Some(match text {
            "name" => ProfileKey::Name,
            "loc,name" => ProfileKey::LocName,
            "cat,name" => ProfileKey::CatName,
            "loc" => ProfileKey::Loc,
            _ => return None,
        })
    }

    /// The keys [`By::parse`] takes.
    pub const KEYS: [&'static str; 4] = ["name", "loc,name", "cat,name", "loc"];

    /// The key of `rec`'s row (unused parts empty).
    pub fn key(self, rec: &Record) -> Key {
        match self {
            ProfileKey::Name => [rec.name, Sym::EMPTY, Sym::EMPTY],
            ProfileKey::LocName => [rec.loc, rec.name, Sym::EMPTY],
            ProfileKey::CatName => [rec.cat, rec.name, Sym::EMPTY],
            ProfileKey::Loc => [rec.loc, Sym::EMPTY, Sym::EMPTY],
        }
    }

    /// What the key columns hold.
    pub fn roles(self) -> &'static [Role] {
        match self {
            ProfileKey::Name => &[Role::Plain],
            ProfileKey::LocName => &[Role::Loc, Role::Plain],
            ProfileKey::CatName => &[Role::Type, Role::Plain],
            ProfileKey::Loc => &[Role::Loc],
        }
    }

    /// The key columns' names.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            ProfileKey::Name => &["name"],
            ProfileKey::LocName => &["loc", "name"],
            ProfileKey::CatName => &["cat", "name"],
            ProfileKey::Loc => &["loc"],
        }
    }
}

/// A key's count and times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Frames.
    pub count: u64,
    /// Inclusive time (ns).
    pub inclusive: i128,
    /// Exclusive time (ns).
    pub exclusive: i128,
}

/// Figures of one key.
#[derive(Default)]
struct Figures {
    count: u64,
    inclusive: i128,
    exclusive: i128,
    durations: i128,
    min: i64,
    max: i64,
    sketch: Sketch,
}

impl Figures {
    /// Adds another part's figures of the same key.
    fn merge(&mut self, other: &Figures) -> std::result::Result<(), String> {
        if other.count == 0 {
            return Ok(());
        }
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        if self.count == 0 || other.max > self.max {
            self.max = other.max;
        }
        add_to(&mut self.count, other.count, "count")?;
        add_to(&mut self.inclusive, other.inclusive, "inclusive time")?;
        add_to(&mut self.exclusive, other.exclusive, "exclusive time")?;
        add_to(&mut self.durations, other.durations, "sum of durations")?;
        self.sketch.merge(&other.sketch);
        Ok(())
    }

    fn add(&mut self, duration: i64, exclusive: i64, outermost: bool) {
        if self.count == 0 || duration < self.min {
            self.min = duration;
        }
        if self.count == 0 || duration > self.max {
            self.max = duration;
        }
        self.count += 1;
        self.durations += i128::from(duration);
        self.exclusive += i128::from(exclusive);
        if outermost {
            self.inclusive += i128::from(duration);
        }
        self.sketch.add(duration);
    }
}

/// The `profile` report.
pub struct Profile {
    symbols: Symbols,
    /// Told when no frame was found (the profile's own command only).
    empty_warnings: Option<Warnings>,
    /// Instead of the figures, a duration histogram of this many bins per key.
    histogram: Option<usize>,
    calls: Calls<Key>,
    tally: ProfileTally,
}

/// The figures per key, as calls close.
struct ProfileTally {
    by: ProfileKey,
    figures: FastMap<Key, Figures>,
    /// Per location and key, how many frames are open: a frame closing
    /// with none of its key left open around it is outermost.
    open: FastMap<(Sym, Key), u32>,
}

impl CallSink for ProfileTally {
    type Tag = Key;

    fn open(&mut self, rec: &Record, _: Option<&Key>) -> Key {
        let key = self.by.key(rec);
        *self.open.entry((rec.loc, key)).or_default() += 1;
        key
    }

    fn close(&mut self, call: &Call<'_, Key>) -> Result<()> {
        let (key, outermost) = match call.from {
            From::Frame(&key) => {
                let open = self
                    .open
                    .get_mut(&(call.loc, key))
                    .expect("counted at open");
                *open -= 1;
                (key, *open == 0)
            }
            From::State(rec) => (self.by.key(rec), true),
        };
        let figures = self.figures.entry(key).or_default();
        figures.add(call.duration, call.exclusive, outermost);
        Ok(())
    }
}

impl Profile {
    /// A profile per `by` of rows whose identifiers are in `symbols`;
    /// with `histogram`, duration histograms of that many log-spaced bins
    /// instead.
    pub fn new(by: ProfileKey, histogram: Option<usize>, symbols: Symbols) -> Profile {
        Profile {
            calls: Calls::new(symbols.clone()),
            symbols,
            empty_warnings: None,
            histogram,
            tally: ProfileTally {
                by,
                figures: FastMap::default(),
                open: FastMap::default(),
            },
        }
    }

    /// The symbol table of the rows it profiles.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// Tells `warnings` when the stream had no frame to profile.
    pub fn warn_when_empty(mut self, warnings: Warnings) -> Profile {
        self.empty_warnings = Some(warnings);
        self
    }

    /// The rows by label (keys that print alike, such as two lanes of one
    /// container, merged), most exclusive time first, ties by label. Sums
    /// of merged partial files may overflow: an error.
    fn ranked(&self, labels: &Labels) -> Result<Vec<(Vec<String>, Figures)>> {
        let mut rows: FastMap<Vec<String>, Figures> = FastMap::default();
        for (key, f) in &self.tally.figures {
            let label = key_texts(labels, key, self.tally.by.roles());
            rows.entry(label)
                .or_default()
                .merge(f)
                .map_err(Error::Record)?;
        }
        let mut all: Vec<(Vec<String>, Figures)> = rows.into_iter().collect();
        all.sort_by(|a, b| b.1.exclusive.cmp(&a.1.exclusive).then(a.0.cmp(&b.0)));
        Ok(all)
    }
}

impl Profile {
    /// The `n` keys with the most exclusive time, most first (ties by key).
    pub fn heaviest(&self, n: usize, labels: &Labels) -> Vec<(String, i128)> {
        // The figures of one run (never merged partials) cannot overflow.
        self.ranked(labels)
            .unwrap_or_default()
            .into_iter()
            .take(n)
            .map(|(k, f)| (k.join(" "), f.exclusive))
            .collect()
    }

    /// Each row's label and its inclusive or exclusive time (rows that
    /// print alike merged); merged partial sums may overflow: an error.
    pub fn times(&self, inclusive: bool, labels: &Labels) -> Result<Vec<(Vec<String>, i128)>> {
        let time = |t: Totals| if inclusive { t.inclusive } else { t.exclusive };
        let rows = self.totals(labels)?.into_iter();
        Ok(rows.map(|(key, t)| (key, time(t))).collect())
    }

    /// Each row's label and totals, most exclusive time first (rows that
    /// print alike merged); merged partial sums may overflow: an error.
    pub fn totals(&self, labels: &Labels) -> Result<Vec<(Vec<String>, Totals)>> {
        let rows = self.ranked(labels)?.into_iter();
        let totals = |f: Figures| Totals {
            count: f.count,
            inclusive: f.inclusive,
            exclusive: f.exclusive,
        };
        Ok(rows.map(|(key, f)| (key, totals(f))).collect())
    }
}

impl Profile {
    /// Whether frames summed by a reader ([`FrameSums`]) make this profile:
    /// per location, frames nest in frames of the same key.
    fn takes_frame_sums(&self) -> bool {
        self.tally.by != ProfileKey::Loc
    }
}

impl FrameSums for Profile {
    /// Declarations go to the labels in front of it (`Labelled`).
    fn row(&mut self, _: &Record) -> Result<()> {
        Ok(())
    }

    fn durations(&mut self, frame: &Record, durations: &[u64]) -> Result<()> {
        let figures = self
            .tally
            .figures
            .entry(self.tally.by.key(frame))
            .or_default();
        for &d in durations {
            let d = i64::try_from(d).map_err(|_| {
                Error::Record(format!(
                    "a frame of {d} ns is beyond the stream's range (2^63-1 ns)"
                ))
            })?;
            figures.add(d, 0, true);
        }
        Ok(())
    }

    fn exclusive(&mut self, frame: &Record, exclusive: i128) -> Result<()> {
        let figures = self
            .tally
            .figures
            .entry(self.tally.by.key(frame))
            .or_default();
        add_to(&mut figures.exclusive, exclusive, "exclusive time").map_err(Error::Record)
    }
}

impl RecordSink for Profile {
    fn reads(&self) -> Reads {
        FRAME_READS
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        self.calls.write(rec, &mut self.tally)
    }

    fn finish(&mut self) -> Result<()> {
        self.calls.finish(&mut self.tally)?;
        if let Some(warnings) = self
            .empty_warnings
            .as_ref()
            .filter(|_| self.tally.figures.is_empty())
        {
            warnings.warn(
                "no frames to profile (no enter/leave or state rows); a TRACE trace's claims are reported by `trace-stat resources`",
            );
        }
        Ok(())
    }
}

impl Report for Profile {
    fn frame_sums(&mut self) -> Option<&mut dyn FrameSums> {
        match self.takes_frame_sums() {
            true => Some(self),
            false => None,
        }
    }

    fn columns(&self, _: &Labels) -> Vec<String> {
        let mut columns = self.tally.by.columns().to_vec();
        if self.histogram.is_some() {
            columns.extend(["low", "high", "count"]);
        } else {
            columns.extend([
                "count",
                "inclusive",
                "exclusive",
                "min",
                "mean",
                "max",
                "p50",
                "p90",
                "p99",
            ]);
        }
        columns.into_iter().map(String::from).collect()
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let rows = self.ranked(labels)?.into_iter().map(|(mut row, f)| {
            row.extend(
                [
                    f.count as i128,
                    f.inclusive,
                    f.exclusive,
                    f.durations,
                    f.min.into(),
                    f.max.into(),
                ]
                .map(|n| n.to_string()),
            );
            row.push(f.sketch.encode());
            row
        });
        Ok(Some(rows.collect()))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let k = self.tally.by.columns().len();
        let row = PartialRow::new(fields, k + 7)?;
        let sketch = Sketch::decode(row.text(k + 6)).ok_or("bad sketch")?;
        let figures = Figures {
            count: row.count(k, "count")?,
            inclusive: row.natural(k + 1, "inclusive time")?,
            exclusive: row.natural(k + 2, "exclusive time")?,
            durations: row.natural(k + 3, "sum of durations")?,
            min: row.natural(k + 4, "minimum")?,
            max: row.natural(k + 5, "maximum")?,
            sketch,
        };
        ordered(figures.min, figures.max)?;
        // A function's own time lies within its calls.
        if figures.exclusive > figures.inclusive {
            return Err(format!(
                "exclusive time {} above inclusive time {}",
                figures.exclusive, figures.inclusive
            ));
        }
        let held = figures.sketch.buckets().map(|(_, n)| n).sum::<u64>();
        if held != figures.count {
            return Err(format!(
                "the sketch holds {held} durations, the count says {}",
                figures.count
            ));
        }
        let key = key_of_fields(&self.symbols, fields, k);
        self.tally.figures.entry(key).or_default().merge(&figures)
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let mut rows = self.ranked(labels)?;
        rows.truncate(style.top.unwrap_or(usize::MAX));
        if let Some(bins) = self.histogram {
            for (key, f) in rows {
                write_histogram(table, style, &key, &f, bins)?;
            }
            return Ok(());
        }
        let clamp = |x: i128| style.total(x);
        for (key, f) in rows {
            let mut cells: Vec<Cell> = key.iter().map(|k| Cell::Text(k)).collect();
            cells.extend([
                Cell::UInt(f.count),
                clamp(f.inclusive),
                clamp(f.exclusive),
                style.time(f.min),
                style.mean(f.durations, f.count),
                style.time(f.max),
            ]);
            for q in [0.5, 0.9, 0.99] {
                // Within the sketch's error, and never outside what was seen.
                let v = f.sketch.quantile(q).map(|v| v.clamp(f.min, f.max));
                cells.push(v.map_or(Cell::Empty, |v| style.time(v)));
            }
            table.row(&cells)?;
        }
        Ok(())
    }
}

/// The durations of one key as a histogram of up to `bins` bins (see
/// [`Sketch::histogram`]): rows `key..., low, high, count`.
fn write_histogram(
    table: &mut TableWriter,
    style: &Style,
    key: &[String],
    f: &Figures,
    bins: usize,
) -> Result<()> {
    for (low, high, count) in f.sketch.histogram(f.min, f.max, bins) {
        let mut cells: Vec<Cell> = key.iter().map(|k| Cell::Text(k)).collect();
        cells.extend([style.time(low), style.time(high), Cell::UInt(count)]);
        table.row(&cells)?;
    }
    Ok(())
}
