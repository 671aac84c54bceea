//! Each row as OTF2 events (docs/formats.md, "OTF2", writing): frames as
//! regions, MPI halves and messages, collectives, counters as metrics,
//! postings; the rest whole in a `tracepipe.row` parameter. A column the
//! record would give back otherwise goes in a `tracepipe.COLUMN` attribute.

use super::super::catalogue::id;
use super::super::encode::{event_into, Buf};
use super::super::{COLUMN_ATTR, PARAMETER_CAT, ROW_PARAMETER};
use super::order::TiePlace;
use super::registry::{PARAMETER_INT64, PARAMETER_STRING, PARAMETER_UINT64, TYPE_STRING};
use super::{ticks, EnteredFrame, Otf2Writer};
use crate::error::{Error, Result};
use crate::formats::stream::jsonl;
use crate::model::hpc::collective_op;
use crate::model::record::{Column, Kind, Record, Sym, ATTR_POSTS};
use crate::number;

/// How a counter's samples are written: its metric, and how many of the
/// row's attributes the metric's member gives back (none: the attributes
/// are kept whole in `tracepipe.attrs`).
#[derive(Debug, Clone, Copy)]
pub struct CounterPlan {
    metric: u32,
    given: Option<usize>,
}

/// An OTF2 record: its id, whether it is written without a length, and its
/// fields.
type Fields = (u8, bool, [u64; 5], usize);

impl Otf2Writer {
    /// Writes a row of a kind with a time.
    pub(super) fn write_event_row(&mut self, rec: &Record) -> Result<()> {
        let mapped = match rec.kind {
            Kind::Enter => self.enter(rec)?,
            Kind::Leave => self.leave(rec)?,
            Kind::State => self.state(rec)?,
            Kind::Send | Kind::Recv | Kind::Msg => self.point_to_point(rec)?,
            Kind::Coll => self.collective(rec)?,
            Kind::Counter => self.counter(rec)?,
            Kind::Event => self.posting(rec)? || self.native(rec)? || self.parameter(rec)?,
            _ => false,
        };
        match mapped {
            true => Ok(()),
            false => self.whole_row(rec),
        }
    }

    /// Starts the attributes of an event: the row's own.
    pub(super) fn row_attrs(&mut self, rec: &Record, skip: usize) -> Result<()> {
        self.attrs.clear();
        for (k, v) in rec.attrs().skip(skip) {
            self.attr(&k, &v)?;
        }
        Ok(())
    }

    fn attr(&mut self, key: &str, value: &str) -> Result<()> {
        let a = self.registry.attribute(key)?;
        let s = self.registry.value_string(value)?;
        self.attrs.push((a, TYPE_STRING, s as u64));
        Ok(())
    }

    /// A column the record gives back otherwise, as an attribute.
    pub(super) fn column(&mut self, column: &str, text: &str) -> Result<()> {
        self.text.clear();
        self.text.push_str(COLUMN_ATTR);
        self.text.push_str(column);
        let key = std::mem::take(&mut self.text);
        let done = self.attr(&key, text);
        self.text = key;
        done
    }

    /// Encodes record `fields` with the attributes gathered and queues it.
    fn put(&mut self, l: u32, at: (u64, TiePlace), (rid, singleton, v, n): Fields) -> Result<()> {
        self.event.clear();
        event_into(&mut self.event, (at.0, rid, singleton), &self.attrs, |b| {
            fields(b, rid, &v[..n]);
        });
        self.queue(l, at)
    }

    fn enter(&mut self, rec: &Record) -> Result<bool> {
        let l = self.location(rec.loc)?;
        let region = self.region(rec)?;
        self.row_attrs(rec, 0)?;
        let depth = self.locations[l as usize].frames.len();
        self.depth(rec, depth)?;
        self.rest(rec, &[])?;
        let t = ticks(rec.time)?;
        let number = self.order.next_number();
        self.put(
            l,
            (t, TiePlace::InOrder),
            (id::ENTER, true, [region as u64, 0, 0, 0, 0], 1),
        )?;
        self.locations[l as usize].frames.push(EnteredFrame {
            region,
            names: (rec.name, rec.cat),
            enter: (t, number),
        });
        Ok(true)
    }

    /// `depth` kept where the reader's count of open frames differs.
    fn depth(&mut self, rec: &Record, open: usize) -> Result<()> {
        match rec.depth {
            Some(d) if d as usize == open => Ok(()),
            Some(d) => self.column("depth", itoa::Buffer::new().format(d)),
            None => self.column("depth", ""),
        }
    }

    fn leave(&mut self, rec: &Record) -> Result<bool> {
        let l = self.location(rec.loc)?;
        let frame = self.locations[l as usize]
            .frames
            .pop()
            .ok_or_else(|| Error::Record("a leave with no open frame on its location".into()))?;
        let (region, (name, cat)) = (frame.region, frame.names);
        let t = ticks(rec.time)?;
        self.locations[l as usize]
            .frames_done
            .note((frame.enter.0, t));
        self.row_attrs(rec, 0)?;
        let symbols = self.symbols.clone();
        if rec.name != name {
            self.column("name", symbols.text(rec.name))?;
        }
        if rec.cat != cat {
            self.column("cat", symbols.text(rec.cat))?;
        }
        let depth = self.locations[l as usize].frames.len();
        self.depth(rec, depth)?;
        self.rest(rec, &[])?;
        self.leave_at(l, (t, TiePlace::InOrder), region)?;
        Ok(true)
    }

    /// A complete frame: its enter, placed before the rows it holds, and
    /// its leave.
    fn state(&mut self, rec: &Record) -> Result<bool> {
        let l = self.location(rec.loc)?;
        let (t, end) = (ticks(rec.time)?, ticks(rec.end)?);
        let location = &self.locations[l as usize];
        // A frame that crosses another (its start inside one it does not
        // hold) is not one OTF2's nesting can hold, and one that starts
        // where its location's events are written already (it holds more
        // than the reorder buffer) cannot be put in: kept whole.
        let open_inside = location.frames.iter().any(|f| f.enter.0 > t);
        let late = location.written.is_some_and(|w| t <= w);
        if open_inside || late || location.frames_done.crossed_by((t, end)) {
            return Ok(false);
        }
        self.locations[l as usize].frames_done.note((t, end));
        let region = self.region(rec)?;
        let location = &self.locations[l as usize];
        let start = TiePlace::After {
            anchor: location.anchor(t),
            end,
        };
        // Its end follows the frames it holds that end then; a frame of no
        // length ends right after it starts.
        let stop = match t == end {
            true => start,
            false => TiePlace::After {
                anchor: location.last_leave.filter(|x| x.0 == end).map(|x| x.1),
                end,
            },
        };
        self.row_attrs(rec, 0)?;
        // Where the frame sits among others is known only at its end: kept.
        self.state_depth(rec)?;
        self.rest(rec, &[])?;
        let r = [region as u64, 0, 0, 0, 0];
        self.put(l, (t, start), (id::ENTER, true, r, 1))?;
        self.attrs.clear();
        self.state_depth(rec)?;
        self.leave_at(l, (end, stop), region)?;
        Ok(true)
    }

    /// Queues a `LEAVE` of `region`, which later frames may follow.
    fn leave_at(&mut self, l: u32, at: (u64, TiePlace), region: u32) -> Result<()> {
        let number = self.order.next_number();
        self.put(l, at, (id::LEAVE, true, [region as u64, 0, 0, 0, 0], 1))?;
        self.locations[l as usize].last_leave = Some((at.0, number));
        Ok(())
    }

    fn state_depth(&mut self, rec: &Record) -> Result<()> {
        match rec.depth {
            Some(d) => self.column("depth", itoa::Buffer::new().format(d)),
            None => self.column("depth", ""),
        }
    }

    fn region(&mut self, rec: &Record) -> Result<u32> {
        if let Some(r) = self.registry.region_of(rec.name, rec.cat) {
            return Ok(r);
        }
        let name = self.symbols.text(rec.name);
        let cat = self.symbols.text(rec.cat);
        self.registry.region((rec.name, rec.cat), (name, cat))
    }

    /// Every column of `rec` its record does not hold (`held`) and that
    /// has a value, kept as an attribute: nothing of a row is lost.
    pub(super) fn rest(&mut self, rec: &Record, held: &[Column]) -> Result<()> {
        let symbols = self.symbols.clone();
        let mut number = itoa::Buffer::new();
        let is_held = |c: Column| held.contains(&c);
        if !rec.peer.is_empty() && !is_held(Column::Peer) {
            self.column("peer", symbols.text(rec.peer))?;
        }
        if !rec.comm.is_empty() && !is_held(Column::Comm) {
            self.column("comm", symbols.text(rec.comm))?;
        }
        if let Some(tag) = rec.tag.filter(|_| !is_held(Column::Tag)) {
            self.column("tag", number.format(tag))?;
        }
        if let Some(size) = rec.size.filter(|_| !is_held(Column::Size)) {
            self.column("size", number.format(size))?;
        }
        for (column, text) in [
            (Column::Id, &rec.id),
            (Column::Value, &rec.value),
            (Column::Flags, &rec.flags),
        ] {
            if !text.is_empty() && !is_held(column) {
                self.column(column.name(), text)?;
            }
        }
        Ok(())
    }

    /// The columns MPI records give as `cat` and `name`, kept when the row
    /// has others.
    fn mpi_names(&mut self, rec: &Record, record: &str) -> Result<()> {
        let symbols = self.symbols.clone();
        let cat = symbols.text(rec.cat);
        if *cat != *"MPI" {
            self.column("cat", cat)?;
        }
        let name = symbols.text(rec.name);
        if *name != *record {
            self.column("name", name)?;
        }
        Ok(())
    }

    /// The communicator of `rec` (its index) and `comm` kept when the
    /// reference reads back otherwise.
    fn comm(&mut self, rec: &Record) -> Result<usize> {
        let symbols = self.symbols.clone();
        let text = symbols.text(rec.comm);
        let c = self.registry.comm(rec.comm, text)?;
        let r = self.registry.comm_ref(c);
        if itoa::Buffer::new().format(r) != text {
            self.column("comm", text)?;
        }
        Ok(c)
    }

    /// A half, or a message as its two halves: MPI records when the row has
    /// a tag and a peer.
    fn point_to_point(&mut self, rec: &Record) -> Result<bool> {
        let Some(tag) = rec.tag.and_then(|t| u32::try_from(t).ok()) else {
            return Ok(false);
        };
        if rec.peer.is_empty() || tag == u32::MAX {
            return Ok(false);
        }
        let (l, peer) = (self.location(rec.loc)?, self.location(rec.peer)?);
        let t = ticks(rec.time)?;
        if self.locations[l as usize].written.is_some_and(|w| t < w) {
            // A message whose send is before events written: kept whole.
            return Ok(false);
        }
        let c = self.comm(rec)?;
        let (own, other) = (self.registry.rank(c, l), self.registry.rank(c, peer));
        let comm = self.registry.comm_ref(c) as u64;
        let request = number::parse_uint(rec.id.as_bytes()).filter(|_| rec.kind != Kind::Msg);
        let size = rec.size.unwrap_or(0);
        let fields = |rank: u32, send: bool| -> Fields {
            let v = [rank as u64, comm, tag as u64, size, request.unwrap_or(0)];
            match (send, request) {
                (true, Some(_)) => (id::MPI_ISEND, false, v, 5),
                (true, None) => (id::MPI_SEND, false, v, 4),
                (false, Some(_)) => (id::MPI_IRECV, false, v, 5),
                (false, None) => (id::MPI_RECV, false, v, 4),
            }
        };
        let halves = match rec.kind {
            Kind::Send => [Some((l, t, fields(other, true))), None],
            Kind::Recv => [Some((l, t, fields(other, false))), None],
            _ => [
                Some((l, t, fields(other, true))),
                Some((peer, ticks(rec.end)?, fields(own, false))),
            ],
        };
        for (i, (at, t, f)) in halves.into_iter().flatten().enumerate() {
            self.attrs.clear();
            if i == 0 {
                self.row_attrs(rec, 0)?;
            }
            let record = match f.0 {
                id::MPI_ISEND => "MPI_ISEND",
                id::MPI_SEND => "MPI_SEND",
                id::MPI_IRECV => "MPI_IRECV",
                _ => "MPI_RECV",
            };
            self.mpi_names(rec, record)?;
            self.comm(rec)?;
            self.half_columns(rec, request.is_some(), &[])?;
            self.put(at, (t, TiePlace::InOrder), f)?;
        }
        Ok(true)
    }

    /// What an MPI record does not hold of the row: besides its peer,
    /// communicator, tag and size, the columns in `held` and `id` when it
    /// is the request.
    fn half_columns(&mut self, rec: &Record, id_is_request: bool, held: &[Column]) -> Result<()> {
        if rec.size.is_none() {
            self.column("size", "")?;
        }
        if !rec.id.is_empty() && !id_is_request {
            self.column("id", &rec.id)?;
        }
        let mut own = vec![
            Column::Peer,
            Column::Comm,
            Column::Tag,
            Column::Size,
            Column::Id,
        ];
        own.extend_from_slice(held);
        self.rest(rec, &own)
    }

    /// One participant of a collective: its begin and its end.
    fn collective(&mut self, rec: &Record) -> Result<bool> {
        let Some(op) = collective_op(self.symbols.text(rec.name)) else {
            return Ok(false);
        };
        let l = self.location(rec.loc)?;
        let (t, end) = (ticks(rec.time)?, ticks(rec.end)?);
        self.attrs.clear();
        let begin = TiePlace::After {
            anchor: self.locations[l as usize].anchor(t),
            end,
        };
        // A reader pairs an end with the last begin: a collective that
        // starts inside another it does not hold (threads of a process) is
        // written as its end alone, its start kept beside it.
        // So is one that starts where its location's events are written.
        let late = self.locations[l as usize].written.is_some_and(|w| t <= w);
        let collectives = &mut self.locations[l as usize].collectives;
        let nested = !collectives.crossed_by((t, end)) && !late;
        collectives.note((t, end));
        if nested {
            self.put(l, (t, begin), (id::MPI_COLLECTIVE_BEGIN, false, [0; 5], 0))?;
        }
        self.row_attrs(rec, 0)?;
        if !nested {
            self.read_back_at(rec, rec.end);
            self.column("time", itoa::Buffer::new().format(t))?;
            self.column("flags", &rec.flags)?;
        }
        let c = self.comm(rec)?;
        self.registry.rank(c, l);
        let root = match rec.peer.is_empty() {
            true => u32::MAX,
            false => {
                let p = self.location(rec.peer)?;
                self.registry.rank(c, p)
            }
        };
        let symbols = self.symbols.clone();
        let cat = symbols.text(rec.cat);
        if *cat != *"MPI" {
            self.column("cat", cat)?;
        }
        let received = number::parse_uint(rec.value.as_bytes());
        if received.is_none() {
            let value = rec.value.clone();
            self.column("value", &value)?;
        }
        // The received size is `value`; a tag is kept as it is.
        self.half_columns(rec, false, &[Column::Value])?;
        if let Some(tag) = rec.tag {
            self.column("tag", itoa::Buffer::new().format(tag))?;
        }
        let comm = self.registry.comm_ref(c) as u64;
        let v = [
            op as u64,
            comm,
            root as u64,
            rec.size.unwrap_or(0),
            received.unwrap_or(0),
        ];
        self.put(
            l,
            (end, TiePlace::InOrder),
            (id::MPI_COLLECTIVE_END, false, v, 5),
        )?;
        Ok(true)
    }

    /// A counter as a `METRIC` of one value (an integer or a float that
    /// reads back the same); false for other values.
    fn counter(&mut self, rec: &Record) -> Result<bool> {
        let (value_type, bits) = match number::parse_int(rec.value.as_bytes()) {
            Some(n) => (8u8, n as u64),
            None => match rec.value.parse::<f64>() {
                Ok(v) if self.reads_back(v, &rec.value) => (10, v.to_bits()),
                _ => return Ok(false),
            },
        };
        // A counter's samples mostly carry the same attributes: its plan
        // is made once for them.
        let key = (rec.name, value_type);
        let plan = match self.counters.get(&key) {
            Some((attrs, plan)) if *attrs == rec.attrs => *plan,
            _ => {
                let plan = self.counter_plan(rec, value_type)?;
                self.counters.insert(key, (rec.attrs.clone(), plan));
                plan
            }
        };
        let Some(plan) = plan else {
            return Ok(false);
        };
        let l = self.location(rec.loc)?;
        match plan.given {
            Some(n) => self.row_attrs(rec, n)?,
            None => {
                self.attrs.clear();
                self.column("attrs", &rec.attrs)?;
            }
        }
        if !rec.cat.is_empty() {
            let cat = self.symbols.text(rec.cat).to_string();
            self.column("cat", &cat)?;
        }
        self.rest(rec, &[Column::Value])?;
        let v = [plan.metric as u64, 1, value_type as u64, bits, 0];
        self.put(
            l,
            (ticks(rec.time)?, TiePlace::InOrder),
            (id::METRIC, false, v, 4),
        )?;
        Ok(true)
    }

    /// Whether `v` is written back as `text` (the reader prints floats
    /// shortest), without a string per sample.
    fn reads_back(&mut self, v: f64, text: &str) -> bool {
        use std::fmt::Write as _;
        self.text.clear();
        let _ = write!(self.text, "{v}");
        self.text == text
    }

    /// How the samples of `rec`'s counter with its attributes are written;
    /// none for a `mode` or `timing` OTF2 has no word for.
    fn counter_plan(&mut self, rec: &Record, value_type: u8) -> Result<Option<CounterPlan>> {
        let attr = |k: &str| rec.attrs().find(|(key, _)| key == k).map(|(_, v)| v);
        let mode = attr("mode").unwrap_or_else(|| "abs".into());
        let timing = attr("timing").unwrap_or_else(|| "point".into());
        let unit = attr("unit").unwrap_or_default();
        let kind = ["acc", "abs", "rel"].iter().position(|m| *m == mode);
        let when = ["start", "point", "last", "next"]
            .iter()
            .position(|m| *m == timing);
        let (Some(kind), Some(when)) = (kind, when) else {
            return Ok(None);
        };
        let name = self.symbols.text(rec.name);
        let metric = self
            .registry
            .metric(name, (kind << 4 | when) as u8, value_type, &unit)?;
        // What the reader gives: mode, timing, unit, then the attributes.
        let mut derived = format!("mode={mode};timing={timing}");
        if !unit.is_empty() {
            derived.push_str(";unit=");
            derived.push_str(&unit);
        }
        let count = derived.matches(';').count() + 1;
        let given = match rec.attrs.strip_prefix(&derived) {
            Some(rest) if rest.is_empty() || rest.starts_with(';') => Some(count),
            _ => None,
        };
        Ok(Some(CounterPlan { metric, given }))
    }

    /// A receive posted (`posts=recv` first, a request number in `id`).
    fn posting(&mut self, rec: &Record) -> Result<bool> {
        let request = number::parse_uint(rec.id.as_bytes());
        let posts = rec
            .attrs()
            .next()
            .is_some_and(|(k, v)| k == ATTR_POSTS && v == "recv");
        let (Some(request), true) = (request, posts) else {
            return Ok(false);
        };
        let l = self.location(rec.loc)?;
        self.row_attrs(rec, 1)?;
        self.mpi_names(rec, "MPI_IRECV_REQUEST")?;
        self.rest(rec, &[Column::Id])?;
        let v = [request, 0, 0, 0, 0];
        self.put(
            l,
            (ticks(rec.time)?, TiePlace::InOrder),
            (id::MPI_IRECV_REQUEST, true, v, 1),
        )?;
        Ok(true)
    }

    /// An `event` at an instant as a `PARAMETER_*` event: its `name` the
    /// parameter, its `value` the value (an integer that reads back the
    /// same, else a string); the reader gives `cat` `PARAMETER`, so another
    /// is kept. False for an event with an `end` or no `loc` (a location
    /// of no name reads back named by its number), or named as the whole
    /// rows' parameter.
    fn parameter(&mut self, rec: &Record) -> Result<bool> {
        let symbols = self.symbols.clone();
        let name = symbols.text(rec.name);
        if rec.end.is_some() || rec.loc.is_empty() || *name == *ROW_PARAMETER {
            return Ok(false);
        }
        let (kind, value) = match parameter_value(&rec.value) {
            Some(typed) => typed,
            None => (
                PARAMETER_STRING,
                self.registry.value_string(&rec.value)? as u64,
            ),
        };
        let p = self.registry.parameter(rec.name, name, kind)?;
        let l = self.location(rec.loc)?;
        if !rec.peer.is_empty() {
            // Declared as a location, as a row kept whole declares it.
            self.location(rec.peer)?;
        }
        self.row_attrs(rec, 0)?;
        let cat = symbols.text(rec.cat);
        if *cat != *PARAMETER_CAT {
            self.column("cat", cat)?;
        }
        if let Some(depth) = rec.depth {
            self.column("depth", itoa::Buffer::new().format(depth))?;
        }
        self.rest(rec, &[Column::Value])?;
        let rid = match kind {
            PARAMETER_STRING => id::PARAMETER_STRING,
            PARAMETER_INT64 => id::PARAMETER_INT,
            _ => id::PARAMETER_UNSIGNED_INT,
        };
        let v = [p as u64, value, 0, 0, 0];
        self.put(l, (ticks(rec.time)?, TiePlace::InOrder), (rid, false, v, 2))
            .map(|()| true)
    }

    /// A row no record holds: whole, as JSON, in a `tracepipe.row`
    /// parameter at its completion time (on its location, or on a location
    /// of no name for rows of none).
    fn whole_row(&mut self, rec: &Record) -> Result<()> {
        // A destruction goes on the location of no name, numbered last, so
        // it comes after the other rows of its instant (a reader merges
        // locations by time, ties in the order of their numbers).
        let on = match rec.kind {
            Kind::Destroy => Sym::default(),
            _ => rec.loc,
        };
        let l = self.location(on)?;
        if !rec.peer.is_empty() {
            // Its peer is declared back as a location too.
            self.location(rec.peer)?;
        }
        self.read_back_at(rec, rec.completion());
        self.json.clear();
        jsonl::encode_row(rec, &self.symbols, 1, &mut self.json);
        let text = std::str::from_utf8(self.json.trim_ascii_end()).expect("JSON is UTF-8");
        let s = self.registry.fresh_string(text)?;
        let p = self.registry.row_parameter()?;
        self.attrs.clear();
        let t = ticks(rec.completion())?;
        let v = [p as u64, s as u64, 0, 0, 0];
        self.put(
            l,
            (t, TiePlace::InOrder),
            (id::PARAMETER_STRING, false, v, 2),
        )
    }
}

/// The parameter type and raw value of an `event`'s `value` that an
/// integer parameter gives back as the same text (a canonical integer).
fn parameter_value(text: &str) -> Option<(u8, u64)> {
    match number::parse_int(text.as_bytes()) {
        Some(n) => Some((PARAMETER_INT64, n as u64)),
        None => number::parse_uint(text.as_bytes()).map(|n| (PARAMETER_UINT64, n)),
    }
}

/// The fields of record `rid`, in the catalogue's encodings.
fn fields(b: &mut Buf, rid: u8, v: &[u64]) {
    match rid {
        id::METRIC => {
            b.u32c(v[0] as u32).u8(1).u8(v[2] as u8).u64c(v[3]);
        }
        id::MPI_SEND | id::MPI_RECV | id::MPI_ISEND | id::MPI_IRECV => {
            b.u32c(v[0] as u32)
                .u32c(v[1] as u32)
                .u32c(v[2] as u32)
                .u64c(v[3]);
            if v.len() > 4 {
                b.u64c(v[4]);
            }
        }
        id::MPI_COLLECTIVE_END => {
            b.u8(v[0] as u8)
                .u32c(v[1] as u32)
                .u32c(v[2] as u32)
                .u64c(v[3])
                .u64c(v[4]);
        }
        id::MPI_IRECV_REQUEST => {
            b.u64c(v[0]);
        }
        id::PARAMETER_STRING => {
            b.u32c(v[0] as u32).u32c(v[1] as u32);
        }
        id::PARAMETER_INT => {
            b.u32c(v[0] as u32).i64c(v[1] as i64);
        }
        id::PARAMETER_UNSIGNED_INT => {
            b.u32c(v[0] as u32).u64c(v[1]);
        }
        _ => {
            for &x in v {
                b.u32c(x as u32);
            }
        }
    }
}
