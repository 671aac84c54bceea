//! A row group held column by column until it is written: the part of a
//! Parquet writer that grows with rows, bounded by one row group.

use bytes::Bytes;
use parquet::data_type::{ByteArray, ByteArrayType, DataType, Int64Type};
use parquet::file::writer::SerializedFileWriter;

use crate::error::Error;
use crate::model::record::{Column, Kind, Record};
use crate::model::symbol::{Sym, Symbols};

/// Values handed to a column writer at a time.
const BATCH: usize = 8192;

/// An integer column: its values, and a definition level per row (0 null).
#[derive(Default)]
struct Ints {
    values: Vec<i64>,
    defined: Vec<i16>,
}

impl Ints {
    fn push(&mut self, v: Option<i64>) {
        self.defined.push(i16::from(v.is_some()));
        self.values.extend(v);
    }
}

/// A text column: every row's bytes end to end, and where each ends; an
/// empty text is a null (the stream has no empty value).
#[derive(Default)]
struct Texts {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Texts {
    fn push(&mut self, text: &str) {
        self.data.extend_from_slice(text.as_bytes());
        self.ends.push(self.data.len());
    }

    /// Each row's value: a slice of one shared buffer, not a copy. The
    /// buffer goes with the values; the next row group's starts as large.
    fn values(&mut self) -> impl Iterator<Item = Option<ByteArray>> + '_ {
        let next = Vec::with_capacity(self.data.len());
        let data = Bytes::from(std::mem::replace(&mut self.data, next));
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let value = (end > start).then(|| ByteArray::from(data.slice(start..end)));
            start = end;
            value
        })
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
        for ints in &mut self.ints {
            ints.values.clear();
            ints.defined.clear();
        }
        for texts in self.texts.iter_mut().chain(&mut self.extra) {
            texts.data.clear();
            texts.ends.clear();
        }
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

/// The text of each symbol and kind as a Parquet value, made once.
#[derive(Default)]
pub struct ValueCache {
    syms: Vec<Option<ByteArray>>,
    kinds: Vec<Option<ByteArray>>,
}

impl ValueCache {
    fn sym(&mut self, sym: Sym, symbols: &Symbols) -> Option<ByteArray> {
        if sym.is_empty() {
            return None;
        }
        let i = sym.index();
        if self.syms.len() <= i {
            self.syms.resize(i + 1, None);
        }
        let text = || ByteArray::from(Bytes::copy_from_slice(symbols.text(sym).as_bytes()));
        Some(self.syms[i].get_or_insert_with(text).clone())
    }

    fn kind(&mut self, kind: Kind) -> ByteArray {
        let i = kind as usize;
        if self.kinds.len() <= i {
            self.kinds.resize(i + 1, None);
        }
        // A static text: its copies count no references.
        let text = || ByteArray::from(Bytes::from_static(kind.as_str().as_bytes()));
        self.kinds[i].get_or_insert_with(text).clone()
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

/// Writes `values` (one per row, `None` null) to a column, a batch at a
/// time.
fn write_column<T: DataType>(
    writer: &mut parquet::column::writer::ColumnWriterImpl<'_, T>,
    values: impl Iterator<Item = Option<T::T>>,
    required: bool,
) -> parquet::errors::Result<()> {
    let (mut batch, mut defined) = (Vec::with_capacity(BATCH), Vec::with_capacity(BATCH));
    let mut flush = |batch: &mut Vec<T::T>, defined: &mut Vec<i16>| {
        let levels = (!required).then_some(defined.as_slice());
        writer.write_batch(batch, levels, None)?;
        batch.clear();
        defined.clear();
        Ok::<(), parquet::errors::ParquetError>(())
    };
    for value in values {
        defined.push(i16::from(value.is_some()));
        batch.extend(value);
        if defined.len() == BATCH {
            flush(&mut batch, &mut defined)?;
        }
    }
    flush(&mut batch, &mut defined)
}

/// Writes `rows` as one row group of `file`, whose columns are the
/// standard ones but `left_out`, then the extra ones, then the stream
/// places when kept; empties `rows`.
pub fn write_row_group<W: std::io::Write + Send>(
    file: &mut SerializedFileWriter<W>,
    rows: &mut RowGroup,
    left_out: Option<Column>,
    cache: &mut ValueCache,
    symbols: &Symbols,
) -> parquet::errors::Result<()> {
    let mut group = file.next_row_group()?;
    for column in Column::ALL.into_iter().filter(|&c| Some(c) != left_out) {
        let mut writer = group.next_column()?.expect("a column per field");
        match slot(column) {
            ColumnSlot::Kind => {
                let values = rows.kinds.iter().map(|&k| Some(cache.kind(k)));
                write_column(writer.typed::<ByteArrayType>(), values, true)?;
            }
            ColumnSlot::Sym(i) => {
                let values = rows.syms[i].iter().map(|&s| cache.sym(s, symbols));
                write_column(writer.typed::<ByteArrayType>(), values, false)?;
            }
            ColumnSlot::Int(i) => write_ints(writer.typed::<Int64Type>(), &rows.ints[i])?,
            ColumnSlot::Text(i) => write_column(
                writer.typed::<ByteArrayType>(),
                rows.texts[i].values(),
                false,
            )?,
        }
        writer.close()?;
    }
    for texts in &mut rows.extra {
        let mut writer = group.next_column()?.expect("a column per field");
        write_column(writer.typed::<ByteArrayType>(), texts.values(), false)?;
        writer.close()?;
    }
    if let Some(mut writer) = group.next_column()? {
        writer
            .typed::<Int64Type>()
            .write_batch(&rows.seq, None, None)?;
        writer.close()?;
    }
    group.close()?;
    rows.clear();
    Ok(())
}

fn write_ints(
    writer: &mut parquet::column::writer::ColumnWriterImpl<'_, Int64Type>,
    ints: &Ints,
) -> parquet::errors::Result<()> {
    let mut at = 0;
    for defined in ints.defined.chunks(BATCH) {
        let n = defined.iter().filter(|&&d| d == 1).count();
        writer.write_batch(&ints.values[at..at + n], Some(defined), None)?;
        at += n;
    }
    Ok(())
}
