//! Frames that do not nest in a stream read (`model::nesting`): the TSV and
//! JSON Lines readers follow each location's frames by name, and keep a
//! `leave` that does not close the innermost as the other readers do.

use std::collections::VecDeque;

use crate::error::{Location, Result, Warnings};
use crate::model::nesting::Follower;
use crate::model::record::{Column, ColumnSet, Kind, KindSet, Record};
use crate::model::symbol::Symbols;
use crate::pipe::Demand;

/// What a stream reader does with a row it read, once followed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Hand it out as read.
    Row,
    /// Hand out the row now in its place (the first of those that keep it:
    /// not as read, so without its raw line).
    Replaced,
    /// Read on: a row of a kind the consumer skips.
    Skip,
}

/// A stream reader's frames followed, and the rows a `leave` that did not
/// nest was kept as, waiting to be handed out.
pub(super) struct Nested {
    /// None when the consumer reads neither `enter` nor `leave` rows.
    follower: Option<Follower>,
    queued: VecDeque<Record>,
    /// The kinds the consumer skips that the reader reads to follow
    /// frames: dropped here, after.
    dropped: KindSet,
    symbols: Symbols,
    warnings: Warnings,
}

impl Nested {
    /// Follows frames as `--strict` (`strict`) says; warns to `warnings`.
    pub(super) fn new(strict: bool, symbols: Symbols, warnings: Warnings) -> Nested {
        let mut follower = Follower::default();
        follower.strict = strict;
        Nested {
            follower: Some(follower),
            queued: VecDeque::new(),
            dropped: KindSet::NONE,
            symbols,
            warnings,
        }
    }

    /// Whether it refuses frames that do not nest.
    pub(super) fn strict(&self) -> bool {
        self.follower.as_ref().is_some_and(|f| f.strict)
    }

    /// What the reader reads for `demand` (`raw_lines`: whether it gives
    /// rows with their lines): `enter` and `leave` rows when the consumer
    /// reads either (and their [`Nested::frame_columns`]). A consumer that
    /// copies the lines it reads (the TSV writer) or reads no frame's name
    /// follows no frame, unless `--strict` asks to refuse what does not
    /// nest: the rows pass as they are, to whoever reads their frames next.
    pub(super) fn demand(&mut self, mut demand: Demand, raw_lines: bool) -> Demand {
        let skip = demand.skip;
        let read = match raw_lines {
            true => demand.reads.columns,
            false => demand.reads.without_raw_line(),
        };
        let frames_read = !(skip.contains(Kind::Enter) && skip.contains(Kind::Leave));
        let copied = raw_lines && demand.reads.raw_line;
        let followed = self.strict() || (!copied && read.contains(Column::Name));
        if !frames_read || !followed {
            self.follower = None;
            return demand;
        }
        for kind in [Kind::Enter, Kind::Leave]
            .into_iter()
            .filter(|&k| skip.contains(k))
        {
            self.dropped = self.dropped.with(kind);
        }
        demand.skip = skip.without(Kind::Enter).without(Kind::Leave);
        demand
    }

    /// The columns the reader decodes of `enter` and `leave` rows beside
    /// those the consumer reads: their names and categories, when followed.
    pub(super) fn frame_columns(&self) -> ColumnSet {
        match self.follower {
            Some(_) => ColumnSet::NONE.with(Column::Name).with(Column::Cat),
            None => ColumnSet::NONE,
        }
    }

    /// Hands out a row queued in place of a `leave` that did not nest.
    pub(super) fn next_queued(&mut self, rec: &mut Record) -> bool {
        match self.queued.pop_front() {
            Some(r) => {
                *rec = r;
                true
            }
            None => false,
        }
    }

    /// Follows `rec`, just read; `whole` decodes it whole again, `at`
    /// locates it.
    pub(super) fn follow(
        &mut self,
        rec: &mut Record,
        whole: impl FnOnce(&mut Record) -> std::result::Result<(), String>,
        at: impl Fn() -> Location,
    ) -> Result<Next> {
        let Some(follower) = self.follower.as_mut() else {
            return Ok(Next::Row);
        };
        if !matches!(rec.kind, Kind::Enter | Kind::Leave) {
            return Ok(Next::Row);
        }
        let out = (&self.symbols, &mut self.queued);
        if !follower.follow(rec, out, whole, at)? {
            return Ok(match self.dropped.contains(rec.kind) {
                true => Next::Skip,
                false => Next::Row,
            });
        }
        let dropped = self.dropped;
        self.queued.retain(|r| !dropped.contains(r.kind));
        Ok(match self.next_queued(rec) {
            true => Next::Replaced,
            false => Next::Skip,
        })
    }

    /// At the end of the stream: the one warning, if any.
    pub(super) fn end(&self) {
        if let Some(follower) = &self.follower {
            follower.crossings.report(&self.warnings);
        }
    }
}
