//! Events and variables: `PajeNewEvent` rows, and variables set, added
//! to and subtracted from.

use super::marks::marked_kind;
use super::*;

impl Sim {
    /// What every line about an entity (state, event, variable, link) starts
    /// with: its time, its live container (`None` when destroyed: the line
    /// is dropped), its type checked against `nature` and the container, the
    /// type declared before use, and the (container, type) slot in time order.
    pub(super) fn entity(
        &mut self,
        line: &Line,
        nature: Nature,
        number: u64,
        out: &mut Emitter,
    ) -> Result<Option<Entity>, String> {
        let (time, lossy) = self.line_time(line)?;
        let c = match line.found.container {
            Some(c) => c,
            None => self.container_of(line.get(Field::Container))?,
        };
        let Some(c) = self.alive(c, number) else {
            return Ok(None);
        };
        let t = match line.found.type_ {
            Some(t) => t,
            None => self.type_of(line.get(Field::Type))?,
        };
        self.check_entity(c, t, nature)?;
        self.touch_type(t, time, out);
        // Links are checked when they complete, not half by half (PajeNG).
        let s = match nature {
            Nature::Link => {
                let container = &mut self.containers[c as usize];
                container.last = container.last.max(time);
                self.slot_position(c, t)
            }
            _ => self.slot(c, t, time)?,
        };
        Ok(Some(Entity {
            time,
            lossy,
            c,
            t,
            s,
        }))
    }

    /// Declares what an event or link line on container `on` uses before
    /// its row, and finds its value among the type's definitions.
    pub(super) fn use_entity(
        &mut self,
        entity: &Entity,
        on: u32,
        line: &Line,
        out: &mut Emitter,
    ) -> Option<usize> {
        self.touch(on, entity.time, out);
        self.use_value(entity.t, line, entity.time, out)
    }

    /// The row of an event or link line on container `on`, its value `at`
    /// (from [`Sim::use_entity`]) named as the type's definitions say.
    pub(super) fn valued_row<'a>(
        &mut self,
        kind: Kind,
        entity: &Entity,
        on: u32,
        at: Option<usize>,
        line: &'a Line<'a>,
    ) -> Row<'a> {
        let (name, value) = self.value_name(entity.t, at, line.get(Field::Value));
        Row {
            time: Some(entity.time),
            lossy: entity.lossy,
            loc: self.containers[on as usize].sym,
            cat: self.types[entity.t as usize].sym,
            name,
            value,
            extras: Some(line),
            ..Row::new(kind)
        }
    }

    /// `PajeNewEvent`.
    pub(super) fn new_event(
        &mut self,
        line: &Line,
        number: u64,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let Some(entity) = self.entity(line, Nature::EventType, number, out)? else {
            return Ok(());
        };
        let c = entity.c;
        let at = self.use_entity(&entity, c, line, out);
        if out.leaves_out(entity.time) {
            return Ok(());
        }
        let row = self.valued_row(Kind::Event, &entity, c, at, line);
        out.row(row, |_| {}).map(drop)
    }

    /// `PajeSetVariable`, `PajeAddVariable`, `PajeSubVariable`.
    pub(super) fn variable(
        &mut self,
        line: &Line,
        number: u64,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let event = line.def.event;
        let entity = self.entity(line, Nature::Variable, number, out)?;
        let Some(Entity {
            time,
            lossy,
            c,
            t,
            s,
        }) = entity
        else {
            return Ok(());
        };
        self.touch(c, time, out);
        let text = line.get(Field::Value);
        let operand = Decimal::parse(text)
            .ok_or_else(|| format!("bad variable value `{text}`: expected a decimal number"))?;
        let slot = &mut self.containers[c as usize].slots[s];
        let value = &mut self.number;
        value.clear();
        let op = match (event, slot.var) {
            (Event::SetVariable, _) => {
                // Canonical, like the sums after an add or sub.
                operand.push_to(value);
                slot.var = Some(operand);
                None
            }
            (_, None) => {
                return Err(format!(
                    "{} to variable `{}` of container `{}`, which has no value yet (needs a PajeSetVariable first)",
                    if event == Event::AddVariable { "addition" } else { "subtraction" },
                    self.types[t as usize].id,
                    line.get(Field::Container)
                ));
            }
            (_, Some(current)) => {
                let (delta, op) = match event {
                    Event::AddVariable => (operand, "add"),
                    _ => (operand.neg(), "sub"),
                };
                let sum = current
                    .add(&delta)
                    .ok_or("variable value needs more than 36 significant digits")?;
                sum.push_to(value);
                slot.var = Some(sum);
                Some(op)
            }
        };
        let superseded = slot.sample.take();
        out.cancels(superseded, time);
        if event == Event::SetVariable && marked_kind(line) == Some(Kind::Signal) {
            return self.marked_signal((c, t), (time, lossy), line, out);
        }
        let ty = &self.types[t as usize];
        let row = Row {
            time: Some(time),
            lossy,
            loc: self.containers[c as usize].sym,
            cat: ty.sym,
            name: ty.name,
            value: &self.number,
            extras: Some(line),
            ..Row::new(Kind::Counter)
        };
        let sample = out.row(row, |r| {
            if let Some(op) = op {
                r.push_attr(ATTR_OP, op);
                r.push_attr(ATTR_OPERAND, text);
            }
        })?;
        if out.before_t0(time) {
            self.containers[c as usize].slots[s].sample = Some(sample);
        }
        Ok(())
    }

    /// A variable set marked as a signal fragment: the `signal` row,
    /// complete at its end.
    fn marked_signal(
        &mut self,
        (c, t): (u32, u32),
        at: (i64, bool),
        line: &Line,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let row = self.marked_row((Kind::Signal, c, t), at, line)?;
        if row.end.is_none() {
            return Err(format!(
                "a variable set marked `{}=signal` without the `{}` field",
                extent::KIND,
                extent::END
            ));
        }
        out.declare(|r| r.clone_from(&row)).map(drop)
    }
}
