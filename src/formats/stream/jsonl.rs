//! The JSON Lines form of the stream: one object per row, keys named as the TSV
//! columns, empty columns omitted, `attrs` as an object of strings.

use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::nested::{Nested, Next};
use crate::error::{Location, Result, Warnings};
use crate::io::{Input, LineReader, Output};
use crate::model::check::{is_declaration, StreamCheck, Verdict};
use crate::model::record::{
    encode_attr_part, Column, ColumnSet, Kind, Record, FORMAT_VERSION, META_FORMAT,
};
use crate::model::symbol::{Sym, SymCache, Symbols};
use crate::model::text::{is_json_number, push_json_string, push_time};
use crate::number::{push_int, push_uint};
use crate::pipe::{Demand, Probe, ReadOptions, RecordSink, RecordSource, Supply, WriteOptions};

/// True when the first non-blank byte is `{`.
pub fn sniff(p: &Probe) -> bool {
    p.head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Registry constructor for [`JsonlReader`].
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    Ok(Box::new(
        JsonlReader::new(&name, reader, opts.symbols.clone())
            .with_warnings(opts.warnings.clone())
            .strict(opts.strict),
    ))
}

/// Registry constructor for [`JsonlWriter`].
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    Ok(Box::new(JsonlWriter::new(out, opts)))
}

/// Reads the JSON Lines stream. Blank lines are skipped; unknown keys are kept as
/// [`Record::extra`] values.
pub struct JsonlReader<R> {
    lines: LineReader<R>,
    check: StreamCheck,
    syms: SymCache,
    /// The columns decoded (see [`Demand::reads`]).
    decoded: ColumnSet,
    warnings: Warnings,
    /// Frames followed, and the rows a `leave` that did not nest became.
    nested: Nested,
    symbols: Symbols,
}

impl<R: BufRead> JsonlReader<R> {
    /// A reader over `inner`, named `name` in errors, whose identifiers go
    /// to `symbols`.
    pub fn new(name: &str, inner: R, symbols: Symbols) -> JsonlReader<R> {
        JsonlReader {
            lines: LineReader::new(name, inner),
            check: StreamCheck::new(symbols.clone()),
            syms: SymCache::new(symbols.clone()),
            decoded: ColumnSet::ALL,
            warnings: Warnings::default(),
            nested: Nested::new(false, symbols.clone(), Warnings::default()),
            symbols,
        }
    }

    /// Reports warnings (a last line without its newline, frames that do
    /// not nest) to `warnings`.
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.nested = Nested::new(self.nested.strict(), self.symbols.clone(), warnings.clone());
        self.warnings = warnings;
        self
    }

    /// Refuses frames that do not nest (`--strict`).
    pub fn strict(mut self, strict: bool) -> Self {
        self.nested = Nested::new(strict, self.symbols.clone(), self.warnings.clone());
        self
    }

    /// The next row as read.
    fn next_row(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            let Some(line) = self.lines.next_located()? else {
                return Ok(false);
            };
            let located = |msg: String| line.error(msg);
            if line.text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let (syms, decoded) = (&mut self.syms, self.decoded);
            line.read(|text| parse_line(text, rec, syms, decoded), &self.warnings)?;
            rec.check_half().map_err(|e| located(e.to_string()))?;
            match self.check.check(rec).map_err(located)? {
                Verdict::Keep => return Ok(true),
                Verdict::Consumed => continue,
            }
        }
    }
}

impl<R: BufRead> RecordSource for JsonlReader<R> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if self.nested.next_queued(rec) {
            return Ok(true);
        }
        loop {
            if !self.next_row(rec)? {
                self.nested.end();
                return Ok(false);
            }
            let (lines, syms) = (&self.lines, &mut self.syms);
            let at = || Location::Line {
                file: lines.name().to_string(),
                line: lines.line_number(),
            };
            let whole = |r: &mut Record| parse_line(lines.last_line(), r, syms, ColumnSet::ALL);
            if self.nested.follow(rec, whole, at)? != Next::Skip {
                return Ok(true);
            }
        }
    }

    fn mark(&self) -> u64 {
        self.lines.line_number()
    }

    fn locate(&self, line: u64) -> Location {
        Location::Line {
            file: self.lines.name().to_string(),
            line,
        }
    }

    /// A stream's `state`, `msg`, `claim`... rows come at their completion
    /// and may have begun at any earlier time: the stream cannot tell.
    fn horizon(&self) -> Option<i64> {
        None
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        let demand = self.nested.demand(demand, false);
        let decoded = demand.reads.without_raw_line().union(ColumnSet::PLACE);
        self.decoded = decoded.union(self.nested.frame_columns());
        Supply::WHOLE_ROWS
    }
}

/// Parses one JSON object into `rec`, interning its identifiers in `syms`.
/// Of a data row whose `kind` comes before them, the identifiers and `id`
/// outside `decoded` are checked and left empty.
pub fn parse_line(
    line: &[u8],
    rec: &mut Record,
    syms: &mut SymCache,
    decoded: ColumnSet,
) -> Result<(), String> {
    let first = line.iter().find(|b| !b.is_ascii_whitespace());
    if let Some(&b) = first.filter(|&&b| b != b'{') {
        // Not JSON at all (TSV read with -f jsonl, say): say what a line must be.
        let start = String::from_utf8_lossy(&line[..line.len().min(20)]).into_owned();
        return Err(format!(
            "expected a JSON object (`{{...}}`) per line, found `{}`{}",
            start.escape_debug(),
            if b.is_ascii_alphabetic() {
                " (a TSV stream? leave out -f to detect it)"
            } else {
                ""
            }
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(line);
    RecordSeed(rec, syms, decoded)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| {
            let msg = e.to_string();
            // serde_json counts lines within the slice; the column is what helps.
            match msg.rsplit_once(" at line 1 column ") {
                Some((m, col)) => format!("{m} (at column {col})"),
                None => msg,
            }
        })
}

/// A string borrowed from the input when it has no escapes.
struct Text<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

struct RecordSeed<'a>(&'a mut Record, &'a mut SymCache, ColumnSet);

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

fn set_text(field: &mut String, v: Option<Text>) {
    field.clear();
    if let Some(t) = v {
        field.push_str(&t.0);
    }
}

fn set_sym(field: &mut Sym, v: Option<Text>, syms: &mut SymCache) {
    *field = v.map_or(Sym::EMPTY, |t| syms.intern(&t.0));
}

/// The text of a scalar kept as written: strings decoded, numbers and booleans
/// verbatim.
fn scalar_text<E: de::Error>(raw: &RawValue, key: &str) -> Result<String, E> {
    let s = raw.get();
    match s.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(s).map_err(E::custom),
        Some(b'n') => Ok(String::new()),
        Some(b'{' | b'[') | None => Err(E::custom(format!(
            "`{key}` must be a string or a number, not an object or array"
        ))),
        _ => Ok(s.to_string()),
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object with a `kind` key")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (rec, syms, decoded) = (self.0, self.1, self.2);
        rec.clear();
        let mut have_kind = false;
        // Columns met before the kind, or of a row that describes the
        // stream, are decoded whatever `decoded` says; a half's partner and
        // key too, to check it can be matched.
        let keep = |rec: &Record, have_kind: bool, column: Column| {
            !have_kind
                || rec.kind.is_structural()
                || decoded.contains(column)
                || (matches!(rec.kind, Kind::Send | Kind::Recv)
                    && matches!(column, Column::Peer | Column::Id))
        };
        // Standard columns seen, one bit each; a key given twice is an error
        // rather than the last value silently winning.
        let mut seen = 0u32;
        while let Some(key) = map.next_key::<Text>()? {
            let column = Column::from_name(&key.0);
            let again = match column {
                Some(c) => {
                    let bit = 1u32 << c as u32;
                    let again = seen & bit != 0;
                    seen |= bit;
                    again
                }
                None => rec.extra.iter().any(|(n, _)| *n == key.0),
            };
            if again {
                return Err(de::Error::custom(format!("key `{}` appears twice", key.0)));
            }
            match column {
                Some(Column::Kind) => {
                    let k: Text = map.next_value()?;
                    rec.kind = Kind::parse(k.0.as_bytes())
                        .ok_or_else(|| de::Error::custom(format!("unknown kind `{}`", k.0)))?;
                    have_kind = true;
                }
                Some(Column::Time) => rec.time = map.next_value()?,
                Some(Column::End) => rec.end = map.next_value()?,
                Some(Column::Depth) => rec.depth = map.next_value()?,
                Some(Column::Tag) => rec.tag = map.next_value()?,
                Some(Column::Size) => rec.size = map.next_value()?,
                Some(
                    c @ (Column::Cat | Column::Name | Column::Peer | Column::Comm | Column::Id),
                ) if !keep(rec, have_kind, c) => {
                    map.next_value::<Option<Text>>()?;
                }
                Some(Column::Loc) => set_sym(&mut rec.loc, map.next_value()?, syms),
                Some(Column::Cat) => set_sym(&mut rec.cat, map.next_value()?, syms),
                Some(Column::Name) => set_sym(&mut rec.name, map.next_value()?, syms),
                Some(Column::Peer) => set_sym(&mut rec.peer, map.next_value()?, syms),
                Some(Column::Comm) => set_sym(&mut rec.comm, map.next_value()?, syms),
                Some(Column::Id) => set_text(&mut rec.id, map.next_value()?),
                Some(Column::Flags) => set_text(&mut rec.flags, map.next_value()?),
                Some(Column::Value) => {
                    let raw: &RawValue = map.next_value()?;
                    rec.value = scalar_text(raw, "value")?;
                }
                Some(Column::Attrs) => {
                    rec.attrs.clear();
                    map.next_value_seed(AttrsSeed(&mut rec.attrs))?;
                }
                None => {
                    let raw: &RawValue = map.next_value()?;
                    let v = scalar_text(raw, &key.0)?;
                    // Kept even when empty, so a second one is seen.
                    rec.extra.push((key.0.into_owned(), v));
                }
            }
        }
        if !have_kind {
            return Err(de::Error::custom("missing `kind`"));
        }
        rec.extra.retain(|(_, v)| !v.is_empty());
        Ok(())
    }
}

struct AttrsSeed<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for AttrsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for AttrsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of string values for `attrs`")
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let out = self.0;
        while let Some(key) = map.next_key::<Text>()? {
            if key.0.is_empty() {
                return Err(de::Error::custom("empty key in `attrs`"));
            }
            let raw: &RawValue = map.next_value()?;
            let value = scalar_text(raw, &key.0)?;
            if !out.is_empty() {
                out.push(';');
            }
            encode_attr_part(&key.0, out);
            out.push('=');
            encode_attr_part(&value, out);
        }
        Ok(())
    }
}

/// Writes the JSON Lines stream, starting with the `format` meta row.
pub struct JsonlWriter {
    out: Output,
    symbols: Symbols,
    started: bool,
    rows_only: bool,
    time_factor: u64,
    line: Vec<u8>,
}

impl JsonlWriter {
    /// A writer over `out`.
    pub fn new(out: Output, opts: &WriteOptions) -> JsonlWriter {
        JsonlWriter {
            out,
            symbols: opts.symbols.clone(),
            started: false,
            rows_only: opts.rows_only,
            time_factor: 10u64.pow(opts.time_decimals),
            line: Vec::with_capacity(256),
        }
    }

    fn start(&mut self) -> Result<()> {
        self.started = true;
        if self.rows_only {
            return Ok(());
        }
        self.line.clear();
        encode_row(
            &Record::meta(META_FORMAT, FORMAT_VERSION),
            &self.symbols,
            1,
            &mut self.line,
        );
        self.out.write_line(&self.line)
    }
}

/// Appends the JSON line of `rec` (with its newline; identifiers in
/// `symbols`), times divided by `time_factor` (1: ns).
pub fn encode_row(rec: &Record, symbols: &Symbols, time_factor: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"kind\":\"");
    out.extend_from_slice(rec.kind.as_str().as_bytes());
    out.push(b'"');
    let key = |out: &mut Vec<u8>, k: &str| {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b"\":");
    };
    let text = |out: &mut Vec<u8>, k: &str, v: &str| {
        if !v.is_empty() {
            key(out, k);
            push_json_string(out, v);
        }
    };
    if let Some(t) = rec.time {
        key(out, "time");
        push_time(out, t, time_factor);
    }
    if let Some(t) = rec.end {
        key(out, "end");
        push_time(out, t, time_factor);
    }
    text(out, "loc", symbols.text(rec.loc));
    text(out, "cat", symbols.text(rec.cat));
    text(out, "name", symbols.text(rec.name));
    if let Some(d) = rec.depth {
        key(out, "depth");
        push_uint(out, u64::from(d));
    }
    text(out, "peer", symbols.text(rec.peer));
    text(out, "comm", symbols.text(rec.comm));
    if let Some(t) = rec.tag {
        key(out, "tag");
        push_int(out, t);
    }
    if let Some(s) = rec.size {
        key(out, "size");
        push_uint(out, s);
    }
    text(out, "id", &rec.id);
    if is_json_number(&rec.value) {
        key(out, "value");
        out.extend_from_slice(rec.value.as_bytes());
    } else {
        text(out, "value", &rec.value);
    }
    text(out, "flags", &rec.flags);
    if !rec.attrs.is_empty() {
        key(out, "attrs");
        out.push(b'{');
        for (i, (k, v)) in rec.attrs().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_json_string(out, &k);
            out.push(b':');
            push_json_string(out, &v);
        }
        out.push(b'}');
    }
    for (k, v) in &rec.extra {
        out.push(b',');
        push_json_string(out, k);
        out.push(b':');
        push_json_string(out, v);
    }
    out.extend_from_slice(b"}\n");
}

impl RecordSink for JsonlWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        if self.rows_only && is_declaration(rec.kind) {
            return Ok(());
        }
        self.line.clear();
        encode_row(rec, &self.symbols, self.time_factor, &mut self.line);
        self.out.write_line(&self.line)
    }

    fn finish(&mut self) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_round_trips_through_json() {
        let symbols = Symbols::new();
        let mut syms = SymCache::new(symbols.clone());
        let mut r = Record::new(Kind::Send);
        r.time = Some(-5);
        r.loc = symbols.intern("p\t0\"x");
        r.peer = symbols.intern("p1");
        r.tag = Some(7);
        r.size = Some(1024);
        r.value = "1.50".into();
        r.push_attr("k;=", "v\u{1}é");
        r.extra.push(("future".into(), "x".into()));
        let mut line = Vec::new();
        encode_row(&r, &symbols, 1, &mut line);
        let mut back = Record::default();
        parse_line(
            &line[..line.len() - 1],
            &mut back,
            &mut syms,
            ColumnSet::ALL,
        )
        .unwrap();
        assert_eq!(back, r);
        assert!(String::from_utf8(line).unwrap().contains("\"value\":1.50"));
    }

    #[test]
    fn rejects_bad_json() {
        let mut r = Record::default();
        let mut syms = SymCache::new(Symbols::new());
        assert!(
            parse_line(br#"{"time":1}"#, &mut r, &mut syms, ColumnSet::ALL)
                .unwrap_err()
                .contains("missing `kind`")
        );
        assert!(
            parse_line(br#"{"kind":"nope"}"#, &mut r, &mut syms, ColumnSet::ALL)
                .unwrap_err()
                .contains("unknown kind")
        );
        assert!(parse_line(
            br#"{"kind":"event","time":1.5}"#,
            &mut r,
            &mut syms,
            ColumnSet::ALL
        )
        .is_err());
        assert!(parse_line(br#"{"kind":"event"} x"#, &mut r, &mut syms, ColumnSet::ALL).is_err());
    }
}
