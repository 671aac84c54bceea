//! Links: a start and an end, paired by key in either order, each half
//! held until its other half comes.

use super::*;

impl Sim {
    /// `PajeStartLink`, `PajeEndLink`: one half of a link. A link is a `msg`
    /// row when its second half comes (as PajeNG keeps completed links),
    /// made of the halves as `trace-match` pairs them: the first half waits
    /// (memory: the links in flight), so a half written long after its
    /// time, as a writer that writes links when they complete does, is in
    /// order all the same.
    pub(super) fn link(
        &mut self,
        line: &Line,
        number: u64,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let start = line.def.event == Event::StartLink;
        let Some(entity) = self.entity(line, Nature::Link, number, out)? else {
            return Ok(());
        };
        let (c, t) = (entity.c, entity.t);
        let other = self.link_end(line, t, start)?;
        let kind = if start { Kind::Send } else { Kind::Recv };
        let at = self.use_entity(&entity, other, line, out);
        let row = Row {
            comm: self.containers[c as usize].sym,
            id: line.get(Field::Key),
            ..self.valued_row(kind, &entity, other, at, line)
        };
        let mut half = self.spare_halves.pop().unwrap_or_default();
        half.clear();
        fill_row(&mut half, row, |_| {});
        // A half counts for the end of the trace even when its link never
        // completes (PajeNG's -z).
        out.counts(entity.time);
        // The other half completes the link no earlier than the previous
        // link of the type in the container (PajeNG's order on links).
        let begun = entity
            .time
            .min(self.containers[c as usize].slots[entity.s].last);
        let Some(first) = self.pair_link(line, (c, t), number, half, begun)? else {
            return Ok(());
        };
        let times = [&first.0, &first.1].map(|half| half.time.unwrap_or(entity.time));
        let (begin, end) = (times[0].min(times[1]), times[0].max(times[1]));
        let completion = if out.leaves_out_extent(begin, end) {
            end
        } else {
            let ticket = out.declare(|msg| {
                pair_halves(msg, &first.0, &first.1);
            });
            ticket?.key
        };
        self.spare_halves.extend([first.0, first.1]);
        self.check_link_order((c, t, entity.s), entity.time, completion)
    }

    /// A link may not be completed (its second half, at `at`) before the
    /// previous one of its type in its container ended (PajeNG's only
    /// order check on links); it ends at `completion`.
    pub(super) fn check_link_order(
        &mut self,
        (c, t, s): (u32, u32, usize),
        at: i64,
        completion: i64,
    ) -> Result<(), String> {
        let container = &mut self.containers[c as usize];
        let slot = &mut container.slots[s];
        if at < slot.last {
            return Err(format!(
                "a link of type `{}` in container `{}` completes at {} s, before the previous one ended ({} s): PajeNG stores completed links in time order",
                self.types[t as usize].id,
                container.id,
                crate::model::record::format_seconds(at),
                crate::model::record::format_seconds(slot.last)
            ));
        }
        slot.last = completion;
        container.last = container.last.max(completion);
        Ok(())
    }

    /// The container a link half starts or ends at, checked against its type.
    pub(super) fn link_end(&self, line: &Line, t: u32, start: bool) -> Result<u32, String> {
        let field = if start {
            Field::StartContainer
        } else {
            Field::EndContainer
        };
        let other = self.container_of(line.get(field))?;
        let ty = &self.types[t as usize];
        let want = if start { ty.ends.0 } else { ty.ends.1 };
        let other_type = self.containers[other as usize].type_;
        if other_type != want {
            return Err(format!(
                "{} `{}` is of type `{}`, but link type `{}` {} at type `{}`",
                field.name(),
                line.get(field),
                self.types[other_type as usize].id,
                ty.id,
                if start { "starts" } else { "ends" },
                self.types[want as usize].id
            ));
        }
        Ok(other)
    }

    /// Pairs a link half with the pending other half of its key, or leaves
    /// it pending; the halves must carry the same value.
    pub(super) fn pair_link(
        &mut self,
        line: &Line,
        (c, t): (u32, u32),
        number: u64,
        half: Box<Record>,
        begun: i64,
    ) -> Result<Option<LinkHalves>, String> {
        let start = half.kind == Kind::Send;
        let value = line.get(Field::Value);
        let key = line.get(Field::Key);
        self.key.clear();
        for part in [
            self.containers[c as usize].id.as_str(),
            "\u{0}",
            self.types[t as usize].id.as_str(),
            "\u{0}",
            key,
        ] {
            self.key.push_str(part);
        }
        match self.pending.remove_entry(&self.key) {
            Some((_, p)) if p.start == start => Err(format!(
                "a second {} of link key `{key}` (type `{}`, container `{}`) while the first, on line {}, has no {} yet",
                if start { "start" } else { "end" },
                self.types[t as usize].id,
                line.get(Field::Container),
                p.line,
                if start { "end" } else { "start" }
            )),
            Some((_, p)) if p.value != value => Err(format!(
                "link key `{key}` ends with value `{value}` but started with `{}` (line {})",
                p.value, p.line
            )),
            Some((spare_key, p)) => {
                self.containers[p.container as usize].pending -= 1;
                self.spare_strings.push(spare_key);
                self.spare_strings.push(p.value);
                Ok(Some((p.half, half)))
            }
            None => {
                let mut pending_key = self.spare_strings.pop().unwrap_or_default();
                pending_key.clone_from(&self.key);
                let mut pending_value = self.spare_strings.pop().unwrap_or_default();
                pending_value.clear();
                pending_value.push_str(value);
                let link = PendingLink {
                    start,
                    line: number,
                    value: pending_value,
                    container: c,
                    begun,
                    half,
                };
                self.pending.insert(pending_key, link);
                self.containers[c as usize].pending += 1;
                Ok(None)
            }
        }
    }
}

impl Sim {
    /// How early a link still waiting for its other half can begin: its
    /// half's time, or the end of the link before it of its type in its
    /// container (the other half comes no earlier); a link whose container
    /// is gone (`--ignore-incomplete-links`) never completes.
    pub(super) fn links_begun(&self) -> i64 {
        let live = self.pending.values();
        let live = live.filter(|p| self.containers[p.container as usize].alive);
        live.map(|p| p.begun).fold(i64::MAX, i64::min)
    }
}
