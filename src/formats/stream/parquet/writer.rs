//! `-t parquet`: the stream as one Parquet file, or as a Hive-partitioned
//! folder of them (`--partition-by`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::SerializedFileWriter;

use super::columns::{write_error, Dictionaries, RowGroup};
use super::encode::PageFramer;
use super::schema::{hive_escape, message, DECLARATIONS_KEY, FORMAT_KEY};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::formats::stream::jsonl::encode_row;
use crate::io::{Output, StagingFolder};
use crate::model::record::{Column, Kind, Record, FORMAT_VERSION, META_FORMAT};
use crate::model::symbol::{Sym, Symbols};
use crate::pipe::{FormatOption, OptionValue, RecordSink, WriteOptions};

/// `--partition-by COLUMN`.
pub const PARTITION_BY: &str = "partition-by";
/// `--row-group ROWS`.
pub const ROW_GROUP: &str = "row-group";
/// Rows per row group unless `--row-group` says (Polars' default).
pub const DEFAULT_ROW_GROUP: usize = 262_144;
/// Text held in one row group before it is written, whatever its rows.
const GROUP_BYTES: usize = 64 << 20;
/// Held by all partitions together before the largest is written.
const PARTITIONS_BYTES: usize = 128 << 20;

/// The writer's options.
pub const WRITE_OPTIONS: &[FormatOption] = &[
    FormatOption {
        name: PARTITION_BY,
        help: "Write a Hive-partitioned folder (-o DIR): DIR/COLUMN=VALUE/part-N.parquet, one folder per location or kind",
        value: OptionValue::Choice("COLUMN", &["loc", "kind"]),
    },
    FormatOption {
        name: ROW_GROUP,
        help: "Rows per Parquet row group (default 262144; fewer when its text passes 64 MiB); memory grows with it",
        value: OptionValue::Number("ROWS"),
    },
];

/// Registry constructor: one file, or a partitioned folder with
/// `--partition-by`.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    let group_rows = match opts.format.number(ROW_GROUP) {
        Some(0) => return Err(Error::Usage("--row-group takes at least one row".into())),
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => DEFAULT_ROW_GROUP,
    };
    let by = match opts.format.choice(PARTITION_BY) {
        None => return Ok(Box::new(ParquetWriter::new(out, opts, group_rows)?)),
        Some("kind") => Column::Kind,
        Some(_) => Column::Loc,
    };
    if out.name().starts_with('<') {
        return Err(Error::Usage(
            "a partitioned Parquet output is a folder: name it with -o DIR".into(),
        ));
    }
    let root = PathBuf::from(out.name());
    // The folder is written in a staging folder: the output opened for the
    // name is dropped unwritten.
    drop(out);
    let writer = PartitionedWriter::create(root, by, opts, group_rows)?;
    Ok(Box::new(writer))
}

/// The properties of a written file: its footer's `metadata` and who
/// wrote it (the column chunks are encoded by `encode`, not by the
/// properties' rules).
fn properties(metadata: Vec<KeyValue>) -> WriterPropertiesPtr {
    let builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by(format!("tracepipe {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(metadata));
    Arc::new(builder.build())
}

fn format_metadata() -> KeyValue {
    KeyValue::new(FORMAT_KEY.to_string(), FORMAT_VERSION.to_string())
}

/// The error for a row whose extra column the file has no column for.
fn check_extra(rec: &Record, extra: &[String]) -> Result<()> {
    match rec.extra.iter().find(|(n, _)| !extra.contains(n)) {
        Some((name, _)) => Err(Error::Record(format!(
            "column `{name}` is not among the Parquet file's columns (they are fixed when it opens); write JSON Lines (--json) to keep it"
        ))),
        None => Ok(()),
    }
}

/// Writes the stream as one Parquet file, a row group at a time.
pub struct ParquetWriter {
    file: SerializedFileWriter<Output>,
    name: String,
    rows: RowGroup,
    dictionaries: Dictionaries,
    pages: PageFramer,
    symbols: Symbols,
    extra: Vec<String>,
    group_rows: usize,
    started: bool,
}

impl ParquetWriter {
    /// A writer into `out`, `group_rows` rows per row group.
    pub fn new(out: Output, opts: &WriteOptions, group_rows: usize) -> Result<ParquetWriter> {
        let name = out.name().to_string();
        let schema = message(None, &opts.extra_columns, false)?;
        let props = properties(vec![format_metadata()]);
        let file =
            SerializedFileWriter::new(out, schema, props).map_err(|e| write_error(&name, e))?;
        let pages = PageFramer::new().map_err(|e| write_error(&name, e))?;
        Ok(ParquetWriter {
            file,
            name,
            rows: RowGroup::new(opts.extra_columns.len()),
            dictionaries: Dictionaries::default(),
            pages,
            symbols: opts.symbols.clone(),
            extra: opts.extra_columns.clone(),
            group_rows,
            started: false,
        })
    }

    fn push(&mut self, rec: &Record) -> Result<()> {
        self.rows.push(rec, &self.extra, None);
        if self.rows.page_full() {
            let (shared, pages) = (&mut self.dictionaries, &mut self.pages);
            let encoded = self.rows.encode_page(None, shared, pages);
            encoded.map_err(|e| write_error(&self.name, e))?;
        }
        if self.rows.rows() >= self.group_rows || self.rows.bytes() >= GROUP_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let (rows, shared, pages) = (&mut self.rows, &mut self.dictionaries, &mut self.pages);
        let written = rows
            .encode_page(None, shared, pages)
            .and_then(|()| rows.write(&mut self.file, None, &self.symbols, pages));
        written.map_err(|e| write_error(&self.name, e))
    }

    fn start(&mut self) -> Result<()> {
        self.started = true;
        self.push(&Record::meta(META_FORMAT, FORMAT_VERSION))
    }
}

impl RecordSink for ParquetWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        check_extra(rec, &self.extra)?;
        self.push(rec)
    }

    fn finish(&mut self) -> Result<()> {
        if !self.started {
            self.start()?;
        }
        if self.rows.rows() > 0 {
            self.flush()?;
        }
        self.file.finish().map_err(|e| write_error(&self.name, e))?;
        self.file.inner_mut().finish()
    }
}

/// The declaration rows seen so far, as a partition's file repeats those
/// its rows need: each as `SEQ JSON-ROW`.
#[derive(Default)]
struct DeclarationRows {
    /// `meta` and `type` rows: every file needs them.
    general: String,
    /// Each location's `container` row and its parent.
    containers: FastMap<Sym, (String, Sym)>,
}

impl DeclarationRows {
    fn add(&mut self, rec: &Record, seq: i64, symbols: &Symbols) {
        let mut line = Vec::new();
        line.extend_from_slice(seq.to_string().as_bytes());
        line.push(b' ');
        encode_row(rec, symbols, 1, &mut line);
        let line = String::from_utf8(line).expect("rows are UTF-8");
        match rec.kind {
            Kind::Container => {
                self.containers.entry(rec.loc).or_insert((line, rec.peer));
            }
            _ => self.general.push_str(&line),
        }
    }

    /// What a file whose rows are on `locs` needs: the general rows, and
    /// the container rows of those locations and of their ancestors.
    fn needed(&self, locs: &[Sym]) -> String {
        let mut text = self.general.clone();
        let mut done = crate::fasthash::FastSet::default();
        for &loc in locs {
            let mut at = loc;
            while !at.is_empty() && done.insert(at) {
                let Some((line, parent)) = self.containers.get(&at) else {
                    break;
                };
                text.push_str(line);
                at = *parent;
            }
        }
        text
    }
}

/// One partition being written: its folder, the rows held, the files
/// written.
struct Partition {
    folder: OsString,
    /// The location of a partition by location.
    loc: Sym,
    rows: RowGroup,
    files: u32,
}

/// Writes a Hive-partitioned folder: a folder per value of `by`, each
/// holding files of the rows with that value (the column itself left out,
/// as Hive does) and each row's place in the stream ([`SEQ`]).
pub struct PartitionedWriter {
    by: Column,
    root: PathBuf,
    staging: Option<StagingFolder>,
    parts: Vec<Partition>,
    index: FastMap<u32, usize>,
    declarations: DeclarationRows,
    seq: i64,
    /// Bytes held by all partitions.
    held: usize,
    dictionaries: Dictionaries,
    pages: PageFramer,
    symbols: Symbols,
    extra: Vec<String>,
    group_rows: usize,
    started: bool,
}

impl PartitionedWriter {
    /// A writer of the folder `root`, which must be new, empty or a
    /// partitioned folder (replaced when finished).
    pub fn create(
        root: PathBuf,
        by: Column,
        opts: &WriteOptions,
        group_rows: usize,
    ) -> Result<PartitionedWriter> {
        old_partitions(&root)?;
        let staging = StagingFolder::create(&root)?;
        let shown_root = root.display().to_string();
        Ok(PartitionedWriter {
            by,
            root,
            staging: Some(staging),
            parts: Vec::new(),
            index: FastMap::default(),
            declarations: DeclarationRows::default(),
            seq: 0,
            held: 0,
            dictionaries: Dictionaries::default(),
            pages: PageFramer::new().map_err(|e| write_error(&shown_root, e))?,
            symbols: opts.symbols.clone(),
            extra: opts.extra_columns.clone(),
            group_rows,
            started: false,
        })
    }

    /// The partition of `rec`, made when first met.
    fn partition(&mut self, rec: &Record) -> Result<usize> {
        let key = match self.by {
            Column::Kind => rec.kind as u32,
            _ => rec.loc.index() as u32,
        };
        if let Some(&i) = self.index.get(&key) {
            return Ok(i);
        }
        let value = match self.by {
            Column::Kind => rec.kind.as_str(),
            _ => self.symbols.text(rec.loc),
        };
        let folder = format!("{}={}", self.by.name(), hive_escape(value));
        if folder.len() > 255 {
            return Err(Error::Record(format!(
                "a partition's folder name would be {} bytes, more than a file system takes (255): partition by another column",
                folder.len()
            )));
        }
        self.parts.push(Partition {
            folder: folder.into(),
            loc: if self.by == Column::Loc {
                rec.loc
            } else {
                Sym::EMPTY
            },
            rows: RowGroup::new(self.extra.len()),
            files: 0,
        });
        self.index.insert(key, self.parts.len() - 1);
        Ok(self.parts.len() - 1)
    }

    fn push(&mut self, rec: &Record) -> Result<()> {
        if crate::model::check::is_declaration(rec.kind) {
            self.declarations.add(rec, self.seq, &self.symbols);
        }
        let i = self.partition(rec)?;
        let rows = &mut self.parts[i].rows;
        let before = rows.bytes();
        rows.push(rec, &self.extra, Some(self.seq));
        if rows.page_full() {
            let (by, shared, pages) = (Some(self.by), &mut self.dictionaries, &mut self.pages);
            let encoded = rows.encode_page(by, shared, pages);
            encoded.map_err(|e| write_error(&self.root.display().to_string(), e))?;
        }
        // Encoding a page may make it smaller.
        self.held = (self.held + rows.bytes()).saturating_sub(before);
        self.seq += 1;
        if rows.rows() >= self.group_rows || rows.bytes() >= GROUP_BYTES {
            self.flush(i)?;
        }
        while self.held > PARTITIONS_BYTES {
            let largest = (0..self.parts.len()).max_by_key(|&p| self.parts[p].rows.bytes());
            self.flush(largest.expect("bytes are held by some partition"))?;
        }
        Ok(())
    }

    /// Writes partition `i`'s rows as a file of its own.
    fn flush(&mut self, i: usize) -> Result<()> {
        let staging = self.staging.as_ref().expect("flushed before finishing");
        let part = &mut self.parts[i];
        let folder = staging.path().join(&part.folder);
        let path = folder.join(format!("part-{}.parquet", part.files));
        let shown = path.display().to_string();
        std::fs::create_dir_all(&folder).map_err(|e| Error::io(&shown, e))?;
        let file = std::fs::File::create(&path).map_err(|e| Error::io(&shown, e))?;
        let out = Output::new(&shown, Box::new(file));
        let (by, shared, pages) = (Some(self.by), &mut self.dictionaries, &mut self.pages);
        let encoded = part.rows.encode_page(by, shared, pages);
        encoded.map_err(|e| write_error(&shown, e))?;
        let locs = match part.loc.is_empty() {
            true => part.rows.locs(),
            false => std::slice::from_ref(&part.loc),
        };
        let declarations = self.declarations.needed(locs);
        let metadata = vec![
            format_metadata(),
            KeyValue::new(DECLARATIONS_KEY.to_string(), declarations),
        ];
        let schema = message(Some(self.by), &self.extra, true)?;
        let props = properties(metadata);
        self.held = self.held.saturating_sub(part.rows.bytes());
        let symbols = &self.symbols;
        let write =
            |out, rows: &mut RowGroup| -> parquet::errors::Result<SerializedFileWriter<Output>> {
                let mut file = SerializedFileWriter::new(out, schema, props)?;
                rows.write(&mut file, by, symbols, pages)?;
                file.finish()?;
                Ok(file)
            };
        let mut file = write(out, &mut part.rows).map_err(|e| write_error(&shown, e))?;
        file.inner_mut().finish()?;
        part.files += 1;
        Ok(())
    }
}

impl RecordSink for PartitionedWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if !self.started {
            self.started = true;
            self.push(&Record::meta(META_FORMAT, FORMAT_VERSION))?;
        }
        check_extra(rec, &self.extra)?;
        self.push(rec)
    }

    fn finish(&mut self) -> Result<()> {
        if !self.started {
            self.started = true;
            self.push(&Record::meta(META_FORMAT, FORMAT_VERSION))?;
        }
        for i in 0..self.parts.len() {
            if self.parts[i].rows.rows() > 0 {
                self.flush(i)?;
            }
        }
        let old = old_partitions(&self.root)?;
        let folders: Vec<&std::ffi::OsStr> =
            self.parts.iter().map(|p| p.folder.as_os_str()).collect();
        let staging = self.staging.take().expect("finished once");
        staging.commit(&folders)?;
        for stale in old.iter().filter(|o| !folders.contains(&o.as_os_str())) {
            let path = self.root.join(stale);
            std::fs::remove_dir_all(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
        }
        Ok(())
    }
}

/// The partition folders of an earlier output in `root` (none when it is
/// missing); an error when `root` holds anything else, which replacing
/// the folder would lose.
fn old_partitions(root: &Path) -> Result<Vec<OsString>> {
    let shown = root.display().to_string();
    let listing = match std::fs::read_dir(root) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&shown, e)),
    };
    let mut old = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| Error::io(&shown, e))?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.starts_with(".tracepipe-") {
            continue;
        }
        let is_partition = text
            .split_once('=')
            .is_some_and(|(column, _)| Column::from_name(column).is_some())
            && entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_partition {
            return Err(Error::Usage(format!(
                "{shown}: holds `{text}`, which is not a partition folder; a partitioned output replaces the folder: name a new or empty one"
            )));
        }
        old.push(name);
    }
    Ok(old)
}
