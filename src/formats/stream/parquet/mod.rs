//! The Parquet form of the stream: one column per stream column, one row
//! per stream row (`docs/formats.md`, "Parquet"), written a row group at a
//! time, and read back from a file or a Hive-partitioned folder.

mod columns;
mod encode;
mod part;
pub mod schema;
pub mod writer;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use part::{PartFile, PartPath};
pub use writer::{open_writer, WRITE_OPTIONS};

use super::nested::{Nested, Next};
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::merge::Merger;
use crate::formats::stream::jsonl;
use crate::io::Input;
use crate::model::check::{StreamCheck, Verdict};
use crate::model::record::{Column, ColumnSet, Record};
use crate::model::symbol::{SymCache, Symbols};
use crate::pipe::{Demand, Probe, ReadOptions, RecordSource, Supply};

/// Every Parquet file starts (and ends) with these bytes.
pub const MAGIC: &[u8] = b"PAR1";

/// A Parquet file, or a folder of them (partition folders `COLUMN=VALUE`
/// or `.parquet` files).
pub fn sniff(p: &Probe) -> bool {
    p.head.starts_with(MAGIC)
        || (p.is_dir
            && p.entries
                .iter()
                .any(|e| !e.starts_with('.') && (e.ends_with(".parquet") || e.contains('='))))
}

/// Registry constructor: a file, or a folder of files merged back.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let Some(path) = input.path.clone() else {
        return Err(Error::Usage(
            "a Parquet file is read from a file, not a pipe (its index is at its end): save it first"
                .into(),
        ));
    };
    let files = part_files(&input.name, &path)?;
    let symbols = &opts.symbols;
    let mut extra = Vec::new();
    let mut parts = Vec::with_capacity(files.len());
    for file in files {
        parts.push(PartFile::open(file, &mut extra)?);
    }
    let reader = |parts, extra| {
        ParquetReader::new(parts, extra, symbols.clone())
            .map(|r| r.with_warnings(opts.warnings.clone(), opts.strict))
    };
    if parts.len() > 1 && !parts.iter().all(PartFile::has_seq) {
        // Files written by another tool: each a stream, merged by time.
        let mut sources: Vec<Box<dyn RecordSource>> = Vec::new();
        for part in parts {
            sources.push(Box::new(reader(vec![part], extra.clone())?));
        }
        return Ok(Box::new(Merger::new(sources, symbols, &opts.warnings)?));
    }
    Ok(Box::new(reader(parts, extra)?))
}

/// The files to read for `path`: itself, or every `.parquet` file under
/// the folder (hidden and `_` names left out), sorted; each with the
/// column values its folders name (`loc=VALUE`).
fn part_files(name: &str, path: &Path) -> Result<Vec<PartPath>> {
    let mut found = Vec::new();
    if path.is_dir() {
        collect(path, &mut found)?;
        found.sort();
        if found.is_empty() {
            return Err(Error::file(name, "a folder without `.parquet` files"));
        }
    } else {
        found.push(path.to_path_buf());
    }
    let mut files = Vec::with_capacity(found.len());
    for file in found {
        let shown = file.display().to_string();
        let absolute = std::fs::canonicalize(&file).map_err(|e| Error::io(&shown, e))?;
        let mut constants = Vec::new();
        for segment in absolute.parent().into_iter().flat_map(Path::iter) {
            let segment = segment.to_string_lossy();
            let Some((key, value)) = segment.split_once('=') else {
                continue;
            };
            let Some(column) = Column::from_name(key) else {
                continue;
            };
            let value = schema::hive_unescape(value).ok_or_else(|| {
                Error::file(
                    &shown,
                    format!("folder `{segment}`: not a Hive-escaped value"),
                )
            })?;
            constants.retain(|(c, _)| *c != column);
            constants.push((column, value));
        }
        files.push(PartPath {
            name: shown,
            path: file,
            constants,
        });
    }
    Ok(files)
}

fn collect(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let shown = dir.display().to_string();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(&shown, e))? {
        let entry = entry.map_err(|e| Error::io(&shown, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect(&path, found)?;
        } else if name.ends_with(".parquet") {
            found.push(path);
        }
    }
    Ok(())
}

/// The declarations a partition's files repeat: each row with its place
/// in the stream, in that order.
fn repeated_declarations(parts: &[PartFile], syms: &mut SymCache) -> Result<Vec<(i64, Record)>> {
    let mut rows = Vec::new();
    for part in parts {
        let Some(text) = part.declarations() else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let bad = |msg: String| {
                Error::file(
                    &part.name,
                    format!("declaration {} of its metadata: {msg}", n + 1),
                )
            };
            let (seq, json) = line.split_once(' ').ok_or_else(|| bad("no place".into()))?;
            let seq = seq
                .parse()
                .map_err(|_| bad(format!("`{seq}` is not a place")))?;
            let mut rec = Record::default();
            jsonl::parse_line(json.as_bytes(), &mut rec, syms, ColumnSet::ALL).map_err(bad)?;
            rows.push((seq, rec));
        }
    }
    rows.sort_by_key(|(seq, _)| *seq);
    rows.dedup_by_key(|(seq, _)| *seq);
    rows.reverse();
    Ok(rows)
}

/// Where a row comes from: a file, or the declarations its files repeat.
enum Lane {
    File(PartFile),
    /// In reverse order, taken from the end.
    Declarations(Vec<(i64, Record)>),
}

/// Reads Parquet files of one stream: one file in its order, or the
/// files of a partitioned folder merged back by each row's place.
pub struct ParquetReader {
    lanes: Vec<Lane>,
    /// Rows are merged by place (a partition's files), not read in order.
    merged: bool,
    heads: Vec<Record>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    /// The last place handed out: a declaration repeated is dropped.
    last_seq: Option<i64>,
    /// The lane and row of the row last returned.
    current: (usize, u64),
    extra: Vec<String>,
    syms: SymCache,
    check: StreamCheck,
    nested: Nested,
    symbols: Symbols,
    warnings: Warnings,
}

impl ParquetReader {
    /// A reader of `parts`, whose extra columns are `extra`.
    fn new(parts: Vec<PartFile>, extra: Vec<String>, symbols: Symbols) -> Result<ParquetReader> {
        let mut syms = SymCache::new(symbols.clone());
        let merged = parts.len() > 1 || parts.iter().any(PartFile::has_seq);
        let declarations = match merged {
            true => repeated_declarations(&parts, &mut syms)?,
            false => Vec::new(),
        };
        let mut lanes: Vec<Lane> = parts.into_iter().map(Lane::File).collect();
        lanes.push(Lane::Declarations(declarations));
        let mut reader = ParquetReader {
            heads: (0..lanes.len()).map(|_| Record::default()).collect(),
            lanes,
            merged,
            heap: BinaryHeap::new(),
            last_seq: None,
            current: (0, 0),
            extra,
            syms,
            check: StreamCheck::new(symbols.clone()),
            nested: Nested::new(false, symbols.clone(), Warnings::default()),
            symbols,
            warnings: Warnings::default(),
        };
        if merged {
            for lane in 0..reader.lanes.len() {
                reader.refill(lane)?;
            }
        }
        Ok(reader)
    }

    fn with_warnings(mut self, warnings: Warnings, strict: bool) -> Self {
        self.nested = Nested::new(strict, self.symbols.clone(), warnings.clone());
        self.warnings = warnings;
        self
    }

    /// Reads lane `lane`'s next row into its head and queues it by place.
    fn refill(&mut self, lane: usize) -> Result<()> {
        let head = &mut self.heads[lane];
        let seq = match &mut self.lanes[lane] {
            Lane::File(part) => {
                let read = part.next(head, &mut self.syms, &self.extra);
                // Made only for an error: a row read is not located.
                let at = |part: &PartFile| Location::Row {
                    file: part.name.clone(),
                    row: part.rows,
                };
                if !read.map_err(|e| e.at(at(part)))? {
                    return Ok(());
                }
                part.seq.ok_or_else(|| {
                    Error::Record("no `seq`: a partition's files keep each row's place".into())
                        .at(at(part))
                })?
            }
            Lane::Declarations(rows) => match rows.pop() {
                Some((seq, rec)) => {
                    *head = rec;
                    seq
                }
                None => return Ok(()),
            },
        };
        self.heap.push(Reverse((seq, lane)));
        Ok(())
    }

    /// The next row as stored, before the stream's checks.
    fn next_stored(&mut self, rec: &mut Record) -> Result<bool> {
        if !self.merged {
            // One file in its own order.
            let Lane::File(part) = &mut self.lanes[0] else {
                unreachable!("a file's lane comes first")
            };
            let read = part.next(rec, &mut self.syms, &self.extra);
            self.current = (0, part.rows);
            return read.map_err(|e| e.at(self.locate_current()));
        }
        while let Some(Reverse((seq, lane))) = self.heap.pop() {
            std::mem::swap(rec, &mut self.heads[lane]);
            if let Lane::File(part) = &self.lanes[lane] {
                self.current = (lane, part.rows);
            }
            self.refill(lane)?;
            match self.last_seq {
                Some(last) if seq == last => continue,
                Some(last) if seq < last => {
                    return Err(Error::Record(format!(
                        "row place {seq} after {last}: the files are not of one stream"
                    ))
                    .at(self.locate_current()))
                }
                _ => {}
            }
            self.last_seq = Some(seq);
            return Ok(true);
        }
        Ok(false)
    }

    fn locate_current(&self) -> Location {
        self.locate(mark_of(self.current))
    }

    /// The next row, checked.
    fn next_row(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if !self.next_stored(rec)? {
                return Ok(false);
            }
            if let Err(e) = rec.check_half() {
                return Err(Error::Record(e.to_string()).at(self.locate_current()));
            }
            let verdict = self.check.check(rec);
            match verdict.map_err(|e| Error::Record(e).at(self.locate_current()))? {
                Verdict::Keep => return Ok(true),
                Verdict::Consumed => continue,
            }
        }
    }
}

/// A row's mark: its lane above bit 40, its row in the file below.
fn mark_of((lane, row): (usize, u64)) -> u64 {
    ((lane as u64) << 40) | row
}

/// Where the row of `mark` is: a file's row, or (a declaration its
/// files repeat) the first file.
fn locate_in(lanes: &[Lane], mark: u64) -> Location {
    let (lane, row) = ((mark >> 40) as usize, mark & ((1 << 40) - 1));
    match lanes.get(lane) {
        Some(Lane::File(part)) => Location::Row {
            file: part.name.clone(),
            row,
        },
        _ => Location::File(match lanes.first() {
            Some(Lane::File(part)) => part.name.clone(),
            _ => String::new(),
        }),
    }
}

impl RecordSource for ParquetReader {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if self.nested.next_queued(rec) {
            return Ok(true);
        }
        loop {
            if !self.next_row(rec)? {
                self.nested.end();
                return Ok(false);
            }
            let (lanes, mark) = (&self.lanes, mark_of(self.current));
            // Rows come whole: nothing to read again.
            if self
                .nested
                .follow(rec, |_| Ok(()), || locate_in(lanes, mark))?
                != Next::Skip
            {
                return Ok(true);
            }
        }
    }

    fn mark(&self) -> u64 {
        mark_of(self.current)
    }

    fn locate(&self, mark: u64) -> Location {
        locate_in(&self.lanes, mark)
    }

    fn extra_columns(&self) -> &[String] {
        &self.extra
    }

    /// Like the other stream forms: a row with an extent may have begun
    /// at any earlier time.
    fn horizon(&self) -> Option<i64> {
        None
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        self.nested.demand(demand, false);
        Supply::WHOLE_ROWS
    }
}
