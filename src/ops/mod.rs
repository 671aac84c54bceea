//! Operations on record streams: merging, span building, filtering, windows.
//! Commands wire these; they do not reimplement them.

pub mod filter;
pub mod matcher;
pub mod merge;
pub mod reorder;
pub mod spans;
pub mod window;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use crate::error::{Error, Location, Result};
use crate::format::{RecordSink, RecordSource};
use crate::io::Progress;
use crate::record::Record;
use crate::stream::batch::RecordBatch;

/// Moves every record from `source` into `sink`, then finishes the sink.
///
/// The sink runs on a second thread: records cross in [`RecordBatch`]es, so
/// reading (parsing, simulating) and writing (encoding, matching) use a core
/// each. Errors a sink raises about a record get the source position of that
/// record; errors raised at the end name the source.
pub fn pump(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut Progress,
) -> Result<()> {
    /// Records per batch: large enough to make the hand-over rare, small
    /// enough to stay in the cache.
    const BATCH: usize = 2048;
    /// Batches filled ahead of the writer.
    const AHEAD: usize = 4;
    let (full_tx, full_rx) = mpsc::sync_channel::<RecordBatch>(AHEAD);
    let (empty_tx, empty_rx) = mpsc::channel::<RecordBatch>();
    // Set when reading fails: the writer then writes what it was given but
    // does not finish the output as if the input were complete.
    let read_failed = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        let read_failed = &read_failed;
        let write = move || -> std::result::Result<(), (Error, u64)> {
            let mut rec = Record::default();
            let mut index = 0u64;
            for mut batch in full_rx {
                let mut rows = batch.reader();
                while rows.next_into(&mut rec) {
                    sink.write(&rec).map_err(|e| (e, index))?;
                    index += 1;
                }
                batch.clear();
                // The reader may have stopped early (its own error).
                let _ = empty_tx.send(batch);
            }
            if read_failed.load(Ordering::Acquire) {
                return Ok(());
            }
            sink.finish().map_err(|e| (e, u64::MAX))
        };
        let writer = std::thread::Builder::new()
            .name("writer".into())
            .spawn_scoped(scope, write)
            .expect("a thread can be started");
        // Marks of the records sent and not yet written, oldest first, so an
        // error about one of them can be located.
        let mut marks: VecDeque<u64> = VecDeque::new();
        let mut written = 0u64;
        let mut rec = Record::default();
        let mut batch = RecordBatch::new();
        let read = loop {
            match source.next_record(&mut rec) {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
            batch.push(&rec);
            marks.push_back(source.mark());
            progress.tick();
            if batch.len() >= BATCH {
                let next = match empty_rx.try_recv() {
                    Ok(b) => {
                        // A returned batch: its records are written.
                        written += BATCH as u64;
                        marks.drain(..BATCH);
                        b
                    }
                    Err(_) => RecordBatch::new(),
                };
                if full_tx.send(std::mem::replace(&mut batch, next)).is_err() {
                    break Ok(()); // the writer failed; its error follows
                }
            }
        };
        if read.is_err() {
            read_failed.store(true, Ordering::Release);
        } else if !batch.is_empty() {
            let _ = full_tx.send(batch);
        }
        drop(full_tx);
        let written_result = writer.join().expect("the writer thread does not panic");
        (read, written_result, marks, written)
    });
    let (read, written_result, marks, written) = outcome;
    read?;
    progress.finish();
    match written_result {
        Ok(()) => Ok(()),
        Err((e, u64::MAX)) => {
            let at = match source.location() {
                Location::Line { file, .. }
                | Location::Offset { file, .. }
                | Location::File(file) => Location::File(format!("{file}: at end of input")),
            };
            Err(e.at(at))
        }
        Err((e, index)) => {
            let at = match index
                .checked_sub(written)
                .and_then(|i| marks.get(i as usize))
            {
                Some(&mark) => source.locate(mark),
                None => source.location(),
            };
            Err(e.at(at))
        }
    }
}
