//! OTF2's buffer encodings on top of the bounds-checked cursor: compressed
//! integers, strings, record lengths and chunk headers (docs/otf2.md,
//! "Encodings").

use crate::bytes::Bytes;
use crate::error::Result;

/// First byte of a buffer and of each chunk of an event file.
pub const CHUNK_HEADER: u8 = 3;
/// End of the records of a chunk.
pub const END_OF_CHUNK: u8 = 0;
/// End of the records of a buffer.
pub const END_OF_BUFFER: u8 = 1;
/// End of the records of a file.
pub const END_OF_FILE: u8 = 2;
/// An event's timestamp, before its record.
pub const TIMESTAMP: u8 = 5;
/// An attribute list, before the record it belongs to.
pub const ATTRIBUTE_LIST: u8 = 6;

/// Endianness byte of a little-endian buffer (the only one read).
pub const LITTLE_ENDIAN: u8 = 0x42;
/// Endianness byte of a big-endian buffer.
pub const BIG_ENDIAN: u8 = 0x23;

/// Bytes of a chunk header: marker, endianness, first and last event number.
pub const CHUNK_HEADER_LEN: usize = 18;

/// OTF2's readers of its buffer encodings.
pub trait Otf2Read {
    /// A compressed u32: one byte 0 (0) or 0xff (u32::MAX), else a byte
    /// count 1 to 4 and that many little-endian bytes.
    fn u32c(&mut self, what: &str) -> Result<u32>;
    /// A compressed u64 (counts 1 to 8).
    fn u64c(&mut self, what: &str) -> Result<u64>;
    /// A compressed i64: a negative value takes all 8 bytes.
    fn i64c(&mut self, what: &str) -> Result<i64>;
    /// A compressed i32 (counts 1 to 4; negative values take all 4).
    fn i32c(&mut self, what: &str) -> Result<i32>;
    /// A NUL-terminated string (UTF-8 expected, repaired when not).
    fn string(&mut self, what: &str) -> Result<String>;
    /// A record's length (one byte, or 0xff and a full u64), checked against
    /// the bytes left; returns the offset its record ends at.
    fn record_end(&mut self, what: &str) -> Result<usize>;
}

impl Otf2Read for Bytes<'_> {
    #[inline]
    fn u32c(&mut self, what: &str) -> Result<u32> {
        Ok(compressed(self, what, 4)? as u32)
    }

    #[inline]
    fn u64c(&mut self, what: &str) -> Result<u64> {
        compressed(self, what, 8)
    }

    #[inline]
    fn i64c(&mut self, what: &str) -> Result<i64> {
        Ok(compressed(self, what, 8)? as i64)
    }

    fn i32c(&mut self, what: &str) -> Result<i32> {
        Ok(compressed(self, what, 4)? as u32 as i32)
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let Some(len) = memchr::memchr(0, self.rest()) else {
            return Err(self.error(format!("{what}: string without its final NUL byte")));
        };
        let bytes = self.take(len + 1, what)?;
        Ok(String::from_utf8_lossy(&bytes[..len]).into_owned())
    }

    fn record_end(&mut self, what: &str) -> Result<usize> {
        let at = self.offset();
        let mut len = self.u8(what)? as u64;
        if len == 0xff {
            len = self.u64(what)?;
        }
        if len > self.remaining() as u64 {
            return Err(self.error_at(
                at,
                format!(
                    "{what}: record length {len} runs past the {} bytes left",
                    self.remaining()
                ),
            ));
        }
        Ok(self.offset() + len as usize)
    }
}

/// A compressed unsigned integer of at most `width` bytes (0xff alone is
/// all bits of the width set).
#[inline]
fn compressed(b: &mut Bytes, what: &str, width: u8) -> Result<u64> {
    // The usual case, read in place: a size byte and that many bytes.
    let rest = b.rest();
    if let Some(&n) = rest.first() {
        if n <= width && rest.len() > n as usize {
            let mut raw = [0u8; 8];
            raw[..n as usize].copy_from_slice(&rest[1..1 + n as usize]);
            b.seek(b.offset() + 1 + n as usize);
            return Ok(u64::from_le_bytes(raw));
        }
        if n == 0xff {
            b.seek(b.offset() + 1);
            return Ok(if width == 4 {
                u32::MAX as u64
            } else {
                u64::MAX
            });
        }
    }
    compressed_error(b, what, width)
}

/// The error of a compressed integer that does not decode.
#[cold]
fn compressed_error(b: &mut Bytes, what: &str, width: u8) -> Result<u64> {
    let at = b.offset();
    let n = b.u8(what)?;
    if n <= width {
        b.take(n as usize, what)?;
    }
    Err(b.error_at(
        at,
        format!("{what}: compressed integer of {n} bytes (at most {width})"),
    ))
}

/// Reads a buffer's header (marker, endianness, first and last event
/// number) and refuses what this reader cannot read.
pub fn header(b: &mut Bytes, what: &str) -> Result<(u64, u64)> {
    let at = b.offset();
    if b.u8(what)? != CHUNK_HEADER {
        return Err(b.error_at(at, format!("{what}: no chunk header")));
    }
    match b.u8(what)? {
        LITTLE_ENDIAN => {}
        BIG_ENDIAN => {
            return Err(b.error_at(
                at + 1,
                format!("{what}: a big-endian archive (not supported)"),
            ))
        }
        e => return Err(b.error_at(at + 1, format!("{what}: unknown endianness byte {e:#04x}"))),
    }
    Ok((b.u64(what)?, b.u64(what)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers_decode_as_the_library_writes_them() {
        let data = [
            0x00, 0xff, 0x01, 0x07, 0x02, 0xe8, 0x03, 0x04, 0x00, 0xca, 0x9a, 0x3b, 0x08, 0xf1,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x04, 0x00, 0x6c, 0xca, 0x88,
        ];
        let mut b = Bytes::new("f", &data);
        assert_eq!(b.u32c("a").unwrap(), 0);
        assert_eq!(b.u32c("b").unwrap(), u32::MAX);
        assert_eq!(b.u32c("c").unwrap(), 7);
        assert_eq!(b.u64c("d").unwrap(), 1000);
        assert_eq!(b.u64c("e").unwrap(), 1_000_000_000);
        assert_eq!(b.i64c("f").unwrap(), -15);
        assert_eq!(b.i32c("g").unwrap(), -2_000_000_000);
    }

    #[test]
    fn a_compressed_integer_wider_than_its_type_is_a_located_error() {
        let data = [0x00, 0x05, 1, 2, 3, 4, 5];
        let mut b = Bytes::at("f", &data, 100);
        b.u8("skip").unwrap();
        let err = b.u32c("region").unwrap_err().to_string();
        assert_eq!(
            err,
            "f: byte 101: region: compressed integer of 5 bytes (at most 4)"
        );
    }

    #[test]
    fn strings_and_record_lengths_are_bounded_by_the_data() {
        let mut b = Bytes::new("f", b"abc\0xy");
        assert_eq!(b.string("s").unwrap(), "abc");
        let err = b.string("t").unwrap_err().to_string();
        assert!(err.contains("without its final NUL"), "{err}");
        let mut b = Bytes::new("f", &[5, 1, 2]);
        let err = b.record_end("rec").unwrap_err().to_string();
        assert!(
            err.contains("record length 5 runs past the 2 bytes left"),
            "{err}"
        );
    }
}
