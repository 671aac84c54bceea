//! `trace-match`: messages from their halves agree with the reference
//! tools, do not depend on how locations interleave, and collectives get
//! their instances.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{bin, corpus, row, scratch, stream, Rng};
use tracepipe::error::Warnings;
use tracepipe::pipe::RecordSink;
use tracepipe::stages::matcher::{Matcher, Unmatched};
use tracepipe::{Kind, Record};

/// Runs `trace-match ARGS FILE`: (stdout, stderr, success).
fn run_match(args: &[&str], file: &Path) -> (String, String, bool) {
    let out = bin("trace-match").args(args).arg(file).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr), out.status.success())
}

/// Column `n` (0-based) of a TSV row.
fn field(line: &str, n: usize) -> &str {
    line.split('\t').nth(n).unwrap_or("")
}

fn rows_of<'a>(out: &'a str, kind: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    out.lines().filter(move |l| field(l, 0) == kind)
}

/// Every send of every Pallas corpus trace is matched, into as many
/// messages as upstream `pallas_print` shows sends.
#[test]
fn pallas_corpus_sends_are_all_matched() {
    let Some(dir) = corpus("pallas") else { return };
    let mut traces = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let trace = entry.unwrap().path();
        let name = trace.file_name().unwrap().to_str().unwrap().to_string();
        let expected = dir.join("expected").join(format!("{name}.txt"));
        if !trace.is_dir() || !expected.exists() {
            continue;
        }
        let (out, err, ok) = run_match(&["--unmatched", "error"], &trace);
        if !ok && err.contains("libzfp") {
            continue; // Built without the zfp feature.
        }
        assert!(ok, "{name}: {err}");
        let text = std::fs::read_to_string(&expected).unwrap();
        let sends = text
            .lines()
            .filter(|l| l.contains("MPI_SEND(") || l.contains("MPI_ISEND("))
            .count();
        assert_eq!(rows_of(&out, "msg").count(), sends, "{name}");
        assert_eq!(
            rows_of(&out, "send").count() + rows_of(&out, "recv").count(),
            0
        );
        assert!(
            err.contains(&format!("{sends} message(s) matched")),
            "{err}"
        );
        traces += 1;
    }
    assert!(traces >= 8, "only {traces} traces checked");
}

/// `%.6f` of a time in ns, as pj_dump prints seconds.
fn secs(ns: i64) -> String {
    format!("{:.6}", ns as f64 / 1e9)
}

/// The `msg` rows of a Pajé trace equal the `Link` lines of its expected
/// pj_dump output: container, type, times, value, ends and key.
#[test]
fn paje_corpus_messages_equal_pjdump_links() {
    let Some(dir) = corpus("paje") else { return };
    let mut checked = 0;
    for (folder, index) in [
        ("", "expected/INDEX.tsv"),
        ("edge/", "expected/edge/INDEX.tsv"),
    ] {
        let text = std::fs::read_to_string(dir.join(index)).unwrap();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split('\t').collect();
            let (input, args, code, expected) = (cols[0], cols[1], cols[2], cols[3]);
            let incomplete = args == "-z";
            if code != "0" || !(args == "(none)" || incomplete) {
                continue;
            }
            let want: BTreeSet<String> =
                std::fs::read_to_string(dir.join("expected").join(folder).join(expected))
                    .unwrap()
                    .lines()
                    .filter(|l| l.starts_with("Link, "))
                    .map(str::to_string)
                    .collect();
            let mut options = vec!["--unmatched", if incomplete { "drop" } else { "error" }];
            if incomplete {
                options.extend(["--ignore-incomplete-links"]);
            }
            let path = dir.join(folder).join(input);
            let (out, err, ok) = run_match(&options, &path);
            if !ok
                && !bin("trace-cat")
                    .arg(&path)
                    .output()
                    .unwrap()
                    .status
                    .success()
            {
                continue; // A deliberate difference of the reader (tests/paje.rs).
            }
            assert!(ok, "{input}: {err}");
            // pj_dump names types and containers by name, the stream by id.
            let mut names = std::collections::HashMap::new();
            for l in rows_of(&out, "type") {
                names.insert(("type", field(l, 11)), field(l, 5));
            }
            for l in rows_of(&out, "container") {
                names.insert(("container", field(l, 3)), field(l, 5));
            }
            let named = |what: &'static str, id| *names.get(&(what, id)).unwrap_or(&id);
            let got: BTreeSet<String> = rows_of(&out, "msg")
                .map(|m| {
                    let (t, e) = (
                        field(m, 1).parse::<i64>().unwrap(),
                        field(m, 2).parse::<i64>().unwrap(),
                    );
                    format!(
                        "Link, {}, {}, {}, {}, {}, {}, {}, {}, {}",
                        named("container", field(m, 8)),
                        named("type", field(m, 4)),
                        secs(t),
                        secs(e),
                        secs(e - t),
                        field(m, 5),
                        named("container", field(m, 3)),
                        named("container", field(m, 7)),
                        field(m, 11)
                    )
                })
                .collect();
            assert_eq!(got, want, "{input} {args}");
            checked += usize::from(!want.is_empty());
        }
    }
    assert!(checked >= 6, "only {checked} traces with links checked");
}

thread_local! {
    /// The symbol table of the rows the tests below make.
    static SYMBOLS: tracepipe::Symbols = tracepipe::Symbols::new();
}

fn symbols() -> tracepipe::Symbols {
    SYMBOLS.with(tracepipe::Symbols::clone)
}

fn half(kind: Kind, t: i64, loc: &str, peer: &str, tag: i64) -> Record {
    let symbols = symbols();
    let mut r = Record::new(kind);
    r.time = Some(t);
    r.loc = symbols.intern(loc);
    r.peer = symbols.intern(peer);
    r.comm = symbols.intern("w");
    r.tag = Some(tag);
    r.size = Some(t as u64);
    r
}

struct Collect(Vec<Record>);

impl RecordSink for Collect {
    fn write(&mut self, rec: &Record) -> tracepipe::Result<()> {
        self.0.push(rec.clone());
        Ok(())
    }
    fn finish(&mut self) -> tracepipe::Result<()> {
        Ok(())
    }
}

/// The messages of a set of per-location sequences, fed in one interleaving.
fn messages(per_loc: &[Vec<Record>], rng: &mut Rng) -> BTreeSet<String> {
    let symbols = symbols();
    let mut m = Matcher::new(
        Collect(Vec::new()),
        Unmatched::Keep,
        symbols.clone(),
        Warnings::default(),
    );
    let mut next = vec![0; per_loc.len()];
    loop {
        let open: Vec<usize> = (0..per_loc.len())
            .filter(|&l| next[l] < per_loc[l].len())
            .collect();
        if open.is_empty() {
            break;
        }
        let l = open[rng.below(open.len() as u64) as usize];
        m.write(&per_loc[l][next[l]]).unwrap();
        next[l] += 1;
    }
    m.finish().unwrap();
    m.inner_mut()
        .0
        .iter()
        .map(|r| {
            format!(
                "{:?} {:?} {:?} {} {} {:?} {}",
                r.kind,
                r.time,
                r.end,
                symbols.text(r.loc),
                symbols.text(r.peer),
                r.tag,
                r.flags
            )
        })
        .collect()
}

/// Any interleaving of the locations' own sequences (each kept in order)
/// gives the same messages: FIFO per channel depends only on each
/// location's order.
#[test]
fn messages_do_not_depend_on_how_locations_interleave() {
    for seed in 1..60u64 {
        let mut rng = Rng(seed * 0x9E37_79B9 + 7);
        let locs = ["a", "b", "c", "d"];
        let mut per_loc: Vec<Vec<Record>> = vec![Vec::new(); locs.len()];
        let mut t = 0;
        for _ in 0..40 {
            t += 1;
            let (s, r) = (rng.below(4) as usize, rng.below(4) as usize);
            let tag = rng.below(3) as i64;
            per_loc[s].push(half(Kind::Send, t, locs[s], locs[r], tag));
            if rng.below(10) > 0 {
                // The receive comes later on its own location.
                per_loc[r].push(half(
                    Kind::Recv,
                    t + 100 + rng.below(50) as i64,
                    locs[r],
                    locs[s],
                    tag,
                ));
            }
        }
        for seq in &mut per_loc {
            seq.sort_by_key(|r| r.time);
        }
        let first = messages(&per_loc, &mut Rng(seed));
        assert!(first.iter().any(|m| m.starts_with("Msg")), "seed {seed}");
        for other in 1..5u64 {
            assert_eq!(
                messages(&per_loc, &mut Rng(seed * 1000 + other)),
                first,
                "seed {seed}"
            );
        }
    }
}

/// Halves whose partner never comes: kept flagged U by default, left out
/// with --unmatched drop, an error naming the first one's line with
/// --unmatched error; --max-pending stops at the row that overflows.
#[test]
fn unmatched_halves_and_the_pending_guard() {
    let dir = scratch("match-unmatched");
    let file = dir.join("lost.tsv");
    let send = |t: &str, tag: &str| {
        row(&[
            ("kind", "send"),
            ("time", t),
            ("loc", "a"),
            ("peer", "b"),
            ("tag", tag),
        ])
    };
    let recv = row(&[
        ("kind", "recv"),
        ("time", "5"),
        ("loc", "b"),
        ("peer", "a"),
        ("tag", "1"),
    ]);
    let rows = [
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[("kind", "container"), ("loc", "b")]),
        send("1", "1"),
        send("2", "2"),
        send("3", "2"),
        recv,
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let (out, err, ok) = run_match(&[], &file);
    assert!(ok, "{err}");
    assert_eq!(rows_of(&out, "msg").count(), 1);
    assert!(rows_of(&out, "send").all(|l| field(l, 13) == "U"));
    assert_eq!(rows_of(&out, "send").count(), 2);
    assert!(err.contains("1 message(s) matched, 0 received before sent (R), 2 half/halves unmatched (2 send, 0 recv)"), "{err}");
    assert!(
        err.contains("unmatched on a -> b comm  tag 2: 2 send, 0 recv"),
        "{err}"
    );
    let (out, _, ok) = run_match(&["--unmatched", "drop"], &file);
    assert!(ok && rows_of(&out, "send").count() == 0);
    let (_, err, ok) = run_match(&["--unmatched", "error"], &file);
    assert!(!ok);
    assert!(
        err.contains("lost.tsv:6: a `send` of channel a -> b comm  tag 2 never matched (2 half/halves unmatched in all: 2 send, 0 recv)"),
        "{err}"
    );
    assert!(
        !err.contains("message(s) matched"),
        "no summary of a failed run: {err}"
    );
    let (_, err, ok) = run_match(&["--max-pending", "2"], &file);
    assert!(!ok);
    assert!(
        err.contains("lost.tsv:7: more than 2 message halves wait"),
        "{err}"
    );
}

/// Attributes of both halves are kept; clashing keys and sizes are told
/// apart; a tagged receive without its sender is an error at its line.
#[test]
fn attributes_sizes_and_bad_halves() {
    let dir = scratch("match-attrs");
    let file = dir.join("attrs.tsv");
    let rows = [
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[("kind", "container"), ("loc", "b")]),
        row(&[
            ("kind", "send"),
            ("time", "1"),
            ("loc", "a"),
            ("peer", "b"),
            ("tag", "0"),
            ("size", "8"),
            ("attrs", "req=1;file=x.c"),
        ]),
        row(&[
            ("kind", "recv"),
            ("time", "4"),
            ("loc", "b"),
            ("peer", "a"),
            ("tag", "0"),
            ("size", "16"),
            ("attrs", "req=9;file=x.c"),
        ]),
        row(&[("kind", "recv"), ("time", "5"), ("loc", "b"), ("tag", "0")]),
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let (_, err, ok) = run_match(&[], &file);
    assert!(!ok);
    assert!(
        err.contains("attrs.tsv:7: a tagged `recv` needs its actual sender in `peer`"),
        "{err}"
    );
    std::fs::write(&file, stream(&rows[..4])).unwrap();
    let (out, err, ok) = run_match(&["--halves"], &file);
    assert!(ok, "{err}");
    let msg = rows_of(&out, "msg").next().unwrap();
    assert_eq!(field(msg, 10), "8");
    assert_eq!(
        field(msg, 14),
        "send.req=1;file=x.c;recv.req=9;send.size=8;recv.size=16"
    );
    assert!(
        err.contains("1 message(s) whose send and receive give different sizes"),
        "{err}"
    );
    assert_eq!(
        rows_of(&out, "send").count() + rows_of(&out, "recv").count(),
        2,
        "--halves"
    );
}

/// The k-th collective of a communicator on each location is instance k;
/// a late participant makes the others wait, and rows after the
/// collective keep their order.
#[test]
fn collective_instances_with_a_late_participant() {
    let dir = scratch("match-coll");
    let file = dir.join("coll.tsv");
    let coll = |t: &str, end: &str, loc: &str| {
        row(&[
            ("kind", "coll"),
            ("time", t),
            ("end", end),
            ("loc", loc),
            ("name", "BARRIER"),
            ("comm", "world"),
        ])
    };
    let mut rows: Vec<String> = ["r0", "r1", "r2"]
        .iter()
        .map(|l| row(&[("kind", "container"), ("loc", l), ("cat", "process")]))
        .collect();
    rows.extend([
        coll("10", "50", "r0"),
        coll("12", "51", "r1"),
        row(&[
            ("kind", "event"),
            ("time", "51"),
            ("loc", "r0"),
            ("name", "between"),
        ]),
        coll("48", "52", "r2"), // Late: the others waited for it.
        coll("60", "70", "r0"),
        coll("61", "71", "r1"),
        coll("62", "72", "r2"),
    ]);
    std::fs::write(&file, stream(&rows)).unwrap();
    let (out, err, ok) = run_match(&[], &file);
    assert!(ok, "{err}");
    let got: Vec<(String, String, String)> = out
        .lines()
        .filter(|l| matches!(field(l, 0), "coll" | "event"))
        .map(|l| {
            (
                field(l, 3).to_string(),
                field(l, 11).to_string(),
                field(l, 14).to_string(),
            )
        })
        .collect();
    let want = [
        ("r0", "0", "first_arrival=10;last_arrival=48;wait=38"),
        ("r1", "0", "first_arrival=10;last_arrival=48;wait=36"),
        ("r0", "", ""),
        ("r2", "0", "first_arrival=10;last_arrival=48;wait=0"),
        ("r0", "1", "first_arrival=60;last_arrival=62;wait=2"),
        ("r1", "1", "first_arrival=60;last_arrival=62;wait=1"),
        ("r2", "1", "first_arrival=60;last_arrival=62;wait=0"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(got, want);
    assert!(!err.contains("participant"), "{err}");
}

/// Nonblocking receives match in posting order (MPI's non-overtaking
/// rule): two receives on one channel that complete in reverse order still
/// pair with the sends in the order they were posted, and the output stays
/// in stream order.
#[test]
fn nonblocking_receives_match_in_posting_order() {
    let dir = scratch("match-posting");
    let file = dir.join("irecv.tsv");
    let post = |t: &str, req: &str| {
        row(&[
            ("kind", "event"),
            ("time", t),
            ("loc", "b"),
            ("name", "MPI_Irecv"),
            ("id", req),
            ("attrs", "posts=recv"),
        ])
    };
    let send = |t: &str| {
        row(&[
            ("kind", "send"),
            ("time", t),
            ("loc", "a"),
            ("peer", "b"),
            ("tag", "0"),
            ("size", t),
        ])
    };
    let recv = |t: &str, req: &str| {
        row(&[
            ("kind", "recv"),
            ("time", t),
            ("loc", "b"),
            ("peer", "a"),
            ("tag", "0"),
            ("id", req),
        ])
    };
    let rows = [
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[("kind", "container"), ("loc", "b")]),
        post("0", "A"),
        post("1", "B"),
        send("1"),
        send("2"),
        recv("5", "B"),
        row(&[
            ("kind", "event"),
            ("time", "5"),
            ("loc", "a"),
            ("name", "between"),
        ]),
        recv("6", "A"),
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let (out, err, ok) = run_match(&["--unmatched", "error"], &file);
    assert!(ok, "{err}");
    let got: Vec<String> = out
        .lines()
        .filter(|l| matches!(field(l, 0), "msg" | "event"))
        .map(|l| {
            format!(
                "{} {}-{} {}",
                field(l, 0),
                field(l, 1),
                field(l, 2),
                field(l, 11)
            )
        })
        .collect();
    // At one instant rows keep the order they were made in.
    let want = [
        "event 0- A",
        "event 1- B",
        "event 5- ",
        "msg 2-5 B",
        "msg 1-6 A",
    ];
    assert_eq!(got, want);
    // The output is a valid stream (in completion order).
    bin("trace-cat").write_stdin(out).assert().success();
}

/// A collective one participant never reaches holds the rows after it:
/// `--max-held` bounds them with an error naming the row, the instance and
/// who is missing; without it, the instance is written at the end flagged
/// `I` with a warning, not as complete.
#[test]
fn a_collective_never_joined_is_bounded_and_flagged() {
    let dir = scratch("coll-never-joined");
    let coll = |t: &str, end: &str, loc: &str| {
        row(&[
            ("kind", "coll"),
            ("time", t),
            ("end", end),
            ("loc", loc),
            ("name", "barrier"),
            ("comm", "w"),
        ])
    };
    let mut rows = vec![
        row(&[("kind", "container"), ("loc", "a"), ("cat", "proc")]),
        row(&[("kind", "container"), ("loc", "b"), ("cat", "proc")]),
        coll("1", "2", "a"),
        coll("1", "2", "b"),
        coll("5", "6", "a"),
    ];
    for t in 10..30 {
        rows.push(row(&[
            ("kind", "event"),
            ("time", &t.to_string()),
            ("loc", "a"),
            ("name", "e"),
        ]));
    }
    let file = dir.join("coll.tsv");
    std::fs::write(&file, stream(&rows)).unwrap();
    let (_, err, ok) = run_match(&["--max-held", "5"], &file);
    assert!(!ok);
    assert!(
        err.contains("coll.tsv:12: more than 5 rows are held behind barrier #1 on comm `w`, which `b` has not reached (--max-held)"),
        "{err}"
    );
    let (out, err, ok) = run_match(&[], &file);
    assert!(ok, "{err}");
    let colls: Vec<&str> = rows_of(&out, "coll").collect();
    assert_eq!(colls.len(), 3);
    assert!(
        colls[..2].iter().all(|l| l.split('\t').nth(13) == Some("")),
        "{out}"
    );
    assert_eq!(colls[2].split('\t').nth(13), Some("I"), "{out}");
    assert!(
        err.contains(
            "1 collective instance(s) incomplete at the end of the stream, written flagged I"
        ),
        "{err}"
    );
    assert!(
        err.contains("barrier #1 on comm `w`: 1 participant(s) of 2"),
        "{err}"
    );
    assert!(!err.contains("another participant count"), "{err}");
    let (_, err, ok) = run_match(&["--max-held", "0"], &file);
    assert!(ok, "0 lifts the bound: {err}");
}

/// Without options the rows held behind a collective and the halves
/// waiting are bounded (1 000 000 each, as --help says): a stream that
/// never completes them stops with the error, not with memory exhausted.
#[test]
fn trace_match_bounds_what_it_holds_by_default() {
    let dir = scratch("match-default-bounds");
    let header = stream(&[
        row(&[("kind", "container"), ("loc", "a"), ("cat", "proc")]),
        row(&[("kind", "container"), ("loc", "b"), ("cat", "proc")]),
    ]);
    let mut held = header.clone();
    held.push_str(&row(&[
        ("kind", "coll"),
        ("time", "1"),
        ("end", "2"),
        ("loc", "a"),
        ("name", "barrier"),
        ("comm", "w"),
    ]));
    held.push('\n');
    let mut pending = header;
    for t in 10..1_000_020u64 {
        let t = t.to_string();
        held.push_str(&format!("event\t{t}\t\ta\t\te\t\t\t\t\t\t\t\t\t\n"));
        pending.push_str(&format!("send\t{t}\t\ta\t\t\t\tb\t\t1\t\t\t\t\t\n"));
    }
    for (name, text, words) in [
        (
            "held.tsv",
            held,
            "rows are held behind barrier #0 on comm `w`",
        ),
        (
            "pending.tsv",
            pending,
            "message halves wait for their partner (--max-pending)",
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let (_, err, ok) = run_match(&[], &file);
        assert!(!ok, "{name}");
        assert!(
            err.contains("more than 1000000 ") && err.contains(words),
            "{err}"
        );
    }
}

/// A Pajé trace: links the reader pairs itself count as matched, and a link
/// it would drop incomplete fails `--unmatched error`, the CI gate.
#[test]
fn links_the_paje_reader_pairs_count_and_incomplete_ones_fail_the_gate() {
    let header = std::fs::read_to_string(common::data("paje/header.paje")).unwrap();
    let trace = |body: &str| {
        format!(
            "{header}0 M 0 Machine\n0 T M Thread\n4 L M T T Link\n\
             6 0 m1 M 0 m1\n6 0 t1 T m1 t1\n6 0 t2 T m1 t2\n{body}"
        )
    };
    let dir = scratch("match-paje-links");
    let whole = dir.join("whole.paje");
    let links = "15 1 m1 L t1 v k1 8\n16 2 m1 L t2 v k1\n15 3 m1 L t1 v k2 8\n16 4 m1 L t2 v k2\n";
    std::fs::write(&whole, trace(links)).unwrap();
    let (out, err, ok) = run_match(&["--unmatched", "error"], &whole);
    assert!(ok, "{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("msg\t")).count(), 2);
    assert!(
        err.contains("2 message(s) matched (2 read already paired)")
            && err.contains("0 half/halves unmatched"),
        "{err}"
    );
    // The second link's end never comes: dropped with a warning when asked,
    // but never past the gate.
    let lost = dir.join("lost.paje");
    std::fs::write(
        &lost,
        trace("15 1 m1 L t1 v k1 8\n16 2 m1 L t2 v k1\n15 3 m1 L t1 v k2 8\n"),
    )
    .unwrap();
    let (_, err, ok) = run_match(&["--ignore-incomplete-links"], &lost);
    assert!(ok && err.contains("1 incomplete link(s) dropped"), "{err}");
    let (_, err, ok) = run_match(
        &["--ignore-incomplete-links", "--unmatched", "error"],
        &lost,
    );
    assert!(!ok, "{err}");
    assert!(
        err.contains("lost.paje: at end of input: incomplete link: key `k2`")
            && err.contains("--unmatched error refuses it"),
        "{err}"
    );
}
