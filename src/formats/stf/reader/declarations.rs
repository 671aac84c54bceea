//! The index and the declarations: record definitions, the clock, the
//! components and their anchors, and the declared names (willies,
//! strings, classes, functions, communicators), read once into [`Trace`];
//! and the declaration records that are not tables, as rows.

use super::*;

/// The next record id of a component whose definitions were read already
/// (they are stepped over); `None` at the end.
fn next_defined_id(feed: &mut Feed) -> Result<Option<(u64, u8)>> {
    loop {
        if feed.at_end() {
            return Ok(None);
        }
        let at = feed.offset();
        let id = feed.scalar(Scalar::U1, "record id")? as u8;
        if id != DEFINE_RECORD {
            return Ok(Some((at, id)));
        }
        feed.scalar(Scalar::U1, "defined id")?;
        let len = feed.scalar(Scalar::U2, "specifier length")? as usize;
        feed.take(len, "specifier")?;
    }
}

impl DeclaredRows {
    pub(super) fn new(set: &FileSet, trace: Arc<Trace>, syms: SymCache) -> Result<DeclaredRows> {
        let mut feeds = Vec::new();
        for (suffix, at, kind, tables) in [
            (single::INDEX, 0, Component::Index, INDEX_TABLES),
            ("", 0, Component::Declarations, DECLARATION_TABLES),
        ] {
            let found = trace.components.iter().find(|c| c.2 == kind);
            let (suffix, at) = match (kind, found) {
                (Component::Index, _) => (suffix, at),
                (_, Some(c)) => (c.1.as_str(), c.3),
                (_, None) => continue,
            };
            let mut feed = set.component(suffix, at)?;
            check_header(&mut feed, kind)?;
            feeds.push((feed, tables));
        }
        feeds.reverse();
        Ok(DeclaredRows {
            trace,
            feeds,
            values: Values::default(),
            syms,
            at: 0,
        })
    }
}

impl RecordSource for DeclaredRows {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        let trace = &self.trace;
        while let Some((feed, tables)) = self.feeds.last_mut() {
            let Some((at, id)) = next_defined_id(feed)? else {
                self.feeds.pop();
                continue;
            };
            let layout = trace.layout(feed, at, id)?;
            feed.decode(layout, &mut self.values)?;
            if trace.known[id as usize] && tables.contains(&layout.class.as_str()) {
                continue;
            }
            self.at = at;
            trace.generic_row(feed, at, layout, &self.values, 0, rec, &mut self.syms)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn mark(&self) -> u64 {
        self.at
    }

    fn locate(&self, mark: u64) -> Location {
        let file = match self.feeds.last() {
            Some((feed, _)) => feed.name().to_string(),
            None => "<declarations>".to_string(),
        };
        Location::Offset { file, offset: mark }
    }

    /// Records of the declarations, of any time.
    fn horizon(&self) -> Option<i64> {
        None
    }
}

impl Trace {
    pub(super) fn read(set: &FileSet) -> Result<Trace> {
        let mut trace = Trace {
            layouts: vec![None; FIRST_RESERVED as usize],
            known: vec![false; FIRST_RESERVED as usize],
            ..Trace::default()
        };
        let mut index = set.component(single::INDEX, 0)?;
        check_header(&mut index, Component::Index)?;
        let mut values = Values::default();
        while let Some((at, id)) = trace.next_id(&mut index)? {
            let layout = trace.layout(&index, at, id)?.clone();
            index.decode(&layout, &mut values)?;
            if trace.known[id as usize] {
                let taken = trace.absorb_index(&index, at, &layout, &values)?;
                debug_assert_eq!(taken, INDEX_TABLES.contains(&layout.class.as_str()));
            }
        }
        let &(_, ref dcl, _, declared_at) = trace
            .components
            .iter()
            .find(|c| c.2 == Component::Declarations)
            .ok_or_else(|| {
                index.error_at(
                    index.offset(),
                    "the index ends without declaring a declaration file (a `file_declaration` of kind 1)",
                )
            })?;
        let mut feed = set.component(&dcl.clone(), declared_at)?;
        check_header(&mut feed, Component::Declarations)?;
        while let Some((at, id)) = trace.next_id(&mut feed)? {
            let layout = trace.layout(&feed, at, id)?.clone();
            feed.decode(&layout, &mut values)?;
            if trace.known[id as usize] {
                let taken = trace.absorb_declaration(&feed, at, &layout, &values)?;
                debug_assert_eq!(taken, DECLARATION_TABLES.contains(&layout.class.as_str()));
            }
        }
        Ok(trace)
    }

    /// The next record id, reading definitions on the way; `None` at the end.
    pub(super) fn next_id(&mut self, feed: &mut Feed) -> Result<Option<(u64, u8)>> {
        loop {
            if feed.at_end() {
                return Ok(None);
            }
            let at = feed.offset();
            let id = feed.scalar(Scalar::U1, "record id")? as u8;
            match id {
                DEFINE_RECORD => self.define(feed, at)?,
                FILE_HEADER => {
                    return Err(feed.error_at(at, "a second file header inside the file"))
                }
                id if id >= FIRST_RESERVED => {
                    return Err(
                        feed.error_at(at, format!("record id {id:#04x} is reserved (0xEA-0xFD)"))
                    )
                }
                id => return Ok(Some((at, id))),
            }
        }
    }

    pub(super) fn define(&mut self, feed: &mut Feed, at: u64) -> Result<()> {
        let id = feed.scalar(Scalar::U1, "defined id")? as u8;
        let len = feed.scalar(Scalar::U2, "specifier length")? as usize;
        let text = String::from_utf8_lossy(feed.take(len, "specifier")?).into_owned();
        if id >= FIRST_RESERVED {
            return Err(feed.error_at(at, format!("defines reserved id {id:#04x}")));
        }
        let layout = Layout::parse(&text)
            .map_err(|e| feed.error_at(at, format!("bad specifier {text:?}: {e}")))?;
        match &self.layouts[id as usize] {
            Some(old) if **old != layout => {
                Err(feed.error_at(at, format!("redefines record id {id} differently")))
            }
            _ => {
                self.known[id as usize] = catalogue().contains(&layout);
                self.layouts[id as usize] = Some(Arc::new(layout));
                Ok(())
            }
        }
    }

    pub(super) fn layout(&self, feed: &Feed, at: u64, id: u8) -> Result<&Arc<Layout>> {
        self.layouts[id as usize].as_ref().ok_or_else(|| {
            feed.error_at(
                at,
                format!("record id {id} is not defined (no define_record before it)"),
            )
        })
    }

    /// Takes an index record in; false for records the index has no use
    /// for (they become rows).
    pub(super) fn absorb_index(
        &mut self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        v: &Values,
    ) -> Result<bool> {
        let text = |i: usize| String::from_utf8_lossy(v.text(i)).into_owned();
        match layout.class.as_str() {
            "clock_resolution" => {
                let period =
                    f64::from_bits(v.slots[0]) / 2f64.powi(v.slots[1].min(63) as i32) * 1e9;
                if !(period.is_finite() && period > 0.0) {
                    return Err(feed.error_at(at, "the clock resolution is not a positive number"));
                }
                self.ns_per_tick = (period != 1.0).then_some(period);
            }
            "file_declaration" => {
                let kind = Component::from_code(v.slots[1] as u8).ok_or_else(|| {
                    feed.error_at(at, format!("unknown component kind {}", v.slots[1]))
                })?;
                let (id, suffix) = (v.slots[0] as u32, text(3));
                if self.components.iter().any(|c| c.0 == id || c.1 == suffix) {
                    return Err(feed.error_at(
                        at,
                        format!("component {id} (`{suffix}`) is declared a second time: its rows would be read twice"),
                    ));
                }
                self.components.push((id, suffix, kind, at));
            }
            "tracepipe_meta" => self.absorb_meta(feed, at, text(1), text(3))?,
            "anchor_file_declaration" => {
                let (anchors, data) = (v.slots[0] as u32, v.slots[1] as u32);
                if self.anchor_files.insert(data, (anchors, at)).is_some() {
                    return Err(feed.error_at(
                        at,
                        format!("data file {data} is given a second anchor file"),
                    ));
                }
            }
            // The span is the rows' own.
            "duration" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A `tracepipe_meta` record: the stream's rules for meta rows hold
    /// here, at the record's offset.
    pub(super) fn absorb_meta(
        &mut self,
        feed: &Feed,
        at: u64,
        name: String,
        value: String,
    ) -> Result<()> {
        if name == "format" && self.metas.iter().any(|(n, _)| *n == name) {
            return Err(feed.error_at(at, "a second `format` meta"));
        }
        if name == "format" {
            check_format(&value).map_err(|msg| feed.error_at(at, msg))?;
        }
        if name == "origin" && value.parse::<i64>().is_err() {
            return Err(feed.error_at(
                at,
                format!("meta `origin` must be integer ns since the Unix epoch, found `{value}`"),
            ));
        }
        self.metas.push((name, value));
        Ok(())
    }

    /// The anchors of anchor file `id`, declared at byte `declared_at` of
    /// the index: (time before, offset), offsets increasing.
    pub(super) fn anchors(
        &self,
        set: &FileSet,
        id: u32,
        declared_at: u64,
    ) -> Result<Vec<(u64, u64)>> {
        let (_, suffix, _, at) = self.components.iter().find(|c| c.0 == id).ok_or_else(|| {
            Error::offset(
                &set.index_name(),
                declared_at,
                format!("anchor file {id} is not declared by a `file_declaration`"),
            )
        })?;
        let mut feed = set.component(suffix, *at)?;
        check_header(&mut feed, Component::Anchors)?;
        let mut values = Values::default();
        let mut anchors: Vec<(u64, u64)> = Vec::new();
        while let Some((at, rid)) = next_data_id(&mut feed)? {
            let layout = self.layout(&feed, at, rid)?;
            feed.decode(layout, &mut values)?;
            if !self.known[rid as usize] || layout.class != "anchor" {
                return Err(feed.error_at(at, format!("`{}` in an anchor file", layout.class)));
            }
            let (time, offset) = (values.slots[0], values.slots[1]);
            if anchors.last().is_some_and(|(_, o)| *o >= offset) {
                return Err(feed.error_at(at, "anchor offsets do not increase"));
            }
            anchors.push((time, offset));
        }
        Ok(anchors)
    }

    /// Takes a declaration into the tables; false for other records. An id
    /// declared twice is an error: which of the two was meant is unknown.
    pub(super) fn absorb_declaration(
        &mut self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        v: &Values,
    ) -> Result<bool> {
        let s = &v.slots;
        let id = s.first().copied().unwrap_or(0) as u32;
        let text = |i: usize| String::from_utf8_lossy(v.text(i)).into_owned();
        let again = match layout.class.as_str() {
            "stf_string" => self.strings.insert(id, text(2)).is_some(),
            "class_definition" => self.classes.insert(id, s[1] as u32).is_some(),
            "function_definition" => {
                let function = (s[1] as u32, s[2] as u32);
                self.functions.insert(id, function).is_some()
            }
            "willy_name" => self.willies.insert(id, s[1] as u32).is_some(),
            "communicator_definition" => {
                let members = Members::new(v.array(4), v.array(5), v.array(6));
                self.comms.insert(id, (text(2), members)).is_some()
            }
            "scope_definition" => {
                let fields = (s[1] as u32, s[2] as u32, s[3] as u32, s[4] as u32);
                self.scopes.insert(id, fields).is_some()
            }
            "collective_operation_definition" => self.ops.insert(id, text(2)).is_some(),
            "counter_definition" => {
                let counter = (s[1] as u32, s[2] as u8, s[7] as u32, text(9));
                self.counters.insert(id, counter).is_some()
            }
            _ => return Ok(false),
        };
        if again {
            return Err(feed.error_at(
                at,
                format!("`{}` {id} is declared a second time", layout.class),
            ));
        }
        Ok(true)
    }

    /// The meta rows.
    pub(super) fn meta_rows(&self, source: &str, symbols: &Symbols) -> Vec<Record> {
        let mut rows = Vec::new();
        let meta = |k: &str, v: &str| Record::meta(symbols.intern(k), v);
        let stored = |k: &str| self.metas.iter().any(|(n, _)| n == k);
        if !stored("source_format") {
            rows.push(meta("source_format", "stf"));
        }
        rows.push(meta("source", source));
        if !stored("time_unit") {
            let unit = match self.ns_per_tick {
                None => "ns".to_string(),
                Some(p) => format!("ticks@{}", 1e9 / p),
            };
            rows.push(meta("time_unit", &unit));
        }
        for (k, v) in self.metas.iter().filter(|(k, _)| k != "source") {
            rows.push(meta(k, v));
        }
        rows
    }
}
