//! The TSV form of the stream: one header line, then one row per line.

mod chunk_rows;

use std::io::BufRead;

use chunk_rows::ChunkRows;

use super::nested::{Nested, Next};
use super::{ascii_and_backslash, short_row, short_row_ahead, Fields, ShortRow};
use crate::error::{Error, Location, Result, Warnings};
use crate::io::{Input, LineReader, Output};
use crate::model::check::{is_declaration, StreamCheck, Verdict};
use crate::model::record::{
    validate_attrs, validate_flags, Column, ColumnSet, Kind, KindSet, Record, COLUMNS,
    FORMAT_VERSION, META_FORMAT,
};
use crate::model::symbol::{Sym, SymCache, Symbols};
use crate::model::text::push_time;
use crate::model::text::{escape_tsv, unescape_tsv};
use crate::number::{parse_int, parse_uint, push_int, push_uint};
use crate::pipe::{
    Demand, Probe, ReadOptions, Reads, RecordSink, RecordSource, Supply, WriteOptions,
};
use crate::pool::Pool;

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

/// Registry constructor for [`TsvReader`]: rows parsed on the pool when
/// the command may use more than one thread.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    let reader = TsvReader::new(&name, reader, opts.symbols.clone())?
        .with_warnings(opts.warnings.clone())
        .strict(opts.strict);
    Ok(match opts.pool.threads().parallel() {
        true => Box::new(reader.on_pool(&opts.pool)),
        false => Box::new(reader),
    })
}

/// Registry constructor for [`TsvWriter`].
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    Ok(Box::new(TsvWriter::new(out, opts)))
}

#[derive(Clone, Copy)]
enum HeaderColumn {
    Std(Column),
    Extra(usize),
}

/// Reads the TSV stream. Columns are found by header name; unknown columns are
/// kept as [`Record::extra`] values.
pub struct TsvReader<R> {
    name: String,
    symbols: Symbols,
    /// The input, read line by line on this thread...
    lines: Option<LineReader<R>>,
    /// ... or on the pool, from the first row on when this is set.
    chunks: Option<ChunkRows>,
    to_pool: Option<ToPool<R>>,
    parser: RowParser,
    check: StreamCheck,
    warnings: Warnings,
    /// Frames followed, and the rows a `leave` that did not nest became.
    nested: Nested,
    /// The row handed out last is not the line read (`nested`).
    replaced: bool,
    /// A parser of every column, for a row `nested` needs whole.
    whole: Option<RowParser>,
}

/// How a reader hands its input to the pool.
type ToPool<R> = Box<dyn FnOnce(LineReader<R>, &RowParser) -> ChunkRows>;

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
                    Some(c) => HeaderColumn::Std(c),
                    None => {
                        extra_names.push(col.to_string());
                        HeaderColumn::Extra(extra_names.len() - 1)
                    }
                });
            }
            if !targets
                .iter()
                .any(|t| matches!(t, HeaderColumn::Std(Column::Kind)))
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
            name: name.to_string(),
            symbols: symbols.clone(),
            lines: Some(lines),
            chunks: None,
            to_pool: None,
            check: StreamCheck::new(symbols.clone()),
            nested: Nested::new(false, symbols.clone(), Warnings::default()),
            replaced: false,
            whole: None,
            parser: RowParser {
                skip: KindSet::NONE,
                decoded: ColumnSet::ALL,
                frame_columns: ColumnSet::NONE,
                standard: targets.len() == COLUMNS.len()
                    && targets
                        .iter()
                        .zip(Column::ALL)
                        .all(|(t, c)| matches!(t, HeaderColumn::Std(s) if *s == c)),
                targets,
                extra_names,
                scratch: String::new(),
                syms: SymCache::new(symbols),
            },
            warnings: Warnings::default(),
        })
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
}

impl<R> TsvReader<R> {
    /// Passes what the stages above said to the jobs, when they have
    /// started already (a merge reads its inputs' first rows first).
    fn pass_hints(&self) {
        if let Some(chunks) = &self.chunks {
            let p = &self.parser;
            chunks.set_hints((p.skip, p.decoded, p.frame_columns));
        }
    }
}

impl<R: BufRead + 'static> TsvReader<R> {
    /// Parses the rows on `pool` from the first row on (after the stages
    /// above said what they skip), handing them out in order.
    pub fn on_pool(mut self, pool: &Pool) -> Self {
        let pool = pool.clone();
        let (name, symbols) = (self.name.clone(), self.symbols.clone());
        self.to_pool = Some(Box::new(move |lines: LineReader<R>, parser: &RowParser| {
            let (rest, inner, line) = lines.into_parts();
            let input: Box<dyn std::io::Read> = Box::new(inner);
            ChunkRows::new(&name, (rest, input, line), parser, symbols, &pool)
        }));
        self
    }
}

/// Splits and converts rows according to a header.
pub(crate) struct RowParser {
    targets: Vec<HeaderColumn>,
    /// Kinds whose rows are dropped unread above (see
    /// [`Demand::skip`]).
    skip: KindSet,
    /// The columns decoded of a data row of the standard columns; the others
    /// are checked and left empty (see [`Demand::reads`]).
    decoded: ColumnSet,
    /// The columns decoded of an `enter` or `leave` row beside `decoded`
    /// (those the frames are followed by).
    frame_columns: ColumnSet,
    /// The header is the standard columns in their order, nothing else.
    standard: bool,
    extra_names: Vec<String>,
    scratch: String,
    syms: SymCache,
}

impl RowParser {
    /// A parser of the same header that decodes every column of every row,
    /// its identifiers going to `symbols`.
    fn whole(&self, symbols: Symbols) -> RowParser {
        RowParser {
            skip: KindSet::NONE,
            decoded: ColumnSet::ALL,
            ..self.with_symbols(symbols)
        }
    }

    /// A parser of the same header whose identifiers go to `symbols`.
    fn with_symbols(&self, symbols: Symbols) -> RowParser {
        RowParser {
            targets: self.targets.clone(),
            skip: self.skip,
            decoded: self.decoded,
            frame_columns: self.frame_columns,
            standard: self.standard,
            extra_names: self.extra_names.clone(),
            scratch: String::new(),
            syms: SymCache::new(symbols),
        }
    }

    /// Parses `line` into `rec`; `row` is what a scan found in it already.
    fn parse(
        &mut self,
        line: &[u8],
        row: Option<ShortRow>,
        rec: &mut Record,
    ) -> Result<(), String> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match row.or_else(|| short_row(line)) {
            Some(row) => self.parse_short(line, row, rec)?,
            None => self.parse_long(line, rec)?,
        }
        match self.skip.contains(rec.kind) {
            true => Ok(()),
            false => rec.check_half().map_err(str::to_string),
        }
    }

    /// A row of at most [`super::SHORT_ROW`] bytes, its tabs found at once.
    fn parse_short(&mut self, line: &[u8], row: ShortRow, rec: &mut Record) -> Result<(), String> {
        check_utf8(line, row.ascii)?;
        if self.standard && row.tabs.count_ones() as usize + 1 == COLUMNS.len() {
            return self.parse_standard(line, row, rec);
        }
        let columns = self.targets.len();
        let fields = row.tabs.count_ones() as usize + 1;
        if fields != columns {
            return Err(format!(
                "wrong column count: the header has {columns} columns, this row has {fields}"
            ));
        }
        rec.clear();
        let mut have_kind = false;
        // SAFETY: the row was checked above, and fields are cut at tabs,
        // which are ASCII.
        for (i, field) in row.fields(line).map(|f| unsafe { text_of(f) }).enumerate() {
            if !field.is_empty() {
                let target = self.targets[i];
                self.field(target, field, row.backslash, rec, &mut have_kind)?;
            }
        }
        if !have_kind {
            return Err("empty `kind`".into());
        }
        Ok(())
    }

    /// A short row of the standard header, field by field in column order
    /// (the common case, written out so that no field goes through a
    /// dispatch on its column).
    fn parse_standard(
        &mut self,
        line: &[u8],
        row: ShortRow,
        rec: &mut Record,
    ) -> Result<(), String> {
        // The row has the standard columns' count of fields (checked).
        // SAFETY: the caller checked the row (`check_utf8`), and fields
        // are cut at tabs, which are ASCII.
        let mut fields = row.fields(line).map(|f| unsafe { text_of(f) });
        let mut next = || fields.next().unwrap_or_default();
        let kind = match next() {
            "" => return Err("empty `kind`".into()),
            k => Kind::parse(k.as_bytes()).ok_or_else(|| format!("unknown kind `{k}`"))?,
        };
        rec.clear();
        rec.kind = kind;
        let int = |field: &str, col: &str| match field {
            "" => Ok(None),
            f => int_field(f, col),
        };
        rec.time = int(next(), "time")?;
        rec.end = int(next(), "end")?;
        let loc = next();
        if !loc.is_empty() {
            if row.backslash && memchr::memchr(b'\\', loc.as_bytes()).is_some() {
                self.decode(Column::Loc, loc, true, rec)?;
            } else {
                rec.loc = self.syms.intern(loc);
            }
        }
        if self.skip.contains(kind) {
            // Dropped unread above: its place in the stream is all that counts.
            return Ok(());
        }
        let mut f: [&str; 15] = [""; 15];
        for field in &mut f[4..] {
            *field = next();
        }
        rec.tag = int(f[9], "tag")?;
        if !f[6].is_empty() {
            self.decode(Column::Depth, f[6], false, rec)?;
        }
        if !f[10].is_empty() {
            rec.size = uint_field(f[10], "size")?;
        }
        self.text_columns(&f, row.backslash, rec)
    }

    /// The text columns of a standard row (`f`: its fields by column), those
    /// outside `decoded` checked only; `backslash`: the row holds one.
    fn text_columns(
        &mut self,
        f: &[&str; 15],
        backslash: bool,
        rec: &mut Record,
    ) -> Result<(), String> {
        // A row that describes the stream is always read whole; a half's
        // partner and key, to check it can be matched.
        let decoded = match rec.kind {
            k if k.is_structural() => ColumnSet::ALL,
            Kind::Send | Kind::Recv => self.decoded.with(Column::Peer).with(Column::Id),
            Kind::Enter | Kind::Leave => self.decoded.union(self.frame_columns),
            _ => self.decoded,
        };
        for (col, i) in [
            (Column::Cat, 4),
            (Column::Name, 5),
            (Column::Peer, 7),
            (Column::Comm, 8),
            (Column::Id, 11),
            (Column::Value, 12),
            (Column::Flags, 13),
            (Column::Attrs, 14),
        ] {
            if f[i].is_empty() {
                continue;
            }
            let escaped = backslash && memchr::memchr(b'\\', f[i].as_bytes()).is_some();
            match decoded.contains(col) {
                true => self.decode(col, f[i], escaped, rec)?,
                false => self.check_field(col, f[i], escaped)?,
            }
        }
        Ok(())
    }

    /// Checks the non-empty field `text` of text column `col` as decoding
    /// it and [`Record::validate`] would, without keeping it.
    fn check_field(&mut self, col: Column, text: &str, escaped: bool) -> Result<(), String> {
        let text = match escaped {
            true => {
                unescape_tsv(text, &mut self.scratch)
                    .map_err(|e| format!("in column `{}`: {e}", col.name()))?;
                self.scratch.as_str()
            }
            false => text,
        };
        match col {
            Column::Flags => validate_flags(text),
            Column::Attrs => validate_attrs(text),
            _ => Ok(()),
        }
    }

    /// A longer row, its fields found as they are read.
    fn parse_long(&mut self, line: &[u8], rec: &mut Record) -> Result<(), String> {
        let (ascii, backslash) = ascii_and_backslash(line);
        check_utf8(line, ascii)?;
        rec.clear();
        let mut have_kind = false;
        let mut fields = Fields::new(line);
        let targets = std::mem::take(&mut self.targets);
        let mut result = Ok(());
        // SAFETY: the row was checked above, and fields are cut at tabs,
        // which are ASCII.
        let texts = (&mut fields).map(|f| unsafe { text_of(f) });
        for (&target, field) in targets.iter().zip(texts) {
            if field.is_empty() {
                continue;
            }
            result = self.field(target, field, backslash, rec, &mut have_kind);
            if result.is_err() {
                break;
            }
        }
        let columns = targets.len();
        self.targets = targets;
        result?;
        if !fields.is_done() {
            let row = line.split(|&b| b == b'\t').count();
            return Err(format!(
                "wrong column count: the header has {columns} columns, this row has {row}"
            ));
        }
        if !have_kind {
            return Err("empty `kind`".into());
        }
        Ok(())
    }

    /// Decodes one non-empty field of the row (`backslash`: the row holds
    /// one, so the field may need unescaping).
    #[inline]
    fn field(
        &mut self,
        target: HeaderColumn,
        text: &str,
        backslash: bool,
        rec: &mut Record,
        have_kind: &mut bool,
    ) -> Result<(), String> {
        let escaped = backslash && memchr::memchr(b'\\', text.as_bytes()).is_some();
        match target {
            HeaderColumn::Std(Column::Kind) => {
                let kind = Kind::parse(text.as_bytes());
                rec.kind = kind.ok_or_else(|| format!("unknown kind `{text}`"))?;
                *have_kind = true;
                Ok(())
            }
            HeaderColumn::Std(col) => self.decode(col, text, escaped, rec),
            HeaderColumn::Extra(j) => {
                let mut v = String::new();
                if escaped {
                    unescape_tsv(text, &mut v)?;
                } else {
                    v.push_str(text);
                }
                rec.extra.push((self.extra_names[j].clone(), v));
                Ok(())
            }
        }
    }

    /// Decodes the non-empty field `text` of standard column `col` (but
    /// `kind`) into `rec`; `escaped` when it holds a backslash.
    #[inline]
    fn decode(
        &mut self,
        col: Column,
        text: &str,
        escaped: bool,
        rec: &mut Record,
    ) -> Result<(), String> {
        let field = match col {
            Column::Time => return int_field(text, "time").map(|v| rec.time = v),
            Column::End => return int_field(text, "end").map(|v| rec.end = v),
            Column::Tag => return int_field(text, "tag").map(|v| rec.tag = v),
            Column::Depth => {
                let depth = uint_field(text, "depth")?
                    .map(u32::try_from)
                    .transpose()
                    .map_err(|_| format!("bad number in `depth`: `{text}` is too large"))?;
                rec.depth = depth;
                return Ok(());
            }
            Column::Size => return uint_field(text, "size").map(|v| rec.size = v),
            Column::Loc | Column::Cat | Column::Name | Column::Peer | Column::Comm => {
                let sym = if escaped {
                    unescape_tsv(text, &mut self.scratch)
                        .map_err(|e| format!("in column `{}`: {e}", col.name()))?;
                    self.syms.intern(&self.scratch)
                } else {
                    self.syms.intern(text)
                };
                *match col {
                    Column::Loc => &mut rec.loc,
                    Column::Cat => &mut rec.cat,
                    Column::Name => &mut rec.name,
                    Column::Peer => &mut rec.peer,
                    _ => &mut rec.comm,
                } = sym;
                return Ok(());
            }
            Column::Id => &mut rec.id,
            Column::Value => &mut rec.value,
            Column::Flags => &mut rec.flags,
            Column::Attrs | Column::Kind => &mut rec.attrs,
        };
        if escaped {
            unescape_tsv(text, &mut self.scratch)
                .map_err(|e| format!("in column `{}`: {e}", col.name()))?;
            field.push_str(&self.scratch);
        } else {
            field.push_str(text);
        }
        Ok(())
    }
}

/// A field of a row as text, without checking it again.
///
/// # Safety
///
/// `field` is UTF-8: a field of a row checked by [`check_utf8`], cut at
/// ASCII bytes (tabs).
#[inline]
unsafe fn text_of(field: &[u8]) -> &str {
    // SAFETY: the caller's contract.
    unsafe { std::str::from_utf8_unchecked(field) }
}

/// Checks that a row that is not all ASCII is valid UTF-8.
fn check_utf8(line: &[u8], ascii: bool) -> Result<(), String> {
    if ascii {
        return Ok(());
    }
    std::str::from_utf8(line).map(drop).map_err(|e| {
        format!(
            "invalid UTF-8 at byte {} of the row: text must be UTF-8",
            e.valid_up_to() + 1
        )
    })
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

impl<R: BufRead> TsvReader<R> {
    /// The next row as read.
    fn next_row(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(start) = self.to_pool.take() {
            let lines = self.lines.take().expect("rows not read yet");
            self.chunks = Some(start(lines, &self.parser));
        }
        if let Some(chunks) = &mut self.chunks {
            let skip = self.parser.skip;
            return chunks.next_record(rec, &mut self.check, skip, &self.warnings);
        }
        let lines = self.lines.as_mut().expect("read on one thread");
        loop {
            let Some((line, row)) = lines.next_with(short_row_ahead)? else {
                return Ok(false);
            };
            let located = |msg: String| line.error(msg);
            let parser = &mut self.parser;
            line.read(|text| parser.parse(text, row, rec), &self.warnings)?;
            match self.check.check(rec).map_err(located)? {
                Verdict::Keep if !self.parser.skip.contains(rec.kind) => return Ok(true),
                // The `format` row, or a row of a kind dropped unread.
                _ => continue,
            }
        }
    }
}

impl<R: BufRead> RecordSource for TsvReader<R> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if self.nested.next_queued(rec) {
            self.replaced = true;
            return Ok(true);
        }
        loop {
            if !self.next_row(rec)? {
                self.nested.end();
                return Ok(false);
            }
            let (name, line) = (&self.name, self.mark());
            let at = || Location::Line {
                file: name.clone(),
                line,
            };
            let (chunks, lines) = (&self.chunks, &self.lines);
            let (parser, whole, symbols) = (&self.parser, &mut self.whole, &self.symbols);
            let whole = |r: &mut Record| {
                let line = match (chunks, lines) {
                    (Some(chunks), _) => chunks.raw_line(),
                    (None, Some(lines)) => Some(lines.last_line()),
                    (None, None) => None,
                };
                let line = line.ok_or("the row's line is gone")?;
                let parser = whole.get_or_insert_with(|| parser.whole(symbols.clone()));
                parser.parse(line, None, r)
            };
            match self.nested.follow(rec, whole, at)? {
                Next::Row => self.replaced = false,
                Next::Replaced => self.replaced = true,
                Next::Skip => continue,
            }
            return Ok(true);
        }
    }

    fn mark(&self) -> u64 {
        match (&self.chunks, &self.lines) {
            (Some(chunks), _) => chunks.line(),
            (None, Some(lines)) => lines.line_number(),
            (None, None) => 0,
        }
    }

    fn locate(&self, line: u64) -> Location {
        Location::Line {
            file: self.name.clone(),
            line,
        }
    }

    fn extra_columns(&self) -> &[String] {
        &self.parser.extra_names
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// A stream's `state`, `msg`, `claim`... rows come at their completion
    /// and may have begun at any earlier time: the stream cannot tell.
    fn horizon(&self) -> Option<i64> {
        None
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        let demand = self.nested.demand(demand, self.parser.standard);
        self.parser.skip = demand.skip;
        self.parser.frame_columns = self.nested.frame_columns();
        // Raw lines are given for the rows of the standard columns only.
        self.parser.decoded = match self.parser.standard {
            true => demand.reads.columns,
            false => demand.reads.without_raw_line(),
        }
        .union(ColumnSet::PLACE);
        self.pass_hints();
        Supply {
            raw_lines: self.parser.standard,
            encode_here: false,
        }
    }

    fn raw_line(&self) -> Option<&[u8]> {
        // A row read whole (not skipped) of the standard columns encodes
        // back to the same bytes: every number is canonical, every escape
        // the writer's own.
        if !self.parser.standard || self.replaced {
            return None;
        }
        match (&self.chunks, &self.lines) {
            (Some(chunks), _) => chunks.raw_line(),
            (None, Some(lines)) => {
                let line = lines.last_line();
                Some(line.strip_suffix(b"\r").unwrap_or(line))
            }
            (None, None) => None,
        }
    }
}

/// Writes the TSV stream: the header, the `format` meta row, then the records.
pub struct TsvWriter {
    out: Output,
    encoder: RowEncoder,
    header: bool,
    rows_only: bool,
    started: bool,
    /// Lines encoded and not yet given to the output: they go a block at a
    /// time, one copy a block rather than one call a line.
    block: Vec<u8>,
}

impl TsvWriter {
    /// A writer over `out`.
    pub fn new(out: Output, opts: &WriteOptions) -> TsvWriter {
        TsvWriter {
            out,
            encoder: RowEncoder {
                symbols: opts.symbols.clone(),
                extra: opts.extra_columns.clone(),
                time_factor: 10u64.pow(opts.time_decimals),
                spans: Vec::new(),
                fields: Vec::new(),
            },
            header: !opts.no_header,
            rows_only: opts.rows_only,
            started: false,
            block: Vec::with_capacity(BLOCK),
        }
    }

    fn start(&mut self) -> Result<()> {
        self.started = true;
        if self.header {
            self.block.extend_from_slice(COLUMNS.join("\t").as_bytes());
            for name in &self.encoder.extra {
                self.block.push(b'\t');
                escape_tsv(name, &mut self.block);
            }
            self.block.push(b'\n');
        }
        if !self.rows_only {
            let format_row = Record::meta(META_FORMAT, FORMAT_VERSION);
            self.encoder.encode(&format_row, &mut self.block)?;
        }
        self.write_block()
    }

    /// Gives the lines encoded so far to the output.
    fn write_block(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let written = self.out.write_line(&self.block);
        self.block.clear();
        written
    }
}

/// Bytes of lines gathered before they go to the output: as much as the
/// output buffers, so a block goes past its buffer rather than into it.
const BLOCK: usize = crate::io::BUFFER_SIZE;

/// Lines encoded and not yet written still go out when the writer is
/// dropped without finishing (a later row failed), as the output's own
/// buffer does.
impl Drop for TsvWriter {
    fn drop(&mut self) {
        let _ = self.write_block();
    }
}

/// Bytes after the last field of [`RowEncoder::fields`], so that a short
/// field is copied as a block of this size.
const FIELD_PADDING: usize = 16;

/// Encodes records as TSV lines for one header. A symbol's field (its
/// text escaped, and the tab after it) is made once, then copied.
/// Memory: the fields of the distinct symbols met.
pub struct RowEncoder {
    symbols: Symbols,
    /// Non-standard columns written after the standard ones.
    extra: Vec<String>,
    /// Times are divided by this (1: ns).
    time_factor: u64,
    /// Per symbol, where its field is in `fields` (an empty span: not made
    /// yet, as no field is empty).
    spans: Vec<(usize, usize)>,
    /// The fields, then [`FIELD_PADDING`] bytes (once one is made).
    fields: Vec<u8>,
}

impl crate::pipe::LineEncoder for RowEncoder {
    fn encode(&mut self, rec: &Record, line: &mut Vec<u8>) -> Result<()> {
        RowEncoder::encode(self, rec, line)
    }
}

impl RowEncoder {
    /// An encoder of rows of the standard columns, times in ns, whose
    /// identifiers are in `symbols`: the lines a TSV writer copies.
    pub fn standard(symbols: Symbols) -> RowEncoder {
        RowEncoder {
            symbols,
            extra: Vec::new(),
            time_factor: 1,
            spans: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Appends the TSV line of `rec`, with its newline; an error when `rec`
    /// has a column the header lacks.
    pub fn encode(&mut self, rec: &Record, line: &mut Vec<u8>) -> Result<()> {
        line.reserve(128);
        line.extend_from_slice(rec.kind.as_str().as_bytes());
        line.push(b'\t');
        self.time(line, rec.time);
        self.time(line, rec.end);
        self.sym(line, rec.loc);
        self.sym(line, rec.cat);
        self.sym(line, rec.name);
        if let Some(d) = rec.depth {
            push_uint(line, u64::from(d));
        }
        line.push(b'\t');
        let bare = rec.peer.is_empty()
            && rec.comm.is_empty()
            && rec.tag.is_none()
            && rec.size.is_none()
            && rec.id.is_empty()
            && rec.value.is_empty()
            && rec.flags.is_empty();
        if bare {
            // Most rows (frames, states, events) end so: their tabs at once.
            line.extend_from_slice(b"\t\t\t\t\t\t\t");
        } else {
            self.tail(rec, line);
        }
        escape_tsv(&rec.attrs, line);
        if !rec.extra.is_empty() || !self.extra.is_empty() {
            self.extra_fields(rec, line)?;
        }
        line.push(b'\n');
        Ok(())
    }

    /// The columns from `peer` to `flags`, each with its tab.
    fn tail(&mut self, rec: &Record, line: &mut Vec<u8>) {
        self.sym(line, rec.peer);
        self.sym(line, rec.comm);
        if let Some(n) = rec.tag {
            push_int(line, n);
        }
        line.push(b'\t');
        if let Some(s) = rec.size {
            push_uint(line, s);
        }
        line.push(b'\t');
        for text in [&rec.id, &rec.value, &rec.flags] {
            escape_tsv(text, line);
            line.push(b'\t');
        }
    }

    fn time(&self, line: &mut Vec<u8>, time: Option<i64>) {
        if let Some(n) = time {
            push_time(line, n, self.time_factor);
        }
        line.push(b'\t');
    }

    #[inline]
    fn sym(&mut self, line: &mut Vec<u8>, sym: Sym) {
        if sym.is_empty() {
            line.push(b'\t');
            return;
        }
        let (start, end) = match self.spans.get(sym.index()) {
            Some(&(start, end)) if start != end => (start, end),
            _ => self.make_field(sym),
        };
        if end - start <= FIELD_PADDING {
            // A copy of a length known at compile time is a few moves,
            // not a call to `memcpy`; the padding keeps it inside `fields`.
            let at = line.len();
            let chunk: &[u8; FIELD_PADDING] = self.fields[start..start + FIELD_PADDING]
                .try_into()
                .expect("padded");
            line.extend_from_slice(chunk);
            line.truncate(at + end - start);
        } else {
            line.extend_from_slice(&self.fields[start..end]);
        }
    }

    /// Makes the field of `sym`.
    #[cold]
    fn make_field(&mut self, sym: Sym) -> (usize, usize) {
        self.fields
            .truncate(self.fields.len().saturating_sub(FIELD_PADDING));
        let start = self.fields.len();
        escape_tsv(self.symbols.text(sym), &mut self.fields);
        self.fields.push(b'\t');
        let span = (start, self.fields.len());
        self.fields.resize(span.1 + FIELD_PADDING, 0);
        if self.spans.len() <= sym.index() {
            self.spans.resize(sym.index() + 1, (0, 0));
        }
        self.spans[sym.index()] = span;
        span
    }

    /// The extra columns of the header, from those of `rec`.
    fn extra_fields(&self, rec: &Record, line: &mut Vec<u8>) -> Result<()> {
        for (name, _) in &rec.extra {
            if !self.extra.contains(name) {
                return Err(Error::Record(format!(
                    "column `{name}` is not in the output header; write JSON Lines (--json) to keep it"
                )));
            }
        }
        for name in &self.extra {
            line.push(b'\t');
            if let Some((_, v)) = rec.extra.iter().find(|(n, _)| n == name) {
                escape_tsv(v, line);
            }
        }
        Ok(())
    }
}

impl TsvWriter {
    /// Whether a raw line of the standard columns is what this writer
    /// writes for its row.
    fn copies_raw(&self) -> bool {
        self.encoder.extra.is_empty() && self.encoder.time_factor == 1 && !self.rows_only
    }
}

impl RecordSink for TsvWriter {
    fn write_raw(&mut self, rec: &Record, raw: &[u8]) -> Result<()> {
        if !self.copies_raw() {
            return self.write(rec);
        }
        if !self.started {
            self.start()?;
        }
        self.write_block()?;
        self.out.write_row(raw)
    }

    fn write_raw_lines(&mut self, lines: &[u8]) -> Result<()> {
        if !self.copies_raw() {
            return crate::pipe::write_lines_one_by_one(self, lines);
        }
        if !self.started {
            self.start()?;
        }
        self.write_block()?;
        self.out.write_line(lines)
    }

    fn reads(&self) -> Reads {
        match self.copies_raw() {
            true => Reads::RAW_LINE,
            false => Reads::ALL,
        }
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        if self.rows_only && is_declaration(rec.kind) {
            return Ok(());
        }
        let at = self.block.len();
        if let Err(e) = self.encoder.encode(rec, &mut self.block) {
            // A refused row leaves nothing behind.
            self.block.truncate(at);
            return Err(e);
        }
        if self.block.len() >= BLOCK || self.out.is_line_buffered() {
            self.write_block()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        self.write_block()?;
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SharedBuffer;

    /// Lines gathered in a block: a refused row leaves no part of itself,
    /// and the rows before and after it still go out when the writer is
    /// dropped unfinished (a later row failed), in order.
    #[test]
    fn a_refused_row_leaves_nothing_and_an_unfinished_writer_keeps_its_rows() {
        let shared = SharedBuffer::default();
        let opts = WriteOptions {
            no_header: true,
            rows_only: true,
            ..WriteOptions::default()
        };
        let out = Output::new("<test>", Box::new(shared.clone()));
        let mut writer = TsvWriter::new(out, &opts);
        let row = |t: i64| {
            let mut rec = Record::new(Kind::Event);
            rec.time = Some(t);
            rec.loc = opts.symbols.intern("p0");
            rec
        };
        writer.write(&row(1)).unwrap();
        let mut refused = row(2);
        refused.extra.push(("gpu".into(), "0".into()));
        assert!(writer.write(&refused).is_err());
        writer.write(&row(3)).unwrap();
        drop(writer);
        let text = String::from_utf8(shared.contents()).unwrap();
        let times: Vec<&str> = text
            .lines()
            .map(|l| l.split('\t').nth(1).unwrap())
            .collect();
        assert_eq!(times, ["1", "3"], "{text:?}");
    }

    /// Symbols of every length up to past the padding, escapes included,
    /// each met first and again, encode as their escaped texts.
    #[test]
    fn symbol_fields_of_every_length_encode_as_their_text() {
        let symbols = Symbols::new();
        let mut encoder = RowEncoder::standard(symbols.clone());
        let texts: Vec<String> = (1..40)
            .map(|n| {
                let text: String = (0..n).map(|i| (b'a' + (i % 26) as u8) as char).collect();
                if n % 3 == 0 {
                    text.replacen('c', "\t", 1)
                } else {
                    text
                }
            })
            .collect();
        for round in 0..2 {
            for (i, text) in texts.iter().enumerate() {
                let mut rec = Record::new(Kind::Event);
                rec.time = Some(i as i64);
                rec.loc = symbols.intern(text);
                rec.name = symbols.intern(&texts[texts.len() - 1 - i]);
                let mut line = Vec::new();
                encoder.encode(&rec, &mut line).unwrap();
                let mut expected = format!("event\t{i}\t\t").into_bytes();
                escape_tsv(text, &mut expected);
                expected.extend_from_slice(b"\t\t");
                escape_tsv(&texts[texts.len() - 1 - i], &mut expected);
                expected.extend_from_slice(&[b'\t'; 9]);
                expected.push(b'\n');
                assert_eq!(
                    String::from_utf8_lossy(&line),
                    String::from_utf8_lossy(&expected),
                    "round {round}, {text:?}"
                );
            }
        }
    }
}
