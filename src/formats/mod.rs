//! The formats: each module reads a format into records and writes records
//! in it. They share the record model, the stages and the execution
//! machinery, never each other's code; the stream codec ([`stream`]) is the
//! one they may use, as the form every format maps to. The registry that
//! names them for the commands is `crate::format`.

pub mod chrome;
pub mod otf2;
pub mod paje;
pub mod pallas;
pub mod paraver;
pub mod stf;
pub mod stream;
pub mod trace;
pub mod viewer;
