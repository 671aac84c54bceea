//! trace-cat: merging, span building, closed pipes.

mod common;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use common::*;
use predicates::prelude::*;

/// A random time-ordered stream with locations `prefix0..prefix2`.
fn random_stream(rng: &mut Rng, prefix: &str, rows: usize) -> String {
    let mut lines = Vec::new();
    for p in 0..3 {
        lines.push(row(&[
            ("kind", "container"),
            ("loc", &format!("{prefix}{p}")),
            ("cat", "thread"),
        ]));
    }
    let mut t: i64 = 0;
    for i in 0..rows {
        t += rng.below(5) as i64; // ties happen often
        let loc = format!("{prefix}{}", rng.below(3));
        let name = format!("{prefix}-row{i}");
        if rng.below(4) == 0 {
            let start = (t - rng.below(20) as i64).to_string();
            lines.push(row(&[
                ("kind", "state"),
                ("time", &start),
                ("end", &t.to_string()),
                ("loc", &loc),
                ("name", &name),
            ]));
        } else {
            lines.push(row(&[
                ("kind", "event"),
                ("time", &t.to_string()),
                ("loc", &loc),
                ("name", &name),
            ]));
        }
    }
    stream(&lines)
}

fn completion(line: &str) -> Option<i64> {
    let t: i64 = col(line, "time").parse().ok()?;
    Some(match col(line, "end").parse::<i64>() {
        Ok(e) => t.max(e),
        Err(_) => t,
    })
}

#[test]
fn merge_keeps_every_row_in_time_order() {
    let dir = scratch("merge");
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for round in 0..5 {
        let a = random_stream(&mut rng, "a", 400 + round * 50);
        let b = random_stream(&mut rng, "b", 300);
        let (fa, fb) = (dir.join("a.tsv"), dir.join("b.tsv"));
        std::fs::write(&fa, &a).unwrap();
        std::fs::write(&fb, &b).unwrap();
        let out = bin("trace-cat").arg(&fa).arg(&fb).assert().success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let merged = body(&text);
        let mut expected: Vec<String> = body(&a).into_iter().chain(body(&b)).collect();
        let mut got = merged.clone();
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "the merge must keep every row exactly once");
        let times: Vec<i64> = merged.iter().filter_map(|l| completion(l)).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "not time-ordered");
        // Rows of one input keep their relative order (stable merge).
        let only_a: Vec<&String> = merged
            .iter()
            .filter(|l| col(l, "loc").starts_with('a'))
            .collect();
        let a_rows: Vec<String> = body(&a);
        assert_eq!(only_a, a_rows.iter().collect::<Vec<_>>());
        // The merged output is itself a valid stream.
        bin("trace-cat").write_stdin(text).assert().success();
    }
}

#[test]
fn merge_puts_ties_in_input_order_and_aligns_origins() {
    let dir = scratch("origins");
    let a = format!(
        "{HEADER}\n{}\n{}\n{}\n",
        row(&[("kind", "meta"), ("name", "origin"), ("value", "1000")]),
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[
            ("kind", "event"),
            ("time", "50"),
            ("loc", "a"),
            ("name", "a50")
        ])
    );
    let b = format!(
        "{HEADER}\n{}\n{}\n{}\n",
        row(&[("kind", "meta"), ("name", "origin"), ("value", "1040")]),
        row(&[("kind", "container"), ("loc", "b")]),
        row(&[
            ("kind", "event"),
            ("time", "10"),
            ("loc", "b"),
            ("name", "b10")
        ])
    );
    std::fs::write(dir.join("a.tsv"), a).unwrap();
    std::fs::write(dir.join("b.tsv"), b).unwrap();
    let out = bin("trace-cat")
        .arg(dir.join("b.tsv"))
        .arg(dir.join("a.tsv"))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines = body(&text);
    // One origin (the earliest); b's times shifted by +40 onto it; the tie at 50
    // goes to the first input named (b).
    assert_eq!(
        lines.iter().filter(|l| col(l, "name") == "origin").count(),
        1
    );
    assert!(lines
        .iter()
        .any(|l| col(l, "name") == "origin" && col(l, "value") == "1000"));
    let events: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| kind_of(l) == "event")
        .map(|l| (col(l, "name"), col(l, "time")))
        .collect();
    assert_eq!(events, vec![("b10", "50"), ("a50", "50")]);
}

#[test]
fn spans_turn_frames_into_states() {
    let out = bin("trace-cat")
        .arg("--spans")
        .arg(data("../../examples/pingpong.tsv"))
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines = body(&text);
    assert!(!lines
        .iter()
        .any(|l| kind_of(l) == "enter" || kind_of(l) == "leave"));
    let states: Vec<(&str, &str, &str, &str, &str)> = lines
        .iter()
        .filter(|l| kind_of(l) == "state")
        .map(|l| {
            (
                col(l, "loc"),
                col(l, "name"),
                col(l, "time"),
                col(l, "end"),
                col(l, "depth"),
            )
        })
        .collect();
    assert_eq!(states.len(), 3 * 3 + 2);
    assert_eq!(states[0], ("rank0", "MPI_Send", "1000", "1400", "1"));
    assert_eq!(
        states[states.len() - 1],
        ("rank1", "main", "0", "10020", "0")
    );
    // Attributes of the enter are carried into the state.
    assert!(lines
        .iter()
        .any(|l| col(l, "name") == "compute" && col(l, "attrs") == "iteration=2"));
    // The result is a valid stream.
    bin("trace-cat").write_stdin(text).assert().success();
}

/// The sink may run behind the reader (on another thread; the pump tries that
/// on a stretch of rows after the first tens of thousands): an error it
/// raises about a row still names that row's line and file, not where the
/// reader is.
#[test]
fn sink_errors_name_their_row_far_behind_the_reader() {
    let event = |t: u64, loc: &str| {
        row(&[
            ("kind", "event"),
            ("time", &t.to_string()),
            ("loc", loc),
            ("name", "e"),
        ])
    };
    // A counter whose value Pajé cannot hold: its writer refuses it.
    let orphan = |t: u64| {
        row(&[
            ("kind", "counter"),
            ("time", &t.to_string()),
            ("loc", "t"),
            ("name", "c"),
            ("value", "x"),
        ])
    };
    // Lines: header, format, container, events, then the refused counter.
    let with_orphan = |events: u64| {
        let mut rows = vec![row(&[("kind", "container"), ("loc", "t")])];
        rows.extend((1..=events).map(|t| event(t, "t")));
        rows.push(orphan(events + 1));
        rows.extend((events + 2..events + 30_000).map(|t| event(t, "t")));
        rows
    };
    for (events, threads) in [(1, "auto"), (100_000, "auto"), (1, "2"), (5_000, "2")] {
        bin("trace-cat")
            .args(["-t", "paje", "--threads", threads])
            .write_stdin(stream(&with_orphan(events)))
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!(
                "<stdin>:{}: counter `c` has the value `x`",
                events + 4
            )));
    }
    // Merged inputs: the row is the bad file's own line, about the 100,000th
    // row of the merged stream.
    let dir = scratch("sink_errors_name_their_row");
    let good = dir.join("good.tsv");
    let bad = dir.join("bad.tsv");
    let mut good_rows = vec![row(&[("kind", "container"), ("loc", "u")])];
    good_rows.extend((1..=50_000).map(|t| event(t, "u")));
    std::fs::write(&good, stream(&good_rows)).unwrap();
    std::fs::write(&bad, stream(&with_orphan(50_000))).unwrap();
    bin("trace-cat")
        .args(["-t", "paje"])
        .arg(&good)
        .arg(&bad)
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!(
            "{}:50004: counter `c` has the value `x`",
            bad.display()
        )));
}

#[test]
fn spans_report_unbalanced_frames() {
    let c = row(&[("kind", "container"), ("loc", "t")]);
    let enter = row(&[
        ("kind", "enter"),
        ("time", "1"),
        ("loc", "t"),
        ("name", "f"),
    ]);
    let bad_leave = row(&[
        ("kind", "leave"),
        ("time", "2"),
        ("loc", "t"),
        ("name", "g"),
    ]);
    // The reader keeps a leave that closes no open frame (one warning):
    // it closes the innermost, or is an event; --strict refuses it.
    let out = bin("trace-cat")
        .arg("--spans")
        .write_stdin(stream(&[c.clone(), enter.clone(), bad_leave.clone()]))
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "<stdin>:5: frames that do not nest",
        ));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let span = body(&text).pop().unwrap();
    assert_eq!(
        (
            kind_of(&span),
            col(&span, "name"),
            col(&span, "end"),
            col(&span, "attrs")
        ),
        ("state", "f", "2", "named=g")
    );
    bin("trace-cat")
        .args(["--spans", "--strict"])
        .write_stdin(stream(&[c.clone(), enter.clone(), bad_leave]))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "<stdin>:5: leave of `g`, which is not open (--strict)",
        ));
    let orphan = row(&[
        ("kind", "leave"),
        ("time", "2"),
        ("loc", "t"),
        ("name", "f"),
    ]);
    bin("trace-cat")
        .args(["--spans", "--strict"])
        .write_stdin(stream(&[c.clone(), orphan]))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "<stdin>:4: leave of `f`, which is not open (--strict)",
        ));
    // Frames still open at the end are closed at the last time, flagged, and warned about.
    let later = row(&[
        ("kind", "event"),
        ("time", "9"),
        ("loc", "t"),
        ("name", "e"),
    ]);
    let out = bin("trace-cat")
        .arg("--spans")
        .write_stdin(stream(&[c, enter, later]))
        .assert()
        .success()
        .stderr(predicate::str::contains("1 frame(s) still open"));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let last = body(&text).pop().unwrap();
    assert_eq!(
        (
            kind_of(&last),
            col(&last, "time"),
            col(&last, "end"),
            col(&last, "flags")
        ),
        ("state", "1", "9", "C")
    );
}

/// Frames open at the end cost what a frame's row says, and are closed one
/// at a time: 500 000 plain frames took 230 MB (a row each, and a second
/// copy to close them); frames with attributes keep them.
#[test]
fn frames_open_at_the_end_are_held_compact_and_closed_in_place() {
    const FRAMES: usize = 500_000;
    let dir = scratch("open_frames");
    let mut rows = vec![row(&[
        ("kind", "container"),
        ("loc", "t"),
        ("cat", "thread"),
    ])];
    rows.push(row(&[
        ("kind", "enter"),
        ("time", "0"),
        ("loc", "t"),
        ("name", "main"),
        ("attrs", "k=v"),
    ]));
    for i in 1..FRAMES {
        let (time, name) = (i.to_string(), format!("f{}", i % 7));
        rows.push(row(&[
            ("kind", "enter"),
            ("time", &time),
            ("loc", "t"),
            ("name", &name),
        ]));
    }
    let input = dir.join("open.tsv");
    std::fs::write(&input, stream(&rows)).unwrap();
    let args = [OsStr::new("-q"), OsStr::new("--spans"), input.as_os_str()];
    let out = run_in_memory("trace-cat", 128, &args).expect("--spans in 128 MiB");
    let states: Vec<&str> = out.lines().filter(|l| kind_of(l) == "state").collect();
    assert_eq!(states.len(), FRAMES);
    let (inner, outer) = (states[0], states[FRAMES - 1]);
    let last = (FRAMES - 1).to_string();
    let fields = |l| {
        (
            col(l, "time"),
            col(l, "end"),
            col(l, "depth"),
            col(l, "name"),
        )
    };
    let name = format!("f{}", (FRAMES - 1) % 7);
    assert_eq!(fields(inner), (&*last, &*last, &*last, &*name));
    assert_eq!(fields(outer), ("0", &*last, "0", "main"));
    assert_eq!((col(outer, "attrs"), col(outer, "flags")), ("k=v", "C"));
}

#[test]
fn closed_stdout_ends_quietly() {
    let dir = scratch("pipe");
    let file = dir.join("big.tsv");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        f.write_all(stream(&[row(&[("kind", "container"), ("loc", "p")])]).as_bytes())
            .unwrap();
        for i in 0..300_000 {
            writeln!(
                f,
                "{}",
                row(&[
                    ("kind", "event"),
                    ("time", &i.to_string()),
                    ("loc", "p"),
                    ("name", "tick")
                ])
            )
            .unwrap();
        }
    }
    for args in [
        vec![],
        vec!["--json"],
        vec!["--spans"],
        vec!["--threads", "1"],
        vec!["--threads", "2"],
        vec!["--spans", "--threads", "2"],
    ] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("trace-cat"))
            .args(&args)
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        // The reader goes away, as `head -1` does.
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "status {:?}", out.status);
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn list_formats_and_usage_errors() {
    bin("trace-cat")
        .arg("--list-formats")
        .assert()
        .success()
        .stdout(predicate::str::contains("tsv\tyes\tyes"));
    bin("trace-cat").arg("-t").arg("nope").assert().code(2);
    bin("trace-cat")
        .arg("/no/such/file.tsv")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("/no/such/file.tsv: "));
    bin("trace-cat")
        .write_stdin("hello world\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot recognise the format"));
}

/// Every input of the corpus and of the own fixtures gives the same output,
/// errors included, with 1, 2, 3 or 8 threads.
#[test]
fn any_number_of_threads_writes_the_same() {
    let mut inputs = vec![
        data("nasty.tsv"),
        data("paje/sample.paje"),
        data("paje/header.paje"),
        data("trace/all-kinds.etf"),
    ];
    let mut walk = |dir: std::path::PathBuf, depth: usize| {
        let mut stack = vec![(dir, depth)];
        while let Some((dir, depth)) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                if name == "expected" || name.ends_with(".md") {
                    continue;
                }
                // A Pallas trace is a folder: the corpus keeps one per entry.
                if path.is_file() || depth == 0 {
                    inputs.push(path);
                } else {
                    stack.push((path, depth - 1));
                }
            }
        }
    };
    for (format, depth) in [("paje", 1), ("trace", 2), ("pallas", 0)] {
        if let Some(dir) = corpus(format) {
            walk(dir, depth);
        }
    }
    inputs.sort();
    let mut compared = 0;
    for input in &inputs {
        let is_paje = matches!(
            input.extension().and_then(|e| e.to_str()),
            Some("paje" | "trace")
        );
        let mut variants = vec![vec![], vec!["--spans"]];
        if is_paje {
            variants.push(vec!["-t", "pjdump", "--user-fields"]);
        }
        for args in variants {
            let run = |threads: &str| {
                let out = bin("trace-cat")
                    .args(["--threads", threads])
                    .args(&args)
                    .arg(input)
                    .output()
                    .unwrap();
                (out.status.code(), out.stdout, out.stderr)
            };
            // More threads than the machine's cores included: the output
            // follows from the input alone.
            let one = run("1");
            for threads in ["2", "3", "8"] {
                let many = run(threads);
                assert!(
                    one == many,
                    "{} {args:?}: one thread and {threads} differ ({:?} / {:?})\n{}\n{}",
                    input.display(),
                    one.0,
                    many.0,
                    String::from_utf8_lossy(&one.2),
                    String::from_utf8_lossy(&many.2)
                );
            }
            compared += 1;
        }
    }
    let wanted = if corpus("paje").is_some() { 200 } else { 10 };
    assert!(compared >= wanted, "only {compared} runs compared");
}
