//! Writes a stream as a Pajé trace that PajeNG accepts.
//!
//! A stream read from Pajé maps back one to one (paje → stream → paje → stream
//! gives the same stream): types, containers, pushes and pops on the state
//! lanes, events, variable operations and link halves. Rows this writer's
//! reader re-creates by itself (flag `S`: the pops and destructions implied by
//! a destruction or by the end of the trace) are not written.
//!
//! Other streams get a type hierarchy made from their containers' `cat`:
//! `enter`/`leave` become pushes and pops of a `State` type per container type,
//! counters and signal fragments become variables, message halves links in
//! the root container (declaring a placeholder for a peer the stream never
//! declares). `msg` and `dep` rows (links whose start comes before rows
//! already written) and the other rows with an extent (`state` rows, claims,
//! collectives) are held until the end, then written in time order, the
//! latter as states on lanes where they do not overlap (memory: those rows).
//! What Pajé cannot hold is refused with an error naming the row (see
//! `docs/formats.md`). `%EventDef` blocks are written when first needed.

use std::collections::hash_map::Entry;
use std::fmt::Write as _;

use super::{
    Event, Field, ATTR_COLOR, ATTR_END_TYPE, ATTR_OP, ATTR_OPERAND, ATTR_START_TYPE, LANE, PREFIX,
};
use crate::decimal::Decimal;
use crate::error::{Error, Result, Warnings};
use crate::fasthash::{FastMap, FastSet};
use crate::io::Output;
use crate::model::record::{flags, prefix, Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{RecordSink, WriteOptions};

/// Container type of the placeholders for locations a stream refers to but
/// never declares.
const UNDECLARED: &str = "undeclared";

/// Registry constructor.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    Ok(Box::new(PajeWriter::new(
        out,
        opts.symbols.clone(),
        opts.warnings.clone(),
    )))
}

struct ContainerEntry {
    /// Its container type (empty for a lane).
    type_: Sym,
    /// For a lane: the container whose stack it is.
    lane_of: Option<Sym>,
    /// What the stream declared (`cat`, `peer`, `name`): a declaration
    /// repeated as it was (merged inputs) is written once.
    declared: (Sym, Sym, Sym),
}

/// The lines of a link: where, what, and its halves (event, time, end
/// container).
struct LinkLines {
    container: Sym,
    type_: Sym,
    key: String,
    value: String,
    extras: Vec<(String, String)>,
    halves: Vec<(Event, i64, Sym)>,
}

/// A link half waiting for its other half.
struct OpenLink {
    start: bool,
    time: i64,
    value: String,
    /// The half, described for an error message.
    what: String,
}

/// Appends a user field unless the row has one of that name.
fn push_extra(extras: &mut Vec<(String, String)>, key: &str, value: &str) {
    if !value.is_empty() && !extras.iter().any(|(k, _)| k == key) {
        extras.push((key.to_string(), value.to_string()));
    }
}

/// A row with an extent, held until the end.
struct Interval {
    start: i64,
    end: i64,
    loc: Sym,
    kind: Kind,
    value: String,
    extras: Vec<(String, String)>,
}

/// The Pajé writer.
pub struct PajeWriter {
    out: Output,
    symbols: Symbols,
    defs: FastMap<(Event, Vec<Field>, Vec<String>), String>,
    /// The nature of each type, by its id.
    types: FastMap<Sym, &'static str>,
    /// Parent type of each container type.
    type_parents: FastMap<Sym, Sym>,
    containers: FastMap<Sym, ContainerEntry>,
    /// Stream locations written under another id (`0` is Pajé's root).
    renamed: FastMap<Sym, Sym>,
    /// Variables written to, per (container, variable type).
    variables: FastSet<(Sym, Sym)>,
    /// Open states per (container, state type): a pop needs one.
    depths: FastMap<(Sym, Sym), u64>,
    /// Link halves written whose other half has not come yet, per
    /// (container, type, key).
    open_links: FastMap<(Sym, Sym, String), OpenLink>,
    intervals: Vec<Interval>,
    /// Sends, receives and messages seen per foreign channel.
    channels: FastMap<String, (u64, u64, u64)>,
    buf: String,
    replaced: u64,
    warnings: Warnings,
}

/// Appends one field, quoted when PajeNG would split or cut it.
fn push_word(out: &mut String, word: &str, replaced: &mut u64) {
    out.push(' ');
    let needs_quotes = word.is_empty()
        || word.starts_with('"')
        || word
            .bytes()
            .any(|b| matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c | b'#' | b'\n'));
    if !needs_quotes {
        out.push_str(word);
        return;
    }
    out.push('"');
    // A quoted Pajé word cannot hold `"` or a line break.
    for c in word.chars() {
        match c {
            '"' => {
                *replaced += 1;
                out.push('\'');
            }
            '\n' => {
                *replaced += 1;
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// An attribute key as a Pajé user field name: characters a field name
/// cannot hold (white space, `#`, `%`, `"`...) become `_`, and a name that
/// is empty or that Pajé reads as one of its own fields gets a `user_`
/// prefix.
fn user_field_name(key: &str) -> String {
    let name: String = key
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "_-.:/".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || super::Field::from_name(&name).is_some() {
        format!("user_{name}")
    } else {
        name
    }
}

/// What a row's Pajé value is: its `value`, else its name.
fn value_of<'a>(symbols: &'a Symbols, rec: &'a Record) -> &'a str {
    if rec.value.is_empty() {
        symbols.text(rec.name)
    } else {
        &rec.value
    }
}

fn seconds(ns: i64) -> String {
    crate::decimal::format_scaled(ns, 1_000_000_000)
}

impl PajeWriter {
    /// A writer over `out` of rows whose identifiers are in `symbols`,
    /// reporting what it had to change to `warnings`.
    pub fn new(out: Output, symbols: Symbols, warnings: Warnings) -> PajeWriter {
        PajeWriter {
            out,
            symbols,
            defs: FastMap::default(),
            types: FastMap::default(),
            type_parents: FastMap::default(),
            containers: FastMap::default(),
            renamed: FastMap::default(),
            variables: FastSet::default(),
            depths: FastMap::default(),
            open_links: FastMap::default(),
            intervals: Vec::new(),
            channels: FastMap::default(),
            buf: String::new(),
            replaced: 0,
            warnings,
        }
    }

    /// The user-defined fields of a row (attributes that are not Pajé fields).
    fn extras(rec: &Record) -> Vec<(String, String)> {
        rec.attrs()
            .filter(|(k, _)| !k.starts_with(PREFIX))
            .collect()
    }

    /// Writes one event line, defining its layout first when new.
    fn line(
        &mut self,
        event: Event,
        fields: &[(Field, &str)],
        extras: &[(String, String)],
    ) -> Result<()> {
        let layout: Vec<Field> = fields.iter().map(|(f, _)| *f).collect();
        let extra_names: Vec<String> = extras.iter().map(|(k, _)| k.clone()).collect();
        let key = (event, layout, extra_names);
        let id = match self.defs.get(&key) {
            Some(id) => id.clone(),
            None => {
                let id = self.defs.len().to_string();
                let mut def = format!("%EventDef {} {id}\n", event.name());
                for f in &key.1 {
                    let ty = match f {
                        Field::Time => "date",
                        Field::Color => "color",
                        _ => "string",
                    };
                    let _ = writeln!(def, "% {} {ty}", f.name());
                }
                for name in &key.2 {
                    let _ = writeln!(def, "% {} string", user_field_name(name));
                }
                def.push_str("%EndEventDef\n");
                self.out.write_line(def.as_bytes())?;
                self.defs.insert(key, id.clone());
                id
            }
        };
        self.buf.clear();
        self.buf.push_str(&id);
        for (_, v) in fields {
            push_word(&mut self.buf, v, &mut self.replaced);
        }
        for (_, v) in extras {
            push_word(&mut self.buf, v, &mut self.replaced);
        }
        self.buf.push('\n');
        self.out.write_line(self.buf.as_bytes())
    }

    /// The text of `sym`.
    fn text(&self, sym: Sym) -> &str {
        self.symbols.text(sym)
    }

    /// Defines a type unless known.
    fn ensure_type(
        &mut self,
        id: Sym,
        nature: &'static str,
        parent: Sym,
        name: &str,
    ) -> Result<()> {
        if self.types.contains_key(&id) {
            return Ok(());
        }
        self.types.insert(id, nature);
        let event = match nature {
            "container" => Event::DefineContainerType,
            "state" => Event::DefineStateType,
            "event" => Event::DefineEventType,
            "variable" => Event::DefineVariableType,
            _ => Event::DefineLinkType,
        };
        let parent = if parent.is_empty() {
            well_known::ZERO
        } else {
            parent
        };
        if nature == "container" {
            self.type_parents.insert(id, parent);
        }
        let (id, parent) = (self.text(id).to_string(), self.text(parent).to_string());
        let (id, parent) = (id.as_str(), parent.as_str());
        let mut fields = vec![(Field::Alias, id), (Field::Type, parent)];
        if event == Event::DefineLinkType {
            fields.push((Field::StartContainerType, parent));
            fields.push((Field::EndContainerType, parent));
        }
        fields.push((Field::Name, name));
        self.line(event, &fields, &[])
    }

    /// The container and container type of `loc` (the lane's container for a
    /// lane; the root container for rows without a location).
    fn owner(&self, loc: Sym) -> (Sym, Sym) {
        if loc.is_empty() {
            return (well_known::ZERO, well_known::ZERO);
        }
        match self.containers.get(&loc) {
            Some(ContainerEntry {
                lane_of: Some(parent),
                ..
            }) => {
                let t = self
                    .containers
                    .get(parent)
                    .map(|c| c.type_)
                    .unwrap_or_default();
                (self.pid(*parent), t)
            }
            Some(c) => (self.pid(loc), c.type_),
            None => (self.pid(loc), Sym::EMPTY),
        }
    }

    /// The id location `loc` is written under.
    fn pid(&self, loc: Sym) -> Sym {
        self.renamed.get(&loc).copied().unwrap_or(loc)
    }

    /// The id for a new container `loc`: itself, except `0` (Pajé's root),
    /// written as `_0` (documented in docs/formats.md).
    fn new_pid(&mut self, loc: Sym) -> Result<Sym> {
        if self.renamed.values().any(|&r| r == loc) {
            return Err(Error::Record(format!(
                "location `{}` is the id this writer gives location `0` (Pajé's root is `0`)",
                self.text(loc)
            )));
        }
        if loc != well_known::ZERO {
            return Ok(loc);
        }
        let id = self.symbols.intern("_0");
        if self.containers.contains_key(&id) {
            return Err(Error::Record(
                "location `0` would be written as `_0` (Pajé's root is `0`), which the stream uses too".into(),
            ));
        }
        self.renamed.insert(loc, id);
        Ok(id)
    }

    /// Declares `loc` as a placeholder container when the stream never did
    /// (a message's peer outside the trace): Pajé links need both ends.
    fn ensure_container(&mut self, loc: Sym, time: &str) -> Result<()> {
        if loc.is_empty() || self.containers.contains_key(&loc) {
            return Ok(());
        }
        let undeclared = self.symbols.intern(UNDECLARED);
        self.ensure_type(undeclared, "container", well_known::ZERO, UNDECLARED)?;
        let id = self.new_pid(loc)?;
        self.containers.insert(
            loc,
            ContainerEntry {
                type_: undeclared,
                lane_of: None,
                declared: Default::default(),
            },
        );
        let id = self.text(id).to_string();
        let fields = [
            (Field::Time, time),
            (Field::Type, UNDECLARED),
            (Field::Container, "0"),
            (Field::Name, id.as_str()),
        ];
        self.line(Event::CreateContainer, &fields, &[])
    }

    /// The type of entity rows: the row's `cat` when it names a type of the
    /// right nature, else a type made for its container type.
    fn entity_type(&mut self, rec: &Record, nature: &'static str, ctype: Sym) -> Result<Sym> {
        if self.types.get(&rec.cat).is_some_and(|n| *n == nature) {
            return Ok(rec.cat);
        }
        let ctype_text = self.text(ctype);
        let (id, name) = match nature {
            "state" => (format!("{ctype_text}.state"), "State"),
            "event" => (format!("{ctype_text}.event"), "Event"),
            "variable" => (
                format!("{ctype_text}.var.{}", self.text(rec.name)),
                self.text(rec.name),
            ),
            _ => (format!("{ctype_text}.link"), "Link"),
        };
        let name = name.to_string();
        let id = self.symbols.intern(&id);
        self.ensure_type(id, nature, ctype, &name)?;
        Ok(id)
    }

    fn container(&mut self, rec: &Record) -> Result<()> {
        let declared = (rec.cat, rec.peer, rec.name);
        if let Some(old) = self.containers.get(&rec.loc) {
            if old.declared == declared {
                return Ok(()); // The same declaration again (merged inputs).
            }
            return Err(Error::Record(format!(
                "location `{}` is declared again with another type, parent or name; a Pajé container is created once",
                self.text(rec.loc)
            )));
        }
        let entry = |type_: Sym, lane_of: Option<Sym>| ContainerEntry {
            type_,
            lane_of,
            declared,
        };
        if rec.loc == well_known::ZERO && rec.cat == well_known::ZERO {
            // Pajé's root container: implicit in a Pajé file.
            self.containers
                .insert(rec.loc, entry(well_known::ZERO, None));
            return Ok(());
        }
        if rec.cat == LANE {
            self.containers
                .insert(rec.loc, entry(Sym::EMPTY, Some(rec.peer)));
            return Ok(());
        }
        let id = self.new_pid(rec.loc)?;
        let type_ = self.container_type(rec)?;
        self.containers.insert(rec.loc, entry(type_, None));
        let name = if rec.name.is_empty() { id } else { rec.name };
        let time = seconds(rec.time.unwrap_or(0));
        let parent = if rec.peer.is_empty() {
            well_known::ZERO
        } else {
            self.pid(rec.peer)
        };
        let symbols = self.symbols.clone();
        let text = |sym| symbols.text(sym);
        let mut fields = vec![(Field::Time, time.as_str())];
        if id != name {
            fields.push((Field::Alias, text(id)));
        }
        fields.extend([
            (Field::Type, text(type_)),
            (Field::Container, text(parent)),
            (Field::Name, text(name)),
        ]);
        let filename = rec.attr("paje.filename");
        if let Some(f) = &filename {
            fields.push((Field::Filename, f));
        }
        self.line(Event::CreateContainer, &fields, &Self::extras(rec))
    }

    /// The container type of a new container: its `cat` when that names a
    /// container type whose parent is the parent container's type, else a
    /// type made for it below that type (`a` under `a.b` becomes `a.b.a`).
    fn container_type(&mut self, rec: &Record) -> Result<Sym> {
        let parent_type = self
            .containers
            .get(&rec.peer)
            .map(|c| c.type_)
            .filter(|t| !t.is_empty())
            .unwrap_or(well_known::ZERO);
        let fits = |t: Sym| self.type_parents.get(&t).is_some_and(|p| *p == parent_type);
        if self.types.get(&rec.cat).is_some_and(|n| *n == "container") && fits(rec.cat) {
            return Ok(rec.cat);
        }
        let base = if rec.cat.is_empty() {
            "container"
        } else {
            self.text(rec.cat)
        };
        let id = if parent_type == well_known::ZERO {
            base.to_string()
        } else {
            format!("{}.{base}", self.text(parent_type))
        };
        let name = base.to_string();
        let id = self.symbols.intern(&id);
        self.ensure_type(id, "container", parent_type, &name)?;
        Ok(id)
    }

    fn type_row(&mut self, rec: &Record) -> Result<()> {
        let nature = match self.text(rec.cat) {
            "container" => "container",
            "state" => "state",
            "event" => "event",
            "variable" => "variable",
            "link" => "link",
            "value" => "value",
            other => {
                self.warnings.warn(format!(
                    "type `{}` of unknown nature `{other}` left out",
                    rec.id
                ));
                return Ok(());
            }
        };
        let id = self.symbols.intern(&rec.id);
        // Values are named per type; only types go into the lookup.
        if nature != "value" {
            self.types.insert(id, nature);
        }
        if nature == "container" {
            let parent = if rec.peer.is_empty() {
                well_known::ZERO
            } else {
                rec.peer
            };
            self.type_parents.insert(id, parent);
        }
        let event = match nature {
            "container" => Event::DefineContainerType,
            "state" => Event::DefineStateType,
            "event" => Event::DefineEventType,
            "variable" => Event::DefineVariableType,
            "link" => Event::DefineLinkType,
            _ => Event::DefineEntityValue,
        };
        let symbols = self.symbols.clone();
        let parent = if rec.peer.is_empty() {
            "0"
        } else {
            symbols.text(rec.peer)
        };
        let name = symbols.text(rec.name);
        let mut fields = Vec::new();
        if rec.id != name {
            fields.push((Field::Alias, rec.id.as_str()));
        }
        fields.push((Field::Type, parent));
        let (start, end, color) = (
            rec.attr(ATTR_START_TYPE),
            rec.attr(ATTR_END_TYPE),
            rec.attr(ATTR_COLOR),
        );
        if event == Event::DefineLinkType {
            fields.push((
                Field::StartContainerType,
                start.as_deref().unwrap_or(parent),
            ));
            fields.push((Field::EndContainerType, end.as_deref().unwrap_or(parent)));
        }
        fields.push((Field::Name, name));
        if let Some(c) = &color {
            fields.push((Field::Color, c));
        }
        self.line(event, &fields, &Self::extras(rec))
    }

    /// Message halves and messages as `PajeStartLink`/`PajeEndLink`.
    ///
    /// Pajé halves (keyed, in a link container) map back as they were. Other
    /// messages become links in the root container, of a link type per pair of
    /// end container types, keyed so the k-th send of a channel
    /// `(comm, sender, receiver, tag)` pairs with its k-th receive. Both halves
    /// of a link carry the value of the first one written; a second half
    /// named otherwise keeps its name in the user field `half_name`.
    /// Writes a half as it comes, and a message or dependency when it
    /// completes, both ends at once: Pajé readers check time order per
    /// container and type, and link completions in completion order, which
    /// is the stream's (a start earlier than lines of other types already
    /// written is in order). Memory: the halves in flight.
    fn link(&mut self, rec: &Record) -> Result<()> {
        let link = self.link_lines(rec)?;
        for half in &link.halves {
            self.write_half(&link, half)?;
        }
        Ok(())
    }

    /// What a message half, message or dependency becomes: its link
    /// container, type, key, value, user fields and the halves to write.
    fn link_lines(&mut self, rec: &Record) -> Result<LinkLines> {
        let native = rec.tag.is_none()
            && !rec.comm.is_empty()
            && self.types.get(&rec.cat).is_some_and(|n| *n == "link");
        let (container, type_, key) = if native {
            (self.pid(rec.comm), rec.cat, rec.id.clone())
        } else {
            self.foreign_link(rec)?
        };
        let symbols = self.symbols.clone();
        let mut extras = Self::extras(rec);
        if !native {
            let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
            let size = rec.size.map(|t| t.to_string()).unwrap_or_default();
            for (k, v) in [
                ("comm", symbols.text(rec.comm)),
                ("tag", tag.as_str()),
                ("size", size.as_str()),
                ("id", rec.id.as_str()),
            ] {
                push_extra(&mut extras, k, v);
            }
            if rec.kind == Kind::Dep {
                push_extra(&mut extras, "type", symbols.text(rec.cat));
            }
        }
        let own = value_of(&self.symbols, rec).to_string();
        let value = match rec.kind {
            Kind::Msg | Kind::Dep => own.clone(),
            _ => self.pair_half(rec, (container, type_, &key), &own)?,
        };
        if value != own {
            push_extra(&mut extras, "half_name", &own);
        }
        let end = |loc: Sym| {
            if loc.is_empty() {
                well_known::ZERO
            } else {
                self.pid(loc)
            }
        };
        let (loc, peer) = (end(rec.loc), end(rec.peer));
        let (start, stop) = (rec.time.unwrap_or(0), rec.end.unwrap_or(0));
        let halves = match rec.kind {
            Kind::Send => vec![(Event::StartLink, start, loc)],
            Kind::Recv => vec![(Event::EndLink, start, loc)],
            // Msg and Dep: both ends.
            _ => vec![(Event::StartLink, start, loc), (Event::EndLink, stop, peer)],
        };
        Ok(LinkLines {
            container,
            type_,
            key,
            value,
            extras,
            halves,
        })
    }

    fn write_half(&mut self, link: &LinkLines, half: &(Event, i64, Sym)) -> Result<()> {
        let (event, t, end) = half;
        let time = seconds(*t);
        let end_field = if *event == Event::StartLink {
            Field::StartContainer
        } else {
            Field::EndContainer
        };
        let symbols = self.symbols.clone();
        let fields = [
            (Field::Time, time.as_str()),
            (Field::Container, symbols.text(link.container)),
            (Field::Type, symbols.text(link.type_)),
            (end_field, symbols.text(*end)),
            (Field::Value, link.value.as_str()),
            (Field::Key, link.key.as_str()),
        ];
        self.line(*event, &fields, &link.extras)
    }

    /// The link container, link type and key of a message half or message
    /// that did not come from Pajé; declares its ends when the stream never
    /// did (a peer outside the trace).
    fn foreign_link(&mut self, rec: &Record) -> Result<(Sym, Sym, String)> {
        let (sender, receiver) = match rec.kind {
            Kind::Recv => (rec.peer, rec.loc),
            _ => (rec.loc, rec.peer),
        };
        let time = seconds(rec.time.unwrap_or(0));
        self.ensure_container(sender, &time)?;
        self.ensure_container(receiver, &time)?;
        // An end without a location (a TRACE event) is the root container.
        let (_, st) = self.owner(sender);
        let (_, rt) = self.owner(receiver);
        // Messages and dependencies are written at the end: types of their own.
        let suffix = match rec.kind {
            Kind::Msg => ".msg",
            Kind::Dep => ".dep",
            _ => "",
        };
        let symbols = self.symbols.clone();
        let text = |sym| symbols.text(sym);
        let id_text = format!("{}->{}{suffix}", text(st), text(rt));
        let id = symbols.intern(&id_text);
        let new = match self.types.entry(id) {
            Entry::Vacant(slot) => {
                slot.insert("link");
                true
            }
            Entry::Occupied(_) => false,
        };
        if new {
            let fields = [
                (Field::Alias, id_text.as_str()),
                (Field::Type, "0"),
                (Field::StartContainerType, text(st)),
                (Field::EndContainerType, text(rt)),
                (Field::Name, id_text.as_str()),
            ];
            self.line(Event::DefineLinkType, &fields, &[])?;
        }
        let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
        let channel = format!(
            "{}/{}/{}/{tag}",
            text(rec.comm),
            text(sender),
            text(receiver)
        );
        let counter = self.channels.entry(channel.clone()).or_default();
        let (n, suffix) = match rec.kind {
            Kind::Send => (&mut counter.0, ""),
            Kind::Recv => (&mut counter.1, ""),
            _ => (&mut counter.2, "msg"),
        };
        *n += 1;
        let key = format!("{channel}/{suffix}{n}");
        Ok((well_known::ZERO, id, key))
    }

    /// Pairs a half with the open one of its key and returns the value both
    /// carry (the first one's), or opens the key. Memory: the halves in
    /// flight.
    fn pair_half(&mut self, rec: &Record, at: (Sym, Sym, &str), own: &str) -> Result<String> {
        let start = rec.kind == Kind::Send;
        let key = (at.0, at.1, at.2.to_string());
        match self.open_links.remove(&key) {
            Some(open) if open.start != start => Ok(open.value),
            Some(open) => Err(Error::Record(format!(
                "a second {} of link key `{}` while the first ({}) has no other half: a Pajé key links one start to one end",
                rec.kind.with_article(),
                at.2,
                open.what
            ))),
            None => {
                let what = format!(
                    "{} on `{}` at {} s, key `{}`",
                    rec.kind.with_article(),
                    self.text(rec.loc),
                    seconds(rec.time.unwrap_or(0)),
                    at.2
                );
                let value = own.to_string();
                let time = rec.time.unwrap_or(0);
                let open = OpenLink { start, time, value: value.clone(), what };
                self.open_links.insert(key, open);
                Ok(value)
            }
        }
    }

    /// Counts the open states of `type_` in `container`: false for a pop
    /// the reader makes by itself (flag `S`), an error for a pop of nothing.
    fn track_depth(&mut self, rec: &Record, container: Sym, type_: Sym) -> Result<bool> {
        let depth = self.depths.entry((container, type_)).or_default();
        if rec.kind == Kind::Enter {
            *depth += 1;
            return Ok(true);
        }
        if *depth == 0 {
            return Err(Error::Record(format!(
                "a `leave` on `{}` with no open frame: Pajé cannot pop an empty stack",
                self.symbols.text(rec.loc)
            )));
        }
        *depth -= 1;
        Ok(!rec.flags.contains(flags::SYNTHETIC))
    }

    /// An event: of its `cat` type when that is a Pajé event type (a stream
    /// read from Pajé), else of a type made for its container type, its name
    /// as the value and its value and category in user fields.
    fn event(&mut self, rec: &Record) -> Result<()> {
        let (container, ctype) = self.owner(rec.loc);
        let native = self.types.get(&rec.cat).is_some_and(|n| *n == "event");
        let type_ = self.entity_type(rec, "event", ctype)?;
        let time = seconds(rec.time.unwrap_or(0));
        let mut extras = Self::extras(rec);
        let symbols = self.symbols.clone();
        let value = if native {
            value_of(&symbols, rec)
        } else {
            push_extra(&mut extras, "value", &rec.value);
            push_extra(&mut extras, "category", symbols.text(rec.cat));
            symbols.text(rec.name)
        };
        let fields = [
            (Field::Time, time.as_str()),
            (Field::Container, symbols.text(container)),
            (Field::Type, symbols.text(type_)),
            (Field::Value, value),
        ];
        self.line(Event::NewEvent, &fields, &extras)
    }

    /// A counter sample as a set, add or sub of a variable; an add or sub
    /// that would come first (a stream cut after the set) is written as the
    /// set of the value it gives.
    fn counter(&mut self, rec: &Record) -> Result<()> {
        let (container, ctype) = self.owner(rec.loc);
        let type_ = self.entity_type(rec, "variable", ctype)?;
        let first = self.variables.insert((container, type_));
        let (event, value) = match (rec.attr(ATTR_OP).as_deref(), rec.attr(ATTR_OPERAND)) {
            (Some("add"), Some(x)) if !first => (Event::AddVariable, x),
            (Some("sub"), Some(x)) if !first => (Event::SubVariable, x),
            _ => (Event::SetVariable, rec.value.clone()),
        };
        if Decimal::parse(&value).is_none() {
            return Err(Error::Record(format!(
                "counter `{}` has the value `{value}`: a Pajé variable holds numbers",
                self.text(rec.name)
            )));
        }
        let at = (rec.time.unwrap_or(0), container, type_);
        self.variable_line(event, at, &value, &Self::extras(rec))
    }

    /// A set, add or sub line of variable `type_` in `container` at `time`.
    fn variable_line(
        &mut self,
        event: Event,
        (time, container, type_): (i64, Sym, Sym),
        value: &str,
        extras: &[(String, String)],
    ) -> Result<()> {
        let time = seconds(time);
        let symbols = self.symbols.clone();
        let fields = [
            (Field::Time, time.as_str()),
            (Field::Container, symbols.text(container)),
            (Field::Type, symbols.text(type_)),
            (Field::Value, value),
        ];
        self.line(event, &fields, extras)
    }

    /// A signal fragment as a set of a variable at its start to its
    /// constant term; its end, slope and curvature go in user fields.
    fn signal(&mut self, rec: &Record) -> Result<()> {
        let (container, ctype) = self.owner(rec.loc);
        let named = Record {
            name: if rec.name.is_empty() {
                well_known::VALUE
            } else {
                rec.name
            },
            cat: Sym::EMPTY,
            ..rec.clone()
        };
        let type_ = self.entity_type(&named, "variable", ctype)?;
        let value = rec.attr("c").unwrap_or_else(|| "0".to_string());
        if Decimal::parse(&value).is_none() {
            return Err(Error::Record(format!(
                "signal `{}` has the coefficient c = `{value}`: a Pajé variable holds numbers",
                self.text(rec.loc)
            )));
        }
        let mut extras = Self::extras(rec);
        let end = rec.end.map(seconds).unwrap_or_default();
        push_extra(&mut extras, "end", &end);
        let at = (rec.time.unwrap_or(0), container, type_);
        self.variable_line(Event::SetVariable, at, &value, &extras)
    }

    fn hold(&mut self, rec: &Record) {
        let mut extras = Self::extras(rec);
        let symbols = self.symbols.clone();
        for (k, v) in [
            ("kind", rec.kind.as_str()),
            ("cat", symbols.text(rec.cat)),
            ("id", rec.id.as_str()),
            ("peer", symbols.text(rec.peer)),
        ] {
            push_extra(&mut extras, k, v);
        }
        // A viewer colours states by value: the name, else the first user
        // attribute's value (a TRACE claim's `stage`), else the kind.
        let first_user_attr = rec.attrs().find(|(k, _)| !prefix::is_format_field(k));
        let value = match (rec.name, first_user_attr) {
            (name, _) if !name.is_empty() => symbols.text(name).to_string(),
            (_, Some((_, v))) if !v.is_empty() => v,
            _ => rec.kind.as_str().to_string(),
        };
        let (a, b) = (rec.time.unwrap_or(0), rec.end.unwrap_or(0));
        self.intervals.push(Interval {
            start: a.min(b),
            end: a.max(b),
            loc: rec.loc,
            kind: rec.kind,
            value,
            extras,
        });
    }

    /// Writes the held intervals as states, each on the first lane (state
    /// type) of its container where it overlaps nothing.
    fn write_intervals(&mut self) -> Result<()> {
        let mut intervals = std::mem::take(&mut self.intervals);
        intervals.sort_by_key(|i| (i.start, i.end));
        // Per location and kind, the end of the last interval on each lane.
        let mut lanes: FastMap<(Sym, Kind), Vec<i64>> = FastMap::default();
        // (time, order at that time, interval, container, state type); at one
        // instant: ends of intervals that began earlier, then starts, then the
        // ends of empty intervals.
        let mut events: Vec<(i64, u8, usize, Sym, Sym)> = Vec::new();
        for (n, iv) in intervals.iter().enumerate() {
            let free = lanes.entry((iv.loc, iv.kind)).or_default();
            // An empty interval ends after the starts at its instant, so a lane
            // it used is free only after that instant.
            let fits = |end: i64| end < iv.start || (end == iv.start && iv.start < iv.end);
            let lane = match free.iter().position(|&end| fits(end)) {
                Some(l) => {
                    free[l] = iv.end;
                    l
                }
                None => {
                    free.push(iv.end);
                    free.len() - 1
                }
            };
            let (container, ctype) = self.owner(iv.loc);
            let id = format!("{}.{}{lane}", self.text(ctype), iv.kind.as_str());
            let id = self.symbols.intern(&id);
            let name = format!("{} {lane}", iv.kind.as_str());
            self.ensure_type(id, "state", ctype, &name)?;
            events.push((iv.start, 1, n, container, id));
            events.push((
                iv.end,
                if iv.end > iv.start { 0 } else { 2 },
                n,
                container,
                id,
            ));
        }
        events.sort_by_key(|e| (e.0, e.1));
        let symbols = self.symbols.clone();
        for (t, order, n, container, id) in events {
            let time = seconds(t);
            let iv = &intervals[n];
            let (container, id) = (symbols.text(container), symbols.text(id));
            if order == 1 {
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container),
                    (Field::Type, id),
                    (Field::Value, iv.value.as_str()),
                ];
                let extras = iv.extras.clone();
                self.line(Event::PushState, &fields, &extras)?;
            } else {
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container),
                    (Field::Type, id),
                ];
                self.line(Event::PopState, &fields, &[])?;
            }
        }
        Ok(())
    }
}

impl RecordSink for PajeWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        let synthetic = rec.flags.contains(flags::SYNTHETIC);
        let time = seconds(rec.time.unwrap_or(0));
        match rec.kind {
            Kind::Meta => Ok(()),
            Kind::Type => self.type_row(rec),
            Kind::Container => self.container(rec),
            Kind::Destroy if synthetic => Ok(()),
            Kind::Destroy => {
                let type_ = self
                    .containers
                    .get(&rec.loc)
                    .map(|c| c.type_)
                    .unwrap_or_default();
                let id = self.pid(rec.loc);
                let symbols = self.symbols.clone();
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Type, symbols.text(type_)),
                    (Field::Name, symbols.text(id)),
                ];
                let extras = Self::extras(rec);
                self.line(Event::DestroyContainer, &fields, &extras)
            }
            Kind::Enter | Kind::Leave => {
                let (container, ctype) = self.owner(rec.loc);
                let type_ = self.entity_type(rec, "state", ctype)?;
                if !self.track_depth(rec, container, type_)? {
                    return Ok(()); // A pop the reader makes by itself.
                }
                let symbols = self.symbols.clone();
                let mut fields = vec![
                    (Field::Time, time.as_str()),
                    (Field::Container, symbols.text(container)),
                    (Field::Type, symbols.text(type_)),
                ];
                let (line_attr, file_attr) = (rec.attr("paje.line"), rec.attr("paje.file"));
                if rec.kind == Kind::Enter {
                    fields.push((Field::Value, value_of(&symbols, rec)));
                    if let Some(l) = &line_attr {
                        fields.push((Field::Line, l));
                    }
                    if let Some(f) = &file_attr {
                        fields.push((Field::File, f));
                    }
                }
                let event = if rec.kind == Kind::Enter {
                    Event::PushState
                } else {
                    Event::PopState
                };
                self.line(event, &fields, &Self::extras(rec))
            }
            Kind::Event => self.event(rec),
            Kind::Counter => self.counter(rec),
            Kind::Send | Kind::Recv | Kind::Msg | Kind::Dep => self.link(rec),
            Kind::Signal => self.signal(rec),
            Kind::State | Kind::Claim | Kind::Coll => {
                self.hold(rec);
                Ok(())
            }
        }
    }

    fn finish(&mut self) -> Result<()> {
        if let Some(open) = self
            .open_links
            .values()
            .min_by(|a, b| (a.time, &a.what).cmp(&(b.time, &b.what)))
        {
            return Err(Error::Record(format!(
                "{} link half(s) never get their other half, e.g. {}: Pajé readers (this one, PajeNG) reject a link with one end; remove unmatched halves first (trace-filter -k)",
                self.open_links.len(),
                open.what
            )));
        }
        self.write_intervals()?;
        if self.replaced > 0 {
            self.warnings.warn(format!(
                "{} character(s) a quoted Pajé field cannot hold (\" or line breaks) were replaced",
                self.replaced
            ));
        }
        self.out.finish()
    }
}
