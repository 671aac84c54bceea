//! Reads and validates a TRACE file, then emits it as a time-ordered stream.
//!
//! TRACE files list elements in any order, so the whole file is read first:
//! every element is kept in a compact form (text in one arena), checked, and
//! sorted by completion time. Memory grows with the file: roughly 120 bytes per
//! claim, event, dependency or fragment plus its attribute text.

use std::collections::hash_map::Entry;
use std::io::BufRead;

use super::{
    parse_attrs, Endpoint, ATTR_DST, ATTR_OFFSET, ATTR_SRC, ATTR_USES_OFFSET,
    DEFAULT_UNIT, DEP_TYPES, META_ATTR, RESOURCE_LOC, SIGNAL_LOC, UNITS,
};
use crate::decimal::Decimal;
use crate::error::{warn, Error, Location, Result};
use crate::fasthash::FastMap;
use crate::format::{ReadOptions, RecordSource};
use crate::io::{Input, LineReader};
use crate::ops::merge::META_ORIGIN;
use crate::record::{encode_attr_part, flags, Kind, Record};

/// Registry constructor.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    Ok(Box::new(TraceReader::new(&name, reader, opts)?))
}

/// A range of the text arena.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: usize,
    len: usize,
}

#[derive(Debug)]
struct Resource {
    id: u64,
    line: u64,
    capacity: Span,
    uses_offset: bool,
    name: Option<Span>,
    attrs: Span,
}

#[derive(Debug)]
struct Signal {
    id: Span,
    line: u64,
    name: Option<Span>,
    attrs: Span,
    fragments: u64,
}

#[derive(Debug)]
enum Item {
    Event {
        id: Span,
        t: Span,
    },
    Claim {
        id: u64,
        t0: Span,
        t1: Span,
        resource: u64,
        offset: Option<Span>,
        amount: Span,
    },
    Dep {
        id: Span,
        kind: u8,
        src: Span,
        dst: Span,
        /// Resources of the endpoints (claims only), resolved at the end.
        locs: (Option<u64>, Option<u64>),
    },
    Fragment {
        signal: Span,
        t0: Span,
        t1: Span,
        coefficients: Span,
    },
}

#[derive(Debug)]
struct Element {
    item: Item,
    line: u64,
    name: Option<Span>,
    attrs: Span,
    /// Start and end in ns, known once the time unit is (after the whole file).
    times: (i64, i64),
    lossy: bool,
}

/// Everything read from one TRACE file.
struct Trace {
    arena: String,
    unit: usize,
    offset_ms: Option<i64>,
    trace_attrs: Vec<(String, String)>,
    resources: Vec<Resource>,
    resource_index: FastMap<u64, usize>,
    signals: Vec<Signal>,
    signal_index: FastMap<String, usize>,
    elements: Vec<Element>,
    events: FastMap<String, usize>,
    claims: FastMap<u64, usize>,
    deps: FastMap<String, u64>,
}

/// What went wrong on a line: in strict mode the first problem stops the read;
/// in lenient mode the line is skipped with a warning.
struct Problems<'a> {
    file: &'a str,
    lenient: bool,
    skipped: u64,
}

impl Problems<'_> {
    /// Reports `msg` at `line`: an error (strict) or a warning (lenient).
    fn report(&mut self, line: u64, msg: String) -> Result<()> {
        if self.lenient {
            warn(format!("{}:{line}: {msg} (skipped)", self.file));
            self.skipped += 1;
            Ok(())
        } else {
            Err(Error::line(self.file, line, msg))
        }
    }
}

impl Trace {
    fn push_text(&mut self, s: &str) -> Span {
        let start = self.arena.len();
        self.arena.push_str(s);
        Span {
            start,
            len: s.len(),
        }
    }

    fn text(&self, span: Span) -> &str {
        &self.arena[span.start..span.start + span.len]
    }

    /// Stores decoded attributes in stream form; returns it and the `name` value.
    fn push_attrs(&mut self, attrs: &[(String, String)]) -> (Span, Option<Span>) {
        let start = self.arena.len();
        for (i, (k, v)) in attrs.iter().enumerate() {
            if i > 0 {
                self.arena.push(';');
            }
            encode_attr_part(k, &mut self.arena);
            self.arena.push('=');
            encode_attr_part(v, &mut self.arena);
        }
        let span = Span {
            start,
            len: self.arena.len() - start,
        };
        let name = attrs
            .iter()
            .rev()
            .find(|(k, _)| k == "name")
            .map(|(_, v)| v.clone());
        (span, name.map(|n| self.push_text(&n)))
    }

    fn to_ns(&self, text: &str, what: &str) -> Result<(i64, bool), String> {
        let d = Decimal::parse(text)
            .ok_or_else(|| format!("bad number for {what}: `{text}` (expected a real number)"))?;
        d.scaled(UNITS[self.unit].2)
            .ok_or_else(|| format!("{what} `{text}` is out of range (more than 292 years in ns)"))
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
    Err(format!(
        "bad {what} `{text}`: expected a natural number"
    ))
}

/// The fields of a line: tokens before the first `;`, and the attribute text.
fn split_line(rest: &str) -> (Vec<&str>, &str) {
    let (head, attrs) = rest.split_once(';').unwrap_or((rest, ""));
    (head.split_whitespace().collect(), attrs)
}

fn expect_fields(tokens: &[&str], n: std::ops::RangeInclusive<usize>, shape: &str) -> Result<(), String> {
    if n.contains(&tokens.len()) {
        Ok(())
    } else {
        Err(format!(
            "expected `{shape}`, found {} field(s) before `;`",
            tokens.len()
        ))
    }
}

fn read_trace<R: BufRead>(name: &str, inner: R, problems: &mut Problems) -> Result<Trace> {
    let mut trace = Trace {
        arena: String::new(),
        unit: DEFAULT_UNIT,
        offset_ms: None,
        trace_attrs: Vec::new(),
        resources: Vec::new(),
        resource_index: FastMap::default(),
        signals: Vec::new(),
        signal_index: FastMap::default(),
        elements: Vec::new(),
        events: FastMap::default(),
        claims: FastMap::default(),
        deps: FastMap::default(),
    };
    let mut tu_line: Option<u64> = None;
    let mut o_line: Option<u64> = None;
    let mut lines = LineReader::new(name, inner);
    while let Some(line) = lines.next_located()? {
        let number = line.number;
        let mut bytes = line.text;
        if number == 1 {
            bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        }
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
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
        let outcome: Result<(), String> = match token {
            "TU" => match (tu_line, &rest.split_whitespace().collect::<Vec<_>>()[..]) {
                (Some(first), _) => Err(format!(
                    "duplicate time unit: a second `TU` line (the first is line {first}); TU may appear at most once"
                )),
                (None, [unit]) => match UNITS.iter().position(|(n, _, _)| n == unit) {
                    Some(u) => {
                        trace.unit = u;
                        tu_line = Some(number);
                        Ok(())
                    }
                    None => Err(format!(
                        "unknown time unit `{unit}` (expected one of {})",
                        UNITS.map(|u| u.0).join(", ")
                    )),
                },
                (None, _) => Err("expected `TU <unit>`".into()),
            },
            "O" => match (o_line, &rest.split_whitespace().collect::<Vec<_>>()[..]) {
                (Some(first), _) => Err(format!(
                    "duplicate offset: a second `O` line (the first is line {first}); O may appear at most once"
                )),
                (None, [value]) => match value.parse::<i64>() {
                    Ok(ms) if !value.starts_with('+') => {
                        trace.offset_ms = Some(ms);
                        o_line = Some(number);
                        Ok(())
                    }
                    _ => Err(format!(
                        "offset `{value}` is not an integer (O is integer milliseconds since the Unix epoch)"
                    )),
                },
                (None, _) => Err("expected `O <integer milliseconds>`".into()),
            },
            "T" => parse_attrs(rest).map(|attrs| {
                for (k, v) in attrs {
                    match trace.trace_attrs.iter_mut().find(|(key, _)| *key == k) {
                        Some(slot) => {
                            warn(format!(
                                "{name}:{number}: trace attribute `{k}` given again; the last value wins"
                            ));
                            slot.1 = v;
                        }
                        None => trace.trace_attrs.push((k, v)),
                    }
                }
            }),
            "R" => read_resource(&mut trace, rest, number),
            "S" => read_signal(&mut trace, rest, number),
            "E" => read_event(&mut trace, rest, number),
            "C" => read_claim(&mut trace, rest, number),
            "D" => read_dep(&mut trace, rest, number),
            "F" => read_fragment(&mut trace, rest, number),
            "TS" | "TSS" | "TSP" | "TSR" => Err(format!(
                "unsupported line kind `{token}`: time series (a newer TRACE4CPS extension) are not supported yet"
            )),
            "" => Err("expected a line kind (TU, O, T, E, R, C, D, S, F) before `;`".into()),
            other => Err(format!(
                "unknown line kind `{other}` (expected TU, O, T, E, R, C, D, S, F or a # comment)"
            )),
        };
        if let Err(msg) = outcome {
            problems.report(number, msg)?;
        }
        if line.truncated {
            return Err(Error::line(
                name,
                number,
                "truncated line (no final newline): the file was cut",
            ));
        }
    }
    Ok(trace)
}

fn read_resource(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let (tokens, attrs) = split_line(rest);
    expect_fields(&tokens, 3..=3, "R <id> <capacity> <uses offset> ; <attributes>")?;
    let id = natural(tokens[0], "resource id")?;
    positive(tokens[1], "capacity")?;
    let uses_offset = match tokens[2].to_ascii_lowercase().as_str() {
        "true" => true,
        "false" => false,
        other => {
            return Err(format!(
                "bad <uses offset> `{other}`: expected true or false"
            ))
        }
    };
    let attrs = parse_attrs(attrs)?;
    if let Some(&i) = trace.resource_index.get(&id) {
        return Err(format!(
            "duplicate resource id {id} (first defined on line {})",
            trace.resources[i].line
        ));
    }
    let capacity = trace.push_text(tokens[1]);
    let (attrs, name) = trace.push_attrs(&attrs);
    trace.resource_index.insert(id, trace.resources.len());
    trace.resources.push(Resource {
        id,
        line,
        capacity,
        uses_offset,
        name,
        attrs,
    });
    Ok(())
}

fn read_signal(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let (tokens, attrs) = split_line(rest);
    expect_fields(&tokens, 1..=1, "S <signal id> ; <attributes>")?;
    let attrs = parse_attrs(attrs)?;
    let id = tokens[0];
    if let Some(&i) = trace.signal_index.get(id) {
        if trace.signals[i].line != 0 {
            return Err(format!(
                "duplicate signal id {id}: exactly one `S` line per signal (first on line {})",
                trace.signals[i].line
            ));
        }
    }
    let id_span = trace.push_text(id);
    let (attrs, name) = trace.push_attrs(&attrs);
    match trace.signal_index.get(id) {
        Some(&i) => {
            let s = &mut trace.signals[i];
            s.line = line;
            s.name = name;
            s.attrs = attrs;
        }
        None => {
            trace.signal_index.insert(id.to_string(), trace.signals.len());
            trace.signals.push(Signal {
                id: id_span,
                line,
                name,
                attrs,
                fragments: 0,
            });
        }
    }
    Ok(())
}

fn read_event(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let (tokens, attrs) = split_line(rest);
    expect_fields(&tokens, 2..=2, "E <event id> <t> ; <attributes>")?;
    real(tokens[1], "the event time")?;
    let attrs = parse_attrs(attrs)?;
    match trace.events.entry(tokens[0].to_string()) {
        Entry::Occupied(e) => {
            return Err(format!(
                "duplicate event id {} (first defined on line {})",
                tokens[0], trace.elements[*e.get()].line
            ))
        }
        Entry::Vacant(v) => {
            v.insert(trace.elements.len());
        }
    }
    let id = trace.push_text(tokens[0]);
    let t = trace.push_text(tokens[1]);
    let (attrs, name) = trace.push_attrs(&attrs);
    trace.elements.push(Element {
        item: Item::Event { id, t },
        line,
        name,
        attrs,
        times: (0, 0),
        lossy: false,
    });
    Ok(())
}

fn read_claim(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let (tokens, attrs) = split_line(rest);
    expect_fields(
        &tokens,
        5..=6,
        "C <claim id> <t0> <t1> <resource id> <offset>? <amount> ; <attributes>",
    )?;
    let id = natural(tokens[0], "claim id")?;
    real(tokens[1], "the claim start")?;
    real(tokens[2], "the claim end")?;
    let resource = natural(tokens[3], "resource id")?;
    let (offset, amount) = if tokens.len() == 6 {
        real(tokens[4], "the offset")?;
        (Some(tokens[4]), tokens[5])
    } else {
        (None, tokens[4])
    };
    positive(amount, "the amount")?;
    let attrs = parse_attrs(attrs)?;
    if let Some(&first) = trace.claims.get(&id) {
        return Err(format!(
            "duplicate claim id {id} (first defined on line {})",
            trace.elements[first].line
        ));
    }
    trace.claims.insert(id, trace.elements.len());
    let offset = offset.map(|o| trace.push_text(o));
    let amount = trace.push_text(amount);
    let t0 = trace.push_text(tokens[1]);
    let t1 = trace.push_text(tokens[2]);
    let (attrs, name) = trace.push_attrs(&attrs);
    trace.elements.push(Element {
        item: Item::Claim {
            id,
            t0,
            t1,
            resource,
            offset,
            amount,
        },
        line,
        name,
        attrs,
        times: (0, 0),
        lossy: false,
    });
    Ok(())
}

fn read_dep(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    let (tokens, attrs) = split_line(rest);
    expect_fields(&tokens, 4..=4, "D <dep id> <type> <src id> <dst id> ; <attributes>")?;
    let kind = match tokens[1].parse::<u8>() {
        Ok(k) if usize::from(k) < DEP_TYPES.len() && tokens[1].bytes().all(|b| b.is_ascii_digit()) => k,
        _ => {
            return Err(format!(
                "bad dependency type `{}`: expected 0..8",
                tokens[1]
            ))
        }
    };
    let attrs = parse_attrs(attrs)?;
    if let Some(first) = trace.deps.get(tokens[0]) {
        return Err(format!(
            "duplicate dependency id {} (first defined on line {first})",
            tokens[0]
        ));
    }
    trace.deps.insert(tokens[0].to_string(), line);
    let id = trace.push_text(tokens[0]);
    let src = trace.push_text(tokens[2]);
    let dst = trace.push_text(tokens[3]);
    let (attrs, name) = trace.push_attrs(&attrs);
    trace.elements.push(Element {
        item: Item::Dep {
            id,
            kind,
            src,
            dst,
            locs: (None, None),
        },
        line,
        name,
        attrs,
        times: (0, 0),
        lossy: false,
    });
    Ok(())
}

fn read_fragment(trace: &mut Trace, rest: &str, line: u64) -> Result<(), String> {
    if rest.contains(';') {
        return Err("`F` lines take no attributes (no `;`)".into());
    }
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    expect_fields(&tokens, 6..=6, "F <signal id> <t0> <t1> <c> <b> <a>")?;
    real(tokens[1], "the fragment start")?;
    real(tokens[2], "the fragment end")?;
    for (text, what) in tokens[3..].iter().zip(["c", "b", "a"]) {
        real(text, &format!("coefficient {what}"))?;
    }
    let index = match trace.signal_index.get(tokens[0]) {
        Some(&i) => i,
        None => {
            // A fragment before its S line: the S line may still come.
            let id = trace.push_text(tokens[0]);
            trace.signal_index.insert(tokens[0].to_string(), trace.signals.len());
            trace.signals.push(Signal {
                id,
                line: 0,
                name: None,
                attrs: Span::default(),
                fragments: 0,
            });
            trace.signals.len() - 1
        }
    };
    trace.signals[index].fragments += 1;
    let signal_id = trace.signals[index].id;
    let coefficients = trace.push_text(&format!(
        "c={};b={};a={}",
        tokens[3], tokens[4], tokens[5]
    ));
    let t0 = trace.push_text(tokens[1]);
    let t1 = trace.push_text(tokens[2]);
    trace.elements.push(Element {
        item: Item::Fragment {
            signal: signal_id,
            t0,
            t1,
            coefficients,
        },
        line,
        name: None,
        attrs: Span::default(),
        times: (0, 0),
        lossy: false,
    });
    Ok(())
}

/// Converts times (the unit is known now) and checks what needs the whole file:
/// claim and fragment domains, consecutive fragments, references, offsets,
/// signals with fragments. Resolves dependency endpoints. Returns which elements
/// to drop (lenient mode only).
fn check_references(trace: &mut Trace, problems: &mut Problems) -> Result<Vec<bool>> {
    let mut findings: Vec<(u64, String, Option<usize>)> = Vec::new();
    for s in &trace.signals {
        if s.line != 0 && s.fragments == 0 {
            findings.push((
                s.line,
                format!(
                    "signal {} has no fragment: every signal needs at least one `F` line",
                    trace.text(s.id)
                ),
                None,
            ));
        }
    }
    let mut last_end: FastMap<usize, i64> = FastMap::default();
    for index in 0..trace.elements.len() {
        let e = &trace.elements[index];
        let (spans, what) = match &e.item {
            Item::Event { t, .. } => ((*t, *t), "event time"),
            Item::Claim { t0, t1, .. } => ((*t0, *t1), "claim time"),
            Item::Fragment { t0, t1, .. } => ((*t0, *t1), "fragment time"),
            Item::Dep { .. } => continue,
        };
        let converted = trace
            .to_ns(trace.text(spans.0), what)
            .and_then(|a| Ok((a, trace.to_ns(trace.text(spans.1), what)?)));
        let ((t0, lossy0), (t1, lossy1)) = match converted {
            Ok(v) => v,
            Err(msg) => {
                findings.push((e.line, msg, Some(index)));
                continue;
            }
        };
        let (a, b) = (trace.text(spans.0), trace.text(spans.1));
        let mut problem = None;
        match &e.item {
            Item::Claim { .. } if t1 < t0 => {
                problem = Some(format!("claim ends before it starts ({b} < {a})"));
            }
            Item::Fragment { signal, .. } => {
                let id = trace.text(*signal);
                let s = trace.signal_index.get(id).copied().unwrap_or_default();
                if t1 <= t0 {
                    problem = Some(format!(
                        "empty fragment domain [{a}, {b}): the end must be after the start"
                    ));
                } else if let Some(&prev) = last_end.get(&s) {
                    if prev != t0 {
                        let how = if t0 > prev { "a gap" } else { "an overlap" };
                        problem = Some(format!(
                            "fragments of signal {id} are not consecutive: {how} before {a} (each fragment must start where the previous one ends)"
                        ));
                    }
                }
                if problem.is_none() {
                    last_end.insert(s, t1);
                }
            }
            _ => {}
        }
        if let Some(msg) = problem {
            findings.push((e.line, msg, Some(index)));
        }
        let e = &mut trace.elements[index];
        e.times = (t0, t1);
        e.lossy = lossy0 || lossy1;
    }
    let endpoint = |trace: &Trace, id: &str, end: Endpoint| -> Option<(i64, Option<u64>)> {
        match end {
            Endpoint::Event => {
                let &i = trace.events.get(id)?;
                Some((trace.elements[i].times.0, None))
            }
            _ => {
                let &i = trace.claims.get(&id.parse::<u64>().ok()?)?;
                let e = &trace.elements[i];
                let t = if end == Endpoint::ClaimEnd { e.times.1 } else { e.times.0 };
                match e.item {
                    Item::Claim { resource, .. } => Some((t, Some(resource))),
                    _ => None,
                }
            }
        }
    };
    let mut resolved = Vec::new();
    for (index, e) in trace.elements.iter().enumerate() {
        match &e.item {
            Item::Claim {
                resource, offset, ..
            } => match trace.resource_index.get(resource) {
                None => findings.push((
                    e.line,
                    format!("claim on unknown resource {resource} (no `R {resource}` line)"),
                    Some(index),
                )),
                Some(&r) => {
                    let uses = trace.resources[r].uses_offset;
                    if uses && offset.is_none() {
                        findings.push((e.line, format!("claim offset missing: resource {resource} uses offsets, so its claims need `<offset> <amount>`"), Some(index)));
                    } else if !uses && offset.is_some() {
                        findings.push((e.line, format!("unexpected claim offset: resource {resource} does not use offsets, so its claims give only `<amount>`"), Some(index)));
                    }
                }
            },
            Item::Dep { kind, src, dst, .. } => {
                let (src_kind, dst_kind) = DEP_TYPES[usize::from(*kind)];
                let (src_id, dst_id) = (trace.text(*src), trace.text(*dst));
                match (
                    endpoint(trace, src_id, src_kind),
                    endpoint(trace, dst_id, dst_kind),
                ) {
                    (Some(a), Some(b)) => resolved.push((index, (a.0, b.0), (a.1, b.1))),
                    (a, _) => {
                        let (which, id, k) = if a.is_none() {
                            ("source", src_id, src_kind)
                        } else {
                            ("destination", dst_id, dst_kind)
                        };
                        findings.push((
                            e.line,
                            format!(
                                "dependency {which} is an unknown {} `{id}` (type {kind} links {} to {})",
                                k.noun(),
                                src_kind.noun(),
                                dst_kind.noun()
                            ),
                            Some(index),
                        ));
                    }
                }
            }
            Item::Fragment { signal, .. } => {
                let id = trace.text(*signal);
                if trace
                    .signal_index
                    .get(id)
                    .is_none_or(|&i| trace.signals[i].line == 0)
                {
                    findings.push((
                        e.line,
                        format!("fragment of unknown signal {id} (no `S {id}` line)"),
                        Some(index),
                    ));
                }
            }
            Item::Event { .. } => {}
        }
    }
    for (index, times, locs) in resolved {
        let e = &mut trace.elements[index];
        e.times = times;
        if let Item::Dep { locs: l, .. } = &mut e.item {
            *l = locs;
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
    // A dependency on a dropped element goes too (lenient mode).
    if dropped.iter().any(|&d| d) {
        let gone_claims: Vec<u64> = trace
            .elements
            .iter()
            .zip(&dropped)
            .filter_map(|(e, &d)| match e.item {
                Item::Claim { id, .. } if d => Some(id),
                _ => None,
            })
            .collect();
        for (e, d) in trace.elements.iter().zip(dropped.iter_mut()) {
            if let Item::Dep { kind, src, dst, .. } = &e.item {
                let (sk, dk) = DEP_TYPES[usize::from(*kind)];
                let hits = |id: Span, k: Endpoint| {
                    k != Endpoint::Event
                        && trace
                            .text(id)
                            .parse::<u64>()
                            .is_ok_and(|c| gone_claims.contains(&c))
                };
                if !*d && (hits(*src, sk) || hits(*dst, dk)) {
                    warn(format!(
                        "{}:{}: dependency dropped with the claim it names",
                        problems.file, e.line
                    ));
                    *d = true;
                }
            }
        }
    }
    Ok(dropped)
}

/// The TRACE reader: validates the whole file at construction, then yields rows.
pub struct TraceReader {
    name: String,
    trace: Trace,
    /// Meta and container rows first, then the elements by completion time.
    prelude: std::vec::IntoIter<Record>,
    order: std::vec::IntoIter<(i64, usize)>,
    line: u64,
}

impl TraceReader {
    /// Reads and checks all of `inner`.
    pub fn new<R: BufRead>(name: &str, inner: R, opts: &ReadOptions) -> Result<TraceReader> {
        let mut problems = Problems {
            file: name,
            lenient: opts.lenient,
            skipped: 0,
        };
        let mut trace = read_trace(name, inner, &mut problems)?;
        let dropped = check_references(&mut trace, &mut problems)?;
        if problems.skipped > 0 {
            warn(format!(
                "{name}: {} problem(s) skipped in lenient mode",
                problems.skipped
            ));
        }
        let lossy = trace.elements.iter().filter(|e| e.lossy).count();
        if lossy > 0 {
            warn(format!(
                "{name}: {lossy} element(s) have times finer than a nanosecond; rounded and flagged E"
            ));
        }
        let mut order: Vec<(i64, usize)> = trace
            .elements
            .iter()
            .enumerate()
            .filter(|(i, _)| !dropped[*i])
            .map(|(i, e)| (e.times.0.max(e.times.1), i))
            .collect();
        // Elements are numbered in file order, so equal times keep file order.
        order.sort_unstable();
        let prelude = prelude(name, &trace);
        Ok(TraceReader {
            name: name.to_string(),
            trace,
            prelude: prelude.into_iter(),
            order: order.into_iter(),
            line: 0,
        })
    }
}

fn prelude(name: &str, trace: &Trace) -> Vec<Record> {
    let mut rows = vec![
        Record::meta("source_format", "trace"),
        Record::meta("source", name),
        Record::meta("time_unit", UNITS[trace.unit].1),
    ];
    if let Some(ms) = trace.offset_ms {
        rows.push(Record::meta(
            META_ORIGIN,
            &(i128::from(ms) * 1_000_000).to_string(),
        ));
    }
    for (k, v) in &trace.trace_attrs {
        rows.push(Record::meta(&format!("{META_ATTR}{k}"), v));
    }
    for r in &trace.resources {
        let mut rec = Record::new(Kind::Container);
        rec.loc = format!("{RESOURCE_LOC}{}", r.id);
        rec.cat.push_str("resource");
        if let Some(n) = r.name {
            rec.name.push_str(trace.text(n));
        }
        rec.value.push_str(trace.text(r.capacity));
        if r.uses_offset {
            rec.push_attr(ATTR_USES_OFFSET, "true");
        }
        append_attrs(&mut rec, trace.text(r.attrs));
        rows.push(rec);
    }
    for s in trace.signals.iter().filter(|s| s.line != 0) {
        let mut rec = Record::new(Kind::Container);
        rec.loc = format!("{SIGNAL_LOC}{}", trace.text(s.id));
        rec.cat.push_str("signal");
        if let Some(n) = s.name {
            rec.name.push_str(trace.text(n));
        }
        append_attrs(&mut rec, trace.text(s.attrs));
        rows.push(rec);
    }
    rows
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
        if let Some(r) = self.prelude.next() {
            *rec = r;
            return Ok(true);
        }
        let Some((_, index)) = self.order.next() else {
            return Ok(false);
        };
        let trace = &self.trace;
        let e = &trace.elements[index];
        self.line = e.line;
        rec.clear();
        if let Some(n) = e.name {
            rec.name.push_str(trace.text(n));
        }
        match e.item {
            Item::Event { id, .. } => {
                rec.kind = Kind::Event;
                rec.time = Some(e.times.0);
                rec.id.push_str(trace.text(id));
            }
            Item::Claim {
                id,
                resource,
                offset,
                amount,
                ..
            } => {
                rec.kind = Kind::Claim;
                rec.time = Some(e.times.0);
                rec.end = Some(e.times.1);
                rec.loc = format!("{RESOURCE_LOC}{resource}");
                rec.id = id.to_string();
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
                locs,
            } => {
                rec.kind = Kind::Dep;
                rec.time = Some(e.times.0);
                rec.end = Some(e.times.1);
                if let Some(r) = locs.0 {
                    rec.loc = format!("{RESOURCE_LOC}{r}");
                }
                if let Some(r) = locs.1 {
                    rec.peer = format!("{RESOURCE_LOC}{r}");
                }
                rec.id.push_str(trace.text(id));
                rec.cat = kind.to_string();
                rec.push_attr(ATTR_SRC, trace.text(src));
                rec.push_attr(ATTR_DST, trace.text(dst));
            }
            Item::Fragment {
                signal,
                coefficients,
                ..
            } => {
                rec.kind = Kind::Signal;
                rec.time = Some(e.times.0);
                rec.end = Some(e.times.1);
                rec.loc = format!("{SIGNAL_LOC}{}", trace.text(signal));
                rec.attrs.push_str(trace.text(coefficients));
                rec.push_attr("time_unit", UNITS[trace.unit].1);
            }
        }
        append_attrs(rec, trace.text(e.attrs));
        if e.lossy {
            rec.add_flag(flags::LOSSY);
        }
        Ok(true)
    }

    fn location(&self) -> Location {
        Location::Line {
            file: self.name.clone(),
            line: self.line,
        }
    }
}

/// The dependency type of a stream `dep` row written by this reader.
pub fn dep_type_of(rec: &Record) -> Option<usize> {
    rec.cat
        .parse::<usize>()
        .ok()
        .filter(|&t| t < DEP_TYPES.len())
}
