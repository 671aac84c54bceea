//! `trace-cat`: read traces and streams, write the stream or another format.

use clap::Parser;

use crate::cli::{list_formats, Env, InputArgs, OutputArgs, Pipeline};
use crate::error::Result;
use crate::pipe::RecordSink;
use crate::stages::spans::SpanBuilder;

/// `--help` text after the options: the examples (kept as laid out), then
/// paragraphs written as single lines so that clap wraps them to the
/// terminal (and the man page generator makes them a NOTES section).
const EXAMPLES: &str = "\
Examples:
  trace-cat run.paje > run.tsv              a Pajé trace as the record stream
  trace-cat -t pjdump run.paje | sort       what PajeNG's pj_dump prints
  trace-cat plant.etf > plant.tsv           a TRACE file (claims, signals...)
  trace-cat eztrace_output/ > run.tsv       a Pallas trace folder (EZTrace)
  trace-cat scorep-run/traces.otf2 > run.tsv  an OTF2 archive (Score-P)
  trace-cat -t otf2 -o run.otf2 run.paje   any trace for Vampir, Scalasca
  trace-cat rank0.tsv rank1.tsv > all.tsv   merge streams by time
  trace-cat --json run.tsv | jq 'select(.kind == \"send\")'
  trace-cat --spans run.paje | trace-filter -k state
  trace-cat -t trace run.tsv > run.etf      write a TRACE file for TRACE4CPS
  trace-cat -t paje plant.etf > plant.paje  open TRACE data in Pajé viewers
  trace-cat -o run.pftrace run.paje         open it at ui.perfetto.dev (-t chrome: JSON)
";

/// What the command holds in memory, for its man page (not `--help`).
pub const MEMORY: &str = "\
Streams and Pajé traces are read in one pass (with N threads, in chunks \
of 64 to 288 KiB of lines, two in flight per helper). Pajé keeps open states, pending links, about 0.5 KiB per container ever created (140 MiB for \
300 000), and --reorder-window rows (at most 16 MiB of their text). Merging \
keeps one row per input; Pallas traces each thread's grammar and one decoded \
block per distinct event (with N threads, up to 16 384 rows read ahead); --spans the open frames; -t pjdump also the message \
halves still waiting for their partner (0.4 to 0.8 KiB each, bench/memory.sh; \
halves waiting on a destroyed container are released). TRACE files list elements in any \
order, so they are read whole and sorted: up to 9 times the file (terse lines \
cost the most). Writing TRACE holds the output until the end (resources \
first); writing Pajé holds rows with an extent that are not frames (states, claims, \
collectives) and the link halves waiting for their partner; messages and dependencies are \
written as links when they complete.";

/// Read any supported trace or record stream and write the normalized record
/// stream (TSV by default), or convert it to another format.
///
/// The input format is detected from the content, then the file extension;
/// -f/--input-format forces it. Several inputs are merged into one stream ordered by
/// completion time in a single streaming pass. Formats: tsv and jsonl (the
/// record stream itself); see --list-formats.
#[derive(Parser, Debug)]
#[command(name = "trace-cat", version, after_help = EXAMPLES)]
pub struct Args {
    /// Inputs.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Turn enter/leave pairs into complete `state` rows (written when the frame
    /// closes; frames open at the end are closed at the last time, flagged C).
    #[arg(long)]
    pub spans: bool,
}

/// Runs `trace-cat`.
pub fn run(args: Args, env: &Env) -> Result<()> {
    if args.output.list_formats {
        return list_formats(&args.output);
    }
    let pipeline = Pipeline::open(&args.input, env, &args.output.run)?;
    let writer = pipeline.writer(&args.output)?;
    let mut sink: Box<dyn RecordSink + Send> = if args.spans {
        Box::new(SpanBuilder::new(
            writer,
            env.symbols.clone(),
            env.warnings.clone(),
        ))
    } else {
        writer
    };
    pipeline.run(&mut sink, &args.output.run)
}
