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

use crate::error::{Result, Warnings};
use crate::fasthash::{FastMap, FastSet};
use crate::ops::batch::RecordBatch;
use crate::pipe::RecordSink;
use crate::record::{flags, Kind, Record};

/// What to do with halves that never find a partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unmatched {
    /// Drop them; the summary on stderr counts them.
    #[default]
    Drop,
    /// Write them at the end as `send`/`recv` rows flagged `U`.
    Keep,
}

/// The halves waiting on one channel, oldest first, packed (a few dozen
/// bytes each instead of a whole [`Record`]). They are all of one kind: a
/// half of the other kind would have matched the oldest of them.
struct Queue {
    kind: Kind,
    halves: VecDeque<RecordBatch>,
}

/// A sink stage that matches message halves and passes every other row on.
pub struct Matcher<S> {
    next: S,
    /// Pending halves by channel key (see [`Matcher::channel`]); a channel
    /// is removed when its queue empties.
    pending: FastMap<String, Queue>,
    /// Buffers of finished channels and halves, reused so matching a
    /// message allocates nothing once the in-flight set has been seen.
    spare_keys: Vec<String>,
    spare_queues: Vec<VecDeque<RecordBatch>>,
    spare_halves: Vec<RecordBatch>,
    key: String,
    /// The waiting half being paired, unpacked.
    first: Record,
    unmatched: Unmatched,
    out: Record,
    matched: u64,
    /// Latest completion time passed on, where leftovers are written.
    clock: Option<i64>,
    /// Pending halves per location they wait on (see [`awaited`]).
    waiting: FastMap<String, u64>,
    /// Destroyed locations that still have halves waiting on them, and how
    /// many halves that is: swept out once they are half of all pending.
    dead: FastSet<String>,
    dead_halves: u64,
    pending_halves: u64,
    /// Halves that never found a partner (sends, receives).
    lost: (u64, u64),
    warnings: Warnings,
}

/// The location a pending half waits on: its partner can only come from
/// there (tagged halves) or inside it (keyed halves: the link container).
/// Keyed halves without a container wait on nothing in particular.
fn awaited(rec: &Record) -> &str {
    if rec.tag.is_some() {
        &rec.peer
    } else {
        &rec.comm
    }
}

impl<S: RecordSink> Matcher<S> {
    /// A matcher writing into `next`, reporting halves left over to `warnings`.
    pub fn new(next: S, unmatched: Unmatched, warnings: Warnings) -> Matcher<S> {
        Matcher {
            next,
            pending: FastMap::default(),
            spare_keys: Vec::new(),
            spare_queues: Vec::new(),
            spare_halves: Vec::new(),
            key: String::new(),
            first: Record::default(),
            unmatched,
            out: Record::new(Kind::Msg),
            matched: 0,
            clock: None,
            waiting: FastMap::default(),
            dead: FastSet::default(),
            dead_halves: 0,
            pending_halves: 0,
            lost: (0, 0),
            warnings,
        }
    }

    /// Writes the channel key of a half into `key`: the fields of its rule,
    /// separated by a byte no field holds.
    fn channel(rec: &Record, key: &mut String) {
        use std::fmt::Write as _;
        key.clear();
        match rec.tag {
            Some(tag) => {
                let (sender, receiver) = if rec.kind == Kind::Send {
                    (&rec.loc, &rec.peer)
                } else {
                    (&rec.peer, &rec.loc)
                };
                let _ = write!(
                    key,
                    "t\u{0}{}\u{0}{sender}\u{0}{receiver}\u{0}{tag}",
                    rec.comm
                );
            }
            None => {
                for part in ["k\u{0}", &rec.comm, "\u{0}", &rec.cat, "\u{0}", &rec.id] {
                    key.push_str(part);
                }
            }
        }
    }

    /// Fills `out` with the message made of `first` (arrived earlier) and
    /// `second` (arrived now).
    fn pair(out: &mut Record, first: &Record, second: &Record) {
        let (send, recv) = if first.kind == Kind::Send {
            (first, second)
        } else {
            (second, first)
        };
        out.clear();
        out.kind = Kind::Msg;
        out.time = send.time;
        out.end = recv.time;
        out.loc.push_str(&send.loc);
        out.peer.push_str(&recv.loc);
        for (to, a, b) in [
            (&mut out.cat, &send.cat, &recv.cat),
            (&mut out.name, &send.name, &recv.name),
            (&mut out.comm, &send.comm, &recv.comm),
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
        // Attributes in arrival order: the first half's, then the second's.
        out.attrs.push_str(&first.attrs);
        if !first.attrs.is_empty() && !second.attrs.is_empty() {
            out.attrs.push(';');
        }
        out.attrs.push_str(&second.attrs);
    }
}

impl<S: RecordSink> RecordSink for Matcher<S> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some(t) = rec.completion() {
            self.clock = Some(self.clock.map_or(t, |c| c.max(t)));
        }
        match rec.kind {
            Kind::Send | Kind::Recv => self.half(rec),
            Kind::Destroy => {
                self.next.write(rec)?;
                self.on_destroy(&rec.loc)
            }
            Kind::Container if self.dead.contains(rec.loc.as_str()) => {
                // A name used again: what waited on its first life goes first.
                self.sweep()?;
                self.next.write(rec)
            }
            _ => self.next.write(rec),
        }
    }

    fn finish(&mut self) -> Result<()> {
        let mut left = Vec::new();
        for (_, queue) in self.pending.drain() {
            count(&mut self.lost, queue.kind, queue.halves.len());
            left.extend(queue.halves);
        }
        self.release(left)?;
        let (sends, recvs) = self.lost;
        if sends + recvs > 0 {
            self.warnings.warn(format!(
                "{} message half/halves never matched ({sends} send, {recvs} recv){}",
                sends + recvs,
                if self.unmatched == Unmatched::Keep {
                    "; written flagged U"
                } else {
                    "; left out"
                }
            ));
        }
        self.next.finish()
    }
}

/// Adds `n` halves of `kind` to the (sends, receives) counts.
fn count(counts: &mut (u64, u64), kind: Kind, n: usize) {
    match kind {
        Kind::Send => counts.0 += n as u64,
        _ => counts.1 += n as u64,
    }
}

/// One half fewer waiting on `party`.
fn uncount(waiting: &mut FastMap<String, u64>, party: &str) {
    if let Some(n) = waiting.get_mut(party) {
        *n -= 1;
        if *n == 0 {
            waiting.remove(party);
        }
    }
}

impl<S: RecordSink> Matcher<S> {
    /// A send or a receive: paired with the oldest waiting half of the other
    /// kind on its channel, or queued.
    fn half(&mut self, rec: &Record) -> Result<()> {
        Self::channel(rec, &mut self.key);
        if let Some(queue) = self.pending.get_mut(self.key.as_str()) {
            if queue.kind != rec.kind {
                let mut first = queue.halves.pop_front().expect("queues are never empty");
                if queue.halves.is_empty() {
                    if let Some((key, queue)) = self.pending.remove_entry(self.key.as_str()) {
                        self.spare_keys.push(key);
                        self.spare_queues.push(queue.halves);
                    }
                }
                first.reader().next_into(&mut self.first);
                first.clear();
                self.spare_halves.push(first);
                self.pending_halves -= 1;
                uncount(&mut self.waiting, awaited(&self.first));
                Self::pair(&mut self.out, &self.first, rec);
                self.matched += 1;
                return self.next.write(&self.out);
            }
        }
        let mut packed = self.spare_halves.pop().unwrap_or_default();
        packed.push(rec);
        let queue = match self.pending.get_mut(self.key.as_str()) {
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
        queue.halves.push_back(packed);
        self.pending_halves += 1;
        let party = awaited(rec);
        if !party.is_empty() {
            match self.waiting.get_mut(party) {
                Some(n) => *n += 1,
                None => {
                    self.waiting.insert(party.to_string(), 1);
                }
            }
        }
        Ok(())
    }

    /// `loc` is gone: the halves waiting on it can never match. They are
    /// swept once such halves make up half of all pending ones, so a sweep's
    /// cost is paid for by what it releases.
    fn on_destroy(&mut self, loc: &str) -> Result<()> {
        let Some(&n) = self.waiting.get(loc) else {
            return Ok(());
        };
        if self.dead.insert(loc.to_string()) {
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
        let (first, lost) = (&mut self.first, &mut self.lost);
        self.pending.retain(|_, q| {
            let doomed = q.halves.front().is_some_and(|h| {
                h.reader().next_into(first);
                dead.contains(awaited(first))
            });
            if doomed {
                count(lost, q.kind, q.halves.len());
                gone.extend(q.halves.drain(..));
            }
            !doomed
        });
        self.dead_halves = 0;
        for loc in &dead {
            self.waiting.remove(loc.as_str());
        }
        self.pending_halves -= gone.len() as u64;
        self.release(gone)
    }

    /// Halves that will never match: written flagged `U` in time order when
    /// asked (late, so each carries the latest time passed on, and its own in
    /// `orig_time`), else dropped.
    fn release(&mut self, halves: Vec<RecordBatch>) -> Result<()> {
        if self.unmatched == Unmatched::Drop {
            return Ok(());
        }
        let mut left: Vec<Record> = halves
            .iter()
            .map(|h| {
                let mut r = Record::default();
                h.reader().next_into(&mut r);
                r
            })
            .collect();
        left.sort_by_key(|r| r.time);
        for r in &mut left {
            r.add_flag(flags::UNMATCHED);
            if let (Some(t), Some(last)) = (r.time, self.clock) {
                if t < last {
                    r.push_attr("orig_time", &t.to_string());
                    r.time = Some(last);
                }
            }
            self.next.write(r)?;
        }
        Ok(())
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

    fn half(kind: Kind, t: i64, loc: &str, peer: &str, tag: Option<i64>, id: &str) -> Record {
        let mut r = Record::new(kind);
        r.time = Some(t);
        r.loc = loc.into();
        r.peer = peer.into();
        r.tag = tag;
        r.id = id.into();
        r
    }

    #[test]
    fn tagged_halves_match_fifo_per_channel() {
        let mut m = Matcher::new(Collect(Vec::new()), Unmatched::Drop, Warnings::default());
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
        let mut m = Matcher::new(Collect(Vec::new()), Unmatched::Keep, Warnings::default());
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
        assert_eq!((out[0].loc.as_str(), out[0].peer.as_str()), ("p1", "p2"));
        assert_eq!(out[0].flags, "R");
        assert_eq!(out[0].attrs, "got=1;size=1024");
        assert_eq!(out[1].kind, Kind::Send);
        assert_eq!(out[1].flags, "U");
    }

    fn destroy(t: i64, loc: &str) -> Record {
        let mut r = Record::new(Kind::Destroy);
        r.time = Some(t);
        r.loc = loc.into();
        r
    }

    #[test]
    fn halves_waiting_on_a_destroyed_location_are_released() {
        let (warnings, seen) = Warnings::collecting();
        let mut m = Matcher::new(Collect(Vec::new()), Unmatched::Keep, warnings);
        // 1000 receivers each get a send that never arrives, then die: the
        // matcher does not keep them to the end.
        for i in 0..1000 {
            m.write(&half(Kind::Send, i, "a", &format!("r{i}"), Some(0), ""))
                .unwrap();
        }
        // A keyed half waits on its link container, here one that lives on.
        let mut keyed = half(Kind::Send, 1000, "a", "", None, "k");
        keyed.comm = "root".into();
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
        let mut m = Matcher::new(Collect(Vec::new()), Unmatched::Drop, Warnings::default());
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
        again.loc = "b".into();
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
