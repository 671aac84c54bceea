//! Pallas trace → record stream.
//!
//! Each thread's grammar is expanded lazily by [`ThreadEvents`] (a stack of
//! cursors; loops repeat their body), each distinct event's timestamps are
//! decoded one block at a time, and [`ThreadSource`] maps occurrences to rows.
//! Threads are merged by time with [`crate::exec::merge::Merger`]. Memory: the
//! grammars, one decoded block per distinct event, the open frames.
//!
//! Here: the trace's layout (processes, threads, ranks) and the source over
//! its threads; `grammar` expands a thread's grammar, `thread` is a
//! thread's source, `records` maps each event record to a row.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::archive::{
    find_main, read_file, token, ArchiveData, ArchiveFile, Definitions, EventDef, LocationEntry,
    MainFile, Parameters, Scope, ThreadFile, TokenKind,
};
use super::codec::{BlockDecoder, DatFile};
use super::{collective_name, record_name, RecordId, PREFIX};
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::ahead::{read_ahead, Locator};
use crate::exec::merge::Merger;
use crate::fasthash::FastMap;
use crate::formats::stream::tsv::RowEncoder;
use crate::io::Input;
use crate::model::check::StreamCheck;
use crate::model::nesting::{self, Closing, Crossings};
use crate::model::record::{flags, Kind, Record, Sym};
use crate::model::symbol::{well_known, SymCache, Symbols};
use crate::pipe::{Demand, LocationSelection, ReadOptions, RecordSource, Supply};

mod balance;
mod frames;
mod grammar;
mod records;
mod stream;
mod thin;
mod thread;
mod times;

use balance::{BalancedCut, PairedBefore};
pub use frames::sum_frames;
use stream::Restore;

use records::{attribute_list, push_attributes};

/// Deepest grammar nesting accepted; deeper means a cycle or a corrupt file.
const MAX_DEPTH: usize = 4096;

/// Grammar steps allowed between two events; more means loops that repeat
/// nothing (a corrupt file), which would otherwise spin for a very long time.
const MAX_IDLE_STEPS: u64 = 1 << 26;

/// Location name of process (location group) `lg`.
pub fn process_loc(lg: u32) -> String {
    format!("P{lg}")
}

/// Location name of thread `t` of process `lg`.
pub fn thread_loc(lg: u32, t: u32) -> String {
    format!("P{lg}T{t}")
}

/// Appends a definition's text, or `WHAT REF` when the trace does not define it.
fn push_defined(out: &mut String, text: Option<&str>, what: &str, r: u32) {
    match text {
        Some(t) => out.push_str(t),
        None => {
            let _ = write!(out, "{what} {r}");
        }
    }
}

/// Opens a Pallas trace (its folder or its main file) as a record source.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let path = trace_path(&input)?;
    Ok(Box::new(PallasSource::open(&input.name, &path, opts)?))
}

/// Where the trace an input names is: a folder or a file, never a stream.
fn trace_path(input: &Input) -> Result<PathBuf> {
    input.path.clone().ok_or_else(|| {
        Error::file(
            input.name.clone(),
            "a Pallas trace is a folder: name the folder or its main .pallas file",
        )
    })
}

/// Where a thread's files are and how to name it.
struct ThreadPlace {
    process: u32,
    thread: u32,
    /// Its location's name, and its process's.
    loc: String,
    process_loc: String,
    dir: PathBuf,
    defs: Arc<Definitions>,
    /// The location entry that names the thread: a missing thread file is
    /// reported there, since the bad reference is what the user can act on.
    listed_at: Location,
}

/// Where the ranks of each communicator are: the locations an MPI record
/// names by rank. A communicator whose group lists locations (OTF2 group
/// type 4, as EZTrace's OTF2 path writes) has threads as ranks, and its
/// records happen on the thread; any other has processes (location groups),
/// rank r being member r of its group, or process r when the trace does not
/// define the communicator.
#[derive(Default)]
struct RankMap {
    /// Per communicator: its ranks' locations, and whether they are threads.
    comms: HashMap<u32, (Vec<Sym>, bool)>,
}

impl RankMap {
    fn new(
        defs: &Definitions,
        (places, restore): (&[ThreadPlace], Option<&Restore>),
        symbols: &Symbols,
    ) -> RankMap {
        let mut loc_of: HashMap<u32, &str> =
            places.iter().map(|p| (p.thread, &p.loc[..])).collect();
        // A trace written from a stream names its threadless peers.
        for (&id, loc) in restore.map(|r| &r.locs).into_iter().flatten() {
            loc_of.entry(id).or_insert(loc);
        }
        let mut comms = HashMap::new();
        for (&c, comm) in &defs.comms {
            let Some(group) = defs.groups.get(&comm.group) else {
                continue;
            };
            let threads = group.kind == 4;
            let names = group
                .members
                .iter()
                .map(|&m| match (threads, loc_of.get(&m)) {
                    (true, Some(loc)) => symbols.intern(loc),
                    _ => symbols.intern(&process_loc(m)),
                })
                .collect();
            comms.insert(c, (names, threads));
        }
        RankMap { comms }
    }

    /// Whether the ranks of `comm` are threads.
    fn by_thread(&self, comm: u32) -> bool {
        self.comms.get(&comm).is_some_and(|(_, threads)| *threads)
    }

    /// The location of `rank` in `comm`, when the trace defines it.
    fn location(&self, comm: u32, rank: u32) -> Option<Sym> {
        let (names, _) = self.comms.get(&comm)?;
        names.get(rank as usize).copied()
    }
}

/// A whole Pallas trace as one time-ordered stream.
pub struct PallasSource {
    head: VecDeque<Record>,
    threads: Merger,
    /// The row last returned came from the threads, not the head.
    from_threads: bool,
    name: String,
    /// The threads' half events, to find a balanced cut before a slice's
    /// T0 (none where the trace allows none), and the cut found, which
    /// the threads hear too: halves before it are left out.
    cut: Option<BalancedCut>,
    paired_before: PairedBefore,
    /// `LEAVE`s that do not nest, reported once at the end.
    crossings: Crossings,
    warnings: Warnings,
    /// The stream's rules, on rows tracepipe's marks give as on the others.
    check: StreamCheck,
}

impl PallasSource {
    /// Reads the main file and archives of the trace at `path` and opens every
    /// thread, interning its identifiers in the symbols of `opts`; `name` is
    /// how the input is named in messages and `meta`. With more than one
    /// thread, the trace's threads expand as jobs on the pool, merged on
    /// this one.
    pub fn open(name: &str, path: &Path, opts: &ReadOptions) -> Result<PallasSource> {
        let (symbols, warnings) = (&opts.symbols, &opts.warnings);
        let (head, mut threads, params) = open_threads(path, name, opts)?;
        let cut = BalancedCut::of(&mut threads, &params);
        let paired_before = PairedBefore::default();
        let crossings = Crossings::default();
        for thread in &mut threads {
            thread.paired_before = paired_before.clone();
            thread.crossings = crossings.clone();
            thread.strict = opts.strict;
        }
        let sources: Vec<Box<dyn RecordSource>> = match opts.pool.threads().parallel() {
            true => {
                let located = threads.into_iter().map(|t| {
                    let file = t.events.name.clone();
                    let locate: Locator = Arc::new(move |mark| event_location(&file, mark));
                    (t, locate, name.to_string())
                });
                let encoder = || Box::new(RowEncoder::standard(symbols.clone())) as _;
                let lanes = read_ahead(located.collect(), &opts.pool, &encoder)?;
                lanes.into_iter().map(|l| Box::new(l) as _).collect()
            }
            false => threads.into_iter().map(|t| Box::new(t) as _).collect(),
        };
        Ok(PallasSource {
            head,
            threads: Merger::new(sources, symbols, warnings)?,
            from_threads: false,
            name: name.to_string(),
            cut,
            paired_before,
            crossings,
            warnings: warnings.clone(),
            check: StreamCheck::new(symbols.clone()),
        })
    }
}

/// The trace at `path` (`name` in messages and `meta`): its head rows,
/// the threads the location selection of `opts` keeps, opened, and its
/// parameters.
fn open_threads(
    path: &Path,
    name: &str,
    opts: &ReadOptions,
) -> Result<(VecDeque<Record>, Vec<ThreadSource>, Parameters)> {
    let symbols = &opts.symbols;
    let main_path = find_main(path)?;
    let dir = main_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let main_name = main_path.display().to_string();
    let main = MainFile::parse(&main_name, &read_file(&main_path)?)?;
    let mut head = trace_head(name, &main.params, &main.data.metadata, symbols);
    let mut syms = SymCache::new(symbols.clone());
    let restore = Restore::from_metadata(&main_name, &main.data.metadata, &mut head, &mut syms)?
        .map(Arc::new);
    let mut layout = ProcessTree {
        dir,
        main_name,
        abi: main.params.abi,
        global: Arc::new(main.data.defs),
        head,
        places: Vec::new(),
        symbols: symbols.clone(),
        restoring: restore.is_some(),
    };
    for group in &main.data.location_groups {
        layout.add_group(group, &main.data.location_groups, &main.data.locations)?;
    }
    let ranks = RankMap::new(
        &layout.global,
        (&layout.places, restore.as_deref()),
        symbols,
    );
    let ranks = Arc::new(ranks);
    let read = selected(
        &layout.head,
        &layout.places,
        opts.locations.as_ref(),
        symbols,
    );
    let mut threads = Vec::with_capacity(layout.places.len());
    for (place, _) in layout.places.into_iter().zip(read).filter(|(_, r)| *r) {
        let scope = (layout.global.clone(), ranks.clone(), restore.clone());
        let syms = SymCache::new(symbols.clone());
        threads.push(ThreadSource::open(&main.params, place, scope, syms)?);
    }
    Ok((layout.head, threads, main.params))
}

/// Which threads' files are read: those `selection` keeps (all without
/// one), and those of a process it keeps, whose MPI rows are on the process.
fn selected(
    head: &VecDeque<Record>,
    places: &[ThreadPlace],
    selection: Option<&LocationSelection>,
    symbols: &Symbols,
) -> Vec<bool> {
    let Some(selection) = selection else {
        return vec![true; places.len()];
    };
    let declared: FastMap<Sym, (Sym, Sym)> = head
        .iter()
        .filter(|r| r.kind == Kind::Container)
        .map(|r| (r.loc, (r.name, r.peer)))
        .collect();
    let keeps = |loc: Sym| {
        let Some(&(name, mut up)) = declared.get(&loc) else {
            return false;
        };
        let mut ancestors = Vec::new();
        // Bounded by the containers, so a cycle of parents ends.
        while let Some(&(n, next)) = declared
            .get(&up)
            .filter(|_| ancestors.len() < declared.len())
        {
            ancestors.push((symbols.text(up), symbols.text(n)));
            up = next;
        }
        selection.keeps((symbols.text(loc), symbols.text(name)), ancestors)
    };
    places
        .iter()
        .map(|p| keeps(symbols.intern(&p.loc)) || keeps(symbols.intern(&p.process_loc)))
        .collect()
}

/// The `meta` rows that describe the whole trace.
fn trace_head(
    name: &str,
    params: &Parameters,
    metadata: &[(String, String)],
    symbols: &Symbols,
) -> VecDeque<Record> {
    let abi = params.abi.to_string();
    let mut rows: Vec<(String, &str)> = vec![
        ("source_format".into(), "pallas"),
        ("source".into(), name),
        ("time_unit".into(), "ns"),
        (format!("{PREFIX}abi"), &abi),
        (format!("{PREFIX}compression"), params.compression.name()),
        (format!("{PREFIX}encoding"), params.encoding.name()),
    ];
    for (k, v) in metadata
        .iter()
        .filter(|(k, _)| !stream::is_tracepipe_key(k))
    {
        rows.push((format!("{PREFIX}meta.{k}"), v));
    }
    rows.into_iter()
        .map(|(k, v)| Record::meta(symbols.intern(&k), v))
        .collect()
}

/// The trace's processes and threads as they are found: container rows, and
/// where each thread's files are.
struct ProcessTree {
    dir: PathBuf,
    main_name: String,
    abi: u8,
    global: Arc<Definitions>,
    head: VecDeque<Record>,
    places: Vec<ThreadPlace>,
    symbols: Symbols,
    /// A trace written from a stream: its head gives the containers, its
    /// locations are named by their names.
    restoring: bool,
}

impl ProcessTree {
    /// Reads the archive of location group `group` (when it has one) and adds
    /// the process and its threads.
    fn add_group(
        &mut self,
        group: &LocationEntry,
        groups: &[LocationEntry],
        main_locations: &[LocationEntry],
    ) -> Result<()> {
        let archive_dir = self.dir.join(format!("archive_{}", group.id));
        let archive_path = archive_dir.join("archive.pallas");
        let archive_name = archive_path.display().to_string();
        let archive = if archive_path.exists() {
            ArchiveFile::parse(&archive_name, &read_file(&archive_path)?, self.abi)?.data
        } else {
            ArchiveData::default()
        };
        let symbols = &self.symbols;
        let mut c = Record::new(Kind::Container);
        c.loc = symbols.intern(&process_loc(group.id));
        c.cat = symbols.intern("process");
        let scope = Scope {
            local: &archive.defs,
            global: &self.global,
        };
        let mut name = String::new();
        push_defined(&mut name, scope.string(group.name), "string", group.name);
        c.name = symbols.intern(&name);
        if group.parent != group.id && groups.binary_search_by_key(&group.parent, |g| g.id).is_ok()
        {
            c.peer = symbols.intern(&process_loc(group.parent));
        }
        for (k, v) in &archive.metadata {
            c.push_attr(k, v);
        }
        let process_loc = match self.restoring {
            true => name,
            false => process_loc(group.id),
        };
        if !self.restoring {
            self.head.push_back(c);
        }
        // A thread is listed by the archive, by the main file, or both.
        let mut locations: Vec<(LocationEntry, bool)> = archive
            .locations
            .iter()
            .map(|&l| (l, false))
            .chain(
                main_locations
                    .iter()
                    .filter(|l| l.parent == group.id)
                    .map(|&l| (l, true)),
            )
            .collect();
        locations.sort_by_key(|(l, _)| l.id);
        locations.dedup_by_key(|(l, _)| l.id);
        if locations.is_empty() && !archive_path.exists() {
            return Err(Error::offset(
                &self.main_name,
                group.at as u64,
                format!(
                    "location group {} has neither threads nor an archive file ({archive_name} does not exist)",
                    group.id
                ),
            ));
        }
        let defs = Arc::new(archive.defs);
        for (l, in_main) in locations {
            let listed_in = if in_main {
                &self.main_name
            } else {
                &archive_name
            };
            let listed_at = Location::Offset {
                file: listed_in.clone(),
                offset: l.at as u64,
            };
            self.add_thread((group.id, &process_loc), &l, listed_at, &archive_dir, &defs);
        }
        Ok(())
    }

    /// Declares thread `l` of process `process` (its definitions in `defs`,
    /// its folder under `archive_dir`) and where its events are.
    fn add_thread(
        &mut self,
        (process, process_loc): (u32, &str),
        l: &LocationEntry,
        listed_at: Location,
        archive_dir: &Path,
        defs: &Arc<Definitions>,
    ) {
        let symbols = &self.symbols;
        let scope = Scope {
            local: defs,
            global: &self.global,
        };
        let mut name = String::new();
        push_defined(&mut name, scope.string(l.name), "string", l.name);
        let loc = match self.restoring {
            true => name.clone(),
            false => thread_loc(process, l.id),
        };
        if !self.restoring {
            let mut c = Record::new(Kind::Container);
            c.loc = symbols.intern(&loc);
            c.cat = symbols.intern("thread");
            c.name = symbols.intern(&name);
            c.peer = symbols.intern(process_loc);
            self.head.push_back(c);
        }
        self.places.push(ThreadPlace {
            process,
            thread: l.id,
            loc,
            process_loc: process_loc.to_string(),
            dir: archive_dir.join(format!("thread_{}", l.id)),
            defs: defs.clone(),
            listed_at,
        });
    }
}

impl PallasSource {
    /// The threads' next row (false at the end).
    fn next_of_threads(&mut self, rec: &mut Record) -> Result<bool> {
        self.from_threads = true;
        let tau = self.paired_before.get().copied();
        while self.threads.next_record(rec)? {
            // Halves before the cut, read before the threads heard of it.
            let half = matches!(rec.kind, Kind::Send | Kind::Recv);
            if !(half && rec.time.zip(tau).is_some_and(|(t, tau)| t < tau)) {
                return Ok(true);
            }
        }
        self.crossings.report(&self.warnings);
        Ok(false)
    }
}

impl RecordSource for PallasSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(r) = self.head.pop_front() {
            *rec = r;
        } else if !self.next_of_threads(rec)? {
            return Ok(false);
        }
        let checked = self.check.check_made(rec);
        checked.map_err(|msg| Error::Record(msg).at(self.location()))?;
        Ok(true)
    }

    fn mark(&self) -> u64 {
        match self.from_threads {
            true => self.threads.mark().wrapping_add(1),
            false => 0,
        }
    }

    fn raw_line(&self) -> Option<&[u8]> {
        self.threads.raw_line().filter(|_| self.from_threads)
    }

    fn extra_columns(&self) -> &[String] {
        &[]
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// Its leading rows are declarations: the threads' bound.
    fn horizon(&self) -> Option<i64> {
        self.threads.horizon()
    }

    /// Before a slice's T0, message halves that pair among themselves
    /// before a balanced cut are left out too.
    fn agree(&mut self, demand: Demand) -> Supply {
        let cut = self.cut.take().zip(demand.thin_before);
        if let Some(tau) = cut.and_then(|(mut cut, t0)| cut.paired_before(t0)) {
            let _ = self.paired_before.set(tau);
        }
        self.threads.agree(demand)
    }

    fn locate(&self, mark: u64) -> Location {
        match mark {
            0 => Location::File(self.name.clone()),
            m => self.threads.locate(m - 1),
        }
    }
}

/// One occurrence of an event in a thread's expansion.
#[derive(Debug, Clone, Copy)]
pub struct Occurrence {
    /// Physical event slot.
    pub slot: usize,
    /// Its number in the thread's expansion, from 1 (occurrences counted
    /// past included).
    pub number: u64,
    /// How many times this event occurred before in the thread.
    pub index: u64,
    /// Decoded timestamp (ns).
    pub time: u64,
    /// Byte range of its attribute list in the event's attribute buffer.
    pub attributes: Option<(usize, usize)>,
}

struct GrammarFrame {
    sequence: usize,
    pos: usize,
    remaining: u32,
    /// A run thinned before T0 ([`thin`]).
    thin: bool,
}

/// Where an event's expansion is: its occurrences taken or counted past,
/// the block of timestamps `values` holds (empty until decoded) and the
/// occurrence that block starts at, the next attribute list.
#[derive(Default)]
struct EventCursor {
    occurrences: u64,
    block: usize,
    base: u64,
    values: Vec<u64>,
    attr_pos: usize,
}

/// The events of one thread in order, expanded from its grammar.
pub struct ThreadEvents {
    /// The thread's grammar.
    pub file: ThreadFile,
    name: String,
    dat: DatFile,
    decoder: BlockDecoder,
    lossy: bool,
    cursors: Vec<EventCursor>,
    stack: Vec<GrammarFrame>,
    /// Occurrences taken or counted past.
    passed: u64,
    /// Set while runs before T0 may be thinned.
    thinning: Option<thin::Thinning>,
    /// The thinning that follows once an occurrence reaches the first's
    /// end (a balanced cut's before T0's: message halves come again).
    thinning_after: Option<thin::Thinning>,
}

/// What a row's name (or category) is made from: interned once per thread,
/// then found by this key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Name {
    /// A region's name (`region R` when undefined).
    Region(u32),
    /// A record's name (`ENTER`, `MPI_SEND`...).
    Record(u32),
    /// The category of a block opened by a record.
    BlockCat(u32),
    /// A collective operation's name.
    Collective(u32),
    /// A defined string (a GENERIC event's name).
    Text(u32),
    /// A region's cat (in a trace written from a stream).
    RegionCat(u32),
    /// A communicator: its number, or its name in a trace written from a
    /// stream.
    Comm(u32),
    /// Process `P<lg>`.
    Process(u32),
    /// A record the reader has no row kind for: `record_N`, or
    /// `BUFFER_FLUSH`.
    Other(u32),
}

/// A thread's definitions, and the names made from them interned: each
/// once per thread, then found by its [`Name`].
struct ThreadNames {
    syms: SymCache,
    cache: FastMap<Name, Sym>,
    /// Regions' cats, in a trace written from a stream.
    cats: Option<Arc<Restore>>,
    local: Arc<Definitions>,
    global: Arc<Definitions>,
}

/// One thread's occurrences as stream rows.
pub struct ThreadSource {
    events: ThreadEvents,
    /// Set for a trace tracepipe wrote from a stream.
    restore: Option<Arc<Restore>>,
    ranks: Arc<RankMap>,
    names: ThreadNames,
    loc: Sym,
    loc_text: String,
    process: Sym,
    /// The regions of the frames open, outermost first (OpenMP and
    /// thread blocks are events of the thread model, not frames).
    frames: Vec<u32>,
    /// The frames above a crossing `LEAVE`'s (names, cats), reused.
    cut: Vec<(Sym, Sym)>,
    /// What the rows in `pending` were read from: the occurrence a
    /// crossing `LEAVE` cut frames at, or 0 for the rows closing the thread.
    pending_mark: u64,
    /// `LEAVE`s that do not nest, counted across the trace's threads.
    crossings: Crossings,
    /// `--strict`: a `LEAVE` that does not nest is an error.
    strict: bool,
    /// Time (as emitted, as decoded) of a collective's begin awaiting its end.
    collective_begin: Option<(i64, i64)>,
    last_time: i64,
    pending: VecDeque<Record>,
    finished: bool,
    /// The occurrence the last row came from ([`Occurrence::number`]; 0:
    /// the rows closing the thread at its end).
    mark: u64,
    /// Reused text buffers (attribute keys and values, numbers).
    key: String,
    value: String,
    /// How far a row may begin before its event: 0 unless rows or their
    /// times are kept in attributes ([`stream::Kept`]), then what the
    /// writer declared, if it did. What bounds the thread's horizon.
    lead: Option<i64>,
    /// By event slot: the row its record alone makes (a half, a request,
    /// an event), once made, copied for its other occurrences.
    rows_of: Vec<Option<Record>>,
    /// The trace's balanced cut, once a slice's T0 is heard.
    paired_before: PairedBefore,
}

/// What mapping one event needs of its thread, borrowed for the event.
struct Mapper<'a> {
    p: Payload<'a>,
    names: &'a mut ThreadNames,
    frames: &'a mut Vec<u32>,
    cut: &'a mut Vec<(Sym, Sym)>,
    crossings: &'a Crossings,
    strict: bool,
    ranks: &'a RankMap,
    loc: Sym,
    process: Sym,
    thread: &'a str,
    value: &'a mut String,
    /// A trace written from a stream: no `thread` or `rank` attributes.
    restoring: bool,
}

/// A record's payload with located, bounds-checked field reads.
struct Payload<'a> {
    bytes: &'a [u8],
    file: &'a str,
    at: u64,
    record: u32,
}

/// The location of mark `mark` of the thread whose events file is `file`:
/// the occurrence's index, 0 for the rows closing the thread.
fn event_location(file: &str, mark: u64) -> Location {
    match mark {
        0 => Location::File(format!("{file}: at the end of the thread")),
        index => Location::Event {
            file: file.to_string(),
            index,
        },
    }
}
