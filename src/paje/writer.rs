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
use crate::error::{warn, Result};
use crate::fasthash::FastMap;
use crate::format::{RecordSink, WriteOptions};
use crate::io::Output;
use crate::record::{flags, Kind, Record};

/// Registry constructor.
pub fn open_writer(out: Output, _: &WriteOptions) -> Result<Box<dyn RecordSink>> {
    Ok(Box::new(PajeWriter::new(out)))
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
    buf: String,
    replaced: u64,
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
    /// A writer over `out`.
    pub fn new(out: Output) -> PajeWriter {
        PajeWriter {
            out,
            defs: FastMap::default(),
            types: FastMap::default(),
            containers: FastMap::default(),
            intervals: Vec::new(),
            buf: String::new(),
            replaced: 0,
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

    /// The container type of `loc` (the lane's container for a lane).
    fn owner(&self, loc: &str) -> (String, String) {
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
                warn(format!(
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
        let mut lanes: FastMap<(String, Kind), Vec<i64>> = FastMap::default();
        let mut events: Vec<(i64, u8, usize, String, String)> = Vec::new();
        for (n, iv) in intervals.iter().enumerate() {
            let free = lanes.entry((iv.loc.clone(), iv.kind)).or_default();
            let lane = match free.iter().position(|&end| end <= iv.start) {
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
            events.push((iv.end, 0, n, container, id));
        }
        // At equal times, ends before starts.
        events.sort_by_key(|e| (e.0, e.1));
        for (t, is_start, n, container, id) in events {
            let time = seconds(t);
            let iv = &intervals[n];
            if is_start == 1 {
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
                if container.is_empty() {
                    warn(format!(
                        "event `{}` at {time} s has no location; Pajé needs one, left out",
                        rec.name
                    ));
                    return Ok(());
                }
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
            Kind::Send | Kind::Recv | Kind::Msg => {
                let (link_container, ctype) = if rec.comm.is_empty()
                    || self.types.get(&rec.cat).is_none_or(|n| n != "link")
                {
                    // A foreign message: a link type in the root container type.
                    ("0".to_string(), String::new())
                } else {
                    let t = self
                        .containers
                        .get(&rec.comm)
                        .map(|c| c.type_.clone())
                        .unwrap_or_default();
                    (rec.comm.clone(), t)
                };
                let type_ = self.entity_type(rec, "link", &ctype)?;
                let key = if rec.id.is_empty() {
                    format!("{}", rec.time.unwrap_or(0))
                } else {
                    rec.id.clone()
                };
                let value = Self::value_of(rec).to_string();
                let extras = Self::extras(rec);
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
                        (Field::Container, link_container.as_str()),
                        (Field::Type, type_.as_str()),
                        (end_field, end),
                        (Field::Value, value.as_str()),
                        (Field::Key, key.as_str()),
                    ];
                    self.line(event, &fields, &extras)?;
                }
                Ok(())
            }
            Kind::State | Kind::Claim | Kind::Coll | Kind::Dep | Kind::Signal => {
                if rec.loc.is_empty() {
                    warn(format!(
                        "`{}` row at {time} s has no location; Pajé needs one, left out",
                        rec.kind
                    ));
                } else {
                    self.hold(rec);
                }
                Ok(())
            }
        }
    }

    fn finish(&mut self) -> Result<()> {
        self.write_intervals()?;
        if self.replaced > 0 {
            warn(format!(
                "{} character(s) a quoted Pajé field cannot hold (\" or line breaks) were replaced",
                self.replaced
            ));
        }
        self.out.flush()
    }
}
