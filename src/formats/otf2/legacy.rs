//! What archives of OTF2 1.x write differently, turned into what 2.x and
//! 3.x write (docs/otf2.md, "Versions"). The library only ever appended
//! fields, so an older record is a prefix of a newer one: where the fields
//! added later are absent, their values follow from the field they
//! replaced, as the library's own readers derive them.

/// OTF2's region roles and paradigms used below (`OTF2_RegionRole`,
/// `OTF2_Paradigm`; `model::hpc` names them).
mod n {
    pub const ROLE_FUNCTION: u8 = 1;
    pub const ROLE_LOOP: u8 = 3;
    pub const ROLE_CODE: u8 = 4;
    pub const ROLE_FILE_IO: u8 = 27;
    pub const USER: u8 = 1;
    pub const OPENMP: u8 = 3;
    pub const MPI: u8 = 4;
}

/// The region role and paradigm of a Region of OTF2 1.0, which has only a
/// region type (`OTF2_RegionType`, removed in 1.1); unknown types give
/// role and paradigm 0 (unknown).
pub fn region_role_and_paradigm(region_type: u8) -> (u8, u8) {
    use n::*;
    match region_type {
        1 | 3 => (ROLE_FUNCTION, 0),
        2 => (ROLE_LOOP, USER),
        4 => (ROLE_FILE_IO, USER),
        5..=21 => (OMP_ROLES[(region_type - 5) as usize], OPENMP),
        // MPI collectives: BARRIER (15), then COLL_ONE2ALL (23) to
        // COLL_OTHER (26).
        22 => (15, MPI),
        23..=26 => (region_type, MPI),
        27..=29 => (ROLE_CODE, USER),
        30 | 32 => (ROLE_LOOP, USER),
        31 => (ROLE_FUNCTION, USER),
        // OMP_TASK_CREATE, OMP_ORDERED, OMP_ORDERED_SBLOCK.
        33 => (21, OPENMP),
        34 => (18, OPENMP),
        35 => (19, OPENMP),
        _ => (0, 0),
    }
}

/// Roles of OTF2 1.0's OpenMP region types 5 to 21, in their order.
const OMP_ROLES: [u8; 17] = [
    5,  // PARALLEL
    3,  // LOOP
    6,  // SECTIONS
    7,  // SECTION
    8,  // WORKSHARE
    9,  // SINGLE
    11, // MASTER
    12, // CRITICAL
    14, // ATOMIC
    15, // BARRIER
    16, // IMPLICIT_BARRIER
    17, // FLUSH
    13, // CRITICAL_SBLOCK
    10, // SINGLE_SBLOCK
    2,  // WRAPPER
    20, // TASK
    22, // TASK_WAIT
];

/// The group type and paradigm of a Group of OTF2 1.0 or 1.1, which has
/// only the type of before 1.2 (`OTF2_GroupTypePre12`).
pub fn group_type_and_paradigm(pre_1_2: u8) -> (u8, u8) {
    match pre_1_2 {
        // Locations, regions, metrics: the same numbers, no paradigm.
        1..=3 => (pre_1_2, 0),
        // An MPI group of ranks (COMM_GROUP), MPI_COMM_SELF (COMM_SELF),
        // the locations of MPI_COMM_WORLD by rank (COMM_LOCATIONS).
        4 => (5, n::MPI),
        5 => (6, n::MPI),
        6 => (4, n::MPI),
        _ => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hpc::{paradigm_name, REGION_ROLES};

    fn region(t: u8) -> (&'static str, String) {
        let (role, paradigm) = region_role_and_paradigm(t);
        (REGION_ROLES[role as usize], paradigm_name(paradigm))
    }

    #[test]
    fn region_types_of_otf2_1_0_become_roles_and_paradigms() {
        assert_eq!(region(0), ("UNKNOWN", "UNKNOWN".into()));
        assert_eq!(region(1), ("FUNCTION", "UNKNOWN".into()));
        assert_eq!(region(4), ("FILE_IO", "USER".into()));
        assert_eq!(region(5), ("PARALLEL", "OPENMP".into()));
        assert_eq!(region(6), ("LOOP", "OPENMP".into()));
        assert_eq!(region(11), ("MASTER", "OPENMP".into()));
        assert_eq!(region(14), ("BARRIER", "OPENMP".into()));
        assert_eq!(region(15), ("IMPLICIT_BARRIER", "OPENMP".into()));
        assert_eq!(region(17), ("CRITICAL_SBLOCK", "OPENMP".into()));
        assert_eq!(region(18), ("SINGLE_SBLOCK", "OPENMP".into()));
        assert_eq!(region(19), ("WRAPPER", "OPENMP".into()));
        assert_eq!(region(21), ("TASK_WAIT", "OPENMP".into()));
        assert_eq!(region(22), ("BARRIER", "MPI".into()));
        assert_eq!(region(23), ("COLL_ONE2ALL", "MPI".into()));
        assert_eq!(region(26), ("COLL_OTHER", "MPI".into()));
        assert_eq!(region(28), ("CODE", "USER".into()));
        assert_eq!(region(31), ("FUNCTION", "USER".into()));
        assert_eq!(region(32), ("LOOP", "USER".into()));
        assert_eq!(region(33), ("TASK_CREATE", "OPENMP".into()));
        assert_eq!(region(35), ("ORDERED_SBLOCK", "OPENMP".into()));
        assert_eq!(region(36), ("UNKNOWN", "UNKNOWN".into()));
    }

    #[test]
    fn group_types_before_1_2_become_types_and_paradigms() {
        assert_eq!(group_type_and_paradigm(1), (1, 0));
        assert_eq!(group_type_and_paradigm(4), (5, 4));
        assert_eq!(group_type_and_paradigm(5), (6, 4));
        assert_eq!(group_type_and_paradigm(6), (4, 4));
        assert_eq!(group_type_and_paradigm(9), (0, 0));
    }
}
