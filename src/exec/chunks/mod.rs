//! An input cut into chunks of whole lines, each chunk worked on by a helper
//! thread, the results handed back in input order: how a text reader puts a
//! second core to work on its lines (the TSV reader parses rows so).
//!
//! The calling thread reads the input and cuts it at newlines; each chunk
//! goes to the next worker in turn, with a result buffer to fill. Results
//! come back in the order the chunks were cut, whatever order the workers
//! finish in. Buffers circulate: a chunk and its result given back with
//! [`Chunked::recycle`] are filled again, so a steady run allocates nothing.
//! Memory: the chunks in flight (two per worker) and their results.
//!
//! [`Helped`] is the other way: one helper thread that works ahead of the
//! calling thread, the calling thread doing what the helper has not
//! started (for work that is a small part of the reader's, as the Pajé
//! lexer's).

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::io::MAX_LINE;

mod helped;
pub use helped::Helped;

/// Bytes a chunk is read to, at least, before it is cut at its last
/// newline. A read fills the chunk's whole buffer, which is 1.5 times this,
/// or more for a buffer that once held a longer start (the first chunk of a
/// TSV stream carries what the header's reader had buffered, up to 256 KiB):
/// the TSV helper that gets that buffer back parses about twice the rows of
/// the other, which measured faster on two cores than equal chunks (1.2
/// times the time), the reading thread sharing a core with the other one.
pub const CHUNK: usize = 64 * 1024;

/// Chunks each worker holds at once (one being worked on, one waiting).
const DEPTH: usize = 2;

/// Whole lines of an input.
#[derive(Debug, Default)]
pub struct Chunk {
    /// The lines (`buf[..len]`), each with its newline but the last when
    /// `cut`; the bytes after them are left from earlier use, so a buffer
    /// is not cleared before each read.
    buf: Vec<u8>,
    len: usize,
    /// The input ended after the last line, without its newline.
    pub cut: bool,
}

impl Chunk {
    /// The lines, each with its newline (but the last when `cut`).
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The lines, without their newlines.
    pub fn lines(&self) -> impl Iterator<Item = &[u8]> {
        let all = self.bytes();
        let bytes = all.strip_suffix(b"\n").unwrap_or(all);
        let empty = all.is_empty();
        bytes.split(|&b| b == b'\n').filter(move |_| !empty)
    }
}

/// What a worker does with a chunk.
pub trait ChunkWork: Send + 'static {
    /// What it makes of a chunk; reused from chunk to chunk.
    type Out: Send + Default + 'static;

    /// Works on `chunk`, filling `out` (which holds the previous chunk's
    /// result: clear what must not be kept).
    fn run(&mut self, chunk: &Chunk, out: &mut Self::Out);
}

type Job<O> = (Chunk, O);

/// A worker thread and its two channels.
struct Worker<O> {
    jobs: Option<SyncSender<Job<O>>>,
    done: Receiver<Job<O>>,
    thread: Option<JoinHandle<()>>,
}

/// An input whose chunks are worked on by helper threads, in order.
pub struct Chunked<W: ChunkWork> {
    name: String,
    cutter: Cutter,
    workers: Vec<Worker<W::Out>>,
    /// Worker of each chunk in flight, oldest first.
    in_flight: VecDeque<usize>,
    next_worker: usize,
    spare: Vec<Job<W::Out>>,
}

/// Reads an input and cuts it into chunks of whole lines.
pub struct Cutter {
    name: String,
    input: Box<dyn Read>,
    /// Bytes read after the last newline of the last chunk cut.
    carry: Vec<u8>,
    eof: bool,
}

impl<W: ChunkWork> Chunked<W> {
    /// Starts a worker thread for each of `work` on the lines of `input`
    /// (named `name` in errors), starting with `start`, bytes already read
    /// from it.
    pub fn new(name: &str, start: Vec<u8>, input: Box<dyn Read>, work: Vec<W>) -> Result<Self> {
        let mut workers = Vec::with_capacity(work.len());
        for (i, mut w) in work.into_iter().enumerate() {
            let (jobs, their_jobs) = mpsc::sync_channel::<Job<W::Out>>(DEPTH);
            let (their_done, done) = mpsc::channel::<Job<W::Out>>();
            let thread = std::thread::Builder::new()
                .name(format!("reader-{i}"))
                .spawn(move || {
                    for (chunk, mut out) in their_jobs {
                        w.run(&chunk, &mut out);
                        if their_done.send((chunk, out)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| Error::io("starting a reader thread", e))?;
            workers.push(Worker {
                jobs: Some(jobs),
                done,
                thread: Some(thread),
            });
        }
        Ok(Chunked {
            name: name.to_string(),
            cutter: Cutter::new(name, start, input),
            workers,
            in_flight: VecDeque::new(),
            next_worker: 0,
            spare: Vec::new(),
        })
    }

    /// The next chunk and what its worker made of it, in input order;
    /// `None` at the end of the input.
    pub fn next_done(&mut self) -> Result<Option<(Chunk, W::Out)>> {
        // Keep every worker busy, DEPTH chunks each.
        while !self.cutter.is_done() && self.in_flight.len() < DEPTH * self.workers.len() {
            let (mut chunk, out) = self.spare.pop().unwrap_or_default();
            if !self.cutter.cut(&mut chunk)? {
                self.spare.push((chunk, out));
                break;
            }
            let w = self.next_worker;
            self.next_worker = (w + 1) % self.workers.len();
            let jobs = self.workers[w].jobs.as_ref().expect("open until drop");
            if jobs.send((chunk, out)).is_err() {
                return Err(Error::file(self.name.clone(), "a reader thread stopped"));
            }
            self.in_flight.push_back(w);
        }
        let Some(w) = self.in_flight.pop_front() else {
            return Ok(None);
        };
        match self.workers[w].done.recv() {
            Ok(job) => Ok(Some(job)),
            Err(_) => Err(Error::file(self.name.clone(), "a reader thread stopped")),
        }
    }

    /// Gives a chunk and its result back, to be filled again.
    pub fn recycle(&mut self, chunk: Chunk, out: W::Out) {
        self.spare.push((chunk, out));
    }
}

impl Cutter {
    /// Cuts `input` (named `name` in errors), starting with `start`, bytes
    /// already read from it.
    pub fn new(name: &str, start: Vec<u8>, input: Box<dyn Read>) -> Cutter {
        Cutter {
            name: name.to_string(),
            input,
            carry: start,
            eof: false,
        }
    }

    /// Whether the whole input has been cut.
    pub fn is_done(&self) -> bool {
        self.eof && self.carry.is_empty()
    }

    /// Reads the next chunk of whole lines into `chunk`; false at the end.
    pub fn cut(&mut self, chunk: &mut Chunk) -> Result<bool> {
        chunk.cut = false;
        let carried = self.carry.len();
        if chunk.buf.len() < carried.max(CHUNK) + CHUNK / 2 {
            chunk.buf.resize(carried.max(CHUNK) + CHUNK / 2, 0);
        }
        chunk.buf[..carried].copy_from_slice(&self.carry);
        self.carry.clear();
        let (mut len, mut scanned) = (carried, 0);
        loop {
            let last_newline = memchr::memrchr(b'\n', &chunk.buf[scanned..len]);
            match last_newline {
                Some(i) if len >= CHUNK || self.eof => {
                    let end = scanned + i + 1;
                    self.carry.extend_from_slice(&chunk.buf[end..len]);
                    chunk.len = end;
                    return Ok(true);
                }
                Some(_) => {}
                None => scanned = len,
            }
            if self.eof {
                chunk.len = len;
                chunk.cut = len > 0;
                return Ok(len > 0);
            }
            if len - scanned > MAX_LINE {
                return Err(Error::file(
                    self.name.clone(),
                    format!("line longer than {MAX_LINE} bytes"),
                ));
            }
            if len == chunk.buf.len() {
                // A line longer than the buffer: room for more of it.
                chunk.buf.resize(len + CHUNK, 0);
            }
            let n = loop {
                match self.input.read(&mut chunk.buf[len..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Error::io(self.name.clone(), e)),
                }
            };
            len += n;
            self.eof = n == 0;
        }
    }
}

impl<W: ChunkWork> Drop for Chunked<W> {
    fn drop(&mut self) {
        for w in &mut self.workers {
            w.jobs.take();
        }
        for w in &mut self.workers {
            while w.done.try_recv().is_ok() {}
            if let Some(t) = w.thread.take() {
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the lines of a chunk and their bytes, and says if it is cut.
    pub(super) struct Count;

    impl ChunkWork for Count {
        type Out = (usize, usize, bool);
        fn run(&mut self, chunk: &Chunk, out: &mut (usize, usize, bool)) {
            *out = (
                chunk.lines().count(),
                chunk.lines().map(<[u8]>::len).sum(),
                chunk.cut,
            );
        }
    }

    /// `lines` lines of different lengths, and one without its newline
    /// when `cut`.
    pub(super) fn sample(lines: usize, cut: bool) -> String {
        let mut text = String::new();
        for i in 0..lines {
            text.push_str(&"x".repeat(i % 97));
            text.push('\n');
        }
        if cut {
            text.push_str("last");
        }
        text
    }

    #[test]
    fn chunks_come_back_in_order_and_whole() {
        for (lines, cut) in [(0, false), (1, false), (200_000, false), (200_000, true)] {
            let text = sample(lines, cut);
            let (head, rest) = text.as_bytes().split_at(text.len().min(10));
            let input: Box<dyn Read> = Box::new(std::io::Cursor::new(rest.to_vec()));
            let mut chunked = Chunked::new("t", head.to_vec(), input, vec![Count, Count]).unwrap();
            let (mut n, mut bytes, mut chunks, mut last_cut) = (0, 0, 0, false);
            while let Some((chunk, (l, b, c))) = chunked.next_done().unwrap() {
                assert!(chunk.cut || chunk.bytes().ends_with(b"\n"));
                n += l;
                bytes += b;
                chunks += 1;
                last_cut = c;
                chunked.recycle(chunk, (0, 0, false));
            }
            let want_lines = lines + usize::from(cut);
            assert_eq!(n, want_lines);
            assert_eq!(bytes, text.len() - lines);
            assert_eq!(last_cut, cut);
            assert!(chunks >= text.len() / (2 * CHUNK), "{chunks}");
        }
    }
}
