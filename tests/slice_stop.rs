//! `trace-slice` stops reading after its window where the reader tells
//! that nothing still to come reaches into it: the slice is the one read
//! to the end (`--true-ends`) but for the true ends not read yet, it does
//! not depend on the threads, and reading does stop (a defect after the
//! window goes unread) unless a link or message in the slice waits.

mod common;

use std::path::{Path, PathBuf};

use common::{accepted_traces, as_cut_frame, col, corpus, data, run, scratch, Rng};

/// The native traces the properties run on: the corpus's Pajé and Pallas
/// traces, and the example written as Pajé, OTF2 and Pallas.
fn native_inputs(dir: &Path) -> Vec<PathBuf> {
    let mut inputs = Vec::new();
    for format in ["paje", "pallas"] {
        if let Some(corpus) = corpus(format) {
            let traces = accepted_traces(&corpus);
            inputs.extend(traces.into_iter().filter(|p| {
                p.is_dir() || p.extension().is_some_and(|e| e == "paje" || e == "trace")
            }));
        }
    }
    let example = data("../../examples/pingpong.tsv");
    for (format, name) in [
        ("paje", "ping.paje"),
        ("otf2", "ping.otf2"),
        ("pallas", "ping.pallas"),
    ] {
        let out = dir.join(name);
        let args = ["-q", "-t", format, "-o", out.to_str().unwrap()];
        run("trace-cat", &args, &example).unwrap();
        inputs.push(out);
    }
    inputs
}

/// The first time and the last completion time of a stream's rows.
fn span(stream: &str) -> (i64, i64) {
    let times = stream
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("container"))
        .flat_map(|l| [col(l, "time"), col(l, "end")])
        .filter_map(|t| t.parse::<i64>().ok());
    times.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)))
}

/// The rows of `stopped` are those of `read_whole`, leaves at T1 compared
/// as frames (see [`as_cut_frame`]) and their true ends, when given,
/// the true ones; `read_whole` has besides only types and locations
/// declared after T1 (where the stopped slice may not have read them),
/// and those locations' ends.
fn same_but_unread(stopped: &str, read_whole: &str, t1: i64, case: &str) {
    let mut whole: Vec<String> = read_whole.lines().map(|l| as_cut_frame(l, t1)).collect();
    for line in stopped.lines() {
        let normal = as_cut_frame(line, t1);
        let Some(i) = whole.iter().position(|l| *l == normal) else {
            panic!("{case}: not read to the end: {line}");
        };
        whole.swap_remove(i);
        if line.contains("orig_end=") {
            assert!(read_whole.lines().any(|l| l == line), "{case}: {line}");
        }
    }
    let declared_late: Vec<&str> = whole
        .iter()
        .filter(|l| l.starts_with("container\t") && col(l, "time").is_empty())
        .map(|l| col(l, "loc"))
        .collect();
    for line in &whole {
        let late = common::kind_of(line) == "type"
            || (matches!(common::kind_of(line), "container" | "destroy")
                && declared_late.contains(&col(line, "loc")));
        assert!(late, "{case}: only read to the end: {line}");
    }
}

/// The slice that stops equals the one read to the end but for the true
/// ends of the frames open at T1 not read yet (and the order of the
/// leaves at T1, which follows those ends); a true end it gives is the
/// true one; it is a valid stream, the same with one thread and two.
#[test]
fn a_slice_that_stops_is_the_slice_read_to_the_end() {
    let dir = scratch("slice-stop");
    let mut rng = Rng(34);
    let mut checked = 0;
    for input in native_inputs(&dir) {
        let whole = run("trace-cat", &["-q"], &input).unwrap();
        let (lo, hi) = span(&whole);
        if lo >= hi {
            continue;
        }
        for round in 0..4 {
            // Windows ending early, where most of the trace is unread.
            let width = (hi - lo) as u64;
            let from = lo + rng.below(width / 2 + 1) as i64;
            let to = from + 1 + rng.below(width / 4 + 1) as i64;
            let which = ["overlap", "inside"][round % 2];
            let window = ["--from", &from.to_string(), "--to", &to.to_string()].map(String::from);
            let args = |more: &[&str]| -> Vec<String> {
                let mut a = window.to_vec();
                a.extend(["-q", "--messages", which].map(String::from));
                a.extend(more.iter().map(|s| s.to_string()));
                a
            };
            let slice = |more: &[&str]| {
                let a = args(more);
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                run("trace-slice", &a, &input).unwrap_or_else(|e| panic!("{input:?} {a:?}: {e}"))
            };
            let stopped = slice(&[]);
            let read_whole = slice(&["--true-ends"]);
            let case = format!("{input:?} [{from}, {to}) {which}");
            same_but_unread(&stopped, &read_whole, to, &case);
            assert_eq!(slice(&["--threads", "1"]), stopped, "{case}: one thread");
            assert_eq!(slice(&["--threads", "2"]), stopped, "{case}: two threads");
            let file = dir.join("stopped.tsv");
            std::fs::write(&file, &stopped).unwrap();
            let again = run(
                "trace-slice",
                &args(&[]).iter().map(String::as_str).collect::<Vec<_>>(),
                &file,
            );
            assert_eq!(
                again.as_deref(),
                Ok(stopped.as_str()),
                "{case}: sliced again"
            );
            checked += 1;
        }
    }
    assert!(checked >= 12, "{checked} slices checked");
}

/// A Pajé trace of 6 000 states on two containers over 30 s, a link from
/// 0.5 s to `link_end` s when given (its line in time order), and a line
/// no event defines at its end.
fn paje_with_a_bad_last_line(link_end: Option<u32>) -> String {
    let mut text = String::from(
        "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
         %EventDef PajeDefineStateType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
         %EventDef PajeDefineLinkType 2\n% Alias string\n% Type string\n% StartContainerType string\n% EndContainerType string\n% Name string\n%EndEventDef\n\
         %EventDef PajeCreateContainer 3\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n\
         %EventDef PajeSetState 4\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n\
         %EventDef PajeStartLink 5\n% Time date\n% Type string\n% Container string\n% StartContainer string\n% Value string\n% Key string\n%EndEventDef\n\
         %EventDef PajeEndLink 6\n% Time date\n% Type string\n% Container string\n% EndContainer string\n% Value string\n% Key string\n%EndEventDef\n\
         0 P 0 Process\n1 S P State\n2 L 0 P P Link\n3 0 p0 P 0 p0\n3 0 p1 P 0 p1\n",
    );
    for i in 0..3000 {
        let t = f64::from(i) / 100.0;
        if link_end.is_some() && i == 50 {
            text.push_str("5 0.5 L 0 p0 m k1\n");
        }
        if link_end == Some(i / 100) && i % 100 == 0 {
            text.push_str(&format!("6 {t} L 0 p1 m k1\n"));
        }
        text.push_str(&format!(
            "4 {t} S p0 busy{}\n4 {t} S p1 idle{}\n",
            i % 3,
            i % 2
        ));
    }
    text.push_str("9 30 not an event\n");
    text
}

/// Reading stops after the window: the bad line at the end goes unread,
/// unless `--true-ends` reads on, or a link that began in the window ends
/// after it (the slice waits for the link's end).
#[test]
fn reading_stops_after_the_window_unless_something_in_it_waits() {
    let dir = scratch("slice-stop-paje");
    let window = ["-q", "--from", "1s", "--to", "2s"];
    let file = dir.join("bad-end.paje");
    let text = paje_with_a_bad_last_line(None);
    std::fs::write(&file, &text).unwrap();
    let sliced = run("trace-slice", &window, &file).unwrap();
    assert!(
        sliced.lines().any(|l| l.starts_with("leave\t2000000000\t")),
        "{sliced}"
    );
    let err = run(
        "trace-slice",
        &[&window[..], &["--true-ends"]].concat(),
        &file,
    )
    .unwrap_err();
    let bad_line = format!("bad-end.paje:{}:", text.lines().count());
    assert!(err.contains(&bad_line), "{err}");

    // A link from the window that ends at 5 s: read, kept, and the rest
    // left unread.
    std::fs::write(&file, paje_with_a_bad_last_line(Some(5))).unwrap();
    let sliced = run("trace-slice", &window, &file).unwrap();
    let link = sliced
        .lines()
        .find(|l| l.starts_with("msg\t"))
        .expect("the link");
    assert_eq!(
        (col(link, "time"), col(link, "end")),
        ("500000000", "5000000000")
    );
    // A link that waits for its end past the bad line: read up to it.
    let mut text = paje_with_a_bad_last_line(Some(5));
    let at = text.find("6 5 L").unwrap();
    let end = at + text[at..].find('\n').unwrap() + 1;
    let moved = text[at..end].to_string();
    text.replace_range(at..end, "");
    text.push_str(&moved);
    std::fs::write(&file, text).unwrap();
    let err = run("trace-slice", &window, &file).unwrap_err();
    assert!(err.contains("bad-end.paje:"), "{err}");
}

/// An OTF2 archive and a Pallas trace written from a stream, whose last
/// events are damaged: a window at their start is cut without reading
/// them, the messages kept whole that cross its end in it (the writer
/// says how far before its event a row may begin); `--true-ends`
/// reads them and fails.
#[test]
fn otf2_and_pallas_slices_leave_the_rest_unread() {
    let dir = scratch("slice-stop-binary");
    let mut rows = vec!["kind\ttime\tend\tloc\tcat\tname\tdepth\tpeer".to_string()];
    rows.extend(["p0", "p1"].map(|p| format!("container\t\t\t{p}\tprocess\t{p}\t\t")));
    for i in 0..30_000i64 {
        let (enter, leave) = (20 * i, 20 * i + 10);
        rows.extend(["p0", "p1"].map(|p| format!("enter\t{enter}\t\t{p}\tUSER\tf\t0\t")));
        if i == 5000 {
            // One in flight from 981 ns, read back from its end.
            rows.push("msg\t981\t100005\tp1\t\t\t\tp0".into());
        }
        // A message with no tag: no record holds it, it is kept whole at
        // its end, and read back from there.
        rows.push(format!("msg\t{}\t{}\tp0\t\t\t\tp1", enter + 1, enter + 9));
        rows.extend(["p0", "p1"].map(|p| format!("leave\t{leave}\t\t{p}\tUSER\tf\t0\t")));
    }
    let tsv = dir.join("calls.tsv");
    std::fs::write(&tsv, rows.join("\n") + "\n").unwrap();
    let damage = |file: &Path, tail: usize| {
        let mut bytes = std::fs::read(file).unwrap();
        let n = bytes.len();
        bytes[n - tail..].fill(0xff);
        std::fs::write(file, bytes).unwrap();
    };
    let write_as = |format: &str, out: &Path| {
        let args = ["-q", "-t", format, "-o", out.to_str().unwrap()];
        run("trace-cat", &args, &tsv).unwrap();
    };
    let otf2 = dir.join("calls.otf2");
    write_as("otf2", &otf2);
    let evt = dir.join("calls/0.evt");
    let bytes = std::fs::read(&evt).unwrap();
    std::fs::write(&evt, &bytes[..bytes.len() - 5]).unwrap();
    let pallas = dir.join("pallas");
    std::fs::create_dir_all(&pallas).unwrap();
    write_as("pallas", &pallas.join("calls.pallas"));
    damage(&pallas.join("archive_0/thread_0/event_durations.dat"), 40);
    for trace in [otf2, pallas] {
        let window = ["-q", "--from", "100", "--to", "985"];
        let sliced = run("trace-slice", &window, &trace).unwrap();
        // The messages in flight at the end are kept whole, flagged O;
        // the locations end after them.
        for (end, from) in [("989", "p0"), ("100005", "p1")] {
            let start = format!("msg\t981\t{end}\t{from}\t");
            let msg = sliced.lines().find(|l| l.starts_with(&start));
            assert!(
                msg.is_some_and(|l| col(l, "flags") == "O"),
                "{trace:?}: {sliced}"
            );
        }
        let destroys = sliced
            .lines()
            .filter(|l| l.starts_with("destroy\t100005\t"));
        assert_eq!(destroys.count(), 2, "{trace:?}: {sliced}");
        let err = run(
            "trace-slice",
            &[&window[..], &["--true-ends"]].concat(),
            &trace,
        );
        assert!(
            err.is_err(),
            "{trace:?}: the damage is read with --true-ends"
        );
    }
    // A stream cannot tell: it is read to its end.
    let mut text = std::fs::read_to_string(&tsv).unwrap();
    text.push_str("nonsense\n");
    std::fs::write(&tsv, text).unwrap();
    let err = run(
        "trace-slice",
        &["-q", "--from", "100", "--to", "1000"],
        &tsv,
    )
    .unwrap_err();
    assert!(err.contains("calls.tsv:"), "{err}");
}
