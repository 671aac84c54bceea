//! The record model every reader, stage and writer speaks: the row
//! ([`record::Record`]: kinds, columns, attributes, flags, the attribute
//! prefixes of each format), the interned identifiers rows carry
//! ([`symbol`]), the stream's rules on rows ([`check`]), a location's open
//! frames ([`frames`]), how frames that do not nest are kept ([`nesting`])
//! and how values are
//! written as text ([`text`]), and OTF2's enumerations, which the formats
//! built on OTF2's records share ([`hpc`]).

pub mod check;
pub mod frames;
pub mod hpc;
pub mod nesting;
pub mod record;
pub mod symbol;
pub mod text;
