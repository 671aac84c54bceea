//! The format registry: what can be read and written, and how an input's format
//! is recognised.
//!
//! A format plugs in with one [`Format`] entry in [`FORMATS`]: a content sniffer,
//! file extensions, and constructors for a [`RecordSource`] (reader) and/or a
//! [`RecordSink`] (writer). Detection tries content first, extension second;
//! `-f/--input-format` and `-t/--output-format` name a format directly.

use crate::error::{Error, Result};
use crate::formats::chrome;
use crate::formats::otf2;
use crate::formats::paje;
use crate::formats::pallas;
use crate::formats::paraver;
use crate::formats::stf;
use crate::formats::stream;
use crate::formats::trace;
use crate::formats::viewer;
use crate::io::{Input, Output};
use crate::pipe::{
    FormatOption, FrameSums, Probe, ReadOptions, RecordSink, RecordSource, Summed, WriteOptions,
};

/// Opens a reader over an input.
pub type ReaderFn = fn(Input, &ReadOptions) -> Result<Box<dyn RecordSource>>;
/// Sums a trace's frames from its structure, or says why it cannot.
pub type FrameSumsFn = fn(Input, &ReadOptions, &mut dyn FrameSums) -> Result<Summed>;
/// Opens a writer over an output.
pub type WriterFn = fn(Output, &WriteOptions) -> Result<Box<dyn RecordSink + Send>>;

/// One entry of the registry.
pub struct Format {
    /// Name used by `-f/--input-format` and `-t/--output-format`.
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
    /// Frames summed from the format's structure without their rows
    /// (`trace-stat profile`), where the format stores durations.
    pub frame_sums: Option<FrameSumsFn>,
    /// Options of the reader, shown under the format's heading in `--help`.
    pub read_options: &'static [FormatOption],
    /// Options of the writer, likewise.
    pub write_options: &'static [FormatOption],
    /// For a folder format: what its sniffer looks for in a folder (for the
    /// error about a folder no format claims).
    pub folder_sign: Option<&'static str>,
    /// For a writer that writes more than the file `-o` names: the files
    /// and folders it writes for that name, which must not be inputs.
    pub writes_beside: Option<fn(&str) -> Vec<std::path::PathBuf>>,
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
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "jsonl",
        description: "the tracepipe record stream as JSON Lines (`--json`)",
        extensions: &["jsonl", "ndjson", "json"],
        sniff: |p| stream::jsonl::sniff(p) && !chrome::sniff(p),
        reader: Some(stream::jsonl::open_reader),
        writer: Some(stream::jsonl::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "parquet",
        description: "the tracepipe record stream as Parquet (DuckDB, Polars, pandas, Spark): a file, or a Hive-partitioned folder (--partition-by)",
        extensions: &["parquet"],
        sniff: stream::parquet::sniff,
        reader: Some(stream::parquet::open_reader),
        writer: Some(stream::parquet::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: stream::parquet::WRITE_OPTIONS,
        folder_sign: Some("`.parquet` files or `COLUMN=VALUE` partition folders (Parquet)"),
        writes_beside: None,
    },
    Format {
        name: "paje",
        description: "Pajé traces (SimGrid, StarPU, poti; what PajeNG and ViTE read); `.trace` files are Pajé (SimGrid names them so), not TRACE",
        extensions: &["paje", "trace"],
        sniff: paje::sniff,
        reader: Some(paje::reader::open_reader),
        writer: Some(paje::writer::open_writer),
        frame_sums: None,
        read_options: paje::reader::READ_OPTIONS,
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "pjdump",
        description: "what PajeNG's pj_dump 1.3.8 prints (write only)",
        extensions: &[],
        sniff: |_| false,
        reader: None,
        writer: Some(paje::pjdump::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: paje::pjdump::WRITE_OPTIONS,
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "pallas",
        description: "Pallas trace folders (EZTrace), ABI 16 to 21; name the folder or its main .pallas file (written: ABI 20, grammar discovered)",
        extensions: &["pallas"],
        sniff: pallas::sniff,
        reader: Some(pallas::reader::open_reader),
        writer: Some(pallas::writer::open_writer),
        frame_sums: Some(pallas::reader::sum_frames),
        read_options: &[],
        write_options: pallas::writer::WRITE_OPTIONS,
        folder_sign: Some("a `.pallas` file (Pallas)"),
        writes_beside: Some(pallas::writer::written_paths),
    },
    Format {
        name: "otf2",
        description: "OTF2 archives (Score-P, EZTrace, TAU; what Vampir and Scalasca read), versions 1.0 to 3.x; name the anchor .otf2 file or its folder",
        extensions: &["otf2"],
        sniff: otf2::sniff,
        reader: Some(otf2::reader::open_reader),
        writer: Some(otf2::writer::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: otf2::writer::WRITE_OPTIONS,
        folder_sign: Some("a `.otf2` anchor file (OTF2)"),
        writes_beside: Some(otf2::writer::written_paths),
    },
    Format {
        name: "trace",
        description: "TRACE (TNO-ESI TRACE4CPS): `.etf` files (a `.trace` file is Pajé); not time-ordered, so read whole",
        extensions: &["etf"],
        sniff: trace::sniff,
        reader: Some(trace::reader::open_reader),
        writer: Some(trace::writer::open_writer),
        frame_sums: None,
        read_options: trace::reader::READ_OPTIONS,
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "paraver",
        description: "Paraver (BSC: Extrae, Paraver, Dimemas): name the .prv; its .pcf and .row are read from beside it",
        extensions: &["prv"],
        sniff: paraver::sniff,
        reader: Some(paraver::reader::open_reader),
        writer: Some(paraver::writer::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: Some(paraver::writer::written_paths),
    },
    Format {
        name: "stf",
        description: "Intel STF (Intel Trace Analyzer and Collector) in tracepipe's documented encoding (docs/stf.md); name the index .stf or the .single.stf",
        extensions: &["stf"],
        sniff: stf::sniff,
        reader: Some(stf::reader::open_reader),
        writer: Some(stf::writer::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "stf-dump",
        description: "the text Intel's `stftool FILE --dump` prints (how real ITAC traces get out)",
        extensions: &[],
        sniff: stf::dump::sniff,
        reader: Some(stf::dump::open_reader),
        writer: None,
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "stf-single",
        description: "Intel STF as one file (`.single.stf`); read as `stf`",
        extensions: &[],
        sniff: |_| false,
        reader: None,
        writer: Some(stf::writer::open_single_writer),
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "chrome",
        description: "Chrome trace JSON (the trace-event format: PyTorch/Kineto, Chrome, clang -ftime-trace; what Perfetto UI and chrome://tracing read)",
        extensions: &[],
        sniff: chrome::sniff,
        reader: Some(chrome::open_reader),
        writer: Some(viewer::chrome::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
    Format {
        name: "perfetto",
        description: "Perfetto's protobuf trace, for ui.perfetto.dev (write only; docs/formats.md)",
        extensions: &["pftrace", "perfetto-trace"],
        sniff: |_| false,
        reader: None,
        writer: Some(viewer::perfetto::open_writer),
        frame_sums: None,
        read_options: &[],
        write_options: &[],
        folder_sign: None,
        writes_beside: None,
    },
];

/// A trace format tracepipe recognises but does not read: detection names
/// it rather than guess another format, and `-f NAME` says so.
pub struct Foreign {
    /// What `-f` would call it.
    pub name: &'static str,
    /// What the error calls it.
    pub what: &'static str,
    /// What to do instead.
    pub advice: &'static str,
    /// The file (or, for a folder, the entry) that shows it, if any.
    sign: fn(&Probe) -> Option<String>,
}

/// The formats recognised but not read.
pub const FOREIGN: &[Foreign] = &[Foreign {
    name: "perfetto",
    what: "a Perfetto protobuf trace",
    advice: "tracepipe writes this format (-t perfetto) but does not read it",
    sign: |p| matches!(p.extension, Some("pftrace" | "perfetto-trace")).then(String::new),
}];

/// The recognised-but-unread format of the input `probe` describes, with
/// the file that shows it, if it is one.
fn foreign(probe: &Probe) -> Option<(&'static Foreign, String)> {
    FOREIGN
        .iter()
        .find_map(|f| (f.sign)(probe).map(|file| (f, file)))
}

/// The format called `name`, or whose file extension `name` is (`etf`,
/// `ndjson`...): people type the extension they see.
pub fn by_name(name: &str) -> Result<&'static Format> {
    let found = FORMATS.iter().find(|f| f.name == name);
    let found = found.or_else(|| FORMATS.iter().find(|f| f.extensions.contains(&name)));
    if let (None, Some(f)) = (found, FOREIGN.iter().find(|f| f.name == name)) {
        return Err(Error::Usage(format!(
            "`{name}` is {}: {}",
            f.what, f.advice
        )));
    }
    found.ok_or_else(|| {
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

/// The first format readable (`readable`) or writable (else) that claims
/// the file extension `ext`.
fn by_extension(ext: &str, readable: bool) -> Option<&'static Format> {
    FORMATS.iter().find(|f| {
        let able = if readable {
            f.reader.is_some()
        } else {
            f.writer.is_some()
        };
        able && f.extensions.contains(&ext)
    })
}

/// The format an output file's name suggests by its extension, if any.
/// A compression suffix (`run.etf.gz`) is looked through.
pub fn for_output_file(path: &str) -> Option<&'static Format> {
    let mut path = std::path::Path::new(path);
    if crate::io::output_compression(&path.to_string_lossy()).is_some() {
        path = std::path::Path::new(path.file_stem()?);
    }
    let ext = path.extension()?.to_str()?;
    by_extension(&ext.to_ascii_lowercase(), false)
}

/// The other names `-f` (readable) or `-t` accept for format `name`: its
/// extensions that name no format and lead to it.
pub fn aliases(name: &str, readable: bool) -> Vec<&'static str> {
    let Some(format) = FORMATS.iter().find(|f| f.name == name) else {
        return Vec::new();
    };
    format
        .extensions
        .iter()
        .filter(|&&e| {
            FORMATS.iter().all(|f| f.name != e)
                && by_extension(e, readable).is_some_and(|f| std::ptr::eq(f, format))
        })
        .copied()
        .collect()
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

/// How much of an input detection reads at most before it decides by the
/// extension (or fails).
pub const DETECTION_LIMIT: usize = 64 * 1024;

/// Recognises the format of `input`: by content first, then by extension. On
/// a pipe the content arrives in pieces, so detection reads until a sniffer
/// claims it, the input ends, or [`DETECTION_LIMIT`] bytes have come.
pub fn detect(input: &mut Input) -> Result<&'static Format> {
    let is_dir = input.reader.is_none();
    let extension = input.extension();
    let entries = input.entries()?;
    let readable = || FORMATS.iter().filter(|f| f.reader.is_some());
    loop {
        let probe = Probe {
            head: input.head(),
            extension: extension.as_deref(),
            is_dir,
            entries: &entries,
        };
        if let Some((f, file)) = foreign(&probe) {
            let shown = match file.is_empty() {
                true => String::new(),
                false => format!(" ({file})"),
            };
            return Err(Error::file(
                input.name.clone(),
                format!("this is {}{shown}: {}", f.what, f.advice),
            ));
        }
        let undecided = chrome::scan::is_undecided(probe.head);
        if let Some(f) = readable().find(|f| !undecided && (f.sniff)(&probe)) {
            return Ok(f);
        }
        if input.head().len() >= DETECTION_LIMIT || !input.read_more()? {
            break;
        }
    }
    if let Some(f) = extension.as_deref().and_then(|e| by_extension(e, true)) {
        return Ok(f);
    }
    if is_dir {
        let signs: Vec<&str> = readable().filter_map(|f| f.folder_sign).collect();
        return Err(Error::file(
            input.name.clone(),
            format!(
                "a folder that no format recognises (looked for {}); name a trace file instead",
                signs.join(", ")
            ),
        ));
    }
    if input.head().is_empty() {
        // An empty input is an empty stream, whatever its name.
        return by_name("tsv");
    }
    Err(Error::file(
        input.name.clone(),
        format!(
            "cannot recognise the format (known: {}); name it with -f/--input-format",
            names(true).join(", ")
        ),
    ))
}

/// The format to read `input` with: `from` if given, else detected.
pub fn reader_for(input: &mut Input, from: Option<&str>) -> Result<&'static Format> {
    let format = match from {
        Some(name) => by_name(name)?,
        None => detect(input)?,
    };
    if format.reader.is_none() {
        let why = FOREIGN
            .iter()
            .find(|f| f.name == format.name)
            .map_or("it cannot be read", |f| f.advice);
        return Err(Error::Usage(format!("format `{}`: {why}", format.name)));
    }
    Ok(format)
}

/// When `-f` forced `forced` on `input`: the format detection would have
/// chosen instead, if another one. The reader's error on such an input comes
/// from deep inside the wrong format ("unsupported ABI 107"); this says why.
pub fn detected_instead(input: &mut Input, forced: &'static Format) -> Option<&'static Format> {
    detect(input).ok().filter(|f| !std::ptr::eq(*f, forced))
}

/// The format called `to`, if it can be written.
pub fn writer_for(to: &str) -> Result<&'static Format> {
    let format = by_name(to)?;
    if format.writer.is_none() {
        return Err(Error::Usage(format!(
            "format `{}` cannot be written",
            format.name
        )));
    }
    Ok(format)
}

#[cfg(test)]
mod tests {
    #[test]
    fn chrome_heads() {
        use crate::formats::chrome::scan::{is_trace_head, is_undecided};
        assert!(is_trace_head(br#"{"traceEvents":[{"name":"a"}]}"#));
        assert!(is_trace_head(b"[ {\"name\": \"a\", \"ph\": \"X\"}]"));
        assert!(is_trace_head(
            br#"{"schemaVersion": 1, "deviceProperties": ["#
        ));
        assert!(is_trace_head(br#"{"foo": 1, "traceEvents": []}"#));
        assert!(!is_trace_head(br#"{"kind":"meta","name":"format"}"#));
        assert!(!is_trace_head(br#"{"time":"1","kind":"event"}"#));
        assert!(is_undecided(br#" {"tr"#));
        assert!(is_undecided(br#"{"ki"#));
        assert!(!is_undecided(br#"{"traceEvents":"#));
    }
}
