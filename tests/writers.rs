//! Every writer writes a file its own reader accepts, or refuses with a
//! located error: a property test over generated streams, the corpus through
//! every writer and back, and the cases that once wrote broken files.

mod common;

use std::path::{Path, PathBuf};

use common::{
    accepted_traces, bin, cat, corpus, data, matched, pajeng_accepts, row, scratch, stream, Rng,
};
use serde_json::{json, Map, Value};

/// The writers whose output this project reads back.
const WRITERS: [&str; 8] = [
    "tsv", "jsonl", "parquet", "paje", "trace", "stf", "otf2", "pallas",
];

/// Where `writer` writes trace `stem` in `dir`: a file, or for Pallas a
/// folder.
fn trace_path(dir: &Path, stem: &str, writer: &str) -> PathBuf {
    match writer {
        "pallas" => dir.join(format!("{stem}-pallas")),
        _ => dir.join(format!("{stem}.{writer}")),
    }
}

/// Writers that map the stream one to one (a second hop changes nothing,
/// and neither does the first).
fn is_exact(writer: &str) -> bool {
    matches!(writer, "tsv" | "jsonl" | "parquet" | "stf")
}

/// The rows `writer` gives back for `original`: the same, but that STF
/// stores messages matched, and its reader says what a stream without them
/// came from and in which unit.
fn expected_rows(original: &str, writer: &str) -> Vec<String> {
    if writer != "stf" {
        return rows(original);
    }
    let mut rows = rows(&matched(original));
    {
        for (key, value) in [("source_format", "stf"), ("time_unit", "ns")] {
            if !rows
                .iter()
                .any(|r| r.starts_with("meta\t") && r.split('\t').nth(5) == Some(key))
            {
                rows.push(format!("meta\t\t\t\t\t{key}\t\t\t\t\t\t\t{value}\t\t"));
            }
        }
        rows.sort();
    }
    rows
}

/// The rows of a stream without the `source` meta row (it names the file
/// read), sorted: rows at one instant and declarations may change places
/// from one hop to the next (docs/formats.md).
fn rows(stream: &str) -> Vec<String> {
    let mut rows: Vec<String> = stream
        .lines()
        .filter(|l| !l.starts_with("meta\t\t\t\t\tsource\t"))
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

/// A refusal names where: `FILE:LINE:`, a byte offset, or the end of input.
fn is_located(err: &str) -> bool {
    let after_colon_digits = err
        .split(':')
        .any(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    err.contains("error:")
        && (after_colon_digits || err.contains("at end of input") || err.contains("byte "))
}

/// One hop: `input` through `writer` into `dir`, read back as TSV.
fn hop(input: &Path, writer: &str, dir: &Path, n: usize) -> Result<(PathBuf, String), String> {
    let file = trace_path(dir, &format!("hop{n}"), writer);
    let out = file.to_str().unwrap();
    cat(&["-q", "-t", writer, "-o", out], input)?;
    let stream = cat(&["-q"], &file).map_err(|e| format!("READ BACK FAILED: {e}"))?;
    Ok((file, stream))
}

/// Checks `input` through `writer`: the first hop is refused with a located
/// error or reads back, and a second hop reads back the same rows (for
/// exact writers, the first hop already does). Returns the refusal.
fn check_writer(input: &Path, writer: &str, dir: &Path, pajeng: bool) -> Option<String> {
    let what = format!("{} through {writer}", input.display());
    let original = cat(&["-q"], input).unwrap_or_else(|e| panic!("{what}: unreadable: {e}"));
    let (first, once) = match hop(input, writer, dir, 1) {
        Ok(x) => x,
        Err(e) => {
            assert!(
                !e.starts_with("READ BACK FAILED"),
                "{what}: wrote a file it cannot read: {e}"
            );
            assert!(is_located(&e), "{what}: refusal without a place: {e}");
            return Some(e);
        }
    };
    if writer == "paje" && pajeng {
        check_with_pajeng(&first, &what);
    }
    if is_exact(writer) {
        assert_eq!(
            rows(&once),
            expected_rows(&original, writer),
            "{what}: not the same stream"
        );
    } else if writer == "otf2" || writer == "pallas" {
        match writer {
            "otf2" => check_with_otf2_print(&first, &what),
            _ => check_with_pallas_print(&first, &what),
        }
        assert_eq!(
            as_spans_and_messages(&once),
            as_spans_and_messages(&original),
            "{what}: not the same frames, messages and rows"
        );
    } else {
        check_survivors(&original, &once, writer, &what);
    }
    let (_, twice) = hop(&first, writer, dir, 2).unwrap_or_else(|e| panic!("{what}, 2nd hop: {e}"));
    assert_eq!(
        rows(&twice),
        rows(&once),
        "{what}: the second hop changed the stream"
    );
    None
}

/// When `PJ_DUMP` names PajeNG's `pj_dump`, it must accept what the Pajé
/// writer wrote (docs/reliability.md; CI machines do not have it).
fn check_with_pajeng(file: &Path, what: &str) {
    let Some(pj_dump) = std::env::var_os("PJ_DUMP") else {
        return;
    };
    let out = std::process::Command::new(pj_dump)
        .arg(file)
        .output()
        .expect("pj_dump runs");
    assert!(
        out.status.success(),
        "{what}: PajeNG rejects the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The data rows of a stream with frames as `state` rows and halves paired
/// into messages (`--spans`, then `trace-match`), sorted: what an OTF2
/// archive keeps of any stream (docs/formats.md, "OTF2").
fn as_spans_and_messages(stream: &str) -> Vec<String> {
    let spans = bin("trace-cat")
        .args(["-q", "--spans"])
        .write_stdin(stream.to_string())
        .output()
        .unwrap();
    assert!(
        spans.status.success(),
        "{}",
        String::from_utf8_lossy(&spans.stderr)
    );
    let matched = bin("trace-match")
        .args(["-q", "--unmatched", "keep"])
        .write_stdin(spans.stdout)
        .output()
        .unwrap();
    assert!(
        matched.status.success(),
        "{}",
        String::from_utf8_lossy(&matched.stderr)
    );
    let text = String::from_utf8(matched.stdout).unwrap();
    let structural = ["kind\t", "meta\t", "container\t", "type\t"];
    // A state's depth is what --spans counts where its enter had none;
    // a message's attributes are its halves' in the order they came, and
    // halves of one instant may come in another order.
    let without_depth = |l: &str| {
        let mut f: Vec<String> = l.split('\t').map(str::to_string).collect();
        if f[0] == "state" {
            f[6].clear();
        }
        if f[0] == "msg" {
            let mut items: Vec<&str> = f[14].split(';').collect();
            items.sort_unstable();
            f[14] = items.join(";");
        }
        f.join("\t")
    };
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| !structural.iter().any(|s| l.starts_with(s)))
        .map(without_depth)
        .collect();
    rows.sort();
    rows
}

/// When `otf2-print` is installed, it must read the archive whole.
fn check_with_otf2_print(anchor: &Path, what: &str) {
    let Ok(out) = std::process::Command::new("otf2-print")
        .arg(anchor)
        .output()
    else {
        return;
    };
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{what}: otf2-print rejects the archive: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// When `PALLAS_PRINT` names Pallas's `pallas_print`, it must print the
/// trace in `folder` whole (docs/reliability.md; CI machines do not have
/// it).
fn check_with_pallas_print(folder: &Path, what: &str) {
    let Some(pallas_print) = std::env::var_os("PALLAS_PRINT") else {
        return;
    };
    let out = std::process::Command::new(pallas_print)
        .arg(folder.join("main.pallas"))
        .output()
        .expect("pallas_print runs");
    assert!(
        out.status.success(),
        "{what}: pallas_print fails: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Rows per kind of a stream (flagged `S` rows, re-created by readers, left out).
fn kinds(stream: &str) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for line in stream.lines().skip(1) {
        let flags = line.split('\t').nth(13).unwrap_or("");
        if !flags.contains('S') {
            *counts
                .entry(line.split('\t').next().unwrap().to_string())
                .or_default() += 1;
        }
    }
    counts
}

/// The rows that survive a hop through a lossy writer (docs/formats.md,
/// "What a hop keeps"): each source row is one or more rows read back.
fn check_survivors(original: &str, back: &str, writer: &str, what: &str) {
    // The TRACE writer pairs halves as trace-match does (a message becomes
    // two events and a dependency): count against the paired stream.
    let paired;
    let original = if writer == "trace" {
        let out = bin("trace-match")
            .args(["-q", "--unmatched", "keep"])
            .write_stdin(original.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        paired = String::from_utf8(out.stdout).unwrap();
        paired.as_str()
    } else {
        original
    };
    let (src, got) = (kinds(original), kinds(back));
    let n = |m: &std::collections::BTreeMap<String, usize>, ks: &[&str]| -> usize {
        ks.iter().map(|k| m.get(*k).copied().unwrap_or(0)).sum()
    };
    let native_deps = original
        .lines()
        .filter(|l| l.starts_with("dep\t") && l.contains("trace.src="))
        .count();
    let rules: Vec<(&str, usize, usize)> = match writer {
        "paje" => vec![
            ("events", n(&got, &["event"]), n(&src, &["event"])),
            ("frames", n(&got, &["enter"]), n(&src, &["enter"])),
            (
                "rows with an extent",
                n(&got, &["state", "claim", "coll", "signal"]),
                n(&src, &["state", "claim", "coll", "signal"]),
            ),
            ("samples", n(&got, &["counter"]), n(&src, &["counter"])),
            // Links read back as messages when they complete; a written
            // file has no half without its other one (the writer refuses
            // them), so every send made a link with a receive.
            ("links", n(&got, &["msg"]), n(&src, &["send", "msg", "dep"])),
            ("receives", n(&src, &["recv"]), n(&src, &["send"])),
            ("halves", n(&got, &["send", "recv"]), 0),
        ],
        _ => vec![
            (
                "claims",
                n(&got, &["claim"]),
                n(&src, &["claim", "enter", "state", "coll"]),
            ),
            // Messages and dependencies between other things than TRACE
            // elements add an event at each end.
            (
                "instants",
                n(&got, &["event"]),
                n(&src, &["event", "send", "recv"]) + 2 * (n(&got, &["dep"]) - native_deps),
            ),
            ("dependencies", n(&got, &["dep"]), n(&src, &["dep", "msg"])),
        ],
    };
    for (rule, got, want) in rules {
        assert_eq!(got, want, "{what}: {rule} read back");
    }
}

/// Draws from the shared deterministic generator, so a failing seed replays.
struct Gen(Rng);

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.0.below(100) < percent
    }
}

const IDS: &[&str] = &[
    "p0", "0", "a b", "ü✓", "q\"x", "#h", "tab\tid", "n;=%", "-x", "S", "R1",
];
const NAMES: &[&str] = &[
    "main",
    "",
    "MPI_Send",
    "x=y;z",
    "日本",
    "new\nline",
    "\"q\"",
    "# c",
    "back\\",
];
const KEYS: &[&str] = &[
    "k",
    "#",
    "a b",
    "ü",
    "x=y",
    "semi;colon",
    "name",
    "Value",
    "end",
    "c",
];
const VALUES: &[&str] = &[
    "v",
    "",
    " padded ",
    "line\nbreak",
    "tab\t",
    "back\\",
    "quote\"",
    "1.5",
];
const NUMBERS: &[&str] = &["0", "1.5", "-3", "42", "0.001", "1000000"];

fn attrs(g: &mut Gen) -> Option<Value> {
    if !g.chance(40) {
        return None;
    }
    let mut map = Map::new();
    for _ in 0..=g.below(3) {
        map.insert(g.pick(KEYS).to_string(), json!(g.pick(VALUES)));
    }
    Some(Value::Object(map))
}

/// A valid stream: containers with odd ids nested every way (a > b > a),
/// some declared twice, then frames, events, counters, message halves
/// (matched or not), messages, states, collectives, dependencies, claims and
/// signal fragments in completion order.
fn generate(seed: u64) -> String {
    let mut g = Gen(Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1));
    let mut rows = vec![json!({"kind": "meta", "name": "format", "value": "tracepipe-stream/1"})];
    let mut locs: Vec<String> = Vec::new();
    for (n, id) in IDS.iter().take(2 + g.below(IDS.len() - 1)).enumerate() {
        let mut row = json!({"kind": "container", "loc": id, "cat": g.pick(&["a", "b", "node"]),
            "name": g.pick(NAMES)});
        if n > 0 && g.chance(70) {
            row["peer"] = json!(locs[g.below(locs.len())]);
        }
        rows.push(row.clone());
        if g.chance(15) {
            rows.push(row); // Declared again, as merged inputs do.
        }
        locs.push(id.to_string());
    }
    rows.push(json!({"kind": "container", "loc": "S9", "cat": "signal", "name": "fill"}));
    let mut stacks: Vec<Vec<&str>> = vec![Vec::new(); locs.len()];
    let mut in_flight: Vec<(usize, usize, i64)> = Vec::new();
    let (mut t, mut signal_end) = (0i64, 0i64);
    for _ in 0..g.below(60) {
        t += g.below(3) as i64;
        let l = g.below(locs.len());
        let (loc, peer) = (&locs[l], &locs[g.below(locs.len())]);
        let mut row = match g.below(11) {
            0 | 1 => {
                let name = g.pick(NAMES);
                stacks[l].push(name);
                json!({"kind": "enter", "time": t, "loc": loc, "name": name, "cat": "USER"})
            }
            2 => match stacks[l].pop() {
                Some(name) => {
                    json!({"kind": "leave", "time": t, "loc": loc, "name": name, "cat": "USER"})
                }
                None => continue,
            },
            3 => json!({"kind": "event", "time": t, "loc": loc, "name": g.pick(NAMES),
                "value": g.pick(VALUES), "cat": g.pick(&["", "mark"])}),
            4 => json!({"kind": "counter", "time": t, "loc": loc, "name": g.pick(&["mem", "x y"]),
                "value": g.pick(NUMBERS)}),
            5 => {
                let to = g.below(locs.len());
                in_flight.push((l, to, t));
                json!({"kind": "send", "time": t, "loc": loc, "peer": locs[to], "comm": "w", "tag": 1})
            }
            6 if !in_flight.is_empty() && g.chance(80) => {
                let (from, to, _) = in_flight.remove(0);
                json!({"kind": "recv", "time": t, "loc": locs[to], "peer": locs[from], "comm": "w",
                    "tag": 1, "name": g.pick(NAMES)})
            }
            7 => json!({"kind": "msg", "time": t - g.below(4) as i64, "end": t, "loc": loc,
                "peer": peer, "name": g.pick(NAMES), "size": 8}),
            8 => json!({"kind": g.pick(&["state", "claim", "coll"]), "time": t - g.below(4) as i64,
                "end": t, "loc": loc, "name": g.pick(NAMES), "value": "1"}),
            9 => json!({"kind": "dep", "time": t - g.below(4) as i64, "end": t, "loc": loc,
                "peer": peer, "name": g.pick(&["", "data"])}),
            _ if t > signal_end => {
                let row = json!({"kind": "signal", "time": signal_end, "end": t, "loc": "S9",
                    "attrs": {"c": g.pick(NUMBERS), "b": "0", "a": "0", "time_unit": "ns"}});
                signal_end = t;
                rows.push(row);
                continue;
            }
            _ => continue,
        };
        if let Some(a) = attrs(&mut g) {
            row["attrs"] = a;
        }
        rows.push(row);
    }
    // Most streams deliver every message; the others keep halves unmatched.
    if g.chance(75) {
        for (from, to, _) in in_flight {
            t += 1;
            rows.push(
                json!({"kind": "recv", "time": t, "loc": locs[to], "peer": locs[from],
                "comm": "w", "tag": 1}),
            );
        }
    }
    rows.iter().map(|r| format!("{r}\n")).collect()
}

/// Generated streams through every writer: each is written and read back to
/// the same stream (tsv, jsonl) or to a stream a second hop keeps (paje,
/// trace), or refused with a located error. `TRACEPIPE_PROPERTY_CASES` sets
/// the number of streams (docs/reliability.md has the longer run).
#[test]
fn generated_streams_survive_every_writer_or_are_refused_with_a_place() {
    let cases: u64 = std::env::var("TRACEPIPE_PROPERTY_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let dir = scratch("writers-property");
    let mut refused = 0;
    for seed in 0..cases {
        let input = dir.join(format!("seed{seed}.jsonl"));
        std::fs::write(&input, generate(seed)).unwrap();
        for writer in WRITERS {
            let what = format!("seed {seed}");
            if let Some(e) = check_writer(&input, writer, &dir, true) {
                // STF and OTF2 times are unsigned: their one refusal.
                let unsigned = (writer == "stf"
                    && e.contains("is negative; STF times are unsigned"))
                    || (writer == "otf2" && e.contains("OTF2 times are not negative"))
                    || (writer == "pallas" && e.contains("Pallas times are not negative"));
                assert!(
                    !(is_exact(writer) || writer == "otf2" || writer == "pallas") || unsigned,
                    "{what}: {writer} refused a valid stream: {e}"
                );
                refused += 1;
            }
        }
    }
    // Most streams must go through: a writer that refuses everything fails.
    assert!(
        refused < cases,
        "{refused} refusals in {cases} streams × 2 lossy writers"
    );
}

/// Copies a trace file, with the files beside it that belong to it (an
/// STF index names its components `INDEX.<suffix>`).
fn copy_trace(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap();
    if from.extension().is_some_and(|e| e == "otf2") {
        // An OTF2 archive: its definitions and its folder of locations.
        std::fs::copy(from.with_extension("def"), to.with_extension("def")).unwrap();
        let folder = to.with_extension("");
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).unwrap();
        for entry in std::fs::read_dir(from.with_extension("")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, folder.join(path.file_name().unwrap())).unwrap();
        }
        return;
    }
    let name = from.file_name().unwrap().to_str().unwrap();
    for entry in std::fs::read_dir(from.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        let other = path.file_name().unwrap().to_str().unwrap();
        if let Some(suffix) = other.strip_prefix(&format!("{name}.")) {
            let target = format!("{}.{suffix}", to.display());
            std::fs::copy(&path, target).unwrap();
        }
    }
}

/// Every trace of the corpora that the readers accept, through every writer
/// and back, and through a second format: paje → trace → paje, trace → paje
/// → trace, pallas → paje → trace...
#[test]
fn corpus_traces_cross_every_writer() {
    let mut inputs = vec![
        data("../../examples/pingpong.tsv"),
        data("../../examples/camera.etf"),
    ];
    for format in ["paje", "trace", "pallas"] {
        let Some(dir) = corpus(format) else { return };
        inputs.extend(accepted_traces(&dir));
    }
    let dir = scratch("writers-corpus");
    let mut refusals = Vec::new();
    for input in &inputs {
        // A Pajé source PajeNG rejects (a link key used twice, which this
        // reader accepts) is copied as it is: PajeNG rejects the copies too.
        let is_paje = input
            .extension()
            .is_some_and(|e| e == "paje" || e == "trace");
        let pajeng = !is_paje || pajeng_accepts(input);
        for writer in WRITERS {
            if let Some(e) = check_writer(input, writer, &dir, pajeng) {
                refusals.push(format!("{writer}: {e}"));
                continue;
            }
            // And on through each other lossy format.
            for second in ["paje", "trace"].into_iter().filter(|w| *w != writer) {
                let first = trace_path(&dir, "hop1", writer);
                // A folder (Pallas) is not written over by the next hops.
                let copy = match first.is_dir() {
                    true => first.clone(),
                    false => trace_path(&dir, "via", writer),
                };
                if !first.is_dir() {
                    copy_trace(&first, &copy);
                }
                if let Some(e) = check_writer(&copy, second, &dir, pajeng) {
                    refusals.push(format!("{writer} → {second}: {e}"));
                }
            }
        }
    }
    // The only refusals: links with one end, which Pajé cannot hold,
    // times before the origin, which STF cannot, and traces of no events,
    // which Pallas's readers cannot read.
    for r in &refusals {
        assert!(
            r.contains("never get their other half")
                || (r.starts_with("pallas:") && r.contains("fail on a trace of no threads"))
                || (r.starts_with("stf:") && r.contains("is negative; STF times are unsigned"))
                || (r.starts_with("otf2:") && r.contains("OTF2 times are not negative"))
                || (r.starts_with("pallas:") && r.contains("Pallas times are not negative")),
            "unexpected refusal: {r}"
        );
    }
}

/// Writes `rows` (TSV rows after the header) to a file and converts it with
/// `-t writer`; returns Ok(the stream read back) or Err(the refusal).
fn convert(dir: &Path, name: &str, rows: &[String], writer: &str) -> Result<String, String> {
    let input = dir.join(format!("{name}.tsv"));
    std::fs::write(&input, stream(rows)).unwrap();
    let (_, back) = hop(&input, writer, dir, 1)?;
    Ok(back)
}

fn container(loc: &str, cat: &str, parent: &str) -> String {
    row(&[
        ("kind", "container"),
        ("loc", loc),
        ("cat", cat),
        ("peer", parent),
    ])
}

/// The streams that once became files the reader rejected now read back.
#[test]
fn odd_but_valid_streams_read_back_from_paje() {
    let dir = scratch("writers-odd");
    let enter = |t: &str, loc: &str, attrs: &str| {
        row(&[
            ("kind", "enter"),
            ("time", t),
            ("loc", loc),
            ("name", "f"),
            ("attrs", attrs),
        ])
    };
    // Location `0` (Pajé's root) and an attribute key `#`.
    let back = convert(
        &dir,
        "zero",
        &[container("0", "p", ""), enter("1", "0", "#=x")],
        "paje",
    );
    let back = back.unwrap();
    assert!(back.contains("\t_0\tp\t"), "{back}");
    assert!(back.contains("\t_=x\n") || back.contains(";_=x"), "{back}");
    // Container types nested a > b > a.
    let nested = [
        container("x", "a", ""),
        container("y", "b", "x"),
        container("z", "a", "y"),
    ];
    let back = convert(&dir, "aba", &nested, "paje").unwrap();
    for (loc, parent) in [("y", "x"), ("z", "y")] {
        assert!(
            back.lines().any(|l| l.starts_with("container")
                && l.contains(&format!("\t{loc}\t"))
                && l.contains(&format!("\t{parent}\t"))),
            "{loc} under {parent}: {back}"
        );
    }
    // A counter whose first sample is relative (a stream cut after the set).
    let counter = row(&[
        ("kind", "counter"),
        ("time", "5"),
        ("loc", "x"),
        ("name", "v"),
        ("value", "7"),
        ("attrs", "paje.op=add;paje.operand=2"),
    ]);
    let back = convert(
        &dir,
        "relative",
        &[container("x", "a", ""), counter],
        "paje",
    )
    .unwrap();
    assert!(
        back.lines()
            .any(|l| l.starts_with("counter\t5\t") && l.contains("\t7\t")),
        "{back}"
    );
    // An event keeps its name, value and category.
    let event = row(&[
        ("kind", "event"),
        ("time", "1"),
        ("loc", "x"),
        ("cat", "mark"),
        ("name", "N"),
        ("value", "V"),
    ]);
    let back = convert(&dir, "event", &[container("x", "a", ""), event], "paje").unwrap();
    let line = back.lines().find(|l| l.starts_with("event")).unwrap();
    assert!(
        line.contains("\tN\t") && line.ends_with("value=V;category=mark"),
        "{line}"
    );
    // A frame of no length at the instant its container's parent is
    // destroyed, the destruction given first (as a merge of locations may).
    let rows = [
        container("p", "a", ""),
        container("p/l", "lane", "p"),
        row(&[("kind", "destroy"), ("time", "10"), ("loc", "p")]),
        row(&[
            ("kind", "enter"),
            ("time", "10"),
            ("loc", "p/l"),
            ("name", "B"),
        ]),
        row(&[
            ("kind", "leave"),
            ("time", "10"),
            ("loc", "p/l"),
            ("name", "B"),
        ]),
    ];
    let back = convert(&dir, "destroyed", &rows, "paje").unwrap();
    assert!(
        back.lines()
            .any(|l| l.starts_with("enter\t10\t") && l.contains("\tB\t")),
        "{back}"
    );
}

/// Runs `cmd ARGS` on `stdin`; its output, whatever the status.
fn run(cmd: &str, args: &[&str], stdin: Vec<u8>) -> std::process::Output {
    bin(cmd).args(args).write_stdin(stdin).output().unwrap()
}

/// Runs `trace-cat ARGS` and returns its standard output and warnings,
/// failing the test with its error if it fails.
fn converted(args: &[&str], stdin: Vec<u8>) -> (Vec<u8>, String) {
    let out = run("trace-cat", args, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "trace-cat {args:?}: {stderr}");
    (out.stdout, stderr)
}

/// The stream the reader of `format` reads from `bytes`.
fn read_back(format: &str, bytes: Vec<u8>) -> String {
    String::from_utf8(converted(&["-f", format], bytes).0).unwrap()
}

/// The same input given twice (merged) is written once per declaration.
#[test]
fn an_input_merged_with_itself_is_written_validly() {
    let ping = data("../../examples/pingpong.tsv");
    let camera = data("../../examples/camera.etf");
    for (input, writer, warning) in [(&ping, "paje", ""), (&camera, "trace", "repeated exactly")] {
        let path = input.to_str().unwrap();
        let (written, warnings) = converted(&["-t", writer, path, path], Vec::new());
        assert!(warnings.contains(warning), "{warnings}");
        read_back(writer, written);
    }
}

/// What a format cannot hold is refused with the row's place.
#[test]
fn rows_a_writer_cannot_hold_are_refused_with_their_line() {
    let dir = scratch("writers-refused");
    let x = container("x", "a", "");
    let text_counter = row(&[
        ("kind", "counter"),
        ("time", "1"),
        ("loc", "x"),
        ("name", "c"),
        ("value", "high"),
    ]);
    let cases = [
        (
            "text-counter",
            "paje",
            text_counter.clone(),
            ":4: counter `c` has the value `high`",
        ),
        (
            "text-counter",
            "trace",
            text_counter,
            ":4: counter `c` has the value `high`",
        ),
        (
            "unmatched",
            "paje",
            row(&[
                ("kind", "send"),
                ("time", "1"),
                ("loc", "x"),
                ("peer", "x"),
                ("tag", "0"),
            ]),
            "at end of input: 1 link half(s) never get their other half, e.g. a `send` on `x`",
        ),
    ];
    for (name, writer, rec, want) in cases {
        let err = convert(&dir, name, &[x.clone(), rec], writer).unwrap_err();
        assert!(err.contains(want), "{name} via {writer}: {err}");
    }
    let signal = container("S1", "signal", "");
    let fragment = row(&[
        ("kind", "signal"),
        ("time", "0"),
        ("end", "5"),
        ("loc", "S1"),
        ("attrs", "c=abc;b=0;a=0"),
    ]);
    let err = convert(&dir, "coefficient", &[signal, fragment], "trace").unwrap_err();
    assert!(err.contains(":4: signal coefficient `c` is `abc`"), "{err}");
}

/// TRACE: values with line breaks, signals whose fragments became states,
/// dependencies whose claims were filtered out.
#[test]
fn trace_writer_keeps_files_readable() {
    let nasty = std::fs::read(data("nasty.tsv")).unwrap();
    let (written, warnings) = converted(&["-t", "trace"], nasty);
    assert!(
        warnings.contains("attribute list(s) changed to fit TRACE"),
        "{warnings}"
    );
    read_back("trace", written);
    // TRACE → Pajé → TRACE: the signal comes back with its fragments.
    let camera = std::fs::read(data("../../examples/camera.etf")).unwrap();
    let (paje, _) = converted(&["-t", "paje"], camera.clone());
    let (trace, _) = converted(&["-f", "paje", "-t", "trace"], paje);
    let back = read_back("trace", trace);
    let fragments = |text: &str| text.lines().filter(|l| l.starts_with("signal\t")).count();
    let source = String::from_utf8(converted(&[], camera.clone()).0).unwrap();
    assert!(fragments(&source) > 0);
    assert_eq!(fragments(&back), fragments(&source), "{back}");
    // Dependencies whose claims are gone become two events and a type-4 dependency.
    let deps = run("trace-filter", &["-k", "dep,container"], camera).stdout;
    let (written, warnings) = converted(&["-t", "trace"], deps);
    assert!(warnings.contains("6 dependency(ies) whose claim or event is not in the stream"));
    let back = read_back("trace", written);
    let count = |kind: &str| {
        back.lines()
            .filter(|l| l.split('\t').next() == Some(kind))
            .count()
    };
    assert_eq!((count("dep"), count("event")), (6, 12), "{back}");
}

/// TRACE → Pajé keeps what Pajé can hold: claims as states that read back
/// as the claims they were, the buffer-fill signal as a variable,
/// dependencies as links.
#[test]
fn trace_to_paje_keeps_claims_values_and_links() {
    let camera = std::fs::read(data("../../examples/camera.etf")).unwrap();
    // A claim read back has the Pajé type of its lines as an attribute.
    let claims = |stream: &str| -> Vec<String> {
        let mut rows: Vec<String> = stream
            .lines()
            .filter(|l| l.starts_with("claim\t"))
            .map(|l| l.split(";paje.type=").next().unwrap().to_string())
            .collect();
        rows.sort();
        rows
    };
    let stream = String::from_utf8(converted(&[], camera.clone()).0).unwrap();
    let back = read_back("paje", converted(&["-t", "paje"], camera).0);
    assert!(!claims(&stream).is_empty());
    assert_eq!(claims(&back), claims(&stream));
    let signals = |stream: &str| -> Vec<String> {
        let rows = stream.lines().filter(|l| l.starts_with("signal\t"));
        rows.map(|l| l.split(";paje.type=").next().unwrap().to_string())
            .collect()
    };
    assert!(!signals(&stream).is_empty());
    assert_eq!(signals(&back), signals(&stream));
    assert_eq!(back.lines().filter(|l| l.starts_with("msg\t")).count(), 6);
}

/// A row with an extent comes when it completes, after rows that start
/// later: the Pajé writer writes it then, and its own reader reads it back
/// with the default reorder window however many rows it spans.
#[test]
fn a_long_claim_reads_back_from_paje() {
    let mut rows = vec![container("x", "a", "")];
    for t in 1..=10_000 {
        let t = t.to_string();
        rows.push(row(&[
            ("kind", "event"),
            ("time", &t),
            ("loc", "x"),
            ("name", "e"),
        ]));
    }
    let claim = row(&[
        ("kind", "claim"),
        ("time", "0"),
        ("end", "10001"),
        ("loc", "x"),
        ("value", "3"),
        ("id", "7"),
        ("attrs", "stage=long"),
    ]);
    rows.push(claim.clone());
    let (paje, _) = converted(&["-t", "paje"], stream(&rows).into_bytes());
    let back = read_back("paje", paje);
    let got: Vec<&str> = back.lines().filter(|l| l.starts_with("claim\t")).collect();
    // The Pajé type of its lines comes with it.
    assert_eq!(got, [format!("{claim};paje.type=a.claim0")]);
    assert_eq!(
        back.lines().filter(|l| l.starts_with("event\t")).count(),
        10_000
    );
}

/// Pajé variable values read canonically after a set as after an add.
#[test]
fn paje_variable_values_are_canonical() {
    let dir = scratch("writers-variable");
    let x = container("x", "a", "");
    let set = row(&[
        ("kind", "counter"),
        ("time", "1"),
        ("loc", "x"),
        ("name", "v"),
        ("value", "0.000000"),
    ]);
    let back = convert(&dir, "set", &[x, set], "paje").unwrap();
    assert!(
        back.lines()
            .any(|l| l.starts_with("counter\t1\t") && l.split('\t').nth(12) == Some("0")),
        "{back}"
    );
}

/// Pajé links and MPI halves reach TRACE as two events and a dependency
/// between them (type 4, numeric ids), which TRACE4CPS follows; a half whose
/// partner never comes stays an event.
#[test]
fn messages_become_trace_dependencies() {
    let dependencies = |input: &Path| -> Vec<String> {
        let out = bin("trace-cat")
            .args(["-q", "-t", "trace"])
            .arg(input)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("D "))
            .map(str::to_string)
            .collect()
    };
    for (input, links) in [
        (data("paje/sample.paje"), 2),
        (data("paje/smpi_aliases.paje"), 1),
        (data("../../examples/pingpong.tsv"), 3),
    ] {
        let deps = dependencies(&input);
        assert_eq!(deps.len(), links, "{input:?}: {deps:?}");
        for d in &deps {
            let fields: Vec<&str> = d.split_whitespace().collect();
            assert!(fields[1].bytes().all(|b| b.is_ascii_digit()), "{d}");
            assert_eq!(fields[2], "4", "{d}");
        }
    }
    let sends = run(
        "trace-filter",
        &["-k", "send", "examples/pingpong.tsv"],
        Vec::new(),
    )
    .stdout;
    let (written, _) = converted(&["-t", "trace"], sends);
    let text = String::from_utf8(written).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("D ")).count(), 0);
    assert_eq!(text.lines().filter(|l| l.starts_with("E ")).count(), 3);
}

/// OTF2 and Pallas strings end at a NUL byte: a name holding one is
/// refused (at its row where the writer defines strings as rows come),
/// never cut so that two locations become one.
#[test]
fn names_holding_a_nul_are_refused_not_cut() {
    let dir = scratch("writers-nul");
    let input = dir.join("nul.jsonl");
    let rows = [
        r#"{"kind":"container","loc":"p\u0000a","cat":"thread"}"#,
        r#"{"kind":"container","loc":"p\u0000b","cat":"thread"}"#,
        r#"{"kind":"enter","time":1,"loc":"p\u0000a","name":"f"}"#,
        r#"{"kind":"leave","time":2,"loc":"p\u0000a","name":"f"}"#,
    ];
    std::fs::write(&input, rows.join("\n") + "\n").unwrap();
    for (format, out, at) in [
        ("otf2", "nul.otf2", "nul.jsonl:3: "),
        ("pallas", "nul.pallas/", "nul.jsonl: at end of input: "),
    ] {
        let out = bin("trace-cat")
            .arg(&input)
            .args(["-t", format, "-o"])
            .arg(dir.join(out))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{format}: {err}");
        assert!(
            err.contains(at) && err.contains("`p\\0a` holds a NUL byte, which ends a string in"),
            "{format}: {err}"
        );
    }
}

/// PajeNG reads 20 words a line: a row with more attributes than fit keeps
/// them in one field, and reads back with each.
#[test]
fn a_row_with_many_attributes_fits_a_pajeng_line() {
    let attrs: Vec<String> = (0..30).map(|n| format!("k{n}=v%3B{n}")).collect();
    let claim = row(&[
        ("kind", "claim"),
        ("time", "1"),
        ("end", "2"),
        ("loc", "x"),
        ("attrs", &attrs.join(";")),
    ]);
    let rows = [container("x", "a", ""), claim.clone()];
    let dir = scratch("writers-paje-wide");
    let paje = dir.join("wide.paje");
    let out = paje.to_str().unwrap();
    converted(&["-t", "paje", "-o", out], stream(&rows).into_bytes());
    let text = std::fs::read_to_string(&paje).unwrap();
    let widest = text
        .lines()
        .filter(|l| !l.starts_with('%'))
        .map(|l| l.split(' ').count())
        .max();
    assert!(widest.is_some_and(|w| w <= 20), "{text}");
    assert!(pajeng_accepts(&paje));
    let back = String::from_utf8(converted(&[out], Vec::new()).0).unwrap();
    let got: Vec<&str> = back.lines().filter(|l| l.starts_with("claim\t")).collect();
    assert_eq!(got, [format!("{claim};paje.type=a.claim0")]);
}

/// Location names with a `/` at either end come back from OTF2 as they were.
#[test]
fn otf2_keeps_location_names_with_slashes() {
    let names = ["/x", "x/", "a//b", "p/q", "/"];
    let mut rows = Vec::new();
    for (n, loc) in names.iter().enumerate() {
        let t = (2 * n + 1).to_string();
        let end = (2 * n + 2).to_string();
        rows.push(container(loc, "thread", ""));
        rows.push(row(&[
            ("kind", "enter"),
            ("time", &t),
            ("loc", loc),
            ("name", "f"),
        ]));
        rows.push(row(&[
            ("kind", "leave"),
            ("time", &end),
            ("loc", loc),
            ("name", "f"),
        ]));
    }
    let dir = scratch("writers-otf2-slashes");
    let out = dir.join("slashes.otf2");
    let out = out.to_str().unwrap();
    converted(&["-t", "otf2", "-o", out], stream(&rows).into_bytes());
    let back = String::from_utf8(converted(&[out], Vec::new()).0).unwrap();
    let mut got: Vec<&str> = back
        .lines()
        .filter(|l| l.starts_with("enter\t"))
        .map(|l| l.split('\t').nth(3).unwrap())
        .collect();
    got.sort_unstable();
    let mut want = names.to_vec();
    want.sort_unstable();
    assert_eq!(got, want, "{back}");
}

/// An OTF2 record must fit in a chunk (1 MiB): a row with a 2 MB value is
/// refused at its line, saying the limit.
#[test]
fn a_row_larger_than_an_otf2_chunk_is_refused_at_its_line() {
    let dir = scratch("writers-otf2-large");
    let input = dir.join("big.jsonl");
    let value = "x".repeat(2_000_000);
    let rows = [
        r#"{"kind":"container","loc":"p","cat":"thread"}"#.to_string(),
        format!(r#"{{"kind":"event","time":1,"loc":"p","name":"e","value":"{value}"}}"#),
    ];
    std::fs::write(&input, rows.join("\n") + "\n").unwrap();
    let out = bin("trace-cat")
        .arg(&input)
        .args(["-t", "otf2", "-o"])
        .arg(dir.join("big.otf2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("big.jsonl:2: the row makes an OTF2 record of")
            && err.contains("more than a chunk of 1048576 bytes holds"),
        "{err}"
    );
}

/// What a foreign archive carries in tracepipe's marks (a row kept whole,
/// the stream's head) is held to the stream's rules: a row on a location
/// no row declares, or a container under an undeclared parent, is refused
/// at its place, not passed on.
#[test]
fn marks_in_a_foreign_trace_follow_the_stream_rules() {
    let dir = scratch("writers-marks");
    let rows = [
        container("p", "process", ""),
        container("x", "thread", "p"),
        row(&[
            ("kind", "enter"),
            ("time", "10"),
            ("loc", "x"),
            ("name", "f"),
        ]),
        row(&[
            ("kind", "leave"),
            ("time", "20"),
            ("loc", "x"),
            ("name", "f"),
        ]),
        row(&[
            ("kind", "claim"),
            ("time", "30"),
            ("end", "40"),
            ("loc", "x"),
        ]),
    ];
    let input = stream(&rows).into_bytes();
    let refused = |path: &Path, want: &str| {
        let out = run("trace-cat", &["-q", path.to_str().unwrap()], Vec::new());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(want), "{err}");
    };
    // OTF2: the claim is a row kept whole in the definitions' strings.
    let otf2 = dir.join("t.otf2");
    converted(&["-t", "otf2", "-o", otf2.to_str().unwrap()], input.clone());
    common::tamper(
        &otf2.with_extension("def"),
        r#""loc":"x"}"#,
        r#""loc":"z"}"#,
    );
    refused(
        &otf2,
        "location `z` is used before a `container` row declares it",
    );
    // Pallas: the head's containers in the main file's metadata.
    let pallas = dir.join("t-pallas/");
    converted(&["-t", "pallas", "-o", pallas.to_str().unwrap()], input);
    common::tamper(
        &pallas.join("main.pallas"),
        r#""peer":"p""#,
        r#""peer":"q""#,
    );
    refused(
        &pallas,
        "names parent `q`, which no earlier `container` row declares",
    );
}
