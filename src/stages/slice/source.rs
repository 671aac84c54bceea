//! The slicer on the reading side: [`SliceSource`] runs it on a source's
//! rows, times rebased when asked.

use super::*;

/// The reading-side stage: slices the rows of `inner`.
pub struct SliceSource {
    inner: Box<dyn RecordSource>,
    slicer: Slicer,
    finished: bool,
    warnings: Warnings,
    /// The mark of the row last handed out when it was the row read,
    /// passed as it is (see `Slicer::pass_read`).
    passed: Option<u64>,
}

impl SliceSource {
    /// Slices what `inner` gives (identifiers in `symbols`); a window
    /// outside the trace is told to `warnings`.
    pub fn new(
        inner: Box<dyn RecordSource>,
        options: SliceOptions,
        symbols: Symbols,
        warnings: Warnings,
    ) -> SliceSource {
        SliceSource {
            inner,
            slicer: Slicer::new(options, symbols),
            finished: false,
            warnings,
            passed: None,
        }
    }

    /// Hands out `rec`, the next row of the slice, rebased when asked.
    fn hand_out(&self, rec: &mut Record) -> Result<bool> {
        if self.slicer.options.rebase {
            self.rebase(rec).map_err(|e| e.at(self.inner.location()))?;
        }
        Ok(true)
    }

    /// Moves `rec`'s times (and the true times in its attributes, and the
    /// origin) so that the window starts at 0.
    fn rebase(&self, rec: &mut Record) -> Result<()> {
        let shift = self.slicer.start();
        if rec.kind == Kind::Meta {
            if rec.name == META_ORIGIN {
                let moved = rec
                    .value
                    .parse::<i64>()
                    .ok()
                    .and_then(|o| o.checked_add(shift));
                let Some(origin) = moved else {
                    return Err(Error::Record(format!(
                        "cannot rebase: origin `{}` moved by {shift} ns is out of range",
                        rec.value
                    )));
                };
                rec.value = origin.to_string();
            }
            return Ok(());
        }
        let out_of_range = || Error::Record("cannot rebase: a time moves out of range".into());
        for t in [&mut rec.time, &mut rec.end].into_iter().flatten() {
            *t = t.checked_sub(shift).ok_or_else(out_of_range)?;
        }
        // Only rows a slice made or cut carry true times.
        if !rec.attrs.contains("orig_") {
            return Ok(());
        }
        for key in [ATTR_ORIG_TIME, ATTR_ORIG_END] {
            if let Some(t) = rec.attr(key).and_then(|t| t.parse::<i64>().ok()) {
                let moved = t.checked_sub(shift).ok_or_else(out_of_range)?;
                rec.set_attr(key, &moved.to_string());
            }
        }
        Ok(())
    }
}

impl crate::pipe::SourceStage for SliceSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if self.slicer.out.pop_into(rec) {
                self.passed = None;
                return self.hand_out(rec);
            }
            if self.finished {
                return Ok(false);
            }
            let more = self.inner.next_record(rec)?;
            let mark = self.inner.mark();
            self.slicer.out.set_mark(mark);
            self.slicer.tail.set_mark(mark);
            if more {
                self.slicer
                    .row(rec)
                    .map_err(|e| e.at(self.inner.location()))?;
            }
            let stopped = more && self.slicer.can_stop(self.inner.as_ref());
            if !more || stopped {
                self.finished = true;
                if let Some(why) = self.slicer.outside() {
                    self.warnings.warn(why);
                }
                self.slicer
                    .finish()
                    .map_err(|e| e.at(self.inner.location()))?;
            }
            if std::mem::take(&mut self.slicer.pass_read) {
                self.passed = Some(mark);
                return self.hand_out(rec);
            }
        }
    }

    /// The inner source's mark of the row that the row last returned was
    /// made from (a row held to the end: the last row read).
    fn mark(&self) -> u64 {
        self.passed.unwrap_or_else(|| self.slicer.out.popped_mark())
    }

    fn locate(&self, mark: u64) -> Location {
        self.inner.locate(mark)
    }

    fn extra_columns(&self) -> &[String] {
        self.inner.extra_columns()
    }

    /// The rows a slice hands out are its own (a cut row differs from the
    /// row read), so none comes with its line.
    fn raw_line(&self) -> Option<&[u8]> {
        None
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// Rows crossing T1 are held to the end and given clipped: no bound
    /// is kept (no stage after a slice asks).
    fn horizon(&self) -> Option<i64> {
        None
    }

    /// Before T0 it needs only what is open or pending there.
    fn agree(&mut self, _: Demand) -> Supply {
        let start = self.slicer.start();
        self.inner.agree(Demand {
            thin_before: (start > i64::MIN).then_some(start),
            ..Demand::ALL
        });
        Supply::WHOLE_ROWS
    }
}
