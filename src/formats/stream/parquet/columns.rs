//! A row group held column by column until it is written: the part of a
//! Parquet writer that grows with rows, bounded by one row group.

use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnDescPtr;

use super::encode::{ChunkEncoder, ChunkValues, PageFramer, PageRows, PAGE_ROWS};
use super::schema::statistics_pay;
use crate::error::Error;
use crate::model::record::{Column, Kind, Record};
use crate::model::symbol::{Sym, Symbols};

/// An integer column: the values of the rows that have one, and whether
/// each row has one.
#[derive(Default)]
struct Ints {
    values: Vec<i64>,
    defined: Vec<bool>,
}

impl Ints {
    fn push(&mut self, v: Option<i64>) {
        self.defined.push(v.is_some());
        if let Some(v) = v {
            self.values.push(v);
        }
    }

    fn clear(&mut self) {
        self.values.clear();
        self.defined.clear();
    }
}

/// A text column: the texts of the rows that have one, end to end, where
/// each ends, and whether each row has one (an empty text is a null: the
/// stream has no empty value).
#[derive(Default)]
struct Texts {
    data: Vec<u8>,
    ends: Vec<usize>,
    defined: Vec<bool>,
}

impl Texts {
    fn push(&mut self, text: &str) {
        self.defined.push(!text.is_empty());
        if !text.is_empty() {
            self.data.extend_from_slice(text.as_bytes());
            self.ends.push(self.data.len());
        }
    }

    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
        self.defined.clear();
    }
}

/// A row group being written: its column chunks encoded a page at a
/// time, and the rows of the page being filled, column by column.
pub struct RowGroup {
    /// Rows of the page being filled.
    rows: usize,
    /// Rows of the pages encoded.
    encoded: usize,
    /// Bytes of the pages encoded.
    encoded_bytes: usize,
    chunks: Vec<ChunkEncoder>,
    keys: GroupKeys,
    kinds: Vec<Kind>,
    /// `loc`, `cat`, `name`, `peer`, `comm`, as in [`Record::syms`].
    syms: [Vec<Sym>; 5],
    /// `time`, `end`, `depth`, `tag`, `size`.
    ints: [Ints; 5],
    /// `id`, `value`, `flags`, `attrs`, as in [`Record::texts`].
    texts: [Texts; 4],
    extra: Vec<Texts>,
    seq: Vec<i64>,
    /// Bytes of text held, for the bound on memory.
    text_bytes: usize,
}

/// Where a standard column's values are kept.
enum ColumnSlot {
    Kind,
    Sym(usize),
    Int(usize),
    Text(usize),
}

fn slot(column: Column) -> ColumnSlot {
    match column {
        Column::Kind => ColumnSlot::Kind,
        Column::Time => ColumnSlot::Int(0),
        Column::End => ColumnSlot::Int(1),
        Column::Loc => ColumnSlot::Sym(0),
        Column::Cat => ColumnSlot::Sym(1),
        Column::Name => ColumnSlot::Sym(2),
        Column::Depth => ColumnSlot::Int(2),
        Column::Peer => ColumnSlot::Sym(3),
        Column::Comm => ColumnSlot::Sym(4),
        Column::Tag => ColumnSlot::Int(3),
        Column::Size => ColumnSlot::Int(4),
        Column::Id => ColumnSlot::Text(0),
        Column::Value => ColumnSlot::Text(1),
        Column::Flags => ColumnSlot::Text(2),
        Column::Attrs => ColumnSlot::Text(3),
    }
}

impl RowGroup {
    /// An empty row group with `extra` columns.
    pub fn new(extra: usize) -> RowGroup {
        RowGroup {
            rows: 0,
            encoded: 0,
            encoded_bytes: 0,
            chunks: Vec::new(),
            keys: GroupKeys::default(),
            kinds: Vec::new(),
            syms: Default::default(),
            ints: Default::default(),
            texts: Default::default(),
            extra: (0..extra).map(|_| Texts::default()).collect(),
            seq: Vec::new(),
            text_bytes: 0,
        }
    }

    /// Empties the page being filled, keeping what its columns have
    /// allocated.
    fn clear(&mut self) {
        self.rows = 0;
        self.text_bytes = 0;
        self.kinds.clear();
        self.syms.iter_mut().for_each(Vec::clear);
        self.ints.iter_mut().for_each(Ints::clear);
        self.texts.iter_mut().for_each(Texts::clear);
        self.extra.iter_mut().for_each(Texts::clear);
        self.seq.clear();
    }

    /// Rows in the row group.
    pub fn rows(&self) -> usize {
        self.encoded + self.rows
    }

    /// About the bytes held: the pages encoded, the fixed part of each row
    /// of the page being filled, and its text.
    pub fn bytes(&self) -> usize {
        self.encoded_bytes + self.rows * 80 + self.text_bytes
    }

    /// Whether the page being filled is full.
    pub fn page_full(&self) -> bool {
        self.rows >= PAGE_ROWS
    }

    /// The locations of the rows encoded (after [`RowGroup::encode_page`]).
    pub fn locs(&self) -> &[Sym] {
        &self.keys.used[0]
    }

    /// Adds `rec`, whose extra columns are among `extra` (checked by the
    /// caller), and its place in the stream when the file keeps it.
    pub fn push(&mut self, rec: &Record, extra: &[String], seq: Option<i64>) {
        self.rows += 1;
        self.kinds.push(rec.kind);
        // Loops by index, which the compiler unrolls (it did not unroll
        // zipped ones): this runs for every row.
        let syms = rec.syms();
        for (c, &sym) in syms.iter().enumerate() {
            self.syms[c].push(sym);
        }
        let ints = [
            rec.time,
            rec.end,
            rec.depth.map(i64::from),
            rec.tag,
            // Stored as the bits of an unsigned INT64.
            rec.size.map(|s| s as i64),
        ];
        for (c, &v) in ints.iter().enumerate() {
            self.ints[c].push(v);
        }
        let texts = rec.texts();
        for (c, text) in texts.iter().enumerate() {
            self.texts[c].push(text);
            self.text_bytes += text.len();
        }
        for (column, name) in self.extra.iter_mut().zip(extra) {
            let text = rec.extra.iter().find(|(n, _)| n == name);
            let text = text.map_or("", |(_, v)| v.as_str());
            column.push(text);
            self.text_bytes += text.len();
        }
        if let Some(seq) = seq {
            self.seq.push(seq);
        }
    }
}

/// Each symbol's key in the row group that numbered it last, per
/// identifier column, shared by the row groups a writer fills (a
/// partitioned folder's among them). Memory: two numbers per symbol of
/// the table and column.
#[derive(Default)]
pub struct Dictionaries {
    /// Per column and symbol: the row group that numbered it last, and the
    /// key it gave.
    seen: [Vec<(u32, u32)>; 5],
    /// The last row group's number (from 1: 0 is never).
    groups: u32,
}

/// A row group's dictionaries: the symbols of each identifier column and
/// the kinds, by key. A symbol another row group numbered in between is
/// numbered again: a dictionary may repeat a value, never misplace one.
#[derive(Default)]
struct GroupKeys {
    /// Its number in [`Dictionaries`] (0: none yet).
    group: u32,
    used: [Vec<Sym>; 5],
    kinds: Vec<Kind>,
}

impl GroupKeys {
    /// The keys of `syms`' non-empty symbols in column `c`, and whether
    /// each row has one.
    fn number(
        &mut self,
        c: usize,
        syms: &[Sym],
        shared: &mut Dictionaries,
    ) -> (Vec<u32>, Vec<bool>) {
        if self.group == 0 {
            shared.groups += 1;
            self.group = shared.groups;
        }
        let seen = &mut shared.seen[c];
        let (mut keys, mut defined) = (
            Vec::with_capacity(syms.len()),
            Vec::with_capacity(syms.len()),
        );
        // Rows in a row often share a symbol: the last one's key is kept.
        let mut last = (Sym::EMPTY, 0);
        for &sym in syms {
            defined.push(!sym.is_empty());
            if sym.is_empty() {
                continue;
            }
            if sym == last.0 {
                keys.push(last.1);
                continue;
            }
            let i = sym.index();
            if seen.len() <= i {
                seen.resize(i + 1, (0, 0));
            }
            if seen[i].0 != self.group {
                seen[i] = (self.group, self.used[c].len() as u32);
                self.used[c].push(sym);
            }
            keys.push(seen[i].1);
            last = (sym, seen[i].1);
        }
        (keys, defined)
    }

    /// The keys of `kinds`.
    fn kinds(&mut self, kinds: &[Kind]) -> Vec<u32> {
        let mut keys = [u32::MAX; Kind::ALL.len()];
        for (key, &k) in self.kinds.iter().enumerate() {
            keys[k as usize] = key as u32;
        }
        let used = &mut self.kinds;
        let mut key = |k: Kind| {
            if keys[k as usize] == u32::MAX {
                keys[k as usize] = used.len() as u32;
                used.push(k);
            }
            keys[k as usize]
        };
        kinds.iter().map(|&k| key(k)).collect()
    }
}

/// A Parquet error about output `name`: a broken pipe stays one, so a
/// closed standard output ends the command quietly.
pub fn write_error(name: &str, e: parquet::errors::ParquetError) -> Error {
    if let parquet::errors::ParquetError::External(inner) = &e {
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            return Error::io(name, std::io::Error::new(io.kind(), io.to_string()));
        }
    }
    Error::file(name, format!("writing Parquet: {e}"))
}

impl RowGroup {
    /// Encodes the page being filled as the next page of each column
    /// chunk (the standard columns but `left_out`, the extra ones, the
    /// stream places when kept), and empties it.
    pub fn encode_page(
        &mut self,
        left_out: Option<Column>,
        shared: &mut Dictionaries,
        pages: &mut PageFramer,
    ) -> parquet::errors::Result<()> {
        let n = self.rows;
        if n == 0 {
            return Ok(());
        }
        let columns = Column::ALL.into_iter().filter(|&c| Some(c) != left_out);
        let count = columns.clone().count() + self.extra.len() + usize::from(!self.seq.is_empty());
        self.chunks.resize_with(count, ChunkEncoder::default);
        let mut chunks = self.chunks.iter_mut();
        let mut add = |defined: Option<&[bool]>, values: ChunkValues| {
            let chunk = chunks.next().expect("a chunk per column");
            chunk.add_page(
                &PageRows {
                    defined,
                    values,
                    rows: n,
                },
                pages,
            )
        };
        for column in columns {
            match slot(column) {
                ColumnSlot::Kind => add(None, ChunkValues::Keys(&self.keys.kinds(&self.kinds)))?,
                ColumnSlot::Sym(i) => {
                    let (keys, defined) = self.keys.number(i, &self.syms[i], shared);
                    add(Some(&defined), ChunkValues::Keys(&keys))?;
                }
                ColumnSlot::Int(i) => {
                    let ints = &self.ints[i];
                    add(Some(&ints.defined), ChunkValues::Ints(&ints.values))?;
                }
                ColumnSlot::Text(i) => {
                    let texts = &self.texts[i];
                    add(Some(&texts.defined), text_values(texts))?;
                }
            }
        }
        for texts in &self.extra {
            add(Some(&texts.defined), text_values(texts))?;
        }
        if !self.seq.is_empty() {
            add(None, ChunkValues::Ints(&self.seq))?;
        }
        self.encoded += n;
        self.encoded_bytes = self.chunks.iter().map(ChunkEncoder::bytes).sum();
        self.clear();
        Ok(())
    }

    /// Writes the row group (its last page encoded first, with
    /// [`RowGroup::encode_page`]) as the next row group of `file`, whose
    /// columns are those the pages were encoded for; empties it.
    pub fn write<W: std::io::Write + Send>(
        &mut self,
        file: &mut SerializedFileWriter<W>,
        left_out: Option<Column>,
        symbols: &Symbols,
        pages: &mut PageFramer,
    ) -> parquet::errors::Result<()> {
        debug_assert_eq!(self.rows, 0, "the last page is encoded first");
        let descrs: Vec<ColumnDescPtr> = file.schema_descr().columns().to_vec();
        let mut group = file.next_row_group()?;
        let keys = &self.keys;
        let texts = |c: usize| -> Vec<&[u8]> {
            keys.used[c]
                .iter()
                .map(|&s| symbols.text(s).as_bytes())
                .collect()
        };
        let mut chunks = self.chunks.iter_mut().zip(descrs);
        for column in Column::ALL.into_iter().filter(|&c| Some(c) != left_out) {
            let (chunk, descr) = chunks.next().expect("a chunk per column");
            let stats = statistics_pay(column);
            let (bytes, close) = match slot(column) {
                ColumnSlot::Kind => {
                    let kinds: Vec<&[u8]> =
                        keys.kinds.iter().map(|k| k.as_str().as_bytes()).collect();
                    chunk.finish(descr, Some(&kinds), stats, pages)?
                }
                ColumnSlot::Sym(i) => chunk.finish(descr, Some(&texts(i)), stats, pages)?,
                _ => chunk.finish(descr, None, stats, pages)?,
            };
            group.append_column(&bytes, close)?;
        }
        // The extra columns, then the places (with their range).
        for (n, (chunk, descr)) in chunks.enumerate() {
            let stats = n == self.extra.len();
            let (bytes, close) = chunk.finish(descr, None, stats, pages)?;
            group.append_column(&bytes, close)?;
        }
        group.close()?;
        self.keys = GroupKeys::default();
        (self.encoded, self.encoded_bytes) = (0, 0);
        Ok(())
    }
}

fn text_values(texts: &Texts) -> ChunkValues<'_> {
    ChunkValues::Texts {
        data: &texts.data,
        ends: &texts.ends,
    }
}
