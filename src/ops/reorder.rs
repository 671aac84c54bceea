//! A bounded reorder buffer for sources that are time-ordered only piecewise
//! (Pajé orders events per container and type, not globally).
//!
//! Rows go in as they are produced and come out by completion time once the
//! buffer holds `window` rows (or at the end). A row older than one already
//! released is an error, not a silent misorder. Record buffers are recycled,
//! so a full buffer allocates nothing per row.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::record::Record;

/// Rows waiting to be released in completion-time order.
pub struct RowQueue {
    slab: Vec<Record>,
    free: Vec<u32>,
    heap: BinaryHeap<Reverse<(i64, u64, u32)>>,
    seq: u64,
    released: i64,
    window: usize,
}

impl RowQueue {
    /// A queue releasing rows once `window` (at least 1) are held.
    pub fn new(window: usize) -> RowQueue {
        RowQueue {
            slab: Vec::new(),
            free: Vec::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            released: i64::MIN,
            window: window.max(1),
        }
    }

    /// A cleared record to fill; hand it back with [`RowQueue::commit`].
    pub fn slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slab[i as usize].clear();
                i
            }
            None => {
                self.slab.push(Record::default());
                (self.slab.len() - 1) as u32
            }
        }
    }

    /// The record of a slot.
    pub fn get(&mut self, slot: u32) -> &mut Record {
        &mut self.slab[slot as usize]
    }

    /// Queues a filled slot. Structural rows (no completion time) are placed at
    /// the release point, ahead of every row already waiting that they could be
    /// used by. Returns the completion time of the row when it is older than a
    /// row already released.
    pub fn commit(&mut self, slot: u32) -> Result<(), i64> {
        let rec = &self.slab[slot as usize];
        let key = if rec.kind.is_structural() {
            None
        } else {
            rec.completion()
        };
        let key = match key {
            Some(k) if k < self.released => {
                self.free.push(slot);
                return Err(k);
            }
            Some(k) => k,
            None => self.released,
        };
        self.heap.push(Reverse((key, self.seq, slot)));
        self.seq += 1;
        Ok(())
    }

    /// True when enough rows wait that the oldest may be released.
    pub fn is_full(&self) -> bool {
        self.heap.len() >= self.window
    }

    /// True when no row waits.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Releases the oldest row into `rec` (swapping buffers).
    pub fn pop_into(&mut self, rec: &mut Record) -> bool {
        let Some(Reverse((key, _, slot))) = self.heap.pop() else {
            return false;
        };
        self.released = self.released.max(key);
        std::mem::swap(rec, &mut self.slab[slot as usize]);
        self.free.push(slot);
        true
    }

    /// The completion time of the newest released row.
    pub fn released(&self) -> i64 {
        self.released
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    #[test]
    fn releases_in_time_order_within_the_window() {
        let mut q = RowQueue::new(3);
        let mut out = Vec::new();
        let mut rec = Record::default();
        for (t, kind) in [
            (5, Kind::Event),
            (3, Kind::Event),
            (4, Kind::Container),
            (6, Kind::Event),
            (4, Kind::Event),
        ] {
            let s = q.slot();
            q.get(s).kind = kind;
            q.get(s).time = Some(t);
            q.commit(s).unwrap();
            while q.is_full() {
                q.pop_into(&mut rec);
                out.push((rec.kind, rec.time.unwrap()));
            }
        }
        // A row older than a released one is refused.
        let s = q.slot();
        q.get(s).time = Some(1);
        assert_eq!(q.commit(s), Err(1));
        while q.pop_into(&mut rec) {
            out.push((rec.kind, rec.time.unwrap()));
        }
        assert_eq!(
            out,
            vec![
                (Kind::Container, 4),
                (Kind::Event, 3),
                (Kind::Event, 4),
                (Kind::Event, 5),
                (Kind::Event, 6)
            ]
        );
    }
}
