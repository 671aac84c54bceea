//! `trace-stat`: a report table over a stream (profile, messages, counters,
//! states).

use std::num::NonZeroUsize;

use clap::builder::PossibleValuesParser;
use clap::Parser;

use crate::cli::{sum_frames, Env, InputArgs, Pipeline, TableArgs, ThreadsArg};
use crate::error::{Error, Result};
use crate::io::{check_output_is_not_an_input, open_output};
use crate::pipe::{RecordSink, Summed};
use crate::stages::matcher::{Matcher, Unmatched};
use crate::stats::counters::Counters;
use crate::stats::critical::CriticalPath;
use crate::stats::imbalance::{Imbalance, Kinds};
use crate::stats::labels::Labels;
use crate::stats::messages::{self, Cells, Messages, View};
use crate::stats::partial::PartialOf;
use crate::stats::profile::{By, Profile};
use crate::stats::resources::Resources;
use crate::stats::states::States;
use crate::stats::summary::Summary;
use crate::stats::timeline::{Bins, TimeSpan, Timeline, MAX_BINS};
use crate::stats::waits::{self, Waits};
use crate::stats::{Labelled, Report, Style};

/// The reports, the first being the default.
pub const REPORTS: [&str; 10] = [
    "profile",
    "messages",
    "counters",
    "states",
    "resources",
    "summary",
    "imbalance",
    "timeline",
    "waits",
    "critical-path",
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
  trace-stat waits --by pair,pattern run/            wait states: who waited for whom, how long
  trace-stat imbalance --per-location run/           functions by max - mean over the locations
  trace-stat timeline --bins 50 --wide run/          time per function in 50 bins, for gnuplot
  trace-stat messages --matrix --count run/          the sender x receiver matrix
  trace-stat critical-path --segments run/           the chain of work and waits that sets the run's length

REPORT, the first argument when it names one, is profile (the default), messages, counters, \
states, resources, summary, waits, imbalance, timeline or critical-path. summary: first and last time, span, \
rows per kind, locations (those holding rows, not the containers above them), messages and unmatched halves, the total wait of each pattern, the five \
functions with the most exclusive time. waits: Scalasca's wait states, count and time per pattern \
(--by loc,pattern, name,pattern or pair,pattern: who waited for whom): late-sender (a receive, or \
the wait completing it, entered before its send: from its enter to the send's), late-receiver (a \
send lasting past its receive's enter: from its enter to the receive's), wait-nxn (barriers and \
all-to-all collectives: each waits for the last arrival), late-broadcast (a non-root arriving \
before the root), early-reduce (a root arriving before the last non-root); a half's frame is the \
innermost open on its location; a frame completing several receives waits once, for the latest \
sender; it needs the whole trace in one run (no --partial). imbalance: per function, its time \
(exclusive; --inclusive) over every location with frames (zero where it did not run): mean, min, \
max and where, max/mean, max - mean (what evening out the work would save), largest first. \
timeline: per time bin and function (--states: state type and value), exclusive time summed \
over locations; --bins N (default 100) over the span found by a first pass (inputs must be \
files), or --bin WIDTH from time 0 in one pass (mergeable). critical-path: walking back from \
the location that ends last (ties: the first by id) along its own time, each stretch in its \
innermost frame, crossing at a receive that waited for its sender (late sender) to the sender at \
the send, and at a collective wait to the last (or root) arrival at its arrival, down to the \
trace's first time: time per function on the path (it adds up to the span), or --segments; \
computed forward in one pass, a crossing found more than 256 credits after the fact on either \
side is not followed; it needs the whole trace in one run (no --partial). profile: per name, the frames' count, inclusive and exclusive time (exclusive: minus the \
direct children; a recursive name counts each outermost frame once in inclusive time), min, mean, \
max and the p50, p90, p99 of their durations (within 1 %: a logarithmic sketch); from each \
location's enter/leave stack and from state rows; frames open at the end close at the last time; \
sorted by exclusive time; of one Pallas trace read whole (no --loc, not --by loc), summed from the \
durations its grammar stores per block without reading the events where the grammar tells \
(lossless, every frame a block of its own, no recursion, each block run directly in frames of one \
name: docs/formats.md), else from the rows, with the same figures. messages: per sender and receiver (--by comm: per communicator), count, \
bytes and min, mean, max transfer time, from msg rows or halves paired as trace-match does. \
counters: per location and counter, samples, min, max, mean, time-weighted mean (each value held \
until the next sample; means in the shortest decimal of their double, from the values' exact \
sum), first, last. Scale-out: split a trace by location (trace-filter -l, \
or per Pallas archive), run `trace-stat REPORT --partial -o part.N` on each part (GNU parallel, a \
Slurm array, xargs -P), then `trace-stat REPORT --merge part.*`: exact figures equal one run \
over the whole; quantiles too (the sketch merges exactly). profile, states, messages (of msg \
rows: run trace-match first), counters, imbalance, timeline --bin and resources (split by \
resource) merge. states: per container (a lane counts for its container), \
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
A few numbers per key, and the open frames; timeline: each function's bins; waits: the halves in \
flight; critical-path: per location its path's time per function and its last 256 credits \
(--segments: the paths).";

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
    /// messages: pair (sender and receiver) or comm; waits: pattern,
    /// loc,pattern, name,pattern or pair,pattern.
    #[arg(long, value_name = "KEY",
          value_parser = PossibleValuesParser::new(
              By::KEYS.into_iter().chain(messages::KEYS).chain(waits::By::KEYS)))]
    pub by: Option<String>,

    /// messages: a histogram of message sizes in up to BINS log-spaced bins
    /// (low, high, count). profile: instead of the figures, a histogram of each name's durations
    /// in up to BINS log-spaced bins (low, high, count: gnuplot-ready), their
    /// edges on the sketch's 1 % buckets so each count is exact for its
    /// range (low and high both in the bin; fewer bins where the span holds
    /// fewer buckets).
    #[arg(long, value_name = "BINS", value_parser = clap::value_parser!(u16).range(1..))]
    pub histogram: Option<u16>,

    /// messages: a sender × receiver matrix instead of rows, one row per
    /// sender and a column per receiver (every location that sent or
    /// received, in natural order), zeros filled: bytes, or with --count
    /// messages, with --time the transfer time.
    #[arg(long)]
    pub matrix: bool,

    /// messages --matrix: count messages instead of bytes.
    #[arg(long, requires = "matrix", conflicts_with = "time")]
    pub count: bool,

    /// messages --matrix: sum transfer times instead of bytes.
    #[arg(long, requires = "matrix")]
    pub time: bool,

    /// imbalance: inclusive times instead of exclusive ones.
    #[arg(long)]
    pub inclusive: bool,

    /// imbalance: one more column per location (in natural order) with
    /// the function's time there, for heat maps.
    #[arg(long)]
    pub per_location: bool,

    /// imbalance: compare the locations of these kinds (their container
    /// row's cat: thread, gpu, metric, or a Pajé container type), or all;
    /// by default every kind but accelerator streams (gpu) and metric
    /// recorders (metric).
    #[arg(long, value_name = "KIND,...", value_delimiter = ',')]
    pub kinds: Option<Vec<String>>,

    /// timeline: cut the run (first to last time) into N equal bins (the
    /// default: 100). The span is read in a first pass, so the inputs must
    /// be files or folders, and the report cannot be --partial.
    #[arg(long, value_name = "N", conflicts_with = "bin",
          value_parser = clap::value_parser!(u64).range(1..=MAX_BINS))]
    pub bins: Option<u64>,

    /// timeline: bins of this width (10ms, 1s, 5000: ns), from the trace's
    /// origin (time 0): one pass, any input, and parts merge. At most
    /// 1 000 000 bins are printed: wider is a usage error.
    #[arg(long, value_name = "WIDTH", value_parser = parse_width)]
    pub bin: Option<i64>,

    /// critical-path: the path's segments (location, function, start,
    /// end) in time order instead of its time per function.
    #[arg(long)]
    pub segments: bool,

    /// timeline: per state type and value instead of per function.
    #[arg(long)]
    pub states: bool,

    /// timeline: one row per bin and one column per function (the --top
    /// heaviest, the rest in `other`), for gnuplot's rowstacked histograms.
    #[arg(long)]
    pub wide: bool,

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
    check_options(name, args)?;
    let bad_by = |by: &str| Error::Usage(format!("--by {by} does not apply to the {name} report"));
    let report: Box<dyn Report> = match (name, by) {
        ("profile", _) => Box::new(open_profile(args, env, labels.clone())?),
        ("messages", Some("comm")) if args.matrix || args.histogram.is_some() => {
            return Err(Error::Usage(
                "--by comm does not go with --matrix or --histogram (they are per sender and receiver)".into(),
            ))
        }
        ("messages", None | Some("pair")) => Box::new(Messages::new(message_view(args), labels.clone())),
        ("messages", Some("comm")) => Box::new(Messages::new(View::Comms, labels.clone())),
        ("waits", by) => {
            let key = by.unwrap_or("pattern");
            let by = waits::By::parse(key).ok_or_else(|| bad_by(key))?;
            Box::new(Waits::new(by, labels.clone(), env.warnings.clone()))
        }
        ("critical-path", None) => Box::new(CriticalPath::new(
            args.segments,
            labels.clone(),
            env.warnings.clone(),
        )),
        ("timeline", None) => Box::new(open_timeline(args, env, labels.clone())?),
        ("imbalance", None) => Box::new(Imbalance::new(
            labels.clone(),
            (args.inclusive, args.per_location),
            Kinds::parse(args.kinds.as_deref()),
            env.warnings.clone(),
        )),
        (_, Some(by)) => return Err(bad_by(by)),
        ("counters", None) => Box::new(Counters::new(labels.clone(), env.warnings.clone())),
        ("states", None) => Box::new(States::new(labels.clone())),
        ("resources", None) => Box::new(Resources::new(env.symbols.clone())),
        ("summary", None) => Box::new(Summary::new(labels.clone(), env.warnings.clone())),
        _ => return Err(Error::Usage(format!("unknown report `{name}`"))),
    };
    Ok(Labelled::new(report, labels))
}

/// The profile report with its options.
fn open_profile(args: &Args, env: &Env, labels: Labels) -> Result<Profile> {
    let key = args.by.as_deref().unwrap_or("name");
    let by = By::parse(key)
        .ok_or_else(|| Error::Usage(format!("--by {key} does not apply to the profile report")))?;
    let bins = args.histogram.map(usize::from);
    Ok(Profile::new(by, bins, labels).warn_when_empty(env.warnings.clone()))
}

/// The profile summed by the reader from the trace's structure (a Pallas
/// grammar's durations per sequence) without reading its rows, when the
/// input and the options allow it (docs/formats.md says when).
fn summed_profile(args: &Args, env: &Env) -> Result<Option<Labelled>> {
    check_options("profile", args)?;
    let labels = Labels::new(env.symbols.clone(), args.ids);
    let mut profile = open_profile(args, env, labels.clone())?;
    if args.merge || !profile.takes_frame_sums() {
        return Ok(None);
    }
    match sum_frames(&args.input, env, &args.table.run, &mut profile)? {
        Summed::Done => {
            profile.finish()?;
            Ok(Some(Labelled::new(Box::new(profile), labels)))
        }
        Summed::Not(_) => Ok(None),
    }
}

/// Refuses options given to a report they do not apply to.
fn check_options(name: &str, args: &Args) -> Result<()> {
    let given: [(&str, bool, &[&str]); 10] = [
        ("--segments", args.segments, &["critical-path"]),
        ("--bins", args.bins.is_some(), &["timeline"]),
        ("--bin", args.bin.is_some(), &["timeline"]),
        ("--states", args.states, &["timeline"]),
        ("--wide", args.wide, &["timeline"]),
        (
            "--histogram",
            args.histogram.is_some(),
            &["profile", "messages"],
        ),
        ("--matrix", args.matrix, &["messages"]),
        ("--inclusive", args.inclusive, &["imbalance"]),
        ("--per-location", args.per_location, &["imbalance"]),
        ("--kinds", args.kinds.is_some(), &["imbalance"]),
    ];
    for (option, set, reports) in given {
        if set && !reports.contains(&name) {
            return Err(Error::Usage(format!(
                "{option} is for the {} report, not {name}",
                reports.join(" and ")
            )));
        }
    }
    Ok(())
}

/// A bin width: a duration of at least 1 ns.
fn parse_width(text: &str) -> std::result::Result<i64, String> {
    let width = crate::stages::window::parse_time(text)?;
    match width > 0 {
        true => Ok(width),
        false => Err(format!("a bin is at least 1 ns wide, not `{text}`")),
    }
}

/// The timeline report: bins of `--bin` from time 0, or `--bins N` over
/// the span a first pass over the inputs finds.
fn open_timeline(args: &Args, env: &Env, labels: Labels) -> Result<Timeline> {
    let timeline = |bins| Timeline::new(bins, args.states, args.wide, args.top, labels);
    if let Some(width) = args.bin {
        return Ok(timeline(Bins { origin: 0, width }));
    }
    if args.partial || args.merge {
        return Err(Error::Usage(
            "timeline --partial and --merge need --bin WIDTH: parts have spans of their own".into(),
        ));
    }
    let inputs = args.input.named();
    if let Some(once) = inputs.iter().find(|i| !is_rereadable(i)) {
        return Err(Error::Usage(format!(
            "timeline --bins reads its inputs twice (the span, then the bins), and `{once}` is not a file: give --bin WIDTH"
        )));
    }
    let mut span = TimeSpan::default();
    Pipeline::open(&args.input, env, &args.table.run)?.run(&mut span, &args.table.run)?;
    let count = args.bins.unwrap_or(DEFAULT_BINS);
    let (first, last) = span.span.unwrap_or_default();
    Ok(timeline(Bins::covering(first, last, count)).print_bins(Some(count)))
}

/// Bins of `timeline` without --bins or --bin.
const DEFAULT_BINS: u64 = 100;

/// Whether `input` can be read a second time: a file or a folder.
fn is_rereadable(input: &str) -> bool {
    input != "-" && std::fs::metadata(input).is_ok_and(|m| m.is_file() || m.is_dir())
}

/// How the messages report prints, from its options.
fn message_view(args: &Args) -> View {
    match (args.matrix, args.histogram) {
        (true, _) if args.count => View::Matrix(Cells::Count),
        (true, _) if args.time => View::Matrix(Cells::Time),
        (true, _) => View::Matrix(Cells::Bytes),
        (false, Some(bins)) => View::Histogram(usize::from(bins)),
        (false, None) => View::Pairs,
    }
}

/// Runs `trace-stat`: the report is the sink; message halves are paired
/// first for the messages report.
pub fn run(mut args: Args, env: &Env) -> Result<()> {
    let name = take_report(args.report.take(), &mut args.input.inputs)?;
    if name == "profile" {
        if let Some(mut summed) = summed_profile(&args, env)? {
            check_output_is_not_an_input(args.table.output.as_deref(), &args.input.named())?;
            return print_report(&args, name, summed.report());
        }
    }
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
        // Halves are paired first for the messages report (the summary
        // pairs them itself, with its wait states; others ignore them).
        if name == "messages" {
            pipeline.run(&mut sink, &run)?;
        } else {
            pipeline.run(sink.next_mut(), &run)?;
        }
    }
    print_report(&args, name, sink.next_mut().report())
}

/// Prints `report` as the options say: its table, or its partial state.
fn print_report(args: &Args, name: &str, report: &mut dyn Report) -> Result<()> {
    if args.partial {
        let out = open_output(args.table.output.as_deref(), false)?;
        return partial_of(args, name).write(report, out);
    }
    let columns = report.columns();
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut table = args.table.open(&columns)?;
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
    // A timeline per state keys its rows otherwise: its partials say so.
    let states = name == "timeline" && args.states;
    PartialOf {
        report: name,
        by: args
            .by
            .as_deref()
            .unwrap_or(if states { "states" } else { "" }),
    }
}
