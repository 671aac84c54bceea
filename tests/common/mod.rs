//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The standard header line.
pub const HEADER: &str =
    "kind\ttime\tend\tloc\tcat\tname\tdepth\tpeer\tcomm\ttag\tsize\tid\tvalue\tflags\tattrs";

/// A command of this crate, with the environment scrubbed of anything it reads.
pub fn bin(name: &str) -> Command {
    let mut cmd = Command::cargo_bin(name).expect("binary built");
    cmd.env_remove("RUST_LOG");
    cmd
}

/// This crate's command `name` with `args`, in at most `limit_mib` MiB of
/// address space: its stdout, or its stderr on failure.
pub fn run_in_memory<S: AsRef<std::ffi::OsStr>>(
    name: &str,
    limit_mib: u64,
    args: &[S],
) -> Result<String, String> {
    run_limited(name, &format!("-v {}", limit_mib * 1024), args)
}

/// This crate's command `name` with `args` under `ulimit LIMIT` (such as
/// `-n 64`): its stdout, or its stderr on failure.
pub fn run_limited<S: AsRef<std::ffi::OsStr>>(
    name: &str,
    limit: &str,
    args: &[S],
) -> Result<String, String> {
    let exe = assert_cmd::cargo::cargo_bin(name);
    let script = format!("ulimit {limit}; exec \"$0\" \"$@\"");
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .arg(exe)
        .args(args)
        .output()
        .expect("sh runs");
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

/// Rewrites the file at `path` through `f`.
pub fn edit(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    f(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

/// Replaces the one place of `from` in the file at `file` with `to`, of
/// the same length (a tampered field).
pub fn tamper(file: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    edit(file, |bytes| {
        let at: Vec<usize> = (0..bytes.len().saturating_sub(from.len() - 1))
            .filter(|&i| bytes[i..].starts_with(from.as_bytes()))
            .collect();
        assert_eq!(at.len(), 1, "{from} in {}", file.display());
        bytes[at[0]..at[0] + to.len()].copy_from_slice(to.as_bytes());
    });
}

/// The reference corpus of `format`: `$TRACEPIPE_CORPUS/FORMAT`, by default
/// `../shared/corpus/FORMAT`. When it is absent the test says so and passes,
/// except under CI (`CI` set), where a missing corpus is a failure: a test
/// that checks nothing must not look green there.
pub fn corpus(format: &str) -> Option<PathBuf> {
    let root = std::env::var_os("TRACEPIPE_CORPUS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        PathBuf::from,
    );
    let dir = root.join(format);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the reference corpus {} is missing (CI is set); set TRACEPIPE_CORPUS to its folder",
        dir.display()
    );
    skipped(&format!(
        "the reference corpus {} is missing",
        root.display()
    ));
    None
}

/// Says once per test binary that some of its tests check nothing for
/// `reason`, where a plain `cargo test` shows it: the harness captures
/// `eprintln!`, not writes to standard error itself.
pub fn skipped(reason: &str) {
    use std::io::Write;
    static TOLD: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
    if told.iter().any(|r| r == reason) {
        return;
    }
    told.push(reason.to_string());
    let test = std::env::args().next().unwrap_or_default();
    let test = Path::new(&test)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let line = format!(
        "SKIPPED ({}): {reason}\n",
        test.split('-').next().unwrap_or(&test)
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// The rows `trace-cat --json FILE` writes, parsed.
pub fn json_rows(file: &Path) -> Vec<serde_json::Value> {
    let out = bin("trace-cat").arg("--json").arg(file).assert().success();
    String::from_utf8(out.get_output().stdout.clone())
        .expect("UTF-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// A file under `tests/data`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Builds a TSV row from `(column, value)` pairs; other columns are empty.
pub fn row(fields: &[(&str, &str)]) -> String {
    HEADER
        .split('\t')
        .map(|c| {
            fields
                .iter()
                .find(|(k, _)| *k == c)
                .map(|(_, v)| *v)
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("\t")
}

/// A stream: the header, the `format` meta row, then `rows`.
pub fn stream(rows: &[String]) -> String {
    let mut s = format!(
        "{HEADER}\n{}\n",
        row(&[
            ("kind", "meta"),
            ("name", "format"),
            ("value", "tracepipe-stream/1")
        ])
    );
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s
}

/// The lines of `text` after the header and the format row.
pub fn body(text: &str) -> Vec<String> {
    text.lines().skip(2).map(str::to_string).collect()
}

/// The `kind` of a TSV line.
pub fn kind_of(line: &str) -> &str {
    line.split('\t').next().unwrap_or("")
}

/// Column `name` of a TSV line.
pub fn col<'a>(line: &'a str, name: &str) -> &'a str {
    let i = HEADER.split('\t').position(|c| c == name).expect("column");
    line.split('\t').nth(i).unwrap_or("")
}

/// A frame a slice cut at `t1` (a `leave` at T1 or a `state` ending there,
/// flagged C) as its frame alone (kind, times, loc, cat, name, depth):
/// without --true-ends its `leave` is not read, so what only the leave
/// carries (its true end, flags, attributes, value) is not in the slice.
pub fn as_cut_frame(line: &str, t1: i64) -> String {
    let end = match kind_of(line) {
        "leave" => col(line, "time"),
        "state" => col(line, "end"),
        _ => return line.to_string(),
    };
    if end != t1.to_string() || !col(line, "flags").contains('C') {
        return line.to_string();
    }
    let frame = ["kind", "time", "end", "loc", "cat", "name", "depth"].map(|c| col(line, c));
    format!("cut {}", frame.join(" "))
}

/// A small deterministic pseudo-random generator (xorshift), for property tests.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The stream `trace-cat ARGS FILE` writes, without the `source` meta row
/// (which names the file).
pub fn stream_of(args: &[&str], file: &Path) -> String {
    output_of("trace-cat", args, &[file])
}

/// The stream `CMD ARGS INPUTS...` writes, without the `source` meta rows
/// (which name the files).
pub fn output_of(cmd: &str, args: &[&str], inputs: &[&Path]) -> String {
    let out = bin(cmd).args(args).args(inputs).assert().success();
    String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .filter(|l| !(l.starts_with("meta\t") && col(l, "name") == "source"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// format -> stream -> format -> stream gives the same stream, and the first
/// stream is itself valid.
pub fn check_round_trip(format: &str, file: &Path, dir: &Path) {
    let first = stream_of(&[], file);
    bin("trace-cat")
        .write_stdin(first.clone())
        .assert()
        .success();
    let written = dir.join(format!("round-trip.{format}"));
    bin("trace-cat")
        .args(["-t", format, "-o"])
        .arg(&written)
        .arg(file)
        .assert()
        .success();
    let second = stream_of(&["-f", format], &written);
    assert_eq!(first, second, "round trip of {file:?} through {format}");
}

/// The Pajé corpus traces this reader reads otherwise than PajeNG, on
/// purpose (docs/formats.md, "Differences from PajeNG"): its records
/// differ from pj_dump's expected output.
pub fn paje_differs_from_pajeng(input: &str) -> bool {
    matches!(
        input,
        "negative_times.paje"
            | "time_order_only_per_container_and_type.paje"
            | "multiple_files_root.trace"
    )
}

/// Runs `trace-cat ARGS`; Ok(stdout) or Err(stderr).
pub fn cat(args: &[&str], input: &Path) -> Result<String, String> {
    run("trace-cat", args, input)
}

/// Runs `CMD ARGS INPUT`; Ok(stdout) or Err(stderr).
pub fn run(cmd: &str, args: &[&str], input: &Path) -> Result<String, String> {
    let out = bin(cmd).args(args).arg(input).output().expect("runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(text(&out.stderr))
    }
}

/// The files (or trace folders) under `dir` that `trace-cat` reads.
pub fn accepted_traces(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        let is_pallas = entries
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "pallas"));
        if is_pallas {
            found.push(d);
            continue;
        }
        for p in entries {
            if p.is_dir() {
                if !p.ends_with("expected") {
                    stack.push(p);
                }
            } else if p
                .extension()
                .is_some_and(|e| ["paje", "trace", "etf"].contains(&e.to_str().unwrap()))
                && cat(&["-q"], &p).is_ok()
            {
                found.push(p);
            }
        }
    }
    found.retain(|p| cat(&["-q"], p).is_ok());
    found
}

/// Whether `PJ_DUMP`, when set, accepts `file`.
pub fn pajeng_accepts(file: &Path) -> bool {
    std::env::var_os("PJ_DUMP").is_none_or(|pj_dump| {
        let out = std::process::Command::new(pj_dump).arg(file).output();
        out.is_ok_and(|o| o.status.success())
    })
}

/// A stream (TSV) through the library's matcher as the STF writer runs it
/// (`stf::writer::match_options`): what an STF file stores.
pub fn matched(stream: &str) -> String {
    use tracepipe::pipe::{RecordSink, RecordSource, WriteOptions};
    use tracepipe::stages::matcher::Matcher;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("matched");
    std::fs::create_dir_all(&dir).unwrap();
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("m{}-{serial}.tsv", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let out = tracepipe::io::Output::new("matched.tsv", Box::new(file));
    let symbols = tracepipe::Symbols::new();
    let opts = WriteOptions {
        symbols: symbols.clone(),
        ..WriteOptions::default()
    };
    let writer = tracepipe::formats::stream::tsv::TsvWriter::new(out, &opts);
    let options = tracepipe::formats::stf::writer::match_options();
    let mut sink = Matcher::with_options(writer, options, symbols.clone(), Default::default());
    let mut reader =
        tracepipe::formats::stream::tsv::TsvReader::new("s.tsv", stream.as_bytes(), symbols)
            .unwrap();
    let mut rec = tracepipe::Record::default();
    while reader.next_record(&mut rec).unwrap() {
        sink.write(&rec).unwrap();
    }
    sink.finish().unwrap();
    std::fs::read_to_string(&path).unwrap()
}

/// The archives other tools wrote (`otf2-external` of the corpus), each
/// unpacked from its tarball: its anchor file by its `SOURCES.tsv` row.
pub fn external_archives() -> Vec<(String, PathBuf)> {
    let Some(dir) = corpus("otf2-external") else {
        return Vec::new();
    };
    let sources = std::fs::read_to_string(dir.join("SOURCES.tsv")).expect("SOURCES.tsv");
    let header: Vec<&str> = sources.lines().next().unwrap().split('\t').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (file, anchor) = (column("file"), column("anchor"));
    let into = scratch("otf2-external");
    sources
        .lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let status = std::process::Command::new("tar")
                .arg("-xzf")
                .arg(dir.join(f[file]))
                .arg("-C")
                .arg(&into)
                .status()
                .expect("tar runs");
            assert!(status.success(), "unpacking {}", f[file]);
            (f[file].to_string(), into.join(f[anchor]))
        })
        .collect()
}
