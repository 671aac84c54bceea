//! Collective waits, from each participant's `coll` row as
//! `stages::collectives` annotates it once its instance is complete: the
//! last arrival (when and where) and the root's arrival.

use crate::model::record::{Record, Sym};

use super::p2p::WaitFinder;
use super::{Jump, Pattern, Tally, Wait};

/// How a collective operation makes its participants wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Everyone waits for the last (barriers, all-to-all, all-reduce...).
    NxN,
    /// Non-roots wait for the root (broadcast, scatter).
    OneToN,
    /// The root waits for the last non-root (reduce, gather).
    NToOne,
}

/// The shape of the operation `name` (OTF2's names, `MPI_` names in any
/// case), if it is one the patterns know.
fn shape(name: &str) -> Option<Shape> {
    let bare = name
        .strip_prefix("MPI_")
        .or_else(|| name.strip_prefix("mpi_"))
        .unwrap_or(name);
    let op = bare.to_ascii_uppercase();
    Some(match op.as_str() {
        "BARRIER"
        | "ALLGATHER"
        | "ALLGATHERV"
        | "ALLREDUCE"
        | "ALLTOALL"
        | "ALLTOALLV"
        | "ALLTOALLW"
        | "REDUCE_SCATTER"
        | "REDUCE_SCATTER_BLOCK" => Shape::NxN,
        "BCAST" | "SCATTER" | "SCATTERV" => Shape::OneToN,
        "REDUCE" | "GATHER" | "GATHERV" => Shape::NToOne,
        _ => return None,
    })
}

/// The attribute `key` of `rec` as a time.
fn time_attr(rec: &Record, key: &str) -> Option<i64> {
    rec.attr(key)?.parse().ok()
}

/// Counts the wait of one participant, bounded by its own extent; its
/// function is the frame open around it, else the operation.
pub fn participant(rec: &Record, frames: &WaitFinder, tally: &mut Tally) {
    let symbols = frames.symbols();
    let Some(shape) = shape(symbols.text(rec.name)) else {
        return;
    };
    let (Some(arrival), Some(last)) = (rec.time, time_attr(rec, "last_arrival")) else {
        return;
    };
    let last_loc = rec
        .attr("last_arrival_loc")
        .map_or(Sym::EMPTY, |l| symbols.intern(&l));
    let root = time_attr(rec, "root_arrival");
    let is_root = rec.loc == rec.peer;
    let (pattern, until, waited_for) = match shape {
        Shape::NxN => (Pattern::WaitNxN, last, last_loc),
        Shape::OneToN if !is_root => match root {
            Some(root) => (Pattern::LateBroadcast, root, rec.peer),
            None => return,
        },
        Shape::NToOne if is_root => (Pattern::EarlyReduce, last, last_loc),
        _ => return,
    };
    let extent = rec.end.unwrap_or(arrival).saturating_sub(arrival);
    let time = until.saturating_sub(arrival).min(extent);
    let name = match frames.top(rec.loc) {
        Some((name, enter)) if enter <= arrival => name,
        _ => rec.name,
    };
    if time > 0 {
        tally.jump(Jump {
            waiter: rec.loc,
            to: waited_for,
            at: until,
        });
    }
    tally.add(Wait {
        pattern,
        waiter: rec.loc,
        name,
        waited_for,
        time,
    });
}
