//! K-way merge of time-ordered sources into one time-ordered source.
//!
//! Memory: one buffered record per input plus the leading `meta` rows. Ties go to
//! the earlier input, and rows of one input keep their order. Structural rows
//! (`container`) ride with the row before them in their own input, so they still
//! precede every use.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

use crate::error::{Error, Location, Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::record::{Column, ColumnSet, Kind, Record, Sym, META_ORIGIN};
use crate::model::symbol::Symbols;
use crate::pipe::{Demand, Reads, RecordSource, Supply};

struct MergeInput {
    source: Box<dyn RecordSource>,
    head: Record,
    /// Completion time of the last row read from this input (the key that
    /// structural rows inherit).
    clock: i64,
    /// Added to every time of this input to align origins.
    shift: i64,
    /// Its rows are passed on as the input read them: not moved to another
    /// clock, not renamed, and of the merged columns.
    as_read: bool,
}

/// Merges several sources by completion time.
///
/// When inputs declare different `origin` meta values, their times are shifted
/// to the earliest origin so that they are compared on one clock.
pub struct Merger {
    lanes: Vec<MergeInput>,
    heap: BinaryHeap<Reverse<(i64, u64, usize)>>,
    metas: std::vec::IntoIter<Record>,
    /// Input whose head was handed out and must be refilled before the next pop.
    refill: Option<usize>,
    last: Option<usize>,
    extra: Vec<String>,
    /// Each location declared so far: the input that declared it, and its
    /// type, name and parent, so another input declaring it differently is
    /// caught. Memory: one entry per location.
    declared: FastMap<Sym, Declaration>,
    symbols: Symbols,
    /// Prefixes put before each input's locations (`--prefix-inputs`), and
    /// the prefixed symbol of each (input, location) met.
    prefixes: Option<Vec<String>>,
    prefixed: FastMap<(usize, Sym), Sym>,
    /// A location was declared by two inputs: rows are then checked for
    /// two inputs putting rows on one location (two runs on one track).
    shared: bool,
    /// Two runs on one track were warned about (once).
    warned_overlap: bool,
    warnings: Warnings,
}

struct Declaration {
    lane: usize,
    cat: Sym,
    name: Sym,
    peer: Sym,
    /// Declared by another input too.
    shared: bool,
    /// The first input that put a row on it.
    rows_from: Option<usize>,
}

impl Merger {
    /// Reads the leading `meta` rows of every source (whose identifiers are
    /// in `symbols`) and the first row after them; inputs that cannot be
    /// aligned are reported to `warnings`.
    pub fn new(
        sources: Vec<Box<dyn RecordSource>>,
        symbols: &Symbols,
        warnings: &Warnings,
    ) -> Result<Merger> {
        let mut lanes = Vec::with_capacity(sources.len());
        let mut metas: Vec<Vec<Record>> = Vec::new();
        let mut extra: Vec<String> = Vec::new();
        let mut with_head = Vec::new();
        for (i, mut source) in sources.into_iter().enumerate() {
            for name in source.extra_columns() {
                if !extra.contains(name) {
                    extra.push(name.clone());
                }
            }
            let mut own = Vec::new();
            let mut head = Record::default();
            let mut has_head = false;
            while source.next_record(&mut head)? {
                if head.kind == Kind::Meta {
                    own.push(head.clone());
                } else {
                    has_head = true;
                    break;
                }
            }
            metas.push(own);
            lanes.push(MergeInput {
                source,
                head,
                clock: i64::MIN,
                shift: 0,
                as_read: false,
            });
            if has_head {
                with_head.push(i);
            }
        }
        let merged_metas = align_origins(&mut lanes, metas, warnings)?;
        for lane in &mut lanes {
            lane.as_read = lane.shift == 0 && lane.source.extra_columns() == extra.as_slice();
        }
        let symbols = symbols.clone();
        let mut heap = BinaryHeap::new();
        for i in with_head {
            let lane = &mut lanes[i];
            shift(&mut lane.head, lane.shift).map_err(|e| e.at(lane.source.location()))?;
            let (key, rank) = lane.key();
            lane.clock = key;
            heap.push(Reverse((key, rank, i)));
        }
        Ok(Merger {
            lanes,
            heap,
            metas: merged_metas.into_iter(),
            refill: None,
            last: None,
            extra,
            declared: FastMap::default(),
            symbols,
            prefixes: None,
            prefixed: FastMap::default(),
            shared: false,
            warned_overlap: false,
            warnings: warnings.clone(),
        })
    }

    /// Puts `prefixes[i]` before the `loc` and `peer` of every row of input
    /// `i`, so inputs whose location names collide stay apart.
    pub fn with_prefixes(mut self, prefixes: Vec<String>) -> Merger {
        self.prefixes = Some(prefixes);
        for lane in &mut self.lanes {
            lane.as_read = false;
        }
        self
    }

    /// Checks that a location another input declared too is the same one.
    fn check_declaration(&mut self, rec: &Record, lane: usize) -> Result<()> {
        match self.declared.get(&rec.loc) {
            None => {
                let declaration = Declaration {
                    lane,
                    cat: rec.cat,
                    name: rec.name,
                    peer: rec.peer,
                    shared: false,
                    rows_from: None,
                };
                self.declared.insert(rec.loc, declaration);
                Ok(())
            }
            Some(d) if d.lane == lane => Ok(()),
            Some(d) if d.cat == rec.cat && d.name == rec.name && d.peer == rec.peer => {
                // The same location: per-rank files of one run share their
                // upper levels; rows from two inputs on it are warned about.
                if let Some(d) = self.declared.get_mut(&rec.loc) {
                    d.shared = true;
                }
                self.shared = true;
                Ok(())
            }
            Some(d) => Err(Error::Data {
                at: self.lanes[lane].source.location(),
                msg: format!(
                    "location `{}` is declared here as `{}` ({}) and by {} as `{}` ({}): the inputs name different locations alike; --prefix-inputs keeps each input's apart",
                    self.symbols.text(rec.loc),
                    self.symbols.text(rec.name),
                    self.symbols.text(rec.cat),
                    self.lanes[d.lane].source.location().file(),
                    self.symbols.text(d.name),
                    self.symbols.text(d.cat)
                ),
            }),
        }
    }
}

impl Merger {
    /// Notes that input `lane` put `rec` on its location; warns (once) when
    /// another input that declared the same location put rows there too:
    /// two runs merged onto one track.
    fn check_overlap(&mut self, rec: &Record, lane: usize) {
        let Some(d) = self.declared.get_mut(&rec.loc).filter(|d| d.shared) else {
            return;
        };
        let first = *d.rows_from.get_or_insert(lane);
        if first == lane || self.warned_overlap {
            return;
        }
        self.warned_overlap = true;
        let file = |i: usize| self.lanes[i].source.location().file().to_string();
        self.warnings.warn(format!(
            "{} and {} both put rows on location `{}` (declared alike by both): two runs merged onto one track? --prefix-inputs keeps each input's locations apart",
            file(first),
            file(lane),
            self.symbols.text(rec.loc)
        ));
    }
}

impl MergeInput {
    /// Where the head goes: the order its source gives, else its time
    /// (a declaration rides with the row before it), rank 0.
    fn key(&self) -> (i64, u64) {
        match self.source.order() {
            Some((key, rank)) => (key.saturating_add(self.shift), rank),
            None => (key_of(&self.head, self.clock), 0),
        }
    }
}

fn key_of(rec: &Record, clock: i64) -> i64 {
    if rec.kind.is_structural() {
        clock
    } else {
        rec.completion().unwrap_or(clock)
    }
}

fn shift(rec: &mut Record, by: i64) -> Result<()> {
    if by == 0 {
        return Ok(());
    }
    for t in [&mut rec.time, &mut rec.end].into_iter().flatten() {
        *t = t
            .checked_add(by)
            .ok_or_else(|| Error::Record("time overflows when aligning origins".into()))?;
    }
    Ok(())
}

/// Decides per-input shifts from their `origin` rows and returns the merged meta
/// rows: identical rows once, one `origin` row for the common origin.
fn align_origins(
    lanes: &mut [MergeInput],
    metas: Vec<Vec<Record>>,
    warnings: &Warnings,
) -> Result<Vec<Record>> {
    let mut origins = Vec::with_capacity(lanes.len());
    for (lane, own) in lanes.iter().zip(&metas) {
        let origin = match own.iter().find(|m| m.name == META_ORIGIN) {
            Some(m) => Some(m.value.parse::<i64>().map_err(|_| Error::Data {
                at: lane.source.location(),
                msg: format!(
                    "meta `origin` must be integer ns since the Unix epoch, found `{}`",
                    m.value
                ),
            })?),
            None => None,
        };
        origins.push(origin);
    }
    let known: Vec<i64> = origins.iter().flatten().copied().collect();
    let common = known.iter().min().copied();
    let differ = known.iter().any(|o| Some(*o) != common);
    if differ {
        for (lane, origin) in lanes.iter_mut().zip(&origins) {
            match origin {
                Some(o) => {
                    lane.shift = o.checked_sub(common.unwrap_or(0)).ok_or_else(|| Error::Data {
                        at: lane.source.location(),
                        msg: format!(
                            "origin {o} ns is too far from the earliest origin of the inputs ({} ns) to merge them on one clock",
                            common.unwrap_or(0)
                        ),
                    })?
                }
                None => warnings.warn_at(
                    lane.source.location(),
                    "no `origin` meta row; its times are merged without alignment",
                ),
            }
        }
    }
    let mut out: Vec<Record> = Vec::new();
    for own in metas {
        for m in own {
            if differ && m.name == META_ORIGIN {
                continue;
            }
            if !out.iter().any(|o| o.name == m.name && o.value == m.value) {
                out.push(m);
            }
        }
    }
    if differ {
        if let Some(c) = common {
            out.push(Record::meta(META_ORIGIN, &c.to_string()));
        }
    }
    Ok(out)
}

impl Merger {
    /// Whether the rows of lane `i` are passed on as its input read them.
    fn passes_lines_of(&self, i: usize) -> bool {
        self.lanes[i].as_read
    }
}

impl crate::pipe::SourceStage for Merger {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(m) = self.metas.next() {
            *rec = m;
            return Ok(true);
        }
        if let Some(i) = self.refill.take() {
            // The lane last handed out is still on top: its next row takes
            // its place there (one sift instead of a pop and a push).
            let lane = &mut self.lanes[i];
            let mut top = self.heap.peek_mut().expect("the lane handed out is on top");
            if lane.source.next_record(&mut lane.head)? {
                shift(&mut lane.head, lane.shift).map_err(|e| e.at(lane.source.location()))?;
                if lane.head.kind == Kind::Meta {
                    return Err(Error::Data {
                        at: lane.source.location(),
                        msg: "`meta` row after other rows: meta rows come first".into(),
                    });
                }
                let (key, rank) = lane.key();
                lane.clock = key;
                *top = Reverse((key, rank, i));
            } else {
                PeekMut::pop(top);
            }
        }
        let Some(&Reverse((_, _, i))) = self.heap.peek() else {
            return Ok(false);
        };
        rec.take_from(&mut self.lanes[i].head);
        self.refill = Some(i);
        self.last = Some(i);
        if let Some(prefixes) = &self.prefixes {
            for sym in [&mut rec.loc, &mut rec.peer] {
                if !sym.is_empty() {
                    *sym = *self.prefixed.entry((i, *sym)).or_insert_with(|| {
                        let text = format!("{}{}", prefixes[i], self.symbols.text(*sym));
                        self.symbols.intern(&text)
                    });
                }
            }
        }
        if rec.kind == Kind::Container && self.lanes.len() > 1 {
            self.check_declaration(rec, i)?;
        } else if self.shared && !rec.kind.is_structural() && !rec.loc.is_empty() {
            self.check_overlap(rec, i);
        }
        Ok(true)
    }

    /// The lane's mark and the lane in one number: `mark × (lanes + 1) +
    /// lane + 1`, 0 before any lane gave a row.
    fn mark(&self) -> u64 {
        let n = self.lanes.len() as u64 + 1;
        match self.last {
            Some(i) => self.lanes[i]
                .source
                .mark()
                .wrapping_mul(n)
                .wrapping_add(i as u64 + 1),
            None => 0,
        }
    }

    fn locate(&self, mark: u64) -> Location {
        let n = self.lanes.len() as u64 + 1;
        match (mark % n) as usize {
            0 => Location::File("<merge>".into()),
            lane => self.lanes[lane - 1].source.locate(mark / n),
        }
    }

    fn extra_columns(&self) -> &[String] {
        &self.extra
    }

    fn raw_line(&self) -> Option<&[u8]> {
        let last = self.last?;
        self.lanes[last]
            .source
            .raw_line()
            .filter(|_| self.passes_lines_of(last))
    }

    /// Rows are merged in order, never their place in a split stream.
    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// The earliest of each live input's bound and the start of the head
    /// it holds (one whose head was just handed out: its bound alone).
    fn horizon(&self) -> Option<i64> {
        let mut bound = i64::MAX;
        for &Reverse((_, _, i)) in self.heap.iter() {
            let lane = &self.lanes[i];
            let to_come = lane.source.horizon()?.saturating_add(lane.shift);
            let held = match self.refill == Some(i) {
                true => None,
                false => lane.head.start(),
            };
            bound = bound.min(to_come).min(held.unwrap_or(i64::MAX));
        }
        Some(bound)
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        let (mut raw_lines, mut encode_here) = (true, !self.lanes.is_empty());
        for i in 0..self.lanes.len() {
            // A lane whose rows are changed gives no raw lines: they are
            // read whole; prefixes are put before `loc` and `peer`.
            let passes_lines = self.passes_lines_of(i);
            let reads = match passes_lines {
                true => demand.reads,
                false => Reads::only(demand.reads.without_raw_line()),
            };
            // T0 on the input's own clock, before its rows are shifted.
            let shift = self.lanes[i].shift;
            let supply = self.lanes[i].source.agree(Demand {
                reads: reads.and(MERGE_READS),
                skip: demand.skip,
                thin_before: demand.thin_before.map(|t0| t0.saturating_sub(shift)),
            });
            raw_lines &= passes_lines && supply.raw_lines;
            encode_here &= supply.encode_here;
        }
        Supply {
            raw_lines,
            encode_here,
        }
    }
}

/// The columns a merge reads of every row: its place, and the `peer`
/// a prefix goes before.
const MERGE_READS: ColumnSet = ColumnSet::PLACE.with(Column::Peer);
