//! States: set, pushed, popped and reset on a container's stack of a
//! state type, each leaving a `state` row when it ends.

use super::marks::marked_kind;
use super::*;

impl StateStack {
    pub(super) fn push(&mut self, name: Sym, value: &str) {
        if self.depth == self.stack.len() {
            self.stack.push(StateEntry {
                name: Sym::EMPTY,
                value: String::new(),
                enter: None,
                extent: None,
            });
        }
        let f = &mut self.stack[self.depth];
        (f.name, f.enter, f.extent) = (name, None, None);
        f.value.clear();
        f.value.push_str(value);
        self.depth += 1;
    }

    /// Pops the top frame (false on an empty stack); it stays readable as
    /// [`StateStack::popped`] until the next push.
    pub(super) fn pop(&mut self) -> bool {
        match self.depth.checked_sub(1) {
            Some(d) => {
                self.depth = d;
                true
            }
            None => false,
        }
    }

    pub(super) fn popped(&self) -> &StateEntry {
        &self.stack[self.depth]
    }
}

impl Sim {
    /// `PajeSetState`, `PajePushState`, `PajePopState`, `PajeResetState`.
    pub(super) fn state(
        &mut self,
        line: &Line,
        number: u64,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let event = line.def.event;
        let Some(Entity {
            time,
            lossy,
            c,
            t,
            s,
        }) = self.entity(line, Nature::State, number, out)?
        else {
            return Ok(());
        };
        // A lane is made when a state first needs it, not by a reset of an
        // empty stack (which leaves nothing in the stream), and declared
        // when a state of its own is pushed.
        let existing = self.containers[c as usize].slots[s].lane;
        let lane = match (existing, event) {
            (Some(l), _) => l,
            (None, Event::SetState | Event::PushState) => self.lane(c, s, t),
            (None, Event::PopState) => return Err(self.empty_stack(t, line)),
            (None, _) => return Ok(()),
        };
        let marked = marked_kind(line).filter(|k| *k != Kind::Signal && event == Event::PushState);
        if marked.is_none() && matches!(event, Event::SetState | Event::PushState) {
            self.declare_lane(lane, out)?;
        }
        self.touch_lane(lane, c, time, out);
        let close = StateClosing {
            type_: t,
            extras: (event != Event::SetState).then_some(line),
            lossy,
            flag: "",
        };
        match event {
            Event::PopState => {
                if !self.pop_one(lane, time, &close, out)? {
                    return Err(self.empty_stack(t, line));
                }
                Ok(())
            }
            Event::ResetState => self.pop_all(lane, time, &close, out),
            _ => {
                if event == Event::SetState {
                    self.pop_all(lane, time, &close, out)?;
                }
                match marked {
                    Some(kind) => self.push_marked((c, t, lane), kind, (time, lossy), line),
                    None => self.push(lane, t, time, lossy, line, out),
                }
            }
        }
    }

    /// Opens a state marked as a row with an extent: the row, on the
    /// lane's container, completed at the pop.
    fn push_marked(
        &mut self,
        (c, t, lane): (u32, u32, u32),
        kind: Kind,
        at: (i64, bool),
        line: &Line,
    ) -> Result<(), String> {
        let row = self.marked_row((kind, c, t), at, line)?;
        let l = &mut self.lanes[lane as usize];
        l.push(row.name, line.get(Field::Value));
        l.stack[l.depth - 1].extent = Some(row);
        Ok(())
    }

    pub(super) fn empty_stack(&self, t: u32, line: &Line) -> String {
        format!(
            "pop on an empty stack: no open state of type `{}` in container `{}`",
            self.types[t as usize].id,
            line.get(Field::Container)
        )
    }

    /// Opens a state on a lane, as an `enter` row.
    pub(super) fn push(
        &mut self,
        lane: u32,
        t: u32,
        time: i64,
        lossy: bool,
        line: &Line,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let value = line.get(Field::Value);
        let at = self.use_value(t, line, time, out);
        let (name, value_col) = self.value_name(t, at, value);
        let l = &mut self.lanes[lane as usize];
        let depth = l.depth;
        l.push(name, value_col);
        let row = Row {
            time: Some(time),
            lossy,
            loc: l.loc,
            cat: self.types[t as usize].sym,
            name,
            value: value_col,
            extras: Some(line),
            ..Row::new(Kind::Enter)
        };
        let enter = out.row(row, |r| {
            r.depth = Some(depth as u32);
            for f in [Field::Line, Field::File] {
                if !line.get(f).is_empty() {
                    r.push_attr(
                        &format!("paje.{}", f.name().to_ascii_lowercase()),
                        line.get(f),
                    );
                }
            }
        })?;
        if out.before_t0(time) {
            self.lanes[lane as usize].stack[depth].enter = Some(enter);
        }
        Ok(())
    }

    /// Closes the top state of a lane at `time` (false if none is open).
    /// `flag` marks closings the trace implies rather than states (`S`).
    pub(super) fn pop_one(
        &mut self,
        lane: u32,
        time: i64,
        close: &StateClosing,
        out: &mut Emitter,
    ) -> Result<bool, String> {
        if !self.lanes[lane as usize].pop() {
            return Ok(false);
        }
        let depth = self.lanes[lane as usize].depth;
        if let Some(mut row) = self.lanes[lane as usize].stack[depth].extent.take() {
            row.end = Some(time);
            row.flags.push_str(close.flag);
            out.declare(|r| r.clone_from(&row))?;
            return Ok(true);
        }
        let l = &self.lanes[lane as usize];
        let frame = l.popped();
        if out.cancels(frame.enter, time) {
            return Ok(true);
        }
        let row = Row {
            time: Some(time),
            lossy: close.lossy,
            loc: l.loc,
            cat: self.types[close.type_ as usize].sym,
            name: frame.name,
            value: &frame.value,
            extras: close.extras,
            ..Row::new(Kind::Leave)
        };
        out.row(row, |r| {
            r.depth = Some(l.depth as u32);
            r.flags.push_str(close.flag);
        })?;
        Ok(true)
    }

    /// Closes every open state of a lane at `time`, innermost first.
    pub(super) fn pop_all(
        &mut self,
        lane: u32,
        time: i64,
        close: &StateClosing,
        out: &mut Emitter,
    ) -> Result<(), String> {
        while self.pop_one(lane, time, close, out)? {}
        Ok(())
    }
}
