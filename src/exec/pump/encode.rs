//! The pump for a sink that copies lines when the source has none to give
//! (a TSV writer behind a Pajé, STF or TRACE reader, or behind a stage that
//! makes rows): the rows are packed in batches on the reading thread, each
//! batch's lines are encoded as a job of the pool, and the reading thread
//! copies them into the sink in order. So the encoding runs on every
//! thread of the pool, and the sink sees what it would have encoded itself.

use std::collections::VecDeque;

use super::{BATCH, PROGRESS_EVERY};
use crate::error::Result;
use crate::exec::batch::RecordBatch;
use crate::exec::ordered::{Ordered, OrderedWork};
use crate::model::record::Record;
use crate::pipe::{LineEncoder, MakeEncoder, RecordSink, RecordSource};
use crate::pool::Pool;

/// A copy of the encoding work, with its own row to decode into.
struct Encode {
    encoder: Box<dyn LineEncoder>,
    row: Record,
}

/// The lines of a batch, each with its newline, and the span of each
/// (without it; `None` for a row the encoder refused).
#[derive(Default)]
struct Lines {
    bytes: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
}

impl OrderedWork for Encode {
    type In = RecordBatch;
    type Out = Lines;

    fn run(&mut self, batch: &RecordBatch, out: &mut Lines) {
        out.bytes.clear();
        out.spans.clear();
        let mut rows = batch.reader();
        while rows.next_into(&mut self.row) {
            let start = out.bytes.len();
            match self.encoder.encode(&self.row, &mut out.bytes) {
                Ok(()) => out.spans.push(Some((start, out.bytes.len() - 1))),
                Err(_) => {
                    out.bytes.truncate(start);
                    out.spans.push(None);
                }
            }
        }
    }
}

/// Moves every record from `source` into `sink`, which reads lines alone,
/// encoding them with encoders `lines` makes on the threads of `pool`.
/// Rows read before a read error are written all the same.
pub(super) fn encoded(
    source: &mut dyn RecordSource,
    sink: &mut (dyn RecordSink + Send),
    progress: &mut dyn FnMut(Option<u64>),
    (pool, lines): (&Pool, MakeEncoder),
) -> Result<()> {
    // Two batches in flight per thread: one encoded, one waiting.
    let work = (0..2 * pool.threads().count())
        .map(|_| Encode {
            encoder: lines(),
            row: Record::default(),
        })
        .collect();
    let mut ordered = Ordered::new(source.location().file(), work, pool);
    let mut marks = VecDeque::new();
    let (mut batch, mut out) = ordered.buffers();
    let (mut rec, mut rows) = (Record::default(), 0u64);
    let read = loop {
        match source.next_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
        batch.push(&rec);
        marks.push_back(source.mark());
        rows += 1;
        if rows % PROGRESS_EVERY == 0 {
            progress(Some(rows));
        }
        if batch.len() >= BATCH {
            queue(&mut ordered, (batch, out), sink, source, &mut marks)?;
            (batch, out) = ordered.buffers();
        }
    };
    if !batch.is_empty() {
        queue(&mut ordered, (batch, out), sink, source, &mut marks)?;
    }
    while write_next(&mut ordered, sink, source, &mut marks)? {}
    read
}

/// Queues a batch to encode, writing the batches encoded until a copy of
/// the work is free for it.
fn queue(
    ordered: &mut Ordered<Encode>,
    (batch, out): (RecordBatch, Lines),
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
                let written = sink.write(&nth_row(&batch, i));
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

/// The row at `index` of `batch`.
fn nth_row(batch: &RecordBatch, index: usize) -> Record {
    let mut rows = batch.reader();
    let mut rec = Record::default();
    for _ in 0..=index {
        rows.next_into(&mut rec);
    }
    rec
}
