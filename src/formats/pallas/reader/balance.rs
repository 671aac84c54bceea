//! A balanced cut before a slice's T0: the latest time τ ≤ T0 before
//! which every channel has as many sends as receives. Tagged halves pair
//! first in, first out per channel (the matcher's rule), so the halves
//! before τ pair among themselves, and none is in flight at T0: the trace
//! leaves them out, and a thread counts them past with its frames.
//!
//! τ is found from the half events' timestamps alone. A half event has
//! one channel (the communicator, peer and tag of its record, the rank of
//! its thread), and how often it occurs before a time is a search on its
//! timestamps. From T0, while a channel is unbalanced, τ moves back to its
//! oldest unpaired half. It never passes a balanced time on the way (a
//! half unpaired at τ is unpaired at every balanced time after it), so
//! it ends at the latest one.
//!
//! No cut where a trace posts receives (matched in posting order), where
//! a half's channel may be other than its record's (a trace written from
//! a stream that keeps a half's channel, or any row's kind or time, in
//! attributes), or in a lossy trace (times raised).

use std::sync::OnceLock;

use super::stream::kept_columns;
use super::times::EventTimes;
use super::*;
use crate::model::record::{Column, ColumnSet};
use crate::stages::matcher::sender_receiver;

/// τ, once the slice's T0 is known: shared by a trace's source, which
/// finds it, and its threads, which thin by it.
pub(super) type PairedBefore = Arc<OnceLock<i64>>;

/// How many searches of a half event's timestamps may be made before the
/// cut is given up (a trace always in flight would walk τ back one
/// message at a time): on such a trace, giving up took about 10 ms.
const MAX_SEARCHES: u64 = 1 << 18;

/// A tagged half's channel: communicator, sender, receiver, tag.
type Channel = (Sym, Sym, Sym, Option<i64>);

/// The columns of a half's row its channel is made of.
const CHANNEL: ColumnSet = ColumnSet::NONE
    .with(Column::Loc)
    .with(Column::Peer)
    .with(Column::Comm)
    .with(Column::Tag);

/// One half event of a thread: its channel, side and timestamps.
struct HalfEvent {
    channel: Channel,
    send: bool,
    /// Its thread's place in [`BalancedCut::dats`].
    thread: usize,
    times: EventTimes,
}

/// The half events of a trace's threads, to find τ for a T0.
pub(super) struct BalancedCut {
    dats: Vec<DatFile>,
    halves: Vec<HalfEvent>,
    decoder: BlockDecoder,
    /// Searches made so far.
    searches: u64,
    /// The first time of an event that is not a half.
    first_other: u64,
}

impl BalancedCut {
    /// The cut over `threads`, if each of them allows one.
    pub(super) fn of(threads: &mut [ThreadSource], params: &Parameters) -> Option<BalancedCut> {
        let mut cut = BalancedCut {
            dats: Vec::with_capacity(threads.len()),
            halves: Vec::new(),
            decoder: BlockDecoder::new(params),
            searches: 0,
            first_other: u64::MAX,
        };
        for (i, thread) in threads.iter_mut().enumerate() {
            cut.halves
                .extend(thread.half_events(i, &mut cut.first_other)?);
            cut.dats.push(thread.events.dat.clone());
        }
        Some(cut)
    }

    /// τ for `t0`, if it is found within [`MAX_SEARCHES`], and every
    /// block it looks at decodes (reading the trace tells that where it
    /// meets the block).
    pub(super) fn paired_before(&mut self, t0: i64) -> Option<i64> {
        let mut tau = self.bound(u64::try_from(t0).ok()?).ok()?;
        let mut channels: FastMap<Channel, [Vec<usize>; 2]> = FastMap::default();
        for (i, h) in self.halves.iter().enumerate() {
            channels.entry(h.channel).or_default()[usize::from(h.send)].push(i);
        }
        let channels: Vec<[Vec<usize>; 2]> = channels.into_values().collect();
        loop {
            let mut moved = false;
            for [recvs, sends] in &channels {
                // Back, one unpaired half at a time, until it is balanced.
                loop {
                    let (r, s) = (self.count(recvs, tau).ok()?, self.count(sends, tau).ok()?);
                    if r == s {
                        break;
                    }
                    let (more, paired) = if s > r { (sends, r) } else { (recvs, s) };
                    tau = self.nth_time(more, paired, tau).ok()?;
                    moved = true;
                }
            }
            if !moved {
                return i64::try_from(tau).ok();
            }
        }
    }

    /// Where τ starts: at most `t0`, and never past the trace's first or
    /// last row, so that the slicer, which tells the trace's span from the
    /// rows it is given, sees both: no later than the last half, and than
    /// the first where the trace begins with one.
    fn bound(&mut self, t0: u64) -> Result<u64> {
        let (mut first, mut last) = (u64::MAX, 0);
        for h in &mut self.halves {
            let probe = (&self.dats[h.thread], &mut self.decoder);
            first = first.min(h.times.at(probe, 0)?.unwrap_or(u64::MAX));
            let probe = (&self.dats[h.thread], &mut self.decoder);
            last = last.max(h.times.last(probe)?.unwrap_or(0));
        }
        let tau = t0.min(last);
        Ok(match first < self.first_other {
            true => tau.min(first),
            false => tau,
        })
    }

    /// How many occurrences of `halves` come before `t` (an error past
    /// the searches allowed).
    fn count(&mut self, halves: &[usize], t: u64) -> Result<u64> {
        self.searches += halves.len() as u64;
        if self.searches > MAX_SEARCHES {
            return Err(Error::Record("a balanced cut takes too long".into()));
        }
        let mut n = 0u64;
        for &i in halves {
            let h = &mut self.halves[i];
            let probe = (&self.dats[h.thread], &mut self.decoder);
            n = n.saturating_add(h.times.count_before(probe, t)?);
        }
        Ok(n)
    }

    /// The time of occurrence `k` (from 0) of `halves` taken together,
    /// which is before `below`.
    fn nth_time(&mut self, halves: &[usize], k: u64, below: u64) -> Result<u64> {
        if let [i] = halves {
            let h = &mut self.halves[*i];
            let probe = (&self.dats[h.thread], &mut self.decoder);
            return Ok(h.times.at(probe, k)?.unwrap_or(0).min(below - 1));
        }
        // The least time with more than `k` occurrences at or before it.
        let (mut lo, mut hi) = (0u64, below - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.count(halves, mid + 1)? > k {
                true => hi = mid,
                false => lo = mid + 1,
            }
        }
        Ok(lo)
    }
}

impl ThreadSource {
    /// The thread's half events (`thread`: its place in the cut), if it
    /// allows a balanced cut; `first_other` is lowered to the first time
    /// of its other events.
    fn half_events(&mut self, thread: usize, first_other: &mut u64) -> Option<Vec<HalfEvent>> {
        use RecordId::*;
        let restoring = self.restore.is_some();
        let kinds = restoring && self.kept_beside_grammar().kinds;
        if !self.can_thin() || kinds || self.defines_postings() {
            return None;
        }
        let mut halves = Vec::new();
        let mut rec = Record::default();
        for slot in 0..self.events.file.events.len() {
            let Some(event) = &self.events.file.events[slot] else {
                continue;
            };
            match RecordId::from_number(event.record) {
                Some(MpiIrecvRequest) => return None,
                Some(MpiSend | MpiIsend | MpiRecv | MpiIrecv) => {}
                _ => {
                    // The header keeps the first value exactly.
                    let first = event.timestamps.blocks.first().map(|b| b.first);
                    *first_other = (*first_other).min(first.unwrap_or(u64::MAX));
                    continue;
                }
            }
            if restoring && kept_columns(&event.attributes, self.names.scope()).intersects(CHANNEL)
            {
                return None;
            }
            let times = EventTimes::new(&event.timestamps);
            // A record that cannot be mapped is told where it occurs.
            self.map_record(slot, (0, 0), &mut rec).ok()?;
            let (sender, receiver) = sender_receiver(&rec);
            halves.push(HalfEvent {
                channel: (rec.comm, sender, receiver, rec.tag),
                send: rec.kind == Kind::Send,
                thread,
                times,
            });
        }
        Some(halves)
    }
}
