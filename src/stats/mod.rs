//! Reports: sinks that accumulate figures over a stream, then print them as
//! a table (`trace-stat`). Memory: per key (name, location, channel...) a few
//! sums and a sketch, plus each location's open frames.

pub mod counters;
pub mod labels;
pub mod messages;
pub mod profile;
pub mod resources;
pub mod sketch;
pub mod states;
pub mod summary;

use crate::decimal::format_scaled;
use crate::error::Result;
use crate::pipe::{Reads, RecordSink};
use crate::record::{Record, Sym};
use crate::symbol::Symbols;
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

/// A report: fed the stream as a sink, then printed.
pub trait Report: RecordSink + Send {
    /// The columns of its table.
    fn columns(&self) -> Vec<&'static str>;

    /// Prints its rows (after the stream ended).
    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()>;

    /// What matching found (the command pairs halves in front of some
    /// reports).
    fn note_matching(&mut self, _matching: &crate::ops::matcher::MatchSummary) {}

    /// Its state as rows of text fields, to be merged with other parts'
    /// (`trace-stat --partial`); `None` when the report cannot be merged.
    fn partial(&self) -> Option<Vec<Vec<String>>> {
        None
    }

    /// Adds one row of another part's state (what [`Report::partial`] wrote).
    fn absorb(&mut self, _fields: &[String]) -> std::result::Result<(), String> {
        Err("this report cannot be merged".into())
    }
}

/// The fields of a partial row from `from` on, parsed.
pub fn numbers<T: std::str::FromStr>(
    fields: &[String],
    from: usize,
    n: usize,
) -> std::result::Result<Vec<T>, String> {
    fields
        .get(from..from + n)
        .ok_or_else(|| format!("expected {} fields, found {}", from + n, fields.len()))?
        .iter()
        .map(|f| f.parse().map_err(|_| format!("bad number `{f}`")))
        .collect()
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

    /// A mean of `total` over `n` (rounded to the ns), or nothing.
    pub fn mean(&self, total: i128, n: u64) -> Cell<'static> {
        if n == 0 {
            return Cell::Empty;
        }
        let n = i128::from(n);
        let rounded = (2 * total + n * total.signum()) / (2 * n);
        self.time(i64::try_from(rounded).unwrap_or(i64::MAX))
    }
}

/// A report behind the sink that shows its [`Labels`] the declarations
/// (containers, lanes, types) as they pass; every row reaches the report.
pub struct Labelled {
    labels: Labels,
    report: Box<dyn Report>,
}

impl Labelled {
    /// `report`, whose identifiers print through `labels`.
    pub fn new(report: Box<dyn Report>, labels: Labels) -> Labelled {
        Labelled { labels, report }
    }

    /// The report.
    pub fn report(&mut self) -> &mut dyn Report {
        self.report.as_mut()
    }
}

impl RecordSink for Labelled {
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
