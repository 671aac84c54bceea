//! The sorted rows on their way out: each frame (an `X`, sorted at its
//! start) becomes an `enter` and, once the rows pass its end, a `leave`
//! (inner frames first at one time); `enter` and `leave` rows then follow
//! the stream's rule for frames that do not nest (`model::nesting`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::{Location, Result, Warnings};
use crate::exec::spill::{RowOrder, Sorted};
use crate::fasthash::FastMap;
use crate::model::nesting::Follower;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::ReadOptions;

/// A frame's `leave` waiting for its time: when, which frame (later
/// entered first at one time), where, and the mark of its event.
type Pending = Reverse<(i64, Reverse<u64>, Sym, Sym, Sym, u64)>;

/// Frames made whole and followed as the sorted rows go out. Rows move
/// from the sorter to the caller's record by swaps; only rows the nesting
/// rule replaced wait in a queue.
pub(super) struct Frames {
    sorted: Sorted,
    /// The next sorted row, read ahead, and its order (`None` at the end).
    ahead: Record,
    ahead_order: Option<RowOrder>,
    started: bool,
    pending: BinaryHeap<Pending>,
    entered: u64,
    follower: Follower,
    /// Rows the nesting rule put in the place of one, with their mark.
    queued: VecDeque<(Record, u64)>,
    kept: VecDeque<Record>,
    mark: u64,
    /// Locations renamed on the way out (a rank's prefix).
    renamed: FastMap<Sym, Sym>,
    /// What the ids of flows and async spans are scoped by (a rank's
    /// `rank0:`), so ranks' ids do not meet when their files merge.
    id_prefix: String,
    symbols: Symbols,
    warnings: Warnings,
}

impl Frames {
    /// The rows of `sorted`, their locations renamed by `renamed` and
    /// their flows' and spans' ids prefixed by `id_prefix`.
    pub(super) fn new(
        sorted: Sorted,
        (renamed, id_prefix): (FastMap<Sym, Sym>, String),
        opts: &ReadOptions,
    ) -> Frames {
        let mut follower = Follower::default();
        follower.strict = opts.strict;
        Frames {
            sorted,
            ahead: Record::default(),
            ahead_order: None,
            started: false,
            pending: BinaryHeap::new(),
            entered: 0,
            follower,
            queued: VecDeque::new(),
            kept: VecDeque::new(),
            mark: 0,
            renamed,
            id_prefix,
            symbols: opts.symbols.clone(),
            warnings: opts.warnings.clone(),
        }
    }

    /// The mark of the row last handed out.
    pub(super) fn mark(&self) -> u64 {
        self.mark
    }

    /// Refills `rec` with the next row; false at the end. `name` is the
    /// file, for errors.
    pub(super) fn next_into(&mut self, rec: &mut Record, name: &str) -> Result<bool> {
        loop {
            if let Some((row, mark)) = self.queued.pop_front() {
                *rec = row;
                self.mark = mark;
                return Ok(true);
            }
            if !self.started {
                self.started = true;
                self.read_ahead()?;
            }
            let next_key = self.ahead_order.map_or(i64::MAX, |o| o.key);
            let leave_due = self
                .pending
                .peek()
                .is_some_and(|Reverse((end, ..))| *end <= next_key);
            if leave_due {
                self.leave_into(rec);
            } else if let Some(order) = self.ahead_order {
                std::mem::swap(rec, &mut self.ahead);
                self.mark = order.mark;
                self.read_ahead()?;
                if rec.kind == Kind::State {
                    self.enter(rec);
                }
            } else {
                self.follower.crossings.report(&self.warnings);
                return Ok(false);
            }
            if !matches!(rec.kind, Kind::Enter | Kind::Leave) || !self.follow(rec, name)? {
                return Ok(true);
            }
        }
    }

    fn read_ahead(&mut self) -> Result<()> {
        self.ahead_order = self.sorted.next_into(&mut self.ahead)?;
        if self.ahead_order.is_some() {
            let rec = &mut self.ahead;
            for sym in [&mut rec.loc, &mut rec.peer] {
                if let Some(&to) = self.renamed.get(sym) {
                    *sym = to;
                }
            }
            let scoped = matches!(rec.kind, Kind::Send | Kind::Recv | Kind::Claim);
            if scoped && !self.id_prefix.is_empty() && !rec.id.is_empty() {
                rec.id.insert_str(0, &self.id_prefix);
            }
        }
        Ok(())
    }

    /// `rec` made the `leave` due first.
    fn leave_into(&mut self, rec: &mut Record) {
        let Reverse((end, _, loc, name, cat, mark)) = self.pending.pop().expect("a leave is due");
        rec.clear();
        rec.kind = Kind::Leave;
        rec.time = Some(end);
        rec.loc = loc;
        rec.name = name;
        rec.cat = cat;
        self.mark = mark;
    }

    /// A frame (`X`) as its `enter`, its `leave` made pending.
    fn enter(&mut self, rec: &mut Record) {
        let end = rec.end.take().unwrap_or_default();
        self.entered += 1;
        let leave = (
            end,
            Reverse(self.entered),
            rec.loc,
            rec.name,
            rec.cat,
            self.mark,
        );
        self.pending.push(Reverse(leave));
        rec.kind = Kind::Enter;
    }

    /// Follows `rec` by the nesting rule; true when it was replaced by
    /// rows now queued.
    fn follow(&mut self, rec: &mut Record, name: &str) -> Result<bool> {
        let mark = self.mark;
        let at = || Location::Offset {
            file: name.to_string(),
            offset: mark,
        };
        let replaced =
            self.follower
                .follow(rec, (&self.symbols, &mut self.kept), |_| Ok(()), at)?;
        self.queued.extend(self.kept.drain(..).map(|r| (r, mark)));
        Ok(replaced)
    }
}
