//! Frames a source leaves out before a slice's T0 (`Demand::thin_before`):
//! a frame entered inside another and left before any other row of the
//! source is neither open at T0 nor the source's first or last row, so no
//! slice needs it. Its `enter` is held back until the next row shows
//! which it is: the `leave` drops both, any other row sends it on first.

use crate::model::record::{Kind, Record};

/// The frames a source holds back before T0, innermost last.
#[derive(Debug, Default)]
pub struct HeldFrames {
    /// T0, until a row reaches it.
    before: Option<i64>,
    held: Vec<Record>,
    /// Records of frames dropped, reused for the next ones held (their
    /// buffers stay allocated).
    spare: Vec<Record>,
}

impl HeldFrames {
    /// Holds frames back before `t0` (none when `None`).
    pub fn thin_before(&mut self, t0: Option<i64>) {
        self.before = t0;
    }

    /// Whether `rec`, before T0, is held back (an `enter` inside another,
    /// taken from `rec`) or dropped (the `leave` of the frame held last,
    /// with it). A row with attributes never is, nor a frame at the top
    /// (the source's first and last rows are read as they are: a slice
    /// tells the trace's span from them).
    pub fn holds_back(&mut self, rec: &mut Record) -> bool {
        let Some(t0) = self.before else {
            return false;
        };
        if rec.time.is_none_or(|t| t >= t0) {
            self.before = None;
            return false;
        }
        match rec.kind {
            _ if !rec.attrs.is_empty() => false,
            Kind::Enter if rec.depth == Some(0) => false,
            Kind::Enter => {
                let mut row = self.spare.pop().unwrap_or_default();
                std::mem::swap(&mut row, rec);
                self.held.push(row);
                true
            }
            Kind::Leave if self.closes_last(rec) => {
                let row = self.held.pop().expect("a frame held");
                self.spare.push(row);
                true
            }
            _ => false,
        }
    }

    /// Whether `leave` closes the frame held last (sources whose rows
    /// are on several locations interleave them).
    fn closes_last(&self, leave: &Record) -> bool {
        self.held
            .last()
            .is_some_and(|enter| enter.loc == leave.loc && enter.depth == leave.depth)
    }

    /// The frames held back, outermost first: open, they go before the row
    /// that came (or at the end).
    pub fn release(&mut self) -> std::vec::Drain<'_, Record> {
        self.held.drain(..)
    }

    /// The frames held back.
    pub fn held(&self) -> &[Record] {
        &self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Sym;

    fn frame(kind: Kind, time: i64, loc: u32, depth: u32) -> Record {
        let mut rec = Record::new(kind);
        (rec.time, rec.loc, rec.depth) = (Some(time), Sym::from_index(loc), Some(depth));
        rec
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
}
