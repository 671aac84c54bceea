//! An OTF2 archive written from definitions and events given one by one:
//! the anchor file, the global definitions, and per location its event file
//! (chunked) and local definitions. Used by the tests and the fuzz target
//! to make archives without the OTF2 library.

use std::path::{Path, PathBuf};

use super::anchor::MAGIC;
use super::buffer::{self, LITTLE_ENDIAN};
use super::encode::{Buf, EventChunks};

/// Version this writer claims (the layout of OTF2 3.0).
pub const VERSION: (u8, u8, u8) = (3, 0, 0);

/// A location's files.
#[derive(Debug)]
pub struct LocationFiles {
    /// Its id (the name of its files).
    pub id: u64,
    /// Its events.
    pub events: EventChunks,
    /// Its local definitions, if any.
    pub local: Option<Buf>,
}

impl LocationFiles {
    /// Its local definitions, made on first use.
    pub fn local_defs(&mut self) -> &mut Buf {
        self.local.get_or_insert_with(|| {
            let mut b = Buf::default();
            b.header(1, 0);
            b
        })
    }
}

/// An archive being made.
#[derive(Debug)]
pub struct Archive {
    /// Bytes of each event chunk.
    pub chunk_size: u64,
    /// The global definition records.
    pub defs: Buf,
    defs_count: u64,
    /// The locations' files, in the order added.
    pub locations: Vec<LocationFiles>,
}

impl Archive {
    /// An empty archive whose event files have chunks of `chunk_size` bytes.
    pub fn new(chunk_size: u64) -> Archive {
        let mut defs = Buf::default();
        defs.header(1, 0);
        Archive {
            chunk_size,
            defs,
            defs_count: 0,
            locations: Vec::new(),
        }
    }

    /// Adds a global definition record.
    pub fn def(&mut self, record: u8, fill: impl FnOnce(&mut Buf)) -> &mut Archive {
        self.push(|b| {
            b.record(record, fill);
        })
    }

    /// Adds the global definition record `write` writes (one of [`def`]'s).
    pub fn push(&mut self, write: impl FnOnce(&mut Buf)) -> &mut Archive {
        write(&mut self.defs);
        self.defs_count += 1;
        self
    }

    /// The clock: ticks per second, the tick of time 0, the trace's length.
    pub fn clock(&mut self, resolution: u64, offset: u64, length: u64) -> &mut Archive {
        self.push(|b| def::clock(b, resolution, offset, length, u64::MAX))
    }

    /// String `r`.
    pub fn string(&mut self, r: u32, s: &str) -> &mut Archive {
        self.push(|b| def::string(b, r, s))
    }

    /// System tree node `r` (`parent` [`u32::MAX`] for a root).
    pub fn node(&mut self, r: u32, name: u32, class: u32, parent: u32) -> &mut Archive {
        self.push(|b| def::node(b, r, name, class, parent))
    }

    /// Location group `r` of type `kind` (1 process) on node `parent`.
    pub fn group_of_locations(&mut self, r: u32, name: u32, kind: u8, parent: u32) -> &mut Archive {
        self.push(|b| def::group_of_locations(b, r, name, kind, parent))
    }

    /// Location `r` of type `kind` (1 thread) in location group `group`,
    /// with its (still empty) event file.
    pub fn location(&mut self, r: u64, name: u32, kind: u8, group: u32) -> &mut Archive {
        self.push(|b| def::location(b, r, name, kind, group));
        self.locations.push(LocationFiles {
            id: r,
            events: EventChunks::new(self.chunk_size as usize),
            local: None,
        });
        self
    }

    /// Region `r` with its role and paradigm.
    pub fn region(&mut self, r: u32, name: u32, role: u8, paradigm: u8) -> &mut Archive {
        self.push(|b| def::region(b, r, [name, name], role, paradigm))
    }

    /// Group `r` of type `kind` (4 locations, 5 ranks) and its members.
    pub fn group(
        &mut self,
        r: u32,
        name: u32,
        kind: u8,
        paradigm: u8,
        members: &[u64],
    ) -> &mut Archive {
        self.push(|b| def::group(b, r, name, kind, paradigm, members))
    }

    /// Communicator `r` over group `group`.
    pub fn comm(&mut self, r: u32, name: u32, group: u32) -> &mut Archive {
        self.push(|b| def::comm(b, r, name, group))
    }

    /// Attribute `r` of OTF2 type `kind`.
    pub fn attribute(&mut self, r: u32, name: u32, kind: u8) -> &mut Archive {
        self.push(|b| def::attribute(b, r, name, kind))
    }

    /// Metric member `r` (`mode`: OTF2's metric mode; `value_type`: 4
    /// u64, 8 i64, 10 double).
    pub fn metric_member(
        &mut self,
        r: u32,
        name: u32,
        mode: u8,
        value_type: u8,
        unit: u32,
    ) -> &mut Archive {
        self.push(|b| def::metric_member(b, r, name, mode, value_type, unit))
    }

    /// Metric class `r` of `members`.
    pub fn metric_class(&mut self, r: u32, members: &[u32]) -> &mut Archive {
        self.push(|b| def::metric_class(b, r, members))
    }

    /// The files of location `id`.
    pub fn files(&mut self, id: u64) -> &mut LocationFiles {
        self.locations
            .iter_mut()
            .find(|l| l.id == id)
            .expect("a defined location")
    }

    /// The anchor file.
    pub fn anchor(&self) -> Buf {
        anchor_file(
            self.chunk_size,
            self.locations.len() as u64,
            self.defs_count,
            &[],
        )
    }

    /// The archive's files by path (relative to its folder) with the marks
    /// of their fields: `NAME.otf2`, `NAME.def`, `NAME/LOC.evt`,
    /// `NAME/LOC.def`.
    pub fn into_files(self, name: &str) -> Vec<(PathBuf, Buf)> {
        let mut files = vec![(PathBuf::from(format!("{name}.otf2")), self.anchor())];
        let mut defs = self.defs;
        defs.u8(buffer::END_OF_FILE).u8(buffer::END_OF_BUFFER);
        files.push((PathBuf::from(format!("{name}.def")), defs));
        for l in self.locations {
            let dir = Path::new(name);
            files.push((dir.join(format!("{}.evt", l.id)), l.events.finish()));
            // Every location has its local definitions file, empty or not,
            // as the library writes them (its readers expect one).
            let mut local = l.local.unwrap_or_else(|| {
                let mut b = Buf::default();
                b.header(1, 0);
                b
            });
            local.u8(buffer::END_OF_FILE).u8(buffer::END_OF_BUFFER);
            files.push((dir.join(format!("{}.def", l.id)), local));
        }
        files
    }

    /// Writes the archive as `dir/NAME.otf2` and its files; returns the
    /// anchor file's path.
    pub fn write(self, dir: &Path, name: &str) -> std::io::Result<PathBuf> {
        for (path, buf) in self.into_files(name) {
            let path = dir.join(path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, buf.bytes)?;
        }
        Ok(dir.join(format!("{name}.otf2")))
    }
}

/// The anchor file of an archive of `locations` locations and `defs` global
/// definitions whose chunks are `chunk_size` bytes.
pub fn anchor_file(chunk_size: u64, locations: u64, defs: u64, properties: &[(&str, &str)]) -> Buf {
    let mut b = Buf::default();
    b.u8(buffer::CHUNK_HEADER).u8(LITTLE_ENDIAN);
    b.bytes.extend_from_slice(MAGIC);
    let (major, minor, bugfix) = VERSION;
    b.u8(3).u8(2).u8(major).u8(minor).u8(bugfix);
    b.marks.extend([b.bytes.len(), b.bytes.len() + 8]);
    b.u64(chunk_size).u64(chunk_size);
    // POSIX files, no compression.
    b.u8(1).u8(1);
    b.u64(locations).u64(defs);
    b.string("").string("tracepipe").string("");
    b.u32(properties.len() as u32);
    for (key, value) in properties {
        b.string(key).string(value);
    }
    b.u64(0).u32(0).u32(0);
    b.u8(buffer::END_OF_FILE).u8(buffer::END_OF_BUFFER);
    b
}

/// The definition records, each written whole into a buffer (the archive
/// builder's and the stream writer's).
pub mod def {
    use super::super::defs::id;
    use super::Buf;

    /// The clock: ticks per second, the tick of time 0, the trace's length,
    /// the real time of tick 0 in ns since the epoch ([`u64::MAX`]: unknown).
    pub fn clock(b: &mut Buf, resolution: u64, offset: u64, length: u64, realtime: u64) {
        b.record(id::CLOCK_PROPERTIES, |b| {
            b.u64c(resolution).u64c(offset).u64c(length).u64c(realtime);
        });
    }

    /// Parameter `r` of OTF2 parameter type `kind` (0 string, 1 i64, 2 u64).
    pub fn parameter(b: &mut Buf, r: u32, name: u32, kind: u8) {
        b.record(id::PARAMETER, |b| {
            b.u32c(r).u32c(name).u8(kind);
        });
    }

    /// String `r`.
    pub fn string(b: &mut Buf, r: u32, s: &str) {
        b.record(id::STRING, |b| {
            b.u32c(r).string(s);
        });
    }

    /// System tree node `r` (`parent` [`u32::MAX`] for a root).
    pub fn node(b: &mut Buf, r: u32, name: u32, class: u32, parent: u32) {
        b.record(id::SYSTEM_TREE_NODE, |b| {
            b.u32c(r).u32c(name).u32c(class).u32c(parent);
        });
    }

    /// Location group `r` of type `kind` (1 process) on node `parent`.
    pub fn group_of_locations(b: &mut Buf, r: u32, name: u32, kind: u8, parent: u32) {
        b.record(id::LOCATION_GROUP, |b| {
            b.u32c(r).u32c(name).u8(kind).u32c(parent).u32c(u32::MAX);
        });
    }

    /// Location `r` of type `kind` (1 thread) in location group `group`,
    /// with its (still empty) event file.
    pub fn location(b: &mut Buf, r: u64, name: u32, kind: u8, group: u32) {
        location_of(b, r, name, kind, group, 0);
    }

    /// [`location`] with the number of events its file holds.
    pub fn location_of(b: &mut Buf, r: u64, name: u32, kind: u8, group: u32, events: u64) {
        b.record(id::LOCATION, |b| {
            b.u64c(r).u32c(name).u8(kind).u64c(events).u32c(group);
        });
    }

    /// Region `r` (its name and description) with its role and paradigm.
    pub fn region(b: &mut Buf, r: u32, [name, description]: [u32; 2], role: u8, paradigm: u8) {
        b.record(id::REGION, |b| {
            b.u32c(r)
                .u32c(name)
                .u32c(description)
                .u8(0)
                .u32c(u32::MAX)
                .u32c(0)
                .u32c(0);
            b.u32c(name).u8(role).u8(paradigm).u32c(0);
        });
    }

    /// Group `r` of type `kind` (4 locations, 5 ranks) and its members.
    pub fn group(b: &mut Buf, r: u32, name: u32, kind: u8, paradigm: u8, members: &[u64]) {
        b.record(id::GROUP, |b| {
            b.u32c(r).u32c(name).u8(0).u32c(members.len() as u32);
            for &m in members {
                b.u64c(m);
            }
            b.u8(kind).u8(paradigm).u32c(0);
        });
    }

    /// RMA window `r` of communicator `comm`.
    pub fn rma_win(b: &mut Buf, r: u32, name: u32, comm: u32) {
        b.record(id::RMA_WIN, |b| {
            b.u32c(r).u32c(name).u32c(comm).u32c(0);
        });
    }

    /// Communicator `r` over group `group`.
    pub fn comm(b: &mut Buf, r: u32, name: u32, group: u32) {
        b.record(id::COMM, |b| {
            b.u32c(r).u32c(name).u32c(group).u32c(u32::MAX).u32c(0);
        });
    }

    /// Attribute `r` of OTF2 type `kind`.
    pub fn attribute(b: &mut Buf, r: u32, name: u32, kind: u8) {
        b.record(id::ATTRIBUTE, |b| {
            b.u32c(r).u32c(name).u8(kind).u32c(name);
        });
    }

    /// Metric member `r` (`mode`: OTF2's metric mode; `value_type`: 4
    /// u64, 8 i64, 10 double).
    pub fn metric_member(b: &mut Buf, r: u32, name: u32, mode: u8, value_type: u8, unit: u32) {
        b.record(id::METRIC_MEMBER, |b| {
            b.u32c(r)
                .u32c(name)
                .u32c(name)
                .u8(0)
                .u8(mode)
                .u8(value_type)
                .u8(1);
            b.i64c(0).u32c(unit);
        });
    }

    /// Metric class `r` of `members`.
    pub fn metric_class(b: &mut Buf, r: u32, members: &[u32]) {
        b.record(id::METRIC_CLASS, |b| {
            b.u32c(r).u8(members.len() as u8);
            for &m in members {
                b.u32c(m);
            }
            b.u8(2).u8(0);
        });
    }
}
