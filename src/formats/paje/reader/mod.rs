//! Reads a Pajé trace as a stream, simulating it the way PajeNG does.
//!
//! One pass, line by line. Memory holds the definitions, the type hierarchy,
//! one entry per container (live or destroyed), the open states, the current
//! value of each variable, the links waiting for their other half, and a
//! bounded reorder buffer: Pajé orders events per container and type only, so
//! rows are released by time once the buffer is full (`--reorder-window`).
//!
//! Here: the options, the simulation's state, the dispatch of each line to
//! its event family and the reader around it; each family in a module of
//! its own (`definitions`, `containers`, `states`, `values`, `links`).

use std::io::BufRead;

use super::catalogue::{Catalogue, Line};
use super::lexer::{Known, Lines};
use super::{
    extent, Event, Field, ATTR_COLOR, ATTR_END_TYPE, ATTR_OP, ATTR_OPERAND, ATTR_START_TYPE, LANE,
};
use crate::decimal::Decimal;
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::reorder::{RowQueue, Ticket};
use crate::fasthash::{FastMap, StrMap};
use crate::io::{cut_error, Input, CUT_WARNING};
use crate::model::record::{flags, Kind, Record, Sym};
use crate::model::symbol::{well_known, SymCache};
use crate::pipe::{FormatOption, OptionValue, ReadOptions, RecordSource};
use crate::stages::matcher::pair_halves;

mod containers;
mod definitions;
mod links;
mod marks;
mod states;
mod values;

const IGNORE_INCOMPLETE_LINKS: &str = "ignore-incomplete-links";
const REORDER_WINDOW: &str = "reorder-window";
const TIME_UNIT: &str = "time-unit";

/// The units `--time-unit` takes, with nanoseconds per unit.
const TIME_UNITS: [(&str, u64); 4] = [
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// The options of the Pajé reader.
pub const READ_OPTIONS: &[FormatOption] = &[
    FormatOption {
        name: IGNORE_INCOMPLETE_LINKS,
        help: "Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)",
        value: OptionValue::Switch,
    },
    FormatOption {
        name: REORDER_WINDOW,
        help: "Rows held to put events of different containers back in time order (default 4096; memory grows with it)",
        value: OptionValue::Number("ROWS"),
    },
    FormatOption {
        name: TIME_UNIT,
        help: "Unit of the file's times, which Pajé does not state (default s; StarPU's FxT tools write ms)",
        value: OptionValue::Choice("UNIT", &["s", "ms", "us", "ns"]),
    },
];

/// Registry constructor.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    let lines = match opts.pool.threads().parallel() {
        true => Lines::ahead(&name, reader, &opts.pool, ns_per_unit(opts) == NS),
        false => Lines::here(&name, reader),
    };
    Ok(Box::new(PajeReader::with_lines(lines, opts)))
}

/// Nanoseconds per second: Pajé times are seconds.
const NS: u64 = 1_000_000_000;

/// Nanoseconds per unit of the file's times (`--time-unit`).
fn ns_per_unit(opts: &ReadOptions) -> u64 {
    let unit = opts.format.choice(TIME_UNIT).unwrap_or("s");
    TIME_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map_or(NS, |&(_, ns)| ns)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nature {
    Container,
    State,
    EventType,
    Variable,
    Link,
}

impl Nature {
    /// The `cat` of the `type` row declaring a type of this nature.
    fn sym(self, syms: &mut SymCache) -> Sym {
        match self {
            Nature::Container => well_known::CONTAINER,
            Nature::EventType => well_known::EVENT,
            Nature::Link => well_known::LINK,
            _ => syms.intern(self.as_str()),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Nature::Container => "container",
            Nature::State => "state",
            Nature::EventType => "event",
            Nature::Variable => "variable",
            Nature::Link => "link",
        }
    }
}

#[derive(Debug)]
struct TypeInfo {
    id: String,
    /// The identifier and the name, interned.
    sym: Sym,
    name: Sym,
    nature: Nature,
    parent: u32,
    /// Link types: start and end container types.
    ends: (u32, u32),
    /// Entity values by identifier.
    values: StrMap<ValueDef>,
    /// The queued declaration row, while it may still need to move earlier.
    decl: Option<Ticket>,
}

/// A value defined for a state, event or link type.
#[derive(Debug)]
struct ValueDef {
    name: Sym,
    /// Its name is its identifier (the rows' `value` column stays empty).
    named_as_id: bool,
    /// The queued declaration row, while it may still need to move earlier.
    decl: Option<Ticket>,
}

#[derive(Debug, Default)]
struct TypeSlot {
    type_: u32,
    last: i64,
    lane: Option<u32>,
    var: Option<Decimal>,
    /// The variable's last sample row, while a slice's T0 is ahead.
    sample: Option<Ticket>,
}

#[derive(Debug)]
struct ContainerInfo {
    id: String,
    sym: Sym,
    /// The queued declaration row, while it may still need to move earlier.
    decl: Option<Ticket>,
    parent: u32,
    type_: u32,
    children: Vec<u32>,
    alive: bool,
    last: i64,
    slots: Vec<TypeSlot>,
    /// Links of this container waiting for their other half.
    pending: u32,
}

#[derive(Debug)]
struct StateEntry {
    name: Sym,
    value: String,
    /// Its `enter` row, while a slice's T0 is ahead.
    enter: Option<Ticket>,
    /// For a push marked as a row with an extent (see
    /// [`super::extent`]): that row, made again at the pop.
    extent: Option<Box<Record>>,
}

#[derive(Debug)]
struct StateStack {
    loc: Sym,
    /// The container and the state type whose stack it is.
    owner: Sym,
    type_: u32,
    /// Its `container` row, queued when a state first needs it (not a
    /// state marked as a row with an extent, which is the container's).
    decl: Option<Ticket>,
    /// Open frames are `stack[..depth]`; slots above keep their buffers.
    stack: Vec<StateEntry>,
    depth: usize,
}

#[derive(Debug)]
struct PendingLink {
    start: bool,
    line: u64,
    value: String,
    container: u32,
    /// No earlier than this can the link begin (see `Sim::links_begun`).
    begun: i64,
    /// The half's row, made into a `msg` with the other half's (boxed:
    /// it moves through the pending map).
    half: Box<Record>,
}

/// The two halves of a completed link: the one that waited, then the one
/// that completed it.
type LinkHalves = (Box<Record>, Box<Record>);

/// The simulation state.
struct Sim {
    file: String,
    syms: SymCache,
    types: Vec<TypeInfo>,
    type_index: StrMap<u32>,
    containers: Vec<ContainerInfo>,
    container_index: StrMap<u32>,
    lanes: Vec<StateStack>,
    lane_index: StrMap<u32>,
    pending: FastMap<String, PendingLink>,
    /// The slots of containers with more than [`LINEAR_SLOTS`] types.
    slot_index: FastMap<(u32, u32), u32>,
    /// The values defined, of every type.
    values_defined: usize,
    /// Entries of `pending` whose container is closed (with
    /// `--ignore-incomplete-links`), swept in bulk.
    stale: usize,
    incomplete: IncompleteLinks,
    /// `--time-unit` was given.
    unit_given: bool,
    /// The StarPU time unit warning was given.
    starpu_told: bool,
    /// Nanoseconds per unit of the file's times.
    ns_per_unit: u64,
    lossy: u64,
    dropped: u64,
    first_dropped: u64,
    ignored_links: u64,
    key: String,
    /// Reused for the text of variable values.
    number: String,
    /// Buffers of matched links' keys and values, reused by the next ones.
    spare_strings: Vec<String>,
    /// Rows of matched links' halves, reused likewise (their boxes too:
    /// a half moves through the pending map as a pointer).
    #[allow(clippy::vec_box)]
    spare_halves: Vec<Box<Record>>,
    warnings: Warnings,
}

const ROOT: u32 = 0;

/// Type names StarPU's trace writer defines and other Pajé writers do not.
const STARPU_TYPES: [&str; 2] = ["Memory Manager", "Worker State"];

/// What becomes of a link whose other end never comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IncompleteLinks {
    /// An error (PajeNG's rule).
    Refused,
    /// Dropped and counted (`--ignore-incomplete-links`, as `pj_dump -z`).
    Dropped,
    /// An error though `--ignore-incomplete-links` is given: the consumer
    /// refuses halves that never match (`trace-match --unmatched error`).
    RefusedUnmatched,
}

/// Slots of a container found by a scan; more go through `Sim::slot_index`.
const LINEAR_SLOTS: usize = 16;

impl Sim {
    fn new(file: &str, incomplete: IncompleteLinks, mut syms: SymCache, warnings: Warnings) -> Sim {
        let zero = syms.intern("0");
        let mut sim = Sim {
            warnings,
            file: file.to_string(),
            syms,
            types: Vec::new(),
            type_index: StrMap::default(),
            containers: Vec::new(),
            container_index: StrMap::default(),
            lanes: Vec::new(),
            lane_index: StrMap::default(),
            pending: FastMap::default(),
            slot_index: FastMap::default(),
            values_defined: 0,
            stale: 0,
            incomplete,
            unit_given: false,
            starpu_told: false,
            ns_per_unit: NS,
            lossy: 0,
            dropped: 0,
            first_dropped: 0,
            ignored_links: 0,
            key: String::new(),
            number: String::new(),
            spare_strings: Vec::new(),
            spare_halves: Vec::new(),
        };
        sim.types.push(TypeInfo {
            id: "0".into(),
            sym: zero,
            name: zero,
            nature: Nature::Container,
            parent: ROOT,
            ends: (0, 0),
            values: StrMap::default(),
            decl: None,
        });
        sim.type_index.insert("0".into(), ROOT);
        sim.containers.push(ContainerInfo {
            id: "0".into(),
            sym: zero,
            decl: None,
            parent: ROOT,
            type_: ROOT,
            children: Vec::new(),
            alive: true,
            last: 0,
            slots: Vec::new(),
            pending: 0,
        });
        sim.container_index.insert("0".into(), ROOT);
        sim
    }

    fn time(&mut self, text: &str) -> Result<(i64, bool), String> {
        if self.ns_per_unit == NS {
            if let Some(ns) = crate::decimal::plain_seconds_to_ns(text) {
                return Ok((ns, false));
            }
        }
        let d = Decimal::parse(text)
            .ok_or_else(|| format!("bad time `{text}`: expected a decimal number"))?;
        let (t, lossy) = d
            .scaled(self.ns_per_unit)
            .ok_or_else(|| format!("time `{text}` is out of range"))?;
        if lossy {
            self.lossy += 1;
        }
        Ok((t, lossy))
    }

    /// The time of an event line: parsed by the lexing job, or here.
    fn line_time(&mut self, line: &Line) -> Result<(i64, bool), String> {
        match line.found.time_ns {
            Some(ns) => Ok((ns, false)),
            None => self.time(line.get(Field::Time)),
        }
    }

    fn type_of(&self, id: &str) -> Result<u32, String> {
        self.type_index
            .get(id)
            .copied()
            .ok_or_else(|| format!("unknown type `{id}`"))
    }

    fn container_of(&self, id: &str) -> Result<u32, String> {
        self.container_index
            .get(id)
            .copied()
            .ok_or_else(|| format!("unknown container `{id}`"))
    }

    /// Checks that type `t` has `nature` and belongs to the type of container `c`.
    fn check_entity(&self, c: u32, t: u32, nature: Nature) -> Result<(), String> {
        let ty = &self.types[t as usize];
        if ty.nature != nature {
            return Err(format!(
                "type `{}` is a {} type, not a {} type",
                ty.id,
                ty.nature.as_str(),
                nature.as_str()
            ));
        }
        let ct = self.containers[c as usize].type_;
        if ty.parent != ct {
            return Err(format!(
                "type `{}` is not a child type of container type `{}`",
                ty.id, self.types[ct as usize].id
            ));
        }
        Ok(())
    }

    /// Handles an event line: checks its length, then simulates it.
    fn event(
        &mut self,
        line: &Line,
        extra: Option<usize>,
        number: u64,
        out: &mut Emitter,
    ) -> Result<(), String> {
        if let Some(given) = extra {
            let msg = format!(
                "{given} fields where {} (id {}) has {}; the extra words are ignored",
                line.def.event.name(),
                line.words[0],
                line.def.fields.len()
            );
            self.warn(number, msg);
        }
        match line.def.event {
            Event::DefineContainerType
            | Event::DefineStateType
            | Event::DefineEventType
            | Event::DefineVariableType
            | Event::DefineLinkType => {
                self.check_unit(line, number);
                self.define_type(line, out)
            }
            Event::DefineEntityValue => self.define_value(line, out),
            Event::CreateContainer => self.create_container(line, out),
            Event::DestroyContainer => self.destroy_container(line, number, out),
            Event::SetState | Event::PushState | Event::PopState | Event::ResetState => {
                self.state(line, number, out)
            }
            Event::NewEvent => self.new_event(line, number, out),
            Event::SetVariable | Event::AddVariable | Event::SubVariable => {
                self.variable(line, number, out)
            }
            Event::StartLink | Event::EndLink => self.link(line, number, out),
            Event::TraceFile => {
                let msg = format!(
                    "PajeTraceFile `{}` is not followed (multi-file traces are read one file at a time)",
                    line.get(Field::Filename)
                );
                self.warn(number, msg);
                Ok(())
            }
        }
    }

    /// Warns, once, at a type only StarPU defines when no `--time-unit` was
    /// given: StarPU writes milliseconds, read as seconds they are 1000
    /// times too long.
    fn check_unit(&mut self, line: &Line, number: u64) {
        if self.unit_given || self.starpu_told {
            return;
        }
        let name = line.get(Field::Name);
        if !STARPU_TYPES.contains(&name) {
            return;
        }
        self.starpu_told = true;
        let msg = format!(
            "type `{name}` says StarPU wrote this trace, and StarPU writes times in milliseconds: read as seconds, every time is 1000 times too long; give --time-unit ms"
        );
        self.warn(number, msg);
    }

    /// Reports a warning about line `line`.
    fn warn(&self, line: u64, msg: String) {
        let at = Location::Line {
            file: self.file.clone(),
            line,
        };
        self.warnings.warn_at(at, msg);
    }
}

/// How states are closed: by which type, with which event's user fields.
struct StateClosing<'a> {
    /// The state type.
    type_: u32,
    /// The line whose user fields the closing rows carry.
    extras: Option<&'a Line<'a>>,
    lossy: bool,
    /// `S` when the trace implies the closing (a destruction, the end).
    flag: &'a str,
}

/// Where the simulator's rows go: the reorder queue, with located errors.
struct Emitter<'a> {
    queue: &'a mut RowQueue,
    /// Latest time of the rows produced so far (where declarations wait, and
    /// where the trace ends).
    max_time: &'a mut Option<i64>,
    thinning: &'a mut Thinning,
}

/// Before a slice's T0 (`Demand::thin_before`), the rows no one reads are
/// left out: events, links that complete before it, a state pushed and
/// popped while its `enter` row still waits in the queue (both rows), and
/// a variable's sample superseded by another while it still waits. Never
/// the row that starts earliest so far, nor the time of a row left out
/// from `max_time`: the slicer tells the trace's span from the rows it is
/// given.
#[derive(Debug, Clone, Copy)]
struct Thinning {
    before: Option<i64>,
    /// The earliest start of the rows produced so far.
    earliest: i64,
}

/// The columns of a row made from a Pajé line (empty unless set), and the
/// line whose user-defined fields become its attributes.
struct Row<'a> {
    kind: Kind,
    time: Option<i64>,
    /// The time was rounded to the nanosecond (flag `E`).
    lossy: bool,
    loc: Sym,
    cat: Sym,
    name: Sym,
    value: &'a str,
    id: &'a str,
    peer: Sym,
    comm: Sym,
    extras: Option<&'a Line<'a>>,
}

impl Row<'_> {
    fn new(kind: Kind) -> Row<'static> {
        Row {
            kind,
            time: None,
            lossy: false,
            loc: Sym::EMPTY,
            cat: Sym::EMPTY,
            name: Sym::EMPTY,
            value: "",
            id: "",
            peer: Sym::EMPTY,
            comm: Sym::EMPTY,
            extras: None,
        }
    }
}

/// Fills the empty record `r` with `row`; `more` sets what else it carries
/// (before the `E` flag and the user fields, which come last).
fn fill_row(r: &mut Record, row: Row, more: impl FnOnce(&mut Record)) {
    r.kind = row.kind;
    r.time = row.time;
    (r.loc, r.cat, r.name, r.peer, r.comm) = (row.loc, row.cat, row.name, row.peer, row.comm);
    r.value.push_str(row.value);
    r.id.push_str(row.id);
    more(r);
    if row.lossy {
        r.add_flag(flags::LOSSY);
    }
    if let Some(line) = row.extras {
        for (key, value) in line.extras() {
            super::push_user_field(r, key, value);
        }
    }
}

/// Where and when an entity line happens (see [`Sim::entity`]).
struct Entity {
    time: i64,
    lossy: bool,
    /// Container, type, and the (container, type) slot.
    c: u32,
    t: u32,
    s: usize,
}

/// The identifier a definition line gives: its alias, else its name.
fn identifier<'a>(line: &Line<'a>) -> &'a str {
    match line.get(Field::Alias) {
        "" => line.get(Field::Name),
        alias => alias,
    }
}

impl Emitter<'_> {
    /// Whether a row at `time` that no one reads before T0 is left out
    /// (its time counted in `max_time` all the same).
    fn leaves_out(&mut self, time: i64) -> bool {
        if self.before_t0(time) && time >= self.thinning.earliest {
            self.counts(time);
            return true;
        }
        false
    }

    /// Counts `time` in the latest time of the rows produced, as a row at
    /// it does whether built or left out.
    fn counts(&mut self, time: i64) {
        *self.max_time = Some(self.max_time.map_or(time, |m| m.max(time)));
    }

    /// Whether a row from `start` to `end` that no one reads before T0 is
    /// left out (see [`Emitter::leaves_out`]).
    fn leaves_out_extent(&mut self, start: i64, end: i64) -> bool {
        start >= self.thinning.earliest && self.leaves_out(end)
    }

    /// Whether a row at `time` comes before a slice's T0.
    fn before_t0(&self, time: i64) -> bool {
        self.thinning.before.is_some_and(|t0| time < t0)
    }

    /// Takes a row out of the queue that what happens at `time`, before
    /// T0, makes unread, when it still waits and is not the one that
    /// starts earliest: a state's `enter` when the state ends (its `leave`
    /// is left out then), a variable's sample when the next one comes.
    fn cancels(&mut self, row: Option<Ticket>, time: i64) -> bool {
        let Some(ticket) = row.filter(|t| t.key > self.thinning.earliest) else {
            return false;
        };
        self.leaves_out(time) && self.queue.cancel(ticket)
    }

    /// Queues `row`; `more` sets what else it carries (before the `E` flag
    /// and the user fields, which come last).
    fn row(&mut self, row: Row, more: impl FnOnce(&mut Record)) -> Result<Ticket, String> {
        self.declare(|r| fill_row(r, row, more))
    }

    /// Queues a row; a declaration waits at the latest time produced so far,
    /// to be moved earlier by its first use if that is older.
    fn declare(&mut self, fill: impl FnOnce(&mut Record)) -> Result<Ticket, String> {
        let slot = self.queue.slot();
        let rec = self.queue.get(slot);
        fill(rec);
        let (times, start) = ([rec.time, rec.end], rec.start());
        for t in times.into_iter().flatten() {
            self.counts(t);
        }
        if let Some(start) = start {
            self.thinning.earliest = self.thinning.earliest.min(start);
        }
        let key = self.max_time.unwrap_or(i64::MIN);
        self.queue.commit(slot, key).map_err(|t| {
            format!(
                "event at {} s comes after rows up to {} s were released: the trace is out of time order by more than the reorder window (raise --reorder-window)",
                crate::model::record::format_seconds(t),
                crate::model::record::format_seconds(self.queue.released())
            )
        })
    }
}

/// The Pajé reader.
pub struct PajeReader<R> {
    lines: Lines<R>,
    catalogue: Catalogue,
    sim: Sim,
    queue: RowQueue,
    max_time: Option<i64>,
    thinning: Thinning,
    word_buf: Vec<&'static str>,
    published: Publication,
    done: bool,
    /// The last line, when it has no final newline.
    cut: Option<u64>,
}

/// How many identifiers the lexing jobs were given last, and the lines
/// read since.
#[derive(Default)]
struct Publication {
    ids: usize,
    lines: u64,
}

/// Default number of rows the reorder buffer holds.
pub const DEFAULT_REORDER_WINDOW: usize = 4_096;

impl<R: BufRead> PajeReader<R> {
    /// A reader over `inner`, on this thread.
    pub fn new(name: &str, inner: R, opts: &ReadOptions) -> PajeReader<R> {
        PajeReader::with_lines(Lines::here(name, inner), opts)
    }

    /// A reader of `lines` (cut here or ahead on a pool).
    pub fn with_lines(lines: Lines<R>, opts: &ReadOptions) -> PajeReader<R> {
        let name = lines.name().to_string();
        let name = name.as_str();
        let window = match opts.format.number(REORDER_WINDOW) {
            Some(rows) if rows > 0 => usize::try_from(rows).unwrap_or(usize::MAX),
            _ => DEFAULT_REORDER_WINDOW,
        };
        let mut queue = RowQueue::new(window);
        let mut syms = SymCache::new(opts.symbols.clone());
        let unit = opts.format.choice(TIME_UNIT).unwrap_or("s");
        for (k, v) in [
            ("source_format", "paje"),
            ("source", name),
            ("time_unit", unit),
        ] {
            let slot = queue.slot();
            *queue.get(slot) = Record::meta(syms.intern(k), v);
            let _ = queue.commit(slot, i64::MIN);
        }
        let incomplete = match (
            opts.format.switch(IGNORE_INCOMPLETE_LINKS),
            opts.refuse_unmatched,
        ) {
            (false, _) => IncompleteLinks::Refused,
            (true, false) => IncompleteLinks::Dropped,
            (true, true) => IncompleteLinks::RefusedUnmatched,
        };
        let mut sim = Sim::new(name, incomplete, syms, opts.warnings.clone());
        sim.ns_per_unit = ns_per_unit(opts);
        sim.unit_given = opts.format.choice(TIME_UNIT).is_some();
        PajeReader {
            lines,
            catalogue: Catalogue::default(),
            sim,
            queue,
            max_time: None,
            thinning: Thinning {
                before: None,
                earliest: i64::MAX,
            },
            word_buf: Vec::new(),
            published: Publication::default(),
            done: false,
            cut: None,
        }
    }

    /// Reads one line into the queue; false at the end of the input.
    fn step(&mut self) -> Result<bool> {
        let Some(line) = self.lines.next_lexed()? else {
            return Ok(false);
        };
        let (number, resolved) = (line.number, line.resolved);
        self.queue.set_mark(number);
        let cut = line.truncated && !line.bytes().iter().all(u8::is_ascii_whitespace);
        if cut {
            self.cut = Some(number);
        }
        if line.spans().is_empty() {
            return Ok(true);
        }
        let file = self.sim.file.as_str();
        // Reuse one allocation for the words of every line (the collect from an
        // emptied vector of the same layout keeps its buffer).
        let mut words: Vec<&str> = std::mem::take(&mut self.word_buf)
            .into_iter()
            .map(|_| "")
            .collect();
        if line.words_into(&mut words).is_none() {
            return Err(Error::line(
                file,
                number,
                "invalid UTF-8: text must be UTF-8",
            ));
        }
        let mut out = Emitter {
            queue: &mut self.queue,
            max_time: &mut self.max_time,
            thinning: &mut self.thinning,
        };
        let definition = words[0].starts_with('%');
        let result = if definition {
            self.catalogue.definition(&words, number)
        } else if let Some((id, _)) = self.catalogue.open() {
            Err(format!(
                "event line inside the definition of event {id} (missing `%EndEventDef`)"
            ))
        } else {
            let line = match resolved {
                Some(r) => self.catalogue.line_at(r.def, &words, r.found),
                None => self.catalogue.line(&words),
            };
            match line {
                Ok((line, extra)) => self.sim.event(&line, extra, number, &mut out),
                Err(msg) => Err(msg),
            }
        };
        words.clear();
        self.word_buf = words.into_iter().map(|_| "").collect();
        let ended = definition && result.is_ok() && self.catalogue.open().is_none();
        self.publish(ended);
        result.map_err(|msg| {
            let msg = if cut { cut_error(&msg) } else { msg };
            Error::line(self.lines.name(), number, msg)
        })?;
        Ok(true)
    }

    /// Publishes what the lexing jobs read lines through: when a definition
    /// has `ended`, or when containers or types were added and at least as
    /// many lines as there are identifiers were read since the last time
    /// (so the copies cost a bounded amount a line).
    fn publish(&mut self, ended: bool) {
        if !self.lines.reads_ahead() {
            return;
        }
        self.published.lines += 1;
        let sim = &self.sim;
        let ids = sim.container_index.len() + sim.type_index.len() + sim.values_defined;
        let grown = ids > self.published.ids && self.published.lines >= ids as u64;
        if !(ended || grown) {
            return;
        }
        self.lines.publish(Known {
            catalogue: self.catalogue.clone(),
            containers: self.sim.container_index.clone(),
            types: self.sim.type_index.clone(),
            values: self
                .sim
                .types
                .iter()
                .map(|t| t.values.keys_only())
                .collect(),
        });
        self.published = Publication { ids, lines: 0 };
    }

    fn finish(&mut self) -> Result<()> {
        let sim = &mut self.sim;
        if let Some(line) = self.cut {
            sim.warn(line, CUT_WARNING.to_string());
        }
        if let Some((id, line)) = self.catalogue.open() {
            let msg = format!(
                "the definition of event {id} is never closed (no `%EndEventDef`); ignored"
            );
            sim.warn(line, msg);
        }
        let end = self.max_time.unwrap_or(0);
        let mut out = Emitter {
            queue: &mut self.queue,
            max_time: &mut self.max_time,
            thinning: &mut self.thinning,
        };
        let file = sim.file.clone();
        sim.close(ROOT, end, true, &mut out)
            .map_err(|msg| Error::file(format!("{file}: at end of input"), msg))?;
        if sim.dropped > 0 {
            sim.warnings.warn_at(
                Location::File(file.clone()),
                format!(
                    "{} event(s) on destroyed containers ignored, as PajeNG does (first on line {})",
                    sim.dropped, sim.first_dropped
                ),
            );
        }
        if sim.ignored_links > 0 {
            sim.warnings.warn_at(
                Location::File(file.clone()),
                format!(
                    "{} incomplete link(s) dropped, as pj_dump -z does",
                    sim.ignored_links
                ),
            );
        }
        if sim.lossy > 0 {
            sim.warnings.warn_at(
                Location::File(file),
                format!(
                    "{} time(s) finer than a nanosecond were rounded (rows flagged E)",
                    sim.lossy
                ),
            );
        }
        Ok(())
    }
}

impl<R: BufRead> RecordSource for PajeReader<R> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        while !self.done && !self.queue.is_full() {
            if !self.step()? {
                self.finish()?;
                self.done = true;
            }
        }
        Ok(self.queue.pop_into(rec))
    }

    /// The line of the row released last, which may be up to a reorder
    /// window behind the line read last.
    fn mark(&self) -> u64 {
        self.queue.released_mark()
    }

    fn locate(&self, line: u64) -> Location {
        Location::Line {
            file: self.sim.file.clone(),
            line,
        }
    }

    /// Rows wait in the reorder queue and complete no earlier than the
    /// newest released; a link waiting for its other half begins no
    /// earlier than its half or the end of the link before it.
    fn horizon(&self) -> Option<i64> {
        let queued = self.queue.earliest_start();
        if self.done {
            return Some(if self.queue.is_empty() {
                i64::MAX
            } else {
                queued
            });
        }
        Some(queued.min(self.sim.links_begun()))
    }

    /// Rows are whole; before a slice's T0, those no one reads are left
    /// out ([`Thinning`]).
    fn agree(&mut self, demand: crate::pipe::Demand) -> crate::pipe::Supply {
        self.thinning.before = demand.thin_before;
        crate::pipe::Supply::WHOLE_ROWS
    }
}
