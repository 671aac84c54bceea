//! `trace-slice`: a time window that is still a valid trace.

use clap::{Parser, ValueEnum};

use crate::cli::{list_formats, Env, InputArgs, OutputArgs, Pipeline};
use crate::error::{Error, Result};
use crate::stages::slice::{MessageScope, SliceOptions, SliceSource};
use crate::stages::window::{parse_time, parse_window, Window, TIME_SYNTAX};

/// `--help` text after the options: the examples (kept as laid out), then
/// paragraphs written as single lines so that clap wraps them.
const EXAMPLES: &str = "\
Examples:
  trace-slice --from 2.5s --to 2.6s run.paje -t paje > window.paje
  trace-slice --around 12ms --width 1ms run/ | trace-stat
  trace-slice --from 1s --rebase run.tsv              the window from 1 s, starting at 0
  trace-match run.tsv | trace-slice --to 1s --messages inside

The window is [FROM, TO). What was open, in force or in flight at its edges \
comes along, so every writer makes a trace its tools accept: frames open at \
FROM are entered again at FROM (flag S, the true start in attrs orig_time); \
each counter's last value before FROM is sampled again at FROM (S); the \
containers alive in the window are declared (one gone before FROM, or met \
only after TO without --true-ends, when a kept row is on it); rows with an extent (state, claim, coll, dep, signal) \
that reach into the window (end at FROM or later, start before TO) are \
clipped to it, flagged C, the times moved kept in orig_time and orig_end (a \
signal's coefficients are re-expanded at its new start, the original ones \
kept as orig_c, orig_b, orig_a); frames open at TO leave at TO (C); containers alive at the end are destroyed at TO, or at the \
latest message end kept after it (S). Messages: with --messages overlap, \
every message in flight during the window is kept, its ends outside flagged \
O: a msg row as it is, a half outside the window with its partner. With \
inside, only messages with both ends in the window: msg rows, and halves \
whose partner is in it (a half waits, with the rows after it, until its \
partner comes or the window ends). Halves pair exactly as trace-match pairs \
them (its matcher runs inside); the posting of a nonblocking receive \
(posts=recv) is kept with its receive. Reading stops after TO as soon as no \
row still to come can reach into the window and no message kept waits for \
its other end: the readers of Pajé, Pallas and OTF2 tell how early a row \
still to come can start (Pajé's open links and reorder window, a location's \
open collectives, the rows read ahead). Frames open at TO then leave at TO \
(C), made from their enter rows, whatever was read after TO; with \
--true-ends the input is read to its end and every frame's true end is \
recorded in orig_end. Before FROM, a Pallas trace's loop iterations that \
end before it are walked without the rows of their frames and plain \
events, whose timestamps stay undecoded (message halves, requests and \
collectives still come, for what is in flight at FROM, but the halves \
before the latest time where every channel's halves pair among \
themselves), an OTF2 location drops the frames it enters and leaves \
before FROM inside another frame, the rows inside them kept in their \
place, an STF data file drops the events, messages and \
scopes that end before FROM, and the frames entered and left and the \
counter samples superseded within 4096 rows read, and a Pajé trace builds no event \
rows, nor the messages of links that end before FROM, and takes back the \
rows of a state pushed and popped, or a variable's sample superseded, \
while they still wait in the reorder window. A stream (TSV, JSON Lines), \
STF and TRACE cannot tell: a state, \
message or claim row comes at its end and may have begun at any earlier \
time, so they are read to the end, as is a Pallas or OTF2 trace written \
from a stream that keeps rows or their times in attributes.";

/// What the command holds in memory, for its man page (not `--help`).
pub const MEMORY: &str = "\
The container rows, the open frames, \
the last sample of each counter, the halves in flight and the rows crossing \
TO; never the window (but the rows behind a half whose partner has not come \
yet, with inside, or behind a posting whose receive has not).";

/// Cut a time window out of a trace, with what is open, in force or in
/// flight at its edges, so that it is a valid trace of its own.
#[derive(Parser, Debug)]
#[command(name = "trace-slice", version, after_help = EXAMPLES)]
pub struct Args {
    /// Inputs.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,

    /// The window starts at TIME: nanoseconds from the trace's origin. A bare
    /// number is ns (15, 1e9); a decimal with a unit is exact (1.5ms, 2s,
    /// 10us, 1min, 1h); a negative time is before the origin.
    #[arg(long = "from", value_name = "TIME", allow_hyphen_values = true)]
    pub start: Option<String>,

    /// The window ends before TIME (same syntax as --from); without it the
    /// window is open at its end: every row from --from on, the last time a
    /// stream holds too, and no container is ended.
    #[arg(long = "to", value_name = "TIME", allow_hyphen_values = true)]
    pub end: Option<String>,

    /// The window is centred on TIME (with --width).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true,
          requires = "width", conflicts_with_all = ["start", "end"])]
    pub around: Option<String>,

    /// The window's width around --around (same syntax as --from).
    #[arg(long, value_name = "TIME", requires = "around")]
    pub width: Option<String>,

    /// Which messages stay: those in flight during the window (ends outside
    /// kept, flagged O), or those with both ends inside.
    #[arg(long, value_enum, default_value_t = MessagesArg::Overlap, value_name = "WHICH")]
    pub messages: MessagesArg,

    /// Shift every time so that the window starts at 0 (the `origin` meta
    /// row moves the other way, so absolute times stay true).
    #[arg(long)]
    pub rebase: bool,

    /// Read the input to its end, so that each frame open at TO leaves
    /// with its true end in orig_end (by default reading stops once
    /// nothing still to come reaches into the window).
    #[arg(long)]
    pub true_ends: bool,
}

/// `--messages` values.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessagesArg {
    /// In flight during the window.
    Overlap,
    /// Both ends in the window.
    Inside,
}

impl Args {
    /// The window the options describe.
    pub fn window(&self) -> Result<Window> {
        let usage = Error::Usage;
        if let (Some(center), Some(width)) = (&self.around, &self.width) {
            let center = parse_time(center).map_err(usage)?;
            let width = parse_time(width).map_err(usage)?;
            return Window::around(center, width).map_err(usage);
        }
        let window = parse_window(
            self.start.as_deref(),
            self.end.as_deref(),
            ("--from", "--to"),
        )
        .map_err(usage)?;
        window.ok_or_else(|| {
            Error::Usage(format!(
                "give the window: --from, --to (or both), or --around with --width; a time is {TIME_SYNTAX}"
            ))
        })
    }
}

/// Runs `trace-slice`: slicing runs on the reading side.
pub fn run(args: Args, env: &Env) -> Result<()> {
    if args.output.list_formats {
        return list_formats(&args.output);
    }
    let window = args.window()?;
    if args.rebase && args.start.is_none() && args.around.is_none() {
        return Err(Error::Usage(
            "--rebase needs the window's start (--from or --around)".into(),
        ));
    }
    let options = SliceOptions {
        window,
        messages: match args.messages {
            MessagesArg::Overlap => MessageScope::Overlap,
            MessagesArg::Inside => MessageScope::Inside,
        },
        rebase: args.rebase,
        true_ends: args.true_ends,
    };
    let pipeline = Pipeline::open(&args.input, env, &args.output.run)?.through(|source| {
        let (symbols, warnings) = (env.symbols.clone(), env.warnings.clone());
        Box::new(SliceSource::new(source, options, symbols, warnings))
    });
    let mut writer = pipeline.writer(&args.output)?;
    pipeline.run(&mut writer, &args.output.run)
}
