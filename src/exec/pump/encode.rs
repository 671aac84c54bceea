//! The pump for a sink that copies lines when the source has none to give
//! (a TSV writer behind a Pajé, STF or TRACE reader, or behind a stage that
//! makes rows): the rows are read in batches on the reading thread, each
//! batch's lines are encoded as a job of the pool, and the reading thread
//! copies them into the sink in order. So the encoding runs on every
//! thread of the pool, and the sink sees what it would have encoded itself.
//!
//! A batch is records, each read straight into and encoded straight from,
//! which come back with their buffers: packing the rows in a
//! [`crate::exec::batch::RecordBatch`] and unpacking them in the job cost
//! 10 % more instructions in all on the first 200 000 lines of the
//! generated Pajé trace (883 M against 804 M, two threads, callgrind).

use std::collections::VecDeque;

use super::{BATCH, PROGRESS_EVERY};
use crate::error::Result;
use crate::exec::ordered::{Ordered, OrderedWork};
use crate::model::record::Record;
use crate::pipe::{LineEncoder, MakeEncoder, RecordSink, RecordSource};
use crate::pool::Pool;

/// A copy of the encoding work.
struct Encode {
    encoder: Box<dyn LineEncoder>,
}

/// The rows of a batch, read straight into records that come back with
/// their buffers from the encoding job.
#[derive(Default)]
struct Rows {
    recs: Vec<Record>,
    len: usize,
}

impl Rows {
    /// Reads the next row of `source` into the batch; false at its end.
    fn read_from(&mut self, source: &mut dyn RecordSource) -> Result<bool> {
        if self.len == self.recs.len() {
            self.recs.push(Record::default());
        }
        let read = source.next_record(&mut self.recs[self.len])?;
        self.len += usize::from(read);
        Ok(read)
    }

    /// The rows read.
    fn rows(&self) -> &[Record] {
        &self.recs[..self.len]
    }

    /// Empties the batch, its records keeping their text buffers up to
    /// [`MAX_KEPT_TEXT`] in all (rows of huge values leave none huge).
    fn clear(&mut self) {
        let mut kept = 0;
        for rec in &mut self.recs[..self.len] {
            kept += rec.texts().iter().map(|t| t.capacity()).sum::<usize>();
            if kept > MAX_KEPT_TEXT {
                *rec = Record::default();
            }
        }
        self.len = 0;
    }
}

/// Text buffer capacity a batch's records keep for the next rows: a few
/// hundred bytes a row.
const MAX_KEPT_TEXT: usize = 1 << 19;

/// The lines of a batch, each with its newline, and the span of each
/// (without it; `None` for a row the encoder refused).
#[derive(Default)]
struct Lines {
    bytes: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
}

impl OrderedWork for Encode {
    type In = Rows;
    type Out = Lines;

    fn run(&mut self, batch: &Rows, out: &mut Lines) {
        out.bytes.clear();
        out.spans.clear();
        for row in batch.rows() {
            let start = out.bytes.len();
            match self.encoder.encode(row, &mut out.bytes) {
                Ok(()) => out.spans.push(Some((start, out.bytes.len() - 1))),
                Err(_) => {
                    out.bytes.truncate(start);
                    out.spans.push(None);
                }
            }
        }
    }
}

/// Rows written on the calling thread before encoding jobs start: an input
/// this short is done before jobs on the pool pay for themselves (their
/// batches' buffers and hand-overs cost 6 to 10 ms on two cores; an
/// archive of 18 000 rows took 22 ms with them, 14 ms without), and a
/// longer one loses at most this many rows' share of the second core.
const SERIAL_ROWS: u64 = 64 * 1024;

/// Moves every record from `source` into `sink`, which reads lines alone:
/// the first [`SERIAL_ROWS`] on this thread, then encoding them with
/// encoders `lines` makes on the threads of `pool`.
/// Rows read before a read error are written all the same.
pub(super) fn encoded(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
    (pool, lines): (&Pool, MakeEncoder),
) -> Result<()> {
    if !super::serial(source, sink, progress, SERIAL_ROWS)? {
        return Ok(());
    }
    // Two batches in flight per thread: one encoded, one waiting.
    let work = (0..2 * pool.threads().count())
        .map(|_| Encode { encoder: lines() })
        .collect();
    let mut ordered = Ordered::new(source.location().file(), work, pool);
    let mut marks = VecDeque::new();
    let (mut batch, mut out) = ordered.buffers();
    let mut rows = SERIAL_ROWS;
    let read = loop {
        match batch.read_from(source) {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
        marks.push_back(source.mark());
        rows += 1;
        if rows % PROGRESS_EVERY == 0 {
            progress(Some(rows));
        }
        if batch.len >= BATCH {
            queue(&mut ordered, (batch, out), sink, source, &mut marks)?;
            (batch, out) = ordered.buffers();
        }
    };
    if batch.len > 0 {
        queue(&mut ordered, (batch, out), sink, source, &mut marks)?;
    }
    while write_next(&mut ordered, sink, source, &mut marks)? {}
    read
}

/// Queues a batch to encode, writing the batches encoded until a copy of
/// the work is free for it.
fn queue(
    ordered: &mut Ordered<Encode>,
    (batch, out): (Rows, Lines),
    sink: &mut (dyn RecordSink + Send),
    source: &dyn RecordSource,
    marks: &mut VecDeque<u64>,
) -> Result<()> {
    while !ordered.has_room() {
        write_next(ordered, sink, source, marks)?;
    }
    ordered.submit(batch, out)
}

/// Writes the next batch encoded into `sink`, each run of lines at once
/// (located by the mark of its first row, at the front of `marks`, when
/// the sink refuses it); false when none is in flight.
fn write_next(
    ordered: &mut Ordered<Encode>,
    sink: &mut (dyn RecordSink + Send),
    source: &dyn RecordSource,
    marks: &mut VecDeque<u64>,
) -> Result<bool> {
    let Some((mut batch, out)) = ordered.next_done()? else {
        return Ok(false);
    };
    // The lines encoded are contiguous between rows the encoder refused:
    // each run goes to the sink at once, located by its first row.
    let mut run: Option<(usize, usize, u64)> = None;
    for (i, span) in out.spans.iter().enumerate() {
        let mark = marks.pop_front().expect("a mark per row");
        match (*span, &mut run) {
            (Some((_, end)), Some((_, run_end, _))) => *run_end = end + 1,
            (Some((start, end)), None) => run = Some((start, end + 1, mark)),
            (None, _) => {
                write_run(sink, &out.bytes, run.take(), source)?;
                // Refused by the encoder: the sink says why, from the row.
                let written = sink.write(&batch.rows()[i]);
                written.map_err(|e| e.at(source.locate(mark)))?;
            }
        }
    }
    write_run(sink, &out.bytes, run, source)?;
    batch.clear();
    ordered.recycle(batch, out);
    Ok(true)
}

/// Writes the lines `bytes[start..end]` of a run of rows, the first at
/// `mark`, into `sink`, which reads lines alone.
fn write_run(
    sink: &mut (dyn RecordSink + Send),
    bytes: &[u8],
    run: Option<(usize, usize, u64)>,
    source: &dyn RecordSource,
) -> Result<()> {
    let Some((start, end, mark)) = run else {
        return Ok(());
    };
    sink.write_raw_lines(&bytes[start..end])
        .map_err(|e| e.at(source.locate(mark)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of huge values leave the batch's records no more text buffer
    /// than the bound, and rows of ordinary ones keep theirs.
    #[test]
    fn a_batch_keeps_bounded_buffers_for_the_next_rows() {
        let kept = |rows: &Rows| -> usize {
            let texts = rows.recs.iter().map(|r| r.texts().map(|t| t.capacity()));
            texts.flatten().sum()
        };
        let mut rows = Rows::default();
        for value in ["x".repeat(100_000), "y".repeat(100)] {
            rows.recs.clear();
            for _ in 0..64 {
                let mut rec = Record::default();
                rec.value.push_str(&value);
                rows.recs.push(rec);
            }
            rows.len = rows.recs.len();
            let before = kept(&rows);
            rows.clear();
            assert_eq!(rows.rows().len(), 0);
            let after = kept(&rows);
            assert!(after <= MAX_KEPT_TEXT + value.len(), "{after}");
            if before <= MAX_KEPT_TEXT {
                assert_eq!(after, before);
            } else {
                assert!(after < before);
            }
        }
    }
}
