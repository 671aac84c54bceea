//! Pajé: pj_dump agreement over the corpus, errors, and round trips.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use predicates::prelude::*;

/// The record lines of a pj_dump output (PajeNG also prints warnings there).
fn records(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| {
            ["Container, ", "State, ", "Event, ", "Variable, ", "Link, "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Corpus rows where tracepipe differs from PajeNG on purpose (docs/formats.md,
/// "Differences from PajeNG"), with what tracepipe does instead.
enum Deliberate {
    /// PajeNG fails; tracepipe reads the trace and prints this expected file.
    Succeeds(&'static str),
    /// PajeNG fails; tracepipe reads the trace (output checked elsewhere).
    Accepts,
    /// PajeNG reads it; tracepipe fails with this message.
    Fails(&'static str),
    /// Both read it; the records differ as documented.
    Differs,
    /// The option is not emulated.
    Skipped,
}

fn deliberate(input: &str, args: &str) -> Option<Deliberate> {
    Some(match (input, args) {
        ("seed_example.paje", "(none)") => Deliberate::Succeeds("seed_example.pjdump"),
        ("link_key_reuse.paje", _) => Deliberate::Accepts,
        ("variable_float32_and_formats.paje", _) => {
            Deliberate::Fails(":127: bad variable value `abc`")
        }
        ("time_number_formats.paje", _) => Deliberate::Fails(":122: bad time `5abc`"),
        (input, _) if common::paje_differs_from_pajeng(input) => Deliberate::Differs,
        (_, "-i") | (_, "-s 3.2 -e 4.2") => Deliberate::Skipped,
        _ => return None,
    })
}

fn options(args: &str) -> Vec<&'static str> {
    match args {
        "(none)" | "-n" => vec![],
        "-u" => vec!["--user-fields"],
        "-z" => vec!["--ignore-incomplete-links"],
        other => panic!("pj_dump option {other} has no mapping in this test"),
    }
}

fn run_pjdump(file: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("trace-cat"))
        .args(["-t", "pjdump"])
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn pjdump_agrees_with_pajeng_on_the_corpus() {
    let Some(dir) = corpus("paje") else {
        eprintln!("../shared/corpus absent: corpus test skipped");
        return;
    };
    let mut checked = 0;
    for (sub, expected_dir) in [
        ("", "expected"),
        ("edge/", "expected/edge"),
        ("generated/", "expected/generated"),
    ] {
        let index = std::fs::read_to_string(dir.join(expected_dir).join("INDEX.tsv")).unwrap();
        for row in index.lines().skip(1) {
            let cols: Vec<&str> = row.split('\t').collect();
            let (input, args, code, expected) = (cols[0], cols[1], cols[2], cols[3]);
            let file = dir.join(format!("{sub}{input}"));
            let what = format!("{input} {args}");
            match deliberate(input, args) {
                Some(Deliberate::Skipped) => continue,
                Some(Deliberate::Succeeds(exp)) => {
                    let out = run_pjdump(&file, &[]);
                    assert!(
                        out.status.success(),
                        "{what}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let want = std::fs::read_to_string(dir.join(expected_dir).join(exp)).unwrap();
                    assert_eq!(
                        records(&String::from_utf8_lossy(&out.stdout)),
                        records(&want),
                        "{what}"
                    );
                }
                Some(Deliberate::Accepts) | Some(Deliberate::Differs) => {
                    let out = run_pjdump(&file, &options(args));
                    assert!(
                        out.status.success(),
                        "{what}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
                Some(Deliberate::Fails(msg)) => {
                    let out = run_pjdump(&file, &options(args));
                    assert_eq!(out.status.code(), Some(1), "{what}");
                    let err = String::from_utf8_lossy(&out.stderr);
                    assert!(err.contains(&format!("{input}{msg}")), "{what}: {err}");
                }
                None if code == "0" => {
                    let out = run_pjdump(&file, &options(args));
                    assert!(
                        out.status.success(),
                        "{what}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let want =
                        std::fs::read_to_string(dir.join(expected_dir).join(expected)).unwrap();
                    let (got, want) = (
                        records(&String::from_utf8_lossy(&out.stdout)),
                        records(&want),
                    );
                    assert!(!want.is_empty(), "{what}: no records expected?");
                    if got != want {
                        let missing: Vec<_> =
                            want.iter().filter(|l| !got.contains(l)).take(5).collect();
                        let extra: Vec<_> =
                            got.iter().filter(|l| !want.contains(l)).take(5).collect();
                        panic!("{what}: records differ\nmissing: {missing:#?}\nextra: {extra:#?}");
                    }
                }
                None => {
                    let out = run_pjdump(&file, &options(args));
                    assert_eq!(out.status.code(), Some(1), "{what} must fail");
                    assert!(
                        out.stdout.is_empty(),
                        "{what}: records printed despite the error"
                    );
                    let err = String::from_utf8_lossy(&out.stderr);
                    let located = err.contains(&format!("{input}:"))
                        && (err.contains(&format!("{input}: at end of input: "))
                            || err
                                .split(&format!("{input}:"))
                                .nth(1)
                                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())));
                    assert!(located, "{what}: message not located: {err}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} corpus rows checked");
}

#[test]
fn round_trip_is_identical_on_every_accepted_corpus_trace() {
    let Some(dir) = corpus("paje") else {
        eprintln!("../shared/corpus absent: corpus test skipped");
        return;
    };
    let scratch = scratch("paje-corpus-rt");
    let mut done = 0;
    for sub in ["", "edge", "generated"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.is_file()
                    && matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("trace" | "paje")
                    )
            })
            .collect();
        files.sort();
        for file in files {
            let accepted = std::process::Command::new(assert_cmd::cargo::cargo_bin("trace-cat"))
                .arg(&file)
                .output()
                .unwrap()
                .status
                .success();
            if accepted {
                check_round_trip("paje", &file, &scratch);
                done += 1;
            }
        }
    }
    assert!(done >= 30, "only {done} corpus traces round-tripped");
}

#[test]
fn own_fixture_golden_pjdump_and_round_trip() {
    let out = bin("trace-cat")
        .args(["-t", "pjdump", "--user-fields"])
        .arg(data("paje/sample.paje"))
        .assert()
        .success();
    let got = records(&String::from_utf8_lossy(&out.get_output().stdout));
    let want = records(&std::fs::read_to_string(data("paje/sample.u.pjdump")).unwrap());
    assert_eq!(got, want);
    // Hand-checked facts of that golden output.
    assert!(want.contains(
        &"Variable, node one, Memory in use, 2.000000, 4.000000, 2.000000, 1536.500000".to_string()
    ));
    assert!(want.contains(
        &"Link, node one, Message, 4.500000, 4.250000, -0.250000, msg, thread-2, thread-1, k2, 8"
            .to_string()
    ));
    assert!(want.contains(&"Container, node one, Thread, 0.5, 6, 5.5, thread-1".to_string()));
    check_round_trip("paje", &data("paje/sample.paje"), &scratch("paje-own-rt"));
    // --precision changes the decimals of fixed-point columns only.
    let out = bin("trace-cat")
        .args(["-t", "pjdump", "--precision", "2"])
        .arg(data("paje/sample.paje"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("State, thread-1, Thread State, 1.25, 2.00, 0.75, 1.00, Waiting\n"),
        "{text}"
    );
    assert!(
        text.contains("Container, 0, Machine, 0, 6, 6, node one\n"),
        "{text}"
    );
}

#[test]
fn stream_mapping_of_the_own_fixture() {
    let text = stream_of(&[], &data("paje/sample.paje"));
    let lines: Vec<&str> = text.lines().skip(2).collect();
    let find = |kind: &str, name: &str| -> &str {
        lines
            .iter()
            .find(|l| kind_of(l) == kind && col(l, "name") == name)
            .copied()
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    };
    // Types carry identifier, name, nature and parent; values their colour.
    let t = find("type", "Thread State");
    assert_eq!(
        (col(t, "id"), col(t, "cat"), col(t, "peer")),
        ("S", "state", "T")
    );
    assert_eq!(col(find("type", "Waiting"), "attrs"), "paje.color=FF0000");
    // States live on a lane per (container, state type); values resolve aliases.
    let e = find("enter", "Waiting");
    assert_eq!(
        (
            col(e, "loc"),
            col(e, "value"),
            col(e, "depth"),
            col(e, "attrs")
        ),
        ("t1/S", "w", "1", "Tag=push-tag")
    );
    // Variables become absolute counters; add/sub keep their operand.
    let c = lines
        .iter()
        .find(|l| kind_of(l) == "counter" && col(l, "time") == "2000000000")
        .unwrap();
    assert_eq!(
        (col(c, "value"), col(c, "attrs")),
        ("1536.5", "paje.op=add;paje.operand=512.5")
    );
    // Links are matched by (container, type, key) and become a `msg` row
    // when they complete, as trace-match would pair their halves; a link
    // whose end comes before its start is flagged R.
    assert!(!lines.iter().any(|l| matches!(kind_of(l), "send" | "recv")));
    let links: Vec<&&str> = lines.iter().filter(|l| kind_of(l) == "msg").collect();
    assert_eq!(links.len(), 2);
    let m = links[0];
    assert_eq!(
        (
            col(m, "time"),
            col(m, "end"),
            col(m, "loc"),
            col(m, "peer"),
            col(m, "comm"),
            col(m, "cat"),
            col(m, "id"),
            col(m, "attrs")
        ),
        (
            "1500000000",
            "2750000000",
            "t1",
            "t2",
            "m1",
            "L",
            "k1",
            "Size=4096"
        )
    );
    assert_eq!((col(links[1], "id"), col(links[1], "flags")), ("k2", "R"));
    // What the end of the trace closes is synthetic.
    let last = lines.last().unwrap();
    assert_eq!(
        (kind_of(last), col(last, "loc"), col(last, "flags")),
        ("destroy", "m1", "S")
    );
    // The stream is valid.
    bin("trace-cat")
        .write_stdin(text.clone())
        .assert()
        .success();
}

/// The fixture header followed by `body` (line numbers of the body start at 104).
fn with_header(body: &str) -> String {
    let header = std::fs::read_to_string(data("paje/header.paje")).unwrap();
    format!("{header}0 M 0 Machine\n0 T M Thread\n2 S T State\n1 V M Var \"0 0 1\"\n3 E T Ev\n4 L M T T Link\n6 0 m1 M 0 m1\n6 0 t1 T m1 t1\n6 0 t2 T m1 t2\n{body}")
}

#[test]
fn own_fixtures_cover_the_rejections() {
    let header_lines = std::fs::read_to_string(data("paje/header.paje"))
        .unwrap()
        .lines()
        .count() as u64;
    let first = header_lines + 10;
    let cases: &[(&str, u64, &str)] = &[
        ("99 1 t1 S x\n", 0, "undefined event id `99`"),
        ("11 1 t9 S x\n", 0, "unknown container `t9`"),
        ("11 1 t1 Q x\n", 0, "unknown type `Q`"),
        (
            "11 1 m1 S x\n",
            0,
            "type `S` is not a child type of container type `M`",
        ),
        ("13 1 t1 S\n", 0, "pop on an empty stack"),
        ("9 1 m1 V 3\n", 0, "which has no value yet"),
        ("8 1 m1 V 1..2\n", 0, "bad variable value `1..2`"),
        ("11 x1 t1 S a\n", 0, "bad time `x1`"),
        ("11 2 t1 S a\n11 1 t1 S b\n", 1, "time goes backwards"),
        ("11 1 t1 S\n", 0, "missing fields"),
        (
            "15 1 m1 L t1 v k 1\n16 2 m1 L t2 w k\n",
            1,
            "ends with value `w` but started with `v`",
        ),
        (
            "15 1 m1 L t1 v k 1\n15 2 m1 L t1 v k 1\n",
            1,
            "a second start of link key `k`",
        ),
        (
            "15 1 m1 L m1 v k 1\n",
            0,
            "StartContainer `m1` is of type `M`",
        ),
        ("6 1 m1 T m1 again\n", 0, "container `m1` is created twice"),
        ("6 1 0 T m1 zero\n", 0, "cannot be identified as `0`"),
        (
            "7 2 T t1\n7 1 T t1\n",
            1,
            "destroyed at 1.000000000 s, before its last event",
        ),
        (
            "%EventDef PajeNoSuchEvent 50\n",
            0,
            "unknown event name `PajeNoSuchEvent`",
        ),
        (
            "%EventDef PajeNewEvent 51\n% Time strange\n",
            1,
            "unknown field type `strange`",
        ),
        (
            "%EventDef PajeNewEvent 17\n",
            0,
            "event id `17` is defined twice",
        ),
        (
            "%EventDef PajeNewEvent 52\n% Time date\n%EndEventDef\n",
            2,
            "lacks the obligatory field `Type`",
        ),
        (
            "%EventDef PajeNewEvent 53\n% Time date\n% Time date\n",
            2,
            "appears twice",
        ),
        (
            "%EventDef PajeNewEvent 54\n%EventDef PajeNewEvent 55\n",
            1,
            "inside the definition of event 54",
        ),
        ("0 M 0 Again\n", 0, "type `M` is defined twice"),
    ];
    for (i, (body, offset, words)) in cases.iter().enumerate() {
        let dir = scratch(&format!("paje-bad-{i}"));
        let file = dir.join("bad.paje");
        std::fs::write(&file, with_header(body)).unwrap();
        bin("trace-cat")
            .arg(&file)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "bad.paje:{}: ",
                first + offset
            )))
            .stderr(predicate::str::contains(*words));
    }
    // An incomplete link fails at the end (naming the half's line), or is kept
    // unmatched with --ignore-incomplete-links.
    let dir = scratch("paje-incomplete");
    let file = dir.join("bad.paje");
    std::fs::write(&file, with_header("15 1 m1 L t1 v k 1\n")).unwrap();
    bin("trace-cat")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "bad.paje: at end of input: incomplete link: key `k` (line {first})"
        )));
    // With -z the link is dropped, as pj_dump -z does, and counted.
    let out = bin("trace-cat")
        .arg("--ignore-incomplete-links")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains("1 incomplete link(s) dropped"));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!text
        .lines()
        .any(|l| kind_of(l) == "send" || kind_of(l) == "msg"));
    // So it is written as Pajé without a refusal, and reads back.
    let written = bin("trace-cat")
        .args(["--ignore-incomplete-links", "-q", "-t", "paje"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    bin("trace-cat")
        .write_stdin(written.stdout)
        .assert()
        .success();
    // A file cut in the middle of a line is an error...
    std::fs::write(&file, with_header("11 1 t1")).unwrap();
    bin("trace-cat")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "bad.paje:{first}: truncated line (no final newline): the file was cut? missing fields"
        )));
    // ...but a complete last line, or a comment, without its newline is read,
    // with a warning (as PajeNG reads it).
    for (last, rows) in [("11 1 t1 S abc", 1), ("# the end", 0)] {
        std::fs::write(&file, with_header(last)).unwrap();
        let out = bin("trace-cat")
            .arg("--spans")
            .arg(&file)
            .assert()
            .success()
            .stderr(predicate::str::contains(format!(
                "bad.paje:{first}: the last line has no final newline: the file may have been cut"
            )));
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let states = text.lines().filter(|l| l.starts_with("state\t")).count();
        assert_eq!(states, rows, "{last}");
    }
}

#[test]
fn old_field_names_and_events_after_destroy() {
    // The 2003 names (ContainerType, EntityType, SourceContainer...) need no flag.
    let text = "%EventDef PajeDefineContainerType 1\n% Alias string\n% ContainerType string\n% Name string\n%EndEventDef\n%EventDef PajeCreateContainer 2\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n%EventDef PajeDestroyContainer 3\n% Time date\n% Name string\n% Type string\n%EndEventDef\n%EventDef PajeDefineEventType 4\n% Alias string\n% ContainerType string\n% Name string\n%EndEventDef\n%EventDef PajeNewEvent 5\n% Time date\n% Container string\n% Type string\n% Value string\n%EndEventDef\n1 P 0 Program\n4 E P Ev\n2 0 p P 0 prog\n5 1 p E a\n3 2 p P\n5 3 p E late\n";
    let dir = scratch("paje-old");
    let file = dir.join("old.paje");
    std::fs::write(&file, text).unwrap();
    let out = bin("trace-cat")
        .args(["-t", "pjdump"])
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "1 event(s) on destroyed containers ignored, as PajeNG does (first on line 34)",
        ));
    let dump = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(dump.contains("Event, prog, Ev, 1.000000, a\n"), "{dump}");
    assert!(!dump.contains("late"), "{dump}");
}

#[test]
fn events_of_different_containers_are_put_back_in_time_order() {
    // Pajé orders events per container and type only.
    let body = "17 2 t1 E a\n17 1 t2 E b\n17 3 t1 E c\n";
    let dir = scratch("paje-reorder");
    let file = dir.join("t.paje");
    std::fs::write(&file, with_header(body)).unwrap();
    let text = stream_of(&[], &file);
    let events: Vec<&str> = text
        .lines()
        .filter(|l| kind_of(l) == "event")
        .map(|l| col(l, "name"))
        .collect();
    assert_eq!(events, ["b", "a", "c"]);
    bin("trace-cat")
        .write_stdin(text.clone())
        .assert()
        .success();
    // Beyond the reorder window the disorder is an error, not a misordered stream.
    bin("trace-cat")
        .args(["--reorder-window", "1"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "out of time order by more than the reorder window",
        ));
}

/// Counts the lines of `text` that start with each prefix.
fn count_lines(text: &str, prefixes: &[&str]) -> Vec<usize> {
    prefixes
        .iter()
        .map(|p| text.lines().filter(|l| l.starts_with(p)).count())
        .collect()
}

/// A foreign stream becomes a Pajé trace that PajeNG's rules accept (our
/// reader checks them), with one Pajé entity per source element: frames and
/// claims become states, instants events, counters and signal fragments
/// variables, message halves and dependencies links.
#[test]
fn other_streams_map_onto_a_valid_paje_trace() {
    let dir = scratch("paje-foreign");
    // Source line prefixes counted for pjdump's State, Event, Variable, Link.
    let sources: [(&str, [&[&str]; 4]); 2] = [
        (
            "pingpong.tsv",
            [&["enter\t"], &["event\t"], &["counter\t"], &["send\t"]],
        ),
        ("camera.etf", [&["C "], &["E "], &["F "], &["D "]]),
    ];
    for (example, kinds) in sources {
        let source = data(&format!("../../examples/{example}"));
        let text = std::fs::read_to_string(&source).unwrap();
        let paje = dir.join(format!("{example}.paje"));
        bin("trace-cat")
            .args(["-t", "paje", "-o"])
            .arg(&paje)
            .arg(&source)
            .assert()
            .success();
        let out = bin("trace-cat")
            .args(["-t", "pjdump"])
            .arg(&paje)
            .assert()
            .success();
        let dump = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let got = count_lines(&dump, &["State, ", "Event, ", "Variable, ", "Link, "]);
        let want: Vec<usize> = kinds
            .iter()
            .map(|p| count_lines(&text, p).iter().sum())
            .collect();
        assert!(want.iter().all(|&n| n > 0), "{example} has every kind");
        assert_eq!(got, want, "{example}\n{dump}");
    }
}

/// Hierarchies as deep as the trace makes them: 20,000 nested container types
/// and containers, a state at the bottom, the outermost destroyed (every level
/// closed) — no recursion bounded only by the input (this aborted before).
#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    const DEPTH: usize = 20_000;
    let mut body = String::from("0 K0 0 K0\n");
    for i in 1..DEPTH {
        body.push_str(&format!("0 K{i} K{} K{i}\n", i - 1));
    }
    body.push_str(&format!("2 Deep K{} Deep\n", DEPTH - 1));
    body.push_str("6 0 c0 K0 0 c0\n");
    for i in 1..DEPTH {
        body.push_str(&format!("6 0 c{i} K{i} c{} c{i}\n", i - 1));
    }
    body.push_str(&format!("11 1 c{} Deep busy\n7 2 K0 c0\n", DEPTH - 1));
    let header = std::fs::read_to_string(data("paje/header.paje")).unwrap();
    let dir = scratch("paje_deep_nesting");
    let file = dir.join("deep.paje");
    std::fs::write(&file, format!("{header}{body}")).unwrap();
    let out = bin("trace-cat")
        .arg("--spans")
        .arg(&file)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let destroyed = text.lines().filter(|l| l.starts_with("destroy\t")).count();
    assert_eq!(destroyed, DEPTH);
    let state = text.lines().find(|l| l.starts_with("state\t")).unwrap();
    assert_eq!(col(state, "name"), "busy");
    assert_eq!(col(state, "end"), "2000000000");
}

/// With more threads the lines are cut into words as jobs of the pool,
/// chunks ahead, their definitions found and times parsed there, and the
/// rows' lines encoded as jobs too: a trace of many chunks reads as on one
/// thread, with the same rows, warnings and errors (naming the same line),
/// whatever line the trouble is on, with definitions, types, containers
/// and values added midway and times the jobs leave to the reading thread.
#[test]
fn any_number_of_threads_read_a_long_trace_alike() {
    let mut body = String::new();
    for i in 0..40_000 {
        let t = format!("{}.{:03}", i / 1000, i % 1000);
        match i % 7 {
            0 => body.push_str(&format!("12 {t} t1 S \"two words\" tag # comment\n")),
            1 => body.push_str(&format!("13 {t} t1 S\r\n")),
            2 => body.push_str("\n  # a comment only\n"),
            3 => body.push_str(&format!("\t11\t{t}\tt2\tS\tcafé\n")),
            // Times that are not plain seconds of at most nine decimals.
            4 => body.push_str(&format!("11 {t}0000000000 t2 S x\n")),
            5 => body.push_str(&format!("11 {}e-3 t2 S y\n", i)),
            _ => body.push_str(&format!("8 {t} m1 V {i}.5\n")),
        }
        // A state type and a container made midway, used at once and
        // chunks after, then the container destroyed and used again
        // (dropped, and counted in a warning). Values defined midway,
        // named other than their identifiers: used before (naming
        // themselves), at once and chunks after.
        match i {
            5_000 => body.push_str("5 v0 S zero \"0 0 1\"\n"),
            10_000 => body.push_str(&format!(
                "2 S2 T Other\n5 w S2 Wee \"0 1 0\"\n6 {t} t3 T m1 t3\n"
            )),
            15_000 => body.push_str("5 v2 S two \"1 0 0\"\n"),
            10_001..20_000 => body.push_str(&format!("11 {t} t3 S v{}\n11 {t} t1 S2 w\n", i % 3)),
            20_000 => body.push_str(&format!("7 {t} T t3\n")),
            30_000 => body.push_str(&format!("11 {t} t3 S late\n")),
            _ => {}
        }
    }
    // A definition midway, used at once and chunks after.
    let define = |id: u32| {
        format!("%EventDef PajeNewEvent {id}\n% Time date\n% Type string\n% Container string\n% Value string\n% Note string\n%EndEventDef\n")
    };
    let mut late = define(50);
    for i in 0..3_000 {
        late.push_str(&format!("50 40.{i:04} E t1 v{} n{i}\n", i % 3));
    }
    let before_definition = format!("51 40 E t1 v n\n{}", define(51));

    let dir = scratch("paje_one_thread_or_two");
    let trouble: [(&str, &[u8]); 7] = [
        ("clean", b""),
        ("undefined id", b"99 1 t1 S x\n"),
        ("not UTF-8", b"11 40 t1 S \xff\n"),
        ("cut", b"11 41 t1 S last"),
        ("too few fields", b"11 40 t1\n"),
        ("defined late", late.as_bytes()),
        ("used before its definition", before_definition.as_bytes()),
    ];
    for (what, extra) in trouble {
        // The trouble in the middle of the trace, or at its end (where
        // alone a line can be cut).
        for middle in [what != "cut", false] {
            let mut text = with_header(&body).into_bytes();
            let at = if middle {
                let half = text.len() / 2;
                half + text[half..].iter().position(|&b| b == b'\n').unwrap() + 1
            } else {
                text.len()
            };
            text.splice(at..at, extra.iter().copied());
            // The line of the trouble.
            let line = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            let file = dir.join("long.paje");
            std::fs::write(&file, &text).unwrap();
            let run_in = |threads: &str, unit: &str| {
                let out = bin("trace-cat")
                    .args(["--threads", threads, "--no-progress", "--time-unit", unit])
                    .arg(&file)
                    .output()
                    .unwrap();
                (out.status.code(), out.stdout, out.stderr)
            };
            let run = |threads: &str| run_in(threads, "s");
            let one = run("1");
            let stderr = String::from_utf8_lossy(&one.2).to_string();
            if what == "clean" {
                // Times in another unit are parsed on the reading thread.
                let ms = run_in("1", "ms");
                assert!(
                    ms == run_in("2", "ms"),
                    "milliseconds: 1 and 2 threads differ"
                );
                assert_ne!(ms.1, one.1);
                // Values are named once defined, and name themselves before.
                let rows = String::from_utf8_lossy(&one.1);
                let states: Vec<(&str, &str)> = rows
                    .lines()
                    .filter(|l| l.starts_with("enter\t"))
                    .map(|l| (col(l, "name"), col(l, "value")))
                    .collect();
                for state in [("zero", "v0"), ("Wee", "w"), ("two", "v2"), ("v2", "")] {
                    assert!(states.contains(&state), "no state {state:?}");
                }
            }
            for threads in ["2", "3", "8"] {
                let more = run(threads);
                assert!(
                    one == more,
                    "{what} (middle {middle}): one thread and {threads} differ\n{stderr}\n{}",
                    String::from_utf8_lossy(&more.2)
                );
            }
            let failed = matches!(
                what,
                "undefined id" | "not UTF-8" | "too few fields" | "used before its definition"
            );
            assert_eq!(one.0 == Some(0), !failed, "{what}: {stderr}");
            if failed {
                assert!(
                    stderr.contains(&format!("long.paje:{line}:")),
                    "{what}: expected line {line}: {stderr}"
                );
            }
        }
    }
}

/// Pajé states no time unit: StarPU writes milliseconds, read with
/// `--time-unit ms`; the stream says which unit was used.
/// User-defined fields become attributes named after the field; a name
/// or value with the attribute separators is escaped, and reads back.
#[test]
fn user_fields_with_separators_become_attributes() {
    let def = "%EventDef PajeNewEvent 60\n% Time date\n% Type string\n% Container string\n% Value string\n% a=b;c% string\n% Plain string\n%EndEventDef\n";
    let file = scratch("paje_user_fields").join("fields.paje");
    std::fs::write(
        &file,
        with_header(&format!("{def}60 1 E t1 v \"x;y=%\" z\n")),
    )
    .unwrap();
    let stream = cat(&[], &file).unwrap();
    let event = stream.lines().find(|l| kind_of(l) == "event").unwrap();
    assert_eq!(col(event, "attrs"), "a%3Db%3Bc%25=x%3By%3D%25;Plain=z");
    let json = cat(&["--json"], &file).unwrap();
    let event = json
        .lines()
        .find(|l| l.contains(r#""kind":"event""#))
        .unwrap();
    assert!(
        event.contains(r#""attrs":{"a=b;c%":"x;y=%","Plain":"z"}"#),
        "{event}"
    );
}

#[test]
fn time_unit_of_a_starpu_trace() {
    let starpu = data("paje/starpu_ms.paje");
    let stream = cat(&["--time-unit", "ms"], &starpu).unwrap();
    assert!(
        stream.contains("meta\t\t\t\t\ttime_unit\t\t\t\t\t\t\tms\t\t\n"),
        "{stream}"
    );
    let enters: Vec<&str> = stream
        .lines()
        .filter(|l| kind_of(l) == "enter")
        .map(|l| col(l, "time"))
        .collect();
    assert_eq!(enters, ["1000250000", "2000000000"]);
    let out = output_of(
        "trace-stat",
        &["summary", "--time-unit", "ms", "--unit", "s"],
        &[&starpu],
    );
    assert!(out.contains("span\t\t4.2625\n"), "{out}");
    // Seconds by default, and every unit scales exactly.
    let seconds = cat(&[], &starpu).unwrap();
    assert!(seconds.contains("enter\t1000250000000\t"), "{seconds}");
    let ns = cat(&["--time-unit", "ns"], &starpu).unwrap();
    assert!(ns.contains("enter\t1000\t"), "{ns}");
    // Only Pajé inputs take it; a unit it does not know is a usage error.
    bin("trace-cat")
        .args(["--time-unit", "ms", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--time-unit is an option of the paje reader",
        ));
    bin("trace-cat")
        .args(["--time-unit", "min"])
        .arg(&starpu)
        .assert()
        .code(2);
}

/// Matched messages are written as links when they complete, so a matched
/// trace written as Pajé reads back with the reader's defaults (and with
/// PajeNG's `pj_dump`, when `PJ_DUMP` names it), every message kept.
#[test]
fn matched_traces_written_as_paje_read_back_with_defaults() {
    let mut inputs = vec![data("../../examples/pingpong.tsv")];
    for format in ["paje", "trace", "pallas"] {
        let Some(dir) = corpus(format) else { return };
        inputs.extend(accepted_traces(&dir));
    }
    let dir = scratch("matched-paje");
    // A dependency becomes a link too.
    let msgs = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("msg\t") || l.starts_with("dep\t"))
            .count()
    };
    let mut written = 0;
    for (n, input) in inputs.iter().enumerate() {
        let matched = bin("trace-match").arg("-q").arg(input).output().unwrap();
        assert!(matched.status.success(), "{input:?}");
        let paje = dir.join(format!("{n}.paje"));
        let out = bin("trace-cat")
            .args(["-q", "-t", "paje", "-o"])
            .arg(&paje)
            .write_stdin(matched.stdout.clone())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            assert!(
                err.contains("never get their other half"),
                "{input:?}: {err}"
            );
            continue;
        }
        // The reader gives a link's ends as halves, which trace-match pairs.
        let back = bin("trace-match").arg("-q").arg(&paje).output().unwrap();
        let back_err = String::from_utf8_lossy(&back.stderr);
        assert!(back.status.success(), "{input:?}: {back_err}");
        let back = String::from_utf8_lossy(&back.stdout);
        let before = msgs(&String::from_utf8_lossy(&matched.stdout));
        assert_eq!(msgs(&back), before, "{input:?}");
        // A source PajeNG rejects itself (a link key used again) is
        // written as it came, and rejected alike.
        let is_paje = input
            .extension()
            .is_some_and(|e| e == "paje" || e == "trace");
        assert!(
            (is_paje && !pajeng_accepts(input)) || pajeng_accepts(&paje),
            "{input:?}"
        );
        written += usize::from(before > 0);
    }
    assert!(written >= 3, "only {written} traces with messages");
}

/// A trace StarPU wrote is in milliseconds: read without --time-unit, one
/// warning names the type that tells and the flag, never a silent guess.
#[test]
fn a_starpu_trace_read_without_its_unit_is_told() {
    let dir = scratch("paje-starpu");
    let file = dir.join("starpu.paje");
    let header = std::fs::read_to_string(data("paje/header.paje")).unwrap();
    let line = header.lines().count() + 2;
    let body = "0 P 0 Program\n0 Mm P \"Memory Manager\"\n0 W P Worker\n2 WS W \"Worker State\"\n\
                6 0 p P 0 p\n6 0 m Mm p m\n6 1.5 w W p w\n";
    std::fs::write(&file, format!("{header}{body}")).unwrap();
    let out = bin("trace-cat")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "starpu.paje:{line}: type `Memory Manager` says StarPU wrote this trace"
        )))
        .stderr(predicate::str::contains("give --time-unit ms"));
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.matches("says StarPU").count(), 1, "{stderr}");
    let out = bin("trace-cat")
        .args(["--time-unit", "ms"])
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("container\t1500000\t")),
        "{text}"
    );
}
