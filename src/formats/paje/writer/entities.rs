//! Frames, events, counters and signals as Pajé states, events and
//! variables; `state` rows (intervals) held and written as push and pop
//! lines in time order.

use super::*;

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
    /// constant term; its end, slope and curvature go in user fields.
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
        let mut extras = Self::extras(rec);
        let end = rec.end.map(seconds).unwrap_or_default();
        push_extra(&mut extras, "end", &end);
        let at = (rec.time.unwrap_or(0), container, type_);
        self.variable_line(Event::SetVariable, at, &value, &extras)
    }

    pub(super) fn hold(&mut self, rec: &Record) {
        let mut extras = Self::extras(rec);
        let symbols = self.symbols.clone();
        for (k, v) in [
            ("kind", rec.kind.as_str()),
            ("cat", symbols.text(rec.cat)),
            ("id", rec.id.as_str()),
            ("peer", symbols.text(rec.peer)),
        ] {
            push_extra(&mut extras, k, v);
        }
        // A viewer colours states by value: the name, else the first user
        // attribute's value (a TRACE claim's `stage`), else the kind.
        let first_user_attr = rec.attrs().find(|(k, _)| !prefix::is_format_field(k));
        let value = match (rec.name, first_user_attr) {
            (name, _) if !name.is_empty() => symbols.text(name).to_string(),
            (_, Some((_, v))) if !v.is_empty() => v.into_owned(),
            _ => rec.kind.as_str().to_string(),
        };
        let (a, b) = (rec.time.unwrap_or(0), rec.end.unwrap_or(0));
        self.intervals.push(Interval {
            start: a.min(b),
            end: a.max(b),
            loc: rec.loc,
            kind: rec.kind,
            value,
            extras,
        });
    }

    /// Writes the held intervals as states, each on the first lane (state
    /// type) of its container where it overlaps nothing.
    pub(super) fn write_intervals(&mut self) -> Result<()> {
        let mut intervals = std::mem::take(&mut self.intervals);
        intervals.sort_by_key(|i| (i.start, i.end));
        // Per location and kind, the end of the last interval on each lane.
        let mut lanes: FastMap<(Sym, Kind), Vec<i64>> = FastMap::default();
        // (time, order at that time, interval, container, state type); at one
        // instant: ends of intervals that began earlier, then starts, then the
        // ends of empty intervals.
        let mut events: Vec<(i64, u8, usize, Sym, Sym)> = Vec::new();
        for (n, iv) in intervals.iter().enumerate() {
            let free = lanes.entry((iv.loc, iv.kind)).or_default();
            // An empty interval ends after the starts at its instant, so a lane
            // it used is free only after that instant.
            let fits = |end: i64| end < iv.start || (end == iv.start && iv.start < iv.end);
            let lane = match free.iter().position(|&end| fits(end)) {
                Some(l) => {
                    free[l] = iv.end;
                    l
                }
                None => {
                    free.push(iv.end);
                    free.len() - 1
                }
            };
            let (container, ctype) = self.owner(iv.loc);
            let id = format!("{}.{}{lane}", self.text(ctype), iv.kind.as_str());
            let id = self.symbols.intern(&id);
            let name = format!("{} {lane}", iv.kind.as_str());
            self.ensure_type(id, "state", ctype, &name)?;
            events.push((iv.start, 1, n, container, id));
            events.push((
                iv.end,
                if iv.end > iv.start { 0 } else { 2 },
                n,
                container,
                id,
            ));
        }
        events.sort_by_key(|e| (e.0, e.1));
        let symbols = self.symbols.clone();
        for (t, order, n, container, id) in events {
            let time = seconds(t);
            let iv = &intervals[n];
            let (container, id) = (symbols.text(container), symbols.text(id));
            if order == 1 {
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container),
                    (Field::Type, id),
                    (Field::Value, iv.value.as_str()),
                ];
                let extras = iv.extras.clone();
                self.line(Event::PushState, &fields, &extras)?;
            } else {
                let fields = [
                    (Field::Time, time.as_str()),
                    (Field::Container, container),
                    (Field::Type, id),
                ];
                self.line(Event::PopState, &fields, &[])?;
            }
        }
        Ok(())
    }
}
