//! Writes Pallas trace folders from an explicit description, any ABI from
//! 16 to 21 and any codec. The trace generator (`examples/gen-pallas.rs`)
//! and the tests use it to make archives whose grammar is given, not
//! discovered (the stream writer, `mod.rs`, discovers it).

use std::path::Path;

use super::super::archive::{make_token, BlockCompression, Encoding, Parameters, TokenKind};
use super::layout::{self, mkdir, write, Dat, LeBytes, Vector};
use crate::error::Result;

pub use super::layout::{Defs, BLOCK_VALUES};

/// OTF2 group type of the groups the descriptions define: ranks of a
/// communicator, as Pallas's own writer defines them.
const GROUP_TYPE: u32 = 5;

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
    /// ABI (16 to 21).
    pub abi: u8,
    /// Block compression.
    pub compression: BlockCompression,
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

impl TraceSpec {
    /// A trace of the newest ABI with the given codec and nothing in it yet.
    pub fn new(compression: BlockCompression, encoding: Encoding) -> TraceSpec {
        TraceSpec {
            abi: super::super::archive::WRITE_ABI,
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
        let mut o = LeBytes::default();
        layout::parameters(&mut o, &params, (2, 100));
        layout::defs(&mut o, self.abi, &self.defs, GROUP_TYPE);
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
        layout::locations(&mut o, &main_locations);
        layout::metadata(&mut o, self.abi, &self.metadata);
        write(&dir.join(&self.main_name), &o.0)?;
        for a in &self.archives {
            let adir = dir.join(format!("archive_{}", a.id));
            mkdir(&adir)?;
            let mut o = LeBytes::default();
            o.u32(a.id);
            o.u32(a.threads.len() as u32);
            layout::defs(&mut o, self.abi, &a.defs, GROUP_TYPE);
            o.len(0);
            let own: Vec<(u32, u32, u32)> = if a.locations_in_main {
                Vec::new()
            } else {
                a.threads.iter().map(|t| (t.id, t.name, a.id)).collect()
            };
            layout::locations(&mut o, &own);
            layout::metadata(&mut o, self.abi, &a.metadata);
            write(&adir.join("archive.pallas"), &o.0)?;
            for t in &a.threads {
                let tdir = adir.join(format!("thread_{}", t.id));
                mkdir(&tdir)?;
                self.write_thread(&params, a.id, t, &tdir)?;
            }
        }
        Ok(())
    }

    fn write_thread(
        &self,
        params: &Parameters,
        archive: u32,
        t: &ThreadSpec,
        dir: &Path,
    ) -> Result<()> {
        let abi = self.abi;
        let mut dat = Dat::new(Vec::new(), *params, "event_durations.dat".into());
        let mut o = LeBytes::default();
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
            write_event(&mut o, &mut dat, abi, e.as_ref())?;
        }
        let identity = |n: usize| (0..n as u32).collect::<Vec<u32>>();
        let maps = t.maps.clone().unwrap_or_else(|| {
            [
                identity(t.events.len()),
                identity(t.sequences.len()),
                identity(t.loops.len()),
            ]
        });
        let write_map = |o: &mut LeBytes, map: &[u32]| {
            if abi >= 20 {
                layout::id_map(o, map);
            }
        };
        write_map(&mut o, &maps[0]);
        for s in &t.sequences {
            write_sequence(&mut o, abi, s.as_deref());
        }
        write_map(&mut o, &maps[1]);
        for l in &t.loops {
            let (tok, n) = l.unwrap_or((0xFFFF_FFFC, 0));
            layout::loop_entry(&mut o, abi, tok, n, u64::from(l.is_some()));
        }
        write_map(&mut o, &maps[2]);
        write(&dir.join("thread.pallas"), &o.0)?;
        write(&dir.join("event_durations.dat"), &dat.into_inner())?;
        write(&dir.join("sequence_durations.dat"), &[])
    }
}

/// An event of a thread file (`None`: a dead slot), its timestamps into
/// `dat`.
fn write_event(
    o: &mut LeBytes,
    dat: &mut Dat<Vec<u8>>,
    abi: u8,
    event: Option<&EventSpec>,
) -> Result<()> {
    let Some(e) = event else {
        layout::dead_event(o, abi);
        return Ok(());
    };
    let mut attrs = LeBytes::default();
    for (index, values) in &e.attributes {
        let size: usize = 7 + values.iter().map(|(_, v)| 6 + v.len()).sum::<usize>();
        layout::attribute_list_head(&mut attrs, *index, size, values.len());
        for (r, v) in values {
            layout::attribute_value(&mut attrs, *r, v);
        }
    }
    layout::event_head(o, abi, e.record, &e.payload, &attrs.0);
    let mut timestamps = Vector::default();
    for &t in &e.timestamps {
        timestamps.push(t, dat)?;
    }
    timestamps.flush(dat)?;
    timestamps.timestamps_header(o, abi);
    Ok(())
}

/// A sequence of a thread file (`None`: a dead slot).
fn write_sequence(o: &mut LeBytes, abi: u8, tokens: Option<&[u32]>) {
    let Some(tokens) = tokens else {
        o.u32(1);
        o.len(0);
        return;
    };
    layout::sequence_tokens(o, 1, tokens);
    // Sequence timing is not needed to read events: empty vectors.
    let empty = Vector::default();
    empty.durations_header(o, abi);
    empty.durations_header(o, abi);
    empty.timestamps_header(o, abi);
}
