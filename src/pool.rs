//! The one pool of worker threads a pipeline has: every piece of work that
//! runs beside the reading thread (TSV chunks parsed, Pajé lines cut into
//! words, a Pallas thread's rows expanded, rows' lines encoded) is a job on
//! it.
//!
//! So `--threads N` is N threads whatever the inputs: the reading thread and
//! N − 1 workers (and, when the writer encodes, the writer's thread). Merging
//! k inputs does not start k sets of helpers. A pool for one thread has no
//! workers: a job runs on the thread that queues it, at once.
//!
//! A job queued is a [`Task`] its owner may still take back: an owner that
//! waits for a result runs its own jobs that no worker has started
//! ([`Task::run_here`]) rather than wait behind other owners' jobs; it never
//! runs another owner's job, which could hold up the thread the others
//! wait on. Jobs never wait (for a channel, a lock held across work, another
//! job), so the workers always get through the queue; and a job does not
//! hold the pool, so the pool's last handle is dropped on the thread that
//! owns it, which joins the workers. A job delivers what it made on its
//! owner's channel; a job that panics delivers [`Lost`] instead, so its
//! owner reports an error rather than wait forever.

use std::num::NonZeroUsize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use crate::error::{Error, Result};

/// How many threads a command may keep busy, at least one: the reading
/// thread and the workers of the pipeline's [`Pool`]; with more than one,
/// the pump also writes on a thread of its own when the writer encodes.
/// The output is the same for every count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threads(NonZeroUsize);

impl Threads {
    /// Everything on the calling thread.
    pub const ONE: Threads = Threads(NonZeroUsize::MIN);

    /// `n` threads (one when `n` is 0).
    pub fn new(n: usize) -> Threads {
        Threads(NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN))
    }

    /// The number of threads.
    pub fn count(self) -> usize {
        self.0.get()
    }

    /// Whether work may go to other threads at all.
    pub fn parallel(self) -> bool {
        self.count() > 1
    }
}

impl Default for Threads {
    fn default() -> Threads {
        Threads::ONE
    }
}

/// A piece of work queued on the pool.
type Job = Box<dyn FnOnce() + Send>;

/// The work of a task, until a worker or its owner takes it.
type TaskWork<T> = Mutex<Option<Box<dyn FnOnce() -> T + Send>>>;

/// A job queued on the pool, which its owner may run itself as long as no
/// worker has started it.
pub struct Task<T> {
    slot: Arc<TaskWork<T>>,
    reply: Sender<Done<T>>,
}

impl<T> Clone for Task<T> {
    fn clone(&self) -> Task<T> {
        Task {
            slot: self.slot.clone(),
            reply: self.reply.clone(),
        }
    }
}

impl<T> Task<T> {
    /// Runs the job on this thread when no worker has started it (its
    /// result goes to the owner's channel as a worker's would); false when
    /// a worker has it.
    pub fn run_here(&self) -> bool {
        // The lock is held to take the work, never while it runs.
        let Some(work) = lock(&self.slot).take() else {
            return false;
        };
        let done = catch_unwind(AssertUnwindSafe(work)).map_err(|_| Lost);
        // An owner that has gone no longer wants it.
        let _ = self.reply.try_send(done);
        true
    }

    /// Whether no one has started the job yet.
    pub fn is_pending(&self) -> bool {
        lock(&self.slot).is_some()
    }
}

/// Locks `m`; a holder that panicked left data these locks guard whole
/// (each is changed by a single assignment or take).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a job delivers: what it made, or [`Lost`] when it panicked.
pub type Done<T> = std::result::Result<T, Lost>;

/// A job panicked: what it was making is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost;

/// A handle to the pipeline's pool; clones share it. The workers start with
/// the first job and stop, joined, when the last handle is dropped.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

struct Inner {
    threads: Threads,
    jobs: Option<Sender<Job>>,
    queue: Receiver<Job>,
    workers: Mutex<Option<Vec<JoinHandle<()>>>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.inner.threads)
            .finish()
    }
}

impl Default for Pool {
    /// A pool for one thread: no workers; a job runs where it is queued.
    fn default() -> Pool {
        Pool::new(Threads::ONE)
    }
}

impl Pool {
    /// A pool for `threads` threads: the calling thread and `threads − 1`
    /// workers.
    pub fn new(threads: Threads) -> Pool {
        let (jobs, queue) = crossbeam_channel::unbounded();
        Pool {
            inner: Arc::new(Inner {
                threads,
                jobs: Some(jobs),
                queue,
                workers: Mutex::new(None),
            }),
        }
    }

    /// The threads the pipeline may keep busy.
    pub fn threads(&self) -> Threads {
        self.inner.threads
    }

    /// Queues `work`; what it returns (or [`Lost`]) is sent on `reply`,
    /// which must have room for it (a job never waits). With no workers it
    /// runs here, now.
    pub fn spawn<T, F>(&self, work: F, reply: Sender<Done<T>>) -> Result<Task<T>>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let work: Box<dyn FnOnce() -> T + Send> = Box::new(work);
        let task = Task {
            slot: Arc::new(Mutex::new(Some(work))),
            reply,
        };
        if !self.inner.threads.parallel() {
            task.run_here();
            return Ok(task);
        }
        self.start_workers()?;
        let queued = task.clone();
        let job: Job = Box::new(move || {
            queued.run_here();
        });
        let jobs = self
            .inner
            .jobs
            .as_ref()
            .expect("jobs open while the pool lives");
        jobs.send(job).expect("the pool holds its queue");
        Ok(task)
    }

    /// Starts the workers, once.
    fn start_workers(&self) -> Result<()> {
        let mut workers = lock(&self.inner.workers);
        if workers.is_some() {
            return Ok(());
        }
        let mut started = Vec::new();
        for i in 1..self.inner.threads.count() {
            let queue = self.inner.queue.clone();
            let worker = std::thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn(move || queue.iter().for_each(|job| job()))
                .map_err(|e| Error::io("starting a worker thread", e))?;
            started.push(worker);
        }
        *workers = Some(started);
        Ok(())
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the queue ends the workers' loops once it is empty.
        self.jobs.take();
        let workers = self
            .workers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for worker in workers.take().into_iter().flatten() {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs finish for every pool size, workers or none, their owner taking
    /// back those no worker has started.
    #[test]
    fn every_job_is_done_whoever_runs_it() {
        for threads in [1, 2, 3, 8] {
            let pool = Pool::new(Threads::new(threads));
            let (tx, rx) = crossbeam_channel::bounded(100);
            let tasks: Vec<_> = (0..100u64)
                .map(|i| pool.spawn(move || i * i, tx.clone()).unwrap())
                .collect();
            // Taking back every other one: those a worker has are not run
            // twice.
            tasks.iter().step_by(2).for_each(|t| {
                t.run_here();
            });
            let mut got: Vec<u64> = (0..100).map(|_| rx.recv().unwrap().unwrap()).collect();
            got.sort_unstable();
            assert!(got.iter().copied().eq((0..100).map(|i| i * i)), "{threads}");
            assert!(rx.try_recv().is_err());
            assert!(tasks.iter().all(|t| !t.run_here()));
        }
    }

    #[test]
    fn a_job_that_panics_delivers_lost() {
        for threads in [1, 2] {
            let pool = Pool::new(Threads::new(threads));
            let (tx, rx) = crossbeam_channel::bounded(2);
            pool.spawn(|| -> u8 { panic!("deliberate") }, tx.clone())
                .unwrap();
            pool.spawn(|| 7u8, tx).unwrap();
            let mut got = [rx.recv().unwrap(), rx.recv().unwrap()];
            got.sort_unstable_by_key(|d| d.is_ok());
            assert_eq!(got, [Err(Lost), Ok(7)]);
        }
    }
}
