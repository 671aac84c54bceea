//! STF file set or single file → stream.
//!
//! The index gives the record definitions, the clock and the components; the
//! declaration file is read whole (one entry per declared name); each data
//! component is then a part read record by record and the parts are merged by
//! time (`ops::merge`). Memory: the declarations, the open frames, one
//! buffer per component.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::feed::{signed, Feed};
use super::generic::{escape_item, generic_keys, generic_willy, scalar_text, ITEM_SEP};
use super::layout::{catalogue, is_byte_type, is_string_field, present, Layout, Scalar, Values};
use super::{
    default_willy_name, single, Component, DEFINE_RECORD, FILE_HEADER, FIRST_RESERVED,
    FOREIGN_HINT, MAGIC, NONE, RECEIVER_UNKNOWN, SENDER_UNKNOWN, VERSION,
};
use crate::error::{Error, Location, Result};
use crate::exec::merge::Merger;
use crate::exec::reorder::RowQueue;
use crate::fasthash::FastMap;
use crate::io::Input;
use crate::model::check::{StreamCheck, Verdict};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::{SymCache, Symbols};
use crate::pipe::{Demand, ReadOptions, RecordSource, Supply};

/// Opens an STF index file (`<t>.stf`) or single file (`<t>.single.stf`).
/// A single file on a pipe (or a FIFO) is copied to a temporary file first
/// (its components are read in place), removed when the reader is dropped:
/// disk, not memory, holds it.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let name = input.name.clone();
    let (path, spool) = match input.path.clone() {
        Some(path) if path.is_file() => (path, None),
        _ if input.head().get(7) == Some(&(Component::Single as u8)) => {
            let spool = Spool::copy(input.into_reader()?)?;
            (spool.path.clone(), Some(spool))
        }
        _ => {
            return Err(Error::file(
                input.name.clone(),
                "an STF file set cannot be piped (its components are files beside the index): name the index file (TRACE.stf), or pipe the single-file form (-t stf-single)",
            ))
        }
    };
    open_path(&name, &path, opts, spool)
}

/// A temporary copy of a piped single file, removed from its folder as
/// soon as it is created, so nothing is left whatever ends the process;
/// its components are read through `/proc/self/fd` while it is open.
struct Spool {
    _file: std::fs::File,
    path: PathBuf,
}

impl Spool {
    fn copy((name, mut reader): (String, Box<dyn std::io::BufRead>)) -> Result<Spool> {
        use std::os::fd::AsRawFd;
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = format!("tracepipe-{}-{serial}.single.stf", std::process::id());
        let temp = std::env::temp_dir().join(file);
        let shown = temp.display().to_string();
        let mut out = std::fs::File::create(&temp).map_err(|e| Error::io(&*shown, e))?;
        std::fs::remove_file(&temp).map_err(|e| Error::io(&*shown, e))?;
        std::io::copy(&mut reader, &mut out).map_err(|e| Error::io(name, e))?;
        let path = PathBuf::from(format!("/proc/self/fd/{}", out.as_raw_fd()));
        Ok(Spool { _file: out, path })
    }
}

/// Opens the STF trace at `path`, named `name` in messages.
fn open_path(
    name: &str,
    path: &Path,
    opts: &ReadOptions,
    spool: Option<Spool>,
) -> Result<Box<dyn RecordSource>> {
    let set = FileSet::open(name, path)?;
    let symbols = &opts.symbols;
    let trace = Arc::new(Trace::read(&set)?);
    let tables = DeclaredRows::new(&set, trace.clone(), SymCache::new(symbols.clone()))?;
    let mut sources: Vec<Box<dyn RecordSource>> = vec![
        Box::new(Rows::new(trace.meta_rows(name, symbols), set.index_name())),
        Box::new(tables),
    ];
    for (id, suffix, kind, at) in &trace.components {
        if matches!(
            kind,
            Component::Declarations | Component::Anchors | Component::Index
        ) {
            continue;
        }
        let anchors = match trace.anchor_files.get(id) {
            Some(&(anc, declared_at)) => trace.anchors(&set, anc, declared_at)?,
            None => Vec::new(),
        };
        let feed = set.component(suffix, *at)?;
        let syms = SymCache::new(symbols.clone());
        sources.push(Box::new(Part::new(
            feed,
            *kind,
            trace.clone(),
            anchors,
            syms,
        )?));
    }
    let merged = Merger::new(sources, symbols, &opts.warnings)?;
    Ok(Box::new(Checked::new(Box::new(merged), symbols, spool)))
}

/// Where the components are: files beside the index, or stretches of one file.
struct FileSet {
    name: String,
    path: PathBuf,
    /// For a single file: each component's name, offset and length.
    directory: Option<Vec<(String, u64, u64)>>,
}

impl FileSet {
    fn open(name: &str, path: &Path) -> Result<FileSet> {
        let mut feed = Feed::whole(name, path)?;
        let head = feed
            .take(feed.remaining().min(9) as usize, "file header")?
            .to_vec();
        if head.len() < 9 || head[..5] != MAGIC {
            return Err(Error::offset(name, 0, FOREIGN_HINT));
        }
        let directory = match Component::from_code(head[7]) {
            Some(Component::Single) => Some(single::directory(name, path)?),
            Some(Component::Index) => None,
            _ => {
                return Err(Error::offset(
                    name,
                    7,
                    "a component file, not an STF index: name the `.stf` file",
                ))
            }
        };
        Ok(FileSet {
            name: name.to_string(),
            path: path.to_path_buf(),
            directory,
        })
    }

    fn index_name(&self) -> String {
        match self.directory {
            Some(_) => format!("{}[{}]", self.name, single::INDEX),
            None => self.name.clone(),
        }
    }

    /// The component called `suffix` (`dcl`, `msg`, `f.0`...; `stf` for the
    /// index), declared at byte `at` of the index.
    fn component(&self, suffix: &str, at: u64) -> Result<Feed> {
        match &self.directory {
            Some(dir) => {
                let (_, start, len) =
                    dir.iter().find(|(n, _, _)| n == suffix).ok_or_else(|| {
                        Error::offset(
                            &self.index_name(),
                            at,
                            format!("the index declares component `{suffix}`, which the container does not hold"),
                        )
                    })?;
                Feed::open(&self.name, &self.path, *start, *len)
            }
            None if suffix == single::INDEX => Feed::whole(&self.name, &self.path),
            None => {
                let mut name = self.path.as_os_str().to_owned();
                name.push(".");
                name.push(suffix);
                let path = PathBuf::from(name);
                let shown = path.display().to_string();
                if !path.exists() {
                    return Err(Error::offset(
                        &self.name,
                        at,
                        format!("component `{shown}` that the index lists is missing"),
                    ));
                }
                Feed::whole(&shown, &path)
            }
        }
    }
}

/// Checks a component's header: magic, version, flags and kind.
fn check_header(feed: &mut Feed, want: Component) -> Result<()> {
    let at = feed.offset();
    let head = feed.take(9, "file header")?;
    if head[..5] != MAGIC {
        return Err(feed.error_at(at, FOREIGN_HINT));
    }
    let version = u16::from_le_bytes([head[5], head[6]]);
    let (kind, flags) = (head[7], head[8]);
    if version != VERSION || flags != 0 || kind != want as u8 {
        return Err(feed.error_at(
            at,
            format!(
                "header says version {version}, kind {kind}, flags {flags}; expected version {VERSION}, kind {} ({want:?}), flags 0",
                want as u8
            ),
        ));
    }
    Ok(())
}

/// What the index and the declarations say.
#[derive(Default)]
struct Trace {
    layouts: Vec<Option<Arc<Layout>>>,
    /// Per record id: whether its layout is one of the catalogue's
    /// (`layout::catalogue`), so read with its class's meaning; any other
    /// goes the generic way, whatever its class says.
    known: Vec<bool>,
    /// Nanoseconds per tick, when not exactly one.
    ns_per_tick: Option<f64>,
    /// Each component: its id, name (suffix), kind, and the offset of its
    /// `file_declaration` in the index.
    components: Vec<(u32, String, Component, u64)>,
    /// Anchor files, by the id of the data file they index, with the offset
    /// of their `anchor_file_declaration`.
    anchor_files: FastMap<u32, (u32, u64)>,
    metas: Vec<(String, String)>,
    strings: FastMap<u32, String>,
    classes: FastMap<u32, u32>,
    functions: FastMap<u32, (u32, u32)>,
    willies: FastMap<u32, u32>,
    /// Communicators: name and members (willies, in rank order).
    comms: FastMap<u32, (String, Members)>,
    /// Collective operations by id.
    ops: FastMap<u32, String>,
    /// Scopes: name, class and the two SCLs of their definition.
    scopes: FastMap<u32, (u32, u32, u32, u32)>,
    counters: FastMap<u32, (u32, u8, u32, String)>,
}

/// The classes of the index records the tables take in; the index's other
/// records become rows ([`DeclaredRows`]).
const INDEX_TABLES: &[&str] = &[
    "clock_resolution",
    "file_declaration",
    "tracepipe_meta",
    "anchor_file_declaration",
    "duration",
];

/// The classes of the declaration records the tables take in.
const DECLARATION_TABLES: &[&str] = &[
    "stf_string",
    "class_definition",
    "function_definition",
    "willy_name",
    "communicator_definition",
    "scope_definition",
    "collective_operation_definition",
    "counter_definition",
];

impl Trace {
    fn read(set: &FileSet) -> Result<Trace> {
        let mut trace = Trace {
            layouts: vec![None; FIRST_RESERVED as usize],
            known: vec![false; FIRST_RESERVED as usize],
            ..Trace::default()
        };
        let mut index = set.component(single::INDEX, 0)?;
        check_header(&mut index, Component::Index)?;
        let mut values = Values::default();
        while let Some((at, id)) = trace.next_id(&mut index)? {
            let layout = trace.layout(&index, at, id)?.clone();
            index.decode(&layout, &mut values)?;
            if trace.known[id as usize] {
                let taken = trace.absorb_index(&index, at, &layout, &values)?;
                debug_assert_eq!(taken, INDEX_TABLES.contains(&layout.class.as_str()));
            }
        }
        let &(_, ref dcl, _, declared_at) = trace
            .components
            .iter()
            .find(|c| c.2 == Component::Declarations)
            .ok_or_else(|| {
                index.error_at(
                    index.offset(),
                    "the index ends without declaring a declaration file (a `file_declaration` of kind 1)",
                )
            })?;
        let mut feed = set.component(&dcl.clone(), declared_at)?;
        check_header(&mut feed, Component::Declarations)?;
        while let Some((at, id)) = trace.next_id(&mut feed)? {
            let layout = trace.layout(&feed, at, id)?.clone();
            feed.decode(&layout, &mut values)?;
            if trace.known[id as usize] {
                let taken = trace.absorb_declaration(&feed, at, &layout, &values)?;
                debug_assert_eq!(taken, DECLARATION_TABLES.contains(&layout.class.as_str()));
            }
        }
        Ok(trace)
    }

    /// The next record id, reading definitions on the way; `None` at the end.
    fn next_id(&mut self, feed: &mut Feed) -> Result<Option<(u64, u8)>> {
        loop {
            if feed.at_end() {
                return Ok(None);
            }
            let at = feed.offset();
            let id = feed.scalar(Scalar::U1, "record id")? as u8;
            match id {
                DEFINE_RECORD => self.define(feed, at)?,
                FILE_HEADER => {
                    return Err(feed.error_at(at, "a second file header inside the file"))
                }
                id if id >= FIRST_RESERVED => {
                    return Err(
                        feed.error_at(at, format!("record id {id:#04x} is reserved (0xEA-0xFD)"))
                    )
                }
                id => return Ok(Some((at, id))),
            }
        }
    }

    fn define(&mut self, feed: &mut Feed, at: u64) -> Result<()> {
        let id = feed.scalar(Scalar::U1, "defined id")? as u8;
        let len = feed.scalar(Scalar::U2, "specifier length")? as usize;
        let text = String::from_utf8_lossy(feed.take(len, "specifier")?).into_owned();
        if id >= FIRST_RESERVED {
            return Err(feed.error_at(at, format!("defines reserved id {id:#04x}")));
        }
        let layout = Layout::parse(&text)
            .map_err(|e| feed.error_at(at, format!("bad specifier {text:?}: {e}")))?;
        match &self.layouts[id as usize] {
            Some(old) if **old != layout => {
                Err(feed.error_at(at, format!("redefines record id {id} differently")))
            }
            _ => {
                self.known[id as usize] = catalogue().contains(&layout);
                self.layouts[id as usize] = Some(Arc::new(layout));
                Ok(())
            }
        }
    }

    fn layout(&self, feed: &Feed, at: u64, id: u8) -> Result<&Arc<Layout>> {
        self.layouts[id as usize].as_ref().ok_or_else(|| {
            feed.error_at(
                at,
                format!("record id {id} is not defined (no define_record before it)"),
            )
        })
    }

    /// Takes an index record in; false for records the index has no use
    /// for (they become rows).
    fn absorb_index(&mut self, feed: &Feed, at: u64, layout: &Layout, v: &Values) -> Result<bool> {
        let text = |i: usize| String::from_utf8_lossy(v.text(i)).into_owned();
        match layout.class.as_str() {
            "clock_resolution" => {
                let period =
                    f64::from_bits(v.slots[0]) / 2f64.powi(v.slots[1].min(63) as i32) * 1e9;
                if !(period.is_finite() && period > 0.0) {
                    return Err(feed.error_at(at, "the clock resolution is not a positive number"));
                }
                self.ns_per_tick = (period != 1.0).then_some(period);
            }
            "file_declaration" => {
                let kind = Component::from_code(v.slots[1] as u8).ok_or_else(|| {
                    feed.error_at(at, format!("unknown component kind {}", v.slots[1]))
                })?;
                let (id, suffix) = (v.slots[0] as u32, text(3));
                if self.components.iter().any(|c| c.0 == id || c.1 == suffix) {
                    return Err(feed.error_at(
                        at,
                        format!("component {id} (`{suffix}`) is declared a second time: its rows would be read twice"),
                    ));
                }
                self.components.push((id, suffix, kind, at));
            }
            "tracepipe_meta" => self.absorb_meta(feed, at, text(1), text(3))?,
            "anchor_file_declaration" => {
                let (anchors, data) = (v.slots[0] as u32, v.slots[1] as u32);
                if self.anchor_files.insert(data, (anchors, at)).is_some() {
                    return Err(feed.error_at(
                        at,
                        format!("data file {data} is given a second anchor file"),
                    ));
                }
            }
            // The span is the rows' own.
            "duration" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A `tracepipe_meta` record: the stream's rules for meta rows hold
    /// here, at the record's offset.
    fn absorb_meta(&mut self, feed: &Feed, at: u64, name: String, value: String) -> Result<()> {
        if name == "format" && self.metas.iter().any(|(n, _)| *n == name) {
            return Err(feed.error_at(at, "a second `format` meta"));
        }
        if name == "origin" && value.parse::<i64>().is_err() {
            return Err(feed.error_at(
                at,
                format!("meta `origin` must be integer ns since the Unix epoch, found `{value}`"),
            ));
        }
        self.metas.push((name, value));
        Ok(())
    }

    /// The anchors of anchor file `id`, declared at byte `declared_at` of
    /// the index: (time before, offset), offsets increasing.
    fn anchors(&self, set: &FileSet, id: u32, declared_at: u64) -> Result<Vec<(u64, u64)>> {
        let (_, suffix, _, at) = self.components.iter().find(|c| c.0 == id).ok_or_else(|| {
            Error::offset(
                &set.index_name(),
                declared_at,
                format!("anchor file {id} is not declared by a `file_declaration`"),
            )
        })?;
        let mut feed = set.component(suffix, *at)?;
        check_header(&mut feed, Component::Anchors)?;
        let mut values = Values::default();
        let mut anchors: Vec<(u64, u64)> = Vec::new();
        while let Some((at, rid)) = next_data_id(&mut feed)? {
            let layout = self.layout(&feed, at, rid)?;
            feed.decode(layout, &mut values)?;
            if !self.known[rid as usize] || layout.class != "anchor" {
                return Err(feed.error_at(at, format!("`{}` in an anchor file", layout.class)));
            }
            let (time, offset) = (values.slots[0], values.slots[1]);
            if anchors.last().is_some_and(|(_, o)| *o >= offset) {
                return Err(feed.error_at(at, "anchor offsets do not increase"));
            }
            anchors.push((time, offset));
        }
        Ok(anchors)
    }

    /// Takes a declaration into the tables; false for other records. An id
    /// declared twice is an error: which of the two was meant is unknown.
    fn absorb_declaration(
        &mut self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        v: &Values,
    ) -> Result<bool> {
        let s = &v.slots;
        let id = s.first().copied().unwrap_or(0) as u32;
        let text = |i: usize| String::from_utf8_lossy(v.text(i)).into_owned();
        let again = match layout.class.as_str() {
            "stf_string" => self.strings.insert(id, text(2)).is_some(),
            "class_definition" => self.classes.insert(id, s[1] as u32).is_some(),
            "function_definition" => {
                let function = (s[1] as u32, s[2] as u32);
                self.functions.insert(id, function).is_some()
            }
            "willy_name" => self.willies.insert(id, s[1] as u32).is_some(),
            "communicator_definition" => {
                let members = Members::new(v.array(4), v.array(5), v.array(6));
                self.comms.insert(id, (text(2), members)).is_some()
            }
            "scope_definition" => {
                let fields = (s[1] as u32, s[2] as u32, s[3] as u32, s[4] as u32);
                self.scopes.insert(id, fields).is_some()
            }
            "collective_operation_definition" => self.ops.insert(id, text(2)).is_some(),
            "counter_definition" => {
                let counter = (s[1] as u32, s[2] as u8, s[7] as u32, text(9));
                self.counters.insert(id, counter).is_some()
            }
            _ => return Ok(false),
        };
        if again {
            return Err(feed.error_at(
                at,
                format!("`{}` {id} is declared a second time", layout.class),
            ));
        }
        Ok(true)
    }

    /// The meta rows.
    fn meta_rows(&self, source: &str, symbols: &Symbols) -> Vec<Record> {
        let mut rows = Vec::new();
        let meta = |k: &str, v: &str| Record::meta(symbols.intern(k), v);
        let stored = |k: &str| self.metas.iter().any(|(n, _)| n == k);
        if !stored("source_format") {
            rows.push(meta("source_format", "stf"));
        }
        rows.push(meta("source", source));
        if !stored("time_unit") {
            let unit = match self.ns_per_tick {
                None => "ns".to_string(),
                Some(p) => format!("ticks@{}", 1e9 / p),
            };
            rows.push(meta("time_unit", &unit));
        }
        for (k, v) in self.metas.iter().filter(|(k, _)| k != "source") {
            rows.push(meta(k, v));
        }
        rows
    }

    /// Ticks to stream nanoseconds.
    fn ns(&self, feed: &Feed, at: u64, ticks: i128) -> Result<i64> {
        let ns = match self.ns_per_tick {
            None => ticks,
            Some(p) => (ticks as f64 * p).round() as i128,
        };
        i64::try_from(ns).map_err(|_| {
            feed.error_at(
                at,
                format!("time {ticks} ticks is beyond the stream's range"),
            )
        })
    }

    fn string(&self, feed: &Feed, at: u64, id: u32) -> Result<&str> {
        if id == NONE {
            return Ok("");
        }
        declared(&self.strings, feed, at, "stf_string", id).map(String::as_str)
    }

    fn class(&self, feed: &Feed, at: u64, id: u32) -> Result<&str> {
        if id == NONE {
            return Ok("");
        }
        let name = declared(&self.classes, feed, at, "class", id)?;
        self.string(feed, at, *name)
    }

    fn function(&self, feed: &Feed, at: u64, id: u32) -> Result<(&str, &str)> {
        let (name, class) = declared(&self.functions, feed, at, "function", id)?;
        Ok((self.string(feed, at, *name)?, self.class(feed, at, *class)?))
    }

    fn comm(&self, feed: &Feed, at: u64, id: u32) -> Result<(&str, &Members)> {
        if id == NONE {
            static NO_MEMBERS: Members = Members {
                runs: Vec::new(),
                len: 0,
            };
            return Ok(("", &NO_MEMBERS));
        }
        let (name, members) = declared(&self.comms, feed, at, "communicator", id)?;
        Ok((name, members))
    }

    fn op(&self, feed: &Feed, at: u64, id: u32) -> Result<&str> {
        declared(&self.ops, feed, at, "collective operation", id).map(String::as_str)
    }

    fn willy(&self, feed: &Feed, at: u64, raw: u32, out: &mut String) -> Result<()> {
        out.clear();
        out.push_str(&self.willy_name(feed, at, raw)?);
        Ok(())
    }

    /// The name of willy (location) `raw`: declared, or made of its number.
    fn willy_name(&self, feed: &Feed, at: u64, raw: u32) -> Result<Cow<'_, str>> {
        Ok(match self.willies.get(&raw) {
            Some(&name) => Cow::Borrowed(self.string(feed, at, name)?),
            None => Cow::Owned(default_willy_name(raw)),
        })
    }

    /// A record without a mapping of its own: an `stf` event named by its
    /// class, its fields in `attrs` (string ids as their text, willies by name).
    #[allow(clippy::too_many_arguments)]
    fn generic_row(
        &self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        v: &Values,
        time: i64,
        rec: &mut Record,
        syms: &mut SymCache,
    ) -> Result<()> {
        rec.clear();
        rec.kind = Kind::Event;
        rec.time = Some(time);
        rec.cat = crate::model::symbol::well_known::STF;
        rec.name = syms.intern(&layout.class);
        let willy = generic_willy(layout);
        if let Some(w) = willy {
            rec.loc = syms.intern(&self.willy_name(feed, at, v.slots[w] as u32)?);
        }
        let mut text = String::new();
        let keys: Vec<&str> = generic_keys(layout, willy.is_some()).collect();
        for key in keys {
            let i = layout.field(key).expect("a field of the layout");
            text.clear();
            self.field_text(feed, at, layout, i, v, &mut text)?;
            rec.push_attr(key, &text);
        }
        Ok(())
    }

    /// The bytes of array field `i` written as text would take: checked
    /// before it is written, as each 4-byte id may stand for a long string.
    fn array_text_len(
        &self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        i: usize,
        v: &Values,
    ) -> Result<u64> {
        let f = &layout.fields[i];
        let mut len = 0u64;
        for &bits in v.array(i) {
            len += 1 + if is_string_field(&layout.class, &f.name) {
                self.string(feed, at, bits as u32)?.len() as u64
            } else {
                self.willy_name(feed, at, bits as u32)?.len() as u64
            };
        }
        Ok(len)
    }

    fn field_text(
        &self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        i: usize,
        v: &Values,
        out: &mut String,
    ) -> Result<()> {
        let f = &layout.fields[i];
        if f.sized_by.is_some() && is_byte_type(f.ty) {
            match f.ty {
                Scalar::C1 => out.push_str(&String::from_utf8_lossy(v.text(i))),
                _ => v.text(i).iter().for_each(|b| {
                    let _ = write!(out, "{b:02x}");
                }),
            }
            return Ok(());
        }
        let strings = is_string_field(&layout.class, &f.name);
        if f.sized_by.is_some() && (strings || f.ty == Scalar::Willy) {
            let len = self.array_text_len(feed, at, layout, i, v)?;
            if len > MAX_ROW_TEXT as u64 {
                return Err(feed.error_at(
                    at,
                    format!(
                        "`{}` of `{}` names {} items that would be {len} bytes of text, more than a row holds ({MAX_ROW_TEXT})",
                        f.name,
                        layout.class,
                        v.array(i).len()
                    ),
                ));
            }
        }
        let items: &[u64] = if f.sized_by.is_some() {
            v.array(i)
        } else {
            std::slice::from_ref(&v.slots[i])
        };
        let mut name = String::new();
        for (n, &bits) in items.iter().enumerate() {
            if n > 0 {
                out.push(ITEM_SEP);
            }
            if strings {
                let s = self.string(feed, at, bits as u32)?;
                if f.sized_by.is_some() {
                    escape_item(s, out);
                } else {
                    out.push_str(s);
                }
            } else if f.ty == Scalar::Willy {
                self.willy(feed, at, bits as u32, &mut name)?;
                out.push_str(&name);
            } else {
                out.push_str(&scalar_text(f.ty, bits));
            }
        }
        Ok(())
    }
}

/// Declaration `id` of table `map` (a `what`), or an error at the record
/// that refers to it.
fn declared<'a, T>(
    map: &'a FastMap<u32, T>,
    feed: &Feed,
    at: u64,
    what: &str,
    id: u32,
) -> Result<&'a T> {
    map.get(&id)
        .ok_or_else(|| feed.error_at(at, format!("refers to {what} {id}, which is not declared")))
}

/// The most text one array of string ids or willies may expand to: each
/// 4-byte id may stand for a long string, which could otherwise turn a
/// small file into gigabytes.
const MAX_ROW_TEXT: usize = 1 << 20;

/// Rows held in memory (the metas).
struct Rows {
    rows: std::vec::IntoIter<Record>,
    name: String,
}

impl Rows {
    fn new(rows: Vec<Record>, name: String) -> Rows {
        Rows {
            rows: rows.into_iter(),
            name,
        }
    }
}

impl RecordSource for Rows {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        match self.rows.next() {
            Some(r) => {
                *rec = r;
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn mark(&self) -> u64 {
        0
    }
    fn locate(&self, _: u64) -> Location {
        Location::File(self.name.clone())
    }
    crate::whole_rows!();
}

/// The records of the index and the declaration file that no table takes
/// in, as `stf` event rows: read a second time, one at a time, once the
/// tables are whole, so none is held for the run.
struct DeclaredRows {
    trace: Arc<Trace>,
    /// The components left to read, with the classes their tables take.
    feeds: Vec<(Feed, &'static [&'static str])>,
    values: Values,
    syms: SymCache,
    /// Offset of the record the last row came from.
    at: u64,
}

impl DeclaredRows {
    fn new(set: &FileSet, trace: Arc<Trace>, syms: SymCache) -> Result<DeclaredRows> {
        let mut feeds = Vec::new();
        for (suffix, at, kind, tables) in [
            (single::INDEX, 0, Component::Index, INDEX_TABLES),
            ("", 0, Component::Declarations, DECLARATION_TABLES),
        ] {
            let found = trace.components.iter().find(|c| c.2 == kind);
            let (suffix, at) = match (kind, found) {
                (Component::Index, _) => (suffix, at),
                (_, Some(c)) => (c.1.as_str(), c.3),
                (_, None) => continue,
            };
            let mut feed = set.component(suffix, at)?;
            check_header(&mut feed, kind)?;
            feeds.push((feed, tables));
        }
        feeds.reverse();
        Ok(DeclaredRows {
            trace,
            feeds,
            values: Values::default(),
            syms,
            at: 0,
        })
    }
}

/// The next record id of a component whose definitions were read already
/// (they are stepped over); `None` at the end.
fn next_defined_id(feed: &mut Feed) -> Result<Option<(u64, u8)>> {
    loop {
        if feed.at_end() {
            return Ok(None);
        }
        let at = feed.offset();
        let id = feed.scalar(Scalar::U1, "record id")? as u8;
        if id != DEFINE_RECORD {
            return Ok(Some((at, id)));
        }
        feed.scalar(Scalar::U1, "defined id")?;
        let len = feed.scalar(Scalar::U2, "specifier length")? as usize;
        feed.take(len, "specifier")?;
    }
}

impl RecordSource for DeclaredRows {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        let trace = &self.trace;
        while let Some((feed, tables)) = self.feeds.last_mut() {
            let Some((at, id)) = next_defined_id(feed)? else {
                self.feeds.pop();
                continue;
            };
            let layout = trace.layout(feed, at, id)?;
            feed.decode(layout, &mut self.values)?;
            if trace.known[id as usize] && tables.contains(&layout.class.as_str()) {
                continue;
            }
            self.at = at;
            trace.generic_row(feed, at, layout, &self.values, 0, rec, &mut self.syms)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn mark(&self) -> u64 {
        self.at
    }

    fn locate(&self, mark: u64) -> Location {
        let file = match self.feeds.last() {
            Some((feed, _)) => feed.name().to_string(),
            None => "<declarations>".to_string(),
        };
        Location::Offset { file, offset: mark }
    }

    crate::whole_rows!();
}

/// The reader's last stage: every row passes the stream's rules as the TSV
/// reader applies them ([`StreamCheck`]), located at the record it came
/// from; a willy used before any `container` row declares it gets one
/// first (a file of the specification's records alone declares none).
struct Checked {
    inner: Box<dyn RecordSource>,
    check: StreamCheck,
    /// The type of the containers declared here.
    thread: Sym,
    /// Rows to hand out before reading on, last first: containers, then the
    /// row that needed them.
    ready: Vec<Record>,
    /// Whether the last row handed out was the inner source's own.
    passed: bool,
    /// A piped single file's temporary copy, removed when the reader is.
    _spool: Option<Spool>,
}

impl Checked {
    fn new(inner: Box<dyn RecordSource>, symbols: &Symbols, spool: Option<Spool>) -> Checked {
        Checked {
            inner,
            check: StreamCheck::new(symbols.clone()),
            thread: symbols.intern("thread"),
            ready: Vec::new(),
            passed: false,
            _spool: spool,
        }
    }

    /// Queues `rec` behind a `container` row for each location it names
    /// that none declares yet; false when it names none.
    fn declare_for(&mut self, rec: &mut Record) -> bool {
        if rec.kind.is_structural() {
            return false;
        }
        let peer = matches!(rec.kind, Kind::Send | Kind::Recv | Kind::Msg | Kind::Coll);
        let mut missing = [rec.loc, if peer { rec.peer } else { Sym::EMPTY }];
        if missing[0] == missing[1] {
            missing[1] = Sym::EMPTY;
        }
        let missing = missing.map(|l| (!l.is_empty() && !self.check.is_declared(l)).then_some(l));
        if missing.iter().all(Option::is_none) {
            return false;
        }
        self.ready.push(std::mem::take(rec));
        for loc in missing.into_iter().flatten().rev() {
            let mut c = Record::new(Kind::Container);
            (c.loc, c.cat, c.name) = (loc, self.thread, loc);
            self.ready.push(c);
        }
        true
    }
}

impl RecordSource for Checked {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some(row) = self.ready.pop() {
                *rec = row;
                self.passed = false;
            } else {
                if !self.inner.next_record(rec)? {
                    return Ok(false);
                }
                self.passed = true;
                if self.declare_for(rec) {
                    continue;
                }
            }
            let verdict = self.check.check_valid(rec).map_err(|msg| Error::Data {
                at: self.inner.locate(self.inner.mark()),
                msg,
            })?;
            if verdict == Verdict::Keep {
                return Ok(true);
            }
        }
    }

    fn mark(&self) -> u64 {
        self.inner.mark()
    }

    fn locate(&self, mark: u64) -> Location {
        self.inner.locate(mark)
    }

    fn order(&self) -> Option<(i64, u64)> {
        self.inner.order()
    }

    fn extra_columns(&self) -> &[String] {
        self.inner.extra_columns()
    }

    fn raw_line(&self) -> Option<&[u8]> {
        self.inner.raw_line().filter(|_| self.passed)
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        self.inner.agree(demand)
    }
}

/// One data component read as a source of rows.
struct Part {
    feed: Feed,
    trace: Arc<Trace>,
    syms: PartSyms,
    /// The running time, in ticks.
    clock: u64,
    /// Per willy, the functions entered and not left.
    stacks: FastMap<u32, Vec<u32>>,
    values: Values,
    /// Rows of the last record after the one returned (counter samples), last first.
    pending: Vec<Record>,
    /// Offset of the record the last row came from.
    at: u64,
    last_completion: i64,
    /// Scope instances open, by willy, scope and sequence number.
    scopes: FastMap<(u32, u32, u32), OpenScope>,
    /// Collectives read so far (their rows' `id`).
    instances: u64,
    /// For the collectives file: rows wait here to come out in time order,
    /// as the participants of one record end at different times.
    queue: Option<RowQueue>,
    scratch: Record,
    done: bool,
    /// Anchors not reached yet: each must fall on a record boundary, with
    /// the file's clock at its time.
    anchors: std::iter::Peekable<std::vec::IntoIter<(u64, u64)>>,
    /// The place in the stream of the last row (see `RecordSource::order`),
    /// and the place a `tracepipe_order` record gave the next one.
    place: Option<(i64, u64)>,
    given: Option<(i64, u64)>,
}

/// The symbols of a part's declarations (willies, strings, classes,
/// functions, communicators, operations), each interned on first use and
/// then found by its id.
struct PartSyms {
    cache: SymCache,
    willies: FastMap<u32, Sym>,
    strings: FastMap<u32, Sym>,
    classes: FastMap<u32, Sym>,
    functions: FastMap<u32, (Sym, Sym)>,
    comms: FastMap<u32, Sym>,
    ops: FastMap<u32, Sym>,
}

/// The symbol of declaration `id` in `memo`, made by `text` the first time.
fn memo_sym<'t>(
    memo: &mut FastMap<u32, Sym>,
    cache: &mut SymCache,
    id: u32,
    text: impl FnOnce() -> Result<Cow<'t, str>>,
) -> Result<Sym> {
    if let Some(&sym) = memo.get(&id) {
        return Ok(sym);
    }
    let sym = cache.intern(&text()?);
    memo.insert(id, sym);
    Ok(sym)
}

impl PartSyms {
    fn new(cache: SymCache) -> PartSyms {
        PartSyms {
            cache,
            willies: FastMap::default(),
            strings: FastMap::default(),
            classes: FastMap::default(),
            functions: FastMap::default(),
            comms: FastMap::default(),
            ops: FastMap::default(),
        }
    }

    fn willy(&mut self, trace: &Trace, feed: &Feed, at: u64, raw: u32) -> Result<Sym> {
        memo_sym(&mut self.willies, &mut self.cache, raw, || {
            trace.willy_name(feed, at, raw)
        })
    }

    fn string(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.strings, &mut self.cache, id, || {
            trace.string(feed, at, id).map(Cow::Borrowed)
        })
    }

    fn class(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.classes, &mut self.cache, id, || {
            trace.class(feed, at, id).map(Cow::Borrowed)
        })
    }

    fn comm(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.comms, &mut self.cache, id, || {
            trace.comm(feed, at, id).map(|c| Cow::Borrowed(c.0))
        })
    }

    fn op(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<Sym> {
        memo_sym(&mut self.ops, &mut self.cache, id, || {
            trace.op(feed, at, id).map(Cow::Borrowed)
        })
    }

    /// A function's name and class.
    fn function(&mut self, trace: &Trace, feed: &Feed, at: u64, id: u32) -> Result<(Sym, Sym)> {
        if let Some(&syms) = self.functions.get(&id) {
            return Ok(syms);
        }
        let (name, class) = trace.function(feed, at, id)?;
        let syms = (self.cache.intern(name), self.cache.intern(class));
        self.functions.insert(id, syms);
        Ok(syms)
    }
}

/// A scope instance entered and not left: its start, the enter's SCL (for
/// `enter_scope_1`) and the enter record's offset.
type OpenScope = (i64, Option<u32>, u64);

/// Classes of the records that hold a whole collective operation.
pub const COMBINED: &[&str] = &[
    "all_communication",
    "all_to_all_communication",
    "all_to_one_communication",
    "one_to_all_communication",
];

/// Rows the collectives file may hold back to put them in time order.
pub const COLLECTIVE_WINDOW: usize = 65_536;

/// A communicator's members as its `(first, last, stride)` triplets, kept
/// as written: a triplet spanning all 2^32 willies costs 24 bytes, not 16 GiB.
#[derive(Debug, Default)]
struct Members {
    /// Per triplet: its first willy, its stride, and the members before it.
    runs: Vec<(u64, u64, u64)>,
    len: u64,
}

impl Members {
    fn new(first: &[u64], last: &[u64], stride: &[u64]) -> Members {
        let mut members = Members::default();
        for ((&a, &b), &s) in first.iter().zip(last).zip(stride) {
            if a > b {
                continue;
            }
            let step = (s as u32 as i32).max(1) as u64;
            members.runs.push((a, step, members.len));
            members.len = members.len.saturating_add((b - a) / step + 1);
        }
        members
    }

    /// The number of members.
    fn len(&self) -> u64 {
        self.len
    }

    /// The willy of rank `rank` (below [`Members::len`]).
    fn get(&self, rank: u64) -> u32 {
        let run = self.runs.partition_point(|r| r.2 <= rank) - 1;
        let (first, step, before) = self.runs[run];
        (first + (rank - before) * step) as u32
    }
}

impl Part {
    fn new(
        mut feed: Feed,
        kind: Component,
        trace: Arc<Trace>,
        anchors: Vec<(u64, u64)>,
        cache: SymCache,
    ) -> Result<Part> {
        check_header(&mut feed, kind)?;
        Ok(Part {
            anchors: anchors.into_iter().peekable(),
            at: feed.offset(),
            feed,
            trace,
            syms: PartSyms::new(cache),
            clock: 0,
            stacks: FastMap::default(),
            values: Values::default(),
            pending: Vec::new(),
            last_completion: i64::MIN,
            scopes: FastMap::default(),
            instances: 0,
            queue: (kind == Component::Collectives).then(|| RowQueue::new(COLLECTIVE_WINDOW)),
            scratch: Record::default(),
            done: false,
            place: None,
            given: None,
        })
    }

    /// Checks the anchors up to the next record.
    fn check_anchors(&mut self) -> Result<()> {
        let at = self.feed.offset();
        while let Some(&(time, offset)) = self.anchors.peek() {
            // Anchors count from the start of their component.
            let offset = offset.saturating_add(self.feed.start());
            if offset > at && !self.feed.at_end() {
                return Ok(());
            }
            if offset != at {
                return Err(self.feed.error_at(
                    offset,
                    "an anchor points here, which is not the start of a record",
                ));
            }
            if time != self.clock {
                return Err(self.feed.error_at(
                    offset,
                    format!(
                        "the anchor here says time {time}, the records say {}",
                        self.clock
                    ),
                ));
            }
            self.anchors.next();
        }
        Ok(())
    }

    /// Moves the clock by a record's `time` field; false for the records
    /// that only move it (`add_time`, `sub_time`).
    fn advance(&mut self, layout: &Layout, class: &str) -> Result<bool> {
        let Some(t) = layout.time else {
            return Ok(true);
        };
        let delta = self.values.slots[t];
        let moved = if class == "sub_time" {
            self.clock.checked_sub(delta)
        } else {
            self.clock.checked_add(delta)
        };
        self.clock = moved.ok_or_else(|| {
            self.feed.error_at(
                self.at,
                format!("time moves by {delta} ticks past the range of 64 bits"),
            )
        })?;
        Ok(!matches!(class, "add_time" | "sub_time"))
    }

    /// Reads records until one makes a row (in `rec`); false at the end.
    fn read(&mut self, rec: &mut Record) -> Result<bool> {
        let trace = self.trace.clone();
        loop {
            self.check_anchors()?;
            let Some((at, id)) = next_data_id(&mut self.feed)? else {
                return match self.scopes.values().map(|v| v.2).min() {
                    Some(at) => Err(self
                        .feed
                        .error_at(at, "enter_scope never left: the file ends first")),
                    None => Ok(false),
                };
            };
            self.at = at;
            let layout = trace.layout(&self.feed, at, id)?;
            self.feed.decode(layout, &mut self.values)?;
            // A class means what it says only in a layout of the catalogue.
            let class = match trace.known[id as usize] {
                true => layout.class.as_str(),
                false => "",
            };
            if !self.advance(layout, class)? {
                continue;
            }
            if class == "tracepipe_order" {
                let s = &self.values.slots;
                self.given = Some((s[0] as i64, s[1]));
                continue;
            }
            let time = trace.ns(&self.feed, at, self.clock as i128)?;
            match class {
                "enter_scope" => {
                    self.enter_scope(time)?;
                    continue;
                }
                "leave_scope" => self.leave_scope(rec, time)?,
                "enter_function" => self.enter(rec, time)?,
                "leave_function" => self.leave(rec, time)?,
                "one_to_one_communication" => self.message(layout, rec, time)?,
                "counter_value" => self.counters(rec, time)?,
                "collop_raw_event" => self.raw_collective(rec, time)?,
                c if COMBINED.contains(&c) => self.collective(layout, rec)?,
                "tracepipe_row" => self.row(rec, time)?,
                _ => {
                    let (feed, values) = (&self.feed, &self.values);
                    trace.generic_row(feed, at, layout, values, time, rec, &mut self.syms.cache)?
                }
            }
            return Ok(true);
        }
    }

    /// `enter_scope`: the scope instance opens; its row comes when it closes.
    fn enter_scope(&mut self, time: i64) -> Result<()> {
        let s = &self.values.slots;
        let key = (s[1] as u32, s[2] as u32, s[3] as u32);
        let scl = s.get(4).map(|&v| v as u32);
        if self.scopes.insert(key, (time, scl, self.at)).is_some() {
            return Err(self.feed.error_at(
                self.at,
                format!(
                    "scope {} instance {} entered again before it was left",
                    key.1, key.2
                ),
            ));
        }
        Ok(())
    }

    /// `leave_scope`: a `state` from the instance's enter to here (scopes
    /// may overlap, which one call stack cannot hold).
    fn leave_scope(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, s) = (&self.trace, &self.feed, self.at, &self.values.slots);
        let syms = &mut self.syms;
        let key = (s[1] as u32, s[2] as u32, s[3] as u32);
        let Some((start, enter_scl, _)) = self.scopes.remove(&key) else {
            return Err(feed.error_at(
                at,
                format!(
                    "leave_scope of scope {} instance {}, which is not open",
                    key.1, key.2
                ),
            ));
        };
        let (name, class, scl1, scl2) = *declared(&trace.scopes, feed, at, "scope", key.1)?;
        rec.clear();
        rec.kind = Kind::State;
        rec.time = Some(start);
        rec.end = Some(time);
        rec.loc = syms.willy(trace, feed, at, key.0)?;
        rec.name = syms.string(trace, feed, at, name)?;
        rec.cat = syms.class(trace, feed, at, class)?;
        rec.push_attr("seqnr", itoa::Buffer::new().format(key.2));
        rec.push_attr("scl1", itoa::Buffer::new().format(scl1));
        rec.push_attr("scl2", itoa::Buffer::new().format(scl2));
        if let Some(scl) = enter_scl {
            rec.push_attr("enter_scl", itoa::Buffer::new().format(scl));
        }
        if let Some(&scl) = s.get(4) {
            rec.push_attr("leave_scl", itoa::Buffer::new().format(scl));
        }
        Ok(())
    }

    fn enter(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (w, function) = (self.values.slots[1] as u32, self.values.slots[2] as u32);
        let (trace, feed, at) = (&self.trace, &self.feed, self.at);
        let (name, cat) = self.syms.function(trace, feed, at, function)?;
        let stack = self.stacks.entry(w).or_default();
        rec.clear();
        rec.kind = Kind::Enter;
        rec.time = Some(time);
        rec.depth = Some(stack.len() as u32);
        stack.push(function);
        (rec.name, rec.cat) = (name, cat);
        rec.loc = self.syms.willy(trace, feed, at, w)?;
        if self.values.slots.len() > 3 {
            rec.push_attr("scl", itoa::Buffer::new().format(self.values.slots[3]));
        }
        Ok(())
    }

    fn leave(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let w = self.values.slots[1] as u32;
        let (trace, feed, at) = (&self.trace, &self.feed, self.at);
        rec.clear();
        rec.loc = self.syms.willy(trace, feed, at, w)?;
        let stack = self.stacks.entry(w).or_default();
        let Some(function) = stack.pop() else {
            let loc = trace.willy_name(feed, at, w)?;
            return Err(feed.error_at(
                at,
                format!("leave_function on `{loc}`, which has no function open"),
            ));
        };
        rec.kind = Kind::Leave;
        rec.time = Some(time);
        rec.depth = Some(stack.len() as u32);
        (rec.name, rec.cat) = self.syms.function(trace, feed, at, function)?;
        if self.values.slots.len() > 2 {
            rec.push_attr("scl", itoa::Buffer::new().format(self.values.slots[2]));
        }
        Ok(())
    }

    fn message(&mut self, layout: &Layout, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, s) = (&self.trace, &self.feed, self.at, &self.values.slots);
        let syms = &mut self.syms;
        let receive = s[2] as i64;
        let (sender, receiver) = (s[1] as u32, s[3] as u32);
        rec.clear();
        rec.time = Some(time);
        let (loc, peer) = match receive {
            RECEIVER_UNKNOWN => (rec.kind = Kind::Send, (sender, receiver)).1,
            SENDER_UNKNOWN => (rec.kind = Kind::Recv, (receiver, sender)).1,
            _ => {
                rec.kind = Kind::Msg;
                let end = (self.clock as i128) + receive as i128;
                rec.end = Some(trace.ns(feed, at, end)?);
                if receive < 0 {
                    rec.flags.push('R');
                }
                (sender, receiver)
            }
        };
        if rec.kind != Kind::Msg {
            // A half whose partner's time is unknown: unmatched.
            rec.flags.push('U');
        }
        rec.loc = syms.willy(trace, feed, at, loc)?;
        rec.peer = syms.willy(trace, feed, at, peer)?;
        rec.comm = syms.comm(trace, feed, at, s[4] as u32)?;
        rec.size = Some(s[5]);
        rec.tag = Some(s[6] as i64);
        let n = s.len();
        for (field, value) in layout.fields[7..n - 2].iter().zip(&s[7..n - 2]) {
            rec.push_attr(&field.name, itoa::Buffer::new().format(*value));
        }
        for i in [n - 2, n - 1] {
            if s[i] as u32 != NONE {
                let (name, _) = trace.function(feed, at, s[i] as u32)?;
                rec.push_attr(&layout.fields[i].name, name);
            }
        }
        Ok(())
    }

    fn counters(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, v) = (&self.trace, &self.feed, self.at, &self.values);
        let syms = &mut self.syms;
        let mut rows = Vec::new();
        for (&bits, &counter) in v.array(3).iter().zip(v.array(4)) {
            let (name, ty, class, unit) =
                declared(&trace.counters, feed, at, "counter", counter as u32)?;
            let mut row = Record::new(Kind::Counter);
            row.time = Some(time);
            row.loc = syms.willy(trace, feed, at, v.slots[1] as u32)?;
            row.name = syms.string(trace, feed, at, *name)?;
            row.cat = syms.class(trace, feed, at, *class)?;
            match ty {
                0 => row.value.push_str(itoa::Buffer::new().format(bits as i64)),
                1 => {
                    let _ = write!(row.value, "{}", f64::from_bits(bits));
                }
                _ => row.value.push_str(itoa::Buffer::new().format(bits)),
            }
            if !unit.is_empty() {
                row.push_attr("unit", unit);
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(feed.error_at(at, "counter_value with no values"));
        }
        self.hand_out(rows, rec);
        Ok(())
    }

    /// Returns the first of `rows` in `rec` and keeps the others pending.
    fn hand_out(&mut self, mut rows: Vec<Record>, rec: &mut Record) {
        rows.reverse();
        *rec = rows.pop().expect("one row at least");
        self.pending = rows;
    }

    /// `collop_raw_event`: one participant's part, a `coll` row.
    fn raw_collective(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (trace, feed, at, s) = (&self.trace, &self.feed, self.at, &self.values.slots);
        let syms = &mut self.syms;
        rec.clear();
        rec.kind = Kind::Coll;
        rec.time = Some(time);
        let end = self.clock as i128 + signed(Scalar::I8, s[9]) as i128;
        rec.end = Some(trace.ns(feed, at, end)?);
        rec.loc = syms.willy(trace, feed, at, s[1] as u32)?;
        rec.name = syms.op(trace, feed, at, s[3] as u32)?;
        rec.comm = syms.comm(trace, feed, at, s[4] as u32)?;
        if s[5] != 0 {
            rec.id.push_str(itoa::Buffer::new().format(s[5]));
        }
        if s[6] as u32 != NONE {
            rec.peer = syms.willy(trace, feed, at, s[6] as u32)?;
        }
        rec.size = Some(s[7]);
        rec.value.push_str(itoa::Buffer::new().format(s[8]));
        rec.push_attr("kind", itoa::Buffer::new().format(s[2]));
        rec.push_attr("scl", itoa::Buffer::new().format(s[10]));
        Ok(())
    }

    /// A collective in one record (all to all, one to all...): a `coll` row
    /// per member of its communicator, `slot` and `of` telling the writer
    /// how to put the record together again.
    fn collective(&mut self, layout: &Layout, rec: &mut Record) -> Result<()> {
        let (trace, feed, at, v) = (&self.trace, &self.feed, self.at, &self.values);
        let syms = &mut self.syms;
        let field = |name: &str| layout.field(name);
        let scalar = |name: &str| field(name).map(|i| v.slots[i]);
        let array = |name: &str| field(name).map(|i| v.array(i));
        let (comm, members) = trace.comm(
            feed,
            at,
            scalar("communicator").unwrap_or(NONE as u64) as u32,
        )?;
        let op = trace.op(feed, at, scalar("type").unwrap_or(0) as u32)?;
        let starts = array("start_time").unwrap_or(&[]);
        let n = starts.len();
        if members.len() < n as u64 {
            return Err(feed.error_at(
                at,
                format!(
                    "{} has {n} participants, communicator `{comm}` only {} members",
                    layout.class,
                    members.len()
                ),
            ));
        }
        let root = ["receiver", "sender"]
            .iter()
            .find_map(|r| scalar(r).map(|w| w as u32));
        let root_bytes = [("recvd", "recvd"), ("sent", "sent")]
            .iter()
            .find_map(|(f, k)| scalar(f).map(|b| (*k, b)));
        let (op_sym, comm_sym) = (syms.cache.intern(op), syms.cache.intern(comm));
        let root_sym = match root {
            Some(r) => Some(syms.willy(trace, feed, at, r)?),
            None => None,
        };
        let mut rows = Vec::with_capacity(n);
        for (i, &start) in starts.iter().enumerate() {
            let mut row = Record::new(Kind::Coll);
            let known = start != u64::MAX;
            let begin = self.clock as i128 + if known { start as i128 } else { 0 };
            row.time = Some(trace.ns(feed, at, begin)?);
            let delta = array("delta").map_or(0, |d| d[i]);
            row.end = Some(trace.ns(feed, at, begin + delta as i128)?);
            row.loc = syms.willy(trace, feed, at, members.get(i as u64))?;
            row.name = op_sym;
            row.comm = comm_sym;
            if let Some(r) = root_sym {
                row.peer = r;
            }
            row.size = array("send_size").map(|a| a[i]);
            if let Some(a) = array("receive_size") {
                row.value.push_str(itoa::Buffer::new().format(a[i]));
            }
            row.id.push_str(itoa::Buffer::new().format(self.instances));
            row.push_attr("slot", itoa::Buffer::new().format(i));
            row.push_attr("of", itoa::Buffer::new().format(n));
            if let Some((k, b)) = root_bytes {
                row.push_attr(k, itoa::Buffer::new().format(b));
            }
            if let Some(scl) = array("scl") {
                row.push_attr("scl", itoa::Buffer::new().format(scl[i]));
            }
            if !known {
                row.push_attr("start", "unknown");
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(feed.error_at(at, format!("{} with no participants", layout.class)));
        }
        self.instances += 1;
        self.hand_out(rows, rec);
        Ok(())
    }

    fn row(&mut self, rec: &mut Record, time: i64) -> Result<()> {
        let (v, feed, at) = (&self.values, &self.feed, self.at);
        let kind = *Kind::ALL
            .get(v.slots[1] as usize)
            .ok_or_else(|| feed.error_at(at, format!("unknown row kind {}", v.slots[1])))?;
        let has = |bit: u64| v.slots[2] & bit != 0;
        rec.clear();
        rec.kind = kind;
        rec.time = has(present::TIME).then_some(time);
        let syms = &mut self.syms;
        if has(present::LOC) {
            rec.loc = syms.willy(&self.trace, feed, at, v.slots[3] as u32)?;
        }
        rec.end = has(present::END).then_some(v.slots[4] as i64);
        rec.depth = has(present::DEPTH).then_some(v.slots[5] as u32);
        rec.tag = has(present::TAG).then_some(v.slots[6] as i64);
        rec.size = has(present::SIZE).then_some(v.slots[7]);
        let names = [&mut rec.cat, &mut rec.name, &mut rec.peer, &mut rec.comm];
        for (n, sym) in names.into_iter().enumerate() {
            *sym = syms.string(&self.trace, feed, at, v.slots[8 + n] as u32)?;
        }
        let texts = [&mut rec.id, &mut rec.value, &mut rec.flags, &mut rec.attrs];
        for (n, text) in texts.into_iter().enumerate() {
            text.push_str(&String::from_utf8_lossy(v.text(13 + 2 * n)));
        }
        rec.validate()
            .and_then(|()| rec.check_half().map_err(str::to_string))
            .map_err(|e| feed.error_at(at, e))
    }
}

impl Part {
    /// Where `rec` stood in the stream written: as a `tracepipe_order`
    /// record says, else right after the row before it in this file.
    fn place_row(&mut self, rec: &Record) {
        let key = match (self.given.map(|g| g.0), rec.completion()) {
            (Some(k), _) => k,
            (None, Some(c)) if !rec.kind.is_structural() => c,
            _ => self.place.map_or(i64::MIN, |p| p.0),
        };
        let rank = match (self.given.take(), self.place) {
            (Some((_, r)), _) => r,
            (None, Some((k, r))) if k == key => r + 1,
            _ => 0,
        };
        self.place = Some((key, rank));
    }
}

/// The next record id of a data component (definitions are not allowed here).
fn next_data_id(feed: &mut Feed) -> Result<Option<(u64, u8)>> {
    if feed.at_end() {
        return Ok(None);
    }
    let at = feed.offset();
    let id = feed.scalar(Scalar::U1, "record id")? as u8;
    if id >= FIRST_RESERVED {
        return Err(feed.error_at(at, format!("record id {id:#04x} is reserved here")));
    }
    Ok(Some((at, id)))
}

impl Part {
    /// The next row in file order.
    fn next_in_file(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(row) = self.pending.pop() {
            *rec = row;
            return Ok(true);
        }
        self.read(rec)
    }

    /// The next row of the collectives file, through the queue.
    fn next_queued(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            let queue = self.queue.as_mut().expect("a queued part");
            if queue.is_full() || (self.done && !queue.is_empty()) {
                return Ok(queue.pop_into(rec));
            }
            if self.done {
                return Ok(false);
            }
            let mut row = std::mem::take(&mut self.scratch);
            if !self.next_in_file(&mut row)? {
                self.done = true;
                continue;
            }
            let queue = self.queue.as_mut().expect("a queued part");
            let slot = queue.slot();
            std::mem::swap(queue.get(slot), &mut row);
            self.scratch = row;
            if queue.commit(slot, i64::MIN).is_err() {
                return Err(self.feed.error_at(
                    self.at,
                    format!("a collective ends more than {COLLECTIVE_WINDOW} rows before rows already read"),
                ));
            }
        }
    }
}

impl RecordSource for Part {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        let more = match self.queue {
            Some(_) => self.next_queued(rec)?,
            None => self.next_in_file(rec)?,
        };
        if !more {
            return Ok(false);
        }
        self.place_row(rec);
        if !rec.kind.is_structural() {
            let completion = rec.completion().unwrap_or(i64::MIN);
            if completion < self.last_completion {
                return Err(self.feed.error_at(
                    self.at,
                    "records out of completion order: tracepipe reads data files whose rows are in time order (docs/stf.md)",
                ));
            }
            self.last_completion = completion;
        }
        Ok(true)
    }

    fn mark(&self) -> u64 {
        self.at
    }

    fn order(&self) -> Option<(i64, u64)> {
        self.place.filter(|_| self.queue.is_none())
    }

    fn locate(&self, mark: u64) -> Location {
        Location::Offset {
            file: self.feed.name().to_string(),
            offset: mark,
        }
    }

    fn extra_columns(&self) -> &[String] {
        &[]
    }

    fn raw_line(&self) -> Option<&[u8]> {
        None
    }

    fn agree(&mut self, _: Demand) -> Supply {
        Supply::WHOLE_ROWS
    }
}

/// The specifier of every record in each component but the index and the
/// anchors, in file order: what a file holds, for tests and inspection.
pub fn record_specifiers(name: &str, path: &Path) -> Result<Vec<(String, Vec<String>)>> {
    let set = FileSet::open(name, path)?;
    let trace = Trace::read(&set)?;
    let mut out = Vec::new();
    let mut values = Values::default();
    for (_, suffix, kind, at) in &trace.components {
        if matches!(kind, Component::Anchors | Component::Index) {
            continue;
        }
        let mut feed = set.component(suffix, *at)?;
        check_header(&mut feed, *kind)?;
        let mut specs = Vec::new();
        while let Some((at, id)) = next_data_id(&mut feed)? {
            let layout = trace.layout(&feed, at, id)?;
            feed.decode(layout, &mut values)?;
            specs.push(layout.specifier());
        }
        out.push((suffix.clone(), specs));
    }
    Ok(out)
}
