//! The `summary` report: the trace at a glance. Rows `item, name, value`:
//! its span (first and last time), rows per kind, locations, messages
//! (halves paired as `trace-match` does) and halves left unmatched, and the
//! five functions with the most exclusive time.

use crate::error::Result;
use crate::fasthash::FastSet;
use crate::model::record::{ColumnSet, Kind, Record, Sym};
use crate::pipe::{Reads, RecordSink};
use crate::stages::matcher::MatchSummary;
use crate::stats::labels::Labels;
use crate::stats::profile::{By, Profile};
use crate::stats::{Report, Style};
use crate::table::{Cell, TableWriter};

/// The `summary` report.
pub struct Summary {
    rows: [u64; Kind::ALL.len()],
    locations: FastSet<Sym>,
    first: Option<i64>,
    last: Option<i64>,
    profile: Profile,
    unmatched: (u64, u64),
}

impl Summary {
    /// The report, identifiers printed through `labels`.
    pub fn new(labels: Labels) -> Summary {
        Summary {
            rows: [0; Kind::ALL.len()],
            locations: FastSet::default(),
            first: None,
            last: None,
            profile: Profile::new(By::Name, None, labels),
            unmatched: (0, 0),
        }
    }
}

impl RecordSink for Summary {
    /// Of each row: its place, and nothing beyond a row's place.
    fn reads(&self) -> Reads {
        Reads::only(ColumnSet::PLACE)
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        let kind = Kind::ALL
            .iter()
            .position(|k| *k == rec.kind)
            .expect("a kind");
        self.rows[kind] += 1;
        if rec.kind == Kind::Container {
            self.locations.insert(rec.loc);
        }
        if let (Some(t), Some(c)) = (rec.time, rec.completion()) {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(c, |l| l.max(c)));
        }
        self.profile.write(rec)
    }

    fn finish(&mut self) -> Result<()> {
        self.profile.finish()
    }
}

impl Report for Summary {
    fn columns(&self) -> Vec<&'static str> {
        vec!["item", "name", "value"]
    }

    fn note_matching(&mut self, matching: &MatchSummary) {
        self.unmatched = matching.unmatched_total();
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        let time = |t: Option<i64>| t.map_or(Cell::Empty, |t| style.time(t));
        let span = self
            .last
            .zip(self.first)
            .map(|(l, f)| i128::from(l) - i128::from(f));
        table.row(&[Cell::Text("first"), Cell::Text(""), time(self.first)])?;
        table.row(&[Cell::Text("last"), Cell::Text(""), time(self.last)])?;
        let span = span.map_or(Cell::Empty, |s| style.total(s));
        table.row(&[Cell::Text("span"), Cell::Text(""), span])?;
        for (kind, n) in Kind::ALL.iter().zip(self.rows) {
            if n > 0 {
                table.row(&[Cell::Text("rows"), Cell::Text(kind.as_str()), Cell::UInt(n)])?;
            }
        }
        let locations = self.locations.len() as u64;
        table.row(&[
            Cell::Text("locations"),
            Cell::Text(""),
            Cell::UInt(locations),
        ])?;
        let msgs = self.rows[Kind::ALL.iter().position(|k| *k == Kind::Msg).expect("msg")];
        table.row(&[Cell::Text("messages"), Cell::Text(""), Cell::UInt(msgs)])?;
        table.row(&[
            Cell::Text("unmatched"),
            Cell::Text("send"),
            Cell::UInt(self.unmatched.0),
        ])?;
        table.row(&[
            Cell::Text("unmatched"),
            Cell::Text("recv"),
            Cell::UInt(self.unmatched.1),
        ])?;
        for (name, exclusive) in self.profile.heaviest(5) {
            table.row(&[
                Cell::Text("function"),
                Cell::Text(&name),
                style.total(exclusive),
            ])?;
        }
        Ok(())
    }
}
