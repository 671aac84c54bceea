//! `-t paraver -o X.prv`: the stream as a Paraver trace, `X.prv` with
//! `X.pcf` and `X.row` beside it. Message halves are paired first
//! (`stages::matcher`). Rows arrive in completion order and Paraver's
//! records go in order of their first time, so the records are sorted in
//! bounded memory (`exec::spill`) and written, after the header that
//! counts the threads, when the stream ends. `docs/formats.md`
//! ("Paraver") gives the mapping.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use super::extrae::{self, COLLECTIVE_TYPE};
use super::{
    companions, ATTR_LOGICAL_RECV, ATTR_PHYSICAL_RECV, ATTR_PHYSICAL_SEND, ATTR_STATE, ATTR_TYPE,
    ATTR_VALUE,
};
use crate::error::{Error, Result, Warnings};
use crate::exec::spill::Sorter;
use crate::fasthash::{FastMap, OrderedMap};
use crate::io::{open_output, Output};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{RecordSink, WriteOptions};
use crate::stages::matcher::{Matcher, Unmatched};

/// The files `-t paraver -o NAME` writes besides NAME.
pub fn written_paths(name: &str) -> Vec<PathBuf> {
    let (pcf, row) = companions(name);
    vec![PathBuf::from(pcf), PathBuf::from(row)]
}

/// Registry constructor: the writer behind the matcher.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    if out.name().starts_with('<') {
        return Err(Error::Usage(
            "a Paraver trace is three files (.prv, .pcf, .row): name the .prv with -o".into(),
        ));
    }
    let writer = ParaverWriter::new(out, opts);
    let symbols = opts.symbols.clone();
    let unmatched = Unmatched::Drop;
    Ok(Box::new(Matcher::new(
        writer,
        unmatched,
        symbols,
        opts.warnings.clone(),
    )))
}

/// Event types tracepipe gives rows that come with none: frames by
/// category and nesting level, counters and events by name.
const FIRST_FRAME_TYPE: u64 = 60_100_000;
const FIRST_COUNTER_TYPE: u64 = 90_000_000;
const FIRST_EVENT_TYPE: u64 = 95_000_000;
/// The label of Extrae's type of MPI collectives.
const COLLECTIVE_LABEL: &str = "MPI Collective Comm";
/// Collectives per thread an overlap is looked for among.
const KEPT_COLLECTIVES: usize = 64;
/// State numbers given to state names that come with none.
const FIRST_STATE: u64 = 1_000;

/// An event type written: its label, what it is, its values' labels.
#[derive(Default)]
struct WrittenType {
    label: String,
    stack: bool,
    counter: bool,
    values: OrderedMap<i128, String>,
}

/// A location declared by a `container` row.
struct Declared {
    cat: Sym,
    parent: Sym,
    name: Sym,
}

/// Writes a Paraver trace.
pub struct ParaverWriter {
    out: Output,
    symbols: Symbols,
    warnings: Warnings,
    sorter: Sorter,
    /// In declaration order.
    declared: OrderedMap<Sym, Declared>,
    /// The locations rows are written on (threads), in order of first use.
    threads: OrderedMap<Sym, ()>,
    /// Per thread: its open frames (type, category, read from a Paraver
    /// trace), outermost first.
    stacks: FastMap<Sym, Vec<(u64, Sym, bool)>>,
    types: OrderedMap<u64, WrittenType>,
    /// Types given by (category, level) for frames, by name otherwise.
    frame_types: FastMap<(Sym, usize), u64>,
    named_types: FastMap<(bool, Sym), u64>,
    /// Values numbered by [`ParaverWriter::value_of`], by type and label.
    value_numbers: FastMap<(u64, Sym), i128>,
    states: OrderedMap<u64, String>,
    state_numbers: FastMap<Sym, u64>,
    /// Per thread: the last collectives (start, end, level).
    collectives: FastMap<Sym, std::collections::VecDeque<(i64, i64, usize)>>,
    /// Communicators by text: their number and the threads they join.
    comms: OrderedMap<Sym, Vec<Sym>>,
    date: String,
    end: i64,
    lost: OrderedMap<&'static str, u64>,
    scratch: Record,
    mark: u64,
}

impl ParaverWriter {
    fn new(out: Output, opts: &WriteOptions) -> ParaverWriter {
        ParaverWriter {
            out,
            symbols: opts.symbols.clone(),
            warnings: opts.warnings.clone(),
            sorter: Sorter::default(),
            declared: OrderedMap::default(),
            threads: OrderedMap::default(),
            stacks: FastMap::default(),
            types: OrderedMap::default(),
            frame_types: FastMap::default(),
            named_types: FastMap::default(),
            value_numbers: FastMap::default(),
            states: OrderedMap::default(),
            state_numbers: FastMap::default(),
            collectives: FastMap::default(),
            comms: OrderedMap::default(),
            date: "01/01/70 at 00:00".into(),
            end: 0,
            lost: OrderedMap::default(),
            scratch: Record::default(),
            mark: 0,
        }
    }

    /// The thread a row on `loc` is written on: a lane's owner.
    fn thread(&mut self, loc: Sym) -> Sym {
        let mut loc = loc;
        while let Some(d) = self.declared.get(&loc) {
            if d.cat != well_known::LANE || d.parent.is_empty() {
                break;
            }
            loc = d.parent;
        }
        self.threads.entry(loc).or_default();
        loc
    }

    /// A row's time, which Paraver holds unsigned.
    fn time(&mut self, t: Option<i64>) -> Result<i64> {
        let t = t.unwrap_or(0);
        if t < 0 {
            return Err(Error::Record(format!(
                "a time of {t} ns: Paraver's times are not negative (shift the trace with trace-slice or a filter first)"
            )));
        }
        self.end = self.end.max(t);
        Ok(t)
    }

    /// The number of a value of `event_type` named `label` (a stack type's
    /// values from 1, 0 being its end).
    fn value_of(&mut self, event_type: u64, label: &str) -> i128 {
        let key = (event_type, self.symbols.intern(label));
        if let Some(&v) = self.value_numbers.get(&key) {
            return v;
        }
        let t = self.types.entry(event_type).or_default();
        let v = match t.values.iter().find(|(_, l)| l.as_str() == label) {
            Some((&v, _)) => v,
            None => {
                let v = t.values.keys().copied().max().unwrap_or(0).max(0) + 1;
                t.values.insert(v, label.to_string());
                v
            }
        };
        self.value_numbers.insert(key, v);
        v
    }

    /// The type and value a row carries (read from a Paraver trace).
    fn carried(rec: &Record) -> Option<(u64, i128)> {
        if rec.attrs.is_empty() {
            return None;
        }
        let (mut event_type, mut value) = (None, None);
        for (key, text) in rec.attrs() {
            match &*key {
                ATTR_TYPE if event_type.is_none() => event_type = super::names::parse_whole(&text),
                ATTR_VALUE if value.is_none() => value = super::names::parse_value(&text),
                _ => {}
            }
        }
        Some((event_type?, value.unwrap_or(0)))
    }

    /// Queues `rec` at its first time as the writer needs it back: its
    /// kind, times, thread, peer, size and tag, and in `value` the fields
    /// of its record that follow the time (`TYPE:VALUE` of a pair, a
    /// state's number, a message's physical send and receives).
    fn queue(&mut self, rec: &Record, pair: Option<(u64, i128)>, state: Option<u64>) -> Result<()> {
        let time = self.time(rec.time)?;
        if let Some(end) = rec.end {
            self.time(Some(end))?;
        }
        let s = &mut self.scratch;
        (s.kind, s.time, s.end, s.loc, s.peer) = (rec.kind, rec.time, rec.end, rec.loc, rec.peer);
        (s.size, s.tag) = (rec.size, rec.tag);
        s.value.clear();
        // Writing into a String cannot fail.
        let _ = match (pair, state) {
            (Some((t, v)), _) => write!(s.value, "{t}:{v}"),
            (None, Some(state)) => write!(s.value, "{state}"),
            (None, None) => message_times(rec, &mut s.value),
        };
        self.sorter.push(time, 0, self.mark, &self.scratch)
    }
}

/// A message's physical send, logical receive and physical receive, as
/// its record holds them: those it carries, else its send and receive.
fn message_times(rec: &Record, out: &mut String) -> std::fmt::Result {
    let (time, end) = (rec.time.unwrap_or(0), rec.end.or(rec.time).unwrap_or(0));
    let (mut psend, mut lrecv, mut precv) = (time, end, end);
    for (key, text) in rec.attrs() {
        let slot = match &*key {
            ATTR_PHYSICAL_SEND => &mut psend,
            ATTR_LOGICAL_RECV => &mut lrecv,
            ATTR_PHYSICAL_RECV => &mut precv,
            _ => continue,
        };
        if let Ok(t) = text.parse() {
            *slot = t;
        }
    }
    write!(out, "{psend}:{lrecv}:{precv}")
}

impl ParaverWriter {
    /// Registers `event_type` with `label` if it has none.
    fn declare_type(&mut self, event_type: u64, label: &str, stack: bool, counter: bool) {
        let t = self.types.entry(event_type).or_default();
        if t.label.is_empty() {
            t.label = label.to_string();
        }
        t.stack |= stack;
        t.counter |= counter;
        if stack {
            let end = match extrae::type_label(event_type) {
                Some(_) => extrae::OUTSIDE_MPI,
                None => "End",
            };
            t.values.entry(0).or_insert_with(|| end.into());
        }
    }

    fn enter(&mut self, rec: &Record) -> Result<()> {
        let thread = self.thread(rec.loc);
        let carried = Self::carried(rec).filter(|&(_, v)| v != 0);
        let pair = match carried {
            Some((t, v)) => {
                let symbols = self.symbols.clone();
                self.declare_type(t, symbols.text(rec.cat), true, false);
                self.label_value(t, v, rec.name);
                (t, v)
            }
            None => match self.mpi_call(thread, rec.name) {
                Some((t, v)) => {
                    let label = extrae::type_label(t).unwrap_or_default();
                    self.declare_type(t, label, true, false);
                    self.label_value(t, v, rec.name);
                    (t, v)
                }
                None => self.frame_pair(thread, rec),
            },
        };
        let frame = (pair.0, rec.cat, carried.is_some());
        self.stacks.entry(thread).or_default().push(frame);
        self.queue(rec, Some(pair), None)
    }

    /// Extrae's type and value for a frame named `name` on `thread`: an
    /// MPI call as Extrae spells it, unless its type is open there
    /// already (one type holds one frame at a time).
    fn mpi_call(&self, thread: Sym, name: Sym) -> Option<(u64, i128)> {
        let (t, v) = extrae::mpi_call(self.symbols.text(name))?;
        let open = self.stacks.get(&thread);
        let taken = open.is_some_and(|s| s.iter().any(|f| f.0 == t));
        (!taken).then_some((t, v))
    }

    /// Labels value `v` of `event_type` with `name` if it has no label.
    fn label_value(&mut self, event_type: u64, v: i128, name: Sym) {
        let values = &mut self.types.entry(event_type).or_default().values;
        if !values.contains_key(&v) {
            values.insert(v, self.symbols.text(name).to_string());
        }
    }

    /// A frame's type by its category and level in it, and its value by
    /// name: the first level of user code is Extrae's user functions.
    fn frame_pair(&mut self, thread: Sym, rec: &Record) -> (u64, i128) {
        let stack = self.stacks.entry(thread).or_default();
        let level = stack.iter().filter(|(_, c, _)| *c == rec.cat).count();
        let symbols = self.symbols.clone();
        let t = match self.frame_types.get(&(rec.cat, level)) {
            Some(&t) => t,
            None => self.new_frame_type(symbols.text(rec.cat), rec.cat, level),
        };
        (t, self.value_of(t, symbols.text(rec.name)))
    }

    /// The type of frames of category `cat` at `level` in it, declared.
    fn new_frame_type(&mut self, cat: &str, cat_sym: Sym, level: usize) -> u64 {
        let user_code = ["", "USER", "COMPILER", "FUNCTION"].contains(&cat);
        let (user_type, user_label) = extrae::USER_FUNCTION;
        let user_type_free = !self.frame_types.values().any(|&t| t == user_type);
        let t = match level == 0 && user_code && user_type_free {
            true => user_type,
            false => FIRST_FRAME_TYPE + self.frame_types.len() as u64,
        };
        self.frame_types.insert((cat_sym, level), t);
        let label = match (cat.is_empty(), level) {
            _ if t == user_type => user_label.to_string(),
            (true, 0) => "Function".to_string(),
            (true, l) => format!("Function (level {})", l + 1),
            (false, 0) => cat.to_string(),
            (false, l) => format!("{cat} (level {})", l + 1),
        };
        self.declare_type(t, &label, true, false);
        t
    }

    fn leave(&mut self, rec: &Record) -> Result<()> {
        let thread = self.thread(rec.loc);
        match self.stacks.get_mut(&thread).and_then(Vec::pop) {
            // Read from a Paraver trace, a leave that carries no pair was
            // a new value of its type: the next enter's record says it.
            Some((_, _, true)) if rec.attr(ATTR_TYPE).is_none() && !rec.flags.contains('S') => {
                Ok(())
            }
            Some((t, _, _)) => self.queue(rec, Some((t, 0)), None),
            None => {
                *self.lost.entry("a leave with no frame open").or_default() += 1;
                Ok(())
            }
        }
    }

    fn state(&mut self, rec: &Record) -> Result<()> {
        self.thread(rec.loc);
        let number = match rec.attr(ATTR_STATE).and_then(|s| s.parse::<u64>().ok()) {
            Some(n) => n,
            None => {
                let next = FIRST_STATE + self.state_numbers.len() as u64;
                *self.state_numbers.entry(rec.name).or_insert(next)
            }
        };
        let name = self.symbols.text(rec.name).to_string();
        self.states.entry(number).or_insert(name);
        self.queue(rec, None, Some(number))
    }

    /// A `counter` (an integer value; a fraction is rounded) or an `event`.
    fn instant(&mut self, rec: &Record) -> Result<()> {
        self.thread(rec.loc);
        let counter = rec.kind == Kind::Counter;
        // A handle of the table, so its texts outlive borrows of `self`.
        let symbols = self.symbols.clone();
        let name = symbols.text(rec.name);
        let pair = match Self::carried(rec) {
            Some((t, v)) => {
                self.declare_type(t, name, false, counter);
                if !counter && !rec.value.is_empty() {
                    let values = &mut self.types.entry(t).or_default().values;
                    if !values.contains_key(&v) {
                        values.insert(v, rec.value.clone());
                    }
                }
                match counter {
                    true => (t, super::names::parse_value(&rec.value).unwrap_or(v)),
                    false => (t, v),
                }
            }
            None => {
                let first = match counter {
                    true => FIRST_COUNTER_TYPE,
                    false => FIRST_EVENT_TYPE,
                };
                let next = first + self.named_types.len() as u64;
                let t = *self.named_types.entry((counter, rec.name)).or_insert(next);
                self.declare_type(t, name, false, counter);
                let v = match counter {
                    true => match counter_value(&rec.value) {
                        Some(v) => v,
                        None => {
                            let lost = "a counter sample that is no number";
                            *self.lost.entry(lost).or_default() += 1;
                            return Ok(());
                        }
                    },
                    false if rec.value.is_empty() => self.value_of(t, "(none)"),
                    false => self.value_of(t, &rec.value),
                };
                (t, v)
            }
        };
        self.queue(rec, Some(pair), None)
    }

    fn message(&mut self, rec: &Record) -> Result<()> {
        let (from, to) = (self.thread(rec.loc), self.thread(rec.peer));
        if !rec.comm.is_empty() {
            let joined = self.comms.entry(rec.comm).or_default();
            for t in [from, to] {
                if !joined.contains(&t) {
                    joined.push(t);
                }
            }
        }
        self.queue(rec, None, None)
    }

    /// A `coll` row. Inside the frame of its MPI call (Extrae's
    /// collective type open on its thread) it is what Extrae writes there,
    /// the bytes sent and received as Global OP values at its start;
    /// otherwise a frame of the collective type from its start to its
    /// end, its value the operation's MPI call.
    fn collective(&mut self, rec: &Record) -> Result<()> {
        let thread = self.thread(rec.loc);
        let open = self.stacks.get(&thread);
        if open.is_some_and(|s| s.iter().any(|f| f.0 == COLLECTIVE_TYPE)) {
            return self.global_op(rec);
        }
        let (start, end) = (rec.time.unwrap_or(0), rec.end.or(rec.time).unwrap_or(0));
        let level = self.collective_level(thread, start, end);
        let (event_type, label) = match level {
            0 => (COLLECTIVE_TYPE, COLLECTIVE_LABEL.to_string()),
            l => {
                let next = FIRST_FRAME_TYPE + self.frame_types.len() as u64;
                let key = (self.symbols.intern(COLLECTIVE_LABEL), l);
                let t = *self.frame_types.entry(key).or_insert(next);
                (t, format!("{COLLECTIVE_LABEL} (level {})", l + 1))
            }
        };
        self.declare_type(event_type, &label, true, false);
        let symbols = self.symbols.clone();
        let op = symbols.text(rec.name);
        let call = extrae::collective_call(op).filter(|_| level == 0);
        let value = match call.and_then(|c| Some((c, extrae::mpi_call(c)?))) {
            Some((call, (_, v))) => {
                self.label_value(event_type, v, symbols.intern(call));
                v
            }
            None => self.value_of(event_type, if op.is_empty() { "collective" } else { op }),
        };
        let mut enter = Record::new(Kind::Enter);
        (enter.time, enter.loc, enter.name) = (rec.time, rec.loc, rec.name);
        self.queue(&enter, Some((event_type, value)), None)?;
        let mut leave = Record::new(Kind::Leave);
        (leave.time, leave.loc) = (rec.end.or(rec.time), rec.loc);
        self.queue(&leave, Some((event_type, 0)), None)
    }

    /// A collective inside its call's frame: Extrae's Global OP sizes.
    fn global_op(&mut self, rec: &Record) -> Result<()> {
        let received = counter_value(&rec.value).unwrap_or(0);
        let sizes = [
            (extrae::GLOBAL_OP_SENT, i128::from(rec.size.unwrap_or(0))),
            (extrae::GLOBAL_OP_RECEIVED, received),
        ];
        let mut sample = Record::new(Kind::Counter);
        (sample.time, sample.loc) = (rec.time, rec.loc);
        for ((event_type, label), bytes) in sizes {
            self.declare_type(event_type, label, false, true);
            self.queue(&sample, Some((event_type, bytes)), None)?;
        }
        Ok(())
    }

    /// The lowest level at which a collective from `start` to `end` on
    /// `thread` overlaps none of the last ones there: one type cannot
    /// hold two frames at once, so overlapping collectives (nonblocking
    /// ones) take a type per level.
    fn collective_level(&mut self, thread: Sym, start: i64, end: i64) -> usize {
        let last = self.collectives.entry(thread).or_default();
        let overlaps = |&&(s, e, _): &&(i64, i64, usize)| s < end.max(start + 1) && start < e;
        let taken: Vec<usize> = last.iter().filter(overlaps).map(|c| c.2).collect();
        let level = (0..).find(|l| !taken.contains(l)).unwrap_or(0);
        if last.len() == KEPT_COLLECTIVES {
            last.pop_front();
        }
        last.push_back((start, end, level));
        level
    }
}

/// Text as a `.pcf` or `.row` line holds it: on one line, never empty.
fn one_line(text: &str, otherwise: impl FnOnce() -> String) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match line.trim() {
        "" => otherwise(),
        trimmed => trimmed.to_string(),
    }
}

/// A counter's value as Paraver's integer: a fraction rounded.
fn counter_value(text: &str) -> Option<i128> {
    super::names::parse_value(text).or_else(|| {
        let f: f64 = text.parse().ok()?;
        (f.is_finite() && f.abs() < 9.2e18).then(|| f.round() as i128)
    })
}

impl RecordSink for ParaverWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        self.mark += 1;
        match rec.kind {
            Kind::Container => {
                let d = Declared {
                    cat: rec.cat,
                    parent: rec.peer,
                    name: rec.name,
                };
                self.declared.insert(rec.loc, d);
                Ok(())
            }
            Kind::Meta => {
                if self.symbols.text(rec.name) == "paraver.date" {
                    // The header ends its date at `)`.
                    self.date = one_line(&rec.value.replace(')', " "), || "?".into());
                }
                Ok(())
            }
            Kind::Enter => self.enter(rec),
            Kind::Leave => self.leave(rec),
            Kind::State => self.state(rec),
            Kind::Counter | Kind::Event => self.instant(rec),
            Kind::Msg => self.message(rec),
            Kind::Coll => self.collective(rec),
            other => {
                *self.lost.entry(other.as_str()).or_default() += 1;
                Ok(())
            }
        }
    }

    fn finish(&mut self) -> Result<()> {
        let layout = ThreadLayout::of(self);
        self.write_prv(&layout)?;
        self.out.finish()?;
        let (pcf, row) = companions(self.out.name());
        let mut pcf_out = open_output(Some(&pcf), false)?;
        pcf_out
            .write_all(self.pcf_text().as_bytes())
            .map_err(|e| Error::io(&pcf, e))?;
        pcf_out.finish()?;
        let mut row_out = open_output(Some(&row), false)?;
        row_out
            .write_all(layout.row_text(self).as_bytes())
            .map_err(|e| Error::io(&row, e))?;
        row_out.finish()?;
        if !self.lost.is_empty() {
            let lost: Vec<String> = self.lost.iter().map(|(k, n)| format!("{n} {k}")).collect();
            self.warnings.warn(format!(
                "{}: not written (Paraver has no record for them): {}",
                self.out.name(),
                lost.join(", ")
            ));
        }
        Ok(())
    }
}

/// Where each thread goes: tasks (a thread's `process` parent, else the
/// thread alone), their threads, and the nodes (a task's `node` parent).
struct ThreadLayout {
    tasks: OrderedMap<Sym, Vec<Sym>>,
    nodes: OrderedMap<Sym, ()>,
    /// Per thread: its task and thread numbers, from 1.
    place: FastMap<Sym, (usize, usize)>,
}

impl ThreadLayout {
    fn of(w: &ParaverWriter) -> ThreadLayout {
        let cat = |loc: &Sym, want: &str| {
            w.declared
                .get(loc)
                .is_some_and(|d| w.symbols.text(d.cat) == want)
        };
        let parent = |loc: &Sym| w.declared.get(loc).map_or(Sym::EMPTY, |d| d.parent);
        // Threads in declaration order, then those never declared.
        let used = |loc: &&Sym| w.threads.contains_key(*loc);
        let mut order: Vec<Sym> = w.declared.keys().filter(used).copied().collect();
        order.extend(w.threads.keys().filter(|l| !w.declared.contains_key(*l)));
        let mut tasks: OrderedMap<Sym, Vec<Sym>> = OrderedMap::default();
        for thread in order {
            let p = parent(&thread);
            let task = if !p.is_empty() && cat(&p, "process") {
                p
            } else {
                thread
            };
            tasks.entry(task).or_default().push(thread);
        }
        let on_node = |node: &&Sym| cat(node, "node") && tasks.keys().any(|t| parent(t) == **node);
        let nodes = w
            .declared
            .keys()
            .filter(on_node)
            .map(|&n| (n, ()))
            .collect();
        let mut place = FastMap::default();
        for (t, threads) in tasks.values().enumerate() {
            for (th, &thread) in threads.iter().enumerate() {
                place.insert(thread, (t + 1, th + 1));
            }
        }
        ThreadLayout {
            tasks,
            nodes,
            place,
        }
    }

    /// `0`, or `N(CPUS,...)` when every task is on a declared node.
    fn node_of(&self, w: &ParaverWriter, task: Sym) -> usize {
        let node = w.declared.get(&task).map_or(Sym::EMPTY, |d| d.parent);
        self.nodes.get_index_of(&node).map_or(0, |i| i + 1)
    }

    fn header(&self, w: &ParaverWriter) -> String {
        let with_nodes =
            !self.nodes.is_empty() && self.tasks.keys().all(|&t| self.node_of(w, t) > 0);
        let mut h = format!("#Paraver ({}):{}_ns:", w.date, w.end);
        if with_nodes {
            let mut cpus = vec![0usize; self.nodes.len()];
            for (&task, threads) in &self.tasks {
                cpus[self.node_of(w, task) - 1] += threads.len();
            }
            let cpus: Vec<String> = cpus.iter().map(|c| c.max(&1).to_string()).collect();
            let _ = write!(h, "{}({})", cpus.len(), cpus.join(","));
        } else {
            h.push('0');
        }
        let tasks: Vec<String> = self
            .tasks
            .iter()
            .map(|(&task, threads)| {
                let node = if with_nodes { self.node_of(w, task) } else { 0 };
                format!("{}:{node}", threads.len())
            })
            .collect();
        // Paraver needs a task: a stream with no rows has one empty thread.
        let tasks = if tasks.is_empty() {
            vec!["1:0".to_string()]
        } else {
            tasks
        };
        let _ = write!(h, ":1:{}({})", tasks.len(), tasks.join(","));
        if !w.comms.is_empty() {
            let _ = write!(h, ",{}", w.comms.len());
        }
        h.push('\n');
        for (i, (comm, threads)) in w.comms.iter().enumerate() {
            let text = w.symbols.text(*comm);
            let id = if text.parse::<u64>().is_ok() {
                text.to_string()
            } else {
                (i + 1).to_string()
            };
            let mut tasks: Vec<usize> = threads.iter().map(|t| self.place[t].0).collect();
            tasks.sort_unstable();
            tasks.dedup();
            let tasks: Vec<String> = tasks.iter().map(usize::to_string).collect();
            let _ = writeln!(h, "c:1:{id}:{}:{}", tasks.len(), tasks.join(":"));
        }
        h
    }

    /// The task and thread numbers of the thread `loc` is written on.
    fn place_of(&self, w: &ParaverWriter, loc: Sym) -> (usize, usize) {
        let mut loc = loc;
        while !self.place.contains_key(&loc) {
            match w.declared.get(&loc) {
                Some(d) if !d.parent.is_empty() => loc = d.parent,
                _ => break,
            }
        }
        self.place.get(&loc).copied().unwrap_or((1, 1))
    }

    fn row_text(&self, w: &ParaverWriter) -> String {
        let name = |loc: &Sym| {
            let named = w.declared.get(loc).map_or(Sym::EMPTY, |d| d.name);
            let sym = if named.is_empty() { *loc } else { named };
            one_line(w.symbols.text(sym), || "(unnamed)".into())
        };
        let mut text = String::new();
        let mut level = |title: &str, names: Vec<String>| {
            let _ = writeln!(text, "LEVEL {title} SIZE {}", names.len());
            for n in names {
                let _ = writeln!(text, "{n}");
            }
            text.push('\n');
        };
        if !self.nodes.is_empty() {
            level("NODE", self.nodes.keys().map(name).collect());
        }
        level("TASK", self.tasks.keys().map(name).collect());
        level("THREAD", self.tasks.values().flatten().map(name).collect());
        text
    }
}

impl ParaverWriter {
    /// The header, then the records in order of their first time.
    fn write_prv(&mut self, layout: &ThreadLayout) -> Result<()> {
        let name = self.out.name().to_string();
        let header = layout.header(self);
        self.out
            .write_all(header.as_bytes())
            .map_err(|e| Error::io(&name, e))?;
        let sorter = std::mem::take(&mut self.sorter);
        let mut sorted = sorter.finish()?;
        let mut rec = Record::default();
        let mut line = String::new();
        while sorted.next_into(&mut rec)?.is_some() {
            line.clear();
            self.record_line(layout, &rec, &mut line);
            self.out
                .write_all(line.as_bytes())
                .map_err(|e| Error::io(&name, e))?;
        }
        Ok(())
    }

    /// A row's Paraver record.
    fn record_line(&self, layout: &ThreadLayout, rec: &Record, line: &mut String) {
        let time = rec.time.unwrap_or(0);
        let (t, th) = layout.place_of(self, rec.loc);
        let fields = &rec.value;
        let _ = match rec.kind {
            Kind::State => {
                let end = rec.end.unwrap_or(time);
                writeln!(line, "1:0:1:{t}:{th}:{time}:{end}:{fields}")
            }
            Kind::Msg => {
                let (to_t, to_th) = layout.place_of(self, rec.peer);
                let (size, tag) = (rec.size.unwrap_or(0), rec.tag.unwrap_or(0));
                let (psend, receives) = fields.split_once(':').unwrap_or_default();
                writeln!(
                    line,
                    "3:0:1:{t}:{th}:{time}:{psend}:0:1:{to_t}:{to_th}:{receives}:{size}:{tag}"
                )
            }
            _ => writeln!(line, "2:0:1:{t}:{th}:{time}:{fields}"),
        };
    }

    /// The `.pcf`: the states and event types written, with their values.
    fn pcf_text(&self) -> String {
        let mut text = String::from("DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n\n\nSTATES\n");
        let mut states: Vec<(&u64, &String)> = self.states.iter().collect();
        states.sort();
        if !self.states.contains_key(&0) {
            text.push_str("0    Idle\n");
        }
        for (n, label) in states {
            let _ = writeln!(text, "{n}    {}", one_line(label, || format!("state {n}")));
        }
        for (number, t) in &self.types {
            let gradient = if t.counter { 7 } else { 0 };
            let label = one_line(&t.label, || format!("type {number}"));
            let _ = write!(text, "\n\nEVENT_TYPE\n{gradient}    {number}    {label}\n");
            if t.counter && !t.stack {
                continue;
            }
            text.push_str("VALUES\n");
            for (v, label) in &t.values {
                let _ = writeln!(text, "{v}      {}", one_line(label, || v.to_string()));
            }
        }
        text
    }
}
