//! The `.dat` blocks: one vector block (at most [`MAX_BLOCK_VALUES`] u64 values)
//! stored as a u64 byte length and a payload whose shape depends on the trace's
//! compression and encoding. Decoding reuses its buffers; nothing is sized from
//! a length that the file cannot hold.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::archive::{BlockCompression, BlockHeader, Encoding, Parameters};
use crate::error::{Error, Result};

/// Most values one block may hold. Pallas writes at most 1000; the bound only
/// keeps a corrupt header from sizing a huge buffer.
pub const MAX_BLOCK_VALUES: u64 = 1 << 20;

/// A thread's `.dat` file, read block by block.
///
/// The file is opened for each block rather than held open: a trace may have
/// thousands of threads, more than a process may keep open, and a block read
/// serves up to 1000 events.
#[derive(Clone)]
pub struct DatFile {
    name: String,
    path: PathBuf,
    len: u64,
}

impl DatFile {
    /// Checks that `path` exists and notes its size.
    pub fn open(path: &Path) -> Result<DatFile> {
        let name = path.display().to_string();
        let len = crate::io::regular_len(path).map_err(|e| Error::io(&name, e))?;
        Ok(DatFile {
            name,
            path: path.to_path_buf(),
            len,
        })
    }

    /// The file's name, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn error(&self, offset: u64, msg: impl Into<String>) -> Error {
        Error::offset(&self.name, offset, msg)
    }

    /// Reads the payload of the block at `offset` into `out`.
    fn read_block(&self, offset: u64, out: &mut Vec<u8>) -> Result<()> {
        if offset.checked_add(8).is_none_or(|end| end > self.len) {
            return Err(self.error(
                offset,
                format!(
                    "block offset beyond the end of the file ({} bytes)",
                    self.len
                ),
            ));
        }
        let mut file = File::open(&self.path).map_err(|e| Error::io(&self.name, e))?;
        let mut len = [0u8; 8];
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut len))
            .map_err(|e| Error::io(&self.name, e))?;
        let len = u64::from_le_bytes(len);
        if len > self.len - offset - 8 {
            return Err(self.error(
                offset,
                format!(
                    "block length {len} is larger than the {} bytes left in the file",
                    self.len - offset - 8
                ),
            ));
        }
        out.clear();
        out.resize(len as usize, 0);
        file.read_exact(out).map_err(|e| Error::io(&self.name, e))
    }
}

/// Decodes blocks of one trace's codec.
pub struct BlockDecoder {
    compression: BlockCompression,
    encoding: Encoding,
    raw: Vec<u8>,
    unpacked: Vec<u8>,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl BlockDecoder {
    /// A decoder for the codec named by a trace's parameters.
    pub fn new(params: &Parameters) -> BlockDecoder {
        BlockDecoder {
            compression: params.compression,
            encoding: params.encoding,
            raw: Vec::new(),
            unpacked: Vec::new(),
            zstd: None,
        }
    }

    /// Decodes the block described by `header` from `dat` into `out`: its
    /// `header.size` values, or an error.
    pub fn decode(
        &mut self,
        dat: &DatFile,
        header: &BlockHeader,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        let n = header.size;
        if n > MAX_BLOCK_VALUES {
            return Err(dat.error(
                header.offset,
                format!("block of {n} values (at most {MAX_BLOCK_VALUES} supported)"),
            ));
        }
        let n = n as usize;
        dat.read_block(header.offset, &mut self.raw)?;
        let at = header.offset;
        let fail = |msg: String| dat.error(at, msg);
        out.clear();
        match self.compression {
            BlockCompression::None => unpack(&self.raw, self.encoding, n, out).map_err(fail),
            BlockCompression::Zstd => {
                zstd_into(&mut self.zstd, &self.raw, 8 * n, &mut self.unpacked).map_err(&fail)?;
                unpack(&self.unpacked, self.encoding, n, out).map_err(fail)
            }
            BlockCompression::Histogram => histogram(&self.raw, n, out).map_err(fail),
            BlockCompression::ZstdHistogram => {
                zstd_into(&mut self.zstd, &self.raw, n + 16, &mut self.unpacked).map_err(&fail)?;
                histogram(&self.unpacked, n, out).map_err(fail)
            }
            BlockCompression::Zfp => zfp::decode(&self.raw, n, out).map_err(fail),
            BlockCompression::Sz => Err(fail(
                "unsupported codec SZ (lossy; no reader outside the SZ library)".into(),
            )),
        }?;
        if out.len() != n {
            return Err(dat.error(
                at,
                format!("block decodes to {} values, not {n}", out.len()),
            ));
        }
        Ok(())
    }
}

fn zstd_into(
    state: &mut Option<zstd::bulk::Decompressor<'static>>,
    src: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
) -> std::result::Result<(), String> {
    if state.is_none() {
        *state = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
    }
    let d = state.as_mut().expect("set above");
    out.clear();
    out.reserve(limit);
    d.decompress_to_buffer(src, out)
        .map_err(|e| format!("ZSTD frame error: {e}"))?;
    Ok(())
}

/// Raw or masked values: `w` bytes each, little endian, zero-extended.
fn unpack(
    bytes: &[u8],
    encoding: Encoding,
    n: usize,
    out: &mut Vec<u64>,
) -> std::result::Result<(), String> {
    let w = match encoding {
        Encoding::None => 8,
        Encoding::Masking => {
            if n == 0 || bytes.len() % n != 0 || !(1..=8).contains(&(bytes.len() / n)) {
                return Err(format!(
                    "masked block of {} bytes cannot hold {n} values",
                    bytes.len()
                ));
            }
            bytes.len() / n
        }
    };
    if bytes.len() != w * n {
        return Err(format!(
            "block holds {} bytes, {n} values need {}",
            bytes.len(),
            w * n
        ));
    }
    out.reserve(n);
    for chunk in bytes.chunks_exact(w) {
        let mut v = [0u8; 8];
        v[..w].copy_from_slice(chunk);
        out.push(u64::from_le_bytes(v));
    }
    Ok(())
}

/// The Histogram codec: `min`, `max`, then one 8-bit bin per value.
fn histogram(bytes: &[u8], n: usize, out: &mut Vec<u64>) -> std::result::Result<(), String> {
    if bytes.len() != n + 16 {
        return Err(format!(
            "histogram block of {} bytes, {n} values need {}",
            bytes.len(),
            n + 16
        ));
    }
    let min = u64::from_le_bytes(bytes[0..8].try_into().expect("8 bytes"));
    let max = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let width = max.wrapping_sub(min);
    out.reserve(n);
    for &bin in &bytes[16..] {
        let v = if width <= 255 {
            min.wrapping_add(bin as u64)
        } else {
            // Pallas adds in double precision; so do we, to give its values.
            let step = width as f64 / 255.0;
            ((min as f64) + (bin as f64 * step).floor()) as u64
        };
        out.push(v);
    }
    Ok(())
}

#[cfg(feature = "zfp")]
mod zfp {
    //! ZFP blocks through the reference libzfp: a 1-D field of i64 compressed
    //! in fixed-accuracy mode (tolerance 0.1), stored without a ZFP header.
    use std::os::raw::{c_double, c_uint, c_void};

    #[repr(C)]
    struct ZfpStream {
        _private: [u8; 0],
    }
    #[repr(C)]
    struct ZfpField {
        _private: [u8; 0],
    }
    #[repr(C)]
    struct BitStream {
        _private: [u8; 0],
    }

    const ZFP_TYPE_INT64: c_uint = 2;
    /// The tolerance Pallas compresses with.
    pub const ACCURACY: f64 = 0.1;

    #[link(name = "zfp")]
    extern "C" {
        fn zfp_field_1d(pointer: *mut c_void, kind: c_uint, nx: usize) -> *mut ZfpField;
        fn zfp_field_free(field: *mut ZfpField);
        fn zfp_stream_open(stream: *mut BitStream) -> *mut ZfpStream;
        fn zfp_stream_close(stream: *mut ZfpStream);
        fn zfp_stream_set_accuracy(stream: *mut ZfpStream, tolerance: c_double) -> c_double;
        fn zfp_stream_set_bit_stream(stream: *mut ZfpStream, bs: *mut BitStream);
        fn zfp_stream_rewind(stream: *mut ZfpStream);
        fn zfp_stream_maximum_size(stream: *const ZfpStream, field: *const ZfpField) -> usize;
        fn zfp_decompress(stream: *mut ZfpStream, field: *mut ZfpField) -> usize;
        fn zfp_compress(stream: *mut ZfpStream, field: *const ZfpField) -> usize;
        fn stream_open(buffer: *mut c_void, bytes: usize) -> *mut BitStream;
        fn stream_close(stream: *mut BitStream);
    }

    /// Owns the three libzfp objects of one call and frees them on every path.
    struct Session {
        field: *mut ZfpField,
        stream: *mut ZfpStream,
        bits: *mut BitStream,
    }

    impl Drop for Session {
        fn drop(&mut self) {
            // SAFETY: each pointer is either null or was returned by its libzfp
            // constructor and is freed exactly once here.
            unsafe {
                if !self.stream.is_null() {
                    zfp_stream_close(self.stream);
                }
                if !self.bits.is_null() {
                    stream_close(self.bits);
                }
                if !self.field.is_null() {
                    zfp_field_free(self.field);
                }
            }
        }
    }

    /// Decodes `n` values from a headerless ZFP stream.
    ///
    /// libzfp decodes as many values as it is told and does not stop at the
    /// end of its buffer, so the count is checked against the block first (a
    /// block of four values takes at least one bit), and the buffer handed to
    /// libzfp is zero-padded to `zfp_stream_maximum_size`, the most any
    /// stream of `n` values can occupy: a corrupt stream then decodes into
    /// garbage, never past the buffer, and its length is checked after.
    pub fn decode(bytes: &[u8], n: usize, out: &mut Vec<u64>) -> Result<(), String> {
        let most = bytes.len().saturating_mul(8 * 4).max(4);
        if n > most {
            return Err(format!(
                "ZFP block of {} bytes cannot hold {n} values (at most {most})",
                bytes.len()
            ));
        }
        let mut values = vec![0i64; n];
        let words = bytes.len().div_ceil(8) * 8;
        // SAFETY: `values` has the `n` values the field describes and outlives
        // the session; `buffer` holds the most a stream of `n` values can take
        // (libzfp's own bound, computed before the buffer is handed over) plus
        // a word, and outlives the session, which frees what libzfp allocated.
        let used = unsafe {
            let mut s = Session {
                field: zfp_field_1d(values.as_mut_ptr().cast(), ZFP_TYPE_INT64, n),
                stream: zfp_stream_open(std::ptr::null_mut()),
                bits: std::ptr::null_mut(),
            };
            if s.field.is_null() || s.stream.is_null() {
                return Err("libzfp could not allocate a stream".into());
            }
            zfp_stream_set_accuracy(s.stream, ACCURACY);
            let bound = zfp_stream_maximum_size(s.stream, s.field);
            let mut buffer = vec![0u8; words.max(bound) + 8];
            buffer[..bytes.len()].copy_from_slice(bytes);
            s.bits = stream_open(buffer.as_mut_ptr().cast(), buffer.len());
            if s.bits.is_null() {
                return Err("libzfp could not allocate a stream".into());
            }
            zfp_stream_set_bit_stream(s.stream, s.bits);
            zfp_stream_rewind(s.stream);
            let used = zfp_decompress(s.stream, s.field);
            drop(s);
            drop(buffer);
            used
        };
        if used == 0 {
            return Err("ZFP stream could not be decoded".into());
        }
        if used > words {
            return Err(format!(
                "ZFP stream runs past its block ({used} bytes read, the block has {})",
                bytes.len()
            ));
        }
        out.extend(values.iter().map(|&v| v as u64));
        Ok(())
    }

    /// Compresses `values` as Pallas does (for the trace generator and tests).
    pub fn encode(values: &[u64]) -> Result<Vec<u8>, String> {
        let mut ints: Vec<i64> = values.iter().map(|&v| v as i64).collect();
        // SAFETY: as in `decode`; `buffer` is sized by libzfp's own bound.
        unsafe {
            let mut s = Session {
                field: zfp_field_1d(ints.as_mut_ptr().cast(), ZFP_TYPE_INT64, ints.len()),
                stream: zfp_stream_open(std::ptr::null_mut()),
                bits: std::ptr::null_mut(),
            };
            if s.field.is_null() || s.stream.is_null() {
                return Err("libzfp could not allocate a stream".into());
            }
            zfp_stream_set_accuracy(s.stream, ACCURACY);
            let max = zfp_stream_maximum_size(s.stream, s.field);
            let mut buffer = vec![0u8; max];
            s.bits = stream_open(buffer.as_mut_ptr().cast(), buffer.len());
            if s.bits.is_null() {
                return Err("libzfp could not allocate a stream".into());
            }
            zfp_stream_set_bit_stream(s.stream, s.bits);
            zfp_stream_rewind(s.stream);
            let size = zfp_compress(s.stream, s.field);
            if size == 0 {
                return Err("ZFP compression failed".into());
            }
            drop(s);
            buffer.truncate(size);
            Ok(buffer)
        }
    }
}

#[cfg(not(feature = "zfp"))]
mod zfp {
    const MISSING: &str =
        "ZFP blocks need libzfp: build tracepipe with `--features zfp` (Debian: libzfp-dev)";

    pub fn decode(_: &[u8], _: usize, _: &mut [u64]) -> Result<(), String> {
        Err(MISSING.into())
    }

    pub fn encode(_: &[u64]) -> Result<Vec<u8>, String> {
        Err(MISSING.into())
    }
}

/// Encodes blocks the way Pallas writes them.
#[derive(Debug, Clone, Copy)]
pub struct BlockEncoder {
    params: Parameters,
}

/// What encoding a block needs beside its values: a ZSTD context (making
/// one per block costs more than compressing it) and the buffers. One per
/// thread that encodes, however many `.dat` files it writes: one per file
/// would take memory by the trace's threads (tens of KiB each).
#[derive(Default)]
struct Scratch {
    zstd: Option<zstd::bulk::Compressor<'static>>,
    packed: Vec<u8>,
    payload: Vec<u8>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

impl BlockEncoder {
    /// An encoder for the trace's codec.
    pub fn new(params: Parameters) -> BlockEncoder {
        BlockEncoder { params }
    }

    /// Encodes one block's payload (without its length) and gives it to
    /// `write`.
    pub fn encode<T>(&self, values: &[u64], write: impl FnOnce(&[u8]) -> T) -> Result<T, String> {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            self.encode_into(values, scratch)?;
            Ok(write(&scratch.payload))
        })
    }

    fn encode_into(&self, values: &[u64], scratch: &mut Scratch) -> Result<(), String> {
        let Scratch {
            zstd,
            packed,
            payload,
        } = scratch;
        payload.clear();
        let compressed = matches!(
            self.params.compression,
            BlockCompression::Zstd | BlockCompression::ZstdHistogram
        );
        let raw = if compressed {
            &mut *packed
        } else {
            &mut *payload
        };
        raw.clear();
        match self.params.compression {
            BlockCompression::None | BlockCompression::Zstd => {
                pack(self.params.encoding, values, raw)
            }
            BlockCompression::Histogram | BlockCompression::ZstdHistogram => {
                bin_histogram(values, raw)
            }
            BlockCompression::Zfp => raw.extend_from_slice(&zfp::encode(values)?),
            BlockCompression::Sz => return Err("SZ cannot be written".into()),
        }
        if compressed {
            if zstd.is_none() {
                *zstd = Some(zstd::bulk::Compressor::new(5).map_err(|e| e.to_string())?);
            }
            let zstd = zstd.as_mut().expect("just made");
            payload.reserve(zstd::zstd_safe::compress_bound(packed.len()));
            zstd.compress_to_buffer(&packed[..], payload)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// Values as little-endian integers: 8 bytes each, or (masking) the bytes
/// the block's largest needs (8 for a block of zeros).
fn pack(encoding: Encoding, values: &[u64], out: &mut Vec<u8>) {
    let w = match encoding {
        Encoding::None => 8,
        Encoding::Masking => {
            let all = values.iter().fold(0u64, |a, v| a | v);
            if all == 0 {
                8
            } else {
                (64 - all.leading_zeros() as usize).div_ceil(8)
            }
        }
    };
    out.reserve(values.len() * w);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes()[..w]);
    }
}

/// Values as 8-bit bins between the block's minimum and maximum.
fn bin_histogram(values: &[u64], out: &mut Vec<u8>) {
    let min = values.iter().copied().min().unwrap_or(0);
    let max = values.iter().copied().max().unwrap_or(0);
    let width = max - min;
    out.extend_from_slice(&min.to_le_bytes());
    out.extend_from_slice(&max.to_le_bytes());
    for &v in values {
        let bin = if width <= 255 {
            v - min
        } else {
            ((v - min) as f64 / (width as f64 / 255.0)) as u64
        };
        out.push(bin.min(255) as u8);
    }
}
