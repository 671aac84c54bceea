//! A data component read as a source of rows: its records decoded in
//! order (functions entered and left, scopes, messages, counters,
//! collectives, the records of any other layout), each row's place in
//! the stream, and the symbols of the declarations it uses.

use super::*;

/// The symbol of declaration `id` in `memo`, made by `text` the first time.
fn memo_sym<'t>(
    memo: &mut FastMap<u32, Sym>,
    cache: &mut SymCache,
    id: u32,
    text: impl FnOnce() -> Result<Cow<'t, str>>,
) -> Result<Sym> {
    if let Some(&sym) = memo.get(&id) {
        return Ok(sym);
    }
    let sym = cache.intern(&text()?);
    memo.insert(id, sym);
    Ok(sym)
}

impl PartSyms {
    fn new(cache: SymCache) -> PartSyms {
        PartSyms {
            cache,
            willies: FastMap::default(),
            strings: FastMap::default(),
            classes: FastMap::default(),
            functions: FastMap::default(),
            comms: FastMap::default(),
            ops: FastMap::default(),
        }
    }

    fn willy(&mut self, trace: &Trace, feed: &Feed, at: u64, raw: u32) -> Result<Sym> {
        memo_sym(&mut self.willies, &mut self.cache, raw, || {
            trace.willy_name(feed, at, raw)
        })
    }

    fn string(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.strings, &mut self.cache, id, || {
            trace.string(feed, at, id).map(Cow::Borrowed)
        })
    }

    fn class(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.classes, &mut self.cache, id, || {
            trace.class(feed, at, id).map(Cow::Borrowed)
        })
    }

    fn comm(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.comms, &mut self.cache, id, || {
            trace.comm(feed, at, id).map(|c| Cow::Borrowed(c.0))
        })
    }

    fn op(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.ops, &mut self.cache, id, || {
            trace.op(feed, at, id).map(Cow::Borrowed)
        })
    }

    /// A function's name and class.
    fn function(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<(Sym, Sym)> {
        if let Some(&syms) = self.functions.get(&id) {
            return Ok(syms);
        }
        let (name, class) = trace.function(feed, at, id)?;
        let syms = (self.cache.intern(name), self.cache.intern(class));
        self.functions.insert(id, syms);
        Ok(syms)
    }
}

impl Members {
    pub(super) fn new(first: &[u64], last: &[u64], stride: &[u64]) -> Members {
        let mut members = Members::default();
        for ((&a, &b), &s) in first.iter().zip(last).zip(stride) {
            if a > b {
                continue;
            }
            let step = (s as u32 as i32).max(1) as u64;
            members.runs.push((a, step, members.len));
            members.len = members.len.saturating_add((b - a) / step + 1);
        }
        members
    }

    /// The number of members.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The willy of rank `rank` (below [`Members::len`]).
    pub(super) fn get(&self, rank: u64) -> u32 {
        let run = self.runs.partition_point(|r| r.2 <= rank) - 1;
        let (first, step, before) = self.runs[run];
        (first + (rank - before) * step) as u32
    }
}

/// The next record id of a data component (definitions are not allowed here).
pub(super) fn next_data_id(feed: &mut Feed) -> Result<Option<(u64, u8)>> {
    if feed.at_end() {
        return Ok(None);
    }
    let at = feed.offset();
    let id = feed.scalar(Scalar::U1, "record id")? as u8;
    if id >= FIRST_RESERVED {
        return Err(feed.error_at(at, format!("record id {id:#04x} is reserved here")));
    }
    Ok(Some((at, id)))
}

impl RecordSource for Part {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        let more = match self.queue {
            Some(_) => self.next_queued(rec)?,
            None => self.next_thinned(rec)?,
        };
        if !more {
            return Ok(false);
        }
        if self.queue.is_some() {
            self.place = Some(self.place_of(rec));
            self.mark = self.at;
        }
        if !rec.kind.is_structural() {
            let completion = rec.completion().unwrap_or(i64::MIN);
            if completion < self.last_completion {
                return Err(self.feed.error_at(
                    self.mark,
                    "records out of completion order: tracepipe reads data files whose rows are in time order (docs/stf.md)",
                ));
            }
            self.last_completion = completion;
        }
        Ok(true)
    }

    fn mark(&self) -> u64 {
        self.mark
    }

    fn order(&self) -> Option<(i64, u64)> {
        self.place.filter(|_| self.queue.is_none())
    }

    /// STF's messages, scopes and collectives are records with extents,
    /// given at their completion, that begin at any earlier time.
    fn horizon(&self) -> Option<i64> {
        None
    }

    fn locate(&self, mark: u64) -> Location {
        Location::Offset {
            file: self.feed.name().to_string(),
            offset: mark,
        }
    }

    fn extra_columns(&self) -> &[String] {
        &[]
    }

    fn raw_line(&self) -> Option<&[u8]> {
        None
    }

    /// The collectives file puts its rows in time order in a queue: it is
    /// not thinned.
    fn agree(&mut self, demand: Demand) -> Supply {
        let t0 = demand.thin_before.filter(|_| self.queue.is_none());
        self.thinning.thin_before(t0);
        Supply::WHOLE_ROWS
    }
}

impl Part {
    pub(super) fn new(
        mut feed: Feed,
        kind: Component,
        trace: Arc<Trace>,
        anchors: Vec<(u64, u64)>,
        cache: SymCache,
    ) -> Result<Part> {
        check_header(&mut feed, kind)?;
        Ok(Part {
            anchors: anchors.into_iter().peekable(),
            at: feed.offset(),
            feed,
            trace,
            syms: PartSyms::new(cache),
            clock: 0,
            stacks: FastMap::default(),
            values: Values::default(),
            pending: Vec::new(),
            last_completion: i64::MIN,
            scopes: FastMap::default(),
            instances: 0,
            queue: (kind == Component::Collectives).then(|| RowQueue::new(COLLECTIVE_WINDOW)),
            scratch: Record::default(),
            done: false,
            place: None,
            placed: None,
            given: None,
            thinning: Snapshot::default(),
            reading: None,
            mark: 0,
        })
    }

    /// Checks the anchors up to the next record.
    pub(super) fn check_anchors(&mut self) -> Result<()> {
        let at = self.feed.offset();
        while let Some(&(time, offset)) = self.anchors.peek() {
            // Anchors count from the start of their component.
            let offset = offset.saturating_add(self.feed.start());
            if offset > at && !self.feed.at_end() {
                return Ok(());
            }
            if offset != at {
                return Err(self.feed.error_at(
                    offset,
                    "an anchor points here, which is not the start of a record",
                ));
            }
            if time != self.clock {
                return Err(self.feed.error_at(
                    offset,
                    format!(
                        "the anchor here says time {time}, the records say {}",
                        self.clock
                    ),
                ));
            }
            self.anchors.next();
        }
        Ok(())
    }

    /// Moves the clock by a record's `time` field; false for the records
    /// that only move it (`add_time`, `sub_time`).
    pub(super) fn advance(&mut self, layout: &Layout, class: &str) -> Result<bool> {
        let Some(t) = layout.time else {
            return Ok(true);
        };
        let delta = self.values.slots[t];
        let moved = if class == "sub_time" {
            self.clock.checked_sub(delta)
        } else {
            self.clock.checked_add(delta)
        };
        self.clock = moved.ok_or_else(|| {
            self.feed.error_at(
                self.at,
                format!("time moves by {delta} ticks past the range of 64 bits"),
            )
        })?;
        Ok(!matches!(class, "add_time" | "sub_time"))
    }

    /// Reads records until one makes a row (in `rec`); false at the end.
    pub(super) fn read(&mut self, rec: &mut Record) -> Result<bool> {
        let trace = self.trace.clone();
        loop {
            self.check_anchors()?;
            let Some((at, id)) = next_data_id(&mut self.feed)? else {
                return match self.scopes.values().map(|v| v.2).min() {
                    Some(at) => Err(self
                        .feed
                        .error_at(at, "enter_scope never left: the file ends first")),
                    None => Ok(false),
                };
            };
            self.at = at;
            let layout = trace.layout(&self.feed, at, id)?;
            self.feed.decode(layout, &mut self.values)?;
            // A class means what it says only in a layout of the catalogue.
            let class = match trace.known[id as usize] {
                true => layout.class.as_str(),
                false => "",
            };
            if !self.advance(layout, class)? {
                continue;
            }
            if class == "tracepipe_order" {
                let s = &self.values.slots;
                self.given = Some((s[0] as i64, s[1]));
                continue;
            }
            let time = trace.ns(&self.feed, at, self.clock as i128)?;
            match class {
                "enter_scope" => {
                    self.enter_scope(time)?;
                    continue;
                }
                "leave_scope" => self.leave_scope(rec, time)?,
                "enter_function" => self.enter(rec, time)?,
                "leave_function" => self.leave(rec, time)?,
                "one_to_one_communication" => self.message(layout, rec, time)?,
                "counter_value" => self.counters(rec, time)?,
                "collop_raw_event" => self.raw_collective(rec, time)?,
                c if COMBINED.contains(&c) => self.collective(layout, rec)?,
                "tracepipe_row" => self.row(rec, time)?,
                _ => {
                    let (feed, values) = (&self.feed, &self.values);
                    trace.generic_row(feed, at, layout, values, time, rec, &mut self.syms.cache)?
                }
            }
            return Ok(true);
        }
    }

    /// `enter_scope`: the scope instance opens; its row comes when it closes.
    pub(super) fn enter_scope(&mut self, time: i64) -> Result<()> {
        let s = &self.values.slots;
        let key = (s[1] as u32, s[2] as u32, s[3] as u32);
        let scl = s.get(4).map(|&v| v as u32);
        if self.scopes.insert(key, (time, scl, self.at)).is_some() {
            return Err(self.feed.error_at(
                self.at,
                format!(
                    "scope {} instance {} entered again before it was left",
                    key.1, key.2
                ),
            ));
        }
        Ok(())
    }

    /// `leave_scope`: a `state` from the instance's enter to here (scopes
    /// may overlap, which one call stack cannot hold).
    pub(super) fn leave_scope(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, s) = (&self.trace, &self.feed, self.at, &self.values.slots);
        let syms = &mut self.syms;
        let key = (s[1] as u32, s[2] as u32, s[3] as u32);
        let Some((start, enter_scl, _)) = self.scopes.remove(&key) else {
            return Err(feed.error_at(
                at,
                format!(
                    "leave_scope of scope {} instance {}, which is not open",
                    key.1, key.2
                ),
            ));
        };
        let (name, class, scl1, scl2) = *declared(&trace.scopes, feed, at, "scope", key.1)?;
        rec.clear();
        rec.kind = Kind::State;
        rec.time = Some(start);
        rec.end = Some(time);
        rec.loc = syms.willy(trace, feed, at, key.0)?;
        rec.name = syms.string(trace, feed, at, name)?;
        rec.cat = syms.class(trace, feed, at, class)?;
        rec.push_attr("seqnr", itoa::Buffer::new().format(key.2));
        rec.push_attr("scl1", itoa::Buffer::new().format(scl1));
        rec.push_attr("scl2", itoa::Buffer::new().format(scl2));
        if let Some(scl) = enter_scl {
            rec.push_attr("enter_scl", itoa::Buffer::new().format(scl));
        }
        if let Some(&scl) = s.get(4) {
            rec.push_attr("leave_scl", itoa::Buffer::new().format(scl));
        }
        Ok(())
    }

    pub(super) fn enter(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (w, function) = (self.values.slots[1] as u32, self.values.slots[2] as u32);
        let (trace, feed, at) = (&self.trace, &self.feed, self.at);
        let (name, cat) = self.syms.function(trace, feed, at, function)?;
        let stack = self.stacks.entry(w).or_default();
        rec.clear();
        rec.kind = Kind::Enter;
        rec.time = Some(time);
        rec.depth = Some(stack.len() as u32);
        stack.push(function);
        (rec.name, rec.cat) = (name, cat);
        rec.loc = self.syms.willy(trace, feed, at, w)?;
        if self.values.slots.len() > 3 {
            rec.push_attr("scl", itoa::Buffer::new().format(self.values.slots[3]));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let w = self.values.slots[1] as u32;
        let (trace, feed, at) = (&self.trace, &self.feed, self.at);
        rec.clear();
        rec.loc = self.syms.willy(trace, feed, at, w)?;
        rec.time = Some(time);
        let stack = self.stacks.entry(w).or_default();
        let Some(function) = stack.pop() else {
            return self.leave_with_none_open(rec, w);
        };
        rec.kind = Kind::Leave;
        rec.depth = Some(stack.len() as u32);
        (rec.name, rec.cat) = self.syms.function(trace, feed, at, function)?;
        if self.values.slots.len() > 2 {
            rec.push_attr("scl", itoa::Buffer::new().format(self.values.slots[2]));
        }
        Ok(())
    }

    /// A `leave_function` on willy `w` with no function open: an `event`
    /// (`model::nesting`), counted for the reader's one warning; an error
    /// with `--strict`.
    fn leave_with_none_open(&mut self, rec: &mut Record, w: u32) -> Result<()> {
        let (trace, feed, at) = (&self.trace, &self.feed, self.at);
        let loc = trace.willy_name(feed, at, w)?;
        if trace.strict {
            let msg = format!("leave_function on `{loc}`, which has no function open (--strict)");
            return Err(feed.error_at(at, msg));
        }
        rec.kind = Kind::Event;
        rec.name = self.syms.cache.intern("leave_function");
        rec.push_attr("record", "leave_function");
        if self.values.slots.len() > 2 {
            rec.push_attr("scl", itoa::Buffer::new().format(self.values.slots[2]));
        }
        let time = rec.time.unwrap_or_default();
        let located = || Location::Offset {
            file: feed.name().to_string(),
            offset: at,
        };
        trace.crossings.note(false, time, &loc, located);
        Ok(())
    }

    pub(super) fn message(&mut self, layout: &Layout, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, s) = (&self.trace, &self.feed, self.at, &self.values.slots);
        let syms = &mut self.syms;
        let receive = s[2] as i64;
        let (sender, receiver) = (s[1] as u32, s[3] as u32);
        rec.clear();
        rec.time = Some(time);
        let (loc, peer) = match receive {
            RECEIVER_UNKNOWN => (rec.kind = Kind::Send, (sender, receiver)).1,
            SENDER_UNKNOWN => (rec.kind = Kind::Recv, (receiver, sender)).1,
            _ => {
                rec.kind = Kind::Msg;
                let end = (self.clock as i128) + receive as i128;
                rec.end = Some(trace.ns(feed, at, end)?);
                if receive < 0 {
                    rec.flags.push('R');
                }
                (sender, receiver)
            }
        };
        if rec.kind != Kind::Msg {
            // A half whose partner's time is unknown: unmatched.
            rec.flags.push('U');
        }
        rec.loc = syms.willy(trace, feed, at, loc)?;
        rec.peer = syms.willy(trace, feed, at, peer)?;
        rec.comm = syms.comm(trace, feed, at, s[4] as u32)?;
        rec.size = Some(s[5]);
        rec.tag = Some(s[6] as i64);
        let n = s.len();
        for (field, value) in layout.fields[7..n - 2].iter().zip(&s[7..n - 2]) {
            rec.push_attr(&field.name, itoa::Buffer::new().format(*value));
        }
        for i in [n - 2, n - 1] {
            if s[i] as u32 != NONE {
                let (name, _) = trace.function(feed, at, s[i] as u32)?;
                rec.push_attr(&layout.fields[i].name, name);
            }
        }
        Ok(())
    }

    pub(super) fn counters(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, v) = (&self.trace, &self.feed, self.at, &self.values);
        let syms = &mut self.syms;
        let mut rows = Vec::new();
        for (&bits, &counter) in v.array(3).iter().zip(v.array(4)) {
            let (name, ty, class, unit) =
                declared(&trace.counters, feed, at, "counter", counter as u32)?;
            let mut row = Record::new(Kind::Counter);
            row.time = Some(time);
            row.loc = syms.willy(trace, feed, at, v.slots[1] as u32)?;
            row.name = syms.string(trace, feed, at, *name)?;
            row.cat = syms.class(trace, feed, at, *class)?;
            match ty {
                0 => row.value.push_str(itoa::Buffer::new().format(bits as i64)),
                1 => {
                    let _ = write!(row.value, "{}", f64::from_bits(bits));
                }
                _ => row.value.push_str(itoa::Buffer::new().format(bits)),
            }
            if !unit.is_empty() {
                row.push_attr("unit", unit);
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(feed.error_at(at, "counter_value with no values"));
        }
        self.hand_out(rows, rec);
        Ok(())
    }

    /// Returns the first of `rows` in `rec` and keeps the others pending.
    pub(super) fn hand_out(&mut self, mut rows: Vec<Record>, rec: &mut Record) {
        rows.reverse();
        *rec = rows.pop().expect("one row at least");
        self.pending = rows;
    }

    /// `collop_raw_event`: one participant's part, a `coll` row.
    pub(super) fn raw_collective(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, s) = (&self.trace, &self.feed, self.at, &self.values.slots);
        let syms = &mut self.syms;
        rec.clear();
        rec.kind = Kind::Coll;
        rec.time = Some(time);
        let end = self.clock as i128 + signed(Scalar::I8, s[9]) as i128;
        rec.end = Some(trace.ns(feed, at, end)?);
        rec.loc = syms.willy(trace, feed, at, s[1] as u32)?;
        rec.name = syms.op(trace, feed, at, s[3] as u32)?;
        rec.comm = syms.comm(trace, feed, at, s[4] as u32)?;
        if s[5] != 0 {
            rec.id.push_str(itoa::Buffer::new().format(s[5]));
        }
        if s[6] as u32 != NONE {
            rec.peer = syms.willy(trace, feed, at, s[6] as u32)?;
        }
        rec.size = Some(s[7]);
        rec.value.push_str(itoa::Buffer::new().format(s[8]));
        rec.push_attr("kind", itoa::Buffer::new().format(s[2]));
        rec.push_attr("scl", itoa::Buffer::new().format(s[10]));
        Ok(())
    }

    /// A collective in one record (all to all, one to all...): a `coll` row
    /// per member of its communicator, `slot` and `of` telling the writer
    /// how to put the record together again.
    pub(super) fn collective(&mut self, layout: &Layout, rec: &mut Record) -> Result<()> {
        let (trace, feed, at, v) = (&self.trace, &self.feed, self.at, &self.values);
        let syms = &mut self.syms;
        let field = |name: &str| layout.field(name);
        let scalar = |name: &str| field(name).map(|i| v.slots[i]);
        let array = |name: &str| field(name).map(|i| v.array(i));
        let (comm, members) = trace.comm(
            feed,
            at,
            scalar("communicator").unwrap_or(NONE as u64) as u32,
        )?;
        let op = trace.op(feed, at, scalar("type").unwrap_or(0) as u32)?;
        let starts = array("start_time").unwrap_or(&[]);
        let n = starts.len();
        if members.len() < n as u64 {
            return Err(feed.error_at(
                at,
                format!(
                    "{} has {n} participants, communicator `{comm}` only {} members",
                    layout.class,
                    members.len()
                ),
            ));
        }
        let root = ["receiver", "sender"]
            .iter()
            .find_map(|r| scalar(r).map(|w| w as u32));
        let root_bytes = [("recvd", "recvd"), ("sent", "sent")]
            .iter()
            .find_map(|(f, k)| scalar(f).map(|b| (*k, b)));
        let (op_sym, comm_sym) = (syms.cache.intern(op), syms.cache.intern(comm));
        let root_sym = match root {
            Some(r) => Some(syms.willy(trace, feed, at, r)?),
            None => None,
        };
        let mut rows = Vec::with_capacity(n);
        for (i, &start) in starts.iter().enumerate() {
            let mut row = Record::new(Kind::Coll);
            let known = start != u64::MAX;
            let begin = self.clock as i128 + if known { start as i128 } else { 0 };
            row.time = Some(trace.ns(feed, at, begin)?);
            let delta = array("delta").map_or(0, |d| d[i]);
            row.end = Some(trace.ns(feed, at, begin + delta as i128)?);
            row.loc = syms.willy(trace, feed, at, members.get(i as u64))?;
            row.name = op_sym;
            row.comm = comm_sym;
            if let Some(r) = root_sym {
                row.peer = r;
            }
            row.size = array("send_size").map(|a| a[i]);
            if let Some(a) = array("receive_size") {
                row.value.push_str(itoa::Buffer::new().format(a[i]));
            }
            row.id.push_str(itoa::Buffer::new().format(self.instances));
            row.push_attr("slot", itoa::Buffer::new().format(i));
            row.push_attr("of", itoa::Buffer::new().format(n));
            if let Some((k, b)) = root_bytes {
                row.push_attr(k, itoa::Buffer::new().format(b));
            }
            if let Some(scl) = array("scl") {
                row.push_attr("scl", itoa::Buffer::new().format(scl[i]));
            }
            if !known {
                row.push_attr("start", "unknown");
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(feed.error_at(at, format!("{} with no participants", layout.class)));
        }
        self.instances += 1;
        self.hand_out(rows, rec);
        Ok(())
    }

    pub(super) fn row(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (v, feed, at) = (&self.values, &self.feed, self.at);
        let kind = *Kind::ALL
            .get(v.slots[1] as usize)
            .ok_or_else(|| feed.error_at(at, format!("unknown row kind {}", v.slots[1])))?;
        let has = |bit: u64| v.slots[2] & bit != 0;
        rec.clear();
        rec.kind = kind;
        rec.time = has(present::TIME).then_some(time);
        let syms = &mut self.syms;
        if has(present::LOC) {
            rec.loc = syms.willy(&self.trace, feed, at, v.slots[3] as u32)?;
        }
        rec.end = has(present::END).then_some(v.slots[4] as i64);
        rec.depth = has(present::DEPTH).then_some(v.slots[5] as u32);
        rec.tag = has(present::TAG).then_some(v.slots[6] as i64);
        rec.size = has(present::SIZE).then_some(v.slots[7]);
        let names = [&mut rec.cat, &mut rec.name, &mut rec.peer, &mut rec.comm];
        for (n, sym) in names.into_iter().enumerate() {
            *sym = syms.string(&self.trace, feed, at, v.slots[8 + n] as u32)?;
        }
        let texts = [&mut rec.id, &mut rec.value, &mut rec.flags, &mut rec.attrs];
        for (n, text) in texts.into_iter().enumerate() {
            text.push_str(&String::from_utf8_lossy(v.text(13 + 2 * n)));
        }
        rec.validate()
            .and_then(|()| rec.check_half().map_err(str::to_string))
            .map_err(|e| feed.error_at(at, e))
    }

    /// Where `rec`, the row read last, stood in the stream written: as a
    /// `tracepipe_order` record says, else right after the row read
    /// before it.
    pub(super) fn place_of(&mut self, rec: &Record) -> StreamPlace {
        let key = match (self.given.map(|g| g.0), rec.completion()) {
            (Some(k), _) => k,
            (None, Some(c)) if !rec.kind.is_structural() => c,
            _ => self.placed.map_or(i64::MIN, |p| p.0),
        };
        let rank = match (self.given.take(), self.placed) {
            (Some((_, r)), _) => r,
            (None, Some((k, r))) if k == key => r + 1,
            _ => 0,
        };
        self.placed = Some((key, rank));
        (key, rank)
    }

    /// The next row in file order.
    pub(super) fn next_in_file(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(row) = self.pending.pop() {
            *rec = row;
            return Ok(true);
        }
        self.read(rec)
    }

    /// The next row in file order but for what a slice does not need
    /// before its T0 ([`Snapshot`]). Each row is placed as it is read, so
    /// the rows left out leave the others' places as they were.
    pub(super) fn next_thinned(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some((mut row, (place, mark))) = self.thinning.next_out() {
                std::mem::swap(rec, &mut row);
                self.thinning.recycle(row);
                (self.place, self.mark) = (Some(place), mark);
                return Ok(true);
            }
            if !self.thinning.is_active() {
                if !self.next_in_file(rec)? {
                    return Ok(false);
                }
                (self.place, self.mark) = (Some(self.place_of(rec)), self.at);
                return Ok(true);
            }
            let mut row = self.reading.take().unwrap_or_default();
            if !self.next_in_file(&mut row)? {
                self.reading = Some(row);
                self.thinning.finish();
                continue;
            }
            let place = self.place_of(&row);
            let taken = self.thinning.takes(&mut row, (place, self.at));
            if !taken {
                std::mem::swap(rec, &mut row);
                (self.place, self.mark) = (Some(place), self.at);
            }
            self.reading = Some(row);
            if !taken {
                return Ok(true);
            }
        }
    }

    /// The next row of the collectives file, through the queue.
    pub(super) fn next_queued(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            let queue = self.queue.as_mut().expect("a queued part");
            if queue.is_full() || (self.done && !queue.is_empty()) {
                return Ok(queue.pop_into(rec));
            }
            if self.done {
                return Ok(false);
            }
            let mut row = std::mem::take(&mut self.scratch);
            if !self.next_in_file(&mut row)? {
                self.done = true;
                continue;
            }
            let queue = self.queue.as_mut().expect("a queued part");
            let slot = queue.slot();
            std::mem::swap(queue.get(slot), &mut row);
            self.scratch = row;
            if queue.commit(slot, i64::MIN).is_err() {
                return Err(self.feed.error_at(
                    self.at,
                    format!("a collective ends more than {COLLECTIVE_WINDOW} rows before rows already read"),
                ));
            }
        }
    }
}
