//! Report tables: what `trace-stat` and `--list-formats` print. One writer for
//! the forms a report takes: TSV with a header (the default; cells use the
//! stream's escapes), CSV with RFC 4180 quoting (through the `csv` crate),
//! JSON Lines (one object per row, keyed by column name), and folded stacks
//! (cells by a space, no header; a picture such as an SVG written whole).

use crate::error::Result;
use crate::io::Output;
use crate::model::text::escape_tsv;
use crate::number::{push_int, push_uint};

/// The form of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableFormat {
    /// Tab-separated, one header line.
    #[default]
    Tsv,
    /// Comma-separated, RFC 4180 quoting.
    Csv,
    /// JSON Lines: one object per row.
    Jsonl,
    /// Cells as they are, separated by one space, no header: the folded
    /// stacks (`a;b;c 42`) flame-graph tools read (the report escapes what
    /// a cell must not hold).
    Folded,
}

/// One cell of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    /// Text.
    Text(&'a str),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A real number, printed with the given decimals (JSON: as a number).
    Real(f64, usize),
    /// A number already written as an exact decimal (JSON: as a number).
    Number(String),
    /// Nothing (empty in TSV and CSV, `null` in JSON).
    Empty,
}

impl Cell<'_> {
    /// `x` in the shortest decimal that reads back as the same `f64` (no
    /// padding, no exponent); nothing when it is not finite.
    pub fn shortest(x: f64) -> Cell<'static> {
        match x.is_finite() {
            true => Cell::Number(x.to_string()),
            false => Cell::Empty,
        }
    }
}

/// Writes rows of cells under fixed columns.
pub struct TableWriter {
    out: Output,
    format: TableFormat,
    columns: Vec<String>,
    line: Vec<u8>,
    text: String,
}

impl TableWriter {
    /// A table of `columns` over `out`; the header (TSV, CSV) is written first
    /// unless `header` is false.
    pub fn new(out: Output, format: TableFormat, columns: &[&str], header: bool) -> Result<Self> {
        let mut table = TableWriter {
            out,
            format,
            columns: columns.iter().map(|c| c.to_string()).collect(),
            line: Vec::new(),
            text: String::new(),
        };
        if header && matches!(format, TableFormat::Tsv | TableFormat::Csv) {
            let names: Vec<Cell> = columns.iter().map(|c| Cell::Text(c)).collect();
            table.row(&names)?;
        }
        Ok(table)
    }

    /// Writes one row; `cells` has one cell per column.
    pub fn row(&mut self, cells: &[Cell]) -> Result<()> {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.line.clear();
        match self.format {
            TableFormat::Tsv | TableFormat::Folded => {
                let separator = match self.format {
                    TableFormat::Folded => b' ',
                    _ => b'\t',
                };
                for (i, cell) in cells.iter().enumerate() {
                    if i > 0 {
                        self.line.push(separator);
                    }
                    self.text.clear();
                    push_cell(cell, &mut self.text);
                    match self.format {
                        TableFormat::Folded => self.line.extend_from_slice(self.text.as_bytes()),
                        _ => escape_tsv(&self.text, &mut self.line),
                    }
                }
                self.line.push(b'\n');
            }
            TableFormat::Csv => self.csv_row(cells)?,
            TableFormat::Jsonl => self.json_row(cells),
        }
        self.out.write_line(&self.line)
    }

    fn csv_row(&mut self, cells: &[Cell]) -> Result<()> {
        let mut record = csv::ByteRecord::new();
        for cell in cells {
            self.text.clear();
            push_cell(cell, &mut self.text);
            record.push_field(self.text.as_bytes());
        }
        // A writer per row: reports are small, and the row goes out through
        // `Output` like every other line.
        let mut csv = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .buffer_capacity(256)
            .from_writer(&mut self.line);
        let written = csv
            .write_byte_record(&record)
            .and_then(|()| csv.flush().map_err(csv::Error::from));
        written.map_err(|e| crate::error::Error::Record(format!("CSV output: {e}")))
    }

    fn json_row(&mut self, cells: &[Cell]) {
        self.line.push(b'{');
        for (i, (name, cell)) in self.columns.iter().zip(cells).enumerate() {
            if i > 0 {
                self.line.push(b',');
            }
            push_json(&Cell::Text(name), &mut self.line);
            self.line.push(b':');
            push_json(cell, &mut self.line);
        }
        self.line.extend_from_slice(b"}\n");
    }

    /// Writes `bytes` as they are: a report that is a picture (an SVG)
    /// rather than rows, in a table opened without a header.
    pub fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_line(bytes)
    }

    /// Flushes the output.
    pub fn finish(&mut self) -> Result<()> {
        self.out.finish()
    }
}

fn push_cell(cell: &Cell, out: &mut String) {
    use std::fmt::Write as _;
    match *cell {
        Cell::Text(s) => out.push_str(s),
        Cell::Number(ref s) => out.push_str(s),
        Cell::Int(n) => out.push_str(itoa::Buffer::new().format(n)),
        Cell::UInt(n) => out.push_str(itoa::Buffer::new().format(n)),
        Cell::Real(x, decimals) if x.is_finite() => {
            let _ = write!(out, "{x:.decimals$}");
        }
        Cell::Real(..) | Cell::Empty => {}
    }
}

fn push_json(cell: &Cell, out: &mut Vec<u8>) {
    match *cell {
        Cell::Text(s) => {
            // Serializing a string to a vector cannot fail.
            let _ = serde_json::to_writer(&mut *out, s);
        }
        Cell::Number(ref s) => out.extend_from_slice(s.as_bytes()),
        Cell::Int(n) => push_int(out, n),
        Cell::UInt(n) => push_uint(out, n),
        Cell::Real(x, decimals) if x.is_finite() => {
            let mut text = String::new();
            push_cell(&Cell::Real(x, decimals), &mut text);
            out.extend_from_slice(text.as_bytes());
        }
        Cell::Real(..) | Cell::Empty => out.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SharedBuffer;

    fn render(format: TableFormat) -> String {
        let buffer = SharedBuffer::default();
        let out = Output::new("<test>", Box::new(buffer.clone()));
        let mut table = TableWriter::new(out, format, &["name", "count", "mean"], true).unwrap();
        table
            .row(&[Cell::Text("a,\"b\"\tc"), Cell::UInt(3), Cell::Real(1.25, 2)])
            .unwrap();
        table
            .row(&[Cell::Text("x"), Cell::Int(-1), Cell::Empty])
            .unwrap();
        table.finish().unwrap();
        let bytes = buffer.contents();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn the_three_forms() {
        assert_eq!(
            render(TableFormat::Tsv),
            "name\tcount\tmean\na,\"b\"\\tc\t3\t1.25\nx\t-1\t\n"
        );
        assert_eq!(
            render(TableFormat::Csv),
            "name,count,mean\r\n\"a,\"\"b\"\"\tc\",3,1.25\r\nx,-1,\r\n"
        );
        assert_eq!(
            render(TableFormat::Jsonl),
            "{\"name\":\"a,\\\"b\\\"\\tc\",\"count\":3,\"mean\":1.25}\n{\"name\":\"x\",\"count\":-1,\"mean\":null}\n"
        );
    }
}
