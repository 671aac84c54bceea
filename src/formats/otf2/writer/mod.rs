//! Stream → OTF2 archive (`-t otf2 -o NAME.otf2`): the anchor file, the
//! global definitions `NAME.def`, and per location `NAME/ID.evt` and an
//! empty `NAME/ID.def` (docs/formats.md, "OTF2", for the mapping).
//!
//! Rows with an OTF2 record become that record (`rows.rs`; the `event`
//! rows the reader makes of other records, `native.rs`); the columns
//! the record gives otherwise are kept as `tracepipe.COLUMN` attributes,
//! which the reader puts back. Rows of kinds no record holds are kept
//! whole, as JSON, in a `tracepipe.row` parameter. Events wait in a
//! bounded reorder buffer (`order.rs`) so each location's are in time
//! order. Memory: the definitions but strings, the buffer, and each
//! location's bytes not yet appended to its file (`chunks.rs`).

use std::path::{Path, PathBuf};

mod chunks;
mod native;
mod order;
mod registry;
mod rows;

use super::encode::Buf;
use super::{HEAD_PROPERTY, LEAD_PROPERTY, STREAM_PROPERTY, STREAM_VERSION};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::formats::stream::jsonl;
use crate::io::{Output, StagingFolder};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{FormatOption, OptionValue, RecordSink, WriteOptions};
use chunks::ChunkFile;
use order::{Reorder, TiePlace};
use registry::Registry;

/// Bytes of every chunk (events and definitions), OTF2's default.
const CHUNK_SIZE: u64 = 1 << 20;

/// The option that sizes the reorder buffer.
const WINDOW: &str = "otf2-window";

/// Events held by default to put each location's in time order.
const DEFAULT_WINDOW: u64 = 1 << 18;

/// The writer's options.
pub const WRITE_OPTIONS: &[FormatOption] = &[FormatOption {
    name: WINDOW,
    help: "Events held to put each location's events in time order (a state, collective or message starts before rows already seen); one that starts before what was written is kept whole (default 262144; memory grows with it)",
    value: OptionValue::Number("EVENTS"),
}];

/// Registry constructor: `out` names the anchor file (`NAME.otf2`), or a
/// folder, which gets `traces.otf2` (as Score-P names it).
/// What the writer writes for `-o NAME`: the anchor, the definitions and
/// the folder of event files.
pub fn written_paths(name: &str) -> Vec<PathBuf> {
    let named = PathBuf::from(name);
    let anchor = match named.extension().is_some_and(|e| e == "otf2") {
        true => named,
        false => named.join("traces.otf2"),
    };
    vec![
        anchor.with_extension("def"),
        anchor.with_extension(""),
        anchor,
    ]
}

/// Registry constructor: `out` names the anchor file or a folder.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    if out.name().starts_with('<') {
        return Err(Error::Usage(
            "an OTF2 archive is a set of files: name its anchor file (-o NAME.otf2) or a folder (-o DIR)"
                .into(),
        ));
    }
    let named = PathBuf::from(out.name());
    let anchor = match named.extension().is_some_and(|e| e == "otf2") {
        true => named,
        false => named.join("traces.otf2"),
    };
    // The archive is written in a staging folder and moved in place when
    // finished: the output opened for the name is dropped unwritten.
    drop(out);
    let dir = match anchor.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let staging = StagingFolder::create(&dir)?;
    let file_name = anchor.file_name().expect("an anchor file name");
    let staged = staging.path().join(file_name);
    // The staging folder is what makes the archive appear whole: the
    // anchor inside it is a plain file.
    let shown = staged.display().to_string();
    let file = std::fs::File::create(&staged).map_err(|e| Error::io(&shown, e))?;
    let out = Output::new(&shown, Box::new(file));
    let window = opts.format.number(WINDOW).unwrap_or(DEFAULT_WINDOW);
    let symbols = opts.symbols.clone();
    let mut writer = Otf2Writer::create(out, &staged, symbols, window)?;
    writer.staging = Some(staging);
    Ok(Box::new(writer))
}

/// A location being written.
struct LocationOut {
    file: ChunkFile,
    /// The tick of its last event written, once one is.
    written: Option<u64>,
    /// Its open frames (a `leave` closes the innermost).
    frames: Vec<EnteredFrame>,
    /// The tick and number of its last `LEAVE`.
    last_leave: Option<(u64, u64)>,
    /// Its last frames (given whole or closed) and collectives.
    frames_done: Extents,
    collectives: Extents,
}

/// A frame entered by an `enter` row and not yet left.
struct EnteredFrame {
    region: u32,
    /// The `name` and `cat` it was entered with.
    names: (Sym, Sym),
    /// The tick and number of its `ENTER`.
    enter: (u64, u64),
}

/// Extents a location remembers to tell whether the next one nests.
const EXTENTS_KEPT: usize = 16;

/// A location's last extents of one kind (frames, collectives), to tell
/// whether one given whole nests among them: OTF2 pairs an end with the
/// last begin, so extents that cross cannot be begins and ends.
#[derive(Default)]
struct Extents(std::collections::VecDeque<(u64, u64)>);

impl Extents {
    /// Whether an extent from `start` to `end` (given in the order they
    /// end) crosses one before it: starts inside it and ends after, or has
    /// the same bounds.
    fn crossed_by(&self, (start, end): (u64, u64)) -> bool {
        self.0
            .iter()
            .any(|&(s, e)| (s < start && start < e) || (s, e) == (start, end))
    }

    fn note(&mut self, extent: (u64, u64)) {
        if self.0.len() == EXTENTS_KEPT {
            self.0.pop_front();
        }
        self.0.push_back(extent);
    }
}

impl LocationOut {
    /// The event a frame given whole starting at `ticks` follows: the
    /// last `LEAVE` and the last `ENTER` of a frame still open at that
    /// tick (the frame holds rows before it, and is held by open frames).
    fn anchor(&self, ticks: u64) -> Option<u64> {
        let leave = self.last_leave.filter(|l| l.0 == ticks).map(|l| l.1);
        let enter = self
            .frames
            .iter()
            .filter(|f| f.enter.0 == ticks)
            .map(|f| f.enter.1)
            .max();
        leave.max(enter)
    }
}

/// The OTF2 writer.
pub struct Otf2Writer {
    symbols: Symbols,
    out: Option<Output>,
    /// Where the archive is written, when it is moved in place once
    /// finished (see [`StagingFolder`]).
    staging: Option<StagingFolder>,
    /// The anchor file being written.
    anchor: PathBuf,
    folder: PathBuf,
    registry: Registry,
    locations: Vec<LocationOut>,
    by_loc: FastMap<Sym, u32>,
    order: Reorder,
    /// The latest tick of any event, and the stream's time origin.
    length: u64,
    origin: Option<u64>,
    /// How far a row read back may begin before its event ([`LEAD_PROPERTY`]).
    lead: i64,
    /// Reused: an event being encoded, its attributes, a row's JSON.
    event: Buf,
    attrs: Vec<(u32, u8, u64)>,
    text: String,
    json: Vec<u8>,
    /// The stream's `container` and `type` rows, as JSON Lines.
    head: Vec<u8>,
    /// Per counter name and value type, the attributes seen last and how
    /// samples with them are written (none: kept whole).
    counters: FastMap<(Sym, u8), (String, Option<rows::CounterPlan>)>,
}

impl Otf2Writer {
    /// Notes that `rec` is read back from an event at `at` ns.
    fn read_back_at(&mut self, rec: &Record, at: Option<i64>) {
        if let (Some(at), Some(start)) = (at, rec.start()) {
            self.lead = self.lead.max(at.saturating_sub(start));
        }
    }

    fn create(out: Output, anchor: &Path, symbols: Symbols, window: u64) -> Result<Otf2Writer> {
        let folder = anchor.with_extension("");
        std::fs::create_dir_all(&folder).map_err(|e| Error::io(folder.display().to_string(), e))?;
        let registry = Registry::create(anchor.with_extension("def"), CHUNK_SIZE)?;
        Ok(Otf2Writer {
            symbols,
            out: Some(out),
            staging: None,
            anchor: anchor.to_path_buf(),
            folder,
            registry,
            locations: Vec::new(),
            by_loc: FastMap::default(),
            order: Reorder::new(usize::try_from(window).unwrap_or(usize::MAX)),
            length: 0,
            origin: None,
            lead: 0,
            event: Buf::default(),
            attrs: Vec::new(),
            text: String::new(),
            json: Vec::new(),
            head: Vec::new(),
            counters: FastMap::default(),
        })
    }

    /// The OTF2 location (its index) of `loc`, defined on first use.
    fn location(&mut self, loc: Sym) -> Result<u32> {
        if let Some(&l) = self.by_loc.get(&loc) {
            return Ok(l);
        }
        let l = self.registry.location(self.symbols.text(loc))?;
        let path = self.folder.join(format!("tmp-{l}.evt"));
        // Few locations keep more bytes each before appending them.
        let flush_at = if self.locations.len() < 256 {
            1 << 16
        } else {
            1 << 12
        };
        self.locations.push(LocationOut {
            file: ChunkFile::create(path, CHUNK_SIZE, flush_at)?,
            written: None,
            frames: Vec::new(),
            last_leave: None,
            frames_done: Extents::default(),
            collectives: Extents::default(),
        });
        self.by_loc.insert(loc, l);
        Ok(l)
    }

    /// Queues the event in `self.event` for location `l` at `ticks`.
    fn queue(&mut self, l: u32, (ticks, slot): (u64, TiePlace)) -> Result<()> {
        // The rows' mapping keeps whole what would come too late; this is
        // the guard that an archive is never written out of order.
        if let Some(written) = self.locations[l as usize].written.filter(|&w| ticks < w) {
            return Err(Error::Record(format!(
                "an event at {ticks} ns on this location comes after events up to {written} ns were written"
            )));
        }
        self.length = self.length.max(ticks);
        let mut bytes = self.order.buffer();
        bytes.extend_from_slice(&self.event.bytes);
        if let Some(out) = self.order.push(l, (ticks, slot), bytes) {
            self.write_out(out)?;
        }
        Ok(())
    }

    fn write_out(&mut self, (l, ticks, bytes): (u32, u64, Vec<u8>)) -> Result<()> {
        let location = &mut self.locations[l as usize];
        location.written = Some(ticks);
        location.file.push(&bytes)?;
        self.order.recycle(bytes);
        Ok(())
    }
}

impl Otf2Writer {
    /// Moves the finished archive from the staging folder over the old
    /// one: definitions, event folder, and last the anchor that names them.
    fn move_in_place(&mut self) -> Result<()> {
        let Some(staging) = self.staging.take() else {
            return Ok(());
        };
        let def = self.anchor.with_extension("def");
        let entries = [&def, &self.folder, &self.anchor];
        let names: Vec<&std::ffi::OsStr> = entries
            .iter()
            .map(|p| p.file_name().expect("a file name"))
            .collect();
        staging.commit(&names)
    }

    /// Gives each location's event file its final name (its id) and its
    /// local definitions file (empty: the library's readers expect one).
    fn place_files(&mut self) -> Result<()> {
        for (l, id) in self.registry.location_ids().into_iter().enumerate() {
            let from = self.folder.join(format!("tmp-{l}.evt"));
            let to = self.folder.join(format!("{id}.evt"));
            std::fs::rename(&from, &to).map_err(|e| Error::io(to.display().to_string(), e))?;
            let local = self.folder.join(format!("{id}.def"));
            ChunkFile::create(local, CHUNK_SIZE, 64)?.finish()?;
        }
        Ok(())
    }
}

/// A stream time as OTF2 ticks (ns; OTF2's are unsigned).
fn ticks(time: Option<i64>) -> Result<u64> {
    let t = time.ok_or_else(|| Error::Record("a row without a time".into()))?;
    u64::try_from(t).map_err(|_| {
        Error::Record(format!(
            "OTF2 times are not negative: this row is at {t} ns"
        ))
    })
}

impl RecordSink for Otf2Writer {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some((name, _)) = rec.extra.first() {
            return Err(Error::Record(format!(
                "OTF2 has no place for the extra column `{name}`"
            )));
        }
        match rec.kind {
            Kind::Meta => {
                if self.symbols.text(rec.name) == "origin" {
                    self.origin = rec.value.parse().ok();
                }
                Ok(())
            }
            // Kept whole for the reader; the archive's hierarchy is made
            // from the locations' names (docs/formats.md).
            Kind::Container | Kind::Type => {
                jsonl::encode_row(rec, &self.symbols, 1, &mut self.head);
                Ok(())
            }
            _ => self.write_event_row(rec),
        }
    }

    fn finish(&mut self) -> Result<()> {
        let Some(mut out) = self.out.take() else {
            return Ok(());
        };
        if self.locations.is_empty() {
            // OTF2's readers want a location: one of no name, no events.
            self.location(Sym::default())?;
        }
        while let Some(event) = self.order.pop() {
            self.write_out(event)?;
        }
        let locations = self.locations.len() as u64;
        let mut events = Vec::with_capacity(self.locations.len());
        for location in &mut self.locations {
            events.push(location.file.finish()?);
        }
        self.place_files()?;
        let clock = (1_000_000_000, self.length, self.origin.unwrap_or(u64::MAX));
        let defs = self.registry.finish(clock, &events)?;
        let head = std::str::from_utf8(&self.head).expect("JSON is UTF-8");
        let lead = self.lead.to_string();
        let mut properties = vec![(STREAM_PROPERTY, STREAM_VERSION), (LEAD_PROPERTY, &lead)];
        // The library takes a property of no value for one removed.
        if !head.is_empty() {
            properties.push((HEAD_PROPERTY, head));
        }
        let anchor = super::archive::anchor_file(CHUNK_SIZE, locations, defs, &properties);
        out.write_line(&anchor.bytes)?;
        out.finish()?;
        self.move_in_place()
    }
}
