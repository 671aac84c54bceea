//! A compact in-memory form of records: for handing many of them to another
//! thread at once (`ops::pump` runs the sink on a second core) and for
//! holding many of them a long time (the matcher's halves in flight).
//!
//! A [`Record`] is about 250 bytes with five separately allocated strings;
//! moving those between cores costs more than the work they carry. A batch is
//! two buffers: the layout (per record a kind byte, a bit set of the fields
//! present, the numbers, the symbols of the identifiers present, the lengths
//! of the non-empty strings) and the text of those strings, kept as a
//! `String` so reading it back needs no UTF-8 check.
//! It never leaves the process, so it has no version and no compatibility
//! rules.

use crate::model::record::{Kind, Record, Sym};

/// Records packed into two reusable buffers (layout and text).
#[derive(Debug, Default)]
pub struct RecordBatch {
    bytes: Vec<u8>,
    text: String,
    len: usize,
}

/// Presence bits of the fields (numbers are written time, end, tag, depth,
/// size).
const TIME: u16 = 1;
const END: u16 = 1 << 1;
const DEPTH: u16 = 1 << 2;
const TAG: u16 = 1 << 3;
const SIZE: u16 = 1 << 4;
const EXTRA: u16 = 1 << 5;
/// The first byte of an entry that is a raw line, not a record (kinds are
/// numbered from 0).
const RAW: u8 = 0xFF;
/// The first of the bits of the identifiers, in [`Record::syms`] order.
const FIRST_SYM: u32 = 6;
/// The first of the bits of the text fields, in [`Record::texts`] order.
const FIRST_TEXT: u32 = FIRST_SYM + 5;

impl RecordBatch {
    /// An empty batch.
    pub fn new() -> RecordBatch {
        RecordBatch::default()
    }

    /// Number of records in the batch.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the batch, keeping its buffer.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.text.clear();
        self.len = 0;
    }

    /// Appends a copy of `rec`.
    pub fn push(&mut self, rec: &Record) {
        let out = &mut self.bytes;
        let text = &mut self.text;
        let texts = rec.texts();
        out.reserve(64);
        out.push(rec.kind as u8);
        let bits_at = out.len();
        out.extend_from_slice(&[0, 0]);
        let mut bits = 0u16;
        for (bit, n) in [(TIME, rec.time), (END, rec.end), (TAG, rec.tag)] {
            if let Some(n) = n {
                bits |= bit;
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        if let Some(d) = rec.depth {
            bits |= DEPTH;
            out.extend_from_slice(&d.to_le_bytes());
        }
        if let Some(s) = rec.size {
            bits |= SIZE;
            out.extend_from_slice(&s.to_le_bytes());
        }
        for (i, sym) in rec.syms().into_iter().enumerate() {
            if !sym.is_empty() {
                bits |= 1 << (FIRST_SYM + i as u32);
                push_len(out, sym.index());
            }
        }
        for (i, field) in texts.into_iter().enumerate() {
            if !field.is_empty() {
                bits |= 1 << (FIRST_TEXT + i as u32);
                push_text(out, text, field);
            }
        }
        if !rec.extra.is_empty() {
            bits |= EXTRA;
            push_len(out, rec.extra.len());
            for (k, v) in &rec.extra {
                push_text(out, text, k);
                push_text(out, text, v);
            }
        }
        out[bits_at..bits_at + 2].copy_from_slice(&bits.to_le_bytes());
        self.len += 1;
    }

    /// Appends a row given only as its raw line (see
    /// [`crate::pipe::Reads::raw_line_alone`]).
    pub fn push_raw(&mut self, raw: &[u8]) {
        self.bytes.push(RAW);
        push_len(&mut self.bytes, raw.len());
        self.bytes.extend_from_slice(raw);
        self.len += 1;
    }

    /// Writes the batch to `out`, for [`RecordBatch::read_from`] in this
    /// process (a spill file: `exec::spill`).
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for n in [self.len, self.bytes.len(), self.text.len()] {
            out.write_all(&(n as u64).to_le_bytes())?;
        }
        out.write_all(&self.bytes)?;
        out.write_all(self.text.as_bytes())
    }

    /// Replaces the batch with the one [`RecordBatch::write_to`] wrote
    /// next in `input`; false at the end of the input.
    pub fn read_from<R: std::io::Read>(&mut self, input: &mut R) -> std::io::Result<bool> {
        let mut head = [0u8; 24];
        match input.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(e),
        }
        let number = |i: usize| u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().expect("8"));
        let (len, bytes, text) = (number(0), number(1), number(2));
        self.clear();
        self.len = len as usize;
        std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut *input, bytes),
            &mut self.bytes,
        )?;
        let mut text_bytes = std::mem::take(&mut self.text).into_bytes();
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut *input, text), &mut text_bytes)?;
        self.text = String::from_utf8(text_bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        if self.bytes.len() as u64 != bytes || self.text.len() as u64 != text {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(true)
    }

    /// Reads the records back in order.
    pub fn reader(&self) -> BatchReader<'_> {
        BatchReader {
            bytes: &self.bytes,
            at: 0,
            text: &self.text,
            text_at: 0,
        }
    }
}

fn push_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn push_text(out: &mut Vec<u8>, text: &mut String, s: &str) {
    push_len(out, s.len());
    text.push_str(s);
}

/// Reads the records of a [`RecordBatch`] in order.
pub struct BatchReader<'a> {
    bytes: &'a [u8],
    at: usize,
    text: &'a str,
    text_at: usize,
}

impl<'a> BatchReader<'a> {
    /// Refills `rec` with the next record; `false` at the end of the batch.
    ///
    /// The batch was written by [`RecordBatch::push`] in this process, so a
    /// malformed one is a bug: it panics rather than guess.
    pub fn next_into(&mut self, rec: &mut Record) -> bool {
        self.next_entry(rec)
            .map(|raw| assert!(raw.is_none(), "no raw lines in this batch"))
            .is_some()
    }

    /// The next entry: a record refilled into `rec` (`Some(None)`), a raw
    /// line (`Some(Some(line))`, `rec` untouched), or `None` at the end.
    pub fn next_entry(&mut self, rec: &mut Record) -> Option<Option<&'a [u8]>> {
        if self.at >= self.bytes.len() {
            return None;
        }
        if self.bytes[self.at] == RAW {
            self.at += 1;
            let n = self.len();
            let raw = &self.bytes[self.at..self.at + n];
            self.at += n;
            return Some(Some(raw));
        }
        let kind = self.bytes[self.at];
        self.at += 1;
        rec.kind = *Kind::ALL
            .get(usize::from(kind))
            .expect("a batch holds valid kinds");
        let bits = u16::from_le_bytes(self.take::<2>());
        let int = |this: &mut Self, bit: u16| {
            (bits & bit != 0).then(|| i64::from_le_bytes(this.take::<8>()))
        };
        rec.time = int(self, TIME);
        rec.end = int(self, END);
        rec.tag = int(self, TAG);
        rec.depth = (bits & DEPTH != 0).then(|| u32::from_le_bytes(self.take::<4>()));
        rec.size = (bits & SIZE != 0).then(|| u64::from_le_bytes(self.take::<8>()));
        for (i, sym) in rec.syms_mut().into_iter().enumerate() {
            *sym = if bits & (1 << (FIRST_SYM + i as u32)) != 0 {
                Sym::from_index(self.len() as u32)
            } else {
                Sym::EMPTY
            };
        }
        for (i, field) in rec.texts_mut().into_iter().enumerate() {
            field.clear();
            if bits & (1 << (FIRST_TEXT + i as u32)) != 0 {
                field.push_str(self.text());
            }
        }
        rec.extra.clear();
        if bits & EXTRA != 0 {
            for _ in 0..self.len() {
                let k = self.text().to_string();
                let v = self.text().to_string();
                rec.extra.push((k, v));
            }
        }
        Some(None)
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let b: [u8; N] = self.bytes[self.at..self.at + N]
            .try_into()
            .expect("N bytes");
        self.at += N;
        b
    }

    fn len(&mut self) -> usize {
        let mut n = 0usize;
        let mut shift = 0;
        loop {
            let b = self.bytes[self.at];
            self.at += 1;
            n |= usize::from(b & 0x7f) << shift;
            if b < 0x80 {
                return n;
            }
            shift += 7;
        }
    }

    fn text(&mut self) -> &'a str {
        let n = self.len();
        // Whole strings were pushed, so these are character boundaries.
        let s = &self.text[self.text_at..self.text_at + n];
        self.text_at += n;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_as_they_went_in() {
        let mut a = Record::new(Kind::Send);
        a.time = Some(-5);
        a.end = Some(i64::MAX);
        let symbols = crate::model::symbol::Symbols::new();
        a.loc = symbols.intern("P0T1");
        a.peer = symbols.intern("P1");
        a.tag = Some(7);
        a.size = Some(u64::MAX);
        a.depth = Some(3);
        a.attrs.push_str(&"é".repeat(100));
        a.extra.push(("x".into(), "1".into()));
        let b = Record::meta(crate::model::record::META_FORMAT, "tracepipe-stream/1");
        let c = Record::new(Kind::Event);
        let mut batch = RecordBatch::new();
        for r in [&a, &b, &c] {
            batch.push(r);
        }
        assert_eq!(batch.len(), 3);
        let mut got = Vec::new();
        let mut rec = a.clone();
        let mut reader = batch.reader();
        while reader.next_into(&mut rec) {
            got.push(rec.clone());
        }
        assert_eq!(got, vec![a, b, c.clone()]);
        let mut mixed = RecordBatch::new();
        mixed.push(&c);
        mixed.push_raw(b"event\t1");
        mixed.push(&c);
        let mut reader = mixed.reader();
        let mut rec = Record::default();
        assert_eq!(reader.next_entry(&mut rec), Some(None));
        assert_eq!(reader.next_entry(&mut rec), Some(Some(&b"event\t1"[..])));
        assert_eq!(reader.next_entry(&mut rec), Some(None));
        assert_eq!(reader.next_entry(&mut rec), None);
    }
}
