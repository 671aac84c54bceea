//! A trace tracepipe wrote from a stream (`-t pallas`; its main file's
//! metadata has `tracepipe.stream`) is read back as that stream: threads
//! and processes named by their locations, the stream's `container` and
//! `type` rows instead of the trace's hierarchy, regions' `cat`, columns
//! kept in `tracepipe.COLUMN` attributes, rows kept whole in
//! `tracepipe.row`, and frames left open as the stream left them.

use std::collections::VecDeque;

use super::super::writer::{CAT_KEY, HEAD_KEY, LEAD_KEY, LOC_KEY, STREAM_KEY};
use super::super::RecordId;
use super::{Scope, ThreadSource};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::formats::stream::jsonl;
use crate::model::record::{Column, ColumnSet, Record, COLUMN_ATTR, ROW_ATTR};
use crate::model::symbol::SymCache;

/// What a trace written from a stream says beside its records.
#[derive(Debug, Default)]
pub struct Restore {
    /// Each region's `cat`.
    pub cats: FastMap<u32, String>,
    /// The locations with no thread (named only as peers), by id.
    pub locs: FastMap<u32, String>,
    /// How far a row read back may begin before its event, if the writer
    /// said ([`LEAD_KEY`]).
    pub lead: Option<i64>,
}

impl Restore {
    /// The restoring a trace of `metadata` needs, if tracepipe wrote it
    /// from a stream; its `container` and `type` rows go to `head`.
    pub fn from_metadata(
        file: &str,
        metadata: &[(String, String)],
        head: &mut VecDeque<Record>,
        syms: &mut SymCache,
    ) -> Result<Option<Restore>> {
        if !metadata.iter().any(|(k, _)| k == STREAM_KEY) {
            return Ok(None);
        }
        let mut restore = Restore::default();
        for (k, v) in metadata {
            if k == HEAD_KEY {
                for line in v.lines().filter(|l| !l.is_empty()) {
                    let mut rec = Record::default();
                    jsonl::parse_line(line.as_bytes(), &mut rec, syms, ColumnSet::ALL)
                        .map_err(|e| Error::file(file, format!("{HEAD_KEY}: {e}")))?;
                    head.push_back(rec);
                }
            } else if let Some(r) = k.strip_prefix(CAT_KEY).and_then(|r| r.parse().ok()) {
                restore.cats.insert(r, v.clone());
            } else if let Some(id) = k.strip_prefix(LOC_KEY).and_then(|r| r.parse().ok()) {
                restore.locs.insert(id, v.clone());
            } else if k == LEAD_KEY {
                restore.lead = v.parse::<i64>().ok().map(|l| l.max(0));
            }
        }
        Ok(Some(restore))
    }
}

/// Whether metadata key `key` is tracepipe's (not shown as `meta`).
pub fn is_tracepipe_key(key: &str) -> bool {
    key.starts_with(COLUMN_ATTR)
}

/// Applies attribute `key`=`value` of an occurrence read back: a column, a
/// whole row, or (false) an attribute of the row's own.
pub fn apply(
    rec: &mut Record,
    key: &str,
    value: &str,
    syms: &mut SymCache,
) -> Result<bool, String> {
    if key == ROW_ATTR {
        rec.clear();
        jsonl::parse_line(value.as_bytes(), rec, syms, ColumnSet::ALL)
            .map_err(|e| format!("{ROW_ATTR}: {e}"))?;
        return Ok(true);
    }
    match key.strip_prefix(COLUMN_ATTR) {
        Some(column) => Ok(rec.set_column(column, value, syms.symbols())),
        None => Ok(false),
    }
}

/// What the events of a thread written from a stream keep beside what the
/// grammar shows.
#[derive(Debug, Default, Clone, Copy)]
pub struct Kept {
    /// Rows kept whole (`tracepipe.row`), which may be of any kind.
    pub whole_rows: bool,
    /// A frame's name, cat, time or end in an attribute.
    pub frame_columns: bool,
    /// Any row's time or end in an attribute: it may begin before its
    /// event.
    pub times: bool,
    /// A row's kind in an attribute: any event may be a message half.
    pub kinds: bool,
}

impl ThreadSource {
    /// What this thread's events keep beside the grammar (one look at
    /// each distinct event, none at an occurrence).
    pub(super) fn kept_beside_grammar(&self) -> Kept {
        let scope = self.names.scope();
        let mut kept = Kept::default();
        let times = ColumnSet::NONE.with(Column::Time).with(Column::End);
        let frame = times.with(Column::Name).with(Column::Cat);
        for event in self.events.file.events.iter().flatten() {
            let record = RecordId::from_number(event.record);
            let columns = kept_columns(&event.attributes, scope);
            let is_frame = matches!(record, Some(RecordId::Enter | RecordId::Leave));
            kept.frame_columns |= is_frame && columns.intersects(frame);
            kept.times |= columns.intersects(times);
            kept.kinds |= columns.contains(Column::Kind);
            let text = event.payload.get(..4);
            let text = text.map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
            kept.whole_rows |= record == Some(RecordId::Generic)
                && text.and_then(|s| scope.string(s)) == Some(ROW_ATTR);
        }
        kept
    }
}

/// The columns attribute lists `lists` set (`tracepipe.COLUMN`); every
/// column for a list it cannot walk.
pub(super) fn kept_columns(lists: &[u8], scope: Scope) -> ColumnSet {
    let read = |at: usize, n: usize| lists.get(at..at + n);
    let mut columns = ColumnSet::NONE;
    let mut at = 0;
    while at < lists.len() {
        let Some(size) = read(at + 4, 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize) else {
            return ColumnSet::ALL;
        };
        let Some(&count) = lists.get(at + 6) else {
            return ColumnSet::ALL;
        };
        let (end, mut pos) = (at + size, at + 7);
        for _ in 0..count {
            let Some(value) = read(pos, 6) else {
                return ColumnSet::ALL;
            };
            let value_size = u16::from_le_bytes([value[0], value[1]]) as usize;
            if value_size < 6 {
                return ColumnSet::ALL;
            }
            let r = u32::from_le_bytes(value[2..6].try_into().expect("4 bytes"));
            let name = scope.attribute(r).and_then(|d| scope.string(d.name));
            let column = name.and_then(|n| n.strip_prefix(COLUMN_ATTR));
            if let Some(c) = column.and_then(Column::from_name) {
                columns = columns.with(c);
            }
            pos += value_size;
        }
        if size < 7 || pos > end {
            return ColumnSet::ALL;
        }
        at = end;
    }
    columns
}
