//! TRACE (.etf): reading, validation, writing and round trips.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use predicates::prelude::*;
use serde_json::Value;

const UNITS: [(&str, f64); 6] = [
    ("NANOSECONDS", 1.0),
    ("MICROSECONDS", 1e3),
    ("MILLISECONDS", 1e6),
    ("SECONDS", 1e9),
    ("MINUTES", 60e9),
    ("HOURS", 3600e9),
];

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// A scalar as text (numbers are written unquoted in JSON Lines).
fn text(v: &Value, k: &str) -> String {
    match v.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

fn num(v: &Value, k: &str) -> f64 {
    match v.get(k) {
        Some(Value::Number(n)) => n.as_f64().unwrap(),
        Some(Value::String(s)) => s.parse().unwrap(),
        _ => panic!("no number `{k}` in {v}"),
    }
}

/// Attributes of a row without the format fields (`trace.` keys).
fn user_attrs(v: &Value) -> BTreeMap<String, String> {
    v.get("attrs")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !k.starts_with("trace."))
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

fn expected_attrs(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Checks the stream of a valid file against its expectation file.
fn check_valid(file: &Path, expected: &Value) {
    let rows = json_rows(file);
    let meta = |name: &str| {
        rows.iter()
            .find(|r| s(r, "kind") == "meta" && s(r, "name") == name)
            .map(|r| text(r, "value"))
    };
    let unit_name = expected["time_unit"].as_str().unwrap();
    let factor = UNITS.iter().find(|u| u.0 == unit_name).unwrap().1;
    let abbr =
        ["ns", "us", "ms", "s", "min", "h"][UNITS.iter().position(|u| u.0 == unit_name).unwrap()];
    assert_eq!(meta("time_unit").as_deref(), Some(abbr), "{file:?}");
    let offset_ms = expected["offset_ms"].as_i64().unwrap();
    let origin: i128 = meta("origin").map(|o| o.parse().unwrap()).unwrap_or(0);
    assert_eq!(origin, i128::from(offset_ms) * 1_000_000, "{file:?}");
    let trace_attrs: BTreeMap<String, String> = rows
        .iter()
        .filter(|r| s(r, "kind") == "meta")
        .filter_map(|r| {
            s(r, "name")
                .strip_prefix("trace.attr.")
                .map(|k| (k.to_string(), text(r, "value")))
        })
        .collect();
    assert_eq!(
        trace_attrs,
        expected_attrs(&expected["trace_attributes"]),
        "{file:?}"
    );

    let of_kind = |k: &'static str| rows.iter().filter(move |r| s(r, "kind") == k);
    let t = |r: &Value, k: &str| r[k].as_i64().unwrap() as f64 / factor;
    let counts = &expected["counts"];
    let resources: Vec<&Value> = of_kind("container")
        .filter(|r| s(r, "cat") == "resource")
        .collect();
    let signals: Vec<&Value> = of_kind("container")
        .filter(|r| s(r, "cat") == "signal")
        .collect();
    assert_eq!(
        of_kind("event").count() as u64,
        counts["events"].as_u64().unwrap()
    );
    assert_eq!(
        resources.len() as u64,
        counts["resources"].as_u64().unwrap()
    );
    assert_eq!(
        of_kind("claim").count() as u64,
        counts["claims"].as_u64().unwrap()
    );
    assert_eq!(
        of_kind("dep").count() as u64,
        counts["dependencies"].as_u64().unwrap()
    );
    assert_eq!(signals.len() as u64, counts["signals"].as_u64().unwrap());
    assert_eq!(
        of_kind("signal").count() as u64,
        counts["signal_fragments"].as_u64().unwrap()
    );

    for (id, want) in expected["resources"].as_object().unwrap() {
        let r = resources
            .iter()
            .find(|r| s(r, "loc") == format!("R{id}"))
            .expect("resource");
        assert!(close(num(r, "value"), want["capacity"].as_f64().unwrap()));
        let uses = r["attrs"].get("trace.uses_offset").is_some();
        assert_eq!(uses, want["uses_offset"].as_bool().unwrap());
        assert_eq!(
            user_attrs(r),
            expected_attrs(&want["attributes"]),
            "resource {id}"
        );
    }
    for (id, want) in expected["events"].as_object().unwrap() {
        let e = of_kind("event").find(|e| s(e, "id") == id).expect("event");
        assert!(
            close(t(e, "time"), want["t"].as_f64().unwrap()),
            "event {id}"
        );
        assert_eq!(
            user_attrs(e),
            expected_attrs(&want["attributes"]),
            "event {id}"
        );
    }
    for (id, want) in expected["claims"].as_object().unwrap() {
        let c = of_kind("claim").find(|c| s(c, "id") == id).expect("claim");
        assert!(
            close(t(c, "time"), want["t0"].as_f64().unwrap()),
            "claim {id}"
        );
        assert!(
            close(t(c, "end"), want["t1"].as_f64().unwrap()),
            "claim {id}"
        );
        assert_eq!(s(c, "loc"), format!("R{}", want["resource"]));
        assert!(close(num(c, "value"), want["amount"].as_f64().unwrap()));
        let offset = c["attrs"]
            .get("trace.offset")
            .map(|o| o.as_str().unwrap().parse::<f64>().unwrap());
        assert_eq!(offset, want["offset"].as_f64(), "claim {id}");
        assert_eq!(
            user_attrs(c),
            expected_attrs(&want["attributes"]),
            "claim {id}"
        );
    }
    for (id, want) in expected["dependencies"].as_object().unwrap() {
        let d = of_kind("dep")
            .find(|d| s(d, "id") == id)
            .expect("dependency");
        assert_eq!(s(d, "cat"), want["type"].to_string(), "dep {id}");
        assert_eq!(
            d["attrs"]["trace.src"].as_str().unwrap(),
            want["src"].to_string()
        );
        assert_eq!(
            d["attrs"]["trace.dst"].as_str().unwrap(),
            want["dst"].to_string()
        );
        assert_eq!(
            user_attrs(d),
            expected_attrs(&want["attributes"]),
            "dep {id}"
        );
    }
    for (id, want) in expected["signals"].as_object().unwrap() {
        let loc = format!("S{id}");
        let sig = signals.iter().find(|r| s(r, "loc") == loc).expect("signal");
        assert_eq!(user_attrs(sig), expected_attrs(&want["attributes"]));
        let fragments: Vec<&Value> = of_kind("signal").filter(|f| s(f, "loc") == loc).collect();
        let list = want["fragment_list"].as_array().unwrap();
        assert_eq!(fragments.len(), list.len());
        for (f, w) in fragments.iter().zip(list) {
            assert!(close(t(f, "time"), w["t0"].as_f64().unwrap()));
            assert!(close(t(f, "end"), w["t1"].as_f64().unwrap()));
            for c in ["c", "b", "a"] {
                let got: f64 = f["attrs"][c].as_str().unwrap().parse().unwrap();
                assert!(close(got, w[c].as_f64().unwrap()), "{loc} {c}");
            }
        }
    }
}

/// Violation names of the corpus and the words our message uses for them.
const VIOLATIONS: &[(&str, &str)] = &[
    ("unknown-resource", "unknown resource"),
    ("dependency-type-out-of-range", "bad dependency type"),
    ("dependency-unknown-endpoint", "is an unknown event"),
    ("duplicate-claim-id", "duplicate claim id"),
    ("duplicate-offset", "duplicate offset"),
    ("duplicate-resource-id", "duplicate resource id"),
    ("duplicate-signal-id", "duplicate signal id"),
    ("duplicate-time-unit", "duplicate time unit"),
    ("unknown-signal", "unknown signal"),
    ("nonpositive-amount", "amount must be positive"),
    ("nonpositive-capacity", "capacity must be positive"),
    ("offset-not-integer", "is not an integer"),
    ("claim-offset-missing", "claim offset missing"),
    ("claim-offset-unexpected", "unexpected claim offset"),
    ("signal-fragments-not-consecutive", "not consecutive"),
    ("signal-without-fragment", "has no fragment"),
    ("unknown-time-unit", "unknown time unit"),
];

#[test]
fn corpus_matches_expectations() {
    let Some(dir) = corpus("trace") else {
        eprintln!("../shared/corpus absent: corpus test skipped");
        return;
    };
    let scratch = scratch("trace-corpus");
    let mut valid = 0;
    let mut invalid = 0;
    for entry in std::fs::read_dir(dir.join("expected")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        if expected["valid"].as_bool().unwrap() {
            let file = dir.join("synthetic/valid").join(format!("{stem}.etf"));
            check_valid(&file, &expected);
            check_round_trip("trace", &file, &scratch);
            valid += 1;
        } else {
            let file = dir.join("synthetic/invalid").join(format!("{stem}.etf"));
            let violation = expected["violation"].as_str().unwrap();
            let words = VIOLATIONS
                .iter()
                .find(|v| v.0 == violation)
                .unwrap_or_else(|| panic!("no words for violation {violation}"))
                .1;
            let line = expected["line"].as_u64().unwrap();
            bin("trace-cat")
                .arg(&file)
                .assert()
                .code(1)
                .stdout(predicate::str::is_empty())
                .stderr(predicate::str::contains(format!("{stem}.etf:{line}: ")))
                .stderr(predicate::str::contains(words));
            invalid += 1;
        }
    }
    assert!(
        valid >= 8 && invalid >= 18,
        "{valid} valid, {invalid} invalid"
    );
}

/// Writes `text` as `name.etf` in a scratch dir and returns the path.
fn fixture(test: &str, text: &str) -> PathBuf {
    let dir = scratch(test);
    let file = dir.join("t.etf");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn own_fixtures_cover_every_rule() {
    let base = "R 0 1 false ; name = cpu\nR 1 8 true ; name = mem\nC 0 0 1 0 1 ; task = a\nE 0 0.5 ; name = go\nS 0 ; name = s\nF 0 0 1 1 0 0\n";
    let cases: &[(&str, &str, u64, &str)] = &[
        (
            "tu-twice",
            "TU SECONDS\nTU SECONDS\n",
            2,
            "duplicate time unit",
        ),
        ("tu-unknown", "TU DAYS\n", 1, "unknown time unit `DAYS`"),
        ("o-twice", "O 1\nO 2\n", 2, "duplicate offset"),
        ("o-fraction", "O 1.5\n", 1, "is not an integer"),
        ("e-dup", "E 0 1 ;\n", 7, "duplicate event id 0"),
        ("r-dup", "R 0 2 false ;\n", 7, "duplicate resource id 0"),
        (
            "r-capacity",
            "R 5 -1 false ;\n",
            7,
            "capacity must be positive",
        ),
        ("r-bool", "R 5 1 yes ;\n", 7, "expected true or false"),
        ("r-id", "R x 1 false ;\n", 7, "expected a natural number"),
        ("c-dup", "C 0 1 2 0 1 ;\n", 7, "duplicate claim id 0"),
        ("c-resource", "C 5 1 2 9 1 ;\n", 7, "unknown resource 9"),
        (
            "c-offset-missing",
            "C 5 1 2 1 4 ;\n",
            7,
            "claim offset missing",
        ),
        (
            "c-offset-extra",
            "C 5 1 2 0 0 1 ;\n",
            7,
            "unexpected claim offset",
        ),
        ("c-amount", "C 5 1 2 0 0 ;\n", 7, "amount must be positive"),
        ("c-backwards", "C 5 2 1 0 1 ;\n", 7, "ends before it starts"),
        ("c-fields", "C 5 1 2 ;\n", 7, "expected `C <claim id>"),
        (
            "c-number",
            "C 5 1 x 0 1 ;\n",
            7,
            "bad number for the claim end: `x`",
        ),
        ("c-nan", "C 5 1 NaN 0 1 ;\n", 7, "bad number"),
        ("d-type", "D 0 9 0 0 ;\n", 7, "bad dependency type `9`"),
        (
            "d-endpoint-kind",
            "D 0 4 0 7 ;\n",
            7,
            "destination is an unknown event `7`",
        ),
        (
            "d-endpoint-claim",
            "D 0 0 3 0 ;\n",
            7,
            "source is an unknown claim `3`",
        ),
        (
            "d-dup",
            "D 0 4 0 0 ;\nD 0 4 0 0 ;\n",
            8,
            "duplicate dependency id 0",
        ),
        ("s-dup", "S 0 ;\n", 7, "duplicate signal id 0"),
        ("s-empty", "S 1 ; name = idle\n", 7, "has no fragment"),
        ("f-unknown", "F 4 1 2 0 0 0\n", 7, "unknown signal 4"),
        ("f-gap", "F 0 1.5 2 0 0 0\n", 7, "not consecutive: a gap"),
        (
            "f-overlap",
            "F 0 0.5 2 0 0 0\n",
            7,
            "not consecutive: an overlap",
        ),
        ("f-empty", "F 0 1 1 0 0 0\n", 7, "empty fragment domain"),
        (
            "f-attrs",
            "F 0 1 2 0 0 0 ; k = v\n",
            7,
            "take no attributes",
        ),
        ("attr-no-eq", "E 9 1 ; novalue\n", 7, "has no `=`"),
        ("attr-empty-key", "E 9 1 ; = v\n", 7, "empty key"),
        ("unknown-kind", "X 1 2\n", 7, "unknown line kind `X`"),
        (
            "time-series",
            "TS 0 ; name = temp\n",
            7,
            "unsupported line kind `TS`",
        ),
        (
            "time-series-p",
            "TSP 0 1 2\n",
            7,
            "unsupported line kind `TSP`",
        ),
    ];
    for (name, extra, line, words) in cases {
        let text = if name.starts_with("tu") || name.starts_with("o-") {
            format!("{extra}{base}")
        } else {
            format!("{base}{extra}")
        };
        let file = fixture(name, &text);
        bin("trace-cat")
            .arg(&file)
            .assert()
            .code(1)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(format!("t.etf:{line}: ")))
            .stderr(predicate::str::contains(*words));
    }
    // The base itself is valid.
    bin("trace-cat")
        .arg(fixture("base", base))
        .assert()
        .success();
}

#[test]
fn terse_syntax_forward_references_and_line_endings() {
    // `;` glued or missing, forward references (D before its claims, F before S,
    // C before R), CRLF line ends, a BOM, comments and blank lines.
    let text = "\u{feff}# comment\r\nD 0 2 0 1;kind=data\r\nC 0 0 1 0 1;\r\nC 1 1 2.5 0 1\r\n\r\n  F 0 0 1 2 0 0\r\nS 0\r\nR 0 1 FALSE;\r\nTU MILLISECONDS\r\n";
    let file = fixture("terse", text);
    let out = bin("trace-cat").arg(&file).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines = body(&text);
    let dep = lines.iter().find(|l| kind_of(l) == "dep").unwrap();
    // Claim 0 ends at 1 ms, claim 1 starts at 1 ms (type 2: end -> start).
    assert_eq!((col(dep, "time"), col(dep, "end")), ("1000000", "1000000"));
    assert_eq!(col(dep, "attrs"), "trace.src=0;trace.dst=1;kind=data");
    let claim = lines
        .iter()
        .find(|l| kind_of(l) == "claim" && col(l, "id") == "1")
        .unwrap();
    assert_eq!(
        (col(claim, "time"), col(claim, "end")),
        ("1000000", "2500000")
    );
}

#[test]
fn rows_are_time_ordered_with_unit_and_offset_in_meta() {
    let text = "TU MICROSECONDS\nO 1500\nT run = 3\nR 0 2 false ; name = cpu\nC 0 5 9 0 1 ;\nE 0 7 ; name = late\nE 1 2 ; name = early\n";
    let out = bin("trace-cat")
        .arg(fixture("order", text))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines = body(&text);
    let metas: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| kind_of(l) == "meta")
        .map(|l| (col(l, "name"), col(l, "value")))
        .collect();
    assert!(metas.contains(&("time_unit", "us")));
    assert!(metas.contains(&("origin", "1500000000")));
    assert!(metas.contains(&("trace.attr.run", "3")));
    assert!(metas.contains(&("source_format", "trace")));
    let timed: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| !col(l, "time").is_empty())
        .map(|l| (kind_of(l), col(l, "time")))
        .collect();
    assert_eq!(
        timed,
        vec![("event", "2000"), ("event", "7000"), ("claim", "5000")]
    );
    let container = lines.iter().find(|l| kind_of(l) == "container").unwrap();
    assert_eq!(
        (
            col(container, "loc"),
            col(container, "cat"),
            col(container, "name"),
            col(container, "value")
        ),
        ("R0", "resource", "cpu", "2")
    );
}

#[test]
fn lenient_mode_skips_bad_lines_with_warnings() {
    let text = "R 0 1 false ;\nC 0 0 1 0 1 ;\nC 0 1 2 0 1 ;\nC 1 1 2 7 1 ;\nD 0 0 1 0 ;\nTU WEEKS\nE 0 1 ;\n";
    let file = fixture("lenient", text);
    let out = bin("trace-cat")
        .arg("--lenient")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains("t.etf:3: duplicate claim id 0"))
        .stderr(predicate::str::contains("t.etf:6: unknown time unit"))
        .stderr(predicate::str::contains(
            "t.etf:4: claim on unknown resource 7",
        ))
        .stderr(predicate::str::contains(
            "t.etf:5: dependency dropped with the claim",
        ))
        .stderr(predicate::str::contains("3 problem(s) skipped"));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let kinds: Vec<String> = body(&text).iter().map(|l| kind_of(l).to_string()).collect();
    assert_eq!(kinds.iter().filter(|k| *k == "claim").count(), 1);
    assert_eq!(kinds.iter().filter(|k| *k == "event").count(), 1);
    assert_eq!(kinds.iter().filter(|k| *k == "dep").count(), 0);
    // Strict mode stops at the first.
    bin("trace-cat")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("t.etf:3: "));
}

#[test]
fn truncated_and_non_utf8_files_fail() {
    let file = fixture("cut", "R 0 1 false ;\nC 0 0 1 0");
    bin("trace-cat")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("t.etf:2: truncated line"));
    let dir = scratch("latin1");
    let file = dir.join("t.etf");
    std::fs::write(&file, b"R 0 1 false ; name = caf\xe9\n").unwrap();
    bin("trace-cat")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("t.etf:1: invalid UTF-8"));
}

#[test]
fn own_fixture_round_trips() {
    let dir = scratch("trace-rt");
    check_round_trip("trace", &data("trace/all-kinds.etf"), &dir);
}

#[test]
fn other_streams_map_onto_a_valid_trace() {
    let dir = scratch("trace-write");
    let etf = dir.join("pingpong.etf");
    bin("trace-cat")
        .args(["-t", "trace", "-o"])
        .arg(&etf)
        .arg(data("../../examples/pingpong.tsv"))
        .assert()
        .success();
    let text = std::fs::read_to_string(&etf).unwrap();
    assert!(text.starts_with("TU NANOSECONDS\n"), "{text}");
    // Frames became claims on their rank's resource, halves became events, the
    // counter a signal; the file reads back.
    assert_eq!(text.lines().filter(|l| l.starts_with("C ")).count(), 11);
    assert_eq!(text.lines().filter(|l| l.starts_with("E ")).count(), 7);
    assert_eq!(text.lines().filter(|l| l.starts_with("F ")).count(), 3);
    assert!(text
        .contains("C 0 1000 1400 1 1 ; name = MPI_Send, kind = state, category = MPI, depth = 1"));
    assert!(text
        .contains("R 1 1 false ; name = MPI rank 0, loc = rank0, type = process, parent = node0"));
    let rows = json_rows(&etf);
    assert_eq!(rows.iter().filter(|r| s(r, "kind") == "claim").count(), 11);
    // A matched message becomes two events and a type-4 dependency.
    let msg = format!(
        "{HEADER}\n{}\n{}\n{}\n",
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[("kind", "container"), ("loc", "b")]),
        row(&[
            ("kind", "msg"),
            ("time", "5"),
            ("end", "9"),
            ("loc", "a"),
            ("peer", "b"),
            ("tag", "3"),
            ("size", "8")
        ])
    );
    let out = bin("trace-cat")
        .args(["-t", "trace"])
        .write_stdin(msg)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("E 0 5 ; kind = msg, end = source, loc = a, peer = b, tag = 3, size = 8"),
        "{text}"
    );
    assert!(
        text.contains(
            "E 1 9 ; kind = msg, end = destination, loc = b, peer = a, tag = 3, size = 8"
        ),
        "{text}"
    );
    assert!(text.contains("D 0 4 0 1 ; kind = msg"), "{text}");
}

/// Ids that are not numbers are indexed by the element that holds their
/// text, not copied: 1 000 000 `E eN T` lines (12 MB) read in 112 MiB of
/// address space, where a string per id took 12.5 times the text.
#[test]
fn event_ids_that_are_not_numbers_are_not_copied() {
    const EVENTS: usize = 1_000_000;
    let dir = scratch("trace-named-ids");
    let mut text = String::from("TU NANOSECONDS\n");
    for i in 0..EVENTS {
        text.push_str(&format!("E e{i} {}\n", i % 10));
    }
    // One id given twice is still found, with its first line.
    text.push_str("E e999 3\n");
    let file = dir.join("named.etf");
    std::fs::write(&file, text).unwrap();
    let err = run_in_memory("trace-cat", 112, &[file.as_os_str()]).unwrap_err();
    let want = format!(
        "named.etf:{}: duplicate event id e999 (first defined on line 1001)",
        EVENTS + 2
    );
    assert!(err.contains(&want), "{err}");
    text_without_the_duplicate(&file);
    let out = run_in_memory("trace-cat", 112, &[file.as_os_str()]).expect("read in 112 MiB");
    assert_eq!(
        out.lines().filter(|l| kind_of(l) == "event").count(),
        EVENTS
    );
}

/// Drops the last line of `file`.
fn text_without_the_duplicate(file: &Path) {
    edit(file, |bytes| {
        bytes.pop();
        let cut = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(cut);
    });
}
