//! The `summary` report: the trace at a glance. Rows `item, name, value`:
//! its span (first and last time), rows per kind, locations holding rows, messages
//! (halves paired as `trace-match` does) and halves left unmatched, and the
//! five functions with the most exclusive time.

use crate::error::{Result, Warnings};
use crate::fasthash::FastSet;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::Labels;
use crate::stats::profile::{Profile, ProfileKey};
use crate::stats::waits::{self, Waits, PATTERNS};
use crate::stats::{Report, Style};
use crate::table::{Cell, TableWriter};

/// The `summary` report.
pub struct Summary {
    rows: [u64; Kind::ALL.len()],
    /// The locations that hold rows (not the containers above them).
    locations: FastSet<Sym>,
    first: Option<i64>,
    last: Option<i64>,
    profile: Profile,
    /// Wait states, from the halves it pairs (or `msg` rows as they are).
    waits: Waits,
}

impl Summary {
    /// The report of rows whose identifiers are in `symbols`; halves
    /// never paired and odd collective instances are told to `warnings`.
    pub fn new(symbols: Symbols, warnings: Warnings) -> Summary {
        Summary {
            rows: [0; Kind::ALL.len()],
            locations: FastSet::default(),
            first: None,
            last: None,
            waits: Waits::new(waits::WaitKey::Pattern, symbols.clone(), warnings),
            profile: Profile::new(ProfileKey::Name, None, symbols),
        }
    }
}

impl RecordSink for Summary {
    /// What the wait states read: every column.
    fn reads(&self) -> Reads {
        self.waits.reads()
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        self.waits.write(rec)?;
        // A location counts when it holds rows; a container that holds
        // none (a process or node above its threads) does not, its
        // creation and end aside.
        if !rec.kind.is_structural() && rec.kind != Kind::Destroy {
            self.locations.insert(rec.loc);
            if rec.kind == Kind::Msg && !rec.peer.is_empty() {
                self.locations.insert(rec.peer);
            }
        }
        if matches!(rec.kind, Kind::Send | Kind::Recv) {
            // A message counts once, as the msg row its halves make.
            return self.profile.write(rec);
        }
        let kind = Kind::ALL
            .iter()
            .position(|k| *k == rec.kind)
            .expect("a kind");
        self.rows[kind] += 1;
        if let (Some(t), Some(c)) = (rec.time, rec.completion()) {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(c, |l| l.max(c)));
        }
        self.profile.write(rec)
    }

    fn finish(&mut self) -> Result<()> {
        self.waits.finish()?;
        self.profile.finish()
    }
}

impl Report for Summary {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let names: Vec<&str> = { vec!["item", "name", "value"] };
        names.into_iter().map(String::from).collect()
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let time = |t: Option<i64>| t.map_or(Cell::Empty, |t| style.time(t));
        let span = self
            .last
            .zip(self.first)
            .map(|(l, f)| i128::from(l) - i128::from(f));
        table.row(&[Cell::Text("first"), Cell::Text(""), time(self.first)])?;
        table.row(&[Cell::Text("last"), Cell::Text(""), time(self.last)])?;
        let span = span.map_or(Cell::Empty, |s| style.total(s));
        table.row(&[Cell::Text("span"), Cell::Text(""), span])?;
        // Halves count as the messages they make, as after trace-match.
        let matching = self.waits.matching();
        let mut rows = self.rows;
        let msg = Kind::ALL.iter().position(|k| *k == Kind::Msg).expect("msg");
        rows[msg] += matching.matched;
        let unmatched = matching.unmatched_total();
        for (kind, n) in Kind::ALL.iter().zip(rows) {
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
        table.row(&[
            Cell::Text("messages"),
            Cell::Text(""),
            Cell::UInt(rows[msg]),
        ])?;
        table.row(&[
            Cell::Text("unmatched"),
            Cell::Text("send"),
            Cell::UInt(unmatched.0),
        ])?;
        table.row(&[
            Cell::Text("unmatched"),
            Cell::Text("recv"),
            Cell::UInt(unmatched.1),
        ])?;
        let totals = self.waits.tally().per_pattern();
        for (pattern, (_, time)) in PATTERNS.iter().zip(totals) {
            table.row(&[Cell::Text("wait"), Cell::Text(pattern), style.total(time)])?;
        }
        for (name, exclusive) in self.profile.heaviest(5, labels) {
            table.row(&[
                Cell::Text("function"),
                Cell::Text(&name),
                style.total(exclusive),
            ])?;
        }
        Ok(())
    }
}
