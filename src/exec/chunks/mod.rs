//! An input cut into chunks of whole lines, each chunk worked on as a job
//! of the pipeline's pool ([`crate::exec::ordered`]), the results handed
//! back in input order: how a text reader puts more cores to work on its
//! lines (the TSV reader parses rows so, the Pajé reader cuts lines into
//! words).
//!
//! The calling thread reads the input and cuts it at newlines, a chunk for
//! each copy of the work that is free; a chunk it needs that no worker has
//! started, it works on itself. Memory: one chunk and its result per copy
//! of the work (the chunks in flight), and the one being read.

use std::io::Read;

use crate::error::{Error, Result};
use crate::exec::ordered::{Ordered, OrderedWork};
use crate::io::MAX_LINE;
use crate::pool::Pool;

/// Bytes a chunk is read to, at least, before it is cut at its last
/// newline. A read fills the chunk's whole buffer, which is 1.5 times this,
/// or more for a buffer that once held a longer start (the first chunk of a
/// TSV stream carries what the header's reader had buffered, up to 256 KiB):
/// the job that gets that buffer back parses about twice the rows of the
/// others, which measured faster on two cores than equal chunks (1.2 times
/// the time), the reading thread sharing a core with the other one.
pub const CHUNK: usize = 64 * 1024;

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

/// An input whose chunks are worked on by the pool's threads, handed back
/// in order.
pub struct Chunked<W: OrderedWork<In = Chunk>> {
    cutter: Cutter,
    ordered: Ordered<W>,
}

impl<W: OrderedWork<In = Chunk>> Chunked<W> {
    /// Works on the lines of `input` (named `name` in errors), starting
    /// with `start`, bytes already read from it, on `pool`: a chunk in
    /// flight for each copy of the work in `work`.
    pub fn new(
        name: &str,
        start: Vec<u8>,
        input: Box<dyn Read>,
        work: Vec<W>,
        pool: &Pool,
    ) -> Chunked<W> {
        Chunked {
            cutter: Cutter::new(name, start, input),
            ordered: Ordered::new(name, work, pool),
        }
    }

    /// The next chunk and what was made of it, in input order; `None` at
    /// the end of the input.
    pub fn next_done(&mut self) -> Result<Option<(Chunk, W::Out)>> {
        while self.ordered.has_room() && !self.cutter.is_done() {
            let (mut chunk, out) = self.ordered.buffers();
            if !self.cutter.cut(&mut chunk)? {
                self.ordered.recycle(chunk, out);
                break;
            }
            self.ordered.submit(chunk, out)?;
        }
        self.ordered.next_done()
    }

    /// Gives a chunk and its result back, to be filled again.
    pub fn recycle(&mut self, chunk: Chunk, out: W::Out) {
        self.ordered.recycle(chunk, out);
    }
}

/// Reads an input and cuts it into chunks of whole lines.
pub struct Cutter {
    name: String,
    input: Box<dyn Read>,
    /// Bytes read after the last newline of the last chunk cut.
    carry: Vec<u8>,
    eof: bool,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the lines of a chunk and their bytes, and says if it is cut.
    pub(super) struct Count;

    impl OrderedWork for Count {
        type In = Chunk;
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

    /// [`Count`], taking `ms` milliseconds on every `every`-th chunk it
    /// is given, or panicking there when `ms` is `None`.
    struct Uneven {
        ms: Option<u64>,
        every: usize,
        seen: usize,
    }

    impl OrderedWork for Uneven {
        type In = Chunk;
        type Out = (usize, usize, bool);
        fn run(&mut self, chunk: &Chunk, out: &mut Self::Out) {
            self.seen += 1;
            if self.seen % self.every == 0 {
                match self.ms {
                    Some(ms) => std::thread::sleep(std::time::Duration::from_millis(ms)),
                    None => panic!("deliberate"),
                }
            }
            Count.run(chunk, out);
        }
    }

    /// Every chunk once, in input order, and whole, for pools of 1 to 3
    /// threads, copies of the work finishing out of turn.
    #[test]
    fn chunks_come_back_in_order_and_whole() {
        for threads in [1, 2, 3] {
            let pool = Pool::new(crate::pool::Threads::new(threads));
            for (lines, cut) in [(0, false), (1, false), (200_000, false), (200_000, true)] {
                let text = sample(lines, cut);
                let (head, rest) = text.as_bytes().split_at(text.len().min(10));
                let input: Box<dyn Read> = Box::new(std::io::Cursor::new(rest.to_vec()));
                let work = (1..=3)
                    .map(|every| Uneven {
                        ms: Some(2),
                        every,
                        seen: 0,
                    })
                    .collect();
                let mut chunked = Chunked::new("t", head.to_vec(), input, work, &pool);
                let (mut n, mut whole, mut chunks, mut last_cut) = (0, Vec::new(), 0, false);
                while let Some((chunk, (l, _, c))) = chunked.next_done().unwrap() {
                    assert!(chunk.cut || chunk.bytes().ends_with(b"\n"));
                    n += l;
                    whole.extend_from_slice(chunk.bytes());
                    chunks += 1;
                    last_cut = c;
                    chunked.recycle(chunk, (0, 0, false));
                }
                assert_eq!(n, lines + usize::from(cut));
                assert!(whole == text.as_bytes());
                assert_eq!(last_cut, cut);
                assert!(chunks >= text.len() / (2 * CHUNK), "{chunks}");
            }
        }
    }

    #[test]
    fn a_job_that_panics_is_an_error_not_a_hang() {
        for threads in [1, 2] {
            let pool = Pool::new(crate::pool::Threads::new(threads));
            let input: Box<dyn Read> = Box::new(std::io::Cursor::new(sample(200_000, false)));
            let work = (0..2)
                .map(|_| Uneven {
                    ms: None,
                    every: 3,
                    seen: 0,
                })
                .collect();
            let mut chunked = Chunked::new("t.tsv", Vec::new(), input, work, &pool);
            let err = loop {
                match chunked.next_done() {
                    Ok(Some((chunk, out))) => chunked.recycle(chunk, out),
                    Ok(None) => panic!("every chunk came back, one of them from a panicked job"),
                    Err(e) => break e.to_string(),
                }
            };
            assert_eq!(err, "t.tsv: a worker thread stopped");
        }
    }
}
