//! A fast, non-cryptographic hasher for the short string keys of hot paths
//! (location names). Inputs are trace files, not adversarial network peers; the
//! standard SipHash costs more than the rest of a row's bookkeeping.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hasher in the style of rustc's FxHasher.
#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// A `HashSet` with [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

/// A map from strings to values, for the identifier lookups of text readers
/// (Pajé containers and types): one lookup per field of every line.
///
/// A key of up to 16 bytes is identified by two overlapping machine words and
/// its length, so finding it costs a hash of those words and a comparison of
/// three integers, without a call to `memcmp`. Longer keys are also compared
/// byte by byte. Entries are never removed.
#[derive(Debug, Clone)]
pub struct StrMap<V> {
    /// Open addressing, linear probing: 0 is empty, else an entry index + 1.
    slots: Vec<u32>,
    entries: Vec<Entry<V>>,
}

#[derive(Debug, Clone)]
struct Entry<V> {
    words: KeyWords,
    key: Box<str>,
    value: V,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct KeyWords {
    a: u64,
    b: u64,
    len: usize,
}

impl KeyWords {
    #[inline]
    fn of(s: &[u8]) -> KeyWords {
        let n = s.len();
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let half = |b: &[u8]| u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes")));
        let (a, b) = if n >= 8 {
            (word(&s[..8]), word(&s[n - 8..]))
        } else if n >= 4 {
            (half(&s[..4]), half(&s[n - 4..]))
        } else if n > 0 {
            // Covers every byte of keys of 1 to 3 bytes.
            (
                u64::from(s[0]) | u64::from(s[n / 2]) << 8 | u64::from(s[n - 1]) << 16,
                0,
            )
        } else {
            (0, 0)
        };
        KeyWords { a, b, len: n }
    }

    /// True when the words alone decide equality.
    #[inline]
    fn complete(&self) -> bool {
        self.len <= 16
    }

    #[inline]
    fn hash(&self, s: &[u8]) -> u64 {
        let mut h = FastHasher::default();
        h.add(self.a);
        h.add(self.b ^ (self.len as u64).rotate_left(32));
        if !self.complete() {
            h.write(&s[8..s.len() - 8]);
        }
        // Spread the high bits of the product into the low bits the table uses.
        h.hash ^ (h.hash >> 29)
    }
}

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        StrMap {
            slots: vec![0; 16],
            entries: Vec::new(),
        }
    }
}

impl<V> StrMap<V> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the map holds no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The slot holding `key`, or the empty slot where it would go.
    #[inline]
    fn find(&self, key: &[u8], words: &KeyWords) -> (usize, Option<usize>) {
        let mask = self.slots.len() - 1;
        let mut i = words.hash(key) as usize & mask;
        loop {
            match self.slots[i] {
                0 => return (i, None),
                e => {
                    let entry = &self.entries[e as usize - 1];
                    if entry.words == *words && (words.complete() || entry.key.as_bytes() == key) {
                        return (i, Some(e as usize - 1));
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&V> {
        let words = KeyWords::of(key.as_bytes());
        let (_, e) = self.find(key.as_bytes(), &words);
        e.map(|e| &self.entries[e].value)
    }

    /// The value of `key`, to change it.
    #[inline]
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let words = KeyWords::of(key.as_bytes());
        let (_, e) = self.find(key.as_bytes(), &words);
        e.map(|e| &mut self.entries[e].value)
    }

    /// The position of `key` (in insertion order), for [`StrMap::at`]: one
    /// lookup serves several uses.
    #[inline]
    pub fn position(&self, key: &str) -> Option<usize> {
        let words = KeyWords::of(key.as_bytes());
        self.find(key.as_bytes(), &words).1
    }

    /// The value at a [`StrMap::position`].
    pub fn at(&self, position: usize) -> &V {
        &self.entries[position].value
    }

    /// The value at a [`StrMap::position`], to change it.
    pub fn at_mut(&mut self, position: usize) -> &mut V {
        &mut self.entries[position].value
    }

    /// The keys and values, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries.iter().map(|e| (&*e.key, &e.value))
    }

    /// True when `key` is in the map.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets the value of `key`; returns the previous one.
    pub fn insert(&mut self, key: &str, value: V) -> Option<V> {
        let words = KeyWords::of(key.as_bytes());
        match self.find(key.as_bytes(), &words) {
            (_, Some(e)) => Some(std::mem::replace(&mut self.entries[e].value, value)),
            (slot, None) => {
                let index = u32::try_from(self.entries.len() + 1).expect("fewer than 2^32 keys");
                self.entries.push(Entry {
                    words,
                    key: key.into(),
                    value,
                });
                self.slots[slot] = index;
                if self.entries.len() * 2 > self.slots.len() {
                    self.grow();
                }
                None
            }
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        self.slots = vec![0; size];
        for (e, entry) in self.entries.iter().enumerate() {
            let mut i = entry.words.hash(entry.key.as_bytes()) as usize & (size - 1);
            while self.slots[i] != 0 {
                i = (i + 1) & (size - 1);
            }
            self.slots[i] = e as u32 + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_map_agrees_with_a_hash_map() {
        // Keys of every length around the word boundaries, many sharing their
        // first and last bytes, inserted and looked up against std's map.
        let mut keys = Vec::new();
        for len in 0..40 {
            for v in 0..30u32 {
                let mut k: Vec<u8> = (0..len).map(|i| b'a' + (i % 7) as u8).collect();
                if len > 0 {
                    let at = (v as usize * 7) % len;
                    k[at] = b'0' + (v % 10) as u8;
                }
                keys.push(String::from_utf8(k).unwrap());
            }
        }
        let mut ours = StrMap::default();
        let mut model = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(ours.insert(k, i), model.insert(k.clone(), i), "{k}");
        }
        assert_eq!(ours.len(), model.len());
        for k in &keys {
            assert_eq!(ours.get(k), model.get(k), "{k}");
            let missing = format!("{k}~");
            assert_eq!(ours.get(&missing), None);
        }
        let k = keys[100].as_str();
        *ours.get_mut(k).unwrap() += 1;
        assert_eq!(ours.get(k), model.get(k).map(|v| v + 1).as_ref());
        let at = ours.position(k).unwrap();
        *ours.at_mut(at) += 1;
        assert_eq!(*ours.at(at), model[k] + 2);
        assert_eq!(ours.position("~absent~"), None);
    }
}
