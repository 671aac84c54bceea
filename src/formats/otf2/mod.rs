//! OTF2 (Score-P, EZTrace, TAU, Extrae; read by Vampir, Scalasca, Cube):
//! an anchor file, global definitions, and per location an event file and
//! local definitions. Read without the OTF2 library, from the encoding
//! written down in `docs/otf2.md`.
//!
//! `buffer.rs` the encodings (compressed integers, chunks), `anchor.rs` the
//! anchor file, `defs.rs` the global definitions, `local.rs` a location's
//! mapping tables and clock offsets, `catalogue.rs` every event record's
//! fields, `legacy.rs` the fields OTF2 1.x archives lack and what they
//! follow from, `events.rs` a location's events decoded, `reader/` the mapping
//! to the stream (docs/formats.md); `writer/` the stream as an archive
//! (`-t otf2`); `encode.rs` and `archive.rs` the encodings both write
//! with (and archives built whole, for the tests and the fuzz target).

pub mod anchor;
pub mod archive;
pub mod buffer;
pub mod catalogue;
pub mod defs;
pub mod encode;
pub mod events;
pub mod legacy;
pub mod local;
pub mod reader;
pub mod writer;

use crate::pipe::Probe;

/// Prefix of the meta names that carry OTF2-specific values.
pub const PREFIX: &str = crate::model::record::prefix::OTF2;

/// An OTF2 anchor file by its content, or a folder holding a `*.otf2`
/// file.
pub fn sniff(probe: &Probe) -> bool {
    match probe.is_dir {
        true => probe.entries.iter().any(|name| name.ends_with(".otf2")),
        false => anchor::is_anchor(probe.head),
    }
}

// What tracepipe keeps in an archive beyond OTF2's records (its writer
// writes them, its reader reads them back: docs/formats.md, "OTF2").

pub use crate::model::record::COLUMN_ATTR;

/// The parameter whose string values are whole rows in JSON (rows of kinds
/// no OTF2 record holds, written by tracepipe).
pub const ROW_PARAMETER: &str = crate::model::record::ROW_ATTR;

/// The `cat` of the `event` rows of parameter records (`PARAMETER_*`);
/// the writer gives an `event` at an instant as one.
pub const PARAMETER_CAT: &str = "PARAMETER";

/// The attribute of an `RMA_WIN_CREATE` row after its fields: the
/// window's communicator (from its definition), so a writer defines the
/// window again.
pub const RMA_WIN_COMM: &str = "communicator";

/// The anchor property in which tracepipe's writer keeps the stream's
/// `container` and `type` rows (JSON Lines): read back, they stand for the
/// containers the archive's hierarchy would give.
pub const HEAD_PROPERTY: &str = "TRACEPIPE::STREAM_HEAD";

/// The anchor property that says tracepipe wrote the archive from a stream
/// (its value: the stream's version): a frame left open stays open, as
/// the stream left it, where other archives' get a `leave` at the end.
pub const STREAM_PROPERTY: &str = "TRACEPIPE::STREAM";

/// The anchor property in which tracepipe's writer says how far, in ns, a
/// row read back may begin before its event (a row kept whole stands at
/// its completion; a collective whose begin is kept beside its end, at
/// the end): a reader bounds how early a row still to come can start.
pub const LEAD_PROPERTY: &str = "TRACEPIPE::LEAD";

/// The value of the [`STREAM_PROPERTY`].
pub const STREAM_VERSION: &str = "tracepipe-stream/1";
