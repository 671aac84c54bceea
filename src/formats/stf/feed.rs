//! Reading one component (a file, or a stretch of a single-file container)
//! through a fixed-size buffer, with the generic record decoder on top.
//!
//! Records carry no length, so a record may straddle two buffer fills; every
//! count is checked against the bytes left in the component before anything
//! is read or allocated.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use super::layout::{is_byte_type, Layout, Scalar, Values};
use crate::error::{Error, Result};

const CHUNK: usize = 256 * 1024;

/// A component's bytes, read in order. The file is open only while the
/// buffer is refilled, so a trace of thousands of components holds one
/// descriptor at a time, whatever `ulimit -n` says.
pub struct Feed {
    name: String,
    path: std::path::PathBuf,
    buf: Vec<u8>,
    pos: usize,
    /// Offset in the file of `buf[0]`.
    base: u64,
    /// Offset in the file where the component starts and ends.
    start: u64,
    end: u64,
}

impl Feed {
    /// The `len` bytes of file `path` (called `name` in errors) from `start`.
    pub fn open(name: &str, path: &std::path::Path, start: u64, len: u64) -> Result<Feed> {
        regular_file(name, path)?;
        Ok(Feed {
            name: name.to_string(),
            path: path.to_path_buf(),
            buf: Vec::new(),
            pos: 0,
            base: start,
            start,
            end: start + len,
        })
    }

    /// The whole of file `path`.
    pub fn whole(name: &str, path: &std::path::Path) -> Result<Feed> {
        Feed::open(name, path, 0, regular_file(name, path)?)
    }

    /// Where the component starts in its file (0 but in a single file).
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The name errors give.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The offset in the file of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left in the component.
    pub fn remaining(&self) -> u64 {
        self.end - self.offset()
    }

    /// An error at byte `offset` of the file.
    pub fn error_at(&self, offset: u64, msg: impl Into<String>) -> Error {
        Error::offset(&self.name, offset, msg)
    }

    /// Makes `n` bytes available, or says which `what` the component ends in.
    fn need(&mut self, n: usize, what: &str) -> Result<()> {
        let have = self.buf.len() - self.pos;
        if have >= n {
            return Ok(());
        }
        if (n as u64) > self.remaining() {
            return Err(self.error_at(
                self.offset(),
                format!(
                    "truncated: {what} needs {n} bytes, {} left",
                    self.remaining()
                ),
            ));
        }
        self.buf.drain(..self.pos);
        self.base += self.pos as u64;
        self.pos = 0;
        let in_buf = self.base + self.buf.len() as u64;
        let want = (n - self.buf.len())
            .max(CHUNK)
            .min((self.end - in_buf) as usize);
        let old = self.buf.len();
        self.buf.resize(old + want, 0);
        let io = |e| Error::io(self.name.clone(), e);
        let mut file = File::open(&self.path).map_err(io)?;
        file.seek(SeekFrom::Start(in_buf)).map_err(io)?;
        file.read_exact(&mut self.buf[old..]).map_err(io)
    }

    /// Whether the component is used up.
    pub fn at_end(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize, what: &str) -> Result<&[u8]> {
        self.need(n, what)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// One scalar of type `ty`, as its little-endian bits.
    #[inline]
    pub fn scalar(&mut self, ty: Scalar, what: &str) -> Result<u64> {
        let w = ty.width();
        // The buffer holds only the component's bytes: with eight of them
        // at hand, read a whole word and keep the field's width.
        if let Some(word) = self.buf.get(self.pos..self.pos + 8) {
            let bits = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            self.pos += w;
            return Ok(if w == 8 {
                bits
            } else {
                bits & ((1 << (8 * w)) - 1)
            });
        }
        let bytes = self.take(w, what)?;
        let mut a = [0u8; 8];
        a[..w].copy_from_slice(bytes);
        Ok(u64::from_le_bytes(a))
    }

    /// Decodes the fields of one `layout` record (its id already read).
    pub fn decode(&mut self, layout: &Layout, values: &mut Values) -> Result<()> {
        values.reset(layout.fields.len());
        for (i, f) in layout.fields.iter().enumerate() {
            if f.is_size() {
                let at = self.offset();
                let n = self.scalar(f.ty, &f.name)?;
                let per_item: u64 = layout
                    .fields
                    .iter()
                    .filter(|a| a.sized_by == Some(i))
                    .map(|a| a.ty.width() as u64)
                    .sum();
                if n.saturating_mul(per_item) > self.remaining() {
                    return Err(self.error_at(
                        at,
                        format!(
                            "`{}` of `{}` counts {n} items, more than the {} bytes left can hold",
                            f.name,
                            layout.class,
                            self.remaining()
                        ),
                    ));
                }
                values.lens[i] = n as u32;
            } else if let Some(size) = f.sized_by {
                let n = values.lens[size] as usize;
                if is_byte_type(f.ty) {
                    let start = values.bytes.len();
                    values.bytes.extend_from_slice(self.take(n, &f.name)?);
                    values.slots[i] = start as u64;
                } else {
                    values.slots[i] = values.items.len() as u64;
                    for _ in 0..n {
                        let item = self.scalar(f.ty, &f.name)?;
                        values.items.push(item);
                    }
                }
                values.lens[i] = n as u32;
            } else {
                values.slots[i] = self.scalar(f.ty, &f.name)?;
            }
        }
        Ok(())
    }
}

/// Bits of a field of type `ty` read as a signed number.
pub fn signed(ty: Scalar, bits: u64) -> i64 {
    match ty {
        Scalar::I4 => bits as u32 as i32 as i64,
        _ => bits as i64,
    }
}

/// The length of `path`, which must be a regular file: a FIFO or a device
/// named as a component would block or never end.
fn regular_file(name: &str, path: &std::path::Path) -> Result<u64> {
    crate::io::regular_len(path).map_err(|e| Error::io(name.to_string(), e))
}
