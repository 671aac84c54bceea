//! A location's open frames: the one stack every report and stage that
//! follows `enter`/`leave` keeps. It owns the rules they share: a `leave`
//! closes the innermost frame and, when it names one, must name that frame
//! (an error says which was open); closed slots are kept so that the next
//! frame reuses their buffers; the location's latest time is noted, and
//! frames still open at the end close there, location by location in the
//! order of their names (so no output depends on the symbols' numbers).
//! A frame cut by a crossing `leave` ([`nesting`](super::nesting)) may be set
//! aside and resumed when it is entered again, so that its parts make one
//! call.

use crate::error::{Error, Result};
use crate::model::record::{Record, Sym};
use crate::model::symbol::Symbols;

/// What a stack holds of an open frame: at least its name, which a `leave`
/// that names a frame must give.
pub trait OpenFrame: Default {
    /// The frame's name (its function, state value...).
    fn name(&self) -> Sym;
}

/// One location's open frames, outermost first.
#[derive(Debug)]
pub struct FrameStack<F> {
    /// The open frames (`..depth`), then slots of closed ones kept for
    /// their buffers.
    slots: Vec<F>,
    depth: usize,
    last: i64,
    /// Frames cut by a crossing `leave`, waiting to be entered again.
    aside: Vec<F>,
}

impl<F> Default for FrameStack<F> {
    fn default() -> Self {
        FrameStack {
            slots: Vec::new(),
            depth: 0,
            last: i64::MIN,
            aside: Vec::new(),
        }
    }
}

/// A frame a `leave` closed, and the frame it was in (if any).
pub struct Closed<'a, F> {
    /// The frame closed; its slot stays valid until the next `enter`.
    pub frame: &'a mut F,
    /// The frame that holds it, now the innermost.
    pub parent: Option<&'a mut F>,
    /// Its depth (0: outermost), also the stack's depth now.
    pub depth: usize,
}

impl<F: OpenFrame> FrameStack<F> {
    /// Notes a time seen on the location: where its frames open at the end
    /// close.
    pub fn note(&mut self, time: i64) {
        self.last = self.last.max(time);
    }

    /// The latest time noted (`i64::MIN` before any).
    pub fn last(&self) -> i64 {
        self.last
    }

    /// How many frames are open.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The open frames, outermost first.
    pub fn open(&self) -> &[F] {
        &self.slots[..self.depth]
    }

    /// The open frames, outermost first, to update.
    pub fn open_mut(&mut self) -> &mut [F] {
        &mut self.slots[..self.depth]
    }

    /// The innermost open frame.
    pub fn innermost(&self) -> Option<&F> {
        self.open().last()
    }

    /// Opens a frame at `time` and gives its slot to fill. A reused slot
    /// still holds a frame closed before: set every field (buffers such
    /// as a `Record`'s strings are reused by `clone_from`).
    pub fn enter(&mut self, time: i64) -> &mut F {
        self.note(time);
        if self.depth == self.slots.len() {
            self.slots.push(F::default());
        }
        self.depth += 1;
        &mut self.slots[self.depth - 1]
    }

    /// Closes the innermost frame for a `leave` of `name` (empty: any) on
    /// `loc` at `time`, after [`FrameStack::check_leave`].
    pub fn leave(
        &mut self,
        (loc, name): (Sym, Sym),
        time: i64,
        symbols: &Symbols,
    ) -> Result<Closed<'_, F>> {
        self.check_leave((loc, name), symbols)?;
        Ok(self.close(time).expect("a frame is open"))
    }

    /// Whether a `leave` of `name` (empty: any) on `loc` may close the
    /// innermost frame: an error names what was expected when no frame is
    /// open or another is.
    pub fn check_leave(&self, (loc, name): (Sym, Sym), symbols: &Symbols) -> Result<()> {
        let text = |sym| symbols.text(sym);
        match self.innermost().map(F::name) {
            None => Err(Error::Record(format!(
                "a `leave` of `{}` on `{}` with no open frame",
                text(name),
                text(loc)
            ))),
            Some(open) if !name.is_empty() && name != open => Err(Error::Record(format!(
                "a `leave` of `{}` on `{}` while `{}` is open",
                text(name),
                text(loc),
                text(open)
            ))),
            Some(_) => Ok(()),
        }
    }

    /// Closes the innermost frame at `time` with no check (the input ended,
    /// or another stage checked); `None` when none is open.
    pub fn close(&mut self, time: i64) -> Option<Closed<'_, F>> {
        self.depth = self.depth.checked_sub(1)?;
        self.note(time);
        let (open, closed) = self.slots.split_at_mut(self.depth);
        Some(Closed {
            frame: &mut closed[0],
            parent: open.last_mut(),
            depth: self.depth,
        })
    }
}

impl<F: OpenFrame + Clone> FrameStack<F> {
    /// Keeps `frame` (just closed by a `leave` that cut it) until it is
    /// entered again ([`FrameStack::resume`]).
    pub fn set_aside(&mut self, frame: F) {
        self.aside.push(frame);
    }

    /// Opens again at `time` the latest frame named `name` set aside, and
    /// gives its slot; `None` when there is none (then it is a new frame).
    pub fn resume(&mut self, name: Sym, time: i64) -> Option<&mut F> {
        let i = self.aside.iter().rposition(|f| f.name() == name)?;
        let frame = self.aside.remove(i);
        let slot = self.enter(time);
        *slot = frame;
        Some(slot)
    }

    /// The frames set aside and never entered again (a stream cut by hand,
    /// a slice).
    pub fn take_aside(&mut self) -> Vec<F> {
        std::mem::take(&mut self.aside)
    }
}

impl OpenFrame for Record {
    fn name(&self) -> Sym {
        self.name
    }
}

/// The locations of `stacks` with frames open (at the end of the input),
/// in the order of their names, each with its latest time: where and in
/// which order those frames close.
pub fn still_open<'a, F: OpenFrame + 'a>(
    stacks: impl IntoIterator<Item = (&'a Sym, &'a FrameStack<F>)>,
    symbols: &Symbols,
) -> Vec<(Sym, i64)> {
    let mut open: Vec<(Sym, i64)> = stacks
        .into_iter()
        .filter(|(_, stack)| stack.depth() > 0)
        .map(|(&loc, stack)| (loc, stack.last()))
        .collect();
    open.sort_by_key(|&(loc, _)| symbols.text(loc));
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Clone, PartialEq)]
    struct Frame {
        name: Sym,
        start: i64,
    }

    impl OpenFrame for Frame {
        fn name(&self) -> Sym {
            self.name
        }
    }

    fn interned<const N: usize>(texts: [&str; N]) -> (Symbols, [Sym; N]) {
        let symbols = Symbols::new();
        let syms = texts.map(|t| symbols.intern(t));
        (symbols, syms)
    }

    fn enter(stack: &mut FrameStack<Frame>, name: Sym, start: i64) {
        *stack.enter(start) = Frame { name, start };
    }

    #[test]
    fn a_leave_closes_the_innermost_frame_it_names() {
        let (symbols, [loc, f, g]) = interned(["p0", "f", "g"]);
        let mut stack = FrameStack::default();
        enter(&mut stack, f, 1);
        enter(&mut stack, g, 2);
        let err = stack.leave((loc, f), 3, &symbols).err().unwrap();
        assert_eq!(
            err.to_string(),
            "a `leave` of `f` on `p0` while `g` is open"
        );
        let closed = stack.leave((loc, Sym::EMPTY), 3, &symbols).unwrap();
        assert_eq!((closed.frame.name, closed.depth), (g, 1));
        assert_eq!(closed.parent.map(|p| p.name), Some(f));
        let closed = stack.leave((loc, f), 4, &symbols).unwrap();
        assert!(closed.parent.is_none());
        assert_eq!(stack.last(), 4);
        let err = stack.leave((loc, f), 5, &symbols).err().unwrap();
        assert_eq!(
            err.to_string(),
            "a `leave` of `f` on `p0` with no open frame"
        );
    }

    #[test]
    fn a_slot_is_reused_and_a_cut_frame_resumes_by_name() {
        let (symbols, [loc, f, g]) = interned(["p0", "f", "g"]);
        let mut stack = FrameStack::default();
        enter(&mut stack, f, 1);
        let cut = stack.leave((loc, f), 2, &symbols).unwrap().frame.clone();
        stack.set_aside(cut);
        assert!(stack.resume(g, 3).is_none());
        let resumed = stack.resume(f, 3).unwrap();
        assert_eq!(resumed, &Frame { name: f, start: 1 });
        assert_eq!(stack.open().len(), 1);
        assert!(stack.take_aside().is_empty());
    }

    use crate::fasthash::FastMap;

    #[test]
    fn frames_still_open_close_by_location_name() {
        let symbols = Symbols::new();
        let (b, a, f) = (
            symbols.intern("b"),
            symbols.intern("a"),
            symbols.intern("f"),
        );
        let mut lanes: FastMap<Sym, FrameStack<Frame>> = FastMap::default();
        enter(lanes.entry(b).or_default(), f, 7);
        enter(lanes.entry(a).or_default(), f, -5);
        lanes.entry(symbols.intern("c")).or_default().note(9);
        assert_eq!(still_open(&lanes, &symbols), vec![(a, -5), (b, 7)]);
    }
}
