//! Reads a Pajé trace as a stream, simulating it the way PajeNG does.
//!
//! One pass, line by line. Memory holds the definitions, the type hierarchy,
//! one entry per container (live or destroyed), the open states, the current
//! value of each variable, the links waiting for their other half, and a
//! bounded reorder buffer: Pajé orders events per container and type only, so
//! rows are released by time once the buffer is full (`--reorder-window`).

use std::fmt::Write as _;
use std::io::BufRead;
use std::rc::Rc;

use super::{
    split_words, Event, Field, ATTR_COLOR, ATTR_END_TYPE, ATTR_OP, ATTR_OPERAND, ATTR_START_TYPE,
    FIELD_TYPES, LANE,
};
use crate::decimal::Decimal;
use crate::error::{Error, Location, Result, Warnings};
use crate::fasthash::{FastMap, StrMap};
use crate::io::{Input, LineReader};
use crate::ops::reorder::{RowQueue, Ticket};
use crate::pipe::{FormatOption, OptionValue, ReadOptions, RecordSource};
use crate::record::{flags, Kind, Record};

const IGNORE_INCOMPLETE_LINKS: &str = "ignore-incomplete-links";
const REORDER_WINDOW: &str = "reorder-window";

/// The options of the Pajé reader.
pub const READ_OPTIONS: &[FormatOption] = &[
    FormatOption {
        name: IGNORE_INCOMPLETE_LINKS,
        help: "Keep links whose other half never comes as unmatched halves (pj_dump's -z) instead of failing",
        value: OptionValue::Switch,
    },
    FormatOption {
        name: REORDER_WINDOW,
        help: "Rows held to put events of different containers back in time order (default 4096; memory grows with it)",
        value: OptionValue::Number("ROWS"),
    },
];

/// Registry constructor.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    Ok(Box::new(PajeReader::new(&name, reader, opts)))
}

/// Nanoseconds per second: Pajé times are seconds.
const NS: u64 = 1_000_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    Known(Field),
    Extra(String),
}

#[derive(Debug)]
struct Def {
    event: Event,
    fields: Vec<Role>,
    /// Position of each known field in the line (0 = absent, else index + 1).
    index: [u16; 15],
    has_extras: bool,
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
    name: String,
    nature: Nature,
    parent: u32,
    /// Link types: start and end container types.
    ends: (u32, u32),
    /// Entity values: identifier → name and queued declaration.
    values: StrMap<(String, Option<Ticket>)>,
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
    /// The queued declaration row, while it may still need to move earlier.
    decl: Option<Ticket>,
    parent: u32,
    type_: u32,
    children: Vec<u32>,
    alive: bool,
    last: i64,
    slots: Vec<Slot>,
}

#[derive(Debug)]
struct Frame {
    name: String,
    value: String,
}

#[derive(Debug)]
struct Lane {
    loc: String,
    decl: Option<Ticket>,
    /// Open frames are `stack[..depth]`; slots above keep their buffers.
    stack: Vec<Frame>,
    depth: usize,
}

impl Lane {
    fn push(&mut self, name: &str, value: &str) {
        if self.depth == self.stack.len() {
            self.stack.push(Frame {
                name: String::new(),
                value: String::new(),
            });
        }
        let f = &mut self.stack[self.depth];
        f.name.clear();
        f.name.push_str(name);
        f.value.clear();
        f.value.push_str(value);
        self.depth += 1;
    }

    /// Pops the top frame (false on an empty stack); it stays readable as
    /// [`Lane::popped`] until the next push.
    fn pop(&mut self) -> bool {
        match self.depth.checked_sub(1) {
            Some(d) => {
                self.depth = d;
                true
            }
            None => false,
        }
    }

    fn popped(&self) -> &Frame {
        &self.stack[self.depth]
    }
}

#[derive(Debug)]
struct PendingLink {
    start: bool,
    line: u64,
    value: String,
    container: u32,
}

/// The simulation state.
struct Sim {
    file: String,
    defs: StrMap<Rc<Def>>,
    /// The same definitions, by number for ids in `0..SMALL_IDS`.
    small_defs: Vec<Option<Rc<Def>>>,
    open_def: Option<(String, Def, u64)>,
    types: Vec<TypeInfo>,
    type_index: StrMap<u32>,
    containers: Vec<ContainerInfo>,
    container_index: StrMap<u32>,
    lanes: Vec<Lane>,
    lane_index: StrMap<u32>,
    pending: FastMap<String, PendingLink>,
    ignore_incomplete: bool,
    lossy: u64,
    dropped: u64,
    first_dropped: u64,
    ignored_links: u64,
    key: String,
    /// Reused for the text of variable values.
    number: String,
    /// Buffers of matched links' keys and values, reused by the next ones.
    spare_strings: Vec<String>,
    warnings: Warnings,
}

/// The words of one event line, read through its definition.
struct Line<'a> {
    def: &'a Def,
    /// The event id, then the fields in definition order.
    words: &'a [&'a str],
}

impl<'a> Line<'a> {
    /// The value of a known field ("" when the definition lacks it).
    fn get(&self, f: Field) -> &'a str {
        match self.def.index[f as usize] {
            0 => "",
            i => self.words[usize::from(i)],
        }
    }

    /// The user-defined fields: (name, value).
    fn extras(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        self.def
            .fields
            .iter()
            .zip(&self.words[1..])
            .filter_map(|(role, word)| match role {
                Role::Extra(name) => Some((name.as_str(), *word)),
                Role::Known(_) => None,
            })
    }

    fn has_extras(&self) -> bool {
        self.def.has_extras
    }
}

/// Event ids that are small decimal numbers (as almost every trace uses) are
/// found by index instead of by hash.
const SMALL_IDS: usize = 1024;

fn small_id(id: &str) -> Option<usize> {
    crate::number::parse_uint(id.as_bytes())
        .filter(|&n| n < SMALL_IDS as u64)
        .map(|n| n as usize)
}

const ROOT: u32 = 0;

fn err(msg: impl Into<String>) -> String {
    msg.into()
}

impl Sim {
    fn new(file: &str, ignore_incomplete: bool, warnings: Warnings) -> Sim {
        let mut sim = Sim {
            warnings,
            file: file.to_string(),
            defs: StrMap::default(),
            small_defs: vec![None; SMALL_IDS],
            open_def: None,
            types: Vec::new(),
            type_index: StrMap::default(),
            containers: Vec::new(),
            container_index: StrMap::default(),
            lanes: Vec::new(),
            lane_index: StrMap::default(),
            pending: FastMap::default(),
            ignore_incomplete,
            lossy: 0,
            dropped: 0,
            first_dropped: 0,
            ignored_links: 0,
            key: String::new(),
            number: String::new(),
            spare_strings: Vec::new(),
        };
        sim.types.push(TypeInfo {
            id: "0".into(),
            name: "0".into(),
            nature: Nature::Container,
            parent: ROOT,
            ends: (0, 0),
            values: StrMap::default(),
            decl: None,
        });
        sim.type_index.insert("0".into(), ROOT);
        sim.containers.push(ContainerInfo {
            id: "0".into(),
            decl: None,
            parent: ROOT,
            type_: ROOT,
            children: Vec::new(),
            alive: true,
            last: 0,
            slots: Vec::new(),
        });
        sim.container_index.insert("0".into(), ROOT);
        sim
    }

    /// Handles a `%` line.
    fn definition(&mut self, words: &[&str], number: u64) -> Result<(), String> {
        let first = words[0].trim_start_matches('%');
        let (keyword, args) = if first.is_empty() {
            match words.get(1) {
                Some(k) => (*k, &words[2..]),
                None => {
                    return Err(err(
                        "empty `%` line: expected EventDef, EndEventDef or a field",
                    ))
                }
            }
        } else {
            (first, &words[1..])
        };
        match keyword {
            "EventDef" => {
                if let Some((id, _, line)) = &self.open_def {
                    return Err(format!(
                        "`%EventDef` inside the definition of event {id} opened on line {line} (missing `%EndEventDef`)"
                    ));
                }
                let [name, id] = args else {
                    return Err(err("expected `%EventDef <PajeEventName> <id>`"));
                };
                let event = Event::from_name(name).ok_or_else(|| {
                    format!("unknown event name `{name}` (PajeNG knows the Paje* events only)")
                })?;
                if self.defs.contains_key(*id) {
                    return Err(format!("event id `{id}` is defined twice"));
                }
                self.open_def = Some((
                    id.to_string(),
                    Def {
                        event,
                        fields: Vec::new(),
                        index: [0; 15],
                        has_extras: false,
                    },
                    number,
                ));
                Ok(())
            }
            "EndEventDef" => {
                let Some((id, mut def, _)) = self.open_def.take() else {
                    return Err(err("`%EndEventDef` without `%EventDef`"));
                };
                if def.fields.len() >= usize::from(u16::MAX) {
                    return Err(format!(
                        "the definition of event {id} has {} fields (at most {} are read)",
                        def.fields.len(),
                        u16::MAX - 1
                    ));
                }
                for f in def.event.obligatory() {
                    if def.index[*f as usize] == 0 {
                        return Err(format!(
                            "definition of {} (id {id}) lacks the obligatory field `{}`",
                            def.event.name(),
                            f.name()
                        ));
                    }
                }
                for (i, role) in def.fields.iter().enumerate() {
                    match role {
                        Role::Known(f) => def.index[*f as usize] = (i + 1) as u16,
                        Role::Extra(_) => def.has_extras = true,
                    }
                }
                let def = Rc::new(def);
                if let Some(n) = small_id(&id) {
                    self.small_defs[n] = Some(Rc::clone(&def));
                }
                self.defs.insert(id.as_str().into(), def);
                Ok(())
            }
            field => {
                let Some((id, def, _)) = &mut self.open_def else {
                    return Err(format!("field `{field}` outside an `%EventDef` block"));
                };
                let Some(ty) = args.first() else {
                    return Err(format!("field `{field}` has no type"));
                };
                if !FIELD_TYPES.contains(ty) {
                    return Err(format!(
                        "unknown field type `{ty}` for `{field}` (expected one of {})",
                        FIELD_TYPES.join(", ")
                    ));
                }
                let role = match Field::from_name(field) {
                    Some(f) => {
                        if def.index[f as usize] != 0 {
                            return Err(format!(
                                "field `{field}` appears twice in the definition of event {id}"
                            ));
                        }
                        def.index[f as usize] = 1;
                        Role::Known(f)
                    }
                    None => Role::Extra(field.to_string()),
                };
                def.fields.push(role);
                Ok(())
            }
        }
    }

    fn time(&mut self, text: &str) -> Result<(i64, bool), String> {
        if let Some(ns) = crate::decimal::plain_seconds_to_ns(text) {
            return Ok((ns, false));
        }
        let d = Decimal::parse(text)
            .ok_or_else(|| format!("bad time `{text}`: expected a decimal number of seconds"))?;
        let (t, lossy) = d
            .scaled(NS)
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
        let container = &mut self.containers[c as usize];
        let i = match container.slots.iter().position(|s| s.type_ == t) {
            Some(i) => i,
            None => {
                container.slots.push(Slot {
                    type_: t,
                    last: i64::MIN,
                    ..Slot::default()
                });
                container.slots.len() - 1
            }
        };
        let slot = &mut container.slots[i];
        if time < slot.last {
            return Err(format!(
                "time goes backwards: {} s is before {} s, the previous event of type `{}` in container `{}` (Pajé orders events per container and type)",
                crate::record::format_seconds(time),
                crate::record::format_seconds(slot.last),
                self.types[t as usize].id,
                container.id
            ));
        }
        slot.last = time;
        container.last = container.last.max(time);
        Ok(i)
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

    /// The name of a value found by [`Sim::use_value`].
    fn value_name<'a>(&'a self, t: u32, at: Option<usize>, value: &'a str) -> &'a str {
        match at {
            Some(at) => &self.types[t as usize].values[at].0,
            None => value,
        }
    }

    /// Moves the declaration of type `t` (after its parent and, for a link
    /// type, its end types) before a use at `time`.
    fn touch_type(&mut self, t: u32, time: i64, out: &mut Out) {
        let ty = &self.types[t as usize];
        let Some(d) = ty.decl.filter(|d| d.key > time) else {
            return;
        };
        // (The root type has no declaration row.)
        let (parent, ends, nature) = (ty.parent, ty.ends, ty.nature);
        if parent != ROOT {
            self.touch_type(parent, time, out);
        }
        if nature == Nature::Link {
            self.touch_type(ends.0, time, out);
            self.touch_type(ends.1, time, out);
        }
        self.types[t as usize].decl = Some(out.queue.lower(d, time));
    }

    /// Handles an event line.
    fn event(&mut self, words: &[&str], number: u64, out: &mut Out) -> Result<(), String> {
        let id = words[0];
        let found = match small_id(id) {
            Some(n) => self.small_defs[n].clone(),
            None => self.defs.get(id).cloned(),
        };
        let Some(def) = found else {
            return Err(format!(
                "undefined event id `{id}` (no `%EventDef` gives it)"
            ));
        };
        let given = words.len() - 1;
        let wanted = def.fields.len();
        if given < wanted {
            return Err(format!(
                "missing fields: {} (id {id}) has {wanted} field(s), this line gives {given}",
                def.event.name()
            ));
        }
        if given > wanted {
            self.warn(
                number,
                format!(
                    "{given} fields where {} (id {id}) has {wanted}; the extra words are ignored",
                    def.event.name()
                ),
            );
        }
        let line = Line { def: &def, words };
        self.apply(def.event, &line, number, out)
    }

    fn apply(
        &mut self,
        event: Event,
        line: &Line,
        number: u64,
        out: &mut Out,
    ) -> Result<(), String> {
        use Field::*;
        let fill_extras = |rec: &mut Record| {
            if line.has_extras() {
                for (k, v) in line.extras() {
                    rec.push_attr(k, v);
                }
            }
        };
        match event {
            Event::DefineContainerType
            | Event::DefineStateType
            | Event::DefineEventType
            | Event::DefineVariableType
            | Event::DefineLinkType => {
                let nature = match event {
                    Event::DefineContainerType => Nature::Container,
                    Event::DefineStateType => Nature::State,
                    Event::DefineEventType => Nature::EventType,
                    Event::DefineVariableType => Nature::Variable,
                    _ => Nature::Link,
                };
                let name = line.get(Name);
                let alias = line.get(Alias);
                let id = if alias.is_empty() { name } else { alias };
                if id == "0" {
                    return Err(err("a type cannot be identified as `0` (the root type)"));
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
                let mut ends = (0, 0);
                if nature == Nature::Link {
                    for (f, slot) in [
                        (StartContainerType, &mut ends.0),
                        (EndContainerType, &mut ends.1),
                    ] {
                        let t = self.type_of(line.get(f))?;
                        if self.types[t as usize].nature != Nature::Container {
                            return Err(format!(
                                "{} `{}` of link type `{id}` is not a container type",
                                f.name(),
                                line.get(f)
                            ));
                        }
                        *slot = t;
                    }
                }
                let index = self.types.len() as u32;
                self.types.push(TypeInfo {
                    id: id.to_string(),
                    name: name.to_string(),
                    nature,
                    parent,
                    ends,
                    values: StrMap::default(),
                    decl: None,
                });
                self.type_index.insert(id.into(), index);
                let parent_id = if parent == ROOT {
                    String::new()
                } else {
                    self.types[parent as usize].id.clone()
                };
                let start_end = (nature == Nature::Link).then(|| {
                    (
                        self.types[ends.0 as usize].id.clone(),
                        self.types[ends.1 as usize].id.clone(),
                    )
                });
                let ticket = out.declare(|r| {
                    r.kind = Kind::Type;
                    r.id.push_str(id);
                    r.name.push_str(name);
                    r.cat.push_str(nature.as_str());
                    r.peer = parent_id;
                    if let Some((s, e)) = &start_end {
                        r.push_attr(ATTR_START_TYPE, s);
                        r.push_attr(ATTR_END_TYPE, e);
                    }
                    if !line.get(Color).is_empty() {
                        r.push_attr(ATTR_COLOR, line.get(Color));
                    }
                    fill_extras(r);
                })?;
                self.types[index as usize].decl = Some(ticket);
                Ok(())
            }
            Event::DefineEntityValue => {
                let t = self.type_of(line.get(Type))?;
                let ty = &self.types[t as usize];
                if !matches!(ty.nature, Nature::State | Nature::EventType | Nature::Link) {
                    return Err(format!(
                        "values belong to state, event or link types; `{}` is a {} type",
                        ty.id,
                        ty.nature.as_str()
                    ));
                }
                let name = line.get(Name);
                let alias = line.get(Alias);
                let id = if alias.is_empty() { name } else { alias };
                let type_id = ty.id.clone();
                if self.types[t as usize].values.contains_key(id) {
                    return Err(format!("value `{id}` of type `{type_id}` is defined twice"));
                }
                let ticket = out.declare(|r| {
                    r.kind = Kind::Type;
                    r.id.push_str(id);
                    r.name.push_str(name);
                    r.cat.push_str("value");
                    r.peer = type_id;
                    if !line.get(Color).is_empty() {
                        r.push_attr(ATTR_COLOR, line.get(Color));
                    }
                    fill_extras(r);
                })?;
                self.types[t as usize]
                    .values
                    .insert(id.into(), (name.to_string(), Some(ticket)));
                Ok(())
            }
            Event::CreateContainer => {
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
                let name = line.get(Name);
                let alias = line.get(Alias);
                let id = if alias.is_empty() { name } else { alias };
                if id == "0" {
                    return Err(err(
                        "a container cannot be identified as `0` (the root container)",
                    ));
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
                self.containers.push(ContainerInfo {
                    id: id.to_string(),
                    decl: None,
                    parent,
                    type_: t,
                    children: Vec::new(),
                    alive: true,
                    last: time,
                    slots: Vec::new(),
                });
                self.container_index.insert(id.into(), index);
                self.containers[parent as usize].children.push(index);
                let parent_id = if parent == ROOT {
                    String::new()
                } else {
                    self.containers[parent as usize].id.clone()
                };
                let type_id = self.types[t as usize].id.clone();
                let ticket = out.declare(|r| {
                    r.kind = Kind::Container;
                    r.time = Some(time);
                    r.loc.push_str(id);
                    r.name.push_str(name);
                    r.cat = type_id;
                    r.peer = parent_id;
                    if lossy {
                        r.add_flag(flags::LOSSY);
                    }
                    if !line.get(Filename).is_empty() {
                        r.push_attr("paje.filename", line.get(Filename));
                    }
                    fill_extras(r);
                })?;
                self.containers[index as usize].decl = Some(ticket);
                Ok(())
            }
            Event::DestroyContainer => {
                let (time, _) = self.time(line.get(Time))?;
                let c = self.container_of(line.get(Name))?;
                let t = self.type_of(line.get(Type))?;
                let info = &self.containers[c as usize];
                if info.type_ != t {
                    return Err(format!(
                        "container `{}` is of type `{}`, not `{}`",
                        info.id,
                        self.types[info.type_ as usize].id,
                        line.get(Type)
                    ));
                }
                if time < info.last {
                    return Err(format!(
                        "container `{}` is destroyed at {} s, before its last event at {} s",
                        info.id,
                        crate::record::format_seconds(time),
                        crate::record::format_seconds(info.last)
                    ));
                }
                if !info.alive {
                    let msg = format!(
                        "container `{}` is destroyed again; ignored, as PajeNG does",
                        info.id
                    );
                    self.warn(number, msg);
                    // Kept in the stream: its time still counts for the end of the trace.
                    let loc = &info.id;
                    return out.emit(|r| {
                        r.kind = Kind::Destroy;
                        r.time = Some(time);
                        r.loc.push_str(loc);
                    });
                }
                self.close(c, time, false, out)
            }
            Event::SetState | Event::PushState | Event::PopState | Event::ResetState => {
                let (time, lossy) = self.time(line.get(Time))?;
                let Some(c) = self.alive_container(line.get(Container), number)? else {
                    return Ok(());
                };
                let t = self.type_of(line.get(Type))?;
                self.check_entity(c, t, Nature::State)?;
                self.touch_type(t, time, out);
                let s = self.slot(c, t, time)?;
                // A lane is declared when a state first needs it, not by a reset
                // of an empty stack (which leaves nothing in the stream).
                let existing = self.containers[c as usize].slots[s].lane;
                let lane = match (existing, event) {
                    (Some(l), _) => l,
                    (None, Event::SetState | Event::PushState) => self.lane(c, s, t, out)?,
                    (None, Event::PopState) => {
                        return Err(format!(
                            "pop on an empty stack: no open state of type `{}` in container `{}`",
                            self.types[t as usize].id,
                            line.get(Container)
                        ))
                    }
                    (None, _) => return Ok(()),
                };
                self.touch_lane(lane, c, time, out);
                if matches!(event, Event::SetState | Event::ResetState) {
                    let reset_extras = (event == Event::ResetState).then_some(line);
                    let close = Closing {
                        type_: t,
                        extras: reset_extras,
                        lossy,
                        flag: "",
                    };
                    self.pop_all(lane, time, &close, out)?;
                }
                match event {
                    Event::PopState => {
                        let close = Closing {
                            type_: t,
                            extras: Some(line),
                            lossy,
                            flag: "",
                        };
                        if !self.pop_one(lane, time, &close, out)? {
                            return Err(format!(
                                "pop on an empty stack: no open state of type `{}` in container `{}`",
                                self.types[t as usize].id,
                                line.get(Container)
                            ));
                        }
                        Ok(())
                    }
                    Event::SetState | Event::PushState => {
                        let value = line.get(Value);
                        let at = self.use_value(t, value, time, out);
                        let Sim { types, lanes, .. } = self;
                        let name = match at {
                            Some(at) => types[t as usize].values[at].0.as_str(),
                            None => value,
                        };
                        let value_col = if name == value { "" } else { value };
                        let l = &mut lanes[lane as usize];
                        let depth = l.depth;
                        l.push(name, value_col);
                        let loc = &l.loc;
                        out.emit(|r| {
                            r.kind = Kind::Enter;
                            r.time = Some(time);
                            r.loc.push_str(loc);
                            r.cat.push_str(&types[t as usize].id);
                            r.name.push_str(name);
                            r.value.push_str(value_col);
                            r.depth = Some(depth as u32);
                            if lossy {
                                r.add_flag(flags::LOSSY);
                            }
                            for f in [Field::Line, Field::File] {
                                if !line.get(f).is_empty() {
                                    r.push_attr(
                                        &format!("paje.{}", f.name().to_ascii_lowercase()),
                                        line.get(f),
                                    );
                                }
                            }
                            fill_extras(r);
                        })
                    }
                    _ => Ok(()),
                }
            }
            Event::NewEvent => {
                let (time, lossy) = self.time(line.get(Time))?;
                let Some(c) = self.alive_container(line.get(Container), number)? else {
                    return Ok(());
                };
                let t = self.type_of(line.get(Type))?;
                self.check_entity(c, t, Nature::EventType)?;
                self.touch_type(t, time, out);
                self.slot(c, t, time)?;
                self.touch(c, time, out);
                let value = line.get(Value);
                let at = self.use_value(t, value, time, out);
                let name = self.value_name(t, at, value);
                let type_id = &self.types[t as usize].id;
                let loc = &self.containers[c as usize].id;
                out.emit(|r| {
                    r.kind = Kind::Event;
                    r.time = Some(time);
                    r.loc.push_str(loc);
                    r.cat.push_str(type_id);
                    if name != value {
                        r.value.push_str(value);
                    }
                    r.name.push_str(name);
                    if lossy {
                        r.add_flag(flags::LOSSY);
                    }
                    fill_extras(r);
                })
            }
            Event::SetVariable | Event::AddVariable | Event::SubVariable => {
                let (time, lossy) = self.time(line.get(Time))?;
                let Some(c) = self.alive_container(line.get(Container), number)? else {
                    return Ok(());
                };
                let t = self.type_of(line.get(Type))?;
                self.check_entity(c, t, Nature::Variable)?;
                self.touch_type(t, time, out);
                let s = self.slot(c, t, time)?;
                self.touch(c, time, out);
                let text = line.get(Value);
                let operand = Decimal::parse(text).ok_or_else(|| {
                    format!("bad variable value `{text}`: expected a decimal number")
                })?;
                let slot = &mut self.containers[c as usize].slots[s];
                let value = &mut self.number;
                value.clear();
                let op = match event {
                    Event::SetVariable => {
                        value.push_str(text);
                        slot.var = Some(operand);
                        "set"
                    }
                    _ => {
                        let Some(current) = slot.var else {
                            return Err(format!(
                                "{} to variable `{}` of container `{}`, which has no value yet (needs a PajeSetVariable first)",
                                if event == Event::AddVariable { "addition" } else { "subtraction" },
                                self.types[t as usize].id,
                                line.get(Container)
                            ));
                        };
                        let delta = if event == Event::AddVariable {
                            operand
                        } else {
                            operand.neg()
                        };
                        let sum = current.add(&delta).ok_or_else(|| {
                            err("variable value needs more than 36 significant digits")
                        })?;
                        let _ = write!(value, "{sum}");
                        slot.var = Some(sum);
                        if event == Event::AddVariable {
                            "add"
                        } else {
                            "sub"
                        }
                    }
                };
                let ty = &self.types[t as usize];
                let loc = &self.containers[c as usize].id;
                let value = &self.number;
                out.emit(|r| {
                    r.kind = Kind::Counter;
                    r.time = Some(time);
                    r.loc.push_str(loc);
                    r.cat.push_str(&ty.id);
                    r.name.push_str(&ty.name);
                    r.value.push_str(value);
                    if op != "set" {
                        r.push_attr(ATTR_OP, op);
                        r.push_attr(ATTR_OPERAND, text);
                    }
                    if lossy {
                        r.add_flag(flags::LOSSY);
                    }
                    fill_extras(r);
                })
            }
            Event::StartLink | Event::EndLink => {
                let start = event == Event::StartLink;
                let (time, lossy) = self.time(line.get(Time))?;
                let Some(c) = self.alive_container(line.get(Container), number)? else {
                    return Ok(());
                };
                let t = self.type_of(line.get(Type))?;
                self.check_entity(c, t, Nature::Link)?;
                self.touch_type(t, time, out);
                let end_field = if start { StartContainer } else { EndContainer };
                let other = self.container_of(line.get(end_field))?;
                let ty = &self.types[t as usize];
                let want = if start { ty.ends.0 } else { ty.ends.1 };
                let other_type = self.containers[other as usize].type_;
                if other_type != want {
                    return Err(format!(
                        "{} `{}` is of type `{}`, but link type `{}` {} at type `{}`",
                        end_field.name(),
                        line.get(end_field),
                        self.types[other_type as usize].id,
                        ty.id,
                        if start { "starts" } else { "ends" },
                        self.types[want as usize].id
                    ));
                }
                self.slot(c, t, time)?;
                let value = line.get(Value);
                let key = line.get(Key);
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
                    Some((_, p)) if p.start == start => {
                        return Err(format!(
                            "a second {} of link key `{key}` (type `{}`, container `{}`) while the first, on line {}, has no {} yet",
                            if start { "start" } else { "end" },
                            self.types[t as usize].id,
                            line.get(Container),
                            p.line,
                            if start { "end" } else { "start" }
                        ));
                    }
                    Some((spare_key, p)) => {
                        if p.value != value {
                            return Err(format!(
                                "link key `{key}` ends with value `{value}` but started with `{}` (line {})",
                                p.value, p.line
                            ));
                        }
                        self.spare_strings.push(spare_key);
                        self.spare_strings.push(p.value);
                    }
                    None => {
                        let mut pending_key = self.spare_strings.pop().unwrap_or_default();
                        pending_key.clone_from(&self.key);
                        let mut pending_value = self.spare_strings.pop().unwrap_or_default();
                        pending_value.clear();
                        pending_value.push_str(value);
                        self.pending.insert(
                            pending_key,
                            PendingLink {
                                start,
                                line: number,
                                value: pending_value,
                                container: c,
                            },
                        );
                    }
                }
                self.touch(other, time, out);
                let at = self.use_value(t, value, time, out);
                let name = self.value_name(t, at, value);
                let type_id = &self.types[t as usize].id;
                let comm = &self.containers[c as usize].id;
                let loc = &self.containers[other as usize].id;
                out.emit(|r| {
                    r.kind = if start { Kind::Send } else { Kind::Recv };
                    r.time = Some(time);
                    r.loc.push_str(loc);
                    r.comm.push_str(comm);
                    r.cat.push_str(type_id);
                    r.id.push_str(key);
                    if name != value {
                        r.value.push_str(value);
                    }
                    r.name.push_str(name);
                    if lossy {
                        r.add_flag(flags::LOSSY);
                    }
                    fill_extras(r);
                })
            }
            Event::TraceFile => {
                let msg = format!(
                    "PajeTraceFile `{}` is not followed (multi-file traces are read one file at a time)",
                    line.get(Filename)
                );
                self.warn(number, msg);
                Ok(())
            }
        }
    }

    /// The container named `id` if alive; `None` (with a count for the final
    /// warning) if it was destroyed: PajeNG drops such events.
    fn warn(&self, line: u64, msg: String) {
        let at = Location::Line {
            file: self.file.clone(),
            line,
        };
        self.warnings.warn_at(at, msg);
    }

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
            if let Ok(ticket) = out.declare(|r| {
                r.kind = Kind::Container;
                r.loc.push('0');
                r.cat.push('0');
                r.name.push('0');
            }) {
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
        let parent = container.id.clone();
        let type_name = self.types[t as usize].name.clone();
        let ticket = out.declare(|r| {
            r.kind = Kind::Container;
            r.loc.push_str(&loc);
            r.cat.push_str(LANE);
            r.name = type_name;
            r.peer = parent;
        })?;
        self.lanes.push(Lane {
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
        let types = &self.types;
        out.emit(|r| {
            r.kind = Kind::Leave;
            r.time = Some(time);
            r.loc.push_str(&l.loc);
            r.cat.push_str(&types[close.type_ as usize].id);
            r.name.push_str(&frame.name);
            r.value.push_str(&frame.value);
            r.depth = Some(l.depth as u32);
            r.flags.push_str(close.flag);
            if close.lossy {
                r.add_flag(flags::LOSSY);
            }
            for (k, v) in close.extras.iter().flat_map(|l| l.extras()) {
                r.push_attr(k, v);
            }
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
        // Children first, also those of dead containers (created under a
        // destroyed parent, which PajeNG accepts).
        let children = self.containers[c as usize].children.clone();
        for child in children {
            self.close(child, time, true, out)?;
        }
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
        if c == ROOT {
            return Ok(());
        }
        let loc = &info.id;
        out.emit(|r| {
            r.kind = Kind::Destroy;
            r.time = Some(time);
            r.loc.push_str(loc);
            if synthetic {
                r.add_flag(flags::SYNTHETIC);
            }
        })
    }

    /// Links of container `c` still waiting for their other half: an error, or
    /// (with `--ignore-incomplete-links`) a count.
    fn check_pending(&mut self, c: u32) -> Result<(), String> {
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
        if self.ignore_incomplete {
            self.ignored_links += incomplete.len() as u64;
            self.pending.retain(|_, p| p.container != c);
            return Ok(());
        }
        let (line, key) = &incomplete[0];
        Err(format!(
            "incomplete link: key `{key}` (line {line}) has no {} when container `{}` ends{}; use --ignore-incomplete-links to keep such halves unmatched",
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

impl Out<'_> {
    /// Queues a row with a time (its place is its completion time).
    fn emit(&mut self, fill: impl FnOnce(&mut Record)) -> Result<(), String> {
        self.declare(fill).map(|_| ())
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
                crate::record::format_seconds(t),
                crate::record::format_seconds(self.queue.released())
            )
        })
    }
}

/// The Pajé reader.
pub struct PajeReader<R> {
    lines: LineReader<R>,
    sim: Sim,
    queue: RowQueue,
    max_time: Option<i64>,
    words: Vec<(usize, usize)>,
    word_buf: Vec<&'static str>,
    done: bool,
}

/// Default number of rows the reorder buffer holds.
pub const DEFAULT_REORDER_WINDOW: usize = 4_096;

impl<R: BufRead> PajeReader<R> {
    /// A reader over `inner`.
    pub fn new(name: &str, inner: R, opts: &ReadOptions) -> PajeReader<R> {
        let window = match opts.format.number(REORDER_WINDOW) {
            Some(rows) if rows > 0 => usize::try_from(rows).unwrap_or(usize::MAX),
            _ => DEFAULT_REORDER_WINDOW,
        };
        let mut queue = RowQueue::new(window);
        for (k, v) in [
            ("source_format", "paje"),
            ("source", name),
            ("time_unit", "s"),
        ] {
            let slot = queue.slot();
            *queue.get(slot) = Record::meta(k, v);
            let _ = queue.commit(slot, i64::MIN);
        }
        PajeReader {
            lines: LineReader::new(name, inner),
            sim: Sim::new(
                name,
                opts.format.switch(IGNORE_INCOMPLETE_LINKS),
                opts.warnings.clone(),
            ),
            queue,
            max_time: None,
            words: Vec::new(),
            word_buf: Vec::new(),
            done: false,
        }
    }

    /// Reads one line into the queue; false at the end of the input.
    fn step(&mut self) -> Result<bool> {
        let Some(line) = self.lines.next_located()? else {
            return Ok(false);
        };
        let number = line.number;
        self.queue.set_mark(number);
        if line.truncated && !line.text.iter().all(u8::is_ascii_whitespace) {
            return Err(line.error("truncated line (no final newline): the file was cut"));
        }
        split_words(line.text, &mut self.words);
        if self.words.is_empty() {
            return Ok(true);
        }
        let text = if line.text.is_ascii() {
            // SAFETY: ASCII is valid UTF-8.
            unsafe { std::str::from_utf8_unchecked(line.text) }
        } else {
            std::str::from_utf8(line.text)
                .map_err(|_| line.error("invalid UTF-8: text must be UTF-8"))?
        };
        // Reuse one allocation for the words of every line (the collect from an
        // emptied vector of the same layout keeps its buffer).
        let mut words: Vec<&str> = std::mem::take(&mut self.word_buf)
            .into_iter()
            .map(|_| "")
            .collect();
        for &(a, b) in &self.words {
            // Words are cut at ASCII bytes, so at char boundaries.
            words.push(text.get(a..b).unwrap_or_default());
        }
        let mut out = Out {
            queue: &mut self.queue,
            max_time: &mut self.max_time,
        };
        let result = if words[0].starts_with('%') {
            self.sim.definition(&words, number)
        } else if self.sim.open_def.is_some() {
            Err(format!(
                "event line inside the definition of event {} (missing `%EndEventDef`)",
                self.sim
                    .open_def
                    .as_ref()
                    .map(|d| d.0.as_str())
                    .unwrap_or("")
            ))
        } else {
            self.sim.event(&words, number, &mut out)
        };
        words.clear();
        self.word_buf = words.into_iter().map(|_| "").collect();
        result.map_err(|msg| line.error(msg))?;
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        let sim = &mut self.sim;
        if let Some((id, _, line)) = sim.open_def.take() {
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
                    "{} incomplete link(s) kept as unmatched halves",
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

    fn location(&self) -> Location {
        self.locate(self.mark())
    }

    /// The line of the row released last, which may be up to a reorder
    /// window behind the line read last.
    fn mark(&self) -> u64 {
        self.queue.released_mark()
    }

    fn locate(&self, line: u64) -> Location {
        Location::Line {
            file: self.lines.name().to_string(),
            line,
        }
    }
}
