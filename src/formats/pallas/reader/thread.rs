//! A thread of the trace as a source of rows: occurrences of its events
//! in order, mapped to rows by [`Mapper`], the frames open at the end
//! closed, the names of regions, blocks and strings interned.

use super::*;

/// The time an occurrence at `raw` ns is emitted at, and `raw` itself:
/// a lossy trace's times that go backwards are raised to the last one
/// (`last`, updated), a lossless trace's are an error.
fn emitted_time(raw: u64, last: &mut i64, lossy: bool) -> std::result::Result<(i64, i64), String> {
    let raw = i64::try_from(raw)
        .map_err(|_| format!("timestamp {raw} is beyond the stream's range (2^63-1 ns)"))?;
    if raw < *last && !lossy {
        return Err(format!(
            "timestamps go backwards ({raw} after {last}) in a lossless trace"
        ));
    }
    *last = raw.max(*last);
    Ok((*last, raw))
}

impl RecordSource for ThreadSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                *rec = r;
                self.mark = self.pending_mark;
                return Ok(true);
            }
            if self.finished {
                return Ok(false);
            }
            match self.events.next_occurrence()? {
                Some(o) => {
                    let number = o.number;
                    if self.map(o, rec)? {
                        self.mark = number;
                        return Ok(true);
                    }
                }
                None => {
                    self.finished = true;
                    self.finish();
                }
            }
        }
    }

    fn mark(&self) -> u64 {
        self.mark
    }

    fn locate(&self, mark: u64) -> Location {
        event_location(&self.events.name, mark)
    }

    /// Occurrences come in time order (a lossy trace's raised to the last
    /// one): nothing to come starts before the last one's time (less how
    /// far a row may begin before its event), a collective begun and not
    /// ended, or a row waiting to go.
    fn horizon(&self) -> Option<i64> {
        if self.finished && self.pending.is_empty() {
            return Some(i64::MAX);
        }
        let next = self.last_time.saturating_sub(self.lead?);
        let waiting = self.pending.iter().filter_map(Record::start).min();
        let begun = self.collective_begin.map(|(emitted, _)| emitted);
        let bound = [waiting, begun].into_iter().flatten().min();
        Some(bound.map_or(next, |b| b.min(next)))
    }

    /// Rows are whole; before a slice's T0 the thread is thinned where it
    /// can be.
    fn agree(&mut self, demand: Demand) -> Supply {
        if let Some(t0) = demand.thin_before {
            self.thin_before(t0, self.paired_before.get().copied());
        }
        Supply::WHOLE_ROWS
    }
}

impl ThreadNames {
    pub(super) fn scope(&self) -> Scope<'_> {
        Scope {
            local: &self.local,
            global: &self.global,
        }
    }

    /// The symbol of `name`; `Err(s)` for a string `s` the trace does not
    /// define.
    pub(super) fn sym(&mut self, name: Name) -> Result<Sym, u32> {
        if let Some(&sym) = self.cache.get(&name) {
            return Ok(sym);
        }
        let scope = self.scope();
        let mut text = String::new();
        match name {
            Name::Region(r) => push_defined(&mut text, scope.region(r), "region", r),
            Name::Record(record) => text.push_str(record_name(record)),
            Name::BlockCat(record) => text.push_str(
                RecordId::from_number(record)
                    .and_then(RecordId::cat)
                    .unwrap_or("THREAD"),
            ),
            Name::Collective(op) => text = collective_name(op),
            Name::Text(s) => text.push_str(scope.string(s).ok_or(s)?),
            Name::Process(lg) => text = process_loc(lg),
            Name::Comm(c) => match self.cats.is_some() {
                true => {
                    let name = scope
                        .global
                        .comms
                        .get(&c)
                        .and_then(|d| scope.string(d.name));
                    text.push_str(name.unwrap_or_default());
                }
                false => text.push_str(itoa::Buffer::new().format(c)),
            },
            Name::RegionCat(r) => {
                let cat = self.cats.as_ref().and_then(|c| c.cats.get(&r));
                text.push_str(cat.map_or("", |c| c.as_str()));
            }
            Name::Other(n) if n == RecordId::BufferFlush.number() => text.push_str("BUFFER_FLUSH"),
            Name::Other(record) => text = format!("record_{record}"),
        }
        let sym = self.syms.intern(&text);
        self.cache.insert(name, sym);
        Ok(sym)
    }

    /// [`ThreadNames::sym`] of a name that always has a text.
    pub(super) fn name(&mut self, name: Name) -> Sym {
        self.sym(name).unwrap_or_default()
    }
}

impl ThreadSource {
    pub(super) fn open(
        params: &Parameters,
        place: ThreadPlace,
        (global, ranks, restore): (Arc<Definitions>, Arc<RankMap>, Option<Arc<Restore>>),
        mut syms: SymCache,
    ) -> Result<Self> {
        let thread_file = place.dir.join("thread.pallas");
        if !thread_file.exists() {
            return Err(Error::Data {
                at: place.listed_at,
                msg: format!(
                    "location {} of group {} has no thread file ({} does not exist)",
                    place.thread,
                    place.process,
                    thread_file.display()
                ),
            });
        }
        let loc_text = place.loc;
        let mut thread = ThreadSource {
            events: ThreadEvents::open(params, &place.dir)?,
            ranks,
            loc: syms.intern(&loc_text),
            loc_text,
            process: syms.intern(&place.process_loc),
            restore: restore.clone(),
            names: ThreadNames {
                syms,
                cache: FastMap::default(),
                cats: restore,
                local: place.defs,
                global,
            },
            frames: Vec::new(),
            cut: Vec::new(),
            pending_mark: 0,
            crossings: Crossings::default(),
            strict: false,
            collective_begin: None,
            last_time: i64::MIN,
            pending: VecDeque::new(),
            mark: 0,
            finished: false,
            key: String::new(),
            value: String::new(),
            lead: Some(0),
            rows_of: Vec::new(),
            paired_before: PairedBefore::default(),
        };
        thread
            .rows_of
            .resize_with(thread.events.file.events.len(), || None);
        if let Some(restore) = &thread.restore {
            let kept = thread.kept_beside_grammar();
            if kept.whole_rows || kept.times {
                thread.lead = restore.lead;
            }
        }
        Ok(thread)
    }

    /// Sets `rec.peer` to the location of `rank` in `comm`; a rank that
    /// does not name process `P<rank>` is kept in the attribute `rank`.
    pub(super) fn set_peer(
        (ranks, restoring): (&RankMap, bool),
        names: &mut ThreadNames,
        rec: &mut Record,
        comm: u32,
        rank: u32,
    ) {
        let process = names.name(Name::Process(rank));
        rec.peer = ranks.location(comm, rank).unwrap_or(process);
        if rec.peer != process && !restoring {
            rec.push_attr("rank", &rank.to_string());
        }
    }

    /// Closes what is still open at the end of the thread, at its last time.
    pub(super) fn finish(&mut self) {
        let t = self.last_time.max(0);
        if let Some((begin, raw)) = self.collective_begin.take() {
            let mut r = Record::new(Kind::Coll);
            r.time = Some(begin);
            if raw != begin {
                r.push_attr("raw_time", &raw.to_string());
            }
            r.end = Some(t);
            r.loc = self.process;
            r.cat = well_known::MPI;
            r.add_flag(flags::UNMATCHED);
            r.push_attr("thread", &self.loc_text);
            self.pending.push_back(r);
        }
        self.pending_mark = 0;
        // A stream's frames stay open as the stream left them.
        while let Some(f) = self.frames.pop().filter(|_| self.restore.is_none()) {
            let mut r = Record::new(Kind::Leave);
            r.time = Some(t);
            r.loc = self.loc;
            r.cat = self.names.name(Name::RegionCat(f));
            r.name = self.names.name(Name::Region(f));
            r.depth = Some(self.frames.len() as u32);
            r.add_flag(flags::SYNTHETIC);
            self.pending.push_back(r);
        }
    }

    /// Maps one occurrence into `rec`; `false` when it yields no row (a
    /// collective's begin, held until its end).
    pub(super) fn map(&mut self, o: Occurrence, rec: &mut Record) -> Result<bool> {
        let event = self.events.file.events[o.slot].as_ref().expect("live slot");
        let file = &self.events.name;
        let (time, raw_time) = emitted_time(o.time, &mut self.last_time, self.events.lossy)
            .map_err(|msg| Error::offset(file, event.offset as u64, msg))?;
        if let Some(row) = &self.rows_of[o.slot] {
            rec.clone_from(row);
            rec.time = Some(time);
        } else if !self.map_record(o.slot, (time, raw_time), rec)? {
            return Ok(false);
        }
        let event = self.events.file.events[o.slot].as_ref().expect("live slot");
        if let Some((start, end)) = o.attributes {
            let scope = Scope {
                local: &self.names.local,
                global: &self.names.global,
            };
            let restore = self.restore.is_some().then_some(&mut self.names.syms);
            push_attributes(
                rec,
                &event.attributes[start..end],
                (scope, restore),
                (&mut self.key, &mut self.value),
                &self.events.name,
                (event.attributes_offset + start) as u64,
            )?;
        }
        if self.events.lossy {
            rec.add_flag(flags::LOSSY);
            if raw_time != time && rec.kind != Kind::Coll {
                rec.push_attr("raw_time", &raw_time.to_string());
            }
        }
        if self.cut.is_empty() {
            return Ok(true);
        }
        // A `LEAVE` that crossed the frames in `cut`: its rows wait.
        let symbols = self.names.syms.symbols().clone();
        nesting::cross(std::mem::take(rec), &self.cut, &symbols, &mut self.pending);
        self.cut.clear();
        self.pending_mark = o.number;
        Ok(false)
    }

    /// Maps the record of event `slot` at `time` (as emitted, as read)
    /// into `rec`; `false` when it yields no row. A row made of the record
    /// alone (not of the frames open or of a collective's begin) is kept,
    /// and copied for the event's next occurrences.
    pub(super) fn map_record(
        &mut self,
        slot: usize,
        (time, raw_time): (i64, i64),
        rec: &mut Record,
    ) -> Result<bool> {
        let event = self.events.file.events[slot].as_ref().expect("live slot");
        rec.clear();
        rec.time = Some(time);
        rec.loc = self.loc;
        let mut m = Mapper {
            p: Payload {
                bytes: &event.payload,
                file: &self.events.name,
                at: event.offset as u64,
                record: event.record,
            },
            names: &mut self.names,
            frames: &mut self.frames,
            cut: &mut self.cut,
            crossings: &self.crossings,
            strict: self.strict,
            ranks: &self.ranks,
            loc: self.loc,
            process: self.process,
            thread: &self.loc_text,
            value: &mut self.value,
            restoring: self.restore.is_some(),
        };
        use RecordId::*;
        let alone = match RecordId::from_number(event.record) {
            Some(Enter) => m.enter(rec).map(|_| false)?,
            Some(Leave) => m.leave(rec).map(|_| false)?,
            Some(id @ (MpiSend | MpiIsend | MpiRecv | MpiIrecv)) => {
                m.half(rec, id).map(|_| true)?
            }
            Some(id @ (MpiIsendComplete | MpiIrecvRequest)) => m.request(rec, id).map(|_| true)?,
            Some(MpiCollectiveBegin) => {
                self.collective_begin = Some((time, raw_time));
                return Ok(false);
            }
            Some(MpiCollectiveEnd) => {
                let begin = self.collective_begin.take().unwrap_or((time, raw_time));
                m.collective(rec, begin, (time, raw_time)).map(|_| false)?
            }
            Some(
                id @ (OmpFork | ThreadFork | ThreadTeamBegin | ThreadBegin | OmpJoin | ThreadJoin
                | ThreadTeamEnd | ThreadEnd),
            ) => m.thread_model(rec, id).map(|_| true)?,
            Some(
                id @ (OmpAcquireLock | OmpReleaseLock | ThreadAcquireLock | ThreadReleaseLock
                | OmpTaskCreate | OmpTaskSwitch | OmpTaskComplete | ThreadTaskCreate
                | ThreadTaskSwitch | ThreadTaskComplete),
            ) => m.block_event(rec, id).map(|_| true)?,
            Some(Generic) => m.generic(rec).map(|_| true)?,
            Some(BufferFlush | Dummy) | None => {
                m.other(rec);
                true
            }
        };
        if alone {
            self.rows_of[slot] = Some(rec.clone());
        }
        Ok(true)
    }
}
