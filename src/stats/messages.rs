//! The `messages` report: per sender and receiver (or per communicator),
//! how many messages, how many bytes, and how long they took to arrive.
//! It reads `msg` rows; halves are paired first by the library's matcher.

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::record::{Column, ColumnSet, Kind, Record, Sym};
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::{ordered, PartialRow};
use crate::stats::{add_to, elapsed, key_of_fields, key_texts, Key, Report, Style};
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
    labels: Labels,
    figures: FastMap<Key, Figures>,
}

/// The keys `--by` takes for the messages report: per sender and receiver,
/// or per communicator.
pub const KEYS: [&str; 2] = ["pair", "comm"];

impl Messages {
    /// Per (sender, receiver), or per communicator when `by_comm`, with
    /// identifiers printed through `labels`.
    pub fn new(by_comm: bool, labels: Labels) -> Messages {
        Messages {
            by_comm,
            labels,
            figures: FastMap::default(),
        }
    }

    /// What the key columns hold.
    fn key_roles(&self) -> &'static [Role] {
        match self.by_comm {
            true => &[Role::Plain],
            false => &[Role::Loc, Role::Loc],
        }
    }
}

impl RecordSink for Messages {
    /// Of each row: its place, and the ends, communicator and size of a message.
    fn reads(&self) -> Reads {
        Reads::only(
            ColumnSet::PLACE
                .with(Column::Peer)
                .with(Column::Comm)
                .with(Column::Size),
        )
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.kind != Kind::Msg {
            return Ok(());
        }
        let key = if self.by_comm {
            [rec.comm, Sym::EMPTY, Sym::EMPTY]
        } else {
            [rec.loc, rec.peer, Sym::EMPTY]
        };
        let f = self.figures.entry(key).or_default();
        let transfer = elapsed(rec.time.unwrap_or_default(), rec.end.unwrap_or_default())?;
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
            let mut row = key_texts(&self.labels, key, self.key_roles());
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
        let k = self.key_roles().len();
        let row = PartialRow::new(fields, k + 5)?;
        let count = row.count(k, "count")?;
        let bytes: u128 = row.number(k + 1, "bytes")?;
        let transfer: i128 = row.number(k + 2, "sum of transfer times")?;
        let (min, max): (i64, i64) = (row.number(k + 3, "minimum")?, row.number(k + 4, "maximum")?);
        ordered(min, max)?;
        let key = key_of_fields(self.labels.symbols(), fields, k);
        let f = self.figures.entry(key).or_default();
        if f.count == 0 || min < f.min {
            f.min = min;
        }
        if f.count == 0 || max > f.max {
            f.max = max;
        }
        add_to(&mut f.count, count, "count")?;
        add_to(&mut f.bytes, bytes, "bytes")?;
        add_to(&mut f.transfer, transfer, "sum of transfer times")
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        let roles = self.key_roles();
        let mut rows: Vec<(Vec<String>, &Figures)> = self
            .figures
            .iter()
            .map(|(key, f)| (key_texts(&self.labels, key, roles), f))
            .collect();
        rows.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(&b.0)));
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (key, f) in rows {
            let mut cells: Vec<Cell> = key.iter().map(|k| Cell::Text(k)).collect();
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
