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

/// One row of a partial report being merged, its fields taken with the
/// checks their meaning needs: a partial file is input like any other, so a
/// negative count, a minimum above its maximum or a non-number is an error,
/// not a figure.
pub struct PartialRow<'a> {
    fields: &'a [String],
}

impl<'a> PartialRow<'a> {
    /// `fields`, which must be `n`.
    pub fn new(fields: &'a [String], n: usize) -> std::result::Result<Self, String> {
        if fields.len() != n {
            return Err(format!("expected {n} fields, found {}", fields.len()));
        }
        Ok(PartialRow { fields })
    }

    /// Field `i` as written.
    pub fn text(&self, i: usize) -> &'a str {
        &self.fields[i]
    }

    /// Field `i`, a `T` (named `what` in errors).
    pub fn number<T: std::str::FromStr>(
        &self,
        i: usize,
        what: &str,
    ) -> std::result::Result<T, String> {
        let f = &self.fields[i];
        f.parse()
            .map_err(|_| format!("{what} `{f}` is not a number of its kind"))
    }

    /// Field `i`, a count of at least one (a row stands for something seen).
    pub fn count(&self, i: usize, what: &str) -> std::result::Result<u64, String> {
        match self.number::<u64>(i, what)? {
            0 => Err(format!(
                "{what} is 0: a partial row stands for at least one"
            )),
            n => Ok(n),
        }
    }

    /// Field `i`, a number that cannot be negative (a duration, a sum of them).
    pub fn natural<T>(&self, i: usize, what: &str) -> std::result::Result<T, String>
    where
        T: std::str::FromStr + PartialOrd + Default,
    {
        let n: T = self.number(i, what)?;
        match n < T::default() {
            true => Err(format!("{what} `{}` is negative", self.fields[i])),
            false => Ok(n),
        }
    }

    /// Field `i`, a finite real.
    pub fn real(&self, i: usize, what: &str) -> std::result::Result<f64, String> {
        let x: f64 = self.number(i, what)?;
        match x.is_finite() {
            true => Ok(x),
            false => Err(format!(
                "{what} `{}` is not a finite number",
                self.fields[i]
            )),
        }
    }
}

/// Checks that a row's minimum is not above its maximum.
pub fn ordered<T: PartialOrd + std::fmt::Display>(
    min: T,
    max: T,
) -> std::result::Result<(), String> {
    match min <= max {
        true => Ok(()),
        false => Err(format!("minimum {min} above maximum {max}")),
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
