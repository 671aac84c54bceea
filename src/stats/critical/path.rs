//! Each location's critical path so far: the time per function of the path
//! that ends at its latest time, and (with segments) the path itself, as a
//! chain shared between locations. A bounded history of what was credited
//! lets the path be read at a recent earlier time, which is where a wait
//! found late (a receive paired after its completion, a collective
//! released after its last arrival) crosses.

use std::collections::VecDeque;
use std::sync::Arc;

use imbl::OrdMap;

use crate::model::frames::{FrameStack, OpenFrame};
use crate::model::record::Sym;

/// How many credits (and crossings) each location remembers.
pub const HISTORY: usize = 256;

/// How many crossings keep the path they replaced, per location.
const KEPT_CROSSINGS: usize = 2;

/// A stretch of the path: a location in a function from `start` to `end`.
#[derive(Debug)]
pub struct Segment {
    /// The location.
    pub loc: Sym,
    /// The function (the innermost open frame; empty outside frames).
    pub name: Sym,
    /// Its start.
    pub start: i64,
    /// Its end.
    pub end: i64,
    /// The path before it.
    pub before: Option<Arc<Segment>>,
}

impl Drop for Segment {
    /// Drops a long chain without a recursion per segment.
    fn drop(&mut self) {
        let mut next = self.before.take();
        while let Some(segment) = next {
            next = match Arc::try_unwrap(segment) {
                Ok(mut alone) => alone.before.take(),
                Err(_) => None,
            };
        }
    }
}

/// A path's value at some time: the time per function slot, and its chain.
/// The times are a persistent map: every crossing copies a path, and a copy
/// shares all but what changes after it, so it costs the same with ten
/// functions or ten thousand; and a path holds only the functions it went
/// through.
#[derive(Clone, Default)]
pub struct Value {
    /// Time on the path per function slot (absent: none).
    pub times: OrdMap<usize, i64>,
    /// The path itself (with segments).
    pub chain: Option<Arc<Segment>>,
}

impl Value {
    fn add(&mut self, slot: usize, ns: i64) {
        *self.times.entry(slot).or_insert(0) += ns;
    }
}

/// What a location's history holds, newest last.
enum Entry {
    /// `[from, to)` was credited to `slot`; `chain` is the path up to `to`.
    Credit {
        from: i64,
        to: i64,
        slot: usize,
        chain: Option<Arc<Segment>>,
    },
    /// At `at` the path came from elsewhere; `before` is the path it
    /// replaced, at `at` (none when no longer kept).
    Crossing { at: i64, before: Option<Box<Value>> },
}

/// An open frame: its function's slot and name.
#[derive(Debug, Default, Clone, Copy)]
struct PathFrame {
    slot: usize,
    name: Sym,
}

impl OpenFrame for PathFrame {
    fn name(&self) -> Sym {
        self.name
    }
}

/// One location: its open frames (and latest time, of any row), the path
/// up to `since`, and its history.
#[derive(Default)]
pub struct LocationPath {
    frames: FrameStack<PathFrame>,
    since: i64,
    value: Value,
    history: VecDeque<Entry>,
}

impl LocationPath {
    /// Notes a row of the location at `t`.
    pub fn note(&mut self, t: i64) {
        self.frames.note(t);
    }

    /// Its latest time (any row).
    pub fn last(&self) -> i64 {
        self.frames.last()
    }
}

/// The paths of every location, with or without their segments.
#[derive(Debug, Clone, Copy)]
pub struct Paths {
    segments: bool,
}

impl Paths {
    /// Paths keeping their chains of segments when `segments`.
    pub fn new(segments: bool) -> Paths {
        Paths { segments }
    }

    /// A lane starting at `start`.
    pub fn lane(&self, start: i64) -> LocationPath {
        let mut lane = LocationPath {
            since: start,
            ..LocationPath::default()
        };
        lane.note(start);
        lane
    }

    /// Credits `lane` (location `loc`) up to `t` to its innermost frame
    /// (`outside`'s slot when none).
    pub fn advance(&self, lane: &mut LocationPath, loc: Sym, t: i64, outside: usize) {
        lane.note(t);
        if t <= lane.since {
            return;
        }
        let (slot, name) = innermost(lane, outside);
        lane.value.add(slot, t - lane.since);
        if self.segments {
            lane.value.chain = Some(extend(lane.value.chain.take(), loc, name, lane.since, t));
        }
        let chain = lane.value.chain.clone();
        remember(
            lane,
            Entry::Credit {
                from: lane.since,
                to: t,
                slot,
                chain,
            },
        );
        lane.since = t;
    }

    /// Opens a frame of function `slot` named `name` at `t`.
    pub fn push(&self, lane: &mut LocationPath, (slot, name): (usize, Sym), t: i64) {
        *lane.frames.enter(t) = PathFrame { slot, name };
    }

    /// Closes the innermost frame at `t`, if any (the waits check the
    /// `leave`).
    pub fn pop(&self, lane: &mut LocationPath, t: i64) {
        lane.frames.close(t);
    }

    /// The path of `lane` (location `loc`) at `t`: extended past its latest
    /// credit as its innermost frame, or read back through its history;
    /// `None` when `t` is older than what it remembers.
    pub fn value_at(&self, lane: &LocationPath, loc: Sym, t: i64, outside: usize) -> Option<Value> {
        let mut value = lane.value.clone();
        if t >= lane.since {
            let (slot, name) = innermost(lane, outside);
            if t > lane.since {
                value.add(slot, t - lane.since);
                if self.segments {
                    value.chain = Some(extend(value.chain, loc, name, lane.since, t));
                }
            }
            return Some(value);
        }
        for entry in lane.history.iter().rev() {
            match entry {
                Entry::Credit {
                    from,
                    to,
                    slot,
                    chain,
                } => {
                    if *to <= t {
                        return Some(value);
                    }
                    let back = *to - t.max(*from);
                    value.add(*slot, -back);
                    if self.segments {
                        value.chain = truncate(chain.as_ref(), t);
                    }
                    if *from <= t {
                        return Some(value);
                    }
                }
                Entry::Crossing { at, before } if *at > t => value = *before.clone()?,
                Entry::Crossing { .. } => return Some(value),
            }
        }
        None
    }

    /// The path of `lane` (location `loc`) now comes from `from` at `at`:
    /// what `lane` did after `at` stays on it. Returns whether it could
    /// (both paths known at `at`).
    pub fn cross(
        &self,
        lane: &mut LocationPath,
        loc: Sym,
        from: Value,
        at: i64,
        outside: usize,
    ) -> bool {
        // A walk back from the end meets a later crossing first and never
        // comes this far.
        let later = lane
            .history
            .iter()
            .any(|e| matches!(e, Entry::Crossing { at: when, .. } if *when >= at));
        if later {
            return true;
        }
        let Some(old) = self.value_at(lane, loc, at, outside) else {
            return false;
        };
        if at > lane.since {
            self.advance(lane, loc, at, outside);
        }
        let mut value = from;
        // What `lane` did after `at`: its credits since, all in its history
        // (no crossing is later, and `old` was read back through them).
        for entry in lane.history.iter().rev() {
            match entry {
                Entry::Credit { from, to, slot, .. } if *to > at => {
                    value.add(*slot, *to - (*from).max(at));
                }
                _ => break,
            }
        }
        insert_crossing(lane, at, old);
        if self.segments {
            value.chain = self.replay(lane, loc, at, value.chain.take());
        }
        lane.value = value;
        true
    }

    /// The credits of `lane` after `at`, put again on `base` (their chain
    /// entries renewed to match).
    fn replay(
        &self,
        lane: &mut LocationPath,
        loc: Sym,
        at: i64,
        base: Option<Arc<Segment>>,
    ) -> Option<Arc<Segment>> {
        let first = lane.history.iter().rposition(|e| match e {
            Entry::Credit { to, .. } => *to <= at,
            Entry::Crossing { at: when, .. } => *when <= at,
        });
        let mut chain = base;
        for entry in lane.history.iter_mut().skip(first.map_or(0, |i| i + 1)) {
            if let Entry::Credit {
                from,
                to,
                chain: entry_chain,
                ..
            } = entry
            {
                let name = entry_chain.as_ref().map_or(Sym::EMPTY, |s| s.name);
                chain = Some(extend(chain, loc, name, (*from).max(at), *to));
                *entry_chain = chain.clone();
            }
        }
        chain
    }
}

/// The slot and name of `lane`'s innermost frame (`outside`'s slot, no
/// name, when none is open).
fn innermost(lane: &LocationPath, outside: usize) -> (usize, Sym) {
    let frame = lane.frames.innermost();
    frame.map_or((outside, Sym::EMPTY), |f| (f.slot, f.name))
}

/// Adds an entry to `lane`'s history, forgetting the oldest beyond
/// [`HISTORY`] and the replaced paths of all but the last crossings.
fn remember(lane: &mut LocationPath, entry: Entry) {
    if lane.history.len() == HISTORY {
        lane.history.pop_front();
    }
    lane.history.push_back(entry);
}

/// Puts a crossing at `at` into `lane`'s history, in time order (a credit
/// across `at` is split), keeping the path it replaced.
fn insert_crossing(lane: &mut LocationPath, at: i64, before: Value) {
    let at_or_after = lane.history.iter().position(|e| match e {
        Entry::Credit { to, .. } => *to > at,
        Entry::Crossing { at: when, .. } => *when > at,
    });
    let mut position = at_or_after.unwrap_or(lane.history.len());
    if let Some(Entry::Credit {
        from,
        to,
        slot,
        chain,
    }) = lane.history.get(position)
    {
        if *from < at {
            let (from, to, slot, chain) = (*from, *to, *slot, chain.clone());
            let head = Entry::Credit {
                from,
                to: at,
                slot,
                chain: truncate(chain.as_ref(), at),
            };
            lane.history[position] = Entry::Credit {
                from: at,
                to,
                slot,
                chain,
            };
            lane.history.insert(position, head);
            position += 1;
        }
    }
    let crossing = Entry::Crossing {
        at,
        before: Some(Box::new(before)),
    };
    lane.history.insert(position, crossing);
    while lane.history.len() > HISTORY {
        lane.history.pop_front();
    }
    let mut kept = 0;
    for entry in lane.history.iter_mut().rev() {
        if let Entry::Crossing { before, .. } = entry {
            kept += usize::from(before.is_some());
            if kept > KEPT_CROSSINGS {
                *before = None;
            }
        }
    }
}

/// `chain` with a stretch of `loc` in `name` from `start` to `end` added
/// (the last segment lengthened when it is the same stretch).
fn extend(chain: Option<Arc<Segment>>, loc: Sym, name: Sym, start: i64, end: i64) -> Arc<Segment> {
    if let Some(mut last) = chain {
        let joins = last.loc == loc && last.name == name && last.end == start;
        if joins {
            if let Some(alone) = Arc::get_mut(&mut last) {
                alone.end = end;
                return last;
            }
            let before = last.before.clone();
            return Arc::new(Segment {
                loc,
                name,
                start: last.start,
                end,
                before,
            });
        }
        return Arc::new(Segment {
            loc,
            name,
            start,
            end,
            before: Some(last),
        });
    }
    Arc::new(Segment {
        loc,
        name,
        start,
        end,
        before: None,
    })
}

/// `chain` cut at `t`: its segments before `t`, the one across `t` ending there.
fn truncate(chain: Option<&Arc<Segment>>, t: i64) -> Option<Arc<Segment>> {
    let mut at = chain.cloned();
    while let Some(segment) = at.clone() {
        if segment.start < t {
            if segment.end <= t {
                return Some(segment);
            }
            let before = segment.before.clone();
            let cut = Segment {
                loc: segment.loc,
                name: segment.name,
                start: segment.start,
                end: t,
                before,
            };
            return Some(Arc::new(cut));
        }
        at = segment.before.clone();
    }
    None
}
