//! OTF2's buffer encodings, written: compressed integers, strings, records
//! with their lengths, and event files cut into chunks (the inverse of
//! `buffer.rs` and `events.rs`; docs/otf2.md, "Encodings").

use super::buffer::{self, CHUNK_HEADER_LEN};

/// Bytes being written, with the offsets of the fields a fuzzer or a test
/// may want to damage (record lengths, references, counts).
#[derive(Debug, Default, Clone)]
pub struct Buf {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Offsets of record lengths, references and counts written.
    pub marks: Vec<usize>,
}

impl Buf {
    /// One byte.
    pub fn u8(&mut self, v: u8) -> &mut Buf {
        self.bytes.push(v);
        self
    }

    /// A full little-endian u32.
    pub fn u32(&mut self, v: u32) -> &mut Buf {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A full little-endian u64.
    pub fn u64(&mut self, v: u64) -> &mut Buf {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A compressed u32 (0xff alone for u32::MAX).
    pub fn u32c(&mut self, v: u32) -> &mut Buf {
        self.marks.push(self.bytes.len());
        match v {
            u32::MAX => self.u8(0xff),
            v => self.compressed(v as u64),
        }
    }

    /// A compressed u64 (0xff alone for u64::MAX).
    pub fn u64c(&mut self, v: u64) -> &mut Buf {
        self.marks.push(self.bytes.len());
        match v {
            u64::MAX => self.u8(0xff),
            v => self.compressed(v),
        }
    }

    /// A compressed i64 (negative values take all 8 bytes).
    pub fn i64c(&mut self, v: i64) -> &mut Buf {
        match v {
            v if v < 0 => {
                self.u8(8);
                self.u64(v as u64)
            }
            v => self.compressed(v as u64),
        }
    }

    fn compressed(&mut self, v: u64) -> &mut Buf {
        let n = (8 - v.leading_zeros() as usize / 8) as u8;
        self.u8(n);
        self.bytes.extend_from_slice(&v.to_le_bytes()[..n as usize]);
        self
    }

    /// A string and its NUL.
    pub fn string(&mut self, s: &str) -> &mut Buf {
        self.bytes.extend_from_slice(s.as_bytes());
        self.u8(0)
    }

    /// A record: its id, its length, and the body `fill` writes.
    /// Written in place: the length byte is filled in after the body, which
    /// moves 8 bytes on in the rare record of 255 bytes or more.
    pub fn record(&mut self, id: u8, fill: impl FnOnce(&mut Buf)) -> &mut Buf {
        self.u8(id);
        let at = self.bytes.len();
        self.marks.push(at);
        self.u8(0);
        let marks = self.marks.len();
        fill(self);
        match self.bytes.len() - at - 1 {
            n if n < 0xff => self.bytes[at] = n as u8,
            n => {
                self.bytes[at] = 0xff;
                self.bytes.splice(at + 1..at + 1, (n as u64).to_le_bytes());
                self.marks[marks..].iter_mut().for_each(|m| *m += 8);
            }
        }
        self
    }

    /// Empties the buffer (its memory kept).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.marks.clear();
    }

    /// A buffer header (marker, little-endian, first and last event).
    pub fn header(&mut self, first: u64, last: u64) -> &mut Buf {
        self.u8(buffer::CHUNK_HEADER)
            .u8(buffer::LITTLE_ENDIAN)
            .u64(first)
            .u64(last)
    }
}

/// An event file being written: events go into chunks of `chunk_size`
/// bytes, each closed with an end-of-chunk record and padded.
#[derive(Debug)]
pub struct EventChunks {
    chunk_size: usize,
    /// The finished chunks and the current one.
    pub out: Buf,
    chunk_start: usize,
    first_event: u64,
    events: u64,
}

impl EventChunks {
    /// An event file of chunks of `chunk_size` bytes.
    pub fn new(chunk_size: usize) -> EventChunks {
        let mut out = Buf::default();
        out.header(1, 0);
        EventChunks {
            chunk_size,
            out,
            chunk_start: 0,
            first_event: 1,
            events: 0,
        }
    }

    /// Appends one event (its attribute list, timestamp and record, as
    /// `event` wrote them), starting a new chunk when it does not fit.
    pub fn push(&mut self, event: &Buf) {
        let used = self.out.bytes.len() - self.chunk_start;
        // Room for the event and the end-of-chunk record after it.
        if used + event.bytes.len() + 1 > self.chunk_size && used > CHUNK_HEADER_LEN {
            self.close_chunk(true);
        }
        let at = self.out.bytes.len();
        self.out.marks.extend(event.marks.iter().map(|m| m + at));
        self.out.bytes.extend_from_slice(&event.bytes);
        self.events += 1;
    }

    /// Ends the current chunk (its header's event numbers filled in); with
    /// `more`, pads it and starts the next.
    fn close_chunk(&mut self, more: bool) {
        let last = self.first_event + self.events - 1;
        let h = self.chunk_start + 2;
        self.out.bytes[h..h + 8].copy_from_slice(&self.first_event.to_le_bytes());
        self.out.bytes[h + 8..h + 16].copy_from_slice(&last.to_le_bytes());
        if !more {
            return;
        }
        self.out.u8(buffer::END_OF_CHUNK);
        let end = self.chunk_start + self.chunk_size;
        self.out.bytes.resize(end.max(self.out.bytes.len()), 0);
        self.chunk_start = self.out.bytes.len();
        self.first_event = last + 1;
        self.events = 0;
        self.out.header(self.first_event, 0);
    }

    /// The file's bytes (the last chunk ended by end of file).
    pub fn finish(mut self) -> Buf {
        self.close_chunk(false);
        self.out.u8(buffer::END_OF_FILE).u8(buffer::END_OF_BUFFER);
        self.out
    }
}

/// One event: its attribute list (`(reference, type, value bits)`), its
/// timestamp, then the record `fill` writes (`singleton`: no length).
pub fn event(
    ticks: u64,
    id: u8,
    singleton: bool,
    attrs: &[(u32, u8, u64)],
    fill: impl FnOnce(&mut Buf),
) -> Buf {
    let mut b = Buf::default();
    event_into(&mut b, (ticks, id, singleton), attrs, fill);
    b
}

/// [`event`], appended to `b`: `(ticks, record id, singleton)`.
pub fn event_into(
    b: &mut Buf,
    (ticks, id, singleton): (u64, u8, bool),
    attrs: &[(u32, u8, u64)],
    fill: impl FnOnce(&mut Buf),
) {
    if !attrs.is_empty() {
        b.record(buffer::ATTRIBUTE_LIST, |l| {
            l.u32c(attrs.len() as u32);
            for &(r, kind, raw) in attrs {
                l.u32c(r).u8(kind);
                attribute_value(l, kind, raw);
            }
        });
    }
    b.u8(buffer::TIMESTAMP).u64(ticks);
    match singleton {
        true => {
            b.u8(id);
            fill(b);
        }
        false => {
            b.record(id, fill);
        }
    }
}

/// An attribute value of OTF2 type `kind` from its bits.
pub fn attribute_value(b: &mut Buf, kind: u8, raw: u64) {
    match kind {
        1 | 5 => {
            b.u8(raw as u8);
        }
        2 | 6 => {
            b.bytes.extend_from_slice(&(raw as u16).to_le_bytes());
        }
        3 | 11..=25 if kind != 13 => {
            b.u32c(raw as u32);
        }
        7 => {
            match raw as u32 as i32 {
                v if v < 0 => b.u8(4).u32(v as u32),
                v => b.compressed(v as u64),
            };
        }
        8 => {
            b.i64c(raw as i64);
        }
        9 => {
            b.u32(raw as u32);
        }
        10 => {
            b.u64(raw);
        }
        _ => {
            b.u64c(raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::buffer::Otf2Read;
    use super::*;
    use crate::bytes::Bytes;

    #[test]
    fn what_is_written_reads_back() {
        let mut b = Buf::default();
        b.u32c(0)
            .u32c(7)
            .u32c(1000)
            .u32c(u32::MAX)
            .u64c(1 << 40)
            .i64c(-15)
            .string("hé");
        let mut r = Bytes::new("t", &b.bytes);
        assert_eq!(r.u32c("a").unwrap(), 0);
        assert_eq!(r.u32c("b").unwrap(), 7);
        assert_eq!(r.u32c("c").unwrap(), 1000);
        assert_eq!(r.u32c("d").unwrap(), u32::MAX);
        assert_eq!(r.u64c("e").unwrap(), 1 << 40);
        assert_eq!(r.i64c("f").unwrap(), -15);
        assert_eq!(r.string("g").unwrap(), "hé");
        let mut long = Buf::default();
        long.record(10, |b| {
            b.bytes.extend_from_slice(&[7; 300]);
        });
        let mut r = Bytes::new("t", &long.bytes);
        r.u8("id").unwrap();
        assert_eq!(r.record_end("len").unwrap(), 10 + 300);
    }

    #[test]
    fn events_fill_chunks_and_each_chunk_is_padded_to_its_size() {
        let mut file = EventChunks::new(1024);
        for t in 0..200 {
            file.push(&event(t, 12, true, &[], |b| {
                b.u32c(1);
            }));
        }
        let bytes = file.finish().bytes;
        assert!(bytes.len() > 2048, "three chunks at least");
        for k in 0..bytes.len() / 1024 {
            assert_eq!(
                &bytes[k * 1024..k * 1024 + 2],
                &[3, 0x42],
                "chunk {k} header"
            );
        }
    }
}
