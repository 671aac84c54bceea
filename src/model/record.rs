//! The record model: kinds, columns and the typed row every command works on.
//!
//! `docs/stream.md` is the normative description; this module is its code.
//! A [`Record`]'s identifiers (`loc`, `cat`, `name`, `peer`, `comm`) are
//! [`Sym`]s of the pipeline's [`Symbols`] table; its
//! other text fields are owned, so readers refill one record in place
//! (`clear` keeps the capacity) and the hot path does not allocate per row.

use std::borrow::Cow;
use std::fmt::Write as _;

pub use crate::model::symbol::Sym;
use crate::model::symbol::{well_known, Symbols};

/// Name of the meta row holding the absolute time (ns since the Unix epoch) of
/// stream time 0.
pub const META_ORIGIN: Sym = well_known::ORIGIN;

/// Version written in the `format` meta row.
pub const FORMAT_VERSION: &str = "tracepipe-stream/1";

/// Name of the meta row that carries [`FORMAT_VERSION`].
pub const META_FORMAT: Sym = well_known::FORMAT;

/// The standard columns, in stream order. New columns are only ever appended.
pub const COLUMNS: [&str; 15] = [
    "kind", "time", "end", "loc", "cat", "name", "depth", "peer", "comm", "tag", "size", "id",
    "value", "flags", "attrs",
];

/// Index of a standard column in [`COLUMNS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Column {
    Kind,
    Time,
    End,
    Loc,
    Cat,
    Name,
    Depth,
    Peer,
    Comm,
    Tag,
    Size,
    Id,
    Value,
    Flags,
    Attrs,
}

impl Column {
    /// All standard columns in stream order.
    pub const ALL: [Column; 15] = [
        Column::Kind,
        Column::Time,
        Column::End,
        Column::Loc,
        Column::Cat,
        Column::Name,
        Column::Depth,
        Column::Peer,
        Column::Comm,
        Column::Tag,
        Column::Size,
        Column::Id,
        Column::Value,
        Column::Flags,
        Column::Attrs,
    ];

    /// The column's header name.
    pub fn name(self) -> &'static str {
        COLUMNS[self as usize]
    }

    /// The standard column with this header name.
    pub fn from_name(name: &str) -> Option<Column> {
        COLUMNS
            .iter()
            .position(|c| *c == name)
            .map(|i| Column::ALL[i])
    }
}

/// A set of standard columns, a bit each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ColumnSet(u16);

impl ColumnSet {
    /// No column.
    pub const NONE: ColumnSet = ColumnSet(0);
    /// Every standard column.
    pub const ALL: ColumnSet = ColumnSet((1 << Column::ALL.len()) - 1);
    /// What a row's place in the stream depends on: `kind`, `time`, `end`
    /// and `loc`, which a stream's checks read of every row.
    pub const PLACE: ColumnSet = ColumnSet(
        1 << Column::Kind as u16
            | 1 << Column::Time as u16
            | 1 << Column::End as u16
            | 1 << Column::Loc as u16,
    );

    /// Whether `column` is in the set.
    #[inline]
    pub fn contains(self, column: Column) -> bool {
        self.0 & (1 << column as u16) != 0
    }

    /// The set with `column` too.
    pub const fn with(self, column: Column) -> ColumnSet {
        ColumnSet(self.0 | 1 << column as u16)
    }

    /// The columns of either set.
    pub const fn union(self, other: ColumnSet) -> ColumnSet {
        ColumnSet(self.0 | other.0)
    }

    /// Whether the sets share a column.
    pub const fn intersects(self, other: ColumnSet) -> bool {
        self.0 & other.0 != 0
    }
}

impl FromIterator<Column> for ColumnSet {
    fn from_iter<I: IntoIterator<Item = Column>>(columns: I) -> ColumnSet {
        columns.into_iter().fold(ColumnSet::NONE, ColumnSet::with)
    }
}

/// What a row is. See `docs/stream.md` for the columns each kind uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A stream property: `name` is the key, `value` the value.
    Meta,
    /// Declares a location (`loc`) with its parent (`peer`), type (`cat`) and name.
    Container,
    /// Pushes a frame on the stack of `loc`.
    Enter,
    /// Pops the top frame of the stack of `loc`.
    Leave,
    /// A complete frame: `time`..`end` on `loc` at `depth`.
    State,
    /// An instant.
    Event,
    /// The sending half of a message.
    Send,
    /// The receiving half of a message.
    Recv,
    /// A matched message from `loc` (at `time`) to `peer` (at `end`).
    Msg,
    /// One participant's part of a collective operation.
    Coll,
    /// A sample of a counter or variable.
    Counter,
    /// A claim of an amount of a resource over `time`..`end`.
    Claim,
    /// A causal dependency from a source (`time`) to a destination (`end`).
    Dep,
    /// One piece of a continuous signal over `time`..`end`.
    Signal,
    /// Declares a type of a source's type hierarchy (Pajé container, state,
    /// event, variable and link types, and entity values): `id`, `name`, `cat`
    /// (its nature), `peer` (parent type).
    Type,
    /// The end of a location's life (a destroyed container) at `time`.
    Destroy,
}

impl Kind {
    /// Every kind, in the order of `docs/stream.md`.
    pub const ALL: [Kind; 16] = [
        Kind::Meta,
        Kind::Container,
        Kind::Enter,
        Kind::Leave,
        Kind::State,
        Kind::Event,
        Kind::Send,
        Kind::Recv,
        Kind::Msg,
        Kind::Coll,
        Kind::Counter,
        Kind::Claim,
        Kind::Dep,
        Kind::Signal,
        Kind::Type,
        Kind::Destroy,
    ];

    /// The kind's name as written in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Container => "container",
            Kind::Enter => "enter",
            Kind::Leave => "leave",
            Kind::State => "state",
            Kind::Event => "event",
            Kind::Send => "send",
            Kind::Recv => "recv",
            Kind::Msg => "msg",
            Kind::Coll => "coll",
            Kind::Counter => "counter",
            Kind::Claim => "claim",
            Kind::Dep => "dep",
            Kind::Signal => "signal",
            Kind::Type => "type",
            Kind::Destroy => "destroy",
        }
    }

    /// The kind's name quoted, after `a` or `an` as English wants.
    pub fn with_article(self) -> String {
        let article = if self == Kind::Enter || self == Kind::Event {
            "an"
        } else {
            "a"
        };
        format!("{article} `{}`", self.as_str())
    }

    /// Parses a `kind` cell.
    pub fn parse(s: &[u8]) -> Option<Kind> {
        Some(match s {
            b"meta" => Kind::Meta,
            b"container" => Kind::Container,
            b"enter" => Kind::Enter,
            b"leave" => Kind::Leave,
            b"state" => Kind::State,
            b"event" => Kind::Event,
            b"send" => Kind::Send,
            b"recv" => Kind::Recv,
            b"msg" => Kind::Msg,
            b"coll" => Kind::Coll,
            b"counter" => Kind::Counter,
            b"claim" => Kind::Claim,
            b"dep" => Kind::Dep,
            b"signal" => Kind::Signal,
            b"type" => Kind::Type,
            b"destroy" => Kind::Destroy,
            _ => return None,
        })
    }

    /// Complete kinds span `time`..`end` and are placed at their completion time.
    pub fn is_complete(self) -> bool {
        matches!(
            self,
            Kind::State | Kind::Msg | Kind::Coll | Kind::Claim | Kind::Dep | Kind::Signal
        )
    }

    /// Structural kinds (`meta`, `container`, `type`) describe the stream rather
    /// than happen in it; they are exempt from the time order.
    pub fn is_structural(self) -> bool {
        matches!(self, Kind::Meta | Kind::Container | Kind::Type)
    }

    /// Whether a row of this kind must have a `time`.
    pub fn requires_time(self) -> bool {
        !self.is_structural()
    }

    /// Whether a row of this kind must have an `end`.
    pub fn requires_end(self) -> bool {
        self.is_complete()
    }

    /// Whether a row of this kind must name a `loc`.
    pub fn requires_loc(self) -> bool {
        matches!(
            self,
            Kind::Container
                | Kind::Enter
                | Kind::Leave
                | Kind::State
                | Kind::Send
                | Kind::Recv
                | Kind::Msg
                | Kind::Coll
                | Kind::Counter
                | Kind::Claim
                | Kind::Signal
                | Kind::Destroy
        )
    }
}

/// A set of kinds, a bit each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindSet(u16);

impl KindSet {
    /// No kind.
    pub const NONE: KindSet = KindSet(0);

    /// Whether `kind` is in the set.
    #[inline]
    pub fn contains(self, kind: Kind) -> bool {
        self.0 & (1 << kind as u16) != 0
    }

    /// The set with `kind` too.
    pub fn with(self, kind: Kind) -> KindSet {
        KindSet(self.0 | 1 << kind as u16)
    }

    /// The kinds not in the set.
    pub fn complement(self) -> KindSet {
        let all = (1u32 << Kind::ALL.len()) - 1;
        KindSet((!u32::from(self.0) & all) as u16)
    }

    /// The kinds in either set.
    pub fn union(self, other: KindSet) -> KindSet {
        KindSet(self.0 | other.0)
    }

    /// The set without `kind`.
    pub fn without(self, kind: Kind) -> KindSet {
        KindSet(self.0 & !(1 << kind as u16))
    }

    /// True when the set holds no kind.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl FromIterator<Kind> for KindSet {
    fn from_iter<I: IntoIterator<Item = Kind>>(kinds: I) -> KindSet {
        kinds.into_iter().fold(KindSet::NONE, KindSet::with)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the stream.
///
/// Identifier columns are [`Sym`]s, other text columns `String`s; empty means
/// absent (the TSV form cannot tell the two apart, so neither does the
/// model). `attrs` holds the encoded `key=value;...` form; use
/// [`Record::attrs`] and [`Record::push_attr`].
#[derive(Debug, PartialEq)]
pub struct Record {
    /// The row kind.
    pub kind: Kind,
    /// Start (or only) time, integer ns from the stream origin.
    pub time: Option<i64>,
    /// End time of complete kinds, integer ns from the stream origin.
    pub end: Option<i64>,
    /// The location the row happens on.
    pub loc: Sym,
    /// Category (paradigm, container or entity type).
    pub cat: Sym,
    /// Name (function, state value, event name, meta key).
    pub name: Sym,
    /// Nesting level of a frame, 0 outermost.
    pub depth: Option<u32>,
    /// The other location (message partner, parent container, dependency target).
    pub peer: Sym,
    /// Communicator.
    pub comm: Sym,
    /// Message tag.
    pub tag: Option<i64>,
    /// Size in bytes.
    pub size: Option<u64>,
    /// Identifier (request id, link key, claim id, instance number).
    pub id: String,
    /// Value (counter sample, amount, capacity, meta value). Kept as written.
    pub value: String,
    /// One letter per flag, see [`flags`].
    pub flags: String,
    /// Encoded attributes, see [`Attrs`].
    pub attrs: String,
    /// Values of columns this version does not know, by column name; only
    /// non-empty ones are kept.
    pub extra: Vec<(String, String)>,
}

impl Clone for Record {
    fn clone(&self) -> Record {
        let mut r = Record::new(self.kind);
        r.clone_from(self);
        r
    }

    /// Field by field, so the text buffers of `self` are reused (stages that
    /// keep rows, such as open frames, copy into the same record many times).
    fn clone_from(&mut self, src: &Record) {
        self.kind = src.kind;
        self.time = src.time;
        self.end = src.end;
        self.depth = src.depth;
        self.tag = src.tag;
        self.size = src.size;
        self.loc = src.loc;
        self.cat = src.cat;
        self.name = src.name;
        self.peer = src.peer;
        self.comm = src.comm;
        for (to, from) in self.texts_mut().into_iter().zip(src.texts()) {
            to.clone_from(from);
        }
        self.extra.clone_from(&src.extra);
    }
}

/// The identifier columns of a row as text (see [`Record::idents`]).
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub struct Idents<'a> {
    pub loc: &'a str,
    pub cat: &'a str,
    pub name: &'a str,
    pub peer: &'a str,
    pub comm: &'a str,
}

/// The attribute that marks an `event` row as the posting of a nonblocking
/// receive (`posts=recv`, the request in `id`): the receive that completes
/// it later is matched in posting order (docs/stream.md §3).
pub const ATTR_POSTS: &str = "posts";

/// The prefix of the attributes that give a row's column where a binary
/// format's record gives another value (tracepipe's OTF2 and Pallas writers
/// add them, their readers put them back: docs/formats.md).
pub const COLUMN_ATTR: &str = "tracepipe.";

/// The name under which tracepipe's binary writers keep a row no record of
/// the format holds, whole, as its JSON Lines text.
pub const ROW_ATTR: &str = "tracepipe.row";

/// The most text a reader makes of the references one record names (an
/// array of string ids, an attribute list): each small reference may stand
/// for a long string, which could otherwise turn a small file into
/// gigabytes. A record that would make more is refused at its place.
pub const MAX_ROW_TEXT: usize = 1 << 20;

/// Flag letters of the `flags` column.
pub mod flags {
    /// Synthetic: made by a tool (slicing, span closing), not present in the source.
    pub const SYNTHETIC: char = 'S';
    /// Clipped: times were cut to a window or to the end of the input.
    pub const CLIPPED: char = 'C';
    /// Unmatched: a message half without its partner.
    pub const UNMATCHED: char = 'U';
    /// Reversed: the receive completes before the send (clock skew).
    pub const REVERSED: char = 'R';
    /// Lossy: a value could not be represented exactly.
    pub const LOSSY: char = 'E';
    /// Outside: a message end a slice keeps outside its window (the other
    /// end, or the flight, is inside).
    pub const OUTSIDE: char = 'O';
    /// Incomplete: a collective instance written at the end of the stream
    /// without every participant (`trace-match`).
    pub const INCOMPLETE: char = 'I';
    /// Crossed: a `leave` or `enter` that cuts a frame another frame's
    /// `leave` crossed (`model::nesting`); also synthetic.
    pub const CROSSED: char = 'X';
}

/// The prefixes of the attribute keys and meta names a format gives the
/// fields it has and the stream has no column for (`trace.offset`,
/// `paje.color`, `pallas.abi`...), one per format, in one place so a
/// writer can tell another format's fields from the user's.
pub mod prefix {
    /// Pajé's.
    pub const PAJE: &str = "paje.";
    /// Pallas's.
    pub const PALLAS: &str = "pallas.";
    /// OTF2's.
    pub const OTF2: &str = "otf2.";
    /// Intel STF's.
    pub const STF: &str = "stf.";
    /// TRACE's.
    pub const TRACE: &str = "trace.";

    /// Whether `key` names a field of one of the formats, not the user's.
    pub fn is_format_field(key: &str) -> bool {
        [OTF2, PAJE, PALLAS, STF, TRACE]
            .iter()
            .any(|p| key.starts_with(p))
    }
}

/// The true start of a row a slice clipped or made (`enter` at the window's
/// start), in stream ns.
pub const ATTR_ORIG_TIME: &str = "orig_time";

/// The true end of a row a slice clipped (for a `leave`: its frame's end).
pub const ATTR_ORIG_END: &str = "orig_end";

impl Default for Record {
    fn default() -> Self {
        Record::new(Kind::Event)
    }
}

impl Record {
    /// An empty record of `kind`.
    pub fn new(kind: Kind) -> Record {
        Record {
            kind,
            time: None,
            end: None,
            loc: Sym::EMPTY,
            cat: Sym::EMPTY,
            name: Sym::EMPTY,
            depth: None,
            peer: Sym::EMPTY,
            comm: Sym::EMPTY,
            tag: None,
            size: None,
            id: String::new(),
            value: String::new(),
            flags: String::new(),
            attrs: String::new(),
            extra: Vec::new(),
        }
    }

    /// A `meta` row `name = value`.
    pub fn meta(name: Sym, value: &str) -> Record {
        let mut r = Record::new(Kind::Meta);
        r.name = name;
        r.value.push_str(value);
        r
    }

    /// The identifier columns in stream order: loc, cat, name, peer, comm.
    pub fn syms(&self) -> [Sym; 5] {
        [self.loc, self.cat, self.name, self.peer, self.comm]
    }

    /// The identifier columns as text, for code that works on text (writers
    /// of formats whose own lookups are by name).
    pub fn idents<'a>(&self, symbols: &'a Symbols) -> Idents<'a> {
        let text = |sym| symbols.text(sym);
        Idents {
            loc: text(self.loc),
            cat: text(self.cat),
            name: text(self.name),
            peer: text(self.peer),
            comm: text(self.comm),
        }
    }

    /// The identifier columns of [`Record::syms`], to change them.
    pub fn syms_mut(&mut self) -> [&mut Sym; 5] {
        [
            &mut self.loc,
            &mut self.cat,
            &mut self.name,
            &mut self.peer,
            &mut self.comm,
        ]
    }

    /// The owned text columns in stream order: id, value, flags, attrs.
    pub fn texts(&self) -> [&String; 4] {
        [&self.id, &self.value, &self.flags, &self.attrs]
    }

    /// The text columns of [`Record::texts`], to change them.
    pub fn texts_mut(&mut self) -> [&mut String; 4] {
        [
            &mut self.id,
            &mut self.value,
            &mut self.flags,
            &mut self.attrs,
        ]
    }

    /// Makes this record `from`'s row, taking its non-empty texts (`from`
    /// keeps this one's buffers for them, and is to be cleared before
    /// reuse): cheaper than swapping whole records when most texts are
    /// empty, as in most rows.
    #[inline]
    pub fn take_from(&mut self, from: &mut Record) {
        // Destructured, so that a new field cannot be forgotten here.
        let Record {
            kind,
            time,
            end,
            loc,
            cat,
            name,
            depth,
            peer,
            comm,
            tag,
            size,
            id,
            value,
            flags,
            attrs,
            extra,
        } = from;
        (self.kind, self.time, self.end, self.depth) = (*kind, *time, *end, *depth);
        (self.loc, self.cat, self.name, self.peer, self.comm) = (*loc, *cat, *name, *peer, *comm);
        (self.tag, self.size) = (*tag, *size);
        for (mine, theirs) in self.texts_mut().into_iter().zip([id, value, flags, attrs]) {
            match theirs.is_empty() {
                true => mine.clear(),
                false => std::mem::swap(mine, theirs),
            }
        }
        match extra.is_empty() {
            true => self.extra.clear(),
            false => std::mem::swap(&mut self.extra, extra),
        }
    }

    /// Empties every field, keeping allocated capacity.
    pub fn clear(&mut self) {
        self.kind = Kind::Event;
        self.time = None;
        self.end = None;
        self.loc = Sym::EMPTY;
        self.cat = Sym::EMPTY;
        self.name = Sym::EMPTY;
        self.depth = None;
        self.peer = Sym::EMPTY;
        self.comm = Sym::EMPTY;
        self.tag = None;
        self.size = None;
        self.id.clear();
        self.value.clear();
        self.flags.clear();
        self.attrs.clear();
        self.extra.clear();
    }

    /// The time at which the row is complete: `max(time, end)` for complete
    /// kinds, `time` otherwise. This is the stream's sort key.
    pub fn completion(&self) -> Option<i64> {
        match (self.time, self.end) {
            (Some(t), Some(e)) if self.kind != Kind::Container => Some(t.max(e)),
            (Some(t), _) => Some(t),
            (None, e) if self.kind != Kind::Container => e,
            _ => None,
        }
    }

    /// When the row begins: its `time`, or for a row with an extent the
    /// earlier of `time` and `end` (a reversed message starts at its end);
    /// `None` for a row without either, and for a `container` row.
    pub fn start(&self) -> Option<i64> {
        match (self.time, self.end) {
            _ if self.kind == Kind::Container => None,
            (Some(t), Some(e)) => Some(t.min(e)),
            (t, e) => t.or(e),
        }
    }

    /// Iterates over the decoded attributes.
    pub fn attrs(&self) -> Attrs<'_> {
        Attrs { rest: &self.attrs }
    }

    /// Appends one attribute, encoding it.
    pub fn push_attr(&mut self, key: &str, value: &str) {
        if !self.attrs.is_empty() {
            self.attrs.push(';');
        }
        encode_attr_part(key, &mut self.attrs);
        self.attrs.push('=');
        encode_attr_part(value, &mut self.attrs);
    }

    /// [`Record::push_attr`] of a number, written straight into the
    /// attributes (a number needs no encoding).
    pub fn push_number_attr(&mut self, key: &str, n: impl std::fmt::Display) {
        if !self.attrs.is_empty() {
            self.attrs.push(';');
        }
        encode_attr_part(key, &mut self.attrs);
        let _ = write!(self.attrs, "={n}");
    }

    /// [`Record::push_attr`] with the key given encoded and followed by
    /// its `=` ([`encoded_key`]), for a reader that adds the same keys to
    /// row after row.
    pub fn push_attr_encoded_key(&mut self, key_eq: &str, value: &str) {
        if !self.attrs.is_empty() {
            self.attrs.push(';');
        }
        self.attrs.push_str(key_eq);
        encode_attr_part(value, &mut self.attrs);
    }

    /// Removes every attribute named `key`; returns the first one's value.
    pub fn remove_attr(&mut self, key: &str) -> Option<String> {
        let found = self.attr(key)?;
        let kept: Vec<(String, String)> = self
            .attrs()
            .filter(|(k, _)| k != key)
            .map(owned_attr)
            .collect();
        self.attrs.clear();
        for (k, v) in kept {
            self.push_attr(&k, &v);
        }
        Some(found)
    }

    /// Gives attribute `key` the value `value`: in place when present, else appended.
    pub fn set_attr(&mut self, key: &str, value: &str) {
        if self.attr(key).is_none() {
            return self.push_attr(key, value);
        }
        let items: Vec<(String, String)> = self.attrs().map(owned_attr).collect();
        self.attrs.clear();
        for (k, v) in items {
            self.push_attr(&k, if k == key { value } else { &v });
        }
    }

    /// Puts the slice's true times (`orig_time`, then `orig_end`) after every
    /// other attribute, so rows clipped in any order of operations (slice
    /// then span, span then slice, slice of a slice) read the same.
    pub fn place_orig_times_last(&mut self) {
        if !self.attrs.contains("orig_") {
            return;
        }
        let start = self.remove_attr(ATTR_ORIG_TIME);
        let end = self.remove_attr(ATTR_ORIG_END);
        for (key, value) in [(ATTR_ORIG_TIME, start), (ATTR_ORIG_END, end)] {
            if let Some(v) = value {
                self.push_attr(key, &v);
            }
        }
    }

    /// The decoded value of the first attribute named `key`.
    pub fn attr(&self, key: &str) -> Option<String> {
        self.attrs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }

    /// Sets `column` from its text (empty: no value), as a column kept in
    /// a [`COLUMN_ATTR`] attribute gives it back; false for a column that
    /// cannot be given so.
    pub fn set_column(&mut self, column: &str, text: &str, symbols: &Symbols) -> bool {
        match column {
            "cat" => self.cat = symbols.intern(text),
            "name" => self.name = symbols.intern(text),
            "comm" => self.comm = symbols.intern(text),
            "peer" => self.peer = symbols.intern(text),
            "id" => text.clone_into(&mut self.id),
            "value" => text.clone_into(&mut self.value),
            "flags" => text.clone_into(&mut self.flags),
            "attrs" => text.clone_into(&mut self.attrs),
            "size" => self.size = text.parse().ok(),
            "tag" => self.tag = text.parse().ok(),
            "time" => self.time = text.parse().ok().or(self.time),
            "end" => self.end = text.parse().ok(),
            "depth" => self.depth = text.parse().ok(),
            _ => return false,
        }
        true
    }

    /// Adds a flag letter unless present.
    pub fn add_flag(&mut self, flag: char) {
        if !self.flags.contains(flag) {
            self.flags.push(flag);
        }
    }

    /// Whether this is the `meta` row with key `key`.
    pub fn is_meta(&self, key: Sym) -> bool {
        self.kind == Kind::Meta && self.name == key
    }

    /// Checks the rules every row obeys whatever its source: required columns
    /// per kind, well-formed `flags` and `attrs`.
    pub fn validate(&self) -> Result<(), String> {
        let kind = self.kind;
        if kind.requires_time() && self.time.is_none() {
            return Err(format!("{} row needs a `time`", kind.with_article()));
        }
        if kind.requires_end() && self.end.is_none() {
            return Err(format!("{} row needs an `end`", kind.with_article()));
        }
        if kind.requires_loc() && self.loc.is_empty() {
            return Err(format!("{} row needs a `loc`", kind.with_article()));
        }
        if kind == Kind::Meta && self.name.is_empty() {
            return Err("a `meta` row needs a `name` (its key)".to_string());
        }
        if kind == Kind::Type && (self.id.is_empty() || self.cat.is_empty()) {
            return Err("a `type` row needs an `id` and a `cat` (its nature)".to_string());
        }
        validate_flags(&self.flags)?;
        validate_attrs(&self.attrs)
    }

    /// The rule of a message half: what matches it with its other half. A
    /// tagged half names its partner in `peer` (matched per channel); an
    /// untagged one has an `id` (matched per key). Readers check it where
    /// they read a half (its `peer`, `tag` and `id` read whatever the sink
    /// reads); other rows pass.
    pub fn check_half(&self) -> Result<(), &'static str> {
        if !matches!(self.kind, Kind::Send | Kind::Recv) {
            return Ok(());
        }
        match self.tag {
            Some(_) if self.peer.is_empty() => Err(match self.kind {
                Kind::Recv => "a tagged `recv` needs its actual sender in `peer`",
                _ => "a tagged `send` needs its receiver in `peer`",
            }),
            None if self.id.is_empty() => Err(
                "a message half needs a `tag` (matched per channel) or an `id` (matched per key)",
            ),
            _ => Ok(()),
        }
    }
}

/// Checks a `flags` value: upper-case letters only.
pub fn validate_flags(flags: &str) -> Result<(), String> {
    match flags.chars().find(|c| !c.is_ascii_uppercase()) {
        Some(c) => Err(format!(
            "bad flag {c:?} in `flags`: expected upper-case letters"
        )),
        None => Ok(()),
    }
}

/// One decoded attribute: its key and value (see [`Attrs`]).
pub type Attr<'a> = (Cow<'a, str>, Cow<'a, str>);

/// An attribute as owned texts, for a caller that keeps or changes it.
pub fn owned_attr((key, value): Attr<'_>) -> (String, String) {
    (key.into_owned(), value.into_owned())
}

/// Iterator over decoded `(key, value)` pairs of an encoded attribute string.
pub struct Attrs<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Attrs<'a> {
    /// A key and its value, borrowed from the record unless they hold an
    /// escape: reading attributes allocates nothing in the common case.
    type Item = Attr<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let (item, rest) = match self.rest.find(';') {
            Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
            None => (self.rest, ""),
        };
        self.rest = rest;
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        Some((decode_attr_part(k), decode_attr_part(v)))
    }
}

/// An attribute key encoded and followed by its `=`, for
/// [`Record::push_attr_encoded_key`].
pub fn encoded_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 1);
    encode_attr_part(key, &mut out);
    out.push('=');
    out
}

/// Appends `s` to `out` with the attribute escapes (`%` `;` `=` as `%25` `%3B` `%3D`).
pub fn encode_attr_part(s: &str, out: &mut String) {
    if !s.bytes().any(|b| matches!(b, b'%' | b';' | b'=')) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            ';' => out.push_str("%3B"),
            '=' => out.push_str("%3D"),
            c => out.push(c),
        }
    }
}

/// Decodes one key or value of an attribute string (assumed valid).
pub fn decode_attr_part(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3).unwrap_or("");
        out.push(match code {
            "25" => '%',
            "3B" => ';',
            "3D" => '=',
            _ => '%',
        });
        rest = rest.get(i + 3..).unwrap_or("");
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Checks an encoded attribute string: `key=value` items separated by `;`,
/// non-empty keys, and only the three `%` escapes. One pass over the bytes;
/// the message of a bad item comes from `bad_attrs_item`.
pub fn validate_attrs(attrs: &str) -> Result<(), String> {
    let bytes = attrs.as_bytes();
    if bytes.is_empty() {
        return Ok(());
    }
    let mut item_start = 0;
    // Where the current item's `=` is, if it has one yet.
    let mut equals: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b';' => {
                if equals.is_none_or(|e| e == item_start) {
                    return Err(bad_attrs_item(&attrs[item_start..i]));
                }
                item_start = i + 1;
                equals = None;
            }
            b'=' if equals.is_none() => equals = Some(i),
            b'=' => return Err(bad_attrs_item(item_of(attrs, item_start))),
            b'%' => match bytes.get(i + 1..i + 3) {
                Some(b"25" | b"3B" | b"3D") => i += 2,
                _ => return Err(bad_attrs_item(item_of(attrs, item_start))),
            },
            _ => {}
        }
        i += 1;
    }
    if equals.is_none_or(|e| e == item_start) {
        return Err(bad_attrs_item(&attrs[item_start..]));
    }
    Ok(())
}

/// The item of `attrs` that starts at `start`.
fn item_of(attrs: &str, start: usize) -> &str {
    let rest = &attrs[start..];
    rest.split(';').next().unwrap_or(rest)
}

/// What is wrong with attribute item `item`.
fn bad_attrs_item(item: &str) -> String {
    let Some((k, v)) = item.split_once('=') else {
        return format!(
            "bad `attrs` item {item:?}: expected key=value (escape `;` `=` `%` as %3B %3D %25)"
        );
    };
    if k.is_empty() {
        return format!("bad `attrs` item {item:?}: empty key");
    }
    if v.contains('=') {
        return format!("bad `attrs` item {item:?}: `=` in a value must be written %3D");
    }
    format!("bad escape in `attrs` item {item:?}: only %25 %3B %3D are allowed")
}

/// Renders an integer nanosecond time as seconds with 9 decimals (for messages).
pub fn format_seconds(ns: i64) -> String {
    let mut s = String::new();
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let _ = write!(s, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_set_removed_and_true_times_last() {
        let mut r = Record::new(Kind::State);
        r.push_attr("orig_end", "9");
        r.push_attr("k", "a;b");
        r.push_attr("orig_time", "1");
        r.set_attr("k", "c=d");
        r.set_attr("new", "x");
        r.place_orig_times_last();
        assert_eq!(r.attrs, "k=c%3Dd;new=x;orig_time=1;orig_end=9");
        assert_eq!(r.remove_attr("new").as_deref(), Some("x"));
        assert_eq!(r.remove_attr("new"), None);
        assert_eq!(r.attrs, "k=c%3Dd;orig_time=1;orig_end=9");
    }

    #[test]
    fn attrs_round_trip_through_escapes() {
        let mut r = Record::new(Kind::Event);
        r.push_attr("a=b", "x;y%z");
        r.push_attr("plain", "");
        assert_eq!(r.attrs, "a%3Db=x%3By%25z;plain=");
        let got: Vec<_> = r.attrs().map(owned_attr).collect();
        assert_eq!(
            got,
            vec![
                ("a=b".to_string(), "x;y%z".to_string()),
                ("plain".to_string(), String::new())
            ]
        );
        // Only what holds an escape is copied; the rest is the row's text.
        let borrowed: Vec<(bool, bool)> = r
            .attrs()
            .map(|(k, v)| (matches!(k, Cow::Borrowed(_)), matches!(v, Cow::Borrowed(_))))
            .collect();
        assert_eq!(borrowed, [(false, false), (true, true)]);
        assert!(validate_attrs(&r.attrs).is_ok());
    }

    #[test]
    fn attrs_validation_rejects_malformed() {
        assert!(validate_attrs("novalue").is_err());
        assert!(validate_attrs("=v").is_err());
        assert!(validate_attrs("k=a=b").is_err());
        assert!(validate_attrs("k=%41").is_err());
        assert!(validate_attrs("k=%3").is_err());
    }

    #[test]
    fn kind_sets() {
        let set: KindSet = [Kind::Enter, Kind::Destroy].into_iter().collect();
        let rest = set.complement();
        for kind in Kind::ALL {
            assert_eq!(set.contains(kind), !rest.contains(kind), "{kind}");
        }
        assert!(!rest.without(Kind::Meta).contains(Kind::Meta));
        assert!(KindSet::NONE.complement().contains(Kind::Destroy));
        assert!(KindSet::NONE.is_empty() && !set.is_empty());
    }

    #[test]
    fn completion_is_max_of_time_and_end_for_complete_kinds() {
        let mut r = Record::new(Kind::Dep);
        r.time = Some(10);
        r.end = Some(4);
        assert_eq!(r.completion(), Some(10));
        r.kind = Kind::Container;
        r.end = Some(40);
        assert_eq!(r.completion(), Some(10));
        assert_eq!(format_seconds(-1_500_000_000), "-1.500000000");
    }
}
