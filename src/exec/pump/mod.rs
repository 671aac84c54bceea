//! Driving a source into a sink, on one core or two.
//!
//! With two threads the sink (the writer and the stages in front of it) runs
//! on a second thread and records cross in [`RecordBatch`]es; stages that
//! shrink the stream wrap the source instead, so the rows they drop never
//! cross. A writer that copies the lines its source read (a TSV writer
//! after a TSV reader) stays on the reading thread: handing a line over costs
//! what copying it does. Which way a command goes follows from the shape of
//! the pipeline alone, never from timing.

use std::collections::VecDeque;
use std::sync::mpsc;

use crate::error::{Error, Location, Result};
use crate::exec::batch::RecordBatch;
use crate::model::record::Record;
use crate::pipe::{Demand, RecordSink, RecordSource};

/// Records per batch handed to the writer thread: enough to make the hand-over
/// rare, few enough to stay in the cache.
const BATCH: usize = 2048;
/// Batches filled ahead of the writer.
const AHEAD: usize = 4;

pub use crate::pipe::Threads;

/// Rows between two calls of the progress callback.
pub const PROGRESS_EVERY: u64 = 65_536;

/// Moves every record from `source` into `sink`, then finishes the sink,
/// using threads as `threads` says; `progress` hears the number of rows read
/// every [`PROGRESS_EVERY`] rows, and once with `None` at the end.
///
/// Errors a sink raises about a record get the source position of that
/// record; errors raised at the end name the source.
pub fn pump(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
    threads: Threads,
) -> Result<()> {
    let reads = sink.reads();
    let supply = source.agree(Demand::reading(reads));
    // Lines copied as read cost no more to write than to hand to a second
    // thread: the writer has a thread of its own only when it encodes.
    let copies = reads.raw_line_alone() && supply.raw_lines;
    match threads.parallel() && !copies {
        true => parallel(source, sink, progress)?,
        false => serial(source, sink, progress)?,
    }
    progress(None);
    let at = Location::File(format!("{}: at end of input", source.location().file()));
    sink.finish().map_err(|e| e.at(at))
}

/// Moves every record on this thread.
fn serial(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
) -> Result<()> {
    let mut rec = Record::default();
    let mut rows = 0u64;
    while source.next_record(&mut rec)? {
        let written = match source.raw_line() {
            Some(raw) => sink.write_raw(&rec, raw),
            None => sink.write(&rec),
        };
        written.map_err(|e| e.at(source.locate(source.mark())))?;
        rows += 1;
        if rows % PROGRESS_EVERY == 0 {
            progress(Some(rows));
        }
    }
    Ok(())
}

/// Moves every record with the sink on a second thread.
fn parallel(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
) -> Result<()> {
    let (full_tx, full_rx) = mpsc::sync_channel::<RecordBatch>(AHEAD);
    let (empty_tx, empty_rx) = mpsc::channel::<RecordBatch>();
    // A sink that wants raw lines alone gets them so, when the source has.
    let raw_only = sink.reads().raw_line_alone();
    let (read, written) = std::thread::scope(|scope| {
        let writer = std::thread::Builder::new()
            .name("writer".into())
            .spawn_scoped(scope, move || write_batches(full_rx, empty_tx, sink));
        let writer = match writer {
            Ok(writer) => writer,
            Err(e) => {
                let failed = Err((Error::io("starting the writer thread", e), None));
                return (Ok(()), failed);
            }
        };
        let mut sent = Sent::default();
        let read = send_batches(source, (full_tx, empty_rx), progress, raw_only, &mut sent);
        let written = writer.join().expect("the writer thread does not panic");
        // Locate a write error by the mark of the row it is about.
        (read, written.map_err(|(e, index)| (e, sent.mark_of(index))))
    });
    if let Err((e, mark)) = written {
        let at = match mark {
            Some(mark) => source.locate(mark),
            None => source.location(),
        };
        return Err(e.at(at));
    }
    read
}

/// The rows sent to the writer and not yet known to be written, by their
/// marks, oldest first, so an error about one of them can be located.
#[derive(Default)]
struct Sent {
    marks: VecDeque<u64>,
    /// Rows known to be written (their batches came back).
    acknowledged: u64,
}

impl Sent {
    /// The mark of the row at `index` in the order sent, if still known.
    fn mark_of(&self, index: u64) -> Option<u64> {
        let i = index.checked_sub(self.acknowledged)?;
        self.marks.get(usize::try_from(i).ok()?).copied()
    }
}

/// The reading side: packs the source's rows into batches for the writer,
/// taking back the batches it is done with; rows read before a read error
/// are sent all the same.
fn send_batches(
    source: &mut dyn RecordSource,
    (full_tx, empty_rx): (mpsc::SyncSender<RecordBatch>, mpsc::Receiver<RecordBatch>),
    progress: &mut dyn FnMut(Option<u64>),
    raw_only: bool,
    sent: &mut Sent,
) -> Result<()> {
    let mut rec = Record::default();
    let mut batch = RecordBatch::new();
    let mut rows = 0u64;
    let read = loop {
        match source.next_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
        match source.raw_line().filter(|_| raw_only) {
            Some(raw) => batch.push_raw(raw),
            None => batch.push(&rec),
        }
        sent.marks.push_back(source.mark());
        rows += 1;
        if rows % PROGRESS_EVERY == 0 {
            progress(Some(rows));
        }
        if batch.len() >= BATCH {
            let next = match empty_rx.try_recv() {
                Ok(b) => {
                    // A returned batch: its records are written.
                    sent.acknowledged += BATCH as u64;
                    sent.marks.drain(..BATCH);
                    b
                }
                Err(_) => RecordBatch::new(),
            };
            if full_tx.send(std::mem::replace(&mut batch, next)).is_err() {
                break Ok(()); // the writer failed; its error follows
            }
        }
    };
    if !batch.is_empty() {
        let _ = full_tx.send(batch);
    }
    read
}

/// The writing side: writes each batch's rows into the sink and gives the
/// batch back; an error comes with the index of its row in the order sent.
fn write_batches(
    full_rx: mpsc::Receiver<RecordBatch>,
    empty_tx: mpsc::Sender<RecordBatch>,
    sink: &mut (dyn RecordSink + Send),
) -> std::result::Result<(), (Error, u64)> {
    let mut rec = Record::default();
    let mut index = 0u64;
    for mut batch in full_rx {
        let mut rows = batch.reader();
        while let Some(raw) = rows.next_entry(&mut rec) {
            let written = match raw {
                Some(raw) => sink.write_raw(&rec, raw),
                None => sink.write(&rec),
            };
            written.map_err(|e| (e, index))?;
            index += 1;
        }
        batch.clear();
        // The reader may have stopped (the end of its stretch).
        let _ = empty_tx.send(batch);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Kind;

    /// Events numbered by their time; the record at index i is "line" i + 1.
    struct Numbers {
        next: u64,
        count: u64,
    }

    impl RecordSource for Numbers {
        fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
            if self.next == self.count {
                return Ok(false);
            }
            self.next += 1;
            rec.clear();
            rec.kind = Kind::Event;
            rec.time = Some(self.next as i64);
            Ok(true)
        }
        fn mark(&self) -> u64 {
            self.next
        }
        fn locate(&self, line: u64) -> Location {
            Location::Line {
                file: "numbers".into(),
                line,
            }
        }
        crate::whole_rows!();
    }

    /// Keeps the numbers it sees; fails on `bad`.
    #[derive(Default)]
    struct Collect {
        seen: Vec<u64>,
        bad: Option<u64>,
        finished: bool,
    }

    impl RecordSink for Collect {
        fn write(&mut self, rec: &Record) -> Result<()> {
            let n = rec.time.unwrap() as u64;
            if Some(n) == self.bad {
                return Err(Error::Record(format!("bad row {n}")));
            }
            self.seen.push(n);
            Ok(())
        }
        fn finish(&mut self) -> Result<()> {
            self.finished = true;
            Ok(())
        }
    }

    fn progress() -> impl FnMut(Option<u64>) {
        |_| {}
    }

    #[test]
    fn every_record_arrives_once_in_order() {
        for count in [0, 1, BATCH as u64, 3 * BATCH as u64 + 7] {
            for threads in [Threads::ONE, Threads::new(2), Threads::new(3)] {
                let mut source = Numbers { next: 0, count };
                let mut sink = Collect::default();
                pump(&mut source, &mut sink, &mut progress(), threads).unwrap();
                assert!(sink.finished);
                assert!(sink.seen.iter().copied().eq(1..=count), "{count}");
            }
        }
    }

    #[test]
    fn a_sink_error_on_the_second_thread_names_its_record() {
        // Far behind the reader: the writer lags by up to AHEAD batches.
        for bad in [1, 2, BATCH as u64, BATCH as u64 + 1, 5 * BATCH as u64 + 3] {
            let mut source = Numbers {
                next: 0,
                count: 20 * BATCH as u64,
            };
            let mut sink = Collect {
                bad: Some(bad),
                ..Collect::default()
            };
            let err = parallel(&mut source, &mut sink, &mut progress()).unwrap_err();
            assert_eq!(err.to_string(), format!("numbers:{bad}: bad row {bad}"));
            assert!(sink.seen.iter().copied().eq(1..bad));
        }
    }
}
