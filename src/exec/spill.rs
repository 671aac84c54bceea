//! Rows sorted by a key in bounded memory: for a source whose rows come in
//! no useful order (a Chrome trace's events). Rows gather in memory up to
//! a bound of rows and text; past it each sorted run goes to a file of a
//! private temporary folder (packed as [`RecordBatch`]es), and the runs
//! are merged back as they are read. Memory: one run being filled, and one
//! chunk of each run spilled.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::exec::batch::RecordBatch;
use crate::model::record::Record;

/// Rows a run holds in memory before it is spilled.
pub const RUN_ROWS: usize = 1 << 15;
/// Text a run holds in memory before it is spilled.
pub const RUN_TEXT: usize = 16 << 20;
/// Rows per chunk of a spilled run (what a run keeps in memory when read).
const CHUNK_ROWS: usize = 256;

/// Where a row sorts, and where it came from: `(key, rank, seq)` orders (`seq`
/// the order rows were pushed in, so equal keys keep it), `mark` travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct RowOrder {
    /// The sort key.
    pub key: i64,
    /// The second sort key.
    pub rank: i64,
    /// The push order.
    pub seq: u64,
    /// The source's mark of the row.
    pub mark: u64,
}

struct HeldRow {
    place: RowOrder,
    rec: Record,
}

/// Gathers rows, spilling sorted runs when memory is full.
pub struct Sorter {
    entries: Vec<HeldRow>,
    len: usize,
    text: usize,
    seq: u64,
    folder: Option<SpillFolder>,
    runs: Vec<PathBuf>,
    limits: (usize, usize),
}

impl Default for Sorter {
    fn default() -> Self {
        Sorter::with_limits(RUN_ROWS, RUN_TEXT)
    }
}

impl Sorter {
    /// A sorter whose runs hold `rows` rows or `text` bytes of text.
    pub fn with_limits(rows: usize, text: usize) -> Sorter {
        Sorter {
            entries: Vec::new(),
            len: 0,
            text: 0,
            seq: 0,
            folder: None,
            runs: Vec::new(),
            limits: (rows.max(1), text),
        }
    }

    /// Adds a copy of `rec`, sorting at `(key, rank)`, read at `mark`.
    pub fn push(&mut self, key: i64, rank: i64, mark: u64, rec: &Record) -> Result<()> {
        let place = RowOrder {
            key,
            rank,
            seq: self.seq,
            mark,
        };
        self.seq += 1;
        if self.len < self.entries.len() {
            let entry = &mut self.entries[self.len];
            entry.place = place;
            entry.rec.clone_from(rec);
        } else {
            self.entries.push(HeldRow {
                place,
                rec: rec.clone(),
            });
        }
        self.len += 1;
        self.text += rec.texts().iter().map(|t| t.len()).sum::<usize>();
        if self.len >= self.limits.0 || self.text >= self.limits.1 {
            self.spill()?;
        }
        Ok(())
    }

    /// How many runs went to files so far.
    pub fn spilled_runs(&self) -> usize {
        self.runs.len()
    }

    fn sort_held(&mut self) {
        self.entries[..self.len].sort_unstable_by_key(|e| (e.place.key, e.place.rank, e.place.seq));
    }

    fn spill(&mut self) -> Result<()> {
        self.sort_held();
        if self.folder.is_none() {
            self.folder = Some(SpillFolder::new()?);
        }
        let folder = self.folder.as_ref().expect("made");
        let path = folder.path.join(format!("run-{}", self.runs.len()));
        let mut out = BufWriter::new(File::create(&path).map_err(|e| folder.error(e))?);
        let mut batch = RecordBatch::new();
        for chunk in self.entries[..self.len].chunks(CHUNK_ROWS) {
            batch.clear();
            let count = chunk.len() as u64;
            out.write_all(&count.to_le_bytes())
                .map_err(|e| folder.error(e))?;
            for e in chunk {
                batch.push(&e.rec);
                let p = e.place;
                for n in [p.key as u64, p.rank as u64, p.seq, p.mark] {
                    out.write_all(&n.to_le_bytes())
                        .map_err(|e| folder.error(e))?;
                }
            }
            batch.write_to(&mut out).map_err(|e| folder.error(e))?;
        }
        out.flush().map_err(|e| folder.error(e))?;
        self.runs.push(path);
        self.len = 0;
        self.text = 0;
        // A run of huge rows must not keep their buffers.
        self.entries.truncate(self.limits.0.min(self.entries.len()));
        Ok(())
    }

    /// The rows in order of key, rank, then push order.
    pub fn finish(mut self) -> Result<Sorted> {
        if self.runs.is_empty() {
            self.sort_held();
            self.entries.truncate(self.len);
            self.entries.reverse();
            return Ok(Sorted(Order::Held(self.entries)));
        }
        if self.len > 0 {
            self.spill()?;
        }
        let folder = self.folder.take().expect("runs were spilled");
        let mut runs = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::new();
        for (i, path) in self.runs.iter().enumerate() {
            let file = File::open(path).map_err(|e| folder.error(e))?;
            let mut run = SpilledRun {
                input: BufReader::with_capacity(64 << 10, file),
                held: Vec::new(),
                next: 0,
                batch: RecordBatch::new(),
            };
            if let Some(place) = run.peek(&folder)? {
                heap.push(Reverse((place, i)));
            }
            runs.push(run);
        }
        Ok(Sorted(Order::Merged { runs, heap, folder }))
    }
}

/// The sorted rows, handed out one at a time.
pub struct Sorted(Order);

enum Order {
    /// All in memory (in reverse, so each is popped).
    Held(Vec<HeldRow>),
    /// Runs from files, merged.
    Merged {
        runs: Vec<SpilledRun>,
        heap: BinaryHeap<Reverse<(RowOrder, usize)>>,
        folder: SpillFolder,
    },
}

impl Sorted {
    /// Refills `rec` with the next row; its place, or `None` at the end.
    pub fn next_into(&mut self, rec: &mut Record) -> Result<Option<RowOrder>> {
        match &mut self.0 {
            Order::Held(entries) => Ok(entries.pop().map(|e| {
                *rec = e.rec;
                e.place
            })),
            Order::Merged { runs, heap, folder } => {
                let Some(Reverse((place, i))) = heap.pop() else {
                    return Ok(None);
                };
                let run = &mut runs[i];
                std::mem::swap(rec, &mut run.held[run.next].1);
                run.next += 1;
                if let Some(next) = run.peek(folder)? {
                    heap.push(Reverse((next, i)));
                }
                Ok(Some(place))
            }
        }
    }
}

/// A spilled run being read: its current chunk decoded.
struct SpilledRun {
    input: BufReader<File>,
    held: Vec<(RowOrder, Record)>,
    next: usize,
    batch: RecordBatch,
}

impl SpilledRun {
    /// The place of the next row, reading the next chunk when needed.
    fn peek(&mut self, folder: &SpillFolder) -> Result<Option<RowOrder>> {
        if self.next == self.held.len() && !self.read_chunk(folder)? {
            return Ok(None);
        }
        Ok(Some(self.held[self.next].0))
    }

    /// Reads the next chunk: its row count, the rows' places, its batch.
    fn read_chunk(&mut self, folder: &SpillFolder) -> Result<bool> {
        let mut word = [0u8; 8];
        match self.input.read_exact(&mut word) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(folder.error(e)),
        }
        let count = u64::from_le_bytes(word) as usize;
        if count == 0 || count > CHUNK_ROWS {
            return Err(folder.error(std::io::ErrorKind::InvalidData.into()));
        }
        let mut places = Vec::with_capacity(count);
        let mut triple = [0u8; 32];
        for _ in 0..count {
            self.input
                .read_exact(&mut triple)
                .map_err(|e| folder.error(e))?;
            let n = |i: usize| u64::from_le_bytes(triple[i * 8..i * 8 + 8].try_into().expect("8"));
            places.push(RowOrder {
                key: n(0) as i64,
                rank: n(1) as i64,
                seq: n(2),
                mark: n(3),
            });
        }
        self.load_batch(places, folder)
    }

    fn load_batch(&mut self, places: Vec<RowOrder>, folder: &SpillFolder) -> Result<bool> {
        if !self
            .batch
            .read_from(&mut self.input)
            .map_err(|e| folder.error(e))?
        {
            return Err(folder.error(std::io::ErrorKind::UnexpectedEof.into()));
        }
        self.held
            .resize_with(places.len(), || (places[0], Record::default()));
        let mut reader = self.batch.reader();
        for (slot, place) in self.held.iter_mut().zip(places) {
            slot.0 = place;
            if !reader.next_into(&mut slot.1) {
                return Err(folder.error(std::io::ErrorKind::InvalidData.into()));
            }
        }
        self.next = 0;
        Ok(true)
    }
}

/// A private temporary folder, removed with everything in it when dropped.
struct SpillFolder {
    path: PathBuf,
}

impl SpillFolder {
    fn new() -> Result<SpillFolder> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let path = base.join(format!("tracepipe-sort-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(SpillFolder { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(SpillFolder { path }.error(e)),
            }
        }
        Err(Error::Usage(format!(
            "no temporary folder could be made in {} to sort rows",
            base.display()
        )))
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::io(format!("sorting rows in {}", self.path.display()), e)
    }
}

impl Drop for SpillFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Kind;

    /// Rows pushed in a scrambled order come back sorted by key, rank and
    /// push order, whole, through spilled runs; the folder goes with them.
    #[test]
    fn spilled_runs_merge_in_order() {
        let mut sorter = Sorter::with_limits(100, 1 << 20);
        let mut want = Vec::new();
        let mut x: u64 = 7;
        for seq in 0..5_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (key, rank) = ((x >> 40) as i64 % 300 - 150, (x >> 20) as i64 % 3);
            let mut rec = Record::new(Kind::Event);
            rec.time = Some(key);
            rec.id = format!("row {seq} é");
            sorter.push(key, rank, seq * 10, &rec).unwrap();
            want.push((key, rank, seq));
        }
        assert_eq!(sorter.spilled_runs(), 50);
        want.sort_unstable();
        let mut sorted = sorter.finish().unwrap();
        let Order::Merged { folder, .. } = &sorted.0 else {
            panic!("the runs were spilled")
        };
        let path = folder.path.clone();
        assert!(path.exists());
        let mut rec = Record::default();
        for (key, rank, seq) in want {
            let place = sorted.next_into(&mut rec).unwrap().expect("a row");
            assert_eq!(
                (place.key, place.rank, place.seq, place.mark),
                (key, rank, seq, seq * 10)
            );
            assert_eq!(rec.id, format!("row {seq} é"));
            assert_eq!(rec.time, Some(key));
        }
        assert!(sorted.next_into(&mut rec).unwrap().is_none());
        drop(sorted);
        assert!(!path.exists());
    }

    /// Without a spill, the rows are sorted in memory.
    #[test]
    fn held_rows_sort_in_memory() {
        let mut sorter = Sorter::default();
        for (seq, key) in [5i64, -1, 5, 3].into_iter().enumerate() {
            let rec = Record::new(Kind::Event);
            sorter.push(key, 0, seq as u64, &rec).unwrap();
        }
        let mut sorted = sorter.finish().unwrap();
        let mut rec = Record::default();
        let mut got = Vec::new();
        while let Some(p) = sorted.next_into(&mut rec).unwrap() {
            got.push((p.key, p.seq));
        }
        assert_eq!(got, [(-1, 1), (3, 3), (5, 0), (5, 2)]);
    }
}
