//! The machinery that moves rows, which readers and the command layer use
//! and users never name: the pump (a source into a sink, on one thread or
//! more), packed batches, work on inputs in order as jobs of the pool
//! (chunks of lines, batches of rows to encode), sources read ahead as jobs,
//! the bounded reorder buffer, the k-way merge by time, and the frames a
//! source holds back before a slice's T0. It imports no format.

pub mod ahead;
pub mod batch;
pub mod chunks;
pub mod merge;
pub mod ordered;
pub mod pump;
pub mod reorder;
pub mod spill;
pub mod thin;

pub use pump::{pump, pump_here};
