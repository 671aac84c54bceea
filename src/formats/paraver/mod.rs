//! Paraver traces (BSC's Extrae, Paraver and Dimemas): a `.prv` file of
//! `:`-separated records sorted by time, with a `.pcf` naming its states
//! and event types and a `.row` naming the rows of each level, both found
//! beside it by name. `docs/formats.md` ("Paraver") gives the mapping.

pub mod extrae;
pub mod header;
pub mod names;
pub mod reader;
pub mod writer;

use crate::pipe::Probe;

/// A line Paraver's own tools may write before the header.
const NEW_FORMAT: &[u8] = b"new format\n";

/// Whether the input starts as a Paraver trace does.
pub fn sniff(p: &Probe) -> bool {
    let head = p.head.strip_prefix(NEW_FORMAT).unwrap_or(p.head);
    !p.is_dir && head.starts_with(b"#Paraver")
}

/// The attribute holding a row's Paraver event type.
pub const ATTR_TYPE: &str = "paraver.type";
/// The attribute holding a row's Paraver event value.
pub const ATTR_VALUE: &str = "paraver.value";
/// The attribute holding a message's physical send time (stream ns).
pub const ATTR_PHYSICAL_SEND: &str = "paraver.psend";
/// The attribute holding a message's logical receive time (stream ns).
pub const ATTR_LOGICAL_RECV: &str = "paraver.lrecv";
/// The attribute holding a message's physical receive time (stream ns).
pub const ATTR_PHYSICAL_RECV: &str = "paraver.precv";
/// The attribute holding a state's Paraver state number.
pub const ATTR_STATE: &str = "paraver.state";

/// The files beside a `.prv` named `prv`: its `.pcf` and `.row` (the
/// name without `.prv`, and without `.gz` or `.zst` before that).
pub fn companions(prv: &str) -> (String, String) {
    let base = prv
        .strip_suffix(".gz")
        .or_else(|| prv.strip_suffix(".zst"))
        .unwrap_or(prv);
    let base = base.strip_suffix(".prv").unwrap_or(base);
    (format!("{base}.pcf"), format!("{base}.row"))
}
