//! The `counters` report: per (location, counter), the samples' count,
//! extremes, mean, time-weighted mean (each value weighted by how long it
//! held: until the next sample of that counter), first and last value.
//! Means print as the shortest decimal of their `f64` (the mean from the
//! exact sum of the values as written, while that sum fits 36 digits), as
//! the values themselves print as written.
//! Partial reports merge when each series is in one part (split by
//! location): the sums travel as shortest round-trip decimals, so a merged
//! table is byte-identical to one run over the whole.

use crate::decimal::Decimal;
use crate::error::{Error, Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::record::{Column, ColumnSet, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::{ordered, PartialRow};
use crate::stats::{elapsed, key_of_fields, key_texts, Key, Report, Style};
use crate::table::{Cell, TableWriter};

/// What the key columns hold: the location and the counter's name.
const KEY: [Role; 2] = [Role::Loc, Role::Plain];

#[derive(Default)]
struct Series {
    samples: u64,
    /// (value, text) of the smallest and largest samples.
    min: (f64, String),
    max: (f64, String),
    sum: f64,
    /// The sum of the samples as written, while it is exact.
    exact: Option<Decimal>,
    /// Sum of value × time held, and the time covered.
    weighted: f64,
    span: i64,
    first: String,
    last: (i64, f64, String),
}

/// The `counters` report.
pub struct Counters {
    symbols: Symbols,
    series: FastMap<Key, Series>,
    /// Samples whose value is not a number, and the first of them.
    skipped: u64,
    first_skipped: String,
    warnings: Warnings,
}

impl Counters {
    /// An empty report of rows whose identifiers are in `symbols`;
    /// samples left out are told to `warnings`.
    pub fn new(symbols: Symbols, warnings: Warnings) -> Counters {
        Counters {
            symbols,
            series: FastMap::default(),
            skipped: 0,
            first_skipped: String::new(),
            warnings,
        }
    }
}

impl Series {
    /// The mean of the samples: from their exact sum while there is one.
    fn mean(&self) -> f64 {
        match self.exact {
            Some(sum) => sum.div_to_f64(self.samples),
            None => self.sum / self.samples as f64,
        }
    }

    /// Its state as text: every float in its shortest round-trip form.
    fn partial(&self, mut row: Vec<String>) -> Vec<String> {
        row.extend([
            self.samples.to_string(),
            self.min.1.clone(),
            self.max.1.clone(),
            self.exact
                .map_or_else(|| self.sum.to_string(), |e| e.to_string()),
            self.weighted.to_string(),
            self.span.to_string(),
            self.first.clone(),
            self.last.0.to_string(),
            self.last.2.clone(),
        ]);
        row
    }

    /// A series from what [`Series::partial`] wrote (`f`: the fields past the key).
    fn absorb(f: &[String]) -> std::result::Result<Series, String> {
        let row = PartialRow::new(f, 9)?;
        let (min, max) = (row.real(1, "minimum")?, row.real(2, "maximum")?);
        ordered(min, max)?;
        row.real(6, "first value")?;
        Ok(Series {
            samples: row.count(0, "samples")?,
            min: (min, f[1].clone()),
            max: (max, f[2].clone()),
            sum: row.real(3, "sum")?,
            exact: Decimal::parse(&f[3]),
            weighted: row.real(4, "time-weighted sum")?,
            span: row.natural(5, "span")?,
            first: f[6].clone(),
            last: (
                row.number(7, "last time")?,
                row.real(8, "last value")?,
                f[8].clone(),
            ),
        })
    }
}

/// Whether sample `value` (written `text`) is below `than`: by the values
/// as floats where they differ, else exactly as written (integers above
/// 2^53 round to one float).
fn below((value, text): (f64, &str), than: (f64, &str)) -> bool {
    if value != than.0 {
        return value < than.0;
    }
    match (Decimal::parse(text), Decimal::parse(than.1)) {
        (Some(a), Some(b)) => a.compare(&b).is_lt(),
        _ => false,
    }
}

impl RecordSink for Counters {
    /// Of each row: its place, and the counter's location, name and value.
    fn reads(&self) -> Reads {
        Reads::only(ColumnSet::PLACE.with(Column::Name).with(Column::Value))
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.kind != Kind::Counter {
            return Ok(());
        }
        // NaN and infinities are not values a counter held: left out as text is.
        let parsed = rec.value.parse::<f64>().ok().filter(|v| v.is_finite());
        let Some(value) = parsed else {
            if self.skipped == 0 {
                let text = |sym| self.symbols.text(sym);
                self.first_skipped = format!(
                    "`{}` of `{}` on `{}`",
                    rec.value,
                    text(rec.name),
                    text(rec.loc)
                );
            }
            self.skipped += 1;
            return Ok(());
        };
        let s = self
            .series
            .entry([rec.loc, rec.name, Sym::EMPTY])
            .or_default();
        let time = rec.time.unwrap_or_default();
        let exact = Decimal::parse(&rec.value);
        s.exact = match (s.samples, exact) {
            (0, exact) => exact,
            (_, Some(d)) => s.exact.and_then(|sum| sum.add(&d)),
            (_, None) => None,
        };
        if s.samples == 0 {
            s.first.clone_from(&rec.value);
            s.min = (value, rec.value.clone());
            s.max = (value, rec.value.clone());
        } else {
            let held = elapsed(s.last.0, time)?;
            s.weighted += s.last.1 * held as f64;
            s.span = s.span.checked_add(held).ok_or_else(|| {
                Error::Record("the counter's samples span more than 2^63 ns".into())
            })?;
            if below((value, &rec.value), (s.min.0, &s.min.1)) {
                s.min.0 = value;
                s.min.1.clone_from(&rec.value);
            }
            if below((s.max.0, &s.max.1), (value, &rec.value)) {
                s.max.0 = value;
                s.max.1.clone_from(&rec.value);
            }
        }
        s.samples += 1;
        s.sum += value;
        (s.last.0, s.last.1) = (time, value);
        s.last.2.clone_from(&rec.value);
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        if self.skipped > 0 {
            self.warnings.warn(format!(
                "{} counter sample(s) whose value is not a number left out (the first: {})",
                self.skipped, self.first_skipped
            ));
        }
        Ok(())
    }
}

impl Report for Counters {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let names: Vec<&str> = {
            vec![
                "loc",
                "name",
                "samples",
                "min",
                "max",
                "mean",
                "time_weighted_mean",
                "first",
                "last",
            ]
        };
        names.into_iter().map(String::from).collect()
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let rows = self
            .series
            .iter()
            .map(|(key, s)| s.partial(key_texts(labels, key, &KEY)));
        Ok(Some(rows.collect()))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let series = Series::absorb(fields.get(2..).ok_or("expected 11 fields")?)?;
        let key = key_of_fields(&self.symbols, fields, 2);
        if self.series.contains_key(&key) {
            return Err(format!(
                "counter `{}` of `{}` has samples in two parts: split the trace by location",
                fields[1], fields[0]
            ));
        }
        self.series.insert(key, series);
        Ok(())
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let mut rows: Vec<(Vec<String>, &Series)> = self
            .series
            .iter()
            .map(|(key, s)| (key_texts(labels, key, &KEY), s))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (key, s) in rows {
            // One sample, or all at one instant: the last value held.
            let weighted = if s.span > 0 {
                s.weighted / s.span as f64
            } else {
                s.last.1
            };
            let mut cells: Vec<Cell> = key.iter().map(|k| Cell::Text(k)).collect();
            cells.extend([
                Cell::UInt(s.samples),
                Cell::Text(&s.min.1),
                Cell::Text(&s.max.1),
                Cell::shortest(s.mean()),
                Cell::shortest(weighted),
                Cell::Text(&s.first),
                Cell::Text(&s.last.2),
            ]);
            table.row(&cells)?;
        }
        Ok(())
    }
}
