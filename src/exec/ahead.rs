//! Sources read ahead on the pipeline's pool: each source's rows are
//! produced in batches by jobs of the pool and handed out, in the source's
//! own order, by a lane on the calling thread. How a reader of several
//! independent streams (the threads of a Pallas trace) expands them on N
//! cores while one merge on the calling thread puts them in order; any
//! thread of the pool fills any source, so sources of unequal length keep
//! every thread busy.
//!
//! When the consumer copies rows as TSV lines (see
//! [`RecordSource::agree`]), the jobs also encode each row's line, so the
//! encoding too runs on every thread and the lanes hand the lines out as
//! raw lines ([`RecordSource::raw_line`]).
//!
//! A lane's first batch is queued once it has agreed on a demand (or is
//! asked for a row), so the source hears the demand before its first row.
//! Each lane owns two batches: while it hands out the rows of one, a job
//! fills the other from the source, which travels with the job (one job per
//! source at a time, so a source needs no lock). A lane that waits for its
//! batch fills, rather than sit idle, a batch no worker has started: its
//! own if it can, else another lane's of the same reader (the merge needs
//! them all). Memory: at most
//! [`ROWS_IN_FLIGHT`] rows (or 64 a batch with very many sources), whatever
//! the input.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};

use crate::error::{Error, Location, Result};
use crate::model::record::Record;
use crate::pipe::{Demand, LineEncoder, MakeEncoder, Reads, RecordSource, Supply};
use crate::pool::{lock, Done, Pool, Task};

/// Rows in flight over all the lanes together (their batches).
pub const ROWS_IN_FLIGHT: usize = 16 * 1024;

/// Batches each lane owns: one being emptied, one being filled.
const BATCHES: usize = 2;

/// Fewest rows a batch holds, however many the sources.
const MIN_BATCH: usize = 64;

/// Turns a source's mark into its location (see [`RecordSource::locate`])
/// without the source, which lives on a worker thread.
pub type Locator = Arc<dyn Fn(u64) -> Location + Send + Sync>;

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
    /// From each row on, how early a row can start (the suffix minimum of
    /// the rows' starts and the source's horizon after the batch), and at
    /// `len` the source's horizon (see [`RecordSource::horizon`]).
    bounds: Vec<Option<i64>>,
    /// The source ended after these rows...
    last: bool,
    /// ... or failed.
    error: Option<Error>,
}

/// A source as a job holds it while filling a batch.
struct Producer<S> {
    source: S,
    /// Set when the consumer wants the rows' lines.
    lines_wanted: Arc<AtomicBool>,
    /// The demand its lane agreed on, passed to the source before the
    /// next batch (the source lives with the jobs).
    demand: Arc<Mutex<Option<Demand>>>,
    encoder: Box<dyn LineEncoder>,
}

impl<S: RecordSource> Producer<S> {
    /// Fills `batch` with up to `rows` rows, or what is left of the source,
    /// and bounds how early the rows from each on can start.
    fn fill(&mut self, batch: &mut Batch, rows: usize) {
        self.fill_rows(batch, rows);
        // After the rows of a batch that failed comes the error, no row:
        // a consumer that stops before it never hears it, as without
        // reading ahead.
        let mut bound = match (batch.last, &batch.error) {
            (true, _) | (_, Some(_)) => Some(i64::MAX),
            (false, None) => self.source.horizon(),
        };
        batch.bounds.clear();
        batch.bounds.push(bound);
        for row in batch.rows[..batch.len].iter().rev() {
            bound = bound.map(|b| b.min(row.start().unwrap_or(i64::MAX)));
            batch.bounds.push(bound);
        }
        batch.bounds.reverse();
    }

    /// Fills `batch` with up to `rows` rows, or what is left of the source.
    fn fill_rows(&mut self, batch: &mut Batch, rows: usize) {
        if let Some(demand) = lock(&self.demand).take() {
            self.source.agree(demand);
        }
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
                    batch.last = true;
                    return;
                }
                Err(e) => {
                    batch.error = Some(e);
                    return;
                }
            }
        }
    }
}

/// What a job gives back: the source and the batch it filled.
type Filled<S> = Done<(Producer<S>, Batch)>;

/// A job filling a lane's batch.
type FillTask<S> = Task<(Producer<S>, Batch)>;

/// One source read ahead: its rows in its order, as the source gave them.
pub struct AheadSource<S> {
    pool: Pool,
    filled_tx: Sender<Filled<S>>,
    filled: Receiver<Filled<S>>,
    /// The job filling the next batch of each lane of this reader, this
    /// one's at `index`: a lane that waits does those no worker has
    /// started, the merge needing them all.
    tasks: Arc<Mutex<Vec<Option<FillTask<S>>>>>,
    index: usize,
    /// Rows a batch is filled to.
    rows: usize,
    /// The batch being handed out, and its next row.
    current: Option<Batch>,
    next: usize,
    /// The source is done (or failed): no job is filling.
    finished: bool,
    mark: u64,
    locate: Locator,
    name: String,
    /// Shared with the jobs: encode the rows' lines.
    lines_wanted: Arc<AtomicBool>,
    /// Shared with this lane's jobs: the demand for its source.
    demand: Arc<Mutex<Option<Demand>>>,
    /// The source while no job is queued for it before the lane agreed on
    /// a demand, which reaches the source before its rows: rows asked
    /// before that (a merge looks at each input's first rows when it is
    /// made) come a batch of [`MIN_BATCH`] rows at a time, none read ahead.
    waiting: Option<Producer<S>>,
    agreed: bool,
    /// Why the first batch could not be queued, told at the first row.
    failed: Option<Error>,
}

/// Reads each of `sources` (with the locator of its marks, and its name
/// for errors) ahead on `pool`; the lanes come back in the sources' order.
/// When lines are wanted, each source's rows are encoded by an encoder
/// `encoder` makes.
pub fn read_ahead<S>(
    sources: Vec<(S, Locator, String)>,
    pool: &Pool,
    encoder: MakeEncoder,
) -> Result<Vec<AheadSource<S>>>
where
    S: RecordSource + Send + 'static,
{
    let lines_wanted = Arc::new(AtomicBool::new(false));
    let rows = (ROWS_IN_FLIGHT / (sources.len().max(1) * BATCHES)).max(MIN_BATCH);
    let mut lanes = Vec::with_capacity(sources.len());
    let tasks = Arc::new(Mutex::new(vec![None; sources.len()]));
    for (source, locate, name) in sources {
        let (filled_tx, filled) = crossbeam_channel::bounded(1);
        let mut lane = AheadSource {
            pool: pool.clone(),
            filled_tx,
            filled,
            tasks: tasks.clone(),
            index: lanes.len(),
            rows,
            current: None,
            next: 0,
            finished: false,
            mark: 0,
            locate,
            name,
            lines_wanted: lines_wanted.clone(),
            demand: Arc::new(Mutex::new(None)),
            waiting: None,
            agreed: false,
            failed: None,
        };
        lane.waiting = Some(Producer {
            source,
            lines_wanted: lines_wanted.clone(),
            demand: lane.demand.clone(),
            encoder: encoder(),
        });
        lanes.push(lane);
    }
    Ok(lanes)
}

impl<S: RecordSource + Send + 'static> AheadSource<S> {
    /// Queues the job filling the first batch with up to `rows` rows, if
    /// not yet queued.
    fn start(&mut self, rows: usize) -> Result<()> {
        match self.waiting.take() {
            Some(producer) => self.fill(producer, Batch::default(), rows),
            None => Ok(()),
        }
    }

    /// Queues a job filling `batch` with up to `rows` rows from the source.
    fn fill(&mut self, mut producer: Producer<S>, mut batch: Batch, rows: usize) -> Result<()> {
        let job = move || {
            producer.fill(&mut batch, rows);
            (producer, batch)
        };
        let task = self.pool.spawn(job, self.filled_tx.clone())?;
        lock(&self.tasks)[self.index] = Some(task);
        Ok(())
    }

    /// Does a fill no worker has started, this lane's first; false when
    /// every one is started.
    fn fill_here(&self) -> bool {
        loop {
            // Found under the lock, run without it; a worker may take it
            // in between, and then the next is looked for.
            let pending = {
                let tasks = lock(&self.tasks);
                let own = tasks[self.index].as_ref().filter(|t| t.is_pending());
                own.or_else(|| tasks.iter().flatten().find(|t| t.is_pending()))
                    .cloned()
            };
            match pending {
                Some(task) if task.run_here() => return true,
                Some(_) => continue,
                None => return false,
            }
        }
    }

    /// Takes the batch being filled, and sends the source on to fill the
    /// one emptied (when it goes on).
    fn next_batch(&mut self) -> Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.start(MIN_BATCH)?;
        let lost = || Error::file(self.name.clone(), "a worker thread stopped");
        let done = loop {
            if let Ok(done) = self.filled.try_recv() {
                break done;
            }
            if !self.fill_here() {
                break self.filled.recv().map_err(|_| lost())?;
            }
        };
        let (producer, batch) = done.map_err(|_| lost())?;
        let emptied = self.current.replace(batch).unwrap_or_default();
        self.next = 0;
        let current = self.current.as_ref().expect("a current batch");
        self.finished = current.last || current.error.is_some();
        match (self.finished, self.agreed) {
            (true, _) => Ok(()),
            (false, true) => self.fill(producer, emptied, self.rows),
            (false, false) => {
                self.waiting = Some(producer);
                Ok(())
            }
        }
    }
}

impl<S: RecordSource + Send + 'static> crate::pipe::SourceStage for AheadSource<S> {
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
                    return Err(e);
                }
                if self.finished {
                    return Ok(false);
                }
            }
            self.next_batch()?;
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

    /// The bound of the rows from the next one handed out on (before the
    /// first batch comes: none known).
    fn horizon(&self) -> Option<i64> {
        let batch = self.current.as_ref()?;
        *batch.bounds.get(self.next)?
    }

    fn agree(&mut self, demand: Demand) -> Supply {
        // Rows are whole; their lines are encoded ahead when they are what
        // is copied (the batches filled already go without). The source
        // hears the demand before its next batch, without the lines, which
        // the jobs encode.
        if demand.reads.raw_line {
            self.lines_wanted.store(true, Ordering::Relaxed);
        }
        *lock(&self.demand) = Some(Demand {
            reads: Reads::only(demand.reads.without_raw_line()),
            skip: demand.skip,
            thin_before: demand.thin_before,
        });
        self.agreed = true;
        if let Err(e) = self.start(self.rows) {
            self.failed = Some(e);
        }
        Supply {
            raw_lines: demand.reads.raw_line,
            encode_here: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Kind;
    use crate::pool::Threads;

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
        fn horizon(&self) -> Option<i64> {
            None
        }
    }

    #[test]
    fn lanes_give_each_source_whole_and_in_order() {
        for threads in [1, 2, 3] {
            lanes_give_each_source_whole_and_in_order_on(&Pool::new(Threads::new(threads)));
        }
    }

    fn lanes_give_each_source_whole_and_in_order_on(pool: &Pool) {
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
        let mut lanes = read_ahead(sources, pool, &|| Box::new(Times)).unwrap();
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
        let pool = Pool::new(Threads::new(2));
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
        let mut lanes = read_ahead(sources, &pool, &|| Box::new(Times)).unwrap();
        let mut rec = Record::default();
        assert!(lanes[1].next_record(&mut rec).unwrap());
        // Dropping the lanes and the pool joins the workers once each
        // source's one job in flight is done; a hang here fails the test
        // by timeout.
        drop(lanes);
        drop(pool);
    }
}
