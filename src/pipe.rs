//! What readers, stages and writers have in common: the [`RecordSource`] and
//! [`RecordSink`] traits, the options a reader or writer is opened with, and
//! what format detection looks at.
//!
//! This module sits below every format and operation and imports none of them;
//! the registry (`format.rs`) sits above the formats.

use crate::error::{Location, Result, Warnings};
use crate::record::{KindSet, Record};
use crate::symbol::Symbols;

/// Something that yields records in stream order: a format reader, a merge of
/// several sources, a test fixture.
pub trait RecordSource {
    /// Reads the next record into `rec` (reusing its buffers); `false` at the end.
    fn next_record(&mut self, rec: &mut Record) -> Result<bool>;

    /// Where the record last returned came from, for error messages.
    fn location(&self) -> Location;

    /// A cheap form of [`RecordSource::location`] (a line number, an input
    /// index...), so a pipeline can remember where each record in flight came
    /// from and locate an error about it later with [`RecordSource::locate`].
    /// Sources without one return 0.
    fn mark(&self) -> u64 {
        0
    }

    /// The location a [`RecordSource::mark`] stands for; by default the
    /// current location.
    fn locate(&self, mark: u64) -> Location {
        let _ = mark;
        self.location()
    }

    /// Names of non-standard columns this source carries, in order.
    fn extra_columns(&self) -> &[String] {
        &[]
    }

    /// The line of the stream's TSV form (standard columns, no newline) the
    /// record last returned was read from, when the source read it from
    /// such a line and returns it unchanged: a TSV writer of the standard
    /// columns may copy it instead of encoding the record again. `None` by
    /// default.
    fn raw_line(&self) -> Option<&[u8]> {
        None
    }

    /// Tells the source that the rows of `kinds` will be dropped unread:
    /// of those it may decode only what the stream's order depends on
    /// (kind, time, end, location), checking their place in the stream but
    /// not their other contents. A filter says so (`-k`); by default the
    /// hint is ignored.
    fn skip_kinds(&mut self, kinds: KindSet) {
        let _ = kinds;
    }

    /// For a source that is one part of a stream split into several (the
    /// components of an STF trace): where the row last returned stood in
    /// that stream, as its merge key (completion time, or for a declaration
    /// the time it was declared at) and its rank among the rows of that
    /// key, so a merge puts the parts back in their order. `None` (the
    /// default): the merge uses the row's own time and the inputs' order.
    fn order(&self) -> Option<(i64, u64)> {
        None
    }
}

/// Something that consumes records: a writer, or a stage that transforms records
/// and passes them to the next sink.
pub trait RecordSink {
    /// Consumes one record. Errors about the record itself are [`Error::Record`]
    /// so the driver can add the source position.
    fn write(&mut self, rec: &Record) -> Result<()>;

    /// Ends the stream: emits what is still pending and flushes.
    fn finish(&mut self) -> Result<()>;

    /// Consumes `rec`, which `raw` (see [`RecordSource::raw_line`]) encodes
    /// as the stream's TSV form; by default as [`RecordSink::write`].
    fn write_raw(&mut self, rec: &Record, raw: &[u8]) -> Result<()> {
        let _ = raw;
        self.write(rec)
    }

    /// True when the sink needs nothing of a row given with its raw line
    /// but that line (a TSV writer of the standard columns): a pump may
    /// then hand it the line alone.
    fn raw_only(&self) -> bool {
        false
    }
}

impl<S: RecordSink + ?Sized> RecordSink for Box<S> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        (**self).write(rec)
    }
    fn finish(&mut self) -> Result<()> {
        (**self).finish()
    }
    fn write_raw(&mut self, rec: &Record, raw: &[u8]) -> Result<()> {
        (**self).write_raw(rec, raw)
    }
    fn raw_only(&self) -> bool {
        (**self).raw_only()
    }
}

impl<S: RecordSource + ?Sized> RecordSource for Box<S> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        (**self).next_record(rec)
    }
    fn location(&self) -> Location {
        (**self).location()
    }
    fn mark(&self) -> u64 {
        (**self).mark()
    }
    fn locate(&self, mark: u64) -> Location {
        (**self).locate(mark)
    }
    fn extra_columns(&self) -> &[String] {
        (**self).extra_columns()
    }
    fn order(&self) -> Option<(i64, u64)> {
        (**self).order()
    }
    fn skip_kinds(&mut self, kinds: KindSet) {
        (**self).skip_kinds(kinds)
    }
    fn raw_line(&self) -> Option<&[u8]> {
        (**self).raw_line()
    }
}

/// Options every reader receives.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The pipeline's symbol table, which the reader interns identifiers in.
    pub symbols: Symbols,
    /// The values of the format's own options (see [`FormatOption`]).
    pub format: FormatOptions,
    /// Where warnings go.
    pub warnings: Warnings,
}

/// Options every writer receives.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// The pipeline's symbol table, where the identifiers of the rows are.
    pub symbols: Symbols,
    /// Omit the TSV header line (for tools that want bare rows).
    pub no_header: bool,
    /// Data rows only (stream writers): no header, and no `meta`, `type` or
    /// `container` rows. For awk and gnuplot; no longer a stream.
    pub rows_only: bool,
    /// Decimals of the unit times are written in by the stream writers: 0
    /// (ns, the stream's own), 3 (µs), 6 (ms), 9 (s); exact, only with
    /// `rows_only`.
    pub time_decimals: u32,
    /// Non-standard columns to write after the standard ones.
    pub extra_columns: Vec<String>,
    /// The values of the format's own options (see [`FormatOption`]).
    pub format: FormatOptions,
    /// Where warnings go.
    pub warnings: Warnings,
}

/// The kind of value a format option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionValue {
    /// A switch: given or not.
    Switch,
    /// A natural number, named by the placeholder in `--help`.
    Number(&'static str),
}

/// An option that belongs to one format (`--reorder-window` of the Pajé
/// reader, `--precision` of the pjdump writer). A format lists its options in
/// its registry entry; the command line shows them under the format's heading
/// and hands their values to the reader or writer in [`FormatOptions`].
#[derive(Debug, Clone, Copy)]
pub struct FormatOption {
    /// The long flag, without `--`.
    pub name: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// What it takes.
    pub value: OptionValue,
}

/// The values given to format options, by flag name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormatOptions {
    switches: Vec<&'static str>,
    numbers: Vec<(&'static str, u64)>,
}

impl FormatOptions {
    /// Turns switch `name` on.
    pub fn set_switch(&mut self, name: &'static str) {
        self.switches.push(name);
    }

    /// Gives number option `name` its value.
    pub fn set_number(&mut self, name: &'static str, value: u64) {
        self.numbers.retain(|(n, _)| *n != name);
        self.numbers.push((name, value));
    }

    /// Whether switch `name` was given.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.contains(&name)
    }

    /// The value of number option `name`, if given.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.numbers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// The names of the options given.
    pub fn given(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.switches
            .iter()
            .copied()
            .chain(self.numbers.iter().map(|(n, _)| *n))
    }
}

/// What detection looks at.
pub struct Probe<'a> {
    /// The first bytes of the input (empty for a directory).
    pub head: &'a [u8],
    /// Lower-cased file extension, if any.
    pub extension: Option<&'a str>,
    /// True when the input is a directory.
    pub is_dir: bool,
    /// For a directory, the names of its entries (empty otherwise).
    pub entries: &'a [String],
}
