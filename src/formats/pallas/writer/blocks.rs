//! OpenMP and thread blocks, their lock and task events, and MPI requests
//! as their own Pallas records (docs/formats.md, "Pallas", writing): the
//! rows whose `cat` and `name` are those the reader gives these records.

use super::super::RecordId;
use super::grammar::{too_deep, EventKey};
use super::rows::{canonical_u64, Given, Opener, Pushed, MAX_BLOCKS};
use super::PallasWriter;
use crate::error::Result;
use crate::model::record::{Record, ATTR_POSTS};

impl PallasWriter {
    /// An `enter` of an OpenMP or thread block, opened by record `opener`;
    /// a fork holds its thread count, the row's first attribute `nthreads`.
    pub(super) fn block_begin(&mut self, rec: &Record, opener: RecordId) -> Result<bool> {
        let t = self.thread(rec.loc)?;
        let time = self.in_order(t, rec.time)?;
        let depth = self.threads[t as usize].frames.len();
        if depth >= MAX_BLOCKS {
            return Err(too_deep(depth));
        }
        let forks = matches!(opener, RecordId::OmpFork | RecordId::ThreadFork);
        let nthreads = forks.then(|| {
            first_attr(rec, "nthreads")
                .and_then(|v| canonical_u64(&v))
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0)
        });
        let pushed = match nthreads {
            Some(n) => Pushed::of(rec, &[("nthreads", itoa::Buffer::new().format(n))]),
            None => Pushed::default(),
        };
        let given = Given {
            cat: rec.cat,
            name: rec.name,
            depth: Some(depth as u32),
            pushed,
            ..Given::default()
        };
        if !self.start_values(rec, &given)? {
            return Ok(false);
        }
        let payload = nthreads.map(u32::to_le_bytes);
        let key = EventKey::new(opener.number(), payload.as_ref().map_or(&[], |p| &p[..]));
        self.occur(t, key, time, (true, false))?;
        let frame = (rec.name, rec.cat, Opener::Block(opener));
        self.threads[t as usize].frames.push(frame);
        Ok(true)
    }

    /// An `event` of a lock, a task or an MPI request: its record, holding
    /// the lock's, task's or request's `id` where the record has one; a
    /// generic event when the record cannot hold the row's `id`.
    pub(super) fn block_event(&mut self, rec: &Record, record: RecordId) -> Result<bool> {
        use RecordId::*;
        let id = canonical_u64(&rec.id);
        let (payload, held) = match record {
            OmpAcquireLock | OmpReleaseLock | ThreadAcquireLock | ThreadReleaseLock => {
                match id.and_then(|i| u32::try_from(i).ok()) {
                    Some(i) => (u64::from(i).to_le_bytes(), 4),
                    None => return self.generic(rec),
                }
            }
            OmpTaskCreate | OmpTaskSwitch | OmpTaskComplete | MpiIsendComplete
            | MpiIrecvRequest => match id {
                Some(i) => (i.to_le_bytes(), 8),
                None => return self.generic(rec),
            },
            ThreadTaskCreate | ThreadTaskSwitch | ThreadTaskComplete => ([0; 8], 0),
            _ => return self.generic(rec),
        };
        let pushed = match record {
            MpiIrecvRequest => Pushed::of(rec, &[(ATTR_POSTS, "recv")]),
            _ => Pushed::default(),
        };
        let t = self.thread(rec.loc)?;
        let time = self.in_order(t, rec.time)?;
        let given = Given {
            cat: rec.cat,
            name: rec.name,
            id: held > 0,
            pushed,
            ..Given::default()
        };
        if !self.start_values(rec, &given)? {
            return Ok(false);
        }
        let key = EventKey::new(record.number(), &payload[..held]);
        self.occur(t, key, time, (false, false))?;
        Ok(true)
    }

    /// The record that closes a block `opened` opened, for a `leave` row: the
    /// one its first attribute `record` names (as the reader gives it), else
    /// the opener's own; and what the reader gives back beside.
    pub(super) fn block_end(rec: &Record, opened: RecordId) -> (EventKey, Pushed) {
        use RecordId::*;
        let named = first_attr(rec, "record")
            .and_then(|v| RecordId::from_name(&v))
            .filter(|r| r.closes_thread_block());
        let ender = named.unwrap_or(match opened {
            OmpFork => OmpJoin,
            ThreadFork => ThreadJoin,
            ThreadTeamBegin => ThreadTeamEnd,
            _ => ThreadEnd,
        });
        let pushed = Pushed::of(rec, &[("record", ender.name())]);
        (EventKey::new(ender.number(), &[]), pushed)
    }
}

/// The value of the row's first attribute, when it is named `key`.
fn first_attr(rec: &Record, key: &str) -> Option<String> {
    rec.attrs()
        .next()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}
