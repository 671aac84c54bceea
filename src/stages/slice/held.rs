//! Rows held until they can be decided: containers declared when they
//! are first needed in the window, and the rows behind a gate (a half or
//! a posting whose fate is not known yet), released in order.

use super::*;

impl Slicer {
    /// A `container` row: held before T0, written in the window unless it is
    /// created after it.
    pub(super) fn container(&mut self, rec: &Record) -> Result<()> {
        // Created after the window, below one that is not declared, or
        // met after T1 (where reading stops, it is not met at all): declared
        // only if a kept row needs it. Reading to the end keeps it.
        let met_late = self.phase == Phase::After && !self.options.true_ends;
        let after = rec.time.is_some_and(|t| !self.options.window.ends_after(t));
        if after || met_late || self.dead.contains_key(&rec.peer) {
            self.dead.insert(rec.loc, rec.clone());
            return Ok(());
        }
        if self.phase == Phase::Before {
            if !self.held.contains_key(&rec.loc) {
                self.held.insert(rec.loc, rec.clone());
            }
            return Ok(());
        }
        self.declare(rec)
    }

    /// Declares the containers held before T0, but those below a container
    /// gone before T0, which wait until a kept row needs them.
    pub(super) fn declare_held(&mut self) -> Result<()> {
        for (_, rec) in std::mem::take(&mut self.held) {
            if self.dead.contains_key(&rec.peer) {
                self.dead.insert(rec.loc, rec);
            } else {
                self.declare(&rec)?;
            }
        }
        Ok(())
    }

    /// Writes a container row (after its parent, if that one is dead and
    /// not declared yet).
    pub(super) fn declare(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.peer)?;
        self.alive.insert(rec.loc, true);
        self.out.write(rec)
    }

    /// Declares `loc` when it is a container gone before T0 that a kept row
    /// needs (it stays dead: no destroy is written for it at the end).
    pub(super) fn revive(&mut self, loc: Sym) -> Result<()> {
        if self.dead.is_empty() {
            return Ok(());
        }
        let Some(rec) = self.dead.remove(&loc) else {
            return Ok(());
        };
        self.revive(rec.peer)?;
        self.alive.insert(rec.loc, false);
        self.out.write(&rec)
    }

    /// Writes a kept row of the window.
    pub(super) fn keep(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.loc)?;
        self.keep_declared(rec)
    }

    /// [`Slicer::keep`] once `rec`'s location is declared.
    fn keep_declared(&mut self, rec: &Record) -> Result<()> {
        if self.gate.is_empty() {
            return self.out.write(rec);
        }
        self.hold(rec, Gate::Ready);
        Ok(())
    }

    /// Puts `rec` in the gate, as `gate`, with the mark of the row read;
    /// its slot.
    pub(super) fn hold(&mut self, rec: &Record, gate: Gate) -> u64 {
        let slot = self.gate_base + self.gate.len() as u64;
        let mark = self.out.mark();
        self.gate.push_back(Held {
            row: rec.clone(),
            gate,
            mark,
        });
        slot
    }

    /// Keeps the row just read, unchanged: when nothing waits to go out
    /// before it, it goes out as it is (`pass_read`), not copied into
    /// `out`.
    pub(super) fn keep_read(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.loc)?;
        if self.gate.is_empty() && self.out.is_empty() {
            self.pass_read = true;
            return Ok(());
        }
        self.keep_declared(rec)
    }

    /// Settles the half at `slot` of the gate, then lets out what is settled.
    pub(super) fn decide(&mut self, slot: u64, gate: Gate) -> Result<()> {
        if let Some(entry) = slot
            .checked_sub(self.gate_base)
            .and_then(|i| self.gate.get_mut(i as usize))
        {
            entry.gate = gate;
        }
        while let Some(held) = self.gate.front() {
            match held.gate {
                Gate::Waiting => break,
                Gate::Ready => {
                    let held = self.gate.pop_front().expect("has a front");
                    self.out.push(held.row, held.mark);
                }
                Gate::Dropped => {
                    self.gate.pop_front();
                }
            }
            self.gate_base += 1;
        }
        Ok(())
    }

    /// The window ends: halves still waiting there lose their message.
    pub(super) fn close_gate(&mut self) -> Result<()> {
        self.postings.clear();
        for entry in &mut self.gate {
            if entry.gate == Gate::Waiting {
                entry.gate = Gate::Dropped;
            }
        }
        self.decide(u64::MAX, Gate::Dropped)
    }

    /// Writes a kept row that crosses T1 (sorted with the others at the end).
    pub(super) fn keep_late(&mut self, rec: &Record) -> Result<()> {
        self.revive(rec.loc)?;
        self.tail.write(rec)
    }

    /// Writes a copy of `rec` changed by `change` (in the window, or with
    /// the rows crossing T1 when `late`); the copy's buffers are reused.
    pub(super) fn keep_changed(
        &mut self,
        rec: &Record,
        late: bool,
        change: impl FnOnce(&mut Record) -> Result<()>,
    ) -> Result<()> {
        let mut row = std::mem::take(&mut self.scratch);
        row.clone_from(rec);
        let result = change(&mut row).and_then(|()| {
            if late {
                self.keep_late(&row)
            } else {
                self.keep(&row)
            }
        });
        self.scratch = row;
        result
    }
}
