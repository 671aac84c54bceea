//! The `states` report: time per (container, state type, value), as a Gantt
//! chart would sum it: every frame counts whole, nested ones too. Frames on
//! a lane (a Pajé state stack) count for the lane's container.

use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::frames::{self, FrameStack, OpenFrame};
use crate::model::record::{Column, ColumnSet, Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::PartialRow;
use crate::stats::{add_to, elapsed, key_of_fields, key_texts, Key, Report, Style};
use crate::table::{Cell, TableWriter};

/// What the key columns hold: the container, the state's type and value.
const KEY: [Role; 3] = [Role::Loc, Role::Type, Role::Plain];

/// An open frame: its key (whose value is its name) and start.
#[derive(Default)]
struct OpenState {
    key: Key,
    start: i64,
}

impl OpenFrame for OpenState {
    fn name(&self) -> Sym {
        self.key[2]
    }
}

/// The `states` report.
pub struct States {
    symbols: Symbols,
    /// The container each lane belongs to.
    lanes: FastMap<Sym, Sym>,
    /// Per location, the open frames.
    open: FastMap<Sym, FrameStack<OpenState>>,
    /// Per key: frames and total time.
    figures: FastMap<Key, Figures>,
    clock: i64,
}

impl States {
    /// The report of rows whose identifiers are in `symbols`.
    pub fn new(symbols: Symbols) -> States {
        States {
            symbols,
            lanes: FastMap::default(),
            open: FastMap::default(),
            figures: FastMap::default(),
            clock: 0,
        }
    }

    /// The key of a frame of `rec`: its container's (a lane's owner), its
    /// type and its value.
    fn key(&self, rec: &Record) -> Key {
        let owner = self.lanes.get(&rec.loc).copied().unwrap_or(rec.loc);
        [owner, rec.cat, rec.name]
    }

    fn add(&mut self, key: Key, duration: i64) {
        let f = self.figures.entry(key).or_default();
        f.0 += 1;
        f.1 += i128::from(duration);
    }

    fn leave(&mut self, (loc, name): (Sym, Sym), time: i64) -> Result<()> {
        let stack = self.open.entry(loc).or_default();
        let closed = stack.leave((loc, name), time, &self.symbols)?;
        let (key, start) = (closed.frame.key, closed.frame.start);
        self.add(key, elapsed(start, time)?);
        Ok(())
    }

    /// The rows by label (keys that print alike merged), most time first,
    /// ties by label.
    /// Sums of merged partial files may overflow: an error.
    fn ranked(&self, labels: &Labels) -> Result<Vec<(Vec<String>, Figures)>> {
        let mut rows: FastMap<Vec<String>, Figures> = FastMap::default();
        for (key, (count, time)) in &self.figures {
            let row = rows.entry(key_texts(labels, key, &KEY)).or_default();
            add_to(&mut row.0, *count, "count").map_err(Error::Record)?;
            add_to(&mut row.1, *time, "time").map_err(Error::Record)?;
        }
        let mut rows: Vec<_> = rows.into_iter().collect();
        rows.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
        Ok(rows)
    }
}

/// A key's count of states and their total time.
type Figures = (u64, i128);

impl RecordSink for States {
    /// Of each row: its place, and the state's category, name and the lane's container.
    fn reads(&self) -> Reads {
        Reads::only(
            ColumnSet::PLACE
                .with(Column::Cat)
                .with(Column::Name)
                .with(Column::Peer),
        )
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some(t) = rec.completion() {
            self.clock = self.clock.max(t);
        }
        match rec.kind {
            Kind::Container if rec.cat == well_known::LANE => {
                self.lanes.insert(rec.loc, rec.peer);
            }
            Kind::Enter => {
                let key = self.key(rec);
                let start = rec.time.unwrap_or_default();
                *self.open.entry(rec.loc).or_default().enter(start) = OpenState { key, start };
            }
            Kind::Leave => self.leave((rec.loc, rec.name), rec.time.unwrap_or_default())?,
            Kind::State => {
                let key = self.key(rec);
                let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
                self.add(key, elapsed(start, end)?);
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        for (loc, last) in frames::still_open(&self.open, &self.symbols) {
            while self.open[&loc].depth() > 0 {
                self.leave((loc, Sym::EMPTY), last)?;
            }
        }
        Ok(())
    }
}

impl Report for States {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let names: Vec<&str> = { vec!["container", "type", "value", "count", "time"] };
        names.into_iter().map(String::from).collect()
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let rows = self
            .ranked(labels)?
            .into_iter()
            .map(|(mut row, (count, time))| {
                row.extend([count.to_string(), time.to_string()]);
                row
            });
        Ok(Some(rows.collect()))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let row = PartialRow::new(fields, 5)?;
        let (count, time) = (row.count(3, "count")?, row.natural(4, "time")?);
        let key = key_of_fields(&self.symbols, fields, 3);
        let f = self.figures.entry(key).or_default();
        add_to(&mut f.0, count, "count")?;
        add_to(&mut f.1, time, "time")
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let mut rows = self.ranked(labels)?;
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (key, (count, time)) in rows {
            let mut cells: Vec<Cell> = key.iter().map(|k| Cell::Text(k)).collect();
            cells.push(Cell::UInt(count));
            cells.push(style.total(time));
            table.row(&cells)?;
        }
        Ok(())
    }
}
