//! The Pajé reader's first steps: lines found, cut into words and checked
//! to be UTF-8, either on the reading thread or chunks of lines ahead as
//! jobs of the pipeline's pool ([`crate::exec::chunks`]), so that with more
//! cores the simulation has the reading thread to itself (the reading
//! thread cuts what no worker has started when it needs it). Both ways
//! give the same lines, with the same numbers.
//!
//! Jobs also find each event line's definition, parse its time and find
//! its container and type, in copies of the reading thread's catalogue and
//! identifiers ([`Known`]) published as they grow. Definitions and
//! identifiers are only added, so what a copy finds is what the reading
//! thread would find; what the copy lacks (an id defined later, a container
//! created since, a time that is not plain seconds) is left to the reading
//! thread, which also reports what is wrong with a line.

use std::sync::{Arc, Mutex};

use super::catalogue::{Catalogue, Found};
use super::{append_words, split_words, Field, WordSpan};
use crate::decimal::plain_seconds_to_ns;
use crate::error::Result;
use crate::exec::chunks::{Chunk, Chunked};
use crate::exec::ordered::OrderedWork;
use crate::fasthash::StrMap;
use crate::io::LineReader;
use crate::pool::Pool;

/// A line cut into words.
pub struct Lexed<'a> {
    /// The line's bytes, without its newline (private: [`Lexed::text`]
    /// relies on them being those `utf8` was found for).
    text: &'a [u8],
    /// The words, as byte ranges of `text` (see [`split_words`]; private:
    /// [`Lexed::words_into`] relies on them being cut at ASCII bytes).
    words: &'a [WordSpan],
    /// 1-based line number.
    pub number: u64,
    /// The input ended before the line's newline.
    pub truncated: bool,
    /// Its definition and what else a lexing job found of it, when one
    /// read it.
    pub resolved: Option<Resolved>,
    utf8: bool,
}

/// What a lexing job found of an event line ahead of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// The position of its definition in the catalogue.
    pub def: usize,
    /// What it found of the line's fields.
    pub found: Found,
}

/// What the lexing jobs read lines through: copies of the reading thread's
/// catalogue and of its container, type and value identifiers (each with
/// its index in the simulation).
#[derive(Clone)]
pub struct Known {
    /// The event definitions.
    pub catalogue: Catalogue,
    /// Container identifiers.
    pub containers: StrMap<u32>,
    /// Type identifiers.
    pub types: StrMap<u32>,
    /// The identifiers of each type's values, by type index, at their
    /// positions among the type's values.
    pub values: Vec<StrMap<()>>,
}

/// The copy the lexing jobs read lines through.
type Published = Arc<Mutex<Option<Arc<Known>>>>;

impl<'a> Lexed<'a> {
    /// The line's bytes, without its newline.
    pub fn bytes(&self) -> &'a [u8] {
        self.text
    }

    /// The line as text, or `None` when it is not UTF-8.
    pub fn text(&self) -> Option<&'a str> {
        // SAFETY: every `Lexed` is made with `utf8` set by `is_utf8` of
        // these very bytes (on this thread or in the lexing job), and both
        // fields are private to this module, which never changes them.
        unsafe { checked_text(self.text, self.utf8) }
    }

    /// The line's words: its text cut at each span of [`Lexed::words`],
    /// in `out` (emptied first); `None` when the line is not UTF-8.
    pub fn words_into<'o>(&self, out: &'o mut Vec<&'a str>) -> Option<&'o [&'a str]> {
        let text = self.text()?;
        out.clear();
        for &span in self.words {
            // SAFETY: the words of a `Lexed` are cut at ASCII bytes of its
            // text (`split_words`, `append_words`), so at char boundaries,
            // and the field is private to this module, which never changes
            // it.
            out.push(unsafe { word_at(text, span) });
        }
        Some(out)
    }

    /// The words, as byte ranges of the line.
    pub fn spans(&self) -> &'a [WordSpan] {
        self.words
    }
}

/// The word of `text` at `span` (empty when past its end), without checking
/// the char boundaries again (checking them cost 3 % of the reading thread).
///
/// # Safety
///
/// Both ends of `span` fall on char boundaries of `text`.
unsafe fn word_at(text: &str, (a, b): WordSpan) -> &str {
    let word = text
        .as_bytes()
        .get(a as usize..b as usize)
        .unwrap_or_default();
    // SAFETY: the caller's contract: a run of whole chars is UTF-8.
    unsafe { std::str::from_utf8_unchecked(word) }
}

/// `text` as a string when `utf8`.
///
/// # Safety
///
/// `utf8` is true only if `text` is valid UTF-8.
unsafe fn checked_text(text: &[u8], utf8: bool) -> Option<&str> {
    // SAFETY: the caller's contract.
    utf8.then(|| unsafe { std::str::from_utf8_unchecked(text) })
}

fn is_utf8(text: &[u8]) -> bool {
    text.is_ascii() || std::str::from_utf8(text).is_ok()
}

/// The lines of a Pajé input, cut into words.
pub enum Lines<R> {
    /// Read and cut on this thread.
    Here {
        /// The input's lines.
        lines: LineReader<R>,
        /// The words of the line last read.
        words: Vec<WordSpan>,
    },
    /// Cut chunks ahead on the pool.
    Ahead(Box<AheadLines>),
}

/// The state of [`Lines::Ahead`].
pub struct AheadLines {
    name: String,
    chunks: Chunked<Lex>,
    published: Published,
    /// The chunk being read, and the index of its next line.
    current: Option<(Chunk, LexedChunk)>,
    next: usize,
    /// The number of the line last returned.
    number: u64,
}

impl<R: std::io::Read> Lines<R> {
    /// The lines of `inner`, cut on this thread.
    pub fn here(name: &str, inner: R) -> Lines<R> {
        Lines::Here {
            lines: LineReader::new(name, inner),
            words: Vec::new(),
        }
    }

    /// The lines of `inner`, cut [`AHEAD`] chunks ahead on `pool`; their
    /// times are parsed there too when `times_in_seconds`.
    pub fn ahead(name: &str, inner: R, pool: &Pool, times_in_seconds: bool) -> Lines<R>
    where
        R: 'static,
    {
        let published = Published::default();
        let work = (0..AHEAD)
            .map(|_| Lex {
                published: Arc::clone(&published),
                times_in_seconds,
            })
            .collect();
        let chunks = Chunked::new(name, Vec::new(), Box::new(inner), work, pool);
        Lines::Ahead(Box::new(AheadLines {
            name: name.to_string(),
            chunks,
            published,
            current: None,
            next: 0,
            number: 0,
        }))
    }

    /// The input's name.
    pub fn name(&self) -> &str {
        match self {
            Lines::Here { lines, .. } => lines.name(),
            Lines::Ahead(ahead) => &ahead.name,
        }
    }

    /// Whether lexing jobs read the lines through what is published.
    pub fn reads_ahead(&self) -> bool {
        matches!(self, Lines::Ahead(_))
    }

    /// Gives the lexing jobs `known` to read the lines through from now
    /// on (nothing to do when lines are cut here).
    pub fn publish(&self, known: Known) {
        if let Lines::Ahead(ahead) = self {
            if let Ok(mut published) = ahead.published.lock() {
                *published = Some(Arc::new(known));
            }
        }
    }

    /// The next line, or `None` at the end of the input.
    pub fn next_lexed(&mut self) -> Result<Option<Lexed<'_>>> {
        match self {
            Lines::Here { lines, words } => {
                let Some(line) = lines.next_located()? else {
                    return Ok(None);
                };
                split_words(line.text, words);
                Ok(Some(Lexed {
                    text: line.text,
                    words,
                    number: line.number,
                    truncated: line.truncated,
                    resolved: None,
                    utf8: is_utf8(line.text),
                }))
            }
            Lines::Ahead(ahead) => ahead.next_lexed(),
        }
    }
}

impl AheadLines {
    fn next_lexed(&mut self) -> Result<Option<Lexed<'_>>> {
        while self
            .current
            .as_ref()
            .is_none_or(|(_, lexed)| self.next == lexed.lines.len())
        {
            if let Some((chunk, lexed)) = self.current.take() {
                self.chunks.recycle(chunk, lexed);
            }
            self.next = 0;
            match self.chunks.next_done()? {
                Some(done) => self.current = Some(done),
                None => return Ok(None),
            }
        }
        let (chunk, lexed) = self.current.as_ref().expect("a chunk with lines left");
        let i = self.next;
        self.next += 1;
        self.number += 1;
        let line = &lexed.lines[i];
        let first_word = if i == 0 { 0 } else { lexed.lines[i - 1].words };
        Ok(Some(Lexed {
            text: &chunk.bytes()[line.start as usize..line.end as usize],
            words: &lexed.words[first_word as usize..line.words as usize],
            number: self.number,
            truncated: chunk.cut && i + 1 == lexed.lines.len(),
            resolved: line.resolved,
            utf8: line.utf8,
        }))
    }
}

/// Chunks cut ahead of the one the simulation reads: lexing is a small part
/// of the reading thread's work, so a few keep one worker busy.
const AHEAD: usize = 4;

/// The work of a job: a chunk's lines cut into words, and resolved.
pub struct Lex {
    published: Published,
    times_in_seconds: bool,
}

/// A chunk's lines and their words.
#[derive(Default)]
pub struct LexedChunk {
    lines: Vec<LineSpan>,
    /// The words of every line, one line's after the other's.
    words: Vec<WordSpan>,
}

/// A line of a chunk.
struct LineSpan {
    /// Its bytes in the chunk, without the newline (a chunk is at most a
    /// few [`crate::io::MAX_LINE`]s long).
    start: u32,
    end: u32,
    /// The end of its words in [`LexedChunk::words`].
    words: u32,
    utf8: bool,
    resolved: Option<Resolved>,
}

impl OrderedWork for Lex {
    type In = Chunk;
    type Out = LexedChunk;

    fn run(&mut self, chunk: &Chunk, out: &mut LexedChunk) {
        out.lines.clear();
        out.words.clear();
        let known = self.published.lock().ok().and_then(|k| k.clone());
        let mut start = 0;
        for text in chunk.lines() {
            let first = out.words.len();
            append_words(text, &mut out.words);
            let utf8 = is_utf8(text);
            let resolved = match &known {
                Some(known) if utf8 => {
                    resolve(known, text, &out.words[first..], self.times_in_seconds)
                }
                _ => None,
            };
            let end = start + text.len() as u32;
            out.lines.push(LineSpan {
                start,
                end,
                words: out.words.len() as u32,
                utf8,
                resolved,
            });
            start = end + 1;
        }
    }
}

/// The definition of an event line, its time when `times_in_seconds` and
/// written as plain seconds, its container, type and value when `known`
/// has them;
/// `None` for a line left to the reading thread (`%` lines, ids `known`
/// lacks). The reading thread checks the line against its definition.
fn resolve(
    known: &Known,
    text: &[u8],
    words: &[WordSpan],
    times_in_seconds: bool,
) -> Option<Resolved> {
    let word = |i: usize| {
        let &(a, b) = words.get(i)?;
        text.get(a as usize..b as usize)
    };
    let id = word(0)?;
    if id.starts_with(b"%") {
        return None;
    }
    let def = known.catalogue.position(id)?;
    let field = |f: Field| word(known.catalogue.def(def).word_of(f)?);
    let type_ = field(Field::Type).and_then(|w| known.types.get_bytes(w).copied());
    let values = type_.and_then(|t| known.values.get(t as usize));
    let found = Found {
        time_ns: field(Field::Time)
            .filter(|_| times_in_seconds)
            .and_then(plain_seconds_to_ns),
        container: field(Field::Container).and_then(|w| known.containers.get_bytes(w).copied()),
        type_,
        value: values
            .zip(field(Field::Value))
            .and_then(|(values, w)| values.get_index_of_bytes(w))
            .map(|at| at as u32),
    };
    Some(Resolved { def, found })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line as (number, text, words, truncated, UTF-8).
    type Seen = (u64, Vec<u8>, Vec<WordSpan>, bool, bool);

    fn all(mut lines: Lines<std::io::Cursor<Vec<u8>>>) -> Vec<Seen> {
        let mut seen = Vec::new();
        while let Some(line) = lines.next_lexed().unwrap() {
            let utf8 = line.text().is_some();
            seen.push((
                line.number,
                line.text.to_vec(),
                line.words.to_vec(),
                line.truncated,
                utf8,
            ));
        }
        seen
    }

    #[test]
    fn ahead_gives_the_lines_read_here() {
        let odd: [&[u8]; 8] = [
            b"",
            b"6 0.5 C1 ST \"two words\" # comment",
            b"\t7 1\r",
            b"# only a comment",
            b"8 2 \xff\xfe not UTF-8",
            b"9 3 caf\xc3\xa9",
            b"   ",
            b"10 4 a#b",
        ];
        for (lines, last) in [(0, ""), (1, ""), (30_000, ""), (30_000, "11 5 cut")] {
            let mut text = Vec::new();
            for i in 0..lines {
                text.extend_from_slice(odd[i % odd.len()]);
                if i % 9_999 == 0 {
                    // Longer than a chunk.
                    text.extend(std::iter::repeat_n(b'x', 100_000));
                }
                text.push(b'\n');
            }
            text.extend_from_slice(last.as_bytes());
            let here = all(Lines::here("t", std::io::Cursor::new(text.clone())));
            for threads in [1, 2, 3] {
                let pool = Pool::new(crate::pool::Threads::new(threads));
                let cursor = std::io::Cursor::new(text.clone());
                let ahead = all(Lines::ahead("t", cursor, &pool, true));
                assert!(
                    here == ahead,
                    "{lines} lines, last {last:?}, {threads} threads"
                );
            }
            assert_eq!(here.len(), lines + usize::from(!last.is_empty()));
            assert_eq!(here.last().is_some_and(|l| l.3), !last.is_empty());
        }
    }
}
