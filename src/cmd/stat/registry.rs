//! The reports `trace-stat` prints, one entry each: what `--help`, the man
//! pages, the completions and the option checks of the command are made
//! from. A new report is a module under `stats/` and one entry here.

use crate::cli::Env;
use crate::error::{Error, Result};
use crate::stats::calltree::{self, CallTree};
use crate::stats::counters::Counters;
use crate::stats::critical::CriticalPath;
use crate::stats::frame_counters::FrameCounters;
use crate::stats::imbalance::{Imbalance, Kinds};
use crate::stats::messages::{Cells, Messages, View};
use crate::stats::profile::{Profile, ProfileKey};
use crate::stats::resources::Resources;
use crate::stats::states::States;
use crate::stats::summary::Summary;
use crate::stats::top::{self, Top};
use crate::stats::waits::{self, Waits};
use crate::stats::Report;

use super::{open_timeline, Args};

/// One report: its name, its help, the options it takes and how it opens.
pub struct ReportSpec {
    /// The REPORT argument naming it.
    pub name: &'static str,
    /// One line, for the list of reports and its own `--help`.
    pub summary: &'static str,
    /// What it computes and how, for its `--help` and man page.
    pub about: &'static str,
    /// The values of `--by`, the default first; empty: no `--by`.
    pub keys: &'static [&'static str],
    /// The report's own options (long names) beside those every report takes.
    pub options: &'static [&'static str],
    /// Whether `--partial` and `--merge` apply.
    pub mergeable: bool,
    /// Whether message halves are paired (as trace-match does) before the
    /// report sees them.
    pub pairs_halves: bool,
    /// What it reads: the inputs as one stream, or its own way when it
    /// opens.
    pub inputs: Inputs,
    /// The report with its options (its locations and types are shown
    /// through the labels the command keeps in front of it).
    pub open: fn(&Args, &Env) -> Result<Box<dyn Report>>,
}

/// What a report reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inputs {
    /// The inputs merged into one stream (or, with `--merge`, partial files).
    Stream,
    /// Its inputs, each on its own, read when it opens (`compare`).
    Own,
}

/// Every report, the first being the default.
pub const REPORTS: &[ReportSpec] = &[
    PROFILE,
    MESSAGES,
    COUNTERS,
    STATES,
    RESOURCES,
    SUMMARY,
    IMBALANCE,
    TIMELINE,
    WAITS,
    CRITICAL_PATH,
    TOP,
    CALLTREE,
    COMPARE,
];

/// The options some reports take and others not (long names): a report not
/// listing one refuses it.
pub const REPORT_OPTIONS: &[&str] = &[
    "histogram",
    "matrix",
    "count",
    "time",
    "inclusive",
    "per-location",
    "kinds",
    "bins",
    "bin",
    "segments",
    "states",
    "wide",
    "name",
    "folded",
    "svg",
    "metric",
    "fail-over",
    "min",
    "messages",
    "counters",
];

/// The report called `name`.
pub fn find(name: &str) -> Option<&'static ReportSpec> {
    REPORTS.iter().find(|r| r.name == name)
}

/// The names of every report, comma-separated.
pub fn names() -> String {
    let names: Vec<&str> = REPORTS.iter().map(|r| r.name).collect();
    names.join(", ")
}

/// The profile report, which `compare` runs on each of its inputs.
pub const PROFILE: ReportSpec = ReportSpec {
    name: "profile",
    summary: "time per function: count, inclusive and exclusive time, quantiles",
    about:
        "Per name, the frames' count, inclusive and exclusive time (exclusive: minus the direct \
children; a recursive name counts each outermost frame once in inclusive time), min, mean, max \
and the p50, p90, p99 of their durations (within 1 %: a logarithmic sketch); from each \
location's enter/leave stack and from state rows; frames open at the end close at their \
location's last time; sorted by exclusive time. Of one Pallas trace read whole (no --loc, not --by loc), summed \
from the durations its grammar stores per block without reading the events where the grammar \
tells (lossless, every frame a block of its own, no recursion, each block run directly in frames \
of one name: docs/formats.md), else from the rows, with the same figures. --histogram BINS: \
instead of the figures, each name's durations in up to BINS log-spaced bins (low, high, count), \
their edges on the sketch's 1 % buckets so each count is exact for its range. --counters: \
instead of the times, per key and counter, the frames counted and the counter's change from \
their enter to their leave summed (inclusive) and less their direct children's (exclusive): \
counters read at frame boundaries, as Score-P records its metrics (a sample on the frame's \
location at its enter time and at its leave time, before or after its row); frames without \
both samples, and counters of mode rel, are left out with a warning (enter/leave frames only; \
not mergeable).",
    keys: &ProfileKey::KEYS,
    options: &["histogram", "counters"],
    mergeable: true,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |args, env| match args.counters {
        true => {
            let key = args.by.as_deref().unwrap_or(ProfileKey::KEYS[0]);
            let by = ProfileKey::parse(key).ok_or_else(|| bad_by(key, "profile"))?;
            let (symbols, warnings) = (env.symbols.clone(), env.warnings.clone());
            Ok(Box::new(FrameCounters::new(by, symbols, warnings)))
        }
        false => Ok(Box::new(open_profile(args, env)?)),
    },
};

const MESSAGES: ReportSpec = ReportSpec {
    name: "messages",
    summary: "bytes and transfer times per sender and receiver (or communicator)",
    about: "Per sender and receiver (--by comm: per communicator), count, bytes and min, mean, \
max transfer time, from msg rows or halves paired as trace-match does. --matrix: a sender x \
receiver matrix (bytes, --count messages, --time transfer time); --histogram BINS: message sizes \
in log-spaced bins. Merges from msg rows only: run trace-match on each part first.",
    keys: &crate::stats::messages::KEYS,
    options: &["histogram", "matrix", "count", "time"],
    mergeable: true,
    pairs_halves: true,
    inputs: Inputs::Stream,
    open: |args, env| {
        Ok(Box::new(Messages::new(
            message_view(args)?,
            env.symbols.clone(),
        )))
    },
};

const COUNTERS: ReportSpec = ReportSpec {
    name: "counters",
    summary: "counter samples per location: min, max, mean, time-weighted mean",
    about: "Per location and counter, samples, min, max, mean, time-weighted mean (each value \
held until the next sample; means in the shortest decimal of their double, from the values' \
exact sum), first, last.",
    keys: &[],
    options: &[],
    mergeable: true,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |_, env| {
        Ok(Box::new(Counters::new(
            env.symbols.clone(),
            env.warnings.clone(),
        )))
    },
};

const STATES: ReportSpec = ReportSpec {
    name: "states",
    summary: "time per container, state type and value",
    about: "Per container (a lane counts for its container), state type and value, frames and \
total time.",
    keys: &[],
    options: &[],
    mergeable: true,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |_, env| Ok(Box::new(States::new(env.symbols.clone()))),
};

const RESOURCES: ReportSpec = ReportSpec {
    name: "resources",
    summary: "TRACE resources: utilisation, peak amount and Little's law",
    about: "Per TRACE resource, claims, claimed time, busy time (union of the claims), amount x \
time, utilisation of the capacity over the trace's span, peak concurrent amount, and Little's \
law (throughput per second, mean time in the system, L = throughput x mean time, and L \
measured). Parts split by resource merge.",
    keys: &[],
    options: &[],
    mergeable: true,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |_, env| Ok(Box::new(Resources::new(env.symbols.clone()))),
};

const SUMMARY: ReportSpec = ReportSpec {
    name: "summary",
    summary: "the trace at a glance",
    about: "First and last time, span, rows per kind, locations (those holding rows, not the \
containers above them), messages and unmatched halves, the total wait of each pattern, the five \
functions with the most exclusive time.",
    keys: &[],
    options: &[],
    mergeable: false,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |_, env| {
        Ok(Box::new(Summary::new(
            env.symbols.clone(),
            env.warnings.clone(),
        )))
    },
};

const IMBALANCE: ReportSpec = ReportSpec {
    name: "imbalance",
    summary: "functions by how unevenly the locations spend time in them",
    about: "Per function, its time (exclusive; --inclusive) over every location with frames \
(zero where it did not run): mean, min, max and where, max/mean, max - mean (what evening out \
the work would save), largest first. Locations of one kind are compared: every kind but \
accelerator streams (gpu) and metric recorders (metric) by default, --kinds to choose.",
    keys: &[],
    options: &["inclusive", "per-location", "kinds"],
    mergeable: true,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |args, env| {
        Ok(Box::new(Imbalance::new(
            env.symbols.clone(),
            (args.inclusive, args.per_location),
            Kinds::parse(args.kinds.as_deref()),
            env.warnings.clone(),
        )))
    },
};

const TIMELINE: ReportSpec = ReportSpec {
    name: "timeline",
    summary: "exclusive time per time bin and function (or state), for plots",
    about: "Per time bin and function (--states: state type and value; --by loc: per location, \
its busy time, when any frame of it is open, so GPU streams show beside CPU threads), exclusive \
time summed over locations; --bins N (default 100) over the span found by a first pass (inputs must be \
files), or --bin WIDTH from time 0 in one pass (mergeable). At most 1 000 000 bins are printed. \
--messages: message volume instead, per bin and sender and receiver (--by pair) or sender \
(--by loc): the messages sent and their bytes, binned by send time, from send halves and msg \
rows (a matched message counts once, at its send).",
    keys: &["name", "pair", "loc"],
    options: &["bins", "bin", "states", "wide", "messages"],
    mergeable: true,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: open_timeline,
};

const WAITS: ReportSpec = ReportSpec {
    name: "waits",
    summary: "wait states: who waited for whom, and how long",
    about: "Scalasca's wait states, count and time per pattern (--by loc,pattern, name,pattern or \
pair,pattern: who waited for whom): late-sender (a receive, or the wait completing it, entered \
before its send: from its enter to the send's), late-receiver (a send lasting past its \
receive's enter: from its enter to the receive's), wait-nxn (barriers and all-to-all \
collectives: each waits for the last arrival), late-broadcast (a non-root arriving before the \
root), early-reduce (a root arriving before the last non-root); a half's frame is the innermost \
open on its location; a frame completing several receives waits once, for the latest sender; it \
needs the whole trace in one run.",
    keys: &waits::WaitKey::KEYS,
    options: &[],
    mergeable: false,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |args, env| {
        let key = args.by.as_deref().unwrap_or(waits::WaitKey::KEYS[0]);
        let by = waits::WaitKey::parse(key).ok_or_else(|| bad_by(key, "waits"))?;
        Ok(Box::new(Waits::new(
            by,
            env.symbols.clone(),
            env.warnings.clone(),
        )))
    },
};

const CRITICAL_PATH: ReportSpec = ReportSpec {
    name: "critical-path",
    summary: "the chain of work and waits that sets the run's length",
    about: "Walking back from the location that ends last (ties: the first by id) along its own \
time, each stretch in its innermost frame, crossing at a receive that waited for its sender \
(late sender) to the sender at the send, and at a collective wait to the last (or root) arrival \
at its arrival, down to the trace's first time: time per function on the path (it adds up to \
the span), or --segments; computed forward in one pass, a crossing found more than 256 credits \
after the fact on either side is not followed; it needs the whole trace in one run.",
    keys: &[],
    options: &["segments"],
    mergeable: false,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |args, env| {
        Ok(Box::new(CriticalPath::new(
            args.segments,
            env.symbols.clone(),
            env.warnings.clone(),
        )))
    },
};

const TOP: ReportSpec = ReportSpec {
    name: "top",
    summary: "the longest frames: where, when, how long",
    about: "The N longest frames (-n N, default 10; --name REGEX: those whose name matches): \
location, name, start, end, duration and depth (frames around it; empty for a state row \
without one), longest first, ties by the earlier start, then location and name. Frames are \
profile's: from enter/leave and state rows, a frame still open at the end closes at its \
location's last time, one cut by a crossing leave is one call. Holds at most 2N frames. \
Start and duration feed trace-slice --around START --width DURATION.",
    keys: &[],
    options: &["name"],
    mergeable: false,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |args, env| {
        let name = match args.name.as_deref() {
            Some(re) => Some(
                regex::Regex::new(re).map_err(|e| Error::Usage(format!("--name `{re}`: {e}")))?,
            ),
            None => None,
        };
        let n = args.top.unwrap_or(top::DEFAULT_COUNT);
        Ok(Box::new(Top::new(n, name, env.symbols.clone())))
    },
};

const CALLTREE: ReportSpec = ReportSpec {
    name: "calltree",
    summary: "the calling-context tree: time per call path, for flame graphs",
    about: "Per call path from the root (the names of the frames around a frame, outermost \
first, then its own, joined by `;`; a `;` or `\\` inside a name written `\\;`, `\\\\`), \
its depth, the frames' count, inclusive time (their durations) and exclusive time (less their \
direct children's), summed over the locations (--by loc,path: per location), in tree order. \
Recursion stays a path (f;f;f); a function's exclusive times over its paths add up to \
profile's. Frames are profile's (enter/leave and state rows, those open at the end closed at \
their location's last time). --folded: the folded stacks flame-graph tools read, `PATH \
TIME` for each path with exclusive time (--by loc,path: the location as the outermost \
frame). --svg: a flame graph of those stacks as a self-contained SVG (one box per path, as \
wide as its inclusive time, names and times in the titles; drawn by the inferno crate; times \
in ns). --top N: the N paths with the most inclusive time, in tree order. One node per path \
in memory.",
    keys: &calltree::KEYS,
    options: &["folded", "svg"],
    mergeable: true,
    pairs_halves: false,
    inputs: Inputs::Stream,
    open: |args, env| {
        let key = args.by.as_deref().unwrap_or(calltree::KEYS[0]);
        let form = match (args.folded, args.svg) {
            (true, _) => calltree::Form::Folded,
            (_, true) => calltree::Form::Svg,
            _ => calltree::Form::Rows,
        };
        Ok(Box::new(CallTree::new(
            key == "loc,path",
            form,
            env.symbols.clone(),
        )))
    },
};

const COMPARE: ReportSpec = ReportSpec {
    name: "compare",
    summary: "two runs' profiles side by side: what got slower (a CI gate)",
    about: "trace-stat compare [OPTIONS] BASE NEW: the profiles of two runs (each a trace, a \
stream or a file of profile --partial with the same --by), per key (--by, as profile's): for \
--metric exclusive (the default), inclusive or count, the base value, the new value, the \
difference and the change in percent of the base value; status both, new (in NEW only) or gone \
(in BASE only); largest difference first. --min TIME leaves out the keys whose inclusive time \
is below TIME in both runs. --fail-over PCT: exit 1 when a key in both runs grew by more than \
PCT percent of its base value (one whose base value is 0 and grew: always; new and gone keys \
never), naming the one that grew most on standard error; the table is printed either way.",
    keys: &ProfileKey::KEYS,
    options: &["metric", "fail-over", "min"],
    mergeable: false,
    pairs_halves: false,
    inputs: Inputs::Own,
    open: |args, env| Ok(Box::new(super::open_compare(args, env)?)),
};

/// The error of a `--by` the report does not take.
fn bad_by(key: &str, report: &str) -> Error {
    Error::Usage(format!("--by {key} does not apply to the {report} report"))
}

/// The profile report with its options.
pub fn open_profile(args: &Args, env: &Env) -> Result<Profile> {
    let key = args.by.as_deref().unwrap_or(ProfileKey::KEYS[0]);
    let by = ProfileKey::parse(key).ok_or_else(|| bad_by(key, "profile"))?;
    let bins = args.histogram.map(usize::from);
    Ok(Profile::new(by, bins, env.symbols.clone()).warn_when_empty(env.warnings.clone()))
}

/// How the messages report prints, from its options.
fn message_view(args: &Args) -> Result<View> {
    let by_comm = args.by.as_deref() == Some("comm");
    Ok(match (args.matrix, args.histogram) {
        _ if by_comm && (args.matrix || args.histogram.is_some()) => return Err(Error::Usage(
            "--by comm does not go with --matrix or --histogram (they are per sender and receiver)"
                .into(),
        )),
        _ if by_comm => View::Comms,
        (true, _) if args.count => View::Matrix(Cells::Count),
        (true, _) if args.time => View::Matrix(Cells::Time),
        (true, _) => View::Matrix(Cells::Bytes),
        (false, Some(bins)) => View::Histogram(usize::from(bins)),
        (false, None) => View::Pairs,
    })
}
