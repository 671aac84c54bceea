//! The `critical-path` report: the chain of work and waits that decides
//! the run's length.
//!
//! The path is the walk back from the location that finishes last (the
//! latest time of any row; of equals, the first by id): along the
//! location's own time, each stretch credited to its innermost open frame
//! (or to no frame), and where it meets a wait, across to the location
//! waited for at the time the waiting ended: a receive that waited for its
//! sender (late sender) crosses to the sender at the send; a participant
//! that waited in a collective (`waits`' collective patterns) crosses to
//! the last arrival, or the root, at its arrival. The walk ends at the
//! trace's first time, so the path's time per function adds up to the
//! run's span.
//!
//! It is computed forward, in one pass: each location carries the path
//! that ends at its latest time (time per function; with `--segments` the
//! segments too), and a wait replaces the waiter's path before the
//! crossing with the other location's. Waits are often found after the
//! fact (a receive paired when its sender's half comes, a collective
//! released when its last participant is in), so each location remembers
//! its last [`path::HISTORY`] credits and reads its path back at the
//! crossing; a crossing older than that, or behind more than two later
//! crossings of the other location, is not followed (the path then stays
//! on the waiter; a warning counts them). One path: of waits at the same place, the later one
//! found decides. Memory: per location the time per function of its path
//! and its history; with `--segments`, the paths themselves.

pub mod path;

use crate::error::{Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{Labels, Role};
use crate::stats::waits::{self, Jump, Waits};
use crate::stats::{Report, Style};
use crate::table::{Cell, TableWriter};
use path::{LocationPath, Paths, Value};

/// The slot of time outside every frame.
const OUTSIDE: usize = 0;

/// What a function outside every frame prints as.
const OUTSIDE_NAME: &str = "(outside frames)";

/// The `critical-path` report.
pub struct CriticalPath {
    waits: Waits,
    paths: Paths,
    lanes: FastMap<Sym, LocationPath>,
    /// Function slots: each name's, and each slot's name.
    slots: FastMap<Sym, usize>,
    names: Vec<Sym>,
    start: Option<i64>,
    segments: bool,
    symbols: Symbols,
    /// The path found at the end, and where it ends.
    found: Option<(Sym, Value)>,
    /// Waits found too late to follow (their time beyond the history
    /// kept), and the first's location and time: told at the end.
    unfollowed: (u64, Option<(Sym, i64)>),
    warnings: Warnings,
}

impl CriticalPath {
    /// The report: time per function on the path, or its segments when
    /// `segments`, of rows whose identifiers are in `symbols`.
    pub fn new(segments: bool, symbols: Symbols, warnings: Warnings) -> CriticalPath {
        let mut waits = Waits::new(waits::WaitKey::Pattern, symbols.clone(), warnings.clone());
        waits.keep_jumps();
        CriticalPath {
            waits,
            paths: Paths::new(segments),
            lanes: FastMap::default(),
            slots: FastMap::from_iter([(Sym::EMPTY, OUTSIDE)]),
            names: vec![Sym::EMPTY],
            start: None,
            segments,
            symbols,
            found: None,
            unfollowed: (0, None),
            warnings,
        }
    }

    fn slot(&mut self, name: Sym) -> usize {
        let next = self.names.len();
        let slot = *self.slots.entry(name).or_insert(next);
        if slot == next {
            self.names.push(name);
        }
        slot
    }

    fn lane(&mut self, loc: Sym, t: i64) -> &mut LocationPath {
        let start = *self.start.get_or_insert(t);
        self.lanes
            .entry(loc)
            .or_insert_with(|| self.paths.lane(start))
    }

    /// Follows a wait: the waiter's path before `at` becomes the path of
    /// the location it waited for.
    fn cross(&mut self, jump: Jump) {
        if jump.to.is_empty() || jump.to == jump.waiter {
            return;
        }
        let (Some(to), true) = (
            self.lanes.get(&jump.to),
            self.lanes.contains_key(&jump.waiter),
        ) else {
            return;
        };
        let crossed = match self.paths.value_at(to, jump.to, jump.at, OUTSIDE) {
            Some(from) => {
                let lane = self.lanes.get_mut(&jump.waiter).expect("checked");
                self.paths.cross(lane, jump.waiter, from, jump.at, OUTSIDE)
            }
            None => false,
        };
        if !crossed {
            self.unfollowed.0 += 1;
            self.unfollowed.1.get_or_insert((jump.waiter, jump.at));
        }
    }

    fn take_jumps(&mut self) {
        let jumps: Vec<Jump> = self.waits.take_jumps().collect();
        for jump in jumps {
            self.cross(jump);
        }
    }
}

impl RecordSink for CriticalPath {
    /// Every column: halves are paired on theirs.
    fn reads(&self) -> Reads {
        Reads::ALL
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if let (Some(t), Some(completion)) = (rec.time, rec.completion()) {
            // A message or dependency ends on its peer: its own location
            // took part at its start only.
            let last = match rec.kind {
                Kind::Msg | Kind::Dep => t,
                _ => completion,
            };
            let slot = match rec.kind {
                Kind::Enter => self.slot(rec.name),
                _ => OUTSIDE,
            };
            let paths = self.paths;
            let lane = self.lane(rec.loc, t);
            match rec.kind {
                Kind::Enter => {
                    paths.advance(lane, rec.loc, t, OUTSIDE);
                    paths.push(lane, (slot, rec.name), t);
                }
                Kind::Leave => {
                    paths.advance(lane, rec.loc, t, OUTSIDE);
                    paths.pop(lane, t);
                }
                _ => lane.note(last),
            }
        }
        self.waits.write(rec)?;
        self.take_jumps();
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.waits.finish()?;
        self.take_jumps();
        let symbols = self.symbols.clone();
        let end = self.lanes.iter().max_by(|a, b| {
            a.1.last()
                .cmp(&b.1.last())
                .then_with(|| symbols.text(*b.0).cmp(symbols.text(*a.0)))
        });
        if let Some((&loc, lane)) = end {
            let value = self.paths.value_at(lane, loc, lane.last(), OUTSIDE);
            self.found = value.map(|v| (loc, v));
        }
        if let (n, Some((loc, at))) = self.unfollowed {
            self.warnings.warn(format!(
                "the critical path is approximate: {n} wait(s) were found more than {} credits after their time and not followed, the first on `{}` at {at} ns",
                path::HISTORY,
                symbols.text(loc)
            ));
        }
        Ok(())
    }
}

impl Report for CriticalPath {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let names: &[&str] = match self.segments {
            true => &["loc", "name", "start", "end"],
            false => &["name", "time"],
        };
        names.iter().map(|c| c.to_string()).collect()
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let Some((_, value)) = &self.found else {
            return Ok(());
        };
        let symbols = &self.symbols;
        let name_of = |sym: Sym| match sym.is_empty() {
            true => OUTSIDE_NAME.to_string(),
            false => symbols.text(sym).to_string(),
        };
        if self.segments {
            let mut segments = Vec::new();
            let mut at = value.chain.as_deref();
            while let Some(segment) = at {
                segments.push(segment);
                at = segment.before.as_deref();
            }
            for segment in segments.iter().rev() {
                let loc = labels.texts(&[segment.loc], &[Role::Loc]).remove(0);
                let name = name_of(segment.name);
                let cells = [
                    Cell::Text(&loc),
                    Cell::Text(&name),
                    style.time(segment.start),
                    style.time(segment.end),
                ];
                table.row(&cells)?;
            }
            return Ok(());
        }
        let mut rows: Vec<(String, i64)> = value
            .times
            .iter()
            .filter(|&(_, &t)| t != 0)
            .map(|(&slot, &t)| (name_of(self.names[slot]), t))
            .collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        rows.truncate(style.top.unwrap_or(usize::MAX));
        for (name, time) in &rows {
            table.row(&[Cell::Text(name), style.time(*time)])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::symbol::Symbols;

    /// A wait found after more credits than the history keeps is not
    /// followed, and the report says its path is approximate.
    #[test]
    fn a_wait_found_too_late_is_told() {
        let symbols = Symbols::new();
        let (warnings, kept) = Warnings::collecting();
        let mut report = CriticalPath::new(false, symbols.clone(), warnings.clone());
        let (a, b, f) = (
            symbols.intern("a"),
            symbols.intern("b"),
            symbols.intern("f"),
        );
        let mut rec = Record::new(Kind::Enter);
        for i in 0..2 * path::HISTORY as i64 {
            rec.kind = if i % 2 == 0 { Kind::Enter } else { Kind::Leave };
            (rec.time, rec.loc, rec.name) = (Some(i), a, f);
            report.write(&rec).unwrap();
        }
        (rec.kind, rec.time, rec.loc) = (Kind::Enter, Some(1), b);
        report.write(&rec).unwrap();
        report.cross(Jump {
            waiter: a,
            to: b,
            at: 1,
        });
        report.finish().unwrap();
        warnings.finish();
        let said: Vec<String> = kept.lock().unwrap().iter().map(|w| w.to_string()).collect();
        assert!(
            said.iter()
                .any(|w| w.contains("the critical path is approximate: 1 wait(s)")),
            "{said:?}"
        );
    }
}
