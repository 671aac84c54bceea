//! The global definitions (`NAME.def`): clock, strings, the system tree,
//! location groups and locations, regions, groups and communicators,
//! metrics, attributes, parameters. Read whole, once; every other
//! definition record is skipped by its length (docs/otf2.md lists which).

use super::buffer::{self, Otf2Read};
use super::legacy;
use crate::bytes::Bytes;
use crate::error::Result;
use crate::fasthash::{FastMap, FastSet};

/// Record ids of the global definitions this reader uses (and the
/// writer writes).
pub mod id {
    /// `ClockProperties`.
    pub const CLOCK_PROPERTIES: u8 = 5;
    /// `STRING`.
    pub const STRING: u8 = 10;
    /// `ATTRIBUTE`.
    pub const ATTRIBUTE: u8 = 11;
    /// `SYSTEM_TREE_NODE`.
    pub const SYSTEM_TREE_NODE: u8 = 12;
    /// `LOCATION_GROUP`.
    pub const LOCATION_GROUP: u8 = 13;
    /// `LOCATION`.
    pub const LOCATION: u8 = 14;
    /// `REGION`.
    pub const REGION: u8 = 15;
    /// `GROUP`.
    pub const GROUP: u8 = 18;
    /// `METRIC_MEMBER`.
    pub const METRIC_MEMBER: u8 = 19;
    /// `METRIC_CLASS`.
    pub const METRIC_CLASS: u8 = 20;
    /// `METRIC_INSTANCE`.
    pub const METRIC_INSTANCE: u8 = 21;
    /// `COMM`.
    pub const COMM: u8 = 22;
    /// `PARAMETER`.
    pub const PARAMETER: u8 = 23;
    /// `RMA_WIN`.
    pub const RMA_WIN: u8 = 24;
}

/// The undefined reference of 32-bit definitions.
pub const UNDEFINED: u32 = u32::MAX;

/// The trace's clock (`ClockProperties`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// Ticks per second.
    pub resolution: u64,
    /// Tick of the trace's time 0.
    pub offset: u64,
    /// Ticks the trace lasts.
    pub length: u64,
    /// Wall-clock time of `offset`, ns since the Unix epoch (OTF2 3.0 on).
    pub realtime: Option<u64>,
}

/// A node of the system tree.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its name (a string reference).
    pub name: u32,
    /// Its class (`machine`, `node`...; a string reference).
    pub class: u32,
    /// The node above it, or [`UNDEFINED`] for the root.
    pub parent: u32,
}

/// A location group (a process, an accelerator).
#[derive(Debug, Clone)]
pub struct LocationGroup {
    /// Its name (a string reference).
    pub name: u32,
    /// OTF2's location group type: 1 process, 2 accelerator.
    pub kind: u8,
    /// The system tree node it runs on.
    pub parent: u32,
}

/// A location: a thread, a GPU stream, a metric recorder; its events are
/// the file named by its id.
#[derive(Debug, Clone)]
pub struct LocationDef {
    /// Its name (a string reference).
    pub name: u32,
    /// OTF2's location type: 1 CPU thread, 2 GPU, 3 metric.
    pub kind: u8,
    /// Events it recorded, as the writer counted them.
    pub events: u64,
    /// Its location group.
    pub group: u32,
}

/// A code region.
#[derive(Debug, Clone)]
pub struct Region {
    /// Its name (a string reference).
    pub name: u32,
    /// Its description (a string reference).
    pub description: u32,
    /// OTF2's region role (function, loop, barrier...).
    pub role: u8,
    /// OTF2's paradigm (MPI, OpenMP...).
    pub paradigm: u8,
}

/// A group: of locations, of ranks of another group, of regions, metrics.
#[derive(Debug, Clone)]
pub struct Group {
    /// OTF2's group type: 4 the locations of a paradigm, 5 ranks of such a
    /// group, 6 a communicator of one.
    pub kind: u8,
    /// The paradigm it belongs to.
    pub paradigm: u8,
    /// Location ids, ranks, or references, by its type.
    pub members: Vec<u64>,
}

/// A communicator: its group of ranks.
#[derive(Debug, Clone)]
pub struct Comm {
    /// Its name (a string reference).
    pub name: u32,
    /// The group of its ranks.
    pub group: u32,
}

/// One member of a metric class: what a value of it means.
#[derive(Debug, Clone)]
pub struct MetricMember {
    /// Its name (a string reference).
    pub name: u32,
    /// OTF2's metric mode: value kind in the high nibble, timing in the low.
    pub mode: u8,
    /// OTF2's type of its values (UINT64, INT64, DOUBLE).
    pub value_type: u8,
    /// Its unit (a string reference).
    pub unit: u32,
}

/// A metric: a class of members, or an instance of a class recorded for a
/// scope.
#[derive(Debug, Clone)]
pub enum Metric {
    /// A class: its members, in the order its values come.
    Class {
        /// Metric member references.
        members: Vec<u32>,
    },
    /// An instance of a class, recorded for a scope.
    Instance {
        /// Its class.
        class: u32,
        /// The location whose events record it.
        recorder: u64,
        /// OTF2's metric scope: 0 location, 1 location group, 2 system
        /// tree node, 3 group.
        scope_kind: u8,
        /// The reference of the scope.
        scope: u64,
    },
}

/// An attribute's name and type.
#[derive(Debug, Clone, Copy)]
pub struct Attribute {
    /// Its name (a string reference).
    pub name: u32,
    /// OTF2's type of its values.
    pub kind: u8,
}

/// The global definitions tracepipe uses, by reference.
#[derive(Debug, Default)]
pub struct Definitions {
    /// The clock, when defined (a trace without one is refused).
    pub clock: Option<Clock>,
    /// Strings by reference.
    pub strings: FastMap<u32, String>,
    /// Attributes by reference.
    pub attributes: FastMap<u32, Attribute>,
    /// System tree nodes in the order defined (parents come first).
    pub nodes: Vec<(u32, Node)>,
    /// Location groups in the order defined.
    pub location_groups: Vec<(u32, LocationGroup)>,
    /// Locations in the order defined.
    pub locations: Vec<(u64, LocationDef)>,
    /// Regions by reference.
    pub regions: FastMap<u32, Region>,
    /// Groups by reference.
    pub groups: FastMap<u32, Group>,
    /// Communicators by reference.
    pub comms: FastMap<u32, Comm>,
    /// Metric members by reference.
    pub metric_members: FastMap<u32, MetricMember>,
    /// Metric classes and instances by reference.
    pub metrics: FastMap<u32, Metric>,
    /// Parameter name and type.
    pub parameters: FastMap<u32, (u32, u8)>,
    /// RMA window name and communicator.
    pub rma_wins: FastMap<u32, (u32, u32)>,
    /// Definition records read.
    pub records: u64,
    /// Of those, the ones of kinds not used.
    pub skipped: u64,
    /// Nodes, location groups and locations defined again (the first
    /// definition holds, as in OTF2's reader), and the first of them.
    pub redefined: u64,
    /// The first definition given again, described.
    pub first_redefined: Option<String>,
    /// The references of nodes, location groups and locations defined.
    seen: Listed,
}

/// The references defined of the kinds kept in order (lists, not maps).
#[derive(Debug, Default)]
struct Listed {
    nodes: FastSet<u32>,
    location_groups: FastSet<u32>,
    locations: FastSet<u64>,
}

impl Definitions {
    /// The text of string `r`, if defined.
    pub fn string(&self, r: u32) -> Option<&str> {
        self.strings.get(&r).map(String::as_str)
    }

    /// Reads the global definitions file `file` (its bytes `data`).
    pub fn parse(file: &str, data: &[u8], chunk_size: u64) -> Result<Definitions> {
        let mut defs = Definitions::default();
        for_each_record(file, data, chunk_size, |kind, b| {
            defs.records += 1;
            if !defs.read_record(kind, b)? {
                defs.skipped += 1;
            }
            Ok(())
        })?;
        Ok(defs)
    }

    /// Reads one record into the tables; false for a kind not used.
    fn read_record(&mut self, kind: u8, b: &mut Bytes) -> Result<bool> {
        match kind {
            id::CLOCK_PROPERTIES => self.clock = Some(clock(b)?),
            id::STRING => {
                let r = b.u32c("string reference")?;
                let s = b.string("string")?;
                self.strings.insert(r, s);
            }
            id::ATTRIBUTE => {
                let r = b.u32c("attribute reference")?;
                let name = b.u32c("attribute name")?;
                let kind = b.u8("attribute type")?;
                self.attributes.insert(r, Attribute { name, kind });
            }
            id::SYSTEM_TREE_NODE => {
                let r = b.u32c("system tree node reference")?;
                let name = b.u32c("node name")?;
                let class = b.u32c("node class")?;
                let parent = b.u32c("node parent")?;
                if !self.seen.nodes.insert(r) {
                    self.redefine("system tree node", r.into());
                    return Ok(true);
                }
                self.nodes.push((
                    r,
                    Node {
                        name,
                        class,
                        parent,
                    },
                ));
            }
            id::LOCATION_GROUP => {
                let r = b.u32c("location group reference")?;
                let name = b.u32c("location group name")?;
                let kind = b.u8("location group type")?;
                let parent = b.u32c("location group parent")?;
                if !self.seen.location_groups.insert(r) {
                    self.redefine("location group", r.into());
                    return Ok(true);
                }
                let group = LocationGroup { name, kind, parent };
                self.location_groups.push((r, group));
            }
            id::LOCATION => {
                let r = b.u64c("location reference")?;
                let name = b.u32c("location name")?;
                let kind = b.u8("location type")?;
                let events = b.u64c("number of events")?;
                let group = b.u32c("location group")?;
                if !self.seen.locations.insert(r) {
                    self.redefine("location", r);
                    return Ok(true);
                }
                let loc = LocationDef {
                    name,
                    kind,
                    events,
                    group,
                };
                self.locations.push((r, loc));
            }
            id::REGION => self.region(b)?,
            id::GROUP => self.group(b)?,
            _ => return self.read_metric_or_comm(kind, b),
        }
        Ok(true)
    }

    /// Counts a definition given again (`what` `r`), which is not read.
    fn redefine(&mut self, what: &str, r: u64) {
        self.redefined += 1;
        if self.first_redefined.is_none() {
            self.first_redefined = Some(format!("{what} {r}"));
        }
    }

    fn read_metric_or_comm(&mut self, kind: u8, b: &mut Bytes) -> Result<bool> {
        match kind {
            id::METRIC_MEMBER => self.metric_member(b)?,
            id::METRIC_CLASS => {
                let r = b.u32c("metric reference")?;
                let n = b.u8("number of metrics")? as usize;
                let mut members = Vec::with_capacity(b.check_count(
                    b.offset(),
                    n as u64,
                    "number of metrics",
                    1,
                )?);
                for _ in 0..n {
                    members.push(b.u32c("metric member")?);
                }
                self.metrics.insert(r, Metric::Class { members });
            }
            id::METRIC_INSTANCE => {
                let r = b.u32c("metric reference")?;
                let class = b.u32c("metric class")?;
                let recorder = b.u64c("recorder")?;
                let scope_kind = b.u8("metric scope")?;
                let scope = b.u64c("scope")?;
                let instance = Metric::Instance {
                    class,
                    recorder,
                    scope_kind,
                    scope,
                };
                self.metrics.insert(r, instance);
            }
            id::COMM => {
                let r = b.u32c("communicator reference")?;
                let name = b.u32c("communicator name")?;
                let group = b.u32c("communicator group")?;
                self.comms.insert(r, Comm { name, group });
            }
            id::PARAMETER => {
                let r = b.u32c("parameter reference")?;
                let name = b.u32c("parameter name")?;
                let kind = b.u8("parameter type")?;
                self.parameters.insert(r, (name, kind));
            }
            id::RMA_WIN => {
                let r = b.u32c("window reference")?;
                let name = b.u32c("window name")?;
                let comm = b.u32c("window communicator")?;
                self.rma_wins.insert(r, (name, comm));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn region(&mut self, b: &mut Bytes) -> Result<()> {
        let r = b.u32c("region reference")?;
        let name = b.u32c("region name")?;
        let description = b.u32c("region description")?;
        let region_type = b.u8("region type")?;
        b.u32c("source file")?;
        b.u32c("begin line")?;
        b.u32c("end line")?;
        // OTF2 1.1 appended a canonical name, the role, the paradigm and
        // flags, which replace the region type of 1.0.
        let (role, paradigm) = match b.remaining() {
            0 => legacy::region_role_and_paradigm(region_type),
            _ => {
                b.u32c("canonical name")?;
                (b.u8("region role")?, b.u8("paradigm")?)
            }
        };
        self.regions.insert(
            r,
            Region {
                name,
                description,
                role,
                paradigm,
            },
        );
        Ok(())
    }

    fn group(&mut self, b: &mut Bytes) -> Result<()> {
        let r = b.u32c("group reference")?;
        b.u32c("group name")?;
        let pre_1_2 = b.u8("group type (before OTF2 1.2)")?;
        let at = b.offset();
        let n = b.u32c("number of members")?;
        let n = b.check_count(at, n as u64, "number of members", 1)?;
        let mut members = Vec::with_capacity(n);
        for _ in 0..n {
            members.push(b.u64c("group member")?);
        }
        // OTF2 1.2 appended the type and paradigm that replace the first.
        let (kind, paradigm) = match b.remaining() {
            0 => legacy::group_type_and_paradigm(pre_1_2),
            _ => (b.u8("group type")?, b.u8("paradigm")?),
        };
        self.groups.insert(
            r,
            Group {
                kind,
                paradigm,
                members,
            },
        );
        Ok(())
    }

    fn metric_member(&mut self, b: &mut Bytes) -> Result<()> {
        let r = b.u32c("metric member reference")?;
        let name = b.u32c("metric name")?;
        b.u32c("metric description")?;
        b.u8("metric type")?;
        let mode = b.u8("metric mode")?;
        let value_type = b.u8("value type")?;
        b.u8("base")?;
        b.i64c("exponent")?;
        let unit = b.u32c("unit")?;
        let member = MetricMember {
            name,
            mode,
            value_type,
            unit,
        };
        self.metric_members.insert(r, member);
        Ok(())
    }
}

fn clock(b: &mut Bytes) -> Result<Clock> {
    let resolution = b.u64c("timer resolution")?;
    if resolution == 0 {
        return Err(b.error("timer resolution 0 ticks per second"));
    }
    let offset = b.u64c("global offset")?;
    let length = b.u64c("trace length")?;
    // OTF2 3.0 appends the wall-clock time; older records end here.
    let realtime = match b.remaining() {
        0 => None,
        _ => Some(b.u64c("realtime timestamp")?).filter(|&t| t != u64::MAX),
    };
    Ok(Clock {
        resolution,
        offset,
        length,
        realtime,
    })
}

/// Calls `record(kind, bytes)` for every record of a definitions buffer
/// (`data`, read from `file`), its bytes limited to the record; records
/// of later versions are longer, so the caller reads what it knows and the
/// rest is skipped. Chunks follow each other every `chunk_size` bytes.
pub fn for_each_record(
    file: &str,
    data: &[u8],
    chunk_size: u64,
    mut record: impl FnMut(u8, &mut Bytes) -> Result<()>,
) -> Result<()> {
    let mut chunk_start = 0usize;
    let mut b = Bytes::new(file, data);
    buffer::header(&mut b, "definitions")?;
    loop {
        let at = b.offset();
        let kind = b.u8("record type").map_err(|_| {
            b.error_at(
                at,
                "definitions end without an end-of-file record (the file was cut)",
            )
        })?;
        match kind {
            buffer::END_OF_FILE | buffer::END_OF_BUFFER => return Ok(()),
            buffer::END_OF_CHUNK => {
                chunk_start = chunk_start.saturating_add(chunk_size.max(1) as usize);
                if chunk_start >= data.len() {
                    return Ok(());
                }
                b.seek(chunk_start);
                buffer::header(&mut b, "definitions chunk")?;
                continue;
            }
            _ => {}
        }
        let end = b.record_end("definition record")?;
        let body = &data[b.offset()..end];
        let mut rb = Bytes::at(file, body, b.offset() as u64);
        record(kind, &mut rb)?;
        b.seek(end);
    }
}
