//! `timeline --messages`: message volume over time. Per time bin (the
//! timeline's bins) and sender and receiver (`--by pair`) or sender
//! (`--by loc`), the messages sent and their bytes, binned by send time:
//! from `send` halves and `msg` rows (a matched message counts once, on its
//! sender, at its send). Memory: one count per bin and key holding a
//! message, the bins bounded as the timeline's.

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::record::{Column, ColumnSet, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::PartialRow;
use crate::stats::{add_to, key_of_fields, key_texts, Key, Report, Style};
use crate::table::{Cell, TableWriter};

use super::{Bins, Extent};

/// The keys of `--by` with `--messages`.
pub const KEYS: [&str; 2] = ["pair", "loc"];

/// Messages and bytes of one bin and key.
#[derive(Debug, Default, Clone, Copy)]
struct Volume {
    count: u64,
    bytes: u128,
}

/// The `timeline --messages` report.
pub struct MessageTimeline {
    bins: Bins,
    /// Per sender and receiver, else per sender.
    per_pair: bool,
    symbols: Symbols,
    extent: Extent,
    volumes: FastMap<(i64, Key), Volume>,
    /// Bins `0..count` printed (`--bins N`), else those holding messages.
    count: Option<u64>,
}

impl MessageTimeline {
    /// Message volume in `bins`, per pair of locations or per sender, of
    /// rows whose identifiers are in `symbols`; with `count`, bins
    /// `0..count` only are printed.
    pub fn new(bins: Bins, per_pair: bool, count: Option<u64>, symbols: Symbols) -> Self {
        MessageTimeline {
            bins,
            per_pair,
            symbols,
            extent: Extent::default(),
            volumes: FastMap::default(),
            count,
        }
    }

    fn roles(&self) -> &'static [Role] {
        match self.per_pair {
            true => &[Role::Loc, Role::Loc],
            false => &[Role::Loc],
        }
    }

    fn key(&self, rec: &Record) -> Key {
        match self.per_pair {
            true => [rec.loc, rec.peer, Sym::EMPTY],
            false => [rec.loc, Sym::EMPTY, Sym::EMPTY],
        }
    }

    /// The rows as printed: bin, labels (keys that print alike merged),
    /// volume; by bin, then most bytes, then label.
    fn rows(&self, labels: &Labels) -> Result<Vec<(i64, Vec<String>, Volume)>> {
        let mut merged: FastMap<(i64, Vec<String>), Volume> = FastMap::default();
        for (&(bin, key), v) in &self.volumes {
            let into = merged
                .entry((bin, key_texts(labels, &key, self.roles())))
                .or_default();
            add_to(&mut into.count, v.count, "count").map_err(crate::error::Error::Record)?;
            add_to(&mut into.bytes, v.bytes, "bytes").map_err(crate::error::Error::Record)?;
        }
        let range = self.count.map_or(i64::MIN..i64::MAX, |n| 0..n as i64);
        let mut rows: Vec<(i64, Vec<String>, Volume)> = merged
            .into_iter()
            .filter(|((bin, _), _)| range.contains(bin))
            .map(|((bin, label), v)| (bin, label, v))
            .collect();
        rows.sort_by(|a, b| {
            (a.0, std::cmp::Reverse(a.2.bytes), &a.1).cmp(&(
                b.0,
                std::cmp::Reverse(b.2.bytes),
                &b.1,
            ))
        });
        Ok(rows)
    }
}

impl RecordSink for MessageTimeline {
    fn reads(&self) -> Reads {
        Reads::only(ColumnSet::PLACE.with(Column::Peer).with(Column::Size))
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if !matches!(rec.kind, Kind::Send | Kind::Msg) {
            return Ok(());
        }
        let time = rec.time.unwrap_or_default();
        self.extent
            .note(&self.bins, (time, time.saturating_add(1)))?;
        let volume = self
            .volumes
            .entry((self.bins.bin(time), self.key(rec)))
            .or_default();
        volume.count += 1;
        volume.bytes += u128::from(rec.size.unwrap_or(0));
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Report for MessageTimeline {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let keys: &[&str] = match self.per_pair {
            true => &["sender", "receiver"],
            false => &["loc"],
        };
        let mut columns = vec!["start".to_string(), "end".to_string()];
        columns.extend(keys.iter().map(|k| k.to_string()));
        columns.extend(["count".to_string(), "bytes".to_string()]);
        columns
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let rows = self.rows(labels)?;
        for (bin, label, v) in rows.iter().take(style.top.unwrap_or(usize::MAX)) {
            let start = self.bins.start(*bin);
            let mut cells = vec![
                style.total(start),
                style.total(start + i128::from(self.bins.width)),
            ];
            cells.extend(label.iter().map(|l| Cell::Text(l)));
            cells.extend([Cell::UInt(v.count), Cell::Number(v.bytes.to_string())]);
            table.row(&cells)?;
        }
        Ok(())
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let rows = self.rows(labels)?.into_iter().map(|(bin, mut line, v)| {
            line.extend([self.bins.origin, self.bins.width, bin].map(|n| n.to_string()));
            line.extend([v.count.to_string(), v.bytes.to_string()]);
            line
        });
        Ok(Some(rows.collect()))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let k = self.roles().len();
        let row = PartialRow::new(fields, k + 5)?;
        let bin = self.bins.of_partial(&row, k)?;
        let count: u64 = row.count(k + 3, "count")?;
        if count == 0 {
            return Err("a bin with no message: a partial holds the bins with messages".into());
        }
        let bytes: u128 = row.number(k + 4, "bytes")?;
        let start = i64::try_from(self.bins.start(bin)).map_err(|e| e.to_string())?;
        self.extent
            .note(&self.bins, (start, start.saturating_add(1)))
            .map_err(|e| e.to_string())?;
        let key = key_of_fields(&self.symbols, fields, k);
        let into = self.volumes.entry((bin, key)).or_default();
        add_to(&mut into.count, count, "count")?;
        add_to(&mut into.bytes, bytes, "bytes")
    }
}
