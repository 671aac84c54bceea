//! `trace-stat waits`, `imbalance`, `timeline` and `messages --matrix`:
//! figures known by construction, and properties over random traces whose
//! waits an independent oracle (the generator's own bookkeeping) knows.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use common::{bin, row, scratch, stream, Rng};

fn enter(t: i64, loc: &str, name: &str) -> (i64, String) {
    let t_ = t.to_string();
    (
        t,
        row(&[
            ("kind", "enter"),
            ("time", &t_),
            ("loc", loc),
            ("name", name),
        ]),
    )
}

fn leave(t: i64, loc: &str, name: &str) -> (i64, String) {
    let t_ = t.to_string();
    (
        t,
        row(&[
            ("kind", "leave"),
            ("time", &t_),
            ("loc", loc),
            ("name", name),
        ]),
    )
}

/// A half: `kind` send or recv on `loc`, `peer` the other end.
fn half(kind: &str, t: i64, loc: &str, peer: &str, tag: u64, id: &str) -> (i64, String) {
    let (t_, tag) = (t.to_string(), tag.to_string());
    let fields = [
        ("kind", kind),
        ("time", &t_),
        ("loc", loc),
        ("peer", peer),
        ("comm", "world"),
        ("tag", &tag),
        ("size", "64"),
        ("id", id),
    ];
    (t, row(&fields))
}

fn posting(t: i64, loc: &str, id: &str) -> (i64, String) {
    let t_ = t.to_string();
    let fields = [
        ("kind", "event"),
        ("time", &t_),
        ("loc", loc),
        ("id", id),
        ("attrs", "posts=recv"),
    ];
    (t, row(&fields))
}

/// One participant of a collective: arrival, end, operation, root.
fn coll(t: i64, end: i64, loc: &str, op: &str, root: &str) -> (i64, String) {
    let (t_, e) = (t.to_string(), end.to_string());
    let fields = [
        ("kind", "coll"),
        ("time", &t_),
        ("end", &e),
        ("loc", loc),
        ("name", op),
        ("comm", "world"),
        ("peer", root),
    ];
    (end, row(&fields))
}

/// A stream of `ranks` processes and `rows` (each with its completion
/// time), put in completion order (ties keep their order).
fn trace(dir: &Path, name: &str, ranks: usize, mut rows: Vec<(i64, String)>) -> PathBuf {
    rows.sort_by_key(|(t, _)| *t);
    let mut all: Vec<String> = (0..ranks)
        .map(|r| {
            row(&[
                ("kind", "container"),
                ("loc", &format!("r{r}")),
                ("cat", "process"),
            ])
        })
        .collect();
    all.extend(rows.into_iter().map(|(_, r)| r));
    let file = dir.join(name);
    std::fs::write(&file, stream(&all)).unwrap();
    file
}

/// `trace-stat ARGS FILE`'s rows, as TSV fields (header first).
fn stat(args: &[&str], file: &Path) -> Vec<Vec<String>> {
    let out = bin("trace-stat").args(args).arg(file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "trace-stat {args:?}: {stderr}");
    assert!(stderr.is_empty(), "trace-stat {args:?} warned: {stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// The waits report as key (all but the last two columns, joined by
/// spaces) → (count, time).
fn waits(args: &[&str], file: &Path) -> BTreeMap<String, (u64, i64)> {
    let mut full = vec!["waits"];
    full.extend(args);
    stat(&full, file)[1..]
        .iter()
        .map(|r| {
            let n = r.len();
            (
                r[..n - 2].join(" "),
                (r[n - 2].parse().unwrap(), r[n - 1].parse().unwrap()),
            )
        })
        .collect()
}

fn figures(pairs: &[(&str, u64, i64)]) -> BTreeMap<String, (u64, i64)> {
    pairs
        .iter()
        .map(|(k, c, t)| (k.to_string(), (*c, *t)))
        .collect()
}

#[test]
fn late_sender_and_late_receiver_by_construction() {
    let dir = scratch("waits_p2p");
    let late_sender = vec![
        enter(100, "r1", "MPI_Recv"),
        enter(400, "r0", "MPI_Send"),
        half("send", 410, "r0", "r1", 0, ""),
        leave(450, "r0", "MPI_Send"),
        half("recv", 500, "r1", "r0", 0, ""),
        leave(510, "r1", "MPI_Recv"),
    ];
    let file = trace(&dir, "ls.tsv", 2, late_sender);
    assert_eq!(waits(&[], &file), figures(&[("late-sender", 1, 300)]));
    let pair = figures(&[("r1 r0 late-sender", 1, 300)]);
    assert_eq!(waits(&["--by", "pair,pattern"], &file), pair);
    // A blocking send waits for its receiver; an eager one (over before
    // the receive is entered) does not.
    let late_receiver = vec![
        enter(100, "r0", "MPI_Send"),
        half("send", 110, "r0", "r1", 0, ""),
        enter(300, "r1", "MPI_Recv"),
        half("recv", 320, "r1", "r0", 0, ""),
        leave(330, "r1", "MPI_Recv"),
        leave(350, "r0", "MPI_Send"),
        enter(1000, "r0", "MPI_Send"),
        half("send", 1010, "r0", "r1", 1, ""),
        leave(1020, "r0", "MPI_Send"),
        enter(1100, "r1", "MPI_Recv"),
        half("recv", 1110, "r1", "r0", 1, ""),
        leave(1120, "r1", "MPI_Recv"),
    ];
    let file = trace(&dir, "lr.tsv", 2, late_receiver);
    assert_eq!(waits(&[], &file), figures(&[("late-receiver", 1, 200)]));
    let by_name = figures(&[("MPI_Send late-receiver", 1, 200)]);
    assert_eq!(waits(&["--by", "name,pattern"], &file), by_name);
}

#[test]
fn collective_patterns_by_construction() {
    let dir = scratch("waits_coll");
    let rows = vec![
        // A barrier: arrivals 100, 250, 400: r0 waits 300, r1 150.
        coll(100, 410, "r0", "BARRIER", ""),
        coll(250, 420, "r1", "BARRIER", ""),
        coll(400, 430, "r2", "BARRIER", ""),
        // A broadcast from r0 arriving at 600: r1 (at 500) waits 100; r2
        // arrives after the root.
        coll(600, 700, "r0", "BCAST", "r0"),
        coll(500, 710, "r1", "BCAST", "r0"),
        coll(650, 720, "r2", "BCAST", "r0"),
        // A reduce to r2 arriving first (800); the last non-root at 950.
        coll(900, 1000, "r0", "REDUCE", "r2"),
        coll(950, 1010, "r1", "REDUCE", "r2"),
        coll(800, 1020, "r2", "REDUCE", "r2"),
    ];
    let file = trace(&dir, "coll.tsv", 3, rows);
    let expected = figures(&[
        ("wait-nxn", 2, 450),
        ("late-broadcast", 1, 100),
        ("early-reduce", 1, 150),
    ]);
    assert_eq!(waits(&[], &file), expected);
    let pairs = figures(&[
        ("r0 r2 wait-nxn", 1, 300),
        ("r1 r2 wait-nxn", 1, 150),
        ("r1 r0 late-broadcast", 1, 100),
        ("r2 r1 early-reduce", 1, 150),
    ]);
    assert_eq!(waits(&["--by", "pair,pattern"], &file), pairs);
    let summary = stat(&["summary"], &file);
    let wait = |p: &str| {
        summary
            .iter()
            .find(|r| r[0] == "wait" && r[1] == p)
            .unwrap()[2]
            .clone()
    };
    assert_eq!(wait("wait-nxn"), "450");
    assert_eq!(wait("late-sender"), "0");
}

#[test]
fn nonblocking_receives_completing_out_of_order() {
    let dir = scratch("waits_nonblocking");
    let rows = vec![
        // r1 posts A (tag 1) then B (tag 2), and waits for B first.
        enter(10, "r1", "MPI_Irecv"),
        posting(15, "r1", "1"),
        leave(20, "r1", "MPI_Irecv"),
        enter(30, "r1", "MPI_Irecv"),
        posting(35, "r1", "2"),
        leave(40, "r1", "MPI_Irecv"),
        enter(100, "r1", "MPI_Wait"),
        enter(500, "r0", "MPI_Send"),
        half("send", 510, "r0", "r1", 2, ""),
        leave(520, "r0", "MPI_Send"),
        half("recv", 590, "r1", "r0", 2, "2"),
        leave(600, "r1", "MPI_Wait"),
        enter(700, "r1", "MPI_Wait"),
        enter(800, "r0", "MPI_Send"),
        half("send", 810, "r0", "r1", 1, ""),
        leave(820, "r0", "MPI_Send"),
        half("recv", 890, "r1", "r0", 1, "1"),
        leave(900, "r1", "MPI_Wait"),
        // One wait for two receives waits once, for the later sender.
        enter(1000, "r1", "MPI_Waitall"),
        enter(1100, "r0", "MPI_Send"),
        half("send", 1110, "r0", "r1", 3, ""),
        leave(1120, "r0", "MPI_Send"),
        enter(1300, "r2", "MPI_Send"),
        half("send", 1310, "r2", "r1", 3, ""),
        leave(1320, "r2", "MPI_Send"),
        half("recv", 1490, "r1", "r0", 3, ""),
        half("recv", 1495, "r1", "r2", 3, ""),
        leave(1500, "r1", "MPI_Waitall"),
    ];
    let file = trace(&dir, "nb.tsv", 3, rows);
    assert_eq!(waits(&[], &file), figures(&[("late-sender", 3, 800)]));
    let pairs = figures(&[("r1 r0 late-sender", 2, 500), ("r1 r2 late-sender", 1, 300)]);
    assert_eq!(waits(&["--by", "pair,pattern"], &file), pairs);
    let names = figures(&[
        ("MPI_Wait late-sender", 2, 500),
        ("MPI_Waitall late-sender", 1, 300),
    ]);
    assert_eq!(waits(&["--by", "name,pattern"], &file), names);
    let matrix = stat(&["messages", "--matrix", "--count"], &file);
    let expected = [
        ["sender", "r0", "r1", "r2"],
        ["r0", "0", "3", "0"],
        ["r1", "0", "0", "0"],
        ["r2", "0", "1", "0"],
    ];
    assert_eq!(
        matrix,
        expected.map(|r| r.map(String::from).to_vec()).to_vec()
    );
}

/// A random trace of compute frames, messages between blocking MPI frames
/// and barriers, with the waits its construction implies.
struct Random {
    rows: Vec<(i64, String)>,
    ranks: usize,
    /// Pattern → (count, time), computed from the construction.
    waits: BTreeMap<String, (u64, i64)>,
}

impl Random {
    fn new(rng: &mut Rng) -> Random {
        let ranks = 2 + rng.below(3) as usize;
        let mut r = Random {
            rows: Vec::new(),
            ranks,
            waits: BTreeMap::new(),
        };
        let mut clocks: Vec<i64> = (0..ranks).map(|_| rng.below(50) as i64).collect();
        for tag in 0..30 {
            match rng.below(4) {
                0 => r.compute(rng, &mut clocks),
                1 => r.barrier(rng, &mut clocks),
                _ => r.message(rng, &mut clocks, tag),
            }
        }
        r
    }

    fn count(&mut self, pattern: &str, time: i64) {
        if time > 0 {
            let f = self.waits.entry(pattern.to_string()).or_default();
            f.0 += 1;
            f.1 += time;
        }
    }

    fn compute(&mut self, rng: &mut Rng, clocks: &mut [i64]) {
        let at = rng.below(clocks.len() as u64) as usize;
        let loc = format!("r{at}");
        let mut t = clocks[at];
        let outer = format!("f{}", rng.below(3));
        self.rows.push(enter(t, &loc, &outer));
        for _ in 0..rng.below(3) {
            let inner = format!("g{}", rng.below(3));
            t += 1 + rng.below(40) as i64;
            self.rows.push(enter(t, &loc, &inner));
            t += 1 + rng.below(40) as i64;
            self.rows.push(leave(t, &loc, &inner));
        }
        t += 1 + rng.below(40) as i64;
        self.rows.push(leave(t, &loc, &outer));
        clocks[at] = t + 1;
    }

    fn message(&mut self, rng: &mut Rng, clocks: &mut [i64], tag: u64) {
        let from = rng.below(clocks.len() as u64) as usize;
        let to = (from + 1 + rng.below(clocks.len() as u64 - 1) as usize) % clocks.len();
        let (a, b) = (format!("r{from}"), format!("r{to}"));
        let s0 = clocks[from] + rng.below(60) as i64;
        let r0 = clocks[to] + rng.below(60) as i64;
        let received = r0.max(s0 + 1) + 1 + rng.below(20) as i64;
        let s_end = s0 + 2 + rng.below(120) as i64;
        self.rows.push(enter(s0, &a, "MPI_Send"));
        self.rows.push(half("send", s0 + 1, &a, &b, tag, ""));
        self.rows.push(leave(s_end, &a, "MPI_Send"));
        self.rows.push(enter(r0, &b, "MPI_Recv"));
        self.rows.push(half("recv", received, &b, &a, tag, ""));
        self.rows.push(leave(received + 1, &b, "MPI_Recv"));
        clocks[from] = s_end + 1;
        clocks[to] = received + 2;
        if s0 > r0 {
            self.count("late-sender", (s0 - r0).min(received + 1 - r0));
        } else if s0 < r0 && s_end > r0 {
            self.count("late-receiver", r0 - s0);
        }
    }

    fn barrier(&mut self, rng: &mut Rng, clocks: &mut [i64]) {
        let arrivals: Vec<i64> = clocks.iter().map(|c| c + rng.below(80) as i64).collect();
        let last = *arrivals.iter().max().unwrap();
        for (i, &arrival) in arrivals.iter().enumerate() {
            let loc = format!("r{i}");
            let end = last + 1 + rng.below(10) as i64;
            self.rows.push(enter(arrival, &loc, "MPI_Barrier"));
            self.rows.push(coll(arrival, end, &loc, "BARRIER", ""));
            self.rows.push(leave(end + 1, &loc, "MPI_Barrier"));
            clocks[i] = end + 2;
            self.count("wait-nxn", last - arrival);
        }
    }
}

/// Column `name` of every row of a report, keyed by the columns `keys`.
fn column(rows: &[Vec<String>], keys: &[&str], name: &str) -> BTreeMap<String, i64> {
    let at = |c: &str| rows[0].iter().position(|h| h == c).unwrap();
    let (value, keys): (usize, Vec<usize>) = (at(name), keys.iter().map(|k| at(k)).collect());
    let mut out = BTreeMap::new();
    for r in &rows[1..] {
        let key: Vec<&str> = keys.iter().map(|&k| r[k].as_str()).collect();
        *out.entry(key.join(" ")).or_default() += r[value].parse::<i64>().unwrap();
    }
    out
}

#[test]
fn random_traces_agree_with_their_construction_and_the_profile() {
    let dir = scratch("analyses_random");
    let mut rng = Rng(0x5eed_cafe);
    for n in 0..25 {
        let random = Random::new(&mut rng);
        let expected = random.waits.clone();
        let file = trace(&dir, &format!("t{n}.tsv"), random.ranks, random.rows);
        assert_eq!(waits(&[], &file), expected, "{}", file.display());
        let profile = stat(&["profile"], &file);
        let exclusive = column(&profile, &["name"], "exclusive");
        let timeline = stat(&["timeline", "--bins", "7"], &file);
        assert_eq!(
            column(&timeline, &["name"], "time"),
            exclusive,
            "{}",
            file.display()
        );
        let by_loc = stat(&["profile", "--by", "loc,name"], &file);
        let imbalance = stat(&["imbalance", "--per-location"], &file);
        for r in 0..random.ranks {
            let loc = format!("r{r}");
            let of_loc: BTreeMap<String, i64> = column(&by_loc, &["loc", "name"], "exclusive")
                .into_iter()
                .filter_map(|(k, v)| Some((k.strip_prefix(&format!("{loc} "))?.to_string(), v)))
                .collect();
            let mut spread = column(&imbalance, &["name"], &loc);
            spread.retain(|_, v| *v != 0);
            assert_eq!(spread, of_loc, "{} {loc}", file.display());
        }
        let wide = stat(&["timeline", "--bin", "100", "--wide"], &file);
        let covered: i64 = wide[1..]
            .iter()
            .flat_map(|r| r[2..].iter())
            .map(|v| v.parse::<i64>().unwrap())
            .sum();
        assert_eq!(
            covered,
            exclusive.values().sum::<i64>(),
            "{}",
            file.display()
        );
        check_critical_path(&file);
        if n % 5 == 0 {
            same_waits_through_other_formats(&file, &dir, &expected);
        }
    }
}

/// The waits and the other analyses of `file` written as OTF2 and as
/// STF are the same.
fn same_waits_through_other_formats(
    file: &Path,
    dir: &Path,
    expected: &BTreeMap<String, (u64, i64)>,
) {
    let analyses = analyses_of(file);
    for (format, name) in [("otf2", "w.otf2"), ("stf", "w.stf")] {
        let out = dir.join(name);
        let _ = std::fs::remove_dir_all(dir.join("w"));
        let done = bin("trace-cat")
            .args(["-t", format, "-o"])
            .arg(&out)
            .arg(file)
            .output()
            .unwrap();
        assert!(
            done.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&done.stderr)
        );
        assert_eq!(
            &waits(&[], &out),
            expected,
            "{} as {format}",
            file.display()
        );
        let again = analyses_of(&out);
        assert_eq!(again, analyses, "{} as {format}", file.display());
    }
    // Pajé carries messages (links), frames (states) and collectives
    // (states the reader makes collectives again): the same waits.
    let paje = dir.join("w.paje");
    let done = bin("trace-cat")
        .args(["-t", "paje", "-o"])
        .arg(&paje)
        .arg(file)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(&waits(&[], &paje), expected, "{} as paje", file.display());
}

/// The recipes of `docs/plots.md`: each shell line writes its data, and
/// gnuplot (when installed) renders each script to a non-empty PNG
/// without a warning.
#[test]
fn plot_recipes_render() {
    let dir = scratch("plot_recipes");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(repo.join("examples"), dir.join("examples")).unwrap();
    let bins = Path::new(env!("CARGO_BIN_EXE_trace-stat"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let doc = std::fs::read_to_string(repo.join("docs/plots.md")).unwrap();
    let blocks = |lang: &str| -> Vec<String> {
        let fence = format!("```{lang}\n");
        doc.split(&fence)
            .skip(1)
            .map(|b| b.split("```").next().unwrap().to_string())
            .collect()
    };
    let (shells, scripts) = (blocks("sh"), blocks("gnuplot"));
    assert_eq!(shells.len(), 8);
    assert_eq!(shells.len(), scripts.len());
    let gnuplot = std::process::Command::new("gnuplot")
        .arg("--version")
        .output();
    let gnuplot = gnuplot.is_ok_and(|o| o.status.success());
    for (shell, script) in shells.iter().zip(&scripts) {
        let out = std::process::Command::new("sh")
            .args(["-c", shell])
            .env("PATH", &path)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let data = shell.split("> ").nth(1).unwrap().trim();
        let rows = std::fs::read_to_string(dir.join(data)).unwrap();
        assert!(rows.lines().count() > 1, "{shell} wrote no rows");
        if !gnuplot {
            continue;
        }
        let png = script
            .split("set output '")
            .nth(1)
            .unwrap()
            .split('\'')
            .next()
            .unwrap();
        let mut child = std::process::Command::new("gnuplot")
            .current_dir(&dir)
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let done = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(
            done.status.success() && stderr.trim().is_empty(),
            "{png}: {stderr}"
        );
        assert!(
            std::fs::metadata(dir.join(png)).unwrap().len() > 1000,
            "{png} is empty"
        );
    }
    if !gnuplot {
        eprintln!("gnuplot is not installed: the recipes' data were checked, not their plots");
    }
}

/// The analyses of `file` as text, one report after another.
fn analyses_of(file: &Path) -> String {
    let reports: [&[&str]; 7] = [
        &["waits", "--by", "pair,pattern"],
        &["timeline", "--messages", "--bin", "1us"],
        &["critical-path", "--segments"],
        &["imbalance", "--per-location"],
        &["timeline", "--bin", "1us"],
        &["messages", "--matrix"],
        &["messages", "--histogram", "8"],
    ];
    let mut all = String::new();
    for args in reports {
        let out = bin("trace-stat")
            .arg("-q")
            .args(args)
            .arg(file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?} {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        all.push_str(&String::from_utf8(out.stdout).unwrap());
    }
    all
}

/// Every Pallas trace of the corpus (MPI ones among them) gives the same
/// analyses read as it is, and written as OTF2 and as STF. The traces with
/// lossy timestamps are left out: their rows are out of time order (flag
/// `E`), which OTF2 puts back in order, so their frames differ.
#[test]
fn the_analyses_agree_across_formats_on_the_corpus() {
    let Some(dir) = common::corpus("pallas") else {
        return;
    };
    let out = scratch("analyses_corpus");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("archive_0").is_dir() && !p.to_string_lossy().ends_with("lossy"))
        .collect();
    traces.sort();
    assert!(traces.len() >= 7, "{traces:?}");
    let mut with_waits = 0;
    for trace in &traces {
        let expected = analyses_of(trace);
        with_waits += usize::from(expected.contains("wait-nxn") || expected.contains("late-"));
        for format in ["otf2", "stf"] {
            let to = out.join(format!(
                "{}.{format}",
                trace.file_name().unwrap().to_string_lossy()
            ));
            let done = bin("trace-cat")
                .args(["-q", "-t", format, "-o"])
                .arg(&to)
                .arg(trace)
                .output()
                .unwrap();
            assert!(
                done.status.success(),
                "{}: {}",
                to.display(),
                String::from_utf8_lossy(&done.stderr)
            );
            assert_eq!(
                analyses_of(&to),
                expected,
                "{} as {format}",
                trace.display()
            );
        }
    }
    assert!(with_waits > 0, "no corpus trace has a wait state");
}

/// `trace-stat critical-path [--segments]` as rows after the header.
fn critical(args: &[&str], file: &Path) -> Vec<Vec<String>> {
    let mut full = vec!["critical-path"];
    full.extend(args);
    stat(&full, file)[1..].to_vec()
}

fn rows_of(table: &[[&str; 2]]) -> Vec<Vec<String>> {
    table.iter().map(|r| r.map(String::from).to_vec()).collect()
}

#[test]
fn the_critical_path_crosses_at_waits_by_construction() {
    let dir = scratch("critical_construction");
    // r1 waits in its receive for r0, which computes until 400 and sends
    // at 410: the path is r0's work, then r1's receive and work.
    let late_sender = vec![
        enter(0, "r0", "f"),
        enter(100, "r1", "MPI_Recv"),
        leave(400, "r0", "f"),
        enter(400, "r0", "MPI_Send"),
        half("send", 410, "r0", "r1", 0, ""),
        leave(450, "r0", "MPI_Send"),
        half("recv", 500, "r1", "r0", 0, ""),
        leave(510, "r1", "MPI_Recv"),
        enter(510, "r1", "g"),
        leave(1000, "r1", "g"),
    ];
    let file = trace(&dir, "ls.tsv", 2, late_sender);
    let expected = rows_of(&[
        ["g", "490"],
        ["f", "400"],
        ["MPI_Recv", "100"],
        ["MPI_Send", "10"],
    ]);
    assert_eq!(critical(&[], &file), expected);
    let segments = critical(&["--segments"], &file);
    let want = [
        ["r0", "f", "0", "400"],
        ["r0", "MPI_Send", "400", "410"],
        ["r1", "MPI_Recv", "410", "510"],
        ["r1", "g", "510", "1000"],
    ];
    assert_eq!(
        segments,
        want.map(|r| r.map(String::from).to_vec()).to_vec()
    );
    // r0 waits in a barrier for r2, the last to arrive (at 400).
    let barrier = vec![
        enter(0, "r2", "h"),
        enter(100, "r0", "MPI_Barrier"),
        coll(100, 410, "r0", "BARRIER", ""),
        enter(250, "r1", "MPI_Barrier"),
        coll(250, 405, "r1", "BARRIER", ""),
        leave(400, "r2", "h"),
        enter(400, "r2", "MPI_Barrier"),
        coll(400, 420, "r2", "BARRIER", ""),
        leave(406, "r1", "MPI_Barrier"),
        leave(411, "r0", "MPI_Barrier"),
        leave(421, "r2", "MPI_Barrier"),
        enter(411, "r0", "k"),
        leave(900, "r0", "k"),
    ];
    let file = trace(&dir, "barrier.tsv", 3, barrier);
    let expected = rows_of(&[["k", "489"], ["h", "400"], ["MPI_Barrier", "11"]]);
    assert_eq!(critical(&[], &file), expected);
}

/// Every crossing copies a path; with many functions and locations the
/// copies share what they hold and the path holds only the functions it
/// went through (dense per-function times took 350 MB here).
#[test]
fn the_critical_path_costs_the_functions_it_crosses_not_all_of_them() {
    const FUNCTIONS: i64 = 20_000;
    const RANKS: usize = 2_000;
    let dir = scratch("critical_many_functions");
    let mut rows = Vec::new();
    for r in 1..RANKS {
        rows.push(enter(0, &format!("r{r}"), "MPI_Recv"));
    }
    for f in 0..FUNCTIONS {
        rows.push(enter(2 * f, "r0", &format!("f{f}")));
        rows.push(leave(2 * f + 1, "r0", &format!("f{f}")));
    }
    // r0 sends to each rank in turn, each late: every rank crosses to r0.
    let mut t = 2 * FUNCTIONS;
    for r in 1..RANKS {
        let rank = format!("r{r}");
        rows.push(enter(t, "r0", "MPI_Send"));
        rows.push(half("send", t, "r0", &rank, 0, ""));
        rows.push(leave(t + 1, "r0", "MPI_Send"));
        rows.push(half("recv", t + 1, &rank, "r0", 0, ""));
        rows.push(leave(t + 2, &rank, "MPI_Recv"));
        rows.push(enter(t + 2, &rank, "work"));
        rows.push(leave(t + 3, &rank, "work"));
        t += 4;
    }
    let file = trace(&dir, "fan.tsv", RANKS, rows);
    let out = common::run_in_memory(
        "trace-stat",
        192,
        &[OsStr::new("critical-path"), file.as_os_str()],
    )
    .expect("critical-path in 192 MiB");
    let times: BTreeMap<&str, i64> = out
        .lines()
        .skip(1)
        .map(|l| l.split_once('\t').unwrap())
        .map(|(name, time)| (name, time.parse().unwrap()))
        .collect();
    // All of r0 up to the last send, then the last receive and its work.
    assert_eq!(times.len(), FUNCTIONS as usize + 4, "{out}");
    assert!((0..FUNCTIONS).all(|f| times[format!("f{f}").as_str()] == 1));
    assert_eq!((times["MPI_Recv"], times["work"]), (2, 1));
    assert_eq!(times.values().sum::<i64>(), t - 1, "the path spans the run");
}

/// Each location's frames of `file`: (loc, name) → [(start, end)].
fn frames_of(file: &Path) -> BTreeMap<(String, String), Vec<(i64, i64)>> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut open: BTreeMap<String, Vec<(String, i64)>> = BTreeMap::new();
    let mut frames: BTreeMap<(String, String), Vec<(i64, i64)>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let (kind, t, loc) = (
            common::col(line, "kind"),
            common::col(line, "time"),
            common::col(line, "loc"),
        );
        match kind {
            "enter" => open
                .entry(loc.into())
                .or_default()
                .push((common::col(line, "name").into(), t.parse().unwrap())),
            "leave" => {
                let (name, start) = open.get_mut(loc).unwrap().pop().unwrap();
                frames
                    .entry((loc.into(), name))
                    .or_default()
                    .push((start, t.parse().unwrap()));
            }
            _ => {}
        }
    }
    frames
}

/// The critical path of `file` adds up to its span, and each of its
/// segments lies in a frame of its function on its location.
fn check_critical_path(file: &Path) {
    let summary = stat(&["summary"], file);
    let span: i64 = summary.iter().find(|r| r[0] == "span").unwrap()[2]
        .parse()
        .unwrap();
    let times = critical(&[], file);
    let total: i64 = times.iter().map(|r| r[1].parse::<i64>().unwrap()).sum();
    assert_eq!(total, span, "{}", file.display());
    let frames = frames_of(file);
    let segments = critical(&["--segments"], file);
    let mut covered = 0;
    for s in &segments {
        let (start, end): (i64, i64) = (s[2].parse().unwrap(), s[3].parse().unwrap());
        covered += end - start;
        if s[1] == "(outside frames)" {
            continue;
        }
        let within = frames[&(s[0].clone(), s[1].clone())]
            .iter()
            .any(|&(a, b)| a <= start && end <= b);
        assert!(within, "{}: segment {s:?} is in no frame", file.display());
    }
    assert_eq!(covered, span, "{}", file.display());
    let by_time = segments.windows(2).all(|w| w[0][3] == w[1][2]);
    assert!(
        by_time,
        "{}: the segments do not follow one another",
        file.display()
    );
}

/// A timeline's partials say whether they are per state, per location or
/// of messages: one per state is
/// refused at its first line by a merge per function, and bins of another
/// width at the row that has them.
#[test]
fn timeline_partials_of_another_kind_are_refused() {
    let dir = scratch("timeline_partials");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pingpong.tsv");
    let part = |args: &[&str], name: &str| {
        let file = dir.join(name);
        let out = bin("trace-stat")
            .args(args)
            .args(["--partial", "-o"])
            .arg(&file)
            .arg(&example)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        file
    };
    let states = part(&["timeline", "--bin", "1us", "--states"], "states.part");
    let out = bin("trace-stat")
        .args(["timeline", "--bin", "1us", "--merge"])
        .arg(&states)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("states.part:1:"),
        "{err}"
    );
    // Message volume per sender is not time per location.
    let sent = part(
        &["timeline", "--bin", "1us", "--messages", "--by", "loc"],
        "sent.part",
    );
    let out = bin("trace-stat")
        .args(["timeline", "--bin", "1us", "--by", "loc", "--merge"])
        .arg(&sent)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("sent.part:1:"),
        "{err}"
    );
    let wide = part(&["timeline", "--bin", "2us"], "wide.part");
    let out = bin("trace-stat")
        .args(["timeline", "--bin", "1us", "--merge"])
        .arg(&wide)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("wide.part:2:")
            && err.contains("give the same --bin"),
        "{err}"
    );
}

/// Timeline memory follows the frames, not span ÷ width: a frame of 10^15
/// ns in bins of 1 ns, or two calls 10 s apart in bins of 1 µs, are a
/// usage error saying how many bins it would print (not an abort), and
/// wider bins print them.
#[test]
fn timelines_of_more_bins_than_printed_are_refused_not_allocated() {
    let dir = scratch("timeline_sparse");
    let huge = trace(
        &dir,
        "huge.tsv",
        1,
        vec![enter(0, "r0", "f"), leave(1_000_000_000_000_000, "r0", "f")],
    );
    let apart = trace(
        &dir,
        "apart.tsv",
        1,
        vec![
            enter(0, "r0", "f"),
            leave(1_000, "r0", "f"),
            enter(10_000_000_000, "r0", "f"),
            leave(10_000_001_000, "r0", "f"),
        ],
    );
    for (file, width, bins) in [
        (&huge, "1", "1000000000000000"),
        (&apart, "1us", "10000001"),
    ] {
        let out = bin("trace-stat")
            .args(["timeline", "--bin", width])
            .arg(file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("the timeline spans {bins} bins of"))
                && err.contains("more than the 1000000 it prints")
                && err.contains("--bins N"),
            "{err}"
        );
    }
    let rows = stat(&["timeline", "--bin", "1s", "--unit", "ns"], &apart);
    let times: Vec<(&str, &str)> = rows[1..]
        .iter()
        .map(|r| (r[0].as_str(), r[3].as_str()))
        .collect();
    assert_eq!(times, [("0", "1000"), ("10000000000", "1000")]);
    let rows = stat(&["timeline", "--bins", "4", "--unit", "ns"], &huge);
    let times: Vec<&str> = rows[1..].iter().map(|r| r[3].as_str()).collect();
    assert_eq!(times, ["250000000000000"; 4]);
}

/// A timeline partial's bins are checked: one outside the times a stream
/// holds, or with no time in it, is refused at its line, never a panic.
#[test]
fn tampered_timeline_partials_are_refused_at_their_line() {
    let dir = scratch("timeline_tampered");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pingpong.tsv");
    let part = dir.join("good.part");
    let out = bin("trace-stat")
        .args(["timeline", "--bin", "1us", "--partial", "-o"])
        .arg(&part)
        .arg(&example)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let good = std::fs::read_to_string(&part).unwrap();
    for (field, value, words) in [
        (
            3,
            "-9223372036854775808",
            "lies outside the times a stream holds",
        ),
        (
            3,
            "9223372036854775807",
            "lies outside the times a stream holds",
        ),
        (4, "0", "a partial holds the bins with time in them"),
        (4, "-7", "a partial holds the bins with time in them"),
    ] {
        let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
        let mut cells: Vec<&str> = lines[1].split('\t').collect();
        cells[field] = value;
        lines[1] = cells.join("\t");
        let bad = dir.join("bad.part");
        std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
        let out = bin("trace-stat")
            .args(["timeline", "--bin", "1us", "--merge"])
            .arg(&bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{value}: {err}");
        assert!(
            err.contains("bad.part:2:") && err.contains(words),
            "{value}: {err}"
        );
    }
}

/// A `leave` that matches no open frame is kept with one warning at its
/// line in every analysis, refused there with `--strict`, whatever the
/// threads.
#[test]
fn a_leave_without_its_frame_is_located() {
    let dir = scratch("analyses_bad_leave");
    let unopened = trace(&dir, "unopened.tsv", 1, vec![leave(3, "r0", "f")]);
    let crossed = trace(
        &dir,
        "crossed.tsv",
        1,
        vec![enter(5, "r0", "f"), leave(9, "r0", "g")],
    );
    let reports: [&[&str]; 5] = [
        &["waits"],
        &["critical-path"],
        &["summary"],
        &["imbalance"],
        &["timeline", "--bin", "1"],
    ];
    for report in reports {
        for threads in ["1", "2"] {
            for (file, line, what) in [
                (&unopened, 4, "leave of `f`, which is not open (--strict)"),
                (&crossed, 5, "leave of `g`, which is not open (--strict)"),
            ] {
                let run = |strict: &[&str]| {
                    let out = bin("trace-stat")
                        .args(report)
                        .args(strict)
                        .args(["--threads", threads])
                        .arg(file)
                        .output()
                        .unwrap();
                    let err = String::from_utf8_lossy(&out.stderr).into_owned();
                    (out.status.success(), err)
                };
                let at = format!("{}:{line}: ", file.display());
                // The reader keeps such a leave (one warning), or refuses it.
                let (ok, err) = run(&[]);
                assert!(
                    ok && err.contains(&format!("{at}frames that do not nest")),
                    "{report:?}: {err}"
                );
                let (ok, err) = run(&["--strict"]);
                assert!(
                    !ok && err.contains(&format!("{at}{what}")),
                    "{report:?}: {err}"
                );
            }
        }
    }
}

/// Two CPU threads and a GPU stream: `f` takes 10 and 30 ns on the threads,
/// the stream runs a kernel `k`. The threads are compared by default; the
/// stream only when `--kinds` names it (or `all`), and a warning says what
/// was left out.
#[test]
fn imbalance_compares_the_locations_of_one_kind() {
    let dir = scratch("analyses_kinds");
    let container =
        |loc: &str, cat: &str| row(&[("kind", "container"), ("loc", loc), ("cat", cat)]);
    let mut rows = vec![
        container("t0", "thread"),
        container("t1", "thread"),
        container("g0", "gpu"),
    ];
    let mut frames = vec![
        enter(0, "t0", "f"),
        leave(10, "t0", "f"),
        enter(0, "t1", "f"),
        leave(30, "t1", "f"),
        enter(5, "g0", "k"),
        leave(105, "g0", "k"),
    ];
    frames.sort_by_key(|(t, _)| *t);
    rows.extend(frames.into_iter().map(|(_, r)| r));
    let file = dir.join("kinds.tsv");
    std::fs::write(&file, stream(&rows)).unwrap();
    let run = |kinds: &[&str]| {
        let out = bin("trace-stat")
            .arg("imbalance")
            .args(kinds)
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let rows: Vec<Vec<String>> = text
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect();
        (rows, String::from_utf8(out.stderr).unwrap())
    };
    let (rows, err) = run(&[]);
    assert_eq!(
        column(&rows, &["name"], "locations"),
        BTreeMap::from([("f".into(), 2)])
    );
    assert_eq!(
        column(&rows, &["name"], "mean"),
        BTreeMap::from([("f".into(), 20)])
    );
    assert!(
        err.contains("left out 1 location(s) with frames (1 `gpu`)"),
        "{err}"
    );
    let (rows, err) = run(&["--kinds", "all"]);
    assert_eq!(
        column(&rows, &["name"], "locations"),
        BTreeMap::from([("f".into(), 3), ("k".into(), 3)])
    );
    assert_eq!(err, "");
    let (rows, err) = run(&["--kinds", "gpu"]);
    assert_eq!(
        column(&rows, &["name"], "locations"),
        BTreeMap::from([("k".into(), 1)])
    );
    assert!(
        err.contains("left out 2 location(s) with frames (2 `thread`)"),
        "{err}"
    );
}

/// A frame cut where a crossing `leave` cut it (flag `X`) and never
/// entered again is still one call of the profile, up to its cut.
#[test]
fn a_cut_frame_never_entered_again_is_counted_up_to_its_cut() {
    let dir = scratch("analyses_cut");
    let mut cut = leave(10, "r0", "f");
    cut.1 = row(&[
        ("kind", "leave"),
        ("time", "10"),
        ("loc", "r0"),
        ("name", "f"),
        ("flags", "SX"),
    ]);
    let file = trace(&dir, "cut.tsv", 1, vec![enter(4, "r0", "f"), cut]);
    let rows = stat(&["profile"], &file);
    assert_eq!(
        column(&rows, &["name"], "count"),
        BTreeMap::from([("f".into(), 1)])
    );
    assert_eq!(
        column(&rows, &["name"], "inclusive"),
        BTreeMap::from([("f".into(), 6)])
    );
}

/// Sends (and their receives) at known times and sizes: the volume per
/// bin and pair, per sender, through trace-match's `msg` rows, and from
/// partial files of parts split by location.
#[test]
fn message_volume_over_time_by_construction() {
    let dir = scratch("message_volume");
    let sent: [(i64, &str, &str, u64); 5] = [
        (100, "r0", "r1", 10),
        (900, "r0", "r1", 20),
        (1200, "r1", "r0", 7),
        (1500, "r0", "r1", 5),
        (1999, "r2", "r0", 100),
    ];
    let mut rows = Vec::new();
    for (i, &(t, from, to, size)) in sent.iter().enumerate() {
        let (id, size) = (i.to_string(), size.to_string());
        for (kind, at, loc, peer) in [("send", t, from, to), ("recv", t + 50, to, from)] {
            let t_ = at.to_string();
            let fields = [
                ("kind", kind),
                ("time", t_.as_str()),
                ("loc", loc),
                ("peer", peer),
                ("comm", "world"),
                ("tag", "0"),
                ("size", size.as_str()),
                ("id", id.as_str()),
            ];
            rows.push((at, row(&fields)));
        }
    }
    let file = trace(&dir, "sent.tsv", 3, rows);
    let volume = |args: &[&str], file: &Path| {
        let mut full = vec!["timeline", "--messages", "--bin", "1000"];
        full.extend(args);
        stat(&full, file)
    };
    assert_eq!(
        volume(&[], &file),
        rows_of6(&[
            ["start", "end", "sender", "receiver", "count", "bytes"],
            ["0", "1000", "r0", "r1", "2", "30"],
            ["1000", "2000", "r2", "r0", "1", "100"],
            ["1000", "2000", "r1", "r0", "1", "7"],
            ["1000", "2000", "r0", "r1", "1", "5"],
        ])
    );
    let per_sender: Vec<Vec<String>> = volume(&["--by", "loc"], &file);
    let expected = [
        ["0", "1000", "r0", "2", "30"],
        ["1000", "2000", "r2", "1", "100"],
        ["1000", "2000", "r1", "1", "7"],
        ["1000", "2000", "r0", "1", "5"],
    ];
    assert_eq!(
        per_sender[1..],
        expected.map(|r| r.map(String::from).to_vec())
    );
    // The same messages matched into msg rows.
    let matched = dir.join("matched.tsv");
    let out = bin("trace-match").arg("-q").arg(&file).output().unwrap();
    assert!(out.status.success());
    std::fs::write(&matched, out.stdout).unwrap();
    assert_eq!(volume(&[], &matched), volume(&[], &file));
    // Parts split by location, merged.
    let mut parts = Vec::new();
    for (n, locs) in ["r0", "r[12]"].iter().enumerate() {
        let part = dir.join(format!("part{n}"));
        let args = [
            "timeline",
            "--messages",
            "--bin",
            "1000",
            "--partial",
            "-l",
            locs,
            "-o",
        ];
        bin("trace-stat")
            .args(args)
            .arg(&part)
            .arg(&file)
            .assert()
            .success();
        parts.push(part);
    }
    let merged = bin("trace-stat")
        .args(["timeline", "--messages", "--bin", "1000", "--merge"])
        .args(&parts)
        .output()
        .unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let merged: Vec<Vec<String>> = String::from_utf8(merged.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(String::from).collect())
        .collect();
    assert_eq!(merged, volume(&[], &file));
    // A partial of the time timeline is not one of messages.
    let time_part = dir.join("time.part");
    let args = ["timeline", "--bin", "1000", "--partial", "-o"];
    bin("trace-stat")
        .args(args)
        .arg(&time_part)
        .arg(&file)
        .assert()
        .success();
    let out = bin("trace-stat")
        .args(["timeline", "--messages", "--bin", "1000", "--merge"])
        .arg(&time_part)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // Each pair's bytes over the bins are the messages report's.
    let mut binned: BTreeMap<String, i64> = BTreeMap::new();
    for r in &volume(&[], &file)[1..] {
        *binned.entry(format!("{} {}", r[2], r[3])).or_default() += r[5].parse::<i64>().unwrap();
    }
    let messages = stat(&["messages"], &file);
    let bytes = messages[0].iter().position(|c| c == "bytes").unwrap();
    let reported: BTreeMap<String, i64> = messages[1..]
        .iter()
        .map(|r| (format!("{} {}", r[0], r[1]), r[bytes].parse().unwrap()))
        .collect();
    assert_eq!(binned, reported);
}

fn rows_of6(table: &[[&str; 6]]) -> Vec<Vec<String>> {
    table.iter().map(|r| r.map(String::from).to_vec()).collect()
}

/// `timeline --by loc`: each location's busy time per bin (the time any
/// frame of it is open, nested frames counted once), states and frames
/// alike.
#[test]
fn timeline_per_location_is_busy_time() {
    let dir = scratch("timeline_per_loc");
    let file = dir.join("t.tsv");
    std::fs::write(
        &file,
        stream(&[
            row(&[("kind", "container"), ("loc", "a")]),
            row(&[("kind", "container"), ("loc", "b")]),
            row(&[
                ("kind", "enter"),
                ("time", "0"),
                ("loc", "a"),
                ("name", "f"),
            ]),
            row(&[
                ("kind", "enter"),
                ("time", "5"),
                ("loc", "a"),
                ("name", "g"),
            ]),
            row(&[
                ("kind", "leave"),
                ("time", "15"),
                ("loc", "a"),
                ("name", "g"),
            ]),
            row(&[
                ("kind", "state"),
                ("time", "8"),
                ("end", "22"),
                ("loc", "b"),
                ("name", "k"),
            ]),
            row(&[
                ("kind", "leave"),
                ("time", "25"),
                ("loc", "a"),
                ("name", "f"),
            ]),
        ]),
    )
    .unwrap();
    let busy = stat(&["timeline", "--by", "loc", "--bin", "10"], &file);
    let got: Vec<String> = busy.iter().map(|r| r.join(" ")).collect();
    assert_eq!(
        got,
        [
            "start end loc time",
            "0 10 a 10",
            "0 10 b 2",
            "10 20 a 10",
            "10 20 b 10",
            "20 30 a 5",
            "20 30 b 2"
        ]
    );
    let err = bin("trace-stat")
        .args(["timeline", "--by", "loc", "--states", "--bin", "10"])
        .arg(&file)
        .assert()
        .code(2);
    let text = String::from_utf8_lossy(&err.get_output().stderr).into_owned();
    assert!(text.contains("--by loc and --states"), "{text}");
}
