//! Operations on record streams: merging, span building, filtering, windows, slicing,
//! message matching, collective instances, packed records, sources read ahead
//! on helper threads, and the pump that drives a source into a sink. Commands
//! wire these; they do not reimplement them.

pub mod ahead;
pub mod batch;
pub mod collectives;
pub mod filter;
pub mod matcher;
pub mod merge;
pub mod pump;
pub mod reorder;
pub mod slice;
pub mod spans;
pub mod window;

pub use pump::pump;
