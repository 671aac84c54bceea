//! Opening inputs and outputs, the line reader shared by text formats, and the
//! progress indicator.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use memchr::memchr;

use crate::error::{Error, Result};

/// Buffer size for reading inputs and writing outputs.
pub const BUFFER_SIZE: usize = 256 * 1024;

/// Longest line a text reader accepts; longer ones are an error rather than an
/// unbounded allocation.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// The warning of a text reader whose last line has no final newline but
/// reads as a complete line.
pub const CUT_WARNING: &str =
    "the last line has no final newline: the file may have been cut (the line is complete and was read)";

/// The error of a text reader whose last line has no final newline and does
/// not read: the file was cut, most likely.
pub fn cut_error(msg: &str) -> String {
    format!("truncated line (no final newline): the file was cut? {msg}")
}

/// Shared count of bytes read from all inputs, for the progress indicator.
pub type ByteCounter = Rc<Cell<u64>>;

/// One input named on the command line: a file, a directory (for folder formats
/// such as Pallas) or standard input.
pub struct Input {
    /// The name used in messages (`<stdin>` for `-`).
    pub name: String,
    /// The path, or `None` for standard input.
    pub path: Option<PathBuf>,
    /// The byte stream; `None` for a directory.
    pub reader: Option<Box<dyn BufRead>>,
    /// Bytes taken from `reader` to recognise the format; the reader given
    /// out by [`Input::into_reader`] starts with them.
    head: Vec<u8>,
    /// The stream ended while filling `head`.
    ended: bool,
}

impl Input {
    /// Opens `arg` (`-` is standard input). Every byte read is added to `counter`.
    pub fn open(arg: &str, counter: &ByteCounter) -> Result<Input> {
        if arg == "-" {
            let reader = Counting {
                inner: io::stdin(),
                counter: counter.clone(),
            };
            let name = "<stdin>".to_string();
            let reader = decompressed(&name, BufReader::with_capacity(BUFFER_SIZE, reader))?;
            return Ok(Input {
                name,
                path: None,
                reader: Some(reader),
                head: Vec::new(),
                ended: false,
            });
        }
        let path = PathBuf::from(arg);
        let meta = std::fs::metadata(&path).map_err(|e| Error::io(arg, e))?;
        if meta.is_dir() {
            return Ok(Input {
                name: arg.to_string(),
                path: Some(path),
                reader: None,
                head: Vec::new(),
                ended: true,
            });
        }
        let file = File::open(&path).map_err(|e| Error::io(arg, e))?;
        let reader = Counting {
            inner: file,
            counter: counter.clone(),
        };
        let reader = decompressed(arg, BufReader::with_capacity(BUFFER_SIZE, reader))?;
        Ok(Input {
            name: arg.to_string(),
            path: Some(path),
            reader: Some(reader),
            head: Vec::new(),
            ended: false,
        })
    }

    /// The bytes read so far to recognise the format (empty for a directory).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Reads more of the input into [`Input::head`]: one read, as much as
    /// arrived (a pipe delivers what its writer wrote so far). False when
    /// nothing more can come: the input ended, or it is a directory.
    pub fn read_more(&mut self) -> Result<bool> {
        let Some(reader) = self.reader.as_mut().filter(|_| !self.ended) else {
            return Ok(false);
        };
        let got = loop {
            match reader.fill_buf() {
                Ok(bytes) => break bytes.len(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(self.name.clone(), e)),
            }
        };
        if got == 0 {
            self.ended = true;
            return Ok(false);
        }
        let bytes = reader
            .fill_buf()
            .map_err(|e| Error::io(self.name.clone(), e))?;
        self.head.extend_from_slice(bytes);
        reader.consume(got);
        Ok(true)
    }

    /// The names of a directory's entries, sorted (empty for anything else).
    pub fn entries(&self) -> Result<Vec<String>> {
        let Some(path) = self.path.as_deref().filter(|_| self.reader.is_none()) else {
            return Ok(Vec::new());
        };
        let listing = std::fs::read_dir(path).map_err(|e| Error::io(self.name.clone(), e))?;
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| Error::io(self.name.clone(), e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    /// The file extension, lower-cased, after a compression suffix
    /// (`run.paje.gz` is `paje`).
    pub fn extension(&self) -> Option<String> {
        let path = self.path.as_deref()?;
        let ext = |p: &Path| {
            p.extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
        };
        match ext(path)?.as_str() {
            "gz" | "zst" => ext(Path::new(path.file_stem()?)),
            other => Some(other.to_string()),
        }
    }

    /// Takes the byte stream out, or fails for a directory.
    pub fn into_reader(self) -> Result<(String, Box<dyn BufRead>)> {
        match self.reader {
            Some(r) if self.head.is_empty() => Ok((self.name, r)),
            Some(r) => {
                let replay = io::Cursor::new(self.head).chain(r);
                Ok((self.name, Box::new(replay)))
            }
            None => Err(Error::Usage(format!(
                "{}: is a directory, not a stream of this format",
                self.name
            ))),
        }
    }
}

/// `reader`, decompressed when it starts with the magic bytes of a gzip or
/// zstd stream (traces are often kept compressed), else as it is.
fn decompressed(name: &str, mut reader: impl BufRead + 'static) -> Result<Box<dyn BufRead>> {
    const GZIP: &[u8] = &[0x1f, 0x8b];
    const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
    // A pipe may deliver the first bytes one at a time: gather four.
    let mut magic = Vec::with_capacity(4);
    while magic.len() < 4 {
        let got = match reader.fill_buf() {
            Ok(bytes) => bytes
                .iter()
                .take(4 - magic.len())
                .copied()
                .collect::<Vec<u8>>(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(name, e)),
        };
        if got.is_empty() {
            break;
        }
        reader.consume(got.len());
        magic.extend(got);
    }
    let whole = io::Cursor::new(magic.clone()).chain(reader);
    Ok(if magic.starts_with(GZIP) {
        let gz = flate2::read::MultiGzDecoder::new(whole);
        Box::new(BufReader::with_capacity(BUFFER_SIZE, gz))
    } else if magic.starts_with(ZSTD) || is_zstd_skippable(&magic) {
        let zst = zstd::stream::read::Decoder::new(whole).map_err(|e| Error::io(name, e))?;
        Box::new(BufReader::with_capacity(BUFFER_SIZE, zst))
    } else {
        Box::new(whole)
    })
}

/// Whether `magic` opens a zstd skippable frame (`0x184D2A5?`, little
/// endian), which `pzstd` and seekable-format writers put first.
fn is_zstd_skippable(magic: &[u8]) -> bool {
    magic.len() == 4 && magic[0] & 0xF0 == 0x50 && magic[1..] == [0x2A, 0x4D, 0x18]
}

struct Counting<R> {
    inner: R,
    counter: ByteCounter,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.set(self.counter.get() + n as u64);
        Ok(n)
    }
}

/// Refuses an output file that is one of `inputs` or lies inside an input
/// folder: creating it would truncate the input before it is read. Compares
/// canonical paths, and files by device and inode (hard links).
pub fn check_output_is_not_an_input(output: Option<&str>, inputs: &[String]) -> Result<()> {
    check_written_are_not_inputs(output, &[], inputs)
}

/// [`check_output_is_not_an_input`] for the output and the files a writer
/// writes beside it (`beside`), which must not be inputs either, nor
/// folders holding one.
pub fn check_written_are_not_inputs(
    output: Option<&str>,
    beside: &[PathBuf],
    inputs: &[String],
) -> Result<()> {
    let Some(out) = output.filter(|p| *p != "-") else {
        return Ok(());
    };
    let written = std::iter::once(PathBuf::from(out)).chain(beside.iter().cloned());
    for path in written {
        let (Ok(out_path), Ok(out_meta)) = (std::fs::canonicalize(&path), std::fs::metadata(&path))
        else {
            continue; // It does not exist yet: it cannot be an input.
        };
        for input in inputs.iter().filter(|i| *i != "-") {
            let (Ok(in_path), Ok(in_meta)) =
                (std::fs::canonicalize(input), std::fs::metadata(input))
            else {
                continue;
            };
            let holds_it = path != Path::new(out) && in_path.starts_with(&out_path);
            if out_path == in_path
                || same_file(&out_meta, &in_meta)
                || out_path.starts_with(&in_path)
                || holds_it
            {
                return Err(Error::Usage(format!(
                    "-o {out} would overwrite the input {input} before it is read (writing {}); write elsewhere",
                    path.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// Whether descriptor 1 was closed when the process started, noted by
/// [`NOTE_STDOUT_AT_START`] before Rust's runtime reopens a closed standard
/// descriptor on `/dev/null` (read-write). Looking at the descriptor later
/// cannot tell that apart from `1<>/dev/null` or Python's
/// `subprocess.DEVNULL`, which are open outputs.
static STDOUT_CLOSED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// An ELF constructor: runs before `main`, so before the runtime touches the
/// standard descriptors.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static NOTE_STDOUT_AT_START: extern "C" fn() = {
    extern "C" fn note() {
        // SAFETY: F_GETFD only reads the descriptor's flags; -1 is EBADF.
        let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
        STDOUT_CLOSED_AT_START.store(closed, std::sync::atomic::Ordering::Relaxed);
    }
    note
};

fn check_stdout_is_open() -> Result<()> {
    if STDOUT_CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::io(
            "<stdout>",
            io::Error::new(io::ErrorKind::NotConnected, "standard output is closed"),
        ));
    }
    Ok(())
}

/// Opens the output: a file for `Some(path)` (other than `-`), else standard output,
/// buffered. Line-buffered output flushes after every line (for live pipes).
/// A file whose name ends in `.gz` or `.zst` is written compressed so
/// (what the readers take in as it is).
///
/// A file is written under a temporary name beside it and renamed over it
/// by [`Output::finish`], so an error or an interruption (SIGINT, SIGTERM,
/// SIGHUP) leaves the file that was there untouched and no partial one
/// that would read as whole; through a symbolic link, beside the file it
/// names. With `line_buffered` (a live output followed as it grows), and
/// into a device or a FIFO (`/dev/null`), the output is written in place.
pub fn open_output(path: Option<&str>, line_buffered: bool) -> Result<Output> {
    let mut staged = None;
    let (name, inner) = match path {
        Some(p) if p != "-" => {
            let target = std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
            // A directory is a folder format's output (its writer makes it):
            // staged as before, the staged file never committed.
            let special = std::fs::metadata(&target).is_ok_and(|m| !m.is_file() && !m.is_dir());
            let f = match line_buffered || special {
                true => File::create(p).map_err(|e| Error::io(p, e))?,
                false => {
                    let (f, stage) = Staged::create(&target, p)?;
                    staged = Some(stage);
                    f
                }
            };
            let sink = match output_compression(p) {
                Some(Compression::Gzip) => Sink::Gzip(flate2::write::GzEncoder::new(
                    f,
                    flate2::Compression::default(),
                )),
                Some(Compression::Zstd) => {
                    Sink::Zstd(zstd::Encoder::new(f, 0).map_err(|e| Error::io(p, e))?)
                }
                None => Sink::Plain(Box::new(f)),
            };
            (p.to_string(), sink)
        }
        _ => {
            check_stdout_is_open()?;
            ("<stdout>".to_string(), Sink::Plain(Box::new(io::stdout())))
        }
    };
    Ok(Output {
        name,
        inner: io::BufWriter::with_capacity(BUFFER_SIZE, inner),
        line_buffered,
        staged,
    })
}

/// An output file being written under a temporary name beside its target:
/// renamed over the target when finished, removed when dropped unfinished.
struct Staged {
    temp: PathBuf,
    target: PathBuf,
}

impl Staged {
    /// Stages `target`, named `shown` in errors.
    fn create(target: &Path, shown: &str) -> Result<(File, Staged)> {
        let file_name = target
            .file_name()
            .ok_or_else(|| Error::io(shown, io::Error::other("not a file name")))?;
        // Within the 255 bytes a name may have: a name that fits may be
        // cut here (only one output per process is staged beside it).
        let suffix = format!(".tracepipe-{}.part", std::process::id());
        let room = 255 - 1 - suffix.len();
        let name = std::os::unix::ffi::OsStrExt::as_bytes(file_name);
        let kept = &name[..name.len().min(room)];
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(kept));
        temp_name.push(&suffix);
        let temp = target.with_file_name(temp_name);
        let file = File::create(&temp).map_err(|e| Error::io(shown, e))?;
        interrupt::remove_on_signal(&temp);
        Ok((
            file,
            Staged {
                temp,
                target: target.to_path_buf(),
            },
        ))
    }

    /// Puts the finished file in place of the target.
    fn commit(mut self) -> io::Result<()> {
        let result = std::fs::rename(&self.temp, &self.target);
        if result.is_ok() {
            // Renamed: the drop, which removes what is left, finds nothing.
            self.temp = PathBuf::new();
        }
        result
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        interrupt::remove_on_signal(Path::new(""));
        let _ = std::fs::remove_file(&self.temp);
    }
}

/// A hidden folder beside the files of a trace that is a set of files
/// (OTF2, Pallas): the writer writes them all in it, and only once it has
/// finished are they moved over the old ones, each by a rename; dropped
/// unfinished (an error), it is removed with what it holds, and the old
/// files were never touched. A signal that ends the process leaves it
/// (removing a folder is not safe in a signal handler), and the old files
/// whole.
pub struct StagingFolder {
    /// Where the files go.
    target: PathBuf,
    /// Where they are written.
    path: PathBuf,
}

impl StagingFolder {
    /// A staging folder in `target` (made if missing).
    pub fn create(target: &Path) -> Result<StagingFolder> {
        let shown = target.display().to_string();
        std::fs::create_dir_all(target).map_err(|e| Error::io(&shown, e))?;
        let path = target.join(format!(".tracepipe-{}.part", std::process::id()));
        // One left by an earlier run of this process id is stale.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
        Ok(StagingFolder {
            target: target.to_path_buf(),
            path,
        })
    }

    /// The folder the files are written in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves `entries` (names of files and folders in the staging folder)
    /// over those of the same names in the target, in order: a folder
    /// replaced goes into the staging folder first, which is removed last.
    pub fn commit(self, entries: &[&std::ffi::OsStr]) -> Result<()> {
        for (n, entry) in entries.iter().enumerate() {
            let (from, to) = (self.path.join(entry), self.target.join(entry));
            let shown = to.display().to_string();
            let old = std::fs::symlink_metadata(&to).ok();
            if old.is_some_and(|m| m.is_dir()) {
                let aside = self.path.join(format!(".replaced-{n}"));
                std::fs::rename(&to, &aside).map_err(|e| Error::io(&shown, e))?;
            }
            std::fs::rename(&from, &to).map_err(|e| Error::io(&shown, e))?;
        }
        Ok(())
    }
}

impl Drop for StagingFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removing a staged output when a signal ends the process: the handler
/// unlinks the one path registered (async-signal-safe: a pointer read and
/// `unlink`), then lets the signal take its default course.
mod interrupt {
    use std::ffi::{c_char, c_int, CString};
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::Once;

    static PATH: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
    static INSTALL: Once = Once::new();
    const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    extern "C" fn on_signal(signal: c_int) {
        let path = PATH.swap(std::ptr::null_mut(), Ordering::SeqCst);
        // SAFETY: unlink, signal and raise are async-signal-safe; `path` is
        // a NUL-terminated string leaked by `remove_on_signal`, or null.
        unsafe {
            if !path.is_null() {
                libc::unlink(path);
            }
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }

    /// Registers `path` (empty: none) to be removed if a signal ends the
    /// process.
    pub(super) fn remove_on_signal(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        INSTALL.call_once(|| {
            for signal in SIGNALS {
                // SAFETY: installs a handler that only does what is safe in one.
                unsafe {
                    libc::signal(signal, on_signal as *const () as libc::sighandler_t);
                }
            }
        });
        let new = match path.as_os_str().is_empty() {
            true => std::ptr::null_mut(),
            false => CString::new(path.as_os_str().as_bytes())
                .map_or(std::ptr::null_mut(), CString::into_raw),
        };
        let old = PATH.swap(new, Ordering::SeqCst);
        if !old.is_null() {
            // SAFETY: `old` came from `CString::into_raw` above.
            drop(unsafe { CString::from_raw(old) });
        }
    }
}

/// A compression an output file's name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// `.gz`
    Gzip,
    /// `.zst`
    Zstd,
}

/// The compression the name of output file `path` asks for, if any.
pub fn output_compression(path: &str) -> Option<Compression> {
    match Path::new(path).extension()?.to_str()? {
        "gz" => Some(Compression::Gzip),
        "zst" => Some(Compression::Zstd),
        _ => None,
    }
}

/// Where an [`Output`]'s bytes go: a plain writer, or a compressor whose
/// stream [`Output::finish`] ends.
enum Sink {
    Plain(Box<dyn Write + Send>),
    Gzip(flate2::write::GzEncoder<File>),
    Zstd(zstd::Encoder<'static, File>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Gzip(w) => w.write(buf),
            Sink::Zstd(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
            Sink::Zstd(w) => w.flush(),
        }
    }
}

impl Sink {
    /// Ends a compressed stream (its trailer written, the file flushed).
    fn finish(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.try_finish(),
            Sink::Zstd(w) => w.do_finish(),
        }
    }
}

/// A buffered, named output. Errors name the output; a closed pipe is reported as
/// such so the command can end quietly.
pub struct Output {
    name: String,
    inner: io::BufWriter<Sink>,
    line_buffered: bool,
    /// A file written under a temporary name until finished.
    staged: Option<Staged>,
}

impl Output {
    /// An output writing into any `Write` (tests, library users).
    pub fn new(name: &str, w: Box<dyn Write + Send>) -> Output {
        Output {
            name: name.to_string(),
            inner: io::BufWriter::with_capacity(BUFFER_SIZE, Sink::Plain(w)),
            line_buffered: false,
            staged: None,
        }
    }

    /// The name errors give: the path, or `<stdout>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether each line goes out as it is written (a live output).
    pub fn is_line_buffered(&self) -> bool {
        self.line_buffered
    }

    /// Writes bytes that end at a line boundary.
    pub fn write_line(&mut self, bytes: &[u8]) -> Result<()> {
        self.inner
            .write_all(bytes)
            .map_err(|e| Error::io(self.name.clone(), e))?;
        if self.line_buffered {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes `line` and a newline.
    pub fn write_row(&mut self, line: &[u8]) -> Result<()> {
        let written = self
            .inner
            .write_all(line)
            .and_then(|()| self.inner.write_all(b"\n"));
        written.map_err(|e| Error::io(self.name.clone(), e))?;
        if self.line_buffered {
            self.flush()?;
        }
        Ok(())
    }

    /// Flushes everything written so far.
    pub fn flush(&mut self) -> Result<()> {
        self.inner
            .flush()
            .map_err(|e| Error::io(self.name.clone(), e))
    }

    /// Ends the output: flushes it, ends a compressed stream and puts a
    /// file in place of the one it replaces. Writers call it once, after
    /// their last byte; an output dropped unfinished leaves the old file.
    pub fn finish(&mut self) -> Result<()> {
        self.flush()?;
        let io = |e| Error::io(self.name.clone(), e);
        self.inner.get_mut().finish().map_err(io)?;
        match self.staged.take() {
            Some(staged) => staged.commit().map_err(|e| Error::io(self.name.clone(), e)),
            None => Ok(()),
        }
    }
}

/// Bytes written straight through the buffer, for writers of binary
/// formats that write through `Write` (Parquet); errors are the writer's
/// to name, through [`Output::name`].
impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// One line from a [`LineReader`].
pub struct Line<'a> {
    /// The bytes without the `\n`.
    pub text: &'a [u8],
    /// 1-based line number.
    pub number: u64,
    /// True when the input ended before the line's newline.
    pub truncated: bool,
    /// The input's name.
    pub file: &'a str,
}

impl Line<'_> {
    /// A data error located at this line.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::line(self.file, self.number, msg)
    }

    /// Where this line is.
    pub fn location(&self) -> crate::error::Location {
        crate::error::Location::Line {
            file: self.file.to_string(),
            line: self.number,
        }
    }

    /// Reads the line with `parse`. A last line without its newline is read
    /// when it parses, with a warning that the file may have been cut, and
    /// is an error that says so when it does not.
    pub fn read<T>(
        &self,
        parse: impl FnOnce(&[u8]) -> Result<T, String>,
        warnings: &crate::error::Warnings,
    ) -> Result<T> {
        match parse(self.text) {
            Ok(v) => {
                if self.truncated {
                    warnings.warn_at(self.location(), CUT_WARNING);
                }
                Ok(v)
            }
            Err(msg) if self.truncated => Err(self.error(cut_error(&msg))),
            Err(msg) => Err(self.error(msg)),
        }
    }
}

/// Reads newline-terminated lines into one reused buffer, counting lines.
///
/// A last line without its newline is reported by the `truncated` flag of its [`Line`] so a
/// format can treat a cut file as an error.
pub struct LineReader<R> {
    inner: R,
    name: String,
    buf: Vec<u8>,
    /// The line last returned (without its newline) in `buf`.
    last: (usize, usize),
    start: usize,
    end: usize,
    scanned: usize,
    eof: bool,
    line: u64,
}

impl<R: Read> LineReader<R> {
    /// A line reader over `inner`, named `name` in errors.
    pub fn new(name: &str, inner: R) -> LineReader<R> {
        LineReader {
            inner,
            name: name.to_string(),
            buf: vec![0; BUFFER_SIZE],
            last: (0, 0),
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
            line: 0,
        }
    }

    /// The input's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The 1-based number of the line last returned.
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// The bytes read and not returned as lines yet, the input, and the
    /// number of the line last returned: for a reader that goes on by
    /// other means.
    pub fn into_parts(self) -> (Vec<u8>, R, u64) {
        let rest = self.buf[self.start..self.end].to_vec();
        (rest, self.inner, self.line)
    }

    /// The bytes of the line last returned, without its newline.
    pub fn last_line(&self) -> &[u8] {
        &self.buf[self.last.0..self.last.1]
    }

    /// The next line with its number and input name, or `None` at end.
    pub fn next_located(&mut self) -> Result<Option<Line<'_>>> {
        loop {
            if let Some(i) = memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let from = self.start;
                let to = self.scanned + i;
                self.start = to + 1;
                self.scanned = self.start;
                self.line += 1;
                self.last = (from, to);
                return Ok(Some(Line {
                    text: &self.buf[from..to],
                    number: self.line,
                    truncated: false,
                    file: &self.name,
                }));
            }
            self.scanned = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let from = self.start;
                self.start = self.end;
                self.line += 1;
                self.last = (from, self.end);
                return Ok(Some(Line {
                    text: &self.buf[from..self.end],
                    number: self.line,
                    truncated: true,
                    file: &self.name,
                }));
            }
            self.fill()?;
        }
    }

    /// The next line, as [`LineReader::next_located`] gives it, with what
    /// `quick` says of it when `quick` finds it in the bytes already read:
    /// given them, it returns the line's length (its newline follows) and
    /// what it learnt scanning it. Lets a format scan a line and find its
    /// end in one pass.
    pub fn next_with<T>(
        &mut self,
        quick: impl FnOnce(&[u8]) -> Option<(usize, T)>,
    ) -> Result<Option<(Line<'_>, Option<T>)>> {
        let ahead = &self.buf[self.start..self.end];
        if let Some((len, found)) = quick(ahead).filter(|&(len, _)| ahead.get(len) == Some(&b'\n'))
        {
            let from = self.start;
            self.start = from + len + 1;
            self.scanned = self.start;
            self.line += 1;
            self.last = (from, from + len);
            let line = Line {
                text: &self.buf[from..from + len],
                number: self.line,
                truncated: false,
                file: &self.name,
            };
            return Ok(Some((line, Some(found))));
        }
        Ok(self.next_located()?.map(|line| (line, None)))
    }

    fn fill(&mut self) -> Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= MAX_LINE {
                return Err(Error::line(
                    &self.name,
                    self.line + 1,
                    format!("line longer than {MAX_LINE} bytes"),
                ));
            }
            let new_len = (self.buf.len() * 2).min(MAX_LINE);
            self.buf.resize(new_len, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(self.name.clone(), e)),
            }
        }
    }
}

/// A writer into a buffer that the caller reads back while the writer
/// owns its clone (tests of writers that own their output).
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct SharedBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

#[cfg(test)]
impl SharedBuffer {
    /// The bytes written so far.
    pub(crate) fn contents(&self) -> Vec<u8> {
        self.0.lock().expect("not poisoned").clone()
    }
}

#[cfg(test)]
impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The length of the file at `path`, which must be a regular file: a part
/// of a trace found beside the one named (a FIFO, a device or a link to
/// one) would block or never end, and is an error of kind `InvalidInput`.
pub fn regular_len(path: &Path) -> io::Result<u64> {
    let meta = std::fs::metadata(path)?;
    match meta.is_file() {
        true => Ok(meta.len()),
        false => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a part of a trace is read whole or by offset: a FIFO or a device would block or never end)",
        )),
    }
}

/// Reads the regular file at `path` whole ([`regular_len`]), at most the
/// length it had when looked at.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let len = regular_len(path)?;
    let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    File::open(path)?.take(len).read_to_end(&mut data)?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_reader_handles_long_lines_and_missing_newline() {
        let long = "x".repeat(BUFFER_SIZE * 3);
        let text = format!("a\n{long}\nlast");
        let mut r = LineReader::new("t", text.as_bytes());
        let line = r.next_located().unwrap().unwrap();
        assert_eq!(
            (line.text, line.number, line.truncated),
            (&b"a"[..], 1, false)
        );
        let line = r.next_located().unwrap().unwrap();
        assert_eq!((line.text.len(), line.truncated), (long.len(), false));
        let line = r.next_located().unwrap().unwrap();
        assert_eq!(
            (line.text, line.number, line.truncated),
            (&b"last"[..], 3, true)
        );
        assert!(r.next_located().unwrap().is_none());
    }
}
