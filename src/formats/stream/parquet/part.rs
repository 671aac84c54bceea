//! One Parquet file read as rows: its columns decoded a batch at a time,
//! each row's cells turned into a [`Record`].

use std::fs::File;

use parquet::basic::{ConvertedType, IntType, LogicalType, Repetition, Type as Physical};
use parquet::column::reader::ColumnReader;
use parquet::data_type::ByteArray;
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;

use super::schema::{DECLARATIONS_KEY, SEQ};
use crate::error::{Error, Result};
use crate::model::record::{Column, Kind, Record};
use crate::model::symbol::{Sym, SymCache};
use crate::number::{parse_int, parse_uint};

/// Rows decoded at a time.
const BATCH: usize = 4096;

/// What a file's column fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Std(Column),
    /// The n-th of the reader's extra columns.
    Extra(usize),
    Seq,
}

/// A column's decoded values.
enum Decoded {
    Int64(Vec<i64>),
    Int32(Vec<i32>),
    Bytes(Vec<ByteArray>),
    Double(Vec<f64>),
    Float(Vec<f32>),
    Bool(Vec<bool>),
}

/// One cell of a row.
enum CellValue<'a> {
    Null,
    Int(i64),
    Unsigned(u64),
    Text(&'a [u8]),
    Float(f64),
    Bool(bool),
}

/// A column being read: its reader over the current row group, and the
/// batch decoded from it.
struct Cursor {
    reader: ColumnReader,
    values: Decoded,
    defined: Vec<i16>,
    nullable: bool,
    /// The next value of `values` to hand out, and the next row.
    next: usize,
    row: usize,
}

/// A column of the file: its name, what it fills, and how it is read.
struct FileColumn {
    name: String,
    target: Target,
    unsigned: bool,
}

/// A file to read, and the column values its folders name (`loc=VALUE`).
pub struct PartPath {
    /// The name errors give.
    pub name: String,
    /// Where it is.
    pub path: std::path::PathBuf,
    /// Decoded for columns the file lacks.
    pub constants: Vec<(Column, String)>,
}

/// One Parquet file's rows.
pub struct PartFile {
    /// The name errors give.
    pub name: String,
    reader: SerializedFileReader<File>,
    columns: Vec<FileColumn>,
    /// Decoded the file's folders give (`loc=VALUE`), for columns it lacks.
    constants: Vec<(Column, String)>,
    cursors: Vec<Cursor>,
    group: usize,
    batch_rows: usize,
    at: usize,
    /// Rows handed out.
    pub rows: u64,
    /// The row last read's place in the stream, when the file keeps it.
    pub seq: Option<i64>,
}

fn parquet_error(name: &str, e: parquet::errors::ParquetError) -> Error {
    Error::file(name, format!("not a readable Parquet file: {e}"))
}

impl PartFile {
    /// Opens `file`; its columns not among `extra` are added to it.
    pub fn open(file: PartPath, extra: &mut Vec<String>) -> Result<PartFile> {
        let PartPath {
            name,
            path,
            constants,
        } = file;
        let name = name.as_str();
        let file = File::open(&path).map_err(|e| Error::io(name, e))?;
        let len = file.metadata().map_err(|e| Error::io(name, e))?.len();
        let reader =
            guarded(|| SerializedFileReader::new(file)).map_err(|e| parquet_error(name, e))?;
        check_layout(name, &reader, len)?;
        let columns = file_columns(name, &reader, extra)?;
        let has = |c: Column| columns.iter().any(|f| f.target == Target::Std(c));
        let constants: Vec<_> = constants.into_iter().filter(|(c, _)| !has(*c)).collect();
        if !has(Column::Kind) && !constants.iter().any(|(c, _)| *c == Column::Kind) {
            return Err(Error::file(
                name,
                "no `kind` column: not a tracepipe stream",
            ));
        }
        Ok(PartFile {
            name: name.to_string(),
            reader,
            columns,
            constants,
            cursors: Vec::new(),
            group: 0,
            batch_rows: 0,
            at: 0,
            rows: 0,
            seq: None,
        })
    }

    /// Whether the file keeps each row's place in the stream.
    pub fn has_seq(&self) -> bool {
        self.columns.iter().any(|c| c.target == Target::Seq)
    }

    /// The declarations a partition's file repeats, as `SEQ JSON` lines.
    pub fn declarations(&self) -> Option<&str> {
        let metadata = self
            .reader
            .metadata()
            .file_metadata()
            .key_value_metadata()?;
        let found = metadata.iter().find(|kv| kv.key == DECLARATIONS_KEY)?;
        found.value.as_deref()
    }

    /// Reads the next row into `rec`; false at the end of the file. An
    /// error's text is the row's (the caller locates it).
    pub fn next(
        &mut self,
        rec: &mut Record,
        syms: &mut SymCache,
        extra: &[String],
    ) -> Result<bool> {
        if self.at == self.batch_rows && !self.next_batch()? {
            return Ok(false);
        }
        self.at += 1;
        self.rows += 1;
        rec.clear();
        self.seq = None;
        let mut scratch = String::new();
        for (column, cursor) in self.columns.iter().zip(&mut self.cursors) {
            let cell = cursor.next_cell(column.unsigned);
            let set = match column.target {
                Target::Seq => match cell {
                    CellValue::Int(seq) => {
                        self.seq = Some(seq);
                        Ok(())
                    }
                    _ => Err("`seq` must be an integer".to_string()),
                },
                Target::Extra(i) => text_of(cell, &mut scratch).map(|text| {
                    if !text.is_empty() {
                        rec.extra.push((extra[i].clone(), text.to_string()));
                    }
                }),
                Target::Std(c) => set_field(rec, c, cell, syms, &mut scratch),
            };
            set.map_err(|e| Error::Record(format!("column `{}`: {e}", column.name)))?;
        }
        for (column, value) in &self.constants {
            let cell = CellValue::Text(value.as_bytes());
            set_field(rec, *column, cell, syms, &mut scratch)
                .map_err(|e| Error::Record(format!("partition `{}`: {e}", column.name())))?;
        }
        Ok(true)
    }

    /// Decodes the next batch, moving to the next row group as one ends.
    fn next_batch(&mut self) -> Result<bool> {
        loop {
            if !self.cursors.is_empty() {
                let rows = self.read_batch()?;
                if rows > 0 {
                    self.batch_rows = rows;
                    self.at = 0;
                    return Ok(true);
                }
            }
            if self.group == self.reader.num_row_groups() {
                return Ok(false);
            }
            let (reader, group, columns) = (&self.reader, self.group, self.columns.len());
            let cursors = guarded(|| {
                let group = reader.get_row_group(group)?;
                (0..columns)
                    .map(|j| Cursor::new(group.as_ref(), j))
                    .collect::<parquet::errors::Result<Vec<_>>>()
            });
            self.cursors = cursors.map_err(|e| parquet_error(&self.name, e))?;
            self.group += 1;
        }
    }

    /// Decodes up to [`BATCH`] rows of every column; their count (0 at the
    /// end of the row group).
    fn read_batch(&mut self) -> Result<usize> {
        let mut rows = None;
        for (column, cursor) in self.columns.iter().zip(&mut self.cursors) {
            let read = guarded(|| cursor.read()).map_err(|e| {
                Error::file(
                    &self.name,
                    format!("row group {}, column `{}`: {e}", self.group, column.name),
                )
            })?;
            match rows {
                None => rows = Some(read),
                Some(n) if n == read => {}
                Some(n) => {
                    return Err(Error::file(
                        &self.name,
                        format!(
                            "row group {}: column `{}` has {read} rows where the others have {n}",
                            self.group, column.name
                        ),
                    ))
                }
            }
        }
        Ok(rows.unwrap_or(0))
    }
}

/// The columns of `reader`'s file and what each fills; its columns not
/// among `extra` are added to it.
fn file_columns(
    name: &str,
    reader: &SerializedFileReader<File>,
    extra: &mut Vec<String>,
) -> Result<Vec<FileColumn>> {
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let mut columns = Vec::new();
    for descr in schema.columns() {
        let column_name = descr.name().to_string();
        let primitive = descr.self_type();
        if descr.max_rep_level() > 0
            || descr.path().parts().len() != 1
            || primitive.get_basic_info().repetition() == Repetition::REPEATED
        {
            return Err(Error::file(
                name,
                format!(
                    "column `{}` is nested or repeated; the stream's columns are flat",
                    descr.path()
                ),
            ));
        }
        let target = match Column::from_name(&column_name) {
            Some(c) => Target::Std(c),
            None if column_name == SEQ => Target::Seq,
            None => Target::Extra(match extra.iter().position(|n| *n == column_name) {
                Some(i) => i,
                None => {
                    extra.push(column_name.clone());
                    extra.len() - 1
                }
            }),
        };
        if columns.iter().any(|c: &FileColumn| c.target == target) {
            return Err(Error::file(
                name,
                format!("column `{column_name}` appears twice"),
            ));
        }
        let unsigned = matches!(
            primitive.get_basic_info().logical_type_ref(),
            Some(LogicalType::Integer(IntType {
                is_signed: false,
                ..
            }))
        ) || matches!(
            primitive.get_basic_info().converted_type(),
            ConvertedType::UINT_64 | ConvertedType::UINT_32
        );
        check_physical(name, &column_name, descr.physical_type())?;
        columns.push(FileColumn {
            name: column_name,
            target,
            unsigned,
        });
    }
    Ok(columns)
}

/// What `f` gives, or an error where the parquet crate panics: it asserts
/// some properties of the data it decodes (a variable-length integer of
/// ten bytes at most, in a damaged delta-encoded page) rather than
/// returning an error. Its message is printed by the panic hook before
/// the reader reports the file.
fn guarded<T>(f: impl FnOnce() -> parquet::errors::Result<T>) -> parquet::errors::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(parquet::errors::ParquetError::General(format!(
                "damaged data ({why})"
            )))
        }
    }
}

/// Checks that every column chunk the footer names lies inside the file
/// (the parquet crate takes it on trust, and panics on a negative one).
fn check_layout(name: &str, reader: &SerializedFileReader<File>, len: u64) -> Result<()> {
    for (g, group) in reader.metadata().row_groups().iter().enumerate() {
        if group.num_rows() < 0 {
            return Err(Error::file(
                name,
                format!("row group {g} has {} rows", group.num_rows()),
            ));
        }
        for chunk in group.columns() {
            let offsets = [
                Some(chunk.data_page_offset()),
                chunk.dictionary_page_offset(),
            ];
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(chunk.compressed_size()).ok())
                .and_then(|(start, size)| start.checked_add(size))
                .is_some_and(|end| end <= len);
            if !inside || offsets.into_iter().flatten().any(|o| o < 0) {
                return Err(Error::file(
                    name,
                    format!(
                        "row group {g}, column `{}`: its pages (byte {start}, {} bytes) lie outside the file",
                        chunk.column_path(),
                        chunk.compressed_size()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a physical type no stream column can hold.
fn check_physical(name: &str, column: &str, physical: Physical) -> Result<()> {
    match physical {
        Physical::INT64
        | Physical::INT32
        | Physical::BYTE_ARRAY
        | Physical::DOUBLE
        | Physical::FLOAT
        | Physical::BOOLEAN => Ok(()),
        other => Err(Error::file(
            name,
            format!("column `{column}` holds {other}, which no stream column can hold"),
        )),
    }
}

impl Cursor {
    fn new(group: &dyn RowGroupReader, j: usize) -> parquet::errors::Result<Cursor> {
        let reader = group.get_column_reader(j)?;
        let values = match &reader {
            ColumnReader::Int64ColumnReader(_) => Decoded::Int64(Vec::new()),
            ColumnReader::Int32ColumnReader(_) => Decoded::Int32(Vec::new()),
            ColumnReader::ByteArrayColumnReader(_) => Decoded::Bytes(Vec::new()),
            ColumnReader::DoubleColumnReader(_) => Decoded::Double(Vec::new()),
            ColumnReader::FloatColumnReader(_) => Decoded::Float(Vec::new()),
            ColumnReader::BoolColumnReader(_) => Decoded::Bool(Vec::new()),
            _ => unreachable!("types checked when the file opened"),
        };
        let nullable = group.metadata().column(j).column_descr().max_def_level() > 0;
        Ok(Cursor {
            reader,
            values,
            defined: Vec::new(),
            nullable,
            next: 0,
            row: 0,
        })
    }

    /// Decodes up to [`BATCH`] rows; how many.
    fn read(&mut self) -> parquet::errors::Result<usize> {
        self.defined.clear();
        (self.next, self.row) = (0, 0);
        let defined = self.nullable.then_some(&mut self.defined);
        let (rows, _, _) = match (&mut self.reader, &mut self.values) {
            (ColumnReader::Int64ColumnReader(r), Decoded::Int64(v)) => {
                v.clear();
                r.read_records(BATCH, defined, None, v)?
            }
            (ColumnReader::Int32ColumnReader(r), Decoded::Int32(v)) => {
                v.clear();
                r.read_records(BATCH, defined, None, v)?
            }
            (ColumnReader::ByteArrayColumnReader(r), Decoded::Bytes(v)) => {
                v.clear();
                r.read_records(BATCH, defined, None, v)?
            }
            (ColumnReader::DoubleColumnReader(r), Decoded::Double(v)) => {
                v.clear();
                r.read_records(BATCH, defined, None, v)?
            }
            (ColumnReader::FloatColumnReader(r), Decoded::Float(v)) => {
                v.clear();
                r.read_records(BATCH, defined, None, v)?
            }
            (ColumnReader::BoolColumnReader(r), Decoded::Bool(v)) => {
                v.clear();
                r.read_records(BATCH, defined, None, v)?
            }
            _ => unreachable!("values made for their reader"),
        };
        Ok(rows)
    }

    /// The cell of the next row.
    fn next_cell(&mut self, unsigned: bool) -> CellValue<'_> {
        let row = self.row;
        self.row += 1;
        if self.nullable && self.defined.get(row) != Some(&1) {
            return CellValue::Null;
        }
        let i = self.next;
        self.next += 1;
        let cell = match &self.values {
            Decoded::Int64(v) if unsigned => v.get(i).map(|&x| CellValue::Unsigned(x as u64)),
            Decoded::Int64(v) => v.get(i).map(|&x| CellValue::Int(x)),
            Decoded::Int32(v) if unsigned => {
                v.get(i).map(|&x| CellValue::Unsigned(u64::from(x as u32)))
            }
            Decoded::Int32(v) => v.get(i).map(|&x| CellValue::Int(i64::from(x))),
            Decoded::Bytes(v) => v.get(i).map(|x| CellValue::Text(x.data())),
            Decoded::Double(v) => v.get(i).map(|&x| CellValue::Float(x)),
            Decoded::Float(v) => v.get(i).map(|&x| CellValue::Float(f64::from(x))),
            Decoded::Bool(v) => v.get(i).map(|&x| CellValue::Bool(x)),
        };
        cell.unwrap_or(CellValue::Null)
    }
}

/// The text of a cell: UTF-8 checked, numbers written as they print.
fn text_of<'a>(cell: CellValue<'a>, scratch: &'a mut String) -> Result<&'a str, String> {
    use std::fmt::Write;
    scratch.clear();
    match cell {
        CellValue::Null => {}
        CellValue::Text(bytes) => {
            return std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text ({e})"));
        }
        CellValue::Int(n) => write!(scratch, "{n}").expect("a String takes it"),
        CellValue::Unsigned(n) => write!(scratch, "{n}").expect("a String takes it"),
        CellValue::Float(x) => write!(scratch, "{x}").expect("a String takes it"),
        CellValue::Bool(b) => scratch.push_str(if b { "true" } else { "false" }),
    }
    Ok(scratch)
}

/// The integer of a cell: an integer column's value, or canonical text.
fn int_of(cell: CellValue<'_>) -> Result<Option<i64>, String> {
    match cell {
        CellValue::Null => Ok(None),
        CellValue::Int(n) => Ok(Some(n)),
        CellValue::Unsigned(n) => i64::try_from(n)
            .map(Some)
            .map_err(|_| format!("{n} is beyond a 64-bit signed integer")),
        CellValue::Text(b) => parse_int(b)
            .map(Some)
            .ok_or_else(|| format!("`{}` is not an integer", String::from_utf8_lossy(b))),
        CellValue::Float(_) | CellValue::Bool(_) => Err("expected an integer".to_string()),
    }
}

/// Sets column `column` of `rec` from `cell`.
fn set_field(
    rec: &mut Record,
    column: Column,
    cell: CellValue<'_>,
    syms: &mut SymCache,
    scratch: &mut String,
) -> Result<(), String> {
    let sym = |cell, syms: &mut SymCache, scratch| -> Result<Sym, String> {
        Ok(syms.intern(text_of(cell, scratch)?))
    };
    match column {
        Column::Kind => {
            let text = text_of(cell, scratch)?;
            rec.kind = Kind::parse(text.as_bytes()).ok_or_else(|| match text {
                "" => "a row needs a `kind`".to_string(),
                _ => format!("unknown kind `{text}`"),
            })?;
        }
        Column::Time => rec.time = int_of(cell)?,
        Column::End => rec.end = int_of(cell)?,
        Column::Tag => rec.tag = int_of(cell)?,
        Column::Depth => {
            let depth = int_of(cell)?.map(u32::try_from).transpose();
            rec.depth = depth.map_err(|_| "a depth is from 0 to 4294967295".to_string())?;
        }
        Column::Size => {
            rec.size = match cell {
                CellValue::Unsigned(n) => Some(n),
                CellValue::Text(b) => Some(
                    parse_uint(b)
                        .ok_or_else(|| format!("`{}` is not a size", String::from_utf8_lossy(b)))?,
                ),
                other => int_of(other)?
                    .map(u64::try_from)
                    .transpose()
                    .map_err(|_| "a size is not negative".to_string())?,
            }
        }
        Column::Loc => rec.loc = sym(cell, syms, scratch)?,
        Column::Cat => rec.cat = sym(cell, syms, scratch)?,
        Column::Name => rec.name = sym(cell, syms, scratch)?,
        Column::Peer => rec.peer = sym(cell, syms, scratch)?,
        Column::Comm => rec.comm = sym(cell, syms, scratch)?,
        Column::Id => rec.id.push_str(text_of(cell, scratch)?),
        Column::Value => rec.value.push_str(text_of(cell, scratch)?),
        Column::Flags => rec.flags.push_str(text_of(cell, scratch)?),
        Column::Attrs => rec.attrs.push_str(text_of(cell, scratch)?),
    }
    Ok(())
}
