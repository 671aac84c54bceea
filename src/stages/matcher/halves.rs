//! A half's way through the matcher: paired at once with a half waiting
//! on its channel or key, or held (in posting order, for receives that
//! name `posts=recv`) until its partner comes; the pair made one `msg`.

use super::*;
use crate::model::record::Attr;

/// The attributes of a message: the first half's, then the second's (in
/// arrival order, as PajeNG lists a link's user fields); a key both give
/// with different values is written `send.KEY` and `recv.KEY`.
pub(super) fn merge_attrs(out: &mut Record, first: &Record, second: &Record) {
    if first.attrs.is_empty() || second.attrs.is_empty() {
        out.attrs.push_str(if first.attrs.is_empty() {
            &second.attrs
        } else {
            &first.attrs
        });
        return;
    }
    if is_plain(&first.attrs) && is_plain(&second.attrs) {
        merge_plain_attrs(out, first, second);
    } else {
        merge_decoded_attrs(out, first, second);
    }
}

/// [`merge_attrs`] on lists of any text, each decoded.
fn merge_decoded_attrs(out: &mut Record, first: &Record, second: &Record) {
    let lists: [(Vec<Attr<'_>>, &str); 2] = [first, second].map(|r| {
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

/// Whether an attribute list's text is its items as they decode (no
/// escape, one `=` in each item), so that it can be merged as it is.
fn is_plain(attrs: &str) -> bool {
    let mut equals = 0;
    for b in attrs.bytes() {
        match b {
            b'%' => return false,
            b'=' => equals += 1,
            b';' if equals != 1 => return false,
            b';' => equals = 0,
            _ => {}
        }
    }
    equals == 1
}

/// The keys and values of a plain list ([`is_plain`]).
fn plain_items(attrs: &str) -> impl Iterator<Item = (&str, &str)> + '_ {
    attrs
        .split(';')
        .map(|item| item.split_once('=').unwrap_or((item, "")))
}

/// [`merge_attrs`] on plain lists ([`is_plain`]), without decoding them:
/// links and messages merge their halves' attributes at every pairing.
fn merge_plain_attrs(out: &mut Record, first: &Record, second: &Record) {
    for (n, (list, other)) in [(first, second), (second, first)].into_iter().enumerate() {
        let side = if list.kind == Kind::Send {
            "send"
        } else {
            "recv"
        };
        for (k, v) in plain_items(&list.attrs) {
            let clash = plain_items(&other.attrs).any(|(key, value)| key == k && value != v);
            let shared = plain_items(&other.attrs).any(|(key, _)| key == k);
            if !clash && n == 1 && shared {
                continue;
            }
            if !out.attrs.is_empty() {
                out.attrs.push(';');
            }
            if clash {
                out.attrs.push_str(side);
                out.attrs.push('.');
            }
            out.attrs.push_str(k);
            out.attrs.push('=');
            out.attrs.push_str(v);
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

/// A half the rules can match ([`Record::check_half`]): readers refuse
/// others, but a stage may be given rows made by any code.
pub(super) fn check_half(rec: &Record) -> Result<()> {
    rec.check_half().map_err(|e| Error::Record(e.to_string()))
}

impl<S: RecordSink> Matcher<S> {
    /// A send or a receive: paired with the oldest waiting half of the other
    /// kind on its channel, or queued.
    pub(super) fn half(&mut self, rec: &Record) -> Result<()> {
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
                self.pending_halves -= 1;
                uncount(&mut self.waiting, first.awaited);
                if let Some(observed) = &mut self.observed {
                    // Observed pairings are all that is wanted: no message,
                    // so the waiting half is not unpacked.
                    observed.push(Pairing::Paired(first.mark, self.mark));
                    self.summary.matched += 1;
                    first.packed.clear();
                    self.spare_halves.push(first.packed);
                    return Ok(());
                }
                first.packed.reader().next_into(&mut self.first);
                first.packed.clear();
                self.spare_halves.push(first.packed);
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
    pub(super) fn post(&mut self, rec: &Record) {
        self.posted
            .entry(self.poster(rec))
            .or_default()
            .push_back((rec.id.clone(), None));
    }

    /// A receive with a request id: when it was posted, it waits for the
    /// receives posted before it by the same poster (its `thread`, else its
    /// location), then all that are complete are matched in posting order.
    pub(super) fn completed(&mut self, rec: &Record) -> Result<()> {
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
        let spare = (&mut self.spare_halves, &mut self.arrivals);
        slot.1 = Some(Half::pack(rec, self.mark, spare));
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
        for Half {
            mut packed, mark, ..
        } in ready
        {
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
    pub(super) fn poster(&self, rec: &Record) -> String {
        rec.attr("thread")
            .unwrap_or_else(|| self.symbols.text(rec.loc).to_string())
    }

    /// [`Matcher::half`] for a receive held since the row of `mark`.
    pub(super) fn half_marked(&mut self, rec: &Record, mark: u64) -> Result<()> {
        let now = std::mem::replace(&mut self.mark, mark);
        let result = self.half(rec);
        self.mark = now;
        result
    }
}

#[cfg(test)]
mod plain_tests {
    use super::*;

    fn half(kind: Kind, attrs: &str) -> Record {
        let mut r = Record::new(kind);
        r.attrs = attrs.into();
        r
    }

    /// Merged without decoding, plain lists give what decoding them gives,
    /// clashes, shared keys, repeated keys and empty values included.
    #[test]
    fn plain_lists_merge_as_decoded_ones() {
        let lists = [
            "a=1",
            "a=2",
            "b=1",
            "a=1;b=2",
            "b=2;a=1",
            "a=1;a=2",
            "a=",
            "a=1;c=3;b=",
            "tag=g9",
        ];
        for first in lists {
            for second in lists {
                for kinds in [(Kind::Send, Kind::Recv), (Kind::Recv, Kind::Send)] {
                    let (x, y) = (half(kinds.0, first), half(kinds.1, second));
                    assert!(is_plain(first) && is_plain(second));
                    let (mut plain, mut decoded) = (Record::default(), Record::default());
                    merge_plain_attrs(&mut plain, &x, &y);
                    merge_decoded_attrs(&mut decoded, &x, &y);
                    assert_eq!(plain.attrs, decoded.attrs, "{first} + {second}");
                }
            }
        }
        for other in ["a=1%3B", "a", "a=1;;b=2", "a=b=c", ""] {
            assert!(!is_plain(other), "{other}");
        }
    }
}
