//! Reads and validates a TRACE file, then emits it as a time-ordered stream.
//!
//! TRACE files list elements in any order, so the whole file is read first:
//! every element is kept in a compact form (its text in one arena), checked, and
//! sorted by completion time. Memory grows with the file: about 150 bytes
//! per element plus its text, up to 9 times the file for terse lines
//! (`bench/memory.sh`).
//!
//! Here: the compact form and the source that emits it; `parse` reads the
//! file into it, `validate` checks the rules between elements.

use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::io::BufRead;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

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

mod parse;
mod validate;

use parse::{natural, read_trace};
use validate::check_references;

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
struct TextRange {
    start: u32,
    len: u32,
}

#[derive(Debug)]
struct Resource {
    id: u64,
    line: u64,
    capacity: TextRange,
    uses_offset: bool,
    attrs: TextRange,
}

#[derive(Debug)]
struct Signal {
    id: TextRange,
    /// Line of the `S` line; 0 while only fragments have named the signal.
    line: u64,
    attrs: TextRange,
    fragments: u64,
    last_end: Option<i64>,
}

/// What an element is; claims and dependencies by their index in tables of
/// their own, so that the many events of a terse file stay small.
#[derive(Debug, Clone, Copy)]
enum Item {
    Event {
        id: TextRange,
    },
    Claim(u32),
    Dep(u32),
    Fragment {
        signal: u32,
        coefficients: TextRange,
    },
}

#[derive(Debug)]
struct Claim {
    id: u64,
    resource: u64,
    offset: Option<TextRange>,
    amount: TextRange,
}

#[derive(Debug)]
struct Dep {
    id: TextRange,
    kind: u8,
    src: TextRange,
    dst: TextRange,
    /// Resources of claim endpoints (`NO_RESOURCE` for events), resolved at the end.
    resources: [u32; 2],
}

#[derive(Debug)]
struct Element {
    item: Item,
    line: u64,
    attrs: TextRange,
    /// The encoded value of the first `name` attribute (empty when none).
    name: TextRange,
    /// Start and end in ns (an event has both equal; a dependency's are its
    /// endpoints' times, resolved at the end).
    times: (i64, i64),
    lossy: bool,
}

/// Element ids: canonical natural numbers in a numeric map, other tokens as
/// the index of their element, hashed by the token's text, which the arena
/// holds: an id costs a few bytes of table where a string of its own cost
/// sixty.
#[derive(Default)]
struct Ids {
    numbers: FastMap<u64, u32>,
    tokens: HashTable<u32>,
}

impl Ids {
    fn key(token: &str) -> Option<u64> {
        crate::number::parse_uint(token.as_bytes())
    }

    fn hash(token: &str) -> u64 {
        FxBuildHasher.hash_one(token)
    }

    /// The element of `token`; `id_of` gives an element's id.
    fn get<'a>(&self, token: &str, id_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        match Self::key(token) {
            Some(n) => self.numbers.get(&n).copied(),
            None => self
                .tokens
                .find(Self::hash(token), |&i| id_of(i) == token)
                .copied(),
        }
    }

    /// Inserts `token` for element `index`; returns the element already
    /// there, if any. `id_of` gives the id of an element inserted before.
    fn insert<'a>(
        &mut self,
        token: &str,
        index: u32,
        id_of: impl Fn(u32) -> &'a str,
    ) -> Option<u32> {
        match Self::key(token) {
            Some(n) => match self.numbers.entry(n) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(index);
                    None
                }
            },
            None => {
                let hash = Self::hash(token);
                if let Some(&i) = self.tokens.find(hash, |&i| id_of(i) == token) {
                    return Some(i);
                }
                self.tokens
                    .insert_unique(hash, index, |&i| Self::hash(id_of(i)));
                None
            }
        }
    }
}

/// Which ids an [`Ids`] holds.
#[derive(Clone, Copy)]
enum IdKind {
    Event,
    Dep,
}

/// The id of element `index`: an event's or a dependency's, the elements
/// whose ids [`Ids`] holds.
fn element_id<'a>(arena: &'a str, elements: &[Element], deps: &[Dep], index: u32) -> &'a str {
    let span = match elements[index as usize].item {
        Item::Event { id } => id,
        Item::Dep(d) => deps[d as usize].id,
        Item::Claim(_) | Item::Fragment { .. } => TextRange { start: 0, len: 0 },
    };
    &arena[span.start as usize..][..span.len as usize]
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
    claim_items: Vec<Claim>,
    dep_items: Vec<Dep>,
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

/// A problem found once the whole file is read: its line, the message, and
/// the element it drops in lenient mode.
type Finding = (u64, String, Option<usize>);

/// A dependency's endpoint times and their claims' resource slots.
type ResolvedDep = ((i64, i64), [u32; 2]);

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
    /// The elements kept, by completion time (4 bytes each: the time is
    /// the element's).
    order: std::vec::IntoIter<u32>,
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
        let mut order: Vec<u32> = (0..trace.elements.len() as u32)
            .filter(|&i| !dropped[i as usize])
            .collect();
        // Elements are numbered in file order, so equal times keep file order.
        let completion = |i: u32| {
            let (t0, t1) = trace.elements[i as usize].times;
            (t0.max(t1), i)
        };
        order.sort_unstable_by_key(|&i| completion(i));
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
        let Some(index) = self.order.next() else {
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
            Item::Claim(c) => {
                let Claim {
                    id,
                    resource,
                    offset,
                    amount,
                } = trace.claim_items[c as usize];
                rec.kind = Kind::Claim;
                rec.end = Some(e.times.1);
                rec.loc = self.resource_locs[&resource];
                let _ = write!(rec.id, "{id}");
                rec.value.push_str(trace.text(amount));
                if let Some(o) = offset {
                    rec.push_attr(ATTR_OFFSET, trace.text(o));
                }
            }
            Item::Dep(d) => {
                let Dep {
                    id,
                    kind,
                    src,
                    dst,
                    resources,
                } = trace.dep_items[d as usize];
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

    /// Claims and dependencies are extents, given at their completion;
    /// the file is held whole anyway, so what is left costs no reading.
    fn horizon(&self) -> Option<i64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file is held whole: what one element costs is what a terse
    /// file of `E id time` lines costs per line (docs/reliability.md's
    /// bound rests on it).
    #[test]
    fn an_element_stays_small() {
        assert!(std::mem::size_of::<Element>() <= 64);
        assert_eq!(std::mem::size_of::<Item>(), 16);
    }
}
