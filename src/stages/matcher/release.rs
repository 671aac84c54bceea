//! Halves that can no longer match: rows held behind a half in flight
//! released in order, halves waiting on a destroyed location released
//! (dropped, kept flagged `U`, or an error), in bulk.

use super::*;

/// One half fewer waiting on `party`.
pub(super) fn uncount(waiting: &mut FastMap<Sym, u64>, party: Sym) {
    if let Some(n) = waiting.get_mut(&party) {
        *n -= 1;
        if *n == 0 {
            waiting.remove(&party);
        }
    }
}

impl<S: RecordSink> Matcher<S> {
    /// Queues a half that found no partner yet.
    pub(super) fn enqueue(&mut self, rec: &Record) -> Result<()> {
        if let Some(max) = self.options.max_pending {
            if self.pending_halves >= max {
                return Err(Error::Record(format!(
                    "more than {max} message halves wait for their partner (--max-pending): is one side of the messages missing? (--max-pending N raises the bound, 0 lifts it)"
                )));
            }
        }
        let half = Half::pack(rec, self.mark, (&mut self.spare_halves, &mut self.arrivals));
        let queue = match self.pending.get_mut(&self.key) {
            Some(queue) => queue,
            None => {
                let mut key = self.spare_keys.pop().unwrap_or_default();
                key.clone_from(&self.key);
                let mut halves = self.spare_queues.pop().unwrap_or_default();
                // Most channels hold one half: no room for four.
                halves.reserve_exact(1);
                let queue = Queue {
                    kind: rec.kind,
                    halves,
                };
                self.pending.entry(key).or_insert(queue)
            }
        };
        let party = half.awaited;
        queue.halves.push_back(half);
        self.pending_halves += 1;
        if !party.is_empty() {
            *self.waiting.entry(party).or_default() += 1;
        }
        Ok(())
    }

    /// `loc` is gone: the halves waiting on it can never match. They are
    /// swept once such halves make up half of all pending ones, so a sweep's
    /// cost is paid for by what it releases.
    pub(super) fn on_destroy(&mut self, loc: Sym) -> Result<()> {
        let Some(&n) = self.waiting.get(&loc) else {
            return Ok(());
        };
        if self.dead.insert(loc) {
            self.dead_halves += n;
        }
        if self.dead_halves * 2 >= self.pending_halves {
            self.sweep()?;
        }
        Ok(())
    }

    /// Releases every queue that waits on a destroyed location.
    pub(super) fn sweep(&mut self) -> Result<()> {
        let dead = std::mem::take(&mut self.dead);
        let mut gone = Vec::new();
        self.pending.retain(|_, q| {
            let doomed = q.halves.front().is_some_and(|h| dead.contains(&h.awaited));
            if doomed {
                gone.extend(q.halves.drain(..));
            }
            !doomed
        });
        self.dead_halves = 0;
        for loc in &dead {
            self.waiting.remove(loc);
        }
        self.pending_halves -= gone.len() as u64;
        self.release(gone)
    }

    /// Halves that will never match: counted per channel, then written
    /// flagged `U` in time order when kept (late, so each carries the latest
    /// time passed on, and its own in `orig_time`), dropped, or an error
    /// about the first (by mark, then arrival) when asked.
    pub(super) fn release(&mut self, halves: Vec<Half>) -> Result<()> {
        let mut left: Vec<(Record, u64, u64)> = halves
            .iter()
            .map(|h| {
                let mut r = Record::default();
                h.packed.reader().next_into(&mut r);
                (r, h.mark, h.arrival)
            })
            .collect();
        // Marks keep the source's order (a held receive keeps its own);
        // without them (a sink) the arrival does.
        left.sort_by_key(|(r, mark, arrival)| (r.time, *mark, *arrival));
        if let Some(observed) = &mut self.observed {
            observed.extend(left.iter().map(|(_, mark, _)| Pairing::GivenUp(*mark)));
        }
        for (r, mark, arrival) in &left {
            let counts = self
                .summary
                .unmatched
                .entry(describe_channel(r, &self.symbols))
                .or_default();
            match r.kind {
                Kind::Send => counts.0 += 1,
                _ => counts.1 += 1,
            }
            if self
                .first_unmatched_place
                .is_none_or(|first| (*mark, *arrival) < first)
            {
                self.first_unmatched_place = Some((*mark, *arrival));
                let what = format!(
                    "{} of channel {}",
                    r.kind.with_article(),
                    describe_channel(r, &self.symbols)
                );
                self.summary.first_unmatched = Some((*mark, what));
            }
        }
        match self.options.unmatched {
            Unmatched::Drop => Ok(()),
            Unmatched::Error => match &self.summary.first_unmatched {
                Some((_, what)) => {
                    let (sends, recvs) = self.summary.unmatched_total();
                    Err(Error::Record(format!(
                        "{what} never matched ({} half/halves unmatched in all: {sends} send, {recvs} recv)",
                        sends + recvs
                    )))
                }
                None => Ok(()),
            },
            Unmatched::Keep if self.options.halves => Ok(()), // Already written.
            Unmatched::Keep => {
                for (r, ..) in &mut left {
                    r.add_flag(flags::UNMATCHED);
                    if let (Some(t), Some(last)) = (r.time, self.clock) {
                        if t < last {
                            r.push_attr(ATTR_ORIG_TIME, &t.to_string());
                            r.time = Some(last);
                        }
                    }
                    self.next.write(r)?;
                }
                Ok(())
            }
        }
    }
}
