//! STF file set or single file → stream.
//!
//! The index gives the record definitions, the clock and the components; the
//! declaration file is read whole (one entry per declared name); each data
//! component is then a part read record by record and the parts are merged by
//! time (`exec::merge`). Memory: the declarations, the open frames, one
//! buffer per component.
//!
//! Here: opening the file set, the trace's declarations as one value
//! ([`Trace`]), and the last stage that applies the stream's rules;
//! `declarations` reads the index and the declarations, `fields` names a
//! record's fields by them, `part` reads a data component.

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
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::merge::Merger;
use crate::exec::reorder::RowQueue;
use crate::exec::thin::Snapshot;
use crate::fasthash::FastMap;
use crate::io::Input;
use crate::model::check::{check_format, StreamCheck, Verdict};
use crate::model::nesting::Crossings;
use crate::model::record::{Kind, Record, Sym, MAX_ROW_TEXT};
use crate::model::symbol::{SymCache, Symbols};
use crate::pipe::{Demand, ReadOptions, RecordSource, Supply};

mod declarations;
mod fields;
mod part;

use part::next_data_id;

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
    let mut trace = Trace::read(&set)?;
    trace.strict = opts.strict;
    let crossings = trace.crossings.clone();
    let trace = Arc::new(trace);
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
    let mut checked = Checked::new(Box::new(merged), symbols, spool);
    checked.unnested = Some((crossings, opts.warnings.clone()));
    Ok(Box::new(checked))
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
    /// `leave_function`s with no function open, counted across the parts.
    crossings: Crossings,
    /// `--strict`: such a `leave_function` is an error.
    strict: bool,
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
    /// Declaration rows, held whole.
    fn horizon(&self) -> Option<i64> {
        None
    }
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
    /// Frames that did not nest, reported once at the end.
    unnested: Option<(Crossings, Warnings)>,
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
            unnested: None,
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

impl crate::pipe::SourceStage for Checked {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some(row) = self.ready.pop() {
                *rec = row;
                self.passed = false;
            } else {
                if !self.inner.next_record(rec)? {
                    if let Some((crossings, warnings)) = &self.unnested {
                        crossings.report(warnings);
                    }
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

    fn horizon(&self) -> Option<i64> {
        self.inner.horizon()
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
    /// The place in the stream of the last row handed out (see
    /// `RecordSource::order`), of the last row read, and the place a
    /// `tracepipe_order` record gave the next one.
    place: Option<StreamPlace>,
    placed: Option<StreamPlace>,
    given: Option<StreamPlace>,
    /// Before a slice's T0, the state there, each row with its place and
    /// the offset of its record; and the record rows are read into
    /// meanwhile.
    thinning: Snapshot<(StreamPlace, u64)>,
    reading: Option<Box<Record>>,
    /// Offset of the record the row handed out last came from (rows wait
    /// before T0, while `at` moves on).
    mark: u64,
}

/// A row's place in the stream written: its key and its rank among the
/// rows of that key.
type StreamPlace = (i64, u64);

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
