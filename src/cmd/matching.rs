//! `trace-match`: message halves paired into `msg` rows.

use std::cell::RefCell;
use std::rc::Rc;

use clap::{Parser, ValueEnum};

use crate::cli::{list_formats, Env, InputArgs, OutputArgs, Pipeline};
use crate::error::Result;
use crate::stages::collectives::Instances;
use crate::stages::matcher::{MatchOptions, MatchSource, MatchSummary, Unmatched};

/// `--help` text after the options: the examples (kept as laid out), then
/// paragraphs written as single lines so that clap wraps them.
const EXAMPLES: &str = "\
Examples:
  trace-cat run/ | trace-match                       messages of a Pallas trace
  trace-match --unmatched error run.paje             fail (exit 1) when a link is lost
  trace-match --halves run.tsv                       the halves too, beside each msg
  trace-match run.tsv |
    awk -F'\\t' '$1 == \"msg\" { b[$4 \" -> \" $8] += $11 } END { for (k in b) print k, b[k] }'

Rules (docs/stream.md): a half with a tag matches first in, first out on its \
channel (comm, sender, receiver, tag); a half without a tag matches on its key \
(comm, cat, id), as Pajé links do. Either half may come first; a message \
received before it was sent is kept, flagged R. Nonblocking receives whose \
posting the stream carries (an event with posts=recv, as the Pallas reader writes for \
MPI_IRECV_REQUEST) match in posting order, as MPI's non-overtaking rule says. A `msg` is \
written when its \
second half arrives, so the output is in stream order. Attributes of both \
halves are kept, in arrival order; a key both give with different values becomes send.KEY and \
recv.KEY; halves whose sizes differ keep the send's, both in send.size and \
recv.size. The k-th `coll` of a (comm, name) on each location is instance k: \
its id, and attrs first_arrival, last_arrival and wait (last arrival minus \
this participant's). A summary goes to stderr.";

/// What the command holds in memory, for its man page (not `--help`).
pub const MEMORY: &str = "\
The halves in flight \
(0.4 to 0.8 KiB each; those waiting on a destroyed location are released; \
--max-pending bounds them, 1 000 000 by default), and \
the rows after a collective until all its participants are in (0.45 KiB each; \
--max-held bounds them, 1 000 000 by default).";

/// Pair message halves (send/recv, Pajé link ends) into `msg` rows and number
/// collective instances; report what stays unmatched.
#[derive(Parser, Debug)]
#[command(name = "trace-match", version, after_help = EXAMPLES)]
pub struct Args {
    /// Inputs.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Write the halves too (each where it was), not only the messages.
    #[arg(long)]
    pub halves: bool,

    /// Halves that never match: keep (written flagged U when their location
    /// is destroyed or at the end), drop, or error (exit 1 naming the first
    /// by file and line; a Pajé link --ignore-incomplete-links would drop
    /// too).
    #[arg(long, value_enum, default_value_t = UnmatchedArg::Keep, value_name = "WHAT")]
    pub unmatched: UnmatchedArg,

    /// Stop with an error (naming the row) when more than N halves wait for
    /// their partner: the guard for a stream where one side is missing (0:
    /// no bound).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PENDING)]
    pub max_pending: u64,

    /// Stop with an error (naming the row, the collective and who has not
    /// reached it) when more than N rows are held behind a collective
    /// instance not every participant has reached: the guard for a stream
    /// where one never comes (0: no bound).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_HELD)]
    pub max_held: u64,
}

/// Halves waiting for their partner before `trace-match` stops: up to
/// about 800 MiB.
pub const DEFAULT_MAX_PENDING: u64 = 1_000_000;

/// Rows held behind a collective before `trace-match` stops: about 450 MiB.
pub const DEFAULT_MAX_HELD: u64 = 1_000_000;

/// `--unmatched` values.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnmatchedArg {
    /// Written flagged U.
    Keep,
    /// Left out (counted in the summary).
    Drop,
    /// Exit 1, naming the first.
    Error,
}

/// Runs `trace-match`: matching on the reading side (it knows each half's
/// file and line), collective instances on the writing side.
pub fn run(args: Args, env: &Env) -> Result<()> {
    if args.output.list_formats {
        return list_formats(&args.output);
    }
    let options = MatchOptions {
        unmatched: match args.unmatched {
            UnmatchedArg::Keep => Unmatched::Keep,
            UnmatchedArg::Drop => Unmatched::Drop,
            UnmatchedArg::Error => Unmatched::Error,
        },
        halves: args.halves,
        max_pending: (args.max_pending > 0).then_some(args.max_pending),
        tagged_only: false,
    };
    // A link the Pajé reader would drop incomplete is a half unmatched.
    let env = &Env {
        refuse_unmatched: options.unmatched == Unmatched::Error,
        ..env.clone()
    };
    let summary = Rc::new(RefCell::new(MatchSummary::default()));
    let shared = summary.clone();
    let pipeline = Pipeline::open(&args.input, env, &args.output.run)?.through(|source| {
        Box::new(MatchSource::new(
            source,
            options,
            env.symbols.clone(),
            env.warnings.clone(),
            shared,
        ))
    });
    let writer = pipeline.writer(&args.output)?;
    let mut sink = Instances::new(writer, env.symbols.clone(), env.warnings.clone())
        .max_held((args.max_held > 0).then_some(args.max_held));
    pipeline.run(&mut sink, &args.output.run)?;
    // A failed run has no summary: how far reading went before the error
    // depends on the threads (the error names what it is about).
    report(env, &summary.borrow());
    Ok(())
}

/// The summary on stderr: messages, reversed ones, unmatched halves and the
/// ten channels with the most.
fn report(env: &Env, summary: &MatchSummary) {
    let (sends, recvs) = summary.unmatched_total();
    let read_paired = match summary.read_paired {
        0 => String::new(),
        n => format!(" ({n} read already paired)"),
    };
    env.say(&format!(
        "{} message(s) matched{read_paired}, {} received before sent (R), {} half/halves unmatched ({sends} send, {recvs} recv)",
        summary.matched + summary.read_paired,
        summary.reversed,
        sends + recvs
    ));
    for (channel, s, r) in summary.worst_channels(10) {
        env.say(&format!("  unmatched on {channel}: {s} send, {r} recv"));
    }
}
