//! The thread model's events (OpenMP and thread forks, joins, teams), their
//! lock and task events, and MPI requests as their own Pallas records (docs/formats.md, "Pallas", writing): the
//! rows whose `cat` and `name` are those the reader gives these records.

use super::super::RecordId;
use super::grammar::EventKey;
use super::rows::{canonical_u64, Given, Pushed};
use super::PallasWriter;
use crate::error::Result;
use crate::model::record::{Record, ATTR_POSTS};

impl PallasWriter {
    /// An `event` of the thread model, a lock, a task or an MPI request:
    /// its record, holding a fork's thread count (the row's first attribute
    /// `nthreads`) or the lock's, task's or request's `id` where the record
    /// has one; a generic event when the record cannot hold the row's `id`.
    /// The thread model's records open and close no grammar block: they
    /// are events, and need not pair in the stream.
    pub(super) fn block_event(&mut self, rec: &Record, record: RecordId) -> Result<bool> {
        use RecordId::*;
        let id = canonical_u64(&rec.id);
        let nthreads = matches!(record, OmpFork | ThreadFork).then(|| {
            first_attr(rec, "nthreads")
                .and_then(|v| canonical_u64(&v))
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0)
        });
        let (payload, held) = match record {
            OmpFork | ThreadFork => (u64::from(nthreads.unwrap_or(0)).to_le_bytes(), 4),
            OmpJoin | ThreadJoin | ThreadTeamBegin | ThreadTeamEnd | ThreadBegin | ThreadEnd => {
                ([0; 8], 0)
            }
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
        let pushed = match (record, nthreads) {
            (MpiIrecvRequest, _) => Pushed::of(rec, &[(ATTR_POSTS, "recv")]),
            (_, Some(n)) => Pushed::of(rec, &[("nthreads", itoa::Buffer::new().format(n))]),
            _ => Pushed::default(),
        };
        let t = self.thread(rec.loc)?;
        let time = self.in_order(t, rec.time)?;
        let given = Given {
            cat: rec.cat,
            name: rec.name,
            id: held > 0 && nthreads.is_none(),
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
}

/// The value of the row's first attribute, when it is named `key`.
fn first_attr(rec: &Record, key: &str) -> Option<String> {
    rec.attrs()
        .next()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}
