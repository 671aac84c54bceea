//! `trace-slice`: golden window of the example, slices of slices, slices
//! and spans in either order, slices written to Pajé and TRACE and read
//! back, rebasing, and usage errors.

mod common;

use std::path::{Path, PathBuf};

use common::{
    accepted_traces, as_cut_frame, bin, col, corpus, data, pajeng_accepts, row, scratch, stream,
    Rng,
};

/// Runs `trace-slice ARGS INPUT`; Ok(stdout) or Err(stderr).
fn slice(args: &[&str], input: &Path) -> Result<String, String> {
    let out = bin("trace-slice").args(args).arg(input).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(text(&out.stderr))
    }
}

/// The stream without its `source` meta row (it names the file read).
fn without_source(text: &str) -> String {
    text.lines()
        .filter(|l| !(l.starts_with("meta\t") && col(l, "name") == "source"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The columns of a slice's rows the golden tests look at.
fn golden_rows(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .filter(|l| !l.starts_with("meta"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            [f[0], f[1], f[3], f[5], f[12], f[13], f[14]]
                .join(" ")
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The example's window [3 µs, 6 µs): frames and a counter value carried in
/// at the start, frames cut at the end (with --true-ends, their true ends
/// read and recorded), containers ended there.
#[test]
fn window_of_the_example() {
    let example = data("../../examples/pingpong.tsv");
    let window = ["--from", "3us", "--to", "6us"];
    let want = [
        "container  node0 node0",
        "container 0 rank0 MPI rank 0",
        "container 0 rank1 MPI rank 1",
        "counter 3000 rank1 bytes_received 4096 S mode=abs;unit=B;orig_time=1950",
        "enter 3000 rank0 main  S orig_time=0",
        "enter 3000 rank1 main  S orig_time=0",
        "enter 3000 rank1 compute  S iteration=0;orig_time=2000",
        "leave 4000 rank1 compute",
        "enter 4000 rank0 MPI_Send",
        "enter 4050 rank1 MPI_Recv",
        "send 4100 rank0",
        "leave 4400 rank0 MPI_Send",
        "recv 4900 rank1",
        "leave 4950 rank1 MPI_Recv",
        "counter 4950 rank1 bytes_received 8192  mode=abs;unit=B",
        "enter 5000 rank1 compute   iteration=1",
        "leave 6000 rank1 compute  C orig_end=7000",
        "leave 6000 rank0 main  C orig_end=10010",
        "leave 6000 rank1 main  C orig_end=10020",
        "destroy 6000 rank1   S",
        "destroy 6000 rank0   S",
        "destroy 6000 node0   S",
    ];
    let true_ends = slice(&[&window[..], &["--true-ends"]].concat(), &example).unwrap();
    assert_eq!(golden_rows(&true_ends), want, "{true_ends}");
    // By default the frames open at 6 µs leave there, by location, with no
    // true end.
    let cut = slice(&window, &example).unwrap();
    let mut want: Vec<String> = want.map(String::from).to_vec();
    want.splice(
        16..19,
        [
            "leave 6000 rank0 main  C",
            "leave 6000 rank1 compute  C",
            "leave 6000 rank1 main  C",
        ]
        .map(String::from),
    );
    assert_eq!(golden_rows(&cut), want, "{cut}");
}

/// A frame that ends where the window starts does not reach into it: no
/// zero-length frame at T0 (a frame that starts there does).
#[test]
fn a_frame_ending_at_the_start_is_left_out() {
    let sliced = slice(
        &["--from", "4us", "--to", "5us"],
        &data("../../examples/pingpong.tsv"),
    )
    .unwrap();
    let file = scratch("slice-edge").join("s.tsv");
    std::fs::write(&file, sliced).unwrap();
    let out = common::cat(&["--spans"], &file).unwrap();
    let states: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with("state"))
        .map(|l| {
            format!(
                "{} {} {} {}",
                col(l, "loc"),
                col(l, "name"),
                col(l, "time"),
                col(l, "end")
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            "rank0 MPI_Send 4000 4400",
            "rank1 MPI_Recv 4050 4950",
            "rank0 main 4000 5000",
            "rank1 main 4000 5000",
        ],
        "{out}"
    );
}

/// The traces the properties run on: the examples and every corpus trace
/// the readers accept (each as its stream, in a file).
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut sources = vec![
        data("../../examples/pingpong.tsv"),
        data("../../examples/camera.etf"),
    ];
    for format in ["paje", "trace", "pallas"] {
        if let Some(corpus) = corpus(format) {
            sources.extend(accepted_traces(&corpus));
        }
    }
    sources
        .iter()
        .enumerate()
        .map(|(i, source)| {
            let stream = common::cat(&["-q"], source).unwrap();
            let file = dir.join(format!("input{i}.tsv"));
            std::fs::write(&file, without_source(&stream)).unwrap();
            file
        })
        .collect()
}

/// The first time and the last completion time of a stream's rows.
fn span(stream: &str) -> (i64, i64) {
    let mut times = stream
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("container"))
        .flat_map(|l| {
            [col(l, "time"), col(l, "end")]
                .into_iter()
                .filter_map(|t| t.parse::<i64>().ok())
        });
    let first = times.next().unwrap_or(0);
    times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)))
}

/// Two random windows over `span` (a little beyond it too) that overlap.
fn windows(rng: &mut Rng, (lo, hi): (i64, i64)) -> [(i64, i64); 2] {
    let width = (hi - lo).max(1) as u64;
    let mut pick = || lo - 1 + (rng.below(width + 3) as i64);
    loop {
        let (a, b, c, d) = (pick(), pick(), pick(), pick());
        let (a, b) = (a.min(b), a.max(b));
        let (c, d) = (c.min(d), c.max(d));
        if a < b && c < d && a.max(c) < b.min(d) {
            return [(a, b), (c, d)];
        }
    }
}

fn window_args(w: (i64, i64)) -> [String; 4] {
    [
        "--from".into(),
        w.0.to_string(),
        "--to".into(),
        w.1.to_string(),
    ]
}

/// slice(slice(x, a, b), c, d) = slice(x, max(a, c), min(b, d)), and
/// slicing commutes with --spans, for every trace, on random windows:
/// exactly with --true-ends; by default, frames cut at the end compared
/// as frames (see [`as_cut_frame`]).
#[test]
fn slices_of_slices_and_spans_agree() {
    let dir = scratch("slice-props");
    let mut rng = Rng(2026);
    for input in inputs(&dir) {
        let text = std::fs::read_to_string(&input).unwrap();
        for round in 0..4 {
            let true_ends = round % 2 == 1;
            let [(a, b), (c, d)] = windows(&mut rng, span(&text));
            let args = |w| {
                let mut args: Vec<String> = window_args(w).into();
                if true_ends {
                    args.push("--true-ends".into());
                }
                args
            };
            let run = |w, file: &Path| {
                let args = args(w);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                slice(&args, file).unwrap()
            };
            let first = run((a, b), &input);
            let first_file = dir.join("first.tsv");
            std::fs::write(&first_file, &first).unwrap();
            let twice = run((c, d), &first_file);
            let once = run((a.max(c), b.min(d)), &input);
            let case = format!("{input:?} round {round}, true ends: {true_ends}");
            assert_eq!(
                without_source(&twice),
                without_source(&once),
                "{case}: [{a}, {b}) then [{c}, {d})"
            );
            // --spans after the slice = the slice after --spans.
            let spans_after = common::cat(&["-q", "--spans"], &first_file).unwrap();
            let spanned = dir.join("spanned.tsv");
            std::fs::write(&spanned, common::cat(&["-q", "--spans"], &input).unwrap()).unwrap();
            let slice_after = run((a, b), &spanned);
            let frames = |text: &str| -> Vec<String> {
                let text = without_source(text);
                match true_ends {
                    true => text.lines().map(String::from).collect(),
                    false => text.lines().map(|l| as_cut_frame(l, b)).collect(),
                }
            };
            assert_eq!(
                frames(&spans_after),
                frames(&slice_after),
                "{case}: spans and slice [{a}, {b})"
            );
        }
    }
}

/// Every slice of every accepted Pajé corpus trace, written as Pajé, is read
/// back (and by PajeNG when `PJ_DUMP` names its pj_dump); the same for the
/// TRACE corpus written as TRACE.
#[test]
fn slices_written_as_paje_and_trace_read_back() {
    let dir = scratch("slice-writers");
    let mut rng = Rng(7);
    let mut cases = vec![(data("../../examples/camera.etf"), "trace")];
    for (format, writer) in [("paje", "paje"), ("trace", "trace")] {
        if let Some(corpus) = corpus(format) {
            cases.extend(accepted_traces(&corpus).into_iter().map(|p| (p, writer)));
        }
    }
    for (input, writer) in cases {
        let text = common::cat(&["-q"], &input).unwrap();
        for _ in 0..3 {
            let [window, _] = windows(&mut rng, span(&text));
            let out = dir.join(format!("slice.{writer}"));
            let mut args: Vec<String> = window_args(window).into();
            args.extend(["-q", "-t", writer, "-o"].map(String::from));
            args.push(out.to_str().unwrap().into());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            slice(&args, &input).unwrap_or_else(|e| panic!("{input:?} {window:?}: {e}"));
            let back = common::cat(&["-q"], &out);
            assert!(back.is_ok(), "{input:?} {window:?} as {writer}: {back:?}");
            if writer == "paje" && pajeng_accepts(&input) {
                assert!(
                    pajeng_accepts(&out),
                    "PajeNG refuses the slice {window:?} of {input:?}"
                );
            }
        }
    }
}

/// --rebase: the window starts at 0, the origin moves the other way, the
/// true times in attrs move with the rows.
#[test]
fn rebase_moves_times_and_origin() {
    let dir = scratch("slice-rebase");
    let file = dir.join("o.tsv");
    let rows = [
        row(&[
            ("kind", "meta"),
            ("name", "origin"),
            ("value", "1000000000"),
        ]),
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[
            ("kind", "enter"),
            ("time", "100"),
            ("loc", "a"),
            ("name", "f"),
        ]),
        row(&[
            ("kind", "event"),
            ("time", "600"),
            ("loc", "a"),
            ("name", "e"),
        ]),
        row(&[
            ("kind", "leave"),
            ("time", "900"),
            ("loc", "a"),
            ("name", "f"),
        ]),
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let args = [
        "--around",
        "550",
        "--width",
        "100",
        "--rebase",
        "--true-ends",
    ];
    let out = slice(&args, &file).unwrap();
    let body: Vec<String> = out
        .lines()
        .skip(1)
        .filter(|l| col(l, "name") != "format")
        .map(|l| {
            [
                col(l, "kind"),
                col(l, "time"),
                col(l, "name"),
                col(l, "value"),
                col(l, "flags"),
                col(l, "attrs"),
            ]
            .join(" ")
        })
        .collect();
    assert_eq!(
        body,
        [
            "meta  origin 1000000500  ",
            "container     ",
            "enter 0 f  S orig_time=-400",
            "leave 100 f  C orig_end=400",
            "destroy 100   S ",
        ],
        "{out}"
    );
}

/// Bad windows are usage errors (exit 2); which messages each --messages
/// keeps, as halves and as msg rows.
#[test]
fn bad_windows_and_which_messages() {
    let ping = data("../../examples/pingpong.tsv");
    for (args, want) in [
        (
            &["--from", "5us", "--to", "5us"][..],
            "empty window: --to (5000 ns) is not after --from (5000 ns)",
        ),
        (
            &[][..],
            "give the window: --from, --to (or both), or --around with --width",
        ),
        (
            &["--to", "1s", "--rebase"][..],
            "--rebase needs the window's start",
        ),
        (&["--from", "1x"][..], "bad time `1x`"),
        (
            &["--around", "1us", "--width", "0"][..],
            "--width must be positive",
        ),
    ] {
        let out = bin("trace-slice").args(args).arg(&ping).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // Bad input is named by file and line, exit 1.
    let bad = scratch("slice-bad").join("bad.tsv");
    let rows = [
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[
            ("kind", "enter"),
            ("time", "5"),
            ("loc", "a"),
            ("name", "f"),
        ]),
        row(&[
            ("kind", "leave"),
            ("time", "6"),
            ("loc", "a"),
            ("name", "f"),
        ]),
        row(&[
            ("kind", "leave"),
            ("time", "7"),
            ("loc", "a"),
            ("name", "f"),
        ]),
    ];
    std::fs::write(&bad, stream(&rows)).unwrap();
    let out = bin("trace-slice")
        .args(["--strict", "--from", "1", "--to", "3"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.tsv:6: leave of `f`, which is not open (--strict)"),
        "{err}"
    );
    // Without --strict, that leave is an event, with one warning.
    let out = bin("trace-slice")
        .args(["--from", "1", "--to", "3"])
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("bad.tsv:6: frames that do not nest"),
        "{err}"
    );
    // Halves: a message is kept when both halves are in the window.
    let halves = |args: &[&str]| -> Vec<String> {
        let out = slice(args, &ping).unwrap();
        out.lines()
            .filter(|l| l.starts_with("send") || l.starts_with("recv"))
            .map(|l| format!("{} {} {}", col(l, "kind"), col(l, "time"), col(l, "flags")))
            .collect()
    };
    assert_eq!(
        halves(&["--from", "4us", "--to", "5us", "--messages", "inside"]),
        ["send 4100 ", "recv 4900 "]
    );
    assert!(halves(&["--from", "4200", "--to", "5us", "--messages", "inside"]).is_empty());
    assert!(halves(&["--from", "4us", "--to", "4500", "--messages", "inside"]).is_empty());
    assert_eq!(
        halves(&["--from", "4us", "--to", "4500"]),
        ["send 4100 ", "recv 4900 O"]
    );
    // Paired first, inside keeps the messages with both ends in the window.
    let matched = scratch("slice-inside").join("m.tsv");
    let out = bin("trace-match").args(["-q"]).arg(&ping).output().unwrap();
    std::fs::write(&matched, &out.stdout).unwrap();
    let inside = slice(
        &["--from", "4us", "--to", "5us", "--messages", "inside"],
        &matched,
    )
    .unwrap();
    let overlap = slice(&["--from", "4200", "--to", "5us"], &matched).unwrap();
    let msgs = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with("msg"))
            .map(|l| format!("{} {}", col(l, "time"), col(l, "flags")))
            .collect::<Vec<_>>()
    };
    assert_eq!(msgs(&inside), ["4100 "]);
    assert_eq!(msgs(&overlap), ["4100 O"]);
}

/// Pairing commutes with slicing: the messages of the slice are the slice
/// of the messages (for overlap, outside ends flagged O either way), for
/// every trace with halves; inside, no half of a slice is left without its
/// partner.
/// A row the writer refuses is named by its own line, whether it went out
/// as read or waited behind a message half in the window (`--messages
/// inside`), with one thread and two.
#[test]
fn a_row_refused_after_the_slice_is_named_by_its_line() {
    let dir = scratch("slice_refused_row");
    let bad = dir.join("bad.tsv");
    let on_a = |kind: &str, time: &str, extra: &[(&str, &str)]| {
        let mut fields = vec![("kind", kind), ("time", time), ("loc", "a")];
        fields.extend_from_slice(extra);
        row(&fields)
    };
    let half = |kind: &str, time: &str, loc: &str, peer: &str| {
        row(&[
            ("kind", kind),
            ("time", time),
            ("loc", loc),
            ("peer", peer),
            ("tag", "1"),
        ])
    };
    let rows = [
        row(&[("kind", "container"), ("loc", "a"), ("cat", "node")]),
        row(&[("kind", "container"), ("loc", "b"), ("cat", "node")]),
        on_a("enter", "10", &[("name", "f"), ("depth", "0")]),
        half("send", "21", "a", "b"),
        on_a(
            "counter",
            "22",
            &[("cat", "c"), ("name", "m"), ("value", "1")],
        ),
        on_a(
            "counter",
            "30",
            &[("cat", "c"), ("name", "m"), ("value", "abc")],
        ),
        half("recv", "32", "b", "a"),
        on_a("leave", "40", &[("name", "f"), ("depth", "0")]),
    ];
    std::fs::write(&bad, stream(&rows)).unwrap();
    for threads in ["1", "2"] {
        for messages in ["overlap", "inside"] {
            let args = ["--threads", threads, "--messages", messages, "-t", "paje"];
            let err = slice(&[&args[..], &["--from", "15", "--to", "35"]].concat(), &bad)
                .expect_err("a counter Pajé cannot hold");
            assert!(
                err.contains("bad.tsv:8: counter `m` has the value `abc`"),
                "{threads} threads, {messages}: {err}"
            );
        }
    }
}

#[test]
fn pairing_commutes_with_slicing() {
    let dir = scratch("slice-inside-props");
    let mut rng = Rng(11);
    let matched = dir.join("matched.tsv");
    let sliced = dir.join("sliced.tsv");
    let msgs = |text: &str| -> Vec<String> {
        // Flags are a set of letters: the order they were added in differs.
        let mut rows: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("msg\t"))
            .map(|l| {
                let mut fields: Vec<String> = l.split('\t').map(String::from).collect();
                let mut letters: Vec<char> = fields[13].chars().collect();
                letters.sort_unstable();
                fields[13] = letters.into_iter().collect();
                fields.join("\t")
            })
            .collect();
        rows.sort();
        rows
    };
    let run = |cmd: &str, args: &[&str], input: &Path| -> String {
        let out = bin(cmd).args(args).arg(input).output().unwrap();
        assert!(
            out.status.success(),
            "{cmd} {args:?} {input:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let mut messages = 0;
    for input in inputs(&dir) {
        let text = std::fs::read_to_string(&input).unwrap();
        if !text.lines().any(|l| l.starts_with("send\t")) {
            continue;
        }
        std::fs::write(&matched, run("trace-match", &["-q"], &input)).unwrap();
        for round in 0..6 {
            let [window, _] = windows(&mut rng, span(&text));
            let mut args: Vec<String> = window_args(window).into();
            let which = ["inside", "overlap"][round % 2];
            args.extend(["--messages".into(), which.into()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            std::fs::write(&sliced, run("trace-slice", &args, &input)).unwrap();
            // Inside, every half kept has its partner; overlap keeps the
            // halves the input never pairs.
            let unmatched = if which == "inside" { "error" } else { "keep" };
            let slice_then_pair = msgs(&run(
                "trace-match",
                &["-q", "--unmatched", unmatched],
                &sliced,
            ));
            let pair_then_slice = msgs(&run("trace-slice", &args, &matched));
            assert_eq!(
                slice_then_pair, pair_then_slice,
                "{input:?} {window:?} {which}"
            );
            messages += slice_then_pair.len();
        }
    }
    assert!(messages > 0, "no message in any window");
}

/// The README's slice examples cut windows that hold rows: a slice that
/// shows nothing shows nothing of what slicing does.
#[test]
fn readme_slices_show_what_slicing_does() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("trace-slice "))
        .collect();
    assert!(examples.len() >= 2);
    for example in examples {
        let command = example.split(['>', '|']).next().unwrap();
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let args: Vec<&str> = args
            .into_iter()
            .filter(|a| !a.starts_with("-t") && *a != "paje")
            .collect();
        let out = common::bin("trace-slice")
            .args(&args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{example}");
        let text = String::from_utf8(out.stdout).unwrap();
        let data = text
            .lines()
            .filter(|l| {
                !["kind", "meta", "type", "container", "destroy"].contains(&common::kind_of(l))
            })
            .count();
        assert!(data >= 3, "{example}: {text}");
    }
}

/// The extremes of the time range: a window that cannot hold anything is
/// the "empty window" usage error, and --rebase from the earliest time is
/// a located error, not a missing start.
#[test]
fn windows_at_the_ends_of_the_time_range() {
    let ping = data("../../examples/pingpong.tsv");
    let err = slice(&["--to", "-9223372036854775808"], &ping).unwrap_err();
    assert!(
        err.contains("empty window: no time is before --to"),
        "{err}"
    );
    let err = slice(&["--from", "-9223372036854775808", "--rebase"], &ping).unwrap_err();
    assert!(!err.contains("needs the window's start"), "{err}");
    assert!(err.contains("pingpong.tsv:"), "{err}");
}

/// A window with no end is open: it holds the last instant a stream can
/// hold, and its containers are not ended anywhere.
#[test]
fn an_open_end_holds_the_last_instant() {
    let dir = scratch("slice-open-end");
    let file = dir.join("last.tsv");
    let event = |t: &str| row(&[("kind", "event"), ("time", t), ("loc", "p"), ("name", "e")]);
    let rows = [
        row(&[("kind", "container"), ("time", "0"), ("loc", "p")]),
        event("5"),
        event("20"),
        event("9223372036854775807"),
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let times = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| !l.starts_with("meta\t") && !l.starts_with("kind\t"))
            .map(|l| format!("{} {}", col(l, "kind"), col(l, "time")))
            .collect()
    };
    let want = ["container 0", "event 20", "event 9223372036854775807"];
    for from in ["10", "20"] {
        let out = slice(&["--from", from], &file).unwrap();
        assert_eq!(times(&out), want, "--from {from}");
        let out = common::run("trace-filter", &["--from", from], &file).unwrap();
        assert_eq!(times(&out), want, "--from {from}");
    }
    let out = slice(&["--from", "9223372036854775807"], &file).unwrap();
    assert_eq!(times(&out), ["container 0", "event 9223372036854775807"]);
}
