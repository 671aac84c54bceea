//! Row selection that keeps the output a valid stream.
//!
//! [`Predicate`] decides about one row. [`FilterSource`] applies it and makes
//! sure every kept row's `container` rows (its location, its peer, and their
//! ancestors) come before it: container rows are held back until a kept row
//! refers to them. Memory: one record per declared container.

use crate::fasthash::FastMap;

use regex::Regex;

use super::window::Window;
use std::collections::VecDeque;

use crate::error::{Error, Location, Result};
use crate::pipe::RecordSource;
use crate::record::{Kind, Record};

/// A shell-style glob over a whole value: `*` any run, `?` one character,
/// `[abc]`, `[a-z]`, `[!x]`, `{a,b}` (through `globset`; `/` is an ordinary
/// character).
#[derive(Debug, Clone)]
pub struct Glob {
    matcher: globset::GlobMatcher,
}

impl Glob {
    /// Compiles `pattern`, rejecting malformed ones (an unclosed `[`...).
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("bad glob `{pattern}`: {}", e.kind()))?;
        Ok(Glob {
            matcher: glob.compile_matcher(),
        })
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        self.matcher.is_match(text)
    }
}

/// One `--attr` condition: the key is present, or present with this value.
#[derive(Debug, Clone)]
pub struct AttrCondition {
    /// Attribute key.
    pub key: String,
    /// Required value, or `None` for presence only.
    pub value: Option<String>,
}

impl AttrCondition {
    /// Parses `key=value` or `key`.
    pub fn parse(s: &str) -> Result<AttrCondition, String> {
        let (key, value) = match s.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (s, None),
        };
        if key.is_empty() {
            return Err(format!("bad attribute condition `{s}`: empty key"));
        }
        Ok(AttrCondition {
            key: key.to_string(),
            value,
        })
    }
}

/// The conditions of `trace-filter`; all given conditions must hold.
#[derive(Debug, Clone, Default)]
pub struct Predicate {
    /// Kinds to keep (any of them); empty keeps every kind.
    pub kinds: Vec<Kind>,
    /// Location globs (any of them); empty keeps every location.
    pub locs: Vec<Glob>,
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
    /// Whether `rec` is selected (after `invert`). `meta` and `type` rows are
    /// always selected (they describe the stream).
    pub fn selects(&self, rec: &Record) -> bool {
        if matches!(rec.kind, Kind::Meta | Kind::Type) {
            return true;
        }
        self.matches(rec, true) != self.invert
    }

    /// [`Predicate::selects`] without the time window.
    pub fn selects_at_any_time(&self, rec: &Record) -> bool {
        if matches!(rec.kind, Kind::Meta | Kind::Type) {
            return true;
        }
        self.matches(rec, false) != self.invert
    }

    fn matches(&self, rec: &Record, in_window: bool) -> bool {
        (self.kinds.is_empty() || self.kinds.contains(&rec.kind))
            && (self.locs.is_empty() || self.locs.iter().any(|g| g.is_match(&rec.loc)))
            && (self.cats.is_empty() || self.cats.iter().any(|g| g.is_match(&rec.cat)))
            && self.name.as_ref().is_none_or(|re| re.is_match(&rec.name))
            && (!in_window || self.window.is_none_or(|w| w.contains(rec)))
            && self.attrs.iter().all(|c| match rec.attr(&c.key) {
                Some(v) => c.value.as_ref().is_none_or(|want| *want == v),
                None => false,
            })
    }
}

/// A reading-side stage: the rows of `inner` selected by a [`Predicate`], each
/// preceded by the `container` rows it needs that were not passed on yet.
/// Placed before the hand-over to the writer, so rows it drops never cross
/// to the other core.
pub struct FilterSource<S> {
    inner: S,
    predicate: Predicate,
    /// Every declared container, and whether it was passed on.
    containers: FastMap<String, (Record, bool)>,
    /// Rows due before the next one read: needed containers, then the row that
    /// needed them, with the marks of the rows they came with.
    due: VecDeque<(Record, u64)>,
    spare: Vec<Record>,
    mark: u64,
    /// Per location, whether each open frame's `enter` was passed on: its
    /// `leave` goes with it, so frames stay whole (memory: the open frames).
    frames: FastMap<String, Vec<bool>>,
}

impl<S: RecordSource> FilterSource<S> {
    /// The rows of `inner` that `predicate` selects.
    pub fn new(inner: S, predicate: Predicate) -> FilterSource<S> {
        FilterSource {
            inner,
            predicate,
            containers: FastMap::default(),
            due: VecDeque::new(),
            spare: Vec::new(),
            mark: 0,
            frames: FastMap::default(),
        }
    }

    /// Queues the container row of `loc` and its ancestors, outermost first,
    /// unless passed on already.
    fn queue_chain(&mut self, loc: &str, mark: u64) {
        let mut chain: Vec<&str> = Vec::new();
        let mut at = loc;
        while let Some((rec, passed)) = self.containers.get(at) {
            if *passed || chain.contains(&at) {
                break;
            }
            chain.push(at);
            at = &rec.peer;
            if at.is_empty() {
                break;
            }
        }
        let chain: Vec<String> = chain.iter().rev().map(|s| s.to_string()).collect();
        for loc in &chain {
            if let Some((rec, passed)) = self.containers.get_mut(loc) {
                *passed = true;
                let mut copy = self.spare.pop().unwrap_or_default();
                copy.clone_from(rec);
                self.due.push_back((copy, mark));
            }
        }
    }

    /// Takes in a container row, queueing it (with its ancestors) when selected.
    fn declare(&mut self, rec: &Record, mark: u64) {
        let selected = self.predicate.selects(rec);
        let old = self
            .containers
            .insert(rec.loc.clone(), (rec.clone(), false));
        if let Some((old, true)) = old {
            if old == *rec {
                // An identical re-declaration (merged inputs): passed on already.
                if let Some(entry) = self.containers.get_mut(&rec.loc) {
                    entry.1 = true;
                }
                return;
            }
        }
        if selected {
            self.queue_chain(&rec.loc, mark);
        }
    }

    /// The predicate, except that a time window keeps or drops frames whole:
    /// a `leave` whose `enter` was passed is passed wherever it falls, one
    /// whose `enter` was dropped is dropped, so the output's stacks stay
    /// balanced (a frame whose `enter` falls before the window is left out).
    fn selects_frame_whole(&mut self, rec: &Record) -> bool {
        let selected = self.predicate.selects(rec);
        match rec.kind {
            Kind::Enter => {
                match self.frames.get_mut(&rec.loc) {
                    Some(stack) => stack.push(selected),
                    None => {
                        self.frames.insert(rec.loc.clone(), vec![selected]);
                    }
                }
                selected
            }
            // A `leave` without an open frame is passed on if selected, for
            // the next stage to report.
            Kind::Leave => match self.frames.get_mut(&rec.loc).and_then(Vec::pop) {
                Some(entered) => entered && self.predicate.selects_at_any_time(rec),
                None => selected,
            },
            _ => selected,
        }
    }

    /// Takes in any other row; true when it is to be passed on.
    fn select(&mut self, rec: &Record, mark: u64) -> bool {
        if !self.selects_frame_whole(rec) {
            return false;
        }
        if !rec.loc.is_empty() {
            self.queue_chain(&rec.loc, mark);
        }
        if !rec.peer.is_empty() && self.containers.contains_key(&rec.peer) {
            self.queue_chain(&rec.peer, mark);
        }
        true
    }
}

impl<S: RecordSource> RecordSource for FilterSource<S> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some((row, mark)) = self.due.pop_front() {
                rec.clone_from(&row);
                self.spare.push(row);
                self.mark = mark;
                return Ok(true);
            }
            if !self.inner.next_record(rec)? {
                return Ok(false);
            }
            let mark = self.inner.mark();
            if rec.kind == Kind::Container {
                // Passed on (through `due`) only when selected.
                self.declare(rec, mark);
            } else if self.select(rec, mark) {
                if self.due.is_empty() {
                    self.mark = mark;
                    return Ok(true);
                }
                let mut copy = self.spare.pop().unwrap_or_default();
                copy.clone_from(rec);
                self.due.push_back((copy, mark));
            }
        }
    }

    fn location(&self) -> Location {
        self.inner.location()
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
