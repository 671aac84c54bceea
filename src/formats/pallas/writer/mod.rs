//! Pallas writers: `spec.rs` writes a trace from an explicit description
//! (for the generator and the tests), `layout.rs` the byte layouts both
//! use.

pub mod layout;
pub mod spec;

pub use spec::*;
