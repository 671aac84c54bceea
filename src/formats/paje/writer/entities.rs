//! Frames, events, counters and signals as Pajé states, events and
//! variables; rows with an extent (`state`, `claim`, `coll`) as a push and
//! a pop each, written when they come.

use super::*;

/// A lane of a location's rows with an extent: its state type, made when
/// the lane is, and the end of its last row.
pub(super) struct Lane {
    ty: Sym,
    last: i64,
}

impl PajeWriter {
    /// Counts the open states of `type_` in `container`: false for a pop
    /// the reader makes by itself (flag `S`), an error for a pop of nothing.
    pub(super) fn track_depth(&mut self, rec: &Record, container: Sym, type_: Sym) -> Result<bool> {
        let depth = self.depths.entry((container, type_)).or_default();
        if rec.kind == Kind::Enter {
            *depth += 1;
            return Ok(true);
        }
        if *depth == 0 {
            return Err(Error::Record(format!(
                "a `leave` on `{}` with no open frame: Pajé cannot pop an empty stack",
                self.symbols.text(rec.loc)
            )));
        }
        *depth -= 1;
        Ok(!rec.flags.contains(flags::SYNTHETIC))
    }

    /// An event: of its `cat` type when that is a Pajé event type (a stream
    /// read from Pajé), else of a type made for its container type, its name
    /// as the value and its value and category in user fields.
    pub(super) fn event(&mut self, rec: &Record) -> Result<()> {
        let (container, ctype) = self.owner(rec.loc);
        let native = self.types.get(&rec.cat).is_some_and(|n| *n == "event");
        let type_ = self.entity_type(rec, "event", ctype)?;
        let time = seconds(rec.time.unwrap_or(0));
        let mut extras = Self::extras(rec);
        let symbols = self.symbols.clone();
        let value = if native {
            value_of(&symbols, rec)
        } else {
            push_extra(&mut extras, "value", &rec.value);
            push_extra(&mut extras, "category", symbols.text(rec.cat));
            symbols.text(rec.name)
        };
        let fields = [
            (Field::Time, time.as_str()),
            (Field::Container, symbols.text(container)),
            (Field::Type, symbols.text(type_)),
            (Field::Value, value),
        ];
        self.line(Event::NewEvent, &fields, &extras)
    }

    /// A counter sample as a set, add or sub of a variable; an add or sub
    /// that would come first (a stream cut after the set) is written as the
    /// set of the value it gives.
    pub(super) fn counter(&mut self, rec: &Record) -> Result<()> {
        let (container, ctype) = self.owner(rec.loc);
        let type_ = self.entity_type(rec, "variable", ctype)?;
        let first = self.variables.insert((container, type_));
        let (event, value) = match (rec.attr(ATTR_OP).as_deref(), rec.attr(ATTR_OPERAND)) {
            (Some("add"), Some(x)) if !first => (Event::AddVariable, x),
            (Some("sub"), Some(x)) if !first => (Event::SubVariable, x),
            _ => (Event::SetVariable, rec.value.clone()),
        };
        if Decimal::parse(&value).is_none() {
            return Err(Error::Record(format!(
                "counter `{}` has the value `{value}`: a Pajé variable holds numbers",
                self.text(rec.name)
            )));
        }
        let at = (rec.time.unwrap_or(0), container, type_);
        self.variable_line(event, at, &value, &Self::extras(rec))
    }

    /// A set, add or sub line of variable `type_` in `container` at `time`.
    pub(super) fn variable_line(
        &mut self,
        event: Event,
        (time, container, type_): (i64, Sym, Sym),
        value: &str,
        extras: &[(String, String)],
    ) -> Result<()> {
        let time = seconds(time);
        let symbols = self.symbols.clone();
        let fields = [
            (Field::Time, time.as_str()),
            (Field::Container, symbols.text(container)),
            (Field::Type, symbols.text(type_)),
            (Field::Value, value),
        ];
        self.line(event, &fields, extras)
    }

    /// A signal fragment as a set of a variable at its start to its
    /// constant term, its columns and end in the marks of
    /// [`super::super::extent`] (the reader makes the fragment again).
    pub(super) fn signal(&mut self, rec: &Record) -> Result<()> {
        let (container, ctype) = self.owner(rec.loc);
        let named = Record {
            name: if rec.name.is_empty() {
                well_known::VALUE
            } else {
                rec.name
            },
            cat: Sym::EMPTY,
            ..rec.clone()
        };
        let type_ = self.entity_type(&named, "variable", ctype)?;
        let value = rec.attr("c").unwrap_or_else(|| "0".to_string());
        if Decimal::parse(&value).is_none() {
            return Err(Error::Record(format!(
                "signal `{}` has the coefficient c = `{value}`: a Pajé variable holds numbers",
                self.text(rec.loc)
            )));
        }
        let fields = marked_fields(&self.symbols, rec);
        let at = (rec.time.unwrap_or(0), container, type_);
        self.variable_line(Event::SetVariable, at, &value, &fields)
    }

    /// A row with an extent (`state`, `claim`, `coll`) as a push and a pop
    /// of a state type of its own, written at once (the row comes when it
    /// completes), on the first lane of its container and kind that is free
    /// at its start. The push carries the row's columns in the user fields
    /// of [`super::super::extent`], so the reader makes the row again.
    pub(super) fn interval(&mut self, rec: &Record) -> Result<()> {
        let (a, b) = (rec.time.unwrap_or(0), rec.end.unwrap_or(0));
        let (start, end) = (a.min(b), a.max(b));
        let (container, ctype) = self.owner(rec.loc);
        let lanes = self.lanes.entry((rec.loc, rec.kind)).or_default();
        let id = match lanes.iter_mut().find(|lane| lane.last <= start) {
            Some(lane) => {
                lane.last = end;
                lane.ty
            }
            None => {
                let n = lanes.len();
                let id = format!("{}.{}{n}", self.symbols.text(ctype), rec.kind.as_str());
                let id = self.symbols.intern(&id);
                lanes.push(Lane { ty: id, last: end });
                self.ensure_type(id, "state", ctype, &format!("{} {n}", rec.kind.as_str()))?;
                id
            }
        };
        let symbols = self.symbols.clone();
        let (container, id) = (symbols.text(container), symbols.text(id));
        let (start, end) = (seconds(start), seconds(end));
        let value = extent::state_value(&symbols, rec);
        let fields = [
            (Field::Time, start.as_str()),
            (Field::Container, container),
            (Field::Type, id),
            (Field::Value, value.as_ref()),
        ];
        self.line(Event::PushState, &fields, &marked_fields(&symbols, rec))?;
        let fields = [
            (Field::Time, end.as_str()),
            (Field::Container, container),
            (Field::Type, id),
        ];
        self.line(Event::PopState, &fields, &[])
    }
}

/// The user fields of a row's marked line: its columns as the marks of
/// [`super::super::extent`] (those not empty; a signal's end), then its
/// attributes.
fn marked_fields(symbols: &Symbols, rec: &Record) -> Vec<(String, String)> {
    let end = match (rec.kind, rec.end) {
        (Kind::Signal, Some(end)) => seconds(end),
        _ => String::new(),
    };
    let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
    let size = rec.size.map(|s| s.to_string()).unwrap_or_default();
    let columns = [
        (extent::KIND, rec.kind.as_str()),
        (extent::CAT, symbols.text(rec.cat)),
        (extent::NAME, symbols.text(rec.name)),
        (extent::VALUE, rec.value.as_str()),
        (extent::ID, rec.id.as_str()),
        (extent::PEER, symbols.text(rec.peer)),
        (extent::COMM, symbols.text(rec.comm)),
        (extent::TAG, tag.as_str()),
        (extent::SIZE, size.as_str()),
        (extent::END, end.as_str()),
    ];
    let mut fields: Vec<(String, String)> = columns
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in PajeWriter::extras(rec) {
        if !extent::ALL.contains(&k.as_str()) {
            fields.push((k, v));
        }
    }
    fields
}
