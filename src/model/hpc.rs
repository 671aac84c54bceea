//! OTF2's enumerations, shared by the formats whose records are OTF2's
//! (OTF2 itself, and Pallas, which stores OTF2's numbers): collective
//! operations, paradigms, region roles, location types, metric modes.

/// Collective operations by their OTF2 number.
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

/// OTF2's paradigms by number (`OTF2_Paradigm`).
pub const PARADIGMS: [&str; 25] = [
    "UNKNOWN",
    "USER",
    "COMPILER",
    "OPENMP",
    "MPI",
    "CUDA",
    "MEASUREMENT_SYSTEM",
    "PTHREAD",
    "HMPP",
    "OMPSS",
    "HARDWARE",
    "GASPI",
    "UPC",
    "SHMEM",
    "WINTHREAD",
    "QTTHREAD",
    "ACETHREAD",
    "TBBTHREAD",
    "OPENACC",
    "OPENCL",
    "MTAPI",
    "SAMPLING",
    "NONE",
    "HIP",
    "KOKKOS",
];

/// The name of paradigm `p` (its number when it has none).
pub fn paradigm_name(p: u8) -> String {
    PARADIGMS
        .get(p as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| p.to_string())
}

/// The stream category of a paradigm: `MPI`, `OMP` (OpenMP, as the Pallas
/// reader names its blocks), `THREAD` (pthreads), else its OTF2 name;
/// none for `UNKNOWN` and `NONE`.
pub fn paradigm_cat(p: u8) -> Option<String> {
    match p {
        0 | 22 => None,
        3 => Some("OMP".into()),
        7 => Some("THREAD".into()),
        p => Some(paradigm_name(p)),
    }
}

/// OTF2's region roles by number (`OTF2_RegionRole`).
pub const REGION_ROLES: [&str; 39] = [
    "UNKNOWN",
    "FUNCTION",
    "WRAPPER",
    "LOOP",
    "CODE",
    "PARALLEL",
    "SECTIONS",
    "SECTION",
    "WORKSHARE",
    "SINGLE",
    "SINGLE_SBLOCK",
    "MASTER",
    "CRITICAL",
    "CRITICAL_SBLOCK",
    "ATOMIC",
    "BARRIER",
    "IMPLICIT_BARRIER",
    "FLUSH",
    "ORDERED",
    "ORDERED_SBLOCK",
    "TASK",
    "TASK_CREATE",
    "TASK_WAIT",
    "COLL_ONE2ALL",
    "COLL_ALL2ONE",
    "COLL_ALL2ALL",
    "COLL_OTHER",
    "FILE_IO",
    "POINT2POINT",
    "RMA",
    "DATA_TRANSFER",
    "ARTIFICIAL",
    "THREAD_CREATE",
    "THREAD_WAIT",
    "TASK_UNTIED",
    "ALLOCATE",
    "DEALLOCATE",
    "REALLOCATE",
    "FILE_IO_METADATA",
];

/// The container category of an OTF2 location type.
pub fn location_kind(kind: u8) -> &'static str {
    match kind {
        1 => "thread",
        2 => "gpu",
        3 => "metric",
        _ => "location",
    }
}

/// The stream's `mode` of an OTF2 metric mode (its value kind, the high
/// nibble: accumulated, absolute, relative) and OTF2's timing (the low
/// nibble: start, point, last, next).
pub fn metric_mode(mode: u8) -> (&'static str, &'static str) {
    let kind = match mode >> 4 {
        0 => "acc",
        1 => "abs",
        _ => "rel",
    };
    let timing = match mode & 0xf {
        0 => "start",
        1 => "point",
        2 => "last",
        _ => "next",
    };
    (kind, timing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_otf2_numbers() {
        assert_eq!(collective_name(11), "ALLREDUCE");
        assert_eq!(collective_op("ALLREDUCE"), Some(11));
        assert_eq!(paradigm_name(4), "MPI");
        assert_eq!(paradigm_cat(3).as_deref(), Some("OMP"));
        assert_eq!(paradigm_cat(22), None);
        assert_eq!(REGION_ROLES[28], "POINT2POINT");
        assert_eq!(metric_mode(0x11), ("abs", "point"));
    }
}
