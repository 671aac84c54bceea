//! Work on inputs given in order, done as jobs of the pipeline's pool, the
//! results handed back in the same order whatever order the jobs finish
//! in: chunks of a text input parsed or cut into words
//! ([`crate::exec::chunks`]), batches of rows encoded as lines
//! ([`crate::exec::pump`]).
//!
//! Each copy of the work given to [`Ordered::new`] does one input at a
//! time, so the copies bound the inputs in flight (and a copy may keep
//! state of its own, as a symbol table). Buffers circulate: an input and
//! its result given back with [`Ordered::recycle`] are filled again, so a
//! steady run allocates nothing. When the caller needs the next result and
//! no worker has started its job, it does that job itself
//! ([`crate::pool::Task::run_here`]).

use std::collections::VecDeque;

use crossbeam_channel::{Receiver, Sender};

use crate::error::{Error, Result};
use crate::pool::{Done, Pool, Task};

/// What a job does with an input.
pub trait OrderedWork: Send + 'static {
    /// What it works on; reused from input to input.
    type In: Send + Default + 'static;
    /// What it makes of an input; reused from input to input.
    type Out: Send + Default + 'static;

    /// Works on `input`, filling `out` (which holds an earlier input's
    /// result: clear what must not be kept).
    fn run(&mut self, input: &Self::In, out: &mut Self::Out);
}

/// An input worked on: its number in order, the copy of the work that
/// did it, the input and what was made of it.
type Worked<W> = (u64, W, <W as OrderedWork>::In, <W as OrderedWork>::Out);

/// Inputs worked on by the pool's threads, handed back in order.
pub struct Ordered<W: OrderedWork> {
    /// What errors name (the input the work is for).
    name: String,
    pool: Pool,
    /// The copies of the work not in flight.
    idle: Vec<W>,
    /// Inputs and results given back, to be filled again.
    spare: Vec<(W::In, W::Out)>,
    done_tx: Sender<Done<Worked<W>>>,
    done_rx: Receiver<Done<Worked<W>>>,
    /// The jobs in flight, from `next` on.
    tasks: VecDeque<Task<Worked<W>>>,
    /// Results that came ahead of their turn, from `next` on.
    early: VecDeque<Option<(W::In, W::Out)>>,
    /// The number of the next result to hand out, and of the next input.
    next: u64,
    queued: u64,
}

impl<W: OrderedWork> Ordered<W> {
    /// Work for `name` on `pool`, one input in flight for each copy of the
    /// work in `work`.
    pub fn new(name: &str, work: Vec<W>, pool: &Pool) -> Ordered<W> {
        let (done_tx, done_rx) = crossbeam_channel::bounded(work.len().max(1));
        Ordered {
            name: name.to_string(),
            pool: pool.clone(),
            idle: work,
            spare: Vec::new(),
            done_tx,
            done_rx,
            tasks: VecDeque::new(),
            early: VecDeque::new(),
            next: 0,
            queued: 0,
        }
    }

    /// Whether a copy of the work is free for another input. A result
    /// handed out may have come in earlier, its copy taken again since:
    /// make room by handing out results until this holds.
    pub fn has_room(&self) -> bool {
        !self.idle.is_empty()
    }

    /// An input buffer to fill, and a result buffer, as given back.
    pub fn buffers(&mut self) -> (W::In, W::Out) {
        self.spare.pop().unwrap_or_default()
    }

    /// Queues the work on `input`, its result to go in `out`; only when
    /// [`Ordered::has_room`].
    pub fn submit(&mut self, input: W::In, mut out: W::Out) -> Result<()> {
        let mut work = self.idle.pop().expect("submit only with room");
        let seq = self.queued;
        self.queued += 1;
        let job = move || {
            work.run(&input, &mut out);
            (seq, work, input, out)
        };
        let task = self.pool.spawn(job, self.done_tx.clone())?;
        self.tasks.push_back(task);
        Ok(())
    }

    /// The next input in order and its result; `None` when none is in
    /// flight.
    pub fn next_done(&mut self) -> Result<Option<(W::In, W::Out)>> {
        loop {
            if let Some(Some(_)) = self.early.front() {
                self.next += 1;
                self.tasks.pop_front();
                return Ok(self.early.pop_front().flatten());
            }
            let Some(awaited) = self.tasks.front() else {
                return Ok(None);
            };
            // Not started: sooner done here than behind the queue. (Doing a
            // later one instead of waiting was measured slower where the
            // caller is the bottleneck, as the Pajé simulation is.)
            awaited.run_here();
            let lost = || Error::file(self.name.clone(), "a worker thread stopped");
            let done = self.done_rx.recv().map_err(|_| lost())?;
            let (seq, work, input, out) = done.map_err(|_| lost())?;
            self.idle.push(work);
            let at = usize::try_from(seq - self.next).expect("in flight fits memory");
            if self.early.len() <= at {
                self.early.resize_with(at + 1, || None);
            }
            self.early[at] = Some((input, out));
        }
    }

    /// Gives an input and its result back, to be filled again.
    pub fn recycle(&mut self, input: W::In, out: W::Out) {
        self.spare.push((input, out));
    }
}
