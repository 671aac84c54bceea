//! The event catalogue of a Pajé trace: the `%EventDef` blocks, which say
//! which fields each event id's lines carry and in which order. Read apart
//! from the simulation, so a line is read through its definition by borrowing
//! it from here while the simulation changes.

use super::{Event, Field, FIELD_TYPES};
use crate::fasthash::StrMap;
use crate::model::record::encoded_key;

/// What a field of a definition is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldRole {
    /// A field PajeNG knows.
    Known(Field),
    /// A user-defined field, by name.
    Extra(String),
}

/// One event definition.
#[derive(Debug, Clone)]
pub struct Def {
    /// The Pajé event it defines.
    pub event: Event,
    /// Its fields in line order.
    pub fields: Vec<FieldRole>,
    /// Position of each known field in the line (0 = absent, else index + 1).
    index: [u16; 15],
    /// The user-defined fields: their position in the line, and their name
    /// as an attribute key with its `=` (encoded once for every row).
    extras: Vec<(usize, String)>,
}

/// The fields of an event line found before the simulation reads it, by
/// a lexing job (`None`: left to the reading thread).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Found {
    /// Its time in nanoseconds, when plain seconds.
    pub time_ns: Option<i64>,
    /// Its container, by its index in the simulation.
    pub container: Option<u32>,
    /// Its type, likewise.
    pub type_: Option<u32>,
    /// Its value, by its position among the values of its type.
    pub value: Option<u32>,
}

impl Def {
    /// The position of known field `f` in the line's words (the event id
    /// is word 0), when the definition has it.
    #[inline]
    pub fn word_of(&self, f: Field) -> Option<usize> {
        match self.index[f as usize] {
            0 => None,
            i => Some(usize::from(i)),
        }
    }
}

/// The words of one event line, read through its definition.
pub struct Line<'a> {
    /// The definition of the line's event id.
    pub def: &'a Def,
    /// The event id, then the fields in definition order.
    pub words: &'a [&'a str],
    /// What the lexing job found of its fields already.
    pub found: Found,
}

impl<'a> Line<'a> {
    /// The value of a known field ("" when the definition lacks it).
    #[inline]
    pub fn get(&self, f: Field) -> &'a str {
        self.def.word_of(f).map_or("", |i| self.words[i])
    }

    /// The user-defined fields: (name as an attribute key with its `=`,
    /// value), for [`crate::model::record::Record::push_attr_encoded_key`].
    pub fn extras(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        let words = self.words;
        self.def
            .extras
            .iter()
            .map(move |(at, key)| (key.as_str(), words[*at]))
    }
}

/// Event ids that are small decimal numbers (as almost every trace uses) are
/// found by index instead of by hash.
const SMALL_IDS: usize = 1024;

fn small_id(id: &[u8]) -> Option<usize> {
    crate::number::parse_uint(id)
        .filter(|&n| n < SMALL_IDS as u64)
        .map(|n| n as usize)
}

/// Every definition read so far, and the one being read. Definitions are
/// only ever added, so a definition's position never changes and a copy
/// finds what it found in the original (see [`Catalogue::position`]).
#[derive(Clone)]
pub struct Catalogue {
    defs: StrMap<Def>,
    /// Positions in `defs` of the ids in `0..SMALL_IDS`.
    small: Vec<Option<usize>>,
    /// The definition being read: its id, what it has so far, its line.
    open: Option<(String, Def, u64)>,
}

impl Default for Catalogue {
    fn default() -> Self {
        Catalogue {
            defs: StrMap::default(),
            small: vec![None; SMALL_IDS],
            open: None,
        }
    }
}

impl Catalogue {
    /// The id and line of a definition still open (no `%EndEventDef` yet).
    pub fn open(&self) -> Option<(&str, u64)> {
        self.open.as_ref().map(|(id, _, line)| (id.as_str(), *line))
    }

    /// The position of the definition of event id `id` (bytes, for the
    /// lexing jobs, which have not made the line's words strings).
    pub fn position(&self, id: &[u8]) -> Option<usize> {
        match small_id(id) {
            Some(n) => self.small[n],
            None => self.defs.get_index_of(std::str::from_utf8(id).ok()?),
        }
    }

    /// The definition at `position` (from [`Catalogue::position`]).
    pub fn def(&self, position: usize) -> &Def {
        &self.defs[position]
    }

    /// Reads an event line through the definition of its id (`words[0]`).
    /// Returns the line and, when it has more words than fields, how many
    /// (they are ignored, as PajeNG does).
    pub fn line<'a>(&'a self, words: &'a [&'a str]) -> Result<(Line<'a>, Option<usize>), String> {
        let id = words[0];
        let Some(position) = self.position(id.as_bytes()) else {
            return Err(format!(
                "undefined event id `{id}` (no `%EventDef` gives it)"
            ));
        };
        self.line_at(position, words, Found::default())
    }

    /// [`Catalogue::line`] for a line whose definition was found at
    /// `position` (by this catalogue or an earlier copy), and some of its
    /// fields `found` already.
    #[inline]
    pub fn line_at<'a>(
        &'a self,
        position: usize,
        words: &'a [&'a str],
        found: Found,
    ) -> Result<(Line<'a>, Option<usize>), String> {
        let (id, def) = (words[0], &self.defs[position]);
        let given = words.len() - 1;
        let wanted = def.fields.len();
        if given < wanted {
            return Err(format!(
                "missing fields: {} (id {id}) has {wanted} field(s), this line gives {given}",
                def.event.name()
            ));
        }
        let line = Line { def, words, found };
        Ok((line, (given > wanted).then_some(given)))
    }

    /// Reads a `%` line (part of an event definition).
    pub fn definition(&mut self, words: &[&str], number: u64) -> Result<(), String> {
        let first = words[0].trim_start_matches('%');
        let (keyword, args) = match (first, words.get(1)) {
            ("", Some(k)) => (*k, &words[2..]),
            ("", None) => {
                return Err("empty `%` line: expected EventDef, EndEventDef or a field".into())
            }
            _ => (first, &words[1..]),
        };
        match keyword {
            "EventDef" => self.begin(args, number),
            "EndEventDef" => self.end(),
            field => self.field(field, args),
        }
    }

    /// `%EventDef <PajeEventName> <id>`.
    fn begin(&mut self, args: &[&str], number: u64) -> Result<(), String> {
        if let Some((id, _, line)) = &self.open {
            return Err(format!(
                "`%EventDef` inside the definition of event {id} opened on line {line} (missing `%EndEventDef`)"
            ));
        }
        let [name, id] = args else {
            return Err("expected `%EventDef <PajeEventName> <id>`".into());
        };
        let event = Event::from_name(name).ok_or_else(|| {
            format!("unknown event name `{name}` (PajeNG knows the Paje* events only)")
        })?;
        if self.defs.contains_key(id) {
            return Err(format!("event id `{id}` is defined twice"));
        }
        let def = Def {
            event,
            fields: Vec::new(),
            index: [0; 15],
            extras: Vec::new(),
        };
        self.open = Some((id.to_string(), def, number));
        Ok(())
    }

    /// `%EndEventDef`: checks the definition and files it.
    fn end(&mut self) -> Result<(), String> {
        let Some((id, mut def, _)) = self.open.take() else {
            return Err("`%EndEventDef` without `%EventDef`".into());
        };
        if def.fields.len() >= usize::from(u16::MAX) {
            return Err(format!(
                "the definition of event {id} has {} fields (at most {} are read)",
                def.fields.len(),
                u16::MAX - 1
            ));
        }
        if let Some(f) = def
            .event
            .obligatory()
            .iter()
            .find(|f| def.index[**f as usize] == 0)
        {
            return Err(format!(
                "definition of {} (id {id}) lacks the obligatory field `{}`",
                def.event.name(),
                f.name()
            ));
        }
        for (i, role) in def.fields.iter().enumerate() {
            match role {
                FieldRole::Known(f) => def.index[*f as usize] = (i + 1) as u16,
                FieldRole::Extra(name) => def.extras.push((i + 1, encoded_key(name))),
            }
        }
        let (position, _) = self.defs.insert_full(id.as_str().into(), def);
        if let Some(n) = small_id(id.as_bytes()) {
            self.small[n] = Some(position);
        }
        Ok(())
    }

    /// `% <Field> <type>` inside a definition.
    fn field(&mut self, field: &str, args: &[&str]) -> Result<(), String> {
        let Some((id, def, _)) = &mut self.open else {
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
            Some(f) if def.index[f as usize] != 0 => {
                return Err(format!(
                    "field `{field}` appears twice in the definition of event {id}"
                ))
            }
            Some(f) => {
                // Marks the field present; `end` puts its position.
                def.index[f as usize] = 1;
                FieldRole::Known(f)
            }
            None => FieldRole::Extra(field.to_string()),
        };
        def.fields.push(role);
        Ok(())
    }
}
