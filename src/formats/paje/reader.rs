//! Reads a Pajé trace as a stream, simulating it the way PajeNG does.
//!
//! One pass, line by line. Memory holds the definitions, the type hierarchy,
//! one entry per container (live or destroyed), the open states, the current
//! value of each variable, the links waiting for their other half, and a
//! bounded reorder buffer: Pajé orders events per container and type only, so
//! rows are released by time once the buffer is full (`--reorder-window`).

use std::fmt::Write as _;
use std::io::BufRead;

use super::catalogue::{Catalogue, Line};
use super::lexer::Lines;
use super::{
    Event, Field, ATTR_COLOR, ATTR_END_TYPE, ATTR_OP, ATTR_OPERAND, ATTR_START_TYPE, LANE,
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
        true => Lines::ahead(&name, reader, &opts.pool),
        false => Lines::here(&name, reader),
    };
    Ok(Box::new(PajeReader::with_lines(lines, opts)))
}

/// Nanoseconds per second: Pajé times are seconds.
const NS: u64 = 1_000_000_000;

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
    /// Entity values: identifier → name and queued declaration.
    values: StrMap<(Sym, Option<Ticket>)>,
    /// The queued declaration row, while it may still need to move earlier.
    decl: Option<Ticket>,
}

#[derive(Debug, Default)]
struct Slot {
    type_: u32,
    last: i64,
    lane: Option<u32>,
    var: Option<Decimal>,
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
    slots: Vec<Slot>,
    /// Links of this container waiting for their other half.
    pending: u32,
}

#[derive(Debug)]
struct StateEntry {
    name: Sym,
    value: String,
}

#[derive(Debug)]
struct StateStack {
    loc: Sym,
    decl: Option<Ticket>,
    /// Open frames are `stack[..depth]`; slots above keep their buffers.
    stack: Vec<StateEntry>,
    depth: usize,
}

impl StateStack {
    fn push(&mut self, name: Sym, value: &str) {
        if self.depth == self.stack.len() {
            self.stack.push(StateEntry {
                name: Sym::EMPTY,
                value: String::new(),
            });
        }
        let f = &mut self.stack[self.depth];
        f.name = name;
        f.value.clear();
        f.value.push_str(value);
        self.depth += 1;
    }

    /// Pops the top frame (false on an empty stack); it stays readable as
    /// [`StateStack::popped`] until the next push.
    fn pop(&mut self) -> bool {
        match self.depth.checked_sub(1) {
            Some(d) => {
                self.depth = d;
                true
            }
            None => false,
        }
    }

    fn popped(&self) -> &StateEntry {
        &self.stack[self.depth]
    }
}

#[derive(Debug)]
struct PendingLink {
    start: bool,
    line: u64,
    value: String,
    container: u32,
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
    /// Entries of `pending` whose container is closed (with
    /// `--ignore-incomplete-links`), swept in bulk.
    stale: usize,
    ignore_incomplete: bool,
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

/// Slots of a container found by a scan; more go through `Sim::slot_index`.
const LINEAR_SLOTS: usize = 16;

impl Sim {
    fn new(file: &str, ignore_incomplete: bool, mut syms: SymCache, warnings: Warnings) -> Sim {
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
            stale: 0,
            ignore_incomplete,
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

    /// The slot of (container, type), checking that time does not go back.
    fn slot(&mut self, c: u32, t: u32, time: i64) -> Result<usize, String> {
        let i = self.slot_position(c, t);
        let container = &mut self.containers[c as usize];
        let slot = &mut container.slots[i];
        if time < slot.last {
            return Err(format!(
                "time goes backwards: {} s is before {} s, the previous event of type `{}` in container `{}` (Pajé orders events per container and type)",
                crate::model::record::format_seconds(time),
                crate::model::record::format_seconds(slot.last),
                self.types[t as usize].id,
                container.id
            ));
        }
        slot.last = time;
        container.last = container.last.max(time);
        Ok(i)
    }

    /// The position of the slot of (container, type) in the container's
    /// slots, made on first use. A container has a few types as a rule, found
    /// by a scan; past [`LINEAR_SLOTS`], through a map.
    fn slot_position(&mut self, c: u32, t: u32) -> usize {
        let slots = &mut self.containers[c as usize].slots;
        let found = if slots.len() <= LINEAR_SLOTS {
            slots.iter().position(|s| s.type_ == t)
        } else {
            self.slot_index.get(&(c, t)).map(|&i| i as usize)
        };
        if let Some(i) = found {
            return i;
        }
        slots.push(Slot {
            type_: t,
            last: i64::MIN,
            ..Slot::default()
        });
        let n = slots.len();
        if n == LINEAR_SLOTS + 1 {
            for (i, s) in slots.iter().enumerate() {
                self.slot_index.insert((c, s.type_), i as u32);
            }
        } else if n > LINEAR_SLOTS {
            self.slot_index.insert((c, t), (n - 1) as u32);
        }
        n - 1
    }

    /// Finds value `value` of type `t` for a use at `time`: moves its
    /// declaration before the use and returns its position in the type's
    /// values (`None` for an undeclared value, which names itself).
    fn use_value(&mut self, t: u32, value: &str, time: i64, out: &mut Out) -> Option<usize> {
        let values = &mut self.types[t as usize].values;
        let at = values.get_index_of(value)?;
        if let (_, Some(d)) = &mut values[at] {
            if d.key > time {
                *d = out.queue.lower(*d, time);
            }
        }
        Some(at)
    }

    /// The name of a value found by [`Sim::use_value`], and what the `value`
    /// column holds: the identifier when it differs from the name.
    fn value_name<'a>(&mut self, t: u32, at: Option<usize>, value: &'a str) -> (Sym, &'a str) {
        let name = match at {
            Some(at) => self.types[t as usize].values[at].0,
            None => self.syms.intern(value),
        };
        let same = self.syms.symbols().text(name) == value;
        (name, if same { "" } else { value })
    }

    /// Moves the declaration of type `t` (after its parent and, for a link
    /// type, its end types) before a use at `time`.
    fn touch_type(&mut self, t: u32, time: i64, out: &mut Out) {
        let ty = &self.types[t as usize];
        // A link type's end types are container types, whose ancestors are
        // container types too: two levels, no recursion.
        if ty.nature == Nature::Link && ty.decl.is_some_and(|d| d.key > time) {
            let ends = ty.ends;
            self.touch_type_chain(ends.0, time, out);
            self.touch_type_chain(ends.1, time, out);
        }
        self.touch_type_chain(t, time, out);
    }

    /// Moves the declarations of type `t` and its ancestors that come after
    /// `time` before it, outermost first (walked in a loop: a hierarchy may be
    /// as deep as the trace makes it).
    fn touch_type_chain(&mut self, t: u32, time: i64, out: &mut Out) {
        let mut chain = Vec::new();
        let mut at = t;
        // (The root type has no declaration row.)
        while let Some(d) = self.types[at as usize].decl.filter(|d| d.key > time) {
            chain.push((at, d));
            let parent = self.types[at as usize].parent;
            if parent == ROOT {
                break;
            }
            at = parent;
        }
        for &(t, d) in chain.iter().rev() {
            self.types[t as usize].decl = Some(out.queue.lower(d, time));
        }
    }

    /// Handles an event line: checks its length, then simulates it.
    fn event(
        &mut self,
        line: &Line,
        extra: Option<usize>,
        number: u64,
        out: &mut Out,
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
            | Event::DefineLinkType => self.define_type(line, out),
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

    /// `PajeDefine*Type`: a type of the hierarchy.
    fn define_type(&mut self, line: &Line, out: &mut Out) -> Result<(), String> {
        use Field::*;
        let nature = match line.def.event {
            Event::DefineContainerType => Nature::Container,
            Event::DefineStateType => Nature::State,
            Event::DefineEventType => Nature::EventType,
            Event::DefineVariableType => Nature::Variable,
            _ => Nature::Link,
        };
        let name = line.get(Name);
        let id = identifier(line);
        if id == "0" {
            return Err("a type cannot be identified as `0` (the root type)".into());
        }
        if self.type_index.contains_key(id) {
            return Err(format!("type `{id}` is defined twice"));
        }
        let parent = self.type_of(line.get(Type))?;
        if self.types[parent as usize].nature != Nature::Container {
            return Err(format!(
                "the parent of type `{id}` must be a container type; `{}` is a {} type",
                line.get(Type),
                self.types[parent as usize].nature.as_str()
            ));
        }
        let ends = match nature {
            Nature::Link => (
                self.link_end_type(line, StartContainerType, id)?,
                self.link_end_type(line, EndContainerType, id)?,
            ),
            _ => (0, 0),
        };
        let index = self.types.len() as u32;
        let (sym, name_sym) = (self.syms.intern(id), self.syms.intern(name));
        let cat = nature.sym(&mut self.syms);
        self.types.push(TypeInfo {
            id: id.to_string(),
            sym,
            name: name_sym,
            nature,
            parent,
            ends,
            values: StrMap::default(),
            decl: None,
        });
        self.type_index.insert(id.into(), index);
        let types = &self.types;
        let parent_id = if parent == ROOT {
            Sym::EMPTY
        } else {
            types[parent as usize].sym
        };
        let row = Row {
            id,
            name: name_sym,
            cat,
            peer: parent_id,
            extras: Some(line),
            ..Row::new(Kind::Type)
        };
        let ticket = out.row(row, |r| {
            if nature == Nature::Link {
                r.push_attr(ATTR_START_TYPE, &types[ends.0 as usize].id);
                r.push_attr(ATTR_END_TYPE, &types[ends.1 as usize].id);
            }
            if !line.get(Color).is_empty() {
                r.push_attr(ATTR_COLOR, line.get(Color));
            }
        })?;
        self.types[index as usize].decl = Some(ticket);
        Ok(())
    }

    /// The container type a link type starts or ends at (`field`).
    fn link_end_type(&self, line: &Line, field: Field, link: &str) -> Result<u32, String> {
        let t = self.type_of(line.get(field))?;
        if self.types[t as usize].nature != Nature::Container {
            return Err(format!(
                "{} `{}` of link type `{link}` is not a container type",
                field.name(),
                line.get(field)
            ));
        }
        Ok(t)
    }

    /// `PajeDefineEntityValue`: a named value of a state, event or link type.
    fn define_value(&mut self, line: &Line, out: &mut Out) -> Result<(), String> {
        let t = self.type_of(line.get(Field::Type))?;
        let ty = &self.types[t as usize];
        if !matches!(ty.nature, Nature::State | Nature::EventType | Nature::Link) {
            return Err(format!(
                "values belong to state, event or link types; `{}` is a {} type",
                ty.id,
                ty.nature.as_str()
            ));
        }
        let id = identifier(line);
        if ty.values.contains_key(id) {
            return Err(format!("value `{id}` of type `{}` is defined twice", ty.id));
        }
        let peer = ty.sym;
        let name = self.syms.intern(line.get(Field::Name));
        let row = Row {
            id,
            name,
            cat: well_known::VALUE,
            peer,
            extras: Some(line),
            ..Row::new(Kind::Type)
        };
        let ticket = out.row(row, |r| {
            if !line.get(Field::Color).is_empty() {
                r.push_attr(ATTR_COLOR, line.get(Field::Color));
            }
        })?;
        self.types[t as usize]
            .values
            .insert(id.into(), (name, Some(ticket)));
        Ok(())
    }

    /// `PajeCreateContainer`.
    fn create_container(&mut self, line: &Line, out: &mut Out) -> Result<(), String> {
        use Field::*;
        let (time, lossy) = self.time(line.get(Time))?;
        let parent = self.container_of(line.get(Container))?;
        let t = self.type_of(line.get(Type))?;
        let ty = &self.types[t as usize];
        if ty.nature != Nature::Container {
            return Err(format!("type `{}` is not a container type", ty.id));
        }
        let parent_type = self.containers[parent as usize].type_;
        if ty.parent != parent_type {
            return Err(format!(
                "container type `{}` is not a child type of `{}`, the type of container `{}`",
                ty.id,
                self.types[parent_type as usize].id,
                line.get(Container)
            ));
        }
        let id = identifier(line);
        if id == "0" {
            return Err("a container cannot be identified as `0` (the root container)".into());
        }
        if self.container_index.contains_key(id) {
            return Err(format!("container `{id}` is created twice"));
        }
        if self.lane_index.contains_key(id) {
            return Err(format!(
                "container `{id}` has the identifier of a state lane made by this reader; rename it"
            ));
        }
        let index = self.containers.len() as u32;
        let sym = self.syms.intern(id);
        let name = self.syms.intern(line.get(Name));
        self.containers.push(ContainerInfo {
            id: id.to_string(),
            sym,
            decl: None,
            parent,
            type_: t,
            children: Vec::new(),
            alive: true,
            last: time,
            slots: Vec::new(),
            pending: 0,
        });
        self.container_index.insert(id.into(), index);
        self.containers[parent as usize].children.push(index);
        let containers = &self.containers;
        let row = Row {
            time: Some(time),
            lossy,
            loc: sym,
            name,
            cat: self.types[t as usize].sym,
            peer: if parent == ROOT {
                Sym::EMPTY
            } else {
                containers[parent as usize].sym
            },
            extras: Some(line),
            ..Row::new(Kind::Container)
        };
        let ticket = out.row(row, |r| {
            if !line.get(Filename).is_empty() {
                r.push_attr("paje.filename", line.get(Filename));
            }
        })?;
        self.containers[index as usize].decl = Some(ticket);
        Ok(())
    }

    /// `PajeDestroyContainer`.
    fn destroy_container(&mut self, line: &Line, number: u64, out: &mut Out) -> Result<(), String> {
        let (time, _) = self.time(line.get(Field::Time))?;
        let c = self.container_of(line.get(Field::Name))?;
        let t = self.type_of(line.get(Field::Type))?;
        let info = &self.containers[c as usize];
        if info.type_ != t {
            return Err(format!(
                "container `{}` is of type `{}`, not `{}`",
                info.id,
                self.types[info.type_ as usize].id,
                line.get(Field::Type)
            ));
        }
        if time < info.last {
            return Err(format!(
                "container `{}` is destroyed at {} s, before its last event at {} s",
                info.id,
                crate::model::record::format_seconds(time),
                crate::model::record::format_seconds(info.last)
            ));
        }
        if info.alive {
            return self.close(c, time, false, out);
        }
        let msg = format!(
            "container `{}` is destroyed again; ignored, as PajeNG does",
            info.id
        );
        self.warn(number, msg);
        // Kept in the stream: its time still counts for the end of the trace.
        let row = Row {
            time: Some(time),
            loc: self.containers[c as usize].sym,
            ..Row::new(Kind::Destroy)
        };
        out.row(row, |_| {}).map(drop)
    }

    /// What every line about an entity (state, event, variable, link) starts
    /// with: its time, its live container (`None` when destroyed: the line
    /// is dropped), its type checked against `nature` and the container, the
    /// type declared before use, and the (container, type) slot in time order.
    fn entity(
        &mut self,
        line: &Line,
        nature: Nature,
        number: u64,
        out: &mut Out,
    ) -> Result<Option<Entity>, String> {
        let (time, lossy) = self.time(line.get(Field::Time))?;
        let Some(c) = self.alive_container(line.get(Field::Container), number)? else {
            return Ok(None);
        };
        let t = self.type_of(line.get(Field::Type))?;
        self.check_entity(c, t, nature)?;
        self.touch_type(t, time, out);
        // Links are checked when they complete, not half by half (PajeNG).
        let s = match nature {
            Nature::Link => {
                let container = &mut self.containers[c as usize];
                container.last = container.last.max(time);
                self.slot_position(c, t)
            }
            _ => self.slot(c, t, time)?,
        };
        Ok(Some(Entity {
            time,
            lossy,
            c,
            t,
            s,
        }))
    }

    /// `PajeSetState`, `PajePushState`, `PajePopState`, `PajeResetState`.
    fn state(&mut self, line: &Line, number: u64, out: &mut Out) -> Result<(), String> {
        let event = line.def.event;
        let Some(Entity {
            time,
            lossy,
            c,
            t,
            s,
        }) = self.entity(line, Nature::State, number, out)?
        else {
            return Ok(());
        };
        // A lane is declared when a state first needs it, not by a reset
        // of an empty stack (which leaves nothing in the stream).
        let existing = self.containers[c as usize].slots[s].lane;
        let lane = match (existing, event) {
            (Some(l), _) => l,
            (None, Event::SetState | Event::PushState) => self.lane(c, s, t, out)?,
            (None, Event::PopState) => return Err(self.empty_stack(t, line)),
            (None, _) => return Ok(()),
        };
        self.touch_lane(lane, c, time, out);
        let close = Closing {
            type_: t,
            extras: (event != Event::SetState).then_some(line),
            lossy,
            flag: "",
        };
        match event {
            Event::PopState => {
                if !self.pop_one(lane, time, &close, out)? {
                    return Err(self.empty_stack(t, line));
                }
                Ok(())
            }
            Event::ResetState => self.pop_all(lane, time, &close, out),
            _ => {
                if event == Event::SetState {
                    self.pop_all(lane, time, &close, out)?;
                }
                self.push(lane, t, time, lossy, line, out)
            }
        }
    }

    fn empty_stack(&self, t: u32, line: &Line) -> String {
        format!(
            "pop on an empty stack: no open state of type `{}` in container `{}`",
            self.types[t as usize].id,
            line.get(Field::Container)
        )
    }

    /// Opens a state on a lane, as an `enter` row.
    fn push(
        &mut self,
        lane: u32,
        t: u32,
        time: i64,
        lossy: bool,
        line: &Line,
        out: &mut Out,
    ) -> Result<(), String> {
        let value = line.get(Field::Value);
        let at = self.use_value(t, value, time, out);
        let (name, value_col) = self.value_name(t, at, value);
        let l = &mut self.lanes[lane as usize];
        let depth = l.depth;
        l.push(name, value_col);
        let row = Row {
            time: Some(time),
            lossy,
            loc: l.loc,
            cat: self.types[t as usize].sym,
            name,
            value: value_col,
            extras: Some(line),
            ..Row::new(Kind::Enter)
        };
        out.row(row, |r| {
            r.depth = Some(depth as u32);
            for f in [Field::Line, Field::File] {
                if !line.get(f).is_empty() {
                    r.push_attr(
                        &format!("paje.{}", f.name().to_ascii_lowercase()),
                        line.get(f),
                    );
                }
            }
        })
        .map(drop)
    }

    /// `PajeNewEvent`.
    fn new_event(&mut self, line: &Line, number: u64, out: &mut Out) -> Result<(), String> {
        let Some(entity) = self.entity(line, Nature::EventType, number, out)? else {
            return Ok(());
        };
        let c = entity.c;
        let at = self.use_entity(&entity, c, line, out);
        let row = self.valued_row(Kind::Event, &entity, c, at, line);
        out.row(row, |_| {}).map(drop)
    }

    /// `PajeSetVariable`, `PajeAddVariable`, `PajeSubVariable`.
    fn variable(&mut self, line: &Line, number: u64, out: &mut Out) -> Result<(), String> {
        let event = line.def.event;
        let entity = self.entity(line, Nature::Variable, number, out)?;
        let Some(Entity {
            time,
            lossy,
            c,
            t,
            s,
        }) = entity
        else {
            return Ok(());
        };
        self.touch(c, time, out);
        let text = line.get(Field::Value);
        let operand = Decimal::parse(text)
            .ok_or_else(|| format!("bad variable value `{text}`: expected a decimal number"))?;
        let slot = &mut self.containers[c as usize].slots[s];
        let value = &mut self.number;
        value.clear();
        let op = match (event, slot.var) {
            (Event::SetVariable, _) => {
                // Canonical, like the sums after an add or sub.
                let _ = write!(value, "{operand}");
                slot.var = Some(operand);
                None
            }
            (_, None) => {
                return Err(format!(
                    "{} to variable `{}` of container `{}`, which has no value yet (needs a PajeSetVariable first)",
                    if event == Event::AddVariable { "addition" } else { "subtraction" },
                    self.types[t as usize].id,
                    line.get(Field::Container)
                ));
            }
            (_, Some(current)) => {
                let (delta, op) = match event {
                    Event::AddVariable => (operand, "add"),
                    _ => (operand.neg(), "sub"),
                };
                let sum = current
                    .add(&delta)
                    .ok_or("variable value needs more than 36 significant digits")?;
                let _ = write!(value, "{sum}");
                slot.var = Some(sum);
                Some(op)
            }
        };
        let ty = &self.types[t as usize];
        let row = Row {
            time: Some(time),
            lossy,
            loc: self.containers[c as usize].sym,
            cat: ty.sym,
            name: ty.name,
            value: &self.number,
            extras: Some(line),
            ..Row::new(Kind::Counter)
        };
        out.row(row, |r| {
            if let Some(op) = op {
                r.push_attr(ATTR_OP, op);
                r.push_attr(ATTR_OPERAND, text);
            }
        })
        .map(drop)
    }

    /// `PajeStartLink`, `PajeEndLink`: one half of a link. A link is a `msg`
    /// row when its second half comes (as PajeNG keeps completed links),
    /// made of the halves as `trace-match` pairs them: the first half waits
    /// (memory: the links in flight), so a half written long after its
    /// time, as a writer that writes links when they complete does, is in
    /// order all the same.
    fn link(&mut self, line: &Line, number: u64, out: &mut Out) -> Result<(), String> {
        let start = line.def.event == Event::StartLink;
        let Some(entity) = self.entity(line, Nature::Link, number, out)? else {
            return Ok(());
        };
        let (c, t) = (entity.c, entity.t);
        let other = self.link_end(line, t, start)?;
        let kind = if start { Kind::Send } else { Kind::Recv };
        let at = self.use_entity(&entity, other, line, out);
        let row = Row {
            comm: self.containers[c as usize].sym,
            id: line.get(Field::Key),
            ..self.valued_row(kind, &entity, other, at, line)
        };
        let mut half = self.spare_halves.pop().unwrap_or_default();
        half.clear();
        fill_row(&mut half, row, |_| {});
        // A half counts for the end of the trace even when its link never
        // completes (PajeNG's -z).
        *out.max_time = Some(out.max_time.map_or(entity.time, |m| m.max(entity.time)));
        let Some(first) = self.pair_link(line, c, t, number, half)? else {
            return Ok(());
        };
        let ticket = out.declare(|msg| {
            pair_halves(msg, &first.0, &first.1);
        });
        self.spare_halves.extend([first.0, first.1]);
        let completion = ticket?.key;
        self.check_link_order(c, t, entity.s, completion)
    }

    /// A completed link may not complete before the previous one of its
    /// type in its container (PajeNG's only order check on links).
    fn check_link_order(
        &mut self,
        c: u32,
        t: u32,
        s: usize,
        completion: i64,
    ) -> Result<(), String> {
        let container = &mut self.containers[c as usize];
        let slot = &mut container.slots[s];
        if completion < slot.last {
            return Err(format!(
                "a link of type `{}` in container `{}` completes at {} s, before the previous one ({} s): PajeNG stores completed links in time order",
                self.types[t as usize].id,
                container.id,
                crate::model::record::format_seconds(completion),
                crate::model::record::format_seconds(slot.last)
            ));
        }
        slot.last = completion;
        container.last = container.last.max(completion);
        Ok(())
    }

    /// Declares what an event or link line on container `on` uses before
    /// its row, and finds its value among the type's definitions.
    fn use_entity(
        &mut self,
        entity: &Entity,
        on: u32,
        line: &Line,
        out: &mut Out,
    ) -> Option<usize> {
        self.touch(on, entity.time, out);
        self.use_value(entity.t, line.get(Field::Value), entity.time, out)
    }

    /// The row of an event or link line on container `on`, its value `at`
    /// (from [`Sim::use_entity`]) named as the type's definitions say.
    fn valued_row<'a>(
        &mut self,
        kind: Kind,
        entity: &Entity,
        on: u32,
        at: Option<usize>,
        line: &'a Line<'a>,
    ) -> Row<'a> {
        let (name, value) = self.value_name(entity.t, at, line.get(Field::Value));
        Row {
            time: Some(entity.time),
            lossy: entity.lossy,
            loc: self.containers[on as usize].sym,
            cat: self.types[entity.t as usize].sym,
            name,
            value,
            extras: Some(line),
            ..Row::new(kind)
        }
    }

    /// The container a link half starts or ends at, checked against its type.
    fn link_end(&self, line: &Line, t: u32, start: bool) -> Result<u32, String> {
        let field = if start {
            Field::StartContainer
        } else {
            Field::EndContainer
        };
        let other = self.container_of(line.get(field))?;
        let ty = &self.types[t as usize];
        let want = if start { ty.ends.0 } else { ty.ends.1 };
        let other_type = self.containers[other as usize].type_;
        if other_type != want {
            return Err(format!(
                "{} `{}` is of type `{}`, but link type `{}` {} at type `{}`",
                field.name(),
                line.get(field),
                self.types[other_type as usize].id,
                ty.id,
                if start { "starts" } else { "ends" },
                self.types[want as usize].id
            ));
        }
        Ok(other)
    }

    /// Pairs a link half with the pending other half of its key, or leaves
    /// it pending; the halves must carry the same value.
    fn pair_link(
        &mut self,
        line: &Line,
        c: u32,
        t: u32,
        number: u64,
        half: Box<Record>,
    ) -> Result<Option<LinkHalves>, String> {
        let start = half.kind == Kind::Send;
        let value = line.get(Field::Value);
        let key = line.get(Field::Key);
        self.key.clear();
        for part in [
            self.containers[c as usize].id.as_str(),
            "\u{0}",
            self.types[t as usize].id.as_str(),
            "\u{0}",
            key,
        ] {
            self.key.push_str(part);
        }
        match self.pending.remove_entry(&self.key) {
            Some((_, p)) if p.start == start => Err(format!(
                "a second {} of link key `{key}` (type `{}`, container `{}`) while the first, on line {}, has no {} yet",
                if start { "start" } else { "end" },
                self.types[t as usize].id,
                line.get(Field::Container),
                p.line,
                if start { "end" } else { "start" }
            )),
            Some((_, p)) if p.value != value => Err(format!(
                "link key `{key}` ends with value `{value}` but started with `{}` (line {})",
                p.value, p.line
            )),
            Some((spare_key, p)) => {
                self.containers[p.container as usize].pending -= 1;
                self.spare_strings.push(spare_key);
                self.spare_strings.push(p.value);
                Ok(Some((p.half, half)))
            }
            None => {
                let mut pending_key = self.spare_strings.pop().unwrap_or_default();
                pending_key.clone_from(&self.key);
                let mut pending_value = self.spare_strings.pop().unwrap_or_default();
                pending_value.clear();
                pending_value.push_str(value);
                let link = PendingLink {
                    start,
                    line: number,
                    value: pending_value,
                    container: c,
                    half,
                };
                self.pending.insert(pending_key, link);
                self.containers[c as usize].pending += 1;
                Ok(None)
            }
        }
    }

    /// Reports a warning about line `line`.
    fn warn(&self, line: u64, msg: String) {
        let at = Location::Line {
            file: self.file.clone(),
            line,
        };
        self.warnings.warn_at(at, msg);
    }

    /// The container named `id` if alive; `None` (with a count for the final
    /// warning) if it was destroyed: PajeNG drops such events.
    fn alive_container(&mut self, id: &str, number: u64) -> Result<Option<u32>, String> {
        let c = self.container_of(id)?;
        if self.containers[c as usize].alive {
            return Ok(Some(c));
        }
        if self.dropped == 0 {
            self.first_dropped = number;
        }
        self.dropped += 1;
        Ok(None)
    }

    /// Makes sure the declaration of container `c` (and its ancestors) comes
    /// out before a row at `time` that uses it: ancestors are moved first, so
    /// they keep preceding their children.
    fn touch(&mut self, c: u32, time: i64, out: &mut Out) {
        if c == ROOT && self.containers[0].decl.is_none() {
            // The root container is declared when a row first uses it.
            let zero = self.containers[0].sym;
            let row = Row {
                loc: zero,
                cat: zero,
                name: zero,
                ..Row::new(Kind::Container)
            };
            if let Ok(ticket) = out.row(row, |_| {}) {
                self.containers[0].decl = Some(ticket);
            }
        }
        let mut chain = Vec::new();
        let mut at = c;
        while at != ROOT {
            let info = &self.containers[at as usize];
            match info.decl {
                Some(d) if d.key > time => chain.push(at),
                _ => break,
            }
            at = info.parent;
        }
        for &c in chain.iter().rev() {
            let t = self.containers[c as usize].type_;
            self.touch_type(t, time, out);
            let info = &mut self.containers[c as usize];
            if let Some(d) = info.decl {
                info.decl = Some(out.queue.lower(d, time));
            }
        }
    }

    /// [`Sim::touch`] for a lane of container `c` (the container first).
    fn touch_lane(&mut self, lane: u32, c: u32, time: i64, out: &mut Out) {
        self.touch(c, time, out);
        if let Some(d) = self.lanes[lane as usize].decl {
            if d.key > time {
                self.lanes[lane as usize].decl = Some(out.queue.lower(d, time));
            }
        }
    }

    /// The lane of (container, state type), declared on first use.
    fn lane(&mut self, c: u32, s: usize, t: u32, out: &mut Out) -> Result<u32, String> {
        if let Some(l) = self.containers[c as usize].slots[s].lane {
            return Ok(l);
        }
        let container = &self.containers[c as usize];
        let mut loc = format!("{}/{}", container.id, self.types[t as usize].id);
        while self.container_index.contains_key(loc.as_str())
            || self.lane_index.contains_key(loc.as_str())
        {
            loc.push_str("/lane");
        }
        let index = self.lanes.len() as u32;
        self.lane_index.insert(loc.as_str().into(), index);
        let loc = self.syms.intern(&loc);
        let row = Row {
            loc,
            cat: LANE,
            name: self.types[t as usize].name,
            peer: container.sym,
            ..Row::new(Kind::Container)
        };
        let ticket = out.row(row, |_| {})?;
        self.lanes.push(StateStack {
            loc,
            decl: Some(ticket),
            stack: Vec::new(),
            depth: 0,
        });
        self.containers[c as usize].slots[s].lane = Some(index);
        Ok(index)
    }

    /// Closes the top state of a lane at `time` (false if none is open).
    /// `flag` marks closings the trace implies rather than states (`S`).
    fn pop_one(
        &mut self,
        lane: u32,
        time: i64,
        close: &Closing,
        out: &mut Out,
    ) -> Result<bool, String> {
        if !self.lanes[lane as usize].pop() {
            return Ok(false);
        }
        let l = &self.lanes[lane as usize];
        let frame = l.popped();
        let row = Row {
            time: Some(time),
            lossy: close.lossy,
            loc: l.loc,
            cat: self.types[close.type_ as usize].sym,
            name: frame.name,
            value: &frame.value,
            extras: close.extras,
            ..Row::new(Kind::Leave)
        };
        out.row(row, |r| {
            r.depth = Some(l.depth as u32);
            r.flags.push_str(close.flag);
        })?;
        Ok(true)
    }

    /// Closes every open state of a lane at `time`, innermost first.
    fn pop_all(
        &mut self,
        lane: u32,
        time: i64,
        close: &Closing,
        out: &mut Out,
    ) -> Result<(), String> {
        while self.pop_one(lane, time, close, out)? {}
        Ok(())
    }

    /// Destroys container `c` (and, first, its live children) at `time`:
    /// closes its open states and checks its pending links. `synthetic` marks
    /// a destruction PajeNG implies rather than the trace states.
    fn close(&mut self, c: u32, time: i64, synthetic: bool, out: &mut Out) -> Result<(), String> {
        // Children first (in creation order), also those of dead containers
        // (created under a destroyed parent, which PajeNG accepts): the
        // subtree in post-order, walked with a stack of its own, not the call
        // stack, so no depth of nesting can overflow it. A closed container
        // forgets its children, so no later closing walks them again.
        let mut walk = vec![c];
        let mut order = Vec::new();
        while let Some(x) = walk.pop() {
            order.push(x);
            walk.extend(std::mem::take(&mut self.containers[x as usize].children));
        }
        for &x in order.iter().rev() {
            self.close_one(x, time, synthetic || x != c, out)?;
        }
        Ok(())
    }

    /// Closes container `c` itself (its children are closed): its open states,
    /// its pending links, and its `destroy` row.
    fn close_one(
        &mut self,
        c: u32,
        time: i64,
        synthetic: bool,
        out: &mut Out,
    ) -> Result<(), String> {
        if !self.containers[c as usize].alive && c != ROOT {
            return Ok(());
        }
        let slots: Vec<(u32, u32)> = self.containers[c as usize]
            .slots
            .iter()
            .filter_map(|s| s.lane.map(|l| (l, s.type_)))
            .collect();
        for (lane, t) in slots {
            let close = Closing {
                type_: t,
                extras: None,
                lossy: false,
                flag: "S",
            };
            self.pop_all(lane, time, &close, out)?;
        }
        if c != ROOT {
            self.touch(c, time, out);
        }
        self.check_pending(c)?;
        let info = &mut self.containers[c as usize];
        info.alive = false;
        info.last = info.last.max(time);
        // What a dead container no longer needs: its slots and their lanes'
        // stacks (its entry stays, to drop later events on it as PajeNG does).
        for slot in std::mem::take(&mut info.slots) {
            if let Some(lane) = slot.lane {
                self.lanes[lane as usize].stack = Vec::new();
            }
        }
        let info = &self.containers[c as usize];
        if c == ROOT {
            return Ok(());
        }
        let row = Row {
            time: Some(time),
            loc: info.sym,
            ..Row::new(Kind::Destroy)
        };
        out.row(row, |r| {
            if synthetic {
                r.add_flag(flags::SYNTHETIC);
            }
        })
        .map(drop)
    }

    /// Links of container `c` still waiting for their other half: an error, or
    /// (with `--ignore-incomplete-links`) a count.
    fn check_pending(&mut self, c: u32) -> Result<(), String> {
        let count = self.containers[c as usize].pending;
        if count == 0 {
            return Ok(());
        }
        if self.ignore_incomplete {
            // Left in the map (the container is dead, so nothing can match
            // them) and swept once they are half of it: linear in all.
            self.ignored_links += u64::from(count);
            self.stale += count as usize;
            if self.stale > 1024 && 2 * self.stale > self.pending.len() {
                let containers = &self.containers;
                self.pending
                    .retain(|_, p| p.container != c && containers[p.container as usize].alive);
                self.stale = 0;
            }
            return Ok(());
        }
        let mut incomplete: Vec<(u64, String)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.container == c)
            .map(|(k, p)| (p.line, k.rsplit('\u{0}').next().unwrap_or("").to_string()))
            .collect();
        if incomplete.is_empty() {
            return Ok(());
        }
        incomplete.sort();
        let (line, key) = &incomplete[0];
        Err(format!(
            "incomplete link: key `{key}` (line {line}) has no {} when container `{}` ends{}; --ignore-incomplete-links drops such links, as pj_dump -z does",
            if self.pending.values().any(|p| p.line == *line && p.start) { "end" } else { "start" },
            self.containers[c as usize].id,
            if incomplete.len() > 1 {
                format!(" ({} incomplete links in all)", incomplete.len())
            } else {
                String::new()
            }
        ))
    }
}

/// How states are closed: by which type, with which event's user fields.
struct Closing<'a> {
    /// The state type.
    type_: u32,
    /// The line whose user fields the closing rows carry.
    extras: Option<&'a Line<'a>>,
    lossy: bool,
    /// `S` when the trace implies the closing (a destruction, the end).
    flag: &'a str,
}

/// Where the simulator's rows go: the reorder queue, with located errors.
struct Out<'a> {
    queue: &'a mut RowQueue,
    /// Latest time of the rows produced so far (where declarations wait, and
    /// where the trace ends).
    max_time: &'a mut Option<i64>,
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
    if let Some(line) = row.extras.filter(|l| l.has_extras()) {
        for (k, v) in line.extras() {
            r.push_attr(k, v);
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

impl Out<'_> {
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
        for t in [rec.time, rec.end].into_iter().flatten() {
            *self.max_time = Some(self.max_time.map_or(t, |m| m.max(t)));
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
    word_buf: Vec<&'static str>,
    done: bool,
    /// The last line, when it has no final newline.
    cut: Option<u64>,
}

/// Default number of rows the reorder buffer holds.
pub const DEFAULT_REORDER_WINDOW: usize = 4_096;

impl<R: BufRead> PajeReader<R> {
    /// A reader over `inner`, on this thread.
    pub fn new(name: &str, inner: R, opts: &ReadOptions) -> PajeReader<R> {
        PajeReader::with_lines(Lines::here(name, inner), opts)
    }

    /// A reader of `lines`.
    fn with_lines(lines: Lines<R>, opts: &ReadOptions) -> PajeReader<R> {
        let name = lines.name().to_string();
        let name = name.as_str();
        let window = match opts.format.number(REORDER_WINDOW) {
            Some(rows) if rows > 0 => usize::try_from(rows).unwrap_or(usize::MAX),
            _ => DEFAULT_REORDER_WINDOW,
        };
        let mut queue = RowQueue::new(window);
        let mut syms = SymCache::new(opts.symbols.clone());
        let unit = opts.format.choice(TIME_UNIT).unwrap_or("s");
        let ns_per_unit = TIME_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map_or(NS, |&(_, ns)| ns);
        for (k, v) in [
            ("source_format", "paje"),
            ("source", name),
            ("time_unit", unit),
        ] {
            let slot = queue.slot();
            *queue.get(slot) = Record::meta(syms.intern(k), v);
            let _ = queue.commit(slot, i64::MIN);
        }
        let mut sim = Sim::new(
            name,
            opts.format.switch(IGNORE_INCOMPLETE_LINKS),
            syms,
            opts.warnings.clone(),
        );
        sim.ns_per_unit = ns_per_unit;
        PajeReader {
            lines,
            catalogue: Catalogue::default(),
            sim,
            queue,
            max_time: None,
            word_buf: Vec::new(),
            done: false,
            cut: None,
        }
    }

    /// Reads one line into the queue; false at the end of the input.
    fn step(&mut self) -> Result<bool> {
        let Some(line) = self.lines.next_lexed()? else {
            return Ok(false);
        };
        let number = line.number;
        self.queue.set_mark(number);
        let cut = line.truncated && !line.text.iter().all(u8::is_ascii_whitespace);
        if cut {
            self.cut = Some(number);
        }
        if line.words.is_empty() {
            return Ok(true);
        }
        let file = self.sim.file.as_str();
        let text = line
            .text()
            .ok_or_else(|| Error::line(file, number, "invalid UTF-8: text must be UTF-8"))?;
        // Reuse one allocation for the words of every line (the collect from an
        // emptied vector of the same layout keeps its buffer).
        let mut words: Vec<&str> = std::mem::take(&mut self.word_buf)
            .into_iter()
            .map(|_| "")
            .collect();
        for &(a, b) in line.words {
            // Words are cut at ASCII bytes, so at char boundaries.
            words.push(text.get(a as usize..b as usize).unwrap_or_default());
        }
        let mut out = Out {
            queue: &mut self.queue,
            max_time: &mut self.max_time,
        };
        let result = if words[0].starts_with('%') {
            self.catalogue.definition(&words, number)
        } else if let Some((id, _)) = self.catalogue.open() {
            Err(format!(
                "event line inside the definition of event {id} (missing `%EndEventDef`)"
            ))
        } else {
            match self.catalogue.line(&words) {
                Ok((line, extra)) => self.sim.event(&line, extra, number, &mut out),
                Err(msg) => Err(msg),
            }
        };
        words.clear();
        self.word_buf = words.into_iter().map(|_| "").collect();
        result.map_err(|msg| {
            let msg = if cut { cut_error(&msg) } else { msg };
            Error::line(self.lines.name(), number, msg)
        })?;
        Ok(true)
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
        let mut out = Out {
            queue: &mut self.queue,
            max_time: &mut self.max_time,
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

    crate::whole_rows!();
}
