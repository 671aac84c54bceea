//! OTF2 archive → record stream.
//!
//! The anchor file and the global definitions are read first: they give
//! the `meta` rows, the containers (system tree, location groups,
//! locations) and, interned once, every name a row takes ([`Scope`]). Each
//! location's events are then a [`LocationSource`] (`location.rs`; the
//! record → row mapping in `records.rs`), merged by time with
//! [`crate::exec::merge::Merger`], read ahead as jobs on the pool when the
//! pipeline has more than one thread. Memory: the definitions, one window
//! of each location's event file, the open frames.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::anchor::{self, Anchor};
use super::defs::{Definitions, Metric};
use super::events::window_for;
use super::local::Local;
use super::{HEAD_PROPERTY, LEAD_PROPERTY, PREFIX, STREAM_PROPERTY};
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::ahead::{read_ahead, Locator};
use crate::exec::merge::Merger;
use crate::fasthash::{FastMap, FastSet};
use crate::formats::stream::tsv::RowEncoder;
use crate::io::Input;
use crate::model::check::StreamCheck;
use crate::model::hpc::location_kind;
use crate::model::nesting::Crossings;
use crate::model::record::{ColumnSet, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Demand, LocationSelection, ReadOptions, RecordSource, Supply};

mod location;
mod records;
mod scope;

pub use location::LocationSource;
pub use scope::{Scope, Timebase};

/// Opens an OTF2 archive (its anchor file, or a folder holding one).
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let path = input.path.ok_or_else(|| {
        Error::file(
            input.name.clone(),
            "an OTF2 archive is a set of files: name its anchor `.otf2` file or its folder",
        )
    })?;
    Ok(Box::new(Otf2Source::open(&input.name, &path, opts)?))
}

/// The event bytes from which the locations are read ahead on the pool
/// (their lines encoded in the jobs): below, the jobs' start and batches
/// cost more than the second core saves, and a smaller archive is read,
/// and its rows encoded, on the calling thread whatever `--threads` says
/// ([`Supply::encode_here`]; docs/performance.md, "OTF2 archives").
pub const READ_AHEAD_FROM: u64 = 8 << 20;

/// Reads a whole file, naming it in errors.
fn read_file(path: &Path) -> Result<Vec<u8>> {
    crate::io::read_regular(path).map_err(|e| Error::io(path.display().to_string(), e))
}

/// The files of an archive whose anchor file is `anchor`.
pub struct Files {
    /// `NAME.def`.
    pub global_defs: PathBuf,
    /// `NAME/`, holding `LOC.evt` and `LOC.def`.
    pub locations: PathBuf,
}

impl Files {
    /// The files beside anchor file `anchor`.
    pub fn of(anchor: &Path) -> Files {
        Files {
            global_defs: anchor.with_extension("def"),
            locations: anchor.with_extension(""),
        }
    }

    /// The event file of location `loc`.
    pub fn events(&self, loc: u64) -> PathBuf {
        self.locations.join(format!("{loc}.evt"))
    }

    /// The local definitions of location `loc`.
    pub fn local_defs(&self, loc: u64) -> PathBuf {
        self.locations.join(format!("{loc}.def"))
    }
}

/// A whole OTF2 archive as one time-ordered stream.
pub struct Otf2Source {
    head: VecDeque<Record>,
    /// The locations merged, behind the source trait alone (as stages
    /// call their inner source).
    locations: Box<dyn RecordSource>,
    from_locations: bool,
    name: String,
    /// The `LEAVE`s that did not nest, reported at the end.
    crossings: Crossings,
    /// Its locations are read ahead on the pool.
    ahead: bool,
    warnings: Warnings,
    /// The stream's rules, on rows tracepipe's marks give as on the others.
    check: StreamCheck,
}

impl Otf2Source {
    /// Reads the anchor and the definitions of the archive at `path` and
    /// opens every location's events.
    pub fn open(name: &str, path: &Path, opts: &ReadOptions) -> Result<Otf2Source> {
        let symbols = &opts.symbols;
        let anchor_path = anchor::find(path)?;
        let anchor_name = anchor_path.display().to_string();
        let anchor = Anchor::parse(&anchor_name, &read_file(&anchor_path)?)?;
        if anchor.is_newer() {
            opts.warnings.warn(format!(
                "{anchor_name}: OTF2 version {} is newer than this reader knows; read as 3.x",
                anchor.version_text()
            ));
        }
        let files = Files::of(&anchor_path);
        let defs_name = files.global_defs.display().to_string();
        let defs = Definitions::parse(
            &defs_name,
            &read_file(&files.global_defs)?,
            anchor.chunk_size_defs,
        )?;
        warn_redefined(&defs, &defs_name, &opts.warnings);
        let clock = defs.clock.ok_or_else(|| {
            Error::file(
                defs_name.clone(),
                "no clock properties in the global definitions",
            )
        })?;
        let mut head = trace_head(name, &anchor, &defs, symbols);
        let stored = anchor.properties.iter().find(|(k, _)| k == HEAD_PROPERTY);
        let containers = match stored {
            Some((_, rows)) => {
                head.extend(stored_rows(&anchor_name, rows, symbols)?);
                Containers::declare(&defs, symbols, &mut VecDeque::new())
            }
            None => Containers::declare(&defs, symbols, &mut head),
        };
        let read = containers.read(&defs, opts.locations.as_ref());
        let mut scope = Scope::new(defs, containers.locations, Timebase::of(&clock), symbols);
        scope.from_stream = anchor.properties.iter().any(|(k, _)| k == STREAM_PROPERTY);
        let declared = anchor.properties.iter().find(|(k, _)| k == LEAD_PROPERTY);
        if let Some(lead) = declared.and_then(|(_, v)| v.parse::<i64>().ok()) {
            scope.lead = Some(lead.max(0));
        }
        let scope = Arc::new(scope);
        // Each boxed where it is made: a source is a kilobyte, moved once.
        let mut sources = Vec::with_capacity(read.len());
        let defined = scope.defs.locations.iter().map(|(l, _)| *l);
        let window = window_for(read.len());
        for loc in defined.filter(|l| read.contains(l)) {
            let source = LocationSource::open(&files, (loc, window), &anchor, scope.clone(), opts)?;
            sources.push(Box::new(source));
        }
        let bytes: u64 = sources.iter().map(|s| s.events.file_len()).sum();
        let ahead = opts.pool.threads().parallel() && bytes >= READ_AHEAD_FROM;
        let sources: Vec<Box<dyn RecordSource>> = match ahead {
            true => {
                let located = sources.into_iter().map(|s| {
                    let file = s.file_name().to_string();
                    let locate: Locator =
                        Arc::new(move |mark| location::event_location(&file, mark));
                    (*s, locate, name.to_string())
                });
                let encoder = || Box::new(RowEncoder::standard(symbols.clone())) as _;
                let lanes = read_ahead(located.collect(), &opts.pool, &encoder)?;
                lanes.into_iter().map(|l| Box::new(l) as _).collect()
            }
            false => sources.into_iter().map(|s| s as _).collect(),
        };
        Ok(Otf2Source {
            head,
            locations: Box::new(Merger::new(sources, symbols, &opts.warnings)?),
            from_locations: false,
            name: name.to_string(),
            crossings: scope.crossings.clone(),
            warnings: opts.warnings.clone(),
            ahead,
            check: StreamCheck::new(symbols.clone()),
        })
    }
}

/// Warns of the definitions given again, which are not read.
fn warn_redefined(defs: &Definitions, name: &str, warnings: &Warnings) {
    if let Some(first) = &defs.first_redefined {
        warnings.warn(format!(
            "{name}: {} definition(s) given again, e.g. {first}: the first of each is read",
            defs.redefined
        ));
    }
}

/// The `meta` rows that describe the archive.
fn trace_head(
    name: &str,
    anchor: &Anchor,
    defs: &Definitions,
    symbols: &Symbols,
) -> VecDeque<Record> {
    let clock = defs.clock.expect("checked by the caller");
    let mut rows: Vec<(String, String)> = vec![
        ("source_format".into(), "otf2".into()),
        ("source".into(), name.into()),
        ("time_unit".into(), format!("ticks@{}", clock.resolution)),
    ];
    if let Some(t) = clock.realtime {
        rows.push(("origin".into(), t.to_string()));
    }
    rows.push((format!("{PREFIX}version"), anchor.version_text()));
    for (key, value) in [
        ("creator", &anchor.creator),
        ("machine", &anchor.machine),
        ("description", &anchor.description),
    ] {
        if !value.is_empty() {
            rows.push((format!("{PREFIX}{key}"), value.clone()));
        }
    }
    rows.push((format!("{PREFIX}global_offset"), clock.offset.to_string()));
    let own = |k: &str| [HEAD_PROPERTY, STREAM_PROPERTY, LEAD_PROPERTY].contains(&k);
    for (k, v) in anchor.properties.iter().filter(|(k, _)| !own(k)) {
        rows.push((format!("{PREFIX}property.{k}"), v.clone()));
    }
    rows.into_iter()
        .map(|(k, v)| Record::meta(symbols.intern(&k), &v))
        .collect()
}

/// The rows of the [`HEAD_PROPERTY`].
fn stored_rows(file: &str, text: &str, symbols: &Symbols) -> Result<Vec<Record>> {
    let mut syms = crate::model::symbol::SymCache::new(symbols.clone());
    let mut rows = Vec::new();
    for line in text.lines() {
        let mut rec = Record::default();
        crate::formats::stream::jsonl::parse_line(
            line.as_bytes(),
            &mut rec,
            &mut syms,
            ColumnSet::ALL,
        )
        .map_err(|e| Error::file(file.to_string(), format!("{HEAD_PROPERTY}: {e}")))?;
        rows.push(rec);
    }
    Ok(rows)
}

/// The containers of the archive: system tree nodes, location groups and
/// locations. A node or group is named by its name, a location by its
/// group's and its own (`MPI Rank 0/Master thread`), made unique with
/// ` #REF` when taken; each keeps its OTF2 reference in `attrs` (`otf2.id`;
/// a location's names its event file).
struct Containers {
    /// Each location's `loc`.
    locations: FastMap<u64, Sym>,
    /// Each location's id and name, and its ancestors' (group, nodes).
    places: FastMap<u64, Vec<(String, String)>>,
    taken: FastSet<String>,
}

impl Containers {
    /// `name`, or `name #REF` when another container has it.
    fn unique(&mut self, name: String, r: u64) -> String {
        match self.taken.insert(name.clone()) {
            true => name,
            false => {
                let alt = format!("{name} #{r}");
                self.taken.insert(alt.clone());
                alt
            }
        }
    }

    /// Declares every container (parents first) into `head`.
    fn declare(defs: &Definitions, symbols: &Symbols, head: &mut VecDeque<Record>) -> Containers {
        let mut all = Containers {
            locations: FastMap::default(),
            places: FastMap::default(),
            taken: FastSet::default(),
        };
        let text = |r: u32, what: &str, id: u64| match defs.string(r) {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => format!("{what} {id}"),
        };
        // Each node's and group's `loc`, and its own and its ancestors' ids
        // and names.
        // Locations take their names first, so a node or group of the same
        // name is the one made unique.
        let group_names: FastMap<u32, String> = defs
            .location_groups
            .iter()
            .map(|(r, g)| (*r, defs.string(g.name).unwrap_or("").to_string()))
            .collect();
        let mut location_locs = Vec::new();
        for (r, l) in &defs.locations {
            let name = text(l.name, "location", *r);
            let loc = match group_names.get(&l.group).map(String::as_str) {
                // A group of no name (tracepipe writes locations so): the
                // location's name alone.
                Some("") | None => name.clone(),
                Some(g) => format!("{g}/{name}"),
            };
            location_locs.push((*r, all.unique(loc, *r), name));
        }
        let mut nodes: FastMap<u32, (String, Vec<(String, String)>)> = FastMap::default();
        for (r, n) in &defs.nodes {
            let name = text(n.name, "node", *r as u64);
            let loc = all.unique(name.clone(), *r as u64);
            let class = defs
                .string(n.class)
                .filter(|c| !c.is_empty())
                .unwrap_or("node");
            let parent = nodes.get(&n.parent);
            let up = parent.map(|(p, _)| p.as_str());
            head.push_back(container(symbols, [&loc, class, &name], up, *r as u64));
            let mut path = parent.map(|(_, a)| a.clone()).unwrap_or_default();
            path.push((loc.clone(), name));
            nodes.insert(*r, (loc, path));
        }
        let mut groups: FastMap<u32, (String, Vec<(String, String)>)> = FastMap::default();
        for (r, g) in &defs.location_groups {
            let name = text(g.name, "group", *r as u64);
            let loc = all.unique(name.clone(), *r as u64);
            let cat = match g.kind {
                1 => "process",
                2 => "accelerator",
                _ => "group",
            };
            let parent = nodes.get(&g.parent);
            let up = parent.map(|(p, _)| p.as_str());
            head.push_back(container(symbols, [&loc, cat, &name], up, *r as u64));
            let mut path = parent.map(|(_, a)| a.clone()).unwrap_or_default();
            path.push((loc.clone(), name));
            groups.insert(*r, (loc, path));
        }
        for ((r, l), (_, loc, name)) in defs.locations.iter().zip(location_locs) {
            let parent = groups.get(&l.group);
            let up = parent.map(|(p, _)| p.as_str());
            let kind = location_kind(l.kind);
            head.push_back(container(symbols, [&loc, kind, &name], up, *r));
            all.locations.insert(*r, symbols.intern(&loc));
            let mut place = parent.map(|(_, a)| a.clone()).unwrap_or_default();
            place.push((loc, name));
            all.places.insert(*r, place);
        }
        all
    }
}

impl Containers {
    /// The locations whose event files are read: those `selection` keeps
    /// (all without one), and those recording a metric whose counters are
    /// on a location it keeps.
    fn read(&self, defs: &Definitions, selection: Option<&LocationSelection>) -> FastSet<u64> {
        let keeps = |l: &u64| match (selection, self.places.get(l)) {
            (Some(s), Some(place)) => {
                let (own, above) = place.split_last().expect("a location's own place");
                s.keeps(
                    (&own.0, &own.1),
                    above.iter().map(|(i, n)| (i.as_str(), n.as_str())),
                )
            }
            _ => true,
        };
        let mut read: FastSet<u64> = defs
            .locations
            .iter()
            .map(|(l, _)| *l)
            .filter(keeps)
            .collect();
        for m in defs.metrics.values() {
            if let Metric::Instance {
                recorder,
                scope_kind: 0,
                scope,
                ..
            } = m
            {
                if read.contains(scope) {
                    read.insert(*recorder);
                }
            }
        }
        read
    }
}

/// A `container` row: `loc`, `cat`, `name`, its parent, its OTF2 reference.
fn container(
    symbols: &Symbols,
    [loc, cat, name]: [&str; 3],
    parent: Option<&str>,
    r: u64,
) -> Record {
    let mut c = Record::new(Kind::Container);
    c.loc = symbols.intern(loc);
    c.cat = symbols.intern(cat);
    c.name = symbols.intern(name);
    if let Some(p) = parent {
        c.peer = symbols.intern(p);
    }
    c.push_attr(ID_ATTR, itoa::Buffer::new().format(r));
    c
}

/// The attribute of a container that keeps its OTF2 reference.
pub const ID_ATTR: &str = "otf2.id";

impl crate::pipe::SourceStage for Otf2Source {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(r) = self.head.pop_front() {
            *rec = r;
        } else {
            self.from_locations = true;
            if !self.locations.next_record(rec)? {
                self.crossings.report(&self.warnings);
                return Ok(false);
            }
        }
        let checked = self.check.check_made(rec);
        checked.map_err(|msg| Error::Record(msg).at(self.location()))?;
        Ok(true)
    }

    fn mark(&self) -> u64 {
        match self.from_locations {
            true => self.locations.mark().wrapping_add(1),
            false => 0,
        }
    }

    fn locate(&self, mark: u64) -> Location {
        match mark {
            0 => Location::File(self.name.clone()),
            m => self.locations.locate(m - 1),
        }
    }

    fn raw_line(&self) -> Option<&[u8]> {
        self.locations.raw_line().filter(|_| self.from_locations)
    }

    fn extra_columns(&self) -> &[String] {
        &[]
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// Its leading rows are declarations: the locations' bound.
    fn horizon(&self) -> Option<i64> {
        self.locations.horizon()
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        Supply {
            encode_here: !self.ahead,
            ..self.locations.agree(demand)
        }
    }
}

/// Reads the local definitions of `loc`, when it has any.
fn local_defs(files: &Files, loc: u64, chunk_size: u64) -> Result<Local> {
    let path = files.local_defs(loc);
    match crate::io::read_regular(&path) {
        Ok(data) => Local::parse(&path.display().to_string(), &data, chunk_size),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Local::default()),
        Err(e) => Err(Error::io(path.display().to_string(), e)),
    }
}
