//! Column chunks encoded directly from the rows held, as the Parquet
//! format lays them out: a dictionary page and `RLE_DICTIONARY` data pages
//! for identifiers (their symbols numbered once per row group, no value
//! hashed), `DELTA_BINARY_PACKED` pages for integers, `PLAIN` pages for
//! free text, definition levels in the RLE / bit-packed hybrid; a chunk's
//! pages compressed with zstd where its first page shows that it pays
//! ([`Codec`]). The parquet crate writes the page headers, the
//! metadata and the file. Its own column writer, which hashes and compares
//! every value, took 1.53 s where this takes 0.90 s on bench/parquet.sh's
//! stream (`docs/performance.md`, "Parquet").

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// Rows per data page.
pub const PAGE_ROWS: usize = 8_192;

/// What one column of a row group holds, row by row.
pub enum ChunkValues<'a> {
    /// Dictionary keys of the rows that have a value.
    Keys(&'a [u32]),
    /// The integers of the rows that have one.
    Ints(&'a [i64]),
    /// The texts of the rows that have one, end to end, and where each ends.
    Texts { data: &'a [u8], ends: &'a [usize] },
}

/// One data page's rows: their presence and values.
pub struct PageRows<'a> {
    /// Whether each row has a value; `None` for a required column.
    pub defined: Option<&'a [bool]>,
    /// The values, of the rows that have one.
    pub values: ChunkValues<'a>,
    /// Rows in the page.
    pub rows: usize,
}

/// How a column chunk's pages are stored. The codec is the chunk's, and
/// the chunk's first page decides it: zstd shrinks text, and keys that
/// repeat in patterns, but on keys and integers packed with no pattern
/// left it only costs time (`docs/formats.md`, "Parquet").
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Codec {
    /// No page written yet.
    #[default]
    Undecided,
    /// zstd, at Parquet's default level.
    Zstd,
    /// Uncompressed.
    Plain,
}

impl Codec {
    /// The chunk's codec as its metadata says it.
    fn compression(self) -> Compression {
        match self {
            Codec::Plain => Compression::UNCOMPRESSED,
            _ => Compression::ZSTD(ZstdLevel::default()),
        }
    }
}

/// zstd at Parquet's default level, one compressor for every page.
pub struct PageFramer {
    compressor: zstd::bulk::Compressor<'static>,
    body: Vec<u8>,
}

fn external(e: std::io::Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl PageFramer {
    /// A compressor of pages.
    pub fn new() -> Result<PageFramer> {
        let level = ZstdLevel::default().compression_level();
        let compressor = zstd::bulk::Compressor::new(level).map_err(external)?;
        Ok(PageFramer {
            compressor,
            body: Vec::new(),
        })
    }

    /// `page` with its body compressed or not, as `codec` says, written to
    /// `sink`: its compressed and uncompressed sizes with its header. An
    /// undecided `codec` is decided by this page.
    fn write(
        &mut self,
        sink: &mut Vec<u8>,
        codec: &mut Codec,
        page: impl FnOnce(Bytes) -> Page,
    ) -> Result<(u64, u64)> {
        let packed = match codec {
            Codec::Plain => Bytes::copy_from_slice(&self.body),
            Codec::Zstd => Bytes::from(self.compressor.compress(&self.body).map_err(external)?),
            Codec::Undecided => {
                let packed = self.compressor.compress(&self.body).map_err(external)?;
                // zstd must save a tenth of the page to be kept.
                let pays = packed.len() + self.body.len() / 10 < self.body.len();
                *codec = if pays { Codec::Zstd } else { Codec::Plain };
                match pays {
                    true => Bytes::from(packed),
                    false => Bytes::copy_from_slice(&self.body),
                }
            }
        };
        let page = CompressedPage::new(page(packed), self.body.len());
        let mut tracked = TrackedWrite::new(std::mem::take(sink));
        let spec = SerializedPageWriter::new(&mut tracked).write_page(page)?;
        *sink = tracked.into_inner()?;
        Ok((spec.compressed_size as u64, spec.uncompressed_size as u64))
    }
}

/// A column chunk being encoded, a data page at a time: the pages so far
/// and what its metadata will say.
#[derive(Default)]
pub struct ChunkEncoder {
    data: Vec<u8>,
    /// Compressed and uncompressed bytes, headers included.
    sizes: (u64, u64),
    rows: usize,
    nulls: u64,
    /// The least and greatest integer.
    range: Option<(i64, i64)>,
    /// The data pages' encoding.
    encoding: Option<Encoding>,
    codec: Codec,
}

impl ChunkEncoder {
    /// Bytes of the pages encoded.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    /// Encodes `rows` as the chunk's next data page.
    pub fn add_page(&mut self, rows: &PageRows, pages: &mut PageFramer) -> Result<()> {
        pages.body.clear();
        let present = match rows.defined {
            Some(defined) => {
                let present = defined.iter().filter(|&&d| d).count();
                push_levels(&mut pages.body, defined, present);
                present
            }
            None => rows.rows,
        };
        self.nulls += (rows.rows - present) as u64;
        if let ChunkValues::Ints(ints @ &[first, ..]) = rows.values {
            // One pass for both ends.
            let start = self.range.unwrap_or((first, first));
            let range = ints
                .iter()
                .fold(start, |(lo, hi), &v| (lo.min(v), hi.max(v)));
            self.range = Some(range);
        }
        let encoding = push_values(&mut pages.body, &rows.values, present);
        self.encoding = Some(encoding);
        let num_values = rows.rows as u32;
        let sizes = pages.write(&mut self.data, &mut self.codec, |buf| Page::DataPage {
            buf,
            num_values,
            encoding,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        })?;
        self.sizes = (self.sizes.0 + sizes.0, self.sizes.1 + sizes.1);
        self.rows += rows.rows;
        Ok(())
    }

    /// The chunk as column `descr`, its dictionary page (of a dictionary
    /// column) first: its bytes, and what the row group needs to append
    /// them; the encoder is empty again.
    pub fn finish(
        &mut self,
        descr: ColumnDescPtr,
        dictionary: Option<&[&[u8]]>,
        statistics: bool,
        pages: &mut PageFramer,
    ) -> Result<(Bytes, ColumnCloseResult)> {
        let mut chunk = Vec::new();
        let mut sizes = self.sizes;
        // Levels, the dictionary's or the text's, and the data pages'.
        let mut encodings = vec![Encoding::RLE, Encoding::PLAIN];
        encodings.extend(self.encoding.filter(|&e| e != Encoding::PLAIN));
        if let Some(dictionary) = dictionary {
            {
                pages.body.clear();
                for value in dictionary {
                    push_plain_text(&mut pages.body, value);
                }
                let num_values = dictionary.len() as u32;
                let page =
                    pages.write(&mut chunk, &mut self.codec, |buf| Page::DictionaryPage {
                        buf,
                        num_values,
                        encoding: Encoding::PLAIN,
                        is_sorted: false,
                    })?;
                sizes = (sizes.0 + page.0, sizes.1 + page.1);
            }
        }
        let data_offset = chunk.len() as i64;
        chunk.extend_from_slice(&self.data);
        let mut metadata = ColumnChunkMetaData::builder(descr)
            .set_encodings(encodings)
            .set_compression(self.codec.compression())
            .set_num_values(self.rows as i64)
            .set_total_compressed_size(sizes.0 as i64)
            .set_total_uncompressed_size(sizes.1 as i64)
            .set_data_page_offset(data_offset)
            .set_dictionary_page_offset(dictionary.map(|_| 0));
        if statistics {
            metadata = metadata.set_statistics(self.statistics(dictionary));
        }
        let bytes = Bytes::from(chunk);
        let close = ColumnCloseResult {
            bytes_written: bytes.len() as u64,
            rows_written: self.rows as u64,
            metadata: metadata.build()?,
            bloom_filter: None,
            column_index: None,
            offset_index: None,
        };
        *self = ChunkEncoder {
            data: std::mem::take(&mut self.data),
            ..ChunkEncoder::default()
        };
        self.data.clear();
        Ok((bytes, close))
    }

    /// The chunk's minimum, maximum and nulls.
    fn statistics(&self, dictionary: Option<&[&[u8]]>) -> Statistics {
        let nulls = Some(self.nulls);
        match dictionary {
            Some(dictionary) => {
                let text = |t: Option<&&[u8]>| t.map(|t| ByteArray::from(t.to_vec()));
                let (min, max) = (dictionary.iter().min(), dictionary.iter().max());
                Statistics::byte_array(text(min), text(max), None, nulls, false)
            }
            None => {
                let (min, max) = self.range.unzip();
                Statistics::int64(min, max, None, nulls, false)
            }
        }
    }
}

/// Appends the `present` values of a page as its body's values; their
/// encoding.
fn push_values(body: &mut Vec<u8>, values: &ChunkValues, present: usize) -> Encoding {
    match values {
        ChunkValues::Keys(keys) => {
            let keys = &keys[..present];
            let width = bit_width(u64::from(keys.iter().copied().max().unwrap_or(0)));
            body.push(width as u8);
            push_hybrid(body, keys, width);
            Encoding::RLE_DICTIONARY
        }
        ChunkValues::Ints(ints) => {
            push_delta_packed(body, &ints[..present]);
            Encoding::DELTA_BINARY_PACKED
        }
        ChunkValues::Texts { data, ends } => {
            let mut start = 0;
            for &end in &ends[..present] {
                push_plain_text(body, &data[start..end]);
                start = end;
            }
            Encoding::PLAIN
        }
    }
}

/// A text as `PLAIN` writes it: its length (4 bytes, little-endian), then
/// its bytes.
fn push_plain_text(body: &mut Vec<u8>, text: &[u8]) {
    body.extend_from_slice(&(text.len() as u32).to_le_bytes());
    body.extend_from_slice(text);
}

/// Definition levels (0 or 1), `present` of them 1, as a v1 data page
/// starts: their length, then the hybrid encoding.
fn push_levels(body: &mut Vec<u8>, defined: &[bool], present: usize) {
    let at = body.len();
    body.extend_from_slice(&[0; 4]);
    if present == 0 || present == defined.len() {
        // Most pages of most columns: all nulls or all values, one run.
        push_varint(body, (defined.len() as u64) << 1);
        body.push(u8::from(present > 0));
    } else {
        push_level_runs(body, defined);
    }
    let len = (body.len() - at - 4) as u32;
    body[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// Mixed levels in the hybrid encoding, found a byte of eight levels at a
/// time: two or more whole bytes of equal levels make an RLE run, the
/// bytes between them are bit-packed as they are.
fn push_level_runs(body: &mut Vec<u8>, defined: &[bool]) {
    let bytes: Vec<u8> = defined.chunks(8).map(level_byte).collect();
    let whole = defined.len() / 8;
    let (mut packed, mut j) = (0, 0);
    while j < whole {
        let byte = bytes[j];
        if byte != 0 && byte != 0xff {
            j += 1;
            continue;
        }
        let run = bytes[j..whole].iter().take_while(|&&b| b == byte).count();
        if run >= 2 {
            push_packed_levels(body, &bytes[packed..j]);
            push_varint(body, (run as u64 * 8) << 1);
            body.push(byte & 1);
            packed = j + run;
        }
        j += run;
    }
    push_packed_levels(body, &bytes[packed..]);
}

/// Up to eight levels as a byte, the first the least significant bit.
fn level_byte(levels: &[bool]) -> u8 {
    let set = levels.iter().enumerate();
    set.fold(0, |byte, (k, &d)| byte | (u8::from(d) << k))
}

/// Bytes of eight levels as bit-packed runs of at most 63 groups.
fn push_packed_levels(body: &mut Vec<u8>, bytes: &[u8]) {
    for run in bytes.chunks(63) {
        body.push(((run.len() << 1) | 1) as u8);
        body.extend_from_slice(run);
    }
}

/// Bits needed for `max`, at least 1.
fn bit_width(max: u64) -> u32 {
    (64 - max.leading_zeros()).max(1)
}

/// Values of `width` bits in the RLE / bit-packed hybrid encoding: a run
/// of eight or more equal values as one RLE run, the values between them
/// bit-packed (in groups of eight: a stretch is topped up from the run
/// after it, and only the last is padded).
fn push_hybrid<T: Copy + PartialEq + Into<u32>>(body: &mut Vec<u8>, values: &[T], width: u32) {
    let n = values.len();
    let (mut packed, mut i) = (0, 0);
    while i + 8 <= n {
        // A run of eight needs its eighth value equal to its first: most
        // places fail that at once.
        if values[i + 7] != values[i] {
            i += 1;
            continue;
        }
        let run = run_length(&values[i..]);
        if run < 8 {
            i += run;
            continue;
        }
        // The stretch before the run, topped up to whole groups from it.
        let top_up = (8 - (i - packed) % 8) % 8;
        push_bit_packed(body, &values[packed..i + top_up], width);
        let count = run - top_up;
        push_varint(body, (count as u64) << 1);
        let value: u32 = values[i].into();
        body.extend_from_slice(&value.to_le_bytes()[..width.div_ceil(8) as usize]);
        i += run;
        packed = i;
    }
    push_bit_packed(body, &values[packed..], width);
}

/// How many values `values` starts with equal to its first, compared
/// sixteen at a time where it can.
fn run_length<T: Copy + PartialEq>(values: &[T]) -> usize {
    let first = values[0];
    let mut run = 0;
    for chunk in values.chunks_exact(16) {
        if !chunk.iter().fold(true, |all, &v| all & (v == first)) {
            break;
        }
        run += 16;
    }
    run + values[run..].iter().take_while(|&&v| v == first).count()
}

/// Bit-packed runs of `values` (whole groups of eight but at the end),
/// least significant bit first, at most 63 groups a run (a one-byte
/// header, as every reader takes).
fn push_bit_packed<T: Copy + Into<u32>>(body: &mut Vec<u8>, values: &[T], width: u32) {
    for run in values.chunks(63 * 8) {
        let groups = run.len().div_ceil(8);
        body.push(((groups << 1) | 1) as u8);
        // Whole bytes leave the accumulator four at a time: it holds less
        // than 32 bits between values and a value at most 32.
        let (mut acc, mut bits) = (0u64, 0u32);
        for &v in run {
            acc |= u64::from(v.into()) << bits;
            bits += width;
            if bits >= 32 {
                body.extend_from_slice(&(acc as u32).to_le_bytes());
                acc >>= 32;
                bits -= 32;
            }
        }
        // A last group short of eight is padded with zeros.
        let bytes = (bits + width * ((8 - run.len() % 8) % 8) as u32) as usize / 8;
        body.extend_from_slice(&acc.to_le_bytes()[..bytes.min(8)]);
        body.resize(body.len() + bytes.saturating_sub(8), 0);
    }
}

/// Values per block of `DELTA_BINARY_PACKED`, and per miniblock.
const DELTA_BLOCK: usize = 128;
const DELTA_MINIBLOCK: usize = 32;

/// Integers as `DELTA_BINARY_PACKED`: a header (block size, miniblocks,
/// count, first value), then per block of 128 differences their least
/// (zigzag), each miniblock's bit width and the differences above the
/// least, bit-packed; a last miniblock is padded, miniblocks past it are
/// left out (their widths 0).
fn push_delta_packed(body: &mut Vec<u8>, values: &[i64]) {
    push_varint(body, DELTA_BLOCK as u64);
    push_varint(body, (DELTA_BLOCK / DELTA_MINIBLOCK) as u64);
    push_varint(body, values.len() as u64);
    push_varint(body, zigzag(values.first().copied().unwrap_or(0)));
    let mut deltas = [0u64; DELTA_BLOCK];
    for start in (1..values.len()).step_by(DELTA_BLOCK) {
        let block = &values[start - 1..values.len().min(start + DELTA_BLOCK)];
        let len = block.len() - 1;
        let delta = |i: usize| block[i + 1].wrapping_sub(block[i]);
        let min = (0..len).map(delta).min().unwrap_or(0);
        for (i, d) in deltas.iter_mut().enumerate().take(len) {
            *d = delta(i).wrapping_sub(min) as u64;
        }
        push_varint(body, zigzag(min));
        let used = len.div_ceil(DELTA_MINIBLOCK);
        let mut widths = [0u32; DELTA_BLOCK / DELTA_MINIBLOCK];
        for (m, width) in widths.iter_mut().enumerate().take(used) {
            let mini = &deltas[m * DELTA_MINIBLOCK..len.min((m + 1) * DELTA_MINIBLOCK)];
            *width = 64 - mini.iter().fold(0, |a, &d| a | d).leading_zeros();
        }
        body.extend(widths.iter().map(|&w| w as u8));
        for (m, &width) in widths.iter().enumerate().take(used) {
            let mini = &deltas[m * DELTA_MINIBLOCK..len.min((m + 1) * DELTA_MINIBLOCK)];
            push_packed_u64(body, mini, width, DELTA_MINIBLOCK);
        }
    }
}

/// `values` in `width` bits each, least significant bit first, padded
/// with zeros to `slots` values.
fn push_packed_u64(body: &mut Vec<u8>, values: &[u64], width: u32, slots: usize) {
    // Eight bytes written at a time; `slots` values of `width` bits fill
    // whole bytes (slots is a multiple of 8), so what is left is whole.
    let (mut acc, mut bits) = (0u128, 0u32);
    for i in 0..slots {
        acc |= u128::from(values.get(i).copied().unwrap_or(0)) << bits;
        bits += width;
        if bits >= 64 {
            body.extend_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            bits -= 64;
        }
    }
    body.extend_from_slice(&acc.to_le_bytes()[..bits.div_ceil(8) as usize]);
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// An unsigned LEB128 number.
fn push_varint(body: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        body.push(n as u8 | 0x80);
        n >>= 7;
    }
    body.push(n as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page<'a>(values: ChunkValues<'a>, rows: usize) -> PageRows<'a> {
        PageRows {
            defined: None,
            values,
            rows,
        }
    }

    #[test]
    fn a_chunk_keeps_zstd_where_its_first_page_shows_it_pays() {
        let mut pages = PageFramer::new().unwrap();
        // Text whose rows repeat words.
        let data = b"MPI_Send MPI_Recv ".repeat(1000);
        let ends: Vec<usize> = (1..=1000).map(|i| i * 18).collect();
        let text = || {
            page(
                ChunkValues::Texts {
                    data: &data,
                    ends: &ends,
                },
                1000,
            )
        };
        let mut chunk = ChunkEncoder::default();
        chunk.add_page(&text(), &mut pages).unwrap();
        assert_eq!(chunk.codec, Codec::Zstd);
        assert!(chunk.sizes.0 * 10 < chunk.sizes.1, "{:?}", chunk.sizes);
        // Integers whose differences look random: delta packing leaves
        // nothing for zstd.
        let mut x = 1u64;
        let ints: Vec<i64> = (0..PAGE_ROWS)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                (x >> 24) as i64
            })
            .collect();
        let mut chunk = ChunkEncoder::default();
        chunk
            .add_page(&page(ChunkValues::Ints(&ints), PAGE_ROWS), &mut pages)
            .unwrap();
        assert_eq!(chunk.codec, Codec::Plain);
        assert_eq!(chunk.sizes.0, chunk.sizes.1);
        // The chunk's codec holds for its later pages.
        chunk.add_page(&text(), &mut pages).unwrap();
        assert_eq!(chunk.codec, Codec::Plain);
        assert_eq!(chunk.sizes.0, chunk.sizes.1);
        assert_eq!(Codec::Plain.compression(), Compression::UNCOMPRESSED);
    }

    #[test]
    fn bit_packing_follows_the_format() {
        // The format's example: 0..8 in 3 bits.
        let mut body = Vec::new();
        push_bit_packed(&mut body, &[0u32, 1, 2, 3, 4, 5, 6, 7], 3);
        assert_eq!(body, [0b11, 0b1000_1000, 0b1100_0110, 0b1111_1010]);
        let mut levels = Vec::new();
        push_levels(&mut levels, &[true, false, true], 2);
        assert_eq!(levels, [2, 0, 0, 0, 0b11, 0b101]);
        // A mixed byte, then 24 levels set as one run, then three left.
        let mut defined = vec![false, true, false, false, false, false, false, false];
        defined.extend([true; 24]);
        defined.extend([false, false, true]);
        let mut levels = Vec::new();
        push_levels(&mut levels, &defined, 26);
        assert_eq!(levels, [6, 0, 0, 0, 0b11, 0b10, 48, 1, 0b11, 0b100]);
        // 200 nulls: one run, its count a two-byte varint.
        let mut levels = Vec::new();
        push_levels(&mut levels, &[false; 200], 0);
        assert_eq!(levels, [3, 0, 0, 0, 0x90, 0x03, 0]);
        // Three values, then 200 equal ones: the three topped up to a
        // group from the run, the rest one RLE run (count 195, varint).
        let mut keys = vec![1u32, 2, 3];
        keys.extend([300u32; 200]);
        let mut body = Vec::new();
        push_hybrid(&mut body, &keys, 9);
        assert_eq!(body.len(), 1 + 9 + 2 + 2);
        assert_eq!(&body[10..], [0x86, 0x03, 44, 1]);
        // Five 13-bit values: a group padded with three zeros (39 bits).
        let mut body = Vec::new();
        push_bit_packed(&mut body, &[0x1fffu32, 0, 0x1fff, 0, 1], 13);
        let mut expected = vec![0b11, 0xff, 0x1f, 0, 0xfc, 0x7f, 0, 0x10];
        expected.resize(1 + 13, 0);
        assert_eq!(body, expected);
        assert_eq!(run_length(&[3u32; 40]), 40);
        assert_eq!(run_length(&[1u8, 1, 2]), 2);
        assert_eq!(
            (bit_width(0), bit_width(1), bit_width(2), bit_width(255)),
            (1, 1, 2, 8)
        );
    }
}
