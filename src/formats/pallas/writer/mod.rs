//! Pallas writers. `-t pallas` (this module): any stream → a Pallas trace
//! folder (ABI 20) whose grammar is discovered as rows come
//! (`grammar.rs`), rows mapped to records in `rows.rs`, definitions in
//! `defs.rs`. `spec.rs` writes a trace from an explicit description (for
//! the generator and the tests); `layout.rs` has the byte layouts both use.
//!
//! Each stream location with rows (or named as a peer) is a Pallas thread;
//! a thread's archive (process) is its location's parent container, or the
//! location itself. Memory: per thread its grammar and one block of values
//! per vector, the definitions but strings (spilled to a file as made),
//! the `container` and `type` rows.

mod attributes;
mod blocks;
pub mod defs;
pub mod grammar;
pub mod layout;
mod rows;
pub mod spec;

pub use spec::*;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::archive::{BlockCompression, Encoding, Parameters, WRITE_ABI};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::formats::stream::jsonl;
use crate::io::{Output, StagingFolder};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{FormatOption, OptionValue, RecordSink, WriteOptions};
use defs::Registry;
use grammar::Grammar;
use layout::{Dat, LeBytes};

/// The metadata key that marks a trace written from a stream (its value:
/// the mapping's version); its reader gives the stream's rows back.
pub const STREAM_KEY: &str = "tracepipe.stream";
/// The mapping's version.
pub const STREAM_VERSION: &str = "1";
/// The metadata key of the stream's `container` and `type` rows (JSON Lines).
pub const HEAD_KEY: &str = "tracepipe.head";
/// The metadata key that says how far, in ns, a row read back may begin
/// before its event (a row kept whole stands at its completion): a reader
/// bounds how early a row still to come can start.
pub const LEAD_KEY: &str = "tracepipe.lead";
/// The prefix of the metadata keys that give a region's `cat`.
pub const CAT_KEY: &str = "tracepipe.cat.";
/// The prefix of the metadata keys that name a location with no thread
/// (named only as a peer) by its id.
pub const LOC_KEY: &str = "tracepipe.loc.";

/// The option that chooses the codec.
const CODEC: &str = "pallas-codec";

/// Longest loop body looked for, in tokens (Pallas's `maxLoopLength`).
pub const MAX_LOOP: usize = 100;

/// The writer's options.
pub const WRITE_OPTIONS: &[FormatOption] = &[FormatOption {
    name: CODEC,
    help: "How timestamps and durations are stored: none, zstd (the default), masking (each block's values in the bytes the largest needs) or zstd-masking; all lossless",
    value: OptionValue::Choice("CODEC", &["none", "zstd", "masking", "zstd-masking"]),
}];

/// The folder a trace named `name` is written in, and its main file's
/// name there: `DIR/NAME.pallas` names the main file, anything else (a
/// name ending in `/`, an existing folder, a name without `.pallas`) the
/// folder, whose main file is `main.pallas`.
fn trace_paths(name: &str) -> (PathBuf, std::ffi::OsString) {
    let named = PathBuf::from(name);
    let folder = name.ends_with('/') || name.ends_with(std::path::MAIN_SEPARATOR) || named.is_dir();
    if folder || named.extension().is_none_or(|e| e != "pallas") {
        return (named, "main.pallas".into());
    }
    let dir = named.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = match dir.as_os_str().is_empty() {
        true => PathBuf::from("."),
        false => dir,
    };
    (dir, named.file_name().expect("a file name").to_owned())
}

/// What the writer writes for `-o NAME`: its main file and the archives'
/// folders beside it (`archive_*`; the folder itself when `NAME` is one).
pub fn written_paths(name: &str) -> Vec<PathBuf> {
    let (dir, main) = trace_paths(name);
    let mut paths = vec![dir.join(main)];
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let archives = entries.filter_map(|e| e.ok().map(|e| e.path()));
        paths.extend(archives.filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("archive_"))
        }));
    }
    paths
}

/// Registry constructor: `out` names the folder, or its main file
/// (`DIR/NAME.pallas`).
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    if out.name().starts_with('<') {
        return Err(Error::Usage(
            "a Pallas trace is a folder: name it (-o DIR) or its main file (-o DIR/NAME.pallas)"
                .into(),
        ));
    }
    let (dir, main) = trace_paths(out.name());
    // The output opened for the name is not the trace; it is dropped unwritten.
    drop(out);
    let (compression, encoding) = match opts.format.choice(CODEC).unwrap_or("zstd") {
        "none" => (BlockCompression::None, Encoding::None),
        "masking" => (BlockCompression::None, Encoding::Masking),
        "zstd-masking" => (BlockCompression::Zstd, Encoding::Masking),
        _ => (BlockCompression::Zstd, Encoding::None),
    };
    let params = Parameters {
        abi: WRITE_ABI,
        compression,
        encoding,
    };
    // Written in a staging folder, moved in place when finished.
    let staging = StagingFolder::create(&dir)?;
    let path = staging.path().to_path_buf();
    let main = path.join(main);
    let mut writer = PallasWriter::create(path, main, params, opts.symbols.clone())?;
    writer.staging = Some(staging);
    Ok(Box::new(writer))
}

/// A `.dat` file appended to in steps: few bytes held per thread, and no
/// file kept open, so thousands of threads need few descriptors.
pub struct Appender {
    path: PathBuf,
    held: Vec<u8>,
}

/// Bytes a thread's `.dat` file holds before they are appended.
const APPEND_AT: usize = 1 << 16;

impl Appender {
    fn create(path: PathBuf) -> Result<Appender> {
        std::fs::File::create(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
        Ok(Appender {
            path,
            held: Vec::new(),
        })
    }

    fn append(&mut self) -> std::io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let mut f = OpenOptions::new().append(true).open(&self.path)?;
        f.write_all(&self.held)?;
        self.held.clear();
        Ok(())
    }
}

impl Write for Appender {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(buf);
        if self.held.len() >= APPEND_AT {
            self.append()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.append()
    }
}

/// A thread being written. Its id is given at the end, when the ids of
/// each archive's threads are made consecutive (Pallas's readers find a
/// thread at its id less its archive's first); until then its folder is
/// named by its number as made.
struct ThreadOut {
    archive: u32,
    loc: Sym,
    dir: PathBuf,
    grammar: Grammar,
    /// Event timestamps, and the sequences' vectors.
    dats: [Dat<Appender>; 2],
    /// Its events' attribute lists beyond what they hold.
    spill: attributes::Spill,
    /// Open frames: name, cat and what opened it.
    frames: Vec<(Sym, Sym, u32)>,
    /// The time of its last event, once it has one.
    last: Option<u64>,
}

/// A process: a location that has threads.
struct ArchiveOut {
    loc: Sym,
    threads: Vec<u32>,
}

/// The Pallas writer.
pub struct PallasWriter {
    symbols: Symbols,
    /// Where the trace is written, and its main file there.
    dir: PathBuf,
    main: PathBuf,
    /// The folder the trace is moved from when finished (`dir`), if it is
    /// written in one (see [`StagingFolder`]).
    staging: Option<StagingFolder>,
    params: Parameters,
    registry: Option<Registry>,
    threads: Vec<ThreadOut>,
    by_loc: FastMap<Sym, u32>,
    archives: Vec<ArchiveOut>,
    by_archive: FastMap<Sym, u32>,
    /// Each declared container's parent.
    parents: FastMap<Sym, Sym>,
    /// The stream's `container` and `type` rows, as JSON Lines.
    head: Vec<u8>,
    names: rows::SymbolAnswers,
    /// Reused: an occurrence's attribute values, texts.
    values: LeBytes,
    value_count: usize,
    text: String,
    json: Vec<u8>,
    /// How far a row read back may begin before its event ([`LEAD_KEY`]).
    lead: i64,
    finished: bool,
}

impl PallasWriter {
    fn create(dir: PathBuf, main: PathBuf, params: Parameters, symbols: Symbols) -> Result<Self> {
        layout::mkdir(&dir)?;
        Ok(PallasWriter {
            names: rows::SymbolAnswers::new(symbols.clone()),
            symbols,
            registry: Some(Registry::create(defs::spill_path(&dir))?),
            dir,
            main,
            staging: None,
            params,
            threads: Vec::new(),
            by_loc: FastMap::default(),
            archives: Vec::new(),
            by_archive: FastMap::default(),
            parents: FastMap::default(),
            head: Vec::new(),
            values: LeBytes::default(),
            value_count: 0,
            text: String::new(),
            json: Vec::new(),
            lead: 0,
            finished: false,
        })
    }

    fn registry(&mut self) -> &mut Registry {
        self.registry.as_mut().expect("open until finished")
    }

    /// The thread of location `loc`, made on first use in the archive of
    /// its parent container (or of its own).
    fn thread(&mut self, loc: Sym) -> Result<u32> {
        if let Some(&t) = self.by_loc.get(&loc) {
            return Ok(t);
        }
        let process = self.parents.get(&loc).copied().unwrap_or(loc);
        let archive = match self.by_archive.get(&process) {
            Some(&a) => a,
            None => {
                let a = self.archives.len() as u32;
                self.archives.push(ArchiveOut {
                    loc: process,
                    threads: Vec::new(),
                });
                self.by_archive.insert(process, a);
                a
            }
        };
        let id = self.threads.len() as u32;
        let dir = self
            .dir
            .join(format!("archive_{archive}"))
            .join(format!("thread_tmp{id}"));
        layout::mkdir(&dir)?;
        let dat = |name: &str| -> Result<Dat<Appender>> {
            let path = dir.join(name);
            let shown = path.display().to_string();
            Ok(Dat::new(Appender::create(path)?, self.params, shown))
        };
        let dats = [dat("event_durations.dat")?, dat("sequence_durations.dat")?];
        let spill = attributes::Spill::new(dir.join("attributes.tmp"));
        self.threads.push(ThreadOut {
            archive,
            loc,
            dir,
            grammar: Grammar::new(MAX_LOOP),
            spill,
            dats,
            frames: Vec::new(),
            last: None,
        });
        self.archives[archive as usize].threads.push(id);
        self.by_loc.insert(loc, id);
        Ok(id)
    }
}

impl RecordSink for PallasWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some((name, _)) = rec.extra.first() {
            return Err(Error::Record(format!(
                "Pallas has no place for the extra column `{name}`"
            )));
        }
        match rec.kind {
            // The reader gives its own (docs/formats.md).
            Kind::Meta => Ok(()),
            Kind::Container | Kind::Type => {
                if rec.kind == Kind::Container && rec.peer != Sym::EMPTY {
                    self.parents.insert(rec.loc, rec.peer);
                }
                jsonl::encode_row(rec, &self.symbols, 1, &mut self.head);
                Ok(())
            }
            _ => self.write_row(rec),
        }
    }

    fn finish(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        if !(0..self.threads.len()).any(|t| self.is_written(t)) {
            return Err(Error::Record(
                "no row a Pallas thread holds (a frame, event, message half, collective or counter): Pallas's own readers (pallas_print, its MultiThreadReader, 0.20) fail on a trace of no threads, so none is written".to_string(),
            ));
        }
        let ids = self.thread_ids();
        for (t, &id) in ids.iter().enumerate() {
            match self.is_written(t) {
                true => self.write_thread(t, id)?,
                false => {
                    let dir = &self.threads[t].dir;
                    std::fs::remove_dir_all(dir)
                        .map_err(|e| Error::io(dir.display().to_string(), e))?;
                }
            }
        }
        self.write_archives(&ids)?;
        self.write_main(&ids)?;
        self.move_in_place()
    }
}

impl PallasWriter {
    /// Whether thread `t` is written: it has events. A location named
    /// only as a peer has no thread (Pallas's readers cannot read an empty
    /// one): its id and name are in the metadata, for the communicators'
    /// groups.
    fn is_written(&self, t: usize) -> bool {
        self.threads[t].last.is_some()
    }

    /// The threads' ids: consecutive in each archive, archives in order,
    /// then the threads not written.
    fn thread_ids(&self) -> Vec<u32> {
        let mut ids = vec![0; self.threads.len()];
        let mut next = 0;
        for written in [true, false] {
            for a in &self.archives {
                for &t in &a.threads {
                    if self.is_written(t as usize) == written {
                        ids[t as usize] = next;
                        next += 1;
                    }
                }
            }
        }
        ids
    }

    /// The archives that have threads written.
    fn written_archives(&self) -> Vec<usize> {
        (0..self.archives.len())
            .filter(|&a| {
                let threads = &self.archives[a].threads;
                threads.iter().any(|&t| self.is_written(t as usize))
            })
            .collect()
    }

    /// Writes thread `t`'s file and its `.dat` files' last bytes, in the
    /// folder of its id `id`.
    fn write_thread(&mut self, t: usize, id: u32) -> Result<()> {
        let abi = self.params.abi;
        let thread = &mut self.threads[t];
        thread.grammar.finish(&mut thread.dats[1])?;
        thread.grammar.flush_events(&mut thread.dats[0])?;
        let path = thread.dir.join("thread.pallas");
        let name = path.display().to_string();
        let file = std::fs::File::create(&path).map_err(|e| Error::io(name.clone(), e))?;
        let mut out = std::io::BufWriter::new(file);
        let place = (id, thread.archive, abi);
        let (spill, dat) = (&mut thread.spill, &mut thread.dats[1]);
        rows::thread_file(&mut thread.grammar, place, (spill, dat), &mut out)?;
        out.flush().map_err(|e| Error::io(name, e))?;
        for d in &mut thread.dats {
            let a = d.get_mut();
            a.flush()
                .map_err(|e| Error::io(a.path.display().to_string(), e))?;
        }
        thread.spill.remove()?;
        let dir = thread.dir.with_file_name(format!("thread_{id}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(&thread.dir, &dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
        // The grammar's memory goes with it.
        thread.grammar = Grammar::new(1);
        Ok(())
    }

    /// Each archive's file: its threads, named by their locations.
    fn write_archives(&mut self, ids: &[u32]) -> Result<()> {
        let abi = self.params.abi;
        for a in self.written_archives() {
            let mut threads = Vec::new();
            let mut written = self.archives[a].threads.clone();
            written.retain(|&t| self.is_written(t as usize));
            for &t in &written {
                let loc = self.threads[t as usize].loc;
                let name = self.symbols.text(loc).to_string();
                let r = self.registry().string(&name)?;
                threads.push((ids[t as usize], r, a as u32));
            }
            let mut o = LeBytes::default();
            o.u32(a as u32);
            o.u32(threads.len() as u32);
            layout::defs(&mut o, abi, &layout::Defs::default(), 4);
            o.len(0);
            layout::locations(&mut o, &threads);
            layout::metadata(&mut o, abi, &[]);
            let path = self.dir.join(format!("archive_{a}")).join("archive.pallas");
            layout::write(&path, &o.0)?;
        }
        Ok(())
    }

    /// Moves the finished trace from the staging folder over the old one:
    /// the archives' folders, and last the main file that names them.
    fn move_in_place(&mut self) -> Result<()> {
        let Some(staging) = self.staging.take() else {
            return Ok(());
        };
        let archives: Vec<std::ffi::OsString> = self
            .written_archives()
            .into_iter()
            .map(|a| format!("archive_{a}").into())
            .collect();
        let mut entries: Vec<&std::ffi::OsStr> = archives.iter().map(|a| a.as_os_str()).collect();
        entries.push(self.main.file_name().expect("a main file name"));
        staging.commit(&entries)
    }

    /// The main file: parameters, definitions, processes and metadata.
    fn write_main(&mut self, ids: &[u32]) -> Result<()> {
        let abi = self.params.abi;
        let mut groups = Vec::new();
        for a in self.written_archives() {
            let name = self.symbols.text(self.archives[a].loc).to_string();
            let r = self.registry().string(&name)?;
            groups.push((a as u32, r, a as u32));
        }
        let registry = self.registry.take().expect("open until finished");
        let mut metadata = vec![
            (STREAM_KEY.to_string(), STREAM_VERSION.to_string()),
            (LEAD_KEY.to_string(), self.lead.to_string()),
        ];
        if !self.head.is_empty() {
            let head = String::from_utf8_lossy(&self.head).into_owned();
            metadata.push((HEAD_KEY.to_string(), head));
        }
        for (r, cat) in &registry.region_cats {
            metadata.push((format!("{CAT_KEY}{r}"), self.symbols.text(*cat).to_string()));
        }
        for t in (0..self.threads.len()).filter(|&t| !self.is_written(t)) {
            let loc = self.symbols.text(self.threads[t].loc).to_string();
            metadata.push((format!("{LOC_KEY}{}", ids[t]), loc));
        }
        let name = self.main.display().to_string();
        let file = std::fs::File::create(&self.main).map_err(|e| Error::io(name.clone(), e))?;
        let mut w = std::io::BufWriter::new(file);
        let mut o = LeBytes::default();
        layout::parameters(&mut o, &self.params, (1, MAX_LOOP as u64));
        w.write_all(&o.0).map_err(|e| Error::io(name.clone(), e))?;
        registry.finish(&mut w, &name, (abi, ids))?;
        let mut o = LeBytes::default();
        layout::locations(&mut o, &groups);
        layout::locations(&mut o, &[]);
        layout::metadata(&mut o, abi, &metadata);
        w.write_all(&o.0).map_err(|e| Error::io(name.clone(), e))?;
        w.flush().map_err(|e| Error::io(name, e))
    }
}
