//! Messages and halves as Pajé links: a `PajeStartLink` and a
//! `PajeEndLink` with one key, halves of foreign traces paired by their
//! channel first.

use super::*;

impl PajeWriter {
    /// Message halves and messages as `PajeStartLink`/`PajeEndLink`.
    ///
    /// Pajé halves (keyed, in a link container) map back as they were. Other
    /// messages become links in the root container, of a link type per pair of
    /// end container types, keyed so the k-th send of a channel
    /// `(comm, sender, receiver, tag)` pairs with its k-th receive. Both halves
    /// of a link carry the value of the first one written; a second half
    /// named otherwise keeps its name in the user field `half_name`.
    /// Writes a half as it comes, and a message or dependency when it
    /// completes, both ends at once: Pajé readers check time order per
    /// container and type, and link completions in completion order, which
    /// is the stream's (a start earlier than lines of other types already
    /// written is in order). Memory: the halves in flight.
    pub(super) fn link(&mut self, rec: &Record) -> Result<()> {
        let link = self.link_lines(rec)?;
        for half in &link.halves {
            self.write_half(&link, half)?;
        }
        Ok(())
    }

    /// What a message half, message or dependency becomes: its link
    /// container, type, key, value, user fields and the halves to write.
    pub(super) fn link_lines(&mut self, rec: &Record) -> Result<LinkLines> {
        let native = rec.tag.is_none()
            && !rec.comm.is_empty()
            && self.types.get(&rec.cat).is_some_and(|n| *n == "link");
        let (container, type_, key) = if native {
            (self.pid(rec.comm), rec.cat, rec.id.clone())
        } else {
            self.foreign_link(rec)?
        };
        let symbols = self.symbols.clone();
        let mut extras = Self::extras(rec);
        if !native {
            let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
            let size = rec.size.map(|t| t.to_string()).unwrap_or_default();
            for (k, v) in [
                ("comm", symbols.text(rec.comm)),
                ("tag", tag.as_str()),
                ("size", size.as_str()),
                ("id", rec.id.as_str()),
            ] {
                push_extra(&mut extras, k, v);
            }
            if rec.kind == Kind::Dep {
                push_extra(&mut extras, "type", symbols.text(rec.cat));
            }
        }
        let own = value_of(&self.symbols, rec).to_string();
        let value = match rec.kind {
            Kind::Msg | Kind::Dep => own.clone(),
            _ => self.pair_half(rec, (container, type_, &key), &own)?,
        };
        if value != own {
            push_extra(&mut extras, "half_name", &own);
        }
        let end = |loc: Sym| {
            if loc.is_empty() {
                well_known::ZERO
            } else {
                self.pid(loc)
            }
        };
        let (loc, peer) = (end(rec.loc), end(rec.peer));
        let (start, stop) = (rec.time.unwrap_or(0), rec.end.unwrap_or(0));
        let halves = match rec.kind {
            Kind::Send => vec![(Event::StartLink, start, loc)],
            Kind::Recv => vec![(Event::EndLink, start, loc)],
            // Msg and Dep: both ends.
            _ => vec![(Event::StartLink, start, loc), (Event::EndLink, stop, peer)],
        };
        Ok(LinkLines {
            container,
            type_,
            key,
            value,
            extras,
            halves,
        })
    }

    pub(super) fn write_half(&mut self, link: &LinkLines, half: &(Event, i64, Sym)) -> Result<()> {
        let (event, t, end) = half;
        let time = seconds(*t);
        let end_field = if *event == Event::StartLink {
            Field::StartContainer
        } else {
            Field::EndContainer
        };
        let symbols = self.symbols.clone();
        let fields = [
            (Field::Time, time.as_str()),
            (Field::Container, symbols.text(link.container)),
            (Field::Type, symbols.text(link.type_)),
            (end_field, symbols.text(*end)),
            (Field::Value, link.value.as_str()),
            (Field::Key, link.key.as_str()),
        ];
        self.line(*event, &fields, &link.extras)
    }

    /// The link container, link type and key of a message half or message
    /// that did not come from Pajé; declares its ends when the stream never
    /// did (a peer outside the trace).
    pub(super) fn foreign_link(&mut self, rec: &Record) -> Result<(Sym, Sym, String)> {
        let (sender, receiver) = match rec.kind {
            Kind::Recv => (rec.peer, rec.loc),
            _ => (rec.loc, rec.peer),
        };
        let time = seconds(rec.time.unwrap_or(0));
        self.ensure_container(sender, &time)?;
        self.ensure_container(receiver, &time)?;
        // An end without a location (a TRACE event) is the root container.
        let (_, st) = self.owner(sender);
        let (_, rt) = self.owner(receiver);
        // Messages and dependencies are written at the end: types of their own.
        let suffix = match rec.kind {
            Kind::Msg => ".msg",
            Kind::Dep => ".dep",
            _ => "",
        };
        let symbols = self.symbols.clone();
        let text = |sym| symbols.text(sym);
        let id_text = format!("{}->{}{suffix}", text(st), text(rt));
        let id = symbols.intern(&id_text);
        let new = match self.types.entry(id) {
            Entry::Vacant(slot) => {
                slot.insert("link");
                true
            }
            Entry::Occupied(_) => false,
        };
        if new {
            let fields = [
                (Field::Alias, id_text.as_str()),
                (Field::Type, "0"),
                (Field::StartContainerType, text(st)),
                (Field::EndContainerType, text(rt)),
                (Field::Name, id_text.as_str()),
            ];
            self.line(Event::DefineLinkType, &fields, &[])?;
        }
        let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
        let channel = format!(
            "{}/{}/{}/{tag}",
            text(rec.comm),
            text(sender),
            text(receiver)
        );
        let counter = self.channels.entry(channel.clone()).or_default();
        let (n, suffix) = match rec.kind {
            Kind::Send => (&mut counter.0, ""),
            Kind::Recv => (&mut counter.1, ""),
            _ => (&mut counter.2, "msg"),
        };
        *n += 1;
        let key = format!("{channel}/{suffix}{n}");
        Ok((well_known::ZERO, id, key))
    }

    /// Pairs a half with the open one of its key and returns the value both
    /// carry (the first one's), or opens the key. Memory: the halves in
    /// flight.
    pub(super) fn pair_half(
        &mut self,
        rec: &Record,
        at: (Sym, Sym, &str),
        own: &str,
    ) -> Result<String> {
        let start = rec.kind == Kind::Send;
        let key = (at.0, at.1, at.2.to_string());
        match self.open_links.remove(&key) {
            Some(open) if open.start != start => Ok(open.value),
            Some(open) => Err(Error::Record(format!(
                "a second {} of link key `{}` while the first ({}) has no other half: a Pajé key links one start to one end",
                rec.kind.with_article(),
                at.2,
                open.what
            ))),
            None => {
                let what = format!(
                    "{} on `{}` at {} s, key `{}`",
                    rec.kind.with_article(),
                    self.text(rec.loc),
                    seconds(rec.time.unwrap_or(0)),
                    at.2
                );
                let value = own.to_string();
                let time = rec.time.unwrap_or(0);
                let open = OpenLink { start, time, value: value.clone(), what };
                self.open_links.insert(key, open);
                Ok(value)
            }
        }
    }
}
