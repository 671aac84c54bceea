//! The slicer's phases: before T0 (what is open or in force is tracked),
//! at T0 (frames entered again, counters sampled), inside, at T1 (frames
//! left, extents clipped) and after, to the end of the input.

use std::cmp::Reverse;

use super::*;

/// Flags a message end kept outside the window.
pub(super) fn outside(row: &mut Record) -> Result<()> {
    row.add_flag(flags::OUTSIDE);
    Ok(())
}

/// Moves a point row to `time`, keeping its true time in attribute `orig`
/// (unless an earlier slice put one there) and flagging it clipped when it
/// moves; a row already at `time` is left as it is.
pub(super) fn moved_to(rec: &mut Record, time: i64, orig: &str) {
    let Some(was) = rec.time.filter(|&t| t != time) else {
        return;
    };
    if rec.attr(orig).is_none() {
        rec.push_attr(orig, &was.to_string());
    }
    rec.time = Some(time);
    if orig == ATTR_ORIG_END {
        rec.add_flag(flags::CLIPPED);
    }
    rec.place_orig_times_last();
}

/// Clips a row with an extent to `window`: each bound moved keeps its true
/// value in `orig_time` / `orig_end`; a signal's coefficients follow its
/// start (value = c + b·(t−t0) + a·(t−t0)², re-expanded at the new start).
pub(super) fn clip(rec: &mut Record, window: Window) -> Result<()> {
    let (Some(time), Some(end)) = (rec.time, rec.end) else {
        return Ok(());
    };
    let bound = |t: i64| t.max(window.start).min(window.end.unwrap_or(t));
    let (new_time, new_end) = (bound(time), bound(end));
    if new_time != time && rec.kind == Kind::Signal {
        recentre_signal(rec, new_time)?;
    }
    for (key, old, new) in [
        (ATTR_ORIG_TIME, time, new_time),
        (ATTR_ORIG_END, end, new_end),
    ] {
        if old != new && rec.attr(key).is_none() {
            rec.push_attr(key, &old.to_string());
        }
    }
    rec.time = Some(new_time);
    rec.end = Some(new_end);
    rec.add_flag(flags::CLIPPED);
    rec.place_orig_times_last();
    Ok(())
}

/// Re-expands a signal fragment's polynomial at `start`, from the original
/// coefficients (kept as `orig_c`, `orig_b`, `orig_a` the first time), so a
/// slice of a slice computes the same numbers as one slice.
pub(super) fn recentre_signal(rec: &mut Record, start: i64) -> Result<()> {
    let coefficient = |rec: &Record, name: &str| -> Result<f64> {
        let orig = format!("orig_{name}");
        let text = rec.attr(&orig).or_else(|| rec.attr(name));
        let text = text.unwrap_or_else(|| "0".into());
        text.parse::<f64>().map_err(|_| {
            Error::Record(format!(
                "signal coefficient `{name}` is `{text}`: expected a number"
            ))
        })
    };
    let (c, b, a) = (
        coefficient(rec, "c")?,
        coefficient(rec, "b")?,
        coefficient(rec, "a")?,
    );
    if b == 0.0 && a == 0.0 {
        return Ok(());
    }
    let unit = rec.attr("time_unit").unwrap_or_else(|| "ns".into());
    let unit_ns = parse_time(&format!("1{unit}"))
        .map_err(|_| Error::Record(format!("signal time_unit `{unit}` is not a time unit")))?;
    let from = match rec.attr(ATTR_ORIG_TIME) {
        Some(t) => t.parse::<i64>().map_err(|_| {
            Error::Record(format!("attribute {ATTR_ORIG_TIME} is `{t}`: expected ns"))
        })?,
        None => rec.time.unwrap_or(start),
    };
    let dt = (start - from) as f64 / unit_ns as f64;
    for name in ["c", "b", "a"] {
        let orig = format!("orig_{name}");
        if rec.attr(&orig).is_none() {
            let text = rec.attr(name).unwrap_or_else(|| "0".into());
            rec.push_attr(&orig, &text);
        }
    }
    rec.set_attr("c", &(c + b * dt + a * dt * dt).to_string());
    rec.set_attr("b", &(b + 2.0 * a * dt).to_string());
    Ok(())
}

impl Slicer {
    /// Before T0: only the history is kept.
    pub(super) fn before(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Enter => self.push(rec),
            Kind::Leave => {
                self.pop(rec)?;
            }
            Kind::Counter => match self.counters.get_mut(&(rec.loc, rec.cat, rec.name)) {
                Some(last) => last.clone_from(rec),
                None => {
                    self.counters
                        .insert((rec.loc, rec.cat, rec.name), rec.clone());
                }
            },
            Kind::Destroy => {
                if let Some(container) = self.held.shift_remove(&rec.loc) {
                    self.dead.insert(rec.loc, container);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The window starts: the held containers, the halves in flight, the
    /// frames open and the counter values in force are written.
    pub(super) fn open_window(&mut self) -> Result<()> {
        self.phase = Phase::Inside;
        self.declare_held()?;
        // Halves not paired before T0 are in flight: written, in time order.
        let mut flying: Vec<(i64, u64, Record)> = Vec::new();
        if self.options.messages == MessageScope::Overlap {
            for (n, mut row) in self.pairer.waiting_halves() {
                if let Some(flight) = self.flights.get_mut(&n) {
                    row.add_flag(flags::OUTSIDE);
                    flying.push((row.time.unwrap_or_default(), n, row));
                    flight.written = true;
                }
            }
        }
        flying.sort_by_key(|(time, n, _)| (*time, *n));
        for (_, _, row) in flying {
            self.keep(&row)?;
        }
        // Frames open at T0 are entered again at the first row of their
        // location that is not a leave at T0, or once time passes T0.
        self.reentering = self
            .stacks
            .iter()
            .filter(|(_, stack)| stack.frames.depth() > 0)
            .map(|(&loc, _)| loc)
            .collect();
        let mut counters: Vec<Record> = std::mem::take(&mut self.counters).into_values().collect();
        let symbols = &self.symbols;
        counters.sort_by_key(|r| [r.loc, r.cat, r.name].map(|s| symbols.text(s)));
        for mut sample in counters {
            moved_to(&mut sample, self.start(), ATTR_ORIG_TIME);
            sample.add_flag(flags::SYNTHETIC);
            self.keep(&sample)?;
        }
        Ok(())
    }

    /// Enters again at T0 the frames of `loc` open there.
    pub(super) fn reenter(&mut self, loc: Sym) -> Result<()> {
        self.reentering.remove(&loc);
        let t0 = self.start();
        let depth = self.stacks.get(&loc).map_or(0, |s| s.frames.depth());
        for i in 0..depth {
            let stack = self.stacks.get_mut(&loc).expect("has frames");
            let frame = std::mem::take(&mut stack.frames.open_mut()[i]);
            let result = self.keep_changed(&frame, false, |row| {
                moved_to(row, t0, ATTR_ORIG_TIME);
                row.add_flag(flags::SYNTHETIC);
                Ok(())
            });
            self.stacks
                .get_mut(&loc)
                .expect("has frames")
                .frames
                .open_mut()[i] = frame;
            result?;
        }
        Ok(())
    }

    /// Enters again the frames of every location still waiting, by name.
    pub(super) fn reenter_all(&mut self) -> Result<()> {
        let mut locs: Vec<Sym> = self.reentering.iter().copied().collect();
        locs.sort_by_key(|&loc| self.symbols.text(loc));
        for loc in locs {
            self.reenter(loc)?;
        }
        Ok(())
    }

    /// A row completing in the window.
    pub(super) fn inside(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Event if is_posting(rec) => return self.posting(rec),
            Kind::Enter => self.push(rec),
            Kind::Leave => {
                self.pop(rec)?;
            }
            Kind::Destroy => {
                if let Some(alive) = self.alive.get_mut(&rec.loc) {
                    *alive = false;
                }
            }
            Kind::Msg => {
                // The earlier end (a message received before it was sent,
                // flagged R, has its receive first).
                let starts_before = rec
                    .time
                    .zip(rec.end)
                    .is_some_and(|(t, e)| t.min(e) < self.start());
                if starts_before {
                    if self.options.messages == MessageScope::Inside {
                        return Ok(());
                    }
                    return self.keep_changed(rec, false, outside);
                }
            }
            Kind::State | Kind::Coll | Kind::Claim | Kind::Dep | Kind::Signal => {
                return self.clipped(rec, false);
            }
            _ => {}
        }
        self.keep_read(rec)
    }

    /// Reading passes T1: the frames open now are those that leave at T1.
    pub(super) fn close_window(&mut self) -> Result<()> {
        self.close_gate()?;
        self.phase = Phase::After;
        for stack in self.stacks.values_mut() {
            let depth = stack.frames.depth();
            (stack.open_at_t1, stack.open_at_end) = (depth, depth);
            stack.at_t1 = stack.frames.open().to_vec();
        }
        Ok(())
    }

    /// A row completing at or after T1: kept only when it crosses T1.
    pub(super) fn after(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Enter => self.push(rec),
            Kind::Leave => {
                let open_at_end = self.pop(rec)?;
                // Without true ends, frames open at T1 leave from their
                // enter rows at the end, but those that end at T1 (every
                // row at T1 is read).
                let at_t1 = rec.time == Some(self.t1());
                if open_at_end && at_t1 {
                    let stack = self.stacks.get_mut(&rec.loc).expect("popped");
                    stack.open_at_t1 = stack.frames.depth();
                }
                if open_at_end && (self.options.true_ends || at_t1) {
                    let t1 = self.t1();
                    return self.keep_changed(rec, true, |row| {
                        moved_to(row, t1, ATTR_ORIG_END);
                        Ok(())
                    });
                }
            }
            Kind::Msg => {
                let overlap = self.options.messages == MessageScope::Overlap;
                let first_end = rec.time.zip(rec.end).map(|(t, e)| t.min(e));
                if overlap && first_end.is_some_and(|t| t < self.t1()) {
                    return self.keep_changed(rec, true, outside);
                }
            }
            Kind::State | Kind::Coll | Kind::Claim | Kind::Dep | Kind::Signal => {
                return self.clipped(rec, true);
            }
            _ => {}
        }
        Ok(())
    }

    /// A row with an extent: kept clipped to the window when it reaches into
    /// it (ends at T0 or later, starts before T1).
    pub(super) fn clipped(&mut self, rec: &Record, late: bool) -> Result<()> {
        let (Some(time), Some(end)) = (rec.time, rec.end) else {
            return self.keep_read(rec);
        };
        let (lo, hi) = (time.min(end), time.max(end));
        // Like a frame, a row that ends at T0 does not reach into the window
        // (unless it is an instant at T0).
        let window = self.options.window;
        if hi < self.start() || (hi == self.start() && lo < hi) || !window.ends_after(lo) {
            return Ok(());
        }
        if lo >= self.start() && window.end.is_none_or(|end| hi <= end) {
            return if late {
                self.keep_late(rec)
            } else {
                self.keep_read(rec)
            };
        }
        // Without true ends, a frame cut at T1 has none, as a `state` row
        // as with its `enter` and `leave`, and goes with the frames cut
        // there (slicing commutes with --spans).
        if rec.kind == Kind::State
            && !self.options.true_ends
            && window.end.is_some_and(|end| hi > end)
        {
            let mut row = rec.clone();
            clip(&mut row, window)?;
            row.remove_attr(ATTR_ORIG_END);
            self.revive(row.loc)?;
            self.cut_frames.push(row);
            return Ok(());
        }
        self.keep_changed(rec, late, |row| clip(row, window))
    }

    /// Pushes a frame on the stack of `rec.loc` (after T1 only counted: no
    /// row of a frame opened there is written).
    pub(super) fn push(&mut self, rec: &Record) {
        let copy = self.phase != Phase::After;
        self.stacks.entry(rec.loc).or_default().push(rec, copy);
    }

    /// Pops the top frame of `rec.loc`; whether it was open at T1.
    pub(super) fn pop(&mut self, rec: &Record) -> Result<bool> {
        let stack = self.stacks.entry(rec.loc).or_default();
        let at = (rec.loc, rec.name);
        let depth = stack
            .frames
            .leave(at, rec.time.unwrap_or_default(), &self.symbols)?
            .depth;
        if self.phase == Phase::After && depth < stack.open_at_end {
            stack.open_at_end = depth;
            return Ok(true);
        }
        Ok(false)
    }

    /// Whether reading can stop after this row: past T1, nothing `inner`
    /// still has starts before T1 or at it (a leave at T1 ends its frame
    /// there, uncut), and no half in the slice waits for its partner
    /// (looked at every [`STOP_EVERY`] rows).
    pub(super) fn can_stop(&mut self, inner: &dyn RecordSource) -> bool {
        if self.phase != Phase::After || self.options.true_ends {
            return false;
        }
        self.rows_after += 1;
        if self.rows_after % STOP_EVERY != 1 {
            return false;
        }
        let reaches_in = inner.horizon().is_none_or(|t| t <= self.t1());
        !reaches_in && !self.flights.values().any(|f| f.written)
    }

    /// The input ended, or reading stopped: frames still open at T1 leave
    /// there, the rows crossing T1 are written in order, then the
    /// containers alive end.
    pub(super) fn finish(&mut self) -> Result<()> {
        self.pairer.finish()?;
        self.settle()?;
        self.reenter_all()?;
        match self.phase {
            Phase::Before => self.declare_held(),
            Phase::Inside => self.close_gate(),
            Phase::After => self.finish_after(),
        }
    }

    /// Why the window holds none of the trace, if it does not: it starts
    /// after the trace ends, or ends before it starts.
    pub(super) fn outside(&self) -> Option<String> {
        let (first, last) = (self.first?, self.last?);
        let s = crate::model::record::format_seconds;
        if last < self.start() {
            return Some(format!(
                "the window starts at {} s, after the trace's last time ({} s): the slice holds none of it",
                s(self.start()),
                s(last)
            ));
        }
        let end = self.options.window.end.filter(|&end| first >= end)?;
        Some(format!(
            "the window ends at {} s, before the trace's first time ({} s): the slice holds none of it",
            s(end),
            s(first)
        ))
    }

    /// Frames open at T1 leave there: with true ends, those still open at
    /// the input's end, their true end its last time; else every frame
    /// open at T1, with no true end.
    pub(super) fn finish_after(&mut self) -> Result<()> {
        let (t1, last) = (self.t1(), self.last.unwrap_or_default());
        let true_end = if self.options.true_ends { last } else { t1 };
        let mut locs: Vec<Sym> = self.stacks.keys().copied().collect();
        locs.sort_by_key(|&loc| self.symbols.text(loc));
        for loc in locs {
            let stack = &self.stacks[&loc];
            let open = match self.options.true_ends {
                true => stack.open_at_end,
                false => stack.open_at_t1,
            };
            for depth in (0..open).rev() {
                let frame = &stack.at_t1[depth];
                let mut leave = Record::new(Kind::Leave);
                leave.time = Some(true_end);
                (leave.loc, leave.cat, leave.name) = (frame.loc, frame.cat, frame.name);
                leave.depth = frame.depth;
                moved_to(&mut leave, t1, ATTR_ORIG_END);
                leave.add_flag(flags::CLIPPED);
                match self.options.true_ends {
                    true => self.tail.write(&leave)?,
                    false => self.cut_frames.push(leave),
                }
            }
        }
        // Frames cut at T1, as leaves or states: after the other rows
        // there, by location, inner first (their ends are not known).
        let symbols = &self.symbols;
        let mut cut = std::mem::take(&mut self.cut_frames);
        cut.sort_by_cached_key(|r| (symbols.text(r.loc), Reverse(r.depth)));
        for frame in &cut {
            self.tail.write(frame)?;
        }
        self.tail.sort();
        let mut end = t1;
        let mut rec = Record::default();
        while self.tail.pop_into(&mut rec) {
            end = end.max(rec.completion().unwrap_or(end));
            self.out.set_mark(self.tail.popped_mark());
            self.out.write(&rec)?;
        }
        let alive: Vec<Sym> = self
            .alive
            .iter()
            .filter(|(_, alive)| **alive)
            .map(|(&loc, _)| loc)
            .collect();
        for &loc in alive.iter().rev() {
            let mut destroy = Record::new(Kind::Destroy);
            destroy.time = Some(end);
            destroy.loc = loc;
            destroy.add_flag(flags::SYNTHETIC);
            self.out.write(&destroy)?;
        }
        Ok(())
    }
}
