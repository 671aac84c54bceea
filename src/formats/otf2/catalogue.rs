//! The catalogue of OTF2 event records: each record's id, name, fields
//! and their encodings, from OTF2 3.0's record list (ids 10 to 88). The
//! decoder reads any record through it; the reader maps some records to
//! rows of their own and every other one to an `event` with its fields
//! (docs/otf2.md lists which).

/// A field's encoding and meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F {
    /// One byte.
    U8,
    /// A compressed u32.
    U32,
    /// A compressed u64.
    U64,
    /// A compressed i64.
    I64,
    /// A full 8-byte timestamp (ticks, clock-corrected like the event's).
    Time,
    /// A compressed reference to a definition (a u8 for I/O paradigms).
    Ref(R),
    /// One byte naming a value of an enumeration.
    Enum(N),
    /// An array whose length the field before gave (decoded by the record's
    /// own rule: `METRIC`'s typed values, `PROGRAM_BEGIN`'s arguments).
    Array,
}

/// Kinds of definitions a field refers to, by OTF2 mapping type (the index
/// of a location's mapping table for them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum R {
    /// To a string.
    String = 0,
    /// To an attribute.
    Attribute = 1,
    /// To a location.
    Location = 2,
    /// To a region.
    Region = 3,
    /// To a group.
    Group = 4,
    /// To a metric (class or instance).
    Metric = 5,
    /// To a communicator (or thread team).
    Comm = 6,
    /// To a parameter.
    Parameter = 7,
    /// To an RMA window.
    RmaWin = 8,
    /// To a source code location.
    SourceCodeLocation = 9,
    /// To a calling context.
    CallingContext = 10,
    /// To an interrupt generator.
    InterruptGenerator = 11,
    /// To an I/O file.
    IoFile = 12,
    /// To an I/O handle.
    IoHandle = 13,
    /// To a location group.
    LocationGroup = 14,
    /// I/O paradigms: a u8, not mapped.
    IoParadigm = 15,
}

/// Enumerations whose values are written by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum N {
    /// `OTF2_Paradigm`.
    Paradigm,
    /// `OTF2_CollectiveOp`.
    CollectiveOp,
    /// `OTF2_MeasurementMode`.
    MeasurementMode,
    /// `OTF2_LockType`.
    LockType,
}

/// One event record of the catalogue.
#[derive(Debug)]
pub struct Spec {
    /// Its id in the files.
    pub id: u8,
    /// OTF2's name for it, as `otf2-print` prints it.
    pub name: &'static str,
    /// No record length: one compressed field follows its id (records of
    /// OTF2 1.1 with a single field).
    pub singleton: bool,
    /// Its fields, in file order, named as OTF2 names them.
    pub fields: &'static [(&'static str, F)],
}

const fn spec(
    id: u8,
    name: &'static str,
    singleton: bool,
    fields: &'static [(&'static str, F)],
) -> Spec {
    Spec {
        id,
        name,
        singleton,
        fields,
    }
}

use F::*;

/// The `cat` of the rows a record of id `id` makes: its family.
pub fn family(id: u8) -> &'static str {
    match id {
        14..=23 | 85..=88 => "MPI",
        24..=30 => "OMP",
        35..=52 => "RMA",
        53..=65 => "THREAD",
        66..=68 => "SAMPLING",
        69..=82 => "IO",
        32..=34 => super::PARAMETER_CAT,
        _ => "MEASUREMENT",
    }
}

/// Every event record OTF2 3.0 defines, by id from [`FIRST_ID`].
pub static EVENTS: [Spec; 79] = [
    spec(10, "BUFFER_FLUSH", false, &[("stop_time", Time)]),
    spec(
        11,
        "MEASUREMENT_ON_OFF",
        false,
        &[("measurement_mode", Enum(N::MeasurementMode))],
    ),
    spec(12, "ENTER", true, &[("region", Ref(R::Region))]),
    spec(13, "LEAVE", true, &[("region", Ref(R::Region))]),
    spec(
        14,
        "MPI_SEND",
        false,
        &[
            ("receiver", U32),
            ("communicator", Ref(R::Comm)),
            ("msg_tag", U32),
            ("msg_length", U64),
        ],
    ),
    spec(
        15,
        "MPI_ISEND",
        false,
        &[
            ("receiver", U32),
            ("communicator", Ref(R::Comm)),
            ("msg_tag", U32),
            ("msg_length", U64),
            ("request_id", U64),
        ],
    ),
    spec(16, "MPI_ISEND_COMPLETE", true, &[("request_id", U64)]),
    spec(17, "MPI_IRECV_REQUEST", true, &[("request_id", U64)]),
    spec(
        18,
        "MPI_RECV",
        false,
        &[
            ("sender", U32),
            ("communicator", Ref(R::Comm)),
            ("msg_tag", U32),
            ("msg_length", U64),
        ],
    ),
    spec(
        19,
        "MPI_IRECV",
        false,
        &[
            ("sender", U32),
            ("communicator", Ref(R::Comm)),
            ("msg_tag", U32),
            ("msg_length", U64),
            ("request_id", U64),
        ],
    ),
    spec(20, "MPI_REQUEST_TEST", true, &[("request_id", U64)]),
    spec(21, "MPI_REQUEST_CANCELLED", true, &[("request_id", U64)]),
    spec(22, "MPI_COLLECTIVE_BEGIN", false, &[]),
    spec(
        23,
        "MPI_COLLECTIVE_END",
        false,
        &[
            ("collective_op", Enum(N::CollectiveOp)),
            ("communicator", Ref(R::Comm)),
            ("root", U32),
            ("size_sent", U64),
            ("size_received", U64),
        ],
    ),
    spec(
        24,
        "OMP_FORK",
        true,
        &[("number_of_requested_threads", U32)],
    ),
    spec(25, "OMP_JOIN", false, &[]),
    spec(
        26,
        "OMP_ACQUIRE_LOCK",
        false,
        &[("lock_id", U32), ("acquisition_order", U32)],
    ),
    spec(
        27,
        "OMP_RELEASE_LOCK",
        false,
        &[("lock_id", U32), ("acquisition_order", U32)],
    ),
    spec(28, "OMP_TASK_CREATE", true, &[("task_id", U64)]),
    spec(29, "OMP_TASK_SWITCH", true, &[("task_id", U64)]),
    spec(30, "OMP_TASK_COMPLETE", true, &[("task_id", U64)]),
    spec(
        31,
        "METRIC",
        false,
        &[
            ("metric", Ref(R::Metric)),
            ("number_of_metrics", U8),
            ("type_ids", Array),
            ("metric_values", Array),
        ],
    ),
    spec(
        32,
        "PARAMETER_STRING",
        false,
        &[("parameter", Ref(R::Parameter)), ("string", Ref(R::String))],
    ),
    spec(
        33,
        "PARAMETER_INT",
        false,
        &[("parameter", Ref(R::Parameter)), ("value", I64)],
    ),
    spec(
        34,
        "PARAMETER_UNSIGNED_INT",
        false,
        &[("parameter", Ref(R::Parameter)), ("value", U64)],
    ),
    spec(35, "RMA_WIN_CREATE", false, &[("win", Ref(R::RmaWin))]),
    spec(36, "RMA_WIN_DESTROY", false, &[("win", Ref(R::RmaWin))]),
    spec(37, "RMA_COLLECTIVE_BEGIN", false, &[]),
    spec(
        38,
        "RMA_COLLECTIVE_END",
        false,
        &[
            ("collective_op", Enum(N::CollectiveOp)),
            ("sync_level", U32),
            ("win", Ref(R::RmaWin)),
            ("root", U32),
            ("bytes_sent", U64),
            ("bytes_received", U64),
        ],
    ),
    spec(
        39,
        "RMA_GROUP_SYNC",
        false,
        &[
            ("sync_level", U32),
            ("win", Ref(R::RmaWin)),
            ("group", Ref(R::Group)),
        ],
    ),
    spec(
        40,
        "RMA_REQUEST_LOCK",
        false,
        &[
            ("win", Ref(R::RmaWin)),
            ("remote", U32),
            ("lock_id", U64),
            ("lock_type", Enum(N::LockType)),
        ],
    ),
    spec(
        41,
        "RMA_ACQUIRE_LOCK",
        false,
        &[
            ("win", Ref(R::RmaWin)),
            ("remote", U32),
            ("lock_id", U64),
            ("lock_type", Enum(N::LockType)),
        ],
    ),
    spec(
        42,
        "RMA_TRY_LOCK",
        false,
        &[
            ("win", Ref(R::RmaWin)),
            ("remote", U32),
            ("lock_id", U64),
            ("lock_type", Enum(N::LockType)),
        ],
    ),
    spec(
        43,
        "RMA_RELEASE_LOCK",
        false,
        &[("win", Ref(R::RmaWin)), ("remote", U32), ("lock_id", U64)],
    ),
    spec(
        44,
        "RMA_SYNC",
        false,
        &[("win", Ref(R::RmaWin)), ("remote", U32), ("sync_type", U8)],
    ),
    spec(45, "RMA_WAIT_CHANGE", false, &[("win", Ref(R::RmaWin))]),
    spec(
        46,
        "RMA_PUT",
        false,
        &[
            ("win", Ref(R::RmaWin)),
            ("remote", U32),
            ("bytes", U64),
            ("matching_id", U64),
        ],
    ),
    spec(
        47,
        "RMA_GET",
        false,
        &[
            ("win", Ref(R::RmaWin)),
            ("remote", U32),
            ("bytes", U64),
            ("matching_id", U64),
        ],
    ),
    spec(
        48,
        "RMA_ATOMIC",
        false,
        &[
            ("win", Ref(R::RmaWin)),
            ("remote", U32),
            ("type", U8),
            ("bytes_sent", U64),
            ("bytes_received", U64),
            ("matching_id", U64),
        ],
    ),
    spec(
        49,
        "RMA_OP_COMPLETE_BLOCKING",
        false,
        &[("win", Ref(R::RmaWin)), ("matching_id", U64)],
    ),
    spec(
        50,
        "RMA_OP_COMPLETE_NON_BLOCKING",
        false,
        &[("win", Ref(R::RmaWin)), ("matching_id", U64)],
    ),
    spec(
        51,
        "RMA_OP_TEST",
        false,
        &[("win", Ref(R::RmaWin)), ("matching_id", U64)],
    ),
    spec(
        52,
        "RMA_OP_COMPLETE_REMOTE",
        false,
        &[("win", Ref(R::RmaWin)), ("matching_id", U64)],
    ),
    spec(
        53,
        "THREAD_FORK",
        false,
        &[
            ("model", Enum(N::Paradigm)),
            ("number_of_requested_threads", U32),
        ],
    ),
    spec(54, "THREAD_JOIN", false, &[("model", Enum(N::Paradigm))]),
    spec(
        55,
        "THREAD_TEAM_BEGIN",
        false,
        &[("thread_team", Ref(R::Comm))],
    ),
    spec(
        56,
        "THREAD_TEAM_END",
        false,
        &[("thread_team", Ref(R::Comm))],
    ),
    spec(
        57,
        "THREAD_ACQUIRE_LOCK",
        false,
        &[
            ("model", Enum(N::Paradigm)),
            ("lock_id", U32),
            ("acquisition_order", U32),
        ],
    ),
    spec(
        58,
        "THREAD_RELEASE_LOCK",
        false,
        &[
            ("model", Enum(N::Paradigm)),
            ("lock_id", U32),
            ("acquisition_order", U32),
        ],
    ),
    spec(
        59,
        "THREAD_TASK_CREATE",
        false,
        &[
            ("thread_team", Ref(R::Comm)),
            ("creating_thread", U32),
            ("generation_number", U32),
        ],
    ),
    spec(
        60,
        "THREAD_TASK_SWITCH",
        false,
        &[
            ("thread_team", Ref(R::Comm)),
            ("creating_thread", U32),
            ("generation_number", U32),
        ],
    ),
    spec(
        61,
        "THREAD_TASK_COMPLETE",
        false,
        &[
            ("thread_team", Ref(R::Comm)),
            ("creating_thread", U32),
            ("generation_number", U32),
        ],
    ),
    spec(
        62,
        "THREAD_CREATE",
        false,
        &[("thread_contingent", Ref(R::Comm)), ("sequence_count", U64)],
    ),
    spec(
        63,
        "THREAD_BEGIN",
        false,
        &[("thread_contingent", Ref(R::Comm)), ("sequence_count", U64)],
    ),
    spec(
        64,
        "THREAD_WAIT",
        false,
        &[("thread_contingent", Ref(R::Comm)), ("sequence_count", U64)],
    ),
    spec(
        65,
        "THREAD_END",
        false,
        &[("thread_contingent", Ref(R::Comm)), ("sequence_count", U64)],
    ),
    spec(
        66,
        "CALLING_CONTEXT_ENTER",
        false,
        &[
            ("calling_context", Ref(R::CallingContext)),
            ("unwind_distance", U32),
        ],
    ),
    spec(
        67,
        "CALLING_CONTEXT_LEAVE",
        false,
        &[("calling_context", Ref(R::CallingContext))],
    ),
    spec(
        68,
        "CALLING_CONTEXT_SAMPLE",
        false,
        &[
            ("calling_context", Ref(R::CallingContext)),
            ("unwind_distance", U32),
            ("interrupt_generator", Ref(R::InterruptGenerator)),
        ],
    ),
    spec(
        69,
        "IO_CREATE_HANDLE",
        false,
        &[
            ("handle", Ref(R::IoHandle)),
            ("mode", U8),
            ("creation_flags", U32),
            ("status_flags", U32),
        ],
    ),
    spec(
        70,
        "IO_DESTROY_HANDLE",
        false,
        &[("handle", Ref(R::IoHandle))],
    ),
    spec(
        71,
        "IO_DUPLICATE_HANDLE",
        false,
        &[
            ("old_handle", Ref(R::IoHandle)),
            ("new_handle", Ref(R::IoHandle)),
            ("status_flags", U32),
        ],
    ),
    spec(
        72,
        "IO_SEEK",
        false,
        &[
            ("handle", Ref(R::IoHandle)),
            ("offset_request", I64),
            ("whence", U8),
            ("offset_result", U64),
        ],
    ),
    spec(
        73,
        "IO_CHANGE_STATUS_FLAGS",
        false,
        &[("handle", Ref(R::IoHandle)), ("status_flags", U32)],
    ),
    spec(
        74,
        "IO_DELETE_FILE",
        false,
        &[
            ("io_paradigm", Ref(R::IoParadigm)),
            ("file", Ref(R::IoFile)),
        ],
    ),
    spec(
        75,
        "IO_OPERATION_BEGIN",
        false,
        &[
            ("handle", Ref(R::IoHandle)),
            ("mode", U8),
            ("operation_flags", U32),
            ("bytes_request", U64),
            ("matching_id", U64),
        ],
    ),
    spec(
        76,
        "IO_OPERATION_TEST",
        false,
        &[("handle", Ref(R::IoHandle)), ("matching_id", U64)],
    ),
    spec(
        77,
        "IO_OPERATION_ISSUED",
        false,
        &[("handle", Ref(R::IoHandle)), ("matching_id", U64)],
    ),
    spec(
        78,
        "IO_OPERATION_COMPLETE",
        false,
        &[
            ("handle", Ref(R::IoHandle)),
            ("bytes_result", U64),
            ("matching_id", U64),
        ],
    ),
    spec(
        79,
        "IO_OPERATION_CANCELLED",
        false,
        &[("handle", Ref(R::IoHandle)), ("matching_id", U64)],
    ),
    spec(
        80,
        "IO_ACQUIRE_LOCK",
        false,
        &[
            ("handle", Ref(R::IoHandle)),
            ("lock_type", Enum(N::LockType)),
        ],
    ),
    spec(
        81,
        "IO_RELEASE_LOCK",
        false,
        &[
            ("handle", Ref(R::IoHandle)),
            ("lock_type", Enum(N::LockType)),
        ],
    ),
    spec(
        82,
        "IO_TRY_LOCK",
        false,
        &[
            ("handle", Ref(R::IoHandle)),
            ("lock_type", Enum(N::LockType)),
        ],
    ),
    spec(
        83,
        "PROGRAM_BEGIN",
        false,
        &[
            ("program_name", Ref(R::String)),
            ("number_of_arguments", U32),
            ("program_arguments", Array),
        ],
    ),
    spec(84, "PROGRAM_END", false, &[("exit_status", I64)]),
    spec(
        85,
        "NON_BLOCKING_COLLECTIVE_REQUEST",
        false,
        &[("request_id", U64)],
    ),
    spec(
        86,
        "NON_BLOCKING_COLLECTIVE_COMPLETE",
        false,
        &[
            ("collective_op", Enum(N::CollectiveOp)),
            ("communicator", Ref(R::Comm)),
            ("root", U32),
            ("size_sent", U64),
            ("size_received", U64),
            ("request_id", U64),
        ],
    ),
    spec(87, "COMM_CREATE", false, &[("communicator", Ref(R::Comm))]),
    spec(88, "COMM_DESTROY", false, &[("communicator", Ref(R::Comm))]),
];

/// Id of the first record of [`EVENTS`].
pub const FIRST_ID: u8 = 10;

/// The catalogue entry of record `id`, if OTF2 3.0 defines it.
#[inline]
pub fn spec_of(id: u8) -> Option<&'static Spec> {
    let s = EVENTS.get(id.checked_sub(FIRST_ID)? as usize)?;
    debug_assert_eq!(s.id, id);
    Some(s)
}

/// Record ids the reader maps to rows of their own.
pub mod id {
    /// `BUFFER_FLUSH`.
    pub const BUFFER_FLUSH: u8 = 10;
    /// `ENTER`.
    pub const ENTER: u8 = 12;
    /// `LEAVE`.
    pub const LEAVE: u8 = 13;
    /// `MPI_SEND`.
    pub const MPI_SEND: u8 = 14;
    /// `MPI_ISEND`.
    pub const MPI_ISEND: u8 = 15;
    /// `MPI_ISEND_COMPLETE`.
    pub const MPI_ISEND_COMPLETE: u8 = 16;
    /// `MPI_IRECV_REQUEST`.
    pub const MPI_IRECV_REQUEST: u8 = 17;
    /// `MPI_RECV`.
    pub const MPI_RECV: u8 = 18;
    /// `MPI_IRECV`.
    pub const MPI_IRECV: u8 = 19;
    /// `MPI_REQUEST_TEST`.
    pub const MPI_REQUEST_TEST: u8 = 20;
    /// `MPI_REQUEST_CANCELLED`.
    pub const MPI_REQUEST_CANCELLED: u8 = 21;
    /// `MPI_COLLECTIVE_BEGIN`.
    pub const MPI_COLLECTIVE_BEGIN: u8 = 22;
    /// `MPI_COLLECTIVE_END`.
    pub const MPI_COLLECTIVE_END: u8 = 23;
    /// `OMP_FORK`.
    pub const OMP_FORK: u8 = 24;
    /// `OMP_JOIN`.
    pub const OMP_JOIN: u8 = 25;
    /// `OMP_ACQUIRE_LOCK`.
    pub const OMP_ACQUIRE_LOCK: u8 = 26;
    /// `OMP_RELEASE_LOCK`.
    pub const OMP_RELEASE_LOCK: u8 = 27;
    /// `OMP_TASK_CREATE`.
    pub const OMP_TASK_CREATE: u8 = 28;
    /// `OMP_TASK_COMPLETE`.
    pub const OMP_TASK_COMPLETE: u8 = 30;
    /// `METRIC`.
    pub const METRIC: u8 = 31;
    /// `PARAMETER_STRING`.
    pub const PARAMETER_STRING: u8 = 32;
    /// `PARAMETER_INT`.
    pub const PARAMETER_INT: u8 = 33;
    /// `PARAMETER_UNSIGNED_INT`.
    pub const PARAMETER_UNSIGNED_INT: u8 = 34;
    /// `RMA_WIN_CREATE`.
    pub const RMA_WIN_CREATE: u8 = 35;
    /// `THREAD_FORK`.
    pub const THREAD_FORK: u8 = 53;
    /// `THREAD_JOIN`.
    pub const THREAD_JOIN: u8 = 54;
    /// `THREAD_TEAM_BEGIN`.
    pub const THREAD_TEAM_BEGIN: u8 = 55;
    /// `THREAD_TEAM_END`.
    pub const THREAD_TEAM_END: u8 = 56;
    /// `THREAD_ACQUIRE_LOCK`.
    pub const THREAD_ACQUIRE_LOCK: u8 = 57;
    /// `THREAD_RELEASE_LOCK`.
    pub const THREAD_RELEASE_LOCK: u8 = 58;
    /// `THREAD_TASK_CREATE`.
    pub const THREAD_TASK_CREATE: u8 = 59;
    /// `THREAD_TASK_COMPLETE`.
    pub const THREAD_TASK_COMPLETE: u8 = 61;
    /// `THREAD_BEGIN`.
    pub const THREAD_BEGIN: u8 = 63;
    /// `THREAD_END`.
    pub const THREAD_END: u8 = 65;
    /// `PROGRAM_BEGIN`.
    pub const PROGRAM_BEGIN: u8 = 83;
    /// `NON_BLOCKING_COLLECTIVE_REQUEST`.
    pub const NON_BLOCKING_COLLECTIVE_REQUEST: u8 = 85;
    /// `NON_BLOCKING_COLLECTIVE_COMPLETE`.
    pub const NON_BLOCKING_COLLECTIVE_COMPLETE: u8 = 86;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_table_order() {
        for (i, s) in EVENTS.iter().enumerate() {
            assert_eq!(s.id as usize, FIRST_ID as usize + i, "{}", s.name);
        }
        assert_eq!(spec_of(id::ENTER).unwrap().name, "ENTER");
        assert_eq!(
            spec_of(id::NON_BLOCKING_COLLECTIVE_COMPLETE).unwrap().name,
            "NON_BLOCKING_COLLECTIVE_COMPLETE"
        );
        assert!(spec_of(9).is_none() && spec_of(89).is_none());
    }
}
