//! The command layer's shared parts: the argument groups (inputs, record
//! output, table output), the format options taken from the registry, the one
//! pipeline every stream command runs (inputs → stages → sink), warnings and
//! progress on stderr, and the `main` wrapper that maps errors to exit codes.
//!
//! Exit codes: 0 success (also when the reader of our output went away),
//! 1 bad input or I/O failure, 2 bad usage.

use std::cell::Cell;
use std::io::IsTerminal;
use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches};

use crate::error::{Error, Location, Result, Warnings};
use crate::exec::merge::Merger;
use crate::exec::pump;
use crate::format::{self, Format, FORMATS};
use crate::formats::stream::tsv::RowEncoder;
use crate::glob::Glob;
use crate::io::{
    check_output_is_not_an_input, check_written_are_not_inputs, open_output, ByteCounter, Input,
};
use crate::model::symbol::Symbols;
use crate::pipe::{
    FormatOption, FormatOptions, FrameSums, LocationSelection, OptionValue, ReadOptions,
    RecordSink, RecordSource, Summed, WriteOptions,
};
use crate::pool::{Pool, Threads};
use crate::stages::filter::{FilterSource, Predicate};
use crate::table::{self, TableFormat, TableWriter};

/// Inputs of a command that reads traces or streams.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace files, trace folders or streams to read; `-` (the default) is
    /// standard input. Several inputs are merged by time.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Read every input as FORMAT instead of detecting it.
    #[arg(short = 'f', long = "input-format", value_name = "FORMAT",
          value_parser = format_names(true))]
    pub input_format: Option<String>,

    /// Print no warnings (nor trace-match's summary): errors only.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Refuse frames that do not nest (a leave of a frame that is open but
    /// not the innermost, or of none) at the first, instead of keeping them
    /// with one warning (docs/stream.md, "Frames that do not nest").
    #[arg(long)]
    pub strict: bool,

    /// Put each input's file name before its locations (`a.etf/R0`), to
    /// merge traces whose location names collide (references from one input
    /// to another's locations then no longer resolve).
    #[arg(long)]
    pub prefix_inputs: bool,

    /// Which locations to read.
    #[command(flatten)]
    pub locations: LocationArgs,
}

/// A selection of locations, known before reading: rows of other locations
/// are dropped, and readers whose locations are files of their own (OTF2,
/// Pallas) leave the others' files unread, so the parts of a job array each
/// read their share of a trace.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Locations")]
pub struct LocationArgs {
    /// Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`,
    /// `[a-z]`; repeatable: any).
    #[arg(short = 'l', long = "loc", value_name = "GLOB")]
    pub locs: Vec<String>,

    /// Keep rows whose location's display name (its `container` row's
    /// `name`) matches GLOB (repeatable: any).
    #[arg(short = 'L', long = "loc-name", value_name = "GLOB")]
    pub loc_names: Vec<String>,

    /// Keep rows on the container whose id or name matches GLOB, or on any
    /// container below it: a subtree (a Pajé thread and its state lanes, a
    /// process and its threads; repeatable: any).
    #[arg(long, value_name = "GLOB")]
    pub under: Vec<String>,
}

impl LocationArgs {
    /// The selection, bad globs as usage errors; `None` when no option is
    /// given.
    pub fn selection(&self) -> Result<Option<LocationSelection>> {
        let globs = |v: &[String]| {
            v.iter()
                .map(|g| Glob::new(g).map_err(Error::Usage))
                .collect::<Result<Vec<_>>>()
        };
        let selection = LocationSelection {
            locs: globs(&self.locs)?,
            names: globs(&self.loc_names)?,
            under: globs(&self.under)?,
        };
        Ok((!selection.is_empty()).then_some(selection))
    }
}

impl InputArgs {
    /// The inputs named, or standard input when none is.
    pub fn named(&self) -> Vec<String> {
        match self.inputs.is_empty() {
            true => vec!["-".to_string()],
            false => self.inputs.clone(),
        }
    }

    /// The prefix of each input's locations for `--prefix-inputs`: its file
    /// name, or its whole path where two names are alike.
    fn prefixes(&self) -> Vec<String> {
        let inputs = self.named();
        let name = |arg: &String| {
            std::path::Path::new(arg)
                .file_name()
                .map_or(arg.clone(), |n| n.to_string_lossy().into_owned())
        };
        let names: Vec<String> = inputs.iter().map(name).collect();
        names
            .iter()
            .zip(&inputs)
            .map(|(n, arg)| {
                let alike = names.iter().filter(|m| *m == n).count() > 1;
                format!("{}/", if alike { arg } else { n })
            })
            .collect()
    }
}

/// The format names `-f` (`readable`) or `-t` accept, with their
/// extensions as aliases (`-f etf`).
/// The formats recognised but neither read nor written are accepted too
/// (hidden), so naming one gets the registry's word on it, not a guess.
fn format_names(readable: bool) -> PossibleValuesParser {
    let known = format::names(readable);
    let foreign = format::FOREIGN
        .iter()
        .filter(|f| !known.contains(&f.name))
        .map(|f| clap::builder::PossibleValue::new(f.name).hide(true));
    PossibleValuesParser::new(
        known
            .iter()
            .map(|&name| {
                clap::builder::PossibleValue::new(name).aliases(format::aliases(name, readable))
            })
            .chain(foreign),
    )
}

/// Output options of every command that writes a record stream or a trace.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Write to FILE instead of standard output; FILE is replaced only once
    /// the output is whole (an error or an interruption leaves it as it
    /// was), except with --line-buffered, which writes it in place.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,

    /// Write FORMAT: by default the one -o's extension names (`.etf`,
    /// `.paje`, `.jsonl`...), else the record stream as TSV.
    #[arg(short = 't', long = "output-format", value_name = "FORMAT",
          value_parser = format_names(false))]
    pub output_format: Option<String>,

    /// List the formats that can be read and written, then exit.
    #[arg(long)]
    pub list_formats: bool,

    /// Write the stream as JSON Lines (same as `-t jsonl`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,

    /// Leave out the TSV header line (for tools that want bare rows).
    #[arg(long)]
    pub no_header: bool,

    /// Write data rows only: no header, no meta, type or container rows (for
    /// awk and gnuplot; the output is then no longer a stream).
    #[arg(long)]
    pub rows_only: bool,

    /// Write times in UNIT as exact decimals (1.5 for 1500 ns in us) instead
    /// of integer nanoseconds: a table of the data rows for other tools (R,
    /// DuckDB, gnuplot), with its header line unless --rows-only or
    /// --no-header, and no longer a stream.
    #[arg(long, value_name = "UNIT",
          value_parser = PossibleValuesParser::new(["ns", "us", "ms", "s"]))]
    pub unit: Option<String>,

    /// Flush after every row (for following a live trace).
    #[arg(long)]
    pub line_buffered: bool,

    /// How the command runs.
    #[command(flatten)]
    pub run: RunArgs,
}

/// How a command runs: progress line and threads.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Never draw the progress line (it is drawn only when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Threads: 1 does everything on one core; N > 1 puts N − 1 more to work
    /// on inputs that split (the TSV stream's chunks of rows, a Pallas
    /// trace's threads, a Pajé trace's lines cut into words) and encodes the
    /// output on a thread of its own (a copy of the rows as read stays on
    /// the reading thread); auto is the number of cores the process may
    /// use. The output is the same for every N.
    #[arg(long, value_name = "N", default_value = "auto", value_parser = parse_threads)]
    pub threads: ThreadsArg,
}

/// `--threads`: a number, or as many as the process may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadsArg {
    /// The cores the process may use.
    Auto,
    /// That many.
    Count(NonZeroUsize),
}

fn parse_threads(text: &str) -> std::result::Result<ThreadsArg, String> {
    match text {
        "auto" => Ok(ThreadsArg::Auto),
        _ => text
            .parse::<NonZeroUsize>()
            .map(ThreadsArg::Count)
            .map_err(|_| format!("expected `auto` or a number of threads from 1, found `{text}`")),
    }
}

impl RunArgs {
    /// How many threads the pipeline uses: decided by the arguments and the
    /// cores the process may use, never by timing.
    pub fn threads(&self) -> Threads {
        match self.threads {
            ThreadsArg::Count(n) => Threads::new(n.get()),
            ThreadsArg::Auto => {
                Threads::new(std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
            }
        }
    }
}

impl OutputArgs {
    /// The output format: `--json`, `-t`, `-o`'s extension, or TSV.
    pub fn format(&self) -> &'static Format {
        let named = if self.json {
            Some("jsonl")
        } else {
            self.output_format.as_deref()
        };
        let by_file = || self.output.as_deref().and_then(format::for_output_file);
        match named {
            Some(name) => format::writer_for(name).expect("clap checked the name"),
            None => by_file().unwrap_or_else(|| format::writer_for("tsv").expect("tsv is written")),
        }
    }
}

/// The registry as a table (TSV, or JSON Lines with `--json`).
pub fn list_formats(args: &OutputArgs) -> Result<()> {
    let table = TableArgs {
        output: args.output.clone(),
        csv: false,
        json: args.json,
        no_header: args.no_header,
        run: args.run.clone(),
    };
    let mut out = table.open(&["format", "read", "write", "extensions", "description"])?;
    let yes = |b: bool| table::Cell::Text(if b { "yes" } else { "no" });
    for f in FORMATS {
        let extensions = f.extensions.join(",");
        out.row(&[
            table::Cell::Text(f.name),
            yes(f.reader.is_some()),
            yes(f.writer.is_some()),
            table::Cell::Text(&extensions),
            table::Cell::Text(f.description),
        ])?;
    }
    out.finish()
}

/// Output options of a command that prints a report table.
#[derive(Args, Debug, Clone)]
pub struct TableArgs {
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,

    /// Write CSV (RFC 4180 quoting) instead of TSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,

    /// Write JSON Lines, one object per row.
    #[arg(long)]
    pub json: bool,

    /// Leave out the header line.
    #[arg(long)]
    pub no_header: bool,

    /// How the command runs.
    #[command(flatten)]
    pub run: RunArgs,
}

impl TableArgs {
    /// Opens the table these arguments ask for, with `columns`.
    pub fn open(&self, columns: &[&str]) -> Result<TableWriter> {
        let format = if self.csv {
            TableFormat::Csv
        } else if self.json {
            TableFormat::Jsonl
        } else {
            TableFormat::Tsv
        };
        let out = open_output(self.output.as_deref(), false)?;
        TableWriter::new(out, format, columns, !self.no_header)
    }
}

/// What a command's run gets beside its arguments: the warnings handle, the
/// symbol table and the values of the format options.
#[derive(Clone)]
pub struct Env {
    /// The command's name, which starts its lines on stderr.
    pub name: &'static str,
    /// The symbol table of the command's pipeline, shared by its readers,
    /// stages and writer.
    pub symbols: Symbols,
    /// Where readers, stages and writers report warnings; printed on stderr
    /// unless `--quiet`.
    pub warnings: Warnings,
    /// The format options given on the command line.
    pub format_options: FormatOptions,
    /// `--quiet`: nothing but errors on stderr.
    pub quiet: bool,
    /// `--strict`: readers refuse frames that do not nest.
    pub strict: bool,
    /// Readers refuse a message they would drop incomplete
    /// ([`ReadOptions::refuse_unmatched`]).
    pub refuse_unmatched: bool,
}

impl Env {
    /// Prints one line of a command's report on stderr (a summary), unless
    /// `--quiet`.
    pub fn say(&self, line: &str) {
        if !self.quiet {
            to_stderr(format_args!("{}: {line}\n", self.name));
        }
    }
}

/// The filter of a location selection.
fn location_predicate(s: LocationSelection) -> Predicate {
    Predicate {
        locs: s.locs,
        loc_names: s.names,
        under: s.under,
        ..Predicate::default()
    }
}

/// Every format option of the registry, once each, with its format and side.
fn format_options() -> Vec<(&'static Format, &'static FormatOption, bool)> {
    let mut all: Vec<(&Format, &FormatOption, bool)> = Vec::new();
    for f in FORMATS {
        let sides = [(f.read_options, true), (f.write_options, false)];
        for (options, read) in sides {
            for o in options {
                if !all.iter().any(|(_, seen, _)| seen.name == o.name) {
                    all.push((f, o, read));
                }
            }
        }
    }
    all
}

/// The clap command of `A`, with the registry's format options added under a
/// heading per format (global: its subcommands take them too): reader
/// options always, writer options when the command writes records (`-t`).
pub fn command<A: CommandFactory>() -> clap::Command {
    with_format_options(A::command())
}

/// `cmd` with the format options that apply to it, and with `-h` giving
/// each option's first sentence (`--help` all of it), as in every command.
pub fn with_format_options(cmd: clap::Command) -> clap::Command {
    let shorten = |cmd: clap::Command| cmd.mut_args(first_sentence_for_short_help);
    shorten(add_format_options(cmd)).mut_subcommands(shorten)
}

/// `arg` with its help's first sentence for `-h` and the whole for
/// `--help`, where it says more than one and has no long help of its own.
fn first_sentence_for_short_help(arg: Arg) -> Arg {
    let Some(help) = arg.get_help().map(ToString::to_string) else {
        return arg;
    };
    if arg.get_long_help().is_some() {
        return arg;
    }
    let bytes = help.as_bytes();
    let end = (1..bytes.len().saturating_sub(1))
        .find(|&i| bytes[i - 1] == b'.' && bytes[i] == b' ' && bytes[i + 1].is_ascii_uppercase());
    match end {
        Some(end) => arg.help(help[..end].to_string()).long_help(help),
        None => arg,
    }
}

/// `cmd` with the registry's format options.
fn add_format_options(mut cmd: clap::Command) -> clap::Command {
    let writes = cmd.get_arguments().any(|a| a.get_id() == "output_format");
    for (format, option, read) in format_options() {
        if !read && !writes {
            continue;
        }
        let side = if read { "input" } else { "output" };
        let mut arg = Arg::new(option.name)
            .long(option.name)
            .help(option.help)
            .help_heading(format!("{} {side}", format.name))
            .global(true);
        arg = match option.value {
            OptionValue::Switch => arg.action(ArgAction::SetTrue),
            OptionValue::Number(placeholder) => arg
                .value_name(placeholder)
                .value_parser(clap::value_parser!(u64)),
            OptionValue::Choice(placeholder, words) => arg
                .value_name(placeholder)
                .value_parser(clap::builder::PossibleValuesParser::new(words)),
        };
        cmd = cmd.arg(arg);
    }
    cmd
}

fn given_format_options(matches: &ArgMatches) -> FormatOptions {
    let mut given = FormatOptions::default();
    for (_, option, _) in format_options() {
        match option.value {
            OptionValue::Switch => {
                if matches.try_get_one::<bool>(option.name).ok().flatten() == Some(&true) {
                    given.set_switch(option.name);
                }
            }
            OptionValue::Number(_) => {
                if let Ok(Some(&n)) = matches.try_get_one::<u64>(option.name) {
                    given.set_number(option.name, n);
                }
            }
            OptionValue::Choice(..) => {
                if let Ok(Some(word)) = matches.try_get_one::<String>(option.name) {
                    given.set_choice(option.name, word);
                }
            }
        }
    }
    given
}

/// Refuses options of formats that are not used, so none is silently ignored:
/// reader options when no input is read in their format (`read`), writer
/// options when the output is another format.
fn check_options_apply(env: &Env, used: &[&Format], read: bool) -> Result<()> {
    for name in env.format_options.given() {
        let owner = format_options()
            .into_iter()
            .find(|(_, o, side)| o.name == name && *side == read);
        let Some((format, _, _)) = owner else {
            continue;
        };
        if used.iter().any(|f| f.name == format.name) {
            continue;
        }
        let msg = if read {
            format!(
                "--{name} is an option of the {} reader, but no input is read as {}",
                format.name, format.name
            )
        } else {
            let output = used.first().map_or("", |f| f.name);
            format!(
                "--{name} is an option of the {} writer, but the output is {output}",
                format.name
            )
        };
        return Err(Error::Usage(msg));
    }
    Ok(())
}

/// What every reader of a command is given.
fn read_options(env: &Env, pool: &Pool, locations: Option<LocationSelection>) -> ReadOptions {
    ReadOptions {
        pool: pool.clone(),
        symbols: env.symbols.clone(),
        format: env.format_options.clone(),
        warnings: env.warnings.clone(),
        locations,
        strict: env.strict,
        refuse_unmatched: env.refuse_unmatched,
    }
}

/// Has the reader of the sole input sum its frames into `sums` from the
/// format's structure ([`FrameSums`]), when the input is one trace read
/// whole (no location selection, no prefix) in a format that stores
/// durations; otherwise [`Summed::Not`], and the rows must be read.
pub fn sum_frames(
    args: &InputArgs,
    env: &Env,
    run: &RunArgs,
    sums: &mut dyn FrameSums,
) -> Result<Summed> {
    let inputs = args.named();
    let [only] = &inputs[..] else {
        return Ok(Summed::Not("more than one input".into()));
    };
    if only == "-" || args.prefix_inputs || args.locations.selection()?.is_some() {
        return Ok(Summed::Not(
            "standard input, prefixes or a location selection".into(),
        ));
    }
    let counter: ByteCounter = Rc::new(Cell::new(0));
    let mut input = Input::open(only, &counter)?;
    let format = format::reader_for(&mut input, args.input_format.as_deref())?;
    let Some(sum) = format.frame_sums else {
        return Ok(Summed::Not(format!("{} stores no durations", format.name)));
    };
    check_options_apply(env, &[format], true)?;
    sum(
        input,
        &read_options(env, &Pool::new(run.threads()), None),
        sums,
    )
}

/// The one pipeline of a stream command: its inputs as one source (reading
/// side stages wrap it), run into a sink (writing-side stages in front of a
/// writer) by [`pump::pump`].
pub struct Pipeline<'e> {
    /// The inputs, merged by time when there are several.
    pub source: Box<dyn RecordSource>,
    env: &'e Env,
    counter: ByteCounter,
    inputs: Vec<String>,
    pool: Pool,
}

impl<'e> Pipeline<'e> {
    /// Opens every input (format forced or detected) as one source, its
    /// readers using threads as `run` says.
    pub fn open(args: &InputArgs, env: &'e Env, run: &RunArgs) -> Result<Pipeline<'e>> {
        let counter: ByteCounter = Rc::new(Cell::new(0));
        let pool = Pool::new(run.threads());
        let selection = args.locations.selection()?;
        let opts = read_options(env, &pool, selection.clone());
        let inputs = args.named();
        if inputs.iter().filter(|i| *i == "-").count() > 1 {
            return Err(Error::Usage(
                "standard input (`-`) is named more than once; it can be read only once".into(),
            ));
        }
        if inputs.iter().any(|i| i == "-") && std::io::stdin().is_terminal() {
            // Otherwise a bare `trace-cat` just waits, with no hint why.
            env.warnings.warn(
                "reading the stream from the terminal (end it with Ctrl-D); name a trace to read it, --help for more",
            );
        }
        let mut sources = Vec::with_capacity(inputs.len());
        let mut used = Vec::new();
        for arg in &inputs {
            let mut input = Input::open(arg, &counter)?;
            let format = format::reader_for(&mut input, args.input_format.as_deref())?;
            if args.input_format.is_some() {
                if let Some(other) = format::detected_instead(&mut input, format) {
                    env.warnings.warn_at(
                        Location::File(input.name.clone()),
                        format!(
                            "read as {} as -f says, though it looks like {}",
                            format.name, other.name
                        ),
                    );
                }
            }
            if args.input_format.is_none() && input.reader.is_some() && input.head().is_empty() {
                // Detection read to the end and found nothing.
                env.warnings.warn_at(
                    Location::File(input.name.clone()),
                    "the input is empty: it has no rows",
                );
            }
            used.push(format);
            let open = format.reader.expect("reader_for returns readable formats");
            sources.push(open(input, &opts)?);
        }
        check_options_apply(env, &used, true)?;
        let source: Box<dyn RecordSource> = if sources.len() == 1 && !args.prefix_inputs {
            sources.pop().expect("one source")
        } else {
            let merger = Merger::new(sources, &env.symbols, &env.warnings)?;
            match args.prefix_inputs {
                true => Box::new(merger.with_prefixes(args.prefixes())),
                false => Box::new(merger),
            }
        };
        let source = match selection {
            Some(s) => Box::new(FilterSource::new(
                source,
                location_predicate(s),
                env.symbols.clone(),
                env.warnings.clone(),
            )),
            None => source,
        };
        Ok(Pipeline {
            source,
            env,
            counter,
            inputs,
            pool,
        })
    }

    /// Opens the report table `args` asks for (refusing an output that is an
    /// input), with `columns`.
    pub fn table(&self, args: &TableArgs, columns: &[&str]) -> Result<TableWriter> {
        check_output_is_not_an_input(args.output.as_deref(), &self.inputs)?;
        args.open(columns)
    }

    /// Puts a reading-side stage (one that drops rows) around the source.
    pub fn through(
        mut self,
        stage: impl FnOnce(Box<dyn RecordSource>) -> Box<dyn RecordSource>,
    ) -> Pipeline<'e> {
        let source = std::mem::replace(&mut self.source, Box::new(Empty));
        self.source = stage(source);
        self
    }

    /// Opens the writer `args` asks for, carrying the source's extra columns.
    pub fn writer(&self, args: &OutputArgs) -> Result<Box<dyn RecordSink + Send>> {
        let format = args.format();
        check_options_apply(self.env, &[format], false)?;
        if args.no_header && format.name != "tsv" {
            return Err(Error::Usage(format!(
                "--no-header leaves out the TSV header line; the output is {}",
                format.name
            )));
        }
        let shaping = match (args.rows_only, &args.unit) {
            (true, _) => Some("--rows-only"),
            (false, Some(_)) => Some("--unit"),
            _ => None,
        };
        if let Some(flag) = shaping.filter(|_| !matches!(format.name, "tsv" | "jsonl")) {
            return Err(Error::Usage(format!(
                "{flag} shapes the stream's TSV or JSON Lines; the output is {}",
                format.name
            )));
        }
        let compressed = args
            .output
            .as_deref()
            .and_then(crate::io::output_compression);
        if compressed.is_some() && (format.name.starts_with("stf") || format.name == "parquet") {
            return Err(Error::Usage(format!(
                "{} is a binary format of its own: write it uncompressed (the `.gz` or `.zst` of -o is for text and viewer formats)",
                format.name
            )));
        }
        let beside = match (format.writes_beside, args.output.as_deref()) {
            (Some(paths), Some(out)) => paths(out),
            _ => Vec::new(),
        };
        check_written_are_not_inputs(args.output.as_deref(), &beside, &self.inputs)?;
        let out = open_output(args.output.as_deref(), args.line_buffered)?;
        let opts = WriteOptions {
            symbols: self.env.symbols.clone(),
            no_header: args.no_header || args.rows_only,
            rows_only: args.rows_only || args.unit.is_some(),
            time_decimals: match args.unit.as_deref() {
                Some("us") => 3,
                Some("ms") => 6,
                Some("s") => 9,
                _ => 0,
            },
            extra_columns: self.source.extra_columns().to_vec(),
            format: self.env.format_options.clone(),
            warnings: self.env.warnings.clone(),
        };
        let open = format.writer.expect("writer_for returns writable formats");
        open(out, &opts)
    }

    /// Runs every record into `sink`, threads and progress as `args` says
    /// (the readers keep the threads they were opened with).
    pub fn run(mut self, sink: &mut (dyn RecordSink + Send), args: &RunArgs) -> Result<()> {
        let mut progress = Progress::new(self.counter.clone(), !args.no_progress);
        let mut report = |rows: Option<u64>| progress.report(rows);
        let symbols = &self.env.symbols;
        let lines = || Box::new(RowEncoder::standard(symbols.clone())) as _;
        pump::pump(&mut *self.source, sink, &mut report, (&self.pool, &lines))
    }

    /// Runs the pipeline into `sink` on the reading thread (the readers
    /// still put the pool to work): for a sink that does less per row than
    /// handing the row over costs.
    pub fn run_here(mut self, sink: &mut (dyn RecordSink + Send), args: &RunArgs) -> Result<()> {
        let mut progress = Progress::new(self.counter.clone(), !args.no_progress);
        let mut report = |rows: Option<u64>| progress.report(rows);
        pump::pump_here(&mut *self.source, sink, &mut report)
    }
}

/// The source a pipeline holds for an instant while a stage is put around it.
struct Empty;

impl RecordSource for Empty {
    fn next_record(&mut self, _: &mut crate::model::record::Record) -> Result<bool> {
        Ok(false)
    }
    fn mark(&self) -> u64 {
        0
    }
    fn locate(&self, _: u64) -> crate::error::Location {
        crate::error::Location::File(String::new())
    }
    /// Nothing is to come.
    fn horizon(&self) -> Option<i64> {
        Some(i64::MAX)
    }
}

/// The one-line progress indicator on stderr, drawn only when stderr is a
/// terminal and at most a few times a second.
struct Progress {
    enabled: bool,
    bytes: ByteCounter,
    started: Instant,
    last_draw: Instant,
    drawn: bool,
}

impl Progress {
    fn new(bytes: ByteCounter, wanted: bool) -> Progress {
        let now = Instant::now();
        Progress {
            enabled: wanted && std::io::stderr().is_terminal(),
            bytes,
            started: now,
            last_draw: now,
            drawn: false,
        }
    }

    /// Draws the count of rows, or erases the line at the end (`None`).
    fn report(&mut self, rows: Option<u64>) {
        let Some(rows) = rows else {
            if self.drawn {
                to_stderr(format_args!("\r{:60}\r", ""));
                self.drawn = false;
            }
            return;
        };
        let now = Instant::now();
        if !self.enabled || now.duration_since(self.last_draw) < Duration::from_millis(250) {
            return;
        }
        self.last_draw = now;
        let secs = now.duration_since(self.started).as_secs_f64().max(1e-9);
        let mb = self.bytes.get() as f64 / 1e6;
        to_stderr(format_args!(
            "\r{rows} rows, {mb:.1} MB read, {:.0} MB/s   ",
            mb / secs
        ));
        self.drawn = true;
    }
}

/// Writes to stderr; a stderr that cannot be written (a full disk, a closed
/// descriptor) must not stop the command or lose its output, so failures are
/// ignored.
fn to_stderr(text: std::fmt::Arguments) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_fmt(text);
}

/// Ends on what clap reports: help and version on stdout (exit 0), usage
/// errors on stderr prefixed with the command's name like every other error
/// (exit 2).
fn clap_exit(name: &str, e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    to_stderr(format_args!("{name}: {}", e.render()));
    ExitCode::from(2)
}

/// Runs a command's `main`: parses arguments with the format options added
/// (usage errors exit 2), sets up warnings, runs, prints `NAME: error: ...` on
/// failure (exit 1), and treats a closed output pipe as success.
pub fn run_main<A: CommandFactory + FromArgMatches>(
    name: &'static str,
    run: fn(A, &Env) -> Result<()>,
) -> ExitCode {
    let parsed = command::<A>()
        .try_get_matches()
        .and_then(|m| A::from_arg_matches(&m).map(|a| (m, a)));
    let (mut matches, args) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => return clap_exit(name, &e),
    };
    // Options given after a subcommand are in its matches.
    while let Some((_, sub)) = matches.remove_subcommand() {
        matches = sub;
    }
    let switch = |id: &str| matches.try_get_one::<bool>(id).ok().flatten() == Some(&true);
    let (quiet, strict) = (switch("quiet"), switch("strict"));
    let warnings = if quiet {
        Warnings::default()
    } else {
        Warnings::new(move |w| to_stderr(format_args!("{name}: warning: {w}\n")))
    };
    let env = Env {
        name,
        symbols: Symbols::new(),
        warnings,
        format_options: given_format_options(&matches),
        quiet,
        strict,
        refuse_unmatched: false,
    };
    let result = run(args, &env);
    env.warnings.finish();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(Error::Usage(msg)) => {
            to_stderr(format_args!("{name}: error: {msg}\n"));
            ExitCode::from(2)
        }
        Err(Error::Failed(msg)) => {
            to_stderr(format_args!("{name}: {msg}\n"));
            ExitCode::FAILURE
        }
        Err(e) => {
            to_stderr(format_args!("{name}: error: {e}\n"));
            ExitCode::FAILURE
        }
    }
}
