//! The hierarchy the Pajé file declares before use: container and entity
//! types (`PajeDefine*Type`), containers created on first use under the
//! owner their location names, and the stream's own `type` and
//! `container` rows.

use super::*;

impl PajeWriter {
    /// Defines a type unless known.
    pub(super) fn ensure_type(
        &mut self,
        id: Sym,
        nature: &'static str,
        parent: Sym,
        name: &str,
    ) -> Result<()> {
        if self.types.contains_key(&id) {
            return Ok(());
        }
        self.types.insert(id, nature);
        let event = match nature {
            "container" => Event::DefineContainerType,
            "state" => Event::DefineStateType,
            "event" => Event::DefineEventType,
            "variable" => Event::DefineVariableType,
            _ => Event::DefineLinkType,
        };
        let parent = if parent.is_empty() {
            well_known::ZERO
        } else {
            parent
        };
        if nature == "container" {
            self.type_parents.insert(id, parent);
        }
        let (id, parent) = (self.text(id).to_string(), self.text(parent).to_string());
        let (id, parent) = (id.as_str(), parent.as_str());
        let mut fields = vec![(Field::Alias, id), (Field::Type, parent)];
        if event == Event::DefineLinkType {
            fields.push((Field::StartContainerType, parent));
            fields.push((Field::EndContainerType, parent));
        }
        fields.push((Field::Name, name));
        self.line(event, &fields, &[])
    }

    /// The container and container type of `loc` (the lane's container for a
    /// lane; the root container for rows without a location).
    pub(super) fn owner(&self, loc: Sym) -> (Sym, Sym) {
        if loc.is_empty() {
            return (well_known::ZERO, well_known::ZERO);
        }
        match self.containers.get(&loc) {
            Some(ContainerEntry {
                lane_of: Some(parent),
                ..
            }) => {
                let t = self
                    .containers
                    .get(parent)
                    .map(|c| c.type_)
                    .unwrap_or_default();
                (self.pid(*parent), t)
            }
            Some(c) => (self.pid(loc), c.type_),
            None => (self.pid(loc), Sym::EMPTY),
        }
    }

    /// The id location `loc` is written under.
    pub(super) fn pid(&self, loc: Sym) -> Sym {
        self.renamed.get(&loc).copied().unwrap_or(loc)
    }

    /// The id for a new container `loc`: itself, except `0` (Pajé's root),
    /// written as `_0` (documented in docs/formats.md).
    pub(super) fn new_pid(&mut self, loc: Sym) -> Result<Sym> {
        if self.renamed.values().any(|&r| r == loc) {
            return Err(Error::Record(format!(
                "location `{}` is the id this writer gives location `0` (Pajé's root is `0`)",
                self.text(loc)
            )));
        }
        if loc != well_known::ZERO {
            return Ok(loc);
        }
        let id = self.symbols.intern("_0");
        if self.containers.contains_key(&id) {
            return Err(Error::Record(
                "location `0` would be written as `_0` (Pajé's root is `0`), which the stream uses too".into(),
            ));
        }
        self.renamed.insert(loc, id);
        Ok(id)
    }

    /// Declares `loc` as a placeholder container when the stream never did
    /// (a message's peer outside the trace): Pajé links need both ends.
    pub(super) fn ensure_container(&mut self, loc: Sym, time: &str) -> Result<()> {
        if loc.is_empty() || self.containers.contains_key(&loc) {
            return Ok(());
        }
        let undeclared = self.symbols.intern(UNDECLARED);
        self.ensure_type(undeclared, "container", well_known::ZERO, UNDECLARED)?;
        let id = self.new_pid(loc)?;
        self.containers.insert(
            loc,
            ContainerEntry {
                type_: undeclared,
                lane_of: None,
                declared: Default::default(),
            },
        );
        let id = self.text(id).to_string();
        let fields = [
            (Field::Time, time),
            (Field::Type, UNDECLARED),
            (Field::Container, "0"),
            (Field::Name, id.as_str()),
        ];
        self.line(Event::CreateContainer, &fields, &[])
    }

    /// The type of entity rows: the row's `cat` when it names a type of the
    /// right nature, else a type made for its container type.
    pub(super) fn entity_type(
        &mut self,
        rec: &Record,
        nature: &'static str,
        ctype: Sym,
    ) -> Result<Sym> {
        if self.types.get(&rec.cat).is_some_and(|n| *n == nature) {
            return Ok(rec.cat);
        }
        let ctype_text = self.text(ctype);
        let (id, name) = match nature {
            "state" => (format!("{ctype_text}.state"), "State"),
            "event" => (format!("{ctype_text}.event"), "Event"),
            "variable" => (
                format!("{ctype_text}.var.{}", self.text(rec.name)),
                self.text(rec.name),
            ),
            _ => (format!("{ctype_text}.link"), "Link"),
        };
        let name = name.to_string();
        let id = self.symbols.intern(&id);
        self.ensure_type(id, nature, ctype, &name)?;
        Ok(id)
    }

    pub(super) fn container(&mut self, rec: &Record) -> Result<()> {
        let declared = (rec.cat, rec.peer, rec.name);
        if let Some(old) = self.containers.get(&rec.loc) {
            if old.declared == declared {
                return Ok(()); // The same declaration again (merged inputs).
            }
            return Err(Error::Record(format!(
                "location `{}` is declared again with another type, parent or name; a Pajé container is created once",
                self.text(rec.loc)
            )));
        }
        let entry = |type_: Sym, lane_of: Option<Sym>| ContainerEntry {
            type_,
            lane_of,
            declared,
        };
        if rec.loc == well_known::ZERO && rec.cat == well_known::ZERO {
            // Pajé's root container: implicit in a Pajé file.
            self.containers
                .insert(rec.loc, entry(well_known::ZERO, None));
            return Ok(());
        }
        if rec.cat == LANE {
            self.containers
                .insert(rec.loc, entry(Sym::EMPTY, Some(rec.peer)));
            return Ok(());
        }
        let id = self.new_pid(rec.loc)?;
        let type_ = self.container_type(rec)?;
        self.containers.insert(rec.loc, entry(type_, None));
        let name = if rec.name.is_empty() { id } else { rec.name };
        let time = seconds(rec.time.unwrap_or(0));
        let parent = if rec.peer.is_empty() {
            well_known::ZERO
        } else {
            self.pid(rec.peer)
        };
        let symbols = self.symbols.clone();
        let text = |sym| symbols.text(sym);
        let mut fields = vec![(Field::Time, time.as_str())];
        if id != name {
            fields.push((Field::Alias, text(id)));
        }
        fields.extend([
            (Field::Type, text(type_)),
            (Field::Container, text(parent)),
            (Field::Name, text(name)),
        ]);
        let filename = rec.attr("paje.filename");
        if let Some(f) = &filename {
            fields.push((Field::Filename, f));
        }
        self.line(Event::CreateContainer, &fields, &Self::extras(rec))
    }

    /// The container type of a new container: its `cat` when that names a
    /// container type whose parent is the parent container's type, else a
    /// type made for it below that type (`a` under `a.b` becomes `a.b.a`).
    pub(super) fn container_type(&mut self, rec: &Record) -> Result<Sym> {
        let parent_type = self
            .containers
            .get(&rec.peer)
            .map(|c| c.type_)
            .filter(|t| !t.is_empty())
            .unwrap_or(well_known::ZERO);
        let fits = |t: Sym| self.type_parents.get(&t).is_some_and(|p| *p == parent_type);
        if self.types.get(&rec.cat).is_some_and(|n| *n == "container") && fits(rec.cat) {
            return Ok(rec.cat);
        }
        let base = if rec.cat.is_empty() {
            "container"
        } else {
            self.text(rec.cat)
        };
        let id = if parent_type == well_known::ZERO {
            base.to_string()
        } else {
            format!("{}.{base}", self.text(parent_type))
        };
        let name = base.to_string();
        let id = self.symbols.intern(&id);
        self.ensure_type(id, "container", parent_type, &name)?;
        Ok(id)
    }

    pub(super) fn type_row(&mut self, rec: &Record) -> Result<()> {
        let nature = match self.text(rec.cat) {
            "container" => "container",
            "state" => "state",
            "event" => "event",
            "variable" => "variable",
            "link" => "link",
            "value" => "value",
            other => {
                self.warnings.warn(format!(
                    "type `{}` of unknown nature `{other}` left out",
                    rec.id
                ));
                return Ok(());
            }
        };
        let id = self.symbols.intern(&rec.id);
        // Values are named per type; only types go into the lookup.
        if nature != "value" {
            self.types.insert(id, nature);
        }
        if nature == "container" {
            let parent = if rec.peer.is_empty() {
                well_known::ZERO
            } else {
                rec.peer
            };
            self.type_parents.insert(id, parent);
        }
        let event = match nature {
            "container" => Event::DefineContainerType,
            "state" => Event::DefineStateType,
            "event" => Event::DefineEventType,
            "variable" => Event::DefineVariableType,
            "link" => Event::DefineLinkType,
            _ => Event::DefineEntityValue,
        };
        let symbols = self.symbols.clone();
        let parent = if rec.peer.is_empty() {
            "0"
        } else {
            symbols.text(rec.peer)
        };
        let name = symbols.text(rec.name);
        let mut fields = Vec::new();
        if rec.id != name {
            fields.push((Field::Alias, rec.id.as_str()));
        }
        fields.push((Field::Type, parent));
        let (start, end, color) = (
            rec.attr(ATTR_START_TYPE),
            rec.attr(ATTR_END_TYPE),
            rec.attr(ATTR_COLOR),
        );
        if event == Event::DefineLinkType {
            fields.push((
                Field::StartContainerType,
                start.as_deref().unwrap_or(parent),
            ));
            fields.push((Field::EndContainerType, end.as_deref().unwrap_or(parent)));
        }
        fields.push((Field::Name, name));
        if let Some(c) = &color {
            fields.push((Field::Color, c));
        }
        self.line(event, &fields, &Self::extras(rec))
    }
}
