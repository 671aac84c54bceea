//! Writes Pallas trace folders from an explicit description: the byte layouts
//! of `archive.rs` in reverse. The trace generator (`examples/gen-pallas.rs`)
//! and the tests use it to make archives of every ABI and codec; it is not a
//! stream → Pallas converter (the grammar is given, not discovered).

use std::path::Path;

use super::archive::{make_token, Compression, Encoding, Parameters, TokenKind};
use super::codec::encode_block;
use super::RecordId;
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

/// One occurrence's attribute list: (occurrence index, [(attribute ref, value bytes)]).
pub type AttributeList = (i32, Vec<(u32, Vec<u8>)>);

/// One distinct event of a thread.
#[derive(Debug, Clone, Default)]
pub struct EventSpec {
    /// Record number.
    pub record: u32,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// Attribute lists of the occurrences that have one.
    pub attributes: Vec<AttributeList>,
    /// One timestamp per occurrence.
    pub timestamps: Vec<u64>,
}

impl EventSpec {
    /// An event of `record` whose payload packs `(value, width in bytes)`
    /// fields little-endian, as Pallas lays them out.
    pub fn new(record: u32, fields: &[(u64, usize)]) -> EventSpec {
        let mut payload = Vec::new();
        for &(v, w) in fields {
            payload.extend_from_slice(&v.to_le_bytes()[..w]);
        }
        EventSpec {
            record,
            payload,
            ..EventSpec::default()
        }
    }
}

/// One thread: its grammar and events. Slots given as `None` are written dead.
#[derive(Debug, Clone, Default)]
pub struct ThreadSpec {
    /// Location id.
    pub id: u32,
    /// String ref of the thread's name (listed in its archive).
    pub name: u32,
    /// Event slots.
    pub events: Vec<Option<EventSpec>>,
    /// Sequence slots (token lists).
    pub sequences: Vec<Option<Vec<u32>>>,
    /// Loop slots: (repeated sequence token, iterations).
    pub loops: Vec<Option<(u32, u32)>>,
    /// ABI 20 logical → physical maps (events, sequences, loops); `None`:
    /// identities over the slots.
    pub maps: Option<[Vec<u32>; 3]>,
    /// Logical id of the root sequence.
    pub root: u32,
}

/// One process archive.
#[derive(Debug, Clone, Default)]
pub struct ArchiveSpec {
    /// Location group id.
    pub id: u32,
    /// String ref of its name (in the main file's definitions).
    pub name: u32,
    /// Archive-local definitions.
    pub defs: Defs,
    /// Archive metadata.
    pub metadata: Vec<(String, String)>,
    /// Its threads.
    pub threads: Vec<ThreadSpec>,
    /// List the threads in the main file (the OTF2/EZTrace path) instead of
    /// in the archive.
    pub locations_in_main: bool,
}

/// A whole trace.
#[derive(Debug, Clone)]
pub struct TraceSpec {
    /// ABI (16 to 20).
    pub abi: u8,
    /// Block compression.
    pub compression: Compression,
    /// Block encoding.
    pub encoding: Encoding,
    /// Name of the main file.
    pub main_name: String,
    /// Global definitions.
    pub defs: Defs,
    /// Main metadata.
    pub metadata: Vec<(String, String)>,
    /// The processes.
    pub archives: Vec<ArchiveSpec>,
}

/// A token for an event, sequence or loop id.
pub fn event_token(id: u32) -> u32 {
    make_token(TokenKind::Event, id)
}

/// A sequence token.
pub fn sequence_token(id: u32) -> u32 {
    make_token(TokenKind::Sequence, id)
}

/// A loop token.
pub fn loop_token(id: u32) -> u32 {
    make_token(TokenKind::Loop, id)
}

#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, v: usize) {
        self.u64(v as u64);
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::io(path.display().to_string(), e))
}

fn mkdir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|e| Error::io(path.display().to_string(), e))
}

impl TraceSpec {
    /// A trace of the newest ABI with the given codec and nothing in it yet.
    pub fn new(compression: Compression, encoding: Encoding) -> TraceSpec {
        TraceSpec {
            abi: super::archive::MAX_ABI,
            compression,
            encoding,
            main_name: "main.pallas".into(),
            defs: Defs::default(),
            metadata: Vec::new(),
            archives: Vec::new(),
        }
    }

    /// Writes the trace into folder `dir` (created if missing).
    pub fn write(&self, dir: &Path) -> Result<()> {
        mkdir(dir)?;
        let params = Parameters {
            abi: self.abi,
            compression: self.compression,
            encoding: self.encoding,
        };
        let mut o = Out::default();
        o.u8(self.abi);
        o.u32(self.compression.code());
        o.u32(match self.encoding {
            Encoding::None => 0,
            Encoding::Masking => 1,
        });
        o.u64(5);
        o.u32(2);
        o.u64(100);
        o.u32(1);
        self.write_defs(&mut o, &self.defs);
        o.len(self.archives.len());
        for a in &self.archives {
            o.u32(a.id);
            o.u32(a.name);
            o.u32(a.id);
        }
        let main_locations: Vec<(u32, u32, u32)> = self
            .archives
            .iter()
            .filter(|a| a.locations_in_main)
            .flat_map(|a| a.threads.iter().map(move |t| (t.id, t.name, a.id)))
            .collect();
        write_locations(&mut o, &main_locations);
        self.write_metadata(&mut o, &self.metadata);
        write(&dir.join(&self.main_name), &o.0)?;
        for a in &self.archives {
            let adir = dir.join(format!("archive_{}", a.id));
            mkdir(&adir)?;
            let mut o = Out::default();
            o.u32(a.id);
            o.u32(a.threads.len() as u32);
            self.write_defs(&mut o, &a.defs);
            o.len(0);
            let own: Vec<(u32, u32, u32)> = if a.locations_in_main {
                Vec::new()
            } else {
                a.threads.iter().map(|t| (t.id, t.name, a.id)).collect()
            };
            write_locations(&mut o, &own);
            self.write_metadata(&mut o, &a.metadata);
            write(&adir.join("archive.pallas"), &o.0)?;
            for t in &a.threads {
                let tdir = adir.join(format!("thread_{}", t.id));
                mkdir(&tdir)?;
                self.write_thread(&params, a.id, t, &tdir)?;
            }
        }
        Ok(())
    }

    fn write_defs(&self, o: &mut Out, d: &Defs) {
        o.len(d.strings.len());
        for (r, s) in &d.strings {
            o.u32(*r);
            o.i32(s.len() as i32 + 1);
            o.0.extend_from_slice(s.as_bytes());
            o.u8(0);
        }
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
            if self.abi >= 17 {
                o.u32(5);
                o.u32(4);
            }
            o.u32(members.len() as u32);
            for m in members {
                if self.abi >= 17 {
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

    fn write_metadata(&self, o: &mut Out, metadata: &[(String, String)]) {
        if self.abi < 17 {
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

    fn write_thread(
        &self,
        params: &Parameters,
        archive: u32,
        t: &ThreadSpec,
        dir: &Path,
    ) -> Result<()> {
        let abi = self.abi;
        let mut dat = Vec::new();
        let mut o = Out::default();
        o.u32(t.id);
        o.u32(archive);
        o.len(t.events.len());
        o.len(t.sequences.len());
        o.len(t.loops.len());
        if abi >= 20 {
            o.u32(t.root);
        }
        let first = t
            .events
            .iter()
            .flatten()
            .filter_map(|e| e.timestamps.first())
            .min()
            .copied()
            .unwrap_or(0);
        o.u64(first);
        for e in &t.events {
            write_event(&mut o, &mut dat, params, abi, e.as_ref())?;
        }
        let identity = |n: usize| (0..n as u32).collect::<Vec<u32>>();
        let maps = t.maps.clone().unwrap_or_else(|| {
            [
                identity(t.events.len()),
                identity(t.sequences.len()),
                identity(t.loops.len()),
            ]
        });
        let write_map = |o: &mut Out, map: &[u32]| {
            if abi >= 20 {
                o.len(map.len());
                for m in map {
                    o.u32(*m);
                }
            }
        };
        write_map(&mut o, &maps[0]);
        for s in &t.sequences {
            write_sequence(&mut o, abi, s.as_deref());
        }
        write_map(&mut o, &maps[1]);
        for l in &t.loops {
            let (tok, n) = l.unwrap_or((0xFFFF_FFFC, 0));
            o.u32(tok);
            o.u32(n);
            if abi >= 19 {
                o.u64(u64::from(l.is_some()));
            }
        }
        write_map(&mut o, &maps[2]);
        write(&dir.join("thread.pallas"), &o.0)?;
        write(&dir.join("event_durations.dat"), &dat)?;
        write(&dir.join("sequence_durations.dat"), &[])
    }
}

/// An event of a thread file (`None`: a dead slot), its timestamps into
/// `dat`.
fn write_event(
    o: &mut Out,
    dat: &mut Vec<u8>,
    params: &Parameters,
    abi: u8,
    event: Option<&EventSpec>,
) -> Result<()> {
    let Some(e) = event else {
        o.u32(RecordId::Dummy.number());
        o.u8(5);
        o.u64(0);
        o.u64(0);
        if abi >= 18 {
            o.u64(1);
        }
        return Ok(());
    };
    // ABI ≤ 18 wrote buffer flushes as record 0.
    let record = if abi <= 18 && e.record == RecordId::BufferFlush.number() {
        0
    } else {
        e.record
    };
    o.u32(record);
    o.u8(5 + e.payload.len() as u8);
    o.0.extend_from_slice(&e.payload);
    let mut attrs = Out::default();
    for (index, values) in &e.attributes {
        let size: usize = 7 + values.iter().map(|(_, v)| 6 + v.len()).sum::<usize>();
        attrs.i32(*index);
        attrs.u16(size as u16);
        attrs.u8(values.len() as u8);
        for (r, v) in values {
            attrs.u16(6 + v.len() as u16);
            attrs.u32(*r);
            attrs.0.extend_from_slice(v);
        }
    }
    o.len(attrs.0.len());
    o.0.extend_from_slice(&attrs.0);
    write_timestamps(o, dat, params, &e.timestamps)
}

/// A sequence of a thread file (`None`: a dead slot).
fn write_sequence(o: &mut Out, abi: u8, tokens: Option<&[u32]>) {
    o.u32(1);
    let Some(tokens) = tokens else {
        o.len(0);
        return;
    };
    o.len(tokens.len());
    for tok in tokens {
        o.u32(*tok);
    }
    // Sequence timing is not needed to read events: empty vectors.
    for _ in 0..3 {
        o.u64(0);
        if abi >= 18 {
            o.u64(1);
        }
    }
}

fn write_locations(o: &mut Out, locations: &[(u32, u32, u32)]) {
    o.len(locations.len());
    for (id, name, parent) in locations {
        o.u32(*id);
        o.u32(*name);
        o.u32(*parent);
    }
}

fn write_timestamps(
    o: &mut Out,
    dat: &mut Vec<u8>,
    params: &Parameters,
    values: &[u64],
) -> Result<()> {
    o.len(values.len());
    let blocks: Vec<&[u64]> = values.chunks(BLOCK_VALUES).collect();
    if params.abi >= 18 {
        o.len(blocks.len().max(1));
    }
    for block in blocks {
        let payload = encode_block(params, block).map_err(Error::Usage)?;
        o.len(block.len());
        o.u64(block[0]);
        o.u64(block[block.len() - 1]);
        o.len(dat.len());
        dat.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        dat.extend_from_slice(&payload);
    }
    Ok(())
}
