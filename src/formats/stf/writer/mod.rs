//! Stream → STF file set (`-t stf`) or single file (`-t stf-single`), in the
//! encoding of `docs/stf.md`.
//!
//! Rows the specification has a record for (function enter/leave, messages
//! and their halves, counter samples, and the `stf` events the reader makes
//! of every other specification record) are written as those records; every
//! other row as a `tracepipe_row` record, which the definition layer
//! describes like any other, so nothing is lost. Components are written as
//! rows arrive; memory holds the declarations (one entry per distinct name)
//! and the open frames. `records.rs` maps the rows the specification has
//! records for, `collectives.rs` the collectives.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

mod collectives;
mod records;

pub use records::{counter_bits, is_mapped};

use super::layout::{catalogue, encode, present, Layout, Values, SPEC_LAYOUTS, TRACEPIPE_LAYOUTS};
use super::single::Stored;
use super::{header, raw_willy, Component, DEFINE_RECORD, NONE};
use crate::error::{Error, Result};
use crate::fasthash::{make_key, FastMap, FastSet};
use crate::io::Output;
use crate::model::record::Sym;
use crate::model::record::{Kind, Record};
use crate::model::symbol::Symbols;
use crate::pipe::{RecordSink, WriteOptions};
use crate::stages::matcher::{MatchOptions, Matcher, Unmatched};
use collectives::Instance;

/// Processes per process file (`<t>.stf.f.<n>`).
pub const PROCS_PER_FILE: u32 = 64;

/// Process files at most: beyond 64 × 64 locations, file `n` takes the
/// groups `n`, `n + 64`, ... too, so the writer holds at most this many
/// files open (and a reader as many components) whatever the trace's width.
pub const MAX_PROCESS_FILES: u32 = 64;

/// Records between two anchors of a data file.
const ANCHOR_EVERY: u64 = 65_536;

/// Opens the file-set writer over `out`, which names the index file (or the
/// single-file writer, for a name ending in `.single.stf`).
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    if out.name().ends_with(".single.stf") {
        // The name says which form is wanted.
        return open_single_writer(out, opts);
    }
    let path = PathBuf::from(out.name());
    if out.name().starts_with('<') {
        return Err(Error::Usage(
            "STF is a set of files: name the index file with -o TRACE.stf (or use -t stf-single)"
                .to_string(),
        ));
    }
    let writer = StfWriter::new(Destination::Set(out), path, opts.symbols.clone())?;
    Ok(Box::new(matched(writer, opts)))
}

/// Opens the single-file writer over `out`. Its components are built in
/// temporary files removed from their folder as soon as they are created
/// (open, nameless), so nothing is left behind whatever ends the process.
pub fn open_single_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    let index = std::env::temp_dir().join(format!(
        "tracepipe-stf-{}-{}.stf",
        std::process::id(),
        TEMP_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let writer = StfWriter::new(Destination::Single(out), index, opts.symbols.clone())?;
    Ok(Box::new(matched(writer, opts)))
}

/// How the writer matches messages: STF stores them matched (the
/// specification matches them when the file is written). Halves with a tag
/// (MPI messages) are matched; halves that never match are reported and
/// written flagged `U`. Halves keyed by an id (Pajé links), which no STF
/// message record holds, stay as they are.
pub fn match_options() -> MatchOptions {
    MatchOptions {
        unmatched: Unmatched::Keep,
        tagged_only: true,
        ..MatchOptions::default()
    }
}

/// The writer behind the library's matcher ([`match_options`]).
fn matched(writer: StfWriter, opts: &WriteOptions) -> Matcher<StfWriter> {
    Matcher::with_options(
        writer,
        match_options(),
        opts.symbols.clone(),
        opts.warnings.clone(),
    )
}

static TEMP_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

enum Destination {
    /// The index file's output; the other components go beside it.
    Set(Output),
    /// The container's output (the components are nameless temporary files).
    Single(Output),
}

impl Destination {
    fn nameless(&self) -> bool {
        matches!(self, Destination::Single(_))
    }
}

/// Which data component a row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum DataComponent {
    Messages,
    Collectives,
    Statistics,
    /// Process file `n`: locations `64n` to `64n + 63` in order of appearance.
    Process(u32),
}

/// One data component being written.
struct DataFile {
    suffix: String,
    kind: Component,
    out: BufWriter<File>,
    path: PathBuf,
    /// The running time of the file, in ticks, once the record being
    /// written is read.
    clock: u64,
    /// The running time a reader has before the next record (anchors
    /// record it).
    shown: u64,
    written: u64,
    records: u64,
    anchors: Vec<(u64, u64)>,
    /// The place in the stream of the last row written here (see `order`).
    last: Option<(i64, u64)>,
    /// Removed from its folder when created (see [`Stored::Nameless`]).
    nameless: bool,
}

/// The declarations made so far, by what they declare.
#[derive(Default)]
struct Declarations {
    strings: FastMap<String, u32>,
    classes: FastMap<String, u32>,
    /// By name and class, as a composite key (`fasthash::make_key`).
    functions: FastMap<String, u32>,
    /// Communicators named in messages, by name.
    comms: FastMap<Sym, u32>,
    /// Communicators of collective records, by name and members.
    groups: FastMap<(Sym, Vec<u32>), u32>,
    ops: FastMap<Sym, u32>,
    /// The ids above of the identifiers of rows, by their symbols (a
    /// lookup by number in front of the one by text).
    sym_strings: FastMap<Sym, u32>,
    sym_functions: FastMap<(Sym, Sym), u32>,
    sym_willies: FastMap<Sym, (u32, u32)>,
    /// By name, class, unit and value type, as a composite key.
    counters: FastMap<String, u32>,
    /// By name, class and the two SCLs, as a composite key.
    scopes: FastMap<String, u32>,
    willies: FastMap<String, (u32, u32)>,
    /// The willy ids given so far.
    taken: FastSet<u32>,
    next_willy: u32,
}

/// The STF writer.
pub struct StfWriter {
    symbols: Symbols,
    target: Option<Destination>,
    /// Components are nameless temporary files (the single file's).
    nameless: bool,
    index_path: PathBuf,
    layouts: &'static [Layout],
    ids: FastMap<&'static str, u8>,
    /// The data components; the `.dcl` is the first.
    files: Vec<DataFile>,
    routes: FastMap<DataComponent, usize>,
    declared: Declarations,
    /// Per willy, the functions of the frames written as `enter_function`.
    stacks: FastMap<u32, Vec<u32>>,
    metas: Vec<(String, String)>,
    /// Collectives whose participants are still coming, by `id`.
    instances: FastMap<String, Instance>,
    span: Option<(u64, u64)>,
    /// The key of the current run of rows of one time, and the rank the
    /// next row of that run gets.
    run: (i64, u64),
    /// The place of the row being written: key, rank, and whether it is a
    /// declaration (which rides with the row before it).
    place: Option<(i64, u64, bool)>,
    values: Values,
    buf: Vec<u8>,
    /// A composite key being looked up.
    key: String,
    dvalues: Values,
    dbuf: Vec<u8>,
}

impl StfWriter {
    fn new(target: Destination, index_path: PathBuf, symbols: Symbols) -> Result<StfWriter> {
        let layouts = catalogue();
        // Every layout by the name the specification gives it.
        let ids = SPEC_LAYOUTS
            .iter()
            .chain(TRACEPIPE_LAYOUTS)
            .enumerate()
            .map(|(i, s)| (&s[..s.find('(').expect("a specifier")], i as u8))
            .collect();
        let dcl = DataFile::create(
            &index_path,
            "dcl",
            Component::Declarations,
            target.nameless(),
        )?;
        Ok(StfWriter {
            symbols,
            nameless: target.nameless(),
            target: Some(target),
            index_path,
            layouts,
            ids,
            files: vec![dcl],
            routes: FastMap::default(),
            declared: Declarations::default(),
            stacks: FastMap::default(),
            metas: Vec::new(),
            instances: FastMap::default(),
            span: None,
            run: (i64::MIN, 0),
            place: None,
            values: Values::default(),
            buf: Vec::new(),
            key: String::new(),
            dvalues: Values::default(),
            dbuf: Vec::new(),
        })
    }

    fn layout(&self, name: &str) -> (u8, &Layout) {
        let id = self.ids[name];
        (id, &self.layouts[id as usize])
    }

    /// Encodes `self.values` as record `name` into `self.buf`.
    fn encode_named(&mut self, name: &str) -> Result<()> {
        let id = self.ids[name];
        self.buf.clear();
        self.buf.push(id);
        encode(&self.layouts[id as usize], &self.values, &mut self.buf).map_err(Error::Record)
    }

    fn start(&mut self, name: &str) {
        let n = self.layout(name).1.fields.len();
        self.values.reset(n);
    }

    fn start_decl(&mut self, name: &str) {
        let n = self.layout(name).1.fields.len();
        self.dvalues.reset(n);
    }

    /// Writes a declaration record (in `dvalues`, so a record being built in
    /// `values` survives the declarations it needs) to the `.dcl`.
    fn declare(&mut self, name: &str) -> Result<()> {
        let id = self.ids[name];
        self.dbuf.clear();
        self.dbuf.push(id);
        encode(&self.layouts[id as usize], &self.dvalues, &mut self.dbuf).map_err(Error::Record)?;
        self.files[0].put(&self.dbuf)
    }

    fn string(&mut self, text: &str) -> Result<u32> {
        if text.is_empty() {
            return Ok(NONE);
        }
        let (id, new) = intern(&mut self.declared.strings, text);
        if !new {
            return Ok(id);
        }
        self.start_decl("stf_string");
        self.dvalues.slots[0] = id as u64;
        self.dvalues.set_text(2, text.as_bytes());
        self.declare("stf_string")?;
        Ok(id)
    }

    fn class(&mut self, cat: &str) -> Result<u32> {
        if cat.is_empty() {
            return Ok(NONE);
        }
        let (id, new) = intern(&mut self.declared.classes, cat);
        if !new {
            return Ok(id);
        }
        let name = self.string(cat)? as u64;
        self.start_decl("class_definition");
        self.dvalues.slots[..4].copy_from_slice(&[id as u64, name, name, NONE as u64]);
        self.declare("class_definition")?;
        Ok(id)
    }

    fn function(&mut self, name: &str, cat: &str) -> Result<u32> {
        make_key(&mut self.key, &[name, cat]);
        let (id, new) = intern(&mut self.declared.functions, &self.key);
        if !new {
            return Ok(id);
        }
        let name = self.string(name)? as u64;
        let class = self.class(cat)? as u64;
        self.start_decl("function_definition");
        self.dvalues.slots[..3].copy_from_slice(&[id as u64, name, class]);
        self.declare("function_definition")?;
        Ok(id)
    }

    /// [`StfWriter::function`] of a row's name and category.
    fn function_of(&mut self, name: Sym, cat: Sym) -> Result<u32> {
        if let Some(&id) = self.declared.sym_functions.get(&(name, cat)) {
            return Ok(id);
        }
        let symbols = self.symbols.clone();
        let id = self.function(symbols.text(name), symbols.text(cat))?;
        self.declared.sym_functions.insert((name, cat), id);
        Ok(id)
    }

    /// The id of the function `name` of class `cat`, if declared.
    fn function_id(&mut self, name: Sym, cat: Sym) -> Option<u32> {
        if let Some(&id) = self.declared.sym_functions.get(&(name, cat)) {
            return Some(id);
        }
        let symbols = self.symbols.clone();
        make_key(&mut self.key, &[symbols.text(name), symbols.text(cat)]);
        self.declared.functions.get(&self.key).copied()
    }

    /// [`StfWriter::string`] of a row's identifier.
    fn string_of(&mut self, sym: Sym) -> Result<u32> {
        if let Some(&id) = self.declared.sym_strings.get(&sym) {
            return Ok(id);
        }
        let symbols = self.symbols.clone();
        let id = self.string(symbols.text(sym))?;
        self.declared.sym_strings.insert(sym, id);
        Ok(id)
    }

    fn comm(&mut self, name: Sym) -> Result<u32> {
        if name.is_empty() {
            return Ok(NONE);
        }
        if let Some(&id) = self.declared.comms.get(&name) {
            return Ok(id);
        }
        let id = self.declare_comm(name, &[])?;
        self.declared.comms.insert(name, id);
        Ok(id)
    }

    /// The communicator called `name` with `members` (one triplet each).
    fn comm_with(&mut self, name: Sym, members: &[u32]) -> Result<u32> {
        let key = (name, members.to_vec());
        if let Some(&id) = self.declared.groups.get(&key) {
            return Ok(id);
        }
        let id = self.declare_comm(name, members)?;
        self.declared.groups.insert(key, id);
        Ok(id)
    }

    /// Declares a communicator (the next id of both kinds).
    fn declare_comm(&mut self, name: Sym, members: &[u32]) -> Result<u32> {
        let id = (self.declared.comms.len() + self.declared.groups.len()) as u32;
        let ones: Vec<u64> = vec![1; members.len()];
        let members: Vec<u64> = members.iter().map(|&w| w as u64).collect();
        self.start_decl("communicator_definition");
        self.dvalues.slots[0] = id as u64;
        let symbols = self.symbols.clone();
        self.dvalues.set_text(2, symbols.text(name).as_bytes());
        self.dvalues.set_array(4, &members);
        self.dvalues.set_array(5, &members);
        self.dvalues.set_array(6, &ones);
        self.declare("communicator_definition")?;
        Ok(id)
    }

    /// [`StfWriter::willy`] of a row's location.
    fn willy_of(&mut self, loc: Sym) -> Result<(u32, u32)> {
        if let Some(&w) = self.declared.sym_willies.get(&loc) {
            return Ok(w);
        }
        let symbols = self.symbols.clone();
        let w = self.willy(symbols.text(loc))?;
        self.declared.sym_willies.insert(loc, w);
        Ok(w)
    }

    /// The willy of location `loc` and its sequence number (which routes it).
    fn willy(&mut self, loc: &str) -> Result<(u32, u32)> {
        if let Some(&w) = self.declared.willies.get(loc) {
            return Ok(w);
        }
        let seq = self.declared.willies.len() as u32;
        let id = match raw_willy(loc) {
            Some(raw) => raw,
            None => {
                while self.declared.taken.contains(&self.declared.next_willy) {
                    self.declared.next_willy += 1;
                }
                let id = self.declared.next_willy;
                if id >= 1 << 31 {
                    return Err(Error::Record("more than 2^31 locations".to_string()));
                }
                self.declared.next_willy += 1;
                let name = self.string(loc)? as u64;
                self.start_decl("willy_name");
                self.dvalues.slots[..2].copy_from_slice(&[id as u64, name]);
                self.declare("willy_name")?;
                id
            }
        };
        if !self.declared.taken.insert(id) {
            return Err(Error::Record(format!(
                "location `{loc}` names willy {id}, which another location has"
            )));
        }
        self.declared.willies.insert(loc.to_string(), (id, seq));
        Ok((id, seq))
    }

    /// Where a row goes: messages, collectives, statistics, or the process
    /// file of its location (structure rows all in the first one, so a
    /// parent is declared before its children whatever the merge does).
    fn route(&mut self, rec: &Record, generic: Option<&Layout>) -> Result<usize> {
        let group = match rec.kind {
            Kind::Msg | Kind::Send | Kind::Recv => DataComponent::Messages,
            Kind::Coll if rec.attrs.starts_with("slot=") => DataComponent::Collectives,
            Kind::Container | Kind::Type => DataComponent::Process(0),
            _ if generic.is_some_and(|l| is_statistics(&l.class)) => DataComponent::Statistics,
            _ if rec.loc.is_empty() => DataComponent::Process(0),
            _ => DataComponent::Process(
                self.willy_of(rec.loc)?.1 / PROCS_PER_FILE % MAX_PROCESS_FILES,
            ),
        };
        if let Some(&i) = self.routes.get(&group) {
            return Ok(i);
        }
        let (suffix, kind) = match group {
            DataComponent::Messages => ("msg".to_string(), Component::Messages),
            DataComponent::Collectives => ("cop".to_string(), Component::Collectives),
            DataComponent::Statistics => ("sts".to_string(), Component::Statistics),
            DataComponent::Process(n) => (format!("f.{n}"), Component::Process),
        };
        let file = DataFile::create(&self.index_path, &suffix, kind, self.nameless)?;
        self.files.push(file);
        self.routes.insert(group, self.files.len() - 1);
        Ok(self.files.len() - 1)
    }

    /// Moves file `f`'s clock to `time` with `add_time`/`sub_time` records
    /// where a `time` field cannot; returns the delta left for the field.
    fn sync(&mut self, f: usize, time: u64, fits: u64) -> Result<u64> {
        let clock = self.files[f].clock;
        let record = if time < clock {
            Some(("sub_time", clock - time))
        } else if time - clock > fits {
            Some(("add_time_1", time - clock))
        } else {
            None
        };
        self.files[f].clock = time;
        if let Some((name, by)) = record {
            // Built apart, so the record waiting in `values` survives.
            let id = self.ids[name];
            self.dbuf.clear();
            self.dbuf.push(id);
            self.dbuf.extend_from_slice(&by.to_le_bytes());
            self.files[f].put(&self.dbuf)?;
        }
        Ok(if record.is_some() { 0 } else { time - clock })
    }

    /// Notes where `rec` stands in the stream: its merge key and its rank
    /// among the rows of that key.
    fn place_row(&mut self, rec: &Record) {
        let structural = rec.kind.is_structural();
        let key = match rec.completion() {
            Some(c) if !structural => c,
            _ => self.run.0,
        };
        let rank = if key == self.run.0 { self.run.1 } else { 0 };
        self.run = (key, rank + 1);
        self.place = Some((key, rank, structural));
    }

    /// Before a row's record in file `f`: a `tracepipe_order` record when
    /// the reader could not tell the row's place from the file alone (the
    /// row before it of the same time went to another file).
    fn put_place(&mut self, f: usize) -> Result<()> {
        let Some((key, rank, structural)) = self.place.take() else {
            return Ok(());
        };
        let last = self.files[f].last;
        let key_read = if structural {
            last.map_or(i64::MIN, |l| l.0)
        } else {
            key
        };
        let rank_read = match last {
            Some((k, r)) if k == key_read => r + 1,
            _ => 0,
        };
        if (key_read, rank_read) != (key, rank) {
            let id = self.ids["tracepipe_order"];
            self.dbuf.clear();
            self.dbuf.push(id);
            self.dbuf.extend_from_slice(&key.to_le_bytes());
            self.dbuf
                .extend_from_slice(&(rank.min(u32::MAX as u64) as u32).to_le_bytes());
            self.files[f].put(&self.dbuf)?;
        }
        self.files[f].last = Some((key, rank));
        Ok(())
    }

    /// Writes the record in `values` (layout `id`) at `time` into file `f`.
    fn emit(&mut self, f: usize, id: u8, time: Option<u64>) -> Result<()> {
        self.put_place(f)?;
        let layout = &self.layouts[id as usize];
        if let Some(t) = time {
            match layout.time {
                Some(i) => {
                    let fits = layout.fields[i].ty.max();
                    let delta = self.sync(f, t, fits)?;
                    self.values.slots[i] = delta;
                }
                None => {
                    self.sync(f, t, 0)?;
                }
            }
            let span = self.span.get_or_insert((t, t));
            span.0 = span.0.min(t);
            span.1 = span.1.max(t);
        }
        let layout = &self.layouts[id as usize];
        self.buf.clear();
        self.buf.push(id);
        encode(layout, &self.values, &mut self.buf).map_err(Error::Record)?;
        self.files[f].put(&self.buf)
    }
}

/// The id `text` has in `map`, or the next one, given to it (`true`: new,
/// to be declared).
fn intern(map: &mut FastMap<String, u32>, text: &str) -> (u32, bool) {
    if let Some(&id) = map.get(text) {
        return (id, false);
    }
    let id = map.len() as u32;
    map.insert(text.to_string(), id);
    (id, true)
}

fn is_statistics(class: &str) -> bool {
    class.ends_with("_statistics") || class.ends_with("_profile") || class == "event_summary"
}

impl DataFile {
    /// Component `suffix` of the index at `index`; `nameless`: a temporary
    /// file removed from its folder at once.
    fn create(index: &Path, suffix: &str, kind: Component, nameless: bool) -> Result<DataFile> {
        let mut name = index.as_os_str().to_owned();
        name.push(".");
        name.push(suffix);
        let path = PathBuf::from(name);
        let io = |e| Error::io(path.display().to_string(), e);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(io)?;
        if nameless {
            std::fs::remove_file(&path).map_err(io)?;
        }
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        let head = header(kind);
        out.write_all(&head)
            .map_err(|e| Error::io(path.display().to_string(), e))?;
        Ok(DataFile {
            suffix: suffix.to_string(),
            kind,
            out,
            path,
            clock: 0,
            shown: 0,
            written: head.len() as u64,
            records: 0,
            anchors: Vec::new(),
            last: None,
            nameless,
        })
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if self.records % ANCHOR_EVERY == 0 {
            self.anchors.push((self.shown, self.written));
        }
        self.shown = self.clock;
        self.records += 1;
        self.written += bytes.len() as u64;
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(self.path.display().to_string(), e))
    }

    fn close(self) -> Result<Stored> {
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::io(self.path.display().to_string(), e.into_error()))?;
        Ok(match self.nameless {
            true => Stored::Nameless(file),
            false => Stored::Named(self.path),
        })
    }
}

/// The time of a row in ticks (ns): STF times are unsigned.
fn ticks(t: i64) -> Result<u64> {
    u64::try_from(t).map_err(|_| {
        Error::Record(format!(
            "time {t} is negative; STF times are unsigned (shift the stream first)"
        ))
    })
}

impl RecordSink for StfWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some((name, _)) = rec.extra.first() {
            return Err(Error::Record(format!(
                "STF has no place for the extra column `{name}`"
            )));
        }
        if rec.kind == Kind::Meta {
            let key = self.symbols.text(rec.name);
            if key == "source" {
                // It names the file read; reading the STF names the STF.
                return Ok(());
            }
            self.metas.push((key.to_string(), rec.value.clone()));
            return Ok(());
        }
        let time = rec.time.map(ticks).transpose()?;
        self.place_row(rec);
        if self.write_mapped(rec, time)? {
            return Ok(());
        }
        self.write_row(rec, time)
    }

    fn finish(&mut self) -> Result<()> {
        let Some(target) = self.target.take() else {
            return Ok(());
        };
        // Collectives with participants missing (a slice cut them) keep
        // their rows as rows.
        let mut open: Vec<Record> = self
            .instances
            .drain()
            .flat_map(|(_, i)| i.rows)
            .flatten()
            .collect();
        let symbols = self.symbols.clone();
        open.sort_by_key(|r| (r.completion(), symbols.text(r.loc)));
        for row in &open {
            let time = row.time.map(ticks).transpose()?;
            self.write_row(row, time)?;
        }
        let mut components = Vec::new();
        for file in std::mem::take(&mut self.files) {
            let anchors = file.anchors.clone();
            let (suffix, kind) = (file.suffix.clone(), file.kind);
            let path = file.close()?;
            components.push((suffix.clone(), kind, path));
            if kind != Component::Declarations {
                let anc = self.write_anchors(&suffix, &anchors)?;
                components.push((format!("{suffix}.anc"), Component::Anchors, anc));
            }
        }
        let index = self.index_bytes(&components)?;
        match target {
            Destination::Set(mut out) => {
                out.write_line(&index)?;
                out.finish()
            }
            Destination::Single(out) => super::single::assemble(out, &index, components),
        }
    }
}

impl StfWriter {
    /// Any row, as a `tracepipe_row` record.
    fn write_row(&mut self, rec: &Record, time: Option<u64>) -> Result<()> {
        let f = self.route(rec, None)?;
        let id = self.ids["tracepipe_row"];
        self.values.reset(self.layouts[id as usize].fields.len());
        let mut present = 0;
        if time.is_some() {
            present |= present::TIME;
        }
        if !rec.loc.is_empty() {
            present |= present::LOC;
            self.values.slots[3] = self.willy_of(rec.loc)?.0 as u64;
        }
        let numbers = [
            (present::END, 4, rec.end.map(|v| v as u64)),
            (present::DEPTH, 5, rec.depth.map(u64::from)),
            (present::TAG, 6, rec.tag.map(|v| v as u64)),
            (present::SIZE, 7, rec.size),
        ];
        for (bit, slot, v) in numbers {
            if let Some(v) = v {
                present |= bit;
                self.values.slots[slot] = v;
            }
        }
        self.values.slots[1] = Kind::ALL.iter().position(|k| *k == rec.kind).unwrap() as u64;
        self.values.slots[2] = present;
        for (n, sym) in [rec.cat, rec.name, rec.peer, rec.comm]
            .into_iter()
            .enumerate()
        {
            self.values.slots[8 + n] = self.string_of(sym)? as u64;
        }
        for (n, text) in [&rec.id, &rec.value, &rec.flags, &rec.attrs]
            .into_iter()
            .enumerate()
        {
            self.values.set_text(13 + 2 * n, text.as_bytes());
        }
        self.emit(f, id, time)
    }

    fn write_anchors(&mut self, suffix: &str, anchors: &[(u64, u64)]) -> Result<Stored> {
        let mut file = DataFile::create(
            &self.index_path,
            &format!("{suffix}.anc"),
            Component::Anchors,
            self.nameless,
        )?;
        for &(time, offset) in anchors {
            self.start("anchor");
            self.values.slots[..2].copy_from_slice(&[time, offset]);
            self.encode_named("anchor")?;
            file.put(&self.buf)?;
        }
        file.close()
    }

    /// The index file: header, definitions, clock, span, components, metas.
    fn index_bytes(&mut self, components: &[(String, Component, Stored)]) -> Result<Vec<u8>> {
        let mut out = header(Component::Index).to_vec();
        for (id, layout) in self.layouts.iter().enumerate() {
            let spec = layout.specifier();
            out.push(DEFINE_RECORD);
            out.push(id as u8);
            out.extend_from_slice(&(spec.len() as u16).to_le_bytes());
            out.extend_from_slice(spec.as_bytes());
        }
        self.start("clock_resolution");
        self.values.slots[0] = 1e-9f64.to_bits();
        self.encode_named("clock_resolution")?;
        out.extend_from_slice(&self.buf);
        let (start, end) = self.span.unwrap_or((0, 0));
        self.start("duration");
        self.values.slots[..2].copy_from_slice(&[start, end]);
        self.encode_named("duration")?;
        out.extend_from_slice(&self.buf);
        for (id, (suffix, kind, _)) in components.iter().enumerate() {
            self.start("file_declaration");
            self.values.slots[..2].copy_from_slice(&[id as u64, *kind as u64]);
            self.values.set_text(3, suffix.as_bytes());
            self.encode_named("file_declaration")?;
            out.extend_from_slice(&self.buf);
            if *kind == Component::Anchors {
                self.start("anchor_file_declaration");
                let slots = [id as u64, id as u64 - 1, 0, NONE as u64];
                self.values.slots.copy_from_slice(&slots);
                self.encode_named("anchor_file_declaration")?;
                out.extend_from_slice(&self.buf);
            }
        }
        // What the reader would say of a stream that has no such rows.
        let mut metas = std::mem::take(&mut self.metas);
        for (key, default) in [("time_unit", "ns"), ("source_format", "stf")] {
            if !metas.iter().any(|(k, _)| k == key) {
                metas.insert(0, (key.to_string(), default.to_string()));
            }
        }
        for (name, value) in metas {
            self.start("tracepipe_meta");
            self.values.set_text(1, name.as_bytes());
            self.values.set_text(3, value.as_bytes());
            self.encode_named("tracepipe_meta")?;
            out.extend_from_slice(&self.buf);
        }
        Ok(out)
    }
}
