//! Each row as Pallas events (docs/formats.md, "Pallas", writing): frames
//! as `ENTER`/`LEAVE` of regions, MPI halves and collectives, generic
//! events; the rest whole, as JSON, in a `tracepipe.row` attribute of a
//! generic event. A column the record would give back otherwise goes in a
//! `tracepipe.COLUMN` attribute. Also the thread file of a finished grammar.

use super::super::archive::{make_token, token, TokenKind};
use std::io::Write;

use super::super::RecordId;
use super::attributes::Spill;
use super::defs::{TYPE_I64, TYPE_STRING};
use super::grammar::{too_deep, EventKey, Grammar};
use super::layout::{self, Dat, LeBytes};
use super::PallasWriter;
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::formats::stream::jsonl;
use crate::model::hpc::{collective_name, collective_op};
use crate::model::record::{Kind, Record, Sym, COLUMN_ATTR, ROW_ATTR};
use crate::model::symbol::{well_known, Symbols};

/// Nesting a reader follows (the grammar's depth, with loops, stays within
/// Pallas's and tracepipe's readers' limits).
pub(super) const MAX_BLOCKS: usize = 2048;

/// Answers per symbol the rows ask again and again: the symbols of the
/// MPI records' names, collectives' operations, generic events' strings.
pub(super) struct SymbolAnswers {
    symbols: Symbols,
    records: FastMap<u32, Sym>,
    collectives: FastMap<Sym, Option<(u32, Sym)>>,
    /// The string of each generic event's name.
    strings: FastMap<Sym, u32>,
    /// The record a row's `cat` and `name` name (`OMP` `OMP_FORK`...).
    named: FastMap<(Sym, Sym), Option<RecordId>>,
}

impl SymbolAnswers {
    pub(super) fn new(symbols: Symbols) -> SymbolAnswers {
        SymbolAnswers {
            symbols,
            records: FastMap::default(),
            collectives: FastMap::default(),
            strings: FastMap::default(),
            named: FastMap::default(),
        }
    }

    /// The record whose row has this `cat` and `name`, if any.
    pub(super) fn named(&mut self, cat: Sym, name: Sym) -> Option<RecordId> {
        let symbols = &self.symbols;
        *self.named.entry((cat, name)).or_insert_with(|| {
            RecordId::from_name(symbols.text(name)).filter(|r| r.cat() == Some(symbols.text(cat)))
        })
    }

    /// The symbol of a record's name.
    fn record(&mut self, record: RecordId) -> Sym {
        let symbols = &self.symbols;
        *self
            .records
            .entry(record.number())
            .or_insert_with(|| symbols.intern(record.name()))
    }

    /// The operation a collective's name names, and the name the reader
    /// gives it back as.
    fn collective(&mut self, name: Sym) -> Option<(u32, Sym)> {
        let symbols = &self.symbols;
        *self.collectives.entry(name).or_insert_with(|| {
            let op = collective_op(symbols.text(name))?;
            Some((op, symbols.intern(&collective_name(op))))
        })
    }
}

/// What the record of a row gives back, so that the columns it does not
/// are kept as attributes.
#[derive(Default)]
pub(super) struct Given {
    pub(super) cat: Sym,
    pub(super) name: Sym,
    pub(super) peer: Sym,
    pub(super) comm: Sym,
    pub(super) tag: Option<i64>,
    pub(super) size: Option<u64>,
    pub(super) depth: Option<u32>,
    pub(super) end: Option<i64>,
    /// The record holds `id` / `value` exactly.
    pub(super) id: bool,
    pub(super) value: bool,
    /// Attributes the reader gives the row from the record itself.
    pub(super) pushed: Pushed,
}

/// The attributes a record gives its row first (a fork's `nthreads`, a
/// join's `record`, a receive posted's `posts`).
#[derive(Default, Clone, Copy)]
pub(super) struct Pushed {
    /// The row's first `skip` attributes are those: not written again.
    pub(super) skip: usize,
    /// The row does not start with them: the reader is told to drop them
    /// (`tracepipe.attrs` set empty before the row's own).
    pub(super) replace: bool,
}

impl Pushed {
    /// What a record that gives `attrs` needs for row `rec`.
    pub(super) fn of(rec: &Record, attrs: &[(&str, &str)]) -> Pushed {
        let mut have = rec.attrs();
        let same = attrs
            .iter()
            .all(|&(k, v)| have.next().is_some_and(|(hk, hv)| hk == k && hv == v));
        match same {
            true => Pushed {
                skip: attrs.len(),
                replace: false,
            },
            false => Pushed {
                skip: 0,
                replace: true,
            },
        }
    }
}

impl PallasWriter {
    /// Writes a row of a kind with a time.
    pub(super) fn write_row(&mut self, rec: &Record) -> Result<()> {
        if rec.completion().is_some_and(|t| t < 0) || rec.time.is_some_and(|t| t < 0) {
            return Err(Error::Record(format!(
                "Pallas times are not negative: this row is at {} ns",
                rec.time.or(rec.end).unwrap_or_default()
            )));
        }
        // Attributes named like the columns kept would be read back as them.
        let mapped = !rec.attrs().any(|(k, _)| k.starts_with(COLUMN_ATTR))
            && match rec.kind {
                Kind::Enter => self.enter(rec)?,
                Kind::Leave => self.leave(rec)?,
                Kind::State => self.state(rec)?,
                Kind::Send | Kind::Recv => self.half(rec)?,
                Kind::Coll => self.collective(rec)?,
                Kind::Event => match self.names.named(rec.cat, rec.name) {
                    Some(r) => self.block_event(rec, r)?,
                    None => self.generic(rec)?,
                },
                _ => false,
            };
        match mapped {
            true => Ok(()),
            false => self.whole(rec),
        }
    }

    fn enter(&mut self, rec: &Record) -> Result<bool> {
        let t = self.thread(rec.loc)?;
        let time = self.in_order(t, rec.time)?;
        let depth = self.threads[t as usize].frames.len();
        if depth >= MAX_BLOCKS {
            return Err(too_deep(depth));
        }
        let symbols = self.symbols.clone();
        let region = self.registry().region((rec.name, rec.cat), &symbols)?;
        if !self.start_values(
            rec,
            &Given {
                cat: rec.cat,
                name: rec.name,
                depth: Some(depth as u32),
                ..Given::default()
            },
        )? {
            return Ok(false);
        }
        let key = EventKey::new(RecordId::Enter.number(), &region.to_le_bytes());
        self.occur(t, key, time, (true, false))?;
        self.threads[t as usize]
            .frames
            .push((rec.name, rec.cat, region));
        Ok(true)
    }

    fn leave(&mut self, rec: &Record) -> Result<bool> {
        let t = self.thread(rec.loc)?;
        let time = self.in_order(t, rec.time)?;
        let Some(&(name, cat, region)) = self.threads[t as usize].frames.last() else {
            return Err(Error::Record(
                "a leave with no open frame on its location".into(),
            ));
        };
        let depth = self.threads[t as usize].frames.len() - 1;
        let key = EventKey::new(RecordId::Leave.number(), &region.to_le_bytes());
        let given = Given {
            cat,
            name,
            depth: Some(depth as u32),
            ..Given::default()
        };
        if !self.start_values(rec, &given)? {
            return Ok(false);
        }
        self.threads[t as usize].frames.pop();
        self.occur(t, key, time, (false, true)).map(|()| true)
    }

    /// A frame given whole: its enter and leave, when it starts after the
    /// thread's last event (else it is kept whole).
    fn state(&mut self, rec: &Record) -> Result<bool> {
        let t = self.thread(rec.loc)?;
        let (Some(time), Some(end)) = (rec.time, rec.end) else {
            return Ok(false);
        };
        let thread = &self.threads[t as usize];
        let depth = thread.frames.len();
        if (time as u64) < thread.last.unwrap_or(0) || end < time || depth >= MAX_BLOCKS {
            return Ok(false);
        }
        let symbols = self.symbols.clone();
        let region = self.registry().region((rec.name, rec.cat), &symbols)?;
        if !self.start_values(
            rec,
            &Given {
                cat: rec.cat,
                name: rec.name,
                depth: Some(depth as u32),
                end: rec.end,
                ..Given::default()
            },
        )? {
            return Ok(false);
        }
        let key = EventKey::new(RecordId::Enter.number(), &region.to_le_bytes());
        self.occur(t, key, time as u64, (true, false))?;
        self.values.0.clear();
        self.value_count = 0;
        let key = EventKey::new(RecordId::Leave.number(), &region.to_le_bytes());
        self.occur(t, key, end as u64, (false, true))?;
        Ok(true)
    }

    /// A send or receive with a tag and a peer: an MPI record on the
    /// thread, the peer by its rank in the communicator.
    fn half(&mut self, rec: &Record) -> Result<bool> {
        let (Some(tag), true) = (rec.tag, rec.peer != Sym::EMPTY) else {
            return Ok(false);
        };
        let Ok(tag32) = u32::try_from(tag) else {
            return Ok(false);
        };
        let t = self.thread(rec.loc)?;
        let time = self.in_order(t, rec.time)?;
        let peer = self.thread(rec.peer)?;
        let symbols = self.symbols.clone();
        let comm = self.registry().comm(rec.comm, &symbols)?;
        comm.rank(t);
        let (rank, comm_ref) = (comm.rank(peer), comm.r);
        let request = canonical_u64(&rec.id);
        let send = rec.kind == Kind::Send;
        let record = match (send, request.is_some()) {
            (true, false) => RecordId::MpiSend,
            (true, true) => RecordId::MpiIsend,
            (false, false) => RecordId::MpiRecv,
            (false, true) => RecordId::MpiIrecv,
        };
        let given = Given {
            cat: well_known::MPI,
            name: self.names.record(record),
            peer: rec.peer,
            comm: rec.comm,
            tag: Some(tag),
            size: Some(rec.size.unwrap_or(0)),
            id: request.is_some(),
            ..Given::default()
        };
        if !self.start_values(rec, &given)? {
            return Ok(false);
        }
        let size = rec.size.unwrap_or(0);
        let longs = [size, request.unwrap_or(0)];
        let longs = &longs[..1 + usize::from(request.is_some())];
        let key = EventKey::packed(record.number(), &[rank, comm_ref, tag32], longs);
        self.occur(t, key, time, (false, false))?;
        Ok(true)
    }

    /// A collective Pallas names: its begin at `time`, its end at `end`
    /// with the operation, communicator, root's rank and sizes; when it
    /// starts after the thread's last event (else it is kept whole).
    fn collective(&mut self, rec: &Record) -> Result<bool> {
        let (Some((op, canonical)), Some(time), Some(end)) =
            (self.names.collective(rec.name), rec.time, rec.end)
        else {
            return Ok(false);
        };
        let t = self.thread(rec.loc)?;
        if (time as u64) < self.threads[t as usize].last.unwrap_or(0) || end < time {
            return Ok(false);
        }
        let root = match rec.peer {
            Sym::EMPTY => None,
            peer => Some(self.thread(peer)?),
        };
        let symbols = self.symbols.clone();
        let comm = self.registry().comm(rec.comm, &symbols)?;
        comm.rank(t);
        let root_rank = root.map_or(u32::MAX, |r| comm.rank(r));
        let comm_ref = comm.r;
        let received = canonical_u64(&rec.value);
        let given = Given {
            cat: well_known::MPI,
            name: canonical,
            peer: rec.peer,
            comm: rec.comm,
            size: Some(rec.size.unwrap_or(0)),
            end: rec.end,
            value: received.is_some(),
            ..Given::default()
        };
        if !self.start_values(rec, &given)? {
            return Ok(false);
        }
        let end_key = EventKey::packed(
            RecordId::MpiCollectiveEnd.number(),
            &[op, comm_ref, root_rank],
            &[rec.size.unwrap_or(0), received.unwrap_or(0)],
        );
        let (values, count) = (std::mem::take(&mut self.values.0), self.value_count);
        self.value_count = 0;
        let begin = EventKey::new(RecordId::MpiCollectiveBegin.number(), &[]);
        self.occur(t, begin, time as u64, (false, false))?;
        (self.values.0, self.value_count) = (values, count);
        self.occur(t, end_key, end as u64, (false, false))?;
        Ok(true)
    }

    /// An `event`: a generic event named by its `name`.
    pub(super) fn generic(&mut self, rec: &Record) -> Result<bool> {
        if self.symbols.text(rec.name) == ROW_ATTR {
            return Ok(false);
        }
        let t = self.thread(rec.loc)?;
        let time = self.in_order(t, rec.time)?;
        if !self.start_values(
            rec,
            &Given {
                name: rec.name,
                ..Given::default()
            },
        )? {
            return Ok(false);
        }
        let s = match self.names.strings.get(&rec.name) {
            Some(&s) => s,
            None => {
                let text = self.symbols.text(rec.name).to_string();
                let s = self.registry().string(&text)?;
                self.names.strings.insert(rec.name, s);
                s
            }
        };
        let key = EventKey::new(RecordId::Generic.number(), &s.to_le_bytes());
        self.occur(t, key, time, (false, false))?;
        Ok(true)
    }

    /// A row no record holds: a generic event `tracepipe.row` at its
    /// completion, the row as JSON in its attribute `tracepipe.row`.
    fn whole(&mut self, rec: &Record) -> Result<()> {
        let t = self.thread(rec.loc)?;
        let last = self.threads[t as usize].last.unwrap_or(0);
        let time = rec.completion().map_or(last, |c| (c as u64).max(last));
        self.read_back_at(rec, time as i64);
        self.json.clear();
        jsonl::encode_row(rec, &self.symbols, 1, &mut self.json);
        let json = std::str::from_utf8(&self.json).expect("JSON is UTF-8");
        let json = json.trim_end_matches('\n').to_string();
        let registry = self.registry();
        let s = registry.string(&json)?;
        let a = registry.attribute(ROW_ATTR, TYPE_STRING)?;
        let name = registry.string(ROW_ATTR)?;
        self.values.0.clear();
        layout::attribute_value(&mut self.values, a, &s.to_le_bytes());
        self.value_count = 1;
        let key = EventKey::new(RecordId::Generic.number(), &name.to_le_bytes());
        self.occur(t, key, time, (false, false))
    }

    /// Notes that `rec` is read back from an event at `at` ns.
    fn read_back_at(&mut self, rec: &Record, at: i64) {
        if let Some(start) = rec.start() {
            self.lead = self.lead.max(at.saturating_sub(start));
        }
    }

    /// The time of a point row on thread `t`, which must not be before
    /// the thread's last event (the stream's order).
    pub(super) fn in_order(&self, t: u32, time: Option<i64>) -> Result<u64> {
        let time = time.ok_or_else(|| Error::Record("a row without a time".into()))? as u64;
        let last = self.threads[t as usize].last.unwrap_or(0);
        if time < last {
            return Err(Error::Record(format!(
                "this row at {time} ns comes after an event at {last} ns on its location"
            )));
        }
        Ok(time)
    }

    /// Starts an occurrence's attribute values: the row's attributes, and
    /// the columns `given` does not give back. False when they do not fit
    /// a Pallas attribute list (the row is then kept whole).
    pub(super) fn start_values(&mut self, rec: &Record, given: &Given) -> Result<bool> {
        self.values.0.clear();
        self.value_count = 0;
        if given.pushed.replace {
            self.column("attrs", "")?;
        }
        for (k, v) in rec.attrs().skip(given.pushed.skip) {
            self.value(&k, &v)?;
        }
        let symbols = self.symbols.clone();
        for (column, have, want) in [
            ("cat", rec.cat, given.cat),
            ("name", rec.name, given.name),
            ("peer", rec.peer, given.peer),
            ("comm", rec.comm, given.comm),
        ] {
            if have != want {
                self.column(column, symbols.text(have))?;
            }
        }
        let mut b = itoa::Buffer::new();
        let number = |n: Option<i64>, b: &mut itoa::Buffer| n.map(|n| b.format(n).to_string());
        if rec.end != given.end {
            // An end kept beside the event: the row may begin before it.
            self.read_back_at(rec, rec.completion().unwrap_or_default());
        }
        for (column, have, want) in [
            ("tag", rec.tag, given.tag),
            ("end", rec.end, given.end),
            (
                "depth",
                rec.depth.map(i64::from),
                given.depth.map(i64::from),
            ),
        ] {
            if have != want {
                self.column(column, &number(have, &mut b).unwrap_or_default())?;
            }
        }
        if rec.size != given.size {
            let size = rec.size.map(|s| s.to_string()).unwrap_or_default();
            self.column("size", &size)?;
        }
        for (column, text, held) in [
            ("id", &rec.id, given.id),
            ("value", &rec.value, given.value),
            ("flags", &rec.flags, false),
        ] {
            if !held && !text.is_empty() {
                self.column(column, text)?;
            }
        }
        Ok(self.value_count <= u8::MAX as usize && self.values.0.len() + 7 <= u16::MAX as usize)
    }

    /// A column kept as an attribute.
    fn column(&mut self, column: &str, text: &str) -> Result<()> {
        let mut key = std::mem::take(&mut self.text);
        key.clear();
        key.push_str(COLUMN_ATTR);
        key.push_str(column);
        let done = self.value(&key, text);
        self.text = key;
        done
    }

    /// One attribute value: a canonical integer as an i64, any other text
    /// as a string.
    fn value(&mut self, key: &str, text: &str) -> Result<()> {
        let (kind, bytes) = match canonical_i64(text) {
            Some(n) => (TYPE_I64, n.to_le_bytes()),
            None => {
                let s = self.registry().string(text)?;
                (TYPE_STRING, u64::from(s).to_le_bytes())
            }
        };
        let width = if kind == TYPE_I64 { 8 } else { 4 };
        let a = self.registry().attribute(key, kind)?;
        layout::attribute_value(&mut self.values, a, &bytes[..width]);
        self.value_count += 1;
        Ok(())
    }

    /// Records event `key` on thread `t` at `time`, with the attribute
    /// values gathered.
    pub(super) fn occur(
        &mut self,
        t: u32,
        key: EventKey,
        time: u64,
        edges: (bool, bool),
    ) -> Result<()> {
        let thread = &mut self.threads[t as usize];
        let id = thread.grammar.event(key);
        let index = thread.grammar.occur(id, time, edges, &mut thread.dats)?;
        thread.last = Some(time);
        if self.value_count == 0 {
            return Ok(());
        }
        let index = i32::try_from(index).map_err(|_| {
            Error::Record(
                "an event with attributes occurs more than 2^31 times on its thread".into(),
            )
        })?;
        let slot = &mut thread.grammar.events[id as usize];
        let mut o = LeBytes(std::mem::take(slot.attributes.held_mut()));
        let size = 7 + self.values.0.len();
        layout::attribute_list_head(&mut o, index, size, self.value_count);
        o.0.extend_from_slice(&self.values.0);
        *slot.attributes.held_mut() = o.0;
        self.values.0.clear();
        self.value_count = 0;
        thread.spill.held += size;
        if thread.spill.full() {
            let events = thread.grammar.events.iter_mut();
            thread.spill.spill(events.map(|e| &mut e.attributes))?;
        }
        Ok(())
    }
}

pub(super) fn canonical_i64(text: &str) -> Option<i64> {
    let n: i64 = text.parse().ok()?;
    (itoa::Buffer::new().format(n) == text).then_some(n)
}

pub(super) fn canonical_u64(text: &str) -> Option<u64> {
    let n: u64 = text.parse().ok()?;
    (itoa::Buffer::new().format(n) == text).then_some(n)
}

/// Writes the thread file of a finished grammar to `out`, the events'
/// attribute lists copied from `spill`, the sequences' values written to
/// `dat` as their headers are (none held after): its loops numbered anew
/// without the dead ones (Pallas's own readers do not all follow id maps).
pub(super) fn thread_file<W: Write>(
    g: &mut Grammar,
    (id, archive, abi): (u32, u32, u8),
    (spill, dat): (&mut Spill, &mut Dat<W>),
    out: &mut dyn Write,
) -> Result<()> {
    let mut renumbered = Vec::with_capacity(g.loops.len());
    let mut live = Vec::new();
    for l in &g.loops {
        renumbered.push(live.len() as u32);
        live.extend(*l);
    }
    let tokens = |t: &[u32]| -> Vec<u32> {
        t.iter()
            .map(|&t| match token(t) {
                Some((TokenKind::Loop, l)) => make_token(TokenKind::Loop, renumbered[l as usize]),
                _ => t,
            })
            .collect()
    };
    let mut o = LeBytes::default();
    o.u32(id);
    o.u32(archive);
    o.len(g.events.len());
    o.len(g.sequences.len());
    o.len(live.len());
    o.u32(0);
    o.u64(g.first.unwrap_or(0));
    let write = |o: &mut LeBytes, out: &mut dyn Write| {
        out.write_all(&o.0)
            .map_err(|e| Error::io("thread.pallas".to_string(), e))?;
        o.0.clear();
        Ok::<(), Error>(())
    };
    for e in &g.events {
        layout::event_record(&mut o, abi, e.key.record, e.key.payload());
        o.u64(e.attributes.len());
        write(&mut o, out)?;
        spill.copy(&e.attributes, out)?;
        e.timestamps.timestamps_header(&mut o, abi);
    }
    let identity = |n: usize| (0..n as u32).collect::<Vec<u32>>();
    layout::id_map(&mut o, &identity(g.events.len()));
    for s in &mut g.sequences {
        let block = s.tokens.first().is_some_and(|&t| {
            matches!(token(t), Some((TokenKind::Event, e))
                if RecordId::from_number(g.events[e as usize].key.record)
                    == Some(RecordId::Enter))
        });
        layout::sequence_tokens(&mut o, u32::from(!block), &tokens(&s.tokens));
        if s.tokens.is_empty() {
            // An empty sequence (the root of a thread of no events) has
            // no vectors.
            continue;
        }
        let [start, duration, exclusive] = &*s.values.written(dat)?;
        duration.durations_header(&mut o, abi);
        exclusive.durations_header(&mut o, abi);
        start.timestamps_header(&mut o, abi);
        write(&mut o, out)?;
    }
    layout::id_map(&mut o, &identity(g.sequences.len()));
    for (body, iterations, occurrences) in &live {
        layout::loop_entry(&mut o, abi, *body, *iterations, *occurrences);
    }
    layout::id_map(&mut o, &identity(live.len()));
    write(&mut o, out)
}
