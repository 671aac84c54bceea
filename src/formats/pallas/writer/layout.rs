//! The byte layouts a writer puts in Pallas files, the reverse of
//! `archive.rs`: definitions, location lists, metadata, event entries and
//! the headers of timestamp and duration vectors, whose values go in
//! blocks of [`BLOCK_VALUES`] to a `.dat` file as they fill.

use std::io::Write;

use super::super::archive::Parameters;
use super::super::codec::BlockEncoder;
use super::super::RecordId;
use crate::error::{Error, Result};

/// Values per `.dat` block, as Pallas writes them.
pub const BLOCK_VALUES: usize = 1000;

/// Definition tables of a main file or an archive.
#[derive(Debug, Clone, Default)]
pub struct Defs {
    /// (ref, text).
    pub strings: Vec<(u32, String)>,
    /// (region ref, string ref).
    pub regions: Vec<(u32, u32)>,
    /// (attribute ref, name string ref, type).
    pub attributes: Vec<(u32, u32, u8)>,
    /// (group ref, name string ref, members).
    pub groups: Vec<(u32, u32, Vec<u32>)>,
    /// (comm ref, name string ref, group ref, parent).
    pub comms: Vec<(u32, u32, u32, u32)>,
}

/// Little-endian bytes being laid out.
#[derive(Default)]
pub struct LeBytes(pub Vec<u8>);

impl LeBytes {
    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    /// A u16.
    pub fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A u32 (and C enums).
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// An i32.
    pub fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A u64.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A `size_t` (u64).
    pub fn len(&mut self, v: usize) {
        self.u64(v as u64);
    }
}

/// Writes `bytes` to `path`.
pub fn write(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::io(path.display().to_string(), e))
}

/// Makes folder `path` and its parents.
pub fn mkdir(path: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|e| Error::io(path.display().to_string(), e))
}

/// The main file's head: ABI and the storage parameters, loop finding
/// (`algorithm`: 1 Basic, 2 BasicTruncated) with at most `max_loop` tokens
/// (timestamp storage, which readers ignore, "Delta" as Pallas's default).
pub fn parameters(o: &mut LeBytes, params: &Parameters, (algorithm, max_loop): (u32, u64)) {
    o.u8(params.abi);
    o.u32(params.compression.code());
    o.u32(match params.encoding {
        super::super::archive::Encoding::None => 0,
        super::super::archive::Encoding::Masking => 1,
    });
    o.u64(5);
    o.u32(algorithm);
    o.u64(max_loop);
    o.u32(1);
}

/// One string definition.
pub fn string(o: &mut LeBytes, r: u32, text: &str) {
    o.u32(r);
    o.i32(text.len() as i32 + 1);
    o.0.extend_from_slice(text.as_bytes());
    o.u8(0);
}

/// The tables of `d` but strings, each with its count, for ABI `abi`;
/// groups are of OTF2 group type `group_type` (4: locations, 5: ranks of
/// a communicator) and of MPI.
pub fn defs_after_strings(o: &mut LeBytes, abi: u8, d: &Defs, group_type: u32) {
    o.len(d.regions.len());
    for (r, s) in &d.regions {
        o.u32(*r);
        o.u32(*s);
    }
    o.len(d.attributes.len());
    for (r, name, kind) in &d.attributes {
        o.u32(*r);
        o.u32(*name);
        o.u32(u32::MAX);
        o.u8(*kind);
        o.0.extend_from_slice(&[0, 0, 0]);
    }
    o.len(d.groups.len());
    for (r, name, members) in &d.groups {
        o.u32(*r);
        o.u32(*name);
        if abi >= 17 {
            o.u32(group_type);
            o.u32(4);
        }
        o.u32(members.len() as u32);
        for m in members {
            if abi >= 17 {
                o.u32(*m);
            } else {
                o.u64(*m as u64);
            }
        }
    }
    o.len(d.comms.len());
    for (r, name, group, parent) in &d.comms {
        o.u32(*r);
        o.u32(*name);
        o.u32(*group);
        o.u32(*parent);
    }
}

/// A whole definitions block.
pub fn defs(o: &mut LeBytes, abi: u8, d: &Defs, group_type: u32) {
    o.len(d.strings.len());
    for (r, s) in &d.strings {
        string(o, *r, s);
    }
    defs_after_strings(o, abi, d, group_type);
}

/// A location list: (id, name string ref, parent).
pub fn locations(o: &mut LeBytes, locations: &[(u32, u32, u32)]) {
    o.len(locations.len());
    for (id, name, parent) in locations {
        o.u32(*id);
        o.u32(*name);
        o.u32(*parent);
    }
}

/// Key/value metadata (none before ABI 17, which could not read it).
pub fn metadata(o: &mut LeBytes, abi: u8, metadata: &[(String, String)]) {
    if abi < 17 {
        o.len(0);
        return;
    }
    o.len(metadata.len());
    for (k, v) in metadata {
        for s in [k, v] {
            o.len(s.len() + 1);
            o.0.extend_from_slice(s.as_bytes());
            o.u8(0);
        }
    }
}

/// The head of an event entry: record, size, payload and attribute
/// buffer; its timestamp vector follows.
pub fn event_head(o: &mut LeBytes, abi: u8, record: u32, payload: &[u8], attributes: &[u8]) {
    event_record(o, abi, record, payload);
    o.len(attributes.len());
    o.0.extend_from_slice(attributes);
}

/// An event entry's record, size and payload; the size of its attribute
/// buffer and the buffer follow.
pub fn event_record(o: &mut LeBytes, abi: u8, record: u32, payload: &[u8]) {
    // ABI ≤ 18 wrote buffer flushes as record 0.
    let record = if abi <= 18 && record == RecordId::BufferFlush.number() {
        0
    } else {
        record
    };
    o.u32(record);
    o.u8(5 + payload.len() as u8);
    o.0.extend_from_slice(payload);
}

/// A dead event slot.
pub fn dead_event(o: &mut LeBytes, abi: u8) {
    o.u32(RecordId::Dummy.number());
    o.u8(5);
    o.u64(0);
    o.u64(0);
    if abi >= 18 {
        o.u64(1);
    }
}

/// The head of one occurrence's attribute list: `size` bytes in all,
/// `count` values follow.
pub fn attribute_list_head(o: &mut LeBytes, index: i32, size: usize, count: usize) {
    o.i32(index);
    o.u16(size as u16);
    o.u8(count as u8);
}

/// One attribute value of a list.
pub fn attribute_value(o: &mut LeBytes, r: u32, bytes: &[u8]) {
    o.u16(6 + bytes.len() as u16);
    o.u32(r);
    o.0.extend_from_slice(bytes);
}

/// A sequence's type (0 a block, 1 any other) and tokens; its three
/// vectors follow.
pub fn sequence_tokens(o: &mut LeBytes, kind: u32, tokens: &[u32]) {
    o.u32(kind);
    o.len(tokens.len());
    for t in tokens {
        o.u32(*t);
    }
}

/// A loop entry.
pub fn loop_entry(o: &mut LeBytes, abi: u8, token: u32, iterations: u32, occurrences: u64) {
    o.u32(token);
    o.u32(iterations);
    if abi >= 19 {
        o.u64(occurrences);
    }
}

/// A logical → physical id map (ABI 20).
pub fn id_map(o: &mut LeBytes, map: &[u32]) {
    o.len(map.len());
    for m in map {
        o.u32(*m);
    }
}

/// A `.dat` file being appended to: blocks encoded with the trace's codec.
pub struct Dat<W: Write> {
    out: W,
    at: u64,
    encoder: BlockEncoder,
    name: String,
}

impl<W: Write> Dat<W> {
    /// A `.dat` file named `name` in messages, written to `out`.
    pub fn new(out: W, params: Parameters, name: String) -> Dat<W> {
        Dat {
            out,
            at: 0,
            encoder: BlockEncoder::new(params),
            name,
        }
    }

    /// Appends one block of `values`; returns its offset.
    fn block(&mut self, values: &[u64]) -> Result<u64> {
        let out = &mut self.out;
        let written = self.encoder.encode(values, |payload| {
            out.write_all(&(payload.len() as u64).to_le_bytes())?;
            out.write_all(payload)?;
            Ok::<_, std::io::Error>(payload.len() as u64)
        });
        let len = written
            .map_err(|e| Error::file(self.name.clone(), e))?
            .map_err(|e| Error::io(self.name.clone(), e))?;
        let at = self.at;
        self.at += 8 + len;
        Ok(at)
    }

    /// The writer, for its last flush.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

/// One block of a vector as its header describes it.
#[derive(Debug, Clone, Copy)]
struct Block {
    size: u64,
    first: u64,
    last: u64,
    min: u64,
    max: u64,
    sum: u128,
    offset: u64,
}

/// A timestamp or duration vector written as it grows: the values of its
/// last block, and the headers of the blocks written.
#[derive(Debug, Default)]
pub struct Vector {
    pending: Vec<u64>,
    blocks: Vec<Block>,
}

impl Vector {
    /// Adds a value; a full block goes to `dat`.
    pub fn push<W: Write>(&mut self, v: u64, dat: &mut Dat<W>) -> Result<()> {
        self.pending.push(v);
        if self.pending.len() == BLOCK_VALUES {
            self.flush(dat)?;
        }
        Ok(())
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.blocks.iter().map(|b| b.size).sum::<u64>() + self.pending.len() as u64
    }

    /// Whether it has no values.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty() && self.pending.is_empty()
    }

    /// Writes the values still held as a last block.
    pub fn flush<W: Write>(&mut self, dat: &mut Dat<W>) -> Result<()> {
        let Some(&first) = self.pending.first() else {
            return Ok(());
        };
        let offset = dat.block(&self.pending)?;
        let v = &self.pending;
        self.blocks.push(Block {
            size: v.len() as u64,
            first,
            last: v[v.len() - 1],
            min: v.iter().copied().min().unwrap_or(0),
            max: v.iter().copied().max().unwrap_or(0),
            sum: v.iter().map(|&x| x as u128).sum(),
            offset,
        });
        self.pending = Vec::new();
        Ok(())
    }

    /// Its header as a timestamp vector (flushed first).
    pub fn timestamps_header(&self, o: &mut LeBytes, abi: u8) {
        self.size_and_blocks(o, abi);
        for b in &self.blocks {
            o.u64(b.size);
            o.u64(b.first);
            o.u64(b.last);
            o.u64(b.offset);
        }
    }

    /// Its header as a duration vector (flushed first).
    pub fn durations_header(&self, o: &mut LeBytes, abi: u8) {
        if !self.size_and_blocks(o, abi) {
            return;
        }
        let size = self.len();
        let min = self.blocks.iter().map(|b| b.min).min().unwrap_or(0);
        let max = self.blocks.iter().map(|b| b.max).max().unwrap_or(0);
        let sum: u128 = self.blocks.iter().map(|b| b.sum).sum();
        o.u64(min);
        o.u64(max);
        o.u64((sum / size as u128) as u64);
        for b in &self.blocks {
            o.u64(b.size);
            o.u64(b.min);
            o.u64(b.max);
            o.u64((b.sum / b.size as u128) as u64);
            o.u64(b.offset);
        }
    }

    /// Size and block count; false when empty (no more follows).
    fn size_and_blocks(&self, o: &mut LeBytes, abi: u8) -> bool {
        debug_assert!(
            self.pending.is_empty(),
            "a vector's header before its flush"
        );
        let size = self.len();
        o.u64(size);
        if abi >= 18 {
            o.len(self.blocks.len().max(1));
        }
        size > 0
    }
}
