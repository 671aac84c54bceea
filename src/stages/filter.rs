//! Row selection that keeps the output a valid stream.
//!
//! [`Predicate`] decides about one row. [`FilterSource`] applies it and makes
//! sure every kept row's `container` rows (its location, its peer, and their
//! ancestors) come before it: container rows are held back until a kept row
//! refers to them. Memory: one record per declared container.

use crate::decimal::Decimal;
use crate::fasthash::FastMap;

use regex::Regex;

use super::window::Window;
use std::collections::VecDeque;

use crate::error::{Error, Location, Result, Warnings};
use crate::model::record::{Column, ColumnSet, Kind, KindSet, Record, Sym};
use crate::model::symbol::{SymMemo, Symbols};
use crate::pipe::{Demand, RecordSource, Supply};

pub use crate::glob::Glob;

/// A condition on an attribute (or, when no attribute has the key, on the
/// numeric column of that name: `size`, `tag`, `depth`, `value`).
#[derive(Debug, Clone)]
pub struct AttrCondition {
    /// Attribute key.
    pub key: String,
    /// What its value must satisfy; `None` for presence only.
    pub test: Option<(Compare, String)>,
    /// The value as a number, for the ordering comparisons.
    number: Option<Decimal>,
}

/// How an [`AttrCondition`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// `key=text`: equal as text.
    Equal,
    /// `key!=text`: present and different as text.
    NotEqual,
    /// `key<n`, `key<=n`, `key>n`, `key>=n`: as exact decimal numbers (a
    /// value that is not a number fails them).
    Less,
    /// `<=`.
    LessEqual,
    /// `>`.
    Greater,
    /// `>=`.
    GreaterEqual,
}

impl AttrCondition {
    /// Parses `key`, `key=value`, `key!=value` or `key OP number` with OP one
    /// of `<`, `<=`, `>`, `>=`.
    pub fn parse(s: &str) -> Result<AttrCondition, String> {
        let at = s.find(['=', '!', '<', '>']);
        let (key, test) = match at {
            None => (s, None),
            Some(i) => {
                let rest = &s[i..];
                let (op, len) = match rest.as_bytes() {
                    [b'!', b'=', ..] => (Compare::NotEqual, 2),
                    [b'<', b'=', ..] => (Compare::LessEqual, 2),
                    [b'>', b'=', ..] => (Compare::GreaterEqual, 2),
                    [b'<', ..] => (Compare::Less, 1),
                    [b'>', ..] => (Compare::Greater, 1),
                    [b'=', ..] => (Compare::Equal, 1),
                    _ => {
                        return Err(format!(
                            "bad attribute condition `{s}`: expected KEY!=VALUE"
                        ))
                    }
                };
                (&s[..i], Some((op, rest[len..].to_string())))
            }
        };
        if key.is_empty() {
            return Err(format!("bad attribute condition `{s}`: empty key"));
        }
        let mut number = None;
        if let Some((op, value)) = &test {
            if !matches!(op, Compare::Equal | Compare::NotEqual) {
                number = Some(Decimal::parse(value).ok_or_else(|| {
                    format!("bad attribute condition `{s}`: `{value}` is not a number")
                })?);
            }
        }
        Ok(AttrCondition {
            key: key.to_string(),
            test,
            number,
        })
    }

    /// Whether `rec` satisfies the condition.
    pub fn holds(&self, rec: &Record) -> bool {
        let value = rec.attr(&self.key).or_else(|| column_text(rec, &self.key));
        let Some(value) = value else {
            return false;
        };
        let Some((op, want)) = &self.test else {
            return true;
        };
        match op {
            Compare::Equal => value == *want,
            Compare::NotEqual => value != *want,
            ordering => {
                let (Some(have), Some(limit)) = (Decimal::parse(&value), self.number) else {
                    return false;
                };
                let order = have.compare(&limit);
                match ordering {
                    Compare::Less => order.is_lt(),
                    Compare::LessEqual => order.is_le(),
                    Compare::Greater => order.is_gt(),
                    _ => order.is_ge(),
                }
            }
        }
    }
}

/// The text of numeric column `name` of `rec`, when it has one.
fn column_text(rec: &Record, name: &str) -> Option<String> {
    match name {
        "size" => rec.size.map(|n| n.to_string()),
        "tag" => rec.tag.map(|n| n.to_string()),
        "depth" => rec.depth.map(|n| n.to_string()),
        "value" => (!rec.value.is_empty()).then(|| rec.value.clone()),
        _ => None,
    }
}

/// The conditions of `trace-filter`; all given conditions must hold.
#[derive(Debug, Clone, Default)]
pub struct Predicate {
    /// Kinds to keep (any of them); empty keeps every kind.
    pub kinds: Vec<Kind>,
    /// Location globs (any of them); empty keeps every location.
    pub locs: Vec<Glob>,
    /// Globs on the display name of the row's location (any of them).
    pub loc_names: Vec<Glob>,
    /// Globs on the id or name of the row's location or one of its
    /// ancestors: a subtree (any of them).
    pub under: Vec<Glob>,
    /// Category globs (any of them).
    pub cats: Vec<Glob>,
    /// Regular expression the `name` must match (anywhere; anchor it for whole names).
    pub name: Option<Regex>,
    /// Time window the row must overlap.
    pub window: Option<Window>,
    /// Attribute conditions (all of them).
    pub attrs: Vec<AttrCondition>,
    /// Keep the rows that do *not* match instead.
    pub invert: bool,
}

impl Predicate {
    /// The kinds whose rows are dropped whatever they hold (those `-k`
    /// leaves out; never the rows that describe the stream).
    pub fn dropped_kinds(&self) -> KindSet {
        if self.kinds.is_empty() || self.invert {
            return KindSet::NONE;
        }
        let kept: KindSet = self.kinds.iter().copied().collect();
        [Kind::Meta, Kind::Type, Kind::Container]
            .into_iter()
            .fold(kept.complement(), KindSet::without)
    }

    /// The columns its conditions read of a data row (see
    /// [`Demand::reads`]), with those the filter itself reads (the
    /// row's place, the `peer` whose container it passes on).
    pub fn columns(&self) -> ColumnSet {
        let mut columns = ColumnSet::PLACE.with(Column::Peer);
        if !self.cats.is_empty() {
            columns = columns.with(Column::Cat);
        }
        if self.name.is_some() {
            columns = columns.with(Column::Name);
        }
        if !self.attrs.is_empty() {
            // A condition names an attribute or a numeric column.
            let named = [Column::Attrs, Column::Value, Column::Size, Column::Tag];
            columns = named
                .into_iter()
                .fold(columns.with(Column::Depth), ColumnSet::with);
        }
        columns
    }

    /// True when rows need their location's [`Place`].
    pub fn needs_place(&self) -> bool {
        !self.loc_names.is_empty() || !self.under.is_empty()
    }
}

/// A [`Predicate`] asked of rows whose identifiers are in one symbol table:
/// a condition on an identifier (a glob, the name's regular expression) is
/// decided once per distinct symbol, then remembered.
struct Selector {
    predicate: Predicate,
    symbols: Symbols,
    locs: SymMemo,
    cats: SymMemo,
    names: SymMemo,
}

/// Whether `text` matches one of `globs`.
fn any_glob(globs: &[Glob], text: &str) -> bool {
    globs.iter().any(|g| g.is_match(text))
}

impl Selector {
    /// Whether `rec` is selected (after `invert`). `meta` and `type` rows are
    /// always selected (they describe the stream).
    fn selects(&mut self, rec: &Record, place: Place) -> bool {
        if matches!(rec.kind, Kind::Meta | Kind::Type) {
            return true;
        }
        self.matches(rec, place, true) != self.predicate.invert
    }

    /// [`Selector::selects`] without the time window.
    fn selects_at_any_time(&mut self, rec: &Record, place: Place) -> bool {
        if matches!(rec.kind, Kind::Meta | Kind::Type) {
            return true;
        }
        self.matches(rec, place, false) != self.predicate.invert
    }

    /// What a container's location answers to the location-name and subtree
    /// conditions; `parent` is its parent's answer.
    fn place_of(&self, container: &Record, parent: Place) -> Place {
        let p = &self.predicate;
        let (loc, name) = (
            self.symbols.text(container.loc),
            self.symbols.text(container.name),
        );
        Place {
            named: any_glob(&p.loc_names, name),
            under: parent.under || any_glob(&p.under, loc) || any_glob(&p.under, name),
        }
    }

    fn matches(&mut self, rec: &Record, place: Place, in_window: bool) -> bool {
        let Selector {
            predicate: p,
            symbols,
            locs,
            cats,
            names,
        } = self;
        let text = |sym: Sym| symbols.text(sym);
        (p.kinds.is_empty() || p.kinds.contains(&rec.kind))
            && (p.locs.is_empty() || locs.get(rec.loc, || any_glob(&p.locs, text(rec.loc))))
            && (p.loc_names.is_empty() || place.named)
            && (p.under.is_empty() || place.under)
            && (p.cats.is_empty() || cats.get(rec.cat, || any_glob(&p.cats, text(rec.cat))))
            && p.name
                .as_ref()
                .is_none_or(|re| names.get(rec.name, || re.is_match(text(rec.name))))
            && (!in_window || p.window.is_none_or(|w| w.contains(rec)))
            && p.attrs.iter().all(|c| c.holds(rec))
    }
}

/// What a location answers to the conditions that need its container: its
/// display name, and its place in the tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Place {
    /// Its display name matches a `loc_names` glob.
    pub named: bool,
    /// It or an ancestor matches an `under` glob.
    pub under: bool,
}

/// A declared container as the filter keeps it.
struct Declared {
    row: Record,
    /// Passed on already.
    passed: bool,
    place: Place,
}

/// A reading-side stage: the rows of `inner` selected by a [`Predicate`], each
/// preceded by the `container` rows it needs that were not passed on yet.
/// Placed before the hand-over to the writer, so rows it drops never cross
/// to the other core.
pub struct FilterSource<S> {
    inner: S,
    /// The row last returned is the inner source's, as it read it.
    passed_through: bool,
    /// Kinds dropped before any other condition is asked of them.
    unseen: KindSet,
    /// Kinds the source may drop itself (see [`Demand::skip`]).
    skipped: KindSet,
    selector: Selector,
    /// Every declared container.
    containers: FastMap<Sym, Declared>,
    /// Rows due before the next one read: needed containers, then the row that
    /// needed them, with the marks of the rows they came with and the raw
    /// line of the row (see [`RecordSource::raw_line`]).
    due: VecDeque<(Record, u64, Option<Vec<u8>>)>,
    /// The raw line of the row last returned when it came from `due`.
    due_raw: Option<Vec<u8>>,
    spare: Vec<Record>,
    mark: u64,
    /// Per location, whether each open frame's `enter` was passed on: its
    /// `leave` goes with it, so frames stay whole (memory: the open frames).
    frames: FastMap<Sym, Vec<bool>>,
    /// `enter` rows read, and `state` rows passed on: asking for states of a
    /// trace that has frames only deserves a hint.
    enters: u64,
    states: u64,
    /// The selectors that matched something: a selector that never does is
    /// warned about at the end.
    seen: Matched,
    warnings: Warnings,
}

/// Which selectors matched a declared location or a row.
#[derive(Default)]
struct Matched {
    locs: bool,
    loc_names: bool,
    under: bool,
    name: bool,
}

impl<S: RecordSource> FilterSource<S> {
    /// The rows of `inner` (identifiers in `symbols`) that `predicate`
    /// selects; hints go to `warnings`.
    pub fn new(
        inner: S,
        predicate: Predicate,
        symbols: Symbols,
        warnings: Warnings,
    ) -> FilterSource<S> {
        // What is dropped unread need not be decoded.
        let dropped = predicate.dropped_kinds();
        // A frame's rows are dropped without a look when both ends are:
        // no frame can be kept then.
        let unseen = match dropped.contains(Kind::Enter) && dropped.contains(Kind::Leave) {
            true => dropped,
            false => dropped.without(Kind::Enter).without(Kind::Leave),
        };
        // The source may drop those itself, but the `enter` rows counted
        // for the hint about states.
        let skipped = match predicate.kinds.contains(&Kind::State) {
            true => unseen.without(Kind::Enter),
            false => unseen,
        };
        FilterSource {
            unseen,
            skipped,
            passed_through: false,
            inner,
            selector: Selector {
                predicate,
                symbols,
                locs: SymMemo::default(),
                cats: SymMemo::default(),
                names: SymMemo::default(),
            },
            containers: FastMap::default(),
            due: VecDeque::new(),
            due_raw: None,
            spare: Vec::new(),
            mark: 0,
            frames: FastMap::default(),
            enters: 0,
            states: 0,
            seen: Matched::default(),
            warnings,
        }
    }

    /// The [`Place`] of location `loc` (default when not declared, or when
    /// no condition needs it).
    fn place(&self, loc: Sym) -> Place {
        if !self.selector.predicate.needs_place() || loc.is_empty() {
            return Place::default();
        }
        self.containers
            .get(&loc)
            .map_or(Place::default(), |c| c.place)
    }

    /// Notes which selectors the location and name of `rec` match (each
    /// decided once per symbol, and no more once one matched).
    fn note_seen(&mut self, rec: &Record) {
        let Selector {
            predicate: p,
            symbols,
            locs,
            names,
            ..
        } = &mut self.selector;
        if !self.seen.locs && !p.locs.is_empty() && !rec.loc.is_empty() {
            self.seen.locs = locs.get(rec.loc, || any_glob(&p.locs, symbols.text(rec.loc)));
        }
        if !self.seen.name && !rec.name.is_empty() {
            if let Some(re) = &p.name {
                self.seen.name = names.get(rec.name, || re.is_match(symbols.text(rec.name)));
            }
        }
    }

    /// At the end: the selectors that matched nothing, which say so rather
    /// than leave an empty output unexplained.
    fn warn_unmatched_selectors(&self) {
        let p = &self.selector.predicate;
        let patterns = |globs: &[Glob]| {
            globs
                .iter()
                .map(|g| format!("`{}`", g.pattern()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut silent = Vec::new();
        if !p.locs.is_empty() && !self.seen.locs {
            silent.push(format!(
                "-l {} matched no location id (-L matches display names)",
                patterns(&p.locs)
            ));
        }
        if !p.loc_names.is_empty() && !self.seen.loc_names {
            silent.push(format!(
                "-L {} matched no location name",
                patterns(&p.loc_names)
            ));
        }
        if !p.under.is_empty() && !self.seen.under {
            silent.push(format!(
                "--under {} matched no container",
                patterns(&p.under)
            ));
        }
        if let Some(re) = p.name.as_ref().filter(|_| !self.seen.name) {
            silent.push(format!("-n `{}` matched no name", re.as_str()));
        }
        for msg in silent {
            self.warnings.warn(msg);
        }
    }

    /// At the end: `-k state` found none where frames (enter/leave) were.
    fn hint_at_end(&mut self) {
        self.warn_unmatched_selectors();
        let enters = std::mem::take(&mut self.enters);
        if enters > 0 && self.states == 0 && self.selector.predicate.kinds.contains(&Kind::State) {
            self.warnings.warn(format!(
                "no `state` rows, but {} `enter` rows: frames become states with \
                 `trace-cat --spans` (trace-cat --spans IN | trace-filter -k state)",
                enters
            ));
        }
    }

    /// Queues the container row of `loc` and its ancestors, outermost first,
    /// unless passed on already.
    fn queue_chain(&mut self, loc: Sym, mark: u64) {
        let mut chain: Vec<Sym> = Vec::new();
        let mut at = loc;
        while let Some(c) = self.containers.get(&at) {
            if c.passed || chain.contains(&at) {
                break;
            }
            chain.push(at);
            at = c.row.peer;
            if at.is_empty() {
                break;
            }
        }
        for loc in chain.iter().rev() {
            if let Some(c) = self.containers.get_mut(loc) {
                c.passed = true;
                let mut copy = self.spare.pop().unwrap_or_default();
                copy.clone_from(&c.row);
                self.due.push_back((copy, mark, None));
            }
        }
    }

    /// Takes in a container row, queueing it (with its ancestors) when selected.
    fn declare(&mut self, rec: &Record, mark: u64) {
        let parent = self.place(rec.peer);
        let place = self.selector.place_of(rec, parent);
        self.seen.loc_names |= place.named;
        self.seen.under |= place.under;
        self.note_seen(rec);
        let selected = self.selector.selects(rec, place);
        let declared = Declared {
            row: rec.clone(),
            passed: false,
            place,
        };
        let old = self.containers.insert(rec.loc, declared);
        if let Some(old) = old.filter(|old| old.passed && old.row == *rec) {
            // An identical re-declaration (merged inputs): passed on already.
            if let Some(entry) = self.containers.get_mut(&rec.loc) {
                entry.passed = old.passed;
            }
            return;
        }
        if selected {
            self.queue_chain(rec.loc, mark);
        }
    }

    /// The predicate, except that a time window keeps or drops frames whole:
    /// a `leave` whose `enter` was passed is passed wherever it falls, one
    /// whose `enter` was dropped is dropped, so the output's stacks stay
    /// balanced (a frame whose `enter` falls before the window is left out).
    fn selects_frame_whole(&mut self, rec: &Record) -> bool {
        let place = self.place(rec.loc);
        let selected = self.selector.selects(rec, place);
        match rec.kind {
            Kind::Enter => {
                self.frames.entry(rec.loc).or_default().push(selected);
                selected
            }
            // A `leave` without an open frame is passed on if selected, for
            // the next stage to report.
            Kind::Leave => match self.frames.get_mut(&rec.loc).and_then(Vec::pop) {
                Some(entered) => entered && self.selector.selects_at_any_time(rec, place),
                None => selected,
            },
            _ => selected,
        }
    }

    /// Takes in any other row; true when it is to be passed on.
    fn select(&mut self, rec: &Record, mark: u64) -> bool {
        self.note_seen(rec);
        if !self.selects_frame_whole(rec) {
            return false;
        }
        if !rec.loc.is_empty() {
            self.queue_chain(rec.loc, mark);
        }
        if !rec.peer.is_empty() && self.containers.contains_key(&rec.peer) {
            self.queue_chain(rec.peer, mark);
        }
        true
    }
}

impl<S: RecordSource> crate::pipe::SourceStage for FilterSource<S> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some((row, mark, raw)) = self.due.pop_front() {
                rec.clone_from(&row);
                self.spare.push(row);
                self.mark = mark;
                self.passed_through = false;
                self.due_raw = raw;
                return Ok(true);
            }
            if !self.inner.next_record(rec)? {
                self.hint_at_end();
                return Ok(false);
            }
            match rec.kind {
                Kind::Enter => self.enters += 1,
                Kind::State => self.states += 1,
                _ => {}
            }
            if self.unseen.contains(rec.kind) {
                continue;
            }
            let mark = self.inner.mark();
            if rec.kind == Kind::Container {
                // Passed on (through `due`) only when selected.
                self.declare(rec, mark);
            } else if self.select(rec, mark) {
                if self.due.is_empty() {
                    self.mark = mark;
                    self.passed_through = true;
                    return Ok(true);
                }
                let mut copy = self.spare.pop().unwrap_or_default();
                copy.clone_from(rec);
                let raw = self.inner.raw_line().map(<[u8]>::to_vec);
                self.due.push_back((copy, mark, raw));
            }
        }
    }

    fn mark(&self) -> u64 {
        self.mark
    }

    fn locate(&self, mark: u64) -> Location {
        self.inner.locate(mark)
    }

    fn extra_columns(&self) -> &[String] {
        self.inner.extra_columns()
    }

    fn raw_line(&self) -> Option<&[u8]> {
        match self.passed_through {
            true => self.inner.raw_line(),
            false => self.due_raw.as_deref(),
        }
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// Dropping rows moves no bound: the inner source's.
    fn horizon(&self) -> Option<i64> {
        self.inner.horizon()
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        // Every row it passes on is as read, with its raw line (but the
        // containers, which are whole). What the consumer drops unread the
        // source may drop too, but the rows the filter follows itself.
        let followed = [
            Kind::Meta,
            Kind::Type,
            Kind::Container,
            Kind::Enter,
            Kind::Leave,
        ];
        let dropped_above = followed.into_iter().fold(demand.skip, KindSet::without);
        self.inner.agree(Demand {
            reads: demand.reads.and(self.selector.predicate.columns()),
            skip: self.skipped.union(dropped_above),
            // It decides each row by what the rows before it opened.
            thin_before: None,
        })
    }
}

/// Compiles a `--name` regular expression with a usage error on failure.
pub fn compile_name(pattern: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|e| Error::Usage(format!("bad --name regex: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let g = |p: &str, t: &str| Glob::new(p).unwrap().is_match(t);
        assert!(g("p*", "p12"));
        assert!(g("*", ""));
        assert!(g("p?", "p1"));
        assert!(!g("p?", "p12"));
        assert!(g("rank[0-3]/*", "rank2/thread0"));
        assert!(!g("rank[!0-3]*", "rank2"));
        assert!(g("a*b*c", "axxbyyc"));
        assert!(!g("a*b*c", "axxbyy"));
        assert!(g("[]]", "]"));
        assert!(Glob::new("p[").is_err());
    }
}
