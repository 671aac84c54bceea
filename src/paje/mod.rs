//! Pajé: the self-defined text format of SimGrid, StarPU, Akypuera and poti
//! traces (read by PajeNG and ViTE).
//!
//! This module holds the syntax shared by the reader and the writers: the word
//! splitter, the event catalogue with its obligatory fields, and field names.
//! `reader.rs` simulates a trace into the stream, `writer.rs` writes a stream as
//! Pajé, `pjdump.rs` prints what PajeNG's `pj_dump` prints. The mapping is in
//! `docs/formats.md`.

pub mod pjdump;
pub mod reader;
pub mod writer;

use crate::format::Probe;

/// Prefix of attribute keys that carry Pajé fields with no stream column.
/// Other attribute keys are the trace's user-defined fields.
pub const PREFIX: &str = "paje.";

/// Attribute of a link type: the identifier of its start container type.
pub const ATTR_START_TYPE: &str = "paje.start_type";
/// Attribute of a link type: the identifier of its end container type.
pub const ATTR_END_TYPE: &str = "paje.end_type";
/// Attribute of variable types and entity values: the colour as written.
pub const ATTR_COLOR: &str = "paje.color";
/// Attribute of a counter row: the operation (`set`, `add`, `sub`).
pub const ATTR_OP: &str = "paje.op";
/// Attribute of a counter row: the operand of an `add` or `sub`.
pub const ATTR_OPERAND: &str = "paje.operand";
/// `cat` of the lane containers that hold one state stack each.
pub const LANE: &str = "lane";

/// The Pajé events PajeNG knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Event {
    DefineContainerType,
    DefineStateType,
    DefineEventType,
    DefineVariableType,
    DefineLinkType,
    DefineEntityValue,
    CreateContainer,
    DestroyContainer,
    SetState,
    PushState,
    PopState,
    ResetState,
    NewEvent,
    SetVariable,
    AddVariable,
    SubVariable,
    StartLink,
    EndLink,
    TraceFile,
}

/// Field roles of event definitions (known names; anything else is a user field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Field {
    Time,
    Name,
    Type,
    Container,
    StartContainerType,
    EndContainerType,
    StartContainer,
    EndContainer,
    Value,
    Key,
    Alias,
    Color,
    Line,
    File,
    Filename,
}

impl Event {
    /// Every event, for lookups.
    pub const ALL: [Event; 19] = [
        Event::DefineContainerType,
        Event::DefineStateType,
        Event::DefineEventType,
        Event::DefineVariableType,
        Event::DefineLinkType,
        Event::DefineEntityValue,
        Event::CreateContainer,
        Event::DestroyContainer,
        Event::SetState,
        Event::PushState,
        Event::PopState,
        Event::ResetState,
        Event::NewEvent,
        Event::SetVariable,
        Event::AddVariable,
        Event::SubVariable,
        Event::StartLink,
        Event::EndLink,
        Event::TraceFile,
    ];

    /// The event's name in `%EventDef` lines.
    pub fn name(self) -> &'static str {
        match self {
            Event::DefineContainerType => "PajeDefineContainerType",
            Event::DefineStateType => "PajeDefineStateType",
            Event::DefineEventType => "PajeDefineEventType",
            Event::DefineVariableType => "PajeDefineVariableType",
            Event::DefineLinkType => "PajeDefineLinkType",
            Event::DefineEntityValue => "PajeDefineEntityValue",
            Event::CreateContainer => "PajeCreateContainer",
            Event::DestroyContainer => "PajeDestroyContainer",
            Event::SetState => "PajeSetState",
            Event::PushState => "PajePushState",
            Event::PopState => "PajePopState",
            Event::ResetState => "PajeResetState",
            Event::NewEvent => "PajeNewEvent",
            Event::SetVariable => "PajeSetVariable",
            Event::AddVariable => "PajeAddVariable",
            Event::SubVariable => "PajeSubVariable",
            Event::StartLink => "PajeStartLink",
            Event::EndLink => "PajeEndLink",
            Event::TraceFile => "PajeTraceFile",
        }
    }

    /// The event called `name`.
    pub fn from_name(name: &str) -> Option<Event> {
        Event::ALL.iter().copied().find(|e| e.name() == name)
    }

    /// Fields a definition of this event must have.
    pub fn obligatory(self) -> &'static [Field] {
        use Field::*;
        match self {
            Event::DefineContainerType
            | Event::DefineStateType
            | Event::DefineEventType
            | Event::DefineVariableType
            | Event::DefineEntityValue => &[Name, Type],
            Event::DefineLinkType => &[Name, Type, StartContainerType, EndContainerType],
            Event::CreateContainer => &[Time, Name, Type, Container],
            Event::DestroyContainer => &[Time, Name, Type],
            Event::SetState
            | Event::PushState
            | Event::NewEvent
            | Event::SetVariable
            | Event::AddVariable
            | Event::SubVariable => &[Time, Type, Container, Value],
            Event::PopState | Event::ResetState => &[Time, Type, Container],
            Event::StartLink => &[Time, Type, Container, StartContainer, Value, Key],
            Event::EndLink => &[Time, Type, Container, EndContainer, Value, Key],
            Event::TraceFile => &[Container, Type, Filename],
        }
    }
}

impl Field {
    /// Every known field with its current name.
    pub const NAMES: [(&'static str, Field); 15] = [
        ("Time", Field::Time),
        ("Name", Field::Name),
        ("Type", Field::Type),
        ("Container", Field::Container),
        ("StartContainerType", Field::StartContainerType),
        ("EndContainerType", Field::EndContainerType),
        ("StartContainer", Field::StartContainer),
        ("EndContainer", Field::EndContainer),
        ("Value", Field::Value),
        ("Key", Field::Key),
        ("Alias", Field::Alias),
        ("Color", Field::Color),
        ("Line", Field::Line),
        ("File", Field::File),
        ("Filename", Field::Filename),
    ];

    /// The field called `name`, including the 2003 names (`ContainerType`,
    /// `EntityType`, `SourceContainer(Type)`, `DestContainer(Type)`).
    pub fn from_name(name: &str) -> Option<Field> {
        if let Some((_, f)) = Field::NAMES.iter().find(|(n, _)| *n == name) {
            return Some(*f);
        }
        Some(match name {
            "ContainerType" | "EntityType" => Field::Type,
            "SourceContainerType" => Field::StartContainerType,
            "DestContainerType" => Field::EndContainerType,
            "SourceContainer" => Field::StartContainer,
            "DestContainer" => Field::EndContainer,
            _ => return None,
        })
    }

    /// The field's current name.
    pub fn name(self) -> &'static str {
        Field::NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

/// The field types `%EventDef` blocks may give.
pub const FIELD_TYPES: [&str; 7] = ["string", "int", "double", "float", "hex", "date", "color"];

/// Splits a line into words the way PajeNG does: white space (space, tab, CR,
/// VT, FF) separates words; an unquoted `#` ends the line, even inside a word;
/// a word starting with `"` runs to the next `"` (or the end of the line) and
/// loses its quotes; there are no escapes. Word ranges go into `words`.
pub fn split_words(line: &[u8], words: &mut Vec<(usize, usize)>) {
    words.clear();
    let n = line.len();
    let mut i = 0;
    loop {
        while i < n && CLASS[usize::from(line[i])] == SPACE {
            i += 1;
        }
        if i >= n {
            return;
        }
        match line[i] {
            b'#' => return,
            b'"' => {
                let start = i + 1;
                match memchr::memchr(b'"', &line[start..]) {
                    Some(j) => {
                        words.push((start, start + j));
                        i = start + j + 1;
                    }
                    None => {
                        words.push((start, n));
                        return;
                    }
                }
            }
            _ => {
                let start = i;
                while i < n && CLASS[usize::from(line[i])] == WORD {
                    i += 1;
                }
                words.push((start, i));
            }
        }
    }
}

/// Byte classes of [`split_words`]: white space, a word byte, or a byte that
/// ends a word and needs a look (`#`; `"` only matters at a word's start).
const SPACE: u8 = 0;
const WORD: u8 = 1;
const STOP: u8 = 2;
static CLASS: [u8; 256] = {
    let mut t = [WORD; 256];
    t[b' ' as usize] = SPACE;
    t[b'\t' as usize] = SPACE;
    t[b'\r' as usize] = SPACE;
    t[0x0b] = SPACE;
    t[0x0c] = SPACE;
    t[b'#' as usize] = STOP;
    t
};

/// Content sniffer: the first meaningful line is a `%EventDef` line.
pub fn sniff(p: &Probe) -> bool {
    for line in p.head.split(|&b| b == b'\n') {
        let line = line.trim_ascii_start();
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let rest = line.strip_prefix(b"%").map(<[u8]>::trim_ascii_start);
        return rest.is_some_and(|r| r.starts_with(b"EventDef"));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<&str> {
        let mut w = Vec::new();
        split_words(line.as_bytes(), &mut w);
        w.iter().map(|&(a, b)| &line[a..b]).collect()
    }

    #[test]
    fn words_follow_pajeng_rules() {
        assert_eq!(
            words("11 1 p1 S \"hello world\""),
            ["11", "1", "p1", "S", "hello world"]
        );
        assert_eq!(words("11 2 p1 S \"\""), ["11", "2", "p1", "S", ""]);
        assert_eq!(words("11 3 p1 S a#comment"), ["11", "3", "p1", "S", "a"]);
        assert_eq!(
            words("  11 4 p1 S \"has # hash\""),
            ["11", "4", "p1", "S", "has # hash"]
        );
        assert_eq!(words("\t11\t5\tp1\r"), ["11", "5", "p1"]);
        assert_eq!(
            words("11 6 p1 S mid\"quote\"x"),
            ["11", "6", "p1", "S", "mid\"quote\"x"]
        );
        assert_eq!(
            words("11 7 p1 S \"unterminated"),
            ["11", "7", "p1", "S", "unterminated"]
        );
        assert_eq!(words("x \"a b\"c"), ["x", "a b", "c"]);
        assert_eq!(words("# full comment"), Vec::<&str>::new());
    }
}
