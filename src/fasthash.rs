//! Hash maps for the short keys of hot paths (location names, identifiers):
//! `rustc-hash`'s Fx hasher, since inputs are trace files, not adversarial
//! network peers, and SipHash costs more than the rest of a row's bookkeeping;
//! and [`StrMap`], `indexmap` under the same hasher with short keys packed
//! in integers, for the per-field identifier lookups of text readers; and
//! composite keys (several fields joined by NUL) for maps keyed by more
//! than one field.

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
///
/// Most identifiers are short (`t3_12`, `ST`, `CUDA0_0`): a key of at most
/// [`SHORT_KEY`] bytes is also found by its bytes packed in one integer,
/// which hashes and compares without reading the key's text.
#[derive(Clone)]
pub struct StrMap<V> {
    entries: IndexMap<Box<str>, V, FxBuildHasher>,
    /// The positions in `entries` of the short keys.
    short: FastMap<u128, u32>,
}

/// The longest key [`StrMap`] packs in an integer (one byte of the 16 holds
/// the length, so that `a` and `a\0` differ).
pub const SHORT_KEY: usize = 15;

/// The key's bytes, little-endian, with its length in the last byte.
/// Read as words and shifted into place in registers: copying the key to
/// a buffer and loading that as an integer is a call to `memcpy` and a
/// load that waits for the stores, on every lookup (6 % of the time of
/// reading a Pajé trace on one thread).
fn packed(bytes: &[u8]) -> Option<u128> {
    let len = bytes.len();
    if len > SHORT_KEY {
        return None;
    }
    let mut key = u128::from(crate::swar::load_zero_padded(&bytes[..len.min(8)]));
    if len > 8 {
        // The last 8 bytes, less the ones the first word holds.
        let last = u64::from_le_bytes(bytes[len - 8..].try_into().expect("8 bytes"));
        key |= u128::from(last >> (8 * (16 - len))) << 64;
    }
    Some(key | (len as u128) << (8 * SHORT_KEY))
}

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        StrMap {
            entries: IndexMap::default(),
            short: FastMap::default(),
        }
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for StrMap<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.entries.iter()).finish()
    }
}

impl<V> StrMap<V> {
    /// The position of `key`.
    #[inline]
    pub fn get_index_of(&self, key: &str) -> Option<usize> {
        self.find(key.as_bytes(), || Some(key))
    }

    /// The position of the key whose bytes are `key` (none unless UTF-8).
    #[inline]
    pub fn get_index_of_bytes(&self, key: &[u8]) -> Option<usize> {
        self.find(key, || std::str::from_utf8(key).ok())
    }

    /// The same keys at the same positions, without their values.
    pub fn keys_only(&self) -> StrMap<()> {
        StrMap {
            entries: self.entries.keys().map(|k| (k.clone(), ())).collect(),
            short: self.short.clone(),
        }
    }

    /// The value of the key whose bytes are `key` (none unless UTF-8).
    #[inline]
    pub fn get_bytes(&self, key: &[u8]) -> Option<&V> {
        let at = self.find(key, || std::str::from_utf8(key).ok())?;
        Some(&self.entries[at])
    }

    /// The position of the key whose bytes are `bytes`: by its packed
    /// bytes when short, else by its text, which `text` gives.
    #[inline]
    fn find<'k>(&self, bytes: &[u8], text: impl FnOnce() -> Option<&'k str>) -> Option<usize> {
        match packed(bytes) {
            Some(k) => self.short.get(&k).map(|&i| i as usize),
            None => self.entries.get_index_of(text()?),
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&V> {
        self.get_index_of(key).map(|i| &self.entries[i])
    }

    /// Whether `key` is in the map.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get_index_of(key).is_some()
    }

    /// Inserts `key` (last, when new) and returns its position and the
    /// value it replaced.
    pub fn insert_full(&mut self, key: Box<str>, value: V) -> (usize, Option<V>) {
        let short = packed(key.as_bytes());
        let (at, old) = self.entries.insert_full(key, value);
        if let Some(k) = short {
            self.short.insert(k, at as u32);
        }
        (at, old)
    }

    /// Inserts `key` (last, when new) and returns the value it replaced.
    pub fn insert(&mut self, key: Box<str>, value: V) -> Option<V> {
        self.insert_full(key, value).1
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<V> std::ops::Index<usize> for StrMap<V> {
    type Output = V;
    fn index(&self, at: usize) -> &V {
        &self.entries[at]
    }
}

impl<V> std::ops::IndexMut<usize> for StrMap<V> {
    fn index_mut(&mut self, at: usize) -> &mut V {
        &mut self.entries[at]
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_keys_keep_their_positions() {
        let keys = [
            "",
            "a",
            "a\0",
            "a\0\0",
            "t3_12",
            "CUDA0_0",
            "fifteen bytes!!",
            "sixteen bytes!!!",
            "a key longer than sixteen bytes",
            "café",
        ];
        let mut map = StrMap::default();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.insert_full((*k).into(), i), (i, None), "{k:?}");
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get_index_of(k), Some(i), "{k:?}");
            assert_eq!(map.get(k), Some(&i), "{k:?}");
            assert_eq!(map[i], i);
        }
        for absent in [
            "b",
            "a\0\0\0",
            "t3_1",
            "sixteen bytes!!?",
            "fifteen bytes!?",
        ] {
            assert!(!map.contains_key(absent), "{absent:?}");
        }
        // A key inserted again keeps its position and gives the old value.
        assert_eq!(map.insert_full("t3_12".into(), 99), (4, Some(4)));
        assert_eq!(
            map.insert("a key longer than sixteen bytes".into(), 98),
            Some(8)
        );
        assert_eq!((map.get("t3_12"), map.len()), (Some(&99), keys.len()));
        for (i, k) in keys.iter().enumerate().skip(5) {
            assert_eq!(map.get_bytes(k.as_bytes()), map.get(k), "{k:?} ({i})");
        }
        assert_eq!(map.get_bytes(b"caf\xc3"), None);
    }

    /// A packed key is the key's bytes with its length in the last byte,
    /// for every length, and keys that differ pack differently.
    #[test]
    fn a_packed_key_is_its_bytes_and_its_length() {
        let bytes: Vec<u8> = (1..=16u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        let mut seen = std::collections::HashSet::new();
        for len in 0..=16 {
            let key = &bytes[..len];
            let got = packed(key);
            if len > SHORT_KEY {
                assert_eq!(got, None);
                continue;
            }
            let mut expected = [0u8; 16];
            expected[..len].copy_from_slice(key);
            expected[SHORT_KEY] = len as u8;
            assert_eq!(got, Some(u128::from_le_bytes(expected)), "{len} bytes");
            assert!(seen.insert(got), "{len} bytes");
            for at in 0..len {
                let mut other = key.to_vec();
                other[at] ^= 1;
                assert_ne!(packed(&other), got, "{len} bytes, byte {at}");
            }
        }
    }
}
