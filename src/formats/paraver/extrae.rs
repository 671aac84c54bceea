//! Extrae's numbering of MPI calls: the event type each call is written
//! under (its class: point-to-point, collective, other, one-sided, I/O)
//! and its value there, as Extrae's merger numbers them (Extrae 5.1,
//! `src/merger/paraver`), so the MPI calls of a trace written by
//! tracepipe fill Paraver's MPI views as an Extrae trace's do.

/// The first of Extrae's MPI call types: a call's type is this plus its
/// class (1 to 5).
const MPI_TYPE_BASE: u64 = 50_000_000;

/// Extrae's type of MPI collectives.
pub const COLLECTIVE_TYPE: u64 = MPI_TYPE_BASE + 2;

/// The label of each MPI type's value 0, as Extrae writes it.
pub const OUTSIDE_MPI: &str = "Outside MPI";

/// The types' labels, by class.
const CLASS_LABELS: [&str; 5] = [
    "MPI Point-to-point",
    "MPI Collective Comm",
    "MPI Other",
    "MPI One-sided",
    "MPI I/O",
];

/// The label of Extrae's MPI type `event_type`, if it is one.
pub fn type_label(event_type: u64) -> Option<&'static str> {
    let class = event_type.checked_sub(MPI_TYPE_BASE + 1)?;
    CLASS_LABELS.get(usize::try_from(class).ok()?).copied()
}

/// The type and value Extrae writes the call `name` with (`MPI_Send`:
/// 50000001, 1), for the calls it knows, spelled as it spells them.
pub fn mpi_call(name: &str) -> Option<(u64, i128)> {
    let i = MPI_CALLS.binary_search_by(|(n, _, _)| n.cmp(&name)).ok()?;
    let (_, class, value) = MPI_CALLS[i];
    Some((MPI_TYPE_BASE + u64::from(class), i128::from(value)))
}

/// The MPI call Extrae names for collective operation `op` as OTF2 names
/// it (`ALLREDUCE`: `MPI_Allreduce`).
pub fn collective_call(op: &str) -> Option<&'static str> {
    MPI_CALLS
        .iter()
        .find(|(n, class, _)| {
            *class == 2
                && n.strip_prefix("MPI_")
                    .is_some_and(|c| c.eq_ignore_ascii_case(op))
        })
        .map(|(n, _, _)| *n)
}

/// Extrae's Global OP events written with a collective, inside its call:
/// the bytes sent and received.
pub const GLOBAL_OP_SENT: (u64, &str) = (50_100_001, "Send Size in MPI Global OP");
/// See [`GLOBAL_OP_SENT`].
pub const GLOBAL_OP_RECEIVED: (u64, &str) = (50_100_002, "Recv Size in MPI Global OP");

/// Extrae's type of user functions.
pub const USER_FUNCTION: (u64, &str) = (60_000_019, "User function");

/// (call, class, value), sorted by call.
#[rustfmt::skip]
const MPI_CALLS: [(&str, u8, u16); 215] = [
    ("MPI_Abort", 3, 100),
    ("MPI_Accumulate", 4, 67),
    ("MPI_Address", 3, 111),
    ("MPI_Allgather", 2, 17),
    ("MPI_Allgatherv", 2, 18),
    ("MPI_Allreduce", 2, 10),
    ("MPI_Alltoall", 2, 11),
    ("MPI_Alltoallv", 2, 12),
    ("MPI_Alltoallw", 2, 170),
    ("MPI_Attr_delete", 3, 81),
    ("MPI_Attr_get", 3, 82),
    ("MPI_Attr_put", 3, 83),
    ("MPI_Barrier", 2, 8),
    ("MPI_Bcast", 2, 7),
    ("MPI_Bsend", 1, 33),
    ("MPI_Bsend_init", 1, 112),
    ("MPI_Buffer_attach", 3, 113),
    ("MPI_Buffer_detach", 3, 114),
    ("MPI_Cancel", 1, 40),
    ("MPI_Cart_coords", 3, 45),
    ("MPI_Cart_create", 3, 43),
    ("MPI_Cart_get", 3, 46),
    ("MPI_Cart_map", 3, 47),
    ("MPI_Cart_rank", 3, 48),
    ("MPI_Cart_shift", 3, 44),
    ("MPI_Cart_sub", 3, 49),
    ("MPI_Cartdim_get", 3, 50),
    ("MPI_Comm_compare", 3, 29),
    ("MPI_Comm_create", 3, 21),
    ("MPI_Comm_create_group", 3, 213),
    ("MPI_Comm_dup", 3, 22),
    ("MPI_Comm_dup_with_info", 3, 211),
    ("MPI_Comm_free", 3, 25),
    ("MPI_Comm_group", 3, 24),
    ("MPI_Comm_rank", 3, 19),
    ("MPI_Comm_remote_group", 3, 26),
    ("MPI_Comm_remote_size", 3, 27),
    ("MPI_Comm_size", 3, 20),
    ("MPI_Comm_spawn", 3, 151),
    ("MPI_Comm_spawn_multiple", 3, 152),
    ("MPI_Comm_split", 3, 23),
    ("MPI_Comm_split_type", 3, 194),
    ("MPI_Comm_test_inter", 3, 28),
    ("MPI_Compare_and_swap", 4, 185),
    ("MPI_Dims_create", 3, 51),
    ("MPI_Dist_graph_create", 3, 173),
    ("MPI_Dist_graph_create_adjacent", 3, 212),
    ("MPI_Errhandler_create", 3, 102),
    ("MPI_Errhandler_free", 3, 103),
    ("MPI_Errhandler_get", 3, 104),
    ("MPI_Errhandler_set", 3, 106),
    ("MPI_Error_class", 3, 101),
    ("MPI_Error_string", 3, 105),
    ("MPI_Exscan", 2, 214),
    ("MPI_Fetch_and_op", 4, 184),
    ("MPI_File_close", 5, 142),
    ("MPI_File_open", 5, 141),
    ("MPI_File_read", 5, 143),
    ("MPI_File_read_all", 5, 144),
    ("MPI_File_read_all_begin", 5, 197),
    ("MPI_File_read_all_end", 5, 198),
    ("MPI_File_read_at", 5, 147),
    ("MPI_File_read_at_all", 5, 148),
    ("MPI_File_read_at_all_begin", 5, 201),
    ("MPI_File_read_at_all_end", 5, 202),
    ("MPI_File_read_ordered", 5, 203),
    ("MPI_File_read_ordered_begin", 5, 204),
    ("MPI_File_read_ordered_end", 5, 205),
    ("MPI_File_read_shared", 5, 206),
    ("MPI_File_write", 5, 145),
    ("MPI_File_write_all", 5, 146),
    ("MPI_File_write_all_begin", 5, 195),
    ("MPI_File_write_all_end", 5, 196),
    ("MPI_File_write_at", 5, 149),
    ("MPI_File_write_at_all", 5, 150),
    ("MPI_File_write_at_all_begin", 5, 199),
    ("MPI_File_write_at_all_end", 5, 200),
    ("MPI_File_write_ordered", 5, 207),
    ("MPI_File_write_ordered_begin", 5, 208),
    ("MPI_File_write_ordered_end", 5, 209),
    ("MPI_File_write_shared", 5, 210),
    ("MPI_Finalize", 3, 32),
    ("MPI_Gather", 2, 13),
    ("MPI_Gatherv", 2, 14),
    ("MPI_Get", 4, 66),
    ("MPI_Get_accumulate", 4, 172),
    ("MPI_Get_count", 3, 118),
    ("MPI_Get_elements", 3, 119),
    ("MPI_Get_processor_name", 3, 107),
    ("MPI_Graph_create", 3, 54),
    ("MPI_Graph_get", 3, 52),
    ("MPI_Graph_map", 3, 53),
    ("MPI_Graph_neighbors", 3, 55),
    ("MPI_Graph_neighbors_count", 3, 57),
    ("MPI_Graphdims_get", 3, 56),
    ("MPI_Group_compare", 3, 95),
    ("MPI_Group_difference", 3, 84),
    ("MPI_Group_excl", 3, 85),
    ("MPI_Group_free", 3, 86),
    ("MPI_Group_incl", 3, 87),
    ("MPI_Group_intersection", 3, 88),
    ("MPI_Group_range_excl", 3, 90),
    ("MPI_Group_range_incl", 3, 91),
    ("MPI_Group_rank", 3, 89),
    ("MPI_Group_size", 3, 92),
    ("MPI_Group_translate_ranks", 3, 93),
    ("MPI_Group_union", 3, 94),
    ("MPI_Iallgather", 2, 160),
    ("MPI_Iallgatherv", 2, 161),
    ("MPI_Iallreduce", 2, 155),
    ("MPI_Ialltoall", 2, 158),
    ("MPI_Ialltoallv", 2, 159),
    ("MPI_Ialltoallw", 2, 171),
    ("MPI_Ibarrier", 2, 156),
    ("MPI_Ibcast", 2, 157),
    ("MPI_Ibsend", 1, 36),
    ("MPI_Iexscan", 2, 215),
    ("MPI_Igather", 2, 162),
    ("MPI_Igatherv", 2, 163),
    ("MPI_Improbe", 1, 191),
    ("MPI_Imrecv", 1, 193),
    ("MPI_Ineighbor_allgather", 2, 175),
    ("MPI_Ineighbor_allgatherv", 2, 177),
    ("MPI_Ineighbor_alltoall", 2, 179),
    ("MPI_Ineighbor_alltoallv", 2, 181),
    ("MPI_Ineighbor_alltoallw", 2, 183),
    ("MPI_Init", 3, 31),
    ("MPI_Initialized", 3, 108),
    ("MPI_Intercomm_create", 3, 96),
    ("MPI_Intercomm_merge", 3, 97),
    ("MPI_Iprobe", 1, 62),
    ("MPI_Irecv", 1, 4),
    ("MPI_Ireduce", 2, 154),
    ("MPI_Ireduce_scatter", 2, 166),
    ("MPI_Ireduce_scatter_block", 2, 169),
    ("MPI_Irsend", 1, 38),
    ("MPI_Iscan", 2, 167),
    ("MPI_Iscatter", 2, 164),
    ("MPI_Iscatterv", 2, 165),
    ("MPI_Isend", 1, 3),
    ("MPI_Issend", 1, 37),
    ("MPI_Keyval_create", 3, 99),
    ("MPI_Keyval_free", 3, 98),
    ("MPI_Mprobe", 1, 190),
    ("MPI_Mrecv", 1, 192),
    ("MPI_Neighbor_allgather", 2, 174),
    ("MPI_Neighbor_allgatherv", 2, 176),
    ("MPI_Neighbor_alltoall", 2, 178),
    ("MPI_Neighbor_alltoallv", 2, 180),
    ("MPI_Neighbor_alltoallw", 2, 182),
    ("MPI_Op_create", 3, 78),
    ("MPI_Op_free", 3, 79),
    ("MPI_Pack", 3, 76),
    ("MPI_Pack_size", 3, 120),
    ("MPI_Probe", 1, 61),
    ("MPI_Put", 4, 65),
    ("MPI_Recv", 1, 2),
    ("MPI_Recv_init", 1, 116),
    ("MPI_Reduce", 2, 9),
    ("MPI_Reduce_scatter", 2, 80),
    ("MPI_Reduce_scatter_block", 2, 168),
    ("MPI_Request_free", 3, 115),
    ("MPI_Request_get_status", 3, 153),
    ("MPI_Rsend", 1, 35),
    ("MPI_Rsend_init", 1, 121),
    ("MPI_Scan", 2, 30),
    ("MPI_Scatter", 2, 15),
    ("MPI_Scatterv", 2, 16),
    ("MPI_Send", 1, 1),
    ("MPI_Send_init", 1, 117),
    ("MPI_Sendrecv", 1, 41),
    ("MPI_Sendrecv_replace", 1, 42),
    ("MPI_Ssend", 1, 34),
    ("MPI_Ssend_init", 1, 122),
    ("MPI_Start", 3, 123),
    ("MPI_Startall", 3, 124),
    ("MPI_Test", 3, 39),
    ("MPI_Test_cancelled", 3, 127),
    ("MPI_Testall", 3, 125),
    ("MPI_Testany", 3, 126),
    ("MPI_Testsome", 3, 128),
    ("MPI_Topo_test", 3, 58),
    ("MPI_Type_commit", 3, 129),
    ("MPI_Type_contiguous", 3, 130),
    ("MPI_Type_extent", 3, 131),
    ("MPI_Type_free", 3, 132),
    ("MPI_Type_hindexed", 3, 133),
    ("MPI_Type_hvector", 3, 134),
    ("MPI_Type_indexed", 3, 135),
    ("MPI_Type_lb", 3, 136),
    ("MPI_Type_size", 3, 137),
    ("MPI_Type_struct", 3, 138),
    ("MPI_Type_ub", 3, 139),
    ("MPI_Type_vector", 3, 140),
    ("MPI_Unpack", 3, 77),
    ("MPI_Wait", 1, 5),
    ("MPI_Waitall", 1, 6),
    ("MPI_Waitany", 1, 59),
    ("MPI_Waitsome", 1, 60),
    ("MPI_Win_complete", 4, 69),
    ("MPI_Win_create", 4, 63),
    ("MPI_Win_fence", 4, 68),
    ("MPI_Win_flush", 4, 186),
    ("MPI_Win_flush_all", 4, 187),
    ("MPI_Win_flush_local", 4, 188),
    ("MPI_Win_flush_local_all", 4, 189),
    ("MPI_Win_free", 4, 64),
    ("MPI_Win_lock", 4, 74),
    ("MPI_Win_post", 4, 71),
    ("MPI_Win_start", 4, 70),
    ("MPI_Win_test", 4, 73),
    ("MPI_Win_unlock", 4, 75),
    ("MPI_Win_wait", 4, 72),
    ("MPI_Wtick", 3, 109),
    ("MPI_Wtime", 3, 110),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_sorted_and_numbered_once() {
        assert!(MPI_CALLS.windows(2).all(|w| w[0].0 < w[1].0));
        let mut numbers: Vec<(u8, u16)> = MPI_CALLS.iter().map(|c| (c.1, c.2)).collect();
        numbers.sort();
        numbers.dedup();
        assert_eq!(numbers.len(), MPI_CALLS.len());
    }

    #[test]
    fn calls_are_numbered_as_extrae_numbers_them() {
        assert_eq!(mpi_call("MPI_Send"), Some((50_000_001, 1)));
        assert_eq!(mpi_call("MPI_Bcast"), Some((50_000_002, 7)));
        assert_eq!(mpi_call("MPI_Init"), Some((50_000_003, 31)));
        assert_eq!(mpi_call("mpi_send"), None);
        assert_eq!(type_label(50_000_005), Some("MPI I/O"));
        assert_eq!(type_label(50_000_006), None);
        assert_eq!(collective_call("ALLREDUCE"), Some("MPI_Allreduce"));
        assert_eq!(
            collective_call("REDUCE_SCATTER"),
            Some("MPI_Reduce_scatter")
        );
        assert_eq!(collective_call("SEND"), None);
    }

    #[test]
    fn calls_agree_with_a_pcf_extrae_wrote() {
        let pcf = include_str!("../../../tests/data/paraver/extrae/prime_v0.pcf");
        let mut event_type = 0;
        let mut checked = 0;
        for line in pcf.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields[..] {
                [_, t, ..] if t.starts_with("5000000") => event_type = t.parse().unwrap(),
                [v, call] if call.starts_with("MPI_") => {
                    assert_eq!(
                        mpi_call(call),
                        Some((event_type, v.parse().unwrap())),
                        "{call}"
                    );
                    checked += 1;
                }
                _ => {}
            }
        }
        assert_eq!(checked, 6);
    }
}
