//! Reports: sinks that accumulate figures over a stream, then print them as
//! a table (`trace-stat`). Memory: per key (name, location, channel...) a few
//! sums and a sketch, plus each location's open frames.

pub mod calls;
pub mod calltree;
pub mod compare;
pub mod counters;
pub mod critical;
pub mod frame_counters;
pub mod imbalance;
pub mod labels;
pub mod messages;
pub mod partial;
pub mod profile;
pub mod resources;
pub mod sketch;
pub mod states;
pub mod summary;
pub mod timeline;
pub mod top;
pub mod waits;

use crate::decimal::format_scaled;
use crate::error::Result;
use crate::model::record::{Column, ColumnSet, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{FrameSums, Reads, RecordSink};
use crate::table::{Cell, TableWriter};
use labels::{Labels, Role};

/// What a report's row is per: the symbols of its key columns (a name, a
/// location and a name...), unused parts empty.
pub type Key = [Sym; 3];

/// The labels of the parts of `key` that `roles` describe: how the row is
/// shown, and its order among rows of equal figures.
pub fn key_texts(labels: &Labels, key: &Key, roles: &[Role]) -> Vec<String> {
    labels.texts(&key[..roles.len()], roles)
}

/// The key written as the first `n` fields of a partial row.
pub fn key_of_fields(symbols: &Symbols, fields: &[String], n: usize) -> Key {
    let mut key = Key::default();
    for (part, text) in key.iter_mut().zip(&fields[..n]) {
        *part = symbols.intern(text);
    }
    key
}

/// `to - from` in ns, or an error (which the row's place then locates)
/// when they are more than 2^63 ns apart: no duration wraps around.
pub fn elapsed(from: i64, to: i64) -> Result<i64> {
    to.checked_sub(from).ok_or_else(|| {
        crate::error::Error::Record(format!(
            "from {from} ns to {to} ns is more than 2^63 ns, beyond what a duration holds"
        ))
    })
}

/// What a report of frames reads of each row: its place, and the frame or
/// state: its category, name and depth.
pub const FRAME_READS: Reads = Reads::only(
    ColumnSet::PLACE
        .with(Column::Cat)
        .with(Column::Name)
        .with(Column::Depth)
        .with(Column::Flags),
);

/// A report: fed the stream as a sink, then printed.
pub trait Report: RecordSink + Send {
    /// The columns of its table (some named after what `labels` prints).
    fn columns(&self, labels: &Labels) -> Vec<String>;

    /// Prints its rows (after the stream ended), identifiers through
    /// `labels`.
    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()>;

    /// Its state as rows of text fields (keys through `labels`), to be
    /// merged with other parts' (`trace-stat --partial`); `None` when the
    /// report cannot be merged.
    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let _ = labels;
        Ok(None)
    }

    /// Where a reader may sum the frames from its format's structure
    /// instead of giving their rows ([`FrameSums`]); `None`: the report
    /// reads rows.
    fn frame_sums(&mut self) -> Option<&mut dyn FrameSums> {
        None
    }

    /// Adds one row of another part's state (what [`Report::partial`] wrote).
    fn absorb(&mut self, _fields: &[String]) -> std::result::Result<(), String> {
        Err("this report cannot be merged".into())
    }
}

/// `total += more`, or an error naming `what` when the sum leaves the type.
pub fn add_to<T: num_traits::CheckedAdd>(
    total: &mut T,
    more: T,
    what: &str,
) -> std::result::Result<(), String> {
    *total = total
        .checked_add(&more)
        .ok_or_else(|| format!("the merged {what} overflows"))?;
    Ok(())
}

/// How figures are printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// Nanoseconds per printed unit of time (1: integer ns).
    pub time_factor: u64,
    /// At most this many rows (the largest first).
    pub top: Option<usize>,
}

impl Style {
    /// A duration or time in the chosen unit: an integer in ns, an exact
    /// decimal otherwise.
    pub fn time(&self, ns: i64) -> Cell<'static> {
        match self.time_factor {
            0 | 1 => Cell::Int(ns),
            f => Cell::Number(format_scaled(ns, f)),
        }
    }

    /// A sum of durations or a span, exact however large: [`Style::time`]
    /// where it fits 64 bits.
    pub fn total(&self, ns: i128) -> Cell<'static> {
        if let Ok(ns) = i64::try_from(ns) {
            return self.time(ns);
        }
        let f = i128::from(self.time_factor.max(1));
        let (whole, rest) = (ns / f, (ns % f).unsigned_abs() as i64);
        let mut text = whole.to_string();
        if rest != 0 {
            let fraction = format_scaled(rest, f as u64);
            text.push_str(&fraction[fraction.find('.').unwrap_or(0)..]);
        }
        Cell::Number(text)
    }

    /// A mean of `total` over `n` (rounded half away from zero to the ns),
    /// or nothing.
    pub fn mean(&self, total: i128, n: u64) -> Cell<'static> {
        if n == 0 {
            return Cell::Empty;
        }
        let n = i128::from(n);
        let (q, r) = (total / n, total % n);
        let rounded = q + if 2 * r.abs() >= n { total.signum() } else { 0 };
        self.total(rounded)
    }
}

/// A report behind the sink that shows its [`Labels`] the declarations
/// (containers, lanes, types) as they pass; every row reaches the report.
pub struct Labelled<R: Report + ?Sized = dyn Report> {
    labels: Labels,
    report: Box<R>,
}

impl<R: Report + ?Sized> Labelled<R> {
    /// `report`, whose identifiers print through `labels`.
    pub fn new(report: Box<R>, labels: Labels) -> Labelled<R> {
        Labelled { labels, report }
    }

    /// The report.
    pub fn report(&mut self) -> &mut R {
        self.report.as_mut()
    }

    /// The report and the labels its identifiers print through.
    pub fn parts(&self) -> (&R, &Labels) {
        (&self.report, &self.labels)
    }

    /// The report's columns.
    pub fn columns(&self) -> Vec<String> {
        self.report.columns(&self.labels)
    }

    /// Prints the report through the labels.
    pub fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        self.report.print(table, style, &self.labels)
    }

    /// The report's partial state, keys through the labels.
    pub fn partial(&self) -> Result<Option<Vec<Vec<String>>>> {
        self.report.partial(&self.labels)
    }

    /// Where a reader may sum the frames for the report
    /// ([`Report::frame_sums`]), the declarations it gives shown to the
    /// labels first.
    pub fn frame_sums(&mut self) -> Option<LabelledSums<'_>> {
        let sums = self.report.frame_sums()?;
        Some(LabelledSums {
            labels: &mut self.labels,
            sums,
        })
    }
}

/// A report's [`FrameSums`] behind the labels (see [`Labelled::frame_sums`]).
pub struct LabelledSums<'a> {
    labels: &'a mut Labels,
    sums: &'a mut dyn FrameSums,
}

impl FrameSums for LabelledSums<'_> {
    fn row(&mut self, rec: &Record) -> Result<()> {
        if rec.kind.is_structural() {
            self.labels.observe(rec);
        }
        self.sums.row(rec)
    }

    fn durations(&mut self, frame: &Record, durations: &[u64]) -> Result<()> {
        self.sums.durations(frame, durations)
    }

    fn exclusive(&mut self, frame: &Record, exclusive: i128) -> Result<()> {
        self.sums.exclusive(frame, exclusive)
    }
}

impl<R: Report + ?Sized> RecordSink for Labelled<R> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.kind.is_structural() {
            self.labels.observe(rec);
        }
        self.report.write(rec)
    }

    fn write_raw(&mut self, rec: &Record, raw: &[u8]) -> Result<()> {
        if rec.kind.is_structural() {
            self.labels.observe(rec);
        }
        self.report.write_raw(rec, raw)
    }

    fn finish(&mut self) -> Result<()> {
        self.report.finish()
    }

    /// Declarations are always read whole, so what the report reads is enough.
    fn reads(&self) -> Reads {
        self.report.reads()
    }
}
