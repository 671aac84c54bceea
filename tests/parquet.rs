//! The Parquet writer and reader: byte-exact round trips through a file and
//! partitioned folders, DuckDB and Polars reading what is written (typed
//! columns, every row once), docs/sql.md's queries, and bad files.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, cat, corpus, data, external_archives, row, scratch, skipped, stream};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/pingpong.tsv")
}

/// `trace-cat ARGS INPUT` (stdout) or its error.
fn trace_cat(args: &[&str], input: &Path) -> Result<String, String> {
    cat(args, input)
}

/// Writes `input` as Parquet at `out` with `args`, then reads it back.
fn through_parquet(input: &Path, out: &Path, args: &[&str]) -> String {
    let mut cmd = bin("trace-cat");
    cmd.arg(input)
        .args(["-t", "parquet", "-o"])
        .arg(out)
        .args(args);
    cmd.assert().success();
    trace_cat(&[], out).unwrap_or_else(|e| panic!("reading {}: {e}", out.display()))
}

/// The streams the round trips are tried on, as canonical TSV files.
fn varied_streams(dir: &Path) -> Vec<PathBuf> {
    let mut inputs = vec![
        example(),
        data("nasty.tsv"),
        data("viewer/kinds.tsv"),
        data("trace/all-kinds.etf"),
    ];
    inputs.retain(|p| p.exists());
    assert!(inputs.len() >= 3, "the fixtures are there");
    let generated = dir.join("generated.tsv");
    std::fs::write(&generated, many_locations()).unwrap();
    inputs.push(generated);
    let mut streams = Vec::new();
    for (n, input) in inputs.iter().enumerate() {
        let file = dir.join(format!("stream-{n}.tsv"));
        std::fs::write(&file, canonical(input)).unwrap();
        streams.push(file);
    }
    streams
}

/// 300 locations (dictionaries of 9 bits) and 70 000 rows (several pages
/// and row groups), some fields empty.
fn many_locations() -> String {
    let mut rows = Vec::new();
    for l in 0..300 {
        rows.push(row(&[
            ("kind", "container"),
            ("loc", &format!("rank{l}")),
            ("cat", "thread"),
        ]));
    }
    for t in 0..70_000i64 {
        let (time, loc) = (t.to_string(), format!("rank{}", t * 7 % 300));
        let name = format!("f{}", t % 1000);
        let mut fields = vec![
            ("kind", "event"),
            ("time", &time),
            ("loc", &loc),
            ("name", &name),
        ];
        let value = (t * 3).to_string();
        if t % 3 == 0 {
            fields.push(("value", &value));
        }
        rows.push(row(&fields));
    }
    stream(&rows)
}

/// `input` as a reader that follows frames gives it: a `leave` that does
/// not nest made an event (docs/stream.md), which the TSV reader leaves as
/// it is when it copies lines.
fn canonical(input: &Path) -> String {
    let json = bin("trace-cat").arg("--json").arg(input).output().unwrap();
    assert!(json.status.success(), "{}", input.display());
    let mut back = bin("trace-cat");
    let back = back.arg("-").write_stdin(json.stdout).output().unwrap();
    assert!(back.status.success(), "{}", input.display());
    String::from_utf8(back.stdout).unwrap()
}

#[test]
fn a_file_and_partitioned_folders_read_back_byte_for_byte() {
    let dir = scratch("parquet-round-trip");
    for tsv in varied_streams(&dir) {
        let original = std::fs::read_to_string(&tsv).unwrap();
        let stem = tsv.file_stem().unwrap().to_string_lossy().into_owned();
        let file = dir.join(format!("{stem}.parquet"));
        assert_eq!(through_parquet(&tsv, &file, &[]), original, "{stem}");
        // Row groups of three rows: batches and groups cross everywhere.
        let small = dir.join(format!("{stem}-small.parquet"));
        let back = through_parquet(&tsv, &small, &["--row-group", "3"]);
        assert_eq!(back, original, "{stem} in row groups of 3");
        for by in ["loc", "kind"] {
            let folder = dir.join(format!("{stem}-by-{by}"));
            let back = through_parquet(&tsv, &folder, &["--partition-by", by]);
            assert_eq!(back, original, "{stem} partitioned by {by}");
        }
    }
}

/// The rows of `stream` whose `loc` is `loc`, and every declaration.
fn data_rows_on(stream: &str, loc: &str) -> Vec<String> {
    stream
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            !matches!(f[0], "meta" | "type" | "container") && f[3] == loc
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn one_partition_is_a_stream_of_its_own() {
    let dir = scratch("parquet-one-partition");
    let original = trace_cat(&[], &example()).unwrap();
    let folder = dir.join("by-loc");
    through_parquet(
        &example(),
        &folder,
        &["--partition-by", "loc", "--row-group", "4"],
    );
    let part = trace_cat(&[], &folder.join("loc=rank1")).expect("one partition reads");
    let data: Vec<String> = part
        .lines()
        .skip(1)
        .filter(|l| !matches!(l.split('\t').next(), Some("meta" | "type" | "container")))
        .map(str::to_string)
        .collect();
    assert_eq!(data, data_rows_on(&original, "rank1"));
    // Its location and the node above it are declared, before its rows.
    assert!(part.contains("container\t\t\tnode0\tnode\tnode0"), "{part}");
    assert!(part.contains("container\t0\t\trank1\tprocess"), "{part}");
    assert!(
        !part.contains("\trank0\tprocess"),
        "another location's declaration: {part}"
    );
    // One file of it reads too.
    let one = folder.join("loc=rank1/part-0.parquet");
    let first = trace_cat(&[], &one).expect("one file reads");
    assert!(
        first.contains("container\t\t\tnode0\tnode\tnode0"),
        "{first}"
    );
}

/// A stream whose locations are not safe folder names.
fn awkward_locations() -> String {
    let locs = [
        "rank 0",
        "a/b",
        "é=%;x",
        "back\\\\slash",
        "q?*:[x]^{y}#'\"",
        ".",
    ];
    let mut rows = Vec::new();
    for loc in locs {
        rows.push(row(&[
            ("kind", "container"),
            ("loc", loc),
            ("cat", "thread"),
        ]));
    }
    for (t, loc) in locs.iter().enumerate() {
        let time = (t as i64 * 10 - 20).to_string();
        rows.push(row(&[
            ("kind", "event"),
            ("time", &time),
            ("loc", loc),
            ("name", "tick"),
        ]));
    }
    stream(&rows)
}

#[test]
fn awkward_location_names_partition_and_read_back_exactly() {
    let dir = scratch("parquet-awkward");
    let tsv = dir.join("awkward.tsv");
    std::fs::write(&tsv, awkward_locations()).unwrap();
    let original = trace_cat(&[], &tsv).unwrap();
    let folder = dir.join("by-loc");
    assert_eq!(
        through_parquet(&tsv, &folder, &["--partition-by", "loc"]),
        original
    );
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in [
        "loc=a%2Fb",
        "loc=rank 0",
        "loc=é%3D%25;x",
        "loc=back%5Cslash",
        "loc=.",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} not in {names:?}");
    }
    // What --prefix-inputs makes of two inputs with the same locations.
    let copy = dir.join("again.tsv");
    std::fs::copy(&tsv, &copy).unwrap();
    let prefixed = dir.join("prefixed");
    let mut cmd = bin("trace-cat");
    cmd.args([
        "--prefix-inputs",
        "-t",
        "parquet",
        "--partition-by",
        "loc",
        "-o",
    ]);
    cmd.arg(&prefixed).arg(&tsv).arg(&copy).assert().success();
    let mut want = bin("trace-cat");
    let want = want
        .arg("--prefix-inputs")
        .arg(&tsv)
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(
        trace_cat(&[], &prefixed).unwrap().as_bytes(),
        want.stdout.as_slice()
    );
    if let Some(python) = duckdb() {
        check(
            &python,
            &[
                "partitioned",
                path(&folder),
                "loc",
                path(&tsv_of(&original, &dir)),
            ],
        );
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn tsv_of(text: &str, dir: &Path) -> PathBuf {
    let file = dir.join("canonical.tsv");
    std::fs::write(&file, text).unwrap();
    file
}

/// The test environment's Python when it has DuckDB and Polars; under CI
/// a missing package is a failure, since `.ci/setup --tests` installs them.
fn duckdb() -> Option<PathBuf> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-python/bin/python3");
    let ready = Command::new(&venv)
        .args(["-c", "import duckdb, polars"])
        .status()
        .is_ok_and(|s| s.success());
    if ready {
        return Some(venv);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "DuckDB and Polars are missing from {} (CI is set): run .ci/setup --tests",
        venv.display()
    );
    skipped("DuckDB and Polars are not installed (.ci/setup --tests)");
    None
}

/// Runs tests/parquet_check.py with `args`; its output.
fn check(python: &Path, args: &[&str]) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/parquet_check.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "parquet_check.py {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every corpus format's first trace, and the fixtures.
fn corpus_and_fixtures(dir: &Path) -> Vec<PathBuf> {
    let mut inputs = varied_streams(dir);
    for format in ["paje", "pallas", "trace"] {
        if let Some(found) = corpus(format).map(|d| common::accepted_traces(&d)) {
            inputs.extend(found.into_iter().take(2));
        }
    }
    inputs.extend(
        external_archives()
            .into_iter()
            .map(|(_, anchor)| anchor)
            .take(2),
    );
    inputs
}

#[test]
fn duckdb_reads_typed_columns_and_the_same_rows() {
    let Some(python) = duckdb() else {
        return;
    };
    let dir = scratch("parquet-duckdb");
    for (n, input) in corpus_and_fixtures(&dir).iter().enumerate() {
        let text = canonical(input);
        let tsv = dir.join(format!("{n}.tsv"));
        std::fs::write(&tsv, &text).unwrap();
        let file = dir.join(format!("{n}.parquet"));
        assert_eq!(
            through_parquet(&tsv, &file, &[]),
            text,
            "{}",
            input.display()
        );
        let said = check(&python, &["rows", path(&file), path(&tsv)]);
        assert!(said.starts_with("ok "), "{said}");
        let folder = dir.join(format!("{n}-by-kind"));
        through_parquet(&tsv, &folder, &["--partition-by", "kind"]);
        check(&python, &["partitioned", path(&folder), "kind", path(&tsv)]);
    }
}

#[test]
fn a_file_duckdb_wrote_reads_as_a_stream() {
    let Some(python) = duckdb() else {
        return;
    };
    let dir = scratch("parquet-duckdb-copy");
    let tsv = tsv_of(&trace_cat(&[], &example()).unwrap(), &dir);
    let file = dir.join("filtered.parquet");
    check(
        &python,
        &["copy", path(&tsv), path(&file), "kind <> 'counter'"],
    );
    let mut filter = bin("trace-filter");
    let want = filter
        .args(["-k", "counter", "-v"])
        .arg(&tsv)
        .output()
        .unwrap();
    assert!(want.status.success());
    assert_eq!(
        trace_cat(&[], &file).unwrap().as_bytes(),
        want.stdout.as_slice()
    );
}

/// `trace-stat REPORT ARGS` over `input`, without its header, as rows of
/// the columns `keep`.
fn report(args: &[&str], input: &Path, keep: &[usize]) -> Vec<String> {
    let out = bin("trace-stat").args(args).arg(input).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            keep.iter().map(|&i| f[i]).collect::<Vec<_>>().join("\t")
        })
        .collect()
}

#[test]
fn the_sql_guide_queries_agree_with_trace_stat() {
    let Some(python) = duckdb() else {
        return;
    };
    let dir = scratch("parquet-sql-guide");
    let spans = bin("trace-cat")
        .arg("--spans")
        .arg(example())
        .output()
        .unwrap();
    let mut matching = bin("trace-match");
    matching
        .args(["-t", "parquet", "-o"])
        .arg(dir.join("trace.parquet"));
    matching
        .write_stdin(spans.stdout.clone())
        .assert()
        .success();
    let doc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/sql.md");
    let said = check(&python, &["queries", path(&doc), path(&dir)]);
    let answers: Vec<Vec<String>> = said
        .split("==\n")
        .skip(1)
        .map(|b| b.lines().map(str::to_string).collect())
        .collect();
    let profile = report(&["profile", "--ids"], &example(), &[0, 1, 2]);
    assert_eq!(answers[0], profile, "top functions");
    let states = tsv_of(&String::from_utf8(spans.stdout).unwrap(), &dir);
    let mut rank0 = bin("trace-filter");
    let rank0 = rank0
        .args(["-k", "state", "-l", "rank0", "--rows-only"])
        .arg(&states);
    let rank0 = String::from_utf8(rank0.output().unwrap().stdout).unwrap();
    let mut timeline: Vec<String> = rank0
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            [f[1], f[2], f[6], f[5]].join("\t")
        })
        .collect();
    timeline.sort_by_key(|l| {
        let f: Vec<i64> = l.split('\t').take(3).map(|x| x.parse().unwrap()).collect();
        (f[0], f[2])
    });
    assert_eq!(answers[1], timeline, "rank0's timeline");
    let matrix = report(&["messages", "--ids"], &example(), &[0, 1, 2, 3]);
    assert_eq!(answers[2], matrix, "message matrix");
}

#[test]
fn bad_files_are_located_errors() {
    let dir = scratch("parquet-errors");
    let file = dir.join("good.parquet");
    through_parquet(&example(), &file, &[]);
    let bytes = std::fs::read(&file).unwrap();
    // Cut short: the footer is gone.
    let cut = dir.join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = trace_cat(&[], &cut).unwrap_err();
    assert!(
        err.contains("cut.parquet") && err.contains("Parquet"),
        "{err}"
    );
    // Pages damaged: every byte of the middle turned.
    let mut damaged = bytes.clone();
    let len = damaged.len();
    for b in &mut damaged[8..len / 2] {
        *b ^= 0x5a;
    }
    let bad = dir.join("damaged.parquet");
    std::fs::write(&bad, &damaged).unwrap();
    let err = trace_cat(&[], &bad).unwrap_err();
    assert!(err.contains("damaged.parquet"), "{err}");
    // A standard input cannot be read: the index is at the end.
    let mut piped = bin("trace-cat");
    let out = piped
        .args(["-f", "parquet", "-"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a pipe"));
    // Compressed output is refused: Parquet compresses its pages.
    let mut gz = bin("trace-cat");
    gz.arg(example())
        .args(["-t", "parquet", "-o"])
        .arg(dir.join("x.parquet.gz"));
    gz.assert().failure().code(2);
}

#[test]
fn a_row_is_checked_and_located_by_its_row() {
    let Some(python) = duckdb() else {
        return;
    };
    let dir = scratch("parquet-bad-row");
    let text = trace_cat(&[], &example()).unwrap();
    let tsv = tsv_of(&text.replacen("\nenter\t", "\nentre\t", 1), &dir);
    let file = dir.join("bad-kind.parquet");
    check(&python, &["copy", path(&tsv), path(&file), "true"]);
    let bad_row = text.lines().position(|l| l.starts_with("enter\t")).unwrap();
    let err = trace_cat(&[], &file).unwrap_err();
    let want = format!("bad-kind.parquet: row {bad_row}: column `kind`: unknown kind `entre`");
    assert!(err.contains(&want), "{err}");
}

#[test]
fn a_foreign_folder_is_not_replaced() {
    let dir = scratch("parquet-foreign-folder");
    let folder = dir.join("mine");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("notes.txt"), "keep me").unwrap();
    let mut cmd = bin("trace-cat");
    cmd.arg(example())
        .args(["-t", "parquet", "--partition-by", "loc", "-o"])
        .arg(&folder);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.txt"));
    assert_eq!(
        std::fs::read_to_string(folder.join("notes.txt")).unwrap(),
        "keep me"
    );
    // An earlier partitioned output is replaced whole: no partition stays.
    let out_dir = dir.join("parts");
    through_parquet(&data("nasty.tsv"), &out_dir, &["--partition-by", "loc"]);
    let back = through_parquet(&example(), &out_dir, &["--partition-by", "loc"]);
    assert_eq!(back, trace_cat(&[], &example()).unwrap());
}
