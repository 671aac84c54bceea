//! Events put back in time order per location. A stream comes in completion
//! order, so the start of a `state`, `coll` or `msg` comes after events that
//! follow it in time; events wait here, at most `window` of them, and leave
//! earliest first. An event earlier than one its location has already
//! written is out of order by more than the window: an error for the row.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Where an event goes among the events of its time on its location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TiePlace {
    /// In the order events come.
    InOrder,
    /// Just after event `anchor` (before every other event of that time
    /// when none): the start or end of a frame given whole, which comes
    /// after rows it holds. Among such events after one anchor, frames
    /// ending later start first.
    After {
        /// The number of the event it follows ([`Reorder::next_number`]).
        anchor: Option<u64>,
        /// The tick its frame ends.
        end: u64,
    },
}

/// One event waiting.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Waiting {
    key: (u64, u64, Reverse<u64>, u64),
    location: u32,
    bytes: Vec<u8>,
}

/// The events waiting, earliest first.
pub struct Reorder {
    heap: BinaryHeap<Reverse<Waiting>>,
    window: usize,
    seq: u64,
    /// Buffers of events written, for reuse.
    spare: Vec<Vec<u8>>,
}

impl Reorder {
    /// Holds at most `window` events.
    pub fn new(window: usize) -> Reorder {
        Reorder {
            heap: BinaryHeap::new(),
            window: window.max(1),
            seq: 0,
            spare: Vec::new(),
        }
    }

    /// The number the next event pushed gets.
    pub fn next_number(&self) -> u64 {
        self.seq + 1
    }

    /// A buffer to encode an event into.
    pub fn buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }

    /// Adds an event of `location` at `ticks`; returns the event that
    /// leaves when the window is full.
    pub fn push(
        &mut self,
        location: u32,
        (ticks, slot): (u64, TiePlace),
        bytes: Vec<u8>,
    ) -> Option<(u32, u64, Vec<u8>)> {
        self.seq += 1;
        let (position, end) = match slot {
            TiePlace::InOrder => (2 * self.seq, 0),
            TiePlace::After { anchor, end } => (anchor.map_or(0, |a| 2 * a + 1), end),
        };
        self.heap.push(Reverse(Waiting {
            key: (ticks, position, Reverse(end), self.seq),
            location,
            bytes,
        }));
        match self.heap.len() > self.window {
            true => self.pop(),
            false => None,
        }
    }

    /// The earliest event: its location, time and bytes.
    pub fn pop(&mut self) -> Option<(u32, u64, Vec<u8>)> {
        let Reverse(w) = self.heap.pop()?;
        Some((w.location, w.key.0, w.bytes))
    }

    /// Gives a written event's buffer back.
    pub fn recycle(&mut self, mut bytes: Vec<u8>) {
        if self.spare.len() < 1024 {
            bytes.clear();
            self.spare.push(bytes);
        }
    }
}
