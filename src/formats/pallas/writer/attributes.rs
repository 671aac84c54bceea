//! The attribute lists of a thread's events, which Pallas stores in the
//! thread file, event by event: held in memory up to [`HELD`] bytes per
//! thread, then appended to a spill file beside the thread's files, each
//! event remembering where its pieces went; copied into the thread file at
//! the end, and the spill file removed.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use crate::error::{Error, Result};

/// Bytes of attribute lists a thread holds before it spills them.
const HELD: usize = 1 << 18;

/// One event's attribute lists: pieces spilled, and bytes still held.
#[derive(Debug, Default)]
pub struct EventAttributes {
    spilled: Vec<(u64, u32)>,
    held: Vec<u8>,
}

impl EventAttributes {
    /// Bytes in all.
    pub fn len(&self) -> u64 {
        self.spilled.iter().map(|&(_, n)| n as u64).sum::<u64>() + self.held.len() as u64
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.spilled.is_empty() && self.held.is_empty()
    }

    /// Where lists are appended.
    pub fn held_mut(&mut self) -> &mut Vec<u8> {
        &mut self.held
    }
}

/// A thread's spill file, made when first needed.
pub struct Spill {
    path: PathBuf,
    file: Option<File>,
    at: u64,
    /// Bytes held by the thread's events.
    pub held: usize,
}

impl Spill {
    /// A spill file at `path`, not made yet.
    pub fn new(path: PathBuf) -> Spill {
        Spill {
            path,
            file: None,
            at: 0,
            held: 0,
        }
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::io(self.path.display().to_string(), e)
    }

    /// Whether the events hold enough to spill.
    pub fn full(&self) -> bool {
        self.held >= HELD
    }

    /// Appends what `events` hold to the spill file.
    pub fn spill<'a>(
        &mut self,
        events: impl Iterator<Item = &'a mut EventAttributes>,
    ) -> Result<()> {
        if self.file.is_none() {
            let file = OpenOptions::new()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&self.path)
                .map_err(|e| self.error(e))?;
            self.file = Some(file);
        }
        let mut file = self.file.take().expect("just made");
        for e in events.filter(|e| !e.held.is_empty()) {
            file.write_all(&e.held).map_err(|err| self.error(err))?;
            e.spilled.push((self.at, e.held.len() as u32));
            self.at += e.held.len() as u64;
            e.held = Vec::new();
        }
        self.file = Some(file);
        self.held = 0;
        Ok(())
    }

    /// Writes event `e`'s lists to `out`, the spilled pieces read back.
    pub fn copy(&mut self, e: &EventAttributes, out: &mut dyn Write) -> Result<()> {
        let mut buf = Vec::new();
        for &(at, n) in &e.spilled {
            let file = self.file.as_mut().expect("spilled pieces have a file");
            buf.resize(n as usize, 0);
            let read = file
                .seek(SeekFrom::Start(at))
                .and_then(|_| file.read_exact(&mut buf));
            read.map_err(|err| self.error(err))?;
            out.write_all(&buf).map_err(|err| self.error(err))?;
        }
        out.write_all(&e.held).map_err(|err| self.error(err))
    }

    /// Removes the spill file, if made.
    pub fn remove(&mut self) -> Result<()> {
        if self.file.take().is_some() {
            std::fs::remove_file(&self.path).map_err(|e| self.error(e))?;
        }
        Ok(())
    }
}
