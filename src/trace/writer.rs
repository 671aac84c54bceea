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
    escape_attr, ATTR_DST, ATTR_OFFSET, ATTR_SRC, ATTR_USES_OFFSET, META_ATTR, PREFIX,
    RESOURCE_LOC, SIGNAL_LOC, UNITS,
};
use crate::decimal::{push_scaled, Decimal};
use crate::error::{Error, Result, Warnings};
use crate::fasthash::FastMap;
use crate::io::Output;
use crate::ops::spans::SpanBuilder;
use crate::pipe::{RecordSink, WriteOptions};
use crate::record::{Kind, Record, META_ORIGIN};

/// Registry constructor: the writer behind a span builder, so `enter`/`leave`
/// pairs arrive as `state` rows.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    let writer = TraceWriter::new(out, opts.warnings.clone());
    Ok(Box::new(SpanBuilder::new(writer, opts.warnings.clone())))
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
    fn take(&mut self, wanted: &str) -> (String, bool) {
        if !wanted.is_empty() && self.used.insert(wanted.to_string()) {
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
    signal: String,
    last: Option<(i64, String)>,
}

/// The TRACE writer.
pub struct TraceWriter {
    out: Output,
    unit: usize,
    unit_from_meta: bool,
    origin_ns: Option<i128>,
    trace_attrs: Vec<(String, String)>,
    resources: Vec<ResourceLine>,
    resource_of: FastMap<String, usize>,
    signals: Vec<String>,
    signal_of: FastMap<String, String>,
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
    warnings: Warnings,
}

impl TraceWriter {
    /// A writer over `out`. Times are written in the stream's original unit when
    /// its `time_unit` meta names a TRACE unit, else in nanoseconds.
    pub fn new(out: Output, warnings: Warnings) -> TraceWriter {
        TraceWriter {
            out,
            unit: 0,
            unit_from_meta: false,
            origin_ns: None,
            trace_attrs: Vec::new(),
            resources: Vec::new(),
            resource_of: FastMap::default(),
            signals: Vec::new(),
            signal_of: FastMap::default(),
            elements: String::new(),
            resource_ids: Ids::default(),
            signal_ids: Ids::default(),
            event_ids: Ids::default(),
            claim_ids: Ids::default(),
            dep_ids: Ids::default(),
            series: FastMap::default(),
            last_time: 0,
            renumbered: 0,
            warnings,
        }
    }

    fn meta(&mut self, rec: &Record) {
        if let Some(key) = rec.name.strip_prefix(META_ATTR) {
            self.trace_attrs.push((key.to_string(), rec.value.clone()));
        } else if rec.name == "time_unit" && !self.unit_from_meta && self.elements.is_empty() {
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
    fn attributes(rec: &Record, columns: &[(&str, &str)]) -> String {
        let mut pairs: Vec<(String, String)> = rec
            .attrs()
            .filter(|(k, _)| !k.starts_with(PREFIX))
            .collect();
        for (k, v) in columns {
            if !v.is_empty() && !pairs.iter().any(|(key, _)| key == k) {
                pairs.push((k.to_string(), v.to_string()));
            }
        }
        let mut out = String::new();
        for (i, (k, v)) in pairs.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            escape_attr(k, &mut out);
            out.push_str(" = ");
            escape_attr(v, &mut out);
        }
        out
    }

    fn container(&mut self, rec: &Record) {
        if rec.cat == "signal" {
            if let Some(id) = rec.loc.strip_prefix(SIGNAL_LOC) {
                let (id, _) = self.signal_ids.take(id);
                let attrs = Self::attributes(rec, &[("name", &rec.name)]);
                self.signals.push(format!("S {id} ; {attrs}"));
                self.signal_of.insert(rec.loc.clone(), id);
                return;
            }
        }
        if self.resource_of.contains_key(&rec.loc) {
            return;
        }
        let native = rec.cat == "resource";
        let wanted = match rec.loc.strip_prefix(RESOURCE_LOC) {
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
            vec![("name", &rec.name)]
        } else {
            let name = if rec.name.is_empty() {
                &rec.loc
            } else {
                &rec.name
            };
            vec![
                ("name", name),
                ("loc", &rec.loc),
                ("type", &rec.cat),
                ("parent", &rec.peer),
            ]
        };
        let attrs = Self::attributes(rec, &extra);
        let line = format!("R {id} {capacity} {uses_offset} ; {attrs}");
        self.resource_of
            .insert(rec.loc.clone(), self.resources.len());
        self.resources.push(ResourceLine {
            id: id.parse().unwrap_or_default(),
            uses_offset,
            line,
        });
    }

    fn resource(&self, loc: &str) -> Result<&ResourceLine> {
        self.resource_of
            .get(loc)
            .map(|&i| &self.resources[i])
            .ok_or_else(|| {
                Error::Record(format!(
                    "cannot write a claim on `{loc}`: no `container` row declares it"
                ))
            })
    }

    fn claim(&mut self, rec: &Record, columns: &[(&str, &str)]) -> Result<()> {
        let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
        let resource = self.resource(&rec.loc)?;
        let (rid, uses_offset) = (resource.id, resource.uses_offset);
        let wanted = if rec.kind == Kind::Claim && rec.id.bytes().all(|b| b.is_ascii_digit()) {
            rec.id.as_str()
        } else {
            ""
        };
        let (id, kept) = self.claim_ids.take(wanted);
        if !kept {
            self.renumbered += 1;
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
        let attrs = Self::attributes(rec, columns);
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
        let (id, kept) = self.event_ids.take(wanted);
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

    /// A message or foreign dependency: an event at each end and a type-4 dependency.
    fn linked_events(&mut self, rec: &Record) {
        let what = rec.kind.as_str();
        let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
        let size = rec.size.map(|t| t.to_string()).unwrap_or_default();
        let common = [
            ("comm", rec.comm.as_str()),
            ("tag", tag.as_str()),
            ("size", size.as_str()),
            ("value", rec.value.as_str()),
        ];
        let mut from = vec![
            ("name", rec.name.as_str()),
            ("kind", what),
            ("end", "source"),
            ("loc", rec.loc.as_str()),
            ("peer", rec.peer.as_str()),
        ];
        from.extend(common);
        let mut to = vec![
            ("name", rec.name.as_str()),
            ("kind", what),
            ("end", "destination"),
            ("loc", rec.peer.as_str()),
            ("peer", rec.loc.as_str()),
        ];
        to.extend(common);
        let src = self.event(
            rec.time.unwrap_or_default(),
            "",
            Self::attributes(rec, &from),
        );
        let dst = self.event(rec.end.unwrap_or_default(), "", Self::attributes(rec, &to));
        let attrs = Self::attributes(rec, &[("kind", what), ("id", &rec.id), ("type", &rec.cat)]);
        self.dependency(&rec.id, 4, &src, &dst, attrs);
    }

    fn counter(&mut self, rec: &Record) {
        let time = rec.time.unwrap_or_default();
        if Decimal::parse(&rec.value).is_none() {
            self.warnings.warn(format!(
                "counter `{}` on `{}` at {time} ns has a non-numeric value `{}`; left out of the TRACE signal",
                rec.name, rec.loc, rec.value
            ));
            return;
        }
        let key = (rec.loc.clone(), rec.name.clone());
        if !self.series.contains_key(&key) {
            let (id, _) = self.signal_ids.take("");
            let label = if rec.name.is_empty() {
                "counter"
            } else {
                &rec.name
            };
            let attrs = Self::attributes(
                rec,
                &[("name", label), ("loc", &rec.loc), ("type", "counter")],
            );
            self.signals.push(format!("S {id} ; {attrs}"));
            self.series.insert(
                key.clone(),
                Series {
                    signal: id,
                    last: None,
                },
            );
        }
        let series = self.series.get_mut(&key).expect("inserted above");
        if let Some((t0, value)) = series.last.take() {
            if time > t0 {
                let signal = series.signal.clone();
                self.fragment(&signal, t0, time, &value, "0", "0");
            } else {
                self.warnings.warn(format!(
                    "counter `{}` on `{}`: two samples at {time} ns; the earlier one is left out",
                    rec.name, rec.loc
                ));
            }
        }
        let series = self.series.get_mut(&key).expect("inserted above");
        series.last = Some((time, rec.value.clone()));
    }

    fn signal_fragment(&mut self, rec: &Record) -> Result<()> {
        let Some(signal) = self.signal_of.get(&rec.loc).cloned() else {
            return Err(Error::Record(format!(
                "cannot write a fragment of `{}`: no signal `container` row declares it",
                rec.loc
            )));
        };
        let get = |k: &str| rec.attr(k).unwrap_or_else(|| "0".to_string());
        let (mut c, mut b, mut a) = (get("c"), get("b"), get("a"));
        // Coefficients are per unit of the fragment's own time unit; rescale when
        // the file uses another one.
        if let Some(from) = rec
            .attr("time_unit")
            .and_then(|u| UNITS.iter().position(|x| x.1 == u))
        {
            if from != self.unit {
                let k = UNITS[self.unit].2 as f64 / UNITS[from].2 as f64;
                let scale = |s: &str, p: i32| {
                    Decimal::parse(s)
                        .map(|d| format!("{}", d.to_f64() * k.powi(p)))
                        .unwrap_or_else(|| s.to_string())
                };
                b = scale(&b, 1);
                a = scale(&a, 2);
                c = scale(&c, 0);
            }
        }
        self.fragment(
            &signal,
            rec.time.unwrap_or_default(),
            rec.end.unwrap_or_default(),
            &c,
            &b,
            &a,
        );
        Ok(())
    }

    fn factor(&self) -> u64 {
        UNITS[self.unit].2
    }

    fn fragment(&mut self, signal: &str, t0: i64, t1: i64, c: &str, b: &str, a: &str) {
        let factor = self.factor();
        let out = &mut self.elements;
        let _ = write!(out, "F {signal} ");
        push_scaled(out, t0, factor);
        out.push(' ');
        push_scaled(out, t1, factor);
        let _ = writeln!(out, " {c} {b} {a}");
    }
}

impl RecordSink for TraceWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some(t) = rec.completion() {
            self.last_time = self.last_time.max(t);
        }
        let depth = rec.depth.map(|d| d.to_string()).unwrap_or_default();
        match rec.kind {
            Kind::Meta => self.meta(rec),
            Kind::Container => self.container(rec),
            Kind::Claim => self.claim(rec, &[("name", &rec.name)])?,
            Kind::State | Kind::Enter | Kind::Leave => self.claim(
                rec,
                &[
                    ("name", &rec.name),
                    ("kind", "state"),
                    ("category", &rec.cat),
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
                        ("name", &rec.name),
                        ("kind", "coll"),
                        ("comm", &rec.comm),
                        ("root", &rec.peer),
                        ("size", &size),
                        ("received", &rec.value),
                        ("id", &rec.id),
                    ],
                )?
            }
            Kind::Event => {
                let native = rec.loc.is_empty() && rec.cat.is_empty();
                let attrs = if native {
                    Self::attributes(rec, &[("name", &rec.name), ("value", &rec.value)])
                } else {
                    Self::attributes(
                        rec,
                        &[
                            ("name", &rec.name),
                            ("loc", &rec.loc),
                            ("category", &rec.cat),
                            ("value", &rec.value),
                        ],
                    )
                };
                self.event(rec.time.unwrap_or_default(), &rec.id, attrs);
            }
            Kind::Send | Kind::Recv => {
                let tag = rec.tag.map(|t| t.to_string()).unwrap_or_default();
                let size = rec.size.map(|t| t.to_string()).unwrap_or_default();
                let attrs = Self::attributes(
                    rec,
                    &[
                        ("kind", rec.kind.as_str()),
                        ("loc", &rec.loc),
                        ("peer", &rec.peer),
                        ("comm", &rec.comm),
                        ("tag", &tag),
                        ("size", &size),
                        ("id", &rec.id),
                        ("flags", &rec.flags),
                    ],
                );
                self.event(rec.time.unwrap_or_default(), "", attrs);
            }
            Kind::Msg => self.linked_events(rec),
            Kind::Dep => match (
                rec.attr(ATTR_SRC),
                rec.attr(ATTR_DST),
                rec.cat.parse::<usize>(),
            ) {
                (Some(src), Some(dst), Ok(kind)) if kind < 9 => {
                    let attrs = Self::attributes(rec, &[("name", &rec.name)]);
                    self.dependency(&rec.id, kind, &src, &dst, attrs);
                }
                _ => self.linked_events(rec),
            },
            Kind::Counter => self.counter(rec),
            Kind::Signal => self.signal_fragment(rec)?,
            // TRACE has no type hierarchy and no end of a resource's life.
            Kind::Type | Kind::Destroy => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        // Close every counter series at the end of the trace (at least 1 ns long).
        let mut open: Vec<(String, i64, String)> = self
            .series
            .values_mut()
            .filter_map(|s| s.last.take().map(|(t, v)| (s.signal.clone(), t, v)))
            .collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        for (signal, t, value) in open {
            let end = self.last_time.max(t + 1);
            self.fragment(&signal, t, end, &value, "0", "0");
        }
        let mut text = format!("TU {}\n", UNITS[self.unit].0);
        if let Some(ns) = self.origin_ns {
            if ns % 1_000_000 != 0 {
                self.warnings.warn("the stream origin is not a whole millisecond; the TRACE offset (O) is rounded down");
            }
            text.push_str(&format!("O {}\n", ns.div_euclid(1_000_000)));
        }
        if !self.trace_attrs.is_empty() {
            text.push('T');
            for (i, (k, v)) in self.trace_attrs.iter().enumerate() {
                text.push_str(if i == 0 { " " } else { ", " });
                escape_attr(k, &mut text);
                text.push_str(" = ");
                escape_attr(v, &mut text);
            }
            text.push('\n');
        }
        for r in &self.resources {
            text.push_str(&r.line);
            text.push('\n');
        }
        for s in &self.signals {
            text.push_str(s);
            text.push('\n');
        }
        self.out.write_line(text.as_bytes())?;
        self.out.write_line(self.elements.as_bytes())?;
        if self.renumbered > 0 {
            self.warnings.warn(format!(
                "{} claim(s) or event(s) got new ids (their stream ids were missing, not natural numbers, or taken)",
                self.renumbered
            ));
        }
        self.out.flush()
    }
}
