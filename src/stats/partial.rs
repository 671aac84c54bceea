//! Partial reports (`trace-stat REPORT --partial`, then `--merge`): a
//! report's state as text lines, so parts of a trace reported apart merge
//! into the figures of one run. A partial file is input like any other:
//! its first line says which report (and `--by`) wrote it, every row is
//! checked field by field, and its last line counts the rows, so a file cut
//! at a line boundary or a mix of reports is refused at its line.

use std::io::BufRead;

use crate::error::{Error, Location, Result};
use crate::io::{LineReader, Output};
use crate::model::text::{escape_tsv, unescape_tsv};
use crate::stats::{Labelled, Report};

/// The first field of a partial report's first line.
const MAGIC: &str = "tracepipe-stat-partial/2";

/// The first field of a partial report's last line.
const END: &str = "tracepipe-stat-partial-end/2";

/// Whether `path` is a partial report (a file whose first line begins as
/// a partial file's does); an error when a file cannot be read.
pub fn is_partial_file(path: &str) -> Result<bool> {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(false);
    }
    let magic = format!("{MAGIC}\t");
    let mut start = Vec::with_capacity(magic.len());
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    file.take(magic.len() as u64)
        .read_to_end(&mut start)
        .map_err(|e| Error::io(path, e))?;
    Ok(start == magic.as_bytes())
}

/// Which report a partial file holds: its name and `--by` (empty: none).
pub struct PartialOf<'a> {
    /// The report's name (`profile`, `states`...).
    pub report: &'a str,
    /// Its `--by`, empty when none was given.
    pub by: &'a str,
}

impl PartialOf<'_> {
    fn header(&self) -> String {
        format!("{MAGIC}\t{}\t{}", self.report, self.by)
    }

    fn trailer(&self, rows: usize) -> String {
        format!("{END}\t{rows}\t{}\t{}", self.report, self.by)
    }

    /// Writes `report`'s state to `out`: the header, one line per key (in
    /// key order, so a part's file does not depend on hashing), the trailer.
    pub fn write(&self, report: &Labelled<impl Report + ?Sized>, mut out: Output) -> Result<()> {
        let mut rows = report.partial()?.ok_or_else(|| {
            Error::Usage(format!(
                "the {} report cannot be merged (--partial)",
                self.report
            ))
        })?;
        rows.sort();
        out.write_line(format!("{}\n", self.header()).as_bytes())?;
        let mut line = Vec::new();
        for row in &rows {
            line.clear();
            for (i, field) in row.iter().enumerate() {
                if i > 0 {
                    line.push(b'\t');
                }
                escape_tsv(field, &mut line);
            }
            line.push(b'\n');
            out.write_line(&line)?;
        }
        out.write_line(format!("{}\n", self.trailer(rows.len())).as_bytes())?;
        out.finish()
    }

    /// Adds the partial file `input` (named `file` in errors) to `report`,
    /// line by line: every line but the last is a row; the last must be the
    /// trailer counting them.
    pub fn merge(
        &self,
        file: &str,
        input: impl BufRead,
        report: &mut (impl Report + ?Sized),
    ) -> Result<()> {
        let at = |line: u64, msg: String| Error::Data {
            at: Location::Line {
                file: file.to_string(),
                line,
            },
            msg,
        };
        let mut lines = Lines {
            reader: LineReader::new(file, input),
            file,
        };
        self.check_header(lines.next()?, &at)?;
        let cut = || format!("the file ends without its trailer `{END}`: it was cut");
        let (mut rows, mut number) = (0usize, 1u64);
        let mut held = lines.next()?;
        let mut fields = Vec::new();
        while let Some(line) = held.take() {
            number += 1;
            held = lines.next()?;
            if held.is_none() {
                let trailer = self.trailer(rows);
                return match line == trailer {
                    true => Ok(()),
                    false if !line.starts_with(END) => Err(at(number, cut())),
                    false => Err(at(
                        number,
                        format!(
                            "expected the trailer `{}`: the file was cut or mixes reports",
                            trailer.replace('\t', " ")
                        ),
                    )),
                };
            }
            fields.clear();
            for raw in line.split('\t') {
                let mut field = String::new();
                unescape_tsv(raw, &mut field).map_err(|e| at(number, e))?;
                fields.push(field);
            }
            report.absorb(&fields).map_err(|e| at(number, e))?;
            rows += 1;
        }
        Err(at(number, cut()))
    }

    /// The first line must be this report's header.
    fn check_header(
        &self,
        first: Option<String>,
        at: &impl Fn(u64, String) -> Error,
    ) -> Result<()> {
        let header = self.header();
        if first.as_deref() == Some(header.as_str()) {
            return Ok(());
        }
        let magic = first.as_deref().map(|f| f.split('\t').next().unwrap_or(""));
        let older = magic.is_some_and(|m| m != MAGIC && m.starts_with("tracepipe-stat-partial/"));
        let what = match older {
            true => {
                "written by another version of trace-stat: write it again with this one; expected"
            }
            false => "expected a partial report starting",
        };
        Err(at(
            1,
            format!(
                "{what} `{}` (trace-stat {} --partial with the same --by)",
                header.replace('\t', " "),
                self.report
            ),
        ))
    }
}

/// The lines of a partial file as text, each ended by its newline.
struct Lines<'a, R> {
    reader: LineReader<R>,
    file: &'a str,
}

impl<R: BufRead> Lines<'_, R> {
    fn next(&mut self) -> Result<Option<String>> {
        let Some(line) = self.reader.next_located()? else {
            return Ok(None);
        };
        let msg = match (line.truncated, std::str::from_utf8(line.text)) {
            (false, Ok(text)) => return Ok(Some(text.to_string())),
            (true, _) => "the last line has no newline: the file was cut",
            (false, Err(_)) => "not UTF-8",
        };
        Err(Error::line(self.file, line.number, msg))
    }
}

/// One row of a partial report being merged, its fields taken with the
/// checks their meaning needs: a partial file is input like any other, so a
/// negative count, a minimum above its maximum or a non-number is an error,
/// not a figure.
pub struct PartialRow<'a> {
    fields: &'a [String],
}

impl<'a> PartialRow<'a> {
    /// `fields`, which must be `n`.
    pub fn new(fields: &'a [String], n: usize) -> std::result::Result<Self, String> {
        if fields.len() != n {
            return Err(format!("expected {n} fields, found {}", fields.len()));
        }
        Ok(PartialRow { fields })
    }

    /// Field `i` as written.
    pub fn text(&self, i: usize) -> &'a str {
        &self.fields[i]
    }

    /// Field `i`, a `T` (named `what` in errors).
    pub fn number<T: std::str::FromStr>(
        &self,
        i: usize,
        what: &str,
    ) -> std::result::Result<T, String> {
        let f = &self.fields[i];
        f.parse()
            .map_err(|_| format!("{what} `{f}` is not a number of its kind"))
    }

    /// Field `i`, a count of at least one (a row stands for something seen).
    pub fn count(&self, i: usize, what: &str) -> std::result::Result<u64, String> {
        match self.number::<u64>(i, what)? {
            0 => Err(format!(
                "{what} is 0: a partial row stands for at least one"
            )),
            n => Ok(n),
        }
    }

    /// Field `i`, a number that cannot be negative (a duration, a sum of them).
    pub fn natural<T>(&self, i: usize, what: &str) -> std::result::Result<T, String>
    where
        T: std::str::FromStr + PartialOrd + Default,
    {
        let n: T = self.number(i, what)?;
        match n < T::default() {
            true => Err(format!("{what} `{}` is negative", self.fields[i])),
            false => Ok(n),
        }
    }

    /// Field `i`, a finite real.
    pub fn real(&self, i: usize, what: &str) -> std::result::Result<f64, String> {
        let x: f64 = self.number(i, what)?;
        match x.is_finite() {
            true => Ok(x),
            false => Err(format!(
                "{what} `{}` is not a finite number",
                self.fields[i]
            )),
        }
    }
}

/// Checks that a row's minimum is not above its maximum.
pub fn ordered<T: PartialOrd + std::fmt::Display>(
    min: T,
    max: T,
) -> std::result::Result<(), String> {
    match min <= max {
        true => Ok(()),
        false => Err(format!("minimum {min} above maximum {max}")),
    }
}
