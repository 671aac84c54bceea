//! `trace-stat`: a report table over a stream (profile, messages, counters,
//! states).

use std::num::NonZeroUsize;

use clap::builder::PossibleValuesParser;
use clap::Parser;

use crate::cli::{Env, InputArgs, Pipeline, TableArgs, ThreadsArg};
use crate::error::{Error, Result};
use crate::io::{check_output_is_not_an_input, open_output};
use crate::stages::matcher::{Matcher, Unmatched};
use crate::stats::counters::Counters;
use crate::stats::labels::Labels;
use crate::stats::messages::{self, Messages};
use crate::stats::partial::PartialOf;
use crate::stats::profile::{By, Profile};
use crate::stats::resources::Resources;
use crate::stats::states::States;
use crate::stats::summary::Summary;
use crate::stats::{Labelled, Report, Style};

/// The reports, the first being the default.
pub const REPORTS: [&str; 6] = [
    "profile",
    "messages",
    "counters",
    "states",
    "resources",
    "summary",
];

/// `--help` text after the options.
const EXAMPLES: &str = "\
Examples:
  trace-stat run/                                    time per function (profile)
  trace-stat profile --by loc,name --top 20 run.paje the 20 heaviest (location, function)
  trace-stat messages --unit us run.tsv              bytes and transfer times per rank pair
  trace-stat counters --csv run.tsv > counters.csv   counter summaries for a spreadsheet
  trace-stat profile --histogram 20 run.tsv          duration histograms per function
  trace-stat states run.paje                         time per container, state type and value
  trace-stat resources --unit ms plant.etf           utilisation and Little's law per resource
  trace-stat summary run/                            the trace at a glance

REPORT, the first argument when it names one, is profile (the default), messages, counters, \
states, resources or summary. summary: first and last time, span, rows per kind, locations, \
messages and unmatched halves, the five functions with the most exclusive time. profile: per name, the frames' count, inclusive and exclusive time (exclusive: minus the \
direct children; a recursive name counts each outermost frame once in inclusive time), min, mean, \
max and the p50, p90, p99 of their durations (within 1 %: a logarithmic sketch); from each \
location's enter/leave stack and from state rows; frames open at the end close at the last time; \
sorted by exclusive time. messages: per sender and receiver (--by comm: per communicator), count, \
bytes and min, mean, max transfer time, from msg rows or halves paired as trace-match does. \
counters: per location and counter, samples, min, max, mean, time-weighted mean (each value held \
until the next sample; means in the shortest decimal of their double, from the values' exact \
sum), first, last. Scale-out: split a trace by location (trace-filter -l, \
or per Pallas archive), run `trace-stat REPORT --partial -o part.N` on each part (GNU parallel, a \
Slurm array, xargs -P), then `trace-stat REPORT --merge part.*`: exact figures equal one run \
over the whole; quantiles too (the sketch merges exactly). profile, states, messages (of msg \
rows: run trace-match first), counters and resources (split by resource) merge. states: per container (a lane counts for its container), \
state type and value, frames and total time. With --threads auto the report runs on the reading \
thread (it does less per row than handing the row over costs); the reader still puts its helpers to work. resources: per TRACE resource, claims, claimed \
time, busy time (union of the claims), amount x time, utilisation of the capacity over the \
trace's span, peak concurrent amount, and Little's law (throughput per second, mean time in the \
system, L = throughput x mean time, and L measured). Locations and types print as the trace names them: a container's name (where names repeat, \
its path of names from the root, then ` [ID]` if even those repeat; a Pajé lane as its \
container), a type's name for a Pajé type id; --ids prints the stream's ids instead, for joins \
with the stream. Times are integer ns, or exact decimals with --unit.";

/// What the command holds in memory, for its man page (not `--help`).
pub const MEMORY: &str = "\
A few numbers per key, and the open frames.";

/// Print a report over a trace: per-function profile, messages, counters,
/// or time per state.
#[derive(Parser, Debug)]
#[command(name = "trace-stat", version, after_help = EXAMPLES)]
pub struct Args {
    /// The report: profile (the default), messages, counters, states,
    /// resources or summary. A first argument that names no report is the
    /// first input.
    #[arg(value_name = "REPORT", value_parser = ReportOrInput)]
    pub report: Option<String>,

    /// Inputs.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output.
    #[command(flatten)]
    pub table: TableArgs,

    /// What a row is per: profile: name, loc,name, cat,name or loc;
    /// messages: pair (sender and receiver) or comm.
    #[arg(long, value_name = "KEY",
          value_parser = PossibleValuesParser::new(By::KEYS.into_iter().chain(messages::KEYS)))]
    pub by: Option<String>,

    /// profile: instead of the figures, a histogram of each name's durations
    /// in up to BINS log-spaced bins (low, high, count: gnuplot-ready), their
    /// edges on the sketch's 1 % buckets so each count is exact for its
    /// range (low and high both in the bin; fewer bins where the span holds
    /// fewer buckets).
    #[arg(long, value_name = "BINS", value_parser = clap::value_parser!(u16).range(1..))]
    pub histogram: Option<u16>,

    /// Write the report's state (sums, counts, extremes, sketch buckets) instead
    /// of its table, to be merged with --merge: run it on parts of a trace
    /// split by location (profile, states, messages of msg rows, resources).
    #[arg(long, conflicts_with = "merge")]
    pub partial: bool,

    /// The inputs are files written with --partial (by the same report and
    /// --by): print the report of all of them, as one run over the whole
    /// input would.
    #[arg(long)]
    pub merge: bool,

    /// Print locations and types as the stream's ids (the `loc` and `cat`
    /// columns, for joins with the stream) instead of their declared names.
    #[arg(long)]
    pub ids: bool,

    /// At most N rows, the largest first.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    /// Unit of times and durations: ns (integers, the default), us, ms or s
    /// (exact decimals).
    #[arg(long, value_name = "UNIT", value_parser = PossibleValuesParser::new(["ns", "us", "ms", "s"]))]
    pub unit: Option<String>,
}

/// The REPORT argument: any word (a file name is an input), with the
/// reports as its values for completion and help.
#[derive(Clone)]
struct ReportOrInput;

impl clap::builder::TypedValueParser for ReportOrInput {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            REPORTS.iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

/// The report the REPORT argument names (the default when there is none);
/// a REPORT that names no report but a file is the first input. A word
/// that is no file is taken for a misspelt report.
fn take_report(report: Option<String>, inputs: &mut Vec<String>) -> Result<&'static str> {
    let Some(first) = report else {
        return Ok(REPORTS[0]);
    };
    let exists = std::path::Path::new(&first).exists();
    match REPORTS.iter().find(|r| **r == first) {
        Some(&report) if !exists => Ok(report),
        None if !exists
            && first.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
            && first != "-" =>
        {
            Err(Error::Usage(format!(
                "unknown report `{first}` (reports: {})",
                REPORTS.join(", ")
            )))
        }
        _ => {
            inputs.insert(0, first);
            Ok(REPORTS[0])
        }
    }
}

/// The report `name` with its options.
fn open_report(name: &str, args: &Args, env: &Env) -> Result<Labelled> {
    let labels = Labels::new(env.symbols.clone(), args.ids);
    let by = args.by.as_deref();
    if args.histogram.is_some() && name != "profile" {
        return Err(Error::Usage(format!(
            "--histogram is for the profile report, not {name}"
        )));
    }
    let bad_by = |by: &str| Error::Usage(format!("--by {by} does not apply to the {name} report"));
    let report: Box<dyn Report> = match (name, by) {
        ("profile", by) => {
            let key = by.unwrap_or("name");
            let by = By::parse(key).ok_or_else(|| bad_by(key))?;
            let bins = args.histogram.map(usize::from);
            let profile = Profile::new(by, bins, labels.clone());
            Box::new(profile.warn_when_empty(env.warnings.clone()))
        }
        ("messages", None | Some("pair")) => Box::new(Messages::new(false, labels.clone())),
        ("messages", Some("comm")) => Box::new(Messages::new(true, labels.clone())),
        (_, Some(by)) => return Err(bad_by(by)),
        ("counters", None) => Box::new(Counters::new(labels.clone(), env.warnings.clone())),
        ("states", None) => Box::new(States::new(labels.clone())),
        ("resources", None) => Box::new(Resources::new(env.symbols.clone())),
        ("summary", None) => Box::new(Summary::new(labels.clone())),
        _ => return Err(Error::Usage(format!("unknown report `{name}`"))),
    };
    Ok(Labelled::new(report, labels))
}

/// Runs `trace-stat`: the report is the sink; message halves are paired
/// first for the messages report.
pub fn run(mut args: Args, env: &Env) -> Result<()> {
    let name = take_report(args.report.take(), &mut args.input.inputs)?;
    let report = open_report(name, &args, env)?;
    let mut sink = Matcher::new(
        report,
        Unmatched::Drop,
        env.symbols.clone(),
        env.warnings.clone(),
    );
    if args.merge {
        merge_partials(&args, name, sink.next_mut().report())?;
    } else {
        // A report does less per row than handing the row to a second thread
        // costs (bench/stat.sh): auto means one thread for the pump here; the
        // reader goes by the arguments as given.
        let mut run = args.table.run.clone();
        if run.threads == ThreadsArg::Auto {
            run.threads = ThreadsArg::Count(NonZeroUsize::MIN);
        }
        let pipeline = Pipeline::open(&args.input, env, &args.table.run)?;
        check_output_is_not_an_input(args.table.output.as_deref(), &args.input.named())?;
        // Halves are paired first for the messages report (others ignore msg rows).
        if matches!(name, "messages" | "summary") {
            pipeline.run(&mut sink, &run)?;
            let matching = sink.summary().clone();
            sink.next_mut().report().note_matching(&matching);
        } else {
            pipeline.run(sink.next_mut(), &run)?;
        }
    }
    let report = sink.next_mut().report();
    if args.partial {
        let out = open_output(args.table.output.as_deref(), false)?;
        return partial_of(&args, name).write(report, out);
    }
    let mut table = args.table.open(&report.columns())?;
    let time_factor = match args.unit.as_deref() {
        Some("us") => 1_000,
        Some("ms") => 1_000_000,
        Some("s") => 1_000_000_000,
        _ => 1,
    };
    let style = Style {
        time_factor,
        top: args.top,
    };
    report.print(&mut table, &style)?;
    table.finish()
}

/// Adds every partial file named as an input to `report`.
fn merge_partials(args: &Args, name: &str, report: &mut dyn Report) -> Result<()> {
    let of = partial_of(args, name);
    for file in &args.input.inputs {
        let f = std::fs::File::open(file).map_err(|e| Error::io(file.as_str(), e))?;
        of.merge(file, std::io::BufReader::new(f), report)?;
    }
    Ok(())
}

/// Which report and `--by` the partial files are of.
fn partial_of<'a>(args: &'a Args, name: &'a str) -> PartialOf<'a> {
    PartialOf {
        report: name,
        by: args.by.as_deref().unwrap_or(""),
    }
}
