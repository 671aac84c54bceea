//! Each trace event as rows (docs/formats.md, "Chrome trace JSON"), handed
//! to the sorter with the key it sorts at, and the processes and threads
//! the metadata events name.

use crate::error::{Error, Result};
use crate::exec::spill::Sorter;
use crate::fasthash::FastMap;
use crate::model::record::{encode_attr_part, flags, Kind, Record, Sym};
use crate::model::symbol::{SymCache, Symbols};

use super::event::{id2_text, micros_to_ns, text, Fields};

/// Categories of the events Kineto writes on GPU streams.
const GPU_CATS: &[&str] = &["kernel", "gpu_memcpy", "gpu_memset"];
/// The argument that makes a GPU kernel a collective (PyTorch's NCCL
/// kernels), and the one naming its process group.
const COLLECTIVE_ARG: &str = "Collective name";
const GROUP_ARG: &str = "Process Group Name";

/// A process or thread the events name.
#[derive(Debug)]
pub(super) struct ProcessOrThread {
    /// Its location as read (`PID` or `PID/TID`).
    pub loc: Sym,
    /// Its process's index (its own for a process).
    pub process: usize,
    pub is_thread: bool,
    pub name: Option<String>,
    pub sort_index: Option<i64>,
    /// Other metadata, as attributes.
    pub attrs: String,
    /// Whether GPU work (kernels, copies) ran on it.
    pub gpu: bool,
}

/// An async span open: where, since when, what.
struct OpenSpan {
    start: i64,
    loc: Sym,
    name: Sym,
    cat: Sym,
    attrs: String,
    mark: u64,
}

/// Turns events into rows.
pub(super) struct EventMapper {
    syms: SymCache,
    pub places: Vec<ProcessOrThread>,
    by_ids: FastMap<(Sym, Sym), usize>,
    /// Async spans open, by scope, category and id (innermost last).
    open: FastMap<(Sym, Sym, String), Vec<OpenSpan>>,
    rec: Record,
    /// The latest time read (where async spans left open end).
    pub last_time: i64,
    /// Events of phases with no row kind of their own, by phase.
    pub other_phases: FastMap<String, u64>,
    /// A counter series' name, built here.
    name_buf: String,
}

/// The sort key of a frame's start: after other rows at its time, longer
/// frames first (so a parent enters before the child written before it).
fn frame_rank(end: i64) -> i64 {
    end.checked_neg().unwrap_or(i64::MAX)
}

/// What a row sorts at: its completion time, then a rank.
pub(super) fn sort_key(rec: &Record) -> (i64, i64) {
    let time = rec.time.unwrap_or(0);
    match rec.kind {
        // A frame (an `X`) waiting to become `enter` and `leave`.
        Kind::State => (time, frame_rank(rec.end.unwrap_or(time))),
        Kind::Claim | Kind::Coll => (rec.end.unwrap_or(time).max(time), i64::MIN),
        _ => (time, i64::MIN),
    }
}

impl EventMapper {
    pub(super) fn new(symbols: Symbols) -> EventMapper {
        EventMapper {
            syms: SymCache::new(symbols),
            places: Vec::new(),
            by_ids: FastMap::default(),
            open: FastMap::default(),
            rec: Record::default(),
            last_time: i64::MIN,
            other_phases: FastMap::default(),
            name_buf: String::new(),
        }
    }

    /// The place of `pid` (and `tid`, when given), made when first named.
    fn place(&mut self, pid: &str, tid: Option<&str>) -> usize {
        let p = self.syms.intern(pid);
        let process = self.place_of(p, Sym::EMPTY, pid);
        let Some(tid) = tid else {
            return process;
        };
        let t = self.syms.intern(tid);
        if let Some(&i) = self.by_ids.get(&(p, t)) {
            return i;
        }
        let i = self.place_of(p, t, &format!("{pid}/{tid}"));
        self.places[i].process = process;
        i
    }

    fn place_of(&mut self, p: Sym, t: Sym, loc: &str) -> usize {
        if let Some(&i) = self.by_ids.get(&(p, t)) {
            return i;
        }
        let i = self.places.len();
        self.places.push(ProcessOrThread {
            loc: self.syms.intern(loc),
            process: i,
            is_thread: !t.is_empty(),
            name: None,
            sort_index: None,
            attrs: String::new(),
            gpu: false,
        });
        self.by_ids.insert((p, t), i);
        i
    }

    /// Maps the event whose text is `event` (fields in `f`), read at
    /// `mark`, into `out`. An error says what is wrong with it.
    pub(super) fn map(
        &mut self,
        f: &Fields,
        event: &str,
        mark: u64,
        out: &mut Sorter,
    ) -> Result<()> {
        // Each field's text: a whole JSON value, so on character boundaries.
        let field = |r: &Option<std::ops::Range<usize>>| r.clone().map(|r| &event[r]);
        let ph = field(&f.ph)
            .map(text)
            .ok_or_else(|| bad("an event has no `ph` (phase)"))?;
        let pid = field(&f.pid).map(text);
        let tid = field(&f.tid).map(text);
        let (pid, tid) = (pid.as_deref().unwrap_or(""), tid.as_deref());
        if ph == "M" {
            return self.metadata(f, event, pid, tid);
        }
        let time = match field(&f.ts) {
            Some(ts) => {
                micros_to_ns(ts).ok_or_else(|| bad(format!("`ts` is not a time in µs: {ts}")))?
            }
            None => return Err(bad("an event has no `ts`")),
        };
        self.last_time = self.last_time.max(time);
        let scope = field(&f.s).map(text);
        let place = match (ph.as_ref(), scope.as_deref()) {
            (_, Some("g")) if matches!(ph.as_ref(), "i" | "I") => None,
            ("C" | "b" | "n" | "e" | "S" | "T" | "p" | "F", _) | (_, Some("p")) => {
                Some(self.place(pid, None))
            }
            _ => Some(self.place(pid, tid)),
        };
        let cat = field(&f.cat).map(text).unwrap_or_default();
        if let Some(i) = place {
            self.places[i].gpu |= GPU_CATS.contains(&cat.as_ref());
        }
        let rec = &mut self.rec;
        rec.clear();
        rec.time = Some(time);
        rec.loc = place.map_or(Sym::EMPTY, |i| self.places[i].loc);
        rec.cat = self.syms.intern(&cat);
        rec.name = self
            .syms
            .intern(&field(&f.name).map(text).unwrap_or_default());
        for (k, v) in &f.args {
            self.rec
                .push_attr(&text(&event[k.clone()]), &text(&event[v.clone()]));
        }
        for (key, value) in [("s", &f.s), ("bp", &f.bp), ("scope", &f.scope)] {
            if let Some(v) = field(value) {
                self.rec.push_attr(key, &text(v));
            }
        }
        for (k, v) in &f.other {
            let key = text(&event[k.clone()]).into_owned();
            let value = &event[v.clone()];
            self.rec.push_attr(&key, &text(value));
        }
        let id = field(&f.id)
            .map(|t| text(t).into_owned())
            .or_else(|| field(&f.id2).map(id2_text));
        self.phase(&ph, f, event, id, mark, out)
    }

    /// The rows of an event of phase `ph` whose common columns are set.
    fn phase(
        &mut self,
        ph: &str,
        f: &Fields,
        event: &str,
        id: Option<String>,
        mark: u64,
        out: &mut Sorter,
    ) -> Result<()> {
        let time = self.rec.time.unwrap_or(0);
        let rec = &mut self.rec;
        match ph {
            "B" => rec.kind = Kind::Enter,
            "E" => {
                rec.kind = Kind::Leave;
                rec.cat = Sym::EMPTY;
            }
            "X" => {
                let dur = match &f.dur {
                    Some(r) => {
                        let raw = &event[r.clone()];
                        micros_to_ns(raw)
                            .ok_or_else(|| bad(format!("`dur` is not a time in µs: {raw}")))?
                    }
                    None => 0,
                };
                rec.kind = Kind::State;
                let end = time.saturating_add(dur.max(0));
                rec.end = Some(end);
                self.last_time = self.last_time.max(end);
                self.collective(mark, out)?;
            }
            "i" | "I" | "R" => rec.kind = Kind::Event,
            "C" => return self.counters(mark, id, out),
            "s" | "f" => {
                rec.kind = if ph == "s" { Kind::Send } else { Kind::Recv };
                rec.id = id.ok_or_else(|| bad("a flow event has no `id`"))?;
                return push(out, mark, &self.rec);
            }
            "b" | "e" | "S" | "F" => return self.async_span(ph, id, mark, out),
            // Steps of flows and async spans: instants that say so.
            "t" | "n" | "T" | "p" => {
                rec.kind = Kind::Event;
                rec.push_attr("ph", ph);
            }
            _ => {
                *self.other_phases.entry(ph.to_string()).or_default() += 1;
                rec.kind = Kind::Event;
                rec.push_attr("ph", ph);
            }
        }
        let rec = &mut self.rec;
        if let (Kind::Event, Some(id)) = (rec.kind, id) {
            rec.id = id;
        }
        push(out, mark, &self.rec)
    }

    /// A GPU kernel that is a collective (an NCCL kernel with PyTorch's
    /// arguments) is also a `coll` row.
    fn collective(&mut self, mark: u64, out: &mut Sorter) -> Result<()> {
        let Some(op) = self.rec.attr(COLLECTIVE_ARG) else {
            return Ok(());
        };
        let mut coll = self.rec.clone();
        coll.kind = Kind::Coll;
        coll.cat = self.syms.intern("NCCL");
        coll.name = self.syms.intern(&op);
        coll.comm = self
            .syms
            .intern(&self.rec.attr(GROUP_ARG).unwrap_or_default());
        push(out, mark, &coll)
    }

    /// A `C` event: one `counter` row per series (`NAME` for a series
    /// called `value`, else `NAME.SERIES`).
    fn counters(&mut self, mark: u64, id: Option<String>, out: &mut Sorter) -> Result<()> {
        // The series are the attributes: taken out, read, and the buffer
        // given back, so a sample costs no allocation once names are known.
        let series = Record {
            attrs: std::mem::take(&mut self.rec.attrs),
            ..Record::default()
        };
        let mut name = std::mem::take(&mut self.name_buf);
        name.clear();
        name.push_str(self.syms.symbols().text(self.rec.name));
        if let Some(id) = id {
            name.push('[');
            name.push_str(&id);
            name.push(']');
        }
        let base = name.len();
        self.rec.kind = Kind::Counter;
        let mut result = Ok(());
        for (key, value) in series.attrs() {
            name.truncate(base);
            if key != "value" {
                name.push('.');
                name.push_str(&key);
            }
            self.rec.name = self.syms.intern(&name);
            self.rec.value.clear();
            self.rec.value.push_str(&value);
            result = push(out, mark, &self.rec);
            if result.is_err() {
                break;
            }
        }
        self.name_buf = name;
        self.rec.attrs = series.attrs;
        self.rec.attrs.clear();
        result
    }

    /// Async events: `b`/`e` (nestable, by process, category and id) and
    /// legacy `S`/`F` (by category and id, across processes) make one
    /// `claim` row from begin to end on the process of the begin.
    fn async_span(
        &mut self,
        ph: &str,
        id: Option<String>,
        mark: u64,
        out: &mut Sorter,
    ) -> Result<()> {
        let id = id.ok_or_else(|| bad("an async event has no `id`"))?;
        let global = matches!(ph, "S" | "F") || id.starts_with("global:");
        let scope = if global { Sym::EMPTY } else { self.rec.loc };
        let key = (scope, self.rec.cat, id);
        let rec = &mut self.rec;
        if matches!(ph, "b" | "S") {
            let span = OpenSpan {
                start: rec.time.unwrap_or(0),
                loc: rec.loc,
                name: rec.name,
                cat: rec.cat,
                attrs: std::mem::take(&mut rec.attrs),
                mark,
            };
            self.open.entry(key).or_default().push(span);
            return Ok(());
        }
        let end = rec.time.unwrap_or(0);
        let Some(span) = self.open.get_mut(&key).and_then(Vec::pop) else {
            // An end with no begin: kept as an instant.
            rec.kind = Kind::Event;
            rec.id = key.2;
            rec.push_attr("ph", ph);
            return push(out, mark, &self.rec);
        };
        let extra = std::mem::take(&mut rec.attrs);
        let claim = self.claim(span, end, &key.2, &extra, "");
        push(out, mark, &claim)
    }

    fn claim(&self, span: OpenSpan, end: i64, id: &str, extra: &str, flag: &str) -> Record {
        let mut rec = Record::new(Kind::Claim);
        rec.time = Some(span.start);
        rec.end = Some(end.max(span.start));
        rec.loc = span.loc;
        rec.cat = span.cat;
        rec.name = span.name;
        rec.id.push_str(id);
        rec.attrs = span.attrs;
        if !extra.is_empty() {
            if !rec.attrs.is_empty() {
                rec.attrs.push(';');
            }
            rec.attrs.push_str(extra);
        }
        rec.flags.push_str(flag);
        rec
    }

    /// Async spans still open at the end: claims to the last time, flagged
    /// clipped. Returns how many.
    pub(super) fn close_open(&mut self, out: &mut Sorter) -> Result<u64> {
        let mut open: Vec<((Sym, Sym, String), OpenSpan)> = Vec::new();
        for (key, spans) in self.open.drain() {
            open.extend(spans.into_iter().map(|s| (key.clone(), s)));
        }
        open.sort_by_key(|(_, s)| s.mark);
        let count = open.len() as u64;
        let last = self.last_time;
        for (key, span) in open {
            let mark = span.mark;
            let claim = self.claim(span, last, &key.2, "", &flags::CLIPPED.to_string());
            let (k, rank) = sort_key(&claim);
            out.push(k, rank, mark, &claim)?;
        }
        Ok(count)
    }

    /// A metadata event: names and sort indexes of processes and threads,
    /// other metadata kept as attributes of its process or thread.
    fn metadata(&mut self, f: &Fields, event: &str, pid: &str, tid: Option<&str>) -> Result<()> {
        let field = |r: &Option<std::ops::Range<usize>>| r.clone().map(|r| &event[r]);
        let what = field(&f.name).map(text).unwrap_or_default();
        let thread = what.starts_with("thread_");
        let i = self.place(pid, if thread { tid } else { None });
        let mut args = Vec::new();
        for (k, v) in &f.args {
            args.push((
                text(&event[k.clone()]).into_owned(),
                text(&event[v.clone()]).into_owned(),
            ));
        }
        let arg = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let place = &mut self.places[i];
        match what.as_ref() {
            "process_name" | "thread_name" => place.name = arg("name"),
            "process_sort_index" | "thread_sort_index" => {
                place.sort_index = arg("sort_index").and_then(|v| v.parse().ok());
            }
            _ => {
                for (k, v) in args {
                    if !place.attrs.is_empty() {
                        place.attrs.push(';');
                    }
                    encode_attr_part(&format!("{what}.{k}"), &mut place.attrs);
                    place.attrs.push('=');
                    encode_attr_part(&v, &mut place.attrs);
                }
            }
        }
        Ok(())
    }
}

/// Hands `rec` to the sorter at its key.
fn push(out: &mut Sorter, mark: u64, rec: &Record) -> Result<()> {
    let (key, rank) = sort_key(rec);
    out.push(key, rank, mark, rec)
}

/// An error about the event being mapped (the reader adds where it is).
fn bad(msg: impl Into<String>) -> Error {
    Error::Record(msg.into())
}
