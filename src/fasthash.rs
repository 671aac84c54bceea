//! Hash maps for the short keys of hot paths (location names, identifiers):
//! `rustc-hash`'s Fx hasher, since inputs are trace files, not adversarial
//! network peers, and SipHash costs more than the rest of a row's bookkeeping;
//! and [`StrMap`], `indexmap` under the same hasher, for the per-field
//! identifier lookups of text readers; and composite keys (several fields
//! joined by NUL) for maps keyed by more than one field.

use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;
use std::collections::{HashMap, HashSet};

/// A `HashMap` with the Fx hasher.
pub type FastMap<K, V> = HashMap<K, V, FxBuildHasher>;
/// A `HashSet` with the Fx hasher.
pub type FastSet<K> = HashSet<K, FxBuildHasher>;

/// A map in insertion order with the Fx hasher.
pub type OrderedMap<K, V> = IndexMap<K, V, FxBuildHasher>;

/// A map from strings to values in insertion order, for the identifier
/// lookups of text readers (Pajé containers and types: one lookup per field of
/// every line). Positions (`get_index_of`) are stable, so a reader can look an
/// identifier up once and keep its position.
pub type StrMap<V> = IndexMap<Box<str>, V, FxBuildHasher>;

/// Splits a composite key (parts joined by NUL, which no field holds).
pub fn key_parts(key: &str) -> impl Iterator<Item = &str> {
    key.split('\u{0}')
}

/// Builds a composite key into `out` (cleared first).
pub fn make_key(out: &mut String, parts: &[&str]) {
    out.clear();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push('\u{0}');
        }
        out.push_str(p);
    }
}
