//! Messages across the window's edges: halves paired by the matcher,
//! receives held for their posting, and each pairing settled (kept,
//! kept with its outside end flagged `O`, or left out).

use super::*;

impl Slicer {
    /// A message half: written at once in the window (`Overlap`), held in
    /// the gate (`Inside`), or kept aside until the pairer says whether its
    /// message is in flight during the window.
    pub(super) fn half(&mut self, rec: &Record) -> Result<()> {
        self.halves_seen += 1;
        let overlap = self.options.messages == MessageScope::Overlap;
        let mut flight = Flight {
            at: self.phase,
            row: None,
            written: false,
            slot: None,
            posting: self.posting_of(rec),
        };
        if let (Some(posting), Phase::Inside, true) = (flight.posting, self.phase, overlap) {
            self.decide(posting, Gate::Ready)?;
        }
        match self.phase {
            Phase::Inside if overlap => {
                self.keep_read(rec)?;
                flight.written = true;
            }
            Phase::Inside => {
                self.revive(rec.loc)?;
                flight.slot = Some(self.hold(rec, Gate::Waiting));
            }
            // Before T0 the pairer keeps the row (see open_window).
            Phase::After if overlap => {
                let mut row = self.spare.pop().unwrap_or_default();
                row.clone_from(rec);
                flight.row = Some(row);
            }
            _ => {}
        }
        self.flights.insert(self.halves_seen, flight);
        self.pair(rec, self.halves_seen)
    }

    /// The gate slot of the posting in the window of receive `rec`, if any.
    pub(super) fn posting_of(&mut self, rec: &Record) -> Option<u64> {
        if rec.kind != Kind::Recv || rec.id.is_empty() || self.postings.is_empty() {
            return None;
        }
        let poster = self.poster(rec);
        self.postings.remove(&(poster, rec.id.clone()))
    }

    /// Who posts and completes the nonblocking receive of `rec` (as the
    /// matcher says: its `thread` attribute, else its location).
    pub(super) fn poster(&self, rec: &Record) -> String {
        rec.attr("thread")
            .unwrap_or_else(|| self.symbols.text(rec.loc).to_string())
    }

    /// A posting of a nonblocking receive in the window waits in the gate
    /// for its receive, and goes with it: a posting whose receive is not in
    /// the slice would make trace-match wait for it.
    pub(super) fn posting(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.loc)?;
        let slot = self.hold(rec, Gate::Waiting);
        self.postings
            .insert((self.poster(rec), rec.id.clone()), slot);
        Ok(())
    }

    /// Settles a half and the posting of its receive alike.
    pub(super) fn decide_flight(&mut self, flight: &Flight, gate: Gate) -> Result<()> {
        for slot in [flight.slot, flight.posting].into_iter().flatten() {
            self.decide(slot, gate)?;
        }
        Ok(())
    }

    /// Hands `rec` to the pairer under `mark`, then acts on what it paired.
    pub(super) fn pair(&mut self, rec: &Record, mark: u64) -> Result<()> {
        self.pairer.set_mark(mark);
        self.pairer.write(rec)?;
        self.settle()
    }

    /// Acts on the pairer's news: a message whose halves both reach into
    /// the window (`Inside`), or with an end in it or across it (`Overlap`:
    /// a half after T1 is written, flagged O).
    pub(super) fn settle(&mut self) -> Result<()> {
        let mut news = std::mem::take(&mut self.news);
        news.extend(self.pairer.take_pairings());
        let result = news
            .drain(..)
            .try_for_each(|pairing| self.settle_one(pairing));
        self.news = news;
        result
    }

    /// Acts on one pairing (see [`Slicer::settle`]).
    pub(super) fn settle_one(&mut self, pairing: Pairing) -> Result<()> {
        {
            let (a, b) = match pairing {
                Pairing::Paired(a, b) => (a, b),
                Pairing::GivenUp(a) => {
                    // Its message cannot be whole: out of the gate.
                    if let Some(flight) = self.flights.remove(&a) {
                        self.decide_flight(&flight, Gate::Dropped)?;
                        self.spare.extend(flight.row);
                    }
                    return Ok(());
                }
            };
            let (Some(mut x), Some(mut y)) = (self.flights.remove(&a), self.flights.remove(&b))
            else {
                return Ok(());
            };
            if y.at < x.at {
                std::mem::swap(&mut x, &mut y);
            }
            match (x.at, y.at) {
                (Phase::Inside, Phase::Inside) if y.slot.is_some() => {
                    self.decide_flight(&x, Gate::Ready)?;
                    self.decide_flight(&y, Gate::Ready)?;
                }
                (Phase::Before, Phase::Inside) => self.decide_flight(&y, Gate::Dropped)?,
                (_, Phase::After) if x.written => {
                    if let Some(row) = y.row.take() {
                        self.keep_changed(&row, true, outside)?;
                        self.spare.push(row);
                    }
                }
                _ => {}
            }
            self.spare.extend(x.row.into_iter().chain(y.row));
        }
        Ok(())
    }
}
