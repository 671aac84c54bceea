//! A row group held column by column until it is written: the part of a
//! Parquet writer that grows with rows, bounded by one row group.

use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnDescPtr;

use super::encode::{encode_chunk, Chunk, ChunkValues};
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
        self.values.extend(v);
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

/// The rows of one row group, column by column.
pub struct RowGroup {
    rows: usize,
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
            kinds: Vec::new(),
            syms: Default::default(),
            ints: Default::default(),
            texts: Default::default(),
            extra: (0..extra).map(|_| Texts::default()).collect(),
            seq: Vec::new(),
            text_bytes: 0,
        }
    }

    /// Empties the row group, keeping what its columns have allocated.
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

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// About the bytes held: the fixed part of each row and the text.
    pub fn bytes(&self) -> usize {
        self.rows * 80 + self.text_bytes
    }

    /// The locations of the rows held.
    pub fn locs(&self) -> &[Sym] {
        &self.syms[0]
    }

    /// Adds `rec`, whose extra columns are among `extra` (checked by the
    /// caller), and its place in the stream when the file keeps it.
    pub fn push(&mut self, rec: &Record, extra: &[String], seq: Option<i64>) {
        self.rows += 1;
        self.kinds.push(rec.kind);
        for (column, sym) in self.syms.iter_mut().zip(rec.syms()) {
            column.push(sym);
        }
        let ints = [
            rec.time,
            rec.end,
            rec.depth.map(i64::from),
            rec.tag,
            // Stored as the bits of an unsigned INT64.
            rec.size.map(|s| s as i64),
        ];
        for (column, v) in self.ints.iter_mut().zip(ints) {
            column.push(v);
        }
        for (column, text) in self.texts.iter_mut().zip(rec.texts()) {
            column.push(text);
            self.text_bytes += text.len();
        }
        for (column, name) in self.extra.iter_mut().zip(extra) {
            let text = rec.extra.iter().find(|(n, _)| n == name);
            let text = text.map_or("", |(_, v)| v.as_str());
            column.push(text);
            self.text_bytes += text.len();
        }
        self.seq.extend(seq);
    }
}

/// A row group's dictionary of one identifier column: each symbol's key,
/// numbered as first met. Memory: two numbers per symbol of the table.
#[derive(Default)]
struct SymKeys {
    /// Per symbol: the row group it was last numbered in, and its key.
    seen: Vec<(u32, u32)>,
    /// The current row group's number (from 1: 0 is never).
    group: u32,
    /// The symbols numbered, by key.
    used: Vec<Sym>,
    keys: Vec<u32>,
}

impl SymKeys {
    /// Numbers the non-empty symbols of `syms` for a new row group.
    fn number(&mut self, syms: &[Sym]) -> Vec<bool> {
        self.group += 1;
        self.used.clear();
        self.keys.clear();
        let mut defined = Vec::with_capacity(syms.len());
        for &sym in syms {
            defined.push(!sym.is_empty());
            if sym.is_empty() {
                continue;
            }
            let i = sym.index();
            if self.seen.len() <= i {
                self.seen.resize(i + 1, (0, 0));
            }
            if self.seen[i].0 != self.group {
                self.seen[i] = (self.group, self.used.len() as u32);
                self.used.push(sym);
            }
            self.keys.push(self.seen[i].1);
        }
        defined
    }
}

/// The dictionaries of a writer's identifier columns, kept from one row
/// group to the next so their memory is allocated once.
#[derive(Default)]
pub struct Dictionaries {
    syms: [SymKeys; 5],
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

/// Writes `rows` as one row group of `file`, whose columns are the
/// standard ones but `left_out`, then the extra ones, then the stream
/// places when kept; empties `rows`.
pub fn write_row_group<W: std::io::Write + Send>(
    file: &mut SerializedFileWriter<W>,
    rows: &mut RowGroup,
    left_out: Option<Column>,
    dictionaries: &mut Dictionaries,
    symbols: &Symbols,
) -> parquet::errors::Result<()> {
    let descrs: Vec<ColumnDescPtr> = file.schema_descr().columns().to_vec();
    let mut descrs = descrs.into_iter();
    let mut group = file.next_row_group()?;
    let n = rows.rows;
    let mut append = |chunk: &Chunk| -> parquet::errors::Result<()> {
        let descr = descrs.next().expect("a column per field");
        let (bytes, close) = encode_chunk(descr, chunk)?;
        group.append_column(&bytes, close)
    };
    for column in Column::ALL.into_iter().filter(|&c| Some(c) != left_out) {
        let statistics = statistics_pay(column);
        match slot(column) {
            ColumnSlot::Kind => {
                let mut used: Vec<Kind> = Vec::new();
                let keys: Vec<u32> = (rows.kinds.iter())
                    .map(|&k| match used.iter().position(|&u| u == k) {
                        Some(key) => key as u32,
                        None => {
                            used.push(k);
                            (used.len() - 1) as u32
                        }
                    })
                    .collect();
                let dictionary: Vec<&[u8]> = used.iter().map(|k| k.as_str().as_bytes()).collect();
                let values = ChunkValues::Keys {
                    keys: &keys,
                    dictionary: &dictionary,
                };
                append(&Chunk {
                    defined: None,
                    values,
                    rows: n,
                    statistics,
                })?;
            }
            ColumnSlot::Sym(i) => {
                let keys = &mut dictionaries.syms[i];
                let defined = keys.number(&rows.syms[i]);
                let dictionary: Vec<&[u8]> = keys
                    .used
                    .iter()
                    .map(|&s| symbols.text(s).as_bytes())
                    .collect();
                let values = ChunkValues::Keys {
                    keys: &keys.keys,
                    dictionary: &dictionary,
                };
                append(&Chunk {
                    defined: Some(&defined),
                    values,
                    rows: n,
                    statistics,
                })?;
            }
            ColumnSlot::Int(i) => {
                let ints = &rows.ints[i];
                let values = ChunkValues::Ints(&ints.values);
                append(&Chunk {
                    defined: Some(&ints.defined),
                    values,
                    rows: n,
                    statistics,
                })?;
            }
            ColumnSlot::Text(i) => append(&text_chunk(&rows.texts[i], n))?,
        }
    }
    for texts in &rows.extra {
        append(&text_chunk(texts, n))?;
    }
    if !rows.seq.is_empty() {
        let values = ChunkValues::Ints(&rows.seq);
        append(&Chunk {
            defined: None,
            values,
            rows: n,
            statistics: true,
        })?;
    }
    group.close()?;
    rows.clear();
    Ok(())
}

fn text_chunk(texts: &Texts, rows: usize) -> Chunk<'_> {
    let values = ChunkValues::Texts {
        data: &texts.data,
        ends: &texts.ends,
    };
    Chunk {
        defined: Some(&texts.defined),
        values,
        rows,
        statistics: false,
    }
}
