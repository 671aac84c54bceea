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
//! declares), `msg` and `dep` rows both ends at once. The other rows with
//! an extent (`state` rows, claims, collectives) become a push and a pop on
//! a state type of their own where they overlap nothing, marked so the
//! reader makes the row again (see [`super::extent`]).
//! What Pajé cannot hold is refused with an error naming the row (see
//! `docs/formats.md`). `%EventDef` blocks are written when first needed.
//!
//! Here: the writer's state, its lines and its sink; `hierarchy` declares
//! types and containers, `links` writes messages and halves, `entities`
//! frames, events, counters, signals and intervals.

use std::collections::hash_map::Entry;
use std::fmt::Write as _;

use super::{
    extent, Event, Field, ATTR_COLOR, ATTR_END_TYPE, ATTR_OP, ATTR_OPERAND, ATTR_START_TYPE, LANE,
    PREFIX,
};
use crate::decimal::Decimal;
use crate::error::{Error, Result, Warnings};
use crate::fasthash::{FastMap, FastSet};
use crate::io::Output;
use crate::model::record::{encode_attr_part, flags, owned_attr, Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{RecordSink, WriteOptions};

mod entities;
mod hierarchy;
mod links;

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
    /// Per location and kind of rows with an extent, its lanes (state
    /// types) and the end of the last row on each.
    lanes: FastMap<(Sym, Kind), Vec<entities::Lane>>,
    /// Sends, receives and messages seen per foreign channel.
    channels: FastMap<String, (u64, u64, u64)>,
    buf: String,
    replaced: u64,
    warnings: Warnings,
    /// Destructions of the instant being written: written once the stream
    /// passes it, so rows of that instant on the containers they end
    /// (which a stream may give after them) come first.
    destroys: Vec<Record>,
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

/// User fields past what a PajeNG line holds: the marks each in a field,
/// the attributes in one (`tracepipe.attrs`, the stream's encoded form).
fn fold_attrs(extras: &[(String, String)]) -> Vec<(String, String)> {
    let is_mark = |k: &str| extent::ALL.contains(&k);
    let mut kept: Vec<(String, String)> =
        extras.iter().filter(|(k, _)| is_mark(k)).cloned().collect();
    let mut attrs = String::new();
    for (k, v) in extras.iter().filter(|(k, _)| !is_mark(k)) {
        if !attrs.is_empty() {
            attrs.push(';');
        }
        encode_attr_part(k, &mut attrs);
        attrs.push('=');
        encode_attr_part(v, &mut attrs);
    }
    kept.push((extent::ATTRS.to_string(), attrs));
    kept
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
            lanes: FastMap::default(),
            channels: FastMap::default(),
            buf: String::new(),
            replaced: 0,
            warnings,
            destroys: Vec::new(),
        }
    }

    /// The user-defined fields of a row (attributes that are not Pajé fields).
    fn extras(rec: &Record) -> Vec<(String, String)> {
        rec.attrs()
            .filter(|(k, _)| !k.starts_with(PREFIX))
            .map(owned_attr)
            .collect()
    }

    /// Writes one event line, defining its layout first when new.
    fn line(
        &mut self,
        event: Event,
        fields: &[(Field, &str)],
        extras: &[(String, String)],
    ) -> Result<()> {
        let folded;
        let extras = match fields.len() + extras.len() > super::MAX_FIELDS {
            true => {
                folded = fold_attrs(extras);
                &folded
            }
            false => extras,
        };
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
}

impl PajeWriter {
    /// Writes the destructions held, when `time` is past their instant.
    fn destroys_before(&mut self, time: Option<i64>) -> Result<()> {
        let held = self.destroys.first().and_then(|d| d.time);
        if held.is_none() || time.is_some_and(|t| Some(t) <= held) {
            return Ok(());
        }
        for rec in std::mem::take(&mut self.destroys) {
            self.destroy(&rec)?;
        }
        Ok(())
    }

    fn destroy(&mut self, rec: &Record) -> Result<()> {
        let time = seconds(rec.time.unwrap_or(0));
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
}

impl RecordSink for PajeWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        let synthetic = rec.flags.contains(flags::SYNTHETIC);
        if rec.time.is_some() {
            self.destroys_before(rec.completion())?;
        }
        let time = seconds(rec.time.unwrap_or(0));
        match rec.kind {
            Kind::Meta => Ok(()),
            Kind::Type => self.type_row(rec),
            Kind::Container => self.container(rec),
            Kind::Destroy if synthetic => Ok(()),
            Kind::Destroy => {
                self.destroys.push(rec.clone());
                Ok(())
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
            Kind::State | Kind::Claim | Kind::Coll => self.interval(rec),
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
        self.destroys_before(None)?;
        if self.replaced > 0 {
            self.warnings.warn(format!(
                "{} character(s) a quoted Pajé field cannot hold (\" or line breaks) were replaced",
                self.replaced
            ));
        }
        self.out.finish()
    }
}
