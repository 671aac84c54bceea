//! Before a slice's T0, a Pallas thread walks the loop iterations that end
//! before T0 without the rows of their frames and plain events (message
//! halves still come), and an OTF2 location holds the frames it enters
//! back, dropping those left before another row comes: the slice is the
//! one cut from the same rows read as a stream, the rows left out are
//! frames and events that end before T0, and the timestamps of the Pallas
//! events left out are never decoded.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{accepted_traces, corpus, run, scratch, Rng};
use tracepipe::formats::otf2::reader::Otf2Source;
use tracepipe::formats::paje::reader::PajeReader;
use tracepipe::formats::pallas::reader::PallasSource;
use tracepipe::model::record::Kind;
use tracepipe::pipe::{Demand, ReadOptions, RecordSource};

/// Two ranks, each iteration: `compute` entered, `kernel` run three
/// times, `compute` left, a send, a receive and a `tick` event, 10 ns
/// apart; the second rank 61 ns behind, so that most times cut a message
/// in flight.
fn looping_stream(iterations: u32) -> String {
    let mut rows: Vec<(i64, String)> = Vec::new();
    let mut t = 1000;
    for _ in 0..iterations {
        for step in 0..11 {
            t += 10;
            for (p, q, at) in [("P0", "P1", t), ("P1", "P0", t + 61)] {
                let row = match step {
                    0 => format!("enter\t{at}\t\t{p}\tUSER\tcompute\t0\t\t\t\t"),
                    1..=6 => {
                        let kind = ["leave", "enter"][step % 2];
                        format!("{kind}\t{at}\t\t{p}\tUSER\tkernel\t1\t\t\t\t")
                    }
                    7 => format!("leave\t{at}\t\t{p}\tUSER\tcompute\t0\t\t\t\t"),
                    8 => format!("send\t{at}\t\t{p}\tMPI\tMPI_Send\t\t{q}\tw\t0\t8"),
                    9 => format!("recv\t{at}\t\t{p}\tMPI\tMPI_Recv\t\t{q}\tw\t0\t8"),
                    _ => format!("event\t{at}\t\t{p}\tUSER\ttick\t\t\t\t\t"),
                };
                rows.push((at, row));
            }
        }
    }
    rows.sort_by_key(|&(at, _)| at);
    let mut lines =
        vec!["kind\ttime\tend\tloc\tcat\tname\tdepth\tpeer\tcomm\ttag\tsize".to_string()];
    lines.extend(["P0", "P1"].map(|p| format!("container\t\t\t{p}\tprocess\t{p}\t\t\t\t\t")));
    lines.extend(rows.into_iter().map(|(_, row)| row));
    lines.join("\n") + "\n"
}

/// The looping stream of `iterations` written as a Pallas trace in `dir`.
fn looping_trace(dir: &Path, iterations: u32) -> PathBuf {
    let tsv = dir.join("loops.tsv");
    std::fs::write(&tsv, looping_stream(iterations)).unwrap();
    let trace = dir.join("loops");
    std::fs::create_dir_all(&trace).unwrap();
    let out = trace.join("loops.pallas");
    run(
        "trace-cat",
        &["-q", "-t", "pallas", "-o", out.to_str().unwrap()],
        &tsv,
    )
    .unwrap();
    trace
}

/// A Pallas trace whose first loop enters `f` and ticks, and whose second
/// leaves `f` as many times: frames nest across the iterations, which are
/// not thinned (every enter before T0 is of a frame open at T0).
fn nesting_trace(dir: &Path, iterations: u32) -> PathBuf {
    use tracepipe::formats::pallas::archive::{BlockCompression, Encoding};
    use tracepipe::formats::pallas::writer::{
        event_token, loop_token, sequence_token, ArchiveSpec, Defs, EventSpec, ThreadSpec,
        TraceSpec,
    };
    use tracepipe::formats::pallas::RecordId;
    let event = |record: RecordId, field: u64| Some(EventSpec::new(record.number(), &[(field, 4)]));
    let mut trace = TraceSpec::new(BlockCompression::Zstd, Encoding::None);
    trace.defs = Defs {
        strings: vec![(0, "f".into()), (1, "tick".into()), (2, "P0".into())],
        regions: vec![(0, 0)],
        ..Defs::default()
    };
    let mut thread = ThreadSpec {
        id: 0,
        name: 2,
        events: vec![
            event(RecordId::Enter, 0),
            event(RecordId::Leave, 0),
            event(RecordId::Generic, 1),
        ],
        sequences: vec![
            Some(vec![loop_token(0), loop_token(1)]),
            Some(vec![event_token(0), event_token(2)]),
            Some(vec![event_token(1)]),
        ],
        loops: vec![
            Some((sequence_token(1), iterations)),
            Some((sequence_token(2), iterations)),
        ],
        maps: None,
        root: 0,
    };
    let mut clock = 1000;
    let mut tick = |e: usize, thread: &mut ThreadSpec| {
        clock += 7 + clock % 5;
        thread.events[e].as_mut().unwrap().timestamps.push(clock);
    };
    for _ in 0..iterations {
        tick(0, &mut thread);
        tick(2, &mut thread);
    }
    for _ in 0..iterations {
        tick(1, &mut thread);
    }
    trace.archives.push(ArchiveSpec {
        id: 0,
        name: 2,
        threads: vec![thread],
        ..ArchiveSpec::default()
    });
    let out = dir.join("nesting");
    trace.write(&out).unwrap();
    out
}

/// An OTF2 archive (1 tick = 1 ns) of two ranks in `main`, each
/// iteration entering `compute`, running `kernel`, which sends to the
/// other rank, leaving both and receiving from the other rank, then a
/// call to `tail` after `main`; the second rank 61 ns behind.
fn otf2_loops(dir: &Path, iterations: u64) -> PathBuf {
    otf2_loops_since(dir, "loops", iterations, u64::MAX)
}

/// The looping OTF2 archive `name`, its tick 0 at `realtime` ns since the
/// epoch (`u64::MAX`: unknown, no `origin`).
fn otf2_loops_since(dir: &Path, name: &str, iterations: u64, realtime: u64) -> PathBuf {
    use tracepipe::formats::otf2::archive::{def, Archive};
    use tracepipe::formats::otf2::encode::event;
    let mut a = Archive::new(256 * 1024);
    a.push(|b| def::clock(b, 1_000_000_000, 0, 1 << 40, realtime));
    let strings = [
        "",
        "machine",
        "rank 0",
        "rank 1",
        "Master thread",
        "main",
        "compute",
        "kernel",
        "world",
        "tail",
    ];
    for (i, s) in strings.iter().enumerate() {
        a.string(i as u32, s);
    }
    a.node(0, 1, 0, u32::MAX);
    a.group_of_locations(0, 2, 1, 0)
        .group_of_locations(1, 3, 1, 0);
    a.location(0, 4, 1, 0).location(1 << 32, 4, 1, 1);
    a.region(0, 5, 1, 1).region(1, 6, 1, 1).region(2, 7, 1, 1);
    a.region(3, 9, 1, 1);
    a.group(0, 8, 4, 4, &[0, 1 << 32])
        .group(1, 8, 5, 4, &[0, 1])
        .comm(0, 8, 1);
    for (loc, peer) in [(0u64, 1u32), (1 << 32, 0)] {
        let l = a.files(loc);
        let base = 1000 + (loc >> 32) * 61;
        let frame = |t: u64, id: u8, region: u32| {
            event(t, id, true, &[], |b| {
                b.u32c(region);
            })
        };
        l.events.push(&frame(base, 12, 0));
        for k in 0..iterations {
            let t = base + 100 + 100 * k;
            let half = |dt: u64, id: u8| {
                event(t + dt, id, false, &[], |b| {
                    b.u32c(peer).u32c(0).u32c(0).u64c(64);
                })
            };
            // The send inside the kernel, the receive between iterations.
            for (dt, id, region) in [(0, 12, 1), (10, 12, 2)] {
                l.events.push(&frame(t + dt, id, region));
            }
            l.events.push(&half(15, 14));
            for (dt, id, region) in [(20, 13, 2), (30, 13, 1)] {
                l.events.push(&frame(t + dt, id, region));
            }
            l.events.push(&half(50, 18));
        }
        let end = base + 100 * iterations + 1000;
        l.events.push(&frame(end, 13, 0));
        l.events.push(&frame(end + 10, 12, 3));
        l.events.push(&frame(end + 20, 13, 3));
    }
    a.write(dir, name).unwrap()
}

/// A stream's rows but its `meta` rows (which name the input).
fn data_rows(stream: &str) -> Vec<&str> {
    stream
        .lines()
        .filter(|l| !l.starts_with("meta\t"))
        .collect()
}

/// The first and last times of a stream's rows.
fn span(stream: &str) -> (i64, i64) {
    let times = stream
        .lines()
        .filter_map(|l| l.split('\t').nth(1)?.parse::<i64>().ok());
    times.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)))
}

/// On the corpus's Pallas and Pajé traces, looping and nesting ones, a
/// looping OTF2 archive, the Pajé fixtures, a busy Pajé trace and two STF
/// file sets, windows anywhere: the
/// slice of the trace (thinned before T0) is the slice of its rows read as
/// a stream (which nothing thins), with one thread and two.
#[test]
fn a_thinned_slice_is_the_slice_of_the_rows() {
    let dir = scratch("slice-thin");
    let mut inputs = corpus("pallas").map_or_else(Vec::new, |c| accepted_traces(&c));
    inputs.retain(|p| p.is_dir());
    inputs.extend(corpus("paje").map_or_else(Vec::new, |c| accepted_traces(&c)));
    inputs.extend(paje_fixtures());
    inputs.push(looping_trace(&dir, 3000));
    inputs.push(nesting_trace(&dir, 300));
    inputs.push(otf2_loops(&dir, 3000));
    inputs.push(busy_paje(&dir, 3000));
    inputs.push(stf_of(&dir, "loops", &looping_trace(&dir, 3000)));
    inputs.push(stf_of(&dir, "busy", &busy_paje(&dir, 3000)));
    let mut rng = Rng(341);
    let mut checked = 0;
    for input in inputs {
        let whole = run("trace-cat", &["-q"], &input).unwrap();
        let (lo, hi) = span(&whole);
        if lo >= hi {
            continue;
        }
        let stream = dir.join("whole.tsv");
        std::fs::write(&stream, &whole).unwrap();
        for round in 0..4 {
            let width = (hi - lo) as u64;
            let from = lo + 1 + rng.below(width) as i64;
            let to = from + 1 + rng.below(width / 20 + 1) as i64;
            let which = ["overlap", "inside"][round % 2];
            let threads = ["1", "2"][round / 2 % 2];
            let (from, to) = (from.to_string(), to.to_string());
            let window = ["-q", "--from", &from, "--to", &to, "--messages", which];
            let of_rows = run("trace-slice", &window, &stream).unwrap();
            let thinned = run(
                "trace-slice",
                &[&window[..], &["--threads", threads]].concat(),
                &input,
            )
            .unwrap_or_else(|e| panic!("{input:?} [{from}, {to}): {e}"));
            assert_eq!(
                data_rows(&thinned),
                data_rows(&of_rows),
                "{input:?} [{from}, {to}) {which}, {threads} thread(s)"
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked} slices checked");
}

/// Inputs whose origins differ are merged on the earliest: each hears
/// T0 on its own clock, so what it thins is what the merged rows hold
/// before T0 (the second of two runs starts 50 µs later, its rows shifted
/// by that; each run's locations are kept apart by their file's name).
#[test]
fn inputs_shifted_to_a_common_origin_thin_on_their_own_clock() {
    let dir = scratch("slice-thin-origins");
    let early = otf2_loops_since(&dir, "early", 3000, 1_000_000_000);
    let late = otf2_loops_since(&dir, "late", 3000, 1_000_050_000);
    let merged = common::output_of("trace-cat", &["-q", "--prefix-inputs"], &[&early, &late]);
    let stream = dir.join("merged.tsv");
    std::fs::write(&stream, &merged).unwrap();
    let mut rng = Rng(77);
    for _ in 0..4 {
        let from = 60_000 + rng.below(200_000) as i64;
        let (from, to) = (from.to_string(), (from + 500).to_string());
        let window = ["-q", "--from", &from, "--to", &to];
        let of_rows = common::output_of("trace-slice", &window, &[&stream]);
        let prefixed = [&window[..], &["--prefix-inputs"]].concat();
        let thinned = common::output_of("trace-slice", &prefixed, &[&early, &late]);
        assert_eq!(data_rows(&thinned), data_rows(&of_rows), "[{from}, {to})");
    }
}

/// The trace at `from` written as an STF file set `NAME.stf` in `dir`.
fn stf_of(dir: &Path, name: &str, from: &Path) -> PathBuf {
    let stf = dir.join(format!("{name}.stf"));
    let out = stf.to_str().unwrap();
    run("trace-cat", &["-q", "-t", "stf", "-o", out], from).unwrap();
    stf
}

/// The project's own Pajé traces.
fn paje_fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/paje");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "paje"))
        .collect();
    found.sort();
    found
}

/// A window after the end of a thinned trace is told with the trace's
/// true last time, as for its rows read as a stream (the first and last
/// rows of a thread or location are never thinned; a Pajé trace's end
/// destroys its containers at its last time, rows left out counted).
#[test]
fn a_window_after_the_end_tells_the_true_last_time() {
    let dir = scratch("slice-thin-after");
    let mut traces = vec![
        looping_trace(&dir, 3000),
        nesting_trace(&dir, 300),
        otf2_loops(&dir, 3000),
    ];
    traces.extend(
        paje_fixtures()
            .into_iter()
            .filter(|p| !p.ends_with("header.paje")),
    );
    traces.extend(corpus("paje").map(|c| c.join("simu-mardi.trace")));
    for trace in traces {
        let whole = run("trace-cat", &["-q"], &trace).unwrap();
        let stream = dir.join("whole.tsv");
        std::fs::write(&stream, &whole).unwrap();
        let (_, hi) = span(&whole);
        let (from, to) = ((hi + 1000).to_string(), (hi + 2000).to_string());
        let warning = |input: &Path| {
            let out = common::bin("trace-slice")
                .args(["--from", &from, "--to", &to])
                .arg(input)
                .output()
                .unwrap();
            assert!(out.status.success(), "{input:?}");
            let text = String::from_utf8(out.stderr).unwrap();
            text.lines()
                .filter(|l| l.contains("the slice holds none of it"))
                .map(|l| l.split_once("warning: ").map_or(l, |(_, w)| w).to_string())
                .collect::<Vec<_>>()
        };
        let told = warning(&trace);
        assert_eq!(told.len(), 1, "{trace:?}: {told:?}");
        assert_eq!(told, warning(&stream), "{trace:?}");
    }
}

/// Messages between three ranks on two tags, of two sizes (two events of
/// each side per channel), one sent every 10 ns in bursts of 50 with 5 µs
/// between them, each flying 5 ns to 3 µs, after an event on each rank
/// with `start`; with `chain`, the first rank
/// also sends the third one every 10 ns a message that lands 15 ns
/// later, so that one is always in flight.
fn messages_stream(messages: u64, rng: &mut Rng, (chain, start): (bool, bool)) -> String {
    let mut rows: Vec<(i64, String)> = Vec::new();
    let half = |kind: &str, at: i64, (loc, peer): (&str, &str), tag: u64, size: u64| {
        let name = ["MPI_Send", "MPI_Recv"][usize::from(kind == "recv")];
        (
            at,
            format!("{kind}\t{at}\t\t{loc}\tMPI\t{name}\t\t{peer}\tw\t{tag}\t{size}"),
        )
    };
    let ranks = ["P0", "P1", "P2"];
    for rank in ranks.iter().filter(|_| start) {
        rows.push((900, format!("event\t900\t\t{rank}\tUSER\tstart\t\t\t\t\t")));
    }
    for i in 0..messages {
        let from = rng.below(3) as usize;
        let to = (from + 1 + rng.below(2) as usize) % 3;
        let (tag, size) = (rng.below(2), [8, 64][rng.below(2) as usize]);
        let sent = 1000 + 10 * i as i64 + 5000 * (i / 50) as i64;
        let landed = sent + [5, 40, 300, 3000][rng.below(4) as usize];
        rows.push(half("send", sent, (ranks[from], ranks[to]), tag, size));
        rows.push(half("recv", landed, (ranks[to], ranks[from]), tag, size));
    }
    let end = rows.iter().map(|&(at, _)| at).max().unwrap_or(0);
    for sent in (1001..end).step_by(10).filter(|_| chain) {
        rows.push(half("send", sent, ("P0", "P2"), 7, 8));
        rows.push(half("recv", sent + 15, ("P2", "P0"), 7, 8));
    }
    rows.sort_by_key(|&(at, _)| at);
    let mut lines =
        vec!["kind\ttime\tend\tloc\tcat\tname\tdepth\tpeer\tcomm\ttag\tsize".to_string()];
    lines.extend(ranks.map(|p| format!("container\t\t\t{p}\tprocess\t{p}\t\t\t\t\t")));
    lines.extend(rows.into_iter().map(|(_, row)| row));
    lines.join("\n") + "\n"
}

/// Message halves before a balanced cut are left out of a Pallas trace
/// sliced after it: on channels with two events per side and messages
/// in flight for up to 15 windows' widths, the slice is the slice of
/// the rows read as a stream, and some halves are left out; where one
/// message is always in flight, the cut walks back or is given up, and
/// the slice is still that of the rows. The slice tells the trace's span
/// as the rows do: the cut never passes its first and last rows.
#[test]
fn halves_before_a_balanced_cut_are_left_out() {
    let dir = scratch("slice-thin-cut");
    let mut rng = Rng(907);
    for (chain, start) in [(false, true), (true, true), (false, false)] {
        let tsv = dir.join("messages.tsv");
        std::fs::write(&tsv, messages_stream(6000, &mut rng, (chain, start))).unwrap();
        let trace = dir.join(format!("messages-{chain}-{start}"));
        std::fs::create_dir_all(&trace).unwrap();
        let main = trace.join("messages.pallas");
        let out = main.to_str().unwrap();
        run("trace-cat", &["-q", "-t", "pallas", "-o", out], &tsv).unwrap();
        // The rows as the trace orders them (rows at one time by thread).
        std::fs::write(&tsv, run("trace-cat", &["-q"], &trace).unwrap()).unwrap();
        let mut halves_left_out = 0;
        for round in 0..6 {
            let from = 2000 + rng.below(600_000) as i64;
            let to = from + 1 + rng.below(200) as i64;
            let which = ["overlap", "inside"][round % 2];
            let threads = ["1", "2"][round / 2 % 2];
            let (from_text, to_text) = (from.to_string(), to.to_string());
            let window = ["-q", "--from", &from_text, "--to", &to_text];
            let window = [&window[..], &["--messages", which, "--threads", threads]].concat();
            let of_rows = run("trace-slice", &window, &tsv).unwrap();
            let of_trace = run("trace-slice", &window, &trace).unwrap();
            assert_eq!(
                data_rows(&of_trace),
                data_rows(&of_rows),
                "chain {chain}, start {start}, [{from}, {to}) {which}, {threads} thread(s)"
            );
            halves_left_out += read_rows(&trace, None).len() - read_rows(&trace, Some(from)).len();
        }
        // A trace that begins with a half keeps its halves (below).
        let cut = !chain && start;
        assert_eq!(halves_left_out > 0, cut, "{halves_left_out} left out");
        // The span the slice tells, from the rows it is given: a window in
        // the gap after the first burst (whose halves are all left out
        // after a start event), and one after the end.
        for (from, to) in [("5500", "6000"), ("900000", "900100")] {
            let told = |input: &Path| {
                let out = common::bin("trace-slice")
                    .args(["--from", from, "--to", to])
                    .arg(input)
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{input:?}");
                let text = String::from_utf8(out.stderr).unwrap();
                let warnings = text.lines().filter_map(|l| l.split_once("warning: "));
                warnings.map(|(_, w)| w.to_string()).collect::<Vec<_>>()
            };
            let case = format!("chain {chain}, start {start}, [{from}, {to})");
            assert_eq!(told(&trace), told(&tsv), "{case}");
        }
    }
}

/// A row as compared here: kind, time, location, name, depth, peer, end.
type Row = (
    Kind,
    Option<i64>,
    String,
    String,
    Option<u32>,
    String,
    Option<i64>,
);

/// The rows of the trace at `path` (Pallas, OTF2, STF or Pajé), thinned before
/// `t0` if given.
fn read_rows(path: &Path, t0: Option<i64>) -> Vec<Row> {
    let opts = ReadOptions::default();
    let extension = path.extension().and_then(|e| e.to_str());
    let mut source: Box<dyn RecordSource> = match (path.is_dir(), extension) {
        (true, _) => Box::new(PallasSource::open("t", path, &opts).unwrap()),
        (false, Some("otf2")) => Box::new(Otf2Source::open("t", path, &opts).unwrap()),
        (false, Some("stf")) => {
            let counter = tracepipe::io::ByteCounter::default();
            let input = tracepipe::io::Input::open(path.to_str().unwrap(), &counter).unwrap();
            tracepipe::formats::stf::reader::open_reader(input, &opts).unwrap()
        }
        (false, _) => {
            let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
            Box::new(PajeReader::new("t", file, &opts))
        }
    };
    source.agree(Demand {
        thin_before: t0,
        ..Demand::ALL
    });
    let mut rec = tracepipe::Record::default();
    let mut rows = Vec::new();
    while source.next_record(&mut rec).unwrap() {
        let text = |s| opts.symbols.text(s).to_string();
        let peer = text(rec.peer);
        rows.push((
            rec.kind,
            rec.time,
            text(rec.loc),
            text(rec.name),
            rec.depth,
            peer,
            rec.end,
        ));
    }
    rows
}

/// What thinning leaves out of the rows of `trace` before `t0` are
/// frames that open and close before it, events before it, messages,
/// states and collectives that end before it, counter samples that a later sample before it
/// supersedes, and message halves before it that pair among themselves
/// (as many sends as receives on each channel, of which `halves` at
/// least); every other row comes, in order; and it leaves out at least
/// `share` of what is before T0. Returns how many rows of each kind it
/// left out.
fn leaves_out(trace: &Path, t0: i64, share: f64, halves: usize) -> HashMap<Kind, usize> {
    let whole = read_rows(trace, None);
    let thinned = read_rows(trace, Some(t0));
    let mut left_out = Vec::new();
    let mut kept = thinned.iter().peekable();
    for row in &whole {
        match kept.peek() {
            Some(&k) if k == row => {
                kept.next();
            }
            _ => left_out.push(row),
        }
    }
    assert_eq!(kept.next(), None, "thinned rows come in the order read");
    let before = whole.iter().filter(|r| r.1.is_some_and(|t| t < t0)).count();
    assert!(
        left_out.len() as f64 >= before as f64 * share,
        "{} of {before} left out",
        left_out.len()
    );
    let mut depth: HashMap<&str, i64> = Default::default();
    let mut in_flight: HashMap<(&str, &str), i64> = Default::default();
    let mut halves_left_out = 0;
    // The last sample of each counter before T0, which is never left out.
    let mut last_samples: HashMap<(&str, &str), &Row> = Default::default();
    for row in &whole {
        if row.0 == Kind::Counter && row.1.is_some_and(|t| t < t0) {
            last_samples.insert((&row.2, &row.3), row);
        }
    }
    let mut kinds = HashMap::new();
    for row in left_out {
        let (kind, time, loc, name, _, peer, end) = row;
        *kinds.entry(*kind).or_default() += 1;
        assert!(time.is_some_and(|t| t < t0), "{kind:?} {name} at {time:?}");
        let d = depth.entry(loc.as_str()).or_default();
        match kind {
            Kind::Enter => *d += 1,
            Kind::Leave => *d -= 1,
            Kind::Event => {}
            Kind::Send => *in_flight.entry((loc, peer)).or_default() += 1,
            Kind::Recv => *in_flight.entry((peer, loc)).or_default() -= 1,
            Kind::Msg | Kind::State | Kind::Coll => {
                assert!(end.is_some_and(|e| e < t0), "{kind:?} {name} to {end:?}")
            }
            Kind::Counter => {
                let last = last_samples[&(loc.as_str(), name.as_str())];
                assert!(!std::ptr::eq(row, last), "the last sample of {loc} {name}");
            }
            other => panic!("{other:?} {name} left out"),
        }
        halves_left_out += usize::from(matches!(kind, Kind::Send | Kind::Recv));
    }
    assert!(
        depth.values().all(|&d| d == 0),
        "frames left out close: {depth:?}"
    );
    assert!(
        in_flight.values().all(|&n| n == 0),
        "halves left out pair: {in_flight:?}"
    );
    assert!(
        halves_left_out >= halves,
        "{halves_left_out} halves left out"
    );
    kinds
}

/// A Pallas thread's thinned iterations leave out their frames, plain
/// events and message halves, all before a balanced cut (11 of their 11
/// rows); an OTF2 location, the frames entered and left before T0, the
/// send inside one kept in its place (4 of 6).
#[test]
fn thinning_leaves_out_frames_events_and_paired_halves_before_t0() {
    let dir = scratch("slice-thin-rows");
    let t0 = 1000 + 110 * 2000 + 5;
    leaves_out(&looping_trace(&dir, 3000), t0, 0.9, 2000);
    let t0 = 1000 + 100 * 2000 + 5;
    leaves_out(&otf2_loops(&dir, 3000), t0, 0.6, 0);
}

/// A Pajé trace of `rounds` rounds, 10 µs each, on two threads of a
/// machine: a variable set, added to and subtracted from, a state pushed
/// and popped, and a link from one thread to the other.
fn busy_paje(dir: &Path, rounds: u64) -> PathBuf {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/paje/sample.paje");
    let sample = std::fs::read_to_string(sample).unwrap();
    let mut text: String = sample
        .lines()
        .filter(|l| l.starts_with('%'))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str("0 M 0 Machine\n0 T M Thread\n2 S T State\n1 MEM M Memory \"1 0 0\"\n");
    text.push_str("4 L M T T Message\n5 r S Running \"0 1 0\"\n");
    text.push_str("6 0 m1 M 0 m1\n6 0 t1 T m1 t1\n6 0 t2 T m1 t2\n");
    for round in 0..rounds {
        let at = |us: u64| {
            let us = round * 10 + us;
            format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
        };
        text.push_str(&format!("8 {} m1 MEM {round}\n", at(0)));
        text.push_str(&format!("12 {} t1 S r tag\n", at(1)));
        text.push_str(&format!("9 {} m1 MEM 2\n", at(2)));
        text.push_str(&format!("15 {} m1 L t1 v k{round} 8\n", at(3)));
        text.push_str(&format!("13 {} t1 S\n", at(4)));
        text.push_str(&format!("16 {} m1 L t2 v k{round}\n", at(5)));
        text.push_str(&format!("10 {} m1 MEM 1\n", at(6)));
    }
    let path = dir.join("busy.paje");
    std::fs::write(&path, text).unwrap();
    path
}

/// A Pajé trace leaves out before T0 its events, its links that end
/// before it, its variables' samples superseded before it, and the states
/// pushed and popped before it while their `enter` rows wait in the reorder
/// queue (both rows): on a SimGrid trace of the corpus (states, variables
/// set once and links) and on a trace that sets its variable three times
/// a round, most of what is before the middle of their span.
#[test]
fn thinning_leaves_out_pajes_events_states_samples_and_links_before_t0() {
    let dir = scratch("slice-thin-paje");
    let busy = busy_paje(&dir, 4000);
    let kinds = leaves_out(&busy, 20_000_000, 0.99, 0);
    for kind in [Kind::Counter, Kind::Msg, Kind::Enter, Kind::Leave] {
        let rows_a_round = if kind == Kind::Counter { 3 } else { 1 };
        assert!(kinds[&kind] >= 1990 * rows_a_round, "{kind:?}: {kinds:?}");
    }
    let Some(corpus) = corpus("paje") else {
        return;
    };
    let trace = corpus.join("simu-mardi.trace");
    let whole = read_rows(&trace, None);
    let times = whole.iter().filter_map(|r| r.1);
    let (lo, hi) = times.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let kinds = leaves_out(&trace, lo + (hi - lo) / 2, 0.9, 0);
    assert!(kinds[&Kind::Msg] >= 400, "{kinds:?}");
}

/// An STF file set leaves out before T0 all but the state there, though
/// its two ranks' rows interleave: frames opened and closed, events and
/// messages, superseded counter samples.
#[test]
fn thinning_leaves_out_stf_rows_before_t0() {
    let dir = scratch("slice-thin-stf");
    let loops = stf_of(&dir, "loops", &looping_trace(&dir, 3000));
    let t0 = 1000 + 100 * 2000 + 5;
    let kinds = leaves_out(&loops, t0, 0.99, 0);
    for kind in [Kind::Enter, Kind::Leave, Kind::Event, Kind::Msg] {
        assert!(kinds[&kind] >= 190, "{kind:?}: {kinds:?}");
    }
    let busy = stf_of(&dir, "busy", &busy_paje(&dir, 4000));
    let kinds = leaves_out(&busy, 20_000_000, 0.99, 0);
    for kind in [Kind::Counter, Kind::Msg, Kind::Enter, Kind::Leave] {
        let rows_a_round = if kind == Kind::Counter { 3 } else { 1 };
        assert!(kinds[&kind] >= 1990 * rows_a_round, "{kind:?}: {kinds:?}");
    }
}

/// Damage to the timestamps of `kernel`'s enters early in the trace goes
/// unnoticed by a slice after it (those iterations are thinned) and is an
/// error, naming the file, for a read of the whole.
#[test]
fn timestamps_of_thinned_iterations_stay_undecoded() {
    let dir = scratch("slice-thin-damage");
    let trace = looping_trace(&dir, 3000);
    let window = ["-q", "--from", "300000", "--to", "301000"];
    let intact = run("trace-slice", &window, &trace).unwrap();
    let thread = trace.join("archive_0/thread_0");
    let bytes = std::fs::read(thread.join("thread.pallas")).unwrap();
    let file = tracepipe::formats::pallas::archive::ThreadFile::parse("t", &bytes, 20).unwrap();
    let kernel_enters = file
        .events
        .iter()
        .flatten()
        .filter(|e| e.record == tracepipe::formats::pallas::RecordId::Enter.number())
        .max_by_key(|e| e.timestamps.size)
        .unwrap();
    // Its second block: occurrences 1000 to 1999, in the first 700
    // iterations (about 80 µs).
    let block = kernel_enters.timestamps.blocks[1];
    let dat = thread.join("event_durations.dat");
    let mut data = std::fs::read(&dat).unwrap();
    data[block.offset as usize..block.offset as usize + 4].fill(0xff);
    std::fs::write(&dat, data).unwrap();
    assert_eq!(run("trace-slice", &window, &trace).unwrap(), intact);
    let err = run("trace-cat", &["-q"], &trace).unwrap_err();
    assert!(err.contains("event_durations.dat"), "{err}");
    // A slice before the damage stops before it, whatever was read ahead.
    for threads in ["1", "2"] {
        let early = ["-q", "--from", "1000", "--to", "2000", "--threads", threads];
        assert!(
            run("trace-slice", &early, &trace).is_ok(),
            "{threads} thread(s)"
        );
    }
}
