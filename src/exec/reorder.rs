//! A bounded reorder buffer for sources that are time-ordered only piecewise
//! (Pajé orders events per container and type, not globally).
//!
//! Rows go in as they are produced and come out by completion time once the
//! buffer holds `window` rows (or at the end). A row older than one already
//! released is an error, not a silent misorder. Declarations (rows without a
//! completion time) are placed by a key their producer chooses and can be moved
//! earlier, so they precede their first use. Record buffers are recycled, so a
//! full buffer allocates nothing per row.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::model::record::Record;

/// Text the waiting rows may hold together: the window is a number of rows,
/// and rows of huge values must not make it hold gigabytes.
pub const MAX_WAITING_BYTES: usize = 16 << 20;

/// Buffer capacity a free slot may keep for the next row.
const MAX_KEPT_CAPACITY: usize = 64 << 10;

/// The text a row holds (what makes rows differ in size).
fn text_bytes(rec: &Record) -> usize {
    rec.texts().iter().map(|t| t.len()).sum()
}

/// Identifies a queued row so its key can be lowered while it waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    slot: u32,
    occupant: u64,
    /// The key the row waits under.
    pub key: i64,
}

struct Slot {
    rec: Record,
    /// Where the row came from (the producer's mark when it was committed).
    mark: u64,
    /// Which row occupies the slot (changes each time it is reused).
    occupant: u64,
    /// The sequence number of the row's valid heap entry.
    live: u64,
    queued: bool,
}

/// Rows waiting to be released in completion-time order.
pub struct RowQueue {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Entries that arrived in order (sorted by construction): the common case
    /// costs no heap operation.
    run: VecDeque<(i64, u64, u32)>,
    /// Entries that arrived out of order.
    heap: BinaryHeap<Reverse<(i64, u64, u32)>>,
    waiting: usize,
    /// Text bytes of the waiting rows, bounded by [`MAX_WAITING_BYTES`].
    waiting_bytes: usize,
    /// Entries left behind by `lower` and `cancel`, not yet met: swept
    /// once they outnumber the rows waiting, so rows cancelled while few
    /// wait (before a slice's T0) leave no trail in memory.
    stale: usize,
    seq: u64,
    occupants: u64,
    released: i64,
    window: usize,
    /// The mark given to rows committed from now on, and the mark of the
    /// row released last.
    mark_in: u64,
    mark_out: u64,
}

impl RowQueue {
    /// A queue releasing rows once `window` (at least 1) are held.
    pub fn new(window: usize) -> RowQueue {
        RowQueue {
            slots: Vec::new(),
            free: Vec::new(),
            run: VecDeque::new(),
            heap: BinaryHeap::new(),
            waiting: 0,
            waiting_bytes: 0,
            stale: 0,
            seq: 0,
            occupants: 0,
            released: i64::MIN,
            window: window.max(1),
            mark_in: 0,
            mark_out: 0,
        }
    }

    /// A cleared record to fill; hand it back with [`RowQueue::commit`].
    pub fn slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize].rec.clear();
                i
            }
            None => {
                self.slots.push(Slot {
                    rec: Record::default(),
                    mark: 0,
                    occupant: 0,
                    live: 0,
                    queued: false,
                });
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The record of a slot.
    pub fn get(&mut self, slot: u32) -> &mut Record {
        &mut self.slots[slot as usize].rec
    }

    /// Queues a filled slot under its completion time, or under `key` when it
    /// has none (a declaration; raised to the release point if older). Returns
    /// the time of a row older than one already released, as an error.
    pub fn commit(&mut self, slot: u32, key: i64) -> Result<Ticket, i64> {
        let rec = &self.slots[slot as usize].rec;
        let key = match rec.completion().filter(|_| !rec.kind.is_structural()) {
            Some(k) if k < self.released => {
                self.free.push(slot);
                return Err(k);
            }
            Some(k) => k,
            None => key.max(self.released),
        };
        self.occupants += 1;
        let s = &mut self.slots[slot as usize];
        s.mark = self.mark_in;
        s.occupant = self.occupants;
        s.live = self.seq;
        s.queued = true;
        self.push_entry(key, slot);
        self.waiting += 1;
        self.waiting_bytes += text_bytes(&self.slots[slot as usize].rec);
        Ok(Ticket {
            slot,
            occupant: self.occupants,
            key,
        })
    }

    /// Moves a waiting row to `key` if that is earlier; returns the ticket for
    /// its new place (unchanged when it was released already or not later).
    pub fn lower(&mut self, ticket: Ticket, key: i64) -> Ticket {
        let key = key.max(self.released);
        let s = &mut self.slots[ticket.slot as usize];
        if !s.queued || s.occupant != ticket.occupant || key >= ticket.key {
            return ticket;
        }
        s.live = self.seq;
        self.push_entry(key, ticket.slot);
        self.left_behind();
        Ticket { key, ..ticket }
    }

    /// Takes a waiting row out of the queue, unreleased; false when it
    /// was released already. Its entry is left behind, skipped when met.
    pub fn cancel(&mut self, ticket: Ticket) -> bool {
        let s = &mut self.slots[ticket.slot as usize];
        if !s.queued || s.occupant != ticket.occupant {
            return false;
        }
        s.queued = false;
        self.waiting -= 1;
        self.waiting_bytes = self.waiting_bytes.saturating_sub(text_bytes(&s.rec));
        self.free.push(ticket.slot);
        self.left_behind();
        true
    }

    /// Counts an entry left behind, sweeping them all once they outnumber
    /// the rows waiting (and a floor that keeps sweeps rare): each sweep
    /// costs what as many entries left behind did.
    fn left_behind(&mut self) {
        const FLOOR: usize = 1024;
        self.stale += 1;
        if self.stale < self.waiting.max(FLOOR) {
            return;
        }
        let slots = &self.slots;
        let valid = |&(_, seq, slot): &(i64, u64, u32)| {
            let s = &slots[slot as usize];
            s.queued && s.live == seq
        };
        self.run.retain(valid);
        self.heap.retain(|Reverse(entry)| valid(entry));
        self.stale = 0;
    }

    fn push_entry(&mut self, key: i64, slot: u32) {
        let entry = (key, self.seq, slot);
        self.seq += 1;
        match self.run.back() {
            Some(&(last, _, _)) if key < last => self.heap.push(Reverse(entry)),
            _ => self.run.push_back(entry),
        }
    }

    /// True when enough rows wait that the oldest may be released.
    pub fn is_full(&self) -> bool {
        self.waiting >= self.window || self.waiting_bytes >= MAX_WAITING_BYTES
    }

    /// True when no row waits.
    pub fn is_empty(&self) -> bool {
        self.waiting == 0
    }

    /// Releases the oldest row into `rec` (swapping buffers).
    pub fn pop_into(&mut self, rec: &mut Record) -> bool {
        loop {
            let from_run = match (self.run.front(), self.heap.peek()) {
                (Some(a), Some(Reverse(b))) => a < b,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return false,
            };
            let (key, seq, slot) = if from_run {
                self.run.pop_front().expect("checked above")
            } else {
                self.heap.pop().expect("checked above").0
            };
            let s = &mut self.slots[slot as usize];
            if !s.queued || s.live != seq {
                self.stale -= 1; // an entry left behind by `lower` or `cancel`
                continue;
            }
            s.queued = false;
            self.waiting -= 1;
            self.waiting_bytes = self.waiting_bytes.saturating_sub(text_bytes(&s.rec));
            self.released = self.released.max(key);
            std::mem::swap(rec, &mut s.rec);
            // A slot keeps its buffers for the next row, unless a huge row
            // left them huge.
            if s.rec.texts().iter().map(|t| t.capacity()).sum::<usize>() > MAX_KEPT_CAPACITY {
                s.rec = Record::default();
            }
            self.mark_out = s.mark;
            self.free.push(slot);
            return true;
        }
    }

    /// Gives the rows committed from now on `mark` (a line number, say), so
    /// an error about a row can name where it came from once it is released.
    pub fn set_mark(&mut self, mark: u64) {
        self.mark_in = mark;
    }

    /// The mark of the row released last.
    pub fn released_mark(&self) -> u64 {
        self.mark_out
    }

    /// The completion time of the newest released row.
    pub fn released(&self) -> i64 {
        self.released
    }

    /// How early a row waiting, or one committed from now on, can start:
    /// the earliest start of a waiting row, and the newest completion
    /// released (a row completing before it is refused). A look at every
    /// waiting row.
    pub fn earliest_start(&self) -> i64 {
        let waiting = self.slots.iter().filter(|s| s.queued);
        let starts = waiting.filter_map(|s| s.rec.start());
        starts.fold(self.released, i64::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Kind;

    /// A cancelled row is never released, and its slot serves the next
    /// row; a released row cannot be cancelled.
    #[test]
    fn a_cancelled_row_is_never_released() {
        let mut q = RowQueue::new(8);
        let mut tickets = Vec::new();
        for t in [10, 20, 30] {
            let s = q.slot();
            let rec = q.get(s);
            (rec.kind, rec.time) = (Kind::Event, Some(t));
            tickets.push(q.commit(s, t).unwrap());
        }
        assert!(q.cancel(tickets[1]));
        assert!(!q.cancel(tickets[1]), "cancelled twice");
        let s = q.slot();
        let rec = q.get(s);
        (rec.kind, rec.time) = (Kind::Event, Some(40));
        q.commit(s, 40).unwrap();
        let mut rec = Record::default();
        let mut times = Vec::new();
        while q.pop_into(&mut rec) {
            times.push(rec.time.unwrap());
        }
        assert_eq!(times, [10, 30, 40]);
        assert!(!q.cancel(tickets[0]), "released");
        assert!(q.is_empty());
    }

    /// Rows cancelled while few wait leave no trail: the entries left
    /// behind are swept, and the rows kept come out in order all the same.
    #[test]
    fn entries_left_behind_by_cancelled_rows_are_swept() {
        let mut q = RowQueue::new(1 << 20);
        let mut kept = Vec::new();
        let mut last = None;
        for t in 0..100_000 {
            let s = q.slot();
            let rec = q.get(s);
            (rec.kind, rec.time) = (Kind::Counter, Some(t));
            let ticket = q.commit(s, t).unwrap();
            if t % 1000 == 0 {
                kept.push(t);
            } else if let Some(previous) = last.replace(ticket) {
                q.cancel(previous);
            }
        }
        assert!(
            q.run.len() + q.heap.len() <= 2 * 1024,
            "{} entries",
            q.run.len()
        );
        let mut rec = Record::default();
        let mut times = Vec::new();
        while q.pop_into(&mut rec) {
            times.push(rec.time.unwrap());
        }
        kept.push(99_999);
        assert_eq!(times, kept);
    }

    /// Rows of huge values fill the window by their bytes, long before its
    /// row count, and free slots do not keep huge buffers.
    #[test]
    fn the_window_is_bounded_in_bytes_too() {
        let mut q = RowQueue::new(4096);
        let value = "x".repeat(1 << 20);
        let mut held = 0;
        while !q.is_full() {
            let s = q.slot();
            let rec = q.get(s);
            rec.kind = Kind::Event;
            rec.time = Some(held);
            rec.value.push_str(&value);
            q.commit(s, held).unwrap();
            held += 1;
        }
        assert_eq!(held as usize, MAX_WAITING_BYTES >> 20);
        let mut rec = Record::default();
        while q.pop_into(&mut rec) {}
        assert!(q
            .slots
            .iter()
            .all(|s| s.rec.value.capacity() <= MAX_KEPT_CAPACITY));
    }

    #[test]
    fn releases_in_time_order_and_moves_declarations_before_use() {
        let mut q = RowQueue::new(4);
        let mut out = Vec::new();
        let mut rec = Record::default();
        let mut decl = None;
        for (t, kind) in [
            (5, Kind::Event),
            (3, Kind::Event),
            (6, Kind::Container),
            (4, Kind::Event),
            (7, Kind::Event),
            (8, Kind::Event),
        ] {
            if t == 4 {
                // The declared location is used at 4: the declaration moves
                // before the use is queued.
                decl = decl.map(|d| q.lower(d, 4));
            }
            let s = q.slot();
            q.get(s).kind = kind;
            q.get(s).time = Some(t);
            let ticket = q.commit(s, t).unwrap();
            if kind == Kind::Container {
                decl = Some(ticket);
            }
            while q.is_full() {
                q.pop_into(&mut rec);
                out.push((rec.kind, rec.time.unwrap()));
            }
        }
        let s = q.slot();
        q.get(s).time = Some(1);
        assert_eq!(q.commit(s, 1), Err(1));
        while q.pop_into(&mut rec) {
            out.push((rec.kind, rec.time.unwrap()));
        }
        assert_eq!(
            out,
            vec![
                (Kind::Event, 3),
                (Kind::Container, 6),
                (Kind::Event, 4),
                (Kind::Event, 5),
                (Kind::Event, 7),
                (Kind::Event, 8)
            ]
        );
    }
}
