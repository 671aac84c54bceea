//! A writer's error about a row names the line the row was read from,
//! through every stage that can stand between them (filter, matcher,
//! slice, the merge of several inputs) and with any number of threads:
//! the rows a stage holds, makes or passes on keep their origin.

mod common;

use std::path::{Path, PathBuf};

use common::{bin, row, scratch, stream};

/// Rows in the stream, and the one the Pajé writer refuses (a counter
/// whose value is not a number).
const ROWS: usize = 30_000;
/// In place of an event (row k with k % 5 == 4), so that frames stay whole.
const BAD: usize = 21_004;

/// Writes a stream of enter/leave frames, events and message halves on two
/// locations (prefixed `prefix`), with the bad counter at row `BAD` when
/// `bad`; returns its path and the bad row's line.
fn write_stream(dir: &Path, name: &str, prefix: &str, bad: bool) -> (PathBuf, usize) {
    let (a, b) = (format!("{prefix}0"), format!("{prefix}1"));
    let mut rows = vec![
        row(&[("kind", "container"), ("loc", &a), ("cat", "process")]),
        row(&[("kind", "container"), ("loc", &b), ("cat", "process")]),
    ];
    let mut bad_line = 0;
    for k in 0..ROWS {
        let time = (10 * k).to_string();
        let later = (10 * k + 5).to_string();
        let r = match k % 5 {
            _ if bad && k == BAD => {
                // Header, format row and the two containers come first.
                bad_line = rows.len() + 3;
                row(&[
                    ("kind", "counter"),
                    ("time", &time),
                    ("loc", &b),
                    ("name", "c"),
                    ("value", "x"),
                ])
            }
            0 => row(&[
                ("kind", "enter"),
                ("time", &time),
                ("loc", &a),
                ("name", "f"),
                ("depth", "0"),
            ]),
            1 => row(&[
                ("kind", "send"),
                ("time", &time),
                ("loc", &a),
                ("peer", &b),
                ("tag", "1"),
            ]),
            2 => row(&[
                ("kind", "recv"),
                ("time", &later),
                ("loc", &b),
                ("peer", &a),
                ("tag", "1"),
            ]),
            3 => row(&[
                ("kind", "leave"),
                ("time", &later),
                ("loc", &a),
                ("name", "f"),
                ("depth", "0"),
            ]),
            _ => row(&[
                ("kind", "event"),
                ("time", &later),
                ("loc", &b),
                ("name", "e"),
            ]),
        };
        rows.push(r);
    }
    let path = dir.join(name);
    std::fs::write(&path, stream(&rows)).unwrap();
    (path, bad_line)
}

/// The error `command args… -t WRITER` ends with (the first's), the same up
/// to its location for each number of threads and each writer that
/// refuses the row (Pajé and TRACE hold numbers in variables and signals,
/// and word the refusal their own way).
fn error_of(command: &str, args: &[&str], inputs: &[&Path]) -> String {
    let runs = [
        ("paje", "1"),
        ("paje", "2"),
        ("paje", "4"),
        ("trace", "1"),
        ("trace", "4"),
    ];
    let mut messages: Vec<String> = Vec::new();
    for (writer, threads) in runs {
        let out = bin(command)
            .args(args)
            .args(["-t", writer, "--threads", threads])
            .args(inputs)
            .assert()
            .failure()
            .code(1);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        let located = |text: &str| {
            text.split(": counter")
                .next()
                .unwrap_or_default()
                .to_string()
        };
        if let Some(first) = messages.first() {
            assert_eq!(
                located(&stderr),
                located(first),
                "{command} {args:?}: -t {writer} --threads {threads} differs"
            );
            assert!(
                stderr.contains(": counter `c` has the value `x`"),
                "{stderr}"
            );
        }
        messages.push(stderr);
    }
    messages.swap_remove(0)
}

fn expect_bad_line(command: &str, args: &[&str], inputs: &[&Path], file: &Path, line: usize) {
    let err = error_of(command, args, inputs);
    let at = format!("{}:{line}: counter `c` has the value `x`", file.display());
    assert!(
        err.contains(&at),
        "{command} {args:?}: expected `{at}` in\n{err}"
    );
}

#[test]
fn writer_errors_name_the_line_through_every_stage() {
    let dir = scratch("stage_errors");
    let (file, line) = write_stream(&dir, "s.tsv", "p", true);
    let inputs = [file.as_path()];
    expect_bad_line("trace-cat", &[], &inputs, &file, line);
    expect_bad_line(
        "trace-filter",
        &["-k", "counter,event"],
        &inputs,
        &file,
        line,
    );
    expect_bad_line("trace-filter", &["--loc", "p1"], &inputs, &file, line);
    expect_bad_line("trace-match", &[], &inputs, &file, line);
    expect_bad_line(
        "trace-slice",
        &["--from", "1000", "--to", "290000"],
        &inputs,
        &file,
        line,
    );
}

#[test]
fn writer_errors_name_the_input_through_the_merge() {
    let dir = scratch("stage_errors_merge");
    let (other, _) = write_stream(&dir, "a.tsv", "q", false);
    let (file, line) = write_stream(&dir, "s.tsv", "p", true);
    let inputs = [other.as_path(), file.as_path()];
    expect_bad_line("trace-cat", &[], &inputs, &file, line);
    expect_bad_line("trace-match", &[], &inputs, &file, line);
    expect_bad_line("trace-filter", &["-k", "counter"], &inputs, &file, line);
}
