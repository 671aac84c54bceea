//! What readers, stages and writers have in common: the [`RecordSource`] and
//! [`RecordSink`] traits, the options a reader or writer is opened with, and
//! what format detection looks at.
//!
//! This module sits below every format and operation and imports none of them;
//! the registry (`format.rs`) sits above the formats.

use crate::error::{Location, Result, Warnings};
use crate::glob::Glob;
use crate::model::record::{ColumnSet, KindSet, Record};
use crate::model::symbol::Symbols;
use crate::pool::Pool;

/// Something that yields records in stream order: a format reader, a
/// merge of several sources, a stage that drops or makes rows, a test
/// fixture.
///
/// A reader implements [`RecordSource::next_record`], [`RecordSource::mark`]
/// and [`RecordSource::locate`]; the rest default to what a reader of whole
/// rows of its own answers (no extra columns, no raw lines, no place in a
/// split stream, no bound on what is still to come, a demand it does not
/// act on). A source that wraps another implements [`SourceStage`] instead,
/// which has no defaults: a wrapper that inherited one would silently give
/// the wrong answer for the rows it passes on (`tests/architecture.rs`
/// holds every wrapper to it).
///
/// ```
/// use tracepipe::error::{Location, Result};
/// use tracepipe::model::record::{Kind, Record};
/// use tracepipe::pipe::RecordSource;
///
/// /// A reader of `left` events, one a nanosecond.
/// struct Ticks {
///     left: i64,
/// }
///
/// impl RecordSource for Ticks {
///     fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
///         if self.left == 0 {
///             return Ok(false);
///         }
///         self.left -= 1;
///         rec.clear();
///         (rec.kind, rec.time) = (Kind::Event, Some(self.left));
///         Ok(true)
///     }
///     fn mark(&self) -> u64 {
///         self.left as u64
///     }
///     fn locate(&self, mark: u64) -> Location {
///         Location::Offset { file: "ticks".into(), offset: mark }
///     }
/// }
///
/// let mut ticks = Ticks { left: 2 };
/// let mut rec = Record::new(Kind::Event);
/// assert!(ticks.next_record(&mut rec)?);
/// assert_eq!((rec.time, ticks.horizon(), ticks.raw_line()), (Some(1), None, None));
/// # Ok::<(), tracepipe::error::Error>(())
/// ```
pub trait RecordSource {
    /// Reads the next record into `rec` (reusing its buffers); `false` at the end.
    fn next_record(&mut self, rec: &mut Record) -> Result<bool>;

    /// A cheap token of where the record last returned came from (a line
    /// number, an event index, a lane and its mark...), so a pipeline can
    /// remember where each record in flight came from and locate an error
    /// about it later with [`RecordSource::locate`]. A stage that hands out
    /// a row it held gives the mark the row had when it was read.
    fn mark(&self) -> u64;

    /// The location a [`RecordSource::mark`] stands for.
    fn locate(&self, mark: u64) -> Location;

    /// Where the record last returned came from, for error messages.
    fn location(&self) -> Location {
        self.locate(self.mark())
    }

    /// Names of non-standard columns this source carries, in order.
    fn extra_columns(&self) -> &[String] {
        &[]
    }

    /// The line of the stream's TSV form (standard columns, no newline) the
    /// record last returned was read from, when the source read it from
    /// such a line and returns it unchanged: a TSV writer of the standard
    /// columns may copy it instead of encoding the record again.
    fn raw_line(&self) -> Option<&[u8]> {
        None
    }

    /// For a source that is one part of a stream split into several (the
    /// components of an STF trace): where the row last returned stood in
    /// that stream, as its merge key (completion time, or for a declaration
    /// the time it was declared at) and its rank among the rows of that
    /// key, so a merge puts the parts back in their order. `None`: the
    /// merge uses the row's own time and the inputs' order.
    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    /// How early a data row still to come (after the last one returned)
    /// can start: `Some(t)` when none starts ([`Record::start`]) before
    /// `t` (`i64::MAX` at the end); `None` when the source cannot tell, as
    /// for a stream of complete extents in completion order, where a
    /// `state` row may have begun at any earlier time. A slice stops
    /// reading once nothing still to come reaches into its window; what a
    /// source holds (open collectives, links waiting for their other half,
    /// rows buffered ahead) bounds its answer.
    fn horizon(&self) -> Option<i64> {
        None
    }

    /// Agrees, once before the first row, on what the consumer reads and
    /// drops ([`Demand`]); a stage adds what it needs itself and passes the
    /// demand down, so the reader at the bottom hears it. Returns what the
    /// rows will come with ([`Supply`]); by default whole rows, the demand
    /// not acted on.
    fn agree(&mut self, demand: Demand) -> Supply {
        let _ = demand;
        Supply::WHOLE_ROWS
    }
}

/// A source that wraps one or more others (a filter, a slice, a matcher,
/// a merge, a reader's checks over its parts): it answers each of
/// [`RecordSource`]'s questions itself, passing on its inner source's
/// answer or giving its own, and compiles only when it answers all of them.
/// Every `SourceStage` is a `RecordSource`.
///
/// A stage that forgets to answer `mark` and `locate` (which would locate
/// an error about a row it passes on in the wrong place) does not compile:
///
/// ```compile_fail,E0046
/// use tracepipe::error::Result;
/// use tracepipe::model::record::Record;
/// use tracepipe::pipe::{Demand, RecordSource, SourceStage, Supply};
///
/// struct Forgetful<S>(S);
///
/// impl<S: RecordSource> SourceStage for Forgetful<S> {
///     fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
///         self.0.next_record(rec)
///     }
///     fn extra_columns(&self) -> &[String] {
///         self.0.extra_columns()
///     }
///     fn raw_line(&self) -> Option<&[u8]> {
///         self.0.raw_line()
///     }
///     fn order(&self) -> Option<(i64, u64)> {
///         self.0.order()
///     }
///     fn horizon(&self) -> Option<i64> {
///         self.0.horizon()
///     }
///     fn agree(&mut self, demand: Demand) -> Supply {
///         self.0.agree(demand)
///     }
/// }
/// ```
pub trait SourceStage {
    /// As [`RecordSource::next_record`].
    fn next_record(&mut self, rec: &mut Record) -> Result<bool>;
    /// As [`RecordSource::mark`]: the inner source's mark of the row the
    /// row last returned was read as or made from.
    fn mark(&self) -> u64;
    /// As [`RecordSource::locate`].
    fn locate(&self, mark: u64) -> Location;
    /// As [`RecordSource::extra_columns`].
    fn extra_columns(&self) -> &[String];
    /// As [`RecordSource::raw_line`]: the inner line only for a row passed
    /// on unchanged.
    fn raw_line(&self) -> Option<&[u8]>;
    /// As [`RecordSource::order`].
    fn order(&self) -> Option<(i64, u64)>;
    /// As [`RecordSource::horizon`]: what the stage holds bounds it too.
    fn horizon(&self) -> Option<i64>;
    /// As [`RecordSource::agree`]: the demand passed down with what the
    /// stage reads itself.
    fn agree(&mut self, demand: Demand) -> Supply;
}

impl<T: SourceStage> RecordSource for T {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        SourceStage::next_record(self, rec)
    }
    fn mark(&self) -> u64 {
        SourceStage::mark(self)
    }
    fn locate(&self, mark: u64) -> Location {
        SourceStage::locate(self, mark)
    }
    fn extra_columns(&self) -> &[String] {
        SourceStage::extra_columns(self)
    }
    fn raw_line(&self) -> Option<&[u8]> {
        SourceStage::raw_line(self)
    }
    fn order(&self) -> Option<(i64, u64)> {
        SourceStage::order(self)
    }
    fn horizon(&self) -> Option<i64> {
        SourceStage::horizon(self)
    }
    fn agree(&mut self, demand: Demand) -> Supply {
        SourceStage::agree(self, demand)
    }
}

/// What the consumer of a source's rows asks of it (see
/// [`RecordSource::agree`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Demand {
    /// What it reads of the rows it is given: the source may leave the
    /// other columns of data rows empty, having checked that they are
    /// well-formed (bad input is an error all the same).
    pub reads: Reads,
    /// Kinds whose rows are dropped unread: the source may drop them
    /// itself, decoding only what their place in the stream depends on
    /// (kind, time, end, location) and checking that place, not their
    /// other contents.
    pub skip: KindSet,
    /// Of the rows before this time, the consumer reads only what they
    /// leave open or pending at it (a slice's T0): the source may leave
    /// out a frame entered and left before it, and an event before it
    /// that posts no receive; it keeps message halves, postings,
    /// collectives, counter samples, declarations and the frames still
    /// open at it. A stage that reads the rows before it whole (a filter
    /// that follows frames, a matcher) passes none down.
    pub thin_before: Option<i64>,
}

impl Demand {
    /// Every row, whole.
    pub const ALL: Demand = Demand {
        reads: Reads::ALL,
        skip: KindSet::NONE,
        thin_before: None,
    };

    /// Every row, read as `reads` says.
    pub const fn reading(reads: Reads) -> Demand {
        Demand {
            reads,
            skip: KindSet::NONE,
            thin_before: None,
        }
    }
}

/// What a source's rows come with, in answer to a [`Demand`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Supply {
    /// The rows come with their raw lines ([`RecordSource::raw_line`]),
    /// all but a few the source makes itself: a sink that copies them has
    /// next to nothing left to encode.
    pub raw_lines: bool,
    /// The rows cost less to encode on the reading thread than to hand to
    /// encoding jobs: the source reads them all on this thread, faster
    /// than a batch travels (an OTF2 archive below its read-ahead size),
    /// so a TSV writer encodes them here with any number of threads.
    pub encode_here: bool,
}

impl Supply {
    /// Rows without raw lines.
    pub const WHOLE_ROWS: Supply = Supply {
        raw_lines: false,
        encode_here: false,
    };
}

/// Something that consumes records: a writer, or a stage that transforms records
/// and passes them to the next sink.
pub trait RecordSink {
    /// Consumes one record. Errors about the record itself are [`Error::Record`](crate::error::Error::Record)
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

    /// Consumes rows given as their lines alone, each in the stream's TSV
    /// form and ended by a newline, for a sink that reads nothing else
    /// ([`Reads::raw_line_alone`]); by default line by line as
    /// [`RecordSink::write_raw`] of an empty row.
    fn write_raw_lines(&mut self, lines: &[u8]) -> Result<()> {
        write_lines_one_by_one(self, lines)
    }

    /// What the sink reads of the rows it is given; all of them by default.
    fn reads(&self) -> Reads {
        Reads::ALL
    }
}

/// [`RecordSink::write_raw_lines`] as each line's own
/// [`RecordSink::write_raw`], for a sink with nothing quicker.
pub fn write_lines_one_by_one<S: RecordSink + ?Sized>(sink: &mut S, lines: &[u8]) -> Result<()> {
    let unread = Record::default();
    for line in lines.split_inclusive(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        sink.write_raw(&unread, line)?;
    }
    Ok(())
}

/// What a consumer reads of the rows it is given (see [`Demand`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// The columns read of every row (those of [`ColumnSet::PLACE`] are
    /// always whole, as a stream's checks need them).
    pub columns: ColumnSet,
    /// A row given with its raw line is read through that line (and
    /// `columns`), one without it whole: a TSV writer that copies lines.
    pub raw_line: bool,
}

impl Reads {
    /// Every column of every row.
    pub const ALL: Reads = Reads::only(ColumnSet::ALL);
    /// A row's raw line when it has one, else the whole row.
    pub const RAW_LINE: Reads = Reads {
        columns: ColumnSet::NONE,
        raw_line: true,
    };

    /// Just `columns` of every row.
    pub const fn only(columns: ColumnSet) -> Reads {
        Reads {
            columns,
            raw_line: false,
        }
    }

    /// The columns to decode of a row that has no raw line.
    pub fn without_raw_line(self) -> ColumnSet {
        match self.raw_line {
            true => ColumnSet::ALL,
            false => self.columns,
        }
    }

    /// These reads and `columns` besides.
    pub fn and(self, columns: ColumnSet) -> Reads {
        Reads {
            columns: self.columns.union(columns),
            ..self
        }
    }

    /// True when a row with its raw line needs nothing else.
    pub fn raw_line_alone(self) -> bool {
        self.raw_line && self.columns == ColumnSet::NONE
    }
}

/// A sink that keeps nothing: for a stage used for what it finds (a
/// matcher's pairings), not for the rows it writes.
pub struct Discard;

impl RecordSink for Discard {
    fn write(&mut self, _: &Record) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
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
    fn write_raw_lines(&mut self, lines: &[u8]) -> Result<()> {
        (**self).write_raw_lines(lines)
    }
    fn reads(&self) -> Reads {
        (**self).reads()
    }
}

impl RecordSource for Box<dyn RecordSource> {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        (**self).next_record(rec)
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
    fn raw_line(&self) -> Option<&[u8]> {
        (**self).raw_line()
    }
    fn order(&self) -> Option<(i64, u64)> {
        (**self).order()
    }
    fn horizon(&self) -> Option<i64> {
        (**self).horizon()
    }
    fn agree(&mut self, demand: Demand) -> Supply {
        (**self).agree(demand)
    }
}

/// How a row's line in the stream's TSV form of the standard columns is
/// made where a consumer copies lines (see [`Supply::raw_lines`]) and the
/// rows come from elsewhere: given by the command layer or a reader, used
/// by `exec` (which imports no format) on the pool's threads.
pub trait LineEncoder: Send {
    /// Appends the line of `rec`, with its newline; an error for a row the
    /// form cannot hold.
    fn encode(&mut self, rec: &Record, line: &mut Vec<u8>) -> Result<()>;
}

/// Makes a [`LineEncoder`] for each thread or source that encodes.
pub type MakeEncoder<'a> = &'a dyn Fn() -> Box<dyn LineEncoder>;

/// Frames a reader sums from its format's structure instead of giving
/// their rows (a Pallas grammar's durations per sequence), for reports
/// that need only their durations (`trace-stat profile`).
pub trait FrameSums {
    /// A row that is no frame: the trace's `meta`, `container` and `type`
    /// rows, given first.
    fn row(&mut self, rec: &Record) -> Result<()>;
    /// Durations of frames of `frame`'s location, `cat` and `name`, none
    /// of which runs inside another of its name on its location.
    fn durations(&mut self, frame: &Record, durations: &[u64]) -> Result<()>;
    /// The exclusive time of all the frames of `frame`'s key, given once
    /// their durations are.
    fn exclusive(&mut self, frame: &Record, exclusive: i128) -> Result<()>;
}

/// Whether a reader summed the frames ([`FrameSums`]) itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Summed {
    /// It did; the rows need not be read.
    Done,
    /// It cannot, for this reason (said in the docs); the rows must be read.
    Not(String),
}

/// Options every reader receives.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The pipeline's pool, where a reader whose input splits puts its work
    /// (and how many threads it has).
    pub pool: Pool,
    /// The pipeline's symbol table, which the reader interns identifiers in.
    pub symbols: Symbols,
    /// The values of the format's own options (see [`FormatOption`]).
    pub format: FormatOptions,
    /// Where warnings go.
    pub warnings: Warnings,
    /// The locations the pipeline keeps, when a selection is known before
    /// reading (`-l`, `-L`, `--under`): a reader whose locations are files
    /// of their own may leave the others unread. Rows of other locations
    /// are dropped after the reader anyway.
    pub locations: Option<LocationSelection>,
    /// Refuse frames that do not nest instead of keeping them with a
    /// warning (`--strict`; [`crate::model::nesting`]).
    pub strict: bool,
    /// Halves that never match are errors (`trace-match --unmatched
    /// error`): a reader that pairs messages itself refuses one it would
    /// drop incomplete.
    pub refuse_unmatched: bool,
}

/// A selection of locations by their id, their display name, or an
/// ancestor's id or name (a subtree); a location is kept when every kind of
/// condition given has a glob it matches.
#[derive(Debug, Clone, Default)]
pub struct LocationSelection {
    /// Globs on the location's id (`-l`).
    pub locs: Vec<Glob>,
    /// Globs on its display name (`-L`).
    pub names: Vec<Glob>,
    /// Globs on its own or an ancestor's id or name (`--under`).
    pub under: Vec<Glob>,
}

impl LocationSelection {
    /// Whether a condition is given.
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty() && self.names.is_empty() && self.under.is_empty()
    }

    /// Whether the location `(id, name)` whose ancestors are `ancestors`
    /// (ids and names, any order) is kept.
    pub fn keeps<'a>(
        &self,
        (id, name): (&str, &str),
        ancestors: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> bool {
        let any = |globs: &[Glob], text: &str| globs.iter().any(|g| g.is_match(text));
        let under = self.under.is_empty()
            || any(&self.under, id)
            || any(&self.under, name)
            || ancestors
                .into_iter()
                .any(|(i, n)| any(&self.under, i) || any(&self.under, n));
        (self.locs.is_empty() || any(&self.locs, id))
            && (self.names.is_empty() || any(&self.names, name))
            && under
    }
}

/// Options every writer receives.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// The pipeline's symbol table, where the identifiers of the rows are.
    pub symbols: Symbols,
    /// Omit the TSV header line (for tools that want bare rows).
    pub no_header: bool,
    /// Data rows only (stream writers): no `meta`, `type` or `container`
    /// rows. For awk and gnuplot; no longer a stream.
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
    /// One of these words (the placeholder in `--help`, the words).
    Choice(&'static str, &'static [&'static str]),
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
    choices: Vec<(&'static str, String)>,
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

    /// Gives choice option `name` its value.
    pub fn set_choice(&mut self, name: &'static str, value: &str) {
        self.choices.retain(|(n, _)| *n != name);
        self.choices.push((name, value.to_string()));
    }

    /// The value of choice option `name`, if given.
    pub fn choice(&self, name: &str) -> Option<&str> {
        self.choices
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
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
            .chain(self.choices.iter().map(|(n, _)| *n))
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
