//! The anchor file (`NAME.otf2`): the archive's version, chunk sizes,
//! substrate and compression, how many locations and global definitions it
//! has, and its properties.

use std::path::{Path, PathBuf};

use super::buffer::{self, Otf2Read};
use crate::bytes::Bytes;
use crate::error::{Error, Result};

/// The anchor file's magic, after its marker and endianness bytes.
pub const MAGIC: &[u8] = b"OTF2\0";

/// Major versions of the library whose encodings this reader knows: 1.0
/// to 3.x (`docs/otf2.md`, "Versions"). A later major is read as 3.x, with
/// a warning ([`Anchor::is_newer`]), since the library only appends to its
/// records.
pub const MAJOR_VERSIONS: std::ops::RangeInclusive<u8> = 1..=3;

/// What the anchor file says.
#[derive(Debug, Clone)]
pub struct Anchor {
    /// Version of the library that wrote the archive (major, minor, bugfix).
    pub version: (u8, u8, u8),
    /// Bytes of each chunk of an event file.
    pub chunk_size_events: u64,
    /// Bytes of each chunk of a definitions file.
    pub chunk_size_defs: u64,
    /// Locations the archive has.
    pub locations: u64,
    /// Global definition records.
    pub global_defs: u64,
    /// The machine it was recorded on, as the writer named it.
    pub machine: String,
    /// The tool that wrote it.
    pub creator: String,
    /// Its description.
    pub description: String,
    /// Its properties (`OTF2::...` keys), in order; none in an anchor of
    /// format 1 (OTF2 1.0), which has no properties.
    pub properties: Vec<(String, String)>,
}

/// File substrate: plain files (the only one read).
const SUBSTRATE_POSIX: u8 = 1;
/// Compression: none (the only one read).
const COMPRESSION_NONE: u8 = 1;

/// Chunk sizes accepted: the library writes 256 KiB to a few MiB; the
/// bounds keep a corrupt size from sizing an allocation.
const CHUNK_SIZES: std::ops::RangeInclusive<u64> = 1024..=(1 << 30);

impl Anchor {
    /// Reads anchor file `file` (its bytes `data`).
    pub fn parse(file: &str, data: &[u8]) -> Result<Anchor> {
        let mut b = Bytes::new(file, data);
        if b.u8("marker")? != buffer::CHUNK_HEADER {
            return Err(b.error_at(0, "not an OTF2 anchor file"));
        }
        let endianness = b.u8("endianness")?;
        if b.take(MAGIC.len(), "magic")? != MAGIC {
            return Err(b.error_at(2, "not an OTF2 anchor file (no `OTF2` magic)"));
        }
        if endianness != buffer::LITTLE_ENDIAN {
            return Err(b.error_at(1, "a big-endian archive (not supported)"));
        }
        // The anchor's own format (1: OTF2 1.0; 2: properties and a trace
        // id appended, 1.1; 3: snapshot and thumbnail counts, 1.2 on) and
        // the trace format (2 in every archive seen).
        let at = b.offset();
        let anchor_format = b.u8("anchor format")?;
        if anchor_format == 0 {
            return Err(b.error_at(at, "anchor format 0 (no OTF2 release writes it)"));
        }
        b.u8("trace format")?;
        let at = b.offset();
        let version = (b.u8("version")?, b.u8("version")?, b.u8("version")?);
        if version.0 == 0 {
            let (a, m, f) = version;
            return Err(b.error_at(
                at,
                format!("OTF2 version {a}.{m}.{f} (no OTF2 release has major version 0)"),
            ));
        }
        let anchor = Anchor {
            version,
            chunk_size_events: chunk_size(&mut b, "event chunk size")?,
            chunk_size_defs: chunk_size(&mut b, "definition chunk size")?,
            locations: storage(&mut b)?,
            global_defs: b.u64("number of global definitions")?,
            machine: b.string("machine name")?,
            creator: b.string("creator")?,
            description: b.string("description")?,
            properties: Vec::new(),
        };
        match anchor_format {
            1 => Ok(anchor),
            _ => properties(&mut b, anchor),
        }
    }

    /// Whether the archive comes from a version of the library newer than
    /// any this reader knows (read as 3.x: its records only grew).
    pub fn is_newer(&self) -> bool {
        self.version.0 > *MAJOR_VERSIONS.end()
    }

    /// The version as text.
    pub fn version_text(&self) -> String {
        let (a, b, c) = self.version;
        format!("{a}.{b}.{c}")
    }
}

fn chunk_size(b: &mut Bytes, what: &str) -> Result<u64> {
    let at = b.offset();
    let size = b.u64(what)?;
    if !CHUNK_SIZES.contains(&size) {
        return Err(b.error_at(at, format!("{what} {size} bytes (outside 1 KiB to 1 GiB)")));
    }
    Ok(size)
}

/// Checks substrate and compression, and reads the number of locations.
fn storage(b: &mut Bytes) -> Result<u64> {
    let at = b.offset();
    match b.u8("file substrate")? {
        SUBSTRATE_POSIX => {}
        2 => {
            return Err(b.error_at(
                at,
                "a SIONlib archive (not supported: only plain files are)",
            ))
        }
        s => {
            return Err(b.error_at(
                at,
                format!("file substrate {s} (only plain files are read)"),
            ))
        }
    }
    let at = b.offset();
    match b.u8("compression")? {
        COMPRESSION_NONE => {}
        c => {
            return Err(b.error_at(
                at,
                format!("compression {c} (only uncompressed archives are read)"),
            ))
        }
    }
    b.u64("number of locations")
}

fn properties(b: &mut Bytes, mut anchor: Anchor) -> Result<Anchor> {
    let at = b.offset();
    let n = b.u32("number of properties")?;
    let n = b.check_count(at, n as u64, "number of properties", 2)?;
    for _ in 0..n {
        let key = b.string("property name")?;
        let value = b.string("property value")?;
        anchor.properties.push((key, value));
    }
    Ok(anchor)
}

/// The anchor file of the archive at `path`: the file itself, or the one
/// `*.otf2` file of a folder (a folder with several names the one wanted).
pub fn find(path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| Error::io(path.display().to_string(), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "otf2"))
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(Error::file(
            path.display().to_string(),
            "no OTF2 anchor file (`*.otf2`) in this folder",
        )),
        _ => Err(Error::file(
            path.display().to_string(),
            format!(
                "{} OTF2 anchor files in this folder: name the one to read ({})",
                found.len(),
                found
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Whether `head`, the first bytes of a file, is an OTF2 anchor file.
pub fn is_anchor(head: &[u8]) -> bool {
    head.len() >= 2 + MAGIC.len()
        && head[0] == buffer::CHUNK_HEADER
        && matches!(head[1], buffer::LITTLE_ENDIAN | buffer::BIG_ENDIAN)
        && &head[2..2 + MAGIC.len()] == MAGIC
}
