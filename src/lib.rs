//! tracepipe: small Unix commands for execution traces over one normalized
//! record stream.
//!
//! The library holds everything; each binary in `src/bin/` only parses its
//! arguments and calls a `cmd` module. See `docs/architecture.md` for the map.
//!
//! - [`model`]: the record model (kinds, columns, the
//!   [`model::record::Record`] row, attribute prefixes) and the interned
//!   identifiers rows carry.
//! - [`pipe`]: the source and sink contract, reader and writer options.
//! - [`formats`]: one module per format (the stream's TSV and JSON Lines,
//!   OTF2, Pajé, Pallas, STF, TRACE, the viewer exports), reading and
//!   writing.
//! - [`stages`]: what users compose: filters, windows and slices, message
//!   matching, collective instances, spans.
//! - [`exec`]: what moves rows: the pump, batches, read-ahead, chunks, the
//!   reorder buffer, the merge by time.
//! - [`stats`]: `trace-stat`'s reports; [`table`]: report tables (TSV, CSV,
//!   JSON Lines).
//! - [`io`], [`number`], [`decimal`], [`swar`], [`fasthash`], [`error`]:
//!   inputs and outputs, integers, exact decimals, byte tests, hash maps,
//!   located errors and the warnings handle.
//! - [`format`](mod@format): the registry of readers and writers, and format detection
//!   (used by the command layer only).
//! - [`cli`] and [`cmd`]: the command layer: argument groups, the pipeline,
//!   and one module per command.

#![warn(missing_docs)]

pub mod bytes;
pub mod cli;
pub mod cmd;
pub mod decimal;
pub mod error;
pub mod exec;
pub mod fasthash;
pub mod format;
pub mod formats;
pub mod glob;
pub mod io;
pub mod model;
pub mod number;
pub mod pipe;
pub mod pool;
pub mod stages;
pub mod stats;
pub mod swar;
pub mod table;

pub use error::{Error, Result};
pub use model::record::{Kind, Record};
pub use model::symbol::{Sym, Symbols};
