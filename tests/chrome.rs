//! The Chrome trace JSON reader: each phase's rows, the edges real files
//! have, errors located at their byte, files larger than memory holds
//! sorted through temporary runs, the round trip through `-t chrome` on
//! the corpus and the project's fixtures, and a Kineto-like multi-rank
//! trace whose NCCL waits are known by construction.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{bin, body, col, kind_of, scratch};

/// Writes `text` as `name` in `dir`.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The rows `trace-cat` reads from `path` but the meta rows, with its
/// standard error.
fn rows_of(path: &Path) -> (Vec<String>, String) {
    let out = bin("trace-cat").arg(path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{}: {err}", path.display());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows = body(&text)
        .into_iter()
        .filter(|l| kind_of(l) != "meta")
        .collect();
    (rows, err)
}

/// A command's output, or the test fails with its error.
fn ok(run: Result<String, String>) -> String {
    run.unwrap_or_else(|err| panic!("{err}"))
}

/// Writes `trace` as Chrome JSON to `json`.
fn write_chrome(trace: &Path, json: &Path) {
    ok(common::cat(
        &["-q", "-t", "chrome", "-o", &json.to_string_lossy()],
        trace,
    ));
}

/// The row `kind time end loc cat name peer id value flags attrs` as one
/// line, `|` between the columns (the columns a test looks at).
fn short(line: &str) -> String {
    [
        "kind", "time", "end", "loc", "cat", "name", "peer", "comm", "id", "value", "flags",
        "attrs",
    ]
    .map(|c| col(line, c))
    .join("|")
}

#[test]
fn every_phase_becomes_its_rows() {
    let dir = scratch("chrome-phases");
    let trace = file(
        &dir,
        "phases.json",
        r#"{"traceEvents": [
{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "app"}},
{"ph": "M", "pid": 1, "name": "process_labels", "args": {"labels": "a;b"}},
{"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "worker"}},
{"ph": "M", "pid": 1, "tid": 2, "name": "thread_sort_index", "args": {"sort_index": 0}},
{"ph": "M", "pid": 1, "tid": 3, "name": "thread_sort_index", "args": {"sort_index": 5}},
{"ph": "X", "pid": 1, "tid": 2, "ts": 2, "dur": 3, "name": "child", "cat": "c"},
{"ph": "X", "pid": 1, "tid": 2, "ts": 1, "dur": 10, "name": "parent", "cat": "c", "args": {"n": 1}},
{"ph": "B", "pid": 1, "tid": 3, "ts": 4, "name": "b", "cat": "c"},
{"ph": "E", "pid": 1, "tid": 3, "ts": 6},
{"ph": "i", "pid": 1, "tid": 3, "ts": 5, "name": "thread instant"},
{"ph": "i", "pid": 1, "tid": 3, "ts": 5, "name": "process instant", "s": "p"},
{"ph": "I", "pid": 1, "tid": 3, "ts": 5, "name": "global instant", "s": "g"},
{"ph": "C", "pid": 1, "ts": 7, "name": "mem", "args": {"value": 3, "peak": 4.5}},
{"ph": "s", "pid": 1, "tid": 2, "ts": 3, "name": "flow", "cat": "f", "id": 8},
{"ph": "t", "pid": 1, "tid": 3, "ts": 4, "name": "flow", "cat": "f", "id": 8},
{"ph": "f", "pid": 1, "tid": 3, "ts": 5, "name": "flow", "cat": "f", "id": 8, "bp": "e"},
{"ph": "b", "pid": 1, "tid": 2, "ts": 1, "name": "load", "cat": "a", "id": "0x1", "args": {"k": "v"}},
{"ph": "n", "pid": 1, "tid": 2, "ts": 2, "name": "step", "cat": "a", "id": "0x1"},
{"ph": "e", "pid": 1, "tid": 3, "ts": 9, "name": "load", "cat": "a", "id": "0x1"},
{"ph": "O", "pid": 1, "tid": 2, "ts": 9, "name": "snapshot", "id": "0x2"}
]}"#,
    );
    let (rows, err) = rows_of(&trace);
    let got: Vec<String> = rows.iter().map(|l| short(l)).collect();
    let want = [
        "container|||1|process|app||||||process_labels.labels=a%3Bb",
        "container|||1/2|thread|worker|1|||||",
        "container|||1/3|thread||1|||||",
        // The parent, written after its child (at completion), enters first.
        "enter|1000||1/2|c|parent||||||n=1",
        "event|2000||1|a|step|||0x1|||ph=n",
        "enter|2000||1/2|c|child||||||",
        "send|3000||1/2|f|flow|||8|||",
        "enter|4000||1/3|c|b||||||",
        "event|4000||1/3|f|flow|||8|||ph=t",
        "leave|5000||1/2|c|child||||||",
        "event|5000||1/3||thread instant||||||",
        "event|5000||1||process instant||||||s=p",
        "event|5000||||global instant||||||s=g",
        "recv|5000||1/3|f|flow|||8|||bp=e",
        "leave|6000||1/3||||||||",
        "counter|7000||1||mem||||3||",
        "counter|7000||1||mem.peak||||4.5||",
        "claim|1000|9000|1|a|load|||0x1|||k=v",
        "event|9000||1/2||snapshot|||0x2|||ph=O",
        "leave|11000||1/2|c|parent||||||",
    ];
    assert_eq!(got, want);
    // Only the phase with no mapping of its own is warned about.
    assert!(err.contains("attribute ph: 1 `O`"), "{err}");
    assert!(!err.contains("`n`") && !err.contains("`t`"), "{err}");
    assert!(!err.contains("closing bracket"), "{err}");
}

/// Times in µs become exact ns: 16 integer digits and 3 decimals (more
/// than a double holds), strings, negative times, exponents; `dur`
/// likewise; `X` without `dur` is a frame of no length.
#[test]
fn times_are_exact() {
    let dir = scratch("chrome-times");
    let trace = file(
        &dir,
        "times.json",
        r#"[{"ph": "X", "pid": 1, "tid": 1, "ts": 1699999999999999.999, "dur": 0.001, "name": "a"},
{"ph": "i", "pid": 1, "tid": 1, "ts": "1700000000000001.5", "name": "b"},
{"ph": "i", "pid": 1, "tid": 1, "ts": -2.5, "name": "c"},
{"ph": "i", "pid": 1, "tid": 1, "ts": 1.5e3, "name": "d"},
{"ph": "X", "pid": 1, "tid": 1, "ts": 7, "name": "no dur"}]"#,
    );
    let (rows, _) = rows_of(&trace);
    // Compressed, the same rows.
    let gz = dir.join("times.json.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &std::fs::read(&trace).unwrap()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    assert_eq!(rows_of(&gz).0, rows);
    let times: Vec<(&str, &str, &str)> = rows
        .iter()
        .filter(|l| kind_of(l) != "container")
        .map(|l| (kind_of(l), col(l, "time"), col(l, "name")))
        .collect();
    assert_eq!(
        times,
        [
            ("event", "-2500", "c"),
            ("enter", "7000", "no dur"),
            ("leave", "7000", "no dur"),
            ("event", "1500000", "d"),
            ("enter", "1699999999999999999", "a"),
            ("leave", "1700000000000000000", "a"),
            ("event", "1700000000000001500", "b"),
        ]
    );
}

/// What real files do: an array left open (with a trailing comma), keys
/// beside `traceEvents` before it, `pid`/`tid` strings (empty too),
/// metadata with a `ts`, `E` without `B`, flows with an end and no start
/// and an end before its start, `id2`, nested `args` and non-ASCII names,
/// a line of several MB.
#[test]
fn the_edges_of_real_files_read() {
    let dir = scratch("chrome-edges");
    let big = "x".repeat(3 << 20);
    let text = format!(
        r#"{{"otherData": {{"host": "n1"}}, "samples": [{{"a": [1, {{"b": "}}]"}}]}}], "traceEvents": [
{{"ph": "M", "pid": "stream 7", "tid": "", "ts": 0, "name": "thread_name", "args": {{"name": "ñame ✓"}}}},
{{"ph": "E", "pid": "stream 7", "tid": "", "ts": 1}},
{{"ph": "f", "pid": 2, "tid": 2, "ts": 2, "cat": "ac2g", "name": "ac2g", "id": 1, "bp": "e"}},
{{"ph": "f", "pid": 2, "tid": 2, "ts": 3, "cat": "x", "name": "late", "id2": {{"local": "0x7"}}}},
{{"ph": "s", "pid": 2, "tid": 3, "ts": 4, "cat": "x", "name": "late", "id2": {{"local": "0x7"}}}},
{{"ph": "X", "pid": "stream 7", "tid": "", "ts": 5, "dur": 1, "name": "kernel ✓", "cat": "kernel", "args": {{"grid": [1, 2], "o": {{"k": "v"}}, "big": "{big}"}}}},
"#
    );
    let trace = file(&dir, "edges.json", &text);
    let (rows, err) = rows_of(&trace);
    let got: Vec<String> = rows
        .iter()
        .map(|l| {
            let mut s = short(l);
            s.truncate(120);
            s
        })
        .collect();
    assert_eq!(
        got,
        [
            // An empty `tid` is the process's own track.
            "container|||stream 7|accelerator|ñame ✓||||||",
            "container|||2|process|||||||",
            "container|||2/2|thread||2|||||",
            "container|||2/3|thread||2|||||",
            "event|1000||stream 7||||||||record=leave",
            "recv|2000||2/2|ac2g|ac2g|||1|||bp=e",
            "recv|3000||2/2|x|late|||local:0x7|||",
            "send|4000||2/3|x|late|||local:0x7|||",
            "enter|5000||stream 7|kernel|kernel ✓||||||grid=[1, 2];o={\"k\": \"v\"};big=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "leave|6000||stream 7|kernel|kernel ✓||||||",
        ]
    );
    assert!(err.contains("without their closing bracket"), "{err}");
    assert!(err.contains("1 leave(s) named no open frame"), "{err}");
    // The whole argument is kept.
    assert!(rows[8].contains(&big));
    // The flow whose end came first pairs; the end without a start stays
    // a half.
    let matched = ok(common::run("trace-match", &["--unmatched", "keep"], &trace));
    let msgs: Vec<&str> = matched.lines().filter(|l| kind_of(l) == "msg").collect();
    assert_eq!(msgs.len(), 1, "{matched}");
    assert_eq!((col(msgs[0], "loc"), col(msgs[0], "peer")), ("2/3", "2/2"));
}

/// Legacy async `S`/`F` pair across processes (by category and id); one
/// flow start with two ends pairs with the first, the other stays a half.
#[test]
fn legacy_async_spans_and_flows_with_several_ends() {
    let dir = scratch("chrome-legacy");
    let trace = file(
        &dir,
        "legacy.json",
        r#"[{"ph": "S", "pid": 1, "tid": 1, "ts": 1, "name": "req", "cat": "net", "id": 3},
{"ph": "F", "pid": 2, "tid": 9, "ts": 4, "name": "req", "cat": "net", "id": 3},
{"ph": "s", "pid": 1, "tid": 1, "ts": 1, "name": "fan", "cat": "f", "id": 5},
{"ph": "f", "pid": 2, "tid": 9, "ts": 2, "name": "fan", "cat": "f", "id": 5},
{"ph": "f", "pid": 2, "tid": 8, "ts": 3, "name": "fan", "cat": "f", "id": 5}]"#,
    );
    let (rows, _) = rows_of(&trace);
    let claims: Vec<String> = rows
        .iter()
        .filter(|l| kind_of(l) == "claim")
        .map(|l| short(l))
        .collect();
    assert_eq!(claims, ["claim|1000|4000|1|net|req|||3|||"]);
    let text = ok(common::run(
        "trace-match",
        &["--unmatched", "keep", "-q"],
        &trace,
    ));
    let msgs: Vec<(&str, &str, &str)> = text
        .lines()
        .filter(|l| kind_of(l) == "msg")
        .map(|l| (col(l, "loc"), col(l, "peer"), col(l, "end")))
        .collect();
    assert_eq!(msgs, [("1/1", "2/9", "2000")]);
    let halves = text.lines().filter(|l| kind_of(l) == "recv").count();
    assert_eq!(halves, 1, "{text}");
}

/// Bad input is an error at the byte of the event, naming what is wrong.
#[test]
fn bad_events_are_located() {
    let dir = scratch("chrome-errors");
    let cases = [
        (
            r#"[{"ph": "X", "ts": 1, "pid": 1}, {"ph": "X", "ts": 1 "pid": 1}]"#,
            "byte 33: not a valid event object",
        ),
        (
            r#"[{"ph": "X", "ts": 1}, {"ts": 1}]"#,
            "byte 23: an event has no `ph`",
        ),
        (
            r#"[{"ph": "i", "ts": "soon"}]"#,
            "byte 1: `ts` is not a time in µs",
        ),
        (
            r#"[{"ph": "X", "ts": 1, "dur": null}]"#,
            "byte 1: `dur` is not a time",
        ),
        (
            r#"[{"ph": "i", "ts": 1}, 7]"#,
            "byte 23: expected an event object",
        ),
        (
            r#"[{"ph": "i", "ts": 1}, {"ph": "i", "#,
            "byte 23: the file ends inside this event",
        ),
        (
            r#"{"traceEvents": [{"ph": "i", "ts": 1}]} x"#,
            "byte 40: expected the end of the file",
        ),
        (
            r#"[{"ph": "s", "ts": 1, "pid": 1}]"#,
            "byte 1: a flow event has no `id`",
        ),
        (r#"[{"ph": "i", "ts": 1, "ts": 2}]"#, "duplicate key"),
        (
            r#"[{"ph": "i", "ts": 1, "args": [1]}]"#,
            "expected `args` as an object",
        ),
    ];
    for (i, (text, says)) in cases.iter().enumerate() {
        let path = file(&dir, &format!("bad{i}.json"), text);
        let out = bin("trace-cat").arg(&path).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}: {err}");
        assert!(err.contains(says), "{text}: wanted `{says}` in {err}");
        assert!(err.contains(&format!("bad{i}.json")), "{err}");
    }
}

/// One rank's file of a Kineto-like trace: a CPU thread (a step, a launch
/// with its `ac2g` flow) and a GPU stream (a GEMM, then an NCCL all-reduce
/// from `start` µs to 200 µs, with PyTorch's arguments).
fn kineto_rank(rank: u32, start: u32) -> String {
    let pid = 1000 + rank;
    let launch = start - 5;
    let nccl = 200 - start;
    format!(
        r#"{{"schemaVersion": 1, "distributedInfo": {{"backend": "nccl", "rank": {rank}, "world_size": 2}}, "traceEvents": [
{{"ph": "M", "pid": {pid}, "name": "process_name", "args": {{"name": "python"}}}},
{{"ph": "M", "pid": 0, "name": "process_name", "args": {{"name": "GPU 0"}}}},
{{"ph": "M", "pid": 0, "tid": 7, "name": "thread_name", "args": {{"name": "stream 7"}}}},
{{"ph": "X", "pid": {pid}, "tid": {pid}, "ts": 10, "dur": 300, "name": "step", "cat": "user_annotation"}},
{{"ph": "X", "pid": {pid}, "tid": {pid}, "ts": {launch}, "dur": 4, "name": "cudaLaunchKernel", "cat": "cuda_runtime", "args": {{"correlation": 9}}}},
{{"ph": "s", "pid": {pid}, "tid": {pid}, "ts": {launch}, "name": "ac2g", "cat": "ac2g", "id": 9}},
{{"ph": "X", "pid": 0, "tid": 7, "ts": 20, "dur": 50, "name": "gemm", "cat": "kernel"}},
{{"ph": "X", "pid": 0, "tid": 7, "ts": {start}, "dur": {nccl}, "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "cat": "kernel", "args": {{"correlation": 9, "Collective name": "allreduce", "Process Group Name": "0", "Group size": 2}}}},
{{"ph": "f", "pid": 0, "tid": 7, "ts": {start}, "name": "ac2g", "cat": "ac2g", "id": 9, "bp": "e"}}
]}}"#
    )
}

/// Two ranks' Kineto files merge: GPU streams are accelerator streams
/// named per rank, the NCCL kernels are collectives whose instance
/// `trace-match` numbers and whose waits `trace-stat waits` finds (rank 0
/// waits 50 µs for rank 1), each launch's flow pairs with its own rank's
/// kernel, and `timeline --by loc` shows the streams' busy time beside the
/// threads'.
#[test]
fn kineto_ranks_merge_and_their_collectives_wait() {
    let dir = scratch("chrome-kineto");
    let ranks = [
        file(&dir, "rank0.json", &kineto_rank(0, 100)),
        file(&dir, "rank1.json", &kineto_rank(1, 150)),
    ];
    let (rows, _) = rows_of(&ranks[1]);
    let containers: Vec<String> = rows
        .iter()
        .filter(|l| kind_of(l) == "container")
        .map(|l| short(l))
        .collect();
    assert_eq!(
        containers,
        [
            "container|||rank1/1001|process|python||||||",
            "container|||rank1/0|accelerator|GPU 0||||||",
            "container|||rank1/0/7|gpu|stream 7|rank1/0|||||",
            "container|||rank1/1001/1001|thread||rank1/1001|||||",
        ]
    );
    let run = |cmd: &str, args: &[&str]| {
        let out = bin(cmd).args(args).args(&ranks).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let waits = run("trace-stat", &["waits", "--by", "pair,pattern", "--ids"]);
    assert_eq!(
        waits,
        "waiter\twaited_for\tpattern\tcount\ttime\nrank0/0/7\trank1/0/7\twait-nxn\t1\t50000\n"
    );
    let matched = run("trace-match", &["-q"]);
    let colls: Vec<(&str, &str, &str)> = matched
        .lines()
        .filter(|l| kind_of(l) == "coll")
        .map(|l| (col(l, "loc"), col(l, "name"), col(l, "id")))
        .collect();
    assert_eq!(
        colls,
        [
            ("rank0/0/7", "allreduce", "0"),
            ("rank1/0/7", "allreduce", "0")
        ]
    );
    let flows: Vec<(&str, &str)> = matched
        .lines()
        .filter(|l| kind_of(l) == "msg")
        .map(|l| (col(l, "loc"), col(l, "peer")))
        .collect();
    assert_eq!(
        flows,
        [
            ("rank0/1000/1000", "rank0/0/7"),
            ("rank1/1001/1001", "rank1/0/7")
        ]
    );
    let busy = run(
        "trace-stat",
        &["timeline", "--by", "loc", "--bin", "150us", "--ids"],
    );
    let mut busy: Vec<&str> = busy.lines().skip(1).collect();
    busy.sort_unstable();
    assert_eq!(
        busy,
        [
            "0\t150000\trank0/0/7\t100000",
            "0\t150000\trank0/1000/1000\t140000",
            "0\t150000\trank1/0/7\t50000",
            "0\t150000\trank1/1001/1001\t140000",
            "150000\t300000\trank0/0/7\t50000",
            "150000\t300000\trank0/1000/1000\t150000",
            "150000\t300000\trank1/0/7\t50000",
            "150000\t300000\trank1/1001/1001\t150000",
            "300000\t450000\trank0/1000/1000\t10000",
            "300000\t450000\trank1/1001/1001\t10000",
        ]
    );
}

/// A file whose rows do not fit one run in memory is sorted through runs
/// spilled to a temporary folder (`TMPDIR`), removed at the end; the rows
/// come out in the stream's order (the TSV reader checks it).
#[test]
fn a_file_larger_than_a_run_is_sorted_through_temporary_files() {
    let dir = scratch("chrome-spill");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let frames = 50_000u32;
    let mut text = String::from("[\n");
    // Written at completion in reverse time order on four threads.
    for i in (0..frames).rev() {
        let tid = i % 4;
        text.push_str(&format!(
            "{{\"ph\":\"X\",\"pid\":1,\"tid\":{tid},\"ts\":{}.5,\"dur\":2,\"name\":\"f{}\"}},\n",
            i * 3,
            i % 7
        ));
    }
    text.push_str("{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":0,\"name\":\"first\"}]\n");
    let trace = file(&dir, "big.json", &text);
    let out = bin("trace-cat")
        .env("TMPDIR", &tmp)
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the runs are removed"
    );
    // The runs do go to TMPDIR: where none can be made, that is the error.
    let missing = dir.join("missing");
    let refused = bin("trace-cat")
        .env("TMPDIR", &missing)
        .arg(&trace)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("sorting rows in {}", missing.display())),
        "{err}"
    );
    let stream = file(&dir, "big.tsv", &String::from_utf8(out.stdout).unwrap());
    let text = ok(common::run(
        "trace-stat",
        &["profile", "--no-header", "--by", "name"],
        &stream,
    ));
    let calls: u32 = text
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap().parse::<u32>().unwrap())
        .sum();
    assert_eq!(calls, frames);
    let rows = std::fs::read_to_string(&stream).unwrap();
    assert_eq!(
        body(&rows)
            .iter()
            .find(|l| kind_of(l) == "event")
            .map(|l| col(l, "time")),
        Some("0")
    );
}

/// The `(kind, time)` of each row `-t chrome` then the reader give for the
/// rows of `matched` (a stream as `trace-match --unmatched keep` leaves
/// it, which the writer runs behind), by docs/formats.md: frames, instants
/// and counters as they are; `state`, `claim` and `coll` as frames;
/// messages and dependencies as a flow (a send and a receive, each at a
/// frame of no length); unmatched halves, leaves with no frame open and
/// samples that are no number as instants; a signal as samples; frames
/// open at a `destroy` or at the end closed there.
fn through_chrome(matched: &str) -> BTreeMap<(String, i64), usize> {
    let mut want: BTreeMap<(String, i64), usize> = BTreeMap::new();
    let mut add = |kind: &str, t: i64| *want.entry((kind.to_string(), t)).or_default() += 1;
    let mut open: BTreeMap<String, usize> = BTreeMap::new();
    let mut last = 0i64;
    for line in body(matched) {
        let kind = kind_of(&line);
        if matches!(kind, "meta" | "container" | "type") {
            continue;
        }
        let attr = |key: &str| {
            col(&line, "attrs")
                .split(';')
                .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
                .map(str::to_string)
        };
        let time: i64 = col(&line, "time").parse().unwrap_or(0);
        let end: i64 = col(&line, "end").parse().unwrap_or(time);
        last = last.max(time).max(end);
        let loc = col(&line, "loc").to_string();
        match kind {
            "enter" => {
                *open.entry(loc).or_default() += 1;
                add("enter", time);
            }
            "leave" => match open.get_mut(&loc) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    add("leave", time);
                }
                _ => add("event", time),
            },
            "state" | "claim" | "coll" => {
                add("enter", time.min(end));
                add("leave", time.max(end));
            }
            "msg" | "dep" => {
                for (t, half) in [(time, "send"), (end, "recv")] {
                    add("enter", t);
                    add("leave", t);
                    add(half, t);
                }
            }
            "send" | "recv" => add(
                "event",
                attr("orig_time").map_or(time, |t| t.parse().unwrap()),
            ),
            "counter" => {
                let numeric =
                    serde_json::from_str::<serde_json::Number>(col(&line, "value")).is_ok();
                add(if numeric { "counter" } else { "event" }, time);
            }
            "signal" => {
                let coefficient = |k: &str| attr(k).and_then(|v| v.parse::<f64>().ok());
                match coefficient("c") {
                    Some(_) => {
                        add("counter", time);
                        let slope = [coefficient("a"), coefficient("b")]
                            .iter()
                            .any(|c| c.is_some_and(|c| c != 0.0));
                        if slope && end > time {
                            add("counter", end);
                        }
                    }
                    None => add("event", time),
                }
            }
            "destroy" => {
                for _ in 0..open.remove(&loc).unwrap_or(0) {
                    add("leave", time);
                }
            }
            _ => add("event", time),
        }
    }
    for n in open.into_values() {
        for _ in 0..n {
            add("leave", last);
        }
    }
    want
}

/// `trace-cat X -t chrome | trace-cat` gives back each row of X as the
/// mapping says ([`through_chrome`]), names of frames included, on the
/// project's stream of every kind and on every corpus trace.
#[test]
fn the_round_trip_through_chrome_keeps_every_row() {
    let dir = scratch("chrome-round-trip");
    let mut traces = vec![
        common::data("viewer/kinds.tsv"),
        common::data("trace/all-kinds.etf"),
    ];
    for format in ["paje", "trace", "pallas"] {
        if let Some(corpus) = common::corpus(format) {
            traces.extend(common::accepted_traces(&corpus));
        }
    }
    traces.extend(
        common::external_archives()
            .into_iter()
            .map(|(_, anchor)| anchor),
    );
    for (i, trace) in traces.iter().enumerate() {
        let what = trace.display();
        let matched = ok(common::run(
            "trace-match",
            &["-q", "--unmatched", "keep"],
            trace,
        ));
        let json = dir.join(format!("t{i}.json"));
        write_chrome(trace, &json);
        let back = ok(common::cat(&["-q"], &json));
        let mut got: BTreeMap<(String, i64), usize> = BTreeMap::new();
        for line in body(&back)
            .iter()
            .filter(|l| !matches!(kind_of(l), "meta" | "container"))
        {
            let key = (
                kind_of(line).to_string(),
                col(line, "time").parse().unwrap(),
            );
            *got.entry(key).or_default() += 1;
        }
        assert_eq!(got, through_chrome(&matched), "{what}");
        // Each named frame comes back under its name.
        let names = |text: &str| {
            let mut n: Vec<String> = body(text)
                .iter()
                .filter(|l| kind_of(l) == "enter" && !col(l, "name").is_empty())
                .map(|l| format!("{} {}", col(l, "time"), col(l, "name")))
                .collect();
            n.sort();
            n
        };
        let back_names = names(&back);
        for name in names(&matched) {
            assert!(
                back_names.binary_search(&name).is_ok(),
                "{what}: frame {name} lost"
            );
        }
    }
}

/// Kineto traces of PyTorch (`tests/data/chrome`: ROCm, CUDA streams, a
/// CPU-only rank, Triton), the test files above and every corpus trace
/// written `-t chrome`: per location, frames, instants, counters and flows,
/// and the first and last times, as Python's `json` reads them
/// (`tests/chrome_count.py`).
#[test]
fn an_independent_parser_counts_the_same_events() {
    let dir = scratch("chrome-count");
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::data("chrome"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 4);
    files.push(file(&dir, "rank0.json", &kineto_rank(0, 100)));
    if let Some(corpus) = common::corpus("paje") {
        for (i, trace) in common::accepted_traces(&corpus).iter().enumerate() {
            let json = dir.join(format!("paje{i}.json"));
            write_chrome(trace, &json);
            files.push(json);
        }
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chrome_count.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_trace-cat"))
        .args(&files)
        .output()
        .expect("python3 runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        report.lines().filter(|l| l.starts_with("ok ")).count(),
        files.len(),
        "{report}"
    );
}
