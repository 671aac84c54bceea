//! The Paraver reader: fixtures written from the format's description
//! against golden streams, traces Extrae wrote against an independent
//! count of their records, the analyses on an MPI trace, bad input.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{bin, col, data, kind_of, output_of, scratch};

/// `trace-cat FILE` against `tests/data/paraver/NAME.tsv`
/// (`TRACEPIPE_BLESS=1` rewrites it).
fn golden(name: &str) {
    let got = output_of("trace-cat", &[], &[&data(&format!("paraver/{name}.prv"))]);
    let file = data(&format!("paraver/{name}.tsv"));
    if std::env::var_os("TRACEPIPE_BLESS").is_some() {
        std::fs::write(&file, &got).unwrap();
    }
    let expected = std::fs::read_to_string(&file).unwrap();
    assert_eq!(got, expected, "{name}");
}

#[test]
fn fixtures_read_as_their_golden_streams() {
    // Nodes, a communicator per message, comments, a type-4 record, open
    // states, a call-stack type changing value without 0, frames that
    // nest across types, a type the .pcf does not name; then two
    // applications in µs with no .pcf and no .row.
    golden("mpi");
    golden("apps-us");
}

#[test]
fn an_mpi_trace_gives_its_calls_and_late_senders() {
    let trace = data("paraver/mpi.prv");
    let waits = output_of("trace-stat", &["waits"], &[&trace]);
    assert!(waits.lines().any(|l| l == "late-sender\t1\t50"), "{waits}");
    let profile = output_of("trace-stat", &["profile"], &[&trace]);
    for (name, inclusive) in [("MPI_Send", "50"), ("MPI_Recv", "250")] {
        let line = profile
            .lines()
            .find(|l| l.starts_with(&format!("{name}\t")));
        let fields: Vec<&str> = line.expect(name).split('\t').collect();
        assert_eq!((fields[1], fields[2]), ("1", inclusive), "{profile}");
    }
}

#[test]
fn an_extrae_trace_profiles_its_mpi_calls() {
    // Entries to each call, counted from the pairs of `prime_v0.prv`:
    // the value Extrae's .pcf gives the call, under its type.
    let trace = data("paraver/extrae/prime_v0.prv");
    let text = std::fs::read_to_string(&trace).unwrap();
    let entries = |pair: (&str, &str)| {
        let records = text.lines().filter(|l| l.starts_with("2:"));
        let fields = records.flat_map(|l| {
            let f: Vec<&str> = l.split(':').skip(6).collect();
            f.chunks(2).map(|c| (c[0], c[1])).collect::<Vec<_>>()
        });
        fields.filter(|&p| p == pair).count().to_string()
    };
    let profile = output_of("trace-stat", &["profile"], &[&trace]);
    for (call, pair) in [
        ("MPI_Init", ("50000003", "31")),
        ("MPI_Bcast", ("50000002", "7")),
        ("MPI_Reduce", ("50000002", "9")),
        ("MPI_Finalize", ("50000003", "32")),
    ] {
        let line = profile
            .lines()
            .find(|l| l.starts_with(&format!("{call}\t")));
        let count = line.expect(call).split('\t').nth(1).unwrap();
        assert_eq!(count, entries(pair), "{call}");
    }
}

/// Per thread (`a.t.th`): states, event pairs and messages sent, counted
/// from the `.prv` by splitting its lines, nothing else.
fn counted(prv: &Path) -> BTreeMap<(String, &'static str), usize> {
    let mut counts = BTreeMap::new();
    let text = std::fs::read_to_string(prv).unwrap();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(':').collect();
        let what = match f[0] {
            "1" => "states",
            "2" => "pairs",
            "3" => "messages",
            _ => continue,
        };
        let n = if what == "pairs" {
            (f.len() - 6) / 2
        } else {
            1
        };
        *counts.entry((f[2..5].join("."), what)).or_default() += n;
    }
    counts
}

/// The same from the stream: `state` rows on a thread's lane, rows that
/// carry a pair (`paraver.type`, not made by the reader), `msg` rows.
fn read(stream: &str) -> BTreeMap<(String, &'static str), usize> {
    let mut counts = BTreeMap::new();
    for line in stream.lines() {
        let (loc, attrs, flags) = (col(line, "loc"), col(line, "attrs"), col(line, "flags"));
        let (loc, what) = match kind_of(line) {
            "state" => (loc.trim_end_matches("/state"), "states"),
            "msg" => (loc, "messages"),
            _ if attrs.contains("paraver.type=") && !flags.contains('S') => (loc, "pairs"),
            _ => continue,
        };
        *counts.entry((loc.to_string(), what)).or_default() += 1;
    }
    counts
}

#[test]
fn extrae_traces_agree_with_an_independent_count() {
    for name in ["my-example", "prime_v0", "trmm_v0"] {
        let prv = data(&format!("paraver/extrae/{name}.prv"));
        let stream = output_of("trace-cat", &[], &[&prv]);
        assert_eq!(read(&stream), counted(&prv), "{name}");
        // Names come from the .pcf and the .row.
        for line in stream.lines() {
            let (kind, name) = (kind_of(line), col(line, "name"));
            match kind {
                "enter" | "state" => assert!(name.parse::<i64>().is_err(), "{line}"),
                "counter" => assert!(!name.starts_with("type "), "{line}"),
                _ => {}
            }
        }
    }
    let stream = output_of("trace-cat", &[], &[&data("paraver/extrae/prime_v0.prv")]);
    assert!(
        stream.contains("container\t\t\tnode4\tnode\tc7105\t"),
        "node names from the .row"
    );
    let profile = output_of(
        "trace-stat",
        &["profile"],
        &[&data("paraver/extrae/prime_v0.prv")],
    );
    let calls: Vec<&str> = profile
        .lines()
        .filter(|l| l.starts_with("MPI_"))
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    for call in ["MPI_Init", "MPI_Bcast", "MPI_Reduce", "MPI_Finalize"] {
        assert!(calls.contains(&call), "{profile}");
    }
}

#[test]
fn bad_input_is_located() {
    let dir = scratch("paraver-bad");
    let header = "#Paraver (x):99_ns:0:1:1(1:0)\n";
    let cases = [
        (
            "#Paraver (x):10_s:0:1:1(1:0)\n",
            "t.prv:1: unknown time unit `_s`",
        ),
        (
            "#Paraver (x):10:0:1:1(1:0\n",
            "t.prv:1: expected `)` after the node of a task",
        ),
        ("2:0:1:2:1:5:7:1\n", "t.prv:2: no task 1.2 in the header"),
        (
            "2:0:1:1:2:5:7:1\n",
            "t.prv:2: no thread 1.1.2 in the header",
        ),
        (
            "2:0:1:1:1:9:7:1\n2:0:1:1:1:5:7:1\n",
            "t.prv:3: record at 5 ns, before rows already complete at 9 ns",
        ),
        (
            "1:0:1:1:1:9:5:1\n",
            "t.prv:2: a state that ends (5) before it begins (9)",
        ),
        ("7:1\n", "t.prv:2: expected a record type"),
        ("2:0:1:1:1:5:7\n", "t.prv:2: expected the event value"),
        (
            "2:0:1:1:1:5:7:x\n",
            "t.prv:2: expected an event value, found `x`",
        ),
        (
            "2:0:1:1:1:5\n",
            "t.prv:2: an event record with no TYPE:VALUE pair",
        ),
        (
            "2:0:1:1:1:99999999999999999999:7:1\n",
            "t.prv:2: expected the time as a whole number",
        ),
    ];
    for (body, expected) in cases {
        let text = if body.starts_with('#') {
            body.to_string()
        } else {
            format!("{header}{body}")
        };
        std::fs::write(dir.join("t.prv"), text).unwrap();
        let out = bin("trace-cat")
            .arg("t.prv")
            .current_dir(&dir)
            .assert()
            .code(1);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains(expected), "{body:?}: {err}");
    }
    std::fs::write(dir.join("t.prv"), format!("{header}1:0:1:1:1:0:5:1\n")).unwrap();
    std::fs::write(dir.join("t.pcf"), "STATES\n0 Idle\nx Running\n").unwrap();
    let out = bin("trace-cat")
        .arg("t.prv")
        .current_dir(&dir)
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("t.pcf:3: expected a state number, found `x`"),
        "{err}"
    );
}

/// Rows but `meta` rows.
fn data_rows(stream: &str) -> Vec<String> {
    stream
        .lines()
        .filter(|l| !l.starts_with("meta\t"))
        .map(str::to_string)
        .collect()
}

/// Writes `input` with `-t paraver` as `dir/NAME.prv`; its path.
fn written(input: &Path, dir: &Path, name: &str) -> std::path::PathBuf {
    let prv = dir.join(format!("{name}.prv"));
    bin("trace-cat")
        .arg(input)
        .args(["-q", "-t", "paraver", "-o"])
        .arg(&prv)
        .assert()
        .success();
    prv
}

#[test]
fn paraver_traces_written_back_read_the_same() {
    let dir = scratch("paraver-round-trip");
    for name in [
        "mpi",
        "extrae/my-example",
        "extrae/prime_v0",
        "extrae/trmm_v0",
    ] {
        let source = data(&format!("paraver/{name}.prv"));
        let original = output_of("trace-cat", &["-q"], &[&source]);
        let prv = written(&source, &dir, &name.replace('/', "-"));
        let back = output_of("trace-cat", &["-q"], &[&prv]);
        // The same rows; of rows at one time, Paraver's order is not kept.
        let sorted = |s: &str| {
            let mut rows = data_rows(s);
            rows.sort();
            rows
        };
        assert_eq!(sorted(&back), sorted(&original), "{name}");
        // A second hop writes the same files.
        let again = written(&prv, &dir, &format!("{}-again", name.replace('/', "-")));
        for ext in ["prv", "pcf", "row"] {
            let read = |p: &Path| std::fs::read_to_string(p.with_extension(ext)).unwrap();
            assert_eq!(read(&again), read(&prv), "{name}.{ext}");
        }
    }
}

/// Text as the writer puts it on a `.pcf` or `.row` line: control
/// characters (escaped in the stream) as spaces, trimmed.
fn one_line(text: &str) -> String {
    let text = text
        .replace("\\n", " ")
        .replace("\\t", " ")
        .replace("\\r", " ");
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// The rows of a stream as Paraver keeps them, each on the name of the
/// thread it is written on (a lane's owner): frames, states, messages,
/// samples; `coll` rows apart.
struct Kept {
    rows: Vec<String>,
    collectives: usize,
}

/// The name of the thread a row on `loc` is written on.
fn thread_name<'a>(declared: &Declared<'a>, mut loc: &'a str) -> String {
    while let Some(&("lane", parent, _)) = declared.get(loc) {
        if parent.is_empty() {
            break;
        }
        loc = parent;
    }
    match declared.get(loc).map(|d| one_line(d.2)) {
        Some(name) if !name.is_empty() => name,
        _ if one_line(loc).is_empty() => "(unnamed)".into(),
        _ => one_line(loc),
    }
}

/// A sample's name as the writer labels its type: a type with no label
/// reads back as `type N`.
fn sample_name(name: &str) -> String {
    let name = one_line(name);
    let unlabelled = name
        .strip_prefix("type ")
        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
    if unlabelled {
        String::new()
    } else {
        name
    }
}

fn or_zero(field: &str) -> &str {
    if field.is_empty() {
        "0"
    } else {
        field
    }
}

/// Whether rows the reader made to repair frames that cross (flagged
/// `S`) are kept.
#[derive(PartialEq, Clone, Copy)]
enum Repairs {
    Kept,
    Skipped,
}

/// Containers by location: category, parent, name.
type Declared<'a> = BTreeMap<&'a str, (&'a str, &'a str, &'a str)>;

fn kept(stream: &str, repairs: Repairs) -> Kept {
    let mut declared = Declared::new();
    let (mut rows, mut collectives) = (Vec::new(), 0);
    for line in stream.lines() {
        if kind_of(line) == "container" {
            declared.insert(
                col(line, "loc"),
                (col(line, "cat"), col(line, "peer"), col(line, "name")),
            );
            continue;
        }
        if repairs == Repairs::Skipped && col(line, "flags").contains('S') {
            continue;
        }
        let thread = |loc| thread_name(&declared, loc);
        let (time, end, on) = (
            col(line, "time"),
            col(line, "end"),
            thread(col(line, "loc")),
        );
        let row = match kind_of(line) {
            "enter" => format!("enter {time} {on} {}", one_line(col(line, "name"))),
            "leave" => format!("leave {time} {on}"),
            "state" => format!("state {time} {end} {on} {}", one_line(col(line, "name"))),
            // Paraver's records have a tag and a size: none is 0.
            "msg" => format!(
                "msg {time} {end} {on} {} {} {}",
                thread(col(line, "peer")),
                or_zero(col(line, "tag")),
                or_zero(col(line, "size"))
            ),
            "counter" => {
                let value = col(line, "value")
                    .parse::<f64>()
                    .map(f64::round)
                    .unwrap_or(f64::NAN);
                format!(
                    "counter {time} {on} {} {value}",
                    sample_name(col(line, "name"))
                )
            }
            "event" => match one_line(col(line, "value")) {
                v if v.is_empty() => format!(
                    "event {time} {on} {} (none)",
                    sample_name(col(line, "name"))
                ),
                v => format!("event {time} {on} {} {v}", sample_name(col(line, "name"))),
            },
            "coll" => {
                collectives += 1;
                continue;
            }
            _ => continue,
        };
        rows.push(row);
    }
    rows.sort();
    Kept { rows, collectives }
}

/// `got` less the rows of `want`, both sorted; the rows of `want` not in
/// `got`.
fn difference(got: &[String], want: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut extra, mut missing) = (Vec::new(), Vec::new());
    let (mut g, mut w) = (got.iter().peekable(), want.iter().peekable());
    loop {
        match (g.peek(), w.peek()) {
            (Some(a), Some(b)) if a == b => {
                g.next();
                w.next();
            }
            (Some(a), Some(b)) if a < b => extra.push(g.next().unwrap().clone()),
            (Some(_), Some(_)) | (None, Some(_)) => missing.push(w.next().unwrap().clone()),
            (Some(_), None) => extra.push(g.next().unwrap().clone()),
            (None, None) => return (extra, missing),
        }
    }
}

/// Every type and state a `.prv` uses is named in its `.pcf`.
fn pcf_names_everything(prv: &Path) {
    let pcf = std::fs::read_to_string(prv.with_extension("pcf")).unwrap();
    let declared: Vec<&str> = pcf
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    let states: Vec<&str> = pcf
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for line in std::fs::read_to_string(prv).unwrap().lines().skip(1) {
        let f: Vec<&str> = line.split(':').collect();
        match f[0] {
            "2" => assert!(
                declared.contains(&f[6]),
                "type {} of `{line}` not in the .pcf",
                f[6]
            ),
            "1" => assert!(
                states.contains(&f[7]),
                "state {} of `{line}` not in the .pcf",
                f[7]
            ),
            _ => {}
        }
    }
}

#[test]
fn traces_of_other_formats_written_as_paraver_keep_their_rows() {
    let dir = scratch("paraver-other-formats");
    let mut inputs = vec![data("../../examples/pingpong.tsv")];
    let listed = |dir: std::path::PathBuf, keep: &dyn Fn(&Path) -> bool| {
        let mut found: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        found.retain(|p| keep(p));
        found.sort();
        found
    };
    if let Some(paje) = common::corpus("paje") {
        let traces = |p: &Path| p.extension().is_some_and(|e| e == "trace" || e == "paje");
        inputs.extend(listed(paje, &traces));
    }
    if let Some(trace) = common::corpus("trace") {
        inputs.extend(listed(trace.join("synthetic/valid"), &|p| {
            p.extension().is_some_and(|e| e == "etf")
        }));
    }
    if let Some(pallas) = common::corpus("pallas") {
        let zfp = cfg!(feature = "zfp");
        let folders =
            |p: &Path| p.is_dir() && !p.ends_with("expected") && (zfp || !p.ends_with("zfp_lossy"));
        inputs.extend(listed(pallas, &folders));
    }
    inputs.extend(
        common::external_archives()
            .into_iter()
            .map(|(_, anchor)| anchor),
    );
    for (i, input) in inputs.iter().enumerate() {
        // Corpus traces tracepipe refuses (invalid on purpose) are not
        // traces to convert.
        if !bin("trace-cat")
            .arg("-q")
            .arg(input)
            .output()
            .unwrap()
            .status
            .success()
        {
            continue;
        }
        let matched = output_of("trace-match", &["-q"], &[input]);
        let prv = written(input, &dir, &format!("t{i}"));
        let back = output_of("trace-cat", &["-q"], &[&prv]);
        pcf_names_everything(&prv);
        // Written, a repair is a frame like any other; read back, frames
        // that cross (overlapping collectives) are repaired again.
        let (want, got) = (kept(&matched, Repairs::Kept), kept(&back, Repairs::Skipped));
        let (extra, missing) = difference(&got.rows, &want.rows);
        let shown = input.display();
        assert!(
            missing.is_empty(),
            "{shown}: rows lost: {:?}",
            &missing[..missing.len().min(5)]
        );
        // A collective comes back as a frame of Extrae's collective type,
        // or inside its call's frame as Extrae's Global OP sizes.
        let (mut frames, mut sizes) = (0, 0);
        for row in &extra {
            match row.split(' ').next() {
                Some("enter") => frames += 1,
                Some("counter") if row.contains(" Send Size in MPI Global OP ") => sizes += 1,
                Some("leave" | "counter") => {}
                _ => panic!("{shown}: a row it did not have: {row}"),
            }
        }
        assert_eq!(frames + sizes, want.collectives, "{shown}: collectives");
        assert_eq!(extra.len(), 2 * want.collectives, "{shown}: {extra:?}");
    }
}

#[test]
fn labels_that_are_no_pcf_line_are_written_on_one() {
    let dir = scratch("paraver-labels");
    let stream = common::stream(&[
        common::row(&[
            ("kind", "meta"),
            ("name", "paraver.date"),
            ("value", "(1) \\n2"),
        ]),
        common::row(&[("kind", "container"), ("loc", "t"), ("cat", "thread")]),
        common::row(&[
            ("kind", "enter"),
            ("time", "1"),
            ("loc", "t"),
            ("name", "two\\nlines"),
        ]),
        common::row(&[
            ("kind", "leave"),
            ("time", "2"),
            ("loc", "t"),
            ("name", "two\\nlines"),
        ]),
        common::row(&[("kind", "state"), ("time", "1"), ("end", "3"), ("loc", "t")]),
        common::row(&[
            ("kind", "event"),
            ("time", "3"),
            ("loc", "t"),
            ("name", "e"),
            ("value", "tab\\there"),
        ]),
    ]);
    let tsv = dir.join("s.tsv");
    std::fs::write(&tsv, stream).unwrap();
    let prv = written(&tsv, &dir, "s");
    let back = output_of("trace-cat", &["-q"], &[&prv]);
    // The date, its `)` and line break as spaces, read back from the header.
    assert!(
        back.contains("\tparaver.date\t\t\t\t\t\t\t(1   2\t"),
        "{back}"
    );
    let rows: Vec<(&str, &str, &str)> = back
        .lines()
        .filter(|l| ["enter", "state", "event"].contains(&kind_of(l)))
        .map(|l| (kind_of(l), col(l, "name"), col(l, "value")))
        .collect();
    assert_eq!(
        rows,
        [
            ("enter", "two lines", ""),
            ("state", "state 1000", ""),
            ("event", "e", "tab here")
        ],
        "{back}"
    );
}

#[test]
fn mpi_calls_and_collectives_are_written_as_extrae_writes_them() {
    let dir = scratch("paraver-extrae-types");
    let frame = |kind: &'static str, time: &'static str, cat: &'static str, name: &'static str| {
        common::row(&[
            ("kind", kind),
            ("time", time),
            ("loc", "r0"),
            ("cat", cat),
            ("name", name),
        ])
    };
    let stream = common::stream(&[
        common::row(&[("kind", "container"), ("loc", "r0"), ("cat", "process")]),
        frame("enter", "10", "USER", "main"),
        frame("enter", "20", "MPI", "MPI_Allreduce"),
        common::row(&[
            ("kind", "coll"),
            ("time", "21"),
            ("end", "29"),
            ("loc", "r0"),
            ("name", "ALLREDUCE"),
            ("size", "8"),
            ("value", "16"),
        ]),
        frame("leave", "30", "MPI", "MPI_Allreduce"),
        common::row(&[
            ("kind", "coll"),
            ("time", "40"),
            ("end", "50"),
            ("loc", "r0"),
            ("name", "BCAST"),
        ]),
        // A call inside a call of the same type keeps a type of its own.
        frame("enter", "60", "MPI", "MPI_Wait"),
        frame("enter", "61", "MPI", "MPI_Send"),
        frame("leave", "62", "MPI", "MPI_Send"),
        frame("leave", "63", "MPI", "MPI_Wait"),
        frame("leave", "90", "USER", "main"),
    ]);
    let tsv = dir.join("s.tsv");
    std::fs::write(&tsv, stream).unwrap();
    let prv = written(&tsv, &dir, "s");
    let records: Vec<String> = std::fs::read_to_string(&prv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.splitn(6, ':').last().unwrap().to_string())
        .collect();
    let expected = [
        "10:60000019:1",
        "20:50000002:10",
        "21:50100001:8",
        "21:50100002:16",
        "30:50000002:0",
        "40:50000002:7",
        "50:50000002:0",
        "60:50000001:5",
        "61:60100001:1",
        "62:60100001:0",
        "63:50000001:0",
        "90:60000019:0",
    ];
    assert_eq!(records, expected);
    let pcf = std::fs::read_to_string(prv.with_extension("pcf")).unwrap();
    for block in [
        "0    50000002    MPI Collective Comm\nVALUES\n0      Outside MPI\n10      MPI_Allreduce\n7      MPI_Bcast\n",
        "0    60000019    User function\nVALUES\n0      End\n1      main\n",
        "7    50100001    Send Size in MPI Global OP\n",
    ] {
        assert!(pcf.contains(block), "{block} not in\n{pcf}");
    }
    let back = output_of("trace-cat", &["-q"], &[&prv]);
    let names: Vec<&str> = back
        .lines()
        .filter(|l| kind_of(l) == "enter")
        .map(|l| col(l, "name"))
        .collect();
    assert_eq!(
        names,
        ["main", "MPI_Allreduce", "MPI_Bcast", "MPI_Wait", "MPI_Send"]
    );
}
