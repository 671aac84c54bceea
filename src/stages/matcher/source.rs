//! The matcher on the reading side: [`MatchSource`] runs it on the rows of
//! a source, its output gathered in an [`Outbox`], so each half's file and
//! line is known when it is refused.

use super::*;

/// Rows a stage wrote, waiting to be read: records reused, so a steady
/// flow allocates nothing. Each row keeps the mark (see
/// [`RecordSource::mark`]) in force when it was written, so the source
/// that hands it out can say where it came from.
#[derive(Default)]
pub struct Outbox {
    queue: VecDeque<(Record, u64)>,
    spare: Vec<Record>,
    /// The mark of the rows written now.
    mark: u64,
    /// The mark of the row last handed out.
    popped: u64,
}

/// A [`Matcher`] on the reading side: it knows where each half came from,
/// so an unmatched half (`--unmatched error`) or the row that overflows
/// `--max-pending` is named by file and line.
pub struct MatchSource {
    inner: Box<dyn RecordSource>,
    /// The row last returned is the inner source's, as it read it.
    passed_through: bool,
    matcher: Matcher<Outbox>,
    summary: Rc<RefCell<MatchSummary>>,
    finished: bool,
    /// Receives were held for an earlier posting since the outbox was last
    /// in order.
    unordered: bool,
    /// `msg` rows read (see [`MatchSummary::read_paired`]).
    read_paired: u64,
}

impl RecordSink for Outbox {
    fn write(&mut self, rec: &Record) -> Result<()> {
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.clone_from(rec);
        self.queue.push_back((copy, self.mark));
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Outbox {
    /// The mark of the rows written from now on: where the row being
    /// worked on came from.
    pub fn set_mark(&mut self, mark: u64) {
        self.mark = mark;
    }

    /// The mark of the rows written now.
    pub fn mark(&self) -> u64 {
        self.mark
    }

    /// Queues `rec`, made from the row at `mark` (written earlier, it
    /// waited elsewhere).
    pub fn push(&mut self, rec: Record, mark: u64) {
        // A record comes in from outside: one spare goes, so no more
        // records are kept than rows ever waited at once.
        self.spare.pop();
        self.queue.push_back((rec, mark));
    }

    /// The mark of the row [`Outbox::pop_into`] last handed out.
    pub fn popped_mark(&self) -> u64 {
        self.popped
    }

    /// Puts the rows waiting back in stream order (completion time, stable;
    /// a row without one stays after the row before it), after messages
    /// that completed earlier were written late.
    pub fn sort(&mut self) {
        let mut last = i64::MIN;
        let mut rows: Vec<(i64, (Record, u64))> = self
            .queue
            .drain(..)
            .map(|row| {
                last = row.0.completion().unwrap_or(last);
                (last, row)
            })
            .collect();
        rows.sort_by_key(|(k, _)| *k);
        self.queue.extend(rows.into_iter().map(|(_, row)| row));
    }

    /// Whether no row waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Moves the oldest row into `rec`; `false` when there is none.
    pub fn pop_into(&mut self, rec: &mut Record) -> bool {
        match self.queue.pop_front() {
            Some((mut next, mark)) => {
                std::mem::swap(rec, &mut next);
                self.spare.push(next);
                self.popped = mark;
                true
            }
            None => false,
        }
    }
}

impl MatchSource {
    /// Matches the halves `inner` gives (identifiers in `symbols`);
    /// `summary` is filled at the end.
    pub fn new(
        inner: Box<dyn RecordSource>,
        options: MatchOptions,
        symbols: Symbols,
        warnings: Warnings,
        summary: Rc<RefCell<MatchSummary>>,
    ) -> MatchSource {
        let matcher = Matcher::with_options(Outbox::default(), options, symbols, warnings);
        MatchSource {
            inner,
            passed_through: false,
            matcher,
            summary,
            finished: false,
            unordered: false,
            read_paired: 0,
        }
    }

    /// Locates an error of the matcher: at the first unmatched half when
    /// that is what it is about, else at the row just read.
    fn locate(&self, e: Error, mark: u64) -> Error {
        let at = match (
            &self.matcher.summary.first_unmatched,
            self.matcher.options.unmatched,
        ) {
            (Some((first, _)), Unmatched::Error) => *first,
            _ => mark,
        };
        e.at(self.inner.locate(at))
    }
}

impl crate::pipe::SourceStage for MatchSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            // While receives are held, later rows wait: a message made of a
            // held receive completes before them.
            if self.matcher.is_holding() {
                self.unordered = true;
            } else {
                if std::mem::take(&mut self.unordered) {
                    self.matcher.inner_mut().sort();
                }
                if self.matcher.inner_mut().pop_into(rec) {
                    self.passed_through = false;
                    return Ok(true);
                }
            }
            if self.finished {
                return Ok(false);
            }
            if self.inner.next_record(rec)? {
                self.read_paired += u64::from(rec.kind == Kind::Msg);
                if !self.matcher.is_holding()
                    && self.matcher.inner().is_empty()
                    && self.matcher.passes_through(rec)
                {
                    self.passed_through = true;
                    return Ok(true);
                }
                let mark = self.inner.mark();
                self.matcher.set_mark(mark);
                self.matcher.inner_mut().set_mark(mark);
                if let Err(e) = self.matcher.write(rec) {
                    return Err(self.locate(e, mark));
                }
            } else {
                self.finished = true;
                let end = self.inner.mark();
                self.matcher.inner_mut().set_mark(end);
                let result = self.matcher.finish();
                *self.summary.borrow_mut() = MatchSummary {
                    read_paired: self.read_paired,
                    ..self.matcher.summary.clone()
                };
                if let Err(e) = result {
                    let mark = self.inner.mark();
                    return Err(self.locate(e, mark));
                }
            }
        }
    }

    /// The inner source's mark of the row last returned: the row itself
    /// when it passed through, else the row that completed it (a `msg` row:
    /// its later half) or was held.
    fn mark(&self) -> u64 {
        match self.passed_through {
            true => self.inner.mark(),
            false => self.matcher.inner().popped_mark(),
        }
    }

    fn locate(&self, mark: u64) -> Location {
        self.inner.locate(mark)
    }

    fn extra_columns(&self) -> &[String] {
        self.inner.extra_columns()
    }

    fn raw_line(&self) -> Option<&[u8]> {
        self.inner.raw_line().filter(|_| self.passed_through)
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// Its `msg` rows are made from halves it held, so they begin at any
    /// earlier time; no consumer of a matcher's rows asks.
    fn horizon(&self) -> Option<i64> {
        None
    }

    /// Rows pass through with their lines, but the matcher reads every
    /// row whole (a half becomes part of a `msg`; a location's end releases
    /// what waits on it), and many of the rows it hands out it makes.
    fn agree(&mut self, demand: Demand) -> Supply {
        self.inner.agree(Demand::reading(Reads {
            columns: ColumnSet::ALL,
            raw_line: demand.reads.raw_line,
        }));
        Supply::WHOLE_ROWS
    }
}
