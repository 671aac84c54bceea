//! The `messages` report: per sender and receiver (or per communicator),
//! how many messages, how many bytes, and how long they took to arrive.
//! It reads `msg` rows; halves are paired first by the library's matcher.
//! Printed as a table per key, as a sender × receiver matrix
//! (`--matrix`), or as a histogram of the messages' sizes (`--histogram`).

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::record::{Column, ColumnSet, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{natural_order, Labels, Role};
use crate::stats::partial::{ordered, PartialRow};
use crate::stats::sketch::Sketch;
use crate::stats::{add_to, elapsed, key_of_fields, key_texts, Key, Report, Style};
use crate::table::{Cell, TableWriter};

#[derive(Default)]
struct Figures {
    count: u64,
    bytes: u128,
    transfer: i128,
    min: i64,
    max: i64,
    sizes: Sketch,
    smallest: u64,
    largest: u64,
}

/// What a matrix cell sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cells {
    /// Bytes sent.
    Bytes,
    /// Messages.
    Count,
    /// Transfer time (receive minus send).
    Time,
}

/// How the report prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// One row per sender and receiver.
    Pairs,
    /// One row per communicator.
    Comms,
    /// One row per sender, one column per receiver (every location that
    /// sent or received, in natural order), zeros filled.
    Matrix(Cells),
    /// The messages' sizes in up to this many log-spaced bins.
    Histogram(usize),
}

/// Figures per printed key.
type ByLabel = FastMap<Vec<String>, Figures>;

/// The `messages` report.
pub struct Messages {
    view: View,
    symbols: Symbols,
    figures: FastMap<Key, Figures>,
}

/// The keys `--by` takes for the messages report: per sender and receiver,
/// or per communicator.
pub const KEYS: [&str; 2] = ["pair", "comm"];

impl Messages {
    /// The report printed as `view`, of rows whose identifiers are in
    /// `symbols`.
    pub fn new(view: View, symbols: Symbols) -> Messages {
        Messages {
            view,
            symbols,
            figures: FastMap::default(),
        }
    }

    /// What the key columns hold.
    fn key_roles(&self) -> &'static [Role] {
        match self.view {
            View::Comms => &[Role::Plain],
            _ => &[Role::Loc, Role::Loc],
        }
    }

    /// The rows' figures by label (keys that print alike merged), and
    /// every location that sent or received, in natural order.
    fn by_label(&self, labels: &Labels) -> Result<(ByLabel, Vec<String>)> {
        let mut rows = ByLabel::default();
        for (key, f) in &self.figures {
            let label = key_texts(labels, key, self.key_roles());
            let into = rows.entry(label).or_default();
            into.merge(f).map_err(crate::error::Error::Record)?;
        }
        let mut ends: Vec<String> = rows.keys().flatten().cloned().collect();
        ends.sort_by(|a, b| natural_order(a, b));
        ends.dedup();
        Ok((rows, ends))
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
        let key = match self.view {
            View::Comms => [rec.comm, Sym::EMPTY, Sym::EMPTY],
            _ => [rec.loc, rec.peer, Sym::EMPTY],
        };
        let transfer = elapsed(rec.time.unwrap_or_default(), rec.end.unwrap_or_default())?;
        let f = self.figures.entry(key).or_default();
        f.add(transfer, rec.size.unwrap_or(0));
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Figures {
    fn add(&mut self, transfer: i64, size: u64) {
        let first = self.count == 0;
        self.count += 1;
        self.bytes += u128::from(size);
        self.transfer += i128::from(transfer);
        if first || transfer < self.min {
            self.min = transfer;
        }
        if first || transfer > self.max {
            self.max = transfer;
        }
        self.smallest = if first { size } else { self.smallest.min(size) };
        self.largest = self.largest.max(size);
        self.sizes.add(i64::try_from(size).unwrap_or(i64::MAX));
    }

    /// Adds another part's figures of the same key.
    fn merge(&mut self, other: &Figures) -> std::result::Result<(), String> {
        if other.count == 0 {
            return Ok(());
        }
        let first = self.count == 0;
        if first || other.min < self.min {
            self.min = other.min;
        }
        if first || other.max > self.max {
            self.max = other.max;
        }
        self.smallest = if first {
            other.smallest
        } else {
            self.smallest.min(other.smallest)
        };
        self.largest = self.largest.max(other.largest);
        add_to(&mut self.count, other.count, "count")?;
        add_to(&mut self.bytes, other.bytes, "bytes")?;
        add_to(&mut self.transfer, other.transfer, "sum of transfer times")?;
        self.sizes.merge(&other.sizes);
        Ok(())
    }
}

impl Report for Messages {
    fn columns(&self, labels: &Labels) -> Vec<String> {
        let names: Vec<&str> = match self.view {
            View::Comms => vec!["comm"],
            View::Pairs => vec!["sender", "receiver"],
            View::Histogram(_) => return ["low", "high", "count"].map(String::from).to_vec(),
            View::Matrix(_) => {
                // Printing follows the stream's end, when every end is known.
                let (_, ends) = self.by_label(labels).unwrap_or_default();
                return std::iter::once("sender".to_string()).chain(ends).collect();
            }
        };
        let mut columns: Vec<String> = names.into_iter().map(String::from).collect();
        columns.extend(["count", "bytes", "min", "mean", "max"].map(String::from));
        columns
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let rows = self.figures.iter().map(|(key, f)| {
            let mut row = key_texts(labels, key, self.key_roles());
            row.extend([
                f.count.to_string(),
                f.bytes.to_string(),
                f.transfer.to_string(),
            ]);
            row.extend([f.min.to_string(), f.max.to_string()]);
            row.extend([f.smallest.to_string(), f.largest.to_string()]);
            row.push(f.sizes.encode());
            row
        });
        Ok(Some(rows.collect()))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let k = self.key_roles().len();
        let row = PartialRow::new(fields, k + 8)?;
        let figures = Figures {
            count: row.count(k, "count")?,
            bytes: row.number(k + 1, "bytes")?,
            transfer: row.number(k + 2, "sum of transfer times")?,
            min: row.number(k + 3, "minimum")?,
            max: row.number(k + 4, "maximum")?,
            smallest: row.number(k + 5, "smallest size")?,
            largest: row.number(k + 6, "largest size")?,
            sizes: Sketch::decode(row.text(k + 7)).ok_or("bad sketch of sizes")?,
        };
        ordered(figures.min, figures.max)?;
        ordered(figures.smallest, figures.largest)?;
        let held = figures.sizes.buckets().map(|(_, n)| n).sum::<u64>();
        if held != figures.count {
            return Err(format!(
                "the sketch holds {held} sizes, the count says {}",
                figures.count
            ));
        }
        let key = key_of_fields(&self.symbols, fields, k);
        self.figures.entry(key).or_default().merge(&figures)
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let (rows, ends) = self.by_label(labels)?;
        match self.view {
            View::Matrix(cells) => print_matrix(table, style, &rows, &ends, cells),
            View::Histogram(bins) => print_histogram(table, &rows, bins),
            View::Pairs | View::Comms => print_rows(table, style, rows),
        }
    }
}

/// One row per key, most bytes first (ties by key).
fn print_rows(table: &mut TableWriter, style: &Style, rows: ByLabel) -> Result<()> {
    let mut rows: Vec<(Vec<String>, Figures)> = rows.into_iter().collect();
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

/// One row per sender (every location in `ends`), one column per receiver.
fn print_matrix(
    table: &mut TableWriter,
    style: &Style,
    rows: &ByLabel,
    ends: &[String],
    of: Cells,
) -> Result<()> {
    let mut key = vec![String::new(), String::new()];
    for sender in ends {
        key[0].clone_from(sender);
        let mut cells = vec![Cell::Text(sender)];
        for receiver in ends {
            key[1].clone_from(receiver);
            let f = rows.get(&key);
            cells.push(match of {
                Cells::Bytes => Cell::Number(f.map_or(0, |f| f.bytes).to_string()),
                Cells::Count => Cell::UInt(f.map_or(0, |f| f.count)),
                Cells::Time => style.total(f.map_or(0, |f| f.transfer)),
            });
        }
        table.row(&cells)?;
    }
    Ok(())
}

/// The sizes of every message in up to `bins` log-spaced bins.
fn print_histogram(table: &mut TableWriter, rows: &ByLabel, bins: usize) -> Result<()> {
    let mut all = Figures::default();
    for f in rows.values() {
        all.merge(f).map_err(crate::error::Error::Record)?;
    }
    if all.count == 0 {
        return Ok(());
    }
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    for (low, high, count) in all
        .sizes
        .histogram(clamp(all.smallest), clamp(all.largest), bins)
    {
        table.row(&[Cell::Int(low), Cell::Int(high), Cell::UInt(count)])?;
    }
    Ok(())
}
