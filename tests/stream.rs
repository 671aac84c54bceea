//! The stream codec: round trips, header handling, and every bad-input class.

mod common;

use common::*;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

#[test]
fn tsv_passes_through_byte_for_byte() {
    let expected = std::fs::read(data("nasty.tsv")).unwrap();
    let out = bin("trace-cat").arg(data("nasty.tsv")).assert().success();
    assert_eq!(out.get_output().stdout, expected);
}

#[test]
fn tsv_json_tsv_round_trip_is_exact() {
    let expected = std::fs::read(data("nasty.tsv")).unwrap();
    let json = bin("trace-cat")
        .arg("--json")
        .arg(data("nasty.tsv"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // Every line is a JSON object with the same key names as the columns.
    for line in String::from_utf8(json.clone()).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v.get("kind").is_some(), "{line}");
    }
    let back = bin("trace-cat")
        .write_stdin(json.clone())
        .assert()
        .success();
    assert_eq!(back.get_output().stdout, expected);
    // And JSON -> JSON is stable too.
    let again = bin("trace-cat")
        .arg("--json")
        .write_stdin(json.clone())
        .assert()
        .success();
    assert_eq!(again.get_output().stdout, json);
}

#[test]
fn json_uses_the_documented_shape() {
    let input = stream(&[
        row(&[("kind", "container"), ("loc", "p"), ("cat", "process")]),
        row(&[
            ("kind", "counter"),
            ("time", "5"),
            ("loc", "p"),
            ("name", "x"),
            ("value", "2.5"),
            ("attrs", "mode=abs;unit=B%3Ds"),
        ]),
        row(&[
            ("kind", "event"),
            ("time", "6"),
            ("loc", "p"),
            ("value", "07"),
        ]),
    ]);
    let out = bin("trace-cat")
        .arg("--json")
        .write_stdin(input)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"kind":"meta","name":"format","value":"tracepipe-stream/1"}"#
    );
    assert_eq!(
        lines[2],
        r#"{"kind":"counter","time":5,"loc":"p","name":"x","value":2.5,"attrs":{"mode":"abs","unit":"B=s"}}"#
    );
    assert_eq!(
        lines[3],
        r#"{"kind":"event","time":6,"loc":"p","value":"07"}"#
    );
}

#[test]
fn unknown_columns_are_kept_and_passed_through() {
    let input = format!(
        "{HEADER}\tgpu_stream\nevent\t1\t\t\t\tx\t\t\t\t\t\t\t\t\t\ts7\nevent\t2\t\t\t\ty\t\t\t\t\t\t\t\t\t\t\n"
    );
    let out = bin("trace-cat").write_stdin(input).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("{HEADER}\tgpu_stream"));
    assert!(lines[2].ends_with("\ts7"), "{}", lines[2]);
    assert_eq!(lines[2].split('\t').count(), 16);
    // JSON keeps it as a key, and JSON -> JSON keeps it.
    let out = bin("trace-cat")
        .arg("--json")
        .write_stdin(format!(
            "{HEADER}\tgpu_stream\nevent\t1\t\t\t\tx\t\t\t\t\t\t\t\t\t\ts7\n"
        ))
        .assert()
        .success();
    let json = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(json.contains(r#""gpu_stream":"s7""#), "{json}");
}

#[test]
fn columns_are_found_by_name_in_any_order() {
    let input = "name\tkind\ttime\nx\tevent\t5\n";
    let out = bin("trace-cat").write_stdin(input).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let line = text.lines().nth(2).unwrap();
    assert_eq!(kind_of(line), "event");
    assert_eq!(col(line, "time"), "5");
    assert_eq!(col(line, "name"), "x");
}

#[test]
fn empty_input_is_an_empty_stream() {
    let out = bin("trace-cat").write_stdin("").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 2);
}

/// Runs trace-cat on `input` (as file `bad.tsv`) and expects failure naming `line`.
fn rejects(test: &str, input: &[u8], line: u64, what: &str) {
    let dir = scratch(test);
    let file = dir.join("bad.tsv");
    std::fs::write(&file, input).unwrap();
    bin("trace-cat")
        .arg(&file)
        .assert()
        .failure()
        .code(1)
        .stdout(predicate::str::is_empty().or(predicate::str::contains(what).not()))
        .stderr(predicate::str::contains(format!("bad.tsv:{line}: ")))
        .stderr(predicate::str::contains(what));
}

fn good_prefix() -> String {
    stream(&[row(&[("kind", "container"), ("loc", "p")])])
}

#[test]
fn rejects_wrong_column_count() {
    let input = format!("{}event\t1\n", good_prefix());
    rejects("colcount", input.as_bytes(), 4, "wrong column count");
    let input = format!(
        "{}{}\textra\n",
        good_prefix(),
        row(&[("kind", "event"), ("time", "1")])
    );
    rejects("colcount2", input.as_bytes(), 4, "wrong column count");
}

#[test]
fn rejects_bad_numbers() {
    for (col, value) in [
        ("time", "1.5"),
        ("end", "x"),
        ("depth", "-1"),
        ("tag", "01"),
        ("size", "1e3"),
    ] {
        let mut fields = vec![("kind", "state"), ("time", "1"), ("end", "2"), ("loc", "p")];
        fields.retain(|(c, _)| *c != col);
        fields.push((col, value));
        let input = format!("{}{}\n", good_prefix(), row(&fields));
        rejects(
            &format!("num-{col}"),
            input.as_bytes(),
            4,
            &format!("bad number in `{col}`"),
        );
    }
}

#[test]
fn rejects_unknown_kind() {
    let input = format!(
        "{}{}\n",
        good_prefix(),
        row(&[("kind", "frobnicate"), ("time", "1")])
    );
    rejects("kind", input.as_bytes(), 4, "unknown kind `frobnicate`");
}

#[test]
fn rejects_bad_escape() {
    let input = format!(
        "{}{}\n",
        good_prefix(),
        row(&[("kind", "event"), ("time", "1"), ("name", "a\\qb")])
    );
    rejects("escape", input.as_bytes(), 4, "bad escape");
}

#[test]
fn rejects_invalid_utf8() {
    let mut input = good_prefix().into_bytes();
    input.extend_from_slice(row(&[("kind", "event"), ("time", "1"), ("name", "X")]).as_bytes());
    let at = input.iter().rposition(|&b| b == b'X').unwrap();
    input[at] = 0xff;
    input.push(b'\n');
    rejects("utf8", &input, 4, "invalid UTF-8");
}

#[test]
fn rejects_rows_out_of_order() {
    let input = format!(
        "{}{}\n{}\n",
        good_prefix(),
        row(&[("kind", "event"), ("time", "10")]),
        row(&[("kind", "state"), ("time", "1"), ("end", "9"), ("loc", "p")])
    );
    rejects("order", input.as_bytes(), 5, "completion-time order");
}

#[test]
fn rejects_undeclared_location_and_missing_columns() {
    let input = format!(
        "{}{}\n",
        good_prefix(),
        row(&[("kind", "enter"), ("time", "1"), ("loc", "q")])
    );
    rejects(
        "undeclared",
        input.as_bytes(),
        4,
        "location `q` is used before",
    );
    let input = format!(
        "{}{}\n",
        good_prefix(),
        row(&[("kind", "state"), ("time", "1"), ("loc", "p")])
    );
    rejects("noend", input.as_bytes(), 4, "needs an `end`");
}

#[test]
fn rejects_bad_attrs_and_flags() {
    let input = format!(
        "{}{}\n",
        good_prefix(),
        row(&[("kind", "event"), ("time", "1"), ("attrs", "a=1;b")])
    );
    rejects("attrs", input.as_bytes(), 4, "bad `attrs` item");
    let input = format!(
        "{}{}\n",
        good_prefix(),
        row(&[("kind", "event"), ("time", "1"), ("flags", "s")])
    );
    rejects("flags", input.as_bytes(), 4, "bad flag");
}

#[test]
fn rejects_meta_after_data_and_foreign_versions() {
    let input = format!(
        "{}{}\n",
        good_prefix(),
        row(&[("kind", "meta"), ("name", "late")])
    );
    rejects("latemeta", input.as_bytes(), 4, "meta rows come first");
    let input = format!(
        "{HEADER}\n{}\n",
        row(&[
            ("kind", "meta"),
            ("name", "format"),
            ("value", "tracepipe-stream/2")
        ])
    );
    rejects("version", input.as_bytes(), 2, "unsupported stream format");
}

#[test]
fn rejects_truncated_input_and_bad_header() {
    // Cut in the middle of a row: too few columns, and no newline.
    let input = format!("{}event\t1\t", good_prefix());
    rejects("truncated", input.as_bytes(), 4, "truncated line");
    let dir = scratch("header");
    let file = dir.join("bad.tsv");
    std::fs::write(&file, "time\tname\n1\tx\n").unwrap();
    bin("trace-cat")
        .arg(&file)
        .arg("-f")
        .arg("tsv")
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "bad.tsv:1: expected a stream header",
        ));
}

#[test]
fn rejects_bad_json_lines() {
    let dir = scratch("json");
    let file = dir.join("bad.jsonl");
    let cases = [
        (r#"{"kind":"event","time":"soon"}"#, "invalid type"),
        (
            r#"{"kind":"event","time":1,"attrs":{"a":[1]}}"#,
            "not an object or array",
        ),
        (r#"{"kind":"nope","time":1}"#, "unknown kind `nope`"),
        (r#"{"kind":"event","time":1"#, "EOF"),
        (r#"{"time":1}"#, "missing `kind`"),
    ];
    for (line, what) in cases {
        std::fs::write(
            &file,
            format!("{{\"kind\":\"meta\",\"name\":\"x\"}}\n\n{line}\n"),
        )
        .unwrap();
        bin("trace-cat")
            .arg(&file)
            .assert()
            .failure()
            .stdout(predicate::str::contains("\"x\"").not())
            .stderr(predicate::str::contains("bad.jsonl:3: "))
            .stderr(predicate::str::contains(what));
    }
}

#[test]
fn nothing_is_written_as_if_valid_after_an_error() {
    // The bad row is the last one; rows before it may be written, but never a row
    // after it, and never the bad one.
    let input = format!(
        "{}{}\n{}\n{}\n",
        good_prefix(),
        row(&[("kind", "event"), ("time", "1"), ("name", "good")]),
        row(&[("kind", "event"), ("time", "x"), ("name", "bad")]),
        row(&[("kind", "event"), ("time", "3"), ("name", "after")])
    );
    let out = bin("trace-cat")
        .write_stdin(input)
        .assert()
        .failure()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!text.contains("bad") && !text.contains("after"), "{text}");
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("<stdin>:5: "));
}

/// Rows a TSV writer copies from its input as they were read (the standard
/// columns, a row passed on unchanged) are the rows it would have encoded:
/// each command's TSV output is the same from a TSV input (copied rows)
/// as from the same stream in JSON Lines (every row encoded), with CRLF
/// line ends, escapes, one thread or two, a filter that adds container rows,
/// the matcher, and inputs merged on shifted clocks.
#[test]
fn copied_rows_are_the_rows_encoded_again() {
    let dir = scratch("copied_rows");
    let tsv = std::fs::read_to_string(data("nasty.tsv")).unwrap();
    let crlf = dir.join("crlf.tsv");
    std::fs::write(&crlf, tsv.replace('\n', "\r\n")).unwrap();
    let ping = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/pingpong.tsv");
    // Two inputs on clocks 1000 ns apart: the second one's rows move.
    let with_origin = |name: &str, origin: &str| {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&ping).unwrap().replace(
            "meta\t\t\t\t\ttime_unit",
            &format!("meta\t\t\t\t\torigin\t\t\t\t\t\t\t{origin}\t\t\nmeta\t\t\t\t\ttime_unit"),
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let (first, shifted) = (
        with_origin("first.tsv", "0"),
        with_origin("shifted.tsv", "1000"),
    );
    let as_json = |input: &Path| {
        let out = dir.join(format!(
            "{}.jsonl",
            input.file_name().unwrap().to_string_lossy()
        ));
        bin("trace-cat")
            .args(["--json", "-o"])
            .arg(&out)
            .arg(input)
            .assert()
            .success();
        out
    };
    let run = |cmd: &str, args: &[&str], inputs: &[PathBuf]| -> String {
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        output_of(cmd, args, &inputs)
    };
    let cases: [(&str, &[&str], Vec<PathBuf>); 5] = [
        ("trace-cat", &[], vec![crlf.clone()]),
        (
            "trace-filter",
            &["-k", "send,leave"],
            vec![data("nasty.tsv")],
        ),
        ("trace-filter", &["-l", "rank1"], vec![ping.clone()]),
        ("trace-match", &[], vec![ping.clone()]),
        ("trace-cat", &[], vec![first.clone(), shifted.clone()]),
    ];
    for (cmd, args, inputs) in cases {
        let json: Vec<PathBuf> = inputs.iter().map(|i| as_json(i)).collect();
        for threads in ["1", "2"] {
            let args: Vec<&str> = args.iter().copied().chain(["--threads", threads]).collect();
            let copied = run(cmd, &args, &inputs);
            let encoded = run(cmd, &args, &json);
            assert_eq!(copied, encoded, "{cmd} {args:?} {inputs:?}");
        }
    }
}

/// A stream of `rows` rows over several reader chunks: events, states and
/// enters on two locations, with escapes, attributes and non-ASCII names,
/// and one row of 600 KB (longer than a chunk).
fn long_stream(rows: usize) -> Vec<String> {
    let mut out = vec![
        row(&[("kind", "container"), ("loc", "p")]),
        row(&[("kind", "container"), ("loc", "q")]),
    ];
    let long = "x".repeat(600_000);
    for i in 0..rows {
        let (time, loc) = (i.to_string(), if i % 3 == 0 { "p" } else { "q" });
        let name = format!("f{}é\\t{}", i % 7, i % 1000);
        let attrs = format!("n={i}");
        let line = match i % 4 {
            0 => row(&[
                ("kind", "event"),
                ("time", &time),
                ("loc", loc),
                ("name", &name),
            ]),
            1 => row(&[
                ("kind", "enter"),
                ("time", &time),
                ("loc", loc),
                ("name", &name),
            ]),
            2 => row(&[
                ("kind", "signal"),
                ("time", &time),
                ("end", &time),
                ("loc", loc),
                ("name", &name),
                ("attrs", &attrs),
            ]),
            _ => row(&[
                ("kind", "state"),
                ("time", &time),
                ("end", &time),
                ("loc", loc),
            ]),
        };
        out.push(line);
        if i == rows / 3 {
            let attrs = format!("long={long}");
            out.push(row(&[
                ("kind", "event"),
                ("time", &time),
                ("attrs", &attrs),
            ]));
        }
    }
    out
}

/// The TSV reader on helper threads (`--threads 2`, 3, 8) behaves as on one
/// thread, on inputs of many chunks: the same output, warnings, errors
/// (naming the same line) and exit status, for a good stream, one with LF
/// or CRLF ends, one whose last line has no newline, and ones with a bad
/// row or a row out of order in the middle, through cat and filter.
#[test]
fn any_number_of_threads_reads_a_stream_as_one_does() {
    let dir = scratch("threads");
    let rows = long_stream(120_000);
    let good = stream(&rows);
    let mut bad_row = rows.clone();
    bad_row[70_000] = row(&[("kind", "event"), ("time", "x1"), ("loc", "p")]);
    let mut disordered = rows.clone();
    disordered[90_000] = row(&[("kind", "event"), ("time", "5"), ("loc", "p")]);
    let cases = [
        ("good.tsv", good.clone(), None),
        ("crlf.tsv", good.replace('\n', "\r\n"), None),
        (
            "cut.tsv",
            good.strip_suffix('\n').unwrap().to_string(),
            None,
        ),
        ("bad.tsv", stream(&bad_row), Some(70_003)),
        ("order.tsv", stream(&disordered), Some(90_003)),
    ];
    for (name, text, bad_line) in cases {
        let file = dir.join(name);
        std::fs::write(&file, &text).unwrap();
        for (cmd, args) in [
            ("trace-cat", vec![]),
            ("trace-cat", vec!["--json"]),
            ("trace-filter", vec!["-k", "event,state"]),
            ("trace-filter", vec!["-l", "q", "-n", "f3*"]),
        ] {
            let runs: Vec<_> = ["1", "2", "3", "8"]
                .map(|threads| {
                    let out = bin(cmd)
                        .args(&args)
                        .args(["--threads", threads])
                        .arg(&file)
                        .output()
                        .unwrap();
                    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                    (out.status.code(), stderr, out.stdout)
                })
                .into();
            let (code, stderr, stdout) = &runs[0];
            for (threads, many) in ["2", "3", "8"].iter().zip(&runs[1..]) {
                let at = format!("{cmd} {args:?} {name}, {threads} threads");
                assert_eq!(many.0, *code, "{at}");
                assert_eq!(many.1, *stderr, "{at}");
                assert!(many.2 == *stdout, "{at}: outputs differ");
            }
            match bad_line {
                Some(line) => {
                    assert_eq!(*code, Some(1), "{name}");
                    assert!(stderr.contains(&format!("{name}:{line}: ")), "{stderr}");
                }
                None => {
                    assert_eq!(*code, Some(0), "{cmd} {name}: {stderr}");
                    assert!(stdout.len() > 1_000_000 || cmd == "trace-filter");
                }
            }
            assert_eq!(
                stderr.contains("no final newline"),
                name == "cut.tsv",
                "{stderr}"
            );
        }
    }
}

/// A message half that nothing could match with its partner (no `tag`, no
/// `id`; a tagged one without `peer`) is refused where it is read, so no
/// later stage or writer meets it: the rule lives in one place.
#[test]
fn rejects_halves_nothing_can_match() {
    let half = |fields: &[(&str, &str)]| {
        let mut all = vec![("time", "1"), ("loc", "p")];
        all.extend_from_slice(fields);
        format!("{}{}\n", good_prefix(), row(&all))
    };
    let input = half(&[("kind", "send")]);
    rejects(
        "half-no-key",
        input.as_bytes(),
        4,
        "a message half needs a `tag`",
    );
    let input = half(&[("kind", "recv"), ("tag", "3")]);
    rejects(
        "half-no-peer",
        input.as_bytes(),
        4,
        "a tagged `recv` needs its actual sender",
    );
    // Through JSON Lines too.
    let dir = scratch("half-jsonl");
    let file = dir.join("bad.jsonl");
    let jsonl = "{\"kind\":\"meta\",\"name\":\"format\",\"value\":\"tracepipe-stream/1\"}\n\
                 {\"kind\":\"container\",\"loc\":\"p\"}\n\
                 {\"kind\":\"send\",\"time\":1,\"loc\":\"p\"}\n";
    std::fs::write(&file, jsonl).unwrap();
    bin("trace-cat")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.jsonl:3: a message half needs a `tag`",
        ));
}

/// A stream whose frames do not nest: f left while g (entered after it) is
/// open, then g, then a leave of h with none open; its leave of f carries
/// an attribute.
fn crossing_stream() -> String {
    let frame = |kind: &str, time: &str, cat: &str, name: &str, attrs: &str| {
        row(&[
            ("kind", kind),
            ("time", time),
            ("loc", "t0"),
            ("cat", cat),
            ("name", name),
            ("attrs", attrs),
        ])
    };
    stream(&[
        row(&[("kind", "container"), ("loc", "t0"), ("cat", "thread")]),
        frame("enter", "10", "U", "f", ""),
        frame("enter", "20", "V", "g", ""),
        frame("leave", "30", "U", "f", "k=1"),
        frame("leave", "40", "V", "g", ""),
        frame("leave", "50", "", "h", ""),
    ])
}

/// The stream readers keep frames that do not nest as every reader does,
/// for every consumer that reads frames.
#[test]
fn frames_that_do_not_nest_are_kept_by_the_stream_readers() {
    let tsv = crossing_stream();
    let json = [
        r#"{"kind":"container","loc":"t0","cat":"thread"}"#,
        r#"{"kind":"enter","time":10,"loc":"t0","cat":"U","name":"f"}"#,
        r#"{"kind":"enter","time":20,"loc":"t0","cat":"V","name":"g"}"#,
        r#"{"kind":"leave","time":30,"loc":"t0","cat":"U","name":"f","attrs":{"k":"1"}}"#,
        r#"{"kind":"leave","time":40,"loc":"t0","cat":"V","name":"g"}"#,
        r#"{"kind":"leave","time":50,"loc":"t0","name":"h"}"#,
    ]
    .join("\n")
        + "\n";
    let want = [
        "enter\t10\t\tt0\tU\tf\t\t\t\t\t\t\t\t\t",
        "enter\t20\t\tt0\tV\tg\t\t\t\t\t\t\t\t\t",
        "leave\t30\t\tt0\tV\tg\t1\t\t\t\t\t\t\tSX\tcrossed=f",
        "leave\t30\t\tt0\tU\tf\t0\t\t\t\t\t\t\t\tk=1",
        "enter\t30\t\tt0\tV\tg\t0\t\t\t\t\t\t\tSX\tcrossed=f",
        "leave\t40\t\tt0\tV\tg\t\t\t\t\t\t\t\t\t",
        "event\t50\t\tt0\t\th\t\t\t\t\t\t\t\t\trecord=leave",
    ];
    for (format, input, line) in [("tsv", tsv, 6), ("jsonl", json, 4)] {
        for threads in ["1", "2"] {
            // Converted, the rows are what the rule makes of them; read
            // back, they nest and pass as they are.
            let out = bin("trace-cat")
                .args(["-t", "jsonl", "-f", format, "--threads", threads])
                .write_stdin(input.clone())
                .assert()
                .success()
                .stderr(predicate::str::contains(format!(
                    "<stdin>:{line}: frames that do not nest: 1 leave(s) closed a frame that was not the innermost",
                )))
                .stderr(predicate::str::contains("1 leave(s) named no open frame"));
            let out = bin("trace-cat")
                .args(["-f", "jsonl"])
                .write_stdin(out.get_output().stdout.clone())
                .assert()
                .success()
                .stderr(predicate::str::is_empty());
            let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
            let rows: Vec<&str> = text
                .lines()
                .filter(|l| {
                    ["enter\t", "leave\t", "event\t"]
                        .iter()
                        .any(|k| l.starts_with(k))
                })
                .collect();
            assert_eq!(rows, want, "{format}, --threads {threads}");
            // What the reports see nests: g is one call from 20 to 40.
            let out = bin("trace-stat")
                .args(["profile", "-q", "--csv", "--no-header", "-f", format])
                .args(["--threads", threads])
                .write_stdin(input.clone())
                .assert()
                .success();
            let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
            let mut lines: Vec<String> = text
                .lines()
                .map(|l| l.split(',').take(4).collect::<Vec<_>>().join(","))
                .collect();
            lines.sort();
            assert_eq!(lines, ["f,1,20,10", "g,1,20,20"], "{format}: {text}");
            bin("trace-cat")
                .args(["--strict", "-f", format, "--threads", threads])
                .write_stdin(input.clone())
                .assert()
                .failure()
                .stderr(predicate::str::contains(format!(
                    "<stdin>:{line}: leave of `f` while `g` is open (a frame that does not nest; --strict)",
                )));
        }
    }
    // Copied to TSV, a stream's lines pass as they are, filtered too:
    // whoever reads its frames next follows them.
    bin("trace-cat")
        .write_stdin(crossing_stream())
        .assert()
        .success()
        .stdout(crossing_stream())
        .stderr(predicate::str::is_empty());
    bin("trace-filter")
        .args(["-k", "container,enter,leave", "-n", "f|g|h"])
        .write_stdin(crossing_stream())
        .assert()
        .success()
        .stdout(crossing_stream())
        .stderr(predicate::str::is_empty());
    // A consumer that reads no frames is not told about them.
    bin("trace-filter")
        .args(["-k", "container"])
        .write_stdin(crossing_stream())
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}
