//! Message matching: pairs `send` and `recv` halves into `msg` rows.
//!
//! Two rules, chosen per row:
//! - **tagged** halves (a `tag` is present, as MPI records have) match FIFO per
//!   channel `(comm, sender, receiver, tag)`: the k-th send with the k-th
//!   receive; a `recv` names its actual sender in `peer`;
//! - **keyed** halves (no `tag`, an `id`: Pajé links) match on
//!   `(comm, cat, id)`, the link container, link type and key.
//!
//! Either half may come first. A `msg` is emitted when the second half arrives
//! (its completion time), so the output keeps the stream order. Memory: the
//! halves in flight. A half waits for a partner on one location (the
//! receiver of a tagged send, the sender of a tagged receive, the link
//! container of a keyed half); when that location is destroyed the half can
//! never match and is released (dropped, or written flagged `U` at once).
//!
//! Here: the matcher's state and its sink; `halves` pairs halves, `release`
//! lets go of rows held and halves that can no longer match, `source` runs
//! the matcher on the reading side.

use std::collections::VecDeque;

use std::cell::RefCell;
use std::rc::Rc;

use crate::error::{Error, Location, Result, Warnings};
use crate::exec::batch::RecordBatch;
use crate::fasthash::{FastMap, FastSet};
use crate::model::record::{flags, ColumnSet, Kind, Record, Sym, ATTR_ORIG_TIME, ATTR_POSTS};
use crate::model::symbol::Symbols;
use crate::pipe::{Demand, Reads, RecordSink, RecordSource, Supply};

mod halves;
mod release;
mod source;

use release::uncount;

pub use halves::pair_halves;
pub use source::{MatchSource, Outbox};

/// What to do with halves that never find a partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unmatched {
    /// Drop them; the summary counts them.
    #[default]
    Drop,
    /// Write them as `send`/`recv` rows flagged `U` when they are released.
    Keep,
    /// Stop with an error naming the first one released.
    Error,
}

/// The channel of a message half: the fields of its rule (docs/stream.md
/// §3). Halves of one channel pair first in, first out.
#[derive(Debug, Default)]
struct Channel {
    comm: Sym,
    /// Tagged: the sender; keyed: the link type (`cat`).
    first: Sym,
    /// Tagged: the receiver; keyed: empty.
    second: Sym,
    /// Tagged halves have one; keyed ones none.
    tag: Option<i64>,
    /// Keyed: the link key; tagged: empty.
    id: String,
}

// By hand: tagged halves, most of them, have no key, and comparing or
// hashing an empty key as text was a `memcmp` call and a byte hash at
// every lookup.
impl PartialEq for Channel {
    fn eq(&self, other: &Channel) -> bool {
        (self.comm, self.first, self.second, self.tag)
            == (other.comm, other.first, other.second, other.tag)
            && self.id.len() == other.id.len()
            && (self.id.is_empty() || self.id == other.id)
    }
}

impl Eq for Channel {}

impl std::hash::Hash for Channel {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.comm, self.first, self.second, self.tag).hash(state);
        if !self.id.is_empty() {
            self.id.hash(state);
        }
    }
}

impl Clone for Channel {
    fn clone(&self) -> Channel {
        let mut c = Channel::default();
        c.clone_from(self);
        c
    }

    /// Field by field, so a spare key's buffer is reused.
    fn clone_from(&mut self, src: &Channel) {
        (self.comm, self.first, self.second, self.tag) = (src.comm, src.first, src.second, src.tag);
        self.id.clone_from(&src.id);
    }
}

impl Channel {
    /// Makes this the channel of `rec`, reusing the key's buffer.
    fn set(&mut self, rec: &Record) {
        self.comm = rec.comm;
        self.tag = rec.tag;
        self.id.clear();
        if rec.tag.is_some() {
            (self.first, self.second) = sender_receiver(rec);
        } else {
            (self.first, self.second) = (rec.cat, Sym::EMPTY);
            self.id.push_str(&rec.id);
        }
    }
}

/// The sender and the receiver of a tagged half: with the communicator
/// and the tag, its channel.
pub fn sender_receiver(rec: &Record) -> (Sym, Sym) {
    if rec.kind == Kind::Send {
        (rec.loc, rec.peer)
    } else {
        (rec.peer, rec.loc)
    }
}

/// Whether `rec` posts a nonblocking receive (the encoded attrs are looked
/// at first: most events have no such attribute).
pub fn is_posting(rec: &Record) -> bool {
    rec.kind == Kind::Event
        && !rec.id.is_empty()
        && rec.attrs.contains("posts=recv")
        && rec.attr(ATTR_POSTS).as_deref() == Some("recv")
}

/// What a matcher did, for the summary its command prints.
#[derive(Debug, Default, Clone)]
pub struct MatchSummary {
    /// Messages made.
    pub matched: u64,
    /// Messages read already paired (`msg` rows: the Pajé reader pairs
    /// link ends itself), passed on as they are.
    pub read_paired: u64,
    /// Messages received before they were sent (flagged `R`).
    pub reversed: u64,
    /// Messages whose halves give different sizes (both kept in attrs).
    pub size_mismatches: u64,
    /// Halves that never matched, per channel (readable form): (sends, receives).
    pub unmatched: FastMap<String, (u64, u64)>,
    /// The first half released unmatched: its mark (see
    /// [`crate::pipe::RecordSource::mark`]) and a description.
    pub first_unmatched: Option<(u64, String)>,
}

impl MatchSummary {
    /// Unmatched halves in all (sends, receives).
    pub fn unmatched_total(&self) -> (u64, u64) {
        self.unmatched
            .values()
            .fold((0, 0), |(s, r), (a, b)| (s + a, r + b))
    }

    /// The `n` channels with the most unmatched halves, most first.
    pub fn worst_channels(&self, n: usize) -> Vec<(&str, u64, u64)> {
        let mut all: Vec<(&str, u64, u64)> = self
            .unmatched
            .iter()
            .map(|(k, (s, r))| (k.as_str(), *s, *r))
            .collect();
        all.sort_by(|a, b| (b.1 + b.2).cmp(&(a.1 + a.2)).then(a.0.cmp(b.0)));
        all.truncate(n);
        all
    }
}

/// How a [`Matcher`] works, beyond its rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct MatchOptions {
    /// What to do with halves that never match.
    pub unmatched: Unmatched,
    /// Pass the halves on too, not only the messages made of them.
    pub halves: bool,
    /// An error when more halves than this are in flight.
    pub max_pending: Option<u64>,
    /// Match only halves with a tag (MPI-like messages); halves keyed by an
    /// id (Pajé links) pass on as they are.
    pub tagged_only: bool,
}

/// The halves waiting on one channel, oldest first, packed (a few dozen
/// bytes each instead of a whole [`Record`]). They are all of one kind: a
/// half of the other kind would have matched the oldest of them.
struct Queue {
    kind: Kind,
    halves: VecDeque<Half>,
}

/// What became of message halves, by the marks of their rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairing {
    /// The halves of these two rows make one message.
    Paired(u64, u64),
    /// This half is given up: its partner cannot come (a location it waits
    /// on was destroyed, or the stream ended).
    GivenUp(u64),
}

/// One poster's nonblocking receives in posting order: the request id, and
/// the receive once it completed.
type Postings = VecDeque<(String, Option<Half>)>;

/// A pending half, packed, with the mark of the row it came from, its place
/// among the halves packed (marks are all 0 when the matcher is a sink, so
/// ties are broken by this, not by where a hash map kept the half), and the
/// location it waits on (see [`awaited`]), known without unpacking it.
struct Half {
    packed: RecordBatch,
    mark: u64,
    arrival: u64,
    awaited: Sym,
}

impl Half {
    /// `rec`, of the row at `mark`, packed in a spare buffer, as the half
    /// after the `arrivals` packed so far (which it counts).
    fn pack(rec: &Record, mark: u64, (spare, arrivals): (&mut Vec<RecordBatch>, &mut u64)) -> Half {
        let mut packed = spare.pop().unwrap_or_default();
        packed.push(rec);
        *arrivals += 1;
        Half {
            packed,
            mark,
            arrival: *arrivals,
            awaited: awaited(rec),
        }
    }
}

/// A sink stage that matches message halves and passes every other row on.
pub struct Matcher<S> {
    next: S,
    symbols: Symbols,
    /// Pending halves by channel; a channel is removed when its queue
    /// empties.
    pending: FastMap<Channel, Queue>,
    /// Buffers of finished channels and halves, reused so matching a
    /// message allocates nothing once the in-flight set has been seen.
    spare_keys: Vec<Channel>,
    spare_queues: Vec<VecDeque<Half>>,
    spare_halves: Vec<RecordBatch>,
    /// Nonblocking receives posted and not yet matched, per poster, in
    /// posting order: their request id, and the receive once it completed.
    posted: FastMap<String, Postings>,
    /// Completed receives waiting for an earlier posting to complete.
    held_receives: u64,
    key: Channel,
    /// The waiting half being paired, unpacked.
    first: Record,
    options: MatchOptions,
    out: Record,
    /// The mark of the row being written (0 when the matcher is a sink).
    mark: u64,
    /// The pairings made, when observed.
    observed: Option<Vec<Pairing>>,
    summary: MatchSummary,
    /// Latest completion time passed on, where leftovers are written.
    clock: Option<i64>,
    /// Pending halves per location they wait on (see [`awaited`]).
    waiting: FastMap<Sym, u64>,
    /// Destroyed locations that still have halves waiting on them, and how
    /// many halves that is: swept out once they are half of all pending.
    dead: FastSet<Sym>,
    dead_halves: u64,
    pending_halves: u64,
    /// Halves packed so far: the next one's [`Half::arrival`].
    arrivals: u64,
    /// The mark and arrival of [`MatchSummary::first_unmatched`].
    first_unmatched_place: Option<(u64, u64)>,
    warnings: Warnings,
}

/// The location a pending half waits on: its partner can only come from
/// there (tagged halves) or inside it (keyed halves: the link container).
/// Keyed halves without a container wait on nothing in particular.
fn awaited(rec: &Record) -> Sym {
    if rec.tag.is_some() {
        rec.peer
    } else {
        rec.comm
    }
}

impl<S: RecordSink> Matcher<S> {
    /// A matcher writing into `next` (rows whose identifiers are in
    /// `symbols`) that drops or keeps (`unmatched`) halves left over, and
    /// warns about them.
    pub fn new(next: S, unmatched: Unmatched, symbols: Symbols, warnings: Warnings) -> Matcher<S> {
        let options = MatchOptions {
            unmatched,
            ..MatchOptions::default()
        };
        Matcher::with_options(next, options, symbols, warnings)
    }

    /// A matcher writing into `next`, working as `options` say.
    pub fn with_options(
        next: S,
        options: MatchOptions,
        symbols: Symbols,
        warnings: Warnings,
    ) -> Matcher<S> {
        Matcher {
            next,
            symbols,
            pending: FastMap::default(),
            spare_keys: Vec::new(),
            spare_queues: Vec::new(),
            spare_halves: Vec::new(),
            posted: FastMap::default(),
            held_receives: 0,
            key: Channel::default(),
            first: Record::default(),
            options,
            out: Record::new(Kind::Msg),
            mark: 0,
            observed: None,
            summary: MatchSummary::default(),
            clock: None,
            waiting: FastMap::default(),
            dead: FastSet::default(),
            dead_halves: 0,
            pending_halves: 0,
            arrivals: 0,
            first_unmatched_place: None,
            warnings,
        }
    }

    /// Sets the mark of the rows written next (a source-side matcher
    /// remembers where each half came from).
    pub fn set_mark(&mut self, mark: u64) {
        self.mark = mark;
    }

    /// What the matcher did so far.
    pub fn summary(&self) -> &MatchSummary {
        &self.summary
    }

    /// The sink it writes to.
    pub fn inner(&self) -> &S {
        &self.next
    }

    /// The stage after this one.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.next
    }

    /// The stage after this one, this one done with.
    pub fn into_inner(self) -> S {
        self.next
    }
}

/// The channel of `rec` in readable form, for the summary.
fn describe_channel(rec: &Record, symbols: &Symbols) -> String {
    let text = |sym| symbols.text(sym);
    match rec.tag {
        Some(tag) => {
            let (sender, receiver) = sender_receiver(rec);
            format!(
                "{} -> {} comm {} tag {tag}",
                text(sender),
                text(receiver),
                text(rec.comm)
            )
        }
        None => format!(
            "link {} key {} in {}",
            text(rec.cat),
            rec.id,
            text(rec.comm)
        ),
    }
}

impl<S: RecordSink> RecordSink for Matcher<S> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some(t) = rec.completion() {
            self.clock = Some(self.clock.map_or(t, |c| c.max(t)));
        }
        match rec.kind {
            Kind::Send | Kind::Recv if self.ignores(rec) => self.next.write(rec),
            Kind::Recv if !rec.id.is_empty() && !self.posted.is_empty() => self.completed(rec),
            Kind::Send | Kind::Recv => self.half(rec),
            Kind::Event if is_posting(rec) => {
                self.post(rec);
                self.next.write(rec)
            }
            Kind::Destroy => {
                self.next.write(rec)?;
                self.on_destroy(rec.loc)
            }
            Kind::Container if self.dead.contains(&rec.loc) => {
                // A name used again: what waited on its first life goes first.
                self.sweep()?;
                self.next.write(rec)
            }
            _ => self.next.write(rec),
        }
    }

    fn finish(&mut self) -> Result<()> {
        // Receives still waiting for a posting that never completed.
        let mut recv = Record::default();
        let mut posters: Vec<(String, Postings)> =
            std::mem::take(&mut self.posted).into_iter().collect();
        posters.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, queue) in posters {
            for half in queue.into_iter().filter_map(|(_, done)| done) {
                half.packed.reader().next_into(&mut recv);
                self.half_marked(&recv, half.mark)?;
            }
        }
        self.held_receives = 0;
        let mut left = Vec::new();
        for (_, queue) in self.pending.drain() {
            left.extend(queue.halves);
        }
        self.release(left)?;
        let (sends, recvs) = self.summary.unmatched_total();
        if sends + recvs > 0 && self.options.unmatched != Unmatched::Error {
            self.warnings.warn(format!(
                "{} message half/halves never matched ({sends} send, {recvs} recv){}",
                sends + recvs,
                if self.options.unmatched == Unmatched::Keep {
                    "; written flagged U"
                } else {
                    "; left out (trace-match lists them; match a trace before splitting it into parts)"
                }
            ));
        }
        if self.summary.size_mismatches > 0 {
            self.warnings.warn(format!(
                "{} message(s) whose send and receive give different sizes: the send's kept, both in attrs send.size and recv.size",
                self.summary.size_mismatches
            ));
        }
        self.next.finish()
    }
}

impl<S: RecordSink> Matcher<S> {
    /// Records from now on which halves (by the mark of their rows) are
    /// paired, and which are given up, for [`Matcher::take_pairings`]; the
    /// messages themselves are no longer made (a pairing oracle).
    pub fn observe_pairings(&mut self) {
        self.observed.get_or_insert_with(Vec::new);
    }

    /// Every half waiting for its partner (held receives too), unpacked,
    /// with the mark of its row.
    pub fn waiting_halves(&self) -> Vec<(u64, Record)> {
        let queued = self.pending.values().flat_map(|q| q.halves.iter());
        let held = self
            .posted
            .values()
            .flat_map(|q| q.iter().filter_map(|(_, done)| done.as_ref()));
        queued
            .chain(held)
            .map(|half| {
                let mut rec = Record::default();
                half.packed.reader().next_into(&mut rec);
                (half.mark, rec)
            })
            .collect()
    }

    /// The pairings made since the last call (see [`Matcher::observe_pairings`]).
    pub fn take_pairings(&mut self) -> std::vec::Drain<'_, Pairing> {
        self.observed.get_or_insert_with(Vec::new).drain(..)
    }

    /// Notes `rec` and says whether the matcher would pass it on unchanged
    /// and at once, so a source-side matcher can hand it over without a copy.
    pub fn passes_through(&mut self, rec: &Record) -> bool {
        if let Some(t) = rec.completion() {
            self.clock = Some(self.clock.map_or(t, |c| c.max(t)));
        }
        match rec.kind {
            Kind::Send | Kind::Recv => self.ignores(rec),
            Kind::Destroy => false,
            Kind::Container => !self.dead.contains(&rec.loc),
            Kind::Event => !is_posting(rec),
            _ => true,
        }
    }

    /// Whether a half is left as it is ([`MatchOptions::tagged_only`]).
    fn ignores(&self, rec: &Record) -> bool {
        self.options.tagged_only && rec.tag.is_none()
    }

    /// Whether receives are held for an earlier posting: the rows written
    /// meanwhile may be followed by messages that complete before them.
    pub fn is_holding(&self) -> bool {
        self.held_receives > 0
    }
}

#[cfg(test)]
mod tests;
