//! A location's event file (`NAME/LOC.evt`) read as events: chunks of
//! records, each event an optional attribute list, a timestamp and a record
//! decoded through the catalogue, references mapped to global ones and
//! times corrected by the location's clock offsets.
//!
//! The file is read through a window of at most [`WINDOW`] bytes (less when
//! the locations are many: [`window_for`]), grown only for a
//! record larger than it (never past one chunk), so memory does not follow
//! the chunk size.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::buffer::{self, Otf2Read, CHUNK_HEADER_LEN};
use super::catalogue::{id, spec_of, Spec, F, R};
use super::local::{correct, Local};
use crate::bytes::Bytes;
use crate::error::{Error, Result};

/// Bytes read from a file at a time, at most.
pub const WINDOW: usize = 64 * 1024;

/// Bytes read from a file at a time, at least.
pub const MIN_WINDOW: usize = 4 * 1024;

/// The windows of all locations together, when that gives each less than
/// [`WINDOW`].
const WINDOWS: usize = 32 << 20;

/// The window of each of `locations` files read at once: 64 KiB for up to
/// 512 locations, less beyond (4 KiB from 8192 on), so memory stays near
/// 32 MiB for the windows of many thousand locations.
pub fn window_for(locations: usize) -> usize {
    (WINDOWS / locations.max(1)).clamp(MIN_WINDOW, WINDOW)
}

/// The largest head of a record: marker, length byte and full length.
const HEAD: usize = 1 + 1 + 8;

/// One attribute of an event's attribute list: its reference (global),
/// type and raw value (references mapped, floats as bits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttrValue {
    /// The attribute's (global) reference.
    pub attr: u32,
    /// OTF2's type of the value.
    pub kind: u8,
    /// The value's bits.
    pub raw: u64,
}

/// An event as decoded.
#[derive(Debug, Default)]
pub struct Event {
    /// Record id.
    pub id: u8,
    /// Clock-corrected ticks.
    pub ticks: u64,
    /// File offset of the record (after its timestamp).
    pub at: u64,
    /// Its fields in catalogue order (references mapped; signed values as
    /// their bits; arrays flattened after their length).
    pub values: Vec<u64>,
    /// The attribute list that came before it.
    pub attrs: Vec<AttrValue>,
}

/// What the next step of a file gave.
pub enum Step {
    /// An event of a record the catalogue has.
    Event,
    /// A record the catalogue does not have, skipped by its length.
    Unknown(u8),
    /// The end of the file.
    End,
}

/// A location's event file, read forward.
pub struct EventFile {
    /// The file's name in messages.
    pub name: String,
    /// Opened for each refill of the window and closed again, so that
    /// thousands of locations need no more than one descriptor at a time.
    path: PathBuf,
    file_len: u64,
    window: usize,
    chunk_size: u64,
    buf: Vec<u8>,
    /// File offset of `buf[0]`, and the read position in `buf`.
    buf_start: u64,
    pos: usize,
    /// File offset where the current chunk ends.
    chunk_end: u64,
    /// The number the current chunk's header gives its last event (0:
    /// none given).
    chunk_last: u64,
    /// Raw ticks of the last timestamp.
    raw_time: u64,
    clock_at: usize,
    /// The location's mapping tables and clock.
    pub local: Local,
    /// The event [`EventFile::step`] read last.
    pub event: Event,
}

impl EventFile {
    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Opens `path` (named `name` in messages), whose chunks are
    /// `chunk_size` bytes, to read through a window of `window` bytes, with
    /// the location's local definitions.
    pub fn open(
        path: &Path,
        name: String,
        (chunk_size, window): (u64, usize),
        local: Local,
    ) -> Result<EventFile> {
        let file_len = crate::io::regular_len(path).map_err(|e| Error::io(name.clone(), e))?;
        let mut f = EventFile {
            name,
            path: path.to_path_buf(),
            file_len,
            window,
            chunk_size,
            // A file smaller than its window is read whole, in its size.
            buf: Vec::with_capacity(window.min(usize::try_from(file_len).unwrap_or(usize::MAX))),
            buf_start: 0,
            pos: 0,
            chunk_end: chunk_size.min(file_len),
            chunk_last: 0,
            raw_time: 0,
            clock_at: 0,
            local,
            event: Event::default(),
        };
        f.chunk_header()?;
        Ok(f)
    }

    fn offset(&self) -> u64 {
        self.buf_start + self.pos as u64
    }

    fn error(&self, msg: impl Into<String>) -> Error {
        Error::offset(&self.name, self.offset(), msg)
    }

    /// Makes at least `n` bytes of the current chunk readable at the
    /// position, or as many as the chunk has left; returns how many are.
    #[inline]
    fn fill(&mut self, n: usize) -> Result<usize> {
        let have = self.buf.len() - self.pos;
        match have >= n {
            true => Ok(have),
            false => self.refill(n, have),
        }
    }

    /// [`EventFile::fill`] when the window holds fewer than `n` bytes
    /// (`have`): moves on in the file.
    #[inline(never)]
    fn refill(&mut self, n: usize, have: usize) -> Result<usize> {
        let chunk_left = self.chunk_end.saturating_sub(self.offset()) as usize;
        if have >= chunk_left {
            return Ok(have);
        }
        self.buf.drain(..self.pos);
        self.buf_start += self.pos as u64;
        self.pos = 0;
        let want = n.max(self.window).min(chunk_left) - have;
        let start = self.buf.len();
        self.buf.resize(start + want, 0);
        let from = self.buf_start + start as u64;
        let got = read_at(&self.path, from, &mut self.buf[start..])
            .map_err(|e| Error::io(self.name.clone(), e))?;
        self.buf.truncate(start + got);
        Ok(self.buf.len())
    }

    /// Reads the header of the chunk that starts at the position.
    fn chunk_header(&mut self) -> Result<()> {
        if self.fill(CHUNK_HEADER_LEN)? < CHUNK_HEADER_LEN {
            return Err(self.error("truncated: a chunk header needs 18 bytes"));
        }
        let mut b = Bytes::at(&self.name, &self.buf[self.pos..], self.offset());
        let (first, last) = buffer::header(&mut b, "event chunk")?;
        // The headers number the events: a gap says chunks were skipped
        // (chunks smaller than the anchor says).
        let before = std::mem::replace(&mut self.chunk_last, last);
        if before != 0 && first != 0 && first != before + 1 {
            return Err(self.error(format!(
                "this chunk's first event is number {first}, but the chunk before ended at {before}: \
                 chunks were skipped (are they {} bytes, as the anchor file says?)",
                self.chunk_size
            )));
        }
        self.pos += CHUNK_HEADER_LEN;
        Ok(())
    }

    /// Moves to the start of the next chunk; false when there is none.
    fn next_chunk(&mut self) -> Result<bool> {
        let next = self.chunk_end;
        if next >= self.file_len {
            return Ok(false);
        }
        self.buf.clear();
        self.buf_start = next;
        self.pos = 0;
        self.chunk_end = next.saturating_add(self.chunk_size).min(self.file_len);
        self.chunk_header()?;
        Ok(true)
    }

    /// Reads up to the next event (into [`EventFile::event`]). Kept out of
    /// line: inlined into its callers' loops it made them 10 % slower.
    #[inline(never)]
    pub fn step(&mut self) -> Result<Step> {
        self.event.attrs.clear();
        loop {
            if self.fill(HEAD)? == 0 {
                return Err(self.error("the file ends inside a chunk, without an end-of-file record (the file was cut)"));
            }
            let kind = self.buf[self.pos];
            match kind {
                buffer::TIMESTAMP => {
                    if self.fill(9)? < 9 {
                        return Err(self.error("truncated timestamp"));
                    }
                    let raw: [u8; 8] = self.buf[self.pos + 1..self.pos + 9]
                        .try_into()
                        .expect("8 bytes");
                    self.raw_time = u64::from_le_bytes(raw);
                    self.pos += 9;
                }
                buffer::ATTRIBUTE_LIST => self.attribute_list()?,
                buffer::END_OF_CHUNK => {
                    if !self.next_chunk()? {
                        return Err(self.error("the last chunk ends without an end-of-file record"));
                    }
                }
                buffer::END_OF_FILE | buffer::END_OF_BUFFER => return Ok(Step::End),
                _ => return self.record(kind),
            }
        }
    }

    /// The bytes of the record at the position: its marker, length and
    /// body, made readable; returns where the body starts and ends.
    /// `singleton`: the width of the one compressed field of a record
    /// without a length.
    fn record_bytes(&mut self, singleton: Option<u8>) -> Result<(usize, usize)> {
        let have = self.fill(HEAD)?;
        let head = &self.buf[self.pos..self.pos + have];
        let truncated = || self.error("truncated record");
        if let Some(width) = singleton {
            // One compressed field: its first byte is its length.
            let n = match *head.get(1).ok_or_else(truncated)? {
                0 | 0xff => 0,
                n if n <= width => n as usize,
                n => {
                    return Err(Error::offset(
                        &self.name,
                        self.offset() + 1,
                        format!("compressed integer of {n} bytes (at most {width})"),
                    ))
                }
            };
            let end = 2 + n;
            if self.fill(end)? < end {
                return Err(self.error("truncated record"));
            }
            return Ok((1, end));
        }
        let (len, body) = match *head.get(1).ok_or_else(truncated)? {
            0xff => {
                let raw = head.get(2..10).ok_or_else(truncated)?;
                (u64::from_le_bytes(raw.try_into().expect("8 bytes")), 10)
            }
            n => (n as u64, 2),
        };
        let end = (body as u64).saturating_add(len);
        let at = self.offset() + 1;
        let past = |name: &str, what: &str| {
            Error::offset(name, at, format!("record length {len} runs past {what}"))
        };
        if end > self.chunk_size {
            return Err(past(&self.name, "its chunk"));
        }
        if (self.fill(end as usize)? as u64) < end {
            return Err(past(&self.name, "the end of its chunk"));
        }
        Ok((body, end as usize))
    }

    fn record(&mut self, kind: u8) -> Result<Step> {
        let spec = spec_of(kind);
        let width = spec.filter(|s| s.singleton).map(|s| match s.fields[0].1 {
            F::U64 => 8,
            _ => 4,
        });
        let (body, end) = self.record_bytes(width)?;
        let at = self.offset();
        let Some(spec) = spec else {
            self.pos += end;
            return Ok(Step::Unknown(kind));
        };
        self.event.id = kind;
        self.event.at = at;
        self.event.ticks = correct(&self.local.clock, &mut self.clock_at, self.raw_time);
        let data = &self.buf[self.pos + body..self.pos + end];
        self.event.values.clear();
        match spec.singleton {
            // One compressed field, the bytes of which `record_bytes` made
            // readable: no cursor needed (the most frequent records).
            true => self.event.values.push(singleton(data, spec, &self.local)),
            false => {
                let mut b = Bytes::at(&self.name, data, at + body as u64);
                let clock = (&self.local.clock[..], self.clock_at);
                decode(&mut b, spec, &self.local, clock, &mut self.event.values)?;
            }
        }
        self.pos += end;
        Ok(Step::Event)
    }

    fn attribute_list(&mut self) -> Result<()> {
        let (body, end) = self.record_bytes(None)?;
        let at = self.offset() + body as u64;
        let data = &self.buf[self.pos + body..self.pos + end];
        let mut b = Bytes::at(&self.name, data, at);
        let n = b.u32c("number of attributes")?;
        let n = b.check_count(0, n as u64, "number of attributes", 3)?;
        for _ in 0..n {
            let attr =
                self.local
                    .map(R::Attribute as usize, b.u32c("attribute")? as u64) as u32;
            let kind = b.u8("attribute type")?;
            let raw = attribute_value(&mut b, kind, &self.local)?;
            self.event.attrs.push(AttrValue { attr, kind, raw });
        }
        self.pos += end;
        Ok(())
    }
}

/// The field of a singleton record: a compressed integer whose size byte
/// `record_bytes` checked (`data`), mapped when it is a reference.
#[inline]
fn singleton(data: &[u8], spec: &Spec, local: &Local) -> u64 {
    let v = match data[0] {
        0 => 0,
        0xff => {
            return if spec.fields[0].1 == F::U64 {
                u64::MAX
            } else {
                u32::MAX as u64
            }
        }
        n => {
            let mut raw = [0u8; 8];
            raw[..n as usize].copy_from_slice(&data[1..1 + n as usize]);
            u64::from_le_bytes(raw)
        }
    };
    match spec.fields[0].1 {
        F::Ref(r) => local.map(r as usize, v),
        _ => v,
    }
}

/// Reads as much of `buf` as the file at `path` has from byte `from`.
fn read_at(path: &Path, from: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Decodes the fields of a record of `spec` into `out`; a record longer
/// than its fields (a later version's) keeps the rest unread.
fn decode(
    b: &mut Bytes,
    spec: &Spec,
    local: &Local,
    clock: (&[super::local::ClockInterval], usize),
    out: &mut Vec<u64>,
) -> Result<()> {
    let mut arrays_read = false;
    for &(name, f) in spec.fields {
        let v = match f {
            F::U8 | F::Enum(_) | F::Ref(R::IoParadigm) => b.u8(name)? as u64,
            F::U32 => b.u32c(name)? as u64,
            F::U64 => b.u64c(name)?,
            F::I64 => b.i64c(name)? as u64,
            F::Time => correct(clock.0, &mut clock.1.clone(), b.u64(name)?),
            F::Ref(R::Location) => local.map(R::Location as usize, b.u64c(name)?),
            F::Ref(r) => {
                let raw = b.u32c(name)?;
                match raw {
                    u32::MAX => raw as u64,
                    _ => local.map(r as usize, raw as u64),
                }
            }
            F::Array => {
                // METRIC's two arrays are read together, with the first.
                if !arrays_read {
                    array(b, spec, local, out)?;
                    arrays_read = true;
                }
                continue;
            }
        };
        out.push(v);
    }
    Ok(())
}

/// The arrays of `METRIC` (type and value per member, interleaved) and of
/// `PROGRAM_BEGIN` (its arguments, strings); their length is the value
/// read last.
fn array(b: &mut Bytes, spec: &Spec, local: &Local, out: &mut Vec<u64>) -> Result<()> {
    let n = out.last().copied().unwrap_or(0);
    let n = b.check_count(b.offset(), n, "array length", 1)?;
    for _ in 0..n {
        if spec.id == id::METRIC {
            let kind = b.u8("metric value type")?;
            out.push(kind as u64);
            out.push(b.u64c("metric value")?);
        } else {
            let s = b.u32c("program argument")?;
            out.push(local.map(R::String as usize, s as u64));
        }
    }
    Ok(())
}

/// An attribute value of OTF2 type `kind`, as raw bits (references mapped).
fn attribute_value(b: &mut Bytes, kind: u8, local: &Local) -> Result<u64> {
    let v = match kind {
        1 | 5 => b.u8("attribute value")? as u64,
        2 | 6 => b.u16("attribute value")? as u64,
        3 => b.u32c("attribute value")? as u64,
        4 => b.u64c("attribute value")?,
        7 => b.i32c("attribute value")? as i64 as u64,
        8 => b.i64c("attribute value")? as u64,
        9 => b.u32("attribute value")? as u64,
        10 => b.u64("attribute value")?,
        13 => local.map(R::Location as usize, b.u64c("attribute value")?),
        11..=25 => {
            let raw = b.u32c("attribute value")?;
            match raw {
                u32::MAX => raw as u64,
                _ => local.map(kind as usize - 11, raw as u64),
            }
        }
        k => return Err(b.error(format!("attribute of unknown type {k}"))),
    };
    Ok(v)
}
