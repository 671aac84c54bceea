//! The `.pallas` files: the main file (global archive), the per-process
//! archives and the per-thread grammars, parsed from their byte layouts
//! (`docs/formats.md`, Pallas section). Timestamp blocks live in `.dat` files
//! and are decoded by [`super::codec`] only when the expansion reaches them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::RecordId;
use crate::bytes::Bytes;
use crate::error::{Error, Result};

/// Oldest on-disk ABI this reader understands.
pub const MIN_ABI: u8 = 16;
/// Newest on-disk ABI this reader understands. ABI 21 (Pallas 0.21) lays
/// files out as 20 does: only the number changed.
pub const MAX_ABI: u8 = 21;

/// The ABI tracepipe writes: 20, which Pallas 0.20 and 0.21 both read.
pub const WRITE_ABI: u8 = 20;

/// Block compression of every `.dat` block of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockCompression {
    /// Raw values.
    None,
    /// A ZSTD frame.
    Zstd,
    /// Lossy 8-bit histogram bins.
    Histogram,
    /// SZ (lossy; not supported).
    Sz,
    /// ZFP (lossy, through libzfp).
    Zfp,
    /// A ZSTD frame holding a histogram blob.
    ZstdHistogram,
}

impl BlockCompression {
    fn from_u32(v: u32) -> Option<BlockCompression> {
        Some(match v {
            0 => BlockCompression::None,
            1 => BlockCompression::Zstd,
            2 => BlockCompression::Histogram,
            3 => BlockCompression::Sz,
            4 => BlockCompression::Zfp,
            5 => BlockCompression::ZstdHistogram,
            _ => return None,
        })
    }

    /// The name used in `meta` rows and messages.
    pub fn name(self) -> &'static str {
        match self {
            BlockCompression::None => "none",
            BlockCompression::Zstd => "zstd",
            BlockCompression::Histogram => "histogram",
            BlockCompression::Sz => "sz",
            BlockCompression::Zfp => "zfp",
            BlockCompression::ZstdHistogram => "zstd+histogram",
        }
    }

    /// True for codecs whose decoded values are approximations.
    pub fn is_lossy(self) -> bool {
        !matches!(self, BlockCompression::None | BlockCompression::Zstd)
    }

    /// The value stored in a main file.
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// Encoding applied to values before compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Values as 8-byte integers.
    None,
    /// Each block's values truncated to the bytes the largest one needs.
    Masking,
}

impl Encoding {
    /// The name used in `meta` rows.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::None => "none",
            Encoding::Masking => "masking",
        }
    }
}

/// Global parameters stored right after the ABI byte of the main file.
#[derive(Debug, Clone, Copy)]
pub struct Parameters {
    /// On-disk ABI version.
    pub abi: u8,
    /// Block compression.
    pub compression: BlockCompression,
    /// Block encoding (forced to `None` for lossy codecs).
    pub encoding: Encoding,
}

/// An attribute definition: its name and value type.
#[derive(Debug, Clone, Copy)]
pub struct AttributeDef {
    /// String ref of the name.
    pub name: u32,
    /// Value type (1 u8 … 10 f64, 11 string ref, 12.. other refs).
    pub kind: u8,
}

/// A communicator definition.
#[derive(Debug, Clone, Copy)]
pub struct CommDef {
    /// String ref of the name.
    pub name: u32,
    /// Group ref of its members.
    pub group: u32,
}

/// A group definition.
#[derive(Debug, Clone)]
pub struct GroupDef {
    /// String ref of the name.
    pub name: u32,
    /// OTF2 group type (4: the locations of a communicator, 5: its ranks);
    /// 0 when the ABI does not store it (before 17).
    pub kind: u32,
    /// Member ids (ranks, locations…).
    pub members: Vec<u32>,
}

/// The definition tables shared by the main file and the archives.
#[derive(Debug, Default)]
pub struct Definitions {
    /// String ref → text.
    pub strings: HashMap<u32, String>,
    /// Region ref → string ref of its name.
    pub regions: HashMap<u32, u32>,
    /// Attribute ref → definition.
    pub attributes: HashMap<u32, AttributeDef>,
    /// Group ref → definition.
    pub groups: HashMap<u32, GroupDef>,
    /// Comm ref → definition.
    pub comms: HashMap<u32, CommDef>,
}

/// A process (location group) or thread (location) entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocationEntry {
    /// Its id: location group id, or thread id.
    pub id: u32,
    /// String ref of its name.
    pub name: u32,
    /// Parent: the enclosing location group.
    pub parent: u32,
    /// Byte offset of the entry in its file: where a bad reference is.
    pub at: usize,
}

/// What the main file and the archive files have in common.
#[derive(Debug, Default)]
pub struct ArchiveData {
    /// Definitions of this file.
    pub defs: Definitions,
    /// Location groups (processes) listed in this file, sorted by id.
    pub location_groups: Vec<LocationEntry>,
    /// Locations (threads) listed in this file, sorted by id.
    pub locations: Vec<LocationEntry>,
    /// Key/value metadata, in file order.
    pub metadata: Vec<(String, String)>,
}

/// The main `.pallas` file.
#[derive(Debug)]
pub struct MainFile {
    /// Storage parameters.
    pub params: Parameters,
    /// Global definitions, processes, main-file locations and metadata.
    pub data: ArchiveData,
}

/// Reads a whole file, naming it on failure.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    crate::io::read_regular(path).map_err(|e| Error::io(path.display().to_string(), e))
}

/// The main file of a trace named by `path`: the file itself, or the one
/// `*.pallas` file at the top of a folder (`main.pallas` preferred).
pub fn find_main(path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "archive.pallas" || name == "thread.pallas" {
            return Err(Error::file(
                path.display().to_string(),
                "this is part of a Pallas trace; name the trace folder or its main .pallas file",
            ));
        }
        return Ok(path.to_path_buf());
    }
    let main = path.join("main.pallas");
    if main.is_file() {
        return Ok(main);
    }
    let mut found = Vec::new();
    let entries = std::fs::read_dir(path).map_err(|e| Error::io(path.display().to_string(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(path.display().to_string(), e))?;
        let p = entry.path();
        if p.is_file() && p.extension().is_some_and(|e| e == "pallas") {
            found.push(p);
        }
    }
    found.sort();
    let part = |p: &PathBuf| {
        p.file_name()
            .is_some_and(|n| n == "archive.pallas" || n == "thread.pallas")
    };
    if !found.is_empty() && found.iter().all(part) {
        return Err(Error::file(
            path.display().to_string(),
            "this folder is part of a Pallas trace (it holds an archive.pallas or thread.pallas); name the trace folder above it",
        ));
    }
    match found.len() {
        1 => Ok(found.pop().expect("one element")),
        0 => Err(Error::file(
            path.display().to_string(),
            "no *.pallas main file in this folder",
        )),
        _ => Err(Error::file(
            path.display().to_string(),
            format!(
                "several *.pallas files in this folder ({}); name the main one",
                found
                    .iter()
                    .filter_map(|p| p.file_name())
                    .map(|n| n.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

impl MainFile {
    /// Parses the main file's bytes.
    pub fn parse(name: &str, data: &[u8]) -> Result<MainFile> {
        let mut b = Bytes::new(name, data);
        let abi = b.u8("ABI version")?;
        if !(MIN_ABI..=MAX_ABI).contains(&abi) {
            // A byte that is printable text is rather a file of another format.
            let other = if abi.is_ascii_graphic() {
                format!(
                    "; it starts with `{}`: is it a Pallas main file at all?",
                    abi as char
                )
            } else {
                String::new()
            };
            return Err(b.error_at(
                0,
                format!("unsupported Pallas ABI {abi} (this reader knows {MIN_ABI} to {MAX_ABI}){other}"),
            ));
        }
        let at = b.offset();
        let compression = b.u32("compression")?;
        let compression = BlockCompression::from_u32(compression)
            .ok_or_else(|| b.error_at(at, format!("unknown compression {compression}")))?;
        let at = b.offset();
        let encoding = match b.u32("encoding")? {
            0 => Encoding::None,
            1 => Encoding::Masking,
            2 => {
                return Err(b.error_at(
                    at,
                    "encoding LeadingZeroes is declared by Pallas but never implemented",
                ))
            }
            e => return Err(b.error_at(at, format!("unknown encoding {e}"))),
        };
        let encoding = if compression.is_lossy() {
            Encoding::None
        } else {
            encoding
        };
        b.u64("ZSTD level")?;
        b.u32("loop finding")?;
        b.u64("maximum loop length")?;
        b.u32("timestamp storage")?;
        let params = Parameters {
            abi,
            compression,
            encoding,
        };
        let data = ArchiveData::parse(&mut b, abi)?;
        b.expect_end("main archive")?;
        Ok(MainFile { params, data })
    }
}

impl ArchiveData {
    /// Parses definitions, location groups, locations and metadata.
    fn parse(b: &mut Bytes, abi: u8) -> Result<ArchiveData> {
        let defs = Definitions::parse(b, abi)?;
        let location_groups = parse_locations(b, "number of location groups")?;
        let locations = parse_locations(b, "number of locations")?;
        let metadata = parse_metadata(b, abi)?;
        Ok(ArchiveData {
            defs,
            location_groups,
            locations,
            metadata,
        })
    }
}

/// A process archive (`archive_<id>/archive.pallas`).
#[derive(Debug)]
pub struct ArchiveFile {
    /// Its location group id.
    pub id: u32,
    /// Its definitions, locations and metadata.
    pub data: ArchiveData,
}

impl ArchiveFile {
    /// Parses an archive file's bytes.
    pub fn parse(name: &str, data: &[u8], abi: u8) -> Result<ArchiveFile> {
        let mut b = Bytes::new(name, data);
        let id = b.u32("archive id")?;
        b.u32("number of threads")?;
        let data = ArchiveData::parse(&mut b, abi)?;
        b.expect_end("archive")?;
        Ok(ArchiveFile { id, data })
    }
}

fn parse_locations(b: &mut Bytes, what: &str) -> Result<Vec<LocationEntry>> {
    let n = b.count(what, 12)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(LocationEntry {
            at: b.offset(),
            id: b.u32("location id")?,
            name: b.u32("location name")?,
            parent: b.u32("location parent")?,
        });
    }
    v.sort_by_key(|l| l.id);
    Ok(v)
}

fn meta_string(b: &mut Bytes, what: &str) -> Result<String> {
    let len = b.count(what, 1)?;
    Ok(c_string(b.take(len, what)?))
}

fn parse_metadata(b: &mut Bytes, abi: u8) -> Result<Vec<(String, String)>> {
    if abi < 17 {
        // ABI 16 wrote metadata in a shape its own reader skips: a count and
        // that many bytes.
        let n = b.count("metadata size", 1)?;
        b.take(n, "metadata")?;
        return Ok(Vec::new());
    }
    let n = b.count("number of metadata entries", 16)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let at = b.offset();
        let key = meta_string(b, "metadata key length")?;
        if key.is_empty() {
            return Err(b.error_at(at, "empty metadata key".to_string()));
        }
        let value = meta_string(b, "metadata value length")?;
        v.push((key, value));
    }
    Ok(v)
}

/// Text of a C string field: up to its first NUL, invalid UTF-8 replaced.
fn c_string(bytes: &[u8]) -> String {
    let end = memchr::memchr(0, bytes).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

impl Definitions {
    fn parse(b: &mut Bytes, abi: u8) -> Result<Definitions> {
        let mut d = Definitions::default();
        let n = b.count("number of strings", 8)?;
        d.strings.reserve(n);
        for _ in 0..n {
            let r = b.u32("string ref")?;
            let at = b.offset();
            let len = b.i32("string length")?;
            if len < 0 {
                return Err(b.error_at(at, format!("negative string length {len}")));
            }
            let text = c_string(b.take(len as usize, "string")?);
            d.strings.insert(r, text);
        }
        let n = b.count("number of regions", 8)?;
        for _ in 0..n {
            let r = b.u32("region ref")?;
            let s = b.u32("region name")?;
            d.regions.insert(r, s);
        }
        let n = b.count("number of attributes", 16)?;
        for _ in 0..n {
            let r = b.u32("attribute ref")?;
            let name = b.u32("attribute name")?;
            b.u32("attribute description")?;
            let kind = b.u8("attribute type")?;
            b.take(3, "attribute padding")?;
            d.attributes.insert(r, AttributeDef { name, kind });
        }
        let n = b.count("number of groups", 12)?;
        for _ in 0..n {
            let r = b.u32("group ref")?;
            let name = b.u32("group name")?;
            let mut kind = 0;
            if abi >= 17 {
                kind = b.u32("group type")?;
                b.u32("group paradigm")?;
            }
            let at = b.offset();
            let m = b.u32("number of group members")?;
            let width = if abi >= 17 { 4 } else { 8 };
            let m = b.check_count(at, m as u64, "number of group members", width)?;
            let mut members = Vec::with_capacity(m);
            for _ in 0..m {
                members.push(if abi >= 17 {
                    b.u32("group member")?
                } else {
                    b.u64("group member")? as u32
                });
            }
            d.groups.insert(
                r,
                GroupDef {
                    name,
                    kind,
                    members,
                },
            );
        }
        let n = b.count("number of comms", 16)?;
        for _ in 0..n {
            let r = b.u32("comm ref")?;
            let name = b.u32("comm name")?;
            let group = b.u32("comm group")?;
            b.u32("comm parent")?;
            d.comms.insert(r, CommDef { name, group });
        }
        Ok(d)
    }
}

/// Looks definitions up in a process archive first, then in the main file.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// The archive's own definitions (may be empty).
    pub local: &'a Definitions,
    /// The main file's definitions.
    pub global: &'a Definitions,
}

impl<'a> Scope<'a> {
    /// The text of string `r`.
    pub fn string(&self, r: u32) -> Option<&'a str> {
        self.local
            .strings
            .get(&r)
            .or_else(|| self.global.strings.get(&r))
            .map(String::as_str)
    }

    /// The name of region `r`.
    pub fn region(&self, r: u32) -> Option<&'a str> {
        let s = self
            .local
            .regions
            .get(&r)
            .or_else(|| self.global.regions.get(&r))?;
        self.string(*s)
    }

    /// The definition of attribute `r`.
    pub fn attribute(&self, r: u32) -> Option<AttributeDef> {
        self.local
            .attributes
            .get(&r)
            .or_else(|| self.global.attributes.get(&r))
            .copied()
    }
}

/// One block of a vector: where its encoded values are and what its ends are.
#[derive(Debug, Clone, Copy)]
pub struct BlockHeader {
    /// Number of values.
    pub size: u64,
    /// The first value, exact even for lossy codecs.
    pub first: u64,
    /// The last value, exact even for lossy codecs.
    pub last: u64,
    /// Byte offset of the encoded block in the thread's `.dat` file.
    pub offset: u64,
}

/// Where a vector's values are: its length and its blocks.
#[derive(Debug, Clone, Default)]
pub struct VectorHeader {
    /// Number of values.
    pub size: u64,
    /// The blocks, in order.
    pub blocks: Vec<BlockHeader>,
}

/// One distinct event of a thread.
#[derive(Debug, Clone)]
pub struct EventDef {
    /// Record number (ABI ≤ 18 buffer flushes renumbered to 59).
    pub record: u32,
    /// Record-specific payload bytes.
    pub payload: Vec<u8>,
    /// Concatenated attribute lists of its occurrences.
    pub attributes: Vec<u8>,
    /// Byte offset of the attribute buffer in the thread file.
    pub attributes_offset: usize,
    /// Its timestamps, one per occurrence.
    pub timestamps: VectorHeader,
    /// Byte offset of the event entry in the thread file.
    pub offset: usize,
}

/// The kind of a grammar token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// An event.
    Event,
    /// A sequence of tokens.
    Sequence,
    /// A sequence repeated a number of times.
    Loop,
}

/// Splits a token into its kind and logical id.
pub fn token(t: u32) -> Option<(TokenKind, u32)> {
    let kind = match t & 3 {
        1 => TokenKind::Event,
        2 => TokenKind::Sequence,
        3 => TokenKind::Loop,
        _ => return None,
    };
    Some((kind, t >> 2))
}

/// Builds a token from its kind and logical id.
pub fn make_token(kind: TokenKind, id: u32) -> u32 {
    let k = match kind {
        TokenKind::Event => 1,
        TokenKind::Sequence => 2,
        TokenKind::Loop => 3,
    };
    (id << 2) | k
}

/// A loop: a sequence repeated.
#[derive(Debug, Clone, Copy)]
pub struct LoopDef {
    /// Logical id of the repeated sequence.
    pub sequence: u32,
    /// Number of iterations.
    pub iterations: u32,
}

/// A thread's grammar and where its timestamps are.
#[derive(Debug)]
pub struct ThreadFile {
    /// Location id of the thread.
    pub id: u32,
    /// Event slots (`None`: a dead slot).
    pub events: Vec<Option<EventDef>>,
    /// Sequence slots: token lists (`None`: a dead slot).
    pub sequences: Vec<Option<Vec<u32>>>,
    /// Each sequence slot's durations, one per occurrence (in
    /// `sequence_durations.dat`; empty for a dead slot).
    pub durations: Vec<VectorHeader>,
    /// Loop slots (`None`: a dead slot).
    pub loops: Vec<Option<LoopDef>>,
    /// Logical → physical event slot (identity before ABI 20).
    pub event_map: Vec<u32>,
    /// Logical → physical sequence slot.
    pub sequence_map: Vec<u32>,
    /// Logical → physical loop slot.
    pub loop_map: Vec<u32>,
    /// Logical id of the root sequence.
    pub root: u32,
    /// Byte offset of the root's id (before ABI 20, which has none: of the
    /// number of sequences), for messages.
    pub root_offset: u64,
    /// Byte offset of each sequence slot's token list, for messages.
    pub sequence_offsets: Vec<usize>,
}

const MAP_NONE: u32 = u32::MAX;

impl ThreadFile {
    /// Parses a `thread.pallas` file's bytes.
    pub fn parse(name: &str, data: &[u8], abi: u8) -> Result<ThreadFile> {
        let mut b = Bytes::new(name, data);
        let id = b.u32("thread id")?;
        b.u32("archive id")?;
        let at = b.offset();
        let n_events = b.u64("number of events")?;
        let n_sequences = b.u64("number of sequences")?;
        let n_loops = b.u64("number of loops")?;
        let root_offset = if abi >= 20 { b.offset() } else { at + 8 } as u64;
        let root = if abi >= 20 {
            b.u32("root sequence")?
        } else {
            0
        };
        b.u64("first timestamp")?;
        // Smallest encodings: event 5+8+8 bytes, sequence 4+8, loop 8.
        let n_events = b.check_count(at, n_events, "number of events", 21)?;
        let mut events = Vec::with_capacity(n_events);
        for _ in 0..n_events {
            events.push(parse_event(&mut b, abi)?);
        }
        let event_map = parse_map(&mut b, abi, events.len(), "event map")?;
        let n_sequences = b.check_count(at + 8, n_sequences, "number of sequences", 12)?;
        let mut sequences = Vec::with_capacity(n_sequences);
        let mut sequence_offsets = Vec::with_capacity(n_sequences);
        let mut durations = Vec::with_capacity(n_sequences);
        for _ in 0..n_sequences {
            sequence_offsets.push(b.offset() + 12);
            let (tokens, d) = parse_sequence(&mut b, abi)?;
            sequences.push(tokens);
            durations.push(d);
        }
        let sequence_map = parse_map(&mut b, abi, sequences.len(), "sequence map")?;
        let n_loops = b.check_count(at + 16, n_loops, "number of loops", 8)?;
        let mut loops = Vec::with_capacity(n_loops);
        for _ in 0..n_loops {
            let repeated = b.u32("loop token")?;
            let iterations = b.u32("loop iterations")?;
            if abi >= 19 {
                b.u64("loop occurrences")?;
            }
            // Dead slots repeat the invalid token; a live loop repeats a sequence.
            loops.push(match token(repeated) {
                Some((TokenKind::Sequence, sequence)) => Some(LoopDef {
                    sequence,
                    iterations,
                }),
                _ => None,
            });
        }
        let loop_map = parse_map(&mut b, abi, loops.len(), "loop map")?;
        b.expect_end("thread's loop table")?;
        Ok(ThreadFile {
            id,
            events,
            sequences,
            durations,
            loops,
            event_map,
            sequence_map,
            loop_map,
            root,
            root_offset,
            sequence_offsets,
        })
    }

    /// The physical slot of logical id `id` through `map`, if it is live.
    pub fn physical(map: &[u32], id: u32) -> Option<usize> {
        match map.get(id as usize) {
            Some(&p) if p != MAP_NONE => Some(p as usize),
            _ => None,
        }
    }
}

fn parse_map(b: &mut Bytes, abi: u8, slots: usize, what: &str) -> Result<Vec<u32>> {
    if abi < 20 {
        return Ok((0..slots as u32).collect());
    }
    let n = b.count(what, 4)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let at = b.offset();
        let p = b.u32(what)?;
        if p != MAP_NONE && p as usize >= slots {
            return Err(b.error_at(
                at,
                format!("{what} points to slot {p}, but there are {slots}"),
            ));
        }
        v.push(p);
    }
    Ok(v)
}

fn parse_event(b: &mut Bytes, abi: u8) -> Result<Option<EventDef>> {
    let offset = b.offset();
    let mut record = b.u32("event record")?;
    if abi <= 18 && record == 0 {
        record = RecordId::BufferFlush.number();
    }
    let at = b.offset();
    let size = b.u8("event size")?;
    if size < 5 {
        return Err(b.error_at(at, format!("event size {size} is smaller than 5")));
    }
    let payload = b.take(size as usize - 5, "event payload")?.to_vec();
    let n = b.count("attribute buffer size", 1)?;
    let attributes_offset = b.offset();
    let attributes = b.take(n, "attribute buffer")?.to_vec();
    let timestamps = parse_vector(b, abi, false)?;
    if record == RecordId::Dummy.number() {
        return Ok(None);
    }
    Ok(Some(EventDef {
        record,
        payload,
        attributes,
        attributes_offset,
        timestamps,
        offset,
    }))
}

/// A sequence slot: its tokens (none for a dead slot) and its durations.
fn parse_sequence(b: &mut Bytes, abi: u8) -> Result<(Option<Vec<u32>>, VectorHeader)> {
    b.u32("sequence type")?;
    let n = b.count("number of tokens", 4)?;
    if n == 0 {
        return Ok((None, VectorHeader::default()));
    }
    let mut tokens = Vec::with_capacity(n);
    for _ in 0..n {
        tokens.push(b.u32("token")?);
    }
    let durations = parse_vector(b, abi, true)?;
    parse_vector(b, abi, true)?;
    parse_vector(b, abi, false)?;
    Ok((Some(tokens), durations))
}

/// Parses a timestamp (`durations == false`) or duration vector header.
fn parse_vector(b: &mut Bytes, abi: u8, durations: bool) -> Result<VectorHeader> {
    let at = b.offset();
    let size = b.u64("vector size")?;
    let n_sub = if abi >= 18 {
        Some(b.u64("number of blocks")?)
    } else {
        None
    };
    if size == 0 {
        return Ok(VectorHeader::default());
    }
    if durations {
        b.u64("minimum")?;
        b.u64("maximum")?;
        b.u64("mean")?;
    }
    let header_len = if durations { 40 } else { 32 };
    let mut blocks = Vec::new();
    let mut total = 0u64;
    let read_block = |b: &mut Bytes| -> Result<BlockHeader> {
        let block_at = b.offset();
        let bsize = b.u64("block size")?;
        let (first, last) = if durations {
            b.u64("block minimum")?;
            b.u64("block maximum")?;
            b.u64("block mean")?;
            (0, 0)
        } else {
            (b.u64("block first value")?, b.u64("block last value")?)
        };
        let offset = b.u64("block offset")?;
        if bsize == 0 {
            return Err(b.error_at(block_at, "empty block in a vector"));
        }
        Ok(BlockHeader {
            size: bsize,
            first,
            last,
            offset,
        })
    };
    match n_sub {
        Some(n) => {
            let n = b.check_count(at + 8, n, "number of blocks", header_len)?;
            blocks.reserve(n);
            for _ in 0..n {
                let block = read_block(b)?;
                total = total.saturating_add(block.size);
                blocks.push(block);
            }
        }
        None => {
            while total < size {
                let block = read_block(b)?;
                total = total.saturating_add(block.size);
                blocks.push(block);
            }
        }
    }
    if total != size {
        return Err(b.error_at(
            at,
            format!("vector of {size} values has blocks holding {total}"),
        ));
    }
    Ok(VectorHeader { size, blocks })
}
