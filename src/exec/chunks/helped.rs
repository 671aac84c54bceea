//! An input's chunks worked on by one helper thread ahead of the calling
//! thread. The helper takes the newest chunk not started (the one the
//! calling thread needs last); a chunk the helper has not started when it
//! is needed, the calling thread works on itself, so it only ever waits
//! for the one chunk the helper is in the middle of. The helper runs at
//! the usual priority, for every user: which thread worked on a chunk
//! changes nothing in the results, which come in input order.
//!
//! Memory: [`DEPTH`] chunks ahead and their results.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::{Chunk, ChunkWork, Cutter, Job};
use crate::error::{Error, Result};

/// Chunks cut ahead of the one being read.
const DEPTH: usize = 4;

/// An input whose chunks a helper thread works on ahead, in order.
pub struct Helped<W: ChunkWork> {
    name: String,
    cutter: Cutter,
    /// The calling thread's own copy of the work.
    own: W,
    shared: Arc<Shared<W::Out>>,
    spare: Vec<Job<W::Out>>,
    helper: Option<JoinHandle<()>>,
}

/// What the two threads share.
struct Shared<O> {
    queue: Mutex<Queue<O>>,
    /// Signalled when a chunk is cut or the queue closes.
    work: Condvar,
    /// Signalled when the helper has finished a chunk or stopped.
    done: Condvar,
}

/// The chunks cut ahead, in input order; handed out from the front.
struct Queue<O> {
    slots: VecDeque<Slot<O>>,
    /// The calling thread is gone: the helper stops.
    closed: bool,
    /// The helper stopped (panicked) in the middle of a chunk.
    lost: bool,
}

/// A chunk cut ahead.
enum Slot<O> {
    /// Not started.
    Pending(Job<O>),
    /// The helper is working on it.
    Working,
    /// The helper has worked on it.
    Done(Job<O>),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<W: ChunkWork> Helped<W> {
    /// Starts a thread doing `helper` on the lines of `input` (named `name`
    /// in errors), starting with `start`, bytes already read from it; `own`
    /// is the same work, for the calling thread.
    pub fn new(
        name: &str,
        start: Vec<u8>,
        input: Box<dyn Read>,
        helper: W,
        own: W,
    ) -> Result<Self> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                slots: VecDeque::new(),
                closed: false,
                lost: false,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
        });
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("reader-0".to_string())
            .spawn(move || help(&theirs, helper))
            .map_err(|e| Error::io("starting a reader thread", e))?;
        Ok(Helped {
            name: name.to_string(),
            cutter: Cutter::new(name, start, input),
            own,
            shared,
            spare: Vec::new(),
            helper: Some(thread),
        })
    }

    /// The next chunk and what was made of it, in input order; `None` at
    /// the end of the input.
    pub fn next_done(&mut self) -> Result<Option<Job<W::Out>>> {
        self.cut_ahead()?;
        let mut queue = lock(&self.shared.queue);
        loop {
            if queue.lost {
                return Err(Error::file(self.name.clone(), "a reader thread stopped"));
            }
            match queue.slots.pop_front() {
                None => return Ok(None),
                Some(Slot::Done(job)) => return Ok(Some(job)),
                Some(Slot::Pending((chunk, mut out))) => {
                    drop(queue);
                    self.own.run(&chunk, &mut out);
                    return Ok(Some((chunk, out)));
                }
                Some(Slot::Working) => {
                    queue.slots.push_front(Slot::Working);
                    queue = self
                        .shared
                        .done
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    /// Gives a chunk and its result back, to be filled again.
    pub fn recycle(&mut self, chunk: Chunk, out: W::Out) {
        self.spare.push((chunk, out));
    }

    /// Cuts chunks until [`DEPTH`] wait in the queue.
    fn cut_ahead(&mut self) -> Result<()> {
        let mut queued = lock(&self.shared.queue).slots.len();
        while queued < DEPTH && !self.cutter.is_done() {
            let (mut chunk, out) = self.spare.pop().unwrap_or_default();
            if !self.cutter.cut(&mut chunk)? {
                self.spare.push((chunk, out));
                break;
            }
            lock(&self.shared.queue)
                .slots
                .push_back(Slot::Pending((chunk, out)));
            self.shared.work.notify_one();
            queued += 1;
        }
        Ok(())
    }
}

/// The helper thread: works on the newest pending chunk (the one the
/// calling thread needs last, so the last it would wait for) until the
/// queue closes.
fn help<W: ChunkWork>(shared: &Shared<W::Out>, mut work: W) {
    /// Tells the calling thread when the helper stops, even by a panic.
    struct Stopped<'a, O>(&'a Shared<O>);
    impl<O> Drop for Stopped<'_, O> {
        fn drop(&mut self) {
            let mut queue = lock(&self.0.queue);
            queue.lost = queue.slots.iter().any(|s| matches!(s, Slot::Working));
            drop(queue);
            self.0.done.notify_one();
        }
    }
    let _stopped = Stopped(shared);
    let mut queue = lock(&shared.queue);
    while !queue.closed {
        let newest = queue
            .slots
            .iter_mut()
            .rev()
            .find(|s| matches!(s, Slot::Pending(_)));
        let Some(slot) = newest else {
            queue = shared
                .work
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let Slot::Pending((chunk, mut out)) = std::mem::replace(slot, Slot::Working) else {
            continue;
        };
        drop(queue);
        work.run(&chunk, &mut out);
        queue = lock(&shared.queue);
        // One chunk at a time is worked on, and the calling thread leaves
        // it in the queue.
        if let Some(slot) = queue.slots.iter_mut().find(|s| matches!(s, Slot::Working)) {
            *slot = Slot::Done((chunk, out));
        }
        shared.done.notify_one();
    }
}

impl<W: ChunkWork> Drop for Helped<W> {
    fn drop(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.work.notify_one();
        if let Some(t) = self.helper.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{sample, Count};
    use super::*;
    use std::sync::atomic::Ordering;

    /// [`Count`], taking `ms` milliseconds a chunk.
    struct Slow {
        ms: u64,
    }

    impl ChunkWork for Slow {
        type Out = (usize, usize, bool);
        fn run(&mut self, chunk: &Chunk, out: &mut Self::Out) {
            std::thread::sleep(std::time::Duration::from_millis(self.ms));
            Count.run(chunk, out);
        }
    }

    /// Every chunk once, in order, whichever thread works on it: the
    /// helper as fast as the calling thread, or slower (the calling
    /// thread then takes the chunks it has not started, and waits for the
    /// one it is on).
    #[test]
    fn chunks_come_back_in_order_and_whole() {
        for helper_ms in [0, 2] {
            for (lines, cut) in [(0, false), (1, false), (200_000, false), (200_000, true)] {
                let text = sample(lines, cut);
                let input: Box<dyn Read> = Box::new(std::io::Cursor::new(text.clone()));
                let (helper, own) = (Slow { ms: helper_ms }, Slow { ms: 0 });
                let mut helped = Helped::new("t", Vec::new(), input, helper, own).unwrap();
                let (mut n, mut whole, mut last_cut) = (0, Vec::new(), false);
                while let Some((chunk, (l, _, c))) = helped.next_done().unwrap() {
                    n += l;
                    last_cut = c;
                    whole.extend_from_slice(chunk.bytes());
                    helped.recycle(chunk, (0, 0, false));
                }
                assert_eq!(n, lines + usize::from(cut));
                assert_eq!(last_cut, cut);
                assert!(whole == text.as_bytes());
            }
        }
    }

    /// The helper's work: panics on its first chunk. The calling
    /// thread's: waits until the helper has panicked, then counts.
    struct Broken {
        helper: bool,
        died: Arc<std::sync::atomic::AtomicBool>,
    }

    impl ChunkWork for Broken {
        type Out = (usize, usize, bool);
        fn run(&mut self, chunk: &Chunk, out: &mut Self::Out) {
            if self.helper {
                self.died.store(true, Ordering::SeqCst);
                panic!("deliberate");
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !self.died.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Count.run(chunk, out);
        }
    }

    #[test]
    fn a_helper_that_stops_mid_chunk_is_an_error_not_a_hang() {
        // The helper dies on the chunk it takes; the calling thread must
        // not wait for that chunk forever.
        let text = sample(200_000, false);
        let input: Box<dyn Read> = Box::new(std::io::Cursor::new(text));
        let died = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let work = |helper| Broken {
            helper,
            died: Arc::clone(&died),
        };
        let mut helped = Helped::new("t.tsv", Vec::new(), input, work(true), work(false)).unwrap();
        let err = loop {
            match helped.next_done() {
                Ok(Some((chunk, out))) => helped.recycle(chunk, out),
                Ok(None) => panic!("every chunk came back, one of them from a dead helper"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(
            err.contains("t.tsv") && err.contains("reader thread stopped"),
            "{err}"
        );
    }
}
