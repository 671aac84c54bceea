//! Pallas trace → record stream.
//!
//! Each thread's grammar is expanded lazily by [`ThreadEvents`] (a stack of
//! cursors; loops repeat their body), each distinct event's timestamps are
//! decoded one block at a time, and [`ThreadSource`] maps occurrences to rows.
//! Threads are merged by time with [`crate::exec::merge::Merger`]. Memory: the
//! grammars, one decoded block per distinct event, the open frames.

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
use crate::error::{Error, Location, Result};
use crate::exec::ahead::{read_ahead, Locator};
use crate::exec::merge::Merger;
use crate::fasthash::FastMap;
use crate::formats::stream::tsv::RowEncoder;
use crate::io::Input;
use crate::model::record::{flags, Kind, Record, Sym};
use crate::model::symbol::{well_known, SymCache, Symbols};
use crate::pipe::{Demand, ReadOptions, RecordSource, Supply};

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
    let path = input.path.ok_or_else(|| {
        Error::file(
            input.name.clone(),
            "a Pallas trace is a folder: name the folder or its main .pallas file",
        )
    })?;
    Ok(Box::new(PallasSource::open(&input.name, &path, opts)?))
}

/// Where a thread's files are and how to name it.
struct ThreadPlace {
    process: u32,
    thread: u32,
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
    fn new(defs: &Definitions, places: &[ThreadPlace], symbols: &Symbols) -> RankMap {
        let process_of: HashMap<u32, u32> = places.iter().map(|p| (p.thread, p.process)).collect();
        let mut comms = HashMap::new();
        for (&c, comm) in &defs.comms {
            let Some(group) = defs.groups.get(&comm.group) else {
                continue;
            };
            let threads = group.kind == 4;
            let names = group
                .members
                .iter()
                .map(|&m| match (threads, process_of.get(&m)) {
                    (true, Some(&lg)) => symbols.intern(&thread_loc(lg, m)),
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
}

impl PallasSource {
    /// Reads the main file and archives of the trace at `path` and opens every
    /// thread, interning its identifiers in the symbols of `opts`; `name` is
    /// how the input is named in messages and `meta`. With more than one
    /// thread, the trace's threads expand as jobs on the pool, merged on
    /// this one.
    pub fn open(name: &str, path: &Path, opts: &ReadOptions) -> Result<PallasSource> {
        let (symbols, warnings) = (&opts.symbols, &opts.warnings);
        let main_path = find_main(path)?;
        let dir = main_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let main_name = main_path.display().to_string();
        let main = MainFile::parse(&main_name, &read_file(&main_path)?)?;
        let mut layout = Layout {
            dir,
            main_name,
            abi: main.params.abi,
            global: Arc::new(main.data.defs),
            head: trace_head(name, &main.params, &main.data.metadata, symbols),
            places: Vec::new(),
            symbols: symbols.clone(),
        };
        for group in &main.data.location_groups {
            layout.add_group(group, &main.data.location_groups, &main.data.locations)?;
        }
        let ranks = Arc::new(RankMap::new(&layout.global, &layout.places, symbols));
        let mut threads = Vec::with_capacity(layout.places.len());
        for place in layout.places {
            let scope = (layout.global.clone(), ranks.clone());
            let syms = SymCache::new(symbols.clone());
            threads.push(ThreadSource::open(&main.params, place, scope, syms)?);
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
            head: layout.head,
            threads: Merger::new(sources, symbols, warnings)?,
            from_threads: false,
            name: name.to_string(),
        })
    }
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
    for (k, v) in metadata {
        rows.push((format!("{PREFIX}meta.{k}"), v));
    }
    rows.into_iter()
        .map(|(k, v)| Record::meta(symbols.intern(&k), v))
        .collect()
}

/// The trace's processes and threads as they are found: container rows, and
/// where each thread's files are.
struct Layout {
    dir: PathBuf,
    main_name: String,
    abi: u8,
    global: Arc<Definitions>,
    head: VecDeque<Record>,
    places: Vec<ThreadPlace>,
    symbols: Symbols,
}

impl Layout {
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
        self.head.push_back(c);
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
            self.add_thread(group.id, &l, listed_at, &archive_dir, &defs);
        }
        Ok(())
    }

    /// Declares thread `l` of process `process` (its definitions in `defs`,
    /// its folder under `archive_dir`) and where its events are.
    fn add_thread(
        &mut self,
        process: u32,
        l: &LocationEntry,
        listed_at: Location,
        archive_dir: &Path,
        defs: &Arc<Definitions>,
    ) {
        let symbols = &self.symbols;
        let mut c = Record::new(Kind::Container);
        c.loc = symbols.intern(&thread_loc(process, l.id));
        c.cat = symbols.intern("thread");
        let scope = Scope {
            local: defs,
            global: &self.global,
        };
        let mut name = String::new();
        push_defined(&mut name, scope.string(l.name), "string", l.name);
        c.name = symbols.intern(&name);
        c.peer = symbols.intern(&process_loc(process));
        self.head.push_back(c);
        self.places.push(ThreadPlace {
            process,
            thread: l.id,
            dir: archive_dir.join(format!("thread_{}", l.id)),
            defs: defs.clone(),
            listed_at,
        });
    }
}

impl RecordSource for PallasSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(r) = self.head.pop_front() {
            *rec = r;
            return Ok(true);
        }
        self.from_threads = true;
        self.threads.next_record(rec)
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

    fn agree(&mut self, demand: Demand) -> Supply {
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
}

#[derive(Default)]
struct EventCursor {
    occurrences: u64,
    block: usize,
    pos: usize,
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
}

impl ThreadEvents {
    /// Opens the thread whose files are in `dir`.
    pub fn open(params: &Parameters, dir: &Path) -> Result<ThreadEvents> {
        let path = dir.join("thread.pallas");
        let name = path.display().to_string();
        let bytes = read_file(&path)?;
        let file = ThreadFile::parse(&name, &bytes, params.abi)?;
        let dat = DatFile::open(&dir.join("event_durations.dat"))?;
        let mut cursors = Vec::with_capacity(file.events.len());
        cursors.resize_with(file.events.len(), EventCursor::default);
        let mut t = ThreadEvents {
            name,
            dat,
            decoder: BlockDecoder::new(params),
            lossy: params.compression.is_lossy(),
            cursors,
            stack: Vec::new(),
            file,
        };
        let root = ThreadFile::physical(&t.file.sequence_map, t.file.root)
            .filter(|&s| t.file.sequences.get(s).is_some_and(Option::is_some));
        match root {
            Some(s) => t.stack.push(GrammarFrame {
                sequence: s,
                pos: 0,
                remaining: 0,
            }),
            None if t.file.events.iter().all(Option::is_none) => {}
            None => {
                return Err(Error::offset(
                    &t.name,
                    t.file.root_offset,
                    format!("root sequence {} is not defined", t.file.root),
                ))
            }
        }
        Ok(t)
    }

    fn grammar_error(&self, msg: String) -> Error {
        let at = match self.stack.last() {
            Some(f) => self.file.sequence_offsets[f.sequence] + 4 * f.pos.saturating_sub(1),
            None => 0,
        };
        Error::offset(&self.name, at as u64, msg)
    }

    /// The next event occurrence, or `None` at the end of the thread.
    pub fn next_occurrence(&mut self) -> Result<Option<Occurrence>> {
        let mut idle = 0u64;
        loop {
            idle += 1;
            if idle > MAX_IDLE_STEPS {
                return Err(self.grammar_error(format!(
                    "no event in {MAX_IDLE_STEPS} grammar steps: loops that repeat nothing"
                )));
            }
            let Some(top) = self.stack.last_mut() else {
                return Ok(None);
            };
            let tokens = self.file.sequences[top.sequence]
                .as_deref()
                .expect("only live sequences are pushed");
            if top.pos == tokens.len() {
                if top.remaining > 0 {
                    top.remaining -= 1;
                    top.pos = 0;
                } else {
                    self.stack.pop();
                }
                continue;
            }
            let t = tokens[top.pos];
            top.pos += 1;
            let Some((kind, id)) = token(t) else {
                return Err(self.grammar_error(format!("invalid token {t:#x}")));
            };
            match kind {
                TokenKind::Event => {
                    let slot = ThreadFile::physical(&self.file.event_map, id)
                        .filter(|&s| self.file.events[s].is_some())
                        .ok_or_else(|| {
                            self.grammar_error(format!("token names undefined event {id}"))
                        })?;
                    return self.occurrence(slot).map(Some);
                }
                TokenKind::Sequence => {
                    let s = self.live_sequence(id)?;
                    self.push(s, 0)?;
                }
                TokenKind::Loop => {
                    let def = ThreadFile::physical(&self.file.loop_map, id)
                        .and_then(|l| self.file.loops[l])
                        .ok_or_else(|| {
                            self.grammar_error(format!("token names undefined loop {id}"))
                        })?;
                    let s = self.live_sequence(def.sequence)?;
                    if def.iterations > 0 {
                        self.push(s, def.iterations - 1)?;
                    }
                }
            }
        }
    }

    fn live_sequence(&self, id: u32) -> Result<usize> {
        ThreadFile::physical(&self.file.sequence_map, id)
            .filter(|&s| self.file.sequences[s].is_some())
            .ok_or_else(|| self.grammar_error(format!("token names undefined sequence {id}")))
    }

    fn push(&mut self, sequence: usize, remaining: u32) -> Result<()> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.grammar_error(format!(
                "grammar nests deeper than {MAX_DEPTH} (a sequence that contains itself?)"
            )));
        }
        self.stack.push(GrammarFrame {
            sequence,
            pos: 0,
            remaining,
        });
        Ok(())
    }

    fn occurrence(&mut self, slot: usize) -> Result<Occurrence> {
        let event = self.file.events[slot].as_ref().expect("live slot");
        let c = &mut self.cursors[slot];
        let index = c.occurrences;
        c.occurrences += 1;
        if c.pos >= c.values.len() {
            let Some(header) = event.timestamps.blocks.get(c.block) else {
                return Err(Error::offset(
                    &self.name,
                    event.offset as u64,
                    format!(
                        "event occurs more often than its {} timestamps",
                        event.timestamps.size
                    ),
                ));
            };
            self.decoder.decode(&self.dat, header, &mut c.values)?;
            if c.values.len() as u64 != header.size {
                return Err(Error::offset(
                    self.dat.name(),
                    header.offset,
                    format!(
                        "block decodes to {} values, not {}",
                        c.values.len(),
                        header.size
                    ),
                ));
            }
            if self.lossy {
                // The block header keeps exact copies of the ends; Pallas's
                // own reader shows them where it reads the header rather than
                // the block (the first value, and the second of two).
                c.values[0] = header.first;
                if header.size == 2 {
                    c.values[1] = header.last;
                }
            }
            c.block += 1;
            c.pos = 0;
        }
        let time = c.values[c.pos];
        c.pos += 1;
        if c.pos == c.values.len() && c.block == event.timestamps.blocks.len() {
            c.values = Vec::new();
        }
        let attributes = attribute_list(&self.name, event, c, index)?;
        Ok(Occurrence {
            slot,
            index,
            time,
            attributes,
        })
    }
}

/// The attribute list of occurrence `index`, if it has one; lists are stored
/// in occurrence order and occurrences without attributes have none.
fn attribute_list(
    file: &str,
    event: &EventDef,
    c: &mut EventCursor,
    index: u64,
) -> Result<Option<(usize, usize)>> {
    let buf = &event.attributes;
    while c.attr_pos < buf.len() {
        let at = c.attr_pos;
        let err = |msg: &str| Error::offset(file, (event.attributes_offset + at) as u64, msg);
        if buf.len() - at < 7 {
            return Err(err("truncated attribute list"));
        }
        let list_index = i32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
        let size = u16::from_le_bytes(buf[at + 4..at + 6].try_into().expect("2 bytes")) as usize;
        if size < 7 || size > buf.len() - at {
            return Err(err("attribute list size outside its buffer"));
        }
        match (list_index as i64).cmp(&(index as i64)) {
            std::cmp::Ordering::Less => c.attr_pos += size,
            std::cmp::Ordering::Equal => {
                c.attr_pos += size;
                return Ok(Some((at, at + size)));
            }
            std::cmp::Ordering::Greater => return Ok(None),
        }
    }
    Ok(None)
}

/// A frame opened by a block-opening record; its name and category are
/// derived from it when the frame closes.
#[derive(Clone, Copy)]
enum OpenFrame {
    /// `ENTER` of a region.
    Region(u32),
    /// An OpenMP or thread block, by its opening record.
    Block(u32),
}

/// The category of rows of a block opened by `record`.
fn block_cat(record: u32) -> &'static str {
    if (14..=20).contains(&record) {
        "OMP"
    } else {
        "THREAD"
    }
}

impl OpenFrame {
    fn push_name(self, out: &mut String, scope: Scope) {
        match self {
            OpenFrame::Region(r) => push_defined(out, scope.region(r), "region", r),
            OpenFrame::Block(record) => out.push_str(record_name(record)),
        }
    }

    /// What its name is made from.
    fn name(self) -> Name {
        match self {
            OpenFrame::Region(r) => Name::Region(r),
            OpenFrame::Block(record) => Name::Record(record),
        }
    }
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
    /// Process `P<lg>`.
    Process(u32),
    /// A record the reader has no row kind for: `record_N`, or
    /// `BUFFER_FLUSH`.
    Other(u32),
}

/// A thread's definitions, and the names made from them interned: each
/// once per thread, then found by its [`Name`].
struct Names {
    syms: SymCache,
    cache: FastMap<Name, Sym>,
    local: Arc<Definitions>,
    global: Arc<Definitions>,
}

impl Names {
    fn scope(&self) -> Scope<'_> {
        Scope {
            local: &self.local,
            global: &self.global,
        }
    }

    /// The symbol of `name`; `Err(s)` for a string `s` the trace does not
    /// define.
    fn sym(&mut self, name: Name) -> Result<Sym, u32> {
        if let Some(&sym) = self.cache.get(&name) {
            return Ok(sym);
        }
        let scope = self.scope();
        let mut text = String::new();
        match name {
            Name::Region(r) => push_defined(&mut text, scope.region(r), "region", r),
            Name::Record(record) => text.push_str(record_name(record)),
            Name::BlockCat(record) => text.push_str(block_cat(record)),
            Name::Collective(op) => text = collective_name(op),
            Name::Text(s) => text.push_str(scope.string(s).ok_or(s)?),
            Name::Process(lg) => text = process_loc(lg),
            Name::Other(n) if n == RecordId::BufferFlush.number() => text.push_str("BUFFER_FLUSH"),
            Name::Other(record) => text = format!("record_{record}"),
        }
        let sym = self.syms.intern(&text);
        self.cache.insert(name, sym);
        Ok(sym)
    }

    /// [`Names::sym`] of a name that always has a text.
    fn name(&mut self, name: Name) -> Sym {
        self.sym(name).unwrap_or_default()
    }

    /// The category of the rows of frame `f`.
    fn frame_cat(&mut self, f: OpenFrame) -> Sym {
        match f {
            OpenFrame::Region(_) => Sym::EMPTY,
            OpenFrame::Block(record) => self.name(Name::BlockCat(record)),
        }
    }
}

/// One thread's occurrences as stream rows.
pub struct ThreadSource {
    events: ThreadEvents,
    ranks: Arc<RankMap>,
    names: Names,
    loc: Sym,
    loc_text: String,
    process: Sym,
    frames: Vec<OpenFrame>,
    /// Time (as emitted, as decoded) of a collective's begin awaiting its end.
    collective_begin: Option<(i64, i64)>,
    last_time: i64,
    pending: VecDeque<Record>,
    finished: bool,
    /// Occurrences read, and the one the last row came from (0: the rows
    /// closing the thread at its end).
    occurrences: u64,
    mark: u64,
    /// Reused text buffers (attribute keys and values, numbers).
    key: String,
    value: String,
}

impl ThreadSource {
    fn open(
        params: &Parameters,
        place: ThreadPlace,
        (global, ranks): (Arc<Definitions>, Arc<RankMap>),
        mut syms: SymCache,
    ) -> Result<Self> {
        let thread_file = place.dir.join("thread.pallas");
        if !thread_file.exists() {
            return Err(Error::Data {
                at: place.listed_at,
                msg: format!(
                    "location {} of group {} has no thread file ({} does not exist)",
                    place.thread,
                    place.process,
                    thread_file.display()
                ),
            });
        }
        let loc_text = thread_loc(place.process, place.thread);
        Ok(ThreadSource {
            events: ThreadEvents::open(params, &place.dir)?,
            ranks,
            loc: syms.intern(&loc_text),
            loc_text,
            process: syms.intern(&process_loc(place.process)),
            names: Names {
                syms,
                cache: FastMap::default(),
                local: place.defs,
                global,
            },
            frames: Vec::new(),
            collective_begin: None,
            last_time: i64::MIN,
            pending: VecDeque::new(),
            occurrences: 0,
            mark: 0,
            finished: false,
            key: String::new(),
            value: String::new(),
        })
    }

    /// Sets `rec.peer` to the location of `rank` in `comm`; a rank that
    /// does not name process `P<rank>` is kept in the attribute `rank`.
    fn set_peer(ranks: &RankMap, names: &mut Names, rec: &mut Record, comm: u32, rank: u32) {
        let process = names.name(Name::Process(rank));
        rec.peer = ranks.location(comm, rank).unwrap_or(process);
        if rec.peer != process {
            rec.push_attr("rank", &rank.to_string());
        }
    }

    /// Closes what is still open at the end of the thread, at its last time.
    fn finish(&mut self) {
        let t = self.last_time.max(0);
        if let Some((begin, raw)) = self.collective_begin.take() {
            let mut r = Record::new(Kind::Coll);
            r.time = Some(begin);
            if raw != begin {
                r.push_attr("raw_time", &raw.to_string());
            }
            r.end = Some(t);
            r.loc = self.process;
            r.cat = well_known::MPI;
            r.add_flag(flags::UNMATCHED);
            r.push_attr("thread", &self.loc_text);
            self.pending.push_back(r);
        }
        while let Some(f) = self.frames.pop() {
            let mut r = Record::new(Kind::Leave);
            r.time = Some(t);
            r.loc = self.loc;
            r.cat = self.names.frame_cat(f);
            r.name = self.names.name(f.name());
            r.depth = Some(self.frames.len() as u32);
            r.add_flag(flags::SYNTHETIC);
            self.pending.push_back(r);
        }
    }

    /// Maps one occurrence into `rec`; `false` when it yields no row (a
    /// collective's begin, held until its end).
    fn map(&mut self, o: Occurrence, rec: &mut Record) -> Result<bool> {
        let event = self.events.file.events[o.slot].as_ref().expect("live slot");
        let at = event.offset as u64;
        let file = &self.events.name;
        let (time, raw_time) = emitted_time(o.time, &mut self.last_time, self.events.lossy)
            .map_err(|msg| Error::offset(file, at, msg))?;
        rec.clear();
        rec.time = Some(time);
        rec.loc = self.loc;
        let mut m = Mapper {
            p: Payload {
                bytes: &event.payload,
                file,
                at,
                record: event.record,
            },
            names: &mut self.names,
            frames: &mut self.frames,
            ranks: &self.ranks,
            loc: self.loc,
            process: self.process,
            thread: &self.loc_text,
            value: &mut self.value,
        };
        use RecordId::*;
        match RecordId::from_number(event.record) {
            Some(Enter) => m.enter(rec)?,
            Some(Leave) => m.leave(rec)?,
            Some(id @ (MpiSend | MpiIsend | MpiRecv | MpiIrecv)) => m.half(rec, id)?,
            Some(id @ (MpiIsendComplete | MpiIrecvRequest)) => m.request(rec, id)?,
            Some(MpiCollectiveBegin) => {
                self.collective_begin = Some((time, raw_time));
                return Ok(false);
            }
            Some(MpiCollectiveEnd) => {
                let begin = self.collective_begin.take().unwrap_or((time, raw_time));
                m.collective(rec, begin, (time, raw_time))?;
            }
            Some(id @ (OmpFork | ThreadFork | ThreadTeamBegin | ThreadBegin)) => {
                m.block_begin(rec, id)?
            }
            Some(id @ (OmpJoin | ThreadJoin | ThreadTeamEnd | ThreadEnd)) => {
                m.block_end(rec, id)?
            }
            Some(
                id @ (OmpAcquireLock | OmpReleaseLock | ThreadAcquireLock | ThreadReleaseLock
                | OmpTaskCreate | OmpTaskSwitch | OmpTaskComplete | ThreadTaskCreate
                | ThreadTaskSwitch | ThreadTaskComplete),
            ) => m.block_event(rec, id)?,
            Some(Generic) => m.generic(rec)?,
            Some(BufferFlush | Dummy) | None => m.other(rec),
        }
        if let Some((start, end)) = o.attributes {
            push_attributes(
                rec,
                &event.attributes[start..end],
                self.names.scope(),
                (&mut self.key, &mut self.value),
                file,
                (event.attributes_offset + start) as u64,
            )?;
        }
        if self.events.lossy {
            rec.add_flag(flags::LOSSY);
            if raw_time != time && rec.kind != Kind::Coll {
                rec.push_attr("raw_time", &raw_time.to_string());
            }
        }
        Ok(true)
    }
}

/// The time an occurrence at `raw` ns is emitted at, and `raw` itself:
/// a lossy trace's times that go backwards are raised to the last one
/// (`last`, updated), a lossless trace's are an error.
fn emitted_time(raw: u64, last: &mut i64, lossy: bool) -> std::result::Result<(i64, i64), String> {
    let raw = i64::try_from(raw)
        .map_err(|_| format!("timestamp {raw} is beyond the stream's range (2^63-1 ns)"))?;
    if raw < *last && !lossy {
        return Err(format!(
            "timestamps go backwards ({raw} after {last}) in a lossless trace"
        ));
    }
    *last = raw.max(*last);
    Ok((*last, raw))
}

/// What mapping one event needs of its thread, borrowed for the event.
struct Mapper<'a> {
    p: Payload<'a>,
    names: &'a mut Names,
    frames: &'a mut Vec<OpenFrame>,
    ranks: &'a RankMap,
    loc: Sym,
    process: Sym,
    thread: &'a str,
    value: &'a mut String,
}

impl Mapper<'_> {
    /// The location of MPI records on `comm`: the thread when the
    /// communicator's ranks are threads, else the process.
    fn mpi_loc(&self, comm: u32) -> Sym {
        match self.ranks.by_thread(comm) {
            true => self.loc,
            false => self.process,
        }
    }

    fn error(&self, msg: String) -> Error {
        Error::offset(self.p.file, self.p.at, msg)
    }

    fn enter(&mut self, rec: &mut Record) -> Result<()> {
        let region = self.p.u32(0)?;
        rec.name = self.names.name(Name::Region(region));
        rec.kind = Kind::Enter;
        rec.depth = Some(self.frames.len() as u32);
        self.frames.push(OpenFrame::Region(region));
        Ok(())
    }

    fn leave(&mut self, rec: &mut Record) -> Result<()> {
        let region = self.p.u32(0)?;
        rec.name = self.names.name(Name::Region(region));
        rec.kind = Kind::Leave;
        let name = |names: &Names| names.syms.symbols().text(rec.name).to_string();
        match self.frames.pop() {
            Some(OpenFrame::Region(r)) if r == region => {}
            Some(f) => {
                let mut open = String::new();
                f.push_name(&mut open, self.names.scope());
                let name = name(self.names);
                return Err(self.error(format!("LEAVE of `{name}` while `{open}` is open")));
            }
            None => {
                let name = name(self.names);
                return Err(self.error(format!("LEAVE of `{name}` with no open block")));
            }
        }
        rec.depth = Some(self.frames.len() as u32);
        Ok(())
    }

    /// A point-to-point send or receive: a half with its peer, channel and
    /// size (and request id for the nonblocking ones).
    fn half(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        let send = matches!(id, RecordId::MpiSend | RecordId::MpiIsend);
        rec.kind = if send { Kind::Send } else { Kind::Recv };
        let comm = self.p.u32(4)?;
        rec.loc = self.mpi_loc(comm);
        rec.cat = well_known::MPI;
        rec.name = self.names.name(Name::Record(id.number()));
        ThreadSource::set_peer(self.ranks, self.names, rec, comm, self.p.u32(0)?);
        rec.comm = self.names.syms.intern(itoa::Buffer::new().format(comm));
        rec.tag = Some(self.p.u32(8)? as i64);
        rec.size = Some(self.p.u64(12)?);
        if matches!(id, RecordId::MpiIsend | RecordId::MpiIrecv) {
            let _ = write!(rec.id, "{}", self.p.u64(20)?);
        }
        rec.push_attr("thread", self.thread);
        Ok(())
    }

    /// A request's completion or a receive posted: an event with its id.
    fn request(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        rec.kind = Kind::Event;
        rec.cat = well_known::MPI;
        rec.name = self.names.name(Name::Record(id.number()));
        let _ = write!(rec.id, "{}", self.p.u64(0)?);
        if id == RecordId::MpiIrecvRequest {
            // Receives complete later, matched in posting order.
            rec.push_attr(crate::model::record::ATTR_POSTS, "recv");
        }
        Ok(())
    }

    /// A collective from its begin to this end, each (as emitted, as read).
    fn collective(
        &mut self,
        rec: &mut Record,
        (begin, raw_begin): (i64, i64),
        (end, raw_end): (i64, i64),
    ) -> Result<()> {
        rec.kind = Kind::Coll;
        rec.time = Some(begin);
        if raw_begin != begin {
            rec.push_attr("raw_time", &raw_begin.to_string());
        }
        if raw_end != end {
            rec.push_attr("raw_end", &raw_end.to_string());
        }
        rec.end = Some(end);
        let comm = self.p.u32(4)?;
        rec.loc = self.mpi_loc(comm);
        rec.cat = well_known::MPI;
        rec.name = self.names.name(Name::Collective(self.p.u32(0)?));
        rec.comm = self.names.syms.intern(itoa::Buffer::new().format(comm));
        let root = self.p.u32(8)?;
        if root != u32::MAX {
            ThreadSource::set_peer(self.ranks, self.names, rec, comm, root);
        }
        rec.size = Some(self.p.u64(12)?);
        let _ = write!(rec.value, "{}", self.p.u64(20)?);
        rec.push_attr("thread", self.thread);
        Ok(())
    }

    /// An OpenMP or thread block opens (a fork's thread count with it).
    fn block_begin(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        let record = id.number();
        rec.kind = Kind::Enter;
        rec.cat = self.names.name(Name::BlockCat(record));
        rec.name = self.names.name(Name::Record(record));
        rec.depth = Some(self.frames.len() as u32);
        if matches!(id, RecordId::OmpFork | RecordId::ThreadFork) {
            self.value.clear();
            let _ = write!(self.value, "{}", self.p.u32(0)?);
            rec.push_attr("nthreads", self.value);
        }
        self.frames.push(OpenFrame::Block(record));
        Ok(())
    }

    /// The innermost open block closes, which must not be a region.
    fn block_end(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        let Some(f) = self.frames.pop() else {
            return Err(self.error(format!("{} with no open block", id.name())));
        };
        if let OpenFrame::Region(_) = f {
            let mut open = String::new();
            f.push_name(&mut open, self.names.scope());
            return Err(self.error(format!("{} while `{open}` is open", id.name())));
        }
        rec.kind = Kind::Leave;
        rec.cat = self.names.frame_cat(f);
        rec.name = self.names.name(f.name());
        rec.depth = Some(self.frames.len() as u32);
        rec.push_attr("record", id.name());
        Ok(())
    }

    /// A lock or task event of an OpenMP or thread block, with the lock's
    /// or the task's id where the record has one.
    fn block_event(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        use RecordId::*;
        let record = id.number();
        rec.kind = Kind::Event;
        rec.cat = self.names.name(Name::BlockCat(record));
        rec.name = self.names.name(Name::Record(record));
        match id {
            OmpAcquireLock | OmpReleaseLock | ThreadAcquireLock | ThreadReleaseLock => {
                let _ = write!(rec.id, "{}", self.p.u32(0)?);
            }
            OmpTaskCreate | OmpTaskSwitch | OmpTaskComplete => {
                let _ = write!(rec.id, "{}", self.p.u64(0)?);
            }
            _ => {}
        }
        Ok(())
    }

    /// A generic event, named by a defined string.
    fn generic(&mut self, rec: &mut Record) -> Result<()> {
        let s = self.p.u32(0)?;
        rec.kind = Kind::Event;
        rec.name = self
            .names
            .sym(Name::Text(s))
            .map_err(|s| self.error(format!("GENERIC event names undefined string {s}")))?;
        Ok(())
    }

    /// A record with no row of its own: an event named after it, its
    /// payload in hex.
    fn other(&mut self, rec: &mut Record) {
        rec.kind = Kind::Event;
        rec.name = self.names.name(Name::Other(self.p.record));
        if !self.p.bytes.is_empty() {
            let mut hex = String::with_capacity(2 * self.p.bytes.len());
            for b in self.p.bytes {
                let _ = write!(hex, "{b:02x}");
            }
            rec.push_attr("payload", &hex);
        }
    }
}

/// A record's payload with located, bounds-checked field reads.
struct Payload<'a> {
    bytes: &'a [u8],
    file: &'a str,
    at: u64,
    record: u32,
}

impl Payload<'_> {
    fn field<const N: usize>(&self, offset: usize) -> Result<[u8; N]> {
        self.bytes
            .get(offset..offset + N)
            .map(|s| s.try_into().expect("N bytes"))
            .ok_or_else(|| {
                Error::offset(
                    self.file,
                    self.at,
                    format!(
                        "{} payload of {} bytes is too short (field at byte {offset})",
                        record_name(self.record),
                        self.bytes.len()
                    ),
                )
            })
    }

    fn u32(&self, offset: usize) -> Result<u32> {
        self.field::<4>(offset).map(u32::from_le_bytes)
    }

    fn u64(&self, offset: usize) -> Result<u64> {
        self.field::<8>(offset).map(u64::from_le_bytes)
    }
}

/// Appends an attribute list's values to `rec.attrs` as `name=value`, using
/// `key` and `value` as scratch buffers.
fn push_attributes(
    rec: &mut Record,
    list: &[u8],
    scope: Scope,
    (key, value): (&mut String, &mut String),
    file: &str,
    at: u64,
) -> Result<()> {
    let err = |msg: String| Error::offset(file, at, msg);
    let count = list[6] as usize;
    let mut pos = 7;
    for _ in 0..count {
        if list.len() - pos < 6 {
            return Err(err("attribute value header beyond its list".into()));
        }
        let size = u16::from_le_bytes([list[pos], list[pos + 1]]) as usize;
        let r = u32::from_le_bytes(list[pos + 2..pos + 6].try_into().expect("4 bytes"));
        if size < 6 || size > list.len() - pos {
            return Err(err(format!(
                "attribute value of {size} bytes beyond its list"
            )));
        }
        let bytes = &list[pos + 6..pos + size];
        pos += size;
        let def = scope.attribute(r);
        key.clear();
        match def.and_then(|d| scope.string(d.name)) {
            Some(n) => key.push_str(n),
            None => {
                let _ = write!(key, "attribute_{r}");
            }
        }
        value.clear();
        let kind = def.map(|d| d.kind).unwrap_or(0);
        format_attribute(value, kind, bytes, scope)
            .map_err(|m| err(format!("attribute `{key}`: {m}")))?;
        rec.push_attr(key, value);
    }
    Ok(())
}

fn format_attribute(out: &mut String, kind: u8, bytes: &[u8], scope: Scope) -> Result<(), String> {
    let mut raw = [0u8; 8];
    if bytes.len() > 8 || bytes.is_empty() {
        return Err(format!("value of {} bytes", bytes.len()));
    }
    raw[..bytes.len()].copy_from_slice(bytes);
    let unsigned = u64::from_le_bytes(raw);
    let need = |n: usize| {
        if bytes.len() == n {
            Ok(())
        } else {
            Err(format!(
                "type {kind} needs {n} bytes, value has {}",
                bytes.len()
            ))
        }
    };
    match kind {
        5 => {
            need(1)?;
            let _ = write!(out, "{}", bytes[0] as i8);
        }
        6 => {
            need(2)?;
            let _ = write!(out, "{}", unsigned as u16 as i16);
        }
        7 => {
            need(4)?;
            let _ = write!(out, "{}", unsigned as u32 as i32);
        }
        8 => {
            need(8)?;
            let _ = write!(out, "{}", unsigned as i64);
        }
        9 => {
            need(4)?;
            let _ = write!(out, "{}", f32::from_bits(unsigned as u32));
        }
        10 => {
            need(8)?;
            let _ = write!(out, "{}", f64::from_bits(unsigned));
        }
        11 => match scope.string(unsigned as u32) {
            Some(s) => out.push_str(s),
            None => return Err(format!("undefined string {unsigned}")),
        },
        _ => {
            // Unsigned integers, other refs, and values whose definition is
            // missing (read by their size, as Pallas does).
            let _ = write!(out, "{unsigned}");
        }
    }
    Ok(())
}

impl RecordSource for ThreadSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                *rec = r;
                self.mark = 0;
                return Ok(true);
            }
            if self.finished {
                return Ok(false);
            }
            match self.events.next_occurrence()? {
                Some(o) => {
                    self.occurrences += 1;
                    if self.map(o, rec)? {
                        self.mark = self.occurrences;
                        return Ok(true);
                    }
                }
                None => {
                    self.finished = true;
                    self.finish();
                }
            }
        }
    }

    fn mark(&self) -> u64 {
        self.mark
    }

    fn locate(&self, mark: u64) -> Location {
        event_location(&self.events.name, mark)
    }

    crate::whole_rows!();
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
