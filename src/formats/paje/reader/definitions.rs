//! The definitions a Pajé trace makes as it goes: types of the hierarchy
//! (`PajeDefine*Type`) and the values of an entity type
//! (`PajeDefineEntityValue`).

use super::*;

impl Sim {
    /// `PajeDefine*Type`: a type of the hierarchy.
    pub(super) fn define_type(&mut self, line: &Line, out: &mut Emitter) -> Result<(), String> {
        use Field::*;
        let nature = match line.def.event {
            Event::DefineContainerType => Nature::Container,
            Event::DefineStateType => Nature::State,
            Event::DefineEventType => Nature::EventType,
            Event::DefineVariableType => Nature::Variable,
            _ => Nature::Link,
        };
        let name = line.get(Name);
        let id = identifier(line);
        if id == "0" {
            return Err("a type cannot be identified as `0` (the root type)".into());
        }
        if self.type_index.contains_key(id) {
            return Err(format!("type `{id}` is defined twice"));
        }
        let parent = self.type_of(line.get(Type))?;
        if self.types[parent as usize].nature != Nature::Container {
            return Err(format!(
                "the parent of type `{id}` must be a container type; `{}` is a {} type",
                line.get(Type),
                self.types[parent as usize].nature.as_str()
            ));
        }
        let ends = match nature {
            Nature::Link => (
                self.link_end_type(line, StartContainerType, id)?,
                self.link_end_type(line, EndContainerType, id)?,
            ),
            _ => (0, 0),
        };
        let index = self.types.len() as u32;
        let (sym, name_sym) = (self.syms.intern(id), self.syms.intern(name));
        let cat = nature.sym(&mut self.syms);
        self.types.push(TypeInfo {
            id: id.to_string(),
            sym,
            name: name_sym,
            nature,
            parent,
            ends,
            values: StrMap::default(),
            decl: None,
        });
        self.type_index.insert(id.into(), index);
        let types = &self.types;
        let parent_id = if parent == ROOT {
            Sym::EMPTY
        } else {
            types[parent as usize].sym
        };
        let row = Row {
            id,
            name: name_sym,
            cat,
            peer: parent_id,
            extras: Some(line),
            ..Row::new(Kind::Type)
        };
        let ticket = out.row(row, |r| {
            if nature == Nature::Link {
                r.push_attr(ATTR_START_TYPE, &types[ends.0 as usize].id);
                r.push_attr(ATTR_END_TYPE, &types[ends.1 as usize].id);
            }
            if !line.get(Color).is_empty() {
                r.push_attr(ATTR_COLOR, line.get(Color));
            }
        })?;
        self.types[index as usize].decl = Some(ticket);
        Ok(())
    }

    /// The container type a link type starts or ends at (`field`).
    pub(super) fn link_end_type(
        &self,
        line: &Line,
        field: Field,
        link: &str,
    ) -> Result<u32, String> {
        let t = self.type_of(line.get(field))?;
        if self.types[t as usize].nature != Nature::Container {
            return Err(format!(
                "{} `{}` of link type `{link}` is not a container type",
                field.name(),
                line.get(field)
            ));
        }
        Ok(t)
    }

    /// `PajeDefineEntityValue`: a named value of a state, event or link type.
    pub(super) fn define_value(&mut self, line: &Line, out: &mut Emitter) -> Result<(), String> {
        let t = self.type_of(line.get(Field::Type))?;
        let ty = &self.types[t as usize];
        if !matches!(ty.nature, Nature::State | Nature::EventType | Nature::Link) {
            return Err(format!(
                "values belong to state, event or link types; `{}` is a {} type",
                ty.id,
                ty.nature.as_str()
            ));
        }
        let id = identifier(line);
        if ty.values.contains_key(id) {
            return Err(format!("value `{id}` of type `{}` is defined twice", ty.id));
        }
        let peer = ty.sym;
        let name = self.syms.intern(line.get(Field::Name));
        let row = Row {
            id,
            name,
            cat: well_known::VALUE,
            peer,
            extras: Some(line),
            ..Row::new(Kind::Type)
        };
        let ticket = out.row(row, |r| {
            if !line.get(Field::Color).is_empty() {
                r.push_attr(ATTR_COLOR, line.get(Field::Color));
            }
        })?;
        let value = ValueDef {
            name,
            named_as_id: line.get(Field::Name) == id,
            decl: Some(ticket),
        };
        self.types[t as usize].values.insert(id.into(), value);
        self.values_defined += 1;
        Ok(())
    }

    /// Moves the declaration of type `t` (after its parent and, for a link
    /// type, its end types) before a use at `time`.
    pub(super) fn touch_type(&mut self, t: u32, time: i64, out: &mut Emitter) {
        let ty = &self.types[t as usize];
        // A link type's end types are container types, whose ancestors are
        // container types too: two levels, no recursion.
        if ty.nature == Nature::Link && ty.decl.is_some_and(|d| d.key > time) {
            let ends = ty.ends;
            self.touch_type_chain(ends.0, time, out);
            self.touch_type_chain(ends.1, time, out);
        }
        self.touch_type_chain(t, time, out);
    }

    /// Moves the declarations of type `t` and its ancestors that come after
    /// `time` before it, outermost first (walked in a loop: a hierarchy may be
    /// as deep as the trace makes it).
    #[inline]
    pub(super) fn touch_type_chain(&mut self, t: u32, time: i64, out: &mut Emitter) {
        // Most lines come after their type's declaration: nothing to move.
        if self.types[t as usize].decl.is_some_and(|d| d.key > time) {
            self.lower_type_chain(t, time, out);
        }
    }

    /// [`Sim::touch_type_chain`] once type `t`'s declaration is to move.
    #[cold]
    fn lower_type_chain(&mut self, t: u32, time: i64, out: &mut Emitter) {
        let mut chain = Vec::new();
        let mut at = t;
        // (The root type has no declaration row.)
        while let Some(d) = self.types[at as usize].decl.filter(|d| d.key > time) {
            chain.push((at, d));
            let parent = self.types[at as usize].parent;
            if parent == ROOT {
                break;
            }
            at = parent;
        }
        for &(t, d) in chain.iter().rev() {
            self.types[t as usize].decl = Some(out.queue.lower(d, time));
        }
    }

    /// Finds the value of `line` among those of type `t` (where the lexing
    /// job found it, else by its identifier) for a use at `time`: moves its
    /// declaration before the use and returns its position in the type's
    /// values (`None` for an undeclared value, which names itself).
    pub(super) fn use_value(
        &mut self,
        t: u32,
        line: &Line,
        time: i64,
        out: &mut Emitter,
    ) -> Option<usize> {
        let values = &mut self.types[t as usize].values;
        let at = match line.found.value {
            Some(at) => at as usize,
            None => values.get_index_of(line.get(Field::Value))?,
        };
        if let Some(d) = &mut values[at].decl {
            if d.key > time {
                *d = out.queue.lower(*d, time);
            }
        }
        Some(at)
    }

    /// The name of a value found by [`Sim::use_value`], and what the `value`
    /// column holds: the identifier when it differs from the name.
    pub(super) fn value_name<'a>(
        &mut self,
        t: u32,
        at: Option<usize>,
        value: &'a str,
    ) -> (Sym, &'a str) {
        match at {
            Some(at) => {
                let def = &self.types[t as usize].values[at];
                (def.name, if def.named_as_id { "" } else { value })
            }
            None => (self.syms.intern(value), ""),
        }
    }
}
