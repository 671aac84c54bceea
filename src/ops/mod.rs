//! Operations on record streams: merging, span building, filtering, windows.
//! Commands wire these; they do not reimplement them.

pub mod filter;
pub mod matcher;
pub mod merge;
pub mod reorder;
pub mod spans;
pub mod window;

use crate::error::{Location, Result};
use crate::format::{RecordSink, RecordSource};
use crate::io::Progress;
use crate::record::Record;

/// Moves every record from `source` into `sink`, then finishes the sink.
///
/// Errors a sink raises about a record get the source position of that record;
/// errors raised at the end name the source.
pub fn pump(
    source: &mut dyn RecordSource,
    sink: &mut dyn RecordSink,
    progress: &mut Progress,
) -> Result<()> {
    let mut rec = Record::default();
    while source.next_record(&mut rec)? {
        sink.write(&rec).map_err(|e| e.at(source.location()))?;
        progress.tick();
    }
    progress.finish();
    let at = match source.location() {
        Location::Line { file, .. } | Location::Offset { file, .. } | Location::File(file) => {
            Location::File(format!("{file}: at end of input"))
        }
    };
    sink.finish().map_err(|e| e.at(at))
}
