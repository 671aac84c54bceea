//! tracepipe: small Unix commands for execution traces over one normalized
//! record stream.
//!
//! The library holds everything; each binary in `src/bin/` only parses its
//! arguments and calls a `cmd` module. See `docs/architecture.md` for the map.
//!
//! - [`record`]: the record model (kinds, columns, the [`record::Record`] row);
//!   [`symbol`]: the interned identifiers rows carry.
//! - [`pipe`]: the source and sink traits, reader and writer options.
//! - [`stream`]: the TSV and JSON Lines codecs of the stream.
//! - [`paje`], [`pallas`], [`trace`]: the format readers and writers.
//! - [`ops`]: merging, span building, filtering, matching, windows, the pump.
//! - [`table`]: report tables (TSV, CSV, JSON Lines).
//! - [`io`], [`number`], [`decimal`], [`error`]: inputs and outputs, integers,
//!   exact decimals, located errors and the warnings handle.
//! - [`format`]: the registry of readers and writers, and format detection
//!   (used by the command layer only).
//! - [`cli`] and [`cmd`]: the command layer: argument groups, the pipeline,
//!   and one module per command.

#![warn(missing_docs)]

pub mod chunks;
pub mod cli;
pub mod cmd;
pub mod decimal;
pub mod error;
pub mod fasthash;
pub mod format;
pub mod io;
pub mod number;
pub mod ops;
pub mod paje;
pub mod pallas;
pub mod pipe;
pub mod record;
pub mod stats;
pub mod stf;
pub mod stream;
pub mod swar;
pub mod symbol;
pub mod table;
pub mod trace;
pub mod viewer;

pub use error::{Error, Result};
pub use record::{Kind, Record};
pub use symbol::{Sym, Symbols};
