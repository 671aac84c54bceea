//! Interned identifiers: the `loc`, `cat`, `name`, `peer` and `comm` of a row
//! are [`Sym`]s, small numbers standing for texts kept once in a [`Symbols`]
//! table that a pipeline's readers, stages and writers share.
//!
//! Stages compare, hash and copy symbols instead of strings; text is made
//! only where a row is written, or where a condition matches text (and then
//! once per distinct symbol, see [`SymMemo`]). The table grows with the
//! distinct identifiers of the inputs, never with their rows.
//!
//! The table is shared across threads: the reading thread interns while the
//! writing thread resolves. Texts sit in an append-only vector whose reads
//! take no lock (`boxcar`); interning takes a lock, so hot paths intern
//! through a [`SymCache`], a per-reader front table that takes the lock only
//! for a text it has not seen.
//!
//! A symbol's number says nothing of its text's order, and is given in the
//! order texts are first interned: output never follows symbol order.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use crate::swar::load_zero_padded;

/// An interned text of a [`Symbols`] table. [`Sym::EMPTY`] is the empty text
/// in every table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Sym(u32);

impl Sym {
    /// The empty text (an absent identifier).
    pub const EMPTY: Sym = Sym(0);

    /// True for the empty text.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The symbol's number, dense from 0: an index for tables kept per symbol.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The symbol numbered `n` (as [`Sym::index`] gave it), for compact
    /// copies of rows that never leave the process.
    #[inline]
    pub fn from_index(n: u32) -> Sym {
        Sym(n)
    }
}

/// Texts every table holds at fixed numbers, so code can name them without a
/// lookup: `well_known::ORIGIN` is `"origin"` in every table.
pub mod well_known {
    use super::Sym;

    macro_rules! well_known {
        ($($(#[$doc:meta])* $name:ident = $n:literal $text:literal,)*) => {
            $($(#[$doc])* pub const $name: Sym = Sym($n);)*
            /// The texts, in number order from 1.
            pub(super) const TEXTS: &[&str] = &[$($text),*];
        };
    }

    well_known! {
        /// `format`, the meta key of the stream version.
        FORMAT = 1 "format",
        /// `origin`, the meta key of the absolute time of stream time 0.
        ORIGIN = 2 "origin",
        /// `value`, the nature of a `type` row declaring an entity value.
        VALUE = 3 "value",
        /// `container`, the nature of a `type` row declaring a container type.
        CONTAINER = 4 "container",
        /// `link`, the nature of a `type` row declaring a link type.
        LINK = 5 "link",
        /// `event`, the nature of a `type` row declaring an event type.
        EVENT = 6 "event",
        /// `lane`, the category of the locations a reader makes for a
        /// second stack on one entity.
        LANE = 7 "lane",
        /// `MPI`, the category of MPI calls and messages.
        MPI = 8 "MPI",
        /// `signal`, the category of a TRACE signal's location.
        SIGNAL = 9 "signal",
        /// `resource`, the category of a TRACE resource.
        RESOURCE = 10 "resource",
        /// `stf`, the category of STF records without a row kind of their own.
        STF = 11 "stf",
        /// `0`, the id of Pajé's root container and its type.
        ZERO = 12 "0",
    }
}

/// Hashes a text the way every table of this module does.
#[inline]
fn hash_of(text: &str) -> u64 {
    FxBuildHasher.hash_one(text)
}

/// The shared part: texts by number, and numbers by text.
struct Table {
    texts: boxcar::Vec<Box<str>>,
    /// (hash, symbol) of every text, to find a text's symbol.
    index: Mutex<HashTable<(u64, Sym)>>,
}

/// The symbol table of a pipeline: a handle, cheap to clone; clones share
/// one table. Readers intern, writers resolve, from any thread.
#[derive(Clone)]
pub struct Symbols {
    table: Arc<Table>,
}

impl std::fmt::Debug for Symbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Symbols({} texts)", self.len())
    }
}

impl Default for Symbols {
    fn default() -> Symbols {
        Symbols::new()
    }
}

impl Symbols {
    /// A table holding the empty text and the [`well_known`] ones.
    pub fn new() -> Symbols {
        let symbols = Symbols {
            table: Arc::new(Table {
                texts: boxcar::Vec::new(),
                index: Mutex::new(HashTable::new()),
            }),
        };
        for text in std::iter::once(&"").chain(well_known::TEXTS) {
            symbols.intern(text);
        }
        symbols
    }

    /// The text of `sym`.
    ///
    /// # Panics
    /// When `sym` comes from another table (a bug: one pipeline, one table).
    #[inline]
    pub fn text(&self, sym: Sym) -> &str {
        match self.table.texts.get(sym.index()) {
            Some(text) => text,
            None => panic!("symbol {} is not in this table", sym.0),
        }
    }

    /// The symbol of `text`, added when new.
    pub fn intern(&self, text: &str) -> Sym {
        self.find_or_add(hash_of(text), text, true)
            .expect("interning always gives a symbol")
    }

    /// The symbol of `text` when some row or definition interned it (a
    /// condition on a text no row carries matches nothing).
    pub fn lookup(&self, text: &str) -> Option<Sym> {
        self.find_or_add(hash_of(text), text, false)
    }

    /// How many texts the table holds (the empty one included).
    pub fn len(&self) -> usize {
        self.table.texts.count()
    }

    /// Never: the empty text is always there.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn find_or_add(&self, hash: u64, text: &str, add: bool) -> Option<Sym> {
        let texts = &self.table.texts;
        // A poisoned lock only means another thread panicked mid-insert;
        // the table itself is consistent (a push is the last step).
        let mut index = self
            .table
            .index
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let same =
            |&(h, s): &(u64, Sym)| h == hash && texts.get(s.index()).map(|t| &**t) == Some(text);
        if let Some(&(_, sym)) = index.find(hash, same) {
            return Some(sym);
        }
        if !add {
            return None;
        }
        let n = u32::try_from(texts.count()).expect("fewer than 2^32 distinct identifiers");
        let at = texts.push(text.into());
        debug_assert_eq!(at, n as usize, "pushes happen under the lock");
        index.insert_unique(hash, (hash, Sym(n)), |&(h, _)| h);
        Some(Sym(n))
    }
}

/// A reader's front table to a [`Symbols`]: interning a text it has seen
/// takes no lock. Texts of up to 16 bytes (most identifiers) are kept as
/// two words and a length, found by comparing numbers; longer ones by hash.
/// Memory: one entry per distinct text it interned.
pub struct SymCache {
    symbols: Symbols,
    /// Open addressing, a power of two long; an empty slot has no symbol.
    short: Vec<Short>,
    short_count: usize,
    long: HashTable<(u64, Sym)>,
}

/// A text of up to 16 bytes: its bytes as two little-endian words (zero
/// beyond the text), its length, its symbol.
#[derive(Debug, Clone, Copy, Default)]
struct Short {
    words: [u64; 2],
    len: u32,
    sym: Sym,
}

/// Longest text kept as a [`Short`].
const SHORT: usize = 16;

/// The two words of a text of at most [`SHORT`] bytes.
#[inline]
fn short_words(bytes: &[u8]) -> [u64; 2] {
    let (first, second) = bytes.split_at(bytes.len().min(8));
    [load_zero_padded(first), load_zero_padded(second)]
}

/// Where a short text's probe starts.
#[inline]
fn short_slot(words: [u64; 2], len: usize, mask: usize) -> usize {
    let h = (words[0] ^ words[1].rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 32) as usize & mask
}

impl SymCache {
    /// A cache in front of `symbols`.
    pub fn new(symbols: Symbols) -> SymCache {
        SymCache {
            symbols,
            short: vec![Short::default(); 64],
            short_count: 0,
            long: HashTable::new(),
        }
    }

    /// The table behind the cache.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// The symbol of `text`, added to the table when new.
    #[inline]
    pub fn intern(&mut self, text: &str) -> Sym {
        let len = text.len();
        if len == 0 {
            return Sym::EMPTY;
        }
        if len > SHORT {
            return self.intern_long(text);
        }
        let words = short_words(text.as_bytes());
        let mask = self.short.len() - 1;
        let mut i = short_slot(words, len, mask);
        loop {
            let e = self.short[i];
            if e.sym.is_empty() {
                break;
            }
            if e.words == words && e.len as usize == len {
                return e.sym;
            }
            i = (i + 1) & mask;
        }
        let sym = self.symbols.intern(text);
        self.short[i] = Short {
            words,
            len: len as u32,
            sym,
        };
        self.short_count += 1;
        if self.short_count * 2 > self.short.len() {
            self.grow_short();
        }
        sym
    }

    fn grow_short(&mut self) {
        let bigger = vec![Short::default(); self.short.len() * 2];
        let old = std::mem::replace(&mut self.short, bigger);
        let mask = self.short.len() - 1;
        for e in old.into_iter().filter(|e| !e.sym.is_empty()) {
            let mut i = short_slot(e.words, e.len as usize, mask);
            while !self.short[i].sym.is_empty() {
                i = (i + 1) & mask;
            }
            self.short[i] = e;
        }
    }

    fn intern_long(&mut self, text: &str) -> Sym {
        let hash = hash_of(text);
        let symbols = &self.symbols;
        let same = |&(h, s): &(u64, Sym)| h == hash && symbols.text(s) == text;
        if let Some(&(_, sym)) = self.long.find(hash, same) {
            return sym;
        }
        let sym = symbols.intern(text);
        self.long.insert_unique(hash, (hash, sym), |&(h, _)| h);
        sym
    }
}

/// An answer kept per symbol: for a condition on text (a glob, a regular
/// expression) asked of many rows, decided once per distinct symbol.
#[derive(Debug, Clone, Default)]
pub struct SymMemo {
    /// 0 not asked yet, 1 false, 2 true.
    answers: Vec<u8>,
}

impl SymMemo {
    /// The answer for `sym`, asking `decide` the first time.
    #[inline]
    pub fn get(&mut self, sym: Sym, decide: impl FnOnce() -> bool) -> bool {
        let i = sym.index();
        if i >= self.answers.len() {
            self.answers.resize(i + 1, 0);
        }
        match self.answers[i] {
            0 => {
                let answer = decide();
                self.answers[i] = 1 + u8::from(answer);
                answer
            }
            known => known == 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_gives_one_symbol_per_text() {
        let symbols = Symbols::new();
        assert_eq!(symbols.intern(""), Sym::EMPTY);
        for (i, text) in well_known::TEXTS.iter().enumerate() {
            assert_eq!(symbols.intern(text), Sym(i as u32 + 1), "{text}");
        }
        assert_eq!(symbols.intern("origin"), well_known::ORIGIN);
        assert_eq!(symbols.text(well_known::FORMAT), "format");
        assert_eq!(symbols.text(well_known::VALUE), "value");
        let a = symbols.intern("rank0");
        let b = symbols.intern("rank1");
        assert_ne!(a, b);
        assert_eq!(symbols.intern("rank0"), a);
        assert_eq!(symbols.text(b), "rank1");
        assert_eq!(symbols.lookup("rank1"), Some(b));
        assert_eq!(symbols.lookup("rank2"), None);
        let mut cache = SymCache::new(symbols.clone());
        assert_eq!(cache.intern("rank1"), b);
        let c = cache.intern("rank2");
        assert_eq!(symbols.lookup("rank2"), Some(c));
        assert_eq!(cache.intern(""), Sym::EMPTY);
        // Short and long texts, texts alike but for their length or a
        // trailing zero byte, and enough of them to grow the cache.
        let texts: Vec<String> = (0..500)
            .flat_map(|i| {
                [
                    format!("l{i}"),
                    format!("a longer location name {i}"),
                    format!("{:\0<16}", i % 7),
                    format!("{}", i % 7),
                ]
            })
            .collect();
        let syms: Vec<Sym> = texts.iter().map(|t| cache.intern(t)).collect();
        for (t, &sym) in texts.iter().zip(&syms) {
            assert_eq!(symbols.text(sym), t);
            assert_eq!(cache.intern(t), sym);
        }
    }

    #[test]
    fn threads_intern_and_resolve_at_once() {
        let symbols = Symbols::new();
        std::thread::scope(|scope| {
            for t in 0..4 {
                let mut cache = SymCache::new(symbols.clone());
                scope.spawn(move || {
                    for i in 0..2000 {
                        let text = format!("loc{}", (i * 7 + t) % 1500);
                        let sym = cache.intern(&text);
                        assert_eq!(cache.symbols().text(sym), text);
                    }
                });
            }
        });
        // 1500 texts, each once, after the empty one and the well-known.
        assert_eq!(symbols.len(), 1 + well_known::TEXTS.len() + 1500);
    }

    #[test]
    fn memo_asks_once_per_symbol() {
        let mut memo = SymMemo::default();
        let mut asked = 0;
        for sym in [Sym(5), Sym(5), Sym(2), Sym(5)] {
            memo.get(sym, || {
                asked += 1;
                sym == Sym(5)
            });
        }
        assert_eq!(asked, 2);
        assert!(memo.get(Sym(5), || unreachable!()));
        assert!(!memo.get(Sym(2), || unreachable!()));
    }
}
