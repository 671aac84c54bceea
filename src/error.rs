//! Errors that name where they happened, and the handle warnings go to.
//!
//! Every error a user can cause carries a [`Location`]: the input's name and a line
//! (text formats) or a byte offset (binary formats). `Display` renders the
//! conventional `FILE:LINE: message` so editors and CI logs can jump to it.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};

/// Where in an input something happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line of a text input.
    Line {
        /// Input name (`-` is shown as `<stdin>`).
        file: String,
        /// 1-based line number.
        line: u64,
    },
    /// A byte offset into a binary input.
    Offset {
        /// Input name.
        file: String,
        /// Byte offset from the start of the file.
        offset: u64,
    },
    /// The n-th event (1-based) of a binary input whose events have no byte
    /// offset of their own (a Pallas thread expands a grammar).
    Event {
        /// Input name.
        file: String,
        /// 1-based index of the event in the input.
        index: u64,
    },
    /// The n-th row (1-based) of a columnar input (Parquet).
    Row {
        /// Input name.
        file: String,
        /// 1-based index of the row in the file.
        row: u64,
    },
    /// The input as a whole (for example "at end of input").
    File(String),
}

impl Location {
    /// The name of the input.
    pub fn file(&self) -> &str {
        match self {
            Location::Line { file, .. }
            | Location::Offset { file, .. }
            | Location::Event { file, .. }
            | Location::Row { file, .. }
            | Location::File(file) => file,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Line 0: the input as a whole (rows made from no one line).
            Location::Line { file, line: 0 } => write!(f, "{file}"),
            Location::Line { file, line } => write!(f, "{file}:{line}"),
            Location::Offset { file, offset } => write!(f, "{file}: byte {offset}"),
            Location::Event { file, index } => write!(f, "{file}: event {index}"),
            Location::Row { file, row } => write!(f, "{file}: row {row}"),
            Location::File(file) => write!(f, "{file}"),
        }
    }
}

/// The most bytes of one quoted value (a line, a field, a name) a message
/// shows: a 100 KB line is named by its start and its length.
pub const QUOTE_LIMIT: usize = 200;

/// `msg` with every quoted span (between backticks, or double quotes)
/// longer than [`QUOTE_LIMIT`] bytes cut to its start, `…` and its length.
pub fn shorten_quotes(msg: &str) -> std::borrow::Cow<'_, str> {
    if msg.len() <= QUOTE_LIMIT {
        return msg.into();
    }
    let mut out = String::new();
    let mut rest = msg;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest.as_bytes()[open];
        let inner = &rest[open + 1..];
        let close = inner
            .char_indices()
            .find(|&(i, c)| {
                c as u32 == u32::from(quote) && !(quote == b'"' && inner[..i].ends_with('\\'))
            })
            .map(|(i, _)| i);
        let Some(close) = close else { break };
        out.push_str(&rest[..=open]);
        let span = &inner[..close];
        if span.len() > QUOTE_LIMIT {
            let mut cut = QUOTE_LIMIT;
            while !span.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&span[..cut]);
            out.push('…');
            out.push(quote as char);
            out.push_str(&format!(" ({} bytes)", span.len()));
        } else {
            out.push_str(span);
            out.push(quote as char);
        }
        rest = &inner[close + 1..];
    }
    out.push_str(rest);
    out.into()
}

/// The error type of the library and of every command.
#[derive(Debug)]
pub enum Error {
    /// Input that breaks a rule of its format, with where and which rule.
    Data {
        /// Where the offending input is.
        at: Location,
        /// What was wrong or what was expected.
        msg: String,
    },
    /// A rule broken by a record that has no source position yet; the driver
    /// attaches one with [`Error::at`].
    Record(String),
    /// An I/O failure on a named file or stream.
    Io {
        /// What was being read or written (a file name, `<stdout>`).
        what: String,
        /// The underlying error.
        source: io::Error,
    },
    /// A bad command-line value that clap could not catch.
    Usage(String),
    /// A check the command was asked to make did not pass (`trace-stat
    /// compare --fail-over`): the input was fine, the answer is no.
    Failed(String),
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A data error at a line of a text input.
    pub fn line(file: &str, line: u64, msg: impl Into<String>) -> Error {
        Error::Data {
            at: Location::Line {
                file: file.to_string(),
                line,
            },
            msg: msg.into(),
        }
    }

    /// A data error at a byte offset of a binary input.
    pub fn offset(file: &str, offset: u64, msg: impl Into<String>) -> Error {
        Error::Data {
            at: Location::Offset {
                file: file.to_string(),
                offset,
            },
            msg: msg.into(),
        }
    }

    /// A data error about an input as a whole (no line or offset applies).
    pub fn file(file: impl Into<String>, msg: impl Into<String>) -> Error {
        Error::Data {
            at: Location::File(file.into()),
            msg: msg.into(),
        }
    }

    /// An I/O error on `what`.
    pub fn io(what: impl Into<String>, source: io::Error) -> Error {
        Error::Io {
            what: what.into(),
            source,
        }
    }

    /// Attaches a location to a [`Error::Record`] error; other errors pass unchanged.
    pub fn at(self, at: Location) -> Error {
        match self {
            Error::Record(msg) => Error::Data { at, msg },
            other => other,
        }
    }

    /// True when the error is a write to a closed pipe (`trace-cat big | head`),
    /// which ends a command quietly and successfully.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Data { at, msg } => write!(f, "{at}: {}", shorten_quotes(msg)),
            Error::Record(msg) => f.write_str(&shorten_quotes(msg)),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Usage(msg) => f.write_str(&shorten_quotes(msg)),
            Error::Failed(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// How many warnings with the same message are passed on before the rest are
/// only counted (and summed up by [`Warnings::finish`]).
pub const REPEATS_SHOWN: u32 = 5;

/// One warning: data that was kept but repaired, or is suspicious. Warnings
/// never replace an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where it applies, when one place does.
    pub at: Option<Location>,
    /// What happened.
    pub msg: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = shorten_quotes(&self.msg);
        match &self.at {
            Some(at) => write!(f, "{at}: {msg}"),
            None => f.write_str(&msg),
        }
    }
}

/// Where warnings go: the command prints them.
type WarningOutlet = Box<dyn FnMut(&Warning) + Send>;

struct WarningTally {
    report: WarningOutlet,
    /// Times each message was given, to hold back repeats.
    seen: HashMap<String, u32>,
}

/// The handle readers and stages report warnings to. The command that owns it
/// decides what becomes of them (print them located, keep them for a test,
/// drop them for `--quiet`); the library never prints. Clones share one tally,
/// so a reader and a writer on another thread count repeats together: after
/// [`REPEATS_SHOWN`] warnings with the same message, the rest are counted.
#[derive(Clone)]
pub struct Warnings {
    tally: Arc<Mutex<WarningTally>>,
}

impl Default for Warnings {
    /// A handle that drops every warning (for library use without a command).
    fn default() -> Warnings {
        Warnings::new(|_| {})
    }
}

impl fmt::Debug for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Warnings")
    }
}

impl Warnings {
    /// A handle passing each warning (repeats held back) to `report`.
    pub fn new(report: impl FnMut(&Warning) + Send + 'static) -> Warnings {
        Warnings {
            tally: Arc::new(Mutex::new(WarningTally {
                report: Box::new(report),
                seen: HashMap::new(),
            })),
        }
    }

    /// A handle that keeps the warnings it passes on, and the list they go to.
    pub fn collecting() -> (Warnings, Arc<Mutex<Vec<Warning>>>) {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let to = Arc::clone(&kept);
        let warnings =
            Warnings::new(move |w| to.lock().unwrap_or_else(|e| e.into_inner()).push(w.clone()));
        (warnings, kept)
    }

    /// Reports a warning that applies to the input as a whole.
    pub fn warn(&self, msg: impl Into<String>) {
        self.give(Warning {
            at: None,
            msg: msg.into(),
        });
    }

    /// Reports a warning about one place of an input.
    pub fn warn_at(&self, at: Location, msg: impl Into<String>) {
        self.give(Warning {
            at: Some(at),
            msg: msg.into(),
        });
    }

    fn give(&self, warning: Warning) {
        // A reporter that panicked leaves the tally usable.
        let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        let times = tally.seen.entry(warning.msg.clone()).or_insert(0);
        *times += 1;
        if *times <= REPEATS_SHOWN {
            (tally.report)(&warning);
        }
    }

    /// Reports, once, how many of each repeated warning were held back.
    pub fn finish(&self) {
        let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        let mut held: Vec<(String, u32)> = tally
            .seen
            .drain()
            .filter(|(_, n)| *n > REPEATS_SHOWN)
            .collect();
        held.sort();
        for (msg, n) in held {
            (tally.report)(&Warning {
                at: None,
                msg: format!("{} more like: {msg}", n - REPEATS_SHOWN),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_held_back_and_counted_at_the_end() {
        let (warnings, kept) = Warnings::collecting();
        let other = warnings.clone();
        for line in 1..=8 {
            other.warn_at(
                Location::Line {
                    file: "f".into(),
                    line,
                },
                "skipped",
            );
        }
        warnings.warn("once");
        warnings.finish();
        let shown: Vec<String> = kept.lock().unwrap().iter().map(|w| w.to_string()).collect();
        assert_eq!(
            shown,
            [
                "f:1: skipped",
                "f:2: skipped",
                "f:3: skipped",
                "f:4: skipped",
                "f:5: skipped",
                "once",
                "3 more like: skipped"
            ]
        );
    }
}
