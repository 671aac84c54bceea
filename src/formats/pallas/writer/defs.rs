//! The definitions a stream's trace gets, made as rows need them: strings
//! (written to a spill file as they are made, so rows kept whole do not
//! stay in memory), regions, attributes, communicators and their ranks.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::layout::{self, Defs, LeBytes};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::record::Sym;
use crate::model::symbol::Symbols;

/// Attribute type of string references.
pub const TYPE_STRING: u8 = 11;
/// Attribute type of signed 64-bit integers.
pub const TYPE_I64: u8 = 8;

/// Strings longer than this are not looked up again (rows kept whole are
/// each a string of their own).
const SHARED_STRING: usize = 256;

/// A communicator: its reference, and its ranks' threads in the order they
/// took part.
pub struct Comm {
    /// Its reference.
    pub r: u32,
    /// The threads of its ranks.
    pub ranks: Vec<u32>,
    rank_of: FastMap<u32, u32>,
}

impl Comm {
    /// The rank of thread `t`, given on first use.
    pub fn rank(&mut self, t: u32) -> u32 {
        let next = self.ranks.len() as u32;
        *self.rank_of.entry(t).or_insert_with(|| {
            self.ranks.push(t);
            next
        })
    }
}

/// The trace's global definitions.
pub struct Registry {
    strings: FastMap<Box<str>, u32>,
    string_count: u32,
    spill: BufWriter<File>,
    spill_path: PathBuf,
    /// Regions by (name, cat), their string refs, and their cats.
    regions: FastMap<(Sym, Sym), u32>,
    region_defs: Vec<(u32, u32)>,
    /// (region ref, cat) of regions with a cat.
    pub region_cats: Vec<(u32, Sym)>,
    /// Attributes by name: of integers, and of strings.
    attributes: [FastMap<Box<str>, u32>; 2],
    attribute_defs: Vec<(u32, u32, u8)>,
    /// Communicators by name.
    pub comms: FastMap<Sym, Comm>,
    comm_order: Vec<(Sym, u32)>,
}

impl Registry {
    /// An empty registry whose strings spill to `spill_path`.
    pub fn create(spill_path: PathBuf) -> Result<Registry> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&spill_path)
            .map_err(|e| Error::io(spill_path.display().to_string(), e))?;
        Ok(Registry {
            strings: FastMap::default(),
            string_count: 0,
            spill: BufWriter::with_capacity(1 << 16, file),
            spill_path,
            regions: FastMap::default(),
            region_defs: Vec::new(),
            region_cats: Vec::new(),
            attributes: Default::default(),
            attribute_defs: Vec::new(),
            comms: FastMap::default(),
            comm_order: Vec::new(),
        })
    }

    /// The reference of string `text`, defined on first use (long strings
    /// are defined each time).
    pub fn string(&mut self, text: &str) -> Result<u32> {
        if text.len() <= SHARED_STRING {
            if let Some(&r) = self.strings.get(text) {
                return Ok(r);
            }
        }
        crate::bytes::refuse_nul(text, "Pallas")?;
        let r = self.string_count;
        self.string_count += 1;
        let mut o = LeBytes::default();
        layout::string(&mut o, r, text);
        self.spill
            .write_all(&o.0)
            .map_err(|e| Error::io(self.spill_path.display().to_string(), e))?;
        if text.len() <= SHARED_STRING {
            self.strings.insert(text.into(), r);
        }
        Ok(r)
    }

    /// The region of `name` and `cat` (texts in `symbols`).
    pub fn region(&mut self, (name, cat): (Sym, Sym), symbols: &Symbols) -> Result<u32> {
        if let Some(&r) = self.regions.get(&(name, cat)) {
            return Ok(r);
        }
        let s = self.string(symbols.text(name))?;
        let r = self.region_defs.len() as u32;
        self.region_defs.push((r, s));
        if cat != Sym::EMPTY {
            self.region_cats.push((r, cat));
        }
        self.regions.insert((name, cat), r);
        Ok(r)
    }

    /// The attribute named `key` of type `kind` (a string reference or
    /// a 64-bit integer).
    pub fn attribute(&mut self, key: &str, kind: u8) -> Result<u32> {
        let of_kind = usize::from(kind == TYPE_STRING);
        if let Some(&r) = self.attributes[of_kind].get(key) {
            return Ok(r);
        }
        let name = self.string(key)?;
        let r = self.attribute_defs.len() as u32;
        self.attribute_defs.push((r, name, kind));
        self.attributes[of_kind].insert(key.into(), r);
        Ok(r)
    }

    /// The communicator named `comm` (its text in `symbols`).
    pub fn comm(&mut self, comm: Sym, symbols: &Symbols) -> Result<&mut Comm> {
        if !self.comms.contains_key(&comm) {
            let name = self.string(symbols.text(comm))?;
            let r = self.comm_order.len() as u32;
            self.comm_order.push((comm, name));
            self.comms.insert(
                comm,
                Comm {
                    r,
                    ranks: Vec::new(),
                    rank_of: FastMap::default(),
                },
            );
        }
        Ok(self.comms.get_mut(&comm).expect("just made"))
    }

    /// Writes the definitions block to `w` (named `name` in messages),
    /// the strings copied from the spill file, which is removed; `ids` are
    /// the threads' ids.
    pub fn finish(mut self, w: &mut dyn Write, name: &str, (abi, ids): (u8, &[u32])) -> Result<()> {
        let spill = self.spill_path.display().to_string();
        self.spill
            .flush()
            .map_err(|e| Error::io(spill.clone(), e))?;
        // A group per communicator: its ranks' threads (OTF2 group type 4).
        let mut defs = Defs {
            regions: std::mem::take(&mut self.region_defs),
            attributes: std::mem::take(&mut self.attribute_defs),
            ..Defs::default()
        };
        for (g, (comm, name)) in self.comm_order.iter().enumerate() {
            let ranks = self.comms[comm]
                .ranks
                .iter()
                .map(|&t| ids[t as usize])
                .collect();
            defs.groups.push((g as u32, *name, ranks));
            defs.comms.push((g as u32, *name, g as u32, u32::MAX));
        }
        let out = |e| Error::io(name.to_string(), e);
        w.write_all(&(self.string_count as u64).to_le_bytes())
            .map_err(out)?;
        let mut file = self
            .spill
            .into_inner()
            .map_err(|e| Error::io(spill.clone(), e.into_error()))?;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(spill.clone(), e))?;
        std::io::copy(&mut file, w).map_err(out)?;
        drop(file);
        std::fs::remove_file(&self.spill_path).map_err(|e| Error::io(spill, e))?;
        let mut o = LeBytes::default();
        layout::defs_after_strings(&mut o, abi, &defs, 4);
        w.write_all(&o.0).map_err(out)
    }
}

/// The path of the strings' spill file in folder `dir`.
pub fn spill_path(dir: &Path) -> PathBuf {
    dir.join(".tracepipe-strings.tmp")
}
