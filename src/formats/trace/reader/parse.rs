//! Reading a TRACE file: the header (offset, unit, attributes), then each
//! line by its first word (resources, signals, events, claims,
//! dependencies, fragments) into the compact [`Trace`], its text in one
//! arena; what a line's own fields must hold is checked here.

use super::*;

pub(super) fn positive(text: &str, what: &str) -> Result<(), String> {
    match Decimal::parse(text) {
        Some(d) if d.is_positive() => Ok(()),
        Some(_) => Err(format!("{what} must be positive, found `{text}`")),
        None => Err(format!(
            "bad number for {what}: `{text}` (expected a real number)"
        )),
    }
}

pub(super) fn real(text: &str, what: &str) -> Result<(), String> {
    Decimal::parse(text)
        .map(|_| ())
        .ok_or_else(|| format!("bad number for {what}: `{text}` (expected a real number)"))
}

pub(super) fn natural(text: &str, what: &str) -> Result<u64, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<u64>() {
            return Ok(n);
        }
    }
    Err(format!("bad {what} `{text}`: expected a natural number"))
}

pub(super) fn element_index(trace: &Trace) -> Result<u32, String> {
    u32::try_from(trace.elements.len())
        .map_err(|_| "more than 4 billion elements in one TRACE file".to_string())
}

pub(super) fn empty_trace() -> Trace {
    Trace {
        arena: String::new(),
        unit: DEFAULT_UNIT,
        offset_ms: None,
        trace_attrs: Vec::new(),
        resources: Vec::new(),
        resource_index: FastMap::default(),
        signals: Vec::new(),
        signal_index: FastMap::default(),
        elements: Vec::new(),
        claim_items: Vec::new(),
        dep_items: Vec::new(),
        events: Ids::default(),
        claims: FastMap::default(),
        deps: Ids::default(),
        key: String::new(),
        value: String::new(),
    }
}

/// Reads every line of a TRACE file, problems reported as `problems` says.
pub(super) fn read_trace<R: BufRead>(
    name: &str,
    inner: R,
    problems: &mut Problems,
) -> Result<Trace> {
    let mut trace = empty_trace();
    let mut tu_line: Option<u64> = None;
    let mut o_line: Option<u64> = None;
    let mut lines = LineReader::new(name, inner);
    let mut cut = None;
    while let Some(line) = lines.next_located()? {
        let number = line.number;
        let mut bytes = line.text;
        if number == 1 {
            bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        }
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if line.truncated {
            cut = Some(number);
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            problems.report(number, "invalid UTF-8: TRACE files are UTF-8 text".into())?;
            continue;
        };
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let token_end = text
            .find(|c: char| c.is_whitespace() || c == ';')
            .unwrap_or(text.len());
        let (token, rest) = text.split_at(token_end);
        let outcome: Result<(), String> = match token.as_bytes() {
            b"TU" => read_unit(&mut trace, rest, number, &mut tu_line),
            b"O" => read_offset(&mut trace, rest, number, &mut o_line),
            b"T" => read_trace_attrs(&mut trace, rest, problems, number),
            b"R" => read_resource(&mut trace, rest, number),
            b"S" => read_signal(&mut trace, rest, number),
            b"E" => read_event(&mut trace, rest, number),
            b"C" => read_claim(&mut trace, rest, number),
            b"D" => read_dep(&mut trace, rest, number),
            b"F" => read_fragment(&mut trace, rest, number),
            b"TS" | b"TSS" | b"TSP" | b"TSR" => Err(format!(
                "unsupported line kind `{token}`: time series (a newer TRACE4CPS extension) are not supported yet"
            )),
            b"" => Err("expected a line kind (TU, O, T, E, R, C, D, S, F) before `;`".into()),
            _ => Err(format!(
                "unknown line kind `{token}` (expected TU, O, T, E, R, C, D, S, F or a # comment)"
            )),
        };
        if let Err(msg) = outcome {
            let msg = if cut.is_some() { cut_error(&msg) } else { msg };
            problems.report(number, msg)?;
        }
    }
    if let Some(line) = cut {
        problems.warn(line, CUT_WARNING);
    }
    Ok(trace)
}

/// The one value of a header line that appears at most once (`seen`: the
/// line of the first); `what` names it, its keyword and its value's form.
pub(super) fn header_value<'a>(
    rest: &'a str,
    seen: Option<u64>,
    (what, keyword, form): (&str, &str, &str),
) -> Result<&'a str, String> {
    if let Some(first) = seen {
        return Err(format!(
            "duplicate {what}: a second `{keyword}` line (the first is line {first}); {keyword} may appear at most once"
        ));
    }
    let f = Fields::split(rest);
    if f.count != 1 || !f.attrs.is_empty() {
        return Err(format!("expected `{keyword} {form}`"));
    }
    Ok(f.tokens[0])
}

/// The `O` line: the trace's offset, integer ms since the Unix epoch, at
/// most once (`seen`: the line of the first).
pub(super) fn read_offset(
    trace: &mut Trace,
    rest: &str,
    line: u64,
    seen: &mut Option<u64>,
) -> Result<(), String> {
    let value = header_value(rest, *seen, ("offset", "O", "<integer milliseconds>"))?;
    match value.parse::<i64>() {
        // The stream's origin is integer ns in an i64.
        Ok(ms) if ms.checked_mul(1_000_000).is_none() => Err(format!(
            "offset `{value}` ms is beyond the range of the stream's origin (i64 nanoseconds, about ±292 years from 1970)"
        )),
        Ok(ms) if !value.starts_with('+') => {
            trace.offset_ms = Some(ms);
            *seen = Some(line);
            Ok(())
        }
        _ => Err(format!(
            "offset `{value}` is not an integer (O is integer milliseconds since the Unix epoch)"
        )),
    }
}

pub(super) fn read_unit(
    trace: &mut Trace,
    rest: &str,
    line: u64,
    seen: &mut Option<u64>,
) -> Result<(), String> {
    let unit = header_value(rest, *seen, ("time unit", "TU", "<unit>"))?;
    let Some(u) = UNITS.iter().position(|(n, _, _)| *n == unit) else {
        return Err(format!(
            "unknown time unit `{unit}` (expected one of {})",
            UNITS.map(|u| u.0).join(", ")
        ));
    };
    let before = trace.unit;
    trace.unit = u;
    *seen = Some(line);
    if u != before && !trace.elements.is_empty() {
        trace.rescale(before)?;
    }
    Ok(())
}

pub(super) fn read_trace_attrs(
    trace: &mut Trace,
    rest: &str,
    problems: &Problems,
    line: u64,
) -> Result<(), String> {
    let Trace {
        key,
        value,
        trace_attrs,
        ..
    } = trace;
    decode_attrs(rest, key, value, |k, v| {
        match trace_attrs.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => {
                problems.warn(
                    line,
                    format!("trace attribute `{k}` given again; the last value wins"),
                );
                slot.1 = v.to_string();
            }
            None => trace_attrs.push((k.to_string(), v.to_string())),
        }
    })
}

pub(super) fn read_resource(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let f = Fields::split(rest);
    f.expect(3..=3, "R <id> <capacity> <uses offset> ; <attributes>")?;
    let id = natural(f.tokens[0], "resource id")?;
    positive(f.tokens[1], "capacity")?;
    let uses_offset = if f.tokens[2].eq_ignore_ascii_case("true") {
        true
    } else if f.tokens[2].eq_ignore_ascii_case("false") {
        false
    } else {
        return Err(format!(
            "bad <uses offset> `{}`: expected true or false",
            f.tokens[2]
        ));
    };
    if let Some(&i) = trace.resource_index.get(&id) {
        return Err(format!(
            "duplicate resource id {id} (first defined on line {})",
            trace.resources[i as usize].line
        ));
    }
    let capacity = trace.push_text(f.tokens[1])?;
    let (attrs, _) = trace.push_attrs(f.attrs)?;
    trace
        .resource_index
        .insert(id, trace.resources.len() as u32);
    trace.resources.push(Resource {
        id,
        line,
        capacity,
        uses_offset,
        attrs,
    });
    Ok(())
}

/// The index of signal `id`, created (without its `S` line) when new.
pub(super) fn signal_slot(trace: &mut Trace, id: &str) -> Result<u32, String> {
    if let Some(&i) = trace.signal_index.get(id) {
        return Ok(i);
    }
    let span = trace.push_text(id)?;
    let index = trace.signals.len() as u32;
    trace.signal_index.insert(id.to_string(), index);
    trace.signals.push(Signal {
        id: span,
        line: 0,
        attrs: TextRange::default(),
        fragments: 0,
        last_end: None,
    });
    Ok(index)
}

pub(super) fn read_signal(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let f = Fields::split(rest);
    f.expect(1..=1, "S <signal id> ; <attributes>")?;
    let id = f.tokens[0];
    if let Some(&i) = trace.signal_index.get(id) {
        let first = trace.signals[i as usize].line;
        if first != 0 {
            return Err(format!(
                "duplicate signal id {id}: exactly one `S` line per signal (first on line {first})"
            ));
        }
    }
    let (attrs, _) = trace.push_attrs(f.attrs)?;
    let index = signal_slot(trace, id)? as usize;
    let s = &mut trace.signals[index];
    s.line = line;
    s.attrs = attrs;
    Ok(())
}

pub(super) fn read_event(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let f = Fields::split(rest);
    f.expect(2..=2, "E <event id> <t> ; <attributes>")?;
    let (t, lossy) = trace.to_ns(f.tokens[1], "the event time")?;
    let index = element_index(trace)?;
    let (attrs, name) = trace.push_attrs(f.attrs)?;
    if let Some(first) = trace.index_id(IdKind::Event, f.tokens[0], index) {
        return Err(format!(
            "duplicate event id {} (first defined on line {})",
            f.tokens[0], trace.elements[first as usize].line
        ));
    }
    let id = trace.push_text(f.tokens[0])?;
    trace.elements.push(Element {
        item: Item::Event { id },
        line,
        attrs,
        name,
        times: (t, t),
        lossy,
    });
    Ok(())
}

pub(super) fn read_claim(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let f = Fields::split(rest);
    f.expect(
        5..=6,
        "C <claim id> <t0> <t1> <resource id> <offset>? <amount> ; <attributes>",
    )?;
    let t = &f.tokens;
    let id = natural(t[0], "claim id")?;
    let (t0, lossy0) = trace.to_ns(t[1], "the claim start")?;
    let (t1, lossy1) = trace.to_ns(t[2], "the claim end")?;
    if t1 < t0 {
        return Err(format!("claim ends before it starts ({} < {})", t[2], t[1]));
    }
    let resource = natural(t[3], "resource id")?;
    let (offset, amount) = if f.count == 6 {
        real(t[4], "the offset")?;
        (Some(t[4]), t[5])
    } else {
        (None, t[4])
    };
    positive(amount, "the amount")?;
    let index = element_index(trace)?;
    if let Some(&first) = trace.claims.get(&id) {
        return Err(format!(
            "duplicate claim id {id} (first defined on line {})",
            trace.elements[first as usize].line
        ));
    }
    let (attrs, name) = trace.push_attrs(f.attrs)?;
    trace.claims.insert(id, index);
    let offset = offset.map(|o| trace.push_text(o)).transpose()?;
    let amount = trace.push_text(amount)?;
    trace.claim_items.push(Claim {
        id,
        resource,
        offset,
        amount,
    });
    trace.elements.push(Element {
        item: Item::Claim(trace.claim_items.len() as u32 - 1),
        line,
        attrs,
        name,
        times: (t0, t1),
        lossy: lossy0 || lossy1,
    });
    Ok(())
}

pub(super) fn read_dep(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let f = Fields::split(rest);
    f.expect(4..=4, "D <dep id> <type> <src id> <dst id> ; <attributes>")?;
    let t = &f.tokens;
    let kind = match t[1].parse::<u8>() {
        Ok(k) if usize::from(k) < DEP_TYPES.len() && t[1].bytes().all(|b| b.is_ascii_digit()) => k,
        _ => return Err(format!("bad dependency type `{}`: expected 0..8", t[1])),
    };
    let index = element_index(trace)?;
    if let Some(first) = trace.index_id(IdKind::Dep, t[0], index) {
        return Err(format!(
            "duplicate dependency id {} (first defined on line {})",
            t[0], trace.elements[first as usize].line
        ));
    }
    let (attrs, name) = trace.push_attrs(f.attrs)?;
    let id = trace.push_text(t[0])?;
    let src = trace.push_text(t[2])?;
    let dst = trace.push_text(t[3])?;
    trace.dep_items.push(Dep {
        id,
        kind,
        src,
        dst,
        resources: [NO_RESOURCE; 2],
    });
    trace.elements.push(Element {
        item: Item::Dep(trace.dep_items.len() as u32 - 1),
        line,
        attrs,
        name,
        times: (0, 0),
        lossy: false,
    });
    Ok(())
}

pub(super) fn read_fragment(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    if memchr::memchr(b';', rest.as_bytes()).is_some() {
        return Err("`F` lines take no attributes (no `;`)".into());
    }
    let f = Fields::split(rest);
    f.expect(6..=6, "F <signal id> <t0> <t1> <c> <b> <a>")?;
    let t = &f.tokens;
    let (t0, lossy0) = trace.to_ns(t[1], "the fragment start")?;
    let (t1, lossy1) = trace.to_ns(t[2], "the fragment end")?;
    if t1 <= t0 {
        return Err(format!(
            "empty fragment domain [{}, {}): the end must be after the start",
            t[1], t[2]
        ));
    }
    for (text, what) in t[3..6]
        .iter()
        .zip(["coefficient c", "coefficient b", "coefficient a"])
    {
        real(text, what)?;
    }
    let signal = signal_slot(trace, t[0])?;
    let s = &mut trace.signals[signal as usize];
    if let Some(prev) = s.last_end {
        if prev != t0 {
            let how = if t0 > prev { "a gap" } else { "an overlap" };
            return Err(format!(
                "fragments of signal {} are not consecutive: {how} before {} (each fragment must start where the previous one ends)",
                t[0], t[1]
            ));
        }
    }
    s.last_end = Some(t1);
    s.fragments += 1;
    let start = trace.arena.len();
    let _ = write!(trace.arena, "c={};b={};a={}", t[3], t[4], t[5]);
    let coefficients = trace.span_from(start)?;
    trace.elements.push(Element {
        item: Item::Fragment {
            signal,
            coefficients,
        },
        line,
        attrs: TextRange::default(),
        name: TextRange::default(),
        times: (t0, t1),
        lossy: lossy0 || lossy1,
    });
    Ok(())
}

impl<'a> Fields<'a> {
    pub(super) fn split(rest: &'a str) -> Fields<'a> {
        // Byte search: `;` is ASCII, so the split is at a char boundary.
        let (head, attrs) = match memchr::memchr(b';', rest.as_bytes()) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let mut tokens = [""; 8];
        let mut count = 0;
        // Fields are separated by ASCII white space (a byte scan; tokens are then
        // cut at ASCII bytes, which are char boundaries).
        let bytes = head.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            let start = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i > start {
                if count < tokens.len() {
                    tokens[count] = &head[start..i];
                }
                count += 1;
            }
        }
        Fields {
            tokens,
            count,
            attrs,
        }
    }

    pub(super) fn expect(
        &self,
        n: std::ops::RangeInclusive<usize>,
        shape: &str,
    ) -> Result<(), String> {
        if n.contains(&self.count) {
            Ok(())
        } else {
            Err(format!(
                "expected `{shape}`, found {} field(s) before `;`",
                self.count
            ))
        }
    }
}

impl Trace {
    /// Indexes `token`, the id of element `index` (an event or a
    /// dependency); returns the element of the same kind with that id, if
    /// any.
    pub(super) fn index_id(&mut self, kind: IdKind, token: &str, index: u32) -> Option<u32> {
        let (arena, elements, deps) = (&self.arena, &self.elements, &self.dep_items);
        let id_of = |i| element_id(arena, elements, deps, i);
        match kind {
            IdKind::Event => self.events.insert(token, index, id_of),
            IdKind::Dep => self.deps.insert(token, index, id_of),
        }
    }

    pub(super) fn push_text(&mut self, s: &str) -> Result<TextRange, String> {
        let start = self.arena.len();
        self.arena.push_str(s);
        self.span_from(start)
    }

    pub(super) fn span_from(&self, start: usize) -> Result<TextRange, String> {
        let too_big = || "the TRACE reader holds at most 4 GiB of text in memory".to_string();
        Ok(TextRange {
            start: u32::try_from(start).map_err(|_| too_big())?,
            len: u32::try_from(self.arena.len() - start).map_err(|_| too_big())?,
        })
    }

    pub(super) fn text(&self, span: TextRange) -> &str {
        let start = span.start as usize;
        &self.arena[start..start + span.len as usize]
    }

    /// Decodes a TRACE attribute list into the arena in stream form; returns it
    /// and the encoded value of its first `name` attribute.
    pub(super) fn push_attrs(&mut self, text: &str) -> Result<(TextRange, TextRange), String> {
        let start = self.arena.len();
        let Trace {
            arena, key, value, ..
        } = self;
        let mut first = true;
        let mut name = (0, 0);
        decode_attrs(text, key, value, |k, v| {
            if !first {
                arena.push(';');
            }
            first = false;
            encode_attr_part(k, arena);
            arena.push('=');
            let value_start = arena.len();
            encode_attr_part(v, arena);
            if k.as_bytes() == b"name" && name == (0, 0) {
                name = (value_start, arena.len());
            }
        })?;
        let name = TextRange {
            start: u32::try_from(name.0).unwrap_or_default(),
            len: u32::try_from(name.1 - name.0).unwrap_or_default(),
        };
        Ok((self.span_from(start)?, name))
    }

    pub(super) fn to_ns(&self, text: &str, what: &str) -> Result<(i64, bool), String> {
        let d = Decimal::parse(text)
            .ok_or_else(|| format!("bad number for {what}: `{text}` (expected a real number)"))?;
        d.scaled(UNITS[self.unit].2)
            .ok_or_else(|| format!("{what} `{text}` is out of range (more than 292 years in ns)"))
    }

    /// A `TU` line after timed lines: rescales what was converted with the
    /// default unit.
    pub(super) fn rescale(&mut self, from: usize) -> Result<(), String> {
        let (old, new) = (i128::from(UNITS[from].2), i128::from(UNITS[self.unit].2));
        let scale = |t: i64| -> Result<(i64, bool), String> {
            let num = i128::from(t) * new;
            let v = num / old + i128::from((num % old).abs() * 2 >= old) * num.signum();
            let v = i64::try_from(v)
                .map_err(|_| "a time is out of range in the new unit".to_string())?;
            Ok((v, num % old != 0))
        };
        for e in &mut self.elements {
            let (a, la) = scale(e.times.0)?;
            let (b, lb) = scale(e.times.1)?;
            e.times = (a, b);
            e.lossy |= la || lb;
        }
        for s in &mut self.signals {
            if let Some(t) = s.last_end {
                s.last_end = Some(scale(t)?.0);
            }
        }
        Ok(())
    }
}
