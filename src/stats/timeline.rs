//! The `timeline` report: the run cut into equal time bins; per bin and
//! function (or state type and value), the exclusive time spent in it,
//! summed over locations.
//!
//! A location's exclusive time at an instant belongs to the frame on top of
//! its stack, so each change of a stack credits the time since the last
//! one to the frame that was on top, spread over the bins it covers. A
//! `state` row credits its extent and takes back its children's (one level
//! deeper, complete before it), held per depth as bin amounts until the
//! parent comes. Frames open at the end close at their location's last
//! time, as in the profile: each function's bins add up to its profile
//! exclusive time. Bins are `[origin + k·width, origin + (k+1)·width)`.
//! Memory: the bins of each function, and the open frames.

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::record::{ColumnSet, Kind, Record, Sym};
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::PartialRow;
use crate::stats::{
    add_to, check_leave, key_of_fields, key_texts, Key, Report, Style, FRAME_READS,
};
use crate::table::{Cell, TableWriter};

/// The bins: where the first starts and how wide each is (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bins {
    /// Start of bin 0.
    pub origin: i64,
    /// Width of every bin, at least 1 ns.
    pub width: i64,
}

impl Bins {
    /// `count` bins covering `[first, last]` (the last bin may reach past it
    /// by less than `count` ns, the widths being whole ns).
    pub fn covering(first: i64, last: i64, count: u64) -> Bins {
        let span = i128::from(last) - i128::from(first);
        let count = i128::from(count.max(1));
        let width = ((span + count - 1) / count).clamp(1, i128::from(i64::MAX));
        Bins {
            origin: first,
            width: width as i64,
        }
    }

    fn bin(&self, t: i64) -> i64 {
        let offset = i128::from(t) - i128::from(self.origin);
        offset.div_euclid(i128::from(self.width)) as i64
    }

    fn start(&self, bin: i64) -> i128 {
        i128::from(self.origin) + i128::from(bin) * i128::from(self.width)
    }

    /// Calls `add(bin, ns)` for each bin `[from, to)` overlaps.
    fn spread(&self, from: i64, to: i64, mut add: impl FnMut(i64, i128)) {
        if to <= from {
            return;
        }
        let (first, last) = (self.bin(from), self.bin(to - 1));
        for bin in first..=last {
            let low = self.start(bin).max(i128::from(from));
            let high = (self.start(bin) + i128::from(self.width)).min(i128::from(to));
            add(bin, high - low);
        }
    }
}

/// One key's time per bin, from bin `first` on.
#[derive(Default, Clone)]
struct BinRow {
    first: i64,
    sums: Vec<i128>,
}

impl BinRow {
    fn add(&mut self, bin: i64, ns: i128) {
        if self.sums.is_empty() {
            self.first = bin;
        }
        if bin < self.first {
            let more = (self.first - bin) as usize;
            self.sums.splice(0..0, std::iter::repeat_n(0, more));
            self.first = bin;
        }
        let at = (bin - self.first) as usize;
        if at >= self.sums.len() {
            self.sums.resize(at + 1, 0);
        }
        self.sums[at] += ns;
    }

    fn get(&self, bin: i64) -> i128 {
        let at = bin - self.first;
        usize::try_from(at)
            .ok()
            .and_then(|at| self.sums.get(at))
            .copied()
            .unwrap_or(0)
    }

    fn total(&self) -> i128 {
        self.sums.iter().sum()
    }

    fn bins(&self) -> impl Iterator<Item = (i64, i128)> + '_ {
        (self.first..).zip(self.sums.iter().copied())
    }
}

/// One location's stack: the keys of its open frames, when its top last
/// changed, and for `state` rows the children's time per depth, held as
/// (bin, −ns) until their parent comes.
#[derive(Default)]
struct Lane {
    frames: Vec<(Key, Sym)>,
    since: i64,
    last: i64,
    children: Vec<Vec<(i64, i128)>>,
}

/// The `timeline` report.
pub struct Timeline {
    bins: Bins,
    by_state: bool,
    wide: bool,
    /// With `wide`, the heaviest keys that get columns of their own.
    top: Option<usize>,
    /// Bins printed whatever they hold (`--bins N`).
    count: Option<u64>,
    labels: Labels,
    rows: FastMap<Key, BinRow>,
    lanes: FastMap<Sym, Lane>,
}

impl Timeline {
    /// A timeline over `bins`, per function, or per state type and value
    /// when `by_state`; one row per bin and a column per key when `wide`
    /// (the `top` heaviest, the rest in `other`).
    pub fn new(
        bins: Bins,
        by_state: bool,
        wide: bool,
        top: Option<usize>,
        labels: Labels,
    ) -> Timeline {
        Timeline {
            bins,
            by_state,
            wide,
            top,
            count: None,
            labels,
            rows: FastMap::default(),
            lanes: FastMap::default(),
        }
    }

    fn key(&self, rec: &Record) -> Key {
        match self.by_state {
            true => [rec.cat, rec.name, Sym::EMPTY],
            false => [rec.name, Sym::EMPTY, Sym::EMPTY],
        }
    }

    fn roles(&self) -> &'static [Role] {
        match self.by_state {
            true => &[Role::Type, Role::Plain],
            false => &[Role::Plain],
        }
    }

    /// Credits the time since `loc`'s top last changed to that top, up to `t`.
    fn advance(&mut self, loc: Sym, t: i64) {
        let lane = self.lanes.entry(loc).or_default();
        if let Some(&(key, _)) = lane.frames.last() {
            let row = self.rows.entry(key).or_default();
            self.bins.spread(lane.since, t, |bin, ns| row.add(bin, ns));
        }
        lane.since = t;
        lane.last = lane.last.max(t);
    }

    fn enter(&mut self, rec: &Record) {
        let t = rec.time.unwrap_or_default();
        self.advance(rec.loc, t);
        let key = self.key(rec);
        let lane = self.lanes.get_mut(&rec.loc).expect("made by advance");
        lane.frames.push((key, rec.name));
    }

    fn leave(&mut self, loc: Sym, name: Sym, t: i64) -> Result<()> {
        let open = self
            .lanes
            .get(&loc)
            .and_then(|l| l.frames.last())
            .map(|f| f.1);
        check_leave(self.labels.symbols(), loc, name, open)?;
        self.advance(loc, t);
        self.lanes.get_mut(&loc).expect("has frames").frames.pop();
        Ok(())
    }

    /// A complete frame: its extent, minus its children's (one level
    /// deeper) when it says its depth.
    fn state(&mut self, rec: &Record) {
        let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
        let key = self.key(rec);
        let depth = rec.depth.map_or(0, |d| d as usize);
        let lane = self.lanes.entry(rec.loc).or_default();
        lane.last = lane.last.max(start.max(end));
        if lane.children.len() < depth + 2 {
            lane.children.resize(depth + 2, Vec::new());
        }
        let children = std::mem::take(&mut lane.children[depth + 1]);
        let row = self.rows.entry(key).or_default();
        self.bins.spread(start, end, |bin, ns| row.add(bin, ns));
        if rec.depth.is_some() {
            for &(bin, ns) in &children {
                row.add(bin, ns);
            }
        }
        let mut spare = children;
        spare.clear();
        let held = &mut lane.children[depth];
        self.bins
            .spread(start, end, |bin, ns| match held.last_mut() {
                Some((b, sum)) if *b == bin => *sum -= ns,
                _ => held.push((bin, -ns)),
            });
        lane.children[depth + 1] = spare;
    }
}

impl RecordSink for Timeline {
    fn reads(&self) -> Reads {
        FRAME_READS
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Enter => self.enter(rec),
            Kind::Leave => self.leave(rec.loc, rec.name, rec.time.unwrap_or_default())?,
            Kind::State => self.state(rec),
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let open: Vec<(Sym, i64, usize)> = self
            .lanes
            .iter()
            .map(|(&loc, lane)| (loc, lane.last, lane.frames.len()))
            .collect();
        for (loc, last, depth) in open {
            for _ in 0..depth {
                self.leave(loc, Sym::EMPTY, last)?;
            }
        }
        Ok(())
    }
}

impl Timeline {
    /// Bins `0..count` are printed whether or not they hold time.
    pub fn print_bins(mut self, count: Option<u64>) -> Timeline {
        self.count = count;
        self
    }

    /// The rows by label (keys that print alike merged), heaviest first
    /// (ties by label); beyond `top`, the rest summed in one `other` row.
    fn ranked(&self, top: Option<usize>) -> Vec<(Vec<String>, BinRow)> {
        let mut merged: FastMap<Vec<String>, BinRow> = FastMap::default();
        for (key, row) in &self.rows {
            let into = merged
                .entry(key_texts(&self.labels, key, self.roles()))
                .or_default();
            for (bin, ns) in row.bins().filter(|&(_, ns)| ns != 0) {
                into.add(bin, ns);
            }
        }
        let mut rows: Vec<(Vec<String>, BinRow)> = merged.into_iter().collect();
        rows.sort_by_cached_key(|(label, row)| (std::cmp::Reverse(row.total()), label.clone()));
        if let Some(top) = top.filter(|&n| n < rows.len()) {
            let mut other = BinRow::default();
            for (_, row) in rows.drain(top..) {
                for (bin, ns) in row.bins() {
                    other.add(bin, ns);
                }
            }
            let label = vec!["other".to_string(); self.roles().len()];
            rows.push((label, other));
        }
        rows
    }

    /// The bins to print: `0..count`, or from the first to the last that
    /// holds time.
    fn bin_range(&self, rows: &[(Vec<String>, BinRow)]) -> std::ops::Range<i64> {
        if let Some(count) = self.count {
            return 0..count as i64;
        }
        let held = rows
            .iter()
            .flat_map(|(_, r)| r.bins().filter(|&(_, ns)| ns != 0));
        let (low, high) = held.fold((i64::MAX, i64::MIN), |(l, h), (b, _)| (l.min(b), h.max(b)));
        if low > high {
            return 0..0;
        }
        low..high + 1
    }

    fn bin_cells(&self, style: &Style, bin: i64) -> [Cell<'static>; 2] {
        let start = self.bins.start(bin);
        [
            style.total(start),
            style.total(start + i128::from(self.bins.width)),
        ]
    }
}

impl Report for Timeline {
    fn columns(&self) -> Vec<String> {
        let mut columns = vec!["start".to_string(), "end".to_string()];
        if self.wide {
            // Printing follows the stream's end, when every key is known.
            // A key of two parts (type and value) is one column `type/value`.
            let rows = self.ranked(self.top);
            columns.extend(rows.into_iter().map(|(label, _)| label.join("/")));
            return columns;
        }
        let keys: &[&str] = if self.by_state {
            &["type", "value"]
        } else {
            &["name"]
        };
        columns.extend(keys.iter().map(|k| k.to_string()));
        columns.push("time".to_string());
        columns
    }

    fn partial(&self) -> Option<Vec<Vec<String>>> {
        let mut lines = Vec::new();
        for (label, row) in self.ranked(None) {
            for (bin, ns) in row.bins().filter(|&(_, ns)| ns != 0) {
                let mut line = label.clone();
                line.extend([self.bins.origin, self.bins.width, bin].map(|n| n.to_string()));
                line.push(ns.to_string());
                lines.push(line);
            }
        }
        Some(lines)
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let k = self.roles().len();
        let row = PartialRow::new(fields, k + 4)?;
        let (origin, width): (i64, i64) = (row.number(k, "origin")?, row.number(k + 1, "width")?);
        if (origin, width) != (self.bins.origin, self.bins.width) {
            return Err(format!(
                "bins of {width} ns from {origin} ns, not the {} ns from {} ns of this run (give the same --bin)",
                self.bins.width, self.bins.origin
            ));
        }
        let bin: i64 = row.number(k + 2, "bin")?;
        let ns: i128 = row.number(k + 3, "time")?;
        let key = key_of_fields(self.labels.symbols(), fields, k);
        let into = self.rows.entry(key).or_default();
        let mut sum = into.get(bin);
        add_to(&mut sum, ns, "time")?;
        into.add(bin, ns);
        Ok(())
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        let rows = self.ranked(style.top);
        let bins = self.bin_range(&rows);
        if self.wide {
            for bin in bins {
                let mut cells = self.bin_cells(style, bin).to_vec();
                cells.extend(rows.iter().map(|(_, row)| style.total(row.get(bin))));
                table.row(&cells)?;
            }
            return Ok(());
        }
        for bin in bins {
            let mut here: Vec<(&[String], i128)> = rows
                .iter()
                .map(|(label, row)| (label.as_slice(), row.get(bin)))
                .filter(|&(_, ns)| ns != 0)
                .collect();
            here.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            for (label, ns) in here {
                let mut cells = self.bin_cells(style, bin).to_vec();
                cells.extend(label.iter().map(|l| Cell::Text(l)));
                cells.push(style.total(ns));
                table.row(&cells)?;
            }
        }
        Ok(())
    }
}

/// A sink that notes a stream's first time and last completion time: the
/// span `--bins N` cuts (read in a first pass over the inputs).
#[derive(Default)]
pub struct TimeSpan {
    /// The earliest `time` and the latest completion, once a row had one.
    pub span: Option<(i64, i64)>,
}

impl RecordSink for TimeSpan {
    fn reads(&self) -> Reads {
        Reads::only(ColumnSet::PLACE)
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if let (Some(t), Some(c)) = (rec.time, rec.completion()) {
            let (first, last) = self.span.get_or_insert((t, c));
            *first = (*first).min(t);
            *last = (*last).max(c);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}
