//! What every location's rows are made from, built once from the global
//! definitions and shared: the timebase, and every name interned (regions,
//! locations, the ranks of each communicator, metrics, attributes, record
//! names).

use std::sync::Arc;

use super::super::catalogue::{family, EVENTS};
use super::super::defs::{Clock, Definitions, Group, Metric};
use crate::fasthash::FastMap;
use crate::model::hpc::{collective_name, metric_mode, paradigm_cat, REGION_ROLES};
use crate::model::nesting::Crossings;
use crate::model::record::{Record, Sym};
use crate::model::symbol::Symbols;

/// Ticks to stream nanoseconds, exactly: `(ticks − offset) × 10⁹ /
/// resolution` in 128-bit integers, rounded down.
#[derive(Debug, Clone, Copy)]
pub struct Timebase {
    offset: u64,
    resolution: u64,
    /// Nanoseconds per tick when that is a whole number (the usual case).
    ns_per_tick: Option<i128>,
}

impl Timebase {
    /// The timebase of `clock`.
    pub fn of(clock: &Clock) -> Timebase {
        let ns_per_tick = (1_000_000_000 % clock.resolution == 0)
            .then(|| (1_000_000_000 / clock.resolution) as i128);
        Timebase {
            offset: clock.offset,
            resolution: clock.resolution,
            ns_per_tick,
        }
    }

    /// Stream nanoseconds of `ticks`; `None` beyond the stream's range.
    #[inline]
    pub fn ns(&self, ticks: u64) -> Option<i64> {
        // Ticks after the offset whose product with 10^9 fits in a u64 (the
        // first 18 s of a GHz clock) take one 64-bit division.
        if let Some(d) = ticks.checked_sub(self.offset) {
            if self.ns_per_tick.is_none() && d <= u64::MAX / 1_000_000_000 {
                return i64::try_from(d * 1_000_000_000 / self.resolution).ok();
            }
        }
        let d = ticks as i128 - self.offset as i128;
        let ns = match self.ns_per_tick {
            Some(k) => d * k,
            None => (d * 1_000_000_000).div_euclid(self.resolution as i128),
        };
        i64::try_from(ns).ok()
    }
}

/// A communicator: its `comm` text and its ranks' locations.
#[derive(Debug, Clone)]
pub struct CommScope {
    /// Its `comm`: its name, or its reference (`comm_texts`).
    pub sym: Sym,
    /// The `loc` of each rank, when defined (shared by the communicators
    /// of one group).
    pub ranks: Arc<[Option<Sym>]>,
    /// `MPI_COMM_SELF` (OTF2 group type 6): rank 0 is the recording
    /// location.
    pub is_self: bool,
}

/// One value of a metric: its counter's name, `mode`, unit; and the
/// location it is a counter of, when not the recording one.
#[derive(Debug, Clone)]
pub struct MemberScope {
    /// The counter's name.
    pub name: Sym,
    /// `acc`, `abs` or `rel`.
    pub mode: &'static str,
    /// OTF2's timing of the value: `start`, `point`, `last`, `next`.
    pub timing: &'static str,
    /// Its unit, if any.
    pub unit: String,
    /// `mode`, `timing` and `unit` as a row's encoded `attrs`.
    pub attrs: String,
}

/// A member's names, its attributes encoded once.
fn member(name: Sym, mode: &'static str, timing: &'static str, unit: &str) -> MemberScope {
    let mut row = Record::default();
    row.push_attr("mode", mode);
    row.push_attr("timing", timing);
    if !unit.is_empty() {
        row.push_attr("unit", unit);
    }
    MemberScope {
        name,
        mode,
        timing,
        unit: unit.to_string(),
        attrs: row.attrs,
    }
}

/// A metric as its rows need it.
#[derive(Debug, Clone)]
pub struct MetricScope {
    /// Its values, in order (shared by the instances of a class).
    pub members: Arc<[MemberScope]>,
    /// The container the counters belong to (a metric instance's scope).
    pub loc: Option<Sym>,
}

/// Names and lookups shared by every location of an archive.
pub struct Scope {
    /// The global definitions.
    pub defs: Definitions,
    /// Ticks to ns.
    pub time: Timebase,
    /// Region name and category.
    pub regions: FastMap<u32, (Sym, Sym)>,
    /// Each location's `loc`.
    pub locations: FastMap<u64, Sym>,
    /// Communicators and their ranks.
    pub comms: FastMap<u32, CommScope>,
    /// Each RMA window's text, as communicators have theirs.
    pub rma_wins: FastMap<u32, String>,
    /// Metrics and their values' counters.
    pub metrics: FastMap<u32, MetricScope>,
    /// Record names, by id from the catalogue's first.
    pub records: Vec<Sym>,
    /// The `cat` of each record's rows (its family), likewise.
    pub families: Vec<Sym>,
    /// Collective operation names, by number.
    pub collectives: Vec<Sym>,
    /// The pipeline's symbols.
    pub symbols: Symbols,
    /// The parameter of rows written whole (`tracepipe.row`), if defined.
    pub row_parameter: Option<u32>,
    /// Written by tracepipe from a stream: frames left open stay open.
    pub from_stream: bool,
    /// How far a row may begin before its event: 0 where no row is kept
    /// whole and no attribute sets a row's `time` or `end`, else what the
    /// writer declared (`LEAD_PROPERTY`); unknown otherwise. What bounds a
    /// location's horizon.
    pub lead: Option<i64>,
    /// The `LEAVE`s that did not nest, on every location.
    pub crossings: Crossings,
}

impl Scope {
    /// Interns the names of `defs`; `locations` are the locations' `loc`s.
    pub fn new(
        defs: Definitions,
        locations: FastMap<u64, Sym>,
        time: Timebase,
        symbols: &Symbols,
    ) -> Scope {
        let mut scope = Scope {
            time,
            regions: FastMap::default(),
            locations,
            comms: FastMap::default(),
            rma_wins: FastMap::default(),
            metrics: FastMap::default(),
            records: EVENTS.iter().map(|s| symbols.intern(s.name)).collect(),
            families: EVENTS
                .iter()
                .map(|s| symbols.intern(family(s.id)))
                .collect(),
            collectives: (0..23)
                .map(|op| symbols.intern(&collective_name(op)))
                .collect(),
            symbols: symbols.clone(),
            row_parameter: None,
            from_stream: false,
            lead: Some(0),
            crossings: Crossings::default(),
            defs,
        };
        scope.row_parameter = scope.defs.parameters.iter().find_map(|(&p, &(name, _))| {
            (scope.defs.string(name) == Some(super::super::ROW_PARAMETER)).then_some(p)
        });
        let moves_times = scope.defs.attributes.values().any(|d| {
            let column = scope.defs.string(d.name);
            let column = column.and_then(|n| n.strip_prefix(super::super::COLUMN_ATTR));
            matches!(column, Some("time" | "end"))
        });
        scope.lead = (scope.row_parameter.is_none() && !moves_times).then_some(0);
        scope.regions = scope.region_names();
        scope.comms = scope.comm_ranks();
        let wins = scope.defs.rma_wins.iter().map(|(&r, &(name, _))| (r, name));
        scope.rma_wins = unique_texts(wins, &scope.defs);
        scope.metrics = scope.metric_members();
        scope
    }

    /// A defined string, or `WHAT REF`.
    pub fn text(&self, r: u32, what: &str) -> String {
        match self.defs.string(r) {
            Some(s) => s.to_string(),
            None => format!("{what} {r}"),
        }
    }

    fn region_names(&self) -> FastMap<u32, (Sym, Sym)> {
        let mut out = FastMap::default();
        for (&r, region) in &self.defs.regions {
            let name = self.symbols.intern(&self.text(region.name, "region"));
            let cat = paradigm_cat(region.paradigm)
                .or_else(|| {
                    REGION_ROLES
                        .get(region.role as usize)
                        .filter(|_| region.role != 0)
                        .map(|s| s.to_string())
                })
                .or_else(|| {
                    // A region of no paradigm or role: its description
                    // (tracepipe writes a row's category there).
                    self.defs.string(region.description).map(str::to_string)
                })
                .map(|c| self.symbols.intern(&c))
                .unwrap_or_default();
            out.insert(r, (name, cat));
        }
        out
    }

    /// Rank r of a communicator is member r of its group; a group of ranks
    /// (OTF2 group type 5) indexes the group of locations (type 4) of its
    /// paradigm, whose members are location ids. Communicators of one
    /// group share its table, made once.
    fn comm_ranks(&self) -> FastMap<u32, CommScope> {
        let groups = &self.defs.groups;
        let texts = self.comm_texts();
        // The group of locations of each paradigm: the first by reference.
        let mut bases: FastMap<u8, (u32, &Group)> = FastMap::default();
        for (&r, g) in groups.iter().filter(|(_, g)| g.kind == 4) {
            let base = bases.entry(g.paradigm).or_insert((r, g));
            if r < base.0 {
                *base = (r, g);
            }
        }
        let mut tables: FastMap<u32, Arc<[Option<Sym>]>> = FastMap::default();
        let mut out = FastMap::default();
        for (&c, comm) in &self.defs.comms {
            let sym = self.symbols.intern(&texts[&c]);
            let ranks = tables
                .entry(comm.group)
                .or_insert_with(|| self.rank_table(groups.get(&comm.group), &bases))
                .clone();
            let is_self = groups.get(&comm.group).is_some_and(|g| g.kind == 6);
            let scope = CommScope {
                sym,
                ranks,
                is_self,
            };
            out.insert(c, scope);
        }
        out
    }

    /// The `loc` of each rank of a communicator's group (see
    /// [`Scope::comm_ranks`]).
    fn rank_table(
        &self,
        group: Option<&Group>,
        bases: &FastMap<u8, (u32, &Group)>,
    ) -> Arc<[Option<Sym>]> {
        let location = |id: &u64| self.locations.get(id).copied();
        match group {
            Some(g) if g.kind == 4 => g.members.iter().map(location).collect(),
            Some(g) if g.kind == 5 => {
                let base = bases.get(&g.paradigm).map(|(_, b)| b);
                let at = |m: u64| base?.members.get(usize::try_from(m).ok()?);
                g.members
                    .iter()
                    .map(|&m| at(m).and_then(location))
                    .collect()
            }
            _ => Arc::from([]),
        }
    }

    /// Each communicator's `comm`: its name where no other communicator
    /// has it (`MPI_COMM_WORLD`), else its reference.
    fn comm_texts(&self) -> FastMap<u32, String> {
        let names = self.defs.comms.iter().map(|(&r, c)| (r, c.name));
        unique_texts(names, &self.defs)
    }

    /// Each metric's values: a class's members, made once per class and
    /// shared by its instances.
    fn metric_members(&self) -> FastMap<u32, MetricScope> {
        let mut classes: FastMap<u32, Arc<[MemberScope]>> = FastMap::default();
        let mut out = FastMap::default();
        for (&m, metric) in &self.defs.metrics {
            let (class, loc) = match metric {
                Metric::Class { .. } => (m, None),
                Metric::Instance {
                    class,
                    scope_kind,
                    scope,
                    ..
                } => (*class, self.scope_loc(*scope_kind, *scope)),
            };
            let Some(Metric::Class { members }) = self.defs.metrics.get(&class) else {
                continue;
            };
            let members = classes
                .entry(class)
                .or_insert_with(|| members.iter().map(|&r| self.metric_member(r)).collect())
                .clone();
            out.insert(m, MetricScope { members, loc });
        }
        out
    }

    /// A metric member's counter name, mode, timing and unit.
    fn metric_member(&self, r: u32) -> MemberScope {
        match self.defs.metric_members.get(&r) {
            Some(d) => {
                let (mode, timing) = metric_mode(d.mode);
                let unit = self.defs.string(d.unit).unwrap_or("");
                let name = self.symbols.intern(&self.text(d.name, "metric"));
                member(name, mode, timing, unit)
            }
            None => {
                let name = self.symbols.intern(&format!("metric member {r}"));
                member(name, "abs", "point", "")
            }
        }
    }

    /// The container a metric instance's scope names: a location (scope
    /// kind 0); groups and system tree nodes keep the recording location.
    fn scope_loc(&self, kind: u8, scope: u64) -> Option<Sym> {
        match kind {
            0 => self.locations.get(&scope).copied(),
            _ => None,
        }
    }
}

/// The text of each definition of `named` (its reference and the string of
/// its name): its name where no other of them has it, else its reference
/// (`comm R`-like `#R` where that number is another's name), so that texts
/// name definitions one to one.
fn unique_texts(
    named: impl Iterator<Item = (u32, u32)> + Clone,
    defs: &Definitions,
) -> FastMap<u32, String> {
    let name = |s: u32| defs.string(s).filter(|n| !n.is_empty());
    let mut uses: FastMap<&str, u32> = FastMap::default();
    for (_, s) in named.clone() {
        if let Some(n) = name(s) {
            *uses.entry(n).or_default() += 1;
        }
    }
    named
        .map(|(r, s)| {
            let text = match name(s).filter(|n| uses[n] == 1) {
                Some(n) => n.to_string(),
                None if uses.contains_key(itoa::Buffer::new().format(r)) => format!("#{r}"),
                None => r.to_string(),
            };
            (r, text)
        })
        .collect()
}
