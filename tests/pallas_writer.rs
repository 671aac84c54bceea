//! `-t pallas`: every trace written is read by the reference library's
//! Python bindings (PyPI's pallas-trace, `tests/pallas/read.py`) with the
//! events the stream's rows map to (docs/formats.md, "Pallas", writing),
//! and by tracepipe with the same rows; loops are found; each lossless
//! codec keeps times exact.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use common::{accepted_traces, bin, cat, corpus, data, row, scratch, stream, Rng};

/// The virtual environment `.ci/setup --tests` makes, with pallas-trace.
fn python() -> Option<PathBuf> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-python/bin/python3");
    let ok = std::process::Command::new(&venv)
        .args(["-c", "import pallas_trace"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(venv);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "pallas-trace is missing (.ci/setup --tests installs it)"
    );
    common::skipped("pallas-trace is missing (.ci/setup --tests installs it)");
    None
}

/// The events pallas-trace reads from the trace in `dir`, by thread name:
/// `TIME RECORD WHAT` (tests/pallas/read.py).
fn pallas_events(python: &Path, dir: &Path) -> BTreeMap<String, Vec<String>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pallas/read.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(dir.join("main.pallas"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: pallas-trace fails: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut events: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (thread, event) = line.split_once('\t').unwrap();
        events
            .entry(thread.to_string())
            .or_default()
            .push(event.to_string());
    }
    events
}

/// One data row's columns.
struct Row<'a>(Vec<&'a str>);

impl<'a> Row<'a> {
    fn get(&self, column: &str) -> &'a str {
        let i = common::HEADER
            .split('\t')
            .position(|c| c == column)
            .unwrap();
        self.0.get(i).copied().unwrap_or("")
    }
    fn number(&self, column: &str) -> Option<u64> {
        self.get(column).parse().ok()
    }
}

/// A text that is the canonical form of a u64.
fn canonical(text: &str) -> Option<u64> {
    text.parse::<u64>().ok().filter(|n| n.to_string() == text)
}

/// The thread model's records: cat, name.
const THREAD_MODEL: [(&str, &str); 8] = [
    ("OMP", "OMP_FORK"),
    ("OMP", "OMP_JOIN"),
    ("THREAD", "THREAD_FORK"),
    ("THREAD", "THREAD_JOIN"),
    ("THREAD", "THREAD_TEAM_BEGIN"),
    ("THREAD", "THREAD_TEAM_END"),
    ("THREAD", "THREAD_BEGIN"),
    ("THREAD", "THREAD_END"),
];

/// The record a thread model's event maps to, with a fork's thread count
/// (its first attribute `nthreads`, 0 when it has none that fits).
fn thread_model(r: &Row) -> Option<String> {
    let &(_, name) = THREAD_MODEL
        .iter()
        .find(|&&(cat, name)| r.get("cat") == cat && r.get("name") == name)?;
    let what = match name.ends_with("FORK") {
        true => {
            let first = r.get("attrs").split(';').next().unwrap_or("");
            let n = first
                .strip_prefix("nthreads=")
                .and_then(canonical)
                .filter(|&n| n <= u32::MAX as u64);
            format!("nthreads={}", n.unwrap_or(0))
        }
        false => String::new(),
    };
    Some(format!("{name}\t{what}"))
}

/// The record a lock, task or request event maps to, and its field;
/// None for a generic event.
fn block_event(r: &Row) -> Option<String> {
    let (cat, name) = (r.get("cat"), r.get("name"));
    let id = canonical(r.get("id"));
    let field = match (cat, name) {
        ("OMP", "OMP_ACQUIRE_LOCK" | "OMP_RELEASE_LOCK")
        | ("THREAD", "THREAD_ACQUIRE_LOCK" | "THREAD_RELEASE_LOCK") => {
            format!("lock={}", id.filter(|&i| i <= u32::MAX as u64)?)
        }
        ("OMP", "OMP_TASK_CREATE" | "OMP_TASK_SWITCH" | "OMP_TASK_COMPLETE") => {
            format!("task={}", id?)
        }
        ("THREAD", "THREAD_TASK_CREATE" | "THREAD_TASK_SWITCH" | "THREAD_TASK_COMPLETE") => {
            String::new()
        }
        ("MPI", "MPI_ISEND_COMPLETE" | "MPI_IRECV_REQUEST") => format!("req={}", id?),
        _ => return None,
    };
    Some(format!("{name}\t{field}"))
}

/// The events a stream's rows map to, by location, as the documented
/// mapping says: frames as ENTER/LEAVE (a state only when it starts
/// after its location's last event), the thread model's events as their
/// records, halves with a tag and a peer as MPI records, collectives
/// Pallas names as their begin and end (when they start after the last
/// event), lock, task and request events as their records, other events
/// as GENERIC, any other row a GENERIC `tracepipe.row` at its completion.
fn expected_events(stream: &str) -> BTreeMap<String, Vec<String>> {
    let mut events: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    // Open frames: their names.
    let mut frames: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in stream.lines().skip(1) {
        let r = Row(line.split('\t').collect());
        let kind = r.get("kind");
        if ["meta", "container", "type"].contains(&kind) {
            continue;
        }
        let loc = r.get("loc").to_string();
        let (time, end) = (r.number("time"), r.number("end"));
        let at = *last.entry(loc.clone()).or_default();
        let mut put = |t: u64, what: String| {
            events
                .entry(loc.clone())
                .or_default()
                .push(format!("{t}\t{what}"));
            last.insert(loc.clone(), t);
        };
        let columns_kept = r
            .get("attrs")
            .split(';')
            .any(|a| a.starts_with("tracepipe."));
        let placed = !columns_kept
            && match kind {
                "enter" => {
                    let open = frames.entry(loc.clone()).or_default();
                    open.push(r.get("name").into());
                    put(time.unwrap(), format!("ENTER\t{}", r.get("name")));
                    true
                }
                "leave" => {
                    let open = frames.get_mut(&loc).and_then(|f| f.pop());
                    let name = open.unwrap_or_else(|| panic!("a leave with no enter: {line}"));
                    put(time.unwrap(), format!("LEAVE\t{name}"));
                    true
                }
                "state" if time.unwrap() >= at && end >= time => {
                    put(time.unwrap(), format!("ENTER\t{}", r.get("name")));
                    put(end.unwrap(), format!("LEAVE\t{}", r.get("name")));
                    true
                }
                "send" | "recv"
                    if r.number("tag").is_some_and(|t| t <= u32::MAX as u64)
                        && !r.get("peer").is_empty() =>
                {
                    let record = match (kind, canonical(r.get("id"))) {
                        ("send", None) => "MPI_SEND",
                        ("send", Some(_)) => "MPI_ISEND",
                        ("recv", None) => "MPI_RECV",
                        _ => "MPI_IRECV",
                    };
                    let mut what = format!(
                        "{record}\ttag={} len={}",
                        r.get("tag"),
                        r.number("size").unwrap_or(0)
                    );
                    if let Some(req) = canonical(r.get("id")) {
                        what.push_str(&format!(" req={req}"));
                    }
                    put(time.unwrap(), what);
                    true
                }
                "coll"
                    if tracepipe::model::hpc::collective_op(r.get("name")).is_some()
                        && time.unwrap() >= at
                        && end >= time =>
                {
                    let op = tracepipe::model::hpc::collective_op(r.get("name")).unwrap();
                    put(time.unwrap(), "MPI_COLLECTIVE_BEGIN\t".into());
                    let what = format!(
                        "MPI_COLLECTIVE_END\top={op} sent={} recv={}",
                        r.number("size").unwrap_or(0),
                        canonical(r.get("value")).unwrap_or(0)
                    );
                    put(end.unwrap(), what);
                    true
                }
                "event" if r.get("name") != "tracepipe.row" => {
                    let what = thread_model(&r).or_else(|| block_event(&r));
                    put(
                        time.unwrap(),
                        what.unwrap_or_else(|| format!("GENERIC\t{}", r.get("name"))),
                    );
                    true
                }
                _ => false,
            };
        if !placed {
            let completion = time.max(end).unwrap_or(at).max(at);
            put(completion, "GENERIC\ttracepipe.row".into());
        }
    }
    events
}

/// `input` written with `-t pallas` (and `extra` options) into `dir`.
fn write_pallas(input: &Path, dir: &Path, extra: &[&str]) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    let mut args = vec!["-q", "-t", "pallas", "-o", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    cat(&args, input).map(|_| ())
}

/// The data rows of a stream per location, in order (rows of one instant
/// on different locations may change places when threads are merged).
fn rows_by_location(stream: &str) -> BTreeMap<String, Vec<String>> {
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in stream.lines().skip(1) {
        let kind = line.split('\t').next().unwrap();
        if kind == "meta" {
            continue;
        }
        let loc = line.split('\t').nth(3).unwrap_or("").to_string();
        by.entry(loc).or_default().push(line.to_string());
    }
    for rows in by.values_mut().filter(|r| r[0].starts_with("container")) {
        rows.sort();
    }
    by
}

/// Checks one input: written with each codec, pallas-trace reads the
/// events its rows map to, and tracepipe the same rows.
fn check(python: Option<&Path>, input: &Path, dir: &Path, codecs: &[&str]) {
    let what = input.display().to_string();
    let original = cat(&["-q"], input).unwrap();
    for codec in codecs {
        let out = dir.join(format!("out-{codec}"));
        if let Err(e) = write_pallas(input, &out, &["--pallas-codec", codec]) {
            // Pallas's times are unsigned, and its readers need a thread:
            // its refusals.
            let no_thread = !original.lines().any(|l| {
                let kind = l.split('\t').next().unwrap_or("");
                !["kind", "meta", "container", "type"].contains(&kind)
            });
            assert!(
                e.contains("Pallas times are not negative")
                    || (no_thread && e.contains("fail on a trace of no threads")),
                "{what} ({codec}): refused: {e}"
            );
            return;
        }
        let expected = expected_events(&original);
        if let Some(python) = python {
            let read = pallas_events(python, &out);
            for (thread, events) in &expected {
                assert_eq!(
                    read.get(thread).unwrap_or(&Vec::new()),
                    events,
                    "{what} ({codec}): pallas-trace reads other events on `{thread}`"
                );
            }
            assert!(
                read.keys().all(|t| expected.contains_key(t)),
                "{what} ({codec}): events on threads with no rows"
            );
        }
        let back = cat(&["-q"], &out).unwrap();
        assert_eq!(
            rows_by_location(&with_states_as_frames(&back)),
            rows_by_location(&with_states_as_frames(&original)),
            "{what} ({codec}): tracepipe reads other rows back"
        );
    }
}

/// A stream with its frames as `state` rows (`--spans`): a state written
/// as an enter and a leave reads back as those.
fn with_states_as_frames(stream: &str) -> String {
    let out = bin("trace-cat")
        .args(["-q", "--spans"])
        .write_stdin(stream.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A state's depth is what --spans counts where its enter had none.
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split('\t').collect();
            if f[0] == "state" {
                f[6] = "";
            }
            f.join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every corpus trace (Pallas, Pajé, TRACE) and the examples.
#[test]
fn corpus_traces_are_read_back_by_pallas_and_by_tracepipe() {
    let python = python();
    let mut inputs = vec![
        data("../../examples/pingpong.tsv"),
        data("../../examples/camera.etf"),
    ];
    for format in ["pallas", "paje", "trace"] {
        if let Some(dir) = corpus(format) {
            inputs.extend(accepted_traces(&dir));
        }
    }
    let dir = scratch("pallas-writer-corpus");
    for (i, input) in inputs.iter().enumerate() {
        // Every codec on a few; the default on the rest.
        let codecs: &[&str] = match i % 4 {
            0 => &["none", "zstd", "masking", "zstd-masking"],
            _ => &["zstd"],
        };
        check(python.as_deref(), input, &dir, codecs);
    }
}

/// A random stream: processes of threads (containers), nested frames
/// whose calls repeat (loops, and loops of loops), MPI halves between
/// them (blocking and nonblocking), collectives, counters, events with
/// attributes.
fn generate(seed: u64) -> String {
    let mut g = Rng(seed * 7919 + 1);
    let processes = 1 + g.below(3);
    let threads = 1 + g.below(3);
    let mut rows = Vec::new();
    let mut locs = Vec::new();
    for p in 0..processes {
        let process = format!("rank {p}");
        rows.push(row(&[
            ("kind", "container"),
            ("loc", &process),
            ("cat", "process"),
        ]));
        for t in 0..threads {
            let loc = format!("rank {p}/thread {t}");
            rows.push(row(&[
                ("kind", "container"),
                ("loc", &loc),
                ("cat", "thread"),
                ("peer", &process),
            ]));
            locs.push(loc);
        }
    }
    let names = ["compute", "MPI_Send", "MPI_Recv", "solve", "io"];
    let mut time = 0u64;
    // Each location runs the same kind of program: iterations of a body.
    let iterations = 1 + g.below(30);
    let body: Vec<u64> = (0..1 + g.below(5)).map(|_| g.below(10)).collect();
    for i in 0..iterations {
        for &step in &body {
            for (l, loc) in locs.iter().enumerate() {
                time += 1 + g.below(3);
                let t = time.to_string();
                let peer = &locs[(l + 1) % locs.len()];
                match step {
                    0 | 1 => {
                        let name = names[(step as usize + l) % names.len()];
                        let depth_in = g.below(3);
                        for d in 0..=depth_in {
                            let at = (time + d).to_string();
                            rows.push(row(&[
                                ("kind", "enter"),
                                ("time", &at),
                                ("loc", loc),
                                ("name", name),
                            ]));
                        }
                        time += depth_in + 1;
                        for d in 0..=depth_in {
                            let at = (time + d).to_string();
                            rows.push(row(&[
                                ("kind", "leave"),
                                ("time", &at),
                                ("loc", loc),
                                ("name", name),
                            ]));
                        }
                        time += depth_in + 1;
                    }
                    2 => rows.push(row(&[
                        ("kind", "send"),
                        ("time", &t),
                        ("loc", loc),
                        ("peer", peer),
                        ("comm", "world"),
                        ("tag", &(i % 3).to_string()),
                        ("size", &(64 << g.below(3)).to_string()),
                    ])),
                    3 => rows.push(row(&[
                        ("kind", "recv"),
                        ("time", &t),
                        ("loc", loc),
                        ("peer", peer),
                        ("comm", "world"),
                        ("tag", "7"),
                        ("size", "8"),
                        ("id", &i.to_string()),
                    ])),
                    4 => rows.push(row(&[
                        ("kind", "counter"),
                        ("time", &t),
                        ("loc", loc),
                        ("name", "bytes"),
                        ("value", &g.below(1000).to_string()),
                    ])),
                    5 => rows.push(row(&[
                        ("kind", "event"),
                        ("time", &t),
                        ("loc", loc),
                        ("name", "checkpoint"),
                        ("attrs", &format!("step={i};note=n{}", g.below(3))),
                    ])),
                    6 => {
                        let end = (time + 2).to_string();
                        rows.push(row(&[
                            ("kind", "coll"),
                            ("time", &t),
                            ("end", &end),
                            ("loc", loc),
                            ("name", "BARRIER"),
                            ("comm", "world"),
                            ("size", "0"),
                            ("value", "0"),
                        ]));
                        time += 2;
                    }
                    8 | 9 => {
                        time = blocks(&mut g, (loc, time, step == 8), &mut rows);
                    }
                    _ => {
                        let start = time.saturating_sub(1).to_string();
                        rows.push(row(&[
                            ("kind", "state"),
                            ("time", &start),
                            ("end", &t),
                            ("loc", loc),
                            ("cat", "STATE"),
                            ("name", "busy"),
                        ]));
                    }
                }
            }
        }
    }
    stream(&rows)
}

/// An OpenMP parallel region (`omp`) or a thread team on `loc` from
/// `time`, as the thread model's events: lock, task and request events
/// inside, the fork's `nthreads` given or not, first or not, with other
/// attributes or not, ids that fit the records or not, a closing event
/// of another record or none. Returns the time after it.
fn blocks(g: &mut Rng, (loc, mut time, omp): (&str, u64, bool), rows: &mut Vec<String>) -> u64 {
    let mut at = |g: &mut Rng| {
        time += 1 + g.below(2);
        time.to_string()
    };
    let attrs = |g: &mut Rng, first: &str| match g.below(4) {
        0 => String::new(),
        1 => first.to_string(),
        2 => format!("{first};x=1"),
        _ => format!("x=1;{first}"),
    };
    let (cat, open, close) = match omp {
        true => ("OMP", "OMP_FORK", "OMP_JOIN"),
        false => ("THREAD", "THREAD_TEAM_BEGIN", "THREAD_TEAM_END"),
    };
    let n = ["4", "0", "x", "99999999999"][g.below(4) as usize];
    let first = attrs(g, &format!("nthreads={n}"));
    let t = at(g);
    let begin = [("kind", "event"), ("time", &t), ("loc", loc)];
    rows.push(row(&[
        &begin[..],
        &[("cat", cat), ("name", open), ("attrs", &first)],
    ]
    .concat()));
    let inside: &[(&str, &str)] = match omp {
        true => &[
            ("OMP", "OMP_ACQUIRE_LOCK"),
            ("OMP", "OMP_RELEASE_LOCK"),
            ("OMP", "OMP_TASK_CREATE"),
            ("OMP", "OMP_TASK_COMPLETE"),
            ("MPI", "MPI_ISEND_COMPLETE"),
        ],
        false => &[
            ("THREAD", "THREAD_ACQUIRE_LOCK"),
            ("THREAD", "THREAD_TASK_SWITCH"),
            ("MPI", "MPI_IRECV_REQUEST"),
            ("OMP", "THREAD_RELEASE_LOCK"),
        ],
    };
    for &(cat, name) in inside {
        let id = ["3", "", "5000000000", "07"][g.below(4) as usize];
        let posts = attrs(g, "posts=recv");
        let t = at(g);
        let event = [("kind", "event"), ("time", &t), ("loc", loc), ("id", id)];
        rows.push(row(&[
            &event[..],
            &[("cat", cat), ("name", name), ("attrs", &posts)],
        ]
        .concat()));
    }
    let end = match g.below(4) {
        0 => return time,
        1 => ("THREAD", "THREAD_END"),
        _ => (cat, close),
    };
    let last = attrs(g, "x=2");
    let t = at(g);
    let join = [("kind", "event"), ("time", &t), ("loc", loc)];
    rows.push(row(&[
        &join[..],
        &[("cat", end.0), ("name", end.1), ("attrs", &last)],
    ]
    .concat()));
    time
}

/// Random streams written with `-t pallas` (`TRACEPIPE_PROPERTY_CASES`).
#[test]
fn generated_streams_are_read_back_by_pallas_and_by_tracepipe() {
    let python = python();
    let cases: u64 = std::env::var("TRACEPIPE_PROPERTY_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30);
    let dir = scratch("pallas-writer-generated");
    let codecs = ["none", "zstd", "masking", "zstd-masking"];
    for seed in 0..cases {
        let input = dir.join(format!("seed{seed}.tsv"));
        std::fs::write(&input, generate(seed)).unwrap();
        check(
            python.as_deref(),
            &input,
            &dir,
            &[codecs[seed as usize % 4]],
        );
    }
}

/// The thread file of thread `t` of process `p` in the trace in `dir`.
fn thread_file(dir: &Path, p: u32, t: u32) -> tracepipe::formats::pallas::archive::ThreadFile {
    let path = dir.join(format!("archive_{p}/thread_{t}/thread.pallas"));
    let data = std::fs::read(&path).unwrap();
    tracepipe::formats::pallas::archive::ThreadFile::parse("thread.pallas", &data, 20).unwrap()
}

/// Calls repeated back to back become loops, loops of loops nest, and a
/// thread of a million events stays a grammar of a few tokens.
#[test]
fn repeated_calls_become_loops() {
    let dir = scratch("pallas-writer-loops");
    let mut rows = vec![row(&[
        ("kind", "container"),
        ("loc", "rank 0"),
        ("cat", "process"),
    ])];
    let mut t = 0u64;
    let mut at = |kind: &str, name: &str, rows: &mut Vec<String>| {
        t += 1;
        rows.push(row(&[
            ("kind", kind),
            ("time", &t.to_string()),
            ("loc", "rank 0"),
            ("name", name),
        ]));
    };
    at("enter", "main", &mut rows);
    // 300 iterations of: 10 computes, then a send.
    for _ in 0..300 {
        for _ in 0..10 {
            at("enter", "compute", &mut rows);
            at("leave", "compute", &mut rows);
        }
        at("enter", "MPI_Send", &mut rows);
        at("leave", "MPI_Send", &mut rows);
    }
    at("leave", "main", &mut rows);
    let input = dir.join("loops.tsv");
    std::fs::write(&input, stream(&rows)).unwrap();
    let out = dir.join("loops-pallas");
    write_pallas(&input, &out, &[]).unwrap();
    let thread = thread_file(&out, 0, 0);
    let loops: Vec<(u32, u32)> = thread
        .loops
        .iter()
        .flatten()
        .map(|l| (l.sequence, l.iterations))
        .collect();
    assert!(
        loops.iter().any(|&(_, n)| n == 300),
        "no loop of 300: {loops:?}"
    );
    assert!(
        loops.iter().any(|&(_, n)| n == 10),
        "no loop of 10: {loops:?}"
    );
    // The outer loop's body holds the inner loop.
    let (outer, _) = loops.iter().find(|&&(_, n)| n == 300).unwrap();
    let body = thread.sequences[*outer as usize].as_ref().unwrap();
    assert!(
        body.iter().any(|&tok| tok & 3 == 3),
        "the outer body holds no loop: {body:?}"
    );
    assert!(
        thread.sequences.len() < 10,
        "{} sequences",
        thread.sequences.len()
    );
    assert_eq!(thread.events.len(), 6, "distinct events");
    // And every time reads back.
    let back = cat(&["-q"], &out).unwrap();
    let original = cat(&["-q"], &input).unwrap();
    assert_eq!(rows_by_location(&back), rows_by_location(&original));
    if let Some(python) = python() {
        assert_eq!(pallas_events(&python, &out), expected_events(&original));
    }
}

/// A name ending in `/`, or an existing folder, names the trace's folder:
/// the writer writes inside it and nothing beside it.
#[test]
fn a_folder_named_with_a_slash_or_existing_holds_the_whole_trace() {
    let dir = scratch("pallas-writer-folders");
    let ping = data("../../examples/pingpong.tsv");
    std::fs::create_dir_all(dir.join("there.pallas")).unwrap();
    for name in ["new.pallas/", "there.pallas", "plain"] {
        bin("trace-cat")
            .current_dir(&dir)
            .arg(&ping)
            .args(["-t", "pallas", "-o", name])
            .assert()
            .success();
        let folder = dir.join(name.trim_end_matches('/'));
        assert!(folder.join("main.pallas").is_file(), "{name}");
        assert!(folder.join("archive_0").is_dir(), "{name}");
        let back = cat(&[], &folder).unwrap();
        assert!(back.lines().any(|l| l.starts_with("enter\t")), "{name}");
    }
    let mut beside: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    beside.sort();
    assert_eq!(beside, ["new.pallas", "plain", "there.pallas"]);
}

/// The writer's memory does not grow by a ZSTD context per thread: 10,000
/// threads of one event each are written in 256 MiB of address space
/// (they once took 490 MB) and read back.
#[test]
fn many_threads_are_written_in_little_memory() {
    let dir = scratch("pallas-many-threads");
    let mut rows: Vec<String> = (0..10_000)
        .map(|t| {
            row(&[
                ("kind", "container"),
                ("loc", &format!("t{t}")),
                ("cat", "thread"),
            ])
        })
        .collect();
    for t in 0..10_000 {
        let (time, loc) = ((t + 1).to_string(), format!("t{t}"));
        rows.push(row(&[
            ("kind", "event"),
            ("time", &time),
            ("loc", &loc),
            ("name", "e"),
        ]));
    }
    let input = dir.join("threads.tsv");
    std::fs::write(&input, stream(&rows)).unwrap();
    let out = dir.join("out/");
    let args: [&OsStr; 6] = [
        "-q".as_ref(),
        input.as_ref(),
        "-t".as_ref(),
        "pallas".as_ref(),
        "-o".as_ref(),
        out.as_ref(),
    ];
    if let Err(e) = common::run_in_memory("trace-cat", 256, &args) {
        panic!("{e}");
    }
    let back = cat(&["-q"], &out).unwrap();
    assert_eq!(
        back.lines().filter(|l| l.starts_with("event\t")).count(),
        10_000
    );
}
