//! A bounds-checked little-endian cursor over one file's bytes.
//!
//! Every read checks what is left, and every count that sizes an allocation is
//! checked against the bytes that could hold it, so a corrupt field is a located
//! error rather than a panic or an out-of-memory.

use crate::error::{Error, Result};

/// Reads fields in order from `data`, naming `file` and the byte offset in errors.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
    file: &'a str,
    /// The file offset of `data[0]`, for data read from the middle of a file.
    base: u64,
}

impl<'a> Bytes<'a> {
    /// A cursor at the start of `data`, which was read from `file`.
    pub fn new(file: &'a str, data: &'a [u8]) -> Bytes<'a> {
        Bytes::at(file, data, 0)
    }

    /// A cursor at the start of `data`, which was read from byte `base` of
    /// `file` (errors name file offsets).
    pub fn at(file: &'a str, data: &'a [u8], base: u64) -> Bytes<'a> {
        Bytes {
            data,
            pos: 0,
            file,
            base,
        }
    }

    /// The current offset in `data`.
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Moves to offset `pos` of `data` (at most its length).
    #[inline]
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.data.len());
    }

    /// Bytes not read yet.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The bytes not read yet.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// An error at offset `offset` of `data`, named by its file offset.
    pub fn error_at(&self, offset: usize, msg: impl Into<String>) -> Error {
        Error::offset(self.file, self.base + offset as u64, msg)
    }

    /// An error at the current offset.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        self.error_at(self.pos, msg)
    }

    /// The next `n` bytes; `what` names them if the file is too short.
    #[inline]
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "truncated: {what} needs {n} bytes, {} left in the file",
                self.remaining()
            )));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A little-endian u16.
    #[inline]
    pub fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// A little-endian u32.
    #[inline]
    pub fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian i32.
    pub fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian u64.
    #[inline]
    pub fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A u64 count of items that take at least `min_item` bytes each, checked
    /// against what is left so it can size an allocation.
    pub fn count(&mut self, what: &str, min_item: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.u64(what)?;
        self.check_count(at, n, what, min_item)
    }

    /// Checks a count read at `at` the same way as [`Bytes::count`].
    pub fn check_count(&self, at: usize, n: u64, what: &str, min_item: usize) -> Result<usize> {
        let fits = (self.remaining() / min_item.max(1)) as u64;
        if n > fits {
            return Err(self.error_at(
                at,
                format!(
                    "{what} is {n}, more than the {} bytes left in the file can hold",
                    self.remaining()
                ),
            ));
        }
        Ok(n as usize)
    }

    /// Fails unless the whole file was read.
    pub fn expect_end(&self, what: &str) -> Result<()> {
        if self.remaining() != 0 {
            return Err(self.error(format!(
                "{} unexpected bytes after the {what}",
                self.remaining()
            )));
        }
        Ok(())
    }
}

/// Refuses `text` for a format whose strings end at a NUL byte (OTF2,
/// Pallas): written, the rest would be cut silently.
pub fn refuse_nul(text: &str, format: &str) -> Result<()> {
    match text.contains('\0') {
        false => Ok(()),
        true => Err(Error::Record(format!(
            "`{}` holds a NUL byte, which ends a string in {format}: it cannot be written",
            text.escape_debug()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_reports_offsets() {
        let data = [1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 9];
        let mut b = Bytes::new("f", &data);
        assert_eq!(b.u32("a").unwrap(), 1);
        assert_eq!(b.u64("b").unwrap(), 2);
        let err = b.u32("c").unwrap_err().to_string();
        assert_eq!(
            err,
            "f: byte 12: truncated: c needs 4 bytes, 1 left in the file"
        );
    }

    #[test]
    fn a_count_larger_than_the_file_is_an_error() {
        let data = 1000u64.to_le_bytes();
        let mut b = Bytes::new("f", &data);
        let err = b.count("number of strings", 8).unwrap_err().to_string();
        assert!(
            err.starts_with("f: byte 0: number of strings is 1000"),
            "{err}"
        );
    }
}
