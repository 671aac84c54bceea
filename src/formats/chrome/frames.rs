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

/// Frames made whole and followed as the sorted rows go out.
pub(super) struct Frames {
    sorted: Sorted,
    /// The next sorted row, read ahead.
    ahead: Option<(Record, RowOrder)>,
    started: bool,
    pending: BinaryHeap<Pending>,
    entered: u64,
    follower: Follower,
    queued: VecDeque<(Record, u64)>,
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
            ahead: None,
            started: false,
            pending: BinaryHeap::new(),
            entered: 0,
            follower,
            queued: VecDeque::new(),
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
            let next_key = self.ahead.as_ref().map_or(i64::MAX, |(_, p)| p.key);
            let leave_due = self
                .pending
                .peek()
                .is_some_and(|Reverse((end, ..))| *end <= next_key);
            let row = if leave_due || (self.ahead.is_none() && !self.pending.is_empty()) {
                self.leave()
            } else if let Some((row, place)) = self.ahead.take() {
                self.read_ahead()?;
                self.mark = place.mark;
                self.frame_of(row, place.mark)
            } else {
                self.follower.crossings.report(&self.warnings);
                return Ok(false);
            };
            let mark = self.mark;
            self.follow(row, mark, name)?;
        }
    }

    fn read_ahead(&mut self) -> Result<()> {
        let mut rec = Record::default();
        self.ahead = self.sorted.next_into(&mut rec)?.map(|place| (rec, place));
        if let Some((rec, _)) = &mut self.ahead {
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

    /// The `leave` due first.
    fn leave(&mut self) -> Record {
        let Reverse((end, _, loc, name, cat, mark)) = self.pending.pop().expect("a leave is due");
        let mut rec = Record::new(Kind::Leave);
        rec.time = Some(end);
        rec.loc = loc;
        rec.name = name;
        rec.cat = cat;
        self.mark = mark;
        rec
    }

    /// A sorted row as it goes out: a frame's `enter` (its `leave` made
    /// pending), any other row as it is.
    fn frame_of(&mut self, mut row: Record, mark: u64) -> Record {
        if row.kind != Kind::State {
            return row;
        }
        let end = row.end.take().unwrap_or_default();
        self.entered += 1;
        let leave = (end, Reverse(self.entered), row.loc, row.name, row.cat, mark);
        self.pending.push(Reverse(leave));
        row.kind = Kind::Enter;
        row
    }

    /// Queues `row` as the nesting rule keeps it.
    fn follow(&mut self, mut row: Record, mark: u64, name: &str) -> Result<()> {
        if !matches!(row.kind, Kind::Enter | Kind::Leave) {
            self.queued.push_back((row, mark));
            return Ok(());
        }
        let mut kept = VecDeque::new();
        let at = || Location::Offset {
            file: name.to_string(),
            offset: mark,
        };
        let replaced =
            self.follower
                .follow(&mut row, (&self.symbols, &mut kept), |_| Ok(()), at)?;
        if !replaced {
            kept.push_back(row);
        }
        self.queued.extend(kept.into_iter().map(|r| (r, mark)));
        Ok(())
    }
}
