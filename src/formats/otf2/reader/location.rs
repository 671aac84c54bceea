//! One location's events as stream rows: its event file read forward,
//! each event mapped by `records.rs`, the frames still open at its end
//! closed, unknown records counted.

use std::collections::VecDeque;
use std::sync::Arc;

use super::super::anchor::Anchor;
use super::super::events::{EventFile, Step};
use super::{local_defs, Files, Scope};
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::thin::HeldFrames;
use crate::model::record::{flags, Kind, KindSet, Record, Sym};
use crate::pipe::{Demand, ReadOptions, RecordSource, Supply};

/// One location's events as rows.
pub struct LocationSource {
    pub(super) events: EventFile,
    pub(super) scope: Arc<Scope>,
    pub(super) loc: Sym,
    /// The regions open, innermost last.
    pub(super) frames: Vec<u32>,
    /// `--strict`: a `LEAVE` that does not nest is an error.
    pub(super) strict: bool,
    /// Times of collectives begun and not ended, innermost last.
    pub(super) collectives: Vec<i64>,
    /// Times of nonblocking collectives requested, by request.
    pub(super) requests: crate::fasthash::FastMap<u64, i64>,
    pub(super) pending: VecDeque<Record>,
    pub(super) last_time: i64,
    /// File offset + 1 of the event the last row came from (0: the rows
    /// closing the location at its end).
    mark: u64,
    finished: bool,
    unknown: u64,
    warnings: Warnings,
    /// Kinds the consumer drops unread (`Demand::skip`): mapped, checked,
    /// not handed out.
    pub(super) skip: KindSet,
    /// Reused text buffers (attribute keys and values).
    pub(super) key: String,
    pub(super) value: String,
    /// Identifiers of the rows kept whole, interned (made on first use).
    pub(super) row_syms: Option<crate::model::symbol::SymCache>,
    /// Before a slice's T0, frames entered inside another and left before
    /// any other row.
    pub(super) thinning: HeldFrames,
}

/// The location of mark `mark` of event file `file`.
pub fn event_location(file: &str, mark: u64) -> Location {
    match mark {
        0 => Location::File(format!("{file}: at the end of the location")),
        m => Location::Offset {
            file: file.to_string(),
            offset: m - 1,
        },
    }
}

impl LocationSource {
    /// Opens the events of location `loc` of the archive, read through a
    /// window of `window` bytes.
    pub fn open(
        files: &Files,
        (loc, window): (u64, usize),
        anchor: &Anchor,
        scope: Arc<Scope>,
        opts: &ReadOptions,
    ) -> Result<LocationSource> {
        let local = local_defs(files, loc, anchor.chunk_size_defs)?;
        let path = files.events(loc);
        let sizes = (anchor.chunk_size_events, window);
        let events = EventFile::open(&path, path.display().to_string(), sizes, local)?;
        let loc = scope.locations[&loc];
        Ok(LocationSource {
            events,
            scope,
            loc,
            frames: Vec::new(),
            strict: opts.strict,
            collectives: Vec::new(),
            requests: Default::default(),
            pending: VecDeque::new(),
            last_time: i64::MIN,
            mark: 0,
            finished: false,
            unknown: 0,
            warnings: opts.warnings.clone(),
            skip: KindSet::NONE,
            key: String::new(),
            value: String::new(),
            row_syms: None,
            thinning: HeldFrames::default(),
        })
    }

    /// The event file's name.
    pub fn file_name(&self) -> &str {
        &self.events.name
    }

    pub(super) fn error(&self, msg: impl Into<String>) -> Error {
        Error::offset(&self.events.name, self.events.event.at, msg)
    }

    /// The event's time in stream ns, checked to go forward.
    fn event_time(&mut self) -> Result<i64> {
        let ticks = self.events.event.ticks;
        let t = self.scope.time.ns(ticks).ok_or_else(|| {
            self.error(format!(
                "timestamp {ticks} ticks is beyond the stream's range"
            ))
        })?;
        if t < self.last_time {
            return Err(self.error(format!(
                "time goes backwards on this location ({t} ns after {} ns)",
                self.last_time
            )));
        }
        self.last_time = t;
        Ok(t)
    }

    /// Rows closing what is still open at the end: frames get a `leave`
    /// (flag `S`), collectives begun and not ended a `coll` flagged `U`.
    fn finish(&mut self) {
        let t = self.last_time.max(0);
        if self.scope.from_stream {
            // As the stream it was written from left them.
            self.frames.clear();
        }
        while let Some(f) = self.frames.pop() {
            let mut r = Record::new(Kind::Leave);
            r.time = Some(t);
            r.loc = self.loc;
            (r.name, r.cat) = self.region_names(f);
            r.depth = Some(self.frames.len() as u32);
            r.flags.push(flags::SYNTHETIC);
            self.pending.push_back(r);
        }
        while let Some(begin) = self.collectives.pop() {
            let mut r = Record::new(Kind::Coll);
            r.time = Some(begin);
            r.end = Some(t.max(begin));
            r.loc = self.loc;
            r.cat = crate::model::symbol::well_known::MPI;
            r.name = self.scope.records[(super::super::catalogue::id::MPI_COLLECTIVE_BEGIN
                - super::super::catalogue::FIRST_ID)
                as usize];
            r.flags.push(flags::UNMATCHED);
            self.pending.push_back(r);
        }
        if self.unknown > 0 {
            self.warnings.warn(format!(
                "{}: {} records of types this reader does not know were skipped",
                self.events.name, self.unknown
            ));
        }
    }
}

impl RecordSource for LocationSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                if self.skip.contains(r.kind) {
                    continue;
                }
                *rec = r;
                return Ok(true);
            }
            if self.finished {
                return Ok(false);
            }
            match self.events.step()? {
                Step::Event => {
                    rec.clear();
                    rec.time = Some(self.event_time()?);
                    rec.loc = self.loc;
                    self.mark = self.events.event.at + 1;
                    if !self.map(rec)? {
                        continue;
                    }
                    if self.thinning.holds_back(rec) {
                        if self.thinning.holds_rows_alone() {
                            self.pending.extend(self.thinning.release());
                        }
                        continue;
                    }
                    if !self.thinning.held().is_empty() {
                        // The frames held back are open: they go first.
                        self.pending.extend(self.thinning.release());
                        self.pending.push_back(std::mem::take(rec));
                    } else if !self.skip.contains(rec.kind) {
                        return Ok(true);
                    }
                }
                Step::Unknown(_) => self.unknown += 1,
                Step::End => {
                    self.finished = true;
                    self.mark = 0;
                    self.pending.extend(self.thinning.release());
                    self.finish();
                }
            }
        }
    }

    fn mark(&self) -> u64 {
        self.mark
    }

    /// Events come in time order: nothing to come starts before the last
    /// one's time (less how far a row may begin before its event), a
    /// collective begun or requested and not ended, or a row waiting to go.
    fn horizon(&self) -> Option<i64> {
        if self.finished && self.pending.is_empty() {
            return Some(i64::MAX);
        }
        let next = self.last_time.saturating_sub(self.scope.lead?);
        let rows = self.thinning.held().iter().chain(&self.pending);
        let waiting = rows.filter_map(Record::start).min();
        let begun = self.collectives.iter().chain(self.requests.values());
        let bound = waiting.into_iter().chain(begun.copied()).min();
        Some(bound.map_or(next, |b| b.min(next)))
    }

    fn locate(&self, mark: u64) -> Location {
        event_location(&self.events.name, mark)
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        // Rows of skipped kinds are still mapped (their frames, times and
        // references checked), just not handed out. An archive written
        // from a stream may keep rows whole or their times in attributes:
        // its frames are not held back.
        self.skip = demand.skip;
        let t0 = demand.thin_before.filter(|_| !self.scope.from_stream);
        self.thinning.thin_before(t0);
        Supply::WHOLE_ROWS
    }
}
