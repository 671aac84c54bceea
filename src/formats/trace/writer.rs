//! Writes a stream as a TRACE file.
//!
//! A stream read from TRACE maps back one to one. Other streams map where the
//! meaning holds (see `docs/formats.md`): every location becomes a resource,
//! frames (`enter`/`leave` pairs, `state`, `coll`) become claims of amount 1 on
//! their location's resource, instants and message halves become events, a
//! matched message or a foreign dependency becomes two events and a type-4
//! dependency, counters become piecewise-constant signals. Resource ids must be
//! declared before the lines that use them are final, so the file is assembled
//! in memory and written at the end.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::{
    escape_attr, Endpoint, ATTR_DST, ATTR_OFFSET, ATTR_SRC, ATTR_USES_OFFSET, DEP_TYPES, META_ATTR,
    PREFIX, RESOURCE_LOC, SIGNAL_LOC, UNITS,
};
use crate::decimal::{push_scaled, Decimal};
use crate::error::{Error, Result, Warnings};
use crate::fasthash::{FastMap, FastSet};
use crate::io::Output;
use crate::model::record::{owned_attr, Kind, Record, META_ORIGIN};
use crate::model::symbol::Symbols;
use crate::pipe::{RecordSink, WriteOptions};
use crate::stages::matcher::{MatchOptions, Matcher, Unmatched};
use crate::stages::spans::SpanBuilder;

/// Registry constructor: the writer behind a span builder, so `enter`/`leave`
/// pairs arrive as `state` rows.
/// Message halves are paired first (as trace-match does, Pajé link ends
/// by key included), so a message becomes two events and a dependency
/// between them that TRACE4CPS follows; a half whose partner never comes
/// stays an event (flagged `U`).
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    let symbols = opts.symbols.clone();
    let writer = TraceWriter::new(out, symbols.clone(), opts.warnings.clone());
    let spans = SpanBuilder::new(writer, symbols.clone(), opts.warnings.clone());
    let options = MatchOptions {
        unmatched: Unmatched::Keep,
        ..MatchOptions::default()
    };
    Ok(Box::new(Matcher::with_options(
        spans,
        options,
        symbols,
        opts.warnings.clone(),
    )))
}

struct ResourceLine {
    id: u64,
    uses_offset: bool,
    line: String,
}

/// Hands out ids: keeps a wanted id when it is free, else takes the next free one.
#[derive(Default)]
struct Ids {
    used: HashSet<String>,
    next: u64,
}

impl Ids {
    /// An id for an element that has `wanted` (TRACE ids are natural
    /// numbers: any other is replaced), and whether `wanted` was kept (or
    /// none was wanted).
    fn take(&mut self, wanted: &str) -> (String, bool) {
        let natural = !wanted.is_empty() && wanted.bytes().all(|b| b.is_ascii_digit());
        if natural && self.used.insert(wanted.to_string()) {
            return (wanted.to_string(), true);
        }
        loop {
            let candidate = self.next.to_string();
            self.next += 1;
            if self.used.insert(candidate.clone()) {
                return (candidate, wanted.is_empty());
            }
        }
    }
}

/// Counter samples of one (location, name), becoming one signal.
struct Series {
    /// Index in the writer's signals.
    signal: usize,
    last: Option<(i64, String)>,
}

/// The TRACE writer.
pub struct TraceWriter {
    out: Output,
    symbols: Symbols,
    unit: usize,
    unit_from_meta: bool,
    origin_ns: Option<i128>,
    trace_attrs: Vec<(String, String)>,
    resources: Vec<ResourceLine>,
    resource_of: FastMap<String, usize>,
    signals: Vec<SignalDecl>,
    /// Index in `signals` of each signal location.
    signal_of: FastMap<String, usize>,
    /// Written ids of the stream's claims and events, for dependencies.
    claim_map: FastMap<String, String>,
    event_map: FastMap<String, String>,
    /// Dependencies between TRACE elements whose endpoint had no id yet
    /// (an endpoint may complete after its dependency), written at the end.
    deps: Vec<PendingDep>,
    /// Ids of claims (true) and events (false) that dependencies already
    /// point at, kept for those elements.
    reserved: FastSet<(bool, String)>,
    /// Dependency lines written with a reserved endpoint: their place in
    /// `elements`, taken out at the end if an endpoint never came.
    provisional: Vec<(std::ops::Range<usize>, PendingDep)>,
    /// Element lines (E, C, D, F), written after the resources and signals.
    elements: String,
    resource_ids: Ids,
    signal_ids: Ids,
    event_ids: Ids,
    claim_ids: Ids,
    dep_ids: Ids,
    series: FastMap<(String, String), Series>,
    last_time: i64,
    renumbered: u64,
    /// Attribute texts changed to fit TRACE (line breaks, white space at the ends).
    changed_attrs: u64,
    /// Fragments repeated exactly (merged copies of one input), written once.
    repeated_fragments: u64,
    /// Dependencies whose endpoint is missing, written as two events.
    unlinked_deps: u64,
    warnings: Warnings,
}

/// A signal: its `S` line, or an `R` line when it gets no fragment (TRACE
/// wants at least one per signal), and its last fragment.
struct SignalDecl {
    id: String,
    loc: String,
    attrs: String,
    resource_attrs: String,
    last: Option<Fragment>,
}

#[derive(PartialEq)]
struct Fragment {
    t0: i64,
    t1: i64,
    coefficients: [String; 3],
}

/// A dependency between TRACE elements, as the stream gave it.
struct PendingDep {
    rec: Record,
    kind: usize,
    src: String,
    dst: String,
}

impl TraceWriter {
    /// A writer over `out`. Times are written in the stream's original unit when
    /// its `time_unit` meta names a TRACE unit, else in nanoseconds.
    pub fn new(out: Output, symbols: Symbols, warnings: Warnings) -> TraceWriter {
        TraceWriter {
            out,
            symbols,
            unit: 0,
            unit_from_meta: false,
            origin_ns: None,
            trace_attrs: Vec::new(),
            resources: Vec::new(),
            resource_of: FastMap::default(),
            signals: Vec::new(),
            signal_of: FastMap::default(),
            claim_map: FastMap::default(),
            event_map: FastMap::default(),
            deps: Vec::new(),
            reserved: FastSet::default(),
            provisional: Vec::new(),
            elements: String::new(),
            resource_ids: Ids::default(),
            signal_ids: Ids::default(),
            event_ids: Ids::default(),
            claim_ids: Ids::default(),
            dep_ids: Ids::default(),
            series: FastMap::default(),
            last_time: 0,
            renumbered: 0,
            changed_attrs: 0,
            repeated_fragments: 0,
            unlinked_deps: 0,
            warnings,
        }
    }

    fn meta(&mut self, rec: &Record) {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        if let Some(key) = t.name.strip_prefix(META_ATTR) {
            self.trace_attrs.push((key.to_string(), rec.value.clone()));
        } else if t.name == "time_unit" && !self.unit_from_meta && self.elements.is_empty() {
            if let Some(u) = UNITS.iter().position(|u| u.1 == rec.value) {
                self.unit = u;
                self.unit_from_meta = true;
            }
        } else if rec.name == META_ORIGIN {
            self.origin_ns = rec.value.parse::<i128>().ok();
        }
    }

    /// User attributes of `rec` (format fields of TRACE left out), then the
    /// columns a TRACE line has no place for, as `key=value` attributes.
    fn attributes(&mut self, rec: &Record, columns: &[(&str, &str)]) -> String {
        let mut pairs: Vec<(String, String)> = rec
            .attrs()
            .filter(|(k, _)| !k.starts_with(PREFIX))
            .map(owned_attr)
            .collect();
        for (k, v) in columns {
            if !v.is_empty() && !pairs.iter().any(|(key, _)| key == k) {
                pairs.push((k.to_string(), v.to_string()));
            }
        }
        let mut out = String::new();
        self.changed_attrs += u64::from(push_attr_list(&pairs, &mut out));
        out
    }

    fn container(&mut self, rec: &Record) {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        if t.cat == "signal" {
            if let Some(id) = t.loc.strip_prefix(SIGNAL_LOC) {
                if self.signal_of.contains_key(t.loc) {
                    return; // Declared again (merged inputs).
                }
                let (id, _) = self.signal_ids.take(id);
                let attrs = self.attributes(rec, &[("name", t.name)]);
                let resource_attrs =
                    self.attributes(rec, &[("name", t.name), ("loc", t.loc), ("type", "signal")]);
                let signal = self.declare_signal(id, t.loc.to_string(), attrs, resource_attrs);
                self.signal_of.insert(t.loc.to_string(), signal);
                return;
            }
        }
        if self.resource_of.contains_key(t.loc) {
            return;
        }
        let native = t.cat == "resource";
        let wanted = match t.loc.strip_prefix(RESOURCE_LOC) {
            Some(n) if native && n.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => "",
        };
        let (id, _) = self.resource_ids.take(wanted);
        let capacity = match Decimal::parse(&rec.value) {
            Some(d) if d.is_positive() => rec.value.as_str(),
            _ => "1",
        };
        let uses_offset = rec.attr(ATTR_USES_OFFSET).as_deref() == Some("true");
        let extra: Vec<(&str, &str)> = if native {
            vec![("name", t.name)]
        } else {
            let name = if t.name.is_empty() { t.loc } else { t.name };
            vec![
                ("name", name),
                ("loc", t.loc),
                ("type", t.cat),
                ("parent", t.peer),
            ]
        };
        let attrs = self.attributes(rec, &extra);
        let line = format!("R {id} {capacity} {uses_offset} ; {attrs}");
        self.resource_of
            .insert(t.loc.to_string(), self.resources.len());
        self.resources.push(ResourceLine {
            id: id.parse().unwrap_or_default(),
            uses_offset,
            line,
        });
    }

    /// Adds a signal; returns its index.
    fn declare_signal(
        &mut self,
        id: String,
        loc: String,
        attrs: String,
        resource_attrs: String,
    ) -> usize {
        let last = None;
        self.signals.push(SignalDecl {
            id,
            loc,
            attrs,
            resource_attrs,
            last,
        });
        self.signals.len() - 1
    }

    /// The resource of `loc`, declared as a placeholder (attributes `loc`,
    /// `type`) when the stream has no `container` row for it or declared it
    /// as a signal.
    fn resource(&mut self, loc: &str) -> &ResourceLine {
        if !self.resource_of.contains_key(loc) {
            let (id, _) = self.resource_ids.take("");
            let type_ = if self.signal_of.contains_key(loc) {
                "signal"
            } else {
                "undeclared"
            };
            let mut attrs = String::new();
            let pairs =
                [("loc", loc), ("type", type_)].map(|(k, v)| (k.to_string(), v.to_string()));
            self.changed_attrs += u64::from(push_attr_list(&pairs, &mut attrs));
            let line = format!("R {id} 1 false ; {attrs}");
            self.resource_of
                .insert(loc.to_string(), self.resources.len());
            let id = id.parse().unwrap_or_default();
            self.resources.push(ResourceLine {
                id,
                uses_offset: false,
                line,
            });
        }
        &self.resources[self.resource_of[loc]]
    }

    fn claim(&mut self, rec: &Record, columns: &[(&str, &str)]) -> Result<()> {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
        let resource = self.resource(t.loc);
        let (rid, uses_offset) = (resource.id, resource.uses_offset);
        let wanted = if rec.kind == Kind::Claim && rec.id.bytes().all(|b| b.is_ascii_digit()) {
            rec.id.as_str()
        } else {
            ""
        };
        let (id, kept) = if self.reserved.remove(&(true, wanted.to_string())) {
            (wanted.to_string(), true)
        } else {
            self.claim_ids.take(wanted)
        };
        if !kept {
            self.renumbered += 1;
        }
        if rec.kind == Kind::Claim && !rec.id.is_empty() {
            self.claim_map
                .entry(rec.id.clone())
                .or_insert_with(|| id.clone());
        }
        let amount = match Decimal::parse(&rec.value) {
            Some(d) if rec.kind == Kind::Claim && d.is_positive() => rec.value.as_str(),
            _ => "1",
        };
        let offset = if uses_offset {
            format!(" {}", rec.attr(ATTR_OFFSET).unwrap_or_else(|| "0".into()))
        } else {
            String::new()
        };
        let attrs = self.attributes(rec, columns);
        let factor = self.factor();
        let out = &mut self.elements;
        let _ = write!(out, "C {id} ");
        push_scaled(out, start.min(end), factor);
        out.push(' ');
        push_scaled(out, start.max(end), factor);
        let _ = writeln!(out, " {rid}{offset} {amount} ; {attrs}");
        Ok(())
    }

    fn event(&mut self, time: i64, wanted: &str, attrs: String) -> String {
        let (id, kept) = if self.reserved.remove(&(false, wanted.to_string())) {
            (wanted.to_string(), true)
        } else {
            self.event_ids.take(wanted)
        };
        if !kept {
            self.renumbered += 1;
        }
        let factor = self.factor();
        let out = &mut self.elements;
        let _ = write!(out, "E {id} ");
        push_scaled(out, time, factor);
        let _ = writeln!(out, " ; {attrs}");
        id
    }

    fn dependency(&mut self, wanted: &str, kind: usize, src: &str, dst: &str, attrs: String) {
        let (id, _) = self.dep_ids.take(wanted);
        let _ = writeln!(self.elements, "D {id} {kind} {src} {dst} ; {attrs}");
    }

    /// An `event`: a TRACE event, its id kept when free.
    fn instant(&mut self, rec: &Record) {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        let native = t.loc.is_empty() && t.cat.is_empty();
        let attrs = if native {
            self.attributes(rec, &[("name", t.name), ("value", &rec.value)])
        } else {
            let columns = [
                ("name", t.name),
                ("loc", t.loc),
                ("category", t.cat),
                ("value", &rec.value),
            ];
            self.attributes(rec, &columns)
        };
        let id = self.event(rec.time.unwrap_or_default(), &rec.id, attrs);
        if !rec.id.is_empty() {
            self.event_map.entry(rec.id.clone()).or_insert(id);
        }
    }

    /// A message half: an event whose attributes say what it was.
    fn half(&mut self, rec: &Record) {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
        let size = rec.size.map(|t| t.to_string()).unwrap_or_default();
        let columns = [
            ("name", t.name),
            ("kind", rec.kind.as_str()),
            ("loc", t.loc),
            ("peer", t.peer),
            ("comm", t.comm),
            ("tag", &tag),
            ("size", &size),
            ("id", &rec.id),
            ("flags", &rec.flags),
        ];
        let attrs = self.attributes(rec, &columns);
        self.event(rec.time.unwrap_or_default(), "", attrs);
    }

    /// A message or foreign dependency: an event at each end and a type-4 dependency.
    fn linked_events(&mut self, rec: &Record) {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        let what = rec.kind.as_str();
        let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
        let size = rec.size.map(|t| t.to_string()).unwrap_or_default();
        let common = [
            ("comm", t.comm),
            ("tag", tag.as_str()),
            ("size", size.as_str()),
            ("value", rec.value.as_str()),
        ];
        let mut from = vec![
            ("name", t.name),
            ("kind", what),
            ("end", "source"),
            ("loc", t.loc),
            ("peer", t.peer),
        ];
        from.extend(common);
        let mut to = vec![
            ("name", t.name),
            ("kind", what),
            ("end", "destination"),
            ("loc", t.peer),
            ("peer", t.loc),
        ];
        to.extend(common);
        let from = self.attributes(rec, &from);
        let src = self.event(rec.time.unwrap_or_default(), "", from);
        let to = self.attributes(rec, &to);
        let dst = self.event(rec.end.unwrap_or_default(), "", to);
        let attrs = self.attributes(rec, &[("kind", what), ("id", &rec.id), ("type", t.cat)]);
        self.dependency(&rec.id, 4, &src, &dst, attrs);
    }

    /// The id an endpoint of a dependency is written with: its element's,
    /// or the element's own id reserved for it when it has not come yet and
    /// nothing else took it (`true` then); `None` when it cannot be known yet.
    fn endpoint(&mut self, kind: Endpoint, id: &str) -> Option<(String, bool)> {
        let claim = kind != Endpoint::Event;
        let (map, ids) = if claim {
            (&self.claim_map, &mut self.claim_ids)
        } else {
            (&self.event_map, &mut self.event_ids)
        };
        if let Some(written) = map.get(id) {
            return Some((written.clone(), false));
        }
        let key = (claim, id.to_string());
        if self.reserved.contains(&key) {
            return Some((id.to_string(), true));
        }
        if !id.bytes().all(|b| b.is_ascii_digit()) || !ids.used.insert(id.to_string()) {
            return None;
        }
        self.reserved.insert(key);
        Some((id.to_string(), true))
    }

    /// A dependency between two elements of the stream, in its place in
    /// the file when its endpoints' ids are known or reserved, else at the end.
    fn native_dep(&mut self, dep: PendingDep) {
        let symbols = self.symbols.clone();
        let (src_kind, dst_kind) = DEP_TYPES[dep.kind];
        let src = self.endpoint(src_kind, &dep.src);
        let dst = self.endpoint(dst_kind, &dep.dst);
        let (Some((src, src_reserved)), Some((dst, dst_reserved))) = (src, dst) else {
            self.deps.push(dep);
            return;
        };
        let start = self.elements.len();
        let attrs = self.attributes(&dep.rec, &[("name", symbols.text(dep.rec.name))]);
        self.dependency(&dep.rec.id, dep.kind, &src, &dst, attrs);
        if src_reserved || dst_reserved {
            self.provisional.push((start..self.elements.len(), dep));
        }
    }

    /// At the end: dependencies whose endpoint never came are taken out of
    /// their place and written as two events; those that waited for an id
    /// are written (see [`TraceWriter::write_dep`]).
    fn settle_deps(&mut self) {
        let mut cut = Vec::new();
        for (range, dep) in std::mem::take(&mut self.provisional) {
            let (src_kind, dst_kind) = DEP_TYPES[dep.kind];
            let missing = |kind: Endpoint, id: &str| {
                self.reserved
                    .contains(&(kind != Endpoint::Event, id.to_string()))
            };
            if missing(src_kind, &dep.src) || missing(dst_kind, &dep.dst) {
                cut.push(range);
                self.deps.push(dep);
            }
        }
        if !cut.is_empty() {
            let mut kept = String::with_capacity(self.elements.len());
            let mut from = 0;
            for range in cut {
                kept.push_str(&self.elements[from..range.start]);
                from = range.end;
            }
            kept.push_str(&self.elements[from..]);
            self.elements = kept;
        }
        for dep in std::mem::take(&mut self.deps) {
            self.write_dep(dep);
        }
    }

    /// A dependency that waited for its endpoints: as it was, its endpoints
    /// renamed as their elements were; as two events when an endpoint is
    /// not in the stream (a filtered trace).
    fn write_dep(&mut self, dep: PendingDep) {
        let symbols = self.symbols.clone();
        let (src_kind, dst_kind) = DEP_TYPES[dep.kind];
        let end = |kind: Endpoint, id: &str| -> Option<String> {
            let map = match kind {
                Endpoint::Event => &self.event_map,
                _ => &self.claim_map,
            };
            map.get(id).cloned()
        };
        match (end(src_kind, &dep.src), end(dst_kind, &dep.dst)) {
            (Some(src), Some(dst)) => {
                let attrs = self.attributes(&dep.rec, &[("name", symbols.text(dep.rec.name))]);
                self.dependency(&dep.rec.id, dep.kind, &src, &dst, attrs);
            }
            _ => {
                self.unlinked_deps += 1;
                self.linked_events(&dep.rec);
            }
        }
    }

    fn counter(&mut self, rec: &Record) -> Result<()> {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        let time = rec.time.unwrap_or_default();
        if Decimal::parse(&rec.value).is_none() {
            return Err(Error::Record(format!(
                "counter `{}` has the value `{}`: a TRACE signal holds numbers",
                t.name, rec.value
            )));
        }
        let key = (t.loc.to_string(), t.name.to_string());
        if !self.series.contains_key(&key) {
            let (id, _) = self.signal_ids.take("");
            let label = if t.name.is_empty() { "counter" } else { t.name };
            let columns = [("name", label), ("loc", t.loc), ("type", "counter")];
            let attrs = self.attributes(rec, &columns);
            let loc = format!("{label} on {}", t.loc);
            let signal = self.declare_signal(id, loc, attrs.clone(), attrs);
            self.series
                .insert(key.clone(), Series { signal, last: None });
        }
        let series = self.series.get_mut(&key).expect("inserted above");
        let signal = series.signal;
        match series.last.replace((time, rec.value.clone())) {
            Some((t0, value)) if time > t0 => {
                self.fragment(signal, t0, time, [value, "0".into(), "0".into()])?;
            }
            Some(_) => self.warnings.warn(format!(
                "counter `{}` on `{}`: two samples at {time} ns; the earlier one is left out",
                t.name, t.loc
            )),
            None => {}
        }
        Ok(())
    }

    fn signal_fragment(&mut self, rec: &Record) -> Result<()> {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        let Some(&signal) = self.signal_of.get(t.loc) else {
            return Err(Error::Record(format!(
                "cannot write a fragment of `{}`: no signal `container` row declares it",
                t.loc
            )));
        };
        // Coefficients are per unit of the fragment's own time unit; rescale when
        // the file uses another one.
        let from = rec
            .attr("time_unit")
            .and_then(|u| UNITS.iter().position(|x| x.1 == u));
        let k = from.map_or(1.0, |from| UNITS[self.unit].2 as f64 / UNITS[from].2 as f64);
        let mut coefficients: [String; 3] = Default::default();
        for (power, name) in ["c", "b", "a"].into_iter().enumerate() {
            let text = rec.attr(name).unwrap_or_else(|| "0".to_string());
            let value = Decimal::parse(&text).map(|d| d.to_f64() * k.powi(power as i32));
            coefficients[power] = match value {
                Some(v) if v.is_finite() && k == 1.0 => text,
                Some(v) if v.is_finite() => format!("{v}"),
                _ => {
                    return Err(Error::Record(format!(
                        "signal coefficient `{name}` is `{text}`: TRACE wants a finite number"
                    )))
                }
            };
        }
        let (t0, t1) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
        self.fragment(signal, t0, t1, coefficients)
    }

    fn factor(&self) -> u64 {
        UNITS[self.unit].2
    }

    /// Writes a fragment of signal `signal` (index), which must start where
    /// the signal's last one ended; an exact repetition of the last one (an
    /// input merged with itself) is written once.
    fn fragment(
        &mut self,
        signal: usize,
        t0: i64,
        t1: i64,
        coefficients: [String; 3],
    ) -> Result<()> {
        let fragment = Fragment {
            t0,
            t1,
            coefficients,
        };
        let factor = self.factor();
        let decl = &mut self.signals[signal];
        if decl.last.as_ref() == Some(&fragment) {
            self.repeated_fragments += 1;
            return Ok(());
        }
        let follows = decl
            .last
            .as_ref()
            .is_none_or(|last| last.t0 < t0 && last.t1 == t0);
        if t1 <= t0 || !follows {
            let previous = decl.last.as_ref().map_or(String::new(), |l| {
                format!(", and the previous one spans {} to {} ns", l.t0, l.t1)
            });
            return Err(Error::Record(format!(
                "a fragment of signal `{}` spans {t0} to {t1} ns{previous}: TRACE signal fragments are non-empty and each starts where the previous ended",
                decl.loc
            )));
        }
        let out = &mut self.elements;
        let _ = write!(out, "F {} ", decl.id);
        push_scaled(out, t0, factor);
        out.push(' ');
        push_scaled(out, t1, factor);
        let [c, b, a] = &fragment.coefficients;
        let _ = writeln!(out, " {c} {b} {a}");
        decl.last = Some(fragment);
        Ok(())
    }
}

/// Writes `key = value, ...`; returns whether some text will read back
/// otherwise (see [`escape_attr`]). An empty key is written as `_`.
fn push_attr_list(pairs: &[(String, String)], out: &mut String) -> bool {
    let mut changed = false;
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let start = out.len();
        changed |= escape_attr(k, out);
        if out.len() == start {
            out.push('_');
            changed = true;
        }
        out.push_str(" = ");
        changed |= escape_attr(v, out);
    }
    changed
}

impl RecordSink for TraceWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        let symbols = self.symbols.clone();
        let t = rec.idents(&symbols);
        if let Some(t) = rec.completion() {
            self.last_time = self.last_time.max(t);
        }
        let depth = rec.depth.map(|d| d.to_string()).unwrap_or_default();
        match rec.kind {
            Kind::Meta => self.meta(rec),
            Kind::Container => self.container(rec),
            Kind::Claim => self.claim(rec, &[("name", t.name)])?,
            Kind::State | Kind::Enter | Kind::Leave => self.claim(
                rec,
                &[
                    ("name", t.name),
                    ("kind", "state"),
                    ("category", t.cat),
                    ("depth", &depth),
                    ("value", &rec.value),
                    ("id", &rec.id),
                ],
            )?,
            Kind::Coll => {
                let size = rec.size.map(|s| s.to_string()).unwrap_or_default();
                self.claim(
                    rec,
                    &[
                        ("name", t.name),
                        ("kind", "coll"),
                        ("comm", t.comm),
                        ("root", t.peer),
                        ("size", &size),
                        ("received", &rec.value),
                        ("id", &rec.id),
                    ],
                )?
            }
            Kind::Event => self.instant(rec),
            Kind::Send | Kind::Recv => self.half(rec),
            Kind::Msg => self.linked_events(rec),
            Kind::Dep => match (
                rec.attr(ATTR_SRC),
                rec.attr(ATTR_DST),
                t.cat.parse::<usize>(),
            ) {
                (Some(src), Some(dst), Ok(kind)) if kind < DEP_TYPES.len() => {
                    let rec = rec.clone();
                    self.native_dep(PendingDep {
                        rec,
                        kind,
                        src,
                        dst,
                    });
                }
                _ => self.linked_events(rec),
            },
            Kind::Counter => self.counter(rec)?,
            Kind::Signal => self.signal_fragment(rec)?,
            // TRACE has no type hierarchy and no end of a resource's life.
            Kind::Type | Kind::Destroy => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        // Close every counter series at the end of the trace (at least 1 ns long).
        let mut open: Vec<(usize, i64, String)> = self
            .series
            .values_mut()
            .filter_map(|s| s.last.take().map(|(t, v)| (s.signal, t, v)))
            .collect();
        open.sort_by_key(|o| o.0);
        for (signal, t, value) in open {
            let end = self.last_time.max(t + 1);
            self.fragment(signal, t, end, [value, "0".into(), "0".into()])?;
        }
        self.settle_deps();
        self.declare_empty_signals();
        let head = self.head();
        self.out.write_line(head.as_bytes())?;
        self.out.write_line(self.elements.as_bytes())?;
        self.report();
        self.out.finish()
    }
}

impl TraceWriter {
    /// A signal without fragments becomes a resource (TRACE wants at least
    /// one `F` per `S`), unless a claim already made one for its location.
    fn declare_empty_signals(&mut self) {
        for n in 0..self.signals.len() {
            let decl = &self.signals[n];
            if decl.last.is_some() || self.resource_of.contains_key(&decl.loc) {
                continue;
            }
            let (id, _) = self.resource_ids.take("");
            let line = format!("R {id} 1 false ; {}", decl.resource_attrs);
            self.resource_of
                .insert(decl.loc.clone(), self.resources.len());
            let id = id.parse().unwrap_or_default();
            self.resources.push(ResourceLine {
                id,
                uses_offset: false,
                line,
            });
        }
    }

    /// The lines before the elements: unit, offset, trace attributes,
    /// resources and signals.
    fn head(&mut self) -> String {
        let mut text = format!("TU {}\n", UNITS[self.unit].0);
        if let Some(ns) = self.origin_ns {
            if ns % 1_000_000 != 0 {
                self.warnings.warn("the stream origin is not a whole millisecond; the TRACE offset (O) is rounded down");
            }
            text.push_str(&format!("O {}\n", ns.div_euclid(1_000_000)));
        }
        if !self.trace_attrs.is_empty() {
            text.push_str("T ");
            self.changed_attrs += u64::from(push_attr_list(&self.trace_attrs, &mut text));
            text.push('\n');
        }
        for r in &self.resources {
            text.push_str(&r.line);
            text.push('\n');
        }
        for s in self.signals.iter().filter(|s| s.last.is_some()) {
            let _ = writeln!(text, "S {} ; {}", s.id, s.attrs);
        }
        text
    }

    /// Warns about what the file holds otherwise than the stream did.
    fn report(&self) {
        let counts = [
            (self.renumbered, "claim(s) or event(s) got new ids (their stream ids were missing, not natural numbers, or taken)"),
            (self.changed_attrs, "attribute list(s) changed to fit TRACE: line breaks became spaces, white space at the ends of keys and values dropped, empty keys named `_`"),
            (self.repeated_fragments, "signal fragment(s) repeated exactly (an input merged with itself?) were written once"),
            (self.unlinked_deps, "dependency(ies) whose claim or event is not in the stream were written as two events and a type-4 dependency"),
        ];
        for (n, what) in counts {
            if n > 0 {
                self.warnings.warn(format!("{n} {what}"));
            }
        }
    }
}
