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

use std::collections::VecDeque;

use std::cell::RefCell;
use std::rc::Rc;

use crate::error::{Error, Location, Result, Warnings};
use crate::exec::batch::RecordBatch;
use crate::fasthash::{FastMap, FastSet};
use crate::model::record::{flags, ColumnSet, Kind, Record, Sym, ATTR_ORIG_TIME, ATTR_POSTS};
use crate::model::symbol::Symbols;
use crate::pipe::{Demand, Reads, RecordSink, RecordSource, Supply};

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
#[derive(Debug, Default, PartialEq, Eq, Hash)]
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

/// The sender and the receiver of a tagged half.
fn sender_receiver(rec: &Record) -> (Sym, Sym) {
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

/// A pending half, packed, with the mark of the row it came from.
struct Half {
    packed: RecordBatch,
    mark: u64,
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
    pub fn next(&self) -> &S {
        &self.next
    }

    /// The stage after this one.
    pub fn next_mut(&mut self) -> &mut S {
        &mut self.next
    }
}

/// The attributes of a message: the first half's, then the second's (in
/// arrival order, as PajeNG lists a link's user fields); a key both give
/// with different values is written `send.KEY` and `recv.KEY`.
fn merge_attrs(out: &mut Record, first: &Record, second: &Record) {
    if first.attrs.is_empty() || second.attrs.is_empty() {
        out.attrs.push_str(if first.attrs.is_empty() {
            &second.attrs
        } else {
            &first.attrs
        });
        return;
    }
    let lists: [(Vec<(String, String)>, &str); 2] = [first, second].map(|r| {
        let side = if r.kind == Kind::Send { "send" } else { "recv" };
        (r.attrs().collect(), side)
    });
    for (n, (list, side)) in lists.iter().enumerate() {
        let other = &lists[1 - n].0;
        for (k, v) in list {
            let clash = other.iter().any(|(key, value)| key == k && value != v);
            if clash {
                out.push_attr(&format!("{side}.{k}"), v);
            } else if n == 0 || !other.iter().any(|(key, _)| key == k) {
                out.push_attr(k, v);
            }
        }
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

/// One half fewer waiting on `party`.
fn uncount(waiting: &mut FastMap<Sym, u64>, party: Sym) {
    if let Some(n) = waiting.get_mut(&party) {
        *n -= 1;
        if *n == 0 {
            waiting.remove(&party);
        }
    }
}

impl<S: RecordSink> Matcher<S> {
    /// A send or a receive: paired with the oldest waiting half of the other
    /// kind on its channel, or queued.
    fn half(&mut self, rec: &Record) -> Result<()> {
        check_half(rec)?;
        if self.options.halves {
            self.next.write(rec)?;
        }
        self.key.set(rec);
        if let Some(queue) = self.pending.get_mut(&self.key) {
            if queue.kind != rec.kind {
                let mut first = queue.halves.pop_front().expect("queues are never empty");
                if queue.halves.is_empty() {
                    if let Some((key, queue)) = self.pending.remove_entry(&self.key) {
                        self.spare_keys.push(key);
                        self.spare_queues.push(queue.halves);
                    }
                }
                first.packed.reader().next_into(&mut self.first);
                first.packed.clear();
                self.spare_halves.push(first.packed);
                self.pending_halves -= 1;
                uncount(&mut self.waiting, awaited(&self.first));
                if let Some(observed) = &mut self.observed {
                    // Observed pairings are all that is wanted: no message.
                    observed.push(Pairing::Paired(first.mark, self.mark));
                    self.summary.matched += 1;
                    return Ok(());
                }
                let sizes_differ = pair_halves(&mut self.out, &self.first, rec);
                self.summary.matched += 1;
                self.summary.reversed += u64::from(self.out.flags.contains(flags::REVERSED));
                self.summary.size_mismatches += u64::from(sizes_differ);
                return self.next.write(&self.out);
            }
        }
        self.enqueue(rec)
    }

    /// A nonblocking receive is posted on `rec.loc`: its completion will be
    /// matched after those posted before it there (MPI's non-overtaking rule).
    fn post(&mut self, rec: &Record) {
        self.posted
            .entry(self.poster(rec))
            .or_default()
            .push_back((rec.id.clone(), None));
    }

    /// A receive with a request id: when it was posted, it waits for the
    /// receives posted before it by the same poster (its `thread`, else its
    /// location), then all that are complete are matched in posting order.
    fn completed(&mut self, rec: &Record) -> Result<()> {
        let poster = self.poster(rec);
        let Some(queue) = self.posted.get_mut(&poster) else {
            return self.half(rec);
        };
        let Some(slot) = queue
            .iter_mut()
            .find(|(id, done)| *id == rec.id && done.is_none())
        else {
            return self.half(rec);
        };
        let mut packed = self.spare_halves.pop().unwrap_or_default();
        packed.push(rec);
        slot.1 = Some(Half {
            packed,
            mark: self.mark,
        });
        self.held_receives += 1;
        let mut ready = Vec::new();
        while queue.front().is_some_and(|(_, done)| done.is_some()) {
            let (_, done) = queue.pop_front().expect("front exists");
            ready.push(done.expect("checked"));
        }
        if queue.is_empty() {
            self.posted.remove(&poster);
        }
        let mut recv = Record::default();
        for Half { mut packed, mark } in ready {
            self.held_receives -= 1;
            packed.reader().next_into(&mut recv);
            packed.clear();
            self.spare_halves.push(packed);
            self.half_marked(&recv, mark)?;
        }
        Ok(())
    }

    /// Who posts and completes the nonblocking receive of `rec`: its
    /// `thread` attribute, else its location.
    fn poster(&self, rec: &Record) -> String {
        rec.attr("thread")
            .unwrap_or_else(|| self.symbols.text(rec.loc).to_string())
    }

    /// [`Matcher::half`] for a receive held since the row of `mark`.
    fn half_marked(&mut self, rec: &Record, mark: u64) -> Result<()> {
        let now = std::mem::replace(&mut self.mark, mark);
        let result = self.half(rec);
        self.mark = now;
        result
    }

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

    /// Queues a half that found no partner yet.
    fn enqueue(&mut self, rec: &Record) -> Result<()> {
        if let Some(max) = self.options.max_pending {
            if self.pending_halves >= max {
                return Err(Error::Record(format!(
                    "more than {max} message halves wait for their partner (--max-pending): is one side of the messages missing?"
                )));
            }
        }
        let mut packed = self.spare_halves.pop().unwrap_or_default();
        packed.push(rec);
        let half = Half {
            packed,
            mark: self.mark,
        };
        let queue = match self.pending.get_mut(&self.key) {
            Some(queue) => queue,
            None => {
                let mut key = self.spare_keys.pop().unwrap_or_default();
                key.clone_from(&self.key);
                let mut halves = self.spare_queues.pop().unwrap_or_default();
                // Most channels hold one half: no room for four.
                halves.reserve_exact(1);
                let queue = Queue {
                    kind: rec.kind,
                    halves,
                };
                self.pending.entry(key).or_insert(queue)
            }
        };
        queue.halves.push_back(half);
        self.pending_halves += 1;
        let party = awaited(rec);
        if !party.is_empty() {
            *self.waiting.entry(party).or_default() += 1;
        }
        Ok(())
    }

    /// `loc` is gone: the halves waiting on it can never match. They are
    /// swept once such halves make up half of all pending ones, so a sweep's
    /// cost is paid for by what it releases.
    fn on_destroy(&mut self, loc: Sym) -> Result<()> {
        let Some(&n) = self.waiting.get(&loc) else {
            return Ok(());
        };
        if self.dead.insert(loc) {
            self.dead_halves += n;
        }
        if self.dead_halves * 2 >= self.pending_halves {
            self.sweep()?;
        }
        Ok(())
    }

    /// Releases every queue that waits on a destroyed location.
    fn sweep(&mut self) -> Result<()> {
        let dead = std::mem::take(&mut self.dead);
        let mut gone = Vec::new();
        let first = &mut self.first;
        self.pending.retain(|_, q| {
            let doomed = q.halves.front().is_some_and(|h| {
                h.packed.reader().next_into(first);
                dead.contains(&awaited(first))
            });
            if doomed {
                gone.extend(q.halves.drain(..));
            }
            !doomed
        });
        self.dead_halves = 0;
        for loc in &dead {
            self.waiting.remove(loc);
        }
        self.pending_halves -= gone.len() as u64;
        self.release(gone)
    }

    /// Halves that will never match: counted per channel, then written
    /// flagged `U` in time order when kept (late, so each carries the latest
    /// time passed on, and its own in `orig_time`), dropped, or an error
    /// about the first (by mark) when asked.
    fn release(&mut self, halves: Vec<Half>) -> Result<()> {
        let mut left: Vec<(Record, u64)> = halves
            .iter()
            .map(|h| {
                let mut r = Record::default();
                h.packed.reader().next_into(&mut r);
                (r, h.mark)
            })
            .collect();
        left.sort_by_key(|(r, mark)| (r.time, *mark));
        if let Some(observed) = &mut self.observed {
            observed.extend(left.iter().map(|(_, mark)| Pairing::GivenUp(*mark)));
        }
        for (r, mark) in &left {
            let counts = self
                .summary
                .unmatched
                .entry(describe_channel(r, &self.symbols))
                .or_default();
            match r.kind {
                Kind::Send => counts.0 += 1,
                _ => counts.1 += 1,
            }
            let earlier = self
                .summary
                .first_unmatched
                .as_ref()
                .is_none_or(|(m, _)| mark < m);
            if earlier {
                let what = format!(
                    "{} of channel {}",
                    r.kind.with_article(),
                    describe_channel(r, &self.symbols)
                );
                self.summary.first_unmatched = Some((*mark, what));
            }
        }
        match self.options.unmatched {
            Unmatched::Drop => Ok(()),
            Unmatched::Error => match &self.summary.first_unmatched {
                Some((_, what)) => {
                    let (sends, recvs) = self.summary.unmatched_total();
                    Err(Error::Record(format!(
                        "{what} never matched ({} half/halves unmatched in all: {sends} send, {recvs} recv)",
                        sends + recvs
                    )))
                }
                None => Ok(()),
            },
            Unmatched::Keep if self.options.halves => Ok(()), // Already written.
            Unmatched::Keep => {
                for (r, _) in &mut left {
                    r.add_flag(flags::UNMATCHED);
                    if let (Some(t), Some(last)) = (r.time, self.clock) {
                        if t < last {
                            r.push_attr(ATTR_ORIG_TIME, &t.to_string());
                            r.time = Some(last);
                        }
                    }
                    self.next.write(r)?;
                }
                Ok(())
            }
        }
    }
}

/// A half the rules can match ([`Record::check_half`]): readers refuse
/// others, but a stage may be given rows made by any code.
fn check_half(rec: &Record) -> Result<()> {
    rec.check_half().map_err(|e| Error::Record(e.to_string()))
}

/// Rows a stage wrote, waiting to be read: records reused, so a steady
/// flow allocates nothing. Each row keeps the mark (see
/// [`RecordSource::mark`]) in force when it was written, so the source
/// that hands it out can say where it came from.
#[derive(Default)]
pub struct Outbox {
    queue: VecDeque<(Record, u64)>,
    spare: Vec<Record>,
    /// The mark of the rows written now.
    mark: u64,
    /// The mark of the row last handed out.
    popped: u64,
}

impl RecordSink for Outbox {
    fn write(&mut self, rec: &Record) -> Result<()> {
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.clone_from(rec);
        self.queue.push_back((copy, self.mark));
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Outbox {
    /// The mark of the rows written from now on: where the row being
    /// worked on came from.
    pub fn set_mark(&mut self, mark: u64) {
        self.mark = mark;
    }

    /// The mark of the row [`Outbox::pop_into`] last handed out.
    pub fn popped_mark(&self) -> u64 {
        self.popped
    }

    /// Puts the rows waiting back in stream order (completion time, stable;
    /// a row without one stays after the row before it), after messages
    /// that completed earlier were written late.
    pub fn sort(&mut self) {
        let mut last = i64::MIN;
        let mut rows: Vec<(i64, (Record, u64))> = self
            .queue
            .drain(..)
            .map(|row| {
                last = row.0.completion().unwrap_or(last);
                (last, row)
            })
            .collect();
        rows.sort_by_key(|(k, _)| *k);
        self.queue.extend(rows.into_iter().map(|(_, row)| row));
    }

    /// Moves the oldest row into `rec`; `false` when there is none.
    pub fn pop_into(&mut self, rec: &mut Record) -> bool {
        match self.queue.pop_front() {
            Some((mut next, mark)) => {
                std::mem::swap(rec, &mut next);
                self.spare.push(next);
                self.popped = mark;
                true
            }
            None => false,
        }
    }
}

/// Fills `out` with the message made of two halves of it, `first` (arrived
/// earlier) and `second` (arrived now), as `trace-match` writes it; returns
/// whether their sizes disagree. The Pajé reader makes its links with it.
pub fn pair_halves(out: &mut Record, first: &Record, second: &Record) -> bool {
    let (send, recv) = if first.kind == Kind::Send {
        (first, second)
    } else {
        (second, first)
    };
    out.clear();
    out.kind = Kind::Msg;
    out.time = send.time;
    out.end = recv.time;
    out.loc = send.loc;
    out.peer = recv.loc;
    for (to, a, b) in [
        (&mut out.cat, send.cat, recv.cat),
        (&mut out.name, send.name, recv.name),
        (&mut out.comm, send.comm, recv.comm),
    ] {
        *to = if a.is_empty() { b } else { a };
    }
    for (to, a, b) in [
        (&mut out.id, &send.id, &recv.id),
        (&mut out.value, &send.value, &recv.value),
    ] {
        to.push_str(if a.is_empty() { b } else { a });
    }
    out.tag = send.tag.or(recv.tag);
    out.size = send.size.or(recv.size);
    for c in send.flags.chars().chain(recv.flags.chars()) {
        out.add_flag(c);
    }
    if recv.time < send.time {
        out.add_flag(flags::REVERSED);
    }
    merge_attrs(out, first, second);
    match (send.size, recv.size) {
        (Some(a), Some(b)) if a != b => {
            out.push_attr("send.size", &a.to_string());
            out.push_attr("recv.size", &b.to_string());
            true
        }
        _ => false,
    }
}

/// A [`Matcher`] on the reading side: it knows where each half came from,
/// so an unmatched half (`--unmatched error`) or the row that overflows
/// `--max-pending` is named by file and line.
pub struct MatchSource {
    inner: Box<dyn RecordSource>,
    /// The row last returned is the inner source's, as it read it.
    passed_through: bool,
    matcher: Matcher<Outbox>,
    summary: Rc<RefCell<MatchSummary>>,
    finished: bool,
    /// Receives were held for an earlier posting since the outbox was last
    /// in order.
    unordered: bool,
}

impl MatchSource {
    /// Matches the halves `inner` gives (identifiers in `symbols`);
    /// `summary` is filled at the end.
    pub fn new(
        inner: Box<dyn RecordSource>,
        options: MatchOptions,
        symbols: Symbols,
        warnings: Warnings,
        summary: Rc<RefCell<MatchSummary>>,
    ) -> MatchSource {
        let matcher = Matcher::with_options(Outbox::default(), options, symbols, warnings);
        MatchSource {
            inner,
            passed_through: false,
            matcher,
            summary,
            finished: false,
            unordered: false,
        }
    }

    /// Locates an error of the matcher: at the first unmatched half when
    /// that is what it is about, else at the row just read.
    fn locate(&self, e: Error, mark: u64) -> Error {
        let at = match (
            &self.matcher.summary.first_unmatched,
            self.matcher.options.unmatched,
        ) {
            (Some((first, _)), Unmatched::Error) => *first,
            _ => mark,
        };
        e.at(self.inner.locate(at))
    }
}

impl RecordSource for MatchSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            // While receives are held, later rows wait: a message made of a
            // held receive completes before them.
            if self.matcher.is_holding() {
                self.unordered = true;
            } else {
                if std::mem::take(&mut self.unordered) {
                    self.matcher.next_mut().sort();
                }
                if self.matcher.next_mut().pop_into(rec) {
                    self.passed_through = false;
                    return Ok(true);
                }
            }
            if self.finished {
                return Ok(false);
            }
            if self.inner.next_record(rec)? {
                if !self.matcher.is_holding()
                    && self.matcher.next_mut().queue.is_empty()
                    && self.matcher.passes_through(rec)
                {
                    self.passed_through = true;
                    return Ok(true);
                }
                let mark = self.inner.mark();
                self.matcher.set_mark(mark);
                self.matcher.next_mut().set_mark(mark);
                if let Err(e) = self.matcher.write(rec) {
                    return Err(self.locate(e, mark));
                }
            } else {
                self.finished = true;
                let end = self.inner.mark();
                self.matcher.next_mut().set_mark(end);
                let result = self.matcher.finish();
                *self.summary.borrow_mut() = self.matcher.summary.clone();
                if let Err(e) = result {
                    let mark = self.inner.mark();
                    return Err(self.locate(e, mark));
                }
            }
        }
    }

    /// The inner source's mark of the row last returned: the row itself
    /// when it passed through, else the row that completed it (a `msg` row:
    /// its later half) or was held.
    fn mark(&self) -> u64 {
        match self.passed_through {
            true => self.inner.mark(),
            false => self.matcher.next().popped_mark(),
        }
    }

    fn locate(&self, mark: u64) -> Location {
        self.inner.locate(mark)
    }

    fn extra_columns(&self) -> &[String] {
        self.inner.extra_columns()
    }

    fn raw_line(&self) -> Option<&[u8]> {
        self.inner.raw_line().filter(|_| self.passed_through)
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// Rows pass through with their lines, but the matcher reads every
    /// row whole (a half becomes part of a `msg`; a location's end releases
    /// what waits on it), and many of the rows it hands out it makes.
    fn agree(&mut self, demand: Demand) -> Supply {
        self.inner.agree(Demand::reading(Reads {
            columns: ColumnSet::ALL,
            raw_line: demand.reads.raw_line,
        }));
        Supply::WHOLE_ROWS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Collect(Vec<Record>);
    impl RecordSink for Collect {
        fn write(&mut self, rec: &Record) -> Result<()> {
            self.0.push(rec.clone());
            Ok(())
        }
        fn finish(&mut self) -> Result<()> {
            Ok(())
        }
    }

    thread_local! {
        static SYMBOLS: Symbols = Symbols::new();
    }

    fn symbols() -> Symbols {
        SYMBOLS.with(Symbols::clone)
    }

    fn sym(text: &str) -> Sym {
        symbols().intern(text)
    }

    fn matcher(unmatched: Unmatched, warnings: Warnings) -> Matcher<Collect> {
        Matcher::new(Collect(Vec::new()), unmatched, symbols(), warnings)
    }

    fn half(kind: Kind, t: i64, loc: &str, peer: &str, tag: Option<i64>, id: &str) -> Record {
        let mut r = Record::new(kind);
        r.time = Some(t);
        r.loc = sym(loc);
        r.peer = sym(peer);
        r.tag = tag;
        r.id = id.into();
        r
    }

    #[test]
    fn tagged_halves_match_fifo_per_channel() {
        let mut m = matcher(Unmatched::Drop, Warnings::default());
        for r in [
            half(Kind::Send, 1, "a", "b", Some(1), ""),
            half(Kind::Send, 2, "a", "b", Some(1), ""),
            half(Kind::Send, 3, "a", "b", Some(2), ""),
            half(Kind::Recv, 4, "b", "a", Some(2), ""),
            half(Kind::Recv, 5, "b", "a", Some(1), ""),
            half(Kind::Recv, 6, "b", "a", Some(1), ""),
        ] {
            m.write(&r).unwrap();
        }
        m.finish().unwrap();
        let got: Vec<(i64, i64, i64)> = m
            .next
            .0
            .iter()
            .map(|r| (r.time.unwrap(), r.end.unwrap(), r.tag.unwrap()))
            .collect();
        assert_eq!(got, vec![(3, 4, 2), (1, 5, 1), (2, 6, 1)]);
    }

    #[test]
    fn keyed_halves_match_in_either_order_and_keep_leftovers() {
        let mut m = matcher(Unmatched::Keep, Warnings::default());
        let mut recv_first = half(Kind::Recv, 5, "p2", "", None, "k1");
        recv_first.attrs = "got=1".into();
        let mut send = half(Kind::Send, 6, "p1", "", None, "k1");
        send.attrs = "size=1024".into();
        m.write(&recv_first).unwrap();
        m.write(&send).unwrap();
        m.write(&half(Kind::Send, 7, "p1", "", None, "k2")).unwrap();
        m.finish().unwrap();
        let out = &m.next.0;
        assert_eq!(out[0].kind, Kind::Msg);
        assert_eq!((out[0].time, out[0].end), (Some(6), Some(5)));
        assert_eq!((out[0].loc, out[0].peer), (sym("p1"), sym("p2")));
        assert_eq!(out[0].flags, "R");
        assert_eq!(out[0].attrs, "got=1;size=1024");
        assert_eq!(out[1].kind, Kind::Send);
        assert_eq!(out[1].flags, "U");
    }

    fn destroy(t: i64, loc: &str) -> Record {
        let mut r = Record::new(Kind::Destroy);
        r.time = Some(t);
        r.loc = sym(loc);
        r
    }

    #[test]
    fn halves_waiting_on_a_destroyed_location_are_released() {
        let (warnings, seen) = Warnings::collecting();
        let mut m = matcher(Unmatched::Keep, warnings);
        // 1000 receivers each get a send that never arrives, then die: the
        // matcher does not keep them to the end.
        for i in 0..1000 {
            m.write(&half(Kind::Send, i, "a", &format!("r{i}"), Some(0), ""))
                .unwrap();
        }
        // A keyed half waits on its link container, here one that lives on.
        let mut keyed = half(Kind::Send, 1000, "a", "", None, "k");
        keyed.comm = sym("root");
        m.write(&keyed).unwrap();
        for i in 0..1000 {
            m.write(&destroy(2000 + i, &format!("r{i}"))).unwrap();
        }
        assert!(m.pending_halves <= 501, "{}", m.pending_halves);
        assert!(m.pending.len() <= 501);
        m.write(&destroy(3000, "root")).unwrap();
        assert_eq!((m.pending_halves, m.pending.len()), (0, 0));
        m.finish().unwrap();
        let out = &m.next.0;
        let unmatched: Vec<&Record> = out.iter().filter(|r| r.kind == Kind::Send).collect();
        assert_eq!(unmatched.len(), 1001);
        assert!(unmatched.iter().all(|r| r.flags == "U"));
        // Written when released, in time order, with their own time kept.
        assert!(out.windows(2).all(|w| w[0].time <= w[1].time));
        assert_eq!(unmatched[0].attr("orig_time").as_deref(), Some("0"));
        let msgs: Vec<String> = seen.lock().unwrap().iter().map(|w| w.msg.clone()).collect();
        assert_eq!(
            msgs,
            ["1001 message half/halves never matched (1001 send, 0 recv); written flagged U"]
        );
    }

    #[test]
    fn a_name_used_again_does_not_lose_its_new_halves() {
        let mut m = matcher(Unmatched::Drop, Warnings::default());
        m.write(&half(Kind::Send, 1, "a", "b", Some(0), ""))
            .unwrap();
        m.write(&half(Kind::Send, 2, "c", "b", Some(0), ""))
            .unwrap();
        // Halves waiting on a live location keep the dead ones from being
        // swept at the destruction.
        for t in 0..3 {
            m.write(&half(Kind::Send, 2, "a", "z", Some(t), ""))
                .unwrap();
        }
        m.write(&destroy(3, "b")).unwrap();
        assert_eq!(m.pending_halves, 5);
        let mut again = Record::new(Kind::Container);
        again.time = Some(4);
        again.loc = sym("b");
        m.write(&again).unwrap();
        m.write(&half(Kind::Send, 5, "a", "b", Some(0), ""))
            .unwrap();
        m.write(&half(Kind::Recv, 6, "b", "a", Some(0), ""))
            .unwrap();
        m.finish().unwrap();
        let msgs: Vec<(i64, i64)> = m
            .next
            .0
            .iter()
            .filter(|r| r.kind == Kind::Msg)
            .map(|r| (r.time.unwrap(), r.end.unwrap()))
            .collect();
        assert_eq!(msgs, [(5, 6)]);
    }
}
