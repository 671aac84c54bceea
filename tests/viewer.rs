//! The viewer exports (`-t chrome`, `-t perfetto`): a golden file, the
//! mapping's rules, and every accepted corpus trace checked the way a viewer
//! reads it by an independent decoder (`tests/viewer_check.py`: Python's
//! `json`, and the `perfetto` package's compiled trace protos).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{accepted_traces, bin, corpus, data, scratch};
use serde_json::Value;

/// The Python that has the checker's packages: the virtual environment
/// `.ci/setup --tests` makes under `target/` (never the system Python, which
/// PEP 668 closes to pip), else `python3` from `PATH`.
fn python() -> Command {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-python/bin/python3");
    match venv.exists() {
        true => Command::new(venv),
        false => Command::new("python3"),
    }
}

/// The checker script, when Python can run it with the `perfetto` package;
/// under CI (`CI` set) a missing package is a failure, since `.ci/setup
/// --tests` installs it.
fn checker() -> Option<PathBuf> {
    let ready = python()
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2, google.protobuf",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ready {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 with the perfetto and protobuf packages is missing (CI is set; .ci/setup --tests installs them)"
        );
        common::skipped("python3 with the perfetto and protobuf packages is missing");
        return None;
    }
    Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/viewer_check.py"))
}

/// The checker's summary of each file (`kind` is `chrome` or `perfetto`);
/// fails with its report when a file breaks a rule.
fn check(script: &Path, kind: &str, files: &[PathBuf]) -> Vec<Value> {
    let out = python()
        .arg(script)
        .arg(kind)
        .args(files)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{kind} check failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Converts `input` to `kind` into `dir`; the output file.
fn export(input: &Path, kind: &str, dir: &Path, n: usize) -> PathBuf {
    let out = dir.join(format!("{n}.{kind}"));
    bin("trace-cat")
        .args(["-q", "-t", kind, "-o"])
        .arg(&out)
        .arg(input)
        .assert()
        .success();
    out
}

/// What the checker must count for `input`, from the stream the writers
/// see (halves matched, unmatched ones kept): slices (frames, states,
/// claims, collectives), flows (messages, dependencies), instants
/// (events, halves left), counter samples at least (counters, signals).
fn expected_summary(input: &Path) -> (u64, u64, u64, u64) {
    let out = bin("trace-match")
        .args(["-q", "--unmatched", "keep"])
        .arg(input)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut counts = std::collections::HashMap::new();
    for line in text.lines().skip(1) {
        *counts
            .entry(common::kind_of(line).to_string())
            .or_insert(0u64) += 1;
    }
    let n = |kinds: &[&str]| kinds.iter().map(|k| counts.get(*k).unwrap_or(&0)).sum();
    (
        n(&["enter", "state", "claim", "coll"]),
        n(&["msg", "dep"]),
        n(&["event", "send", "recv"]),
        n(&["counter", "signal"]),
    )
}

#[test]
fn chrome_export_of_every_kind_matches_the_golden_file() {
    let input = data("viewer/kinds.tsv");
    let out = bin("trace-cat")
        .args(["-t", "chrome"])
        .arg(&input)
        .assert()
        .success();
    let got = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let want = std::fs::read_to_string(data("viewer/kinds.chrome.json")).unwrap();
    assert_eq!(got, want);
    // What the warnings say was shown in place of what could not be: the
    // leave with no frame open is an event already as read.
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("kinds.tsv:21: frames that do not nest: 1 leave(s) named no open frame"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 counter or signal rows had no numeric value"),
        "{stderr}"
    );
}

/// The golden file's rules, read back as JSON.
#[test]
fn chrome_export_follows_the_mapping() {
    let out = bin("trace-cat")
        .args(["-q", "-t", "chrome"])
        .arg(data("viewer/kinds.tsv"))
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["displayTimeUnit"], "ns");
    assert_eq!(doc["otherData"]["source_format"], "hand-written");
    let events = doc["traceEvents"].as_array().unwrap();
    let find = |ph: &str, name: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["ph"] == ph && e["name"] == name)
            .collect()
    };
    // Exact ns as µs decimals.
    assert_eq!(find("B", "MPI_Send")[0]["ts"].to_string(), "1234.567");
    // Overlapping claims of one resource on two lanes; c3 fits after c2.
    let claims = find("X", "claim");
    let tid = |id: &str| {
        claims
            .iter()
            .find(|c| c["args"]["id"] == id)
            .map(|c| c["tid"].clone())
            .unwrap()
    };
    assert_eq!(tid("c2"), tid("c3"));
    assert_ne!(tid("c1"), tid("c2"));
    // Nested states of one type: one lane per depth.
    assert_ne!(find("X", "Wait")[0]["tid"], find("X", "Compute")[0]["tid"]);
    // A message: an arrow between the two locations' threads.
    let s = find("s", "msg")[0];
    let f = find("f", "msg")[0];
    assert_eq!(
        (s["id"].clone(), f["bp"].clone()),
        (f["id"].clone(), "e".into())
    );
    assert_ne!(s["tid"], f["tid"]);
    // A half never matched: an instant at its own time.
    let send = find("i", "send")[0];
    assert_eq!(send["ts"].to_string(), "2200");
    assert_eq!(send["args"]["flags"], "U");
    // Counter samples; a signal piece sampled at both ends of its slope.
    assert_eq!(find("C", "queue")[0]["args"]["value"], 3);
    let signal: Vec<String> = find("C", "signal")
        .iter()
        .map(|c| format!("{}={}", c["ts"], c["args"]["value"]))
        .collect();
    assert_eq!(signal, ["2000=1", "3000=3"]);
    // Frames still open are closed: by a `destroy`, else at the end.
    let ends = events
        .iter()
        .filter(|e| e["ph"] == "E" && e["ts"] == 3100)
        .count();
    assert_eq!(ends, 2);
}

#[test]
fn fixture_passes_the_viewer_checks_in_both_encodings() {
    let Some(script) = checker() else { return };
    let dir = scratch("viewer_fixture");
    let input = data("viewer/kinds.tsv");
    let chrome = check(&script, "chrome", &[export(&input, "chrome", &dir, 0)]);
    let perfetto = check(&script, "perfetto", &[export(&input, "perfetto", &dir, 0)]);
    assert_eq!(chrome, perfetto);
    let s = &chrome[0];
    // 3 frames, 2 states, 3 claims, 1 collective; a message and a
    // dependency; an event, the unmatched send, the stray leave and the
    // non-numeric sample as instants; 1 counter sample and 2 of the signal.
    assert_eq!(
        (&s["slices"], &s["flows"], &s["instants"], &s["counters"]),
        (&9.into(), &2.into(), &4.into(), &3.into())
    );
}

/// Perfetto's limits, stated in the error: times from -10^18 ns to
/// 2^63 - 1 - 10^18 ns (the biased timestamp read as signed 64 bits); the
/// last time inside is written, the first outside refused at its row.
#[test]
fn perfetto_refuses_a_time_it_cannot_hold_naming_the_row() {
    let dir = scratch("viewer_refuse");
    let export = |name: &str, time: &str| {
        let rows = [
            common::row(&[("kind", "container"), ("loc", "A")]),
            common::row(&[("kind", "event"), ("time", time), ("loc", "A")]),
        ];
        let input = dir.join(name);
        std::fs::write(&input, common::stream(&rows)).unwrap();
        bin("trace-cat")
            .args(["-t", "perfetto", "-o"])
            .arg(dir.join("x.pftrace"))
            .arg(&input)
            .output()
            .unwrap()
    };
    let limits = "stream times from -10^18 to 8223372036854775807 ns";
    for (name, time) in [
        ("early.tsv", "-1000000000000000001"),
        ("late.tsv", "8223372036854775808"),
    ] {
        let out = export(name, time);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("{name}:4: time {time} ns")),
            "{stderr}"
        );
        assert!(stderr.contains(limits), "{stderr}");
    }
    for (name, time) in [
        ("first.tsv", "-1000000000000000000"),
        ("last.tsv", "8223372036854775807"),
    ] {
        let out = export(name, time);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Every accepted corpus trace (Pajé, Pallas, TRACE), and the project's own
/// inputs of the formats the corpus lacks: the examples, an STF file set
/// and the text of `stftool --dump`.
#[test]
fn every_accepted_trace_passes_the_viewer_checks() {
    let Some(script) = checker() else { return };
    let dir = scratch("viewer_corpus");
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let stf = dir.join("pingpong.stf");
    bin("trace-cat")
        .args(["-q", "-t", "stf", "-o"])
        .arg(&stf)
        .arg(examples.join("pingpong.tsv"))
        .assert()
        .success();
    let mut inputs = vec![
        examples.join("pingpong.tsv"),
        examples.join("camera.etf"),
        data("stf/dump.txt"),
        stf,
    ];
    for format in ["paje", "pallas", "trace"] {
        if let Some(dir) = corpus(format) {
            inputs.extend(accepted_traces(&dir));
        }
    }
    eprintln!("{} traces", inputs.len());
    let summaries = ["chrome", "perfetto"].map(|kind| {
        let files: Vec<PathBuf> = inputs
            .iter()
            .enumerate()
            .map(|(n, input)| export(input, kind, &dir, n))
            .collect();
        check(&script, kind, &files)
    });
    assert_eq!(summaries[0], summaries[1], "chrome and perfetto differ");
    for (input, summary) in inputs.iter().zip(&summaries[0]) {
        let (slices, flows, instants, samples) = expected_summary(input);
        let got = |key: &str| summary[key].as_u64().unwrap();
        let what = format!("{}: {summary}", input.display());
        assert_eq!(got("slices"), slices, "{what}");
        assert_eq!(got("flows"), flows, "{what}");
        // A sample that is not a number, or a stray leave, is an instant.
        assert!(got("instants") >= instants, "{what}");
        assert!(
            got("counters") + got("instants") >= samples + instants,
            "{what}"
        );
    }
}

/// The checker is a test too: it must reject what a viewer rejects.
#[test]
fn checker_catches_broken_exports() {
    let Some(script) = checker() else { return };
    let dir = scratch("viewer_broken");
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        r#"{"traceEvents":[
{"ph":"M","pid":1,"tid":1,"name":"process_name","args":{"name":"p"}},
{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"t"}},
{"ph":"B","pid":1,"tid":1,"ts":5,"name":"a"},
{"ph":"B","pid":1,"tid":1,"ts":4,"name":"b"},
{"ph":"X","pid":1,"tid":2,"ts":0,"dur":10,"name":"x"},
{"ph":"X","pid":1,"tid":2,"ts":5,"dur":10,"name":"y"},
{"ph":"s","pid":1,"tid":2,"ts":1,"id":7,"name":"f"}
],"displayTimeUnit":"ns"}"#,
    )
    .unwrap();
    let out = python()
        .arg(&script)
        .arg("chrome")
        .arg(&broken)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let report = String::from_utf8_lossy(&out.stderr);
    for problem in [
        "B at 4000 after 5000",
        "2 slices never end",
        "overlaps one ending at 10000",
        "has events but no name",
        "flow 7 starts at 1000",
    ] {
        assert!(report.contains(problem), "{problem} not in:\n{report}");
    }
}

#[test]
fn the_perfetto_export_is_listed_as_write_only_and_chrome_json_as_read_too() {
    let out = bin("trace-cat").arg("--list-formats").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("\nchrome\tyes\tyes\t"), "{text}");
    assert!(
        text.contains("\nperfetto\tno\tyes\tpftrace,perfetto-trace\t"),
        "{text}"
    );
    // The extension chooses the writer.
    let dir = scratch("viewer_extension");
    let out = dir.join("camera.pftrace");
    bin("trace-cat")
        .arg("-o")
        .arg(&out)
        .arg(data("../../examples/camera.etf"))
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&out).unwrap()[0],
        0x0a,
        "a Trace.packet field first"
    );
}
