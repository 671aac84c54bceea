//! The `imbalance` report: per function, how unevenly its time is spread
//! over the locations. A function's time on each location (exclusive by
//! default) is the profile's per location and name; the mean is over every
//! location that has a frame, a location without the function counting
//! zero, so `max − mean` is what the run would save if the work were even
//! (Scalasca's load imbalance). Merges exactly: its partial state is the
//! profile's per location and name.
//!
//! **Kinds**: only locations of one kind are compared (their `container`
//! row's `cat`, docs/stream.md): by default every kind but accelerator
//! streams (`gpu`) and metric recorders (`metric`), so a trace of MPI ranks
//! with GPU streams compares its CPU threads, as Cube does; `--kinds`
//! chooses. One warning says which locations with frames were left out.

use crate::error::{Result, Warnings};
use crate::fasthash::{FastMap, FastSet};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{natural_order, Labels};
use crate::stats::profile::{Profile, ProfileKey};
use crate::stats::{Report, Style};
use crate::table::{Cell, TableWriter};

/// The `imbalance` report.
pub struct Imbalance {
    profile: Profile,
    inclusive: bool,
    per_location: bool,
    kinds: Kinds,
    /// The kind of each location left out, decided at its `container` row.
    not_compared: FastMap<Sym, Sym>,
    /// The locations with frames left out, by kind.
    left_out: FastMap<Sym, FastSet<Sym>>,
    warnings: Warnings,
}

/// Which kinds of location `imbalance` compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kinds {
    /// Every kind but `gpu` and `metric` (the default).
    Cpu,
    /// Every location.
    All,
    /// Locations whose `container` `cat` is one of these.
    Only(Vec<String>),
}

/// The kinds of location left out by default: accelerator streams and
/// metric recorders (the OTF2 reader's location types 2 and 3).
const NOT_CPU: [&str; 2] = ["gpu", "metric"];

impl Kinds {
    /// The kinds `--kinds` names (`all`, or a list); `None`: the default.
    pub fn parse(list: Option<&[String]>) -> Kinds {
        match list {
            None => Kinds::Cpu,
            Some(l) if l.iter().any(|k| k == "all") => Kinds::All,
            Some(l) => Kinds::Only(l.to_vec()),
        }
    }

    fn keeps(&self, kind: &str) -> bool {
        match self {
            Kinds::Cpu => !NOT_CPU.contains(&kind),
            Kinds::All => true,
            Kinds::Only(list) => list.iter().any(|k| k == kind),
        }
    }
}

/// One function's time on each location (by the locations' order).
struct Spread {
    name: String,
    times: Vec<i128>,
}

impl Spread {
    /// The location (index) with the most time, the first of equals.
    fn max_at(&self) -> usize {
        let max = self.times.iter().copied().max().unwrap_or(0);
        self.times.iter().position(|&t| t == max).unwrap_or(0)
    }

    fn sum(&self) -> i128 {
        self.times.iter().sum()
    }
}

impl Imbalance {
    /// The report over exclusive (or `inclusive`) times of the locations
    /// of `kinds`, with one column per location when `per_location`;
    /// `warnings` is told which were left out; identifiers are in
    /// `symbols`.
    pub fn new(
        symbols: Symbols,
        (inclusive, per_location): (bool, bool),
        kinds: Kinds,
        warnings: Warnings,
    ) -> Imbalance {
        Imbalance {
            profile: Profile::new(ProfileKey::LocName, None, symbols),
            inclusive,
            per_location,
            kinds,
            not_compared: FastMap::default(),
            left_out: FastMap::default(),
            warnings,
        }
    }

    /// Whether the frames of `rec`'s location are compared; notes it when
    /// not.
    fn compares(&mut self, rec: &Record) -> bool {
        let Some(&kind) = self.not_compared.get(&rec.loc) else {
            return true;
        };
        self.left_out.entry(kind).or_default().insert(rec.loc);
        false
    }

    /// Says which locations with frames were left out, and how to keep them.
    fn tell_left_out(&self) {
        if self.left_out.is_empty() {
            return;
        }
        let symbols = self.profile.symbols();
        let mut kinds: Vec<(String, usize)> = self
            .left_out
            .iter()
            .map(|(k, locs)| (symbols.text(*k).to_string(), locs.len()))
            .collect();
        kinds.sort();
        let list: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} `{k}`")).collect();
        self.warnings.warn(format!(
            "imbalance compares locations of one kind: left out {} location(s) with frames ({}); --kinds KIND,... or --kinds all to choose",
            kinds.iter().map(|(_, n)| n).sum::<usize>(),
            list.join(", ")
        ));
    }

    /// The locations in natural order, and each function's spread over
    /// them, largest `max − mean` first (ties by name).
    fn spreads(&self, labels: &Labels) -> Result<(Vec<String>, Vec<Spread>)> {
        let rows = self.profile.times(self.inclusive, labels)?;
        let mut locations: Vec<String> = rows.iter().map(|(key, _)| key[0].clone()).collect();
        locations.sort_by(|a, b| natural_order(a, b));
        locations.dedup();
        let column: FastMap<&str, usize> = locations
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_str(), i))
            .collect();
        let mut by_name: FastMap<&str, Spread> = FastMap::default();
        for (key, time) in &rows {
            let spread = by_name.entry(key[1].as_str()).or_insert_with(|| Spread {
                name: key[1].clone(),
                times: vec![0; locations.len()],
            });
            spread.times[column[key[0].as_str()]] += time;
        }
        let n = locations.len() as i128;
        let excess = |s: &Spread| s.times[s.max_at()] * n - s.sum();
        let mut spreads: Vec<Spread> = by_name.into_values().collect();
        spreads.sort_by(|a, b| excess(b).cmp(&excess(a)).then(a.name.cmp(&b.name)));
        Ok((locations, spreads))
    }
}

impl RecordSink for Imbalance {
    fn reads(&self) -> Reads {
        self.profile.reads()
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Container => {
                let kind = self.profile.symbols().text(rec.cat);
                match self.kinds.keeps(kind) {
                    true => self.not_compared.remove(&rec.loc),
                    false => self.not_compared.insert(rec.loc, rec.cat),
                };
            }
            Kind::Enter | Kind::Leave | Kind::State if !self.compares(rec) => return Ok(()),
            _ => {}
        }
        self.profile.write(rec)
    }

    fn finish(&mut self) -> Result<()> {
        self.tell_left_out();
        self.profile.finish()
    }
}

/// The report's fixed columns.
const COLUMNS: [&str; 8] = [
    "name",
    "locations",
    "mean",
    "min",
    "max",
    "max_loc",
    "max_over_mean",
    "max_minus_mean",
];

impl Report for Imbalance {
    fn columns(&self, labels: &Labels) -> Vec<String> {
        let mut columns: Vec<String> = COLUMNS.map(String::from).to_vec();
        if self.per_location {
            // Printing follows the stream's end, when every location is known.
            let (locations, _) = self.spreads(labels).unwrap_or_default();
            columns.extend(locations);
        }
        columns
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        self.profile.partial(labels)
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        self.profile.absorb(fields)
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let (locations, mut spreads) = self.spreads(labels)?;
        spreads.truncate(style.top.unwrap_or(usize::MAX));
        let n = locations.len() as u64;
        for spread in &spreads {
            let at = spread.max_at();
            let (max, sum) = (spread.times[at], spread.sum());
            let min = spread.times.iter().copied().min().unwrap_or(0);
            let ratio = max as f64 * n as f64 / sum as f64;
            let mut cells = vec![
                Cell::Text(&spread.name),
                Cell::UInt(n),
                style.mean(sum, n),
                style.total(min),
                style.total(max),
                Cell::Text(&locations[at]),
                if sum > 0 {
                    Cell::Real(ratio, 3)
                } else {
                    Cell::Empty
                },
                style.mean(max * i128::from(n) - sum, n),
            ];
            if self.per_location {
                cells.extend(spread.times.iter().map(|&t| style.total(t)));
            }
            table.row(&cells)?;
        }
        Ok(())
    }
}
