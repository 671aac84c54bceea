//! The `messages` report: per sender and receiver (or per communicator),
//! how many messages, how many bytes, and how long they took to arrive.
//! It reads `msg` rows; halves are paired first by the library's matcher.

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::fasthash::{key_parts, make_key};
use crate::pipe::RecordSink;
use crate::record::{Kind, Record};
use crate::stats::{numbers, Report, Style};
use crate::table::{Cell, TableWriter};

#[derive(Default)]
struct Figures {
    count: u64,
    bytes: u128,
    transfer: i128,
    min: i64,
    max: i64,
}

/// The `messages` report.
pub struct Messages {
    by_comm: bool,
    figures: FastMap<String, Figures>,
    key: String,
}

impl Messages {
    /// Per (sender, receiver), or per communicator when `by_comm`.
    pub fn new(by_comm: bool) -> Messages {
        Messages {
            by_comm,
            figures: FastMap::default(),
            key: String::new(),
        }
    }
}

impl RecordSink for Messages {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.kind != Kind::Msg {
            return Ok(());
        }
        let parts: &[&str] = if self.by_comm {
            &[&rec.comm]
        } else {
            &[&rec.loc, &rec.peer]
        };
        make_key(&mut self.key, parts);
        if !self.figures.contains_key(self.key.as_str()) {
            self.figures.insert(self.key.clone(), Figures::default());
        }
        let f = self
            .figures
            .get_mut(self.key.as_str())
            .expect("inserted above");
        let transfer = rec.end.unwrap_or_default() - rec.time.unwrap_or_default();
        if f.count == 0 || transfer < f.min {
            f.min = transfer;
        }
        if f.count == 0 || transfer > f.max {
            f.max = transfer;
        }
        f.count += 1;
        f.bytes += u128::from(rec.size.unwrap_or(0));
        f.transfer += i128::from(transfer);
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Report for Messages {
    fn columns(&self) -> Vec<&'static str> {
        let mut columns = if self.by_comm {
            vec!["comm"]
        } else {
            vec!["sender", "receiver"]
        };
        columns.extend(["count", "bytes", "min", "mean", "max"]);
        columns
    }

    fn partial(&self) -> Option<Vec<Vec<String>>> {
        let rows = self.figures.iter().map(|(key, f)| {
            let mut row: Vec<String> = key_parts(key).map(str::to_string).collect();
            row.extend([
                f.count.to_string(),
                f.bytes.to_string(),
                f.transfer.to_string(),
            ]);
            row.extend([f.min.to_string(), f.max.to_string()]);
            row
        });
        Some(rows.collect())
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let k = if self.by_comm { 1 } else { 2 };
        let n: Vec<i128> = numbers(fields, k, 5)?;
        let key: Vec<&str> = fields[..k].iter().map(String::as_str).collect();
        make_key(&mut self.key, &key);
        let f = self.figures.entry(self.key.clone()).or_default();
        let (min, max) = (n[3] as i64, n[4] as i64);
        if f.count == 0 || min < f.min {
            f.min = min;
        }
        if f.count == 0 || max > f.max {
            f.max = max;
        }
        f.count += n[0] as u64;
        f.bytes += n[1] as u128;
        f.transfer += n[2];
        Ok(())
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        let mut rows: Vec<(&String, &Figures)> = self.figures.iter().collect();
        rows.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(b.0)));
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (key, f) in rows {
            let mut cells: Vec<Cell> = key_parts(key).map(Cell::Text).collect();
            cells.extend([
                Cell::UInt(f.count),
                Cell::Number(f.bytes.to_string()),
                style.time(f.min),
                style.mean(f.transfer, f.count),
                style.time(f.max),
            ]);
            table.row(&cells)?;
        }
        Ok(())
    }
}
