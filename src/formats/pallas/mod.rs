//! Pallas (Inria / Télécom SudParis; written by EZTrace): a trace folder with a
//! main file, one archive per process and, per thread, a grammar of events,
//! sequences and loops whose timestamps are stored as encoded blocks.
//!
//! `bytes.rs` is the bounds-checked cursor, `archive.rs` the `.pallas` file
//! layouts (ABI 16 to 20), `codec.rs` the `.dat` block codecs, `reader.rs` the
//! lazy grammar expansion and the mapping to the stream, `writer.rs` writes
//! archives (for the generator and the tests). The mapping is documented in
//! `docs/formats.md`.

pub mod archive;
pub mod bytes;
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

/// Pallas's name of an event record, as its print tool spells it.
pub fn record_name(record: u32) -> &'static str {
    match record {
        2 => "ENTER",
        3 => "LEAVE",
        4 => "MPI_SEND",
        5 => "MPI_ISEND",
        6 => "MPI_ISEND_COMPLETE",
        7 => "MPI_IRECV_REQUEST",
        8 => "MPI_RECV",
        9 => "MPI_IRECV",
        12 => "MPI_COLLECTIVE_BEGIN",
        13 => "MPI_COLLECTIVE_END",
        14 => "OMP_FORK",
        15 => "OMP_JOIN",
        16 => "OMP_ACQUIRE_LOCK",
        17 => "OMP_RELEASE_LOCK",
        18 => "OMP_TASK_CREATE",
        19 => "OMP_TASK_SWITCH",
        20 => "OMP_TASK_COMPLETE",
        25 => "THREAD_FORK",
        26 => "THREAD_JOIN",
        27 => "THREAD_TEAM_BEGIN",
        28 => "THREAD_TEAM_END",
        29 => "THREAD_ACQUIRE_LOCK",
        30 => "THREAD_RELEASE_LOCK",
        31 => "THREAD_TASK_CREATE",
        32 => "THREAD_TASK_SWITCH",
        33 => "THREAD_TASK_COMPLETE",
        35 => "THREAD_BEGIN",
        37 => "THREAD_END",
        58 => "GENERIC",
        59 => "BUFFER_FLUSH",
        _ => "record",
    }
}

/// Collective operations by their OTF2 number, which Pallas stores.
pub const COLLECTIVE_OPS: [&str; 23] = [
    "BARRIER",
    "BCAST",
    "GATHER",
    "GATHERV",
    "SCATTER",
    "SCATTERV",
    "ALLGATHER",
    "ALLGATHERV",
    "ALLTOALL",
    "ALLTOALLV",
    "ALLTOALLW",
    "ALLREDUCE",
    "REDUCE",
    "REDUCE_SCATTER",
    "SCAN",
    "EXSCAN",
    "REDUCE_SCATTER_BLOCK",
    "CREATE_HANDLE",
    "DESTROY_HANDLE",
    "ALLOCATE",
    "DEALLOCATE",
    "CREATE_HANDLE_AND_ALLOCATE",
    "DESTROY_HANDLE_AND_DEALLOCATE",
];

/// The name of collective operation `op` (its number when it has none).
pub fn collective_name(op: u32) -> String {
    COLLECTIVE_OPS
        .get(op as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| op.to_string())
}

/// The number of a collective operation named by [`collective_name`].
pub fn collective_op(name: &str) -> Option<u32> {
    COLLECTIVE_OPS
        .iter()
        .position(|n| *n == name)
        .map(|i| i as u32)
        .or_else(|| name.parse().ok())
}
