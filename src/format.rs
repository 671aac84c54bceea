//! The format registry: what can be read and written, and how an input's format
//! is recognised.
//!
//! A format plugs in with one [`Format`] entry in [`FORMATS`]: a content sniffer,
//! file extensions, and constructors for a [`RecordSource`] (reader) and/or a
//! [`RecordSink`] (writer). Detection tries content first, extension second;
//! `-f/--from` and `-t/--to` name a format directly.

use crate::error::{Error, Location, Result};
use crate::io::{Input, Output};
use crate::paje;
use crate::pallas;
use crate::record::Record;
use crate::stream;
use crate::trace;

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
}

/// Something that consumes records: a writer, or a stage that transforms records
/// and passes them to the next sink.
pub trait RecordSink {
    /// Consumes one record. Errors about the record itself are [`Error::Record`]
    /// so the driver can add the source position.
    fn write(&mut self, rec: &Record) -> Result<()>;

    /// Ends the stream: emits what is still pending and flushes.
    fn finish(&mut self) -> Result<()>;
}

impl<S: RecordSink + ?Sized> RecordSink for Box<S> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        (**self).write(rec)
    }
    fn finish(&mut self) -> Result<()> {
        (**self).finish()
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
}

/// Options every writer receives. Format-specific options live here too so a
/// command can pass them without knowing which writer will use them.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Omit the TSV header line (for tools that want bare rows).
    pub no_header: bool,
    /// Non-standard columns to write after the standard ones.
    pub extra_columns: Vec<String>,
    /// pj_dump output: decimals of fixed-point numbers (pj_dump's `-l`).
    pub precision: Option<usize>,
    /// pj_dump output: append user-defined field values (pj_dump's `-u`).
    pub user_fields: bool,
}

/// Options every reader receives.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Skip invalid lines with a warning instead of failing (formats that allow it).
    pub lenient: bool,
    /// Pajé: keep links that never complete as unmatched halves instead of failing.
    pub ignore_incomplete_links: bool,
    /// Rows a reader of piecewise-ordered input may hold to restore time order
    /// (0: the reader's default).
    pub reorder_window: usize,
}

/// What detection looks at.
pub struct Probe<'a> {
    /// The first bytes of the input (empty for a directory).
    pub head: &'a [u8],
    /// Lower-cased file extension, if any.
    pub extension: Option<&'a str>,
    /// True when the input is a directory.
    pub is_dir: bool,
}

/// Opens a reader over an input.
pub type ReaderFn = fn(Input, &ReadOptions) -> Result<Box<dyn RecordSource>>;
/// Opens a writer over an output.
pub type WriterFn = fn(Output, &WriteOptions) -> Result<Box<dyn RecordSink + Send>>;

/// One entry of the registry.
pub struct Format {
    /// Name used by `-f/--from` and `-t/--to`.
    pub name: &'static str,
    /// One line for `--help` and the docs.
    pub description: &'static str,
    /// File extensions (lower case, no dot) that suggest this format.
    pub extensions: &'static [&'static str],
    /// True when the content (or directory) is certainly this format.
    pub sniff: fn(&Probe) -> bool,
    /// The reader, if the format can be read.
    pub reader: Option<ReaderFn>,
    /// The writer, if the format can be written.
    pub writer: Option<WriterFn>,
}

/// Every format tracepipe knows. New formats add an entry here.
pub static FORMATS: &[Format] = &[
    Format {
        name: "tsv",
        description: "the tracepipe record stream as TSV (the default output)",
        extensions: &["tsv", "tab"],
        sniff: stream::tsv::sniff,
        reader: Some(stream::tsv::open_reader),
        writer: Some(stream::tsv::open_writer),
    },
    Format {
        name: "jsonl",
        description: "the tracepipe record stream as JSON Lines (`--json`)",
        extensions: &["jsonl", "ndjson", "json"],
        sniff: stream::jsonl::sniff,
        reader: Some(stream::jsonl::open_reader),
        writer: Some(stream::jsonl::open_writer),
    },
    Format {
        name: "paje",
        description: "Pajé traces (SimGrid, StarPU, poti; what PajeNG and ViTE read)",
        extensions: &["paje", "trace"],
        sniff: paje::sniff,
        reader: Some(paje::reader::open_reader),
        writer: Some(paje::writer::open_writer),
    },
    Format {
        name: "pjdump",
        description: "what PajeNG's pj_dump 1.3.8 prints (write only; --precision, --user-fields)",
        extensions: &[],
        sniff: |_| false,
        reader: None,
        writer: Some(paje::pjdump::open_writer),
    },
    Format {
        name: "pallas",
        description: "Pallas trace folders (EZTrace), ABI 16 to 20; name the folder or its main .pallas file",
        extensions: &["pallas"],
        sniff: pallas::sniff,
        reader: Some(pallas::reader::open_reader),
        writer: None,
    },
    Format {
        name: "trace",
        description: "TRACE (.etf, TNO-ESI TRACE4CPS); not time-ordered, so read whole: memory about 3x the file",
        extensions: &["etf"],
        sniff: trace::sniff,
        reader: Some(trace::reader::open_reader),
        writer: Some(trace::writer::open_writer),
    },
];

/// The format called `name`.
pub fn by_name(name: &str) -> Result<&'static Format> {
    FORMATS.iter().find(|f| f.name == name).ok_or_else(|| {
        Error::Usage(format!(
            "unknown format `{name}` (known: {})",
            FORMATS
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// Names of the formats that can be read (`readable`) or written.
pub fn names(readable: bool) -> Vec<&'static str> {
    FORMATS
        .iter()
        .filter(|f| {
            if readable {
                f.reader.is_some()
            } else {
                f.writer.is_some()
            }
        })
        .map(|f| f.name)
        .collect()
}

/// Recognises the format of `input`: by content first, then by extension.
pub fn detect(input: &mut Input) -> Result<&'static Format> {
    let is_dir = input.reader.is_none();
    let extension = input.extension();
    let head = input.peek()?;
    let probe = Probe {
        head,
        extension: extension.as_deref(),
        is_dir,
    };
    let readable = || FORMATS.iter().filter(|f| f.reader.is_some());
    if let Some(f) = readable().find(|f| (f.sniff)(&probe)) {
        return Ok(f);
    }
    if let Some(ext) = probe.extension {
        if let Some(f) = readable().find(|f| f.extensions.contains(&ext)) {
            return Ok(f);
        }
    }
    if head.is_empty() && !is_dir {
        // An empty input is an empty stream, whatever its name.
        return by_name("tsv");
    }
    Err(Error::file(
        input.name.clone(),
        format!(
            "cannot recognise the format (known: {}); name it with -f/--from",
            names(true).join(", ")
        ),
    ))
}

/// Opens a reader for `input`, with the format forced by `from` or detected.
pub fn open_reader(
    mut input: Input,
    from: Option<&str>,
    opts: &ReadOptions,
) -> Result<Box<dyn RecordSource>> {
    let format = match from {
        Some(name) => by_name(name)?,
        None => detect(&mut input)?,
    };
    let open = format
        .reader
        .ok_or_else(|| Error::Usage(format!("format `{}` cannot be read", format.name)))?;
    open(input, opts)
}

/// Opens a writer of format `to` over `out`.
pub fn open_writer(
    to: &str,
    out: Output,
    opts: &WriteOptions,
) -> Result<Box<dyn RecordSink + Send>> {
    let format = by_name(to)?;
    let open = format
        .writer
        .ok_or_else(|| Error::Usage(format!("format `{}` cannot be written", format.name)))?;
    open(out, opts)
}
