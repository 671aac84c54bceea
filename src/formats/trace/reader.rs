//! Reads and validates a TRACE file, then emits it as a time-ordered stream.
//!
//! TRACE files list elements in any order, so the whole file is read first:
//! every element is kept in a compact form (its text in one arena), checked, and
//! sorted by completion time. Memory grows with the file: about 150 bytes
//! per element plus its text, up to 9 times the file for terse lines
//! (`bench/memory.sh`).

use std::fmt::Write as _;
use std::io::BufRead;

use super::{
    decode_attrs, Endpoint, ATTR_DST, ATTR_OFFSET, ATTR_SRC, ATTR_USES_OFFSET, DEFAULT_UNIT,
    DEP_TYPES, META_ATTR, RESOURCE_LOC, SIGNAL_LOC, UNITS,
};
use crate::decimal::Decimal;
use crate::error::{Error, Location, Result, Warnings};
use crate::fasthash::FastMap;
use crate::io::{cut_error, Input, LineReader, CUT_WARNING};
use crate::model::record::{
    decode_attr_part, encode_attr_part, flags, Kind, Record, Sym, META_ORIGIN,
};
use crate::model::symbol::{well_known, SymCache};
use crate::pipe::{FormatOption, OptionValue, ReadOptions, RecordSource};

const LENIENT: &str = "lenient";

/// The options of the TRACE reader.
pub const READ_OPTIONS: &[FormatOption] = &[FormatOption {
    name: LENIENT,
    help: "Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first",
    value: OptionValue::Switch,
}];

/// Registry constructor.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    Ok(Box::new(TraceReader::new(&name, reader, opts)?))
}

/// Marks a dependency endpoint without a resource (an event).
const NO_RESOURCE: u32 = u32::MAX;

/// A range of the text arena (the arena is limited to 4 GiB of text).
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: u32,
    len: u32,
}

#[derive(Debug)]
struct Resource {
    id: u64,
    line: u64,
    capacity: Span,
    uses_offset: bool,
    attrs: Span,
}

#[derive(Debug)]
struct Signal {
    id: Span,
    /// Line of the `S` line; 0 while only fragments have named the signal.
    line: u64,
    attrs: Span,
    fragments: u64,
    last_end: Option<i64>,
}

#[derive(Debug)]
enum Item {
    Event {
        id: Span,
    },
    Claim {
        id: u64,
        resource: u64,
        offset: Option<Span>,
        amount: Span,
    },
    Dep {
        id: Span,
        kind: u8,
        src: Span,
        dst: Span,
        /// Resources of claim endpoints (`NO_RESOURCE` for events), resolved at the end.
        resources: [u32; 2],
    },
    Fragment {
        signal: u32,
        coefficients: Span,
    },
}

#[derive(Debug)]
struct Element {
    item: Item,
    line: u64,
    attrs: Span,
    /// The encoded value of the first `name` attribute (empty when none).
    name: Span,
    /// Start and end in ns (an event has both equal; a dependency's are its
    /// endpoints' times, resolved at the end).
    times: (i64, i64),
    lossy: bool,
}

/// Element ids: canonical natural numbers in a numeric map, other tokens by text.
#[derive(Default)]
struct Ids {
    numbers: FastMap<u64, u32>,
    tokens: FastMap<String, u32>,
}

impl Ids {
    fn key(token: &str) -> Option<u64> {
        crate::number::parse_uint(token.as_bytes())
    }

    fn get(&self, token: &str) -> Option<u32> {
        match Self::key(token) {
            Some(n) => self.numbers.get(&n).copied(),
            None => self.tokens.get(token).copied(),
        }
    }

    /// Inserts `token`; returns the index already there, if any.
    fn insert(&mut self, token: &str, index: u32) -> Option<u32> {
        match Self::key(token) {
            Some(n) => match self.numbers.entry(n) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(index);
                    None
                }
            },
            None => {
                if let Some(&i) = self.tokens.get(token) {
                    return Some(i);
                }
                self.tokens.insert(token.to_string(), index);
                None
            }
        }
    }
}

/// Everything read from one TRACE file.
struct Trace {
    arena: String,
    unit: usize,
    offset_ms: Option<i64>,
    trace_attrs: Vec<(String, String)>,
    resources: Vec<Resource>,
    resource_index: FastMap<u64, u32>,
    signals: Vec<Signal>,
    signal_index: FastMap<String, u32>,
    elements: Vec<Element>,
    events: Ids,
    claims: FastMap<u64, u32>,
    deps: Ids,
    key: String,
    value: String,
}

/// What went wrong on a line: in strict mode the first problem stops the read;
/// in lenient mode the line is skipped with a warning.
struct Problems<'a> {
    file: &'a str,
    lenient: bool,
    skipped: u64,
    warnings: &'a Warnings,
}

impl Problems<'_> {
    fn report(&mut self, line: u64, msg: String) -> Result<()> {
        if self.lenient {
            self.warn(line, format!("{msg} (skipped)"));
            self.skipped += 1;
            Ok(())
        } else {
            Err(Error::line(self.file, line, msg))
        }
    }

    fn warn(&self, line: u64, msg: impl Into<String>) {
        let at = Location::Line {
            file: self.file.to_string(),
            line,
        };
        self.warnings.warn_at(at, msg);
    }
}

/// The tokens of a line before its first `;` (at most 8), and the text after it.
struct Fields<'a> {
    tokens: [&'a str; 8],
    count: usize,
    attrs: &'a str,
}

impl<'a> Fields<'a> {
    fn split(rest: &'a str) -> Fields<'a> {
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

    fn expect(&self, n: std::ops::RangeInclusive<usize>, shape: &str) -> Result<(), String> {
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
    fn push_text(&mut self, s: &str) -> Result<Span, String> {
        let start = self.arena.len();
        self.arena.push_str(s);
        self.span_from(start)
    }

    fn span_from(&self, start: usize) -> Result<Span, String> {
        let too_big = || "the TRACE reader holds at most 4 GiB of text in memory".to_string();
        Ok(Span {
            start: u32::try_from(start).map_err(|_| too_big())?,
            len: u32::try_from(self.arena.len() - start).map_err(|_| too_big())?,
        })
    }

    fn text(&self, span: Span) -> &str {
        let start = span.start as usize;
        &self.arena[start..start + span.len as usize]
    }

    /// Decodes a TRACE attribute list into the arena in stream form; returns it
    /// and the encoded value of its first `name` attribute.
    fn push_attrs(&mut self, text: &str) -> Result<(Span, Span), String> {
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
        let name = Span {
            start: u32::try_from(name.0).unwrap_or_default(),
            len: u32::try_from(name.1 - name.0).unwrap_or_default(),
        };
        Ok((self.span_from(start)?, name))
    }

    fn to_ns(&self, text: &str, what: &str) -> Result<(i64, bool), String> {
        let d = Decimal::parse(text)
            .ok_or_else(|| format!("bad number for {what}: `{text}` (expected a real number)"))?;
        d.scaled(UNITS[self.unit].2)
            .ok_or_else(|| format!("{what} `{text}` is out of range (more than 292 years in ns)"))
    }

    /// A `TU` line after timed lines: rescales what was converted with the
    /// default unit.
    fn rescale(&mut self, from: usize) -> Result<(), String> {
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

fn positive(text: &str, what: &str) -> Result<(), String> {
    match Decimal::parse(text) {
        Some(d) if d.is_positive() => Ok(()),
        Some(_) => Err(format!("{what} must be positive, found `{text}`")),
        None => Err(format!(
            "bad number for {what}: `{text}` (expected a real number)"
        )),
    }
}

fn real(text: &str, what: &str) -> Result<(), String> {
    Decimal::parse(text)
        .map(|_| ())
        .ok_or_else(|| format!("bad number for {what}: `{text}` (expected a real number)"))
}

fn natural(text: &str, what: &str) -> Result<u64, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<u64>() {
            return Ok(n);
        }
    }
    Err(format!("bad {what} `{text}`: expected a natural number"))
}

fn element_index(trace: &Trace) -> Result<u32, String> {
    u32::try_from(trace.elements.len())
        .map_err(|_| "more than 4 billion elements in one TRACE file".to_string())
}

fn empty_trace() -> Trace {
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
        events: Ids::default(),
        claims: FastMap::default(),
        deps: Ids::default(),
        key: String::new(),
        value: String::new(),
    }
}

/// Reads every line of a TRACE file, problems reported as `problems` says.
fn read_trace<R: BufRead>(name: &str, inner: R, problems: &mut Problems) -> Result<Trace> {
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
fn header_value<'a>(
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
fn read_offset(
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

fn read_unit(
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

fn read_trace_attrs(
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

fn read_resource(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
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
fn signal_slot(trace: &mut Trace, id: &str) -> Result<u32, String> {
    if let Some(&i) = trace.signal_index.get(id) {
        return Ok(i);
    }
    let span = trace.push_text(id)?;
    let index = trace.signals.len() as u32;
    trace.signal_index.insert(id.to_string(), index);
    trace.signals.push(Signal {
        id: span,
        line: 0,
        attrs: Span::default(),
        fragments: 0,
        last_end: None,
    });
    Ok(index)
}

fn read_signal(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
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

fn read_event(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let f = Fields::split(rest);
    f.expect(2..=2, "E <event id> <t> ; <attributes>")?;
    let (t, lossy) = trace.to_ns(f.tokens[1], "the event time")?;
    let index = element_index(trace)?;
    let (attrs, name) = trace.push_attrs(f.attrs)?;
    if let Some(first) = trace.events.insert(f.tokens[0], index) {
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

fn read_claim(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
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
    trace.elements.push(Element {
        item: Item::Claim {
            id,
            resource,
            offset,
            amount,
        },
        line,
        attrs,
        name,
        times: (t0, t1),
        lossy: lossy0 || lossy1,
    });
    Ok(())
}

fn read_dep(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let f = Fields::split(rest);
    f.expect(4..=4, "D <dep id> <type> <src id> <dst id> ; <attributes>")?;
    let t = &f.tokens;
    let kind = match t[1].parse::<u8>() {
        Ok(k) if usize::from(k) < DEP_TYPES.len() && t[1].bytes().all(|b| b.is_ascii_digit()) => k,
        _ => return Err(format!("bad dependency type `{}`: expected 0..8", t[1])),
    };
    let index = element_index(trace)?;
    if let Some(first) = trace.deps.insert(t[0], index) {
        return Err(format!(
            "duplicate dependency id {} (first defined on line {})",
            t[0], trace.elements[first as usize].line
        ));
    }
    let (attrs, name) = trace.push_attrs(f.attrs)?;
    let id = trace.push_text(t[0])?;
    let src = trace.push_text(t[2])?;
    let dst = trace.push_text(t[3])?;
    trace.elements.push(Element {
        item: Item::Dep {
            id,
            kind,
            src,
            dst,
            resources: [NO_RESOURCE; 2],
        },
        line,
        attrs,
        name,
        times: (0, 0),
        lossy: false,
    });
    Ok(())
}

fn read_fragment(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
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
        attrs: Span::default(),
        name: Span::default(),
        times: (t0, t1),
        lossy: lossy0 || lossy1,
    });
    Ok(())
}

impl Trace {
    /// The time of a dependency endpoint and, for a claim, its resource.
    fn endpoint(&self, id: &str, end: Endpoint) -> Option<(i64, Option<u64>)> {
        match end {
            Endpoint::Event => {
                let i = self.events.get(id)?;
                Some((self.elements[i as usize].times.0, None))
            }
            _ => {
                let &i = self.claims.get(&natural(id, "").ok()?)?;
                let e = &self.elements[i as usize];
                let t = if end == Endpoint::ClaimEnd {
                    e.times.1
                } else {
                    e.times.0
                };
                match e.item {
                    Item::Claim { resource, .. } => Some((t, Some(resource))),
                    _ => None,
                }
            }
        }
    }
}

/// A problem found once the whole file is read: its line, the message, and
/// the element it drops in lenient mode.
type Finding = (u64, String, Option<usize>);

/// A dependency's endpoint times and their claims' resource slots.
type ResolvedDep = ((i64, i64), [u32; 2]);

/// Checks what needs the whole file (references, offsets, signals with
/// fragments) and resolves dependency times. Problems are reported in line
/// order. Returns which elements to drop (lenient mode only).
fn check_references(trace: &mut Trace, problems: &mut Problems) -> Result<Vec<bool>> {
    let mut findings = signals_without_fragments(trace);
    let mut resolved = Vec::new();
    for (index, e) in trace.elements.iter().enumerate() {
        let problem = match &e.item {
            Item::Claim {
                resource, offset, ..
            } => claim_problem(trace, *resource, offset.is_some()),
            Item::Dep { kind, src, dst, .. } => match resolve_dep(trace, *kind, *src, *dst) {
                Ok(dep) => {
                    resolved.push((index, dep));
                    None
                }
                Err(msg) => Some(msg),
            },
            Item::Fragment { signal, .. } => {
                let s = &trace.signals[*signal as usize];
                let id = trace.text(s.id);
                (s.line == 0).then(|| format!("fragment of unknown signal {id} (no `S {id}` line)"))
            }
            Item::Event { .. } => None,
        };
        if let Some(msg) = problem {
            findings.push((e.line, msg, Some(index)));
        }
    }
    for (index, (times, slots)) in resolved {
        let e = &mut trace.elements[index];
        e.times = times;
        if let Item::Dep { resources, .. } = &mut e.item {
            *resources = slots;
        }
    }
    findings.sort_by_key(|f| f.0);
    let mut dropped = vec![false; trace.elements.len()];
    for (line, msg, index) in findings {
        problems.report(line, msg)?;
        if let Some(i) = index {
            dropped[i] = true;
        }
    }
    if dropped.contains(&true) {
        drop_dependencies_on_dropped_claims(trace, &mut dropped, problems);
    }
    Ok(dropped)
}

/// Every signal declared without a fragment.
fn signals_without_fragments(trace: &Trace) -> Vec<Finding> {
    let bare = trace
        .signals
        .iter()
        .filter(|s| s.line != 0 && s.fragments == 0);
    bare.map(|s| {
        let id = trace.text(s.id);
        let msg = format!("signal {id} has no fragment: every signal needs at least one `F` line");
        (s.line, msg, None)
    })
    .collect()
}

/// What is wrong with a claim on `resource`, with an offset or not.
fn claim_problem(trace: &Trace, resource: u64, has_offset: bool) -> Option<String> {
    let Some(&r) = trace.resource_index.get(&resource) else {
        return Some(format!(
            "claim on unknown resource {resource} (no `R {resource}` line)"
        ));
    };
    match (trace.resources[r as usize].uses_offset, has_offset) {
        (true, false) => Some(format!("claim offset missing: resource {resource} uses offsets, so its claims need `<offset> <amount>`")),
        (false, true) => Some(format!("unexpected claim offset: resource {resource} does not use offsets, so its claims give only `<amount>`")),
        _ => None,
    }
}

/// A dependency of type `kind` from `src` to `dst`: its endpoints' times
/// and resource slots, or why an endpoint is unknown.
fn resolve_dep(
    trace: &Trace,
    kind: u8,
    src: Span,
    dst: Span,
) -> std::result::Result<ResolvedDep, String> {
    let (src_kind, dst_kind) = DEP_TYPES[usize::from(kind)];
    let (src_id, dst_id) = (trace.text(src), trace.text(dst));
    let (a, b) = (
        trace.endpoint(src_id, src_kind),
        trace.endpoint(dst_id, dst_kind),
    );
    if let (Some(a), Some(b)) = (a, b) {
        let slot = |r: Option<u64>| {
            r.and_then(|r| trace.resource_index.get(&r).copied())
                .unwrap_or(NO_RESOURCE)
        };
        return Ok(((a.0, b.0), [slot(a.1), slot(b.1)]));
    }
    let (which, id, k) = match a {
        None => ("source", src_id, src_kind),
        Some(_) => ("destination", dst_id, dst_kind),
    };
    Err(format!(
        "dependency {which} is an unknown {} `{id}` (type {kind} links {} to {})",
        k.noun(),
        src_kind.noun(),
        dst_kind.noun()
    ))
}

/// Drops, with a warning, each dependency that names a dropped claim
/// (lenient mode).
fn drop_dependencies_on_dropped_claims(trace: &Trace, dropped: &mut [bool], problems: &Problems) {
    for i in 0..trace.elements.len() {
        let e = &trace.elements[i];
        let Item::Dep { kind, src, dst, .. } = e.item else {
            continue;
        };
        let (sk, dk) = DEP_TYPES[usize::from(kind)];
        let gone = |id: Span, k: Endpoint| {
            k != Endpoint::Event
                && natural(trace.text(id), "")
                    .ok()
                    .and_then(|c| trace.claims.get(&c))
                    .is_some_and(|&c| dropped[c as usize])
        };
        if !dropped[i] && (gone(src, sk) || gone(dst, dk)) {
            problems.warn(e.line, "dependency dropped with the claim it names");
            dropped[i] = true;
        }
    }
}

/// The TRACE reader: validates the whole file at construction, then yields rows.
pub struct TraceReader {
    name: String,
    trace: Trace,
    syms: SymCache,
    /// The location of each resource, by its id, and of each signal.
    resource_locs: FastMap<u64, Sym>,
    signal_locs: Vec<Sym>,
    /// Reused for decoding names.
    scratch: String,
    /// Meta and container rows first, then the elements by completion time.
    /// With the line each row comes from (0: the file as a whole).
    prelude: std::vec::IntoIter<(Record, u64)>,
    order: std::vec::IntoIter<(i64, u32)>,
    line: u64,
}

impl TraceReader {
    /// Reads and checks all of `inner`.
    pub fn new<R: BufRead>(name: &str, inner: R, opts: &ReadOptions) -> Result<TraceReader> {
        let mut problems = Problems {
            file: name,
            lenient: opts.format.switch(LENIENT),
            skipped: 0,
            warnings: &opts.warnings,
        };
        let mut trace = read_trace(name, inner, &mut problems)?;
        let dropped = check_references(&mut trace, &mut problems)?;
        if problems.skipped > 0 {
            opts.warnings.warn_at(
                Location::File(name.to_string()),
                format!("{} problem(s) skipped in lenient mode", problems.skipped),
            );
        }
        let lossy = trace.elements.iter().filter(|e| e.lossy).count();
        if lossy > 0 {
            opts.warnings.warn_at(
                Location::File(name.to_string()),
                format!(
                    "{lossy} element(s) have times finer than a nanosecond; rounded and flagged E"
                ),
            );
        }
        let mut order: Vec<(i64, u32)> = trace
            .elements
            .iter()
            .enumerate()
            .filter(|(i, _)| !dropped[*i])
            .map(|(i, e)| (e.times.0.max(e.times.1), i as u32))
            .collect();
        // Elements are numbered in file order, so equal times keep file order.
        order.sort_unstable();
        let mut syms = SymCache::new(opts.symbols.clone());
        let resource_locs = trace
            .resources
            .iter()
            .map(|r| (r.id, syms.intern(&format!("{RESOURCE_LOC}{}", r.id))))
            .collect();
        let signal_locs = trace
            .signals
            .iter()
            .map(|s| syms.intern(&format!("{SIGNAL_LOC}{}", trace.text(s.id))))
            .collect();
        let mut reader = TraceReader {
            name: name.to_string(),
            trace,
            syms,
            resource_locs,
            signal_locs,
            scratch: String::new(),
            prelude: Vec::new().into_iter(),
            order: order.into_iter(),
            line: 0,
        };
        reader.prelude = reader.prelude(name).into_iter();
        Ok(reader)
    }

    /// The meta rows and the resources' and signals' container rows, with
    /// the line each comes from.
    fn prelude(&mut self, name: &str) -> Vec<(Record, u64)> {
        let trace = &self.trace;
        let syms = &mut self.syms;
        let mut meta = |key: &str, value: &str| (Record::meta(syms.intern(key), value), 0);
        let mut rows = vec![
            meta("source_format", "trace"),
            meta("source", name),
            meta("time_unit", UNITS[trace.unit].1),
        ];
        if let Some(ms) = trace.offset_ms {
            let origin = (i128::from(ms) * 1_000_000).to_string();
            rows.push((Record::meta(META_ORIGIN, &origin), 0));
        }
        for (k, v) in &trace.trace_attrs {
            rows.push(meta(&format!("{META_ATTR}{k}"), v));
        }
        for r in &trace.resources {
            let mut rec = Record::new(Kind::Container);
            rec.loc = self.resource_locs[&r.id];
            rec.cat = well_known::RESOURCE;
            rec.name = name_of(trace.text(r.attrs), &mut self.scratch, syms);
            rec.value.push_str(trace.text(r.capacity));
            if r.uses_offset {
                rec.push_attr(ATTR_USES_OFFSET, "true");
            }
            append_attrs(&mut rec, trace.text(r.attrs));
            rows.push((rec, r.line));
        }
        for (s, &loc) in trace.signals.iter().zip(&self.signal_locs) {
            if s.line == 0 {
                continue;
            }
            let mut rec = Record::new(Kind::Container);
            rec.loc = loc;
            rec.cat = well_known::SIGNAL;
            rec.name = name_of(trace.text(s.attrs), &mut self.scratch, syms);
            append_attrs(&mut rec, trace.text(s.attrs));
            rows.push((rec, s.line));
        }
        rows
    }
}

/// The symbol of an encoded text, decoded (`scratch` is reused).
fn decoded(encoded: &str, scratch: &mut String, syms: &mut SymCache) -> Sym {
    if !encoded.contains('%') {
        return syms.intern(encoded);
    }
    scratch.clear();
    scratch.push_str(&decode_attr_part(encoded));
    syms.intern(scratch)
}

/// The decoded value of the first `name` attribute of an encoded attribute
/// list, interned (empty when there is none).
fn name_of(encoded: &str, scratch: &mut String, syms: &mut SymCache) -> Sym {
    for item in encoded.split(';') {
        if let Some(v) = item.strip_prefix("name=") {
            return decoded(v, scratch, syms);
        }
    }
    Sym::EMPTY
}

fn append_attrs(rec: &mut Record, encoded: &str) {
    if encoded.is_empty() {
        return;
    }
    if !rec.attrs.is_empty() {
        rec.attrs.push(';');
    }
    rec.attrs.push_str(encoded);
}

impl RecordSource for TraceReader {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some((r, line)) = self.prelude.next() {
            *rec = r;
            self.line = line;
            return Ok(true);
        }
        let Some((_, index)) = self.order.next() else {
            return Ok(false);
        };
        let trace = &self.trace;
        let e = &trace.elements[index as usize];
        self.line = e.line;
        rec.clear();
        rec.time = Some(e.times.0);
        let attrs = trace.text(e.attrs);
        let syms = &mut self.syms;
        rec.name = decoded(trace.text(e.name), &mut self.scratch, syms);
        match e.item {
            Item::Event { id } => {
                rec.kind = Kind::Event;
                rec.id.push_str(trace.text(id));
            }
            Item::Claim {
                id,
                resource,
                offset,
                amount,
            } => {
                rec.kind = Kind::Claim;
                rec.end = Some(e.times.1);
                rec.loc = self.resource_locs[&resource];
                let _ = write!(rec.id, "{id}");
                rec.value.push_str(trace.text(amount));
                if let Some(o) = offset {
                    rec.push_attr(ATTR_OFFSET, trace.text(o));
                }
            }
            Item::Dep {
                id,
                kind,
                src,
                dst,
                resources,
            } => {
                rec.kind = Kind::Dep;
                rec.end = Some(e.times.1);
                let (src, dst) = (trace.text(src), trace.text(dst));
                for (slot, out) in resources.into_iter().zip([&mut rec.loc, &mut rec.peer]) {
                    if let Some(r) = trace.resources.get(slot as usize) {
                        *out = self.resource_locs[&r.id];
                    }
                }
                rec.id.push_str(trace.text(id));
                rec.cat = syms.intern(itoa::Buffer::new().format(kind));
                rec.push_attr(ATTR_SRC, src);
                rec.push_attr(ATTR_DST, dst);
            }
            Item::Fragment {
                signal,
                coefficients,
            } => {
                rec.kind = Kind::Signal;
                rec.end = Some(e.times.1);
                rec.loc = self.signal_locs[signal as usize];
                rec.attrs.push_str(trace.text(coefficients));
                rec.push_attr("time_unit", UNITS[trace.unit].1);
            }
        }
        append_attrs(rec, attrs);
        if e.lossy {
            rec.add_flag(flags::LOSSY);
        }
        Ok(true)
    }

    fn mark(&self) -> u64 {
        self.line
    }

    fn locate(&self, line: u64) -> Location {
        Location::Line {
            file: self.name.clone(),
            line,
        }
    }

    crate::whole_rows!();
}
