//! The TSV form of the stream: one header line, then one row per line.

use std::io::BufRead;

use super::{escape_tsv, scan_row, unescape_tsv};
use super::{StreamCheck, Verdict};
use crate::error::{Error, Location, Result, Warnings};
use crate::io::{Input, LineReader, Output};
use crate::number::{parse_int, parse_uint, push_int, push_uint};
use crate::pipe::{Probe, ReadOptions, RecordSink, RecordSource, WriteOptions};
use crate::record::{Column, Kind, Record, COLUMNS, FORMAT_VERSION, META_FORMAT};
use crate::symbol::{SymCache, Symbols};

/// True when the first line is a stream header: tab-separated column names
/// (any printable text without spaces, as extra columns may be named), one of
/// them `kind`.
pub fn sniff(p: &Probe) -> bool {
    let first = p.head.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = first.strip_suffix(b"\r").unwrap_or(first);
    let is_name = |c: &[u8]| !c.is_empty() && c.iter().all(|&b| b > b' ' && b != 0x7f);
    let mut cols = first.split(|&b| b == b'\t');
    cols.clone().all(is_name) && cols.any(|c| c == b"kind")
}

/// Registry constructor for [`TsvReader`].
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    Ok(Box::new(
        TsvReader::new(&name, reader, opts.symbols.clone())?.with_warnings(opts.warnings.clone()),
    ))
}

/// Registry constructor for [`TsvWriter`].
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    Ok(Box::new(TsvWriter::new(out, opts)))
}

#[derive(Clone, Copy)]
enum Target {
    Std(Column),
    Extra(usize),
}

/// Reads the TSV stream. Columns are found by header name; unknown columns are
/// kept as [`Record::extra`] values.
pub struct TsvReader<R> {
    lines: LineReader<R>,
    parser: RowParser,
    check: StreamCheck,
    warnings: Warnings,
}

impl<R: BufRead> TsvReader<R> {
    /// Reads the header of `inner`, whose identifiers go to `symbols`. An
    /// empty input is an empty stream.
    pub fn new(name: &str, inner: R, symbols: Symbols) -> Result<TsvReader<R>> {
        let mut lines = LineReader::new(name, inner);
        let mut targets = Vec::new();
        let mut extra_names = Vec::new();
        if let Some(line) = lines.next_located()? {
            if line.truncated {
                return Err(line.error("truncated header (no final newline)"));
            }
            let header = line.text.strip_suffix(b"\r").unwrap_or(line.text);
            let header = std::str::from_utf8(header)
                .map_err(|_| Error::line(name, 1, "invalid UTF-8 in the header"))?;
            let mut seen: Vec<String> = Vec::new();
            for raw in header.split('\t') {
                // Names are escaped as fields are, so they survive a round trip.
                let mut col = String::new();
                unescape_tsv(raw, &mut col)
                    .map_err(|e| Error::line(name, 1, format!("column name `{raw}`: {e}")))?;
                let col = col.as_str();
                if col.is_empty() {
                    return Err(Error::line(name, 1, "empty column name in the header"));
                }
                if seen.iter().any(|c| c == col) {
                    return Err(Error::line(
                        name,
                        1,
                        format!("column `{col}` appears twice in the header"),
                    ));
                }
                seen.push(col.to_string());
                targets.push(match Column::from_name(col) {
                    Some(c) => Target::Std(c),
                    None => {
                        extra_names.push(col.to_string());
                        Target::Extra(extra_names.len() - 1)
                    }
                });
            }
            if !targets
                .iter()
                .any(|t| matches!(t, Target::Std(Column::Kind)))
            {
                return Err(Error::line(
                    name,
                    1,
                    format!(
                        "expected a stream header naming the columns ({}), found no `kind` column",
                        COLUMNS.join(" ")
                    ),
                ));
            }
        }
        Ok(TsvReader {
            lines,
            check: StreamCheck::new(symbols.clone()),
            parser: RowParser {
                targets,
                extra_names,
                scratch: String::new(),
                ends: Vec::with_capacity(32),
                syms: SymCache::new(symbols),
            },
            warnings: Warnings::default(),
        })
    }

    /// Reports warnings (a last line without its newline) to `warnings`.
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }
}

/// Splits and converts rows according to a header.
struct RowParser {
    targets: Vec<Target>,
    extra_names: Vec<String>,
    scratch: String,
    ends: Vec<usize>,
    syms: SymCache,
}

impl RowParser {
    fn parse(&mut self, line: &[u8], rec: &mut Record) -> Result<(), String> {
        let RowParser {
            targets,
            extra_names,
            scratch,
            ends,
            syms,
        } = self;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let scan = scan_row(line, ends);
        let text = if scan.ascii {
            // SAFETY: every byte is below 0x80, and ASCII is valid UTF-8.
            unsafe { std::str::from_utf8_unchecked(line) }
        } else {
            std::str::from_utf8(line).map_err(|e| {
                format!(
                    "invalid UTF-8 at byte {} of the row: text must be UTF-8",
                    e.valid_up_to() + 1
                )
            })?
        };
        let escaped = scan.backslash;
        rec.clear();
        let mut have_kind = false;
        let mut start = 0;
        let mut index = 0;
        if ends.len() != targets.len() {
            return Err(format!(
                "wrong column count: the header has {} columns, this row has {}",
                targets.len(),
                ends.len()
            ));
        }
        for &end in ends.iter() {
            let Some(&target) = targets.get(index) else {
                return Err(format!(
                    "wrong column count: the header has {} columns, this row has more",
                    targets.len()
                ));
            };
            // Tabs are ASCII, so field boundaries are char boundaries of `text`.
            let field = text.get(start..end).unwrap_or_default();
            start = end + 1;
            index += 1;
            if field.is_empty() {
                continue;
            }
            let col = match target {
                Target::Std(c) => c,
                Target::Extra(i) => {
                    if !field.is_empty() {
                        let mut v = String::new();
                        if escaped {
                            unescape_tsv(field, &mut v)?;
                        } else {
                            v.push_str(field);
                        }
                        rec.extra.push((extra_names[i].clone(), v));
                    }
                    continue;
                }
            };
            let text_field = match col {
                Column::Kind => {
                    rec.kind = Kind::parse(field.as_bytes()).ok_or_else(|| {
                        if field.is_empty() {
                            "empty `kind`".to_string()
                        } else {
                            format!("unknown kind `{field}`")
                        }
                    })?;
                    have_kind = true;
                    continue;
                }
                Column::Time => {
                    rec.time = int_field(field, "time")?;
                    continue;
                }
                Column::End => {
                    rec.end = int_field(field, "end")?;
                    continue;
                }
                Column::Tag => {
                    rec.tag = int_field(field, "tag")?;
                    continue;
                }
                Column::Depth => {
                    rec.depth = uint_field(field, "depth")?
                        .map(u32::try_from)
                        .transpose()
                        .map_err(|_| format!("bad number in `depth`: `{field}` is too large"))?;
                    continue;
                }
                Column::Size => {
                    rec.size = uint_field(field, "size")?;
                    continue;
                }
                Column::Loc | Column::Cat | Column::Name | Column::Peer | Column::Comm => {
                    let sym = if escaped && field.contains('\\') {
                        unescape_tsv(field, scratch)
                            .map_err(|e| format!("in column `{}`: {e}", col.name()))?;
                        syms.intern(scratch)
                    } else {
                        syms.intern(field)
                    };
                    *match col {
                        Column::Loc => &mut rec.loc,
                        Column::Cat => &mut rec.cat,
                        Column::Name => &mut rec.name,
                        Column::Peer => &mut rec.peer,
                        _ => &mut rec.comm,
                    } = sym;
                    continue;
                }
                Column::Id => &mut rec.id,
                Column::Value => &mut rec.value,
                Column::Flags => &mut rec.flags,
                Column::Attrs => &mut rec.attrs,
            };
            if escaped && field.contains('\\') {
                unescape_tsv(field, scratch)
                    .map_err(|e| format!("in column `{}`: {e}", col.name()))?;
                text_field.push_str(scratch);
            } else {
                text_field.push_str(field);
            }
        }
        if index != targets.len() {
            return Err(format!(
                "wrong column count: the header has {} columns, this row has {index}",
                targets.len()
            ));
        }
        if !have_kind {
            return Err("empty `kind`".into());
        }
        Ok(())
    }
}

fn int_field(field: &str, col: &str) -> Result<Option<i64>, String> {
    if field.is_empty() {
        return Ok(None);
    }
    parse_int(field.as_bytes())
        .map(Some)
        .ok_or_else(|| format!("bad number in `{col}`: expected an integer, found `{field}`"))
}

fn uint_field(field: &str, col: &str) -> Result<Option<u64>, String> {
    if field.is_empty() {
        return Ok(None);
    }
    parse_uint(field.as_bytes()).map(Some).ok_or_else(|| {
        format!("bad number in `{col}`: expected a non-negative integer, found `{field}`")
    })
}

impl<R: BufRead> RecordSource for TsvReader<R> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            let Some(line) = self.lines.next_located()? else {
                return Ok(false);
            };
            let located = |msg: String| line.error(msg);
            let parser = &mut self.parser;
            line.read(|text| parser.parse(text, rec), &self.warnings)?;
            match self.check.check(rec).map_err(located)? {
                Verdict::Keep => return Ok(true),
                Verdict::Consumed => continue,
            }
        }
    }

    fn location(&self) -> Location {
        self.locate(self.lines.line_number())
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

    fn extra_columns(&self) -> &[String] {
        &self.parser.extra_names
    }
}

/// Writes the TSV stream: the header, the `format` meta row, then the records.
pub struct TsvWriter {
    out: Output,
    symbols: Symbols,
    header: bool,
    rows_only: bool,
    time_factor: u64,
    extra: Vec<String>,
    started: bool,
    line: Vec<u8>,
}

impl TsvWriter {
    /// A writer over `out`.
    pub fn new(out: Output, opts: &WriteOptions) -> TsvWriter {
        TsvWriter {
            out,
            symbols: opts.symbols.clone(),
            header: !opts.no_header && !opts.rows_only,
            rows_only: opts.rows_only,
            time_factor: 10u64.pow(opts.time_decimals),
            extra: opts.extra_columns.clone(),
            started: false,
            line: Vec::with_capacity(256),
        }
    }

    fn start(&mut self) -> Result<()> {
        self.started = true;
        self.line.clear();
        if self.header {
            self.line.extend_from_slice(COLUMNS.join("\t").as_bytes());
            for name in &self.extra {
                self.line.push(b'\t');
                escape_tsv(name, &mut self.line);
            }
            self.line.push(b'\n');
        }
        if !self.rows_only {
            let format_row = Record::meta(META_FORMAT, FORMAT_VERSION);
            encode_row(&format_row, &self.symbols, &self.extra, 1, &mut self.line)?;
        }
        self.out.write_line(&self.line)
    }
}

/// Appends the TSV line of `rec` (with its newline; identifiers in
/// `symbols`) for a header whose extra columns are `extra`, times divided by
/// `time_factor` (1: ns).
pub fn encode_row(
    rec: &Record,
    symbols: &Symbols,
    extra: &[String],
    time_factor: u64,
    line: &mut Vec<u8>,
) -> Result<()> {
    fn opt_int(line: &mut Vec<u8>, v: Option<i64>) {
        if let Some(n) = v {
            push_int(line, n);
        }
        line.push(b'\t');
    }
    fn opt_time(line: &mut Vec<u8>, v: Option<i64>, factor: u64) {
        if let Some(n) = v {
            super::push_time(line, n, factor);
        }
        line.push(b'\t');
    }
    fn text(line: &mut Vec<u8>, s: &str) {
        escape_tsv(s, line);
        line.push(b'\t');
    }
    line.extend_from_slice(rec.kind.as_str().as_bytes());
    line.push(b'\t');
    opt_time(line, rec.time, time_factor);
    opt_time(line, rec.end, time_factor);
    text(line, symbols.text(rec.loc));
    text(line, symbols.text(rec.cat));
    text(line, symbols.text(rec.name));
    if let Some(d) = rec.depth {
        push_uint(line, u64::from(d));
    }
    line.push(b'\t');
    text(line, symbols.text(rec.peer));
    text(line, symbols.text(rec.comm));
    opt_int(line, rec.tag);
    if let Some(s) = rec.size {
        push_uint(line, s);
    }
    line.push(b'\t');
    text(line, &rec.id);
    text(line, &rec.value);
    text(line, &rec.flags);
    escape_tsv(&rec.attrs, line);
    if !rec.extra.is_empty() || !extra.is_empty() {
        for (name, _) in &rec.extra {
            if !extra.contains(name) {
                return Err(Error::Record(format!(
                    "column `{name}` is not in the output header; write JSON Lines (--json) to keep it"
                )));
            }
        }
        for name in extra {
            line.push(b'\t');
            if let Some((_, v)) = rec.extra.iter().find(|(n, _)| n == name) {
                escape_tsv(v, line);
            }
        }
    }
    line.push(b'\n');
    Ok(())
}

impl RecordSink for TsvWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        if self.rows_only && super::is_declaration(rec.kind) {
            return Ok(());
        }
        self.line.clear();
        encode_row(
            rec,
            &self.symbols,
            &self.extra,
            self.time_factor,
            &mut self.line,
        )?;
        self.out.write_line(&self.line)
    }

    fn finish(&mut self) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        self.out.flush()
    }
}
