//! Pallas (Inria / Télécom SudParis; written by EZTrace): a trace folder with a
//! main file, one archive per process and, per thread, a grammar of events,
//! sequences and loops whose timestamps are stored as encoded blocks.
//!
//! `archive.rs` is the `.pallas` file layouts (ABI 16 to 21), read through
//! the bounds-checked cursor `crate::bytes`, `codec.rs` the `.dat` block
//! codecs, `reader/` the lazy grammar expansion and the mapping to the
//! stream, `writer/` the stream → Pallas writer (its grammar discovered as
//! rows come) and the writer of described traces (for the generator and
//! the tests). The mapping is documented in `docs/formats.md`.

pub mod archive;
pub mod codec;
pub mod reader;
pub mod writer;

use crate::pipe::Probe;

/// Prefix of the meta names that carry Pallas-specific values.
pub const PREFIX: &str = crate::model::record::prefix::PALLAS;

/// A folder is a Pallas trace when it holds a `.pallas` file (its main file);
/// a file is known by its `.pallas` extension.
pub fn sniff(probe: &Probe) -> bool {
    probe.is_dir && probe.entries.iter().any(|name| name.ends_with(".pallas"))
}

/// The event records of Pallas (its `enum Record`) tracepipe knows, by
/// their number in the files; the reader maps them and the writer writes
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum RecordId {
    /// A region's block begins.
    Enter = 2,
    /// It ends.
    Leave = 3,
    /// MPI point-to-point: a blocking send,
    MpiSend = 4,
    /// a nonblocking one (with its request),
    MpiIsend = 5,
    /// its completion,
    MpiIsendComplete = 6,
    /// a nonblocking receive posted,
    MpiIrecvRequest = 7,
    /// a blocking receive,
    MpiRecv = 8,
    /// a nonblocking one completed.
    MpiIrecv = 9,
    /// An MPI collective begins,
    MpiCollectiveBegin = 12,
    /// and ends with its operation, communicator, root and sizes.
    MpiCollectiveEnd = 13,
    /// OpenMP: a parallel region forks,
    OmpFork = 14,
    /// joins,
    OmpJoin = 15,
    /// a lock is acquired,
    OmpAcquireLock = 16,
    /// released,
    OmpReleaseLock = 17,
    /// a task created,
    OmpTaskCreate = 18,
    /// switched to,
    OmpTaskSwitch = 19,
    /// completed.
    OmpTaskComplete = 20,
    /// Threads: a fork,
    ThreadFork = 25,
    /// a join,
    ThreadJoin = 26,
    /// a team begins,
    ThreadTeamBegin = 27,
    /// ends,
    ThreadTeamEnd = 28,
    /// a lock is acquired,
    ThreadAcquireLock = 29,
    /// released,
    ThreadReleaseLock = 30,
    /// a task created,
    ThreadTaskCreate = 31,
    /// switched to,
    ThreadTaskSwitch = 32,
    /// completed,
    ThreadTaskComplete = 33,
    /// a thread begins,
    ThreadBegin = 35,
    /// ends.
    ThreadEnd = 37,
    /// A generic event named by a string.
    Generic = 58,
    /// The tracer flushed its buffer (0 before ABI 19).
    BufferFlush = 59,
    /// A placeholder event, skipped.
    Dummy = 60,
}

impl RecordId {
    const ALL: [RecordId; 31] = {
        use RecordId::*;
        [
            Enter,
            Leave,
            MpiSend,
            MpiIsend,
            MpiIsendComplete,
            MpiIrecvRequest,
            MpiRecv,
            MpiIrecv,
            MpiCollectiveBegin,
            MpiCollectiveEnd,
            OmpFork,
            OmpJoin,
            OmpAcquireLock,
            OmpReleaseLock,
            OmpTaskCreate,
            OmpTaskSwitch,
            OmpTaskComplete,
            ThreadFork,
            ThreadJoin,
            ThreadTeamBegin,
            ThreadTeamEnd,
            ThreadAcquireLock,
            ThreadReleaseLock,
            ThreadTaskCreate,
            ThreadTaskSwitch,
            ThreadTaskComplete,
            ThreadBegin,
            ThreadEnd,
            Generic,
            BufferFlush,
            Dummy,
        ]
    };

    /// The record of number `n`, when tracepipe knows it.
    pub fn from_number(n: u32) -> Option<RecordId> {
        RecordId::ALL.into_iter().find(|&r| r as u32 == n)
    }

    /// Its number in the files.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// The record named `name` (as Pallas's print tool spells it).
    pub fn from_name(name: &str) -> Option<RecordId> {
        RecordId::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The `cat` of the rows tracepipe reads it as: `MPI`, or `OMP` and
    /// `THREAD` for the records of those blocks (none for the others).
    pub fn cat(self) -> Option<&'static str> {
        match self.number() {
            4..=13 => Some("MPI"),
            14..=20 => Some("OMP"),
            25..=37 => Some("THREAD"),
            _ => None,
        }
    }

    /// Its name, as Pallas's print tool spells it.
    pub fn name(self) -> &'static str {
        use RecordId::*;
        match self {
            Enter => "ENTER",
            Leave => "LEAVE",
            MpiSend => "MPI_SEND",
            MpiIsend => "MPI_ISEND",
            MpiIsendComplete => "MPI_ISEND_COMPLETE",
            MpiIrecvRequest => "MPI_IRECV_REQUEST",
            MpiRecv => "MPI_RECV",
            MpiIrecv => "MPI_IRECV",
            MpiCollectiveBegin => "MPI_COLLECTIVE_BEGIN",
            MpiCollectiveEnd => "MPI_COLLECTIVE_END",
            OmpFork => "OMP_FORK",
            OmpJoin => "OMP_JOIN",
            OmpAcquireLock => "OMP_ACQUIRE_LOCK",
            OmpReleaseLock => "OMP_RELEASE_LOCK",
            OmpTaskCreate => "OMP_TASK_CREATE",
            OmpTaskSwitch => "OMP_TASK_SWITCH",
            OmpTaskComplete => "OMP_TASK_COMPLETE",
            ThreadFork => "THREAD_FORK",
            ThreadJoin => "THREAD_JOIN",
            ThreadTeamBegin => "THREAD_TEAM_BEGIN",
            ThreadTeamEnd => "THREAD_TEAM_END",
            ThreadAcquireLock => "THREAD_ACQUIRE_LOCK",
            ThreadReleaseLock => "THREAD_RELEASE_LOCK",
            ThreadTaskCreate => "THREAD_TASK_CREATE",
            ThreadTaskSwitch => "THREAD_TASK_SWITCH",
            ThreadTaskComplete => "THREAD_TASK_COMPLETE",
            ThreadBegin => "THREAD_BEGIN",
            ThreadEnd => "THREAD_END",
            Generic => "GENERIC",
            BufferFlush => "BUFFER_FLUSH",
            Dummy => "DUMMY",
        }
    }
}

/// Pallas's name of event record `record`, as its print tool spells it
/// (`record` for one tracepipe does not know).
pub fn record_name(record: u32) -> &'static str {
    RecordId::from_number(record).map_or("record", RecordId::name)
}

pub use crate::model::hpc::{collective_name, collective_op};
