//! The TSV reader on N cores: rows parsed a chunk of lines at a time as
//! jobs of the pipeline's pool ([`crate::exec::chunks`]), handed out in
//! input order by the reading thread, which checks the stream's rules on
//! them as the one-thread reader does.
//!
//! Each copy of the parsing work (two per thread: one chunk being parsed,
//! one waiting) interns the identifiers of its rows in a table of its own;
//! the reading thread turns its symbols into the pipeline's as it hands the
//! rows out (an index into a table per copy), so the pipeline's symbols
//! are numbered in input order whatever the threads' timing: the output
//! and the symbol numbers are the same as on one thread.

use std::sync::{Arc, Mutex};

use super::RowParser;
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::chunks::{Chunk, Chunked};
use crate::exec::ordered::OrderedWork;
use crate::formats::stream::short_row_ahead;
use crate::io::{cut_error, CUT_WARNING};
use crate::model::check::{StreamCheck, Verdict};
use crate::model::record::{ColumnSet, KindSet, Record, Sym};
use crate::model::symbol::{SymCache, Symbols};
use crate::pool::{lock, Pool};

/// A copy of the parsing work: the rows of a chunk.
struct RowWork {
    parser: RowParser,
    id: usize,
    hints: Hints,
}

/// The kinds skipped and the columns decoded (of every row, and beside
/// them of `enter` and `leave` rows) as the stages above agreed (see
/// [`crate::pipe::Demand`]), maybe after the jobs started: each takes them
/// up at its next chunk.
type Hints = Arc<Mutex<(KindSet, ColumnSet, ColumnSet)>>;

/// The rows of a chunk: records parsed in order, the span of each row's line
/// in the chunk (without its newline and `\r`), and what stopped them.
#[derive(Default)]
struct Rows {
    worker: usize,
    records: Vec<Record>,
    spans: Vec<(usize, usize)>,
    count: usize,
    /// The error of row `count`, when one stopped the chunk.
    error: Option<String>,
}

impl OrderedWork for RowWork {
    type In = Chunk;
    type Out = Rows;

    fn run(&mut self, chunk: &Chunk, out: &mut Rows) {
        let hints = *lock(&self.hints);
        (
            self.parser.skip,
            self.parser.decoded,
            self.parser.frame_columns,
        ) = hints;
        out.worker = self.id;
        out.count = 0;
        out.error = None;
        out.spans.clear();
        let bytes = chunk.bytes();
        let mut at = 0;
        while at < bytes.len() {
            let (len, row) = match short_row_ahead(&bytes[at..]) {
                Some((len, row)) => (len, Some(row)),
                None => (
                    memchr::memchr(b'\n', &bytes[at..]).unwrap_or(bytes.len() - at),
                    None,
                ),
            };
            let line = &bytes[at..at + len];
            if out.count == out.records.len() {
                out.records.push(Record::default());
            }
            let last_of_cut = chunk.cut && at + len == bytes.len();
            let rec = &mut out.records[out.count];
            // A row's own rules here; the rules between rows on the
            // reading thread.
            match self
                .parser
                .parse(line, row, rec)
                .and_then(|()| rec.validate())
            {
                Ok(()) => {}
                Err(msg) if last_of_cut => {
                    out.error = Some(cut_error(&msg));
                    return;
                }
                Err(msg) => {
                    out.error = Some(msg);
                    return;
                }
            }
            let text = line.strip_suffix(b"\r").map_or(len, <[u8]>::len);
            out.spans.push((at, at + text));
            out.count += 1;
            at += len + 1;
        }
    }
}

/// The rows of a TSV input parsed on the pool, handed out in order.
pub(super) struct ChunkRows {
    name: String,
    chunked: Chunked<RowWork>,
    current: Option<(Chunk, Rows)>,
    /// The next row of the current chunk, and its first line's number.
    next: usize,
    first_line: u64,
    /// Each copy of the work's symbol table, and the pipeline's symbol of each of
    /// its symbols met so far (its number + 1; 0 for not met yet).
    locals: Vec<Symbols>,
    maps: Vec<Vec<u32>>,
    syms: SymCache,
    hints: Hints,
}

impl ChunkRows {
    /// Rows of `input` (named `name`, the bytes `start` already read from
    /// it, `line` lines before them) parsed as `parser` parses them, on
    /// `pool`; their identifiers go to `symbols`.
    pub(super) fn new(
        name: &str,
        (start, input, line): (Vec<u8>, Box<dyn std::io::Read>, u64),
        parser: &RowParser,
        symbols: Symbols,
        pool: &Pool,
    ) -> ChunkRows {
        let copies = 2 * pool.threads().count();
        let locals: Vec<Symbols> = (0..copies).map(|_| Symbols::new()).collect();
        let hints = Arc::new(Mutex::new((
            parser.skip,
            parser.decoded,
            parser.frame_columns,
        )));
        let work = locals
            .iter()
            .enumerate()
            .map(|(id, local)| RowWork {
                parser: parser.with_symbols(local.clone()),
                id,
                hints: hints.clone(),
            })
            .collect();
        ChunkRows {
            name: name.to_string(),
            chunked: Chunked::new(name, start, input, work, pool),
            current: None,
            next: 0,
            first_line: line + 1,
            maps: vec![Vec::new(); copies],
            locals,
            syms: SymCache::new(symbols),
            hints,
        }
    }

    /// Tells the copies of the work the kinds skipped and the columns decoded from
    /// their next chunk on.
    pub(super) fn set_hints(&self, hints: (KindSet, ColumnSet, ColumnSet)) {
        *lock(&self.hints) = hints;
    }

    /// The line of the row last handed out.
    pub(super) fn line(&self) -> u64 {
        (self.first_line + self.next as u64).saturating_sub(1)
    }

    /// The line of the row last handed out, as read.
    pub(super) fn raw_line(&self) -> Option<&[u8]> {
        let (chunk, rows) = self.current.as_ref()?;
        let (start, end) = *rows.spans.get(self.next.checked_sub(1)?)?;
        Some(&chunk.bytes()[start..end])
    }

    /// Hands out the next row into `rec`, after `check` took it (the rules
    /// between rows; the jobs checked each row's own), but the rows of
    /// `skip`, which are checked and dropped; false at the end.
    pub(super) fn next_record(
        &mut self,
        rec: &mut Record,
        check: &mut StreamCheck,
        skip: KindSet,
        warnings: &Warnings,
    ) -> Result<bool> {
        loop {
            if let Some((chunk, rows)) = &mut self.current {
                let (map, local) = (&mut self.maps[rows.worker], &self.locals[rows.worker]);
                while self.next < rows.count {
                    let i = self.next;
                    self.next += 1;
                    let line = self.first_line + i as u64;
                    if chunk.cut && i + 1 == rows.count && rows.error.is_none() {
                        let file = self.name.clone();
                        warnings.warn_at(Location::Line { file, line }, CUT_WARNING);
                    }
                    let row = &mut rows.records[i];
                    translate(row, map, local, &mut self.syms);
                    let verdict = check
                        .check_valid(row)
                        .map_err(|msg| Error::line(&self.name, line, msg))?;
                    if verdict == Verdict::Keep && !skip.contains(row.kind) {
                        rec.take_from(row);
                        return Ok(true);
                    }
                }
                if let Some(msg) = rows.error.take() {
                    let line = self.first_line + rows.count as u64;
                    return Err(Error::line(&self.name, line, msg));
                }
                self.first_line += rows.count as u64;
                let (chunk, rows) = self.current.take().expect("a current chunk");
                self.chunked.recycle(chunk, rows);
                self.next = 0;
            }
            match self.chunked.next_done()? {
                Some(next) => self.current = Some(next),
                None => return Ok(false),
            }
        }
    }
}

/// Turns the symbols of a copy of the work's table `local` in `rec` into the
/// pipeline's: `map` holds those met so far (number + 1; 0 for not yet).
fn translate(rec: &mut Record, map: &mut Vec<u32>, local: &Symbols, syms: &mut SymCache) {
    for sym in rec.syms_mut() {
        if sym.is_empty() {
            continue;
        }
        let i = sym.index();
        match map.get(i) {
            Some(&known) if known != 0 => *sym = Sym::from_index(known - 1),
            _ => {
                let global = syms.intern(local.text(*sym));
                if map.len() <= i {
                    map.resize(i + 1, 0);
                }
                map[i] = global.index() as u32 + 1;
                *sym = global;
            }
        }
    }
}
