//! A chunked OTF2 file written as records come: a location's events or the
//! global definitions. Each chunk is `chunk_size` bytes: a header naming its
//! first and last record, the records, an end-of-chunk record and zero
//! padding; the last chunk ends with end-of-file. Bytes wait in memory up to
//! `flush_at`, then are appended to the file, which is opened only to write
//! them: thousands of locations need few descriptors.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use super::super::buffer::{self, CHUNK_HEADER_LEN};
use crate::error::{Error, Result};

/// A chunked file being written.
pub struct ChunkFile {
    path: PathBuf,
    chunk_size: u64,
    flush_at: usize,
    /// Bytes not yet in the file.
    pending: Vec<u8>,
    /// Bytes in the file.
    flushed: u64,
    /// Offset of the current chunk.
    chunk_start: u64,
    /// Number of the current chunk's first record, and its records.
    first: u64,
    records: u64,
}

impl ChunkFile {
    /// Creates (or empties) the file at `path`.
    pub fn create(path: PathBuf, chunk_size: u64, flush_at: usize) -> Result<ChunkFile> {
        File::create(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
        let mut file = ChunkFile {
            path,
            chunk_size,
            flush_at,
            pending: Vec::with_capacity(flush_at.min(1 << 16)),
            flushed: 0,
            chunk_start: 0,
            first: 1,
            records: 0,
        };
        file.header();
        Ok(file)
    }

    fn header(&mut self) {
        self.pending.push(buffer::CHUNK_HEADER);
        self.pending.push(buffer::LITTLE_ENDIAN);
        self.pending.extend_from_slice(&self.first.to_le_bytes());
        self.pending.extend_from_slice(&0u64.to_le_bytes());
    }

    fn len(&self) -> u64 {
        self.flushed + self.pending.len() as u64
    }

    /// Appends one record (an event with its timestamp and attributes, or a
    /// definition), starting a new chunk when it does not fit.
    pub fn push(&mut self, record: &[u8]) -> Result<()> {
        let used = self.len() - self.chunk_start;
        let need = record.len() as u64 + 1;
        if used + need > self.chunk_size && used > CHUNK_HEADER_LEN as u64 {
            self.close_chunk(true)?;
        }
        if CHUNK_HEADER_LEN as u64 + need > self.chunk_size {
            // The row's: the driver names it.
            return Err(Error::Record(format!(
                "the row makes an OTF2 record of {} bytes, more than a chunk of {} bytes holds (docs/formats.md: a value or name of about a MiB cannot be written to OTF2)",
                record.len(),
                self.chunk_size
            )));
        }
        self.pending.extend_from_slice(record);
        self.records += 1;
        if self.pending.len() >= self.flush_at {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the current chunk's last record number into its header; with
    /// `more`, ends it, pads it and starts the next.
    fn close_chunk(&mut self, more: bool) -> Result<()> {
        let last = self.first + self.records - 1;
        let at = self.chunk_start + 10;
        match at.checked_sub(self.flushed) {
            Some(i) => {
                let i = i as usize;
                self.pending[i..i + 8].copy_from_slice(&last.to_le_bytes());
            }
            None => self.write_at(at, &last.to_le_bytes())?,
        }
        if !more {
            return Ok(());
        }
        self.pending.push(buffer::END_OF_CHUNK);
        let end = self.chunk_start + self.chunk_size;
        while self.len() < end {
            let gap = (end - self.len()).min(1 << 16) as usize;
            self.pending.resize(self.pending.len() + gap, 0);
            self.flush()?;
        }
        self.chunk_start = end;
        self.first = last + 1;
        self.records = 0;
        self.header();
        Ok(())
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(self.path.display().to_string(), e)
    }

    fn write_at(&mut self, at: u64, bytes: &[u8]) -> Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
        file.write_all_at(bytes, at).map_err(|e| self.io(e))
    }

    /// Appends the bytes waiting to the file.
    pub fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
        file.write_all(&self.pending).map_err(|e| self.io(e))?;
        self.flushed += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Ends the file (once); returns how many records it holds.
    pub fn finish(&mut self) -> Result<u64> {
        self.close_chunk(false)?;
        self.pending.push(buffer::END_OF_FILE);
        self.pending.push(buffer::END_OF_BUFFER);
        self.flush()?;
        Ok(self.first + self.records - 1)
    }
}
