//! The stream codec: the TSV and JSON Lines forms of the record stream, and the
//! rules both readers enforce (see `docs/stream.md`).

pub mod jsonl;
mod nested;
pub mod parquet;
pub mod tsv;

use crate::swar::{bytes_equal, load_zero_padded, HIGHS};

/// What a row of at most 64 bytes holds, found in one pass: a bit per tab
/// (bit `i` for byte `i`), and whether it is all ASCII and holds a
/// backslash. Longer rows go through [`Fields`] and [`ascii_and_backslash`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortRow {
    /// Bit `i` set when byte `i` is a tab.
    pub tabs: u64,
    /// Every byte is below 0x80.
    pub ascii: bool,
    /// Some byte is a backslash.
    pub backslash: bool,
}

impl ShortRow {
    /// The fields of `line`, the row these tabs were found in.
    #[inline]
    pub fn fields(self, line: &[u8]) -> ShortFields<'_> {
        ShortFields {
            line,
            tabs: self.tabs,
            start: 0,
        }
    }
}

/// The fields of a [`ShortRow`], cut at the tabs found in it.
pub struct ShortFields<'a> {
    line: &'a [u8],
    tabs: u64,
    start: usize,
}

impl<'a> Iterator for ShortFields<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.start > self.line.len() {
            return None;
        }
        let end = match self.tabs {
            0 => self.line.len(),
            tabs => tabs.trailing_zeros() as usize,
        };
        self.tabs &= self.tabs.wrapping_sub(1);
        let field = &self.line[self.start..end];
        self.start = end + 1;
        Some(field)
    }
}

/// The longest row [`short_row`] reads.
pub const SHORT_ROW: usize = 64;

/// The bytes of a 64-byte block that are tabs, newlines, backslashes or
/// high (not ASCII): bit `i` for byte `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HighBytes {
    tabs: u64,
    newlines: u64,
    backslashes: u64,
    high: u64,
}

impl HighBytes {
    /// The row of the first `len` bytes.
    #[inline]
    fn row(self, len: usize) -> ShortRow {
        let below = if len >= SHORT_ROW {
            u64::MAX
        } else {
            (1u64 << len) - 1
        };
        ShortRow {
            tabs: self.tabs & below,
            ascii: self.high & below == 0,
            backslash: self.backslashes & below != 0,
        }
    }
}

/// [`ShortRow`] of `line`, when it is at most [`SHORT_ROW`] bytes long.
#[inline]
pub fn short_row(line: &[u8]) -> Option<ShortRow> {
    if line.len() > SHORT_ROW {
        return None;
    }
    let mut block = [0u8; SHORT_ROW];
    block[..line.len()].copy_from_slice(line);
    Some(block_masks(&block).row(line.len()))
}

/// The row that starts `ahead` (bytes read and not yet taken) when it ends
/// with a newline within its first [`SHORT_ROW`] bytes: its length without
/// the newline (and without a `\r` before it), and what it holds.
#[inline]
pub fn short_row_ahead(ahead: &[u8]) -> Option<(usize, ShortRow)> {
    let block: &[u8; SHORT_ROW] = ahead.get(..SHORT_ROW)?.try_into().ok()?;
    let masks = block_masks(block);
    if masks.newlines == 0 {
        return None;
    }
    let len = masks.newlines.trailing_zeros() as usize;
    let text = if len > 0 && block[len - 1] == b'\r' {
        len - 1
    } else {
        len
    };
    Some((len, masks.row(text)))
}

/// The masks of a 64-byte block, sixteen bytes at a time with SSE2.
#[cfg(target_arch = "x86_64")]
#[inline]
fn block_masks(block: &[u8; SHORT_ROW]) -> HighBytes {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut masks = HighBytes {
        tabs: 0,
        newlines: 0,
        backslashes: 0,
        high: 0,
    };
    // SAFETY: SSE2 is part of every x86_64 processor; each load reads the
    // 16 bytes of its chunk, unaligned.
    unsafe {
        let tab = _mm_set1_epi8(b'\t' as i8);
        let newline = _mm_set1_epi8(b'\n' as i8);
        let slash = _mm_set1_epi8(b'\\' as i8);
        for (i, chunk) in block.chunks_exact(16).enumerate() {
            let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let bits = |m| u64::from(_mm_movemask_epi8(m) as u16) << (16 * i);
            masks.tabs |= bits(_mm_cmpeq_epi8(v, tab));
            masks.newlines |= bits(_mm_cmpeq_epi8(v, newline));
            masks.backslashes |= bits(_mm_cmpeq_epi8(v, slash));
            masks.high |= bits(v);
        }
    }
    masks
}

/// The masks of a 64-byte block.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn block_masks(block: &[u8; SHORT_ROW]) -> HighBytes {
    block_masks_swar(block)
}

/// The masks of a 64-byte block, eight bytes at a time (the portable
/// form; on x86_64, what the SSE2 form is tested against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn block_masks_swar(block: &[u8; SHORT_ROW]) -> HighBytes {
    let mut masks = HighBytes {
        tabs: 0,
        newlines: 0,
        backslashes: 0,
        high: 0,
    };
    for (i, chunk) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let bits = |mask: u64| crate::swar::to_bits(mask) << (8 * i);
        masks.tabs |= bits(bytes_equal(w, b'\t'));
        masks.newlines |= bits(bytes_equal(w, b'\n'));
        masks.backslashes |= bits(bytes_equal(w, b'\\'));
        masks.high |= bits(w & HIGHS);
    }
    masks
}

/// The tab-separated fields of a row, found eight bytes at a time as they
/// are asked for (no list of field ends is built).
pub struct Fields<'a> {
    line: &'a [u8],
    /// Where the next field starts; past the end after the last field.
    at: usize,
    /// Tabs of the word loaded last not handed out yet (a high bit per
    /// tab), and where that word starts.
    tabs: u64,
    word_at: usize,
    /// How much of the line is loaded.
    loaded: usize,
}

impl<'a> Fields<'a> {
    /// The fields of `line`.
    #[inline]
    pub fn new(line: &'a [u8]) -> Fields<'a> {
        Fields {
            line,
            at: 0,
            tabs: 0,
            word_at: 0,
            loaded: 0,
        }
    }

    /// True when every field was handed out.
    #[inline]
    pub fn is_done(&self) -> bool {
        self.at > self.line.len()
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let len = self.line.len();
        if self.at > len {
            return None;
        }
        loop {
            if self.tabs != 0 {
                let end = self.word_at + (self.tabs.trailing_zeros() / 8) as usize;
                self.tabs &= self.tabs - 1;
                let field = &self.line[self.at..end];
                self.at = end + 1;
                return Some(field);
            }
            if self.loaded >= len {
                let field = &self.line[self.at..];
                self.at = len + 1;
                return Some(field);
            }
            let word = &self.line[self.loaded..len.min(self.loaded + 8)];
            // Zero padding holds no tab.
            self.tabs = bytes_equal(load_zero_padded(word), b'\t');
            self.word_at = self.loaded;
            self.loaded += 8;
        }
    }
}

/// Whether `line` is all ASCII and whether it holds a backslash, eight
/// bytes at a time.
#[inline]
pub fn ascii_and_backslash(line: &[u8]) -> (bool, bool) {
    let (mut high, mut backslash) = (0u64, 0u64);
    let mut chunks = line.chunks_exact(8);
    for chunk in &mut chunks {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        high |= w;
        backslash |= bytes_equal(w, b'\\');
    }
    // Zero padding is neither high nor a backslash.
    let w = load_zero_padded(chunks.remainder());
    high |= w;
    backslash |= bytes_equal(w, b'\\');
    (high & HIGHS == 0, backslash != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_rows_are_read_like_long_ones() {
        let mut line = Vec::new();
        for b in (0..=255u8).cycle().step_by(7).take(400) {
            line.push(b);
            for len in [line.len(), 64.min(line.len())] {
                let row = &line[..len];
                let Some(short) = short_row(row) else {
                    assert!(len > SHORT_ROW);
                    continue;
                };
                let want: u64 = row
                    .iter()
                    .enumerate()
                    .filter(|(_, &b)| b == b'\t')
                    .map(|(i, _)| 1 << i)
                    .sum();
                assert_eq!(short.tabs, want, "{row:?}");
                let mut block = [0; SHORT_ROW];
                block[..len].copy_from_slice(row);
                assert_eq!(block_masks_swar(&block), block_masks(&block));
                // The same row in a buffer, before its newline.
                if len < SHORT_ROW {
                    let mut ahead = row.to_vec();
                    ahead.push(b'\n');
                    ahead.resize(SHORT_ROW, b'x');
                    if !row.contains(&b'\n') {
                        let text = if row.ends_with(b"\r") { len - 1 } else { len };
                        let want = short_row(&row[..text]).unwrap();
                        assert_eq!(short_row_ahead(&ahead), Some((len, want)), "{row:?}");
                    }
                }
                assert_eq!(
                    (short.ascii, short.backslash),
                    ascii_and_backslash(row),
                    "{row:?}"
                );
            }
        }
    }

    #[test]
    fn fields_and_flags_agree_with_splitting() {
        for line in [
            &b""[..],
            b"\t",
            b"abc",
            b"a\tb\t\tc",
            b"0123456\t89abcdef\t\t\t\t\t\t\t\t\t",
            b"01234567\t",
            "kind\t\u{e9}\\t\tx".as_bytes(),
        ] {
            let got: Vec<&[u8]> = Fields::new(line).collect();
            let want: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
            assert_eq!(got, want, "{line:?}");
            let mut fields = Fields::new(line);
            fields.next();
            assert_eq!(fields.count(), want.len() - 1);
            assert_eq!(
                ascii_and_backslash(line),
                (line.is_ascii(), line.contains(&b'\\'))
            );
        }
    }
}
