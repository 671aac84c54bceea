//! Pajé: the self-defined text format of SimGrid, StarPU, Akypuera and poti
//! traces (read by PajeNG and ViTE).
//!
//! This module holds the syntax shared by the reader and the writers: the word
//! splitter, the event catalogue with its obligatory fields, and field names.
//! `reader.rs` simulates a trace into the stream, `writer.rs` writes a stream as
//! Pajé, `pjdump.rs` prints what PajeNG's `pj_dump` prints. The mapping is in
//! `docs/formats.md`.

pub mod catalogue;
pub mod lexer;
pub mod pjdump;
pub mod reader;
pub mod writer;

use crate::model::symbol::{well_known, Sym};
use crate::pipe::Probe;
use crate::swar::{bytes_below, bytes_equal, load_padded, to_bits, ONES};

/// Prefix of attribute keys that carry Pajé fields with no stream column.
/// Other attribute keys are the trace's user-defined fields.
pub const PREFIX: &str = crate::model::record::prefix::PAJE;

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
pub const LANE: Sym = well_known::LANE;

/// User fields by which the writer marks the lines of a row with an
/// extent, which the stream gives when it completes: a `state`, `claim` or
/// `coll` row as a push and its pop, a `signal` fragment as a variable set
/// with its end. The writer writes them then, with the row's columns in
/// these fields, and the reader makes the row again, complete (not an
/// `enter` or a `counter` at the start, which would come after rows it
/// precedes).
pub mod extent {
    use crate::model::record::Kind;

    /// The row's kind.
    pub const KIND: &str = "tracepipe.kind";
    /// The row's `cat`.
    pub const CAT: &str = "tracepipe.cat";
    /// The row's `name`.
    pub const NAME: &str = "tracepipe.name";
    /// The row's `value`.
    pub const VALUE: &str = "tracepipe.value";
    /// The row's `id`.
    pub const ID: &str = "tracepipe.id";
    /// The row's `peer`.
    pub const PEER: &str = "tracepipe.peer";
    /// The row's `comm`.
    pub const COMM: &str = "tracepipe.comm";
    /// The row's `tag`.
    pub const TAG: &str = "tracepipe.tag";
    /// The row's `size`.
    pub const SIZE: &str = "tracepipe.size";
    /// A signal fragment's `end`, in the trace's time unit.
    pub const END: &str = "tracepipe.end";
    /// Every mark.
    pub const ALL: [&str; 10] = [KIND, CAT, NAME, VALUE, ID, PEER, COMM, TAG, SIZE, END];
    /// A row's attributes folded into one field, in the stream's encoded
    /// form, where one field each would make the line longer than PajeNG
    /// reads (see [`super::MAX_FIELDS`]).
    pub const ATTRS: &str = "tracepipe.attrs";
    /// Attribute of a row made from marks: the Pajé type its lines are of
    /// (so `-t pjdump` prints them as `pj_dump` does).
    pub const ATTR_TYPE: &str = "paje.type";

    /// The value a state made for a row is written with, which a viewer
    /// colours it by: its name, else its first user attribute's value (a
    /// TRACE claim's `stage`), else its kind.
    pub fn state_value<'a>(
        symbols: &'a crate::model::symbol::Symbols,
        rec: &'a crate::model::record::Record,
    ) -> std::borrow::Cow<'a, str> {
        use crate::model::record::prefix;
        let first_user_attr = rec.attrs().find(|(k, _)| !prefix::is_format_field(k));
        match first_user_attr {
            _ if !rec.name.is_empty() => symbols.text(rec.name).into(),
            Some((_, v)) if !v.is_empty() => v,
            _ => rec.kind.as_str().into(),
        }
    }

    /// The kind a `KIND` mark names, when it is one the writer marks:
    /// `state`, `claim` and `coll` on pushes, `signal` on variable sets.
    pub fn kind(text: &str) -> Option<Kind> {
        match Kind::parse(text.as_bytes())? {
            k @ (Kind::State | Kind::Claim | Kind::Coll | Kind::Signal) => Some(k),
            _ => None,
        }
    }
}

/// The most fields an event line may have after its id: PajeNG keeps 20
/// words a line (`PAJE_MAX_FIELDS`) and fails on a line with more.
pub const MAX_FIELDS: usize = 19;

/// Adds a user field of a Pajé line (`key_eq`: its name encoded, with its
/// `=`) to `r`'s attributes: a `tracepipe.attrs` field that holds a valid
/// encoded attribute list gives those attributes.
pub fn push_user_field(r: &mut crate::model::record::Record, key_eq: &str, value: &str) {
    use crate::model::record::validate_attrs;
    let folded = key_eq.strip_suffix('=') == Some(extent::ATTRS);
    if !folded || value.is_empty() || validate_attrs(value).is_err() {
        return r.push_attr_encoded_key(key_eq, value);
    }
    if !r.attrs.is_empty() {
        r.attrs.push(';');
    }
    r.attrs.push_str(value);
}

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

/// A word's byte range in its line: lines are at most
/// [`crate::io::MAX_LINE`] bytes, so 32 bits hold it (and the words of a
/// chunk of lines cost half what they would as `usize`).
pub type WordSpan = (u32, u32);

/// Splits a line into words the way PajeNG does: white space (space, tab, CR,
/// VT, FF) separates words; an unquoted `#` ends the line, even inside a word;
/// a word starting with `"` runs to the next `"` (or the end of the line) and
/// loses its quotes; there are no escapes. Word ranges go into `words`.
pub fn split_words(line: &[u8], words: &mut Vec<WordSpan>) {
    words.clear();
    append_words(line, words);
}

/// [`split_words`], the word ranges appended to those `words` holds.
pub fn append_words(line: &[u8], words: &mut Vec<WordSpan>) {
    let before = words.len();
    if !split_plain(line, words) {
        words.truncate(before);
        split_general(line, words);
    }
}

/// Splits the common line: at most 64 bytes, whose only separators are
/// spaces and which has no quote, `#` or control byte. It builds one bit per
/// space for the whole line, eight bytes at a time, then reads word starts and
/// ends off bit masks, without a branch per byte. False (with `words` partly
/// filled) for any other line.
#[inline]
fn split_plain(line: &[u8], words: &mut Vec<WordSpan>) -> bool {
    let n = line.len();
    if n > 64 {
        return false;
    }
    let mut spaces = 0u64;
    let mut special = 0u64;
    for (i, chunk) in line.chunks(8).enumerate() {
        // Padding past the end of the line reads as spaces.
        let x = load_padded(chunk, b' ');
        // Bytes below 0x20, and `"` or `#` (0x22, 0x23), need the general rules.
        special |= bytes_below(x, 0x20) | bytes_equal(x & !ONES, 0x22);
        let bits = to_bits(bytes_equal(x, b' '));
        spaces |= bits << (8 * i);
    }
    if special != 0 {
        return false;
    }
    if n < 64 {
        spaces |= u64::MAX << n;
    }
    let word = !spaces;
    let mut starts = word & !(word << 1);
    let mut ends = word & !(word >> 1);
    while starts != 0 {
        let from = starts.trailing_zeros() as usize;
        let to = ends.trailing_zeros() as usize + 1;
        words.push((from as u32, to as u32));
        starts &= starts - 1;
        ends &= ends - 1;
    }
    true
}

/// [`split_words`] for any line, a byte at a time.
fn split_general(line: &[u8], words: &mut Vec<WordSpan>) {
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
                        words.push((start as u32, (start + j) as u32));
                        i = start + j + 1;
                    }
                    None => {
                        words.push((start as u32, n as u32));
                        return;
                    }
                }
            }
            _ => {
                let start = i;
                while i < n && CLASS[usize::from(line[i])] == WORD {
                    i += 1;
                }
                words.push((start as u32, i as u32));
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
        w.iter()
            .map(|&(a, b)| &line[a as usize..b as usize])
            .collect()
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

    #[test]
    fn word_at_a_time_splitter_agrees_with_the_byte_rules() {
        // Every line of up to 13 bytes over an alphabet with a space, a tab, a
        // quote, a hash and a non-ASCII byte, plus long lines: both splitters
        // give the same words (or the fast one declines).
        let alphabet: [u8; 6] = [b'a', b' ', b'\t', b'"', b'#', 0xc3];
        let mut state = 12345u64;
        for len in 0..40usize {
            for _ in 0..2000 {
                let line: Vec<u8> = (0..len)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        let r = (state >> 33) as usize;
                        // Mostly word bytes and spaces, as real lines.
                        if r % 10 < 6 {
                            b'a' + (r % 26) as u8
                        } else {
                            alphabet[r % alphabet.len()]
                        }
                    })
                    .collect();
                let mut general = Vec::new();
                split_general(&line, &mut general);
                let mut plain = Vec::new();
                if split_plain(&line, &mut plain) {
                    assert_eq!(plain, general, "{:?}", String::from_utf8_lossy(&line));
                }
                let mut both = Vec::new();
                split_words(&line, &mut both);
                assert_eq!(both, general);
                // Appended after the words of an earlier line.
                let mut appended = vec![(7, 9)];
                append_words(&line, &mut appended);
                assert_eq!(appended[0], (7, 9));
                assert_eq!(appended[1..], general[..]);
            }
        }
    }
}
