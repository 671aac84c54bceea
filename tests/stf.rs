//! Intel STF in tracepipe's encoding (docs/stf.md): every record layout of
//! the specification through the writer and back, the corpus through STF,
//! a record type the reader has never seen, the single file, the text of
//! `stftool --dump`, and what bad files are told.

mod common;

use std::path::{Path, PathBuf};

use common::{accepted_traces, bin, cat, col, corpus, data, matched, output_of, scratch, HEADER};
use predicates::prelude::*;
use tracepipe::formats::stf::generic::generic_keys;
use tracepipe::formats::stf::layout::{class_of, is_string_field, Layout, Scalar, SPEC_LAYOUTS};
use tracepipe::formats::stf::reader::record_specifiers;
use tracepipe::formats::stf::{DECLARATIONS, INDEX_ONLY};

/// Three processes every fixture declares.
const CONTAINERS: &str = "container\t\t\tp0\tprocess\tP0\t\t\t\t\t\t\t\t\t\n\
                          container\t\t\tp1\tprocess\tP1\t\t\t\t\t\t\t\t\t\n\
                          container\t\t\tp2\tprocess\tP2\t\t\t\t\t\t\t\t\t\n";

/// A stream of `rows` (TSV lines without their newline) after the containers.
fn stream(rows: &[String]) -> String {
    let mut s = format!("{HEADER}\n{CONTAINERS}");
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s
}

/// Rows of a stream without the `source` meta (it names the file read)
/// and without `source_format`/`time_unit` the STF reader adds when the
/// stream had none, sorted: rows of equal time from different components
/// may come back in another order (docs/stf.md).
fn rows(text: &str) -> Vec<String> {
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| {
            let meta = |name: &str, value: Option<&str>| {
                l.starts_with("meta\t")
                    && col(l, "name") == name
                    && value.is_none_or(|v| col(l, "value") == v)
            };
            !(meta("source", None)
                || meta("source_format", Some("stf"))
                || meta("time_unit", Some("ns")))
        })
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

/// Writes `input` as an STF file set `dir/NAME.stf`; the index path.
fn write_stf(input: &Path, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(format!("{name}.stf"));
    cat(&["-q", "-t", "stf", "-o", out.to_str().unwrap()], input)
        .unwrap_or_else(|e| panic!("{input:?} -> STF: {e}"));
    out
}

/// Every component of the file set at `index` (its name and bytes).
fn components(index: &Path) -> Vec<(String, Vec<u8>)> {
    let dir = index.parent().unwrap();
    let stem = index.file_name().unwrap().to_str().unwrap();
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let suffix = name.strip_prefix(stem)?.to_string();
            Some((suffix, std::fs::read(&p).unwrap()))
        })
        .collect();
    found.sort();
    found
}

/// stream → STF → stream gives the same rows (messages matched), and STF →
/// stream → STF the same bytes; returns the STF and the stream read back.
fn round_trip(text: &str, dir: &Path) -> (PathBuf, String) {
    std::fs::create_dir_all(dir).unwrap();
    let input = dir.join("in.tsv");
    std::fs::write(&input, text).unwrap();
    let read = cat(&["-q"], &input).unwrap_or_else(|e| panic!("fixture refused: {e}"));
    // STF stores messages matched: the stream comes back as the matcher
    // leaves it.
    let original = matched(&read);
    let first = write_stf(&input, dir, "first");
    let back = cat(&["-q"], &first).unwrap_or_else(|e| panic!("reading back: {e}"));
    assert_eq!(
        rows(&back),
        rows(&original),
        "stream -> STF -> stream in {dir:?}"
    );
    let again = dir.join("again.tsv");
    std::fs::write(&again, &back).unwrap();
    let second = write_stf(&again, dir, "second");
    same_bytes(&first, &second);
    (first, back)
}

/// Two file sets hold the same components, byte for byte.
fn same_bytes(a: &Path, b: &Path) {
    let (a, b) = (components(a), components(b));
    let names = |c: &[(String, Vec<u8>)]| c.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&a),
        names(&b),
        "STF -> stream -> STF: other components"
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        let at = x.iter().zip(y).position(|(p, q)| p != q);
        assert!(
            x == y,
            "STF -> stream -> STF: `{name}` differs (lengths {} and {}, first at {at:?})",
            x.len(),
            y.len()
        );
    }
}

/// The specifiers of the records in the data components (not the `.dcl`).
fn data_records(index: &Path) -> Vec<String> {
    record_specifiers("t.stf", index)
        .unwrap()
        .into_iter()
        .filter(|(suffix, _)| suffix != "dcl")
        .flat_map(|(_, specs)| specs)
        .collect()
}

/// The specifier the writer gives catalogue layout `spec`.
fn written_specifier(spec: &str) -> String {
    let mut layout = Layout::parse(spec).unwrap();
    layout.class = class_of(&layout.class).to_string();
    layout.specifier()
}

/// A generic `stf` event for a layout: a value of the right type per field.
fn generic_row(layout: &Layout) -> String {
    let has_loc = layout
        .fields
        .iter()
        .any(|f| f.name == "willy" && f.sized_by.is_none());
    let mut attrs = String::new();
    for key in generic_keys(layout, has_loc) {
        let f = &layout.fields[layout.field(key).unwrap()];
        let one = |ty: Scalar| match ty {
            _ if is_string_field(class_of(&layout.class), &f.name) => "some text",
            Scalar::U1 => "7",
            Scalar::U2 => "513",
            Scalar::U4 => "70000",
            Scalar::U8 => "5000000000",
            Scalar::I4 => "-3",
            Scalar::I8 => "-9000000000",
            Scalar::F8 => "2.5",
            Scalar::O8 => "18446744073709551615",
            Scalar::Willy => "p2",
            Scalar::C1 => "a;b=c%",
        };
        let value = match (f.sized_by.is_some(), f.ty) {
            (true, Scalar::C1) => "text; with = and %".to_string(),
            (true, Scalar::U1) => "00ff10".to_string(),
            (true, Scalar::Willy) => "p1,p2".to_string(),
            (true, ty) if is_string_field(class_of(&layout.class), &f.name) => {
                let _ = ty;
                "alpha,be%2Cta".to_string()
            }
            (true, ty) => format!("{},{}", one(ty), one(ty)),
            (false, ty) => one(ty).to_string(),
        };
        if !attrs.is_empty() {
            attrs.push(';');
        }
        let esc = |s: &str| {
            s.replace('%', "%25")
                .replace(';', "%3B")
                .replace('=', "%3D")
        };
        attrs.push_str(&format!("{}={}", esc(key), esc(&value)));
    }
    let loc = if has_loc { "p0" } else { "" };
    let class = class_of(&layout.class);
    format!("event\t100\t\t{loc}\tstf\t{class}\t\t\t\t\t\t\t\t\t{attrs}")
}

/// Rows the reader makes of the layouts it maps to kinds of their own.
fn mapped_rows(name: &str) -> Option<Vec<String>> {
    let enter = |attrs: &str| format!("enter\t10\t\tp0\tMPI\tMPI_Send\t0\t\t\t\t\t\t\t\t{attrs}");
    let leave = |attrs: &str| format!("leave\t20\t\tp0\tMPI\tMPI_Send\t0\t\t\t\t\t\t\t\t{attrs}");
    let msg = |attrs: &str| format!("msg\t30\t70\tp0\t\t\t\tp1\tworld\t5\t1024\t\t\t\t{attrs}");
    let coll = |slot: usize, time: u64, extra: &str, size: &str, value: &str| {
        format!(
            "coll\t{time}\t{}\tp{slot}\t\tBCAST\t\tp0\tworld\t\t{size}\t0\t{value}\t\tslot={slot};of=2{extra}",
            time + 25
        )
    };
    let pair = |extra: [&str; 2], size: &str, value: &str| {
        vec![
            coll(0, 40, extra[0], size, value),
            coll(1, 45, extra[1], size, value),
        ]
    };
    let plain = |extra: [&str; 2], size: &str, value: &str| {
        let mut rows = pair(extra, size, value);
        for r in &mut rows {
            *r = r.replace("\tp0\tworld", "\t\tworld");
        }
        rows
    };
    let scope = |attrs: &str| {
        vec![
            format!("state\t10\t30\tp0\tUSER\tloop\t\t\t\t\t\t\t\t\tseqnr=1;scl1=2;scl2=3{attrs}"),
            // Scopes may overlap.
            format!("state\t20\t40\tp0\tUSER\tloop\t\t\t\t\t\t\t\t\tseqnr=2;scl1=2;scl2=3{attrs}"),
        ]
    };
    Some(match name {
        "enter_scope" | "leave_scope" => scope(""),
        "enter_scope_1" => scope(";enter_scl=4"),
        "leave_scope_1" => scope(";leave_scl=5"),
        "enter_function" => vec![enter(""), leave("")],
        "enter_function_1" | "leave_function_1" => vec![enter("scl=3"), leave("scl=4")],
        "leave_function" => vec![enter("scl=3"), leave("")],
        "one_to_one_communication" => vec![
            msg("sender_function=MPI_Send;receiver_function=MPI_Recv"),
            "msg\t95\t91\tp1\t\t\t\tp0\t\t0\t0\t\t\tR\t".to_string(),
            // Halves that never match: the matcher moves the send to where
            // it gives it up (a row of tracepipe's own), the last receive
            // stays where it is (a record whose sender time is unknown).
            "send\t96\t\tp0\t\t\t\tp2\tworld\t1\t8\t\t\t\t".to_string(),
            "recv\t99\t\tp2\t\t\t\tp1\t\t2\t16\t\t\t\treceiver_function=MPI_Recv".to_string(),
        ],
        "one_to_one_communication_1" => vec![msg("sender_scl=1;receiver_scl=2;sender_function=f")],
        "one_to_one_communication_4" => {
            vec![msg(
                "sender_scl=1;receiver_scl=2;sender_checksum=3;receiver_checksum=4",
            )]
        }
        "counter_value" => vec![
            "counter\t50\t\tp0\tHW\tcycles\t\t\t\t\t\t\t-12\t\tunit=c".to_string(),
            "counter\t60\t\tp1\t\tload\t\t\t\t\t\t\t0.25\t\t".to_string(),
        ],
        "collop_raw_event" => {
            vec!["coll\t50\t60\tp1\t\tREDUCE\t\tp0\tw2\t\t4\t3\t4\t\tkind=2;scl=0".to_string()]
        }
        "all_communication" => plain(["", ""], "", ""),
        "all_communication_1" => plain([";scl=1", ";scl=2"], "", ""),
        "all_to_all_communication" => plain(["", ""], "8", "16"),
        "all_to_all_communication_1" => plain([";scl=1", ";scl=2"], "8", "16"),
        "all_to_one_communication" => pair([";recvd=64", ";recvd=64"], "8", ""),
        "all_to_one_communication_1" => pair([";recvd=64;scl=1", ";recvd=64;scl=2"], "8", ""),
        "one_to_all_communication" => {
            let mut rows = pair([";sent=64", ";sent=64;start=unknown"], "", "16");
            // A participant whose start is unknown is at the record's time.
            rows[1] = rows[1].replacen("coll\t45\t70", "coll\t40\t70", 1);
            rows
        }
        "one_to_all_communication_1" => pair([";sent=64;scl=1", ";sent=64;scl=2"], "", "16"),
        _ => return None,
    })
}

#[test]
fn every_record_layout_of_the_specification_round_trips() {
    let dir = scratch("stf-layouts");
    for spec in SPEC_LAYOUTS {
        let layout = Layout::parse(spec).unwrap();
        // Time steps, and what the index and the declarations hold, make no
        // rows of their own; the other tests cover them.
        let class = class_of(&layout.class);
        if [DECLARATIONS, INDEX_ONLY, &["add_time", "sub_time"]]
            .iter()
            .any(|l| l.contains(&class))
        {
            continue;
        }
        let rows = mapped_rows(&layout.class).unwrap_or_else(|| vec![generic_row(&layout)]);
        let sub = dir.join(&layout.class);
        let (stf, back) = round_trip(&stream(&rows), &sub);
        let want = written_specifier(spec);
        let written = data_records(&stf);
        assert!(
            written.contains(&want),
            "{}: no `{want}` record among {written:?}",
            layout.class
        );
        // The three containers, and halves the matcher moved (their true
        // time in `orig_time`), are tracepipe's own rows; nothing else.
        let moved = back.lines().filter(|l| l.contains("orig_time=")).count();
        let own = written
            .iter()
            .filter(|s| s.starts_with("tracepipe_row("))
            .count();
        assert_eq!(
            own,
            3 + moved,
            "{}: a row fell back to tracepipe_row: {written:?}",
            layout.class
        );
    }
}

#[test]
fn time_gaps_and_steps_back_use_add_time_and_sub_time() {
    let dir = scratch("stf-time");
    let rows = vec![
        "event\t5\t\tp0\t\tA\t\t\t\t\t\t\t\t\t".to_string(),
        // A message completes late but is stored at its send time.
        "msg\t20\t9000000000000\tp0\t\t\t\tp1\t\t1\t1\t\t\t\t".to_string(),
        "counter\t9000000000001\t\tp0\t\tc\t\t\t\t\t\t\t1\t\t".to_string(),
        // Sent before the first but received after: the time steps back.
        "msg\t10\t9000000000002\tp1\t\t\t\tp0\t\t1\t1\t\t\t\t".to_string(),
    ];
    let (stf, _) = round_trip(&stream(&rows), &dir);
    let written = data_records(&stf);
    for time_record in ["add_time(U8 time)", "sub_time(U8 time)"] {
        assert!(
            written.iter().any(|s| s == time_record),
            "no {time_record} in {written:?}"
        );
    }
}

#[test]
fn rows_without_a_record_of_their_own_travel_as_tracepipe_rows() {
    let dir = scratch("stf-rows");
    let rows = vec![
        "state\t0\t10\tp0\tstate\tRunning\t0\t\t\t\t\t\tv\t\tcolor=red".to_string(),
        "event\t12\t\tp1\tUSER\tmark\t\t\t\t\t\tid7\t3.50\tS\tk=v".to_string(),
        "enter\t15\t\tp0\tMPI\tx\t0\t\t\t\t\t\t\t\tthread=T1".to_string(),
        "leave\t16\t\tp0\tMPI\tx\t0\t\t\t\t\t\t\t\t".to_string(),
        "claim\t5\t20\tp2\t\tcpu\t\t\t\t\t\tc1\t0.5\t\t".to_string(),
        "destroy\t30\t\tp2\t\t\t\t\t\t\t\t\t\t\t".to_string(),
    ];
    let (stf, _) = round_trip(&stream(&rows), &dir);
    let written = data_records(&stf);
    let fallbacks = written
        .iter()
        .filter(|s| s.starts_with("tracepipe_row("))
        .count();
    // Containers, and each row above but none: all are rows of their own.
    assert_eq!(fallbacks, 3 + rows.len(), "{written:?}");
}

#[test]
fn corpus_traces_round_trip_through_stf() {
    let mut tried = 0;
    for format in ["paje", "trace", "pallas"] {
        let Some(dir) = corpus(format) else { continue };
        for (n, input) in accepted_traces(&dir).into_iter().enumerate() {
            let original = cat(&["-q"], &input).unwrap();
            if original
                .lines()
                .any(|l| l.split('\t').nth(1).is_some_and(|t| t.starts_with('-')))
            {
                // STF times are unsigned: refused, with the row's line.
                let work = scratch(&format!("stf-corpus-{format}-{n}"));
                let out = work.join("neg.stf");
                let err =
                    cat(&["-q", "-t", "stf", "-o", out.to_str().unwrap()], &input).unwrap_err();
                assert!(err.contains("is negative; STF times are unsigned"), "{err}");
                continue;
            }
            let work = scratch(&format!("stf-corpus-{format}-{n}"));
            round_trip(&original, &work);
            tried += 1;
        }
    }
    if corpus("paje").is_some() {
        assert!(tried > 20, "only {tried} corpus traces tried");
    }
}

#[test]
fn a_record_type_the_reader_has_never_seen_reads_through_the_generic_path() {
    let dir = scratch("stf-unknown");
    let rows = vec!["event\t100\t\tp0\t\tA\t\t\t\t\t\t\t\t\t".to_string()];
    let (stf, _) = round_trip(&stream(&rows), &dir.join("base"));
    // Define record 0xE0 at the end of the index and put one in the first
    // process file: 40 ticks later, on willy 1 (p1), 21.5 and a label.
    let spec = "sensor_reading(U4 time, willy_id willy, F8 celsius, U2 size_1_1, <C1 label>)";
    let mut index = std::fs::read(&stf).unwrap();
    index.extend_from_slice(&[0xFF, 0xE0]);
    index.extend_from_slice(&(spec.len() as u16).to_le_bytes());
    index.extend_from_slice(spec.as_bytes());
    std::fs::write(&stf, index).unwrap();
    let process = PathBuf::from(format!("{}.f.0", stf.display()));
    let mut bytes = std::fs::read(&process).unwrap();
    bytes.push(0xE0);
    bytes.extend_from_slice(&40u32.to_le_bytes());
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&21.5f64.to_le_bytes());
    bytes.extend_from_slice(&5u16.to_le_bytes());
    bytes.extend_from_slice(b"probe");
    std::fs::write(&process, bytes).unwrap();
    let back = cat(&["-q"], &stf).unwrap();
    let row = back
        .lines()
        .find(|l| l.contains("sensor_reading"))
        .expect("the new record");
    assert_eq!(
        row,
        "event\t140\t\tp1\tstf\tsensor_reading\t\t\t\t\t\t\t\t\tcelsius=21.5;label=probe"
    );
    // Written again, it is kept whole (as a row of tracepipe's own).
    let again = dir.join("again");
    round_trip(&back, &again);
}

#[test]
fn the_single_file_reads_as_the_file_set() {
    let dir = scratch("stf-single");
    let rows = mapped_rows("one_to_one_communication").unwrap();
    let input = dir.join("in.tsv");
    std::fs::write(&input, stream(&rows)).unwrap();
    let single = dir.join("t.single.stf");
    cat(
        &["-q", "-t", "stf-single", "-o", single.to_str().unwrap()],
        &input,
    )
    .unwrap();
    let set = write_stf(&input, &dir, "set");
    // `-o NAME.single.stf` (the extension says `stf`) writes the single form.
    let by_name = dir.join("n.single.stf");
    cat(&["-q", "-o", by_name.to_str().unwrap()], &input).unwrap();
    assert_eq!(
        std::fs::read(&by_name).unwrap(),
        std::fs::read(&single).unwrap()
    );
    let from_single = cat(&["-q"], &single).unwrap();
    let from_set = cat(&["-q"], &set).unwrap();
    assert_eq!(rows_of(&from_single), rows_of(&from_set));
    assert!(from_single.contains("msg\t30\t70\tp0"), "{from_single}");
    // Nothing but the container is left behind.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_str().unwrap().starts_with("t.single.stf.")),
        "{names:?}"
    );
}

fn rows_of(text: &str) -> Vec<String> {
    rows(text)
        .into_iter()
        .filter(|l| !l.starts_with("meta"))
        .collect()
}

#[test]
fn the_text_stftool_dumps_reads_as_expected() {
    let out = bin("trace-cat")
        .arg(data("stf/dump.txt"))
        .assert()
        .success();
    let stdout: String = String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("meta\t\t\t\t\tsource\t"))
        .map(|l| format!("{l}\n"))
        .collect();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let expected = std::fs::read_to_string(data("stf/dump.expected.tsv")).unwrap();
    assert_eq!(stdout, expected);
    assert!(
        stderr.contains("dump.txt:10: 1 line(s) of a shape tracepipe does not know were kept"),
        "{stderr}"
    );
}

/// `trace-cat FILE` fails with status 1 and a message holding `want`.
fn refused(file: &Path, want: &str) {
    let out = bin("trace-cat").arg("-q").arg(file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{file:?}: {err}");
    assert!(err.contains(want), "{file:?}: wanted {want:?} in {err}");
}

/// A fresh file set with one enter/leave pair; its index path.
fn small_set(dir: &Path) -> PathBuf {
    let rows = mapped_rows("enter_function").unwrap();
    round_trip(&stream(&rows), dir).0
}

fn append(path: &Path, bytes: &[u8]) {
    let mut data = std::fs::read(path).unwrap();
    data.extend_from_slice(bytes);
    std::fs::write(path, data).unwrap();
}

#[test]
fn a_leave_with_no_function_open_is_an_event_with_one_warning() {
    let dir = scratch("stf-unopened-leave");
    let stf = small_set(&dir);
    let f0 = PathBuf::from(format!("{}.f.0", stf.display()));
    // The set ends with leave_function (id, U4 time step of 10, willy):
    // once more, at 30.
    let data = std::fs::read(&f0).unwrap();
    let leave = data[data.len() - 9..].to_vec();
    append(&f0, &leave);
    let out = bin("trace-cat").arg(&stf).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("event\t30\t\tp0\t\tleave_function\t")
            && last.ends_with("record=leave_function"),
        "{text}"
    );
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("first.stf.f.0: byte ")
            && err.contains("1 leave(s) named no open frame")
            && err.contains("the first at 30 ns on `p0`"),
        "{err}"
    );
    let out = bin("trace-cat")
        .args(["--strict"])
        .arg(&stf)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "first.stf.f.0: byte {}: leave_function on `p0`, which has no function open (--strict)",
            data.len()
        )),
        "{err}"
    );
}

#[test]
fn bad_files_are_refused_with_file_and_offset() {
    let dir = scratch("stf-bad");
    let ids: Vec<String> = SPEC_LAYOUTS
        .iter()
        .map(|s| s[..s.find('(').unwrap()].to_string())
        .collect();
    let id = |name: &str| ids.iter().position(|n| n == name).unwrap() as u8;
    let f0 = |stf: &Path| PathBuf::from(format!("{}.f.0", stf.display()));

    let stf = small_set(&dir.join("truncated"));
    let len = std::fs::metadata(f0(&stf)).unwrap().len();
    append(&f0(&stf), &[id("enter_function"), 1, 0]);
    refused(
        &stf,
        &format!(
            "first.stf.f.0: byte {}: truncated: time needs 4 bytes, 2 left",
            len + 1
        ),
    );

    let stf = small_set(&dir.join("undefined"));
    append(&f0(&stf), &[0xE5]);
    refused(
        &stf,
        &format!("first.stf.f.0: byte {len}: record id 229 is not defined"),
    );

    let stf = small_set(&dir.join("reserved"));
    append(&f0(&stf), &[0xF0]);
    refused(&stf, "record id 0xf0 is reserved");

    let stf = small_set(&dir.join("array"));
    let mut comment = vec![id("comment"), 0, 0, 0, 0, 0, 0, 0, 0];
    comment.extend_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    append(&f0(&stf), &comment);
    refused(
        &stf,
        &format!(
            "byte {}: `size_1_1` of `comment` counts 4294967280 items",
            len + 9
        ),
    );

    let stf = small_set(&dir.join("overflow"));
    let mut gap = vec![id("add_time_1")];
    gap.extend_from_slice(&u64::MAX.to_le_bytes());
    append(&f0(&stf), &gap);
    refused(&stf, "past the range of 64 bits");

    let stf = small_set(&dir.join("reference"));
    let mut enter = vec![id("enter_function"), 0, 0, 0, 0, 0, 0, 0, 0];
    enter.extend_from_slice(&999u32.to_le_bytes());
    append(&f0(&stf), &enter);
    refused(
        &stf,
        &format!("byte {len}: refers to function 999, which is not declared"),
    );

    let stf = small_set(&dir.join("missing"));
    std::fs::remove_file(f0(&stf)).unwrap();
    refused(&stf, "first.stf.f.0` that the index lists is missing");

    let stf = small_set(&dir.join("anchor"));
    let anc = PathBuf::from(format!("{}.f.0.anc", stf.display()));
    let mut bytes = std::fs::read(&anc).unwrap();
    bytes[18..26].copy_from_slice(&10u64.to_le_bytes());
    std::fs::write(&anc, bytes).unwrap();
    refused(
        &stf,
        "first.stf.f.0: byte 10: an anchor points here, which is not the start of a record",
    );

    let foreign = dir.join("real.stf");
    std::fs::write(&foreign, b"\x01\x00\x00\x00ITAC binary bytes of some kind").unwrap();
    let out = bin("trace-cat")
        .args(["-f", "stf"])
        .arg(&foreign)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("real.stf: byte 0: not an STF file in tracepipe's documented encoding"),
        "{err}"
    );
    assert!(err.contains("stftool FILE --dump"), "{err}");
}

#[test]
fn the_writer_refuses_what_stf_cannot_hold_with_the_row() {
    let dir = scratch("stf-refuse");
    let input = dir.join("neg.tsv");
    std::fs::write(
        &input,
        stream(&["event\t-5\t\tp0\t\tA\t\t\t\t\t\t\t\t\t".to_string()]),
    )
    .unwrap();
    let out = dir.join("neg.stf");
    let err = cat(&["-q", "-t", "stf", "-o", out.to_str().unwrap()], &input).unwrap_err();
    assert!(err.contains("neg.tsv:5: time -5 is negative"), "{err}");
    let err = cat(&["-q", "-t", "stf"], &input).unwrap_err();
    assert!(err.contains("name the index file with -o"), "{err}");
}

#[test]
fn anchors_inside_a_long_file_are_checked_against_the_records() {
    let dir = scratch("stf-anchors");
    let rows: Vec<String> = (0..140_000)
        .map(|k| format!("event\t{}\t\tp0\t\te{}\t\t\t\t\t\t\t\t\t", k * 3, k % 7))
        .collect();
    let (stf, _) = round_trip(&stream(&rows), &dir);
    let anc = PathBuf::from(format!("{}.f.0.anc", stf.display()));
    let mut bytes = std::fs::read(&anc).unwrap();
    // Three anchors (records 0, 65536, 131072); the second's time, wrong.
    assert_eq!(bytes.len(), 9 + 3 * 17);
    let time = u64::from_le_bytes(bytes[27..35].try_into().unwrap());
    bytes[27..35].copy_from_slice(&(time + 1).to_le_bytes());
    std::fs::write(&anc, bytes).unwrap();
    refused(
        &stf,
        &format!(
            "the anchor here says time {}, the records say {time}",
            time + 1
        ),
    );
}

#[test]
fn the_writer_matches_messages_and_reports_halves_that_never_match() {
    let dir = scratch("stf-match");
    let rows = [
        "send\t10\t\tp0\t\t\t\tp1\tworld\t7\t64\t\t\t\t",
        "recv\t15\t\tp1\t\t\t\tp0\tworld\t7\t64\t\t\t\t",
        // Keyed halves (a Pajé link): no STF message holds them; as they are.
        "send\t20\t\tp0\tL\t\t\t\tp2\t\t\tk1\t\t\t",
        "recv\t25\t\tp1\tL\t\t\t\tp2\t\t\tk1\t\t\t",
        // A send nobody receives.
        "send\t30\t\tp0\t\t\t\tp1\tworld\t8\t1\t\t\t\t",
    ]
    .map(str::to_string);
    let input = dir.join("in.tsv");
    std::fs::write(&input, stream(&rows)).unwrap();
    let stf = dir.join("m.stf");
    let out = bin("trace-cat")
        .args(["-t", "stf", "-o", stf.to_str().unwrap()])
        .arg(&input)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("1 message half/halves never matched (1 send, 0 recv)"),
        "{stderr}"
    );
    let back = cat(&["-q"], &stf).unwrap();
    let body: Vec<&str> = back
        .lines()
        .filter(|l| !l.starts_with("meta") && !l.starts_with("container"))
        .collect();
    assert_eq!(
        body[1..],
        [
            "msg\t10\t15\tp0\t\t\t\tp1\tworld\t7\t64\t\t\t\t",
            "send\t20\t\tp0\tL\t\t\t\tp2\t\t\tk1\t\t\t",
            "recv\t25\t\tp1\tL\t\t\t\tp2\t\t\tk1\t\t\t",
            "send\t30\t\tp0\t\t\t\tp1\tworld\t8\t1\t\t\tU\t",
        ]
    );
}

#[test]
fn halves_that_never_match_keep_their_order_through_a_second_round_trip() {
    // Written once, halves that never matched all take the latest time (their
    // own kept in orig_time); written again, they must come back in the
    // same order, not in the order their channels sit in a hash map.
    let dir = scratch("stf-unmatched-order");
    let mut rows: Vec<String> = (0..40)
        .map(|i| {
            let (from, to, tag) = (i % 3, (i + 1) % 3, (i * 17) % 40);
            format!(
                "send\t{}\t\tp{from}\t\t\t\tp{to}\tworld\t{tag}\t8\t\t\t\t",
                10 + i
            )
        })
        .collect();
    rows.push("event\t1000\t\tp0\t\tlast\t\t\t\t\t\t\t\t\t".to_string());
    let (_, back) = round_trip(&stream(&rows), &dir);
    let halves: Vec<&str> = back.lines().filter(|l| l.starts_with("send\t")).collect();
    assert_eq!(halves.len(), 40, "{back}");
    assert!(halves[0].ends_with("\tU\torig_time=10"), "{}", halves[0]);
}

#[test]
fn bad_dump_lines_are_refused_with_their_line() {
    let dir = scratch("stf-dump-bad");
    let cases = [
        (
            "NCPUS 1\n10 SAMP CPU 1 DEF 1 UINT 8 5\nNCPUS 2\n",
            "late.txt:3: a header line after the events began",
        ),
        (
            "NCPUS 1\n10 ONETOONE CPU 1 TO 2 DELTA x COM 0 LEN 1 TAG 1\n",
            "delta.txt:2: DELTA \"x\" is not a number",
        ),
        (
            "CLKPERIOD 0\n",
            "clock.txt:1: CLKPERIOD 0 is not a positive number",
        ),
    ];
    for ((text, want), name) in cases.iter().zip(["late.txt", "delta.txt", "clock.txt"]) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = bin("trace-cat")
            .args(["-q", "-f", "stf-dump"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(want), "{name}: wanted {want:?} in {err}");
    }
}

#[test]
fn a_known_class_in_a_foreign_layout_reads_through_the_generic_path() {
    let dir = scratch("stf-foreign-layout");
    let rows = vec!["event\t100\t\tp0\t\tA\t\t\t\t\t\t\t\t\t".to_string()];
    let (stf, _) = round_trip(&stream(&rows), &dir.join("base"));
    // `enter_function` without its willy and function: not the catalogue's
    // layout, so no frame is made of it (and nothing is read that is not there).
    let spec = "enter_function(U4 time)";
    let mut index = std::fs::read(&stf).unwrap();
    index.extend_from_slice(&[0xFF, 0xE1]);
    index.extend_from_slice(&(spec.len() as u16).to_le_bytes());
    index.extend_from_slice(spec.as_bytes());
    std::fs::write(&stf, index).unwrap();
    let process = PathBuf::from(format!("{}.f.0", stf.display()));
    let mut bytes = std::fs::read(&process).unwrap();
    bytes.push(0xE1);
    bytes.extend_from_slice(&7u32.to_le_bytes());
    std::fs::write(&process, bytes).unwrap();
    let back = cat(&["-q"], &stf).unwrap();
    let row = back.lines().last().unwrap();
    assert_eq!(row, "event\t107\t\t\tstf\tenter_function\t\t\t\t\t\t\t\t\t");
}

/// A single-file STF reads from a pipe as from its file; a file set cannot
/// be piped and says how to do it.
#[test]
fn a_single_file_reads_from_a_pipe() {
    let dir = scratch("stf-pipe");
    let single = dir.join("p.single.stf");
    bin("trace-cat")
        .args(["-t", "stf-single", "-o"])
        .arg(&single)
        .arg("examples/pingpong.tsv")
        .assert()
        .success();
    let from_file = output_of("trace-cat", &[], &[&single]);
    let piped = bin("trace-cat")
        .pipe_stdin(&single)
        .unwrap()
        .output()
        .unwrap();
    assert!(
        piped.status.success(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    let piped: String = String::from_utf8(piped.stdout)
        .unwrap()
        .lines()
        .filter(|l| !(l.starts_with("meta\t") && col(l, "name") == "source"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(piped, from_file);
    // A damaged one is located on <stdin>, like a file.
    let mut bytes = std::fs::read(&single).unwrap();
    bytes.truncate(bytes.len() - 5);
    bin("trace-cat")
        .write_stdin(bytes)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("<stdin>"));
    let set = dir.join("p.stf");
    bin("trace-cat")
        .args(["-t", "stf", "-o"])
        .arg(&set)
        .arg("examples/pingpong.tsv")
        .assert()
        .success();
    bin("trace-cat")
        .pipe_stdin(&set)
        .unwrap()
        .assert()
        .code(1)
        .stderr(predicate::str::contains("pipe the single-file form"));
}

/// A row out of completion order is refused at its own record, also when
/// it waited before a slice's T0 while later records were read (the
/// writer, given rows directly, stores the step back with `sub_time`).
#[test]
fn a_row_that_waited_before_t0_is_refused_at_its_own_record() {
    use tracepipe::model::record::{Kind, Record};
    let dir = scratch("stf-waited");
    let stf = dir.join("w.stf");
    let opts = tracepipe::pipe::WriteOptions::default();
    let file = std::fs::File::create(&stf).unwrap();
    let out = tracepipe::io::Output::new(stf.to_str().unwrap(), Box::new(file));
    let mut writer = tracepipe::formats::stf::writer::open_writer(out, &opts).unwrap();
    let p0 = opts.symbols.intern("p0");
    let mut container = Record::new(Kind::Container);
    (container.loc, container.cat, container.name) = (p0, opts.symbols.intern("process"), p0);
    writer.write(&container).unwrap();
    let mut enter = Record::new(Kind::Enter);
    (enter.time, enter.loc, enter.depth) = (Some(100), p0, Some(0));
    enter.name = opts.symbols.intern("main");
    writer.write(&enter).unwrap();
    for time in [50, 110, 120, 130, 140] {
        let mut event = Record::new(Kind::Event);
        (event.time, event.loc, event.name) = (Some(time), p0, opts.symbols.intern("tick"));
        writer.write(&event).unwrap();
    }
    writer.finish().unwrap();
    let refusal = |cmd: &str, args: &[&str]| {
        let out = bin(cmd).args(args).arg(&stf).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        let at = err
            .find(": byte ")
            .unwrap_or_else(|| panic!("{cmd}: {err}"));
        err[at..].split(':').nth(1).unwrap().to_string()
    };
    let read = refusal("trace-cat", &["-q"]);
    let sliced = refusal("trace-slice", &["-q", "--from", "1000", "--to", "2000"]);
    assert_eq!(sliced, read);
}
