//! trace-filter: predicates, and a valid stream as output.

mod common;

use common::*;
use predicates::prelude::*;

fn run(args: &[&str]) -> Vec<String> {
    let out = bin("trace-filter")
        .args(args)
        .arg(data("../../examples/pingpong.tsv"))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // Whatever was kept, the output is a valid stream.
    bin("trace-cat")
        .write_stdin(text.clone())
        .assert()
        .success();
    body(&text)
}

fn names(lines: &[String], kind: &str) -> Vec<String> {
    lines
        .iter()
        .filter(|l| kind_of(l) == kind)
        .map(|l| format!("{}@{}", col(l, "name"), col(l, "time")))
        .collect()
}

#[test]
fn keeps_kinds_with_their_containers() {
    let lines = run(&["-k", "recv"]);
    let kinds: Vec<&str> = lines.iter().map(|l| kind_of(l)).collect();
    // meta rows, then node0 (parent of rank1), rank1, rank0 (the peer), then rows.
    assert_eq!(
        kinds,
        vec![
            "meta",
            "meta",
            "container",
            "container",
            "container",
            "recv",
            "recv",
            "recv"
        ]
    );
    let containers: Vec<&str> = lines
        .iter()
        .filter(|l| kind_of(l) == "container")
        .map(|l| col(l, "loc"))
        .collect();
    assert_eq!(containers, vec!["node0", "rank1", "rank0"]);
}

#[test]
fn keeps_by_location_name_and_window() {
    let lines = run(&["-l", "rank1", "-k", "enter", "-n", "^comp"]);
    assert_eq!(
        names(&lines, "enter"),
        vec!["compute@2000", "compute@5000", "compute@8000"]
    );
    // The container rows are written, but only those needed (no rank0).
    assert!(!lines.iter().any(|l| col(l, "loc") == "rank0"));
    let lines = run(&["--from", "4us", "--to", "5000", "-k", "enter,leave"]);
    assert_eq!(
        names(&lines, "enter"),
        vec!["MPI_Send@4000", "MPI_Recv@4050"]
    );
    // compute's leave at 4000 goes with its enter, before the window.
    assert_eq!(
        names(&lines, "leave"),
        vec!["MPI_Send@4400", "MPI_Recv@4950"]
    );
}

#[test]
fn window_keeps_overlapping_complete_rows_whole() {
    let spans = bin("trace-cat")
        .arg("--spans")
        .arg(data("../../examples/pingpong.tsv"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = bin("trace-filter")
        .args(["-k", "state", "--from", "2500", "--to", "2600"])
        .write_stdin(spans)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let got: Vec<(String, String, String)> = body(&text)
        .iter()
        .filter(|l| kind_of(l) == "state")
        .map(|l| {
            (
                col(l, "name").into(),
                col(l, "time").into(),
                col(l, "end").into(),
            )
        })
        .collect();
    let want = [
        ("compute", "2000", "4000"),
        ("main", "0", "10010"),
        ("main", "0", "10020"),
    ];
    assert_eq!(
        got,
        want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
}

#[test]
fn attributes_and_invert() {
    let lines = run(&["-a", "mode=abs"]);
    assert_eq!(names(&lines, "counter").len(), 3);
    assert_eq!(
        lines
            .iter()
            .filter(|l| kind_of(l) != "meta" && kind_of(l) != "container")
            .count(),
        3
    );
    let lines = run(&["-a", "note=a=b"]);
    assert_eq!(names(&lines, "event"), vec!["checkpoint@10000"]);
    let lines = run(&["-a", "iteration"]);
    assert_eq!(names(&lines, "enter").len(), 3);
    // --invert keeps the complement (meta and needed containers always stay).
    let all = run(&[]);
    let kept = run(&["-k", "enter,leave"]);
    let rest = run(&["-v", "-k", "enter,leave"]);
    let data_rows = |v: &[String]| {
        v.iter()
            .filter(|l| kind_of(l) != "meta" && kind_of(l) != "container")
            .count()
    };
    assert_eq!(data_rows(&kept) + data_rows(&rest), data_rows(&all));
    assert!(!rest.iter().any(|l| kind_of(l) == "enter"));
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        vec!["--from", "1parsec"],
        vec!["--from", "5", "--to", "5"],
        vec!["-n", "("],
        vec!["-l", "p["],
        vec!["-a", "=x"],
        vec!["-k", "nonsense"],
    ] {
        bin("trace-filter")
            .args(&args)
            .write_stdin("")
            .assert()
            .code(2)
            .stderr(predicate::str::is_empty().not());
    }
}

#[test]
fn reads_json_and_writes_json() {
    let json = bin("trace-cat")
        .arg("--json")
        .arg(data("../../examples/pingpong.tsv"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = bin("trace-filter")
        .args(["--json", "-k", "send"])
        .write_stdin(json)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let sends = text
        .lines()
        .filter(|l| l.starts_with(r#"{"kind":"send""#))
        .count();
    assert_eq!(sends, 3);
}

/// A time window keeps or drops frames whole, so `trace-cat --spans` accepts
/// what `trace-filter --from/--to` writes (it rejected a `leave` whose
/// `enter` fell before the window).
#[test]
fn a_window_keeps_frames_whole() {
    let frame = |t0: &str, t1: &str, name: &str| {
        [
            row(&[
                ("kind", "enter"),
                ("time", t0),
                ("loc", "p"),
                ("name", name),
            ]),
            row(&[
                ("kind", "leave"),
                ("time", t1),
                ("loc", "p"),
                ("name", name),
            ]),
        ]
    };
    let mut rows = vec![row(&[("kind", "container"), ("loc", "p")])];
    // Before the window's start, across it, inside, across its end.
    rows.extend(frame("1", "5", "before"));
    rows.push(row(&[
        ("kind", "enter"),
        ("time", "8"),
        ("loc", "p"),
        ("name", "across"),
    ]));
    rows.extend(frame("12", "14", "inside"));
    rows.push(row(&[
        ("kind", "leave"),
        ("time", "15"),
        ("loc", "p"),
        ("name", "across"),
    ]));
    rows.extend(frame("18", "30", "late"));
    let out = bin("trace-filter")
        .args(["--from", "10", "--to", "20"])
        .write_stdin(stream(&rows))
        .assert()
        .success();
    let filtered = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let spans = bin("trace-cat")
        .arg("--spans")
        .write_stdin(filtered)
        .assert()
        .success();
    let text = String::from_utf8(spans.get_output().stdout.clone()).unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("state\t"))
        .map(|l| col(l, "name"))
        .collect();
    assert_eq!(names, ["inside", "late"]);
}

#[test]
fn attributes_compare_as_numbers_and_columns_answer_too() {
    // Iterations 0, 1, 2 in the attrs; `size` is a column.
    let iterations = |cond: &str| names(&run(&["-k", "enter", "-a", cond]), "enter").len();
    assert_eq!(iterations("iteration>0"), 2);
    assert_eq!(iterations("iteration>=0"), 3);
    assert_eq!(iterations("iteration<1.5"), 2);
    assert_eq!(iterations("iteration<=-1"), 0);
    assert_eq!(iterations("iteration!=1"), 2);
    let sends = |cond: &str| names(&run(&["-k", "send", "-a", cond]), "send").len();
    assert_eq!(sends("size>=4096"), 3);
    assert_eq!(sends("size>4096"), 0);
    assert_eq!(sends("size=4096"), 3);
    bin("trace-filter")
        .args(["-a", "size>4k", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`4k` is not a number"));
}

/// The sample Pajé trace's states, as `trace-filter ARGS` keeps them.
fn paje_states(args: &[&str]) -> Vec<String> {
    let spans = bin("trace-cat")
        .arg("--spans")
        .arg(data("paje/sample.paje"))
        .assert()
        .success();
    let out = bin("trace-filter")
        .args(args)
        .write_stdin(spans.get_output().stdout.clone())
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    body(&text)
        .into_iter()
        .filter(|l| kind_of(l) == "state")
        .map(|l| format!("{}:{}", col(&l, "loc"), col(&l, "name")))
        .collect()
}

#[test]
fn locations_by_display_name_and_by_subtree() {
    // Pajé states live on lanes below their thread: the id `t1` is not theirs.
    assert!(paje_states(&["-k", "state", "-l", "t1"]).is_empty());
    let t1 = paje_states(&["-k", "state", "--under", "t1"]);
    assert!(!t1.is_empty());
    assert!(t1.iter().all(|s| s.starts_with("t1/S:")), "{t1:?}");
    // The same subtree by the thread's display name.
    assert_eq!(paje_states(&["-k", "state", "--under", "thread-1"]), t1);
    // Every state is below the machine.
    let all = paje_states(&["-k", "state"]);
    assert_eq!(paje_states(&["-k", "state", "--under", "node one"]), all);
    // -L matches the lane's own display name.
    assert_eq!(paje_states(&["-k", "state", "-L", "Thread State"]), all);
    assert!(paje_states(&["-k", "state", "-L", "thread-1"]).is_empty());
    // --invert takes the complement, subtree included.
    let not_t1 = paje_states(&["-k", "state", "-v", "--under", "t1"]);
    assert!(not_t1.iter().all(|s| !s.starts_with("t1/")), "{not_t1:?}");
}

#[test]
fn asking_for_states_of_a_trace_with_frames_gets_a_hint() {
    bin("trace-filter")
        .args(["-k", "state"])
        .arg(data("paje/sample.paje"))
        .assert()
        .success()
        .stderr(predicate::str::contains("trace-cat --spans"));
    bin("trace-filter")
        .arg("--list-formats")
        .assert()
        .success()
        .stdout(predicate::str::contains("pallas\tyes\tyes"));
}

#[test]
fn rows_only_with_a_unit_is_data_for_other_tools() {
    let out = bin("trace-filter")
        .args([
            "-k",
            "send",
            "--rows-only",
            "--unit",
            "us",
            "examples/pingpong.tsv",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines.iter().all(|l| l.starts_with("send\t")));
    assert_eq!(lines[0].split('\t').nth(1), Some("1.1"));
    let out = bin("trace-cat")
        .args([
            "--rows-only",
            "--json",
            "--unit",
            "s",
            "examples/pingpong.tsv",
        ])
        .assert()
        .success();
    let first = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let first: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    assert_eq!(first["kind"], "enter");
    // Without --rows-only, the header line stays (a table for R or DuckDB),
    // but not the declarations: times in a stream are integer ns, so the
    // output is no stream, and a reader refuses it rather than misread it.
    let out = bin("trace-cat")
        .args(["--unit", "ms", "examples/pingpong.tsv"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("kind\ttime\tend\tloc"), "{text}");
    assert!(lines[1..]
        .iter()
        .all(|l| !l.starts_with("meta\t") && !l.starts_with("container\t")));
    assert_eq!(lines[1].split('\t').nth(1), Some("0"));
    assert_eq!(lines[3].split('\t').nth(1), Some("0.001"), "{text}");
    bin("trace-cat").arg("-").write_stdin(text).assert().code(1);
    bin("trace-cat")
        .args(["--unit", "ms", "-t", "trace", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--unit shapes"));
    bin("trace-cat")
        .args(["--rows-only", "-t", "trace", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--rows-only"));
}
