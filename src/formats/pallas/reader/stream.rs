//! A trace tracepipe wrote from a stream (`-t pallas`; its main file's
//! metadata has `tracepipe.stream`) is read back as that stream: threads
//! and processes named by their locations, the stream's `container` and
//! `type` rows instead of the trace's hierarchy, regions' `cat`, columns
//! kept in `tracepipe.COLUMN` attributes, rows kept whole in
//! `tracepipe.row`, and frames left open as the stream left them.

use std::collections::VecDeque;

use super::super::writer::{CAT_KEY, HEAD_KEY, LOC_KEY, STREAM_KEY};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::formats::stream::jsonl;
use crate::model::record::{ColumnSet, Record, COLUMN_ATTR, ROW_ATTR};
use crate::model::symbol::SymCache;

/// What a trace written from a stream says beside its records.
#[derive(Debug, Default)]
pub struct Restore {
    /// Each region's `cat`.
    pub cats: FastMap<u32, String>,
    /// The locations with no thread (named only as peers), by id.
    pub locs: FastMap<u32, String>,
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
