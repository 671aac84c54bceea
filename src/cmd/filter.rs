//! `trace-filter`: keep the rows that match, as a valid stream.

use clap::builder::PossibleValuesParser;
use clap::Parser;

use crate::cli::{list_formats, Env, InputArgs, OutputArgs, Pipeline};
use crate::error::{Error, Result};
use crate::model::record::Kind;
use crate::stages::{
    filter::{compile_name, AttrCondition, FilterSource, Glob, Predicate},
    window::parse_window,
};

/// `--help` text after the options: the examples (kept as laid out), then
/// paragraphs written as single lines so that clap wraps them to the
/// terminal (and the man page generator makes them a NOTES section).
const EXAMPLES: &str = "\
Examples:
  trace-filter -k send,recv run.tsv                  message halves only
  trace-filter -l 'rank[0-3]*' -n '^MPI_' run.tsv    MPI calls of ranks 0-3
  trace-filter --under 'Thread 1' run.tsv            a container and all below it
  trace-filter --from 1.5s --to 2s run.tsv           rows overlapping [1.5 s, 2 s)
  trace-filter -a mode=abs -k counter run.tsv        absolute counter samples
  trace-filter -k send -a 'size>=4096' run.tsv       sends of 4 KiB or more
  trace-cat --spans run.paje | trace-filter -k state -v -n Idle

Rows are kept whole: a complete row (state, msg, claim, ...) is kept when it \
overlaps the window, not clipped. A frame (enter ... leave) goes whole with its \
enter: kept, with its leave wherever it falls, when the enter is kept; left \
out when the enter is not (before the window, say); trace-slice cuts a window \
that stands on its own instead (frames cut at its edges, counter values \
carried in, messages in flight kept). `meta` rows, and the \
`container` rows of kept rows (with their parents), are always written, so \
the output is a valid stream.";

/// What the command holds in memory, for its man page (not `--help`).
pub const MEMORY: &str = "\
One row per container, and the open \
frames.";

/// Keep the rows of a record stream that match every given condition.
#[derive(Parser, Debug)]
#[command(name = "trace-filter", version, after_help = EXAMPLES)]
pub struct Args {
    /// Inputs.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Keep rows of these kinds (comma-separated or repeated).
    #[arg(short = 'k', long = "kind", value_name = "KIND", value_delimiter = ',',
          value_parser = PossibleValuesParser::new(Kind::ALL.map(Kind::as_str)))]
    pub kinds: Vec<String>,

    /// Keep rows whose category matches GLOB (repeatable: any).
    #[arg(short = 'c', long = "cat", value_name = "GLOB")]
    pub cats: Vec<String>,

    /// Keep rows whose name matches REGEX (unanchored; use ^...$ for whole names).
    #[arg(short = 'n', long = "name", value_name = "REGEX")]
    pub name: Option<String>,

    /// Keep rows overlapping the window from TIME: nanoseconds from the
    /// trace's origin. A bare number is ns (15, 1e9); a decimal with a unit
    /// is exact (1.5ms, 2s, 10us, 1min, 1h); a negative time is before the
    /// origin. The same window flags as trace-slice's.
    #[arg(
        long = "from",
        alias = "start",
        value_name = "TIME",
        allow_hyphen_values = true
    )]
    pub start: Option<String>,

    /// Keep rows overlapping the window that ends before TIME (same syntax
    /// as --from); without it the window is open at its end.
    #[arg(
        long = "to",
        alias = "end",
        value_name = "TIME",
        allow_hyphen_values = true
    )]
    pub end: Option<String>,

    /// Keep rows with attribute KEY; with a test: KEY=TEXT, KEY!=TEXT, or a
    /// number compared exactly: KEY>N, KEY>=N, KEY<N, KEY<=N (quote them for
    /// the shell). A KEY no attribute has names the column size, tag, depth or
    /// value. Repeatable: all must hold.
    #[arg(short = 'a', long = "attr", value_name = "KEY[OP VALUE]")]
    pub attrs: Vec<String>,

    /// Keep the rows that do not match instead (meta and needed containers stay).
    #[arg(short = 'v', long)]
    pub invert: bool,
}

impl Args {
    /// Builds the predicate, reporting bad values as usage errors.
    pub fn predicate(&self) -> Result<Predicate> {
        let usage = Error::Usage;
        let window = parse_window(
            self.start.as_deref(),
            self.end.as_deref(),
            ("--from", "--to"),
        )
        .map_err(usage)?;
        let globs = |v: &[String]| {
            v.iter()
                .map(|g| Glob::new(g).map_err(usage))
                .collect::<Result<Vec<_>>>()
        };
        Ok(Predicate {
            kinds: self
                .kinds
                .iter()
                .filter_map(|k| Kind::parse(k.as_bytes()))
                .collect(),
            cats: globs(&self.cats)?,
            name: self.name.as_deref().map(compile_name).transpose()?,
            window,
            attrs: self
                .attrs
                .iter()
                .map(|a| AttrCondition::parse(a).map_err(usage))
                .collect::<Result<Vec<_>>>()?,
            invert: self.invert,
            // The location options are the pipeline's (`InputArgs`).
            ..Predicate::default()
        })
    }
}

/// Runs `trace-filter`: the filter runs on the reading side.
pub fn run(args: Args, env: &Env) -> Result<()> {
    if args.output.list_formats {
        return list_formats(&args.output);
    }
    let mut predicate = args.predicate()?;
    let mut input = args.input.clone();
    if args.invert {
        // The locations are conditions like the others, inverted with them:
        // the filter asks them, and every file is read.
        let selection = std::mem::take(&mut input.locations).selection()?;
        if let Some(s) = selection {
            (predicate.locs, predicate.loc_names, predicate.under) = (s.locs, s.names, s.under);
        }
    }
    let pipeline = Pipeline::open(&input, env, &args.output.run)?.through(|source| {
        Box::new(FilterSource::new(
            source,
            predicate,
            env.symbols.clone(),
            env.warnings.clone(),
        ))
    });
    let mut writer = pipeline.writer(&args.output)?;
    pipeline.run(&mut writer, &args.output.run)
}
