//! A location's local definitions (`NAME/LOC.def`): the mapping tables
//! that turn the references its events use into global ones, and the clock
//! offsets that correct its timestamps. Other local records (the local
//! definitions a measurement system unifies) are skipped.

use super::buffer::Otf2Read;
use super::defs::for_each_record;
use crate::bytes::Bytes;
use crate::error::Result;
use crate::fasthash::FastMap;

const MAPPING_TABLE: u8 = 5;
const CLOCK_OFFSET: u8 = 6;

/// Kinds of references a mapping table maps (OTF2's `OTF2_MappingType`).
pub const MAPPING_KINDS: usize = 15;

/// Local id → global id for one kind of reference.
#[derive(Debug, Clone)]
pub enum IdMap {
    /// Local id i maps to `globals[i]`.
    Dense(Vec<u64>),
    /// Pairs; ids not listed map to themselves.
    Sparse(FastMap<u64, u64>),
}

impl IdMap {
    /// The global id of `local`; an id the table does not list stays as it
    /// is (as the OTF2 library does).
    pub fn map(&self, local: u64) -> u64 {
        match self {
            IdMap::Dense(v) => usize::try_from(local)
                .ok()
                .and_then(|i| v.get(i))
                .copied()
                .unwrap_or(local),
            IdMap::Sparse(m) => m.get(&local).copied().unwrap_or(local),
        }
    }
}

/// A stretch of the location's clock: from `begin` on, `offset` ticks are
/// added, growing by `slope` per tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockInterval {
    /// Tick it starts at (its first clock offset's time).
    pub begin: u64,
    /// Tick it ends at (the next offset's time).
    pub end: u64,
    /// Ticks added at `begin`.
    pub offset: i64,
    /// Ticks added per tick from `begin`.
    pub slope: f64,
}

/// What a location's local definitions say.
#[derive(Debug, Clone, Default)]
pub struct Local {
    /// By OTF2 mapping type.
    pub maps: [Option<IdMap>; MAPPING_KINDS],
    /// Clock intervals in time order (empty: times are not corrected).
    pub clock: Vec<ClockInterval>,
}

impl Local {
    /// Reads a local definitions file.
    pub fn parse(file: &str, data: &[u8], chunk_size: u64) -> Result<Local> {
        let mut local = Local::default();
        let mut offsets: Vec<(u64, i64)> = Vec::new();
        for_each_record(file, data, chunk_size, |kind, b| {
            match kind {
                MAPPING_TABLE => {
                    let at = b.offset();
                    let kind = b.u8("mapping type")? as usize;
                    let map = id_map(b)?;
                    match local.maps.get_mut(kind) {
                        Some(slot) => *slot = Some(map),
                        None => return Err(b.error_at(at, format!("unknown mapping type {kind}"))),
                    }
                }
                CLOCK_OFFSET => {
                    let time = b.u64("clock offset time")?;
                    let offset = b.i64c("clock offset")?;
                    offsets.push((time, offset));
                }
                _ => {}
            }
            Ok(())
        })?;
        local.clock = intervals(&offsets);
        Ok(local)
    }

    /// Applies the mapping table of `kind` to `local`.
    #[inline]
    pub fn map(&self, kind: usize, local: u64) -> u64 {
        match &self.maps[kind] {
            Some(m) => m.map(local),
            None => local,
        }
    }
}

fn id_map(b: &mut Bytes) -> Result<IdMap> {
    let at = b.offset();
    let size = b.u64c("mapping table size")?;
    let mode = b.u8("mapping table mode")?;
    match mode {
        0 => {
            let n = b.check_count(at, size, "mapping table size", 1)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(b.u64c("global id")?);
            }
            Ok(IdMap::Dense(v))
        }
        1 => {
            let n = b.check_count(at, size, "mapping table size", 2)?;
            let mut m = FastMap::default();
            m.reserve(n);
            for _ in 0..n {
                let local = b.u64c("local id")?;
                m.insert(local, b.u64c("global id")?);
            }
            Ok(IdMap::Sparse(m))
        }
        m => Err(b.error_at(at, format!("unknown mapping table mode {m}"))),
    }
}

/// The clock intervals between consecutive offsets. Times before the first
/// offset use the first interval and times after the last the last one,
/// extrapolated, as the OTF2 library does; one offset alone makes no
/// interval, and the library corrects nothing then (otf2-print shows the
/// times as stored).
fn intervals(offsets: &[(u64, i64)]) -> Vec<ClockInterval> {
    offsets
        .windows(2)
        .map(|w| {
            let ((t0, o0), (t1, o1)) = (w[0], w[1]);
            let span = t1.wrapping_sub(t0) as f64;
            // The offsets' difference is taken exactly before it becomes a
            // double, as the library takes it: offsets beyond 2^53 ticks
            // (Score-P's GHz clocks) would otherwise lose their low bits.
            let rise = o1.wrapping_sub(o0) as f64;
            let slope = if span > 0.0 { rise / span } else { 0.0 };
            ClockInterval {
                begin: t0,
                end: t1,
                offset: o0,
                slope,
            }
        })
        .collect()
}

/// Corrects `time` with the interval `intervals[*at]` or a later one (times
/// come in order, so the search resumes where it stopped).
#[inline]
pub fn correct(intervals: &[ClockInterval], at: &mut usize, time: u64) -> u64 {
    let Some(mut i) = intervals.get(*at) else {
        return time;
    };
    while time > i.end && *at + 1 < intervals.len() {
        *at += 1;
        i = &intervals[*at];
    }
    let diff = if time >= i.begin {
        (time - i.begin) as f64
    } else {
        -((i.begin - time) as f64)
    };
    // Rounded half to even, as the library's rint() does.
    let offset = i
        .offset
        .wrapping_add((i.slope * diff).round_ties_even() as i64);
    time.wrapping_add(offset as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_offsets_interpolate_and_extrapolate_as_the_library_does() {
        // Offsets +5 at tick 100 and -15 at tick 200; otf2-print shows
        // 50 → 65, 150 → 145, 175 → 165, 300 → 265.
        let iv = intervals(&[(100, 5), (200, -15)]);
        let mut at = 0;
        let got: Vec<u64> = [50, 150, 175, 300]
            .iter()
            .map(|&t| correct(&iv, &mut at, t))
            .collect();
        assert_eq!(got, [65, 145, 165, 265]);
        // One offset alone corrects nothing (python3-otf2 writes it,
        // otf2-print shows 1000 as 1000).
        let one = intervals(&[(10, -3)]);
        assert_eq!(correct(&one, &mut 0, 1000), 1000);
        assert_eq!(correct(&[], &mut 0, 1000), 1000);
        // Offsets beyond 2^53 ticks: their difference is exact. 4.5e16 and
        // 4.5e16 + 2 143 822 over 1e9 ticks, half way: + 1 071 911.
        let big = 0xa0_91d0_7bce_f758_i64;
        let iv = intervals(&[(0, big), (1_000_000_000, big + 2_143_822)]);
        let want = 500_000_000 + big as u64 + 1_071_911;
        assert_eq!(correct(&iv, &mut 0, 500_000_000), want);
    }

    #[test]
    fn mapping_tables_map_listed_ids_and_keep_the_others() {
        let dense = IdMap::Dense(vec![5, 6]);
        assert_eq!((dense.map(1), dense.map(9)), (6, 9));
        let sparse = IdMap::Sparse([(7, 2)].into_iter().collect());
        assert_eq!((sparse.map(7), sparse.map(8)), (2, 8));
    }
}
