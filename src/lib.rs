//! tracepipe: small Unix commands for execution traces over one normalized
//! record stream.
//!
//! The library holds everything; each binary in `src/bin/` only parses its
//! arguments and calls a `cmd` module. See `docs/architecture.md` for the map.
//!
//! - [`record`]: the record model (kinds, columns, the [`record::Record`] row).
//! - [`stream`]: the TSV and JSON Lines codecs of the stream.
//! - [`format`]: the registry of readers and writers, and format detection.
//! - [`paje`], [`pallas`], [`trace`]: the format readers and writers.
//! - [`ops`]: merging, span building, filtering, time windows.
//! - [`io`]: inputs, outputs, the shared line reader, progress.
//! - [`error`]: located errors and warnings.
//! - [`cli`] and [`cmd`]: shared command-line plumbing and one module per command.

#![warn(missing_docs)]

pub mod cli;
pub mod cmd;
pub mod decimal;
pub mod error;
pub mod fasthash;
pub mod format;
pub mod io;
pub mod ops;
pub mod paje;
pub mod pallas;
pub mod record;
pub mod stream;
pub mod swar;
pub mod trace;

pub use error::{Error, Result};
pub use record::{Kind, Record};
