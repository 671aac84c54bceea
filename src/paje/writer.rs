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
//! counters become variables, message halves and `msg` rows become links in the
//! parent container. Rows with an extent that are not frames (`state` rows,
//! claims, collectives, dependencies, signal pieces) are held until the end,
//! then written as states on lanes where they do not overlap (memory: those
//! rows). `%EventDef` blocks are written when first needed.

use std::fmt::Write as _;

use super::{
    Event, Field, ATTR_COLOR, ATTR_END_TYPE, ATTR_OP, ATTR_OPERAND, ATTR_START_TYPE, LANE, PREFIX,
};
use crate::error::{Result, Warnings};
use crate::fasthash::FastMap;
use crate::io::Output;
use crate::pipe::{RecordSink, WriteOptions};
use crate::record::{flags, Kind, Record};

/// Registry constructor.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    Ok(Box::new(PajeWriter::new(out, opts.warnings.clone())))
}

struct ContainerEntry {
    type_: String,
    /// For a lane: the container whose stack it is.
    lane_of: Option<String>,
}

/// A row with an extent, held until the end.
struct Interval {
    start: i64,
    end: i64,
    loc: String,
    kind: Kind,
    value: String,
    extras: Vec<(String, String)>,
}

/// The Pajé writer.
pub struct PajeWriter {
    out: Output,
    defs: FastMap<(Event, Vec<Field>, Vec<String>), String>,
    types: FastMap<String, String>,
    containers: FastMap<String, ContainerEntry>,
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

fn seconds(ns: i64) -> String {
    crate::decimal::format_scaled(ns, 1_000_000_000)
}

impl PajeWriter {
    /// A writer over `out`, reporting what it had to change to `warnings`.
    pub fn new(out: Output, warnings: Warnings) -> PajeWriter {
        PajeWriter {
            out,
            defs: FastMap::default(),
            types: FastMap::default(),
            containers: FastMap::default(),
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
                    // A user field named like a known field would be read as that field.
                    let _ = writeln!(def, "% {} string", name.replace(char::is_whitespace, "_"));
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

    /// Defines a type unless known; returns its identifier.
    fn ensure_type(&mut self, id: &str, nature: &str, parent: &str, name: &str) -> Result<()> {
        if self.types.contains_key(id) {
            return Ok(());
        }
        self.types.insert(id.to_string(), nature.to_string());
        let event = match nature {
            "container" => Event::DefineContainerType,
            "state" => Event::DefineStateType,
            "event" => Event::DefineEventType,
            "variable" => Event::DefineVariableType,
            _ => Event::DefineLinkType,
        };
        let parent = if parent.is_empty() { "0" } else { parent };
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
    fn owner(&self, loc: &str) -> (String, String) {
        if loc.is_empty() {
            return ("0".to_string(), "0".to_string());
        }
        match self.containers.get(loc) {
            Some(ContainerEntry {
                lane_of: Some(parent),
                ..
            }) => {
                let t = self
                    .containers
                    .get(parent)
                    .map(|c| c.type_.clone())
                    .unwrap_or_default();
                (parent.clone(), t)
            }
            Some(c) => (loc.to_string(), c.type_.clone()),
            None => (loc.to_string(), String::new()),
        }
    }

    /// The type of entity rows: the row's `cat` when it names a type of the
    /// right nature, else a type made for its container type.
    fn entity_type(&mut self, rec: &Record, nature: &str, ctype: &str) -> Result<String> {
        if self.types.get(&rec.cat).is_some_and(|n| n == nature) {
            return Ok(rec.cat.clone());
        }
        let (suffix, name) = match nature {
            "state" => ("state", "State"),
            "event" => ("event", "Event"),
            "variable" => ("var", rec.name.as_str()),
            _ => ("link", "Link"),
        };
        let id = if nature == "variable" {
            format!("{ctype}.{suffix}.{}", rec.name)
        } else {
            format!("{ctype}.{suffix}")
        };
        let name = name.to_string();
        self.ensure_type(&id, nature, ctype, &name)?;
        Ok(id)
    }

    fn container(&mut self, rec: &Record) -> Result<()> {
        if rec.loc == "0" && rec.cat == "0" {
            // Pajé's root container: implicit in a Pajé file.
            self.containers.insert(
                rec.loc.clone(),
                ContainerEntry {
                    type_: "0".into(),
                    lane_of: None,
                },
            );
            return Ok(());
        }
        if rec.cat == LANE {
            self.containers.insert(
                rec.loc.clone(),
                ContainerEntry {
                    type_: String::new(),
                    lane_of: Some(rec.peer.clone()),
                },
            );
            return Ok(());
        }
        let parent_type = self
            .containers
            .get(&rec.peer)
            .map(|c| c.type_.clone())
            .unwrap_or_default();
        let type_ = if self.types.get(&rec.cat).is_some_and(|n| n == "container") {
            rec.cat.clone()
        } else {
            let base = if rec.cat.is_empty() {
                "container"
            } else {
                rec.cat.as_str()
            };
            let id = if parent_type.is_empty() {
                base.to_string()
            } else {
                format!("{parent_type}.{base}")
            };
            let name = base.to_string();
            self.ensure_type(&id, "container", &parent_type, &name)?;
            id
        };
        self.containers.insert(
            rec.loc.clone(),
            ContainerEntry {
                type_: type_.clone(),
                lane_of: None,
            },
        );
        let name = if rec.name.is_empty() {
            &rec.loc
        } else {
            &rec.name
        };
        let time = seconds(rec.time.unwrap_or(0));
        let parent = if rec.peer.is_empty() {
            "0"
        } else {
            rec.peer.as_str()
        };
        let mut fields = vec![(Field::Time, time.as_str())];
        if rec.loc != *name {
            fields.push((Field::Alias, rec.loc.as_str()));
        }
        fields.extend([
            (Field::Type, type_.as_str()),
            (Field::Container, parent),
            (Field::Name, name.as_str()),
        ]);
        let filename = rec.attr("paje.filename");
        if let Some(f) = &filename {
            fields.push((Field::Filename, f));
        }
        self.line(Event::CreateContainer, &fields, &Self::extras(rec))
    }

    fn type_row(&mut self, rec: &Record) -> Result<()> {
        // Values are named per type; only types go into the lookup.
        if rec.cat != "value" {
            self.types.insert(rec.id.clone(), rec.cat.clone());
        }
        let event = match rec.cat.as_str() {
            "container" => Event::DefineContainerType,
            "state" => Event::DefineStateType,
            "event" => Event::DefineEventType,
            "variable" => Event::DefineVariableType,
            "link" => Event::DefineLinkType,
            "value" => Event::DefineEntityValue,
            other => {
                self.warnings.warn(format!(
                    "type `{}` of unknown nature `{other}` left out",
                    rec.id
                ));
                return Ok(());
            }
        };
        let parent = if rec.peer.is_empty() {
            "0"
        } else {
            rec.peer.as_str()
        };
        let mut fields = Vec::new();
        if rec.id != rec.name {
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
        fields.push((Field::Name, rec.name.as_str()));
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
    /// `(comm, sender, receiver, tag)` pairs with its k-th receive.
    fn link(&mut self, rec: &Record) -> Result<()> {
        let native = rec.tag.is_none()
            && !rec.comm.is_empty()
            && self.types.get(&rec.cat).is_some_and(|n| n == "link");
        let (container, type_, key) = if native {
            (rec.comm.clone(), rec.cat.clone(), rec.id.clone())
        } else {
            let (sender, receiver) = match rec.kind {
                Kind::Recv => (&rec.peer, &rec.loc),
                _ => (&rec.loc, &rec.peer),
            };
            let (_, st) = self.owner(sender);
            let (_, rt) = self.owner(receiver);
            let st = if sender.is_empty() { rt.clone() } else { st };
            let rt = if receiver.is_empty() { st.clone() } else { rt };
            let id = format!("{st}->{rt}");
            if !self.types.contains_key(&id) {
                self.types.insert(id.clone(), "link".into());
                let fields = [
                    (Field::Alias, id.as_str()),
                    (Field::Type, "0"),
                    (Field::StartContainerType, st.as_str()),
                    (Field::EndContainerType, rt.as_str()),
                    (Field::Name, id.as_str()),
                ];
                self.line(Event::DefineLinkType, &fields, &[])?;
            }
            let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
            let channel = format!("{}/{sender}/{receiver}/{tag}", rec.comm);
            let counter = self.channels.entry(channel.clone()).or_default();
            let n = match rec.kind {
                Kind::Send => {
                    counter.0 += 1;
                    counter.0
                }
                Kind::Recv => {
                    counter.1 += 1;
                    counter.1
                }
                _ => {
                    counter.2 += 1;
                    counter.2
                }
            };
            let key = if rec.kind == Kind::Msg {
                format!("{channel}/msg{n}")
            } else {
                format!("{channel}/{n}")
            };
            ("0".to_string(), id, key)
        };
        let value = Self::value_of(rec).to_string();
        let mut extras = Self::extras(rec);
        if !native {
            let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
            let size = rec.size.map(|t| t.to_string()).unwrap_or_default();
            for (k, v) in [
                ("comm", rec.comm.as_str()),
                ("tag", tag.as_str()),
                ("size", size.as_str()),
                ("id", rec.id.as_str()),
            ] {
                if !v.is_empty() && !extras.iter().any(|(key, _)| key == k) {
                    extras.push((k.to_string(), v.to_string()));
                }
            }
        }
        let halves: Vec<(Event, i64, &str)> = match rec.kind {
            Kind::Send => vec![(Event::StartLink, rec.time.unwrap_or(0), &rec.loc)],
            Kind::Recv => vec![(Event::EndLink, rec.time.unwrap_or(0), &rec.loc)],
            _ => vec![
                (Event::StartLink, rec.time.unwrap_or(0), &rec.loc),
                (Event::EndLink, rec.end.unwrap_or(0), &rec.peer),
            ],
        };
        for (event, t, end) in halves {
            let time = seconds(t);
            let end_field = if event == Event::StartLink {
                Field::StartContainer
            } else {
                Field::EndContainer
            };
            let fields = [
                (Field::Time, time.as_str()),
                (Field::Container, container.as_str()),
                (Field::Type, type_.as_str()),
                (end_field, end),
                (Field::Value, value.as_str()),
                (Field::Key, key.as_str()),
            ];
            self.line(event, &fields, &extras)?;
        }
        Ok(())
    }

    fn value_of(rec: &Record) -> &str {
        if rec.value.is_empty() {
            &rec.name
        } else {
            &rec.value
        }
    }

    fn hold(&mut self, rec: &Record) {
        let mut extras = Self::extras(rec);
        for (k, v) in [
            ("kind", rec.kind.as_str()),
            ("cat", rec.cat.as_str()),
            ("id", rec.id.as_str()),
            ("peer", rec.peer.as_str()),
        ] {
            if !v.is_empty() && !extras.iter().any(|(key, _)| key == k) {
                extras.push((k.to_string(), v.to_string()));
            }
        }
        let value = if rec.name.is_empty() {
            rec.kind.as_str().to_string()
        } else {
            rec.name.clone()
        };
        let (a, b) = (rec.time.unwrap_or(0), rec.end.unwrap_or(0));
        self.intervals.push(Interval {
            start: a.min(b),
            end: a.max(b),
            loc: rec.loc.clone(),
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
        let mut lanes: FastMap<(String, Kind), Vec<i64>> = FastMap::default();
        // (time, order at that time, interval, container, state type); at one
        // instant: ends of intervals that began earlier, then starts, then the
        // ends of empty intervals.
        let mut events: Vec<(i64, u8, usize, String, String)> = Vec::new();
        for (n, iv) in intervals.iter().enumerate() {
            let free = lanes.entry((iv.loc.clone(), iv.kind)).or_default();
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
            let (container, ctype) = self.owner(&iv.loc);
            let id = format!("{ctype}.{}{lane}", iv.kind.as_str());
            let name = format!("{} {lane}", iv.kind.as_str());
            self.ensure_type(&id, "state", &ctype, &name)?;
            events.push((iv.start, 1, n, container.clone(), id.clone()));
            events.push((
                iv.end,
                if iv.end > iv.start { 0 } else { 2 },
                n,
                container,
                id,
            ));
        }
        events.sort_by_key(|e| (e.0, e.1));
        for (t, order, n, container, id) in events {
            let time = seconds(t);
            let iv = &intervals[n];
            if order == 1 {
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container.as_str()),
                    (Field::Type, id.as_str()),
                    (Field::Value, iv.value.as_str()),
                ];
                let extras = iv.extras.clone();
                self.line(Event::PushState, &fields, &extras)?;
            } else {
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container.as_str()),
                    (Field::Type, id.as_str()),
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
                    .map(|c| c.type_.clone())
                    .unwrap_or_default();
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Type, type_.as_str()),
                    (Field::Name, rec.loc.as_str()),
                ];
                self.line(Event::DestroyContainer, &fields, &Self::extras(rec))
            }
            Kind::Leave if synthetic => Ok(()),
            Kind::Enter | Kind::Leave => {
                let (container, ctype) = self.owner(&rec.loc);
                let type_ = self.entity_type(rec, "state", &ctype)?;
                let mut fields = vec![
                    (Field::Time, time.as_str()),
                    (Field::Container, container.as_str()),
                    (Field::Type, type_.as_str()),
                ];
                let (line_attr, file_attr) = (rec.attr("paje.line"), rec.attr("paje.file"));
                if rec.kind == Kind::Enter {
                    fields.push((Field::Value, Self::value_of(rec)));
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
            Kind::Event => {
                let (container, ctype) = self.owner(&rec.loc);
                let type_ = self.entity_type(rec, "event", &ctype)?;
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container.as_str()),
                    (Field::Type, type_.as_str()),
                    (Field::Value, Self::value_of(rec)),
                ];
                self.line(Event::NewEvent, &fields, &Self::extras(rec))
            }
            Kind::Counter => {
                let (container, ctype) = self.owner(&rec.loc);
                let type_ = self.entity_type(rec, "variable", &ctype)?;
                let (event, value) = match (rec.attr(ATTR_OP).as_deref(), rec.attr(ATTR_OPERAND)) {
                    (Some("add"), Some(x)) => (Event::AddVariable, x),
                    (Some("sub"), Some(x)) => (Event::SubVariable, x),
                    _ => (Event::SetVariable, rec.value.clone()),
                };
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container.as_str()),
                    (Field::Type, type_.as_str()),
                    (Field::Value, value.as_str()),
                ];
                self.line(event, &fields, &Self::extras(rec))
            }
            Kind::Send | Kind::Recv | Kind::Msg => self.link(rec),
            Kind::State | Kind::Claim | Kind::Coll | Kind::Dep | Kind::Signal => {
                self.hold(rec);
                Ok(())
            }
        }
    }

    fn finish(&mut self) -> Result<()> {
        self.write_intervals()?;
        if self.replaced > 0 {
            self.warnings.warn(format!(
                "{} character(s) a quoted Pajé field cannot hold (\" or line breaks) were replaced",
                self.replaced
            ));
        }
        self.out.flush()
    }
}
