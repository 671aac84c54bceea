//! Containers: created, destroyed (closing what they hold), and the slots
//! of each, one per state type (a lane) or variable, that other events
//! find by container and type.

use super::*;

impl Sim {
    /// `PajeCreateContainer`.
    pub(super) fn create_container(
        &mut self,
        line: &Line,
        out: &mut Emitter,
    ) -> Result<(), String> {
        use Field::*;
        let (time, lossy) = self.line_time(line)?;
        let parent = self.container_of(line.get(Container))?;
        let t = self.type_of(line.get(Type))?;
        let ty = &self.types[t as usize];
        if ty.nature != Nature::Container {
            return Err(format!("type `{}` is not a container type", ty.id));
        }
        let parent_type = self.containers[parent as usize].type_;
        if ty.parent != parent_type {
            return Err(format!(
                "container type `{}` is not a child type of `{}`, the type of container `{}`",
                ty.id,
                self.types[parent_type as usize].id,
                line.get(Container)
            ));
        }
        let id = identifier(line);
        if id == "0" {
            return Err("a container cannot be identified as `0` (the root container)".into());
        }
        if self.container_index.contains_key(id) {
            return Err(format!("container `{id}` is created twice"));
        }
        if self.lane_index.contains_key(id) {
            return Err(format!(
                "container `{id}` has the identifier of a state lane made by this reader; rename it"
            ));
        }
        let index = self.containers.len() as u32;
        let sym = self.syms.intern(id);
        let name = self.syms.intern(line.get(Name));
        self.containers.push(ContainerInfo {
            id: id.to_string(),
            sym,
            decl: None,
            parent,
            type_: t,
            children: Vec::new(),
            alive: true,
            last: time,
            slots: Vec::new(),
            pending: 0,
        });
        self.container_index.insert(id.into(), index);
        self.containers[parent as usize].children.push(index);
        let containers = &self.containers;
        let row = Row {
            time: Some(time),
            lossy,
            loc: sym,
            name,
            cat: self.types[t as usize].sym,
            peer: if parent == ROOT {
                Sym::EMPTY
            } else {
                containers[parent as usize].sym
            },
            extras: Some(line),
            ..Row::new(Kind::Container)
        };
        let ticket = out.row(row, |r| {
            if !line.get(Filename).is_empty() {
                r.push_attr("paje.filename", line.get(Filename));
            }
        })?;
        self.containers[index as usize].decl = Some(ticket);
        Ok(())
    }

    /// `PajeDestroyContainer`.
    pub(super) fn destroy_container(
        &mut self,
        line: &Line,
        number: u64,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let (time, _) = self.line_time(line)?;
        let c = self.container_of(line.get(Field::Name))?;
        let t = self.type_of(line.get(Field::Type))?;
        let info = &self.containers[c as usize];
        if info.type_ != t {
            return Err(format!(
                "container `{}` is of type `{}`, not `{}`",
                info.id,
                self.types[info.type_ as usize].id,
                line.get(Field::Type)
            ));
        }
        if time < info.last {
            return Err(format!(
                "container `{}` is destroyed at {} s, before its last event at {} s",
                info.id,
                crate::model::record::format_seconds(time),
                crate::model::record::format_seconds(info.last)
            ));
        }
        if info.alive {
            return self.close(c, time, false, out);
        }
        let msg = format!(
            "container `{}` is destroyed again; ignored, as PajeNG does",
            info.id
        );
        self.warn(number, msg);
        // Kept in the stream: its time still counts for the end of the trace.
        let row = Row {
            time: Some(time),
            loc: self.containers[c as usize].sym,
            ..Row::new(Kind::Destroy)
        };
        out.row(row, |_| {}).map(drop)
    }

    /// Container `c` if alive; `None` (with a count for the final warning)
    /// if it was destroyed: PajeNG drops such events.
    pub(super) fn alive(&mut self, c: u32, number: u64) -> Option<u32> {
        if self.containers[c as usize].alive {
            return Some(c);
        }
        if self.dropped == 0 {
            self.first_dropped = number;
        }
        self.dropped += 1;
        None
    }

    /// Makes sure the declaration of container `c` (and its ancestors) comes
    /// out before a row at `time` that uses it: ancestors are moved first, so
    /// they keep preceding their children.
    #[inline]
    pub(super) fn touch(&mut self, c: u32, time: i64, out: &mut Emitter) {
        // Most lines come after their container's declaration: nothing to move.
        let decl = self.containers[c as usize].decl;
        if decl.is_some_and(|d| d.key > time) || (c == ROOT && decl.is_none()) {
            self.lower_container_chain(c, time, out);
        }
    }

    /// [`Sim::touch`] once container `c`'s declaration is to be made or moved.
    #[cold]
    fn lower_container_chain(&mut self, c: u32, time: i64, out: &mut Emitter) {
        if c == ROOT && self.containers[0].decl.is_none() {
            // The root container is declared when a row first uses it.
            let zero = self.containers[0].sym;
            let row = Row {
                loc: zero,
                cat: zero,
                name: zero,
                ..Row::new(Kind::Container)
            };
            if let Ok(ticket) = out.row(row, |_| {}) {
                self.containers[0].decl = Some(ticket);
            }
        }
        let mut chain = Vec::new();
        let mut at = c;
        while at != ROOT {
            let info = &self.containers[at as usize];
            match info.decl {
                Some(d) if d.key > time => chain.push(at),
                _ => break,
            }
            at = info.parent;
        }
        for &c in chain.iter().rev() {
            let t = self.containers[c as usize].type_;
            self.touch_type(t, time, out);
            let info = &mut self.containers[c as usize];
            if let Some(d) = info.decl {
                info.decl = Some(out.queue.lower(d, time));
            }
        }
    }

    /// [`Sim::touch`] for a lane of container `c` (the container first).
    pub(super) fn touch_lane(&mut self, lane: u32, c: u32, time: i64, out: &mut Emitter) {
        self.touch(c, time, out);
        if let Some(d) = self.lanes[lane as usize].decl {
            if d.key > time {
                self.lanes[lane as usize].decl = Some(out.queue.lower(d, time));
            }
        }
    }

    /// The lane of (container, state type), made on first use.
    pub(super) fn lane(&mut self, c: u32, s: usize, t: u32) -> u32 {
        if let Some(l) = self.containers[c as usize].slots[s].lane {
            return l;
        }
        let container = &self.containers[c as usize];
        let mut loc = format!("{}/{}", container.id, self.types[t as usize].id);
        while self.container_index.contains_key(loc.as_str())
            || self.lane_index.contains_key(loc.as_str())
        {
            loc.push_str("/lane");
        }
        let index = self.lanes.len() as u32;
        self.lane_index.insert(loc.as_str().into(), index);
        let loc = self.syms.intern(&loc);
        self.lanes.push(StateStack {
            loc,
            owner: container.sym,
            type_: t,
            decl: None,
            stack: Vec::new(),
            depth: 0,
        });
        self.containers[c as usize].slots[s].lane = Some(index);
        index
    }

    /// Declares a lane (its `container` row) unless it is declared.
    pub(super) fn declare_lane(&mut self, lane: u32, out: &mut Emitter) -> Result<(), String> {
        let l = &self.lanes[lane as usize];
        if l.decl.is_some() {
            return Ok(());
        }
        let row = Row {
            loc: l.loc,
            cat: LANE,
            name: self.types[l.type_ as usize].name,
            peer: l.owner,
            ..Row::new(Kind::Container)
        };
        let ticket = out.row(row, |_| {})?;
        self.lanes[lane as usize].decl = Some(ticket);
        Ok(())
    }

    /// The slot of (container, type), checking that time does not go back.
    pub(super) fn slot(&mut self, c: u32, t: u32, time: i64) -> Result<usize, String> {
        let i = self.slot_position(c, t);
        let container = &mut self.containers[c as usize];
        let slot = &mut container.slots[i];
        if time < slot.last {
            return Err(format!(
                "time goes backwards: {} s is before {} s, the previous event of type `{}` in container `{}` (Pajé orders events per container and type)",
                crate::model::record::format_seconds(time),
                crate::model::record::format_seconds(slot.last),
                self.types[t as usize].id,
                container.id
            ));
        }
        slot.last = time;
        container.last = container.last.max(time);
        Ok(i)
    }

    /// The position of the slot of (container, type) in the container's
    /// slots, made on first use. A container has a few types as a rule, found
    /// by a scan; past [`LINEAR_SLOTS`], through a map.
    pub(super) fn slot_position(&mut self, c: u32, t: u32) -> usize {
        let slots = &mut self.containers[c as usize].slots;
        let found = if slots.len() <= LINEAR_SLOTS {
            slots.iter().position(|s| s.type_ == t)
        } else {
            self.slot_index.get(&(c, t)).map(|&i| i as usize)
        };
        if let Some(i) = found {
            return i;
        }
        slots.push(TypeSlot {
            type_: t,
            last: i64::MIN,
            ..TypeSlot::default()
        });
        let n = slots.len();
        if n == LINEAR_SLOTS + 1 {
            for (i, s) in slots.iter().enumerate() {
                self.slot_index.insert((c, s.type_), i as u32);
            }
        } else if n > LINEAR_SLOTS {
            self.slot_index.insert((c, t), (n - 1) as u32);
        }
        n - 1
    }

    /// Destroys container `c` (and, first, its live children) at `time`:
    /// closes its open states and checks its pending links. `synthetic` marks
    /// a destruction PajeNG implies rather than the trace states.
    pub(super) fn close(
        &mut self,
        c: u32,
        time: i64,
        synthetic: bool,
        out: &mut Emitter,
    ) -> Result<(), String> {
        // Children first (in creation order), also those of dead containers
        // (created under a destroyed parent, which PajeNG accepts): the
        // subtree in post-order, walked with a stack of its own, not the call
        // stack, so no depth of nesting can overflow it. A closed container
        // forgets its children, so no later closing walks them again.
        let mut walk = vec![c];
        let mut order = Vec::new();
        while let Some(x) = walk.pop() {
            order.push(x);
            walk.extend(std::mem::take(&mut self.containers[x as usize].children));
        }
        for &x in order.iter().rev() {
            self.close_one(x, time, synthetic || x != c, out)?;
        }
        Ok(())
    }

    /// Closes container `c` itself (its children are closed): its open states,
    /// its pending links, and its `destroy` row.
    pub(super) fn close_one(
        &mut self,
        c: u32,
        time: i64,
        synthetic: bool,
        out: &mut Emitter,
    ) -> Result<(), String> {
        if !self.containers[c as usize].alive && c != ROOT {
            return Ok(());
        }
        let slots: Vec<(u32, u32)> = self.containers[c as usize]
            .slots
            .iter()
            .filter_map(|s| s.lane.map(|l| (l, s.type_)))
            .collect();
        for (lane, t) in slots {
            let close = StateClosing {
                type_: t,
                extras: None,
                lossy: false,
                flag: "S",
            };
            self.pop_all(lane, time, &close, out)?;
        }
        if c != ROOT {
            self.touch(c, time, out);
        }
        self.check_pending(c)?;
        let info = &mut self.containers[c as usize];
        info.alive = false;
        info.last = info.last.max(time);
        // What a dead container no longer needs: its slots and their lanes'
        // stacks (its entry stays, to drop later events on it as PajeNG does).
        for slot in std::mem::take(&mut info.slots) {
            if let Some(lane) = slot.lane {
                self.lanes[lane as usize].stack = Vec::new();
            }
        }
        let info = &self.containers[c as usize];
        if c == ROOT {
            return Ok(());
        }
        let row = Row {
            time: Some(time),
            loc: info.sym,
            ..Row::new(Kind::Destroy)
        };
        out.row(row, |r| {
            if synthetic {
                r.add_flag(flags::SYNTHETIC);
            }
        })
        .map(drop)
    }

    /// Links of container `c` still waiting for their other half: an error, or
    /// (with `--ignore-incomplete-links`) a count.
    pub(super) fn check_pending(&mut self, c: u32) -> Result<(), String> {
        let count = self.containers[c as usize].pending;
        if count == 0 {
            return Ok(());
        }
        if self.incomplete == IncompleteLinks::Dropped {
            // Left in the map (the container is dead, so nothing can match
            // them) and swept once they are half of it: linear in all.
            self.ignored_links += u64::from(count);
            self.stale += count as usize;
            if self.stale > 1024 && 2 * self.stale > self.pending.len() {
                let containers = &self.containers;
                self.pending
                    .retain(|_, p| p.container != c && containers[p.container as usize].alive);
                self.stale = 0;
            }
            return Ok(());
        }
        let mut incomplete: Vec<(u64, String)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.container == c)
            .map(|(k, p)| (p.line, k.rsplit('\u{0}').next().unwrap_or("").to_string()))
            .collect();
        if incomplete.is_empty() {
            return Ok(());
        }
        incomplete.sort();
        let (line, key) = &incomplete[0];
        let remedy = match self.incomplete {
            IncompleteLinks::RefusedUnmatched => {
                "--unmatched error refuses it, which --ignore-incomplete-links would drop"
            }
            _ => "--ignore-incomplete-links drops such links, as pj_dump -z does",
        };
        Err(format!(
            "incomplete link: key `{key}` (line {line}) has no {} when container `{}` ends{}; {remedy}",
            if self.pending.values().any(|p| p.line == *line && p.start) { "end" } else { "start" },
            self.containers[c as usize].id,
            if incomplete.len() > 1 {
                format!(" ({} incomplete links in all)", incomplete.len())
            } else {
                String::new()
            }
        ))
    }
}
