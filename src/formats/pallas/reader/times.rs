//! One event's timestamps searched without decoding them all: by
//! occurrence, or by time (a lossless trace's times never go back). A
//! search decodes the blocks it probes, keeping the last one and the
//! first value of each, so that searches near each other decode little.

use super::*;
use crate::formats::pallas::archive::{BlockHeader, VectorHeader};

/// An event's timestamp blocks, where each starts and its first value
/// once decoded, and the block decoded last with its values.
pub(super) struct EventTimes {
    blocks: Vec<BlockHeader>,
    starts: Vec<u64>,
    firsts: Vec<Option<u64>>,
    decoded: Option<usize>,
    values: Vec<u64>,
}

impl EventTimes {
    /// The timestamps `header` describes.
    pub(super) fn new(header: &VectorHeader) -> EventTimes {
        let starts = header.blocks.iter().scan(0u64, |at, block| {
            let start = *at;
            *at = at.saturating_add(block.size);
            Some(start)
        });
        EventTimes {
            starts: starts.collect(),
            firsts: vec![None; header.blocks.len()],
            blocks: header.blocks.clone(),
            decoded: None,
            values: Vec::new(),
        }
    }

    /// The time of occurrence `index`, if there is one.
    pub(super) fn at(
        &mut self,
        probe: (&DatFile, &mut BlockDecoder),
        index: u64,
    ) -> Result<Option<u64>> {
        let Some(b) = self.starts.partition_point(|&s| s <= index).checked_sub(1) else {
            return Ok(None);
        };
        let offset = index - self.starts[b];
        if offset >= self.blocks[b].size {
            return Ok(None);
        }
        Ok(self.block(probe, b)?.get(offset as usize).copied())
    }

    /// The time of the last occurrence, if there is one.
    pub(super) fn last(&mut self, probe: (&DatFile, &mut BlockDecoder)) -> Result<Option<u64>> {
        let (Some(&start), Some(block)) = (self.starts.last(), self.blocks.last()) else {
            return Ok(None);
        };
        match block.size.checked_sub(1) {
            Some(offset) => self.at(probe, start + offset),
            None => Ok(None),
        }
    }

    /// The values of block `b`, decoded.
    fn block(&mut self, (dat, decoder): (&DatFile, &mut BlockDecoder), b: usize) -> Result<&[u64]> {
        if self.decoded != Some(b) {
            self.decoded = None;
            decoder.decode(dat, &self.blocks[b], &mut self.values)?;
            self.decoded = Some(b);
            self.firsts[b] = self.values.first().copied();
        }
        Ok(&self.values)
    }

    /// How many occurrences come before time `t`: the last block whose
    /// first value is before `t`, by bisection on the first values, then
    /// that block's values before `t`.
    pub(super) fn count_before(
        &mut self,
        (dat, decoder): (&DatFile, &mut BlockDecoder),
        t: u64,
    ) -> Result<u64> {
        let (mut lo, mut hi) = (0, self.blocks.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let first = match self.firsts[mid] {
                Some(first) => Some(first),
                None => self.block((dat, decoder), mid)?.first().copied(),
            };
            match first {
                Some(first) if first < t => lo = mid + 1,
                _ => hi = mid,
            }
        }
        let Some(b) = lo.checked_sub(1) else {
            return Ok(0);
        };
        let before = self.block((dat, decoder), b)?.partition_point(|&v| v < t);
        Ok(self.starts[b] + before as u64)
    }
}
