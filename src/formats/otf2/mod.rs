//! OTF2 (Score-P, EZTrace, TAU, Extrae; read by Vampir, Scalasca, Cube):
//! an anchor file, global definitions, and per location an event file and
//! local definitions. Read without the OTF2 library, from the encoding
//! written down in `docs/otf2.md`.
//!
//! `buffer.rs` the encodings (compressed integers, chunks), `anchor.rs` the
//! anchor file, `defs.rs` the global definitions, `local.rs` a location's
//! mapping tables and clock offsets, `catalogue.rs` every event record's
//! fields, `events.rs` a location's events decoded, `reader/` the mapping
//! to the stream (docs/formats.md); `encode.rs` and `archive.rs` write
//! archives (for the tests and the fuzz target).

pub mod anchor;
pub mod archive;
pub mod buffer;
pub mod catalogue;
pub mod defs;
pub mod encode;
pub mod events;
pub mod local;
pub mod reader;

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
