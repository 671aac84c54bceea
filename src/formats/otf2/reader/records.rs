//! Each OTF2 event record as rows (docs/formats.md, "OTF2"): regions as
//! frames (those that do not nest kept as `model::nesting` says), MPI
//! halves and requests, collectives, metrics as counters, parameters, and
//! every other record, the thread model's forks, joins and teams among
//! them, as an `event` carrying its fields; attribute lists go to the
//! row's `attrs`.

use std::fmt::Write as _;

use super::super::catalogue::{id, spec_of, F, N, R};
use super::super::events::AttrValue;
use super::super::{COLUMN_ATTR, PARAMETER_CAT, RMA_WIN_COMM, ROW_PARAMETER};
use super::location::LocationSource;
use super::scope::MetricScope;
use crate::error::{Location, Result};
use crate::formats::stream::jsonl;
use crate::model::hpc::{collective_name, paradigm_name};
use crate::model::nesting::{self, Closing};
use crate::model::record::ColumnSet;
use crate::model::record::{flags, Kind, Record, Sym, ATTR_POSTS, MAX_ROW_TEXT};
use crate::model::symbol::{well_known, SymCache};

impl LocationSource {
    fn value(&self, i: usize) -> u64 {
        self.events.event.values.get(i).copied().unwrap_or(0)
    }

    /// Maps the event just read into `rec` (time and loc set); false when
    /// it makes no row of its own (a collective's begin).
    pub(super) fn map(&mut self, rec: &mut Record) -> Result<bool> {
        let event_id = self.events.event.id;
        match event_id {
            id::ENTER => self.enter(rec),
            id::LEAVE => {
                if !self.leave(rec)? {
                    return Ok(false);
                }
            }
            id::MPI_SEND | id::MPI_ISEND | id::MPI_RECV | id::MPI_IRECV => {
                self.half(rec, event_id)?
            }
            id::MPI_ISEND_COMPLETE
            | id::MPI_IRECV_REQUEST
            | id::MPI_REQUEST_TEST
            | id::MPI_REQUEST_CANCELLED
            | id::NON_BLOCKING_COLLECTIVE_REQUEST => self.request(rec, event_id),
            id::MPI_COLLECTIVE_BEGIN => {
                self.collectives.push(rec.time.unwrap_or(0));
                return Ok(false);
            }
            id::MPI_COLLECTIVE_END | id::NON_BLOCKING_COLLECTIVE_COMPLETE => {
                self.collective(rec, event_id)
            }
            id::METRIC => self.metric(rec),
            id::PARAMETER_STRING..=id::PARAMETER_UNSIGNED_INT => {
                self.parameter(rec, event_id)?;
                if self.scope.row_parameter == Some(self.value(0) as u32) {
                    return Ok(true);
                }
            }
            _ => self.generic(rec, event_id)?,
        }
        if !self.skip.contains(rec.kind) {
            self.push_attributes(rec)?;
        }
        Ok(true)
    }

    fn record_name(&self, event_id: u8) -> Sym {
        self.scope.records[(event_id - super::super::catalogue::FIRST_ID) as usize]
    }

    fn enter(&mut self, rec: &mut Record) {
        let region = self.value(0) as u32;
        rec.kind = Kind::Enter;
        (rec.name, rec.cat) = self.region_names(region);
        rec.depth = Some(self.frames.len() as u32);
        self.frames.push(region);
    }

    /// A `LEAVE`: it closes the innermost region, or one below it (the
    /// regions above are cut), or names none open (it closes the innermost;
    /// `model::nesting`); false when its rows wait in `pending`.
    fn leave(&mut self, rec: &mut Record) -> Result<bool> {
        let region = self.value(0) as u32;
        rec.kind = Kind::Leave;
        (rec.name, rec.cat) = self.region_names(region);
        let closing = nesting::closing(&self.frames, &region);
        if closing != Closing::Innermost {
            self.not_nested(rec, closing == Closing::NotOpen)?;
        }
        match closing {
            Closing::Innermost => {
                self.frames.pop();
                rec.depth = Some(self.frames.len() as u32);
                Ok(true)
            }
            Closing::Crosses(i) => {
                let above: Vec<(Sym, Sym)> = self.frames[i + 1..]
                    .iter()
                    .map(|&r| self.region_names(r))
                    .collect();
                self.frames.remove(i);
                rec.depth = Some(i as u32);
                self.push_attributes(rec)?;
                // Frames held back before a slice's T0 go on first: the
                // rows cut here close and reopen them.
                self.pending.extend(self.thinning.release());
                let symbols = self.scope.symbols.clone();
                nesting::cross(std::mem::take(rec), &above, &symbols, &mut self.pending);
                Ok(false)
            }
            Closing::NotOpen => {
                let Some(open) = self.frames.pop() else {
                    rec.kind = Kind::Event;
                    rec.push_attr("record", "LEAVE");
                    return Ok(true);
                };
                let named = self.scope.symbols.text(rec.name);
                rec.push_attr(nesting::NAMED_ATTR, named);
                (rec.name, rec.cat) = self.region_names(open);
                rec.depth = Some(self.frames.len() as u32);
                Ok(true)
            }
        }
    }

    /// Counts a `LEAVE` that does not close the innermost region, or
    /// refuses it (`--strict`).
    fn not_nested(&mut self, rec: &Record, not_open: bool) -> Result<()> {
        let name = self.scope.symbols.text(rec.name);
        if self.strict {
            let open = match not_open {
                false => self.frames.last().map(|&r| self.region_names(r).0),
                true => None,
            };
            let open = open.map(|o| self.scope.symbols.text(o));
            let msg = nesting::strict_refusal("LEAVE", name, open);
            return Err(self.error(msg));
        }
        let (file, at) = (&self.events.name, self.events.event.at);
        let loc = self.scope.symbols.text(self.loc);
        // The location is made only for the earliest one.
        self.scope
            .crossings
            .note(!not_open, rec.time.unwrap_or_default(), loc, || {
                Location::Offset {
                    file: file.clone(),
                    offset: at,
                }
            });
        Ok(())
    }

    /// The name and category of a region's rows.
    pub(super) fn region_names(&self, r: u32) -> (Sym, Sym) {
        match self.scope.regions.get(&r) {
            Some(&names) => names,
            None => (
                self.scope.symbols.intern(&format!("region {r}")),
                Sym::default(),
            ),
        }
    }

    /// The location of `rank` in `comm`: a member of its group, or on
    /// `MPI_COMM_SELF` the recording location.
    fn rank_loc(&self, comm: u32, rank: u32) -> Option<Sym> {
        let c = self.scope.comms.get(&comm)?;
        match c.is_self {
            true => (rank == 0).then_some(self.loc),
            false => c.ranks.get(rank as usize).copied().flatten(),
        }
    }

    fn set_comm(&mut self, rec: &mut Record, comm: u32) {
        rec.comm = match self.scope.comms.get(&comm) {
            Some(c) => c.sym,
            None => self.scope.symbols.intern(itoa::Buffer::new().format(comm)),
        };
    }

    /// A point-to-point half: the peer is the location of the rank the
    /// record names in its communicator; a rank it does not define is an
    /// error at the record (the half could never be paired).
    fn half(&mut self, rec: &mut Record, event_id: u8) -> Result<()> {
        rec.kind = match event_id {
            id::MPI_SEND | id::MPI_ISEND => Kind::Send,
            _ => Kind::Recv,
        };
        rec.cat = well_known::MPI;
        rec.name = self.record_name(event_id);
        let (rank, comm) = (self.value(0) as u32, self.value(1) as u32);
        self.set_comm(rec, comm);
        rec.peer = self.rank_loc(comm, rank).ok_or_else(|| {
            let comm = self.scope.symbols.text(rec.comm);
            self.error(format!(
                "{} names rank {rank} of communicator `{comm}`, which its definitions do not give a location",
                self.scope.symbols.text(rec.name)
            ))
        })?;
        rec.tag = Some(self.value(2) as i64);
        rec.size = Some(self.value(3));
        if matches!(event_id, id::MPI_ISEND | id::MPI_IRECV) {
            rec.id.push_str(itoa::Buffer::new().format(self.value(4)));
        }
        Ok(())
    }

    /// A request's progress or a receive posted: an event with the request.
    fn request(&mut self, rec: &mut Record, event_id: u8) {
        rec.kind = Kind::Event;
        rec.cat = well_known::MPI;
        rec.name = self.record_name(event_id);
        rec.id.push_str(itoa::Buffer::new().format(self.value(0)));
        match event_id {
            // Receives complete later, matched in posting order.
            id::MPI_IRECV_REQUEST => rec.push_attr(ATTR_POSTS, "recv"),
            id::NON_BLOCKING_COLLECTIVE_REQUEST => {
                self.requests.insert(self.value(0), rec.time.unwrap_or(0));
            }
            _ => {}
        }
    }

    /// A collective, from its begin (or its request) to this end.
    fn collective(&mut self, rec: &mut Record, event_id: u8) {
        let end = rec.time.unwrap_or(0);
        let begin = match event_id {
            id::MPI_COLLECTIVE_END => self.collectives.pop(),
            _ => self.requests.remove(&self.value(5)),
        };
        rec.kind = Kind::Coll;
        rec.time = Some(begin.unwrap_or(end));
        rec.end = Some(end);
        rec.cat = well_known::MPI;
        let op = self.value(0) as usize;
        rec.name = match self.scope.collectives.get(op) {
            Some(&s) => s,
            None => self.scope.symbols.intern(&collective_name(op as u32)),
        };
        let comm = self.value(1) as u32;
        self.set_comm(rec, comm);
        let root = self.value(2) as u32;
        if root != u32::MAX {
            match self.rank_loc(comm, root) {
                Some(peer) => rec.peer = peer,
                None => rec.push_attr("root", itoa::Buffer::new().format(root)),
            }
        }
        rec.size = Some(self.value(3));
        let _ = write!(rec.value, "{}", self.value(4));
        if begin.is_none() {
            rec.flags.push(flags::UNMATCHED);
        }
        if event_id == id::NON_BLOCKING_COLLECTIVE_COMPLETE {
            rec.push_attr("request", itoa::Buffer::new().format(self.value(5)));
        }
    }

    /// One `counter` row per value of the metric; the first is `rec`, the
    /// others follow it.
    fn metric(&mut self, rec: &mut Record) {
        let scope = self.scope.clone();
        let metric = self.value(0) as u32;
        let n = self.value(1) as usize;
        let m = scope.metrics.get(&metric);
        if n == 0 {
            // A metric of no values: an event, so the record is not lost.
            rec.kind = Kind::Event;
            rec.name = self.record_name(id::METRIC);
            return;
        }
        self.counter(rec, m, metric, 0);
        for i in 1..n {
            let mut row = Record::new(Kind::Counter);
            row.time = rec.time;
            self.counter(&mut row, m, metric, i);
            self.pending.push_back(row);
        }
    }

    /// Value `i` of metric `metric` (its scope `m`) as a counter in `row`.
    fn counter(&self, row: &mut Record, m: Option<&MetricScope>, metric: u32, i: usize) {
        let (kind, raw) = (self.value(2 + 2 * i) as u8, self.value(3 + 2 * i));
        row.kind = Kind::Counter;
        row.loc = m.and_then(|m| m.loc).unwrap_or(self.loc);
        match m.and_then(|m| m.members.get(i)) {
            Some(member) => {
                row.name = member.name;
                row.attrs.push_str(&member.attrs);
            }
            None => {
                row.name = self
                    .scope
                    .symbols
                    .intern(&format!("metric {metric} value {i}"));
            }
        }
        push_number(&mut row.value, kind, raw);
    }

    fn parameter(&mut self, rec: &mut Record, event_id: u8) -> Result<()> {
        if event_id == id::PARAMETER_STRING
            && Some(self.value(0) as u32) == self.scope.row_parameter
        {
            return self.stream_row(rec);
        }
        rec.kind = Kind::Event;
        rec.cat = self.scope.symbols.intern(PARAMETER_CAT);
        let p = self.value(0) as u32;
        rec.name = match self.scope.defs.parameters.get(&p) {
            Some(&(name, _)) => self
                .scope
                .symbols
                .intern(&self.scope.text(name, "parameter")),
            None => self.scope.symbols.intern(&format!("parameter {p}")),
        };
        let v = self.value(1);
        match event_id {
            id::PARAMETER_STRING => rec.value.push_str(&self.scope.text(v as u32, "string")),
            id::PARAMETER_UNSIGNED_INT => {
                let _ = write!(rec.value, "{v}");
            }
            _ => {
                let _ = write!(rec.value, "{}", v as i64);
            }
        }
        Ok(())
    }

    /// A row tracepipe wrote as a [`ROW_PARAMETER`] (one no OTF2 record
    /// holds): the row its JSON text gives.
    fn stream_row(&mut self, rec: &mut Record) -> Result<()> {
        let scope = self.scope.clone();
        let r = self.value(1) as u32;
        let text = scope
            .defs
            .string(r)
            .ok_or_else(|| self.error(format!("{ROW_PARAMETER}: string {r} is not defined")))?;
        let syms = self
            .row_syms
            .get_or_insert_with(|| SymCache::new(scope.symbols.clone()));
        rec.clear();
        jsonl::parse_line(text.as_bytes(), rec, syms, ColumnSet::ALL)
            .map_err(|e| self.error(format!("{ROW_PARAMETER}: {e}")))
    }

    /// Any other record: an `event` named after it, its fields in `attrs`.
    fn generic(&mut self, rec: &mut Record, event_id: u8) -> Result<()> {
        rec.kind = Kind::Event;
        rec.name = self.record_name(event_id);
        rec.cat = self.scope.families[(event_id - super::super::catalogue::FIRST_ID) as usize];
        // A row the consumer drops unread needs no fields.
        if self.skip.contains(Kind::Event) {
            return Ok(());
        }
        self.push_fields(rec, event_id)?;
        if event_id == id::RMA_WIN_CREATE {
            // The window's communicator, which its definition holds,
            // travels with its creation (the writer defines it so).
            let scope = self.scope.clone();
            let win = scope.defs.rma_wins.get(&(self.value(0) as u32));
            self.value.clear();
            let comm = win.map_or(u32::MAX as u64, |&(_, c)| c.into());
            ref_text(&scope, R::Comm, comm, &mut self.value);
            rec.push_attr(RMA_WIN_COMM, &self.value);
        }
        Ok(())
    }

    /// The record's fields as `attrs`: references by the name they refer
    /// to where it has one, enumerations by name, times in stream ns.
    fn push_fields(&mut self, rec: &mut Record, event_id: u8) -> Result<()> {
        let Some(spec) = spec_of(event_id) else {
            return Ok(());
        };
        let mut i = 0;
        for &(name, f) in spec.fields {
            if f == F::Array {
                // PROGRAM_BEGIN's arguments, after their count.
                let n = self.value(i - 1) as usize;
                self.value.clear();
                for k in 0..n {
                    if k > 0 {
                        self.value.push(' ');
                    }
                    let s = self.value(i + k) as u32;
                    let text = self.scope.text(s, "string");
                    self.has_room(rec, self.value.len() + text.len())?;
                    self.value.push_str(&text);
                }
                rec.push_attr(name, &self.value);
                i += n;
                continue;
            }
            let v = self.value(i);
            i += 1;
            self.value.clear();
            self.field_text(f, v);
            rec.push_attr(name, &self.value);
        }
        Ok(())
    }

    /// Whether `more` bytes of text still fit the row ([`MAX_ROW_TEXT`]).
    fn has_room(&self, rec: &Record, more: usize) -> Result<()> {
        if rec.attrs.len() + more <= MAX_ROW_TEXT {
            return Ok(());
        }
        Err(self.error(format!(
            "the strings this record names would make a row of more than {MAX_ROW_TEXT} bytes of text"
        )))
    }

    /// Writes the text of a field of type `f` and value `v` into `self.value`.
    fn field_text(&mut self, f: F, v: u64) {
        let out = &mut self.value;
        match f {
            F::I64 => {
                let _ = write!(out, "{}", v as i64);
            }
            F::Time => match self.scope.time.ns(v) {
                Some(ns) => {
                    let _ = write!(out, "{ns}");
                }
                None => {
                    let _ = write!(out, "{v} ticks");
                }
            },
            F::Enum(N::Paradigm) => out.push_str(&paradigm_name(v as u8)),
            F::Enum(N::CollectiveOp) => out.push_str(&collective_name(v as u32)),
            F::Enum(N::MeasurementMode) => out.push_str(match v {
                1 => "ON",
                2 => "OFF",
                _ => "UNKNOWN",
            }),
            F::Enum(N::LockType) => out.push_str(if v == 0 { "EXCLUSIVE" } else { "SHARED" }),
            F::Ref(r) => ref_text(&self.scope, r, v, out),
            _ => {
                let _ = write!(out, "{v}");
            }
        }
    }

    /// The attribute list read with the event, as `attrs`.
    fn push_attributes(&mut self, rec: &mut Record) -> Result<()> {
        if self.events.event.attrs.is_empty() {
            return Ok(());
        }
        let attrs = std::mem::take(&mut self.events.event.attrs);
        let mut made = Ok(());
        for a in &attrs {
            self.attribute_text(a);
            made = self.has_room(rec, self.key.len() + self.value.len());
            if made.is_err() {
                break;
            }
            match self.key.strip_prefix(COLUMN_ATTR) {
                Some(column) if rec.set_column(column, &self.value, &self.scope.symbols) => {}
                _ => rec.push_attr(&self.key, &self.value),
            }
        }
        self.events.event.attrs = attrs;
        made
    }

    /// Key and value text of attribute `a` into `self.key`, `self.value`.
    fn attribute_text(&mut self, a: &AttrValue) {
        self.key.clear();
        self.value.clear();
        match self.scope.defs.attributes.get(&a.attr) {
            Some(d) => self.key.push_str(&self.scope.text(d.name, "attribute")),
            None => {
                let _ = write!(self.key, "attribute {}", a.attr);
            }
        }
        let out = &mut self.value;
        match a.kind {
            11..=25 => {
                let r = [
                    R::String,
                    R::Attribute,
                    R::Location,
                    R::Region,
                    R::Group,
                    R::Metric,
                    R::Comm,
                    R::Parameter,
                    R::RmaWin,
                    R::SourceCodeLocation,
                    R::CallingContext,
                    R::InterruptGenerator,
                    R::IoFile,
                    R::IoHandle,
                    R::LocationGroup,
                ][a.kind as usize - 11];
                ref_text(&self.scope, r, a.raw, out);
            }
            k => push_number(out, k, a.raw),
        }
    }
}

/// Appends the value `raw` of OTF2 type `kind` (integers, floats as bits).
fn push_number(out: &mut String, kind: u8, raw: u64) {
    let mut b = itoa::Buffer::new();
    match kind {
        5 => out.push_str(b.format(raw as u8 as i8)),
        6 => out.push_str(b.format(raw as u16 as i16)),
        7 => out.push_str(b.format(raw as u32 as i32)),
        8 => out.push_str(b.format(raw as i64)),
        9 => {
            let _ = write!(out, "{}", f32::from_bits(raw as u32));
        }
        10 => {
            let _ = write!(out, "{}", f64::from_bits(raw));
        }
        _ => out.push_str(b.format(raw)),
    }
}

/// The text of reference `v` to a definition of kind `r`: a string's text,
/// a region's, location's or communicator's name; the number otherwise.
fn ref_text(scope: &super::Scope, r: R, v: u64, out: &mut String) {
    let undefined =
        (r == R::Location && v == u64::MAX) || (r != R::Location && v == u32::MAX as u64);
    if undefined {
        out.push_str("UNDEFINED");
        return;
    }
    let text = match r {
        R::String => scope.defs.string(v as u32).map(str::to_string),
        R::Region => scope
            .regions
            .get(&(v as u32))
            .map(|&(n, _)| scope.symbols.text(n).to_string()),
        R::Location => scope
            .locations
            .get(&v)
            .map(|&l| scope.symbols.text(l).to_string()),
        R::Comm => scope
            .comms
            .get(&(v as u32))
            .map(|c| scope.symbols.text(c.sym).to_string()),
        R::RmaWin => scope.rma_wins.get(&(v as u32)).cloned(),
        R::Parameter => scope
            .defs
            .parameters
            .get(&(v as u32))
            .and_then(|&(n, _)| scope.defs.string(n))
            .map(str::to_string),
        _ => None,
    };
    match text {
        Some(t) => out.push_str(&t),
        None => {
            let _ = write!(out, "{v}");
        }
    }
}
