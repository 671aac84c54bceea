//! The stages users compose: filtering, time windows and slices, message
//! matching, collective instances, and frames into states. A stage that
//! drops rows wraps a `RecordSource`; one that only adds or reshapes rows
//! wraps a `RecordSink`. Commands wire these; they do not reimplement them.

pub mod collectives;
pub mod filter;
pub mod matcher;
pub mod slice;
pub mod spans;
pub mod window;
