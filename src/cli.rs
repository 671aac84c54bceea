//! What every command shares: input and output arguments, opening the source and
//! the sink, and the `main` wrapper that maps errors to exit codes.
//!
//! Exit codes: 0 success (also when the reader of our output went away),
//! 1 bad input or I/O failure, 2 bad usage.

use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser};

use crate::error::{self, Error, Result};
use crate::format::{self, ReadOptions, RecordSink, RecordSource, WriteOptions};
use crate::io::{open_output, ByteCounter, Input, Progress};
use crate::ops::merge::Merger;
use crate::ops::pump::Threads;

/// Inputs of a command that reads traces or streams.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace files, trace folders or streams to read; `-` is standard input.
    /// Several inputs are merged by time.
    #[arg(value_name = "INPUT", default_value = "-")]
    pub inputs: Vec<String>,

    /// Read every input as FORMAT instead of detecting it.
    #[arg(short = 'f', long = "from", value_name = "FORMAT",
          value_parser = PossibleValuesParser::new(format::names(true)))]
    pub from: Option<String>,

    /// Skip invalid lines of text traces with a warning each (and a count at the
    /// end) instead of stopping at the first one.
    #[arg(long)]
    pub lenient: bool,

    /// Pajé: keep links whose other half never comes as unmatched halves
    /// (pj_dump's -z) instead of failing.
    #[arg(long)]
    pub ignore_incomplete_links: bool,

    /// Pajé: rows held to put events of different containers back in time order
    /// (memory grows with it).
    #[arg(long, value_name = "ROWS", default_value_t = crate::paje::reader::DEFAULT_REORDER_WINDOW)]
    pub reorder_window: usize,
}

impl InputArgs {
    /// The reader options these arguments ask for.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            lenient: self.lenient,
            ignore_incomplete_links: self.ignore_incomplete_links,
            reorder_window: self.reorder_window,
        }
    }
}

/// Output options shared by every command that writes a stream.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,

    /// Write FORMAT (the record stream as TSV by default).
    #[arg(short = 't', long = "to", value_name = "FORMAT", default_value = "tsv",
          value_parser = PossibleValuesParser::new(format::names(false)))]
    pub to: String,

    /// Write the stream as JSON Lines (same as `-t jsonl`).
    #[arg(long, conflicts_with = "to")]
    pub json: bool,

    /// Leave out the TSV header line (for tools that want bare rows).
    #[arg(long)]
    pub no_header: bool,

    /// Flush after every row (for following a live trace).
    #[arg(long)]
    pub line_buffered: bool,

    /// Never draw the progress line (it is drawn only when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// pjdump output: decimals of times and values (pj_dump's -l).
    #[arg(long, value_name = "N")]
    pub precision: Option<usize>,

    /// pjdump output: append the values of user-defined fields (pj_dump's -u).
    #[arg(long)]
    pub user_fields: bool,

    /// Threads: 1 reads and writes on one core; 2 writes on a second thread;
    /// auto times both on an early stretch of rows and keeps the faster.
    #[arg(long, value_name = "N", default_value = "auto",
          value_parser = PossibleValuesParser::new(["auto", "1", "2"]))]
    pub threads: String,
}

impl OutputArgs {
    /// How the pump may use threads.
    pub fn threads(&self) -> Threads {
        match self.threads.as_str() {
            "1" => Threads::One,
            "2" => Threads::Two,
            _ => Threads::Auto,
        }
    }

    /// The output format name after `--json`.
    pub fn format(&self) -> &str {
        if self.json {
            "jsonl"
        } else {
            &self.to
        }
    }
}

/// Opens every input and returns one source: the input itself, or a time merge
/// of all of them.
pub fn open_source(args: &InputArgs, counter: &ByteCounter) -> Result<Box<dyn RecordSource>> {
    let opts = &args.read_options();
    let mut sources = Vec::with_capacity(args.inputs.len());
    for arg in &args.inputs {
        let input = Input::open(arg, counter)?;
        sources.push(format::open_reader(input, args.from.as_deref(), opts)?);
    }
    if sources.len() == 1 {
        Ok(sources.pop().expect("one source"))
    } else {
        Ok(Box::new(Merger::new(sources)?))
    }
}

/// Opens the output sink described by `args`, carrying `extra_columns`.
pub fn open_sink(
    args: &OutputArgs,
    extra_columns: &[String],
) -> Result<Box<dyn RecordSink + Send>> {
    let out = open_output(args.output.as_deref(), args.line_buffered)?;
    let opts = WriteOptions {
        no_header: args.no_header,
        extra_columns: extra_columns.to_vec(),
        precision: args.precision,
        user_fields: args.user_fields,
    };
    format::open_writer(args.format(), out, &opts)
}

/// A progress indicator over `counter` unless `--no-progress`.
pub fn progress(args: &OutputArgs, counter: &ByteCounter) -> Progress {
    Progress::new(counter.clone(), !args.no_progress)
}

/// Runs a command's `main`: parses arguments (usage errors exit 2), runs, prints
/// `NAME: error: ...` on failure (exit 1), and treats a closed output pipe as
/// success.
pub fn run_main<A: Parser>(name: &str, run: fn(A) -> Result<()>) -> ExitCode {
    error::set_program_name(name);
    let args = A::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(Error::Usage(msg)) => {
            eprintln!("{name}: error: {msg}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("{name}: error: {e}");
            ExitCode::FAILURE
        }
    }
}
