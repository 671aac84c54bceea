//! Sources read ahead on helper threads: each source's rows are produced in
//! batches by one of a few worker threads and handed out, in the source's
//! own order, by a lane on the calling thread. How a reader of several
//! independent streams (the threads of a Pallas trace) expands them on two
//! cores while one merge on the calling thread puts them in order.
//!
//! When the consumer copies rows as TSV lines (see
//! [`RecordSource::agree`]), the workers also encode each row's line, so
//! the encoding too runs on both cores and the lanes hand the lines out as
//! raw lines ([`RecordSource::raw_line`]).
//!
//! Flow control by credit: each lane owns a fixed number of batches, which
//! circulate between its worker (filling) and the lane (emptying); a worker
//! fills a lane's batch only when the lane has given one back. Memory: at
//! most [`ROWS_IN_FLIGHT`] rows (or 64 a batch with very many sources),
//! whatever the input.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::{Error, Location, Result};
use crate::model::record::Record;
use crate::pipe::{Demand, RecordSource, Supply};

/// Rows in flight over all the lanes together (their batches).
pub const ROWS_IN_FLIGHT: usize = 16 * 1024;

/// Batches each lane owns: one being emptied, one being filled.
const CREDITS: usize = 2;

/// Fewest rows a batch holds, however many the sources.
const MIN_BATCH: usize = 64;

/// Turns a source's mark into its location (see [`RecordSource::locate`])
/// without the source, which lives on a worker thread.
pub type Locator = Arc<dyn Fn(u64) -> Location + Send + Sync>;

/// What a worker encodes each row's line with when the consumer copies
/// lines (see [`Supply::raw_lines`]): the stream's TSV form of the
/// standard columns, given by the reader that reads ahead.
pub trait LineEncoder: Send {
    /// Appends the line of `rec`, with its newline; an error for a row the
    /// form cannot hold.
    fn encode(&mut self, rec: &Record, line: &mut Vec<u8>) -> Result<()>;
}

/// Makes one [`LineEncoder`] per source read ahead.
pub type MakeEncoder<'a> = &'a dyn Fn() -> Box<dyn LineEncoder>;

/// Rows of one source, with their marks, and how the source went on.
#[derive(Default)]
struct Batch {
    rows: Vec<Record>,
    marks: Vec<u64>,
    len: usize,
    /// When encoded: the rows' TSV lines, each with its newline, and the
    /// span of each (without it; none for a row the encoder refused).
    lines: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
    /// The source ended after these rows...
    last: bool,
    /// ... or failed.
    error: Option<Error>,
}

/// A batch given back to its worker, with its lane's index there.
type Empty = (usize, Batch);

/// A source as its worker holds it.
struct Producer<S> {
    source: S,
    full: Sender<Batch>,
    done: bool,
    /// Set when the consumer wants the rows' lines.
    lines_wanted: Arc<AtomicBool>,
    encoder: Box<dyn LineEncoder>,
}

impl<S: RecordSource> Producer<S> {
    /// Fills `batch` with up to `rows` rows, or what is left of the source.
    fn fill(&mut self, batch: &mut Batch, rows: usize) {
        (batch.len, batch.last, batch.error) = (0, false, None);
        batch.marks.clear();
        batch.lines.clear();
        batch.spans.clear();
        let encode = self.lines_wanted.load(Ordering::Relaxed);
        while batch.len < rows {
            if batch.len == batch.rows.len() {
                batch.rows.push(Record::default());
            }
            match self.source.next_record(&mut batch.rows[batch.len]) {
                Ok(true) if encode => {
                    // A row the standard columns cannot hold goes without
                    // a line, for the writer to report.
                    let start = batch.lines.len();
                    let span = match self
                        .encoder
                        .encode(&batch.rows[batch.len], &mut batch.lines)
                    {
                        Ok(()) => Some((start, batch.lines.len() - 1)),
                        Err(_) => {
                            batch.lines.truncate(start);
                            None
                        }
                    };
                    batch.spans.push(span);
                    batch.marks.push(self.source.mark());
                    batch.len += 1;
                }
                Ok(true) => {
                    batch.marks.push(self.source.mark());
                    batch.len += 1;
                }
                Ok(false) => {
                    (batch.last, self.done) = (true, true);
                    return;
                }
                Err(e) => {
                    (batch.error, self.done) = (Some(e), true);
                    return;
                }
            }
        }
    }
}

/// A worker's loop: fills the batches its lanes gave back, in the order
/// they came, until every source is done or every lane is gone.
fn work<S: RecordSource>(mut producers: Vec<Producer<S>>, empties: Receiver<Empty>, rows: usize) {
    let mut ready: VecDeque<Empty> = (0..CREDITS)
        .flat_map(|_| (0..producers.len()).map(|i| (i, Batch::default())))
        .collect();
    loop {
        while let Some((i, mut batch)) = ready.pop_front() {
            let producer = &mut producers[i];
            if producer.done {
                continue;
            }
            producer.fill(&mut batch, rows);
            if producer.full.send(batch).is_err() {
                producer.done = true; // its lane is gone
            }
        }
        if producers.iter().all(|p| p.done) {
            return;
        }
        match empties.recv() {
            Ok(empty) => ready.push_back(empty),
            Err(_) => return,
        }
    }
}

/// Joins the workers once the last lane is gone (its channels first).
struct Workers(Vec<JoinHandle<()>>);

impl Drop for Workers {
    fn drop(&mut self) {
        for worker in self.0.drain(..) {
            let _ = worker.join();
        }
    }
}

/// One source read ahead: its rows in its order, as the source gave them.
pub struct AheadSource {
    full: Receiver<Batch>,
    empties: Sender<Empty>,
    /// The lane's index among its worker's.
    index: usize,
    current: Option<Batch>,
    next: usize,
    finished: bool,
    mark: u64,
    locate: Locator,
    name: String,
    /// Shared with the workers: encode the rows' lines.
    lines_wanted: Arc<AtomicBool>,
    /// Last, so the channels above close before the workers are joined.
    _workers: Option<Arc<Workers>>,
}

/// Reads each of `sources` (with the locator of its marks, and its name
/// for errors) ahead on up to `workers` threads, the sources shared out
/// in turn; the lanes come back in the sources' order. When lines are
/// wanted, each source's rows are encoded by an encoder `encoder` makes.
pub fn read_ahead<S>(
    sources: Vec<(S, Locator, String)>,
    workers: usize,
    encoder: MakeEncoder,
) -> Result<Vec<AheadSource>>
where
    S: RecordSource + Send + 'static,
{
    let lines_wanted = Arc::new(AtomicBool::new(false));
    let count = sources.len();
    let workers = workers.clamp(1, count.max(1));
    let rows = (ROWS_IN_FLIGHT / (count.max(1) * CREDITS)).max(MIN_BATCH);
    let mut producers: Vec<Vec<Producer<S>>> = (0..workers).map(|_| Vec::new()).collect();
    let (empty_txs, empty_rxs): (Vec<Sender<Empty>>, Vec<Receiver<Empty>>) =
        (0..workers).map(|_| mpsc::channel()).unzip();
    let mut lanes = Vec::with_capacity(count);
    for (i, (source, locate, name)) in sources.into_iter().enumerate() {
        let w = i % workers;
        let (full_tx, full) = mpsc::channel();
        lanes.push(AheadSource {
            full,
            empties: empty_txs[w].clone(),
            index: producers[w].len(),
            current: None,
            next: 0,
            finished: false,
            mark: 0,
            locate,
            name,
            lines_wanted: lines_wanted.clone(),
            _workers: None,
        });
        producers[w].push(Producer {
            source,
            full: full_tx,
            done: false,
            lines_wanted: lines_wanted.clone(),
            encoder: encoder(),
        });
    }
    drop(empty_txs);
    let mut handles = Vec::with_capacity(workers);
    for (w, (producers, empty_rx)) in producers.into_iter().zip(empty_rxs).enumerate() {
        let handle = std::thread::Builder::new()
            .name(format!("reader-{w}"))
            .spawn(move || work(producers, empty_rx, rows))
            .map_err(|e| Error::io("starting a reader thread", e))?;
        handles.push(handle);
    }
    let workers = Arc::new(Workers(handles));
    for lane in &mut lanes {
        lane._workers = Some(workers.clone());
    }
    Ok(lanes)
}

impl RecordSource for AheadSource {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if let Some(batch) = &mut self.current {
                if self.next < batch.len {
                    rec.take_from(&mut batch.rows[self.next]);
                    self.mark = batch.marks[self.next];
                    self.next += 1;
                    return Ok(true);
                }
                if let Some(e) = batch.error.take() {
                    self.finished = true;
                    return Err(e);
                }
                self.finished |= batch.last;
                let batch = self.current.take().expect("a current batch");
                // The worker may have stopped (its sources all done).
                let _ = self.empties.send((self.index, batch));
            }
            if self.finished {
                return Ok(false);
            }
            match self.full.recv() {
                Ok(batch) => (self.current, self.next) = (Some(batch), 0),
                Err(_) => return Err(Error::file(self.name.clone(), "a reader thread stopped")),
            }
        }
    }

    fn mark(&self) -> u64 {
        self.mark
    }

    fn locate(&self, mark: u64) -> Location {
        (self.locate)(mark)
    }

    fn raw_line(&self) -> Option<&[u8]> {
        let batch = self.current.as_ref()?;
        let (start, end) = (*batch.spans.get(self.next.checked_sub(1)?)?)?;
        Some(&batch.lines[start..end])
    }

    fn extra_columns(&self) -> &[String] {
        &[]
    }

    fn order(&self) -> Option<(i64, u64)> {
        None
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        // Rows are whole; their lines are encoded ahead when they are what
        // is copied (the batches filled already go without).
        if demand.reads.raw_line {
            self.lines_wanted.store(true, Ordering::Relaxed);
        }
        Supply {
            raw_lines: demand.reads.raw_line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Kind;

    /// Lines of a row's time.
    struct Times;

    impl LineEncoder for Times {
        fn encode(&mut self, rec: &Record, line: &mut Vec<u8>) -> Result<()> {
            line.extend_from_slice(format!("{}\n", rec.time.unwrap_or(0)).as_bytes());
            Ok(())
        }
    }

    /// Events numbered 0.. up to `len`, failing at `fail` when set.
    struct Count {
        next: u64,
        len: u64,
        fail: Option<u64>,
    }

    impl RecordSource for Count {
        fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
            if Some(self.next) == self.fail {
                return Err(Error::file("count", format!("failed at {}", self.next)));
            }
            if self.next == self.len {
                return Ok(false);
            }
            rec.clear();
            rec.kind = Kind::Event;
            rec.time = Some(self.next as i64);
            self.next += 1;
            Ok(true)
        }
        fn mark(&self) -> u64 {
            self.next
        }
        fn locate(&self, mark: u64) -> Location {
            Location::File(format!("count {mark}"))
        }
        crate::whole_rows!();
    }

    #[test]
    fn lanes_give_each_source_whole_and_in_order() {
        let locate: Locator = Arc::new(|mark| Location::File(format!("row {mark}")));
        let lens = [0u64, 1, 5000, 100_000, 12_345];
        let sources = lens
            .iter()
            .map(|&len| {
                let count = Count {
                    next: 0,
                    len,
                    fail: (len == 5000).then_some(4321),
                };
                (count, locate.clone(), "count".to_string())
            })
            .collect();
        let mut lanes = read_ahead(sources, 2, &|| Box::new(Times)).unwrap();
        // Read the lanes interleaved, as a merge would.
        let mut rec = Record::default();
        let mut seen = vec![0u64; lens.len()];
        let mut open: Vec<usize> = (0..lens.len()).collect();
        while !open.is_empty() {
            open.retain(|&i| match lanes[i].next_record(&mut rec) {
                Ok(true) => {
                    assert_eq!(rec.time, Some(seen[i] as i64));
                    seen[i] += 1;
                    assert_eq!(lanes[i].mark(), seen[i]);
                    true
                }
                Ok(false) => false,
                Err(e) => {
                    assert!(e.to_string().contains("failed at 4321"), "{e}");
                    assert_eq!(seen[i], 4321);
                    false
                }
            });
        }
        assert_eq!(seen, [0, 1, 4321, 100_000, 12_345]);
        assert_eq!(lanes[3].location().to_string(), "row 100000");
    }

    #[test]
    fn dropping_lanes_early_stops_the_workers() {
        let locate: Locator = Arc::new(|_| Location::File("count".into()));
        let sources = (0..3)
            .map(|_| {
                let count = Count {
                    next: 0,
                    len: u64::MAX,
                    fail: None,
                };
                (count, locate.clone(), "count".to_string())
            })
            .collect();
        let mut lanes = read_ahead(sources, 2, &|| Box::new(Times)).unwrap();
        let mut rec = Record::default();
        assert!(lanes[1].next_record(&mut rec).unwrap());
        drop(lanes); // joins the workers; a hang here fails the test by timeout
    }
}
