//! Pajé: pj_dump agreement over the corpus, errors, and round trips.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use predicates::prelude::*;

fn corpus() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/paje");
    dir.is_dir().then_some(dir)
}

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
        ("lexical_no_final_newline.paje", _) => Deliberate::Fails(":118: truncated line"),
        ("negative_times.paje", _)
        | ("time_order_only_per_container_and_type.paje", _)
        | ("multiple_files_root.trace", _) => Deliberate::Differs,
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
    let Some(dir) = corpus() else {
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
