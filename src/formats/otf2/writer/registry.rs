//! The definitions a written archive needs, made as rows name them: strings
//! (written to the global definitions file at once, so rows' unique texts
//! do not stay in memory), locations and their groups, regions, attributes,
//! communicators and their ranks, metrics, and the row parameter. All but
//! the strings are written at the end ([`Registry::finish`]).

use std::fmt::Write as _;
use std::path::PathBuf;

use super::super::archive::def;
use super::super::encode::Buf;
use super::super::ROW_PARAMETER;
use super::chunks::ChunkFile;
use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::record::Sym;

/// OTF2's type of string attributes (`OTF2_TYPE_STRING`).
pub const TYPE_STRING: u8 = 11;

/// OTF2's parameter types (`OTF2_ParameterType`): a string, a signed and
/// an unsigned 64-bit integer.
pub const PARAMETER_STRING: u8 = 0;
/// See [`PARAMETER_STRING`].
pub const PARAMETER_INT64: u8 = 1;
/// See [`PARAMETER_STRING`].
pub const PARAMETER_UINT64: u8 = 2;

/// Paradigm MPI (`OTF2_PARADIGM_MPI`).
const PARADIGM_MPI: u8 = 4;

/// Distinct attribute values remembered to share their strings; past it the
/// memory is cleared (rows' values are not kept without bound).
const VALUES_REMEMBERED: usize = 1 << 16;

/// A communicator: its reference, name, and members (world ranks) in the
/// order they took part.
struct Comm {
    r: u32,
    name: u32,
    members: Vec<u32>,
    rank_of: FastMap<u32, u32>,
}

/// A metric member and the class of it alone that `METRIC` records name.
struct Metric {
    name: u32,
    mode: u8,
    value_type: u8,
    unit: u32,
}

/// Definitions made so far.
pub struct Registry {
    file: ChunkFile,
    buf: Buf,
    strings: FastMap<String, u32>,
    values: FastMap<String, u32>,
    next_string: u32,
    /// Location groups by name, and their names and name strings, by
    /// index (their references are given at the end, in name order).
    groups: FastMap<String, u32>,
    group_names: Vec<(String, u32)>,
    /// Locations: `loc`, name string and group index, by index (their ids
    /// are given at the end, in `loc` order, so an archive written again
    /// from what it reads back numbers them the same).
    locations: Vec<(String, u32, u32)>,
    regions: FastMap<(Sym, Sym), u32>,
    region_defs: Vec<([u32; 2], u8, u8)>,
    attributes: FastMap<String, u32>,
    comms: FastMap<Sym, usize>,
    comm_defs: Vec<Comm>,
    /// World ranks: locations taking part in any communicator.
    world: Vec<u32>,
    world_rank: FastMap<u32, u32>,
    metrics: FastMap<String, u32>,
    metric_defs: Vec<Metric>,
    /// Parameters of `event` rows, by name and OTF2 parameter type.
    parameters: FastMap<(Sym, u8), u32>,
    /// Name string and type of each parameter, by reference.
    parameter_defs: Vec<(u32, u8)>,
    /// RMA windows by their text, and each one's name string and
    /// communicator (an index of `comm_defs`), by reference.
    rma_wins: FastMap<String, u32>,
    rma_win_defs: Vec<(u32, Option<usize>)>,
    row_parameter: Option<u32>,
    key: String,
}

impl Registry {
    /// Definitions written to the global definitions file at `path`.
    pub fn create(path: PathBuf, chunk_size: u64) -> Result<Registry> {
        Ok(Registry {
            file: ChunkFile::create(path, chunk_size, 1 << 16)?,
            buf: Buf::default(),
            strings: FastMap::default(),
            values: FastMap::default(),
            next_string: 0,
            groups: FastMap::default(),
            group_names: Vec::new(),
            locations: Vec::new(),
            regions: FastMap::default(),
            region_defs: Vec::new(),
            attributes: FastMap::default(),
            comms: FastMap::default(),
            comm_defs: Vec::new(),
            world: Vec::new(),
            world_rank: FastMap::default(),
            metrics: FastMap::default(),
            metric_defs: Vec::new(),
            parameters: FastMap::default(),
            parameter_defs: Vec::new(),
            rma_wins: FastMap::default(),
            rma_win_defs: Vec::new(),
            row_parameter: None,
            key: String::new(),
        })
    }

    /// A new string definition of `text` (not shared).
    pub fn fresh_string(&mut self, text: &str) -> Result<u32> {
        crate::bytes::refuse_nul(text, "OTF2")?;
        let r = self.next_string;
        self.next_string += 1;
        self.buf.clear();
        def::string(&mut self.buf, r, text);
        self.file.push(&self.buf.bytes)?;
        Ok(r)
    }

    /// The string of a name (kept: names are few).
    pub fn string(&mut self, text: &str) -> Result<u32> {
        if let Some(&r) = self.strings.get(text) {
            return Ok(r);
        }
        let r = self.fresh_string(text)?;
        self.strings.insert(text.to_string(), r);
        Ok(r)
    }

    /// The string of an attribute value, shared while remembered.
    pub fn value_string(&mut self, text: &str) -> Result<u32> {
        if let Some(&r) = self.values.get(text) {
            return Ok(r);
        }
        if self.values.len() >= VALUES_REMEMBERED {
            self.values.clear();
        }
        let r = self.fresh_string(text)?;
        self.values.insert(text.to_string(), r);
        Ok(r)
    }

    /// Defines the next location (its index): `loc` `A/B` is location `B`
    /// of group `A` (the reader names it back `A/B`), any other `loc` (no
    /// `/`, or one at either end) a location of that name in a group of no
    /// name, which the reader names back as it was.
    pub fn location(&mut self, loc: &str) -> Result<u32> {
        let (group, name) = loc
            .rsplit_once('/')
            .filter(|(group, name)| !group.is_empty() && !name.is_empty())
            .unwrap_or(("", loc));
        let g = match self.groups.get(group) {
            Some(&g) => g,
            None => {
                let g = self.group_names.len() as u32;
                let s = self.string(group)?;
                self.group_names.push((group.to_string(), s));
                self.groups.insert(group.to_string(), g);
                g
            }
        };
        let s = self.string(name)?;
        self.locations.push((loc.to_string(), s, g));
        Ok(self.locations.len() as u32 - 1)
    }

    /// The final ids of the locations, by index: their order by `loc`.
    pub fn location_ids(&self) -> Vec<u64> {
        ids_by_name(self.locations.iter().map(|(loc, ..)| loc.as_str()))
    }

    /// The region of frames named `name` of category `cat`, if defined.
    pub fn region_of(&self, name: Sym, cat: Sym) -> Option<u32> {
        self.regions.get(&(name, cat)).copied()
    }

    /// The region of frames named `name` of category `cat`: the category is
    /// the paradigm or role it names, else the region's description.
    pub fn region(&mut self, (name, cat): (Sym, Sym), texts: (&str, &str)) -> Result<u32> {
        if let Some(&r) = self.regions.get(&(name, cat)) {
            return Ok(r);
        }
        let (paradigm, role) = region_kind(texts.1);
        let description = match (paradigm, role) {
            (0, 0) if !texts.1.is_empty() => self.string(texts.1)?,
            _ => u32::MAX,
        };
        let strings = [self.string(texts.0)?, description];
        let r = self.region_defs.len() as u32;
        self.region_defs.push((strings, role, paradigm));
        self.regions.insert((name, cat), r);
        Ok(r)
    }

    /// The string attribute named `key`.
    pub fn attribute(&mut self, key: &str) -> Result<u32> {
        if let Some(&r) = self.attributes.get(key) {
            return Ok(r);
        }
        let r = self.attributes.len() as u32;
        self.string(key)?;
        self.attributes.insert(key.to_string(), r);
        Ok(r)
    }

    /// The communicator named `name` (`text`), by its index, which is its
    /// reference: communicators are numbered from 0 in the order defined,
    /// as OTF2's readers want them, and keep their `comm` as their name
    /// (the reader gives it back).
    pub fn comm(&mut self, name: Sym, text: &str) -> Result<usize> {
        if let Some(&c) = self.comms.get(&name) {
            return Ok(c);
        }
        let r = self.comm_defs.len() as u32;
        let name_string = self.string(text)?;
        self.comm_defs.push(Comm {
            r,
            name: name_string,
            members: Vec::new(),
            rank_of: FastMap::default(),
        });
        self.comms.insert(name, self.comm_defs.len() - 1);
        Ok(self.comm_defs.len() - 1)
    }

    /// The reference of communicator `c` (an index [`Registry::comm`] gave).
    pub fn comm_ref(&self, c: usize) -> u32 {
        self.comm_defs[c].r
    }

    /// The rank of location `loc` in communicator `c` (given in the order
    /// locations take part).
    pub fn rank(&mut self, c: usize, loc: u32) -> u32 {
        let world = match self.world_rank.get(&loc) {
            Some(&w) => w,
            None => {
                self.world.push(loc);
                let w = self.world.len() as u32 - 1;
                self.world_rank.insert(loc, w);
                w
            }
        };
        let comm = &mut self.comm_defs[c];
        *comm.rank_of.entry(loc).or_insert_with(|| {
            comm.members.push(world);
            comm.members.len() as u32 - 1
        })
    }

    /// The metric (a class of one member) of counters named `name` with
    /// OTF2 mode `mode`, value type `value_type` (8 i64, 10 double) and
    /// unit `unit`.
    pub fn metric(&mut self, name: &str, mode: u8, value_type: u8, unit: &str) -> Result<u32> {
        self.key.clear();
        let _ = write!(self.key, "{name}\0{mode}\0{value_type}\0{unit}");
        if let Some(&m) = self.metrics.get(&self.key) {
            return Ok(m);
        }
        let metric = Metric {
            name: self.string(name)?,
            mode,
            value_type,
            unit: self.string(unit)?,
        };
        self.metric_defs.push(metric);
        let m = self.metric_defs.len() as u32 - 1;
        self.metrics.insert(self.key.clone(), m);
        Ok(m)
    }

    /// The parameter whose strings are whole rows ([`ROW_PARAMETER`]).
    pub fn row_parameter(&mut self) -> Result<u32> {
        if let Some(p) = self.row_parameter {
            return Ok(p);
        }
        let p = self.new_parameter(ROW_PARAMETER, PARAMETER_STRING)?;
        self.row_parameter = Some(p);
        Ok(p)
    }

    /// The parameter of `event` rows named `name` (its text `text`) whose
    /// values have OTF2 parameter type `kind` ([`PARAMETER_STRING`],
    /// [`PARAMETER_INT64`], [`PARAMETER_UINT64`]).
    pub fn parameter(&mut self, name: Sym, text: &str, kind: u8) -> Result<u32> {
        if let Some(&p) = self.parameters.get(&(name, kind)) {
            return Ok(p);
        }
        let p = self.new_parameter(text, kind)?;
        self.parameters.insert((name, kind), p);
        Ok(p)
    }

    /// The RMA window named `name`, and its communicator (an index
    /// [`Registry::comm`] gave) when its creation says it.
    pub fn rma_win(&mut self, name: &str, comm: Option<usize>) -> Result<u32> {
        let w = match self.rma_wins.get(name) {
            Some(&w) => w,
            None => {
                let s = self.string(name)?;
                self.rma_win_defs.push((s, None));
                let w = self.rma_win_defs.len() as u32 - 1;
                self.rma_wins.insert(name.to_string(), w);
                w
            }
        };
        if comm.is_some() {
            self.rma_win_defs[w as usize].1 = comm;
        }
        Ok(w)
    }

    fn new_parameter(&mut self, name: &str, kind: u8) -> Result<u32> {
        let name = self.string(name)?;
        self.parameter_defs.push((name, kind));
        Ok(self.parameter_defs.len() as u32 - 1)
    }

    fn put(&mut self, write: impl FnOnce(&mut Buf)) -> Result<()> {
        self.buf.clear();
        write(&mut self.buf);
        self.file.push(&self.buf.bytes)
    }

    /// Writes the definitions other than strings and ends the file; returns
    /// how many definitions it holds. `clock`: ticks per second, the
    /// trace's length in ticks, its real time origin ([`u64::MAX`]: none).
    /// `events`: each location's number of events, by index.
    pub fn finish(
        &mut self,
        (resolution, length, realtime): (u64, u64, u64),
        events: &[u64],
    ) -> Result<u64> {
        let machine = self.string("machine")?;
        let node_class = self.string("node")?;
        let mpi = self.string("MPI")?;
        self.put(|b| def::clock(b, resolution, 0, length, realtime))?;
        self.put(|b| def::node(b, 0, machine, node_class, u32::MAX))?;
        let groups = ids_by_name(self.group_names.iter().map(|(g, _)| g.as_str()));
        let mut defined: Vec<(u64, u32)> = groups
            .iter()
            .copied()
            .zip(self.group_names.iter().map(|g| g.1))
            .collect();
        defined.sort_unstable();
        for (g, name) in defined {
            self.put(|b| def::group_of_locations(b, g as u32, name, 1, 0))?;
        }
        let ids = self.location_ids();
        let mut defined: Vec<(u64, u32, u32, u64)> = ids
            .iter()
            .zip(&self.locations)
            .zip(events)
            .map(|((&l, (_, name, group)), &n)| (l, *name, groups[*group as usize] as u32, n))
            .collect();
        defined.sort_unstable();
        for (l, name, group, n) in defined {
            self.put(|b| def::location_of(b, l, name, 1, group, n))?;
        }
        let world = std::mem::take(&mut self.world);
        self.world = world.iter().map(|&l| ids[l as usize] as u32).collect();
        for (r, (strings, role, paradigm)) in std::mem::take(&mut self.region_defs)
            .into_iter()
            .enumerate()
        {
            self.put(|b| def::region(b, r as u32, strings, role, paradigm))?;
        }
        let mut attributes: Vec<(String, u32)> =
            std::mem::take(&mut self.attributes).into_iter().collect();
        attributes.sort_by_key(|(_, r)| *r);
        for (key, r) in attributes {
            let name = self.string(&key)?;
            self.put(|b| def::attribute(b, r, name, TYPE_STRING))?;
        }
        self.comms_and_groups(mpi)?;
        for (m, metric) in std::mem::take(&mut self.metric_defs)
            .into_iter()
            .enumerate()
        {
            let m = m as u32;
            self.put(|b| {
                def::metric_member(
                    b,
                    m,
                    metric.name,
                    metric.mode,
                    metric.value_type,
                    metric.unit,
                )
            })?;
            self.put(|b| def::metric_class(b, m, &[m]))?;
        }
        for (p, (name, kind)) in std::mem::take(&mut self.parameter_defs)
            .into_iter()
            .enumerate()
        {
            self.put(|b| def::parameter(b, p as u32, name, kind))?;
        }
        for (w, (name, comm)) in std::mem::take(&mut self.rma_win_defs)
            .into_iter()
            .enumerate()
        {
            // A communicator's reference is its index.
            let comm = comm.map_or(u32::MAX, |c| c as u32);
            self.put(|b| def::rma_win(b, w as u32, name, comm))?;
        }
        self.file.finish()
    }

    /// The world group (type 4: the MPI locations by world rank), a group of
    /// ranks (type 5) per communicator, and the communicators.
    fn comms_and_groups(&mut self, mpi: u32) -> Result<()> {
        if self.comm_defs.is_empty() {
            return Ok(());
        }
        let world: Vec<u64> = self.world.iter().map(|&l| l as u64).collect();
        self.put(|b| def::group(b, 0, mpi, 4, PARADIGM_MPI, &world))?;
        for (i, comm) in std::mem::take(&mut self.comm_defs).into_iter().enumerate() {
            let g = i as u32 + 1;
            let members: Vec<u64> = comm.members.iter().map(|&w| w as u64).collect();
            self.put(|b| def::group(b, g, comm.name, 5, PARADIGM_MPI, &members))?;
            self.put(|b| def::comm(b, comm.r, comm.name, g))?;
        }
        Ok(())
    }
}

/// Numbers given in the order of names, the empty name last: each name's
/// number, by index.
fn ids_by_name<'a>(names: impl Iterator<Item = &'a str>) -> Vec<u64> {
    let names: Vec<&str> = names.collect();
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| (names[i].is_empty(), names[i]));
    let mut ids = vec![0; names.len()];
    for (id, i) in order.into_iter().enumerate() {
        ids[i] = id as u64;
    }
    ids
}

/// The paradigm and role whose stream category is `cat` (the reader's
/// names: docs/formats.md); (0, 0) when neither is.
fn region_kind(cat: &str) -> (u8, u8) {
    use crate::model::hpc::{paradigm_cat, PARADIGMS, REGION_ROLES};
    if !cat.is_empty() {
        if let Some(p) =
            (0..PARADIGMS.len() as u8).find(|&p| paradigm_cat(p).as_deref() == Some(cat))
        {
            return (p, 0);
        }
        if let Some(r) = REGION_ROLES.iter().skip(1).position(|r| *r == cat) {
            return (0, r as u8 + 1);
        }
    }
    (0, 0)
}
