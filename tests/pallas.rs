//! Pallas: agreement with the upstream print tool over the corpus, the
//! project's own archives (every codec and ABI branch), and corrupt input.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::*;
use predicates::prelude::*;
use serde_json::Value;
use tracepipe::formats::pallas::archive::{ArchiveFile, BlockCompression, Encoding, MainFile};
use tracepipe::formats::pallas::writer::{
    event_token, loop_token, sequence_token, ArchiveSpec, Defs, EventSpec, ThreadSpec, TraceSpec,
};

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn int(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

fn attr<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get("attrs")
        .and_then(|a| a.get(k))
        .and_then(Value::as_str)
}

/// The rank a row's peer stands for: its `rank` attribute when the reader
/// kept one (a thread, or a process of another number), else the number of
/// the process it names (`P3` → 3).
fn rank(v: &Value) -> &str {
    attr(v, "rank").unwrap_or_else(|| s(v, "peer").strip_prefix('P').unwrap_or("4294967295"))
}

/// The time upstream shows: the decoded value, which the stream keeps in
/// `raw_time`/`raw_end` where it had to raise it to keep time order.
fn shown(v: &Value, column: &str, raw: &str) -> u64 {
    attr(v, raw)
        .map(|t| t.parse().unwrap())
        .unwrap_or_else(|| int(v, column))
}

/// `pallas_print`'s event text for a row, as (time, text) lines.
fn render(v: &Value, with_attrs: bool) -> Vec<(u64, String)> {
    let name = s(v, "name");
    let id = s(v, "id");
    let time = shown(v, "time", "raw_time");
    let text = match (s(v, "kind"), s(v, "cat")) {
        ("enter", "") => format!("Enter ({name})"),
        ("leave", "") => format!("Leave ({name})"),
        ("send" | "recv", _) => {
            let peer = if s(v, "kind") == "send" {
                "dest"
            } else {
                "src"
            };
            let mut t = format!(
                "{name}({peer}={}, comm={}, tag={}, len={}",
                rank(v),
                s(v, "comm"),
                int(v, "tag"),
                int(v, "size")
            );
            match name {
                "MPI_ISEND" => t.push_str(&format!(", req={id})")),
                // Upstream prints the tag twice and never the request.
                "MPI_IRECV" => t.push_str(&format!(", tag={})", int(v, "tag"))),
                _ => t.push(')'),
            }
            t
        }
        ("coll", _) => {
            let op = tracepipe::formats::pallas::collective_op(name).unwrap();
            let value = match v.get("value") {
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            };
            return vec![
                (time, "MPI_COLLECTIVE_BEGIN()".to_string()),
                (
                    shown(v, "end", "raw_end"),
                    format!(
                        "MPI_COLLECTIVE_END(op={op}, comm={}, root={}, sent={}, recv={value})",
                        s(v, "comm"),
                        rank(v),
                        int(v, "size")
                    ),
                ),
            ];
        }
        ("event", "MPI") => format!("{name}(req={id})"),
        // The thread model's records are events, not frames.
        ("event", "OMP") if name == "OMP_FORK" => {
            format!("OMP_FORK(nThreads={})", attr(v, "nthreads").unwrap())
        }
        ("event", "THREAD") if name == "THREAD_FORK" => {
            format!("THREAD_FORK(nThreads= {})", attr(v, "nthreads").unwrap())
        }
        ("event", "THREAD") if name == "THREAD_JOIN" => name.to_string(),
        ("event", "OMP") if name == "OMP_JOIN" => format!("{name}()"),
        ("event", "OMP" | "THREAD") if name.ends_with("_LOCK") => format!("{name}(lockID={id})"),
        ("event", "OMP") => format!("{name}(taskID={id})"),
        ("event", "THREAD") => format!("{name}()"),
        ("event", _) => name.to_string(),
        (k, _) => panic!("unexpected row kind {k}: {v}"),
    };
    let mut text = text;
    if with_attrs {
        if let Some(a) = v.get("attrs").and_then(Value::as_object) {
            let items: Vec<String> = a
                .iter()
                .filter(|(k, _)| {
                    !["thread", "record", "nthreads", "raw_time", "rank", "posts"]
                        .contains(&k.as_str())
                })
                .map(|(k, val)| format!("{k}: {}", val.as_str().unwrap()))
                .collect();
            if !items.is_empty() {
                text.push_str(&format!(" {{ {} }}", items.join(", ")));
            }
        }
    }
    vec![(time, text)]
}

/// Our rows as per-thread `pallas_print -T` blocks, threads in container order.
fn per_thread(rows: &[Value], with_attrs: bool) -> Vec<Vec<String>> {
    let mut order = Vec::new();
    // Per thread: (stream time, shown time, text).
    let mut lines: HashMap<String, Vec<(u64, u64, String)>> = HashMap::new();
    for v in rows {
        match s(v, "kind") {
            "meta" => continue,
            "container" if s(v, "cat") == "thread" => {
                order.push(s(v, "loc").to_string());
                continue;
            }
            "container" => continue,
            _ => {}
        }
        if s(v, "flags").contains('S') {
            continue; // frames closed at the end of the thread by the reader
        }
        let thread = attr(v, "thread").unwrap_or(s(v, "loc")).to_string();
        let l = lines.entry(thread).or_default();
        let mut rendered = render(v, with_attrs);
        if rendered.len() == 2 {
            // A collective is written at its end: its begin line goes after
            // the thread's rows that happened before it (stream times).
            let begin = int(v, "time");
            let at = l.iter().rposition(|x| x.0 <= begin).map_or(0, |i| i + 1);
            let (shown, text) = rendered.remove(0);
            l.insert(at, (begin, shown, text));
        }
        let (shown, text) = rendered.remove(0);
        l.push((int(v, "end").max(int(v, "time")), shown, text));
    }
    order
        .iter()
        .map(|t| {
            lines
                .remove(t)
                .unwrap_or_default()
                .into_iter()
                .map(|(_, time, text)| format!("{:21.9}    {text}", time as f64 / 1e9))
                .collect()
        })
        .collect()
}

/// The expected `-T` output split into threads, region numbers and attribute
/// refs (which the stream does not carry) taken out.
fn expected_threads(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let region = regex::Regex::new(r"    (Enter|Leave) \d+ \(").unwrap();
    let attr_ref = regex::Regex::new(r" <\d+>:").unwrap();
    let mut threads: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        if line.trim() == "Timestamp" {
            threads.push(Vec::new());
            continue;
        }
        let line = region.replace(line, "    $1 (");
        let line = attr_ref.replace_all(&line, ":");
        threads.last_mut().unwrap().push(line.into_owned());
    }
    threads
}

fn check_against(trace: &Path, expected: &Path, with_attrs: bool) {
    let ours = per_thread(&json_rows(trace), with_attrs);
    let theirs = expected_threads(expected);
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{}: thread count",
        trace.display()
    );
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            a.len(),
            b.len(),
            "{} thread {i}: event count",
            trace.display()
        );
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            assert_eq!(x, y, "{} thread {i} event {k}", trace.display());
        }
    }
}

#[test]
fn corpus_threads_equal_the_upstream_print_output() {
    let Some(dir) = corpus("pallas") else { return };
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let trace = entry.unwrap().path();
        let name = trace.file_name().unwrap().to_str().unwrap().to_string();
        if !trace.is_dir() || name == "expected" {
            continue;
        }
        if name == "zfp_lossy" && !cfg!(feature = "zfp") {
            bin("trace-cat")
                .arg(&trace)
                .assert()
                .failure()
                .stderr(predicate::str::contains("ZFP blocks need libzfp"));
            continue;
        }
        let attrs = dir.join(format!("expected/{name}.attrs.txt"));
        if attrs.exists() {
            check_against(&trace, &attrs, true);
        } else {
            check_against(&trace, &dir.join(format!("expected/{name}.txt")), false);
        }
        // The output is a valid stream: the stream reader checks order and
        // declarations.
        let stream = stream_of(&[], &trace);
        let again = bin("trace-cat")
            .write_stdin(stream.clone())
            .assert()
            .success();
        assert_eq!(String::from_utf8_lossy(&again.get_output().stdout), stream);
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} corpus traces found");
}

// ---------------------------------------------------------------------------
// The project's own archives, written byte by byte by `pallas::writer`.

const U32_MAX: u32 = u32::MAX;

fn event(record: u32, fields: &[(u64, usize)]) -> Option<EventSpec> {
    Some(EventSpec::new(record, fields))
}

/// Expands a grammar the simple recursive way: the logical event ids in order.
fn expand(t: &ThreadSpec, tok: u32, out: &mut Vec<usize>) {
    let phys = |map: usize, id: u32| -> usize {
        match &t.maps {
            Some(m) => m[map][id as usize] as usize,
            None => id as usize,
        }
    };
    let id = tok >> 2;
    match tok & 3 {
        1 => out.push(phys(0, id)),
        2 => {
            for &x in t.sequences[phys(1, id)].as_ref().unwrap() {
                expand(t, x, out);
            }
        }
        3 => {
            let (body, n) = t.loops[phys(2, id)].unwrap();
            for _ in 0..n {
                expand(t, body, out);
            }
        }
        _ => unreachable!(),
    }
}

/// Gives every occurrence a timestamp (`base + 7k`) in expansion order and
/// returns the (time, physical event slot) sequence.
fn stamp(t: &mut ThreadSpec, base: u64) -> Vec<(u64, usize)> {
    let mut order = Vec::new();
    expand(t, sequence_token(t.root), &mut order);
    let mut out = Vec::new();
    for (k, slot) in order.into_iter().enumerate() {
        let time = base + 7 * k as u64;
        t.events[slot].as_mut().unwrap().timestamps.push(time);
        out.push((time, slot));
    }
    out
}

/// What each event slot of the sample threads becomes: (kind, name).
fn sample_threads(abi: u8) -> (Vec<ThreadSpec>, ThreadSpec) {
    // Thread 0: main { 1500 × compute { tick, send } , collective } with
    // sparse attributes on `compute`, a dead event slot and, for ABI 20,
    // logical ids remapped through the maps.
    let mut enter_compute = event(2, &[(2, 4)]).unwrap();
    enter_compute.attributes = vec![
        (
            0,
            vec![
                (0, 42u64.to_le_bytes().to_vec()),
                (1, 9u32.to_le_bytes().to_vec()),
            ],
        ),
        (3, vec![(2, 0.25f64.to_le_bytes().to_vec())]),
        (7, vec![(3, (-5i32).to_le_bytes().to_vec())]),
    ];
    let mut events = vec![
        event(2, &[(1, 4)]),
        event(3, &[(1, 4)]),
        Some(enter_compute),
        event(3, &[(2, 4)]),
        event(58, &[(4, 4)]),
        event(4, &[(1, 4), (0, 4), (7, 4), (64, 8)]),
        event(12, &[]),
        event(13, &[(11, 4), (0, 4), (U32_MAX as u64, 4), (8, 8), (16, 8)]),
    ];
    let mut sequences = vec![
        Some(vec![
            event_token(0),
            loop_token(0),
            event_token(6),
            event_token(7),
            event_token(1),
        ]),
        Some(vec![
            event_token(2),
            event_token(4),
            event_token(5),
            event_token(3),
        ]),
    ];
    let mut loops = vec![Some((sequence_token(1), 1500))];
    let mut maps = None;
    if abi >= 20 {
        // Dead slots first; logical ids go through the maps.
        events.insert(0, None);
        sequences.insert(0, None);
        loops.insert(0, None);
        let shift = |n: usize| (1..=n as u32).collect::<Vec<u32>>();
        let mut loop_map = shift(1);
        loop_map.push(U32_MAX);
        maps = Some([shift(8), shift(2), loop_map]);
    }
    let t0 = ThreadSpec {
        id: 0,
        name: 10,
        events,
        sequences,
        loops,
        maps,
        root: 0,
    };
    // Thread 1: OpenMP and thread records, a buffer flush, a receive.
    let t1 = ThreadSpec {
        id: 1,
        name: 11,
        events: vec![
            event(35, &[]),
            event(37, &[]),
            event(14, &[(4, 4)]),
            event(15, &[]),
            event(16, &[(3, 4)]),
            event(17, &[(3, 4)]),
            event(18, &[(9, 8)]),
            event(59, &[]),
            event(8, &[(1, 4), (0, 4), (5, 4), (32, 8)]),
            event(5, &[(1, 4), (0, 4), (6, 4), (16, 8), (77, 8)]),
            event(6, &[(77, 8)]),
        ],
        sequences: vec![
            Some(vec![
                event_token(0),
                loop_token(0),
                event_token(7),
                event_token(1),
            ]),
            // fork, lock, unlock, task, recv, isend, complete, join
            Some([2, 4, 5, 6, 8, 9, 10, 3].map(event_token).to_vec()),
        ],
        loops: vec![Some((sequence_token(1), 3))],
        maps: None,
        root: 0,
    };
    // Thread 2 (process 1, listed in the main file): 1500 receives.
    let t2 = ThreadSpec {
        id: 2,
        name: 10,
        events: vec![event(8, &[(0, 4), (0, 4), (7, 4), (64, 8)])],
        sequences: vec![Some(vec![loop_token(0)]), Some(vec![event_token(0)])],
        loops: vec![Some((sequence_token(1), 1500))],
        maps: None,
        root: 0,
    };
    (vec![t0, t1], t2)
}

/// A two-process sample trace of `abi` with the given codec, and per thread
/// the (time, physical slot) of every occurrence.
fn sample(
    abi: u8,
    compression: BlockCompression,
    encoding: Encoding,
) -> (TraceSpec, Vec<Vec<(u64, usize)>>) {
    let (mut p0, mut t2) = sample_threads(abi);
    // Beyond 2^53 to show times stay exact (not for lossy codecs, whose
    // arithmetic is in doubles upstream too).
    let base = if compression.is_lossy() {
        1000
    } else {
        (1u64 << 60) + 1
    };
    let mut stamps = Vec::new();
    for t in p0.iter_mut() {
        stamps.push(stamp(t, base));
    }
    stamps.push(stamp(&mut t2, base + 3));
    let mut trace = TraceSpec::new(compression, encoding);
    trace.abi = abi;
    trace.defs = Defs {
        strings: [
            (0, "rank_0"),
            (1, "rank_1"),
            (2, "main"),
            (3, "compute"),
            (4, "tick"),
            (5, "iteration"),
            (6, "label"),
            (7, "ratio"),
            (8, "delta"),
            (9, "hello; world=1%"),
            (10, "global thread name"),
        ]
        .into_iter()
        .map(|(r, s)| (r, s.to_string()))
        .collect(),
        regions: vec![(1, 2), (2, 3)],
        attributes: vec![(0, 5, 4), (1, 6, 11), (2, 7, 10), (3, 8, 7)],
        groups: vec![(0, 0, vec![0, 1])],
        comms: vec![(0, 0, 0, U32_MAX)],
    };
    trace.metadata = vec![("tool".into(), "tests".into())];
    trace.archives = vec![
        ArchiveSpec {
            id: 0,
            name: 0,
            defs: Defs {
                strings: vec![(10, "worker zero".into()), (11, "worker one".into())],
                ..Defs::default()
            },
            metadata: vec![("rank".into(), "0".into())],
            threads: p0,
            locations_in_main: false,
        },
        ArchiveSpec {
            id: 1,
            name: 1,
            threads: vec![t2],
            locations_in_main: true,
            ..ArchiveSpec::default()
        },
    ];
    (trace, stamps)
}

/// (kind, name) of each event slot of each sample thread, as the stream
/// should show it (slots as written, dead ones included).
fn slot_meaning(abi: u8, thread: usize, slot: usize) -> (&'static str, &'static str) {
    let slot = if thread == 0 && abi >= 20 {
        slot - 1
    } else {
        slot
    };
    match (thread, slot) {
        (0, 0) => ("enter", "main"),
        (0, 1) => ("leave", "main"),
        (0, 2) => ("enter", "compute"),
        (0, 3) => ("leave", "compute"),
        (0, 4) => ("event", "tick"),
        (0, 5) => ("send", "MPI_SEND"),
        (0, 6) => ("coll-begin", ""),
        (0, 7) => ("coll", "ALLREDUCE"),
        (1, 0) => ("event", "THREAD_BEGIN"),
        (1, 1) => ("event", "THREAD_END"),
        (1, 2) => ("event", "OMP_FORK"),
        (1, 3) => ("event", "OMP_JOIN"),
        (1, 4) => ("event", "OMP_ACQUIRE_LOCK"),
        (1, 5) => ("event", "OMP_RELEASE_LOCK"),
        (1, 6) => ("event", "OMP_TASK_CREATE"),
        (1, 7) => ("event", "BUFFER_FLUSH"),
        (1, 8) => ("recv", "MPI_RECV"),
        (1, 9) => ("send", "MPI_ISEND"),
        (1, 10) => ("event", "MPI_ISEND_COMPLETE"),
        (2, 0) => ("recv", "MPI_RECV"),
        _ => unreachable!(),
    }
}

fn check_sample(abi: u8, compression: BlockCompression, encoding: Encoding) {
    let dir = scratch(&format!(
        "pallas-{abi}-{}-{}",
        compression.name(),
        encoding.name()
    ));
    let (trace, stamps) = sample(abi, compression, encoding);
    trace.write(&dir).unwrap();
    let rows = json_rows(&dir);
    let what = format!("ABI {abi}, {} + {}", compression.name(), encoding.name());
    // Declarations: processes and threads with names looked up archive first.
    let containers: Vec<(String, String, String)> = rows
        .iter()
        .filter(|v| s(v, "kind") == "container")
        .map(|v| (s(v, "loc").into(), s(v, "name").into(), s(v, "peer").into()))
        .collect();
    let c = |a: &str, b: &str, p: &str| (a.to_string(), b.to_string(), p.to_string());
    assert_eq!(
        containers,
        [
            c("P0", "rank_0", ""),
            c("P0T0", "worker zero", "P0"),
            c("P0T1", "worker one", "P0"),
            c("P1", "rank_1", ""),
            c("P1T2", "global thread name", "P1"),
        ],
        "{what}"
    );
    let metas: Vec<String> = rows
        .iter()
        .filter(|v| s(v, "kind") == "meta")
        .map(|v| format!("{}={}", s(v, "name"), v["value"]))
        .collect();
    assert!(
        metas.contains(&format!("pallas.abi={abi}")),
        "{what}: {metas:?}"
    );
    if abi >= 17 {
        assert!(
            metas.contains(&"pallas.meta.tool=\"tests\"".to_string()),
            "{what}"
        );
    }
    // Events: per thread, in order, with the times written.
    let lossy = compression.is_lossy();
    for (t, expected) in stamps.iter().enumerate() {
        let loc = ["P0T0", "P0T1", "P1T2"][t];
        let ours: Vec<&Value> = rows
            .iter()
            .filter(|v| attr(v, "thread").unwrap_or(s(v, "loc")) == loc)
            .filter(|v| s(v, "kind") != "container")
            .collect();
        let mut want = Vec::new();
        for &(time, slot) in expected {
            match slot_meaning(abi, t, slot) {
                ("coll-begin", _) => {}
                ("coll", name) => want.push((time - 7, "coll", name)),
                (kind, name) => want.push((time, kind, name)),
            }
        }
        assert_eq!(ours.len(), want.len(), "{what}: rows of {loc}");
        for (k, (v, (time, kind, name))) in ours.iter().zip(&want).enumerate() {
            assert_eq!(
                (s(v, "kind"), s(v, "name")),
                (*kind, *name),
                "{what}: {loc} row {k}"
            );
            let got = shown(v, "time", "raw_time");
            if lossy {
                // A block spans at most 1000 × 28 ns here: 255 bins of 110 ns.
                assert!(
                    got.abs_diff(*time) <= 128,
                    "{what}: {loc} row {k}: {got} vs {time}"
                );
                assert!(
                    s(v, "flags").contains('E'),
                    "{what}: lossy rows are flagged"
                );
            } else {
                assert_eq!(got, *time, "{what}: {loc} row {k}");
            }
        }
    }
    // Attributes attach to the right occurrences of `compute`, gaps skipped.
    let computes: Vec<&Value> = rows
        .iter()
        .filter(|v| s(v, "kind") == "enter" && s(v, "name") == "compute")
        .collect();
    let attrs = |k: usize| {
        let mut a = computes[k].get("attrs").cloned().unwrap_or(Value::Null);
        if let Some(o) = a.as_object_mut() {
            o.remove("raw_time");
            if o.is_empty() {
                return Value::Null;
            }
        }
        a
    };
    assert_eq!(
        attrs(0),
        serde_json::json!({"iteration": "42", "label": "hello; world=1%"})
    );
    assert_eq!(attrs(3), serde_json::json!({"ratio": "0.25"}));
    assert_eq!(attrs(7), serde_json::json!({"delta": "-5"}));
    assert_eq!(attrs(1), Value::Null);
    assert_eq!(computes.len(), 1500);
    // Message fields.
    let send = rows.iter().find(|v| s(v, "name") == "MPI_SEND").unwrap();
    assert_eq!(
        (
            s(send, "loc"),
            s(send, "peer"),
            s(send, "comm"),
            int(send, "tag"),
            int(send, "size")
        ),
        ("P0", "P1", "0", 7, 64)
    );
    let isend = rows.iter().find(|v| s(v, "name") == "MPI_ISEND").unwrap();
    assert_eq!(s(isend, "id"), "77");
    let coll = rows.iter().find(|v| s(v, "kind") == "coll").unwrap();
    assert_eq!(
        (s(coll, "peer"), int(coll, "size"), &coll["value"]),
        ("", 8, &serde_json::json!(16))
    );
    // The whole output is a valid stream.
    let stream = stream_of(&[], &dir);
    bin("trace-cat").write_stdin(stream).assert().success();
}

/// ABI 21 (Pallas 0.21) lays files out as 20 does; a trace of each ABI
/// reads the same.
#[test]
fn every_abi_reads_the_same_trace() {
    for abi in 16..=21 {
        check_sample(abi, BlockCompression::Zstd, Encoding::None);
    }
}

#[test]
fn every_codec_reads_the_same_trace() {
    for (c, e) in [
        (BlockCompression::None, Encoding::None),
        (BlockCompression::None, Encoding::Masking),
        (BlockCompression::Zstd, Encoding::Masking),
        (BlockCompression::Histogram, Encoding::None),
        (BlockCompression::ZstdHistogram, Encoding::None),
    ] {
        check_sample(20, c, e);
    }
    if cfg!(feature = "zfp") {
        check_sample(20, BlockCompression::Zfp, Encoding::None);
    }
}

// ---------------------------------------------------------------------------
// Bad input: every error names the file and the byte offset.

/// Writes the ABI-20 zstd sample, lets `damage` change it, and returns
/// trace-cat's stderr after asserting it failed.
fn fails_with(test: &str, damage: impl FnOnce(&Path)) -> String {
    let dir = scratch(test);
    let (trace, _) = sample(20, BlockCompression::Zstd, Encoding::None);
    trace.write(&dir).unwrap();
    damage(&dir);
    let out = bin("trace-cat").arg(&dir).assert().failure().code(1);
    let out = out.get_output();
    assert!(out.stdout.is_empty() || !String::from_utf8_lossy(&out.stdout).contains("\nenter"));
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err, stderr_of_failure(&dir), "one thread and two disagree");
    err
}

fn patch(file: &Path, offset: usize, bytes: &[u8]) {
    let mut data = std::fs::read(file).unwrap();
    data[offset..offset + bytes.len()].copy_from_slice(bytes);
    std::fs::write(file, data).unwrap();
}

fn truncate(file: &Path, keep: usize) {
    let data = std::fs::read(file).unwrap();
    std::fs::write(file, &data[..keep]).unwrap();
}

const THREAD0: &str = "archive_0/thread_0/thread.pallas";
const DAT0: &str = "archive_0/thread_0/event_durations.dat";

/// A trace's files are read whole or by offset: a FIFO (which would block)
/// or a link to a device (which never ends) is refused at once, naming it.
#[test]
fn files_that_are_not_regular_are_refused() {
    let fifo = |p: &Path| {
        std::fs::remove_file(p).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap();
        assert!(made.success());
    };
    let zero = |p: &Path| {
        std::fs::remove_file(p).unwrap();
        std::os::unix::fs::symlink("/dev/zero", p).unwrap();
    };
    type Damage<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, &str, Damage); 3] = [
        ("pallas-zero-thread", THREAD0, &zero),
        ("pallas-fifo-dat", DAT0, &fifo),
        ("pallas-zero-archive", "archive_0/archive.pallas", &zero),
    ];
    for (test, part, damage) in cases {
        let dir = scratch(test);
        let (trace, _) = sample(20, BlockCompression::Zstd, Encoding::None);
        trace.write(&dir).unwrap();
        damage(&dir.join(part));
        let out = bin("trace-cat")
            .arg(&dir)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{test}: {err}");
        assert!(
            err.contains(&format!("{part}: not a regular file")),
            "{test}: {err}"
        );
    }
}

#[test]
fn unknown_abi_is_rejected() {
    let err = fails_with("pallas-abi", |d| patch(&d.join("main.pallas"), 0, &[15]));
    assert!(
        err.contains("main.pallas: byte 0: unsupported Pallas ABI 15"),
        "{err}"
    );
}

#[test]
fn a_count_beyond_the_file_is_an_error_not_an_allocation() {
    // The string count right after the 33-byte parameter block.
    let err = fails_with("pallas-count", |d| {
        patch(&d.join("main.pallas"), 33, &u64::MAX.to_le_bytes())
    });
    assert!(
        err.contains("main.pallas: byte 33: number of strings is 18446744073709551615, more than"),
        "{err}"
    );
}

#[test]
fn truncated_thread_file_names_the_offset() {
    let err = fails_with("pallas-truncated", |d| {
        let f = d.join(THREAD0);
        let len = std::fs::metadata(&f).unwrap().len() as usize;
        truncate(&f, len - 3);
    });
    assert!(err.contains("thread_0/thread.pallas: byte "), "{err}");
    assert!(
        err.contains("loop map is 2, more than the 5 bytes left in the file can hold"),
        "{err}"
    );
    let err = fails_with("pallas-truncated-mid", |d| truncate(&d.join(THREAD0), 400));
    assert!(err.contains("thread_0/thread.pallas: byte "), "{err}");
    assert!(err.contains("left in the file"), "{err}");
}

#[test]
fn trailing_bytes_are_an_error() {
    let err = fails_with("pallas-trailing", |d| {
        let f = d.join("main.pallas");
        let mut data = std::fs::read(&f).unwrap();
        data.push(0);
        std::fs::write(&f, data).unwrap();
    });
    assert!(
        err.contains("1 unexpected bytes after the main archive"),
        "{err}"
    );
}

#[test]
fn corrupt_zstd_frame_is_located() {
    let err = fails_with("pallas-zstd", |d| patch(&d.join(DAT0), 8, b"garbage!"));
    assert!(
        err.contains("event_durations.dat: byte 0: ZSTD frame error"),
        "{err}"
    );
}

#[test]
fn block_length_beyond_the_file_is_located() {
    let err = fails_with("pallas-block", |d| {
        patch(&d.join(DAT0), 0, &u64::MAX.to_le_bytes())
    });
    assert!(
        err.contains(
            "event_durations.dat: byte 0: block length 18446744073709551615 is larger than"
        ),
        "{err}"
    );
    let err = fails_with("pallas-dat-short", |d| truncate(&d.join(DAT0), 4));
    assert!(
        err.contains(
            "event_durations.dat: byte 0: block offset beyond the end of the file (4 bytes)"
        ),
        "{err}"
    );
}

/// A one-thread trace with the given thread, for grammar errors.
fn single_thread(test: &str, thread: ThreadSpec, compression: BlockCompression) -> PathBuf {
    let dir = scratch(test);
    let mut trace = TraceSpec::new(compression, Encoding::None);
    trace.defs.strings = vec![(0, "p".into()), (1, "f".into())];
    trace.defs.regions = vec![(1, 1)];
    trace.archives = vec![ArchiveSpec {
        threads: vec![thread],
        ..ArchiveSpec::default()
    }];
    trace.write(&dir).unwrap();
    dir
}

fn one_event_thread(
    record: u32,
    payload: Vec<u8>,
    tokens: Vec<u32>,
    stamps: Vec<u64>,
) -> ThreadSpec {
    ThreadSpec {
        events: vec![Some(EventSpec {
            record,
            payload,
            timestamps: stamps,
            ..EventSpec::default()
        })],
        sequences: vec![Some(tokens)],
        ..ThreadSpec::default()
    }
}

/// trace-cat's stderr on `dir`, asserting it failed the same way with the
/// threads expanded on 1, 2, 3 and 8 threads.
fn stderr_of_failure(dir: &Path) -> String {
    let [one, two, three, eight] = ["1", "2", "3", "8"].map(|threads| {
        let out = bin("trace-cat")
            .args(["--threads", threads])
            .arg(dir)
            .assert()
            .failure()
            .code(1);
        String::from_utf8(out.get_output().stderr.clone()).unwrap()
    });
    for (n, many) in [(2, &two), (3, &three), (8, &eight)] {
        assert_eq!(&one, many, "one thread and {n} disagree");
    }
    one
}

/// The threads expanded on helper threads and merged (`--threads N`) give
/// the bytes one thread gives: as TSV (lines encoded by the helpers) and as
/// JSON Lines (rows handed over whole).
#[test]
fn any_number_of_threads_gives_the_bytes_of_one() {
    for (abi, compression) in [(20, BlockCompression::Zstd), (16, BlockCompression::None)] {
        let dir = scratch(&format!("pallas-threads-{abi}"));
        let (trace, _) = sample(abi, compression, Encoding::None);
        trace.write(&dir).unwrap();
        for args in [vec![], vec!["--json"], vec!["-k", "enter,leave"]] {
            let cmd = if args.first() == Some(&"-k") {
                "trace-filter"
            } else {
                "trace-cat"
            };
            let [one, two, three, eight] = ["1", "2", "3", "8"].map(|threads| {
                let out = bin(cmd)
                    .args(&args)
                    .args(["--threads", threads])
                    .arg(&dir)
                    .assert();
                out.success().get_output().stdout.clone()
            });
            assert!(one.len() > 500, "{cmd} {args:?}");
            for (n, many) in [(2, &two), (3, &three), (8, &eight)] {
                assert_eq!(
                    String::from_utf8_lossy(&one),
                    String::from_utf8_lossy(many),
                    "{cmd} {args:?} abi {abi}, {n} threads"
                );
            }
        }
    }
}

#[test]
fn bad_tokens_and_missing_definitions_are_located() {
    let generic = 1u32.to_le_bytes().to_vec();
    // (scratch name, record, payload, root tokens, timestamps, expected message)
    let cases = [
        (
            "pallas-token",
            58,
            generic.clone(),
            vec![event_token(0), 0xFFFF_FFFC],
            "invalid token 0xfffffffc",
        ),
        (
            "pallas-undef-event",
            58,
            generic.clone(),
            vec![event_token(3)],
            "token names undefined event 3",
        ),
        (
            "pallas-undef-loop",
            58,
            generic.clone(),
            vec![loop_token(0)],
            "token names undefined loop 0",
        ),
        (
            "pallas-undef-string",
            58,
            9u32.to_le_bytes().to_vec(),
            vec![event_token(0)],
            "GENERIC event names undefined string 9",
        ),
        (
            "pallas-few-stamps",
            58,
            generic.clone(),
            vec![event_token(0), event_token(0)],
            "event occurs more often than its 1 timestamps",
        ),
        (
            "pallas-short-payload",
            4,
            vec![1, 0],
            vec![event_token(0)],
            "MPI_SEND payload of 2 bytes is too short",
        ),
        // A sequence that contains itself.
        (
            "pallas-cycle",
            58,
            generic.clone(),
            vec![sequence_token(0)],
            "grammar nests deeper than 4096",
        ),
    ];
    for (name, record, payload, tokens, expected) in cases {
        let t = one_event_thread(record, payload, tokens, vec![5]);
        let err = stderr_of_failure(&single_thread(name, t, BlockCompression::None));
        assert!(
            err.contains("thread_0/thread.pallas: byte "),
            "{name}: {err}"
        );
        assert!(err.contains(expected), "{name}: {err}");
    }

    // Loops that repeat only an empty loop: no event for billions of steps.
    let mut t = one_event_thread(
        58,
        1u32.to_le_bytes().to_vec(),
        vec![loop_token(0), event_token(0)],
        vec![5],
    );
    t.sequences.push(Some(vec![loop_token(1)]));
    t.sequences.push(Some(vec![loop_token(2)]));
    t.sequences.push(Some(vec![event_token(0)]));
    t.loops = vec![
        Some((sequence_token(1), u32::MAX)),
        Some((sequence_token(2), u32::MAX)),
        Some((sequence_token(3), 0)),
    ];
    let err = stderr_of_failure(&single_thread("pallas-idle", t, BlockCompression::None));
    assert!(err.contains("loops that repeat nothing"), "{err}");
}

#[test]
fn unsupported_codecs_and_missing_files_are_named() {
    let t = one_event_thread(
        58,
        1u32.to_le_bytes().to_vec(),
        vec![event_token(0)],
        vec![5],
    );
    let dir = single_thread("pallas-sz", t, BlockCompression::None);
    patch(&dir.join("main.pallas"), 1, &3u32.to_le_bytes());
    let err = stderr_of_failure(&dir);
    assert!(
        err.contains("event_durations.dat: byte 0: unsupported codec SZ"),
        "{err}"
    );

    let (trace, _) = sample(20, BlockCompression::None, Encoding::None);
    let dir = scratch("pallas-missing");
    trace.write(&dir).unwrap();
    std::fs::remove_file(dir.join(THREAD0)).unwrap();
    let err = stderr_of_failure(&dir);
    assert!(err.contains("thread_0/thread.pallas"), "{err}");
}

#[test]
fn a_bad_thread_reference_is_located_where_it_is_made() {
    // A corrupt location id sends the reader to a thread folder that does not
    // exist: the error names the entry that refers to it, not only the path.
    let (trace, _) = sample(20, BlockCompression::None, Encoding::None);
    let dir = scratch("pallas-bad-reference");
    trace.write(&dir).unwrap();
    let archive = dir.join("archive_0/archive.pallas");
    let bytes = std::fs::read(&archive).unwrap();
    let parsed = ArchiveFile::parse("archive", &bytes, trace.abi).unwrap();
    let entry = parsed.data.locations[0];
    patch(&archive, entry.at, &77u32.to_le_bytes());
    let err = stderr_of_failure(&dir);
    let want = format!(
        "archive_0/archive.pallas: byte {}: location 77 of group 0 has no thread file",
        entry.at
    );
    assert!(err.contains(&want), "{err}");

    // A location group whose archive and threads are all missing is reported
    // at its entry in the main file.
    let dir = scratch("pallas-bad-group");
    trace.write(&dir).unwrap();
    let main = std::fs::read(dir.join("main.pallas")).unwrap();
    let group = MainFile::parse("main", &main).unwrap().data.location_groups[0];
    patch(&dir.join("main.pallas"), group.at, &55u32.to_le_bytes());
    let err = stderr_of_failure(&dir);
    let want = format!(
        "main.pallas: byte {}: location group 55 has neither threads nor an archive file",
        group.at
    );
    assert!(err.contains(&want), "{err}");
}

#[test]
fn the_main_file_or_the_folder_can_be_named() {
    let (trace, _) = sample(20, BlockCompression::None, Encoding::None);
    let dir = scratch("pallas-names");
    trace.write(&dir).unwrap();
    let by_dir = stream_of(&[], &dir);
    let out = bin("trace-cat")
        .arg(dir.join("main.pallas"))
        .assert()
        .success();
    let by_file: String = String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .filter(|l| !(l.starts_with("meta\t") && col(l, "name") == "source"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(by_dir, by_file);
    // Naming a part of the trace says what to name instead.
    bin("trace-cat")
        .arg(dir.join("archive_0/archive.pallas"))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "name the trace folder or its main .pallas file",
        ));
    // So does naming a folder inside the trace.
    bin("trace-cat")
        .arg(dir.join("archive_0"))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "this folder is part of a Pallas trace",
        ));
    // A folder with another main file name is found too (EZTrace's).
    std::fs::rename(dir.join("main.pallas"), dir.join("eztrace_log.pallas")).unwrap();
    assert_eq!(stream_of(&[], &dir), by_dir);
}

#[test]
fn more_threads_than_open_files_allowed() {
    // 300 threads read under a limit of 64 open files: no file stays open
    // per thread.
    let dir = scratch("pallas-many-threads");
    let mut trace = TraceSpec::new(BlockCompression::None, Encoding::None);
    trace.defs.strings = vec![(0, "p".into()), (1, "tick".into())];
    trace.archives = (0..3)
        .map(|p| ArchiveSpec {
            id: p,
            threads: (0..100)
                .map(|t| {
                    one_event_thread(
                        58,
                        1u32.to_le_bytes().to_vec(),
                        vec![event_token(0)],
                        vec![t as u64],
                    )
                })
                .enumerate()
                .map(|(i, mut t)| {
                    t.id = p * 100 + i as u32;
                    t
                })
                .collect(),
            ..ArchiveSpec::default()
        })
        .collect();
    trace.write(&dir).unwrap();
    let bin_path = assert_cmd::cargo::cargo_bin("trace-cat");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 64 && '{}' --json '{}'",
            bin_path.display(),
            dir.display()
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("\"kind\":\"event\""))
            .count(),
        300
    );
}

/// Reads a trace to the end through the library, returning the row count or
/// the error text.
fn read_all(dir: &Path) -> Result<usize, String> {
    use tracepipe::pipe::RecordSource;
    let opts = tracepipe::pipe::ReadOptions::default();
    let mut source = tracepipe::formats::pallas::reader::PallasSource::open("t", dir, &opts)
        .map_err(|e| e.to_string())?;
    let mut rec = tracepipe::Record::default();
    let mut n = 0;
    while source.next_record(&mut rec).map_err(|e| e.to_string())? {
        n += 1;
    }
    Ok(n)
}

#[test]
fn corrupted_archives_fail_cleanly_never_panic() {
    // Every file of a small trace, damaged at many places in several ways:
    // the reader must answer with rows or an error, never a panic or a
    // runaway allocation.
    let dir = scratch("pallas-fuzz");
    let (mut trace, _) = sample(20, BlockCompression::Zstd, Encoding::Masking);
    // Keep it small: fewer loop iterations.
    for a in &mut trace.archives {
        for t in &mut a.threads {
            for l in t.loops.iter_mut().flatten() {
                l.1 = l.1.min(3);
            }
            for e in t.events.iter_mut().flatten() {
                e.timestamps.clear();
            }
        }
    }
    let mut stamped = trace.clone();
    for a in &mut stamped.archives {
        for t in &mut a.threads {
            stamp(t, 100);
        }
    }
    stamped.write(&dir).unwrap();
    let clean = read_all(&dir).expect("the undamaged trace reads");
    assert!(clean > 20);
    let files = [
        "main.pallas",
        "archive_0/archive.pallas",
        THREAD0,
        DAT0,
        "archive_0/thread_1/thread.pallas",
    ];
    let mut rng = Rng(0x1234_5678);
    let mut errors = 0;
    for file in files {
        let path = dir.join(file);
        let original = std::fs::read(&path).unwrap();
        for _ in 0..300 {
            let mut data = original.clone();
            match rng.below(4) {
                0 => {
                    let i = rng.below(data.len() as u64) as usize;
                    data[i] ^= 1 << rng.below(8);
                }
                1 => {
                    let i = rng.below(data.len() as u64) as usize;
                    data[i] = 0xFF;
                }
                2 => {
                    let i = rng.below(data.len().saturating_sub(8) as u64) as usize;
                    data[i..i + 8].copy_from_slice(&u64::MAX.to_le_bytes());
                }
                _ => data.truncate(rng.below(data.len() as u64) as usize),
            }
            std::fs::write(&path, &data).unwrap();
            if read_all(&dir).is_err() {
                errors += 1;
            }
        }
        std::fs::write(&path, &original).unwrap();
    }
    assert!(
        errors > 500,
        "only {errors} of 1500 damaged traces were refused"
    );
}

/// A ZFP block whose length or content is corrupt is an error or garbage
/// values, never a read past the buffer libzfp is given (which crashed).
#[cfg(feature = "zfp")]
#[test]
fn corrupt_zfp_blocks_are_errors_not_crashes() {
    let thread = ThreadSpec {
        events: vec![Some(EventSpec {
            record: 58,
            payload: 1u32.to_le_bytes().to_vec(),
            timestamps: (1..=4000u64).map(|k| k * k).collect(),
            ..EventSpec::default()
        })],
        sequences: vec![Some(vec![loop_token(0)]), Some(vec![event_token(0)])],
        loops: vec![Some((sequence_token(1), 4000))],
        ..ThreadSpec::default()
    };
    let pristine = single_thread("pallas-zfp-pristine", thread.clone(), BlockCompression::Zfp);
    bin("trace-cat").arg(&pristine).assert().success();
    let dats: Vec<PathBuf> = std::fs::read_dir(pristine.join("archive_0/thread_0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .filter(|p| std::fs::metadata(p).unwrap().len() > 16)
        .collect();
    assert!(!dats.is_empty());
    for (i, dat) in dats.iter().enumerate() {
        let name = dat.file_name().unwrap().to_owned();
        // The length says one byte: too short for the block's values.
        let dir = single_thread(
            &format!("pallas-zfp-short-{i}"),
            thread.clone(),
            BlockCompression::Zfp,
        );
        patch(
            &dir.join("archive_0/thread_0").join(&name),
            0,
            &1u64.to_le_bytes(),
        );
        let out = bin("trace-cat").arg(&dir).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("ZFP block of 1 bytes cannot hold"),
            "{stderr}"
        );
        // The content is noise: whatever it decodes to, the process ends by
        // itself (0 or 1), not by a signal.
        for fill in [0xFFu8, 0x5A, 0x00] {
            let dir = single_thread(
                &format!("pallas-zfp-noise-{i}-{fill}"),
                thread.clone(),
                BlockCompression::Zfp,
            );
            let file = dir.join("archive_0/thread_0").join(&name);
            let len = std::fs::metadata(&file).unwrap().len() as usize;
            patch(&file, 8, &vec![fill; len - 8]);
            let out = bin("trace-cat").arg(&dir).output().unwrap();
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{:?} {name:?} {fill}",
                out.status
            );
        }
    }
}

/// A metadata entry with an empty key, and a root sequence that is not
/// defined, are errors at a byte offset (the first made an attribute the
/// stream reader then rejected; the second named no offset).
#[test]
fn empty_metadata_keys_and_undefined_roots_are_located() {
    let dir = scratch("pallas-empty-key");
    let mut trace = TraceSpec::new(BlockCompression::None, Encoding::None);
    trace.defs.strings = vec![(0, "p".into())];
    trace.metadata = vec![("".into(), "value".into())];
    trace.archives = vec![ArchiveSpec::default()];
    trace.write(&dir).unwrap();
    let err = stderr_of_failure(&dir);
    assert!(
        err.contains("main.pallas: byte ") && err.contains(": empty metadata key"),
        "{err}"
    );

    let generic = 1u32.to_le_bytes().to_vec();
    let mut thread = one_event_thread(58, generic, vec![event_token(0)], vec![5]);
    thread.root = 7;
    let dir = single_thread("pallas-undefined-root", thread, BlockCompression::None);
    let err = stderr_of_failure(&dir);
    assert!(
        err.contains("thread.pallas: byte 32: root sequence 7 is not defined"),
        "{err}"
    );
}

/// A thread of one flat sequence: each `(record, payload, time)` once.
fn flat_thread(events: &[(u32, u32, u64)]) -> ThreadSpec {
    ThreadSpec {
        events: events
            .iter()
            .map(|&(record, payload, time)| {
                Some(EventSpec {
                    record,
                    payload: payload.to_le_bytes().to_vec(),
                    timestamps: vec![time],
                    ..EventSpec::default()
                })
            })
            .collect(),
        sequences: vec![Some((0..events.len() as u32).map(event_token).collect())],
        ..ThreadSpec::default()
    }
}

/// A single-thread trace whose regions 1, 2, 3 are `f`, `g`, `h`.
fn three_region_trace(test: &str, thread: ThreadSpec) -> PathBuf {
    let dir = scratch(test);
    let mut trace = TraceSpec::new(BlockCompression::None, Encoding::None);
    trace.defs.strings = vec![
        (0, "p".into()),
        (1, "f".into()),
        (2, "g".into()),
        (3, "h".into()),
    ];
    trace.defs.regions = vec![(1, 1), (2, 2), (3, 3)];
    trace.archives = vec![ArchiveSpec {
        threads: vec![thread],
        ..ArchiveSpec::default()
    }];
    trace.write(&dir).unwrap();
    dir
}

/// (kind, name, depth, flags, time, crossed or named attribute) per row.
fn frame_rows(dir: &Path, threads: &str) -> Vec<(String, String, u64, String, u64, String)> {
    let out = bin("trace-cat")
        .args(["--json", "--threads", threads])
        .arg(dir)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| !matches!(s(v, "kind"), "meta" | "container"))
        .map(|v| {
            let why = attr(&v, "crossed")
                .or(attr(&v, "named"))
                .or(attr(&v, "record"));
            (
                s(&v, "kind").to_string(),
                s(&v, "name").to_string(),
                int(&v, "depth"),
                s(&v, "flags").to_string(),
                int(&v, "time"),
                why.unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn frames_that_do_not_nest_are_kept_as_the_stream_says() {
    // ENTER f, ENTER g, LEAVE f (crosses g), LEAVE g, LEAVE h (none open).
    let t = flat_thread(&[(2, 1, 10), (2, 2, 20), (3, 1, 30), (3, 2, 40), (3, 3, 50)]);
    let dir = three_region_trace("pallas-crossing", t);
    let row = |k: &str, n: &str, d: u64, f: &str, t: u64, w: &str| {
        (k.into(), n.into(), d, f.into(), t, w.into())
    };
    let want = vec![
        row("enter", "f", 0, "", 10, ""),
        row("enter", "g", 1, "", 20, ""),
        row("leave", "g", 1, "SX", 30, "f"),
        row("leave", "f", 0, "", 30, ""),
        row("enter", "g", 0, "SX", 30, "f"),
        row("leave", "g", 0, "", 40, ""),
        row("event", "h", 0, "", 50, "LEAVE"),
    ];
    for threads in ["1", "2"] {
        assert_eq!(frame_rows(&dir, threads), want, "--threads {threads}");
    }
    // One warning, naming the first; the rows still nest for every report.
    bin("trace-cat")
        .arg(&dir)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "1 leave(s) closed a frame that was not the innermost",
        ))
        .stderr(predicate::str::contains("1 leave(s) named no open frame"))
        .stderr(predicate::str::contains("the first at 30 ns"));
    let out = bin("trace-stat")
        .args(["profile", "--csv", "--no-header"])
        .arg(&dir)
        .assert()
        .success();
    let mut profile: Vec<String> = String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .map(|l| l.split(',').take(4).collect::<Vec<_>>().join(","))
        .collect();
    profile.sort();
    // name, calls, inclusive, exclusive: f 10..30, g 20..40 as one call.
    assert_eq!(profile, ["f,1,20,10", "g,1,20,20"]);
    bin("trace-cat")
        .args(["--strict"])
        .arg(&dir)
        .assert()
        .failure()
        .stderr(predicate::str::contains("thread_0/thread.pallas: byte "))
        .stderr(predicate::str::contains(
            "LEAVE of `f` while `g` is open (a frame that does not nest; --strict)",
        ));
}

#[test]
fn thread_model_records_take_no_time_from_the_frame_around_them() {
    // ENTER f, OMP_FORK (4 threads), THREAD_TEAM_BEGIN, THREAD_TEAM_END,
    // OMP_JOIN, LEAVE f.
    let t = flat_thread(&[
        (2, 1, 0),
        (14, 4, 10),
        (27, 0, 20),
        (28, 0, 80),
        (15, 0, 90),
        (3, 1, 100),
    ]);
    let mut t = t;
    for e in t.events.iter_mut().flatten() {
        if matches!(e.record, 27 | 28 | 15) {
            e.payload.clear();
        }
    }
    let dir = three_region_trace("pallas-fork", t);
    let rows = frame_rows(&dir, "1");
    let kinds: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str(), r.5.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("enter", "f", ""),
            ("event", "OMP_FORK", ""),
            ("event", "THREAD_TEAM_BEGIN", ""),
            ("event", "THREAD_TEAM_END", ""),
            ("event", "OMP_JOIN", ""),
            ("leave", "f", ""),
        ]
    );
    let json = json_rows(&dir);
    let fork = json.iter().find(|v| s(v, "name") == "OMP_FORK").unwrap();
    assert_eq!((s(fork, "cat"), attr(fork, "nthreads")), ("OMP", Some("4")));
    // From the grammar and from the rows alike: f keeps its 100 ns.
    for args in [&["profile"][..], &["profile", "--by", "loc,name"]] {
        let out = bin("trace-stat")
            .args(args)
            .args(["--csv", "--no-header"])
            .arg(&dir)
            .assert()
            .success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        assert!(text.contains("f,1,100,100,"), "{args:?}: {text}");
    }
}
