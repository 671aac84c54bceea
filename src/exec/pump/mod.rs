//! Driving a source into a sink, on one thread or two.
//!
//! With more than one thread the sink (the writer and the stages in front
//! of it) runs on a thread of its own and records cross in
//! [`RecordBatch`]es over a bounded channel. Stages that
//! shrink the stream wrap the source instead, so the rows they drop never
//! cross. A writer that copies the lines its source read (a TSV writer
//! after a TSV reader) stays on the reading thread: handing a line over costs
//! what copying it does. Which way a command goes follows from the shape of
//! the pipeline alone, never from timing.

use std::collections::VecDeque;

use crossbeam_channel::{Receiver, Sender};

use crate::error::{Error, Location, Result};
use crate::exec::batch::RecordBatch;
use crate::model::record::Record;
use crate::pipe::{Demand, MakeEncoder, RecordSink, RecordSource};
use crate::pool::Pool;

mod encode;

/// Records per batch handed to the writer thread: enough to make the hand-over
/// rare, few enough to stay in the cache.
const BATCH: usize = 2048;
/// Batches filled ahead of the writer.
const AHEAD: usize = 4;

pub use crate::pool::Threads;

/// Rows between two calls of the progress callback.
pub const PROGRESS_EVERY: u64 = 65_536;

/// Moves every record from `source` into `sink`, then finishes the sink,
/// using the threads of `pool`; `progress` hears the number of rows read
/// every [`PROGRESS_EVERY`] rows, and once with `None` at the end. When the
/// sink copies lines the source does not have, `lines` makes what encodes
/// them on the pool's threads.
///
/// Errors a sink raises about a record get the source position of that
/// record; errors raised at the end name the source.
pub fn pump(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
    (pool, lines): (&Pool, MakeEncoder),
) -> Result<()> {
    let reads = sink.reads();
    let supply = source.agree(Demand::reading(reads));
    // Lines copied as read cost no more to write than to hand to another
    // thread; lines to encode are encoded as jobs and copied here; any
    // other writer has a thread of its own.
    match (
        pool.threads().parallel(),
        reads.raw_line_alone(),
        supply.raw_lines,
    ) {
        (false, _, _) | (true, true, true) => {
            serial(source, sink, progress, u64::MAX)?;
        }
        (true, true, false) if supply.encode_here => {
            serial(source, sink, progress, u64::MAX)?;
        }
        (true, true, false) => encode::encoded(source, sink, progress, (pool, lines))?,
        (true, false, _) => parallel(source, sink, progress)?,
    }
    finish(source, sink, progress)
}

/// Moves every record on this thread, whatever the pool: for a sink that
/// does less per row than handing the row to another thread costs (a
/// report, bench/stat.sh).
pub fn pump_here(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
) -> Result<()> {
    source.agree(Demand::reading(sink.reads()));
    serial(source, sink, progress, u64::MAX)?;
    finish(source, sink, progress)
}

/// Ends a pump: the progress line, and the sink finished (its error at the
/// end of the input).
fn finish(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
) -> Result<()> {
    progress(None);
    let at = Location::File(format!("{}: at end of input", source.location().file()));
    sink.finish().map_err(|e| e.at(at))
}

/// Moves records on this thread, at most `limit`; whether the source has
/// more.
fn serial(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
    limit: u64,
) -> Result<bool> {
    let mut rec = Record::default();
    let mut rows = 0u64;
    while rows < limit {
        if !source.next_record(&mut rec)? {
            return Ok(false);
        }
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
    Ok(true)
}

/// Moves every record with the sink on a thread of its own.
fn parallel(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
) -> Result<()> {
    let (full_tx, full_rx) = crossbeam_channel::bounded::<RecordBatch>(AHEAD);
    let (empty_tx, empty_rx) = crossbeam_channel::unbounded::<RecordBatch>();
    // A sink that wants raw lines alone gets them so, when the source has.
    let raw_only = sink.reads().raw_line_alone();
    let (read, written) = std::thread::scope(|scope| {
        let writer = std::thread::Builder::new()
            .name("writer".into())
            .spawn_scoped(scope, move || write_batches((full_rx, empty_tx), sink));
        let writer = match writer {
            Ok(writer) => writer,
            Err(e) => {
                let failed = Err((Error::io("starting the writer thread", e), None));
                return (Ok(()), failed);
            }
        };
        let mut sent = Sent::default();
        let ends = (full_tx, empty_rx);
        let read = send_batches(source, ends, progress, raw_only, &mut sent);
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
    (full_tx, empty_rx): (Sender<RecordBatch>, Receiver<RecordBatch>),
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
    (full_rx, empty_tx): (Receiver<RecordBatch>, Sender<RecordBatch>),
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
    use crate::pipe::LineEncoder;

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
        fn horizon(&self) -> Option<i64> {
            None
        }
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

    /// Encodes a row's time as its line; refuses `bad`; takes a
    /// millisecond on every `slow`-th row, so that batches finish out of
    /// turn.
    struct Times {
        bad: Option<i64>,
        slow: i64,
    }

    impl LineEncoder for Times {
        fn encode(&mut self, rec: &Record, line: &mut Vec<u8>) -> Result<()> {
            if rec.time.unwrap_or(0) % self.slow == 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            if rec.time == self.bad {
                return Err(Error::Record("cannot encode".into()));
            }
            line.extend_from_slice(format!("{}\n", rec.time.unwrap_or(0)).as_bytes());
            Ok(())
        }
    }

    /// Copies the lines it is given, and encodes a row given whole as
    /// [`Times`] does, but for `bad`, which it refuses.
    #[derive(Default)]
    struct CopyLines {
        out: Vec<u8>,
        bad: Option<i64>,
    }

    impl RecordSink for CopyLines {
        fn write(&mut self, rec: &Record) -> Result<()> {
            let time = rec.time.unwrap();
            if Some(time) == self.bad {
                return Err(Error::Record(format!("no line for {time}")));
            }
            self.write_raw(rec, time.to_string().as_bytes())
        }
        fn write_raw(&mut self, _: &Record, raw: &[u8]) -> Result<()> {
            self.out.extend_from_slice(raw);
            self.out.push(b'\n');
            Ok(())
        }
        fn finish(&mut self) -> Result<()> {
            Ok(())
        }
        fn reads(&self) -> crate::pipe::Reads {
            crate::pipe::Reads::RAW_LINE
        }
    }

    /// A sink that copies lines the source has not: encoded on the pool,
    /// in order, for every number of threads (by the sink on one); a row
    /// the encoder refuses reaches the sink whole, and its error names
    /// the row.
    #[test]
    fn lines_encoded_on_the_pool_arrive_in_order() {
        let count = 40 * BATCH as u64 + 5;
        let want: String = (1..=count).map(|n| format!("{n}\n")).collect();
        for threads in [1, 2, 3, 8] {
            let pool = Pool::new(Threads::new(threads));
            let mut source = Numbers { next: 0, count };
            let mut sink = CopyLines::default();
            let lines = || {
                Box::new(Times {
                    bad: None,
                    slow: 3001,
                }) as _
            };
            pump(&mut source, &mut sink, &mut progress(), (&pool, &lines)).unwrap();
            assert!(sink.out == want.as_bytes(), "{threads} threads");
            for bad in [1, BATCH as i64 + 1, count as i64] {
                let mut source = Numbers { next: 0, count };
                let mut sink = CopyLines {
                    bad: Some(bad),
                    ..CopyLines::default()
                };
                let lines = || {
                    Box::new(Times {
                        bad: Some(bad),
                        slow: 3001,
                    }) as _
                };
                let err = pump(&mut source, &mut sink, &mut progress(), (&pool, &lines));
                let err = err.unwrap_err().to_string();
                assert_eq!(err, format!("numbers:{bad}: no line for {bad}"));
                let before: String = (1..bad).map(|n| format!("{n}\n")).collect();
                assert!(sink.out == before.as_bytes(), "{threads} threads, {bad}");
            }
        }
    }

    #[test]
    fn every_record_arrives_once_in_order() {
        for count in [0, 1, BATCH as u64, 3 * BATCH as u64 + 7] {
            for threads in [Threads::ONE, Threads::new(2), Threads::new(3)] {
                let mut source = Numbers { next: 0, count };
                let mut sink = Collect::default();
                let lines = || {
                    Box::new(Times {
                        bad: None,
                        slow: i64::MAX,
                    }) as Box<dyn LineEncoder>
                };
                let pool = Pool::new(threads);
                pump(&mut source, &mut sink, &mut progress(), (&pool, &lines)).unwrap();
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
