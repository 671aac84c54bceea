//! The `states` report: time per (container, state type, value), as a Gantt
//! chart would sum it: every frame counts whole, nested ones too. Frames on
//! a lane (a Pajé state stack) count for the lane's container.

use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::fasthash::{key_parts, make_key};
use crate::pipe::RecordSink;
use crate::record::{Kind, Record};
use crate::stats::{numbers, Report, Style};
use crate::table::{Cell, TableWriter};

/// The `states` report.
#[derive(Default)]
pub struct States {
    /// The container each lane belongs to.
    lanes: FastMap<String, String>,
    /// Per location, the open frames: (key, start), and the latest time of
    /// a frame row there (where frames open at the end close).
    open: FastMap<String, (Vec<(String, i64)>, i64)>,
    /// Per key: frames and total time.
    figures: FastMap<String, (u64, i128)>,
    key: String,
    clock: i64,
}

impl States {
    fn owner<'a>(&'a self, loc: &'a str) -> &'a str {
        self.lanes.get(loc).map_or(loc, String::as_str)
    }

    fn add(&mut self, key: &str, duration: i64) {
        if !self.figures.contains_key(key) {
            self.figures.insert(key.to_string(), (0, 0));
        }
        let f = self.figures.get_mut(key).expect("inserted above");
        f.0 += 1;
        f.1 += i128::from(duration);
    }

    fn leave(&mut self, loc: &str, time: i64) -> Result<()> {
        let Some((key, start)) = self.open.get_mut(loc).and_then(|(frames, last)| {
            *last = (*last).max(time);
            frames.pop()
        }) else {
            return Err(Error::Record(format!(
                "a `leave` on `{loc}` with no open frame"
            )));
        };
        self.add(&key, time - start);
        Ok(())
    }
}

impl RecordSink for States {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some(t) = rec.completion() {
            self.clock = self.clock.max(t);
        }
        match rec.kind {
            Kind::Container if rec.cat == "lane" => {
                self.lanes.insert(rec.loc.clone(), rec.peer.clone());
            }
            Kind::Enter => {
                let owner = self.owner(&rec.loc).to_string();
                make_key(&mut self.key, &[&owner, &rec.cat, &rec.name]);
                let start = rec.time.unwrap_or_default();
                let (frames, last) = self
                    .open
                    .entry(rec.loc.clone())
                    .or_insert((Vec::new(), start));
                *last = (*last).max(start);
                frames.push((self.key.clone(), start));
            }
            Kind::Leave => self.leave(&rec.loc, rec.time.unwrap_or_default())?,
            Kind::State => {
                let owner = self.owner(&rec.loc).to_string();
                make_key(&mut self.key, &[&owner, &rec.cat, &rec.name]);
                let key = std::mem::take(&mut self.key);
                self.add(
                    &key,
                    rec.end.unwrap_or_default() - rec.time.unwrap_or_default(),
                );
                self.key = key;
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let mut locs: Vec<String> = self.open.keys().cloned().collect();
        locs.sort();
        for loc in locs {
            let last = self.open[&loc].1;
            while self.open.get(&loc).is_some_and(|(f, _)| !f.is_empty()) {
                self.leave(&loc, last)?;
            }
        }
        Ok(())
    }
}

impl Report for States {
    fn columns(&self) -> Vec<&'static str> {
        vec!["container", "type", "value", "count", "time"]
    }

    fn partial(&self) -> Option<Vec<Vec<String>>> {
        let rows = self.figures.iter().map(|(key, (count, time))| {
            let mut row: Vec<String> = key_parts(key).map(str::to_string).collect();
            row.extend([count.to_string(), time.to_string()]);
            row
        });
        Some(rows.collect())
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let n: Vec<i128> = numbers(fields, 3, 2)?;
        let key: Vec<&str> = fields[..3].iter().map(String::as_str).collect();
        make_key(&mut self.key, &key);
        let f = self.figures.entry(self.key.clone()).or_default();
        f.0 += n[0] as u64;
        f.1 += n[1];
        Ok(())
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        let mut rows: Vec<(&String, &(u64, i128))> = self.figures.iter().collect();
        rows.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(b.0)));
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (key, (count, time)) in rows {
            let mut cells: Vec<Cell> = key_parts(key).map(Cell::Text).collect();
            cells.push(Cell::UInt(*count));
            cells.push(style.time(i64::try_from(*time).unwrap_or(i64::MAX)));
            table.row(&cells)?;
        }
        Ok(())
    }
}
