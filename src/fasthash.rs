//! Hash maps for the short keys of hot paths (location names, identifiers):
//! `rustc-hash`'s Fx hasher, since inputs are trace files, not adversarial
//! network peers, and SipHash costs more than the rest of a row's bookkeeping;
//! and [`StrMap`], `indexmap` under the same hasher, for the per-field
//! identifier lookups of text readers.

use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;
use std::collections::{HashMap, HashSet};

/// A `HashMap` with the Fx hasher.
pub type FastMap<K, V> = HashMap<K, V, FxBuildHasher>;
/// A `HashSet` with the Fx hasher.
pub type FastSet<K> = HashSet<K, FxBuildHasher>;

/// A map from strings to values in insertion order, for the identifier
/// lookups of text readers (Pajé containers and types: one lookup per field of
/// every line). Positions (`get_index_of`) are stable, so a reader can look an
/// identifier up once and keep its position.
pub type StrMap<V> = IndexMap<Box<str>, V, FxBuildHasher>;
