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
//! halves in flight.

use std::collections::VecDeque;

use crate::error::{Result, Warnings};
use crate::fasthash::FastMap;
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

#[derive(Default)]
struct Queues {
    sends: VecDeque<Record>,
    recvs: VecDeque<Record>,
}

/// A sink stage that matches message halves and passes every other row on.
pub struct Matcher<S> {
    next: S,
    /// Pending halves by channel key (see [`Matcher::channel`]).
    pending: FastMap<String, Queues>,
    /// Buffers of finished channels and halves, reused so matching a
    /// message allocates nothing once the in-flight set has been seen.
    spare_keys: Vec<String>,
    spare_queues: Vec<Queues>,
    spare_halves: Vec<Record>,
    key: String,
    unmatched: Unmatched,
    out: Record,
    matched: u64,
    /// Latest completion time passed on, where leftovers are written.
    clock: Option<i64>,
    warnings: Warnings,
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
            unmatched,
            out: Record::new(Kind::Msg),
            matched: 0,
            clock: None,
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
        if !matches!(rec.kind, Kind::Send | Kind::Recv) {
            return self.next.write(rec);
        }
        Self::channel(rec, &mut self.key);
        if !self.pending.contains_key(self.key.as_str()) {
            let mut key = self.spare_keys.pop().unwrap_or_default();
            key.clone_from(&self.key);
            let queues = self.spare_queues.pop().unwrap_or_default();
            self.pending.insert(key, queues);
        }
        let queues = self
            .pending
            .get_mut(self.key.as_str())
            .expect("inserted above");
        let (mine, theirs) = if rec.kind == Kind::Send {
            (&mut queues.sends, &mut queues.recvs)
        } else {
            (&mut queues.recvs, &mut queues.sends)
        };
        match theirs.pop_front() {
            Some(first) => {
                Self::pair(&mut self.out, &first, rec);
                self.spare_halves.push(first);
                if queues.sends.is_empty() && queues.recvs.is_empty() {
                    if let Some((key, queues)) = self.pending.remove_entry(self.key.as_str()) {
                        self.spare_keys.push(key);
                        self.spare_queues.push(queues);
                    }
                }
                self.matched += 1;
                self.next.write(&self.out)
            }
            None => {
                let mut half = self.spare_halves.pop().unwrap_or_default();
                half.clone_from(rec);
                mine.push_back(half);
                Ok(())
            }
        }
    }

    fn finish(&mut self) -> Result<()> {
        let mut left: Vec<Record> = self
            .pending
            .drain()
            .flat_map(|(_, q)| q.sends.into_iter().chain(q.recvs))
            .collect();
        if !left.is_empty() {
            let sends = left.iter().filter(|r| r.kind == Kind::Send).count();
            self.warnings.warn(format!(
                "{} message half/halves never matched ({sends} send, {} recv){}",
                left.len(),
                left.len() - sends,
                if self.unmatched == Unmatched::Keep {
                    "; written at the end flagged U"
                } else {
                    "; left out"
                }
            ));
            if self.unmatched == Unmatched::Keep {
                left.sort_by_key(|r| r.time);
                let last = self.clock;
                for mut r in left {
                    r.add_flag(flags::UNMATCHED);
                    // Written at the end, so they carry the end time to keep the order.
                    if let (Some(t), Some(last)) = (r.time, last) {
                        if t < last {
                            r.push_attr("orig_time", &t.to_string());
                            r.time = Some(last);
                        }
                    }
                    self.next.write(&r)?;
                }
            }
        }
        self.next.finish()
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
}
