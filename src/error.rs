//! Errors that name where they happened, and the warning channel.
//!
//! Every error a user can cause carries a [`Location`]: the input's name and a line
//! (text formats) or a byte offset (binary formats). `Display` renders the
//! conventional `FILE:LINE: message` so editors and CI logs can jump to it.

use std::fmt;
use std::io;
use std::sync::OnceLock;

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
    /// The input as a whole (for example "at end of input").
    File(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line { file, line } => write!(f, "{file}:{line}"),
            Location::Offset { file, offset } => write!(f, "{file}: byte {offset}"),
            Location::File(file) => write!(f, "{file}"),
        }
    }
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
            Error::Data { at, msg } => write!(f, "{at}: {msg}"),
            Error::Record(msg) => f.write_str(msg),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Usage(msg) => f.write_str(msg),
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

static PROGRAM: OnceLock<String> = OnceLock::new();

/// Sets the program name that prefixes warnings (done once by the command runner).
pub fn set_program_name(name: &str) {
    let _ = PROGRAM.set(name.to_string());
}

/// The program name set by [`set_program_name`], or `tracepipe`.
pub fn program_name() -> &'static str {
    PROGRAM.get().map(String::as_str).unwrap_or("tracepipe")
}

/// Prints a warning on stderr as `PROGRAM: warning: MSG`.
///
/// Warnings report data that was kept but repaired or is suspicious; they never
/// replace an error.
pub fn warn(msg: impl fmt::Display) {
    eprintln!("{}: warning: {msg}", program_name());
}
