//! `trace-stat`: a report table over a stream. The reports and what each
//! takes are in [`registry`]; this module wires the command.

pub mod registry;

use clap::builder::PossibleValuesParser;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args as _, CommandFactory, FromArgMatches, Parser};

use crate::cli::{sum_frames, Env, InputArgs, Pipeline, TableArgs, ThreadsArg};
use crate::error::{Error, Result};
use crate::io::{check_output_is_not_an_input, open_output};
use crate::pipe::{RecordSink, Summed};
use crate::stages::matcher::{Matcher, Unmatched};
use crate::stats::compare::{Comparison, Metric, Run, Thresholds};
use crate::stats::labels::Labels;
use crate::stats::partial::{is_partial_file, PartialOf};
use crate::stats::profile::{Profile, ProfileKey};
use crate::stats::timeline::messages::MessageTimeline;
use crate::stats::timeline::{Bins, Per, TimeSpan, Timeline, MAX_BINS};
use crate::stats::{Labelled, Report, Style};
use crate::table::{TableFormat, TableWriter};
use registry::{open_profile, Inputs, ReportSpec, REPORTS, REPORT_OPTIONS};

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
  trace-stat timeline --messages --bin 1ms run/      bytes sent per millisecond and rank pair
  trace-stat critical-path --segments run/           the chain of work and waits that sets the run's length
  trace-stat top -n 5 --name '^MPI_' run/            the five longest MPI calls: where and when
  trace-stat calltree --svg run/ > run.svg           a flame graph of the call paths
  trace-stat compare --fail-over 10 --min 1ms last.partial run/   exit 1 if a function got 10 % slower

REPORT, the first argument, names the report (profile when the first argument is not a report); \
its options follow it, and `trace-stat REPORT --help` tells what it computes and which options it \
takes. A file whose name is a report's is given as ./NAME.

Scale-out: split a trace by location (trace-filter -l, or per Pallas archive), run `trace-stat \
REPORT --partial -o part.N` on each part (GNU parallel, a Slurm array, xargs -P), then `trace-stat \
REPORT --merge part.*`: exact figures equal one run over the whole; quantiles too (the sketch \
merges exactly). The reports that merge take --partial and --merge; the others need the whole \
trace in one run.

With --threads auto the report runs on the reading thread (it does less per row than handing \
the row over costs); the reader still puts its helpers to work. Locations and types print as \
the trace names them: a container's name (where names repeat, its path of names from the root, \
then ` [ID]` if even those repeat; a Pajé lane as its container), a type's name for a Pajé type \
id; --ids prints the stream's ids instead, for joins with the stream. Times are integer ns, or \
exact decimals with --unit.";

/// What the command holds in memory, for its man page (not `--help`).
pub const MEMORY: &str = "\
A few numbers per key, and the open frames; timeline: each function's bins (--messages: each \
pair's); waits: the halves in flight; critical-path: per location its path's time per function \
and its last 256 credits (--segments: the paths); top: 2N frames; calltree: one node per path; \
compare: the keys of both runs.";

/// Print a report over a trace: time per function, messages, counters,
/// states, resources, wait states, imbalance, a timeline or the critical
/// path.
#[derive(Parser, Debug)]
#[command(name = "trace-stat", version, after_help = EXAMPLES)]
pub struct Args {
    /// Inputs.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output.
    #[command(flatten)]
    pub table: TableArgs,

    /// What a row is per (the default first).
    #[arg(long, value_name = "KEY")]
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

    /// profile: instead of the times, each counter's change over the
    /// frames, per key and counter: frames counted, inclusive and
    /// exclusive change (counters sampled at the frames' enter and leave,
    /// as Score-P records its metrics).
    #[arg(long, conflicts_with = "histogram")]
    pub counters: bool,

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

    /// timeline: message volume instead of time: per bin and sender and
    /// receiver (--by pair, the default) or sender (--by loc), the messages
    /// sent and their bytes, binned by send time (send halves and msg rows).
    #[arg(long, conflicts_with_all = ["states", "wide"])]
    pub messages: bool,

    /// timeline: one row per bin and one column per function (the --top
    /// heaviest, the rest in `other`), for gnuplot's rowstacked histograms.
    #[arg(long)]
    pub wide: bool,

    /// Write the report's state (sums, counts, extremes, sketch buckets)
    /// instead of its table, to be merged with --merge: run it on parts of
    /// a trace split by location.
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

    /// At most N rows, the largest first (top: the N longest frames,
    /// default 10).
    #[arg(short = 'n', long, value_name = "N")]
    pub top: Option<usize>,

    /// calltree: the folded stacks flame-graph tools read (flamegraph.pl,
    /// inferno, speedscope): one line per path with exclusive time, `a;b;c
    /// TIME`, no header.
    #[arg(long, conflicts_with_all = ["csv", "json"])]
    pub folded: bool,

    /// calltree: a flame graph of the call paths, as a self-contained SVG
    /// (one box per path, as wide as its inclusive time; names and times
    /// in the titles), drawn by the inferno crate from the folded stacks.
    #[arg(long, conflicts_with_all = ["csv", "json", "folded"])]
    pub svg: bool,

    /// compare: what is compared: exclusive time (the default), inclusive
    /// time or the count of frames.
    #[arg(long, value_name = "METRIC", value_parser = PossibleValuesParser::new(Metric::NAMES))]
    pub metric: Option<String>,

    /// compare: exit 1 when a key present in both runs grew by more than
    /// PCT percent of its base value (a key whose base value is 0 and grew:
    /// always), naming the one that grew most on standard error: a CI gate.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub fail_over: Option<f64>,

    /// compare: leave out the keys whose inclusive time is below TIME
    /// (10us, 1ms, 5000: ns) in both runs, as noise.
    #[arg(long, value_name = "TIME", value_parser = parse_width)]
    pub min: Option<i64>,

    /// top: only frames whose name matches this regular expression
    /// (anywhere in the name: ^...$ to match it whole).
    #[arg(long, value_name = "REGEX")]
    pub name: Option<String>,

    /// Unit of times and durations: ns (integers, the default), us, ms or s
    /// (exact decimals).
    #[arg(long, value_name = "UNIT", value_parser = PossibleValuesParser::new(["ns", "us", "ms", "s"]))]
    pub unit: Option<String>,
}

/// `trace-stat` as parsed: the report its first argument names and the
/// arguments given to it.
pub struct Stat {
    /// The report.
    pub report: &'static ReportSpec,
    /// Its arguments.
    pub args: Args,
    /// Whether the first argument named the report (else it is the default).
    pub named: bool,
}

impl CommandFactory for Stat {
    /// The command with one subcommand per report, each taking the options
    /// the registry gives it (the others hidden, and refused when given);
    /// without one, the first report's.
    fn command() -> clap::Command {
        stat_command(Taken::Hide)
    }

    fn command_for_update() -> clap::Command {
        Self::command()
    }
}

/// What a report's command does with the options the report does not take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// Hidden, so they parse and are refused by name
    /// ([`refuse_options_not_taken`]).
    Hide,
    /// Left out, for completions (which list hidden options too).
    Omit,
}

/// `trace-stat` as its completions and man pages show it: each report
/// with only the options it takes.
pub fn documented_command() -> clap::Command {
    stat_command(Taken::Omit)
}

/// The command: the first report's options, and a subcommand per report.
fn stat_command(taken: Taken) -> clap::Command {
    let reports = REPORTS.iter().map(|spec| {
        report_command(
            Args::augment_args(clap::Command::new(spec.name)),
            spec,
            taken,
        )
        .about(spec.summary)
        .long_about(format!("{}\n\n{}", spec.summary, spec.about))
        .override_usage(format!("trace-stat {} [OPTIONS] [INPUT]...", spec.name))
    });
    // Options every report takes may come before the report's name too.
    let before_report = |arg: clap::Arg| {
        let long = arg.get_long().unwrap_or_default();
        let shared = !arg.is_positional() && !is_report_option(long);
        arg.global(shared)
    };
    report_command(Args::command(), &REPORTS[0], taken)
        .mut_args(before_report)
        .subcommands(reports)
        .subcommand_value_name("REPORT")
        .subcommand_help_heading("Reports")
        .disable_help_subcommand(true)
        .override_usage("trace-stat [REPORT] [OPTIONS] [INPUT]...")
}

/// `cmd` taking what `spec` takes: its `--by` keys, its options, and
/// `--partial`/`--merge` when it merges; the rest hidden or left out.
fn report_command(cmd: clap::Command, spec: &'static ReportSpec, taken: Taken) -> clap::Command {
    let cmd = cmd.mut_args(|arg| {
        let long = arg.get_long().unwrap_or_default();
        let takes = match long {
            "by" => !spec.keys.is_empty(),
            "partial" | "merge" => spec.mergeable,
            _ => !REPORT_OPTIONS.contains(&long) || spec.options.contains(&long),
        };
        match spec.keys.first() {
            Some(default) if long == "by" => arg
                .value_parser(PossibleValuesParser::new(spec.keys))
                .help(format!("What a row is per (default: {default})")),
            _ => arg.hide(!takes),
        }
    });
    match taken {
        Taken::Hide => cmd,
        Taken::Omit => without_hidden_options(&cmd),
    }
}

/// A copy of `cmd`'s name, texts and shown arguments.
fn without_hidden_options(cmd: &clap::Command) -> clap::Command {
    let shown = cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned();
    let mut copy = clap::Command::new(cmd.get_name().to_string()).args(shown);
    if let Some(version) = cmd.get_version() {
        copy = copy.version(version.to_string());
    }
    if let Some(about) = cmd.get_about() {
        copy = copy.about(about.clone());
    }
    if let Some(after) = cmd.get_after_help() {
        copy = copy.after_help(after.clone());
    }
    copy
}

impl FromArgMatches for Stat {
    fn from_arg_matches(top: &ArgMatches) -> std::result::Result<Stat, clap::Error> {
        let matches = top;
        let (report, matches, named) = match matches.subcommand() {
            Some((name, sub)) => match registry::find(name) {
                Some(report) => (report, sub, true),
                None => return Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand)),
            },
            None => (&REPORTS[0], matches, false),
        };
        if named {
            refuse_report_options_before_report(report, top)?;
        }
        refuse_options_not_taken(report, matches)?;
        Ok(Stat {
            report,
            args: Args::from_arg_matches(matches)?,
            named,
        })
    }

    fn update_from_arg_matches(
        &mut self,
        matches: &ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        *self = Stat::from_arg_matches(matches)?;
        Ok(())
    }
}

/// Options whose values or presence depend on the report, beside
/// [`REPORT_OPTIONS`].
const BY_REPORT: [&str; 3] = ["by", "partial", "merge"];

/// Whether `long` names an option some reports take and others not.
fn is_report_option(long: &str) -> bool {
    BY_REPORT.contains(&long) || REPORT_OPTIONS.contains(&long)
}

/// A usage error for a report's own option given before its name (where
/// it would be the default report's).
fn refuse_report_options_before_report(
    report: &ReportSpec,
    top: &ArgMatches,
) -> std::result::Result<(), clap::Error> {
    let given =
        |long: &&&str| top.value_source(&long.replace('-', "_")) == Some(ValueSource::CommandLine);
    match BY_REPORT.iter().chain(REPORT_OPTIONS).find(given) {
        Some(option) => Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "--{option} goes after the report: trace-stat {} --{option} ...\n",
                report.name
            ),
        )),
        None => Ok(()),
    }
}

/// A usage error for each option given that `report` does not take.
fn refuse_options_not_taken(
    report: &ReportSpec,
    matches: &ArgMatches,
) -> std::result::Result<(), clap::Error> {
    let given = |long: &str| {
        matches.value_source(&long.replace('-', "_")) == Some(ValueSource::CommandLine)
    };
    let refuse =
        |msg: String| clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, msg + "\n");
    if let Some(option) = REPORT_OPTIONS
        .iter()
        .find(|o| given(o) && !report.options.contains(o))
    {
        let takers: Vec<&str> = REPORTS
            .iter()
            .filter(|r| r.options.contains(option))
            .map(|r| r.name)
            .collect();
        return Err(refuse(format!(
            "--{option} is for the {} report, not {}",
            takers.join(" and "),
            report.name
        )));
    }
    if let (true, Some(by)) = (report.keys.is_empty(), matches.get_one::<String>("by")) {
        return Err(refuse(format!(
            "--by {by} does not apply to the {} report",
            report.name
        )));
    }
    if !report.mergeable && (given("partial") || given("merge")) {
        return Err(refuse(format!(
            "the {} report cannot be merged (--partial, --merge)",
            report.name
        )));
    }
    Ok(())
}

/// With no report named, a first input that is no file but a word is
/// taken for a misspelt report, and a report's name among the inputs for a
/// report put after options.
fn check_inputs_name_no_report(inputs: &[String]) -> Result<()> {
    let exists = |i: &str| std::path::Path::new(i).exists();
    if let Some(report) = inputs
        .iter()
        .find(|i| registry::find(i).is_some() && !exists(i))
    {
        return Err(Error::Usage(format!(
            "the report comes first: trace-stat {report} [OPTIONS] [INPUT]..."
        )));
    }
    match inputs.first() {
        Some(first)
            if !exists(first)
                && first != "-"
                && first.chars().all(|c| c.is_ascii_alphabetic() || c == '-') =>
        {
            Err(Error::Usage(format!(
                "unknown report `{first}` (reports: {})",
                registry::names()
            )))
        }
        _ => Ok(()),
    }
}

/// A bin width or a duration: at least 1 ns.
fn parse_width(text: &str) -> std::result::Result<i64, String> {
    let width = crate::stages::window::parse_time(text)?;
    match width > 0 {
        true => Ok(width),
        false => Err(format!("a duration of at least 1 ns, not `{text}`")),
    }
}

/// A percentage: a finite number of at least 0.
fn parse_percent(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(pct) if pct.is_finite() && pct >= 0.0 => Ok(pct),
        _ => Err(format!("a percentage of at least 0, not `{text}`")),
    }
}

/// The compare report: the profiles of its two inputs, each a trace, a
/// stream or a profile's partial file (`--partial`, same `--by`).
fn open_compare(args: &Args, env: &Env) -> Result<Comparison> {
    let [base, new] = args.input.inputs.as_slice() else {
        return Err(Error::Usage(format!(
            "compare takes two inputs, BASE and NEW, not {}",
            args.input.inputs.len()
        )));
    };
    let key = args.by.as_deref().unwrap_or(ProfileKey::KEYS[0]);
    let by = ProfileKey::parse(key).ok_or_else(|| Error::Usage(format!("--by {key}")))?;
    let metric = Metric::parse(args.metric.as_deref().unwrap_or(Metric::NAMES[0]));
    let gate = Thresholds {
        fail_over: args.fail_over,
        min: args.min,
    };
    let runs = (profile_of(base, args, env)?, profile_of(new, args, env)?);
    Ok(Comparison::new(
        by.columns(),
        runs,
        metric.expect("checked by clap"),
        gate,
    ))
}

/// The profile of one of compare's inputs: a partial file merged, else a
/// trace or stream read (with the frames its reader sums where it can).
fn profile_of(input: &str, args: &Args, env: &Env) -> Result<Run> {
    let open = || -> Result<Labelled<Profile>> {
        let labels = Labels::new(env.symbols.clone(), args.ids);
        Ok(Labelled::new(Box::new(open_profile(args, env)?), labels))
    };
    let sink = match input != "-" && is_partial_file(input)? {
        true => {
            let mut sink = open()?;
            let file = std::fs::File::open(input).map_err(|e| Error::io(input, e))?;
            let of = PartialOf {
                report: registry::PROFILE.name,
                by: args.by.as_deref().unwrap_or(""),
            };
            of.merge(input, std::io::BufReader::new(file), sink.report())?;
            sink
        }
        false => {
            let input_args = InputArgs {
                inputs: vec![input.to_string()],
                ..args.input.clone()
            };
            fill(&open, &input_args, args, &registry::PROFILE, env)?
        }
    };
    let (profile, labels) = sink.parts();
    profile.totals(labels)
}

/// The timeline report: time per function or state (or with --messages,
/// message volume) in bins of `--bin` from time 0, or `--bins N` over the
/// span a first pass over the inputs finds.
fn open_timeline(args: &Args, env: &Env) -> Result<Box<dyn Report>> {
    let (bins, count) = timeline_bins(args, env)?;
    let by = args.by.as_deref();
    if args.messages {
        let per_pair = match by.unwrap_or("pair") {
            "pair" => true,
            "loc" => false,
            other => {
                return Err(Error::Usage(format!(
                    "--by {other} does not go with --messages: pair or loc"
                )))
            }
        };
        let report = MessageTimeline::new(bins, per_pair, count, env.symbols.clone());
        return Ok(Box::new(report));
    }
    let per = match (by, args.states) {
        (Some("pair"), _) => return Err(Error::Usage("--by pair goes with --messages".into())),
        (Some("loc"), true) => {
            return Err(Error::Usage("--by loc and --states: choose one".into()))
        }
        (Some("loc"), false) => Per::Loc,
        (_, true) => Per::State,
        (_, false) => Per::Name,
    };
    let timeline = Timeline::new(bins, per, args.wide, args.top, env.symbols.clone());
    Ok(Box::new(timeline.print_bins(count)))
}

/// The timeline's bins: of `--bin` from time 0, or `--bins N` (default
/// 100) over the span a first pass over the inputs finds, with N.
fn timeline_bins(args: &Args, env: &Env) -> Result<(Bins, Option<u64>)> {
    if let Some(width) = args.bin {
        return Ok((Bins { origin: 0, width }, None));
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
    Ok((Bins::covering(first, last, count), Some(count)))
}

/// Bins of `timeline` without --bins or --bin.
const DEFAULT_BINS: u64 = 100;

/// Whether `input` can be read a second time: a file or a folder.
fn is_rereadable(input: &str) -> bool {
    input != "-" && std::fs::metadata(input).is_ok_and(|m| m.is_file() || m.is_dir())
}

/// Runs `trace-stat`: the report is the sink, behind a matcher when it
/// pairs message halves.
pub fn run(stat: Stat, env: &Env) -> Result<()> {
    let Stat {
        report: spec,
        args,
        named,
    } = stat;
    if !named {
        check_inputs_name_no_report(&args.input.inputs)?;
    }
    let open = || -> Result<Labelled> {
        let labels = Labels::new(env.symbols.clone(), args.ids);
        Ok(Labelled::new((spec.open)(&args, env)?, labels))
    };
    let mut sink = match (spec.inputs, args.merge) {
        (Inputs::Own, _) => {
            check_output_is_not_an_input(args.table.output.as_deref(), &args.input.named())?;
            open()?
        }
        (Inputs::Stream, true) => {
            let mut sink = open()?;
            merge_partials(&args, spec, sink.report())?;
            sink
        }
        (Inputs::Stream, false) => fill(&open, &args.input, &args, spec, env)?,
    };
    print_report(&args, spec, &mut sink)
}

/// The report `open` gives, filled from `input`: with the frames its reader
/// sums where it can (a Pallas trace's profile), else with the rows of
/// its pipeline, halves paired first when the report asks.
pub fn fill<R: Report + ?Sized>(
    open: &dyn Fn() -> Result<Labelled<R>>,
    input: &InputArgs,
    args: &Args,
    spec: &ReportSpec,
    env: &Env,
) -> Result<Labelled<R>> {
    let output = args.table.output.as_deref();
    let mut sink = open()?;
    let summed = match sink.frame_sums() {
        Some(mut sums) => Some(sum_frames(input, env, &args.table.run, &mut sums)?),
        None => None,
    };
    match summed {
        Some(Summed::Done) => {
            sink.report().finish()?;
            check_output_is_not_an_input(output, &input.named())?;
            return Ok(sink);
        }
        // Rows are read after all: what the reader summed is dropped.
        Some(Summed::Not(_)) => sink = open()?,
        None => {}
    }
    let pipeline = Pipeline::open(input, env, &args.table.run)?;
    check_output_is_not_an_input(output, &input.named())?;
    if !spec.pairs_halves {
        pump_report(pipeline, &mut sink, args)?;
        return Ok(sink);
    }
    let mut matcher = Matcher::new(
        sink,
        Unmatched::Drop,
        env.symbols.clone(),
        env.warnings.clone(),
    );
    pump_report(pipeline, &mut matcher, args)?;
    Ok(matcher.into_inner())
}

/// Runs `pipeline` into the report `sink`. A report does less per row than
/// handing the row to a second thread costs (bench/stat.sh): with
/// `--threads auto` it runs on the reading thread (the readers still use
/// the pool); a count given puts it on a thread of its own as for a writer.
fn pump_report(pipeline: Pipeline, sink: &mut (dyn RecordSink + Send), args: &Args) -> Result<()> {
    let run = &args.table.run;
    match run.threads {
        ThreadsArg::Auto => pipeline.run_here(sink, run),
        ThreadsArg::Count(_) => pipeline.run(sink, run),
    }
}

/// Prints `report` as the options say: its table, or its partial state.
fn print_report(args: &Args, spec: &ReportSpec, report: &mut Labelled) -> Result<()> {
    if args.partial {
        let out = open_output(args.table.output.as_deref(), false)?;
        return partial_of(args, spec).write(report, out);
    }
    let columns = report.columns();
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut table = match args.folded || args.svg {
        true => {
            let out = open_output(args.table.output.as_deref(), false)?;
            TableWriter::new(out, TableFormat::Folded, &columns, false)?
        }
        false => args.table.open(&columns)?,
    };
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
fn merge_partials(args: &Args, spec: &ReportSpec, report: &mut dyn Report) -> Result<()> {
    let of = partial_of(args, spec);
    for file in &args.input.inputs {
        let f = std::fs::File::open(file).map_err(|e| Error::io(file.as_str(), e))?;
        of.merge(file, std::io::BufReader::new(f), report)?;
    }
    Ok(())
}

/// Which report and `--by` the partial files are of.
fn partial_of<'a>(args: &'a Args, spec: &'a ReportSpec) -> PartialOf<'a> {
    // A timeline per state, or of messages, keys its rows otherwise: its
    // partials say so (`messages,loc` is not the time per `loc`).
    let by = match (args.states, args.messages, args.by.as_deref()) {
        (true, _, _) => "states",
        (_, true, Some("loc")) => "messages,loc",
        (_, true, _) => "messages,pair",
        (_, _, by) => by.unwrap_or(""),
    };
    PartialOf {
        report: spec.name,
        by,
    }
}
