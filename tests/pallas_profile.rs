//! `trace-stat profile` of a Pallas trace sums its frames from the
//! grammar's per-sequence durations where the grammar allows it
//! (docs/formats.md, "Profiles from the grammar"): the report equals the
//! one made from the trace's rows, on every corpus trace and on traces
//! written with `-t pallas`; and the grammar is used where it should be
//! (the events' timestamps are then never read) and not where it cannot
//! give the rows' answer.

mod common;

use std::path::{Path, PathBuf};

use common::{bin, cat, corpus, row, run, scratch, stream, Rng};

/// The report options compared.
const OPTIONS: [&[&str]; 5] = [
    &[],
    &["--by", "loc,name"],
    &["--by", "cat,name"],
    &["--histogram", "7"],
    &["--partial", "--by", "loc,name"],
];

/// `trace-stat profile OPTIONS DIR` equals the profile of its rows.
fn agrees_with_rows(dir: &Path) {
    let rows = cat(&["-q"], dir).unwrap();
    for options in OPTIONS {
        let args = [&["profile", "-q"][..], options].concat();
        let summed = run("trace-stat", &args, dir).unwrap();
        let out = bin("trace-stat")
            .args(&args)
            .write_stdin(rows.clone())
            .output();
        let from_rows = String::from_utf8(out.unwrap().stdout).unwrap();
        assert_eq!(summed, from_rows, "{}: profile {options:?}", dir.display());
    }
}

/// A copy of the trace in `dir` whose events' timestamps are gone: only a
/// profile summed from the grammar can still be made of it.
fn without_event_times(dir: &Path, scratch: &Path) -> PathBuf {
    let copy = scratch.join("no-event-times");
    let _ = std::fs::remove_dir_all(&copy);
    let mut stack = vec![(dir.to_path_buf(), copy.clone())];
    while let Some((from, to)) = stack.pop() {
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(&from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                stack.push((path, target));
            } else if path.file_name().unwrap() == "event_durations.dat" {
                std::fs::write(&target, b"").unwrap();
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    copy
}

/// Whether `trace-stat profile ARGS` of `dir` is summed from the grammar.
fn summed_from_grammar(dir: &Path, args: &[&str], scratch: &Path) -> bool {
    let copy = without_event_times(dir, scratch);
    let args = [&["profile", "-q"][..], args].concat();
    match run("trace-stat", &args, &copy) {
        Ok(_) => true,
        Err(e) => {
            assert!(e.contains("event_durations.dat"), "{e}");
            false
        }
    }
}

#[test]
fn corpus_profiles_from_the_grammar_equal_those_from_rows() {
    let Some(dir) = corpus("pallas") else { return };
    let scratch = scratch("pallas-profile-corpus");
    let mut from_grammar = 0;
    for trace in common::accepted_traces(&dir) {
        if cat(&["-q"], &trace).is_err() {
            continue; // ZFP without libzfp
        }
        agrees_with_rows(&trace);
        if summed_from_grammar(&trace, &[], &scratch) {
            from_grammar += 1;
        } else {
            // Only the lossy traces are read as rows.
            let meta = cat(&["-q"], &trace).unwrap();
            assert!(
                meta.contains("histogram") || meta.contains("zfp"),
                "{}: not summed from the grammar",
                trace.display()
            );
        }
    }
    assert!(from_grammar >= 6, "{from_grammar} corpus traces summed");
}

/// `-t pallas` of `rows` into `dir`.
fn written(rows: &[String], dir: &Path, name: &str) -> PathBuf {
    let input = dir.join(format!("{name}.tsv"));
    std::fs::write(&input, stream(rows)).unwrap();
    let out = dir.join(name);
    let _ = std::fs::remove_dir_all(&out);
    let to = out.to_str().unwrap();
    cat(&["-q", "-t", "pallas", "-o", to], &input).unwrap();
    out
}

/// A frame's enter (true) or leave at a time.
type Step = (u64, bool, &'static str);

/// Location `loc` and its frames, in order.
fn frames(loc: &str, steps: &[Step], rows: &mut Vec<String>) {
    rows.push(row(&[
        ("kind", "container"),
        ("loc", loc),
        ("cat", "thread"),
    ]));
    for &(t, enter, name) in steps {
        let kind = if enter { "enter" } else { "leave" };
        let t = t.to_string();
        rows.push(row(&[
            ("kind", kind),
            ("time", &t),
            ("loc", loc),
            ("name", name),
        ]));
    }
}

/// The rows in time order (declarations first; a stable sort keeps each
/// location's order).
fn in_time_order(mut rows: Vec<String>) -> Vec<String> {
    rows.sort_by_key(|r| common::col(r, "time").parse::<u64>().ok());
    rows
}

/// Random nested calls on two threads: `main { N × { compute { k ×
/// kernel }, io } }`, irregular times.
fn nested(seed: u64) -> Vec<String> {
    let mut g = Rng(seed * 104_729 + 3);
    let mut rows = Vec::new();
    for loc in ["rank 0", "rank 1"] {
        let mut t = g.below(5);
        let mut at = |g: &mut Rng| {
            t += 1 + g.below(9);
            t
        };
        let mut steps = vec![(at(&mut g), true, "main")];
        for _ in 0..1 + g.below(40) {
            steps.push((at(&mut g), true, "compute"));
            for _ in 0..1 + g.below(3) {
                steps.push((at(&mut g), true, "kernel"));
                steps.push((at(&mut g), false, "kernel"));
            }
            steps.push((at(&mut g), false, "compute"));
            steps.push((at(&mut g), true, "io"));
            steps.push((at(&mut g), false, "io"));
        }
        steps.push((at(&mut g), false, "main"));
        frames(loc, &steps, &mut rows);
    }
    in_time_order(rows)
}

#[test]
fn written_traces_are_profiled_from_the_grammar_as_from_rows() {
    let dir = scratch("pallas-profile-written");
    for seed in 0..12 {
        let trace = written(&nested(seed), &dir, &format!("nested{seed}"));
        agrees_with_rows(&trace);
        for options in OPTIONS {
            assert!(
                summed_from_grammar(&trace, options, &dir),
                "seed {seed} {options:?}: not summed from the grammar"
            );
        }
    }
}

#[test]
fn the_rows_are_read_where_the_grammar_cannot_tell() {
    let dir = scratch("pallas-profile-fallback");
    let call = |name| [(1, true, name), (2, false, name)];
    let cases: [(&str, Vec<Step>); 3] = [
        // f inside f: only the outermost counts in inclusive time.
        (
            "recursion",
            vec![
                (0, true, "f"),
                (1, true, "f"),
                (2, false, "f"),
                (3, false, "f"),
            ],
        ),
        // The same block (k) directly in frames of two names.
        (
            "mixed",
            [
                vec![
                    (0, true, "a"),
                    (1, true, "k"),
                    (2, false, "k"),
                    (3, false, "a"),
                ],
                vec![
                    (4, true, "b"),
                    (5, true, "k"),
                    (6, false, "k"),
                    (7, false, "b"),
                ],
            ]
            .concat(),
        ),
        // A frame left open at the end.
        (
            "open",
            vec![(0, true, "main"), (1, true, "x"), (2, false, "x")],
        ),
    ];
    for (name, steps) in cases {
        let mut rows = Vec::new();
        frames("t", &steps, &mut rows);
        let trace = written(&rows, &dir, name);
        agrees_with_rows(&trace);
        assert!(
            !summed_from_grammar(&trace, &[], &dir),
            "{name}: summed from the grammar"
        );
    }
    // Options that need the rows: per location, a selection, a merge.
    let mut rows = Vec::new();
    frames("t", &call("f"), &mut rows);
    let trace = written(&rows, &dir, "plain");
    assert!(summed_from_grammar(&trace, &[], &dir));
    for options in [&["--by", "loc"][..], &["--loc", "t*"], &["--prefix-inputs"]] {
        assert!(
            !summed_from_grammar(&trace, options, &dir),
            "{options:?}: summed from the grammar"
        );
    }
}
