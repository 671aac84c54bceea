//! The `counters` report: per (location, counter), the samples' count,
//! extremes, mean, time-weighted mean (each value weighted by how long it
//! held: until the next sample of that counter), first and last value.

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::pipe::RecordSink;
use crate::record::{Kind, Record};
use crate::stats::{key_parts, make_key, Report, Style};
use crate::table::{Cell, TableWriter};

#[derive(Default)]
struct Series {
    samples: u64,
    /// (value, text) of the smallest and largest samples.
    min: (f64, String),
    max: (f64, String),
    sum: f64,
    /// Sum of value × time held, and the time covered.
    weighted: f64,
    span: i64,
    first: String,
    last: (i64, f64, String),
}

/// The `counters` report.
#[derive(Default)]
pub struct Counters {
    series: FastMap<String, Series>,
    key: String,
    skipped: u64,
}

impl Counters {
    /// Samples whose value is not a number (left out).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }
}

impl RecordSink for Counters {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.kind != Kind::Counter {
            return Ok(());
        }
        let Ok(value) = rec.value.parse::<f64>() else {
            self.skipped += 1;
            return Ok(());
        };
        make_key(&mut self.key, &[&rec.loc, &rec.name]);
        if !self.series.contains_key(self.key.as_str()) {
            self.series.insert(self.key.clone(), Series::default());
        }
        let s = self
            .series
            .get_mut(self.key.as_str())
            .expect("inserted above");
        let time = rec.time.unwrap_or_default();
        if s.samples == 0 {
            s.first.clone_from(&rec.value);
            s.min = (value, rec.value.clone());
            s.max = (value, rec.value.clone());
        } else {
            let held = time - s.last.0;
            s.weighted += s.last.1 * held as f64;
            s.span += held;
            if value < s.min.0 {
                s.min = (value, rec.value.clone());
            }
            if value > s.max.0 {
                s.max = (value, rec.value.clone());
            }
        }
        s.samples += 1;
        s.sum += value;
        s.last = (time, value, rec.value.clone());
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Report for Counters {
    fn columns(&self) -> Vec<&'static str> {
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
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        let mut rows: Vec<(&String, &Series)> = self.series.iter().collect();
        rows.sort_by(|a, b| a.0.cmp(b.0));
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (key, s) in rows {
            // One sample, or all at one instant: the last value held.
            let weighted = if s.span > 0 {
                s.weighted / s.span as f64
            } else {
                s.last.1
            };
            let mut cells: Vec<Cell> = key_parts(key).map(Cell::Text).collect();
            cells.extend([
                Cell::UInt(s.samples),
                Cell::Text(&s.min.1),
                Cell::Text(&s.max.1),
                Cell::Real(s.sum / s.samples as f64, 6),
                Cell::Real(weighted, 6),
                Cell::Text(&s.first),
                Cell::Text(&s.last.2),
            ]);
            table.row(&cells)?;
        }
        Ok(())
    }
}
