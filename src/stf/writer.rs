//! Stream → STF file set (`-t stf`) or single file (`-t stf-single`), in the
//! encoding of `docs/stf.md`.
//!
//! Rows the specification has a record for (function enter/leave, messages
//! and their halves, counter samples, and the `stf` events the reader makes
//! of every other specification record) are written as those records; every
//! other row as a `tracepipe_row` record, which the definition layer
//! describes like any other, so nothing is lost. Components are written as
//! rows arrive; memory holds the declarations (one entry per distinct name)
//! and the open frames.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::layout::{self, class_of, encode, is_byte_type, Layout, Scalar, Values, SPEC_LAYOUTS};
use super::{
    header, raw_willy, Component, DECLARATIONS, DEFINE_RECORD, INDEX_ONLY, NONE, RECEIVER_UNKNOWN,
    SENDER_UNKNOWN,
};
use crate::error::{Error, Result};
use crate::fasthash::{make_key, FastMap};
use crate::io::Output;
use crate::ops::matcher::{MatchOptions, Matcher, Unmatched};
use crate::pipe::{RecordSink, WriteOptions};
use crate::record::{Kind, Record};

/// The layouts tracepipe adds: any stream row, and the stream's meta rows.
pub const TRACEPIPE_LAYOUTS: &[&str] = &[
    "tracepipe_row(U4 time, U1 kind, U1 present, willy_id willy, I8 end, U4 depth, I8 tag, U8 size, \
     U4 cat, U4 name, U4 peer, U4 comm, \
     U4 size_1_1, <C1 id>, U4 size_2_1, <C1 value>, U4 size_3_1, <C1 flags>, U4 size_4_1, <C1 attrs>)",
    "tracepipe_meta(U4 size_1_1, <C1 name>, U4 size_2_1, <C1 value>)",
    "tracepipe_order(I8 key, U4 rank)",
];

/// Bits of `tracepipe_row.present`: which optional columns the row has.
pub mod present {
    /// `time`
    pub const TIME: u64 = 1;
    /// `loc` (in `willy`)
    pub const LOC: u64 = 2;
    /// `end`
    pub const END: u64 = 4;
    /// `depth`
    pub const DEPTH: u64 = 8;
    /// `tag`
    pub const TAG: u64 = 16;
    /// `size`
    pub const SIZE: u64 = 32;
}

/// Processes per process file (`<t>.stf.f.<n>`).
pub const PROCS_PER_FILE: u32 = 64;

/// Records between two anchors of a data file.
const ANCHOR_EVERY: u64 = 65_536;

/// Every layout the writer defines, in record-id order: the specification's,
/// then tracepipe's. The id of a layout is its index.
pub fn defined_layouts() -> Vec<Layout> {
    SPEC_LAYOUTS
        .iter()
        .chain(TRACEPIPE_LAYOUTS)
        .map(|spec| {
            let mut l = Layout::parse(spec).expect("built-in specifier");
            l.class = class_of(&l.class).to_string();
            l
        })
        .collect()
}

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
    let writer = StfWriter::new(Target::Set(out), path)?;
    Ok(Box::new(matched(writer, opts)))
}

/// Opens the single-file writer over `out`.
pub fn open_single_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    let dir = std::env::temp_dir().join(format!(
        "tracepipe-stf-{}-{}",
        std::process::id(),
        TEMP_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    let stem = Path::new(out.name())
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".single.stf"))
        .unwrap_or("trace")
        .to_string();
    let index = dir.join(format!("{stem}.stf"));
    let writer = StfWriter::new(Target::Single(out, dir), index)?;
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
    Matcher::with_options(writer, match_options(), opts.warnings.clone())
}

static TEMP_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

enum Target {
    /// The index file's output; the other components go beside it.
    Set(Output),
    /// The container's output, and the folder the components are built in.
    Single(Output, PathBuf),
}

/// Which data component a row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Group {
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
}

/// The declarations made so far, by what they declare.
#[derive(Default)]
struct Declared {
    strings: FastMap<String, u32>,
    classes: FastMap<String, u32>,
    /// By name and class, as a composite key (`fasthash::make_key`).
    functions: FastMap<String, u32>,
    comms: FastMap<(String, Vec<u32>), u32>,
    ops: FastMap<String, u32>,
    /// By name, class, unit and value type, as a composite key.
    counters: FastMap<String, u32>,
    /// By name, class and the two SCLs, as a composite key.
    scopes: FastMap<String, u32>,
    willies: FastMap<String, (u32, u32)>,
    next_willy: u32,
}

/// The STF writer.
pub struct StfWriter {
    target: Option<Target>,
    index_path: PathBuf,
    layouts: Vec<Layout>,
    ids: FastMap<&'static str, u8>,
    /// The data components; the `.dcl` is the first.
    files: Vec<DataFile>,
    routes: FastMap<Group, usize>,
    declared: Declared,
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
    fn new(target: Target, index_path: PathBuf) -> Result<StfWriter> {
        let layouts = defined_layouts();
        // Every layout by the name the specification gives it.
        let ids = SPEC_LAYOUTS
            .iter()
            .chain(TRACEPIPE_LAYOUTS)
            .enumerate()
            .map(|(i, s)| (&s[..s.find('(').expect("a specifier")], i as u8))
            .collect();
        let dcl = DataFile::create(&index_path, "dcl", Component::Declarations)?;
        Ok(StfWriter {
            target: Some(target),
            index_path,
            layouts,
            ids,
            files: vec![dcl],
            routes: FastMap::default(),
            declared: Declared::default(),
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

    /// The id of the function `name` of class `cat`, if declared (its
    /// composite key left in `self.key`).
    fn function_id(&mut self, name: &str, cat: &str) -> Option<u32> {
        make_key(&mut self.key, &[name, cat]);
        self.declared.functions.get(&self.key).copied()
    }

    fn comm(&mut self, name: &str) -> Result<u32> {
        if name.is_empty() {
            return Ok(NONE);
        }
        self.comm_with(name, &[])
    }

    /// The communicator called `name` with `members` (one triplet each).
    fn comm_with(&mut self, name: &str, members: &[u32]) -> Result<u32> {
        let key = (name.to_string(), members.to_vec());
        if let Some(&id) = self.declared.comms.get(&key) {
            return Ok(id);
        }
        let id = self.declared.comms.len() as u32;
        self.declared.comms.insert(key, id);
        let ones: Vec<u64> = vec![1; members.len()];
        let members: Vec<u64> = members.iter().map(|&w| w as u64).collect();
        self.start_decl("communicator_definition");
        self.dvalues.slots[0] = id as u64;
        self.dvalues.set_text(2, name.as_bytes());
        self.dvalues.set_array(4, &members);
        self.dvalues.set_array(5, &members);
        self.dvalues.set_array(6, &ones);
        self.declare("communicator_definition")?;
        Ok(id)
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
                while self
                    .declared
                    .willies
                    .values()
                    .any(|(w, _)| *w == self.declared.next_willy)
                {
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
        if self.declared.willies.values().any(|(w, _)| *w == id) {
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
            Kind::Msg | Kind::Send | Kind::Recv => Group::Messages,
            Kind::Coll if rec.attrs.starts_with("slot=") => Group::Collectives,
            Kind::Container | Kind::Type => Group::Process(0),
            _ if generic.is_some_and(|l| is_statistics(&l.class)) => Group::Statistics,
            _ if rec.loc.is_empty() => Group::Process(0),
            _ => Group::Process(self.willy(&rec.loc)?.1 / PROCS_PER_FILE),
        };
        if let Some(&i) = self.routes.get(&group) {
            return Ok(i);
        }
        let (suffix, kind) = match group {
            Group::Messages => ("msg".to_string(), Component::Messages),
            Group::Collectives => ("cop".to_string(), Component::Collectives),
            Group::Statistics => ("sts".to_string(), Component::Statistics),
            Group::Process(n) => (format!("f.{n}"), Component::Process),
        };
        let file = DataFile::create(&self.index_path, &suffix, kind)?;
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
                    let fits = u64::MAX >> (64 - 8 * layout.fields[i].ty.width());
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
    fn create(index: &Path, suffix: &str, kind: Component) -> Result<DataFile> {
        let mut name = index.as_os_str().to_owned();
        name.push(".");
        name.push(suffix);
        let path = PathBuf::from(name);
        let file = File::create(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
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

    fn close(mut self) -> Result<PathBuf> {
        self.out
            .flush()
            .map_err(|e| Error::io(self.path.display().to_string(), e))?;
        Ok(self.path)
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
            if rec.name == "source" {
                // It names the file read; reading the STF names the STF.
                return Ok(());
            }
            self.metas.push((rec.name.clone(), rec.value.clone()));
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
        open.sort_by_key(|r| (r.completion(), r.loc.clone()));
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
            Target::Set(mut out) => {
                out.write_line(&index)?;
                out.flush()
            }
            Target::Single(out, dir) => {
                let result = super::single::assemble(out, &self.index_path, &index, &components);
                let _ = std::fs::remove_dir_all(&dir);
                result
            }
        }
    }
}

/// Classes the reader turns into rows of a kind of their own (or into no
/// row: time steps, places).
const ROW_CLASSES: &[&str] = &[
    "add_time",
    "sub_time",
    "enter_function",
    "leave_function",
    "one_to_one_communication",
    "counter_value",
    "enter_scope",
    "leave_scope",
    "collop_raw_event",
    "all_communication",
    "all_to_all_communication",
    "all_to_one_communication",
    "one_to_all_communication",
    "tracepipe_row",
    "tracepipe_order",
];

/// Whether the reader makes something else than a generic `stf` event of
/// records of `class`: such an event never stands for one.
pub fn is_mapped(class: &str) -> bool {
    [ROW_CLASSES, DECLARATIONS, INDEX_ONLY]
        .iter()
        .any(|list| list.contains(&class))
}

/// True when a row uses none of the columns its mapping has no field for.
fn only_core(rec: &Record) -> bool {
    rec.end.is_none()
        && rec.peer.is_empty()
        && rec.comm.is_empty()
        && rec.tag.is_none()
        && rec.size.is_none()
        && rec.id.is_empty()
        && rec.value.is_empty()
        && rec.flags.is_empty()
}

/// The attributes of `rec` when their keys are exactly `keys` in order.
fn attrs_exactly(rec: &Record, keys: &[&str]) -> Option<Vec<String>> {
    let attrs: Vec<(String, String)> = rec.attrs().collect();
    (attrs.len() == keys.len() && attrs.iter().zip(keys).all(|((k, _), want)| k == want))
        .then(|| attrs.into_iter().map(|(_, v)| v).collect())
}

/// A canonical unsigned 32-bit number.
fn parse_u32(text: &str) -> Option<u32> {
    text.parse::<u32>().ok().filter(|n| n.to_string() == text)
}

/// A counter value's type code and bits, when the text reads back the same:
/// 0 a signed 64-bit integer, 1 a binary64.
pub fn counter_bits(text: &str) -> Option<(u8, u64)> {
    if let Ok(n) = text.parse::<i64>() {
        return (n.to_string() == text).then_some((0, n as u64));
    }
    let v: f64 = text.parse().ok()?;
    (v.to_string() == text).then_some((1, v.to_bits()))
}

/// The optional message attributes, in the order of each layout's fields.
const MSG_ATTRS: [(&str, &[&str]); 3] = [
    ("one_to_one_communication", &[]),
    (
        "one_to_one_communication_1",
        &["sender_scl", "receiver_scl"],
    ),
    (
        "one_to_one_communication_4",
        &[
            "sender_scl",
            "receiver_scl",
            "sender_checksum",
            "receiver_checksum",
        ],
    ),
];

impl StfWriter {
    /// Writes `rec` as the specification's record for it, if one holds it
    /// exactly; false leaves it to [`StfWriter::write_row`].
    fn write_mapped(&mut self, rec: &Record, time: Option<u64>) -> Result<bool> {
        let Some(t) = time else { return Ok(false) };
        match rec.kind {
            Kind::Enter => self.write_enter(rec, t),
            Kind::Leave => self.write_leave(rec, t),
            Kind::Msg | Kind::Send | Kind::Recv => self.write_message(rec, t),
            Kind::Counter => self.write_counter(rec, t),
            Kind::Coll => self.write_coll(rec, t),
            Kind::State => self.write_scope(rec, t),
            Kind::Event if rec.cat == "stf" => self.write_generic(rec, t),
            _ => Ok(false),
        }
    }

    /// `scl` as the only attribute: `Some(Some(scl))`; no attribute:
    /// `Some(None)`; anything else: `None`.
    fn scl_only(rec: &Record) -> Option<Option<u32>> {
        if rec.attrs.is_empty() {
            return Some(None);
        }
        let v = attrs_exactly(rec, &["scl"])?;
        parse_u32(&v[0]).map(Some)
    }

    fn write_enter(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let scl = Self::scl_only(rec);
        if !only_core(rec) || rec.name.is_empty() || rec.loc.is_empty() || scl.is_none() {
            return Ok(false);
        }
        let (w, _) = self.willy(&rec.loc)?;
        let depth = self.stacks.get(&w).map_or(0, Vec::len);
        if rec.depth != Some(depth as u32) {
            return Ok(false);
        }
        let function = self.function(&rec.name, &rec.cat)?;
        let f = self.route(rec, None)?;
        let name = match scl.flatten() {
            Some(_) => "enter_function_1",
            None => "enter_function",
        };
        self.start(name);
        self.values.slots[1] = w as u64;
        self.values.slots[2] = function as u64;
        if let Some(scl) = scl.flatten() {
            self.values.slots[3] = scl as u64;
        }
        self.emit(f, self.ids[name], Some(t))?;
        self.stacks.entry(w).or_default().push(function);
        Ok(true)
    }

    fn write_leave(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let scl = Self::scl_only(rec);
        if !only_core(rec) || rec.loc.is_empty() || scl.is_none() {
            return Ok(false);
        }
        let (w, _) = self.willy(&rec.loc)?;
        let top = self.stacks.get(&w).and_then(|s| s.last().copied());
        let depth = self.stacks.get(&w).map_or(0, Vec::len);
        let fits = top.is_some()
            && top == self.function_id(&rec.name, &rec.cat)
            && rec.depth == Some(depth as u32 - 1);
        if !fits {
            return Ok(false);
        }
        let f = self.route(rec, None)?;
        let name = match scl.flatten() {
            Some(_) => "leave_function_1",
            None => "leave_function",
        };
        self.start(name);
        self.values.slots[1] = w as u64;
        if let Some(scl) = scl.flatten() {
            self.values.slots[2] = scl as u64;
        }
        self.emit(f, self.ids[name], Some(t))?;
        self.stacks.get_mut(&w).map(Vec::pop);
        Ok(true)
    }

    /// The message layout the attributes of `rec` fit, with the values of
    /// its optional numbers and the two function names.
    fn message_layout(rec: &Record) -> Option<(&'static str, Vec<u32>, [String; 2])> {
        let attrs: Vec<(String, String)> = rec.attrs().collect();
        let split = attrs
            .iter()
            .position(|(k, _)| k.ends_with("_function"))
            .unwrap_or(attrs.len());
        let (numbers, functions) = attrs.split_at(split);
        let mut names = [String::new(), String::new()];
        let mut next = 0;
        for (k, v) in functions {
            let i = match k.as_str() {
                "sender_function" => 0,
                "receiver_function" => 1,
                _ => return None,
            };
            if i < next || v.is_empty() {
                return None;
            }
            names[i] = v.clone();
            next = i + 1;
        }
        let (name, _) = MSG_ATTRS.iter().find(|(_, keys)| {
            keys.len() == numbers.len() && keys.iter().zip(numbers.iter()).all(|(a, (b, _))| a == b)
        })?;
        let values = numbers
            .iter()
            .map(|(_, v)| parse_u32(v))
            .collect::<Option<Vec<_>>>()?;
        Some((name, values, names))
    }

    fn write_message(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let fits = !rec.loc.is_empty()
            && !rec.peer.is_empty()
            && rec.tag.is_some_and(|v| (0..=u32::MAX as i64).contains(&v))
            && rec.size.is_some_and(|v| v <= u32::MAX as u64)
            && rec.cat.is_empty()
            && rec.name.is_empty()
            && rec.id.is_empty()
            && rec.value.is_empty()
            && rec.depth.is_none();
        let receive = match (rec.kind, rec.end) {
            (Kind::Msg, Some(end)) => end.checked_sub(t as i64),
            (Kind::Send, None) => Some(RECEIVER_UNKNOWN),
            (Kind::Recv, None) => Some(SENDER_UNKNOWN),
            _ => None,
        };
        let Some(receive) = receive.filter(|_| fits) else {
            return Ok(false);
        };
        // Flags as the reader gives them: `R` on a message received before
        // it was sent, `U` on a half (its partner unknown).
        let reversed = rec.kind == Kind::Msg && receive < 0;
        let marker =
            rec.kind == Kind::Msg && (receive == RECEIVER_UNKNOWN || receive == SENDER_UNKNOWN);
        let flags = match rec.kind {
            Kind::Msg if reversed => "R",
            Kind::Msg => "",
            _ => "U",
        };
        if marker || rec.flags != flags {
            return Ok(false);
        }
        let Some((name, numbers, functions)) = Self::message_layout(rec) else {
            return Ok(false);
        };
        let (sender, receiver) = match rec.kind {
            Kind::Recv => (&rec.peer, &rec.loc),
            _ => (&rec.loc, &rec.peer),
        };
        let (sender, _) = self.willy(sender)?;
        let (receiver, _) = self.willy(receiver)?;
        let comm = self.comm(&rec.comm)?;
        let mut ids = [NONE; 2];
        for (id, function) in ids.iter_mut().zip(&functions) {
            if !function.is_empty() {
                *id = self.function(function, "")?;
            }
        }
        let f = self.route(rec, None)?;
        self.start(name);
        let head = [
            0,
            sender as u64,
            receive as u64,
            receiver as u64,
            comm as u64,
            rec.size.unwrap_or(0),
            rec.tag.unwrap_or(0) as u64,
        ];
        self.values.slots[..7].copy_from_slice(&head);
        let n = self.values.slots.len();
        for (slot, v) in self.values.slots[7..n - 2].iter_mut().zip(&numbers) {
            *slot = *v as u64;
        }
        self.values.slots[n - 2] = ids[0] as u64;
        self.values.slots[n - 1] = ids[1] as u64;
        self.emit(f, self.ids[name], Some(t))?;
        Ok(true)
    }

    /// A `state` the reader made of a scope instance: its `enter_scope`
    /// and `leave_scope`, one after the other.
    fn write_scope(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let attrs: Vec<(String, String)> = rec.attrs().collect();
        let keys: Vec<&str> = attrs.iter().map(|(k, _)| k.as_str()).collect();
        let (enter_scl, leave_scl) = match keys[..] {
            ["seqnr", "scl1", "scl2"] => (false, false),
            ["seqnr", "scl1", "scl2", "enter_scl"] => (true, false),
            ["seqnr", "scl1", "scl2", "leave_scl"] => (false, true),
            ["seqnr", "scl1", "scl2", "enter_scl", "leave_scl"] => (true, true),
            _ => return Ok(false),
        };
        let numbers: Option<Vec<u32>> = attrs.iter().map(|(_, v)| parse_u32(v)).collect();
        let plain = rec.peer.is_empty()
            && rec.comm.is_empty()
            && rec.tag.is_none()
            && rec.size.is_none()
            && rec.id.is_empty()
            && rec.value.is_empty()
            && rec.flags.is_empty()
            && rec.depth.is_none()
            && !rec.loc.is_empty()
            && rec.end >= rec.time;
        let (Some(n), true, Some(end)) = (numbers, plain, rec.end) else {
            return Ok(false);
        };
        let end = ticks(end)?;
        let willy = self.willy(&rec.loc)?.0;
        let scope = self.scope(&rec.name, &rec.cat, n[1], n[2])?;
        let f = self.route(rec, None)?;
        let mut scl = n[3..].iter();
        for (name, with_scl, time) in [
            ("enter_scope", enter_scl, t),
            ("leave_scope", leave_scl, end),
        ] {
            let name = if with_scl {
                format!("{name}_1")
            } else {
                name.to_string()
            };
            self.start(&name);
            self.values.slots[1..4].copy_from_slice(&[willy as u64, scope as u64, n[0] as u64]);
            if with_scl {
                self.values.slots[4] = *scl.next().expect("counted") as u64;
            }
            self.emit(f, self.ids[name.as_str()], Some(time))?;
        }
        Ok(true)
    }

    /// The scope called `name` of class `cat` with the definition's SCLs.
    fn scope(&mut self, name: &str, cat: &str, scl1: u32, scl2: u32) -> Result<u32> {
        let scls = format!("{scl1} {scl2}");
        make_key(&mut self.key, &[name, cat, &scls]);
        let (id, new) = intern(&mut self.declared.scopes, &self.key);
        if new {
            let name = self.string(name)? as u64;
            let class = self.class(cat)? as u64;
            self.start_decl("scope_definition");
            let slots = [id as u64, name, class, scl1 as u64, scl2 as u64];
            self.dvalues.slots.copy_from_slice(&slots);
            self.declare("scope_definition")?;
        }
        Ok(id)
    }

    fn write_counter(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let unit = if rec.attrs.is_empty() {
            Some(String::new())
        } else {
            attrs_exactly(rec, &["unit"])
                .map(|mut v| v.remove(0))
                .filter(|u| !u.is_empty())
        };
        let plain = rec.end.is_none()
            && rec.peer.is_empty()
            && rec.comm.is_empty()
            && rec.tag.is_none()
            && rec.size.is_none()
            && rec.id.is_empty()
            && rec.flags.is_empty()
            && rec.depth.is_none()
            && !rec.loc.is_empty()
            && !rec.name.is_empty();
        let (Some(unit), Some((ty, bits)), true) = (unit, counter_bits(&rec.value), plain) else {
            return Ok(false);
        };
        let (w, _) = self.willy(&rec.loc)?;
        let ty_code = [b'0' + ty];
        let ty_text = std::str::from_utf8(&ty_code).expect("a digit");
        make_key(&mut self.key, &[&rec.name, &rec.cat, &unit, ty_text]);
        let (counter, new) = intern(&mut self.declared.counters, &self.key);
        if new {
            self.declare_counter(counter, &rec.name, &rec.cat, &unit, ty)?;
        }
        let f = self.route(rec, None)?;
        self.start("counter_value");
        self.values.slots[1] = w as u64;
        self.values.set_array(3, &[bits]);
        self.values.set_array(4, &[counter as u64]);
        self.emit(f, self.ids["counter_value"], Some(t))?;
        Ok(true)
    }

    fn declare_counter(
        &mut self,
        id: u32,
        name: &str,
        cat: &str,
        unit: &str,
        ty: u8,
    ) -> Result<()> {
        let name = self.string(name)? as u64;
        let class = self.class(cat)? as u64;
        self.start_decl("counter_definition");
        let slots = [id as u64, name, ty as u64, 0, 0, 0, NONE as u64, class];
        self.dvalues.slots[..8].copy_from_slice(&slots);
        self.dvalues.set_text(9, unit.as_bytes());
        self.declare("counter_definition")
    }
}

/// Separator of array items in a generic row's attribute.
pub const ITEM_SEP: char = ',';

/// Escapes one text item of an array (`%` and the separator).
pub fn escape_item(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            ITEM_SEP => out.push_str("%2C"),
            c => out.push(c),
        }
    }
}

/// Reverses [`escape_item`].
pub fn unescape_item(text: &str) -> String {
    text.replace("%2C", ",").replace("%25", "%")
}

impl StfWriter {
    /// An `stf` event whose name is a specification class and whose
    /// attributes are exactly the fields of one of its layouts.
    fn write_generic(&mut self, rec: &Record, t: u64) -> Result<bool> {
        if is_mapped(&rec.name) || !(only_core(rec) && rec.depth.is_none()) {
            return Ok(false);
        }
        let attrs: Vec<(String, String)> = rec.attrs().collect();
        let found = (0..SPEC_LAYOUTS.len()).find(|&i| {
            let l = &self.layouts[i];
            l.class == rec.name
                && generic_keys(l, !rec.loc.is_empty()).eq(attrs.iter().map(|(k, _)| k.as_str()))
        });
        let Some(id) = found else { return Ok(false) };
        let layout = self.layouts[id].clone();
        let f = self.route(rec, Some(&layout))?;
        self.values.reset(layout.fields.len());
        if let Some(w) = generic_willy(&layout).filter(|_| !rec.loc.is_empty()) {
            self.values.slots[w] = self.willy(&rec.loc)?.0 as u64;
        }
        let mut values = attrs.iter().map(|(_, v)| v);
        for (i, field) in layout.value_fields() {
            if Some(i) == layout.time || (Some(i) == generic_willy(&layout) && !rec.loc.is_empty())
            {
                continue;
            }
            let text = values.next().expect("matched keys");
            if !self.put_field(&layout, i, field, text)? {
                return Ok(false);
            }
        }
        self.emit(f, id as u8, Some(t))?;
        Ok(true)
    }

    /// Sets field `i` from its attribute text; false when the text does not
    /// read back the same.
    fn put_field(
        &mut self,
        layout: &Layout,
        i: usize,
        field: &layout::Field,
        text: &str,
    ) -> Result<bool> {
        if field.sized_by.is_some() && is_byte_type(field.ty) {
            let bytes = if field.ty == Scalar::C1 {
                text.as_bytes().to_vec()
            } else {
                match parse_hex(text) {
                    Some(b) => b,
                    None => return Ok(false),
                }
            };
            self.values.set_text(i, &bytes);
            return Ok(true);
        }
        let strings = layout::is_string_field(&layout.class, &field.name);
        let mut items = Vec::new();
        let parts: Vec<&str> = match (field.sized_by.is_some(), text.is_empty()) {
            (true, true) => Vec::new(),
            (true, false) => text.split(ITEM_SEP).collect(),
            (false, _) => vec![text],
        };
        for part in parts {
            let bits = if strings {
                let item = if field.sized_by.is_some() {
                    unescape_item(part)
                } else {
                    part.to_string()
                };
                Some(self.string(&item)? as u64)
            } else if field.ty == Scalar::Willy {
                Some(self.willy(part)?.0 as u64)
            } else {
                scalar_bits(field.ty, part)
            };
            match bits {
                Some(b) => items.push(b),
                None => return Ok(false),
            }
        }
        if field.sized_by.is_some() {
            self.values.set_array(i, &items);
        } else {
            self.values.slots[i] = items[0];
        }
        Ok(true)
    }
}

/// The field a generic row's `loc` stands for: a scalar `willy` field.
pub fn generic_willy(layout: &Layout) -> Option<usize> {
    layout
        .fields
        .iter()
        .position(|f| f.name == "willy" && f.ty == Scalar::Willy && f.sized_by.is_none())
}

/// The attribute keys of a generic row of `layout`, in order: the value
/// fields but `time` and (when the row has a location) `willy`.
pub fn generic_keys(layout: &Layout, has_loc: bool) -> impl Iterator<Item = &str> {
    let willy = generic_willy(layout).filter(|_| has_loc);
    layout
        .value_fields()
        .filter(move |(i, _)| Some(*i) != layout.time && Some(*i) != willy)
        .map(|(_, f)| f.name.as_str())
}

/// The bits of a number field written as text, if canonical.
pub fn scalar_bits(ty: Scalar, text: &str) -> Option<u64> {
    let bits = match ty {
        Scalar::I4 => text.parse::<i32>().ok()? as i64 as u64,
        Scalar::I8 => text.parse::<i64>().ok()? as u64,
        Scalar::F8 => text.parse::<f64>().ok()?.to_bits(),
        _ => {
            let v = text.parse::<u64>().ok()?;
            (v <= u64::MAX >> (64 - 8 * ty.width())).then_some(v)?
        }
    };
    (scalar_text(ty, bits) == text).then_some(bits)
}

/// A number field's text in a generic row.
pub fn scalar_text(ty: Scalar, bits: u64) -> String {
    match ty {
        Scalar::I4 | Scalar::I8 => super::feed::signed(ty, bits).to_string(),
        Scalar::F8 => f64::from_bits(bits).to_string(),
        _ => bits.to_string(),
    }
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            let b = u8::from_str_radix(text.get(i..i + 2)?, 16).ok()?;
            text[i..i + 2]
                .bytes()
                .all(|c| !c.is_ascii_uppercase())
                .then_some(b)
        })
        .collect()
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
            self.values.slots[3] = self.willy(&rec.loc)?.0 as u64;
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
        for (n, text) in [&rec.cat, &rec.name, &rec.peer, &rec.comm]
            .into_iter()
            .enumerate()
        {
            self.values.slots[8 + n] = self.string(text)? as u64;
        }
        for (n, text) in [&rec.id, &rec.value, &rec.flags, &rec.attrs]
            .into_iter()
            .enumerate()
        {
            self.values.set_text(13 + 2 * n, text.as_bytes());
        }
        self.emit(f, id, time)
    }

    fn write_anchors(&mut self, suffix: &str, anchors: &[(u64, u64)]) -> Result<PathBuf> {
        let mut file = DataFile::create(
            &self.index_path,
            &format!("{suffix}.anc"),
            Component::Anchors,
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
    fn index_bytes(&mut self, components: &[(String, Component, PathBuf)]) -> Result<Vec<u8>> {
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

/// The participants of one collective seen so far, by slot.
struct Instance {
    rows: Vec<Option<Record>>,
    got: usize,
}

/// How a participant row of a collective record says where it belongs.
struct Slot {
    index: usize,
    of: usize,
    /// `recvd` or `sent` with the root's bytes.
    root: Option<(&'static str, u64)>,
    scl: Option<u32>,
    unknown_start: bool,
}

/// What one record holds of a collective whose rows agree.
struct Shape {
    /// The layout, as the specification names it.
    layout: &'static str,
    /// `recvd` or `sent`, with the root's bytes.
    root: Option<(&'static str, u64)>,
    /// The record's time: the first known start.
    time: i64,
}

/// The record the participants `rows` (with their `slots`) make, if they
/// agree on one: same operation, communicator, root and columns, each
/// value fitting its field.
fn collective_shape(rows: &[Record], slots: &[Slot]) -> Option<Shape> {
    let head = &rows[0];
    let (root, scl) = (slots.first()?.root, slots[0].scl.is_some());
    let (has_size, has_value) = (head.size.is_some(), !head.value.is_empty());
    let agree = slots.len() == rows.len()
        && !head.name.is_empty()
        && (root.is_none() || !head.peer.is_empty())
        && rows.iter().zip(slots).all(|(r, s)| {
            (&r.name, &r.comm, &r.peer) == (&head.name, &head.comm, &head.peer)
                && (r.size.is_some(), !r.value.is_empty()) == (has_size, has_value)
                && r.size.is_none_or(|v| v <= u32::MAX as u64)
                && (r.value.is_empty() || parse_u32(&r.value).is_some())
                && r.end >= r.time
                && (s.root, s.scl.is_some()) == (root, scl)
                && r.cat.is_empty()
                && r.flags.is_empty()
                && r.tag.is_none()
                && r.depth.is_none()
        });
    let layout = match (root.map(|r| r.0), has_size, has_value, scl) {
        (Some("recvd"), true, false, false) => "all_to_one_communication",
        (Some("recvd"), true, false, true) => "all_to_one_communication_1",
        (Some("sent"), false, true, false) => "one_to_all_communication",
        (Some("sent"), false, true, true) => "one_to_all_communication_1",
        (None, true, true, false) => "all_to_all_communication",
        (None, true, true, true) => "all_to_all_communication_1",
        (None, false, false, false) => "all_communication",
        (None, false, false, true) => "all_communication_1",
        _ => return None,
    };
    // A participant whose start is unknown is read back at the record's time.
    let known = rows.iter().zip(slots).filter(|(_, s)| !s.unknown_start);
    let first = known.filter_map(|(r, _)| r.time).min();
    let time = first.or_else(|| rows.iter().filter_map(|r| r.time).min())?;
    let unknown_elsewhere = rows
        .iter()
        .zip(slots)
        .any(|(r, s)| s.unknown_start && r.time != Some(time));
    (agree && !unknown_elsewhere).then_some(Shape { layout, root, time })
}

/// The per-participant arrays of a collective record at time `t`.
fn collective_arrays(rows: &[Record], slots: &[Slot], t: u64) -> [(&'static str, Vec<u64>); 5] {
    let column = |pick: &dyn Fn(&Record, &Slot) -> u64| -> Vec<u64> {
        rows.iter().zip(slots).map(|(r, s)| pick(r, s)).collect()
    };
    let time = |r: &Record| r.time.unwrap_or(0);
    [
        (
            "start_time",
            column(&|r, s| {
                if s.unknown_start {
                    u64::MAX
                } else {
                    time(r) as u64 - t
                }
            }),
        ),
        (
            "delta",
            column(&|r, _| (r.end.unwrap_or(0) - time(r)) as u64),
        ),
        ("send_size", column(&|r, _| r.size.unwrap_or(0))),
        ("receive_size", column(&|r, _| r.value.parse().unwrap_or(0))),
        ("scl", column(&|_, s| s.scl.unwrap_or(0) as u64)),
    ]
}

/// Parses the `slot`, `of`, root bytes, `scl` and `start` attributes, in
/// the order the reader writes them.
fn parse_slot(rec: &Record) -> Option<Slot> {
    let attrs: Vec<(String, String)> = rec.attrs().collect();
    let mut it = attrs.iter().peekable();
    let mut next_if = |key: &str| it.next_if(|(k, _)| k == key).map(|(_, v)| v.clone());
    let index = next_if("slot")?.parse().ok()?;
    let of: usize = next_if("of")?.parse().ok()?;
    let root = match (next_if("recvd"), next_if("sent")) {
        (Some(v), None) => Some(("recvd", v.parse().ok()?)),
        (None, Some(v)) => Some(("sent", v.parse().ok()?)),
        (None, None) => None,
        _ => return None,
    };
    let scl = next_if("scl")
        .map(|v| parse_u32(&v))
        .map_or(Some(None), |v| v.map(Some))?;
    let unknown_start = next_if("start")
        .map(|v| v == "unknown")
        .map_or(Some(false), |ok| ok.then_some(true))?;
    (it.next().is_none() && index < of).then_some(Slot {
        index,
        of,
        root,
        scl,
        unknown_start,
    })
}

impl StfWriter {
    fn write_coll(&mut self, rec: &Record, t: u64) -> Result<bool> {
        if rec.attrs.starts_with("slot=") {
            return self.gather(rec);
        }
        self.write_raw_collective(rec, t)
    }

    /// A participant of a collective record: held until all have come.
    fn gather(&mut self, rec: &Record) -> Result<bool> {
        let Some(slot) = parse_slot(rec) else {
            return Ok(false);
        };
        let instance = self
            .instances
            .entry(rec.id.clone())
            .or_insert_with(|| Instance {
                rows: vec![None; slot.of],
                got: 0,
            });
        if instance.rows.len() != slot.of || instance.rows[slot.index].is_some() {
            return Ok(false);
        }
        instance.rows[slot.index] = Some(rec.clone());
        instance.got += 1;
        if instance.got < slot.of {
            return Ok(true);
        }
        let instance = self.instances.remove(&rec.id).expect("present");
        // Its rows come back in time order from the one record.
        self.place = None;
        let rows: Vec<Record> = instance
            .rows
            .into_iter()
            .map(|r| r.expect("complete"))
            .collect();
        if !self.write_collective(&rows)? {
            for row in &rows {
                let time = row.time.map(ticks).transpose()?;
                self.write_row(row, time)?;
            }
        }
        Ok(true)
    }

    /// The record of a whole collective, if its rows agree on one.
    fn write_collective(&mut self, rows: &[Record]) -> Result<bool> {
        let slots: Vec<Slot> = rows.iter().filter_map(parse_slot).collect();
        let Some(shape) = collective_shape(rows, &slots) else {
            return Ok(false);
        };
        let head = &rows[0];
        let Some(op) = self.op(&head.name)? else {
            return Ok(false);
        };
        let mut members = Vec::with_capacity(rows.len());
        for r in rows {
            members.push(self.willy(&r.loc)?.0);
        }
        let comm = self.comm_with(&head.comm, &members)?;
        let root = match shape.root {
            Some((field, bytes)) => Some((field, bytes, self.willy(&head.peer)?.0)),
            None => None,
        };
        let id = self.ids[shape.layout];
        let layout = self.layouts[id as usize].clone();
        let t = ticks(shape.time)?;
        self.values.reset(layout.fields.len());
        let slot = |field: &str| layout.field(field).expect("a field of the layout");
        self.values.slots[slot("communicator")] = comm as u64;
        self.values.slots[slot("type")] = op as u64;
        if let Some((field, bytes, willy)) = root {
            let root_field = if field == "recvd" {
                "receiver"
            } else {
                "sender"
            };
            self.values.slots[slot(root_field)] = willy as u64;
            self.values.slots[slot(field)] = bytes;
        }
        for (field, items) in collective_arrays(rows, &slots, t) {
            if let Some(i) = layout.field(field) {
                self.values.set_array(i, &items);
            }
        }
        let f = self.route(head, None)?;
        self.emit(f, id, Some(t))?;
        Ok(true)
    }

    /// `collop_raw_event` for a `coll` row as the reader makes of one.
    fn write_raw_collective(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let Some(attrs) = attrs_exactly(rec, &["kind", "scl"]) else {
            return Ok(false);
        };
        let numbers = (
            parse_u32(&attrs[0]),
            parse_u32(&attrs[1]),
            parse_u32(&rec.value),
        );
        let counter = if rec.id.is_empty() {
            Some(0)
        } else {
            parse_u32(&rec.id).filter(|&c| c != 0)
        };
        let plain = rec.cat.is_empty()
            && rec.flags.is_empty()
            && rec.tag.is_none()
            && rec.depth.is_none()
            && !rec.loc.is_empty();
        let (Some(kind), Some(scl), Some(received)) = numbers else {
            return Ok(false);
        };
        let size = rec.size.filter(|&s| s <= u32::MAX as u64);
        let end = rec.end.and_then(|e| e.checked_sub(t as i64));
        let (Some(counter), Some(size), Some(end), true) = (counter, size, end, plain) else {
            return Ok(false);
        };
        let Some(op) = self.op(&rec.name)? else {
            return Ok(false);
        };
        let willy = self.willy(&rec.loc)?.0;
        let root = if rec.peer.is_empty() {
            NONE
        } else {
            self.willy(&rec.peer)?.0
        };
        let comm = self.comm(&rec.comm)?;
        let f = self.route(rec, None)?;
        self.start("collop_raw_event");
        let slots = [
            0,
            willy as u64,
            kind as u64,
            op as u64,
            comm as u64,
            counter as u64,
            root as u64,
            size,
            received as u64,
            end as u64,
            scl as u64,
        ];
        self.values.slots.copy_from_slice(&slots);
        self.emit(f, self.ids["collop_raw_event"], Some(t))?;
        Ok(true)
    }

    /// The id of collective operation `name` (declared on first use); `None`
    /// once the 256 ids of its U1 field are taken.
    fn op(&mut self, name: &str) -> Result<Option<u32>> {
        if let Some(&id) = self.declared.ops.get(name) {
            return Ok(Some(id));
        }
        let id = self.declared.ops.len() as u32;
        if id > u8::MAX as u32 || name.is_empty() {
            return Ok(None);
        }
        self.declared.ops.insert(name.to_string(), id);
        self.start_decl("collective_operation_definition");
        self.dvalues.slots[0] = id as u64;
        self.dvalues.set_text(2, name.as_bytes());
        self.declare("collective_operation_definition")?;
        Ok(Some(id))
    }
}
