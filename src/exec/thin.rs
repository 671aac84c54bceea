//! What a source leaves out before a slice's T0 (`Demand::thin_before`),
//! where a slice needs only the state: the frames open, the counters'
//! last samples. [`HeldFrames`] is for a source of one location's rows
//! (an OTF2 location): a frame entered inside another and left before T0
//! is neither open at T0 nor the source's first or last row, so its
//! `enter` is held back, with the rows that come inside it, until its
//! `leave` drops the frame and lets those rows go on in their place; an
//! `enter` or `leave` it cannot hold, T0 or a bound sends everything held
//! on first. [`Snapshot`] is for
//! a source whose locations' rows interleave (an STF data file), where
//! another location's row nearly always comes between a frame's `enter`
//! and `leave`: rows wait in a window of the last rows read, dropped while
//! they wait.

use std::collections::VecDeque;

use crate::fasthash::{FastMap, FastSet};
use crate::model::record::{Kind, Record, Sym};

/// How many rows a [`HeldFrames`] holds inside its frames before it sends
/// them all on: memory stays bounded however long a frame open before T0
/// lasts.
pub const MAX_HELD: usize = 4096;

/// The frames a source holds back before T0, innermost last, and the rows
/// that came inside them.
#[derive(Debug, Default)]
pub struct HeldFrames {
    /// T0, until a row reaches it.
    before: Option<i64>,
    /// The frames' `enter` rows and the rows inside them, in read order.
    held: Vec<Record>,
    /// Where the frames' `enter` rows are in `held`, innermost last.
    frames: Vec<usize>,
    /// Records of frames dropped, reused for the next ones held (their
    /// buffers stay allocated).
    spare: Vec<Record>,
}

impl HeldFrames {
    /// Holds frames back before `t0` (none when `None`).
    pub fn thin_before(&mut self, t0: Option<i64>) {
        self.before = t0;
    }

    /// Whether `rec`, before T0, is taken from `rec`: held (an `enter`
    /// inside another, or a row inside a frame held) or dropped (the
    /// `leave` of the frame held last, with its `enter`). The rows that
    /// came inside a frame dropped stay where they were read, and may go
    /// on at once ([`HeldFrames::holds_rows_alone`]): only frames are
    /// left out. A frame entered or left with attributes never is, nor
    /// one at the top (the source's first and last rows are read as they
    /// are: a slice tells the trace's span from them), nor a frame
    /// another `enter` or `leave` interrupts.
    pub fn holds_back(&mut self, rec: &mut Record) -> bool {
        let Some(t0) = self.before else {
            return false;
        };
        if rec.time.is_none_or(|t| t >= t0) {
            self.before = None;
            return false;
        }
        match rec.kind {
            Kind::Enter | Kind::Leave if !rec.attrs.is_empty() => false,
            Kind::Enter if rec.depth == Some(0) => false,
            Kind::Enter if self.held.len() < MAX_HELD => {
                self.frames.push(self.held.len());
                self.hold(rec);
                true
            }
            Kind::Leave if self.closes_last(rec) => {
                let at = self.frames.pop().expect("a frame held");
                self.spare.push(self.held.remove(at));
                true
            }
            Kind::Enter | Kind::Leave => false,
            // Inside a frame held, a row goes on with the rows around it.
            _ if !self.frames.is_empty() && self.held.len() < MAX_HELD => {
                self.hold(rec);
                true
            }
            _ => false,
        }
    }

    /// Holds `rec`, taking it (a spare record is left in its place).
    fn hold(&mut self, rec: &mut Record) {
        let mut row = self.spare.pop().unwrap_or_default();
        std::mem::swap(&mut row, rec);
        self.held.push(row);
    }

    /// Whether `leave` closes the frame held last (sources whose rows
    /// are on several locations interleave them).
    fn closes_last(&self, leave: &Record) -> bool {
        let enter = self.frames.last().map(|&at| &self.held[at]);
        enter.is_some_and(|enter| enter.loc == leave.loc && enter.depth == leave.depth)
    }

    /// Whether rows are held but no frame: they came inside frames since
    /// dropped, and go on now ([`HeldFrames::release`]).
    pub fn holds_rows_alone(&self) -> bool {
        self.frames.is_empty() && !self.held.is_empty()
    }

    /// The rows held back, in read order (the frames open, outermost
    /// first): they go before the row that came (or at the end).
    pub fn release(&mut self) -> std::vec::Drain<'_, Record> {
        self.frames.clear();
        self.held.drain(..)
    }

    /// The rows held back.
    pub fn held(&self) -> &[Record] {
        &self.held
    }
}

/// How many rows read before T0 wait in a [`Snapshot`] to be dropped:
/// a frame entered and left, or a counter sampled again, within this many
/// rows leaves no row.
pub const SNAPSHOT_WINDOW: usize = 4096;

/// A row waiting in a [`Snapshot`]: the row, the source's `T`, and whether
/// it is never dropped. Rows are boxed so that waiting moves a pointer,
/// not the record.
#[derive(Debug)]
struct Waiting<T> {
    row: Box<Record>,
    with: T,
    pinned: bool,
}

/// A row dropped, kept in case it is the last: the number it would have
/// had, the row, and its frame's `enter` with its number.
type Dropped<T> = (u64, Waiting<T>, Option<(u64, Waiting<T>)>);

/// What a source whose rows of many locations interleave (an STF data
/// file) keeps of its rows before a slice's T0: the state there. The
/// last [`SNAPSHOT_WINDOW`] rows read wait, in read order, and go out as
/// they leave the window, so rows keep their order and nest as read.
/// While they wait, a frame's `leave` drops it with its `enter`, and a
/// counter's sample drops the one before; complete rows that end before
/// T0 (`msg`, `state`, `coll`, an `event` that posts nothing) never wait.
/// Never dropped: a location's first row (where it is declared), a row
/// that starts earlier than any before it, and, when the input ends
/// before T0, its last row: the rows that go out tell the trace's span
/// and locations as all of them would. From T0 on, rows pass.
#[derive(Debug)]
pub struct Snapshot<T> {
    /// T0, until a row reaches it.
    t0: Option<i64>,
    /// The earliest start of the rows read so far.
    earliest: i64,
    seen: FastSet<Sym>,
    /// The rows waiting, by number from `first`; `None` where one was
    /// dropped.
    window: VecDeque<Option<Waiting<T>>>,
    first: u64,
    /// Per location, the frames entered before T0 and not left: the
    /// number of the `enter` and its depth.
    frames: FastMap<Sym, Vec<(u64, Option<u32>)>>,
    /// Per counter (location, category, name), the number of its last
    /// sample.
    samples: FastMap<(Sym, Sym, Sym), u64>,
    /// The last row read that has a time, when it was dropped: the number
    /// it would have had, the row, and its frame's `enter` with its number.
    last_dropped: Option<Dropped<T>>,
    /// Rows out of the window, in order.
    out: VecDeque<(Box<Record>, T)>,
    /// Records of rows dropped or handed out, reused (their buffers stay
    /// allocated).
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Record>>,
}

impl<T> Default for Snapshot<T> {
    fn default() -> Self {
        Snapshot {
            t0: None,
            earliest: i64::MAX,
            seen: FastSet::default(),
            window: VecDeque::new(),
            first: 0,
            frames: FastMap::default(),
            samples: FastMap::default(),
            last_dropped: None,
            out: VecDeque::new(),
            spare: Vec::new(),
        }
    }
}

impl<T> Snapshot<T> {
    /// Keeps only the state at `t0` of the rows before it (all rows when
    /// `None`).
    pub fn thin_before(&mut self, t0: Option<i64>) {
        self.t0 = t0;
    }

    /// Whether rows before T0 are still to come (else rows pass as they
    /// are, once [`Snapshot::next_out`] has none).
    pub fn is_active(&self) -> bool {
        self.t0.is_some()
    }

    /// Whether `rec` (with `with`) is taken: it waits, is dropped, or (at
    /// T0) goes out after the rows waiting; take the rows out with
    /// [`Snapshot::next_out`]. A row not taken passes as it is.
    pub fn takes(&mut self, rec: &mut Box<Record>, with: T) -> bool {
        let Some(t0) = self.t0 else {
            return false;
        };
        let Some(at) = rec.completion() else {
            self.wait(rec, with, true);
            return true;
        };
        if at >= t0 {
            self.t0 = None;
            self.forget_dropped();
            self.flush();
            let row = self.take_row(rec);
            self.out.push_back((row, with));
            return true;
        }
        let start = rec.start().unwrap_or(at);
        let mut first_of_location = false;
        for loc in [rec.loc, rec.peer] {
            // Both are noted, so no short cut.
            first_of_location |= !loc.is_empty() && self.seen.insert(loc);
        }
        let pinned = first_of_location || start < self.earliest;
        self.earliest = self.earliest.min(start);
        self.forget_dropped();
        match rec.kind {
            Kind::Enter => {
                let (loc, depth) = (rec.loc, rec.depth);
                let number = self.wait(rec, with, pinned);
                self.frames.entry(loc).or_default().push((number, depth));
            }
            Kind::Leave => self.leave(rec, with, pinned),
            Kind::Counter => {
                let key = (rec.loc, rec.cat, rec.name);
                let number = self.wait(rec, with, pinned);
                if let Some(older) = self.samples.insert(key, number) {
                    if let Some(dropped) = self.take_waiting(older) {
                        self.spare.push(dropped.row);
                    }
                }
            }
            Kind::Msg | Kind::State | Kind::Coll if !pinned => self.set_aside(rec, with, None),
            Kind::Event if !pinned && rec.id.is_empty() => self.set_aside(rec, with, None),
            _ => {
                self.wait(rec, with, pinned);
            }
        }
        true
    }

    /// A `leave` before T0: dropped with its frame's `enter` while that
    /// waits, else waits itself.
    fn leave(&mut self, rec: &mut Box<Record>, with: T, pinned: bool) {
        let frames = self.frames.get_mut(&rec.loc);
        let top = match frames {
            Some(f) if f.last().is_some_and(|(_, depth)| *depth == rec.depth) => f.pop(),
            _ => None,
        };
        let enter = top
            .filter(|_| !pinned)
            .and_then(|(n, _)| Some(n).zip(self.take_waiting(n)));
        match enter {
            Some(enter) => self.set_aside(rec, with, Some(enter)),
            None => {
                self.wait(rec, with, pinned);
            }
        }
    }

    /// Takes the row numbered `number` out of the window, if it waits and
    /// may be dropped.
    fn take_waiting(&mut self, number: u64) -> Option<Waiting<T>> {
        let at = self.slot(number)?;
        let slot = &mut self.window[at];
        match slot {
            Some(w) if !w.pinned => slot.take(),
            _ => None,
        }
    }

    /// Takes `rec`, leaving a spare record in its place.
    fn take_row(&mut self, rec: &mut Box<Record>) -> Box<Record> {
        std::mem::replace(rec, self.spare.pop().unwrap_or_default())
    }

    /// Puts `rec` in the window (returning its number); the row that
    /// leaves it goes out.
    fn wait(&mut self, rec: &mut Box<Record>, with: T, pinned: bool) -> u64 {
        let row = self.take_row(rec);
        let number = self.first + self.window.len() as u64;
        self.window.push_back(Some(Waiting { row, with, pinned }));
        if self.window.len() > SNAPSHOT_WINDOW {
            self.first += 1;
            if let Some(w) = self.window.pop_front().flatten() {
                self.out.push_back((w.row, w.with));
            }
        }
        number
    }

    /// Drops `rec` (and `enter`, its frame's, with its number), kept as
    /// the last row read until another is.
    fn set_aside(&mut self, rec: &mut Box<Record>, with: T, enter: Option<(u64, Waiting<T>)>) {
        let number = self.first + self.window.len() as u64;
        let row = self.take_row(rec);
        let dropped = Waiting {
            row,
            with,
            pinned: false,
        };
        self.forget_dropped();
        self.last_dropped = Some((number, dropped, enter));
    }

    /// The last row dropped is not the last read: its records are reused.
    fn forget_dropped(&mut self) {
        if let Some((_, older, older_enter)) = self.last_dropped.take() {
            self.spare.extend(older_enter.map(|(_, e)| e.row));
            self.spare.push(older.row);
        }
    }

    /// Every row waiting goes out.
    fn flush(&mut self) {
        self.first += self.window.len() as u64;
        let rows = self.window.drain(..).flatten();
        self.out.extend(rows.map(|w| (w.row, w.with)));
        self.frames.clear();
        self.samples.clear();
    }

    /// The input ended: every row waiting goes out, with the last row read
    /// that has a time if it was dropped (before T0), in its place (with
    /// its frame's `enter`, if that is still in the window).
    pub fn finish(&mut self) {
        self.t0 = None;
        if let Some((number, last, enter)) = self.last_dropped.take() {
            let restored = match enter {
                Some((n, enter)) => match self.slot(n) {
                    Some(slot) => {
                        self.window[slot] = Some(enter);
                        true
                    }
                    None => false,
                },
                None => true,
            };
            if restored {
                let at = number.saturating_sub(self.first) as usize;
                self.window.insert(at.min(self.window.len()), Some(last));
            }
        }
        self.flush();
    }

    /// Where the row numbered `number` is in the window, if it is.
    fn slot(&self, number: u64) -> Option<usize> {
        let at = usize::try_from(number.checked_sub(self.first)?).ok()?;
        (at < self.window.len()).then_some(at)
    }

    /// The next row out, in read order; give its box back with
    /// [`Snapshot::recycle`].
    pub fn next_out(&mut self) -> Option<(Box<Record>, T)> {
        self.out.pop_front()
    }

    /// Takes back the box of a row out, for the rows read next.
    pub fn recycle(&mut self, row: Box<Record>) {
        self.spare.push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: Kind, time: i64, loc: u32, depth: u32) -> Record {
        let mut rec = Record::new(kind);
        (rec.time, rec.loc, rec.depth) = (Some(time), Sym::from_index(loc), Some(depth));
        rec
    }

    /// Before a T0 never reached, on two interleaved locations: frames
    /// entered and left, events and superseded samples leave no row, the
    /// window stays bounded, and the last row read goes out in its place.
    #[test]
    fn a_snapshot_keeps_the_first_rows_the_last_sample_and_the_last_row() {
        let mut snapshot = Snapshot::<u64>::default();
        snapshot.thin_before(Some(i64::MAX));
        let mut rows = vec![frame(Kind::Enter, 1, 1, 0), frame(Kind::Enter, 2, 2, 0)];
        for i in 0..10_000 {
            let t = 10 + 4 * i;
            let mut sample = frame(Kind::Counter, t + 3, 2, 0);
            sample.value = i.to_string();
            let mut tick = frame(Kind::Event, t + 1, 2, 0);
            tick.depth = None;
            rows.extend([frame(Kind::Enter, t, 1, 1), tick]);
            rows.extend([frame(Kind::Leave, t + 2, 1, 1), sample]);
        }
        rows.extend([
            frame(Kind::Enter, 50_000, 1, 1),
            frame(Kind::Leave, 50_001, 1, 1),
        ]);
        let mut out = Vec::new();
        for (n, row) in rows.into_iter().enumerate() {
            assert!(snapshot.takes(&mut Box::new(row), n as u64));
            assert!(snapshot.window.len() <= SNAPSHOT_WINDOW);
            while let Some((row, n)) = snapshot.next_out() {
                out.push((row.kind, row.time.unwrap(), row.value.clone(), n));
            }
        }
        snapshot.finish();
        while let Some((row, n)) = snapshot.next_out() {
            out.push((row.kind, row.time.unwrap(), row.value.clone(), n));
        }
        let last_sample = (
            Kind::Counter,
            10 + 4 * 9_999 + 3,
            "9999".to_string(),
            40_001,
        );
        let expected = [
            (Kind::Enter, 1, String::new(), 0),
            (Kind::Enter, 2, String::new(), 1),
            last_sample,
            (Kind::Enter, 50_000, String::new(), 40_002),
            (Kind::Leave, 50_001, String::new(), 40_003),
        ];
        assert_eq!(out, expected);
    }

    /// A frame left before any other row is dropped; one a row of another
    /// location interrupts is sent on, before that row; nothing is held
    /// from T0 on.
    #[test]
    fn frames_closed_before_another_row_are_dropped() {
        let mut frames = HeldFrames::default();
        frames.thin_before(Some(100));
        let mut rows = [
            frame(Kind::Enter, 1, 1, 0),
            frame(Kind::Enter, 2, 1, 1),
            frame(Kind::Leave, 3, 1, 1),
            frame(Kind::Enter, 4, 1, 1),
            frame(Kind::Leave, 5, 2, 1),
            frame(Kind::Enter, 6, 1, 2),
        ];
        let mut out = Vec::new();
        for rec in &mut rows {
            if !frames.holds_back(rec) {
                out.extend(frames.release().map(|r| r.time.unwrap()));
                out.push(rec.time.unwrap());
            }
        }
        assert_eq!(out, [1, 4, 5]);
        assert_eq!(frames.held().len(), 1, "the frame entered at 6");
        let mut late = frame(Kind::Leave, 100, 1, 2);
        assert!(!frames.holds_back(&mut late), "at T0");
        let released: Vec<_> = frames.release().map(|r| r.time.unwrap()).collect();
        assert_eq!(released, [6]);
        let mut later = frame(Kind::Enter, 101, 1, 2);
        assert!(!frames.holds_back(&mut later), "after T0");
    }

    /// Rows inside frames held go on in their place once the frames are
    /// dropped (frames nested included); past [`MAX_HELD`] rows, the
    /// frame held goes on with them.
    #[test]
    fn rows_inside_frames_dropped_keep_their_place() {
        fn take(frames: &mut HeldFrames, mut rec: Record, out: &mut Vec<(Kind, i64)>) {
            let row = |r: Record| (r.kind, r.time.unwrap());
            if !frames.holds_back(&mut rec) {
                out.extend(frames.release().map(row));
                out.push(row(rec));
            } else if frames.holds_rows_alone() {
                out.extend(frames.release().map(row));
            }
        }
        let mut frames = HeldFrames::default();
        frames.thin_before(Some(1_000_000));
        let mut out = Vec::new();
        let rows = [
            (Kind::Enter, 1, 0),
            (Kind::Enter, 2, 1),
            (Kind::Send, 3, 2),
            (Kind::Counter, 4, 2),
            (Kind::Leave, 5, 1),
            (Kind::Enter, 6, 1),
            (Kind::Enter, 7, 2),
            (Kind::Recv, 8, 3),
            (Kind::Leave, 9, 2),
        ];
        for (kind, time, depth) in rows {
            take(&mut frames, frame(kind, time, 1, depth), &mut out);
        }
        assert_eq!(out.len(), 3, "the receive waits inside the frame at 6");
        take(&mut frames, frame(Kind::Leave, 10, 1, 1), &mut out);
        let expected = [
            (Kind::Enter, 1),
            (Kind::Send, 3),
            (Kind::Counter, 4),
            (Kind::Recv, 8),
        ];
        assert_eq!(out, expected);
        out.clear();
        take(&mut frames, frame(Kind::Enter, 11, 1, 1), &mut out);
        for t in 0..MAX_HELD as i64 {
            take(&mut frames, frame(Kind::Event, 12 + t, 1, 2), &mut out);
            assert!(frames.held().len() <= MAX_HELD);
        }
        // The last event found the bound reached: all went on, in order.
        assert!(frames.held().is_empty());
        let times: Vec<i64> = out.iter().map(|&(_, t)| t).collect();
        assert_eq!(times, (11..12 + MAX_HELD as i64).collect::<Vec<_>>());
    }
}
