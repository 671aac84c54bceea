//! The `timeline` report: the run cut into equal time bins; per bin and
//! function (or state type and value), the exclusive time spent in it,
//! summed over locations.
//!
//! A location's exclusive time at an instant belongs to the frame on top of
//! its stack, so each change of a stack credits the time since the last
//! one to the frame that was on top, spread over the bins it covers. A
//! `state` row credits its extent and takes back its children's (one level
//! deeper, complete before it), held per depth as spans until the parent
//! comes. Frames open at the end close at their location's last time, as
//! in the profile: each function's bins add up to its profile exclusive
//! time. Bins are `[origin + k·width, origin + (k+1)·width)`.
//! Memory follows the frames, not the span: each span credited is kept as
//! the bins it covers in part and where its run of bins covered whole
//! starts and ends, summed when printed. A timeline prints at most
//! [`MAX_BINS`] bins (a partial too); more is a usage error.

pub mod messages;

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::frames::{self, FrameStack, OpenFrame};
use crate::model::record::{ColumnSet, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::PartialRow;
use crate::stats::{add_to, key_of_fields, key_texts, Key, Report, Style, FRAME_READS};
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

    /// The bin holding time `t`.
    fn bin(&self, t: i64) -> i64 {
        let offset = i128::from(t) - i128::from(self.origin);
        offset.div_euclid(i128::from(self.width)) as i64
    }

    fn start(&self, bin: i64) -> i128 {
        i128::from(self.origin) + i128::from(bin) * i128::from(self.width)
    }

    /// The bin a partial row gives in fields `k..k + 3` (origin, width,
    /// bin), which must be of these bins and hold times a stream can hold.
    fn of_partial(&self, row: &PartialRow, k: usize) -> std::result::Result<i64, String> {
        let (origin, width): (i64, i64) = (row.number(k, "origin")?, row.number(k + 1, "width")?);
        if (origin, width) != (self.origin, self.width) {
            return Err(format!(
                "bins of {width} ns from {origin} ns, not the {} ns from {} ns of this run (give the same --bin)",
                self.width, self.origin
            ));
        }
        let bin: i64 = row.number(k + 2, "bin")?;
        if !self.holds(bin) {
            return Err(format!(
                "bin {bin} of {width} ns from {origin} ns lies outside the times a stream holds"
            ));
        }
        Ok(bin)
    }

    /// Whether bin `bin` starts and ends at times a stream can hold.
    fn holds(&self, bin: i64) -> bool {
        let start = self.start(bin);
        let range = i128::from(i64::MIN)..=i128::from(i64::MAX);
        range.contains(&start) && range.contains(&(start + i128::from(self.width)))
    }
}

/// The most bins a timeline prints, or writes as a partial: the bins from
/// the first holding time to the last (or `--bins N`).
pub const MAX_BINS: u64 = 1_000_000;

/// The refusal of a timeline of `count` bins of `width` ns.
fn too_many_bins(count: i128, width: i64) -> Error {
    Error::Usage(format!(
        "the timeline spans {count} bins of {width} ns, more than the {MAX_BINS} it prints: give wider bins (--bin) or --bins N"
    ))
}

/// The first and last bins time was credited to, so far: a timeline
/// refuses as soon as they are more than it prints, and its pages stay
/// within them.
#[derive(Default)]
struct Extent(Option<(i64, i64)>);

impl Extent {
    /// Notes the span `[from, to)` of `bins`.
    fn note(&mut self, bins: &Bins, (from, to): (i64, i64)) -> Result<()> {
        if to <= from {
            return Ok(());
        }
        let (first, last) = (bins.bin(from), bins.bin(to - 1));
        let (low, high) = self
            .0
            .map_or((first, last), |(l, h)| (l.min(first), h.max(last)));
        let count = i128::from(high) - i128::from(low) + 1;
        if count > i128::from(MAX_BINS) {
            return Err(too_many_bins(count, bins.width));
        }
        self.0 = Some((low, high));
        Ok(())
    }
}

/// Bins per page of a [`Pages`].
const PAGE: usize = 8;

/// Amounts per bin, in pages of [`PAGE`] bins that exist where a bin
/// holds some: dense where the bins are, and a page per span's end where
/// they are far apart.
#[derive(Default, Clone)]
struct Pages(BTreeMap<i64, Box<[i128; PAGE]>>);

impl Pages {
    fn split(bin: i64) -> (i64, usize) {
        (
            bin.div_euclid(PAGE as i64),
            bin.rem_euclid(PAGE as i64) as usize,
        )
    }

    fn add(&mut self, bin: i64, ns: i128) {
        let (page, at) = Pages::split(bin);
        self.0.entry(page).or_insert_with(|| Box::new([0; PAGE]))[at] += ns;
    }

    fn get(&self, bin: i64) -> i128 {
        let (page, at) = Pages::split(bin);
        self.0.get(&page).map_or(0, |p| p[at])
    }

    /// The bins that hold an amount, in order.
    fn iter(&self) -> impl DoubleEndedIterator<Item = (i64, i128)> + '_ {
        self.0.iter().flat_map(|(&page, values)| {
            let first = page * PAGE as i64;
            let bins = values.iter().enumerate();
            bins.map(move |(i, &ns)| (first + i as i64, ns))
                .filter(|&(_, ns)| ns != 0)
        })
    }

    /// The bins from `from` on that hold an amount, in order.
    fn from(&self, from: i64) -> impl Iterator<Item = (i64, i128)> + '_ {
        let (page, _) = Pages::split(from);
        self.0.range(page..).flat_map(move |(&page, values)| {
            let first = page * PAGE as i64;
            (first..)
                .zip(values.iter().copied())
                .filter(move |&(b, ns)| ns != 0 && b >= from)
        })
    }
}

/// One key's time per bin, kept sparse: the amounts of the bins spans
/// cover in part, and the changes in how many spans cover a bin whole
/// (+1 at the first such bin of a span, −1 after its last), summed when
/// printed.
#[derive(Default, Clone)]
struct BinRow {
    parts: Pages,
    whole: BTreeMap<i64, i64>,
}

impl BinRow {
    /// Adds `ns` to bin `bin`.
    fn add(&mut self, bin: i64, ns: i128) {
        self.parts.add(bin, ns);
    }

    fn add_whole(&mut self, bin: i64, change: i64) {
        let count = self.whole.entry(bin).or_default();
        *count += change;
        if *count == 0 {
            self.whole.remove(&bin);
        }
    }

    /// Credits the time `[from, to)` of `bins` (`sign` 1), or takes it back
    /// (−1).
    fn add_span(&mut self, bins: &Bins, (from, to): (i64, i64), sign: i64) {
        if to <= from {
            return;
        }
        let (first, last) = (bins.bin(from), bins.bin(to - 1));
        let (from, to) = (i128::from(from), i128::from(to));
        let sign128 = i128::from(sign);
        if first == last {
            return self.add(first, sign128 * (to - from));
        }
        let mut whole_from = first;
        if from > bins.start(first) {
            self.add(first, sign128 * (bins.start(first + 1) - from));
            whole_from += 1;
        }
        let mut whole_to = last + 1;
        if to < bins.start(last + 1) {
            self.add(last, sign128 * (to - bins.start(last)));
            whole_to = last;
        }
        if whole_from < whole_to {
            self.add_whole(whole_from, sign);
            self.add_whole(whole_to, -sign);
        }
    }

    /// Adds `other`'s time to this row's.
    fn merge(&mut self, other: &BinRow) {
        for (bin, ns) in other.parts.iter() {
            self.add(bin, ns);
        }
        for (&bin, &change) in &other.whole {
            self.add_whole(bin, change);
        }
    }

    /// The bins from the first that may hold time to the last, if any.
    fn extent(&self) -> Option<(i64, i64)> {
        let mut parts = self.parts.iter().map(|(bin, _)| bin);
        let first = parts.next();
        let last = parts.next_back().or(first);
        let low = first
            .into_iter()
            .chain(self.whole.keys().next().copied())
            .min()?;
        let whole_end = self.whole.keys().next_back().map(|b| b - 1);
        let high = last.into_iter().chain(whole_end).max()?;
        Some((low, high.max(low)))
    }

    /// The time of each bin of `range`, in order (`width`: the bins').
    fn values(&self, range: std::ops::Range<i64>, width: i64) -> impl Iterator<Item = i128> + '_ {
        let mut count: i128 = self
            .whole
            .range(..range.start)
            .map(|(_, &c)| i128::from(c))
            .sum();
        let mut whole = self.whole.range(range.start..).peekable();
        let mut parts = self.parts.from(range.start).peekable();
        range.map(move |bin| {
            while let Some((_, &c)) = whole.next_if(|(&b, _)| b <= bin) {
                count += i128::from(c);
            }
            let part = parts.next_if(|&(b, _)| b == bin).map_or(0, |(_, ns)| ns);
            count * i128::from(width) + part
        })
    }

    /// The time of every bin, summed.
    fn total(&self, width: i64) -> i128 {
        let mut count = 0i128;
        let mut total: i128 = self.parts.iter().map(|(_, ns)| ns).sum();
        let mut at = None;
        for (&bin, &change) in &self.whole {
            if let Some(from) = at {
                total += count * i128::from(bin - from) * i128::from(width);
            }
            count += i128::from(change);
            at = Some(bin);
        }
        total
    }
}

/// An open frame: the key it is credited to, and its name.
#[derive(Default, Clone, Copy)]
struct KeyedFrame {
    key: Key,
    name: Sym,
}

impl OpenFrame for KeyedFrame {
    fn name(&self) -> Sym {
        self.name
    }
}

/// One location's open frames, when its innermost last changed, and for
/// `state` rows the children's spans per depth, held until their parent
/// comes.
#[derive(Default)]
struct Crediting {
    frames: FrameStack<KeyedFrame>,
    since: i64,
    children: Vec<Vec<(i64, i64)>>,
}

/// What a timeline row is per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// Per function (frame name): the default.
    Name,
    /// Per state type and value (`--states`).
    State,
    /// Per location: its busy time, the time any frame of it is open
    /// (`--by loc`), so GPU streams show beside CPU threads.
    Loc,
}

/// The `timeline` report.
pub struct Timeline {
    bins: Bins,
    per: Per,
    wide: bool,
    /// With `wide`, the heaviest keys that get columns of their own.
    top: Option<usize>,
    /// Bins printed whatever they hold (`--bins N`).
    count: Option<u64>,
    symbols: Symbols,
    rows: FastMap<Key, BinRow>,
    lanes: FastMap<Sym, Crediting>,
    extent: Extent,
}

impl Timeline {
    /// A timeline over `bins`, per function, state type and value, or
    /// location (`per`); one row per bin and a column per key when `wide`
    /// (the `top` heaviest, the rest in `other`), of rows whose
    /// identifiers are in `symbols`.
    pub fn new(bins: Bins, per: Per, wide: bool, top: Option<usize>, symbols: Symbols) -> Timeline {
        Timeline {
            bins,
            per,
            wide,
            top,
            count: None,
            symbols,
            rows: FastMap::default(),
            lanes: FastMap::default(),
            extent: Extent::default(),
        }
    }

    fn key(&self, rec: &Record) -> Key {
        match self.per {
            Per::State => [rec.cat, rec.name, Sym::EMPTY],
            Per::Name => [rec.name, Sym::EMPTY, Sym::EMPTY],
            Per::Loc => [rec.loc, Sym::EMPTY, Sym::EMPTY],
        }
    }

    fn roles(&self) -> &'static [Role] {
        match self.per {
            Per::State => &[Role::Type, Role::Plain],
            Per::Name => &[Role::Plain],
            Per::Loc => &[Role::Loc],
        }
    }

    /// Credits the time since `loc`'s innermost frame last changed to
    /// that frame's key, up to `t`.
    fn advance(&mut self, loc: Sym, t: i64) -> Result<()> {
        let lane = self.lanes.entry(loc).or_default();
        let (since, top) = (lane.since, lane.frames.innermost().map(|f| f.key));
        lane.since = t;
        lane.frames.note(t);
        if let Some(key) = top {
            self.extent.note(&self.bins, (since, t))?;
            let row = self.rows.entry(key).or_default();
            row.add_span(&self.bins, (since, t), 1);
        }
        Ok(())
    }

    fn enter(&mut self, rec: &Record) -> Result<()> {
        let t = rec.time.unwrap_or_default();
        self.advance(rec.loc, t)?;
        let key = self.key(rec);
        let lane = self.lanes.get_mut(&rec.loc).expect("made by advance");
        *lane.frames.enter(t) = KeyedFrame {
            key,
            name: rec.name,
        };
        Ok(())
    }

    fn leave(&mut self, loc: Sym, name: Sym, t: i64) -> Result<()> {
        let lane = self.lanes.entry(loc).or_default();
        lane.frames.check_leave((loc, name), &self.symbols)?;
        self.advance(loc, t)?;
        self.lanes
            .get_mut(&loc)
            .expect("has frames")
            .frames
            .close(t);
        Ok(())
    }

    /// A complete frame: its extent, minus its children's (one level
    /// deeper) when it says its depth.
    fn state(&mut self, rec: &Record) -> Result<()> {
        let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
        self.extent.note(&self.bins, (start, end))?;
        let key = self.key(rec);
        let depth = rec.depth.map_or(0, |d| d as usize);
        let lane = self.lanes.entry(rec.loc).or_default();
        lane.frames.note(start.max(end));
        if lane.children.len() < depth + 2 {
            lane.children.resize(depth + 2, Vec::new());
        }
        let mut children = std::mem::take(&mut lane.children[depth + 1]);
        let row = self.rows.entry(key).or_default();
        row.add_span(&self.bins, (start, end), 1);
        if rec.depth.is_some() {
            for &span in &children {
                row.add_span(&self.bins, span, -1);
            }
        }
        children.clear();
        lane.children[depth].push((start, end));
        lane.children[depth + 1] = children;
        Ok(())
    }
}

impl RecordSink for Timeline {
    fn reads(&self) -> Reads {
        FRAME_READS
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Enter => self.enter(rec)?,
            Kind::Leave => self.leave(rec.loc, rec.name, rec.time.unwrap_or_default())?,
            Kind::State => self.state(rec)?,
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        for (loc, last) in frames::still_open(
            self.lanes.iter().map(|(l, s)| (l, &s.frames)),
            &self.symbols,
        ) {
            while self.lanes[&loc].frames.depth() > 0 {
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
    fn ranked(&self, top: Option<usize>, labels: &Labels) -> Vec<(Vec<String>, BinRow)> {
        let mut merged: FastMap<Vec<String>, BinRow> = FastMap::default();
        for (key, row) in &self.rows {
            merged
                .entry(key_texts(labels, key, self.roles()))
                .or_default()
                .merge(row);
        }
        let width = self.bins.width;
        let mut rows: Vec<(Vec<String>, BinRow)> = merged.into_iter().collect();
        rows.sort_by_cached_key(|(label, row)| {
            (std::cmp::Reverse(row.total(width)), label.clone())
        });
        if let Some(top) = top.filter(|&n| n < rows.len()) {
            let mut other = BinRow::default();
            for (_, row) in rows.drain(top..) {
                other.merge(&row);
            }
            let label = vec!["other".to_string(); self.roles().len()];
            rows.push((label, other));
        }
        rows
    }

    /// The bins to print: `0..count`, or from the first to the last that
    /// holds time; more than [`MAX_BINS`] is a usage error.
    fn bin_range(&self, rows: &[(Vec<String>, BinRow)]) -> Result<std::ops::Range<i64>> {
        if let Some(count) = self.count {
            return Ok(0..count as i64);
        }
        let extents = rows.iter().filter_map(|(_, r)| r.extent());
        let Some((low, high)) = extents.reduce(|a, b| (a.0.min(b.0), a.1.max(b.1))) else {
            return Ok(0..0);
        };
        let count = i128::from(high) - i128::from(low) + 1;
        if count > i128::from(MAX_BINS) {
            return Err(too_many_bins(count, self.bins.width));
        }
        Ok(low..high + 1)
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
    fn columns(&self, labels: &Labels) -> Vec<String> {
        let mut columns = vec!["start".to_string(), "end".to_string()];
        if self.wide {
            // Printing follows the stream's end, when every key is known.
            // A key of two parts (type and value) is one column `type/value`.
            let rows = self.ranked(self.top, labels);
            columns.extend(rows.into_iter().map(|(label, _)| label.join("/")));
            return columns;
        }
        let keys: &[&str] = match self.per {
            Per::State => &["type", "value"],
            Per::Name => &["name"],
            Per::Loc => &["loc"],
        };
        columns.extend(keys.iter().map(|k| k.to_string()));
        columns.push("time".to_string());
        columns
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let mut lines = Vec::new();
        let rows = self.ranked(None, labels);
        // A partial holds the bins it would print.
        let bins = self.bin_range(&rows)?;
        for (label, row) in rows {
            let values = bins.clone().zip(row.values(bins.clone(), self.bins.width));
            for (bin, ns) in values.filter(|&(_, ns)| ns != 0) {
                let mut line = label.clone();
                line.extend([self.bins.origin, self.bins.width, bin].map(|n| n.to_string()));
                line.push(ns.to_string());
                lines.push(line);
            }
        }
        Ok(Some(lines))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let k = self.roles().len();
        let row = PartialRow::new(fields, k + 4)?;
        let bin = self.bins.of_partial(&row, k)?;
        let ns: i128 = row.number(k + 3, "time")?;
        if ns <= 0 {
            return Err(format!(
                "time {ns} in a bin: a partial holds the bins with time in them"
            ));
        }
        let key = key_of_fields(&self.symbols, fields, k);
        let into = self.rows.entry(key).or_default();
        let mut sum = into.parts.get(bin);
        add_to(&mut sum, ns, "time")?;
        into.add(bin, ns);
        Ok(())
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let rows = self.ranked(style.top, labels);
        let bins = self.bin_range(&rows)?;
        let width = self.bins.width;
        let mut values: Vec<_> = rows
            .iter()
            .map(|(_, row)| row.values(bins.clone(), width))
            .collect();
        let mut here: Vec<(&[String], i128)> = Vec::with_capacity(rows.len());
        for bin in bins {
            here.clear();
            let labels = rows.iter().map(|(label, _)| label.as_slice());
            let next = values.iter_mut().map(|v| v.next().unwrap_or(0));
            here.extend(labels.zip(next));
            if self.wide {
                let mut cells = self.bin_cells(style, bin).to_vec();
                cells.extend(here.iter().map(|&(_, ns)| style.total(ns)));
                table.row(&cells)?;
                continue;
            }
            here.retain(|&(_, ns)| ns != 0);
            here.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            for &(label, ns) in &here {
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
