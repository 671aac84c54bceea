//! `-f paraver`: a `.prv` read line by line. Its records are sorted by
//! their first time, and the stream's rows by their completion, so a
//! state or a message waits in a small heap until the file's time passes
//! its end: memory holds what is open or in flight, never the trace.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt::Write as _;
use std::io::BufRead;

use super::header::Header;
use super::names::{parse_value, parse_whole, Pcf, RowNames, TypeRole};
use super::{
    companions, ATTR_LOGICAL_RECV, ATTR_PHYSICAL_RECV, ATTR_PHYSICAL_SEND, ATTR_STATE, ATTR_TYPE,
    ATTR_VALUE,
};
use crate::error::{Error, Location, Result};
use crate::fasthash::FastMap;
use crate::io::{Input, LineReader};
use crate::model::nesting::{cross, Crossings};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{ReadOptions, RecordSource};

/// Registry constructor.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    Ok(Box::new(ParaverReader::open(&name, reader, opts)?))
}

/// A frame open on a thread: the event type that opened it, its name and
/// category.
#[derive(Clone, Copy)]
struct TypedFrame {
    event_type: u64,
    name: Sym,
    cat: Sym,
}

/// A thread of the trace: its location, its lane for states (declared
/// at its first state) and its open frames, outermost first.
struct Thread {
    loc: Sym,
    /// Its application and task, from 1.
    task: [u32; 2],
    lane: Sym,
    lane_declared: bool,
    frames: Vec<TypedFrame>,
}

/// An event type as rows name it.
struct TypeNames {
    role: TypeRole,
    label: Sym,
    values: FastMap<i128, Sym>,
}

/// A communicator line (`c:APPL:ID:N:TASKS`): its application, its
/// identifier and its tasks (from 1, sorted).
struct Communicator {
    application: u32,
    id: Sym,
    tasks: Vec<u32>,
}

/// Rows waiting for the file's time to pass their completion.
#[derive(Default)]
struct Waiting {
    rows: Vec<(Record, u64)>,
    free: Vec<usize>,
    /// (completion, arrival, slot), least first.
    heap: BinaryHeap<Reverse<(i64, u64, usize)>>,
    arrivals: u64,
}

impl Waiting {
    fn push(&mut self, rec: Record, key: i64, mark: u64) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.rows[s] = (rec, mark);
                s
            }
            None => {
                self.rows.push((rec, mark));
                self.rows.len() - 1
            }
        };
        self.arrivals += 1;
        self.heap.push(Reverse((key, self.arrivals, slot)));
    }

    /// The least row completing at `limit` or before, into `rec`; its mark.
    fn pop(&mut self, limit: i64, rec: &mut Record) -> Option<u64> {
        let &Reverse((key, _, slot)) = self.heap.peek()?;
        if key > limit {
            return None;
        }
        self.heap.pop();
        self.free.push(slot);
        let (row, mark) = &mut self.rows[slot];
        std::mem::swap(rec, row);
        Some(*mark)
    }
}

/// Reads a Paraver trace.
pub struct ParaverReader {
    name: String,
    lines: LineReader<Box<dyn BufRead>>,
    symbols: Symbols,
    header: Header,
    threads: Vec<Thread>,
    /// Per application and task: the global index of its first thread.
    first_thread: Vec<Vec<usize>>,
    communicators: Vec<Communicator>,
    pcf: Pcf,
    types: FastMap<u64, TypeNames>,
    prelude: VecDeque<Record>,
    waiting: Waiting,
    /// Rows of completion up to this time may go: no later record can
    /// complete before it.
    released_to: i64,
    /// The time of the record read last.
    read_to: i64,
    /// The mark (line) of the row handed out last.
    line: u64,
    state_cat: Sym,
    crossings: Crossings,
    global_records: u64,
    opts_warnings: crate::error::Warnings,
    ended: bool,
    /// The line being read.
    text: String,
    /// The pairs of the event record being read.
    pairs: Vec<(u64, i128)>,
}

impl ParaverReader {
    /// Reads the header, the communicator lines and the names beside
    /// `name`; rows then come as the records are read.
    pub fn open(name: &str, input: Box<dyn BufRead>, opts: &ReadOptions) -> Result<ParaverReader> {
        let mut lines = LineReader::new(name, input);
        let header = loop {
            let Some(line) = lines.next_located()? else {
                return Err(Error::line(
                    name,
                    1,
                    "expected the Paraver header, found an empty file",
                ));
            };
            let text = String::from_utf8_lossy(line.text).into_owned();
            if text == "new format" {
                continue;
            }
            break Header::parse(&text).map_err(|e| Error::line(name, line.number, e))?;
        };
        let (pcf_path, row_path) = companions(name);
        let pcf = match std::fs::read_to_string(&pcf_path) {
            Ok(text) => Pcf::parse(&text).map_err(|(line, e)| Error::line(&pcf_path, line, e))?,
            Err(_) => {
                opts.warnings.warn(format!(
                    "{name}: no {pcf_path} beside it: states and event types are named by number, every event type read as an event"
                ));
                Pcf::default()
            }
        };
        let rows = match std::fs::read_to_string(&row_path) {
            Ok(text) => {
                RowNames::parse(&text).map_err(|(line, e)| Error::line(&row_path, line, e))?
            }
            Err(_) => RowNames::default(),
        };
        let symbols = opts.symbols.clone();
        let mut reader = ParaverReader {
            name: name.to_string(),
            lines,
            state_cat: symbols.intern("state"),
            symbols,
            threads: Vec::new(),
            first_thread: Vec::new(),
            communicators: Vec::new(),
            types: FastMap::default(),
            prelude: VecDeque::new(),
            waiting: Waiting::default(),
            released_to: i64::MIN,
            read_to: i64::MIN,
            line: 1,
            crossings: Crossings::default(),
            global_records: 0,
            opts_warnings: opts.warnings.clone(),
            ended: false,
            text: String::new(),
            pairs: Vec::new(),
            pcf,
            header,
        };
        reader.declare(&rows);
        Ok(reader)
    }

    /// The meta rows and the containers: nodes, tasks and threads.
    fn declare(&mut self, rows: &RowNames) {
        let s = self.symbols.clone();
        let h = &self.header;
        let meta = [
            ("source_format", "paraver".to_string()),
            ("source", self.name.clone()),
            ("time_unit", h.unit_name().to_string()),
            ("paraver.date", h.date.clone()),
        ];
        for (key, value) in meta {
            self.prelude.push_back(Record::meta(s.intern(key), &value));
        }
        let container = |loc: &str, cat: &str, name: String, peer: Sym| {
            let mut rec = Record::new(Kind::Container);
            rec.loc = s.intern(loc);
            rec.cat = s.intern(cat);
            rec.name = s.intern(&name);
            rec.peer = peer;
            rec
        };
        let node_loc = |n: u32| format!("node{n}");
        for n in 1..=h.nodes.len() as u32 {
            let name = rows
                .name("NODE", n as usize - 1)
                .map_or_else(|| format!("node {n}"), str::to_string);
            let rec = container(&node_loc(n), "node", name, Sym::EMPTY);
            self.prelude.push_back(rec);
        }
        let mut global_task = 0;
        for (a, tasks) in h.applications.iter().enumerate() {
            let mut firsts = Vec::new();
            for (t, task) in tasks.iter().enumerate() {
                let loc = format!("{}.{}", a + 1, t + 1);
                let name = rows
                    .name("TASK", global_task)
                    .map_or_else(|| format!("TASK {loc}"), str::to_string);
                let node = match task.node {
                    n if n == 0 || h.nodes.is_empty() => Sym::EMPTY,
                    n => s.intern(&node_loc(n)),
                };
                let process = container(&loc, "process", name, node);
                let task_sym = process.loc;
                self.prelude.push_back(process);
                firsts.push(self.threads.len());
                for th in 1..=task.threads {
                    let loc = format!("{loc}.{th}");
                    let name = rows
                        .name("THREAD", self.threads.len())
                        .map_or_else(|| format!("THREAD {loc}"), str::to_string);
                    let thread = container(&loc, "thread", name, task_sym);
                    self.threads.push(Thread {
                        loc: thread.loc,
                        task: [a as u32 + 1, t as u32 + 1],
                        lane: s.intern(&format!("{loc}/state")),
                        lane_declared: false,
                        frames: Vec::new(),
                    });
                    self.prelude.push_back(thread);
                }
                global_task += 1;
            }
            self.first_thread.push(firsts);
        }
    }
}

/// A record's `:`-separated fields, read in order.
struct Fields<'a> {
    /// What follows the fields read; none after the last.
    rest: Option<&'a str>,
}

impl<'a> Fields<'a> {
    fn of(record: &'a str) -> Fields<'a> {
        Fields { rest: Some(record) }
    }

    /// The next field, if any (a plain byte scan: fields are short).
    fn next_part(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.bytes().position(|b| b == b':') {
            Some(i) => {
                self.rest = Some(&rest[i + 1..]);
                Some(&rest[..i])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }

    fn next(&mut self, what: &str) -> std::result::Result<&'a str, String> {
        self.next_part()
            .ok_or_else(|| format!("expected the {what}, found the end of the record"))
    }

    fn number(&mut self, what: &str) -> std::result::Result<u64, String> {
        let field = self.next(what)?;
        parse_whole(field)
            .ok_or_else(|| format!("expected the {what} as a whole number, found `{field}`"))
    }

    /// `CPU:APPL:TASK:THREAD`: the thread's global index (the CPU is not
    /// kept: the stream's locations are threads).
    fn thread(&mut self, r: &ParaverReader) -> std::result::Result<usize, String> {
        let _cpu = self.number("CPU")?;
        let (a, t, th) = (
            self.number("application")?,
            self.number("task")?,
            self.number("thread")?,
        );
        let found = (a.checked_sub(1), t.checked_sub(1));
        let task = |(a, t): (u64, u64)| {
            let tasks = r.header.applications.get(a as usize)?;
            Some((
                tasks.get(t as usize)?.threads,
                r.first_thread[a as usize][t as usize],
            ))
        };
        let Some((threads, first)) = found.0.zip(found.1).and_then(task) else {
            return Err(format!("no task {a}.{t} in the header"));
        };
        match th {
            1.. if th <= u64::from(threads) => Ok(first + th as usize - 1),
            _ => Err(format!(
                "no thread {a}.{t}.{th} in the header ({threads} in task {a}.{t})"
            )),
        }
    }
}

impl ParaverReader {
    /// A time in the header's unit as stream nanoseconds.
    fn ns(&self, ticks: u64) -> std::result::Result<i64, String> {
        i64::try_from(ticks)
            .ok()
            .and_then(|t| t.checked_mul(self.header.ns_per_unit))
            .ok_or_else(|| format!("time {ticks} does not fit in signed 64-bit nanoseconds"))
    }

    /// Reads one line into waiting rows; false at the end of the file.
    fn read_line(&mut self) -> Result<bool> {
        let Some(line) = self.lines.next_located()? else {
            return Ok(false);
        };
        let number = line.number;
        let text = std::str::from_utf8(line.text)
            .map_err(|_| Error::line(&self.name, number, "not UTF-8 text"))?;
        // The line is copied into a buffer kept between lines: the records
        // need the reader while they read it.
        let mut buffer = std::mem::take(&mut self.text);
        buffer.clear();
        buffer.push_str(text);
        let read = self.record(&buffer, number);
        self.text = buffer;
        read.map_err(|e| Error::line(&self.name, number, e))?;
        Ok(true)
    }

    /// One line of the body.
    fn record(&mut self, text: &str, line: u64) -> std::result::Result<(), String> {
        let text = text.trim_end_matches('\r');
        let mut fields = Fields::of(text);
        match fields.next("record type")? {
            "" if text.is_empty() => Ok(()),
            t if t.starts_with('#') => Ok(()),
            "c" | "C" => self.communicator(&mut fields),
            "i" | "I" => Ok(()),
            "1" => self.state(&mut fields, line),
            "2" => self.events(&mut fields, line),
            "3" => self.communication(&mut fields, line),
            "4" => {
                self.global_records += 1;
                Ok(())
            }
            other => Err(format!(
                "expected a record type (1 state, 2 events, 3 communication, 4 global, c communicator, # comment), found `{other}`"
            )),
        }
    }

    /// Checks `time` against the records read before (sorted by time) and
    /// lets what completes before it go.
    fn advance(&mut self, time: i64) -> std::result::Result<(), String> {
        if time < self.released_to {
            return Err(format!(
                "record at {time} ns, before rows already complete at {} ns: Paraver records are sorted by time",
                self.released_to
            ));
        }
        self.read_to = self.read_to.max(time);
        Ok(())
    }

    /// `c:APPL:ID:N:TASK...`.
    fn communicator(&mut self, fields: &mut Fields) -> std::result::Result<(), String> {
        let application = fields.number("application of the communicator")? as u32;
        let id = fields.next("communicator id")?;
        let count = fields.number("number of tasks of the communicator")?;
        let mut tasks = Vec::new();
        for _ in 0..count {
            tasks.push(fields.number("task of the communicator")? as u32);
        }
        tasks.sort_unstable();
        let id = self.symbols.intern(id);
        self.communicators.push(Communicator {
            application,
            id,
            tasks,
        });
        Ok(())
    }

    /// `1:CPU:APPL:TASK:THREAD:BEGIN:END:STATE`: a `state` on the thread's
    /// lane, its end the trace's when it is -1 (still open).
    fn state(&mut self, fields: &mut Fields, line: u64) -> std::result::Result<(), String> {
        let thread = fields.thread(self)?;
        let begin = self.ns(fields.number("begin time")?)?;
        let end = match fields.next("end time")? {
            "-1" => self.ns(self.header.end)?.max(begin),
            end => self.ns(end
                .parse()
                .map_err(|_| format!("expected the end time, found `{end}`"))?)?,
        };
        let state = fields.number("state")?;
        if end < begin {
            return Err(format!(
                "a state that ends ({end}) before it begins ({begin})"
            ));
        }
        self.advance(begin)?;
        let t = &mut self.threads[thread];
        if !t.lane_declared {
            t.lane_declared = true;
            let mut lane = Record::new(Kind::Container);
            (lane.loc, lane.cat, lane.peer) = (t.lane, well_known::LANE, t.loc);
            lane.name = self.state_cat;
            self.waiting.push(lane, begin, line);
        }
        let mut rec = Record::new(Kind::State);
        (rec.time, rec.end, rec.loc, rec.depth) =
            (Some(begin), Some(end), self.threads[thread].lane, Some(0));
        rec.cat = self.state_cat;
        rec.name = match self.pcf.state(state) {
            Some(label) => self.symbols.intern(label),
            None => self.symbols.intern(&format!("state {state}")),
        };
        rec.push_number_attr(ATTR_STATE, state);
        self.waiting.push(rec, end, line);
        Ok(())
    }
}

impl ParaverReader {
    /// The names of event type `number`, made from the `.pcf` once.
    fn type_names(&mut self, number: u64) -> &TypeNames {
        let (symbols, pcf) = (&self.symbols, &self.pcf);
        self.types
            .entry(number)
            .or_insert_with(|| match pcf.types.get(&number) {
                Some(t) => TypeNames {
                    role: t.role(number),
                    label: symbols.intern(if t.label.is_empty() { "type" } else { &t.label }),
                    values: t
                        .values
                        .iter()
                        .map(|(&v, l)| (v, symbols.intern(l)))
                        .collect(),
                },
                None => TypeNames {
                    role: TypeRole::Enumeration,
                    label: symbols.intern(&format!("type {number}")),
                    values: FastMap::default(),
                },
            })
    }

    /// `2:CPU:APPL:TASK:THREAD:TIME:TYPE:VALUE[:TYPE:VALUE...]`: each pair
    /// one row. Frames are left first (innermost first), then entered
    /// and the rest given, in the record's order.
    fn events(&mut self, fields: &mut Fields, line: u64) -> std::result::Result<(), String> {
        let thread = fields.thread(self)?;
        let time = self.ns(fields.number("time")?)?;
        self.advance(time)?;
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.clear();
        while let Some(event_type) = fields.next_part() {
            let event_type = parse_whole(event_type)
                .ok_or_else(|| format!("expected an event type, found `{event_type}`"))?;
            let value = fields.next("event value")?;
            let number = parse_value(value)
                .ok_or_else(|| format!("expected an event value, found `{value}`"))?;
            pairs.push((event_type, number));
        }
        if pairs.is_empty() {
            return Err("an event record with no TYPE:VALUE pair".into());
        }
        for &(event_type, value) in pairs.iter().rev() {
            let stack = self.type_names(event_type).role == TypeRole::Stack;
            let open = self.threads[thread]
                .frames
                .iter()
                .any(|f| f.event_type == event_type);
            if stack && open {
                self.leave(thread, (event_type, value), time, line);
            } else if stack && value == 0 {
                // Nothing of this type open: kept as an event.
                self.instant(Kind::Event, thread, (event_type, value), time, line);
            }
        }
        for &(event_type, value) in &pairs {
            match self.type_names(event_type).role {
                TypeRole::Stack if value != 0 => {
                    self.enter(thread, (event_type, value), time, line)
                }
                TypeRole::Stack => {}
                TypeRole::Quantity => {
                    self.instant(Kind::Counter, thread, (event_type, value), time, line)
                }
                TypeRole::Enumeration => {
                    self.instant(Kind::Event, thread, (event_type, value), time, line)
                }
            }
        }
        self.pairs = pairs;
        Ok(())
    }

    /// A value's label, or its number.
    fn value_name(&mut self, event_type: u64, value: i128) -> Sym {
        match self.type_names(event_type).values.get(&value) {
            Some(&label) => label,
            None => self.symbols.intern(&value.to_string()),
        }
    }

    /// An `event` or a `counter` row for a pair.
    fn instant(
        &mut self,
        kind: Kind,
        thread: usize,
        (event_type, value): (u64, i128),
        time: i64,
        line: u64,
    ) {
        let mut rec = Record::new(kind);
        (rec.time, rec.loc) = (Some(time), self.threads[thread].loc);
        rec.name = self.type_names(event_type).label;
        if kind == Kind::Event {
            let label = self.value_name(event_type, value);
            rec.value.push_str(self.symbols.text(label));
        } else {
            let _ = write!(rec.value, "{value}");
        }
        rec.push_number_attr(ATTR_TYPE, event_type);
        if kind == Kind::Event {
            rec.push_number_attr(ATTR_VALUE, value);
        }
        self.waiting.push(rec, time, line);
    }

    /// An `enter` of the frame a pair opens.
    fn enter(&mut self, thread: usize, (event_type, value): (u64, i128), time: i64, line: u64) {
        let name = self.value_name(event_type, value);
        let cat = self.type_names(event_type).label;
        let t = &mut self.threads[thread];
        let mut rec = Record::new(Kind::Enter);
        (rec.time, rec.loc, rec.name, rec.cat) = (Some(time), t.loc, name, cat);
        rec.depth = Some(t.frames.len() as u32);
        rec.push_number_attr(ATTR_TYPE, event_type);
        rec.push_number_attr(ATTR_VALUE, value);
        t.frames.push(TypedFrame {
            event_type,
            name,
            cat,
        });
        self.waiting.push(rec, time, line);
    }

    /// A `leave` of the frame `event_type` opened: frames above it, of
    /// other types, are left and entered again around it (the stream's
    /// rule for frames that do not nest, `model::nesting`). The `leave` of a pair of value 0 carries the pair; one that a new
    /// value causes does not (its `enter` does).
    fn leave(&mut self, thread: usize, (event_type, value): (u64, i128), time: i64, line: u64) {
        let t = &mut self.threads[thread];
        let Some(at) = t.frames.iter().rposition(|f| f.event_type == event_type) else {
            return;
        };
        let frame = t.frames.remove(at);
        let mut rec = Record::new(Kind::Leave);
        (rec.time, rec.loc, rec.name, rec.cat) = (Some(time), t.loc, frame.name, frame.cat);
        rec.depth = Some(at as u32);
        if value == 0 {
            rec.push_number_attr(ATTR_TYPE, event_type);
            rec.push_attr(ATTR_VALUE, "0");
        }
        if at == t.frames.len() {
            self.waiting.push(rec, time, line);
            return;
        }
        let above: Vec<(Sym, Sym)> = t.frames[at..].iter().map(|f| (f.name, f.cat)).collect();
        let loc = t.loc;
        let mut rows = VecDeque::new();
        cross(rec, &above, &self.symbols, &mut rows);
        let (name, symbols) = (&self.name, &self.symbols);
        self.crossings
            .note(true, time, symbols.text(loc), || Location::Line {
                file: name.clone(),
                line,
            });
        for row in rows {
            self.waiting.push(row, time, line);
        }
    }

    /// `3:CPU:APPL:TASK:THREAD:LSEND:PSEND:CPU:APPL:TASK:THREAD:LRECV:PRECV:SIZE:TAG`:
    /// a `msg` from the logical send to the physical receive (the
    /// receive's end; no earlier than the send), the other two times in
    /// attributes, the communicator the first `c:` line of the sender's
    /// application holding both tasks.
    fn communication(&mut self, fields: &mut Fields, line: u64) -> std::result::Result<(), String> {
        let sender = fields.thread(self)?;
        let logical_send = self.ns(fields.number("logical send time")?)?;
        let physical_send = self.ns(fields.number("physical send time")?)?;
        let receiver = fields.thread(self)?;
        let logical_recv = self.ns(fields.number("logical receive time")?)?;
        let physical_recv = self.ns(fields.number("physical receive time")?)?;
        let size = fields.number("size")?;
        let tag = fields.next("tag")?;
        let tag: i64 = tag
            .parse()
            .map_err(|_| format!("expected the tag, found `{tag}`"))?;
        self.advance(logical_send)?;
        let mut rec = Record::new(Kind::Msg);
        rec.time = Some(logical_send);
        rec.end = Some(physical_recv.max(logical_send));
        (rec.loc, rec.peer) = (self.threads[sender].loc, self.threads[receiver].loc);
        (rec.size, rec.tag) = (Some(size), Some(tag));
        rec.comm = self.communicator_of(sender, receiver);
        rec.push_number_attr(ATTR_PHYSICAL_SEND, physical_send);
        rec.push_number_attr(ATTR_LOGICAL_RECV, logical_recv);
        if physical_recv < logical_send {
            rec.push_number_attr(ATTR_PHYSICAL_RECV, physical_recv);
        }
        let key = rec.end.unwrap_or(logical_send);
        self.waiting.push(rec, key, line);
        Ok(())
    }

    /// The first communicator of the sender's application that holds
    /// both threads' tasks.
    fn communicator_of(&self, sender: usize, receiver: usize) -> Sym {
        let ([a, s], [_, r]) = (self.threads[sender].task, self.threads[receiver].task);
        let holds = |c: &&Communicator| {
            c.application == a
                && c.tasks.binary_search(&s).is_ok()
                && c.tasks.binary_search(&r).is_ok()
        };
        self.communicators
            .iter()
            .find(holds)
            .map_or(Sym::EMPTY, |c| c.id)
    }
}

impl RecordSource for ParaverReader {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(row) = self.prelude.pop_front() {
            *rec = row;
            return Ok(true);
        }
        loop {
            if let Some(mark) = self.waiting.pop(self.released_to, rec) {
                self.line = mark;
                return Ok(true);
            }
            if self.ended {
                return Ok(false);
            }
            if self.read_line()? {
                // Rows completing before the latest record's time go.
                self.released_to = self.released_to.max(self.read_to);
            } else {
                self.ended = true;
                self.released_to = i64::MAX;
                self.crossings.report(&self.opts_warnings);
                if self.global_records > 0 {
                    self.opts_warnings.warn(format!(
                        "{}: {} global communication record(s) (type 4) left out: Paraver does not show them either",
                        self.name, self.global_records
                    ));
                }
            }
        }
    }

    fn mark(&self) -> u64 {
        self.line
    }

    fn locate(&self, line: u64) -> Location {
        Location::Line {
            file: self.name.clone(),
            line,
        }
    }
}
