//! `trace-stat top`, `calltree` and `compare`: figures known by
//! construction (frames and the same frames as `state` rows, runs with
//! known slowdowns), partial files merged, the CI gate's exit status, and
//! agreement with `profile` on every corpus trace.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{accepted_traces, bin, col, corpus, row, scratch};

fn frame_row(kind: &str, t: i64, loc: &str, name: &str) -> String {
    row(&[
        ("kind", kind),
        ("time", &t.to_string()),
        ("loc", loc),
        ("name", name),
    ])
}

fn state_row((start, end): (i64, i64), depth: u32, loc: &str, name: &str) -> String {
    row(&[
        ("kind", "state"),
        ("time", &start.to_string()),
        ("end", &end.to_string()),
        ("loc", loc),
        ("name", name),
        ("depth", &depth.to_string()),
    ])
}

/// A stream of `rows`, their locations declared first (in name order).
fn stream(rows: &[String]) -> String {
    let locs: std::collections::BTreeSet<&str> = rows.iter().map(|r| col(r, "loc")).collect();
    let mut all: Vec<String> = locs
        .into_iter()
        .map(|loc| row(&[("kind", "container"), ("loc", loc), ("name", loc)]))
        .collect();
    all.extend(rows.iter().cloned());
    common::stream(&all)
}

/// Frames as (location, name, start, end); written as enter/leave rows in
/// time order (leaves before enters at equal times).
fn frames_stream(frames: &[(&str, &str, i64, i64)]) -> String {
    let mut rows: Vec<(i64, u8, i64, String)> = Vec::new();
    for &(loc, name, start, end) in frames {
        // At one time: leaves first (innermost first), then enters
        // (outermost first).
        rows.push((end, 0, -start, frame_row("leave", end, loc, name)));
        rows.push((start, 1, -end, frame_row("enter", start, loc, name)));
    }
    rows.sort_by_key(|r| (r.0, r.1, r.2));
    stream(&rows.into_iter().map(|r| r.3).collect::<Vec<_>>())
}

/// r0: main { f { f { g } }, g }; r1: main { g }. `f` recurses and `g`
/// runs under two parents.
const FRAMES: [(&str, &str, i64, i64); 7] = [
    ("r0", "main", 0, 100),
    ("r0", "f", 10, 60),
    ("r0", "f", 20, 40),
    ("r0", "g", 25, 30),
    ("r0", "g", 70, 90),
    ("r1", "main", 0, 50),
    ("r1", "g", 5, 15),
];

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn stat(args: &[&str], inputs: &[&Path]) -> String {
    let out = bin("trace-stat").args(args).args(inputs).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "trace-stat {args:?}: {stderr}");
    assert!(stderr.is_empty(), "trace-stat {args:?} warned: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn calltree_of_a_tree_built_by_hand() {
    let dir = scratch("calltree_built");
    let file = write(&dir, "frames.tsv", &frames_stream(&FRAMES));
    assert_eq!(
        stat(&["calltree"], &[&file]),
        "path\tdepth\tcount\tinclusive\texclusive\n\
         main\t0\t2\t150\t70\n\
         main;f\t1\t1\t50\t30\n\
         main;f;f\t2\t1\t20\t15\n\
         main;f;f;g\t3\t1\t5\t5\n\
         main;g\t1\t2\t30\t30\n"
    );
    assert_eq!(
        stat(&["calltree", "--by", "loc,path"], &[&file]),
        "loc\tpath\tdepth\tcount\tinclusive\texclusive\n\
         r0\tmain\t0\t1\t100\t30\n\
         r0\tmain;f\t1\t1\t50\t30\n\
         r0\tmain;f;f\t2\t1\t20\t15\n\
         r0\tmain;f;f;g\t3\t1\t5\t5\n\
         r0\tmain;g\t1\t1\t20\t20\n\
         r1\tmain\t0\t1\t50\t40\n\
         r1\tmain;g\t1\t1\t10\t10\n"
    );
    assert_eq!(
        stat(&["calltree", "--folded"], &[&file]),
        "main 70\nmain;f 30\nmain;f;f 15\nmain;f;f;g 5\nmain;g 30\n"
    );
    assert_eq!(
        stat(
            &["calltree", "--folded", "--by", "loc,path", "--unit", "us"],
            &[&file]
        ),
        "r0;main 0.03\nr0;main;f 0.03\nr0;main;f;f 0.015\nr0;main;f;f;g 0.005\n\
         r0;main;g 0.02\nr1;main 0.04\nr1;main;g 0.01\n"
    );
    // The three paths with the most inclusive time, in tree order.
    assert_eq!(
        stat(&["calltree", "-n", "3", "--no-header"], &[&file]),
        "main\t0\t2\t150\t70\nmain;f\t1\t1\t50\t30\nmain;g\t1\t2\t30\t30\n"
    );
}

/// The same frames as `state` rows in completion order (children first)
/// give the same tree; a state whose parent never comes is a root.
#[test]
fn calltree_of_state_rows_waits_for_their_parents() {
    let dir = scratch("calltree_states");
    let mut states: Vec<(i64, String)> = Vec::new();
    let depth = |loc: &str, start: i64, end: i64| {
        FRAMES
            .iter()
            .filter(|f| f.0 == loc && f.2 <= start && end <= f.3 && (f.2, f.3) != (start, end))
            .count() as u32
    };
    for &(loc, name, start, end) in &FRAMES {
        let d = depth(loc, start, end);
        states.push((end, state_row((start, end), d, loc, name)));
    }
    states.sort_by_key(|s| s.0);
    let rows: Vec<String> = states.into_iter().map(|s| s.1).collect();
    let as_states = write(&dir, "states.tsv", &stream(&rows));
    let as_frames = write(&dir, "frames.tsv", &frames_stream(&FRAMES));
    for by in ["path", "loc,path"] {
        assert_eq!(
            stat(&["calltree", "--by", by], &[&as_states]),
            stat(&["calltree", "--by", by], &[&as_frames]),
            "--by {by}"
        );
    }
    let orphan = write(
        &dir,
        "orphan.tsv",
        &stream(&[
            state_row((0, 10), 1, "r0", "a"),
            state_row((20, 30), 2, "r0", "c"),
            state_row((15, 35), 1, "r0", "b"),
        ]),
    );
    assert_eq!(
        stat(&["calltree", "--no-header"], &[&orphan]),
        "a\t0\t1\t10\t10\nb\t0\t1\t20\t10\nb;c\t1\t1\t10\t10\n"
    );
}

#[test]
fn calltree_partials_merge_into_the_whole() {
    let dir = scratch("calltree_partial");
    let file = write(&dir, "frames.tsv", &frames_stream(&FRAMES));
    for by in ["path", "loc,path"] {
        let mut parts = Vec::new();
        for loc in ["r0", "r1"] {
            let part = dir.join(format!("{loc}.part"));
            let args = ["calltree", "--by", by, "--partial", "-l", loc, "-o"];
            bin("trace-stat")
                .args(args)
                .arg(&part)
                .arg(&file)
                .assert()
                .success();
            parts.push(part);
        }
        let parts: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
        assert_eq!(
            stat(&["calltree", "--by", by, "--merge"], &parts),
            stat(&["calltree", "--by", by], &[&file]),
            "--by {by}"
        );
    }
}

/// Names holding the separator keep their frames apart, in the table and
/// through a partial file.
#[test]
fn calltree_escapes_the_separator_in_names() {
    let dir = scratch("calltree_escapes");
    // In TSV: `c\` and a tab.
    let frames = [("r0", "a;b", 0, 10), ("r0", "c\\\\\\t", 2, 4)];
    let file = write(&dir, "frames.tsv", &frames_stream(&frames));
    let expected = "a\\;b 8\na\\;b;c\\\\\\t 2\n";
    assert_eq!(stat(&["calltree", "--folded"], &[&file]), expected);
    let part = dir.join("part");
    bin("trace-stat")
        .args(["calltree", "--partial", "-o"])
        .arg(&part)
        .arg(&file)
        .assert()
        .success();
    assert_eq!(
        stat(&["calltree", "--folded", "--merge"], &[&part]),
        expected
    );
    let bad = write(
        &dir,
        "bad.part",
        &std::fs::read_to_string(&part)
            .unwrap()
            .replace("a\\\\;b\t", "a\\\\xb\t"),
    );
    let out = bin("trace-stat")
        .args(["calltree", "--merge"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.part:2") && stderr.contains("escapes"),
        "{stderr}"
    );
    let names = ["a;b".to_string(), "\\\n\t\r;".to_string(), String::new()];
    let joined = tracepipe::stats::calltree::join_path(&names);
    assert_eq!(joined, "a\\;b;\\\\\\n\\t\\r\\;;");
    assert_eq!(
        tracepipe::stats::calltree::split_path(&joined),
        Some(names.to_vec())
    );
}

#[test]
fn top_lists_the_longest_frames() {
    let dir = scratch("top_built");
    let file = write(&dir, "frames.tsv", &frames_stream(&FRAMES));
    // Ties of duration (r1's main, r0's outer f: 50) go by start.
    assert_eq!(
        stat(&["top", "-n", "3"], &[&file]),
        "loc\tname\tstart\tend\tduration\tdepth\n\
         r0\tmain\t0\t100\t100\t0\n\
         r1\tmain\t0\t50\t50\t0\n\
         r0\tf\t10\t60\t50\t1\n"
    );
    assert_eq!(
        stat(&["top", "--name", "^g$", "--no-header"], &[&file]),
        "r0\tg\t70\t90\t20\t1\nr1\tg\t5\t15\t10\t1\nr0\tg\t25\t30\t5\t3\n"
    );
    // Every frame when N is larger than their number, by duration.
    let all = stat(&["top", "-n", "100", "--no-header"], &[&file]);
    let durations: Vec<i64> = all
        .lines()
        .map(|l| l.split('\t').nth(4).unwrap().parse().unwrap())
        .collect();
    assert_eq!(durations, [100, 50, 50, 20, 20, 10, 5]);
    // A frame still open at the end closes at its location's last time.
    let open = write(
        &dir,
        "open.tsv",
        &stream(&[
            frame_row("enter", 0, "r2", "h"),
            frame_row("enter", 200, "r2", "k"),
            frame_row("leave", 300, "r2", "k"),
        ]),
    );
    assert_eq!(
        stat(&["top", "--no-header"], &[&open]),
        "r2\th\t0\t300\t300\t0\nr2\tk\t200\t300\t100\t1\n"
    );
    let bad = bin("trace-stat")
        .args(["top", "--name", "("])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Many frames, kept 2N at a time: the same N as sorting them all.
#[test]
fn top_keeps_the_longest_of_many() {
    let dir = scratch("top_many");
    let mut frames = Vec::new();
    let mut rng = common::Rng(7);
    let mut t = 0;
    for i in 0..3000 {
        let d = 1 + rng.below(500) as i64;
        let loc = if i % 2 == 0 { "a" } else { "b" };
        frames.push((loc, "f", t, t + d));
        t += d;
    }
    let file = write(&dir, "many.tsv", &frames_stream(&frames));
    let mut by_hand: Vec<(i64, i64, &str)> =
        frames.iter().map(|f| (-(f.3 - f.2), f.2, f.0)).collect();
    by_hand.sort();
    let expected: String = by_hand[..25]
        .iter()
        .map(|&(d, start, loc)| format!("{loc}\tf\t{start}\t{}\t{}\t0\n", start - d, -d))
        .collect();
    assert_eq!(
        stat(&["top", "-n", "25", "--no-header"], &[&file]),
        expected
    );
}

/// Per name: exclusive times summed over the calltree's paths, and the
/// longest frame of `top`, against `profile`.
fn check_against_profile(trace: &Path) {
    let table = |args: &[&str]| -> Vec<Vec<String>> {
        stat(&[&["-q"], args].concat(), &[trace])
            .lines()
            .skip(1)
            .map(|l| l.split('\t').map(String::from).collect())
            .collect()
    };
    let profile = table(&["profile"]);
    let mut from_profile: BTreeMap<String, i128> = BTreeMap::new();
    let mut longest = None;
    for r in &profile {
        from_profile.insert(r[0].clone(), r[3].parse().unwrap());
        longest = longest.max(Some(r[6].parse::<i64>().unwrap()));
    }
    let mut from_tree: BTreeMap<String, i128> = BTreeMap::new();
    for r in table(&["calltree"]) {
        let names = r[0].replace("\\;", "\u{1}").replace("\\\\", "\\");
        let last = names.rsplit(';').next().unwrap().replace('\u{1}', ";");
        *from_tree.entry(last).or_default() += r[4].parse::<i128>().unwrap();
    }
    assert_eq!(from_tree, from_profile, "{}", trace.display());
    let top = table(&["top", "-n", "1"]);
    let top_duration = top.first().map(|r| r[4].parse::<i64>().unwrap());
    assert_eq!(top_duration, longest, "{}", trace.display());
}

#[test]
fn calltree_top_and_compare_agree_with_profile_on_the_corpus() {
    let mut checked = 0;
    for format in ["paje", "pallas", "trace"] {
        let Some(dir) = corpus(format) else { return };
        for trace in accepted_traces(&dir) {
            check_against_profile(&trace);
            check_compare_with_itself(&trace);
            checked += 1;
        }
    }
    for (_, anchor) in common::external_archives() {
        check_against_profile(&anchor);
        check_compare_with_itself(&anchor);
        checked += 1;
    }
    assert!(checked > 25, "{checked} traces");
}

/// A run compared with itself: every key in both, no difference, the
/// strictest gate passes; the base values are profile's exclusive times.
fn check_compare_with_itself(trace: &Path) {
    let out = bin("trace-stat")
        .args(["compare", "-q", "--fail-over", "0"])
        .args([trace, trace])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        trace.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut base: Vec<(String, String)> = Vec::new();
    for line in text.lines().skip(1) {
        let r: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            (r[1], r[2], r[4], r[5]),
            ("both", r[3], "0", "0.00"),
            "{line}"
        );
        base.push((r[0].to_string(), r[2].to_string()));
    }
    let profile = stat(&["profile", "-q"], &[trace]);
    let mut expected: Vec<(String, String)> = profile
        .lines()
        .skip(1)
        .map(|l| {
            let r: Vec<&str> = l.split('\t').collect();
            (r[0].to_string(), r[3].to_string())
        })
        .collect();
    base.sort();
    expected.sort();
    assert_eq!(base, expected, "{}", trace.display());
}

/// Two runs of one program: `work` slower by 30 %, `io` by 5 %, `init`
/// gone, `extra` new, `tiny` (1 ns) slower by 100 %.
fn runs(dir: &Path) -> (PathBuf, PathBuf) {
    let base = [
        ("r0", "main", 0, 1000),
        ("r0", "init", 0, 100),
        ("r0", "work", 100, 300),
        ("r0", "io", 300, 500),
        ("r0", "tiny", 600, 601),
        ("r1", "main", 0, 500),
        ("r1", "work", 0, 200),
    ];
    let new = [
        ("r0", "main", 0, 1000),
        ("r0", "work", 100, 360),
        ("r0", "io", 400, 610),
        ("r0", "tiny", 700, 702),
        ("r0", "extra", 800, 900),
        ("r1", "main", 0, 500),
        ("r1", "work", 0, 260),
    ];
    (
        write(dir, "base.tsv", &frames_stream(&base)),
        write(dir, "new.tsv", &frames_stream(&new)),
    )
}

fn compare(args: &[&str], base: &Path, new: &Path) -> (String, String, Option<i32>) {
    let out = bin("trace-stat")
        .arg("compare")
        .args(args)
        .args([base, new])
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (text(out.stdout), text(out.stderr), out.status.code())
}

#[test]
fn compare_finds_what_got_slower() {
    let dir = scratch("compare_built");
    let (base, new) = runs(&dir);
    let (table, stderr, code) = compare(&[], &base, &new);
    assert_eq!((stderr.as_str(), code), ("", Some(0)));
    assert_eq!(
        table,
        "name\tstatus\tbase\tnew\tdiff\tchange\n\
         work\tboth\t400\t520\t120\t30.00\n\
         extra\tnew\t\t100\t100\t\n\
         io\tboth\t200\t210\t10\t5.00\n\
         tiny\tboth\t1\t2\t1\t100.00\n\
         init\tgone\t100\t\t-100\t\n\
         main\tboth\t799\t668\t-131\t-16.40\n"
    );
    // The gate: `tiny` grew most (100 %); with --min it is noise, and
    // `work` (30 %) trips the gate at 20 %, not at 40.
    let (_, stderr, code) = compare(&["--fail-over", "20"], &base, &new);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("`tiny` grew by 100.00 %") && stderr.contains("(2 keys over)"),
        "{stderr}"
    );
    let (table, stderr, code) = compare(&["--fail-over", "20", "--min", "10"], &base, &new);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("`work` grew by 30.00 % (exclusive 400 ns to 520 ns)"),
        "{stderr}"
    );
    assert!(
        !table.contains("tiny") && table.contains("extra"),
        "{table}"
    );
    let (_, stderr, code) = compare(&["--fail-over", "40", "--min", "10"], &base, &new);
    assert_eq!((stderr.as_str(), code), ("", Some(0)));
    // Other metrics and keys.
    let (table, _, _) = compare(&["--metric", "count", "--no-header"], &base, &new);
    assert!(table.contains("work\tboth\t2\t2\t0\t0.00\n"), "{table}");
    let (table, _, _) = compare(&["--metric", "inclusive", "--by", "loc,name"], &base, &new);
    assert!(table.starts_with("loc\tname\tstatus"), "{table}");
    assert!(
        table.contains("r1\twork\tboth\t200\t260\t60\t30.00\n"),
        "{table}"
    );
    assert!(
        table.contains("r0\tmain\tboth\t1000\t1000\t0\t0.00\n"),
        "{table}"
    );
}

/// A nightly job keeps last night's partial file: the gate works on two
/// partial files, and on a partial file against a trace.
#[test]
fn compare_gates_on_partial_files() {
    let dir = scratch("compare_partial");
    let (base, new) = runs(&dir);
    let partial = |trace: &Path, name: &str| {
        let part = dir.join(name);
        bin("trace-stat")
            .args(["profile", "--partial", "-o"])
            .arg(&part)
            .arg(trace)
            .assert()
            .success();
        part
    };
    let (base_part, new_part) = (partial(&base, "base.part"), partial(&new, "new.part"));
    let whole = compare(&["--fail-over", "20", "--min", "10"], &base, &new);
    assert_eq!(
        compare(&["--fail-over", "20", "--min", "10"], &base_part, &new_part),
        whole
    );
    assert_eq!(
        compare(&["--fail-over", "20", "--min", "10"], &base_part, &new),
        whole
    );
    assert_eq!(whole.2, Some(1));
    // A partial of another --by, or of another report, is refused.
    let (_, stderr, code) = compare(&["--by", "loc,name"], &base_part, &new);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("base.part:1"), "{stderr}");
    // Two inputs, no more, no less.
    let out = bin("trace-stat")
        .args(["compare"])
        .arg(&base)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin("trace-stat")
        .args(["compare"])
        .args([&base, &new, &base])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn calltree_and_top_agree_with_profile_on_the_examples() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    check_against_profile(&examples.join("pingpong.tsv"));
    let dir = scratch("calls_examples");
    check_against_profile(&write(&dir, "frames.tsv", &frames_stream(&FRAMES)));
}

/// The README's `top` → `trace-slice --around` example runs and cuts a
/// window holding the call it found.
#[test]
fn readme_top_feeds_a_slice() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("trace-stat top -n 1")
        .expect("the README's top example");
    let end = start + readme[start..].find("; }").expect("its end") + 3;
    let script = &readme[start..end];
    let bins = PathBuf::from(bin("trace-stat").get_program())
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!("{}:{}", bins.display(), std::env::var("PATH").unwrap());
    let out = std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .env("PATH", path)
        .current_dir(root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The longest MPI call: rank 1's receive from 1050 to 1950 ns.
    let holds = |kind: &str, t: &str| {
        text.lines()
            .any(|l| l.starts_with(kind) && col(l, "name") == "MPI_Recv" && col(l, "time") == t)
    };
    assert!(holds("enter", "1050") && holds("leave", "1950"), "{text}");
}

/// Frames left open close at their location's latest time, also when
/// every time is negative (a stack that started its clock at 0 gave
/// 10 ns here, not 5).
#[test]
fn frames_left_open_close_at_a_negative_last_time() {
    let dir = scratch("calls_negative");
    let file = write(
        &dir,
        "negative.tsv",
        &stream(&[
            frame_row("enter", -10, "r0", "f"),
            frame_row("enter", -8, "r0", "g"),
            frame_row("leave", -5, "r0", "g"),
        ]),
    );
    assert_eq!(
        stat(&["top", "--no-header"], &[&file]),
        "r0\tf\t-10\t-5\t5\t0\nr0\tg\t-8\t-5\t3\t1\n"
    );
    let profile = stat(&["profile", "--no-header"], &[&file]);
    assert!(profile.contains("\nf\t1\t5\t2\t"), "{profile}");
    assert_eq!(stat(&["calltree", "--folded"], &[&file]), "f 2\nf;g 3\n");
}

fn counter_row(t: i64, loc: &str, name: &str, value: &str, mode: &str) -> String {
    row(&[
        ("kind", "counter"),
        ("time", &t.to_string()),
        ("loc", loc),
        ("name", name),
        ("value", value),
        ("attrs", &format!("mode={mode}")),
    ])
}

/// r0: main { f { g } } with PAPI_TOT_INS sampled at every enter and
/// leave, written before or after the frame's row; `MID` sampled inside
/// frames only; `DELTA` of mode rel.
fn counted_frames() -> Vec<String> {
    let c = |t, v: &str| counter_row(t, "r0", "PAPI_TOT_INS", v, "acc");
    let f = |kind, t, name| frame_row(kind, t, "r0", name);
    vec![
        c(0, "100"),
        f("enter", 0, "main"),
        f("enter", 10, "f"),
        c(10, "150"),
        c(20, "190"),
        f("enter", 20, "g"),
        counter_row(25, "r0", "MID", "7", "abs"),
        counter_row(26, "r0", "DELTA", "1.5", "rel"),
        counter_row(27, "r0", "PAPI_TOT_INS", "n/a", "acc"),
        f("leave", 30, "g"),
        c(30, "230"),
        c(40, "260"),
        f("leave", 40, "f"),
        c(50, "300"),
        f("leave", 50, "main"),
    ]
}

#[test]
fn counters_per_function_by_construction() {
    let dir = scratch("frame_counters");
    let file = write(&dir, "counted.tsv", &stream(&counted_frames()));
    let out = bin("trace-stat")
        .args(["profile", "--counters"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "name\tcounter\tframes\tinclusive\texclusive\n\
         main\tPAPI_TOT_INS\t1\t200\t90\n\
         f\tPAPI_TOT_INS\t1\t110\t70\n\
         g\tPAPI_TOT_INS\t1\t40\t40\n"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("counter `DELTA` left out"), "{stderr}");
    assert!(
        stderr.contains("counter `PAPI_TOT_INS`: 1 samples left out, their value not a number"),
        "{stderr}"
    );
    // MID is sampled inside g only: it has no sample at any boundary and
    // never starts a frame, so nothing is counted or told for it.
    assert!(!stderr.contains("MID"), "{stderr}");
    // Through OTF2 and Pallas, whose readers put the metric records on
    // the frames' location at the same times.
    for format in ["otf2", "pallas"] {
        let to = dir.join(format!("counted.{format}"));
        bin("trace-cat")
            .args(["-q", "-t", format, "-o"])
            .arg(&to)
            .arg(&file)
            .assert()
            .success();
        assert_eq!(
            stat(&["profile", "--counters", "-q"], &[&to]),
            stat(&["profile", "--counters", "-q"], &[&file]),
            "{format}"
        );
    }
}

/// Random nested frames with a counter sampled at every boundary: the
/// exclusive changes add up to the outermost frames' inclusive changes,
/// and each function's inclusive change is the sum over its frames.
#[test]
fn counters_per_function_add_up() {
    let dir = scratch("frame_counters_random");
    let mut rng = common::Rng(11);
    let (mut rows, mut t, mut value) = (Vec::new(), 0i64, 0u64);
    let (mut open, mut outermost_total, mut expected) = (Vec::new(), 0u64, BTreeMap::new());
    let mut starts: Vec<u64> = Vec::new();
    for _ in 0..400 {
        t += 1 + rng.below(5) as i64;
        value += rng.below(1000);
        let enter = open.is_empty() || (open.len() < 6 && rng.below(2) == 0);
        if enter {
            let name = ["a", "b", "c"][rng.below(3) as usize];
            rows.push(frame_row("enter", t, "r0", name));
            open.push(name);
            starts.push(value);
        } else {
            let name = open.pop().unwrap();
            let change = value - starts.pop().unwrap();
            *expected.entry(name.to_string()).or_insert(0u64) += change;
            if open.is_empty() {
                outermost_total += change;
            }
            rows.push(frame_row("leave", t, "r0", name));
        }
        rows.push(counter_row(t, "r0", "C", &value.to_string(), "acc"));
    }
    while let Some(name) = open.pop() {
        t += 1;
        value += rng.below(1000);
        rows.push(frame_row("leave", t, "r0", name));
        rows.push(counter_row(t, "r0", "C", &value.to_string(), "acc"));
        let change = value - starts.pop().unwrap();
        *expected.entry(name.to_string()).or_insert(0u64) += change;
        if open.is_empty() {
            outermost_total += change;
        }
    }
    let file = write(&dir, "random.tsv", &stream(&rows));
    let table = stat(&["profile", "--counters", "--no-header"], &[&file]);
    let (mut inclusive, mut exclusive_total) = (BTreeMap::new(), 0u64);
    for line in table.lines() {
        let r: Vec<&str> = line.split('\t').collect();
        inclusive.insert(r[0].to_string(), r[3].parse::<u64>().unwrap());
        exclusive_total += r[4].parse::<u64>().unwrap();
    }
    assert_eq!(exclusive_total, outermost_total);
    // A recursive name's inclusive change counts each of its frames.
    assert_eq!(inclusive, expected);
}

/// `--svg`: a flame graph with one box per path, its function's name and
/// inclusive time in its title (`all` is the whole).
#[test]
fn calltree_draws_a_flame_graph() {
    let dir = scratch("calltree_svg");
    let file = write(&dir, "frames.tsv", &frames_stream(&FRAMES));
    let svg = stat(&["calltree", "--svg"], &[&file]);
    assert!(
        svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    let mut titles: Vec<&str> = svg
        .split("<title>")
        .skip(1)
        .map(|t| t.split(" ns,").next().unwrap())
        .collect();
    titles.sort();
    assert_eq!(
        titles,
        ["all (150", "f (20", "f (50", "g (30", "g (5", "main (150"]
    );
    let per_location = stat(&["calltree", "--svg", "--by", "loc,path"], &[&file]);
    for title in ["<title>r0 (100 ns", "<title>r1 (50 ns"] {
        assert!(per_location.contains(title), "{title}");
    }
    let out = bin("trace-stat")
        .args(["calltree", "--svg", "--csv"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
