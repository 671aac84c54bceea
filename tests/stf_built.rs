//! STF file sets built record by record from the specification's layouts,
//! as another tool would write them: no `tracepipe_row`, no container rows.
//! What such files must read as (a valid stream), and the hand-built
//! damage that once read with exit 0, took gigabytes or blocked.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{cat, col, scratch};
use tracepipe::formats::stf::layout::SPEC_LAYOUTS;
use tracepipe::formats::stf::{header, Component, NONE};

/// The record id the builder gives `class`: its place in the catalogue.
fn id(class: &str) -> u8 {
    SPEC_LAYOUTS
        .iter()
        .position(|s| s[..s.find('(').unwrap()] == *class)
        .unwrap_or_else(|| panic!("{class} is not a specification layout")) as u8
}

fn u4(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// A record: its id, then its fields' bytes.
fn rec(class: &str, fields: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![id(class)];
    fields.iter().for_each(|f| out.extend_from_slice(f));
    out
}

/// A `U4`-sized text field: the length, then the bytes.
fn text(s: &str) -> Vec<u8> {
    let mut out = u4(s.len() as u32);
    out.extend_from_slice(s.as_bytes());
    out
}

/// An index, a declaration file and one process file.
struct Files {
    index: Vec<u8>,
    dcl: Vec<u8>,
    f0: Vec<u8>,
}

impl Files {
    /// Every specification layout defined, the declaration file and `f.0`
    /// declared; `strings` declared as strings 0, 1, ... and string `i` as
    /// function `i`.
    fn new(strings: &[&str]) -> Files {
        let mut index = header(Component::Index).to_vec();
        for (i, spec) in SPEC_LAYOUTS.iter().enumerate() {
            index.extend_from_slice(&[0xFF, i as u8]);
            index.extend_from_slice(&(spec.len() as u16).to_le_bytes());
            index.extend_from_slice(spec.as_bytes());
        }
        let mut files = Files {
            index,
            dcl: header(Component::Declarations).to_vec(),
            f0: header(Component::Process).to_vec(),
        };
        files.declare_file(1, Component::Declarations, "dcl");
        files.declare_file(2, Component::Process, "f.0");
        for (i, s) in strings.iter().enumerate() {
            files
                .dcl
                .extend(rec("stf_string", &[u4(i as u32), text(s)]));
            let function = [u4(i as u32), u4(i as u32), u4(NONE)];
            files.dcl.extend(rec("function_definition", &function));
        }
        files
    }

    fn declare_file(&mut self, n: u32, kind: Component, suffix: &str) {
        let fields = [u4(n), vec![kind as u8], text(suffix)];
        self.index.extend(rec("file_declaration", &fields));
    }

    /// `function` entered on `willy` `dt` ticks after the last record, left
    /// `len` ticks later.
    fn call(&mut self, willy: u32, function: u32, dt: u32, len: u32) {
        let enter = rec("enter_function", &[u4(dt), u4(willy), u4(function)]);
        self.f0.extend(enter);
        self.f0.extend(rec("leave_function", &[u4(len), u4(willy)]));
    }

    /// Writes `dir/t.stf` and its components; the index path.
    fn write(&self, dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let stf = dir.join("t.stf");
        std::fs::write(&stf, &self.index).unwrap();
        std::fs::write(dir.join("t.stf.dcl"), &self.dcl).unwrap();
        std::fs::write(dir.join("t.stf.f.0"), &self.f0).unwrap();
        stf
    }
}

#[test]
fn communicators_spanning_every_willy_cost_their_bytes_not_their_members() {
    let dir = scratch("stf-comm-bomb");
    let mut files = Files::new(&["work"]);
    files.dcl.extend(rec(
        "collective_operation_definition",
        &[vec![1], text("MPI_Barrier"), vec![1]],
    ));
    // A thousand communicators of all 2^32 willies: 29 bytes each.
    for c in 0..1000 {
        let triplet = [u4(0), u4(u32::MAX), u4(1)].concat();
        let fields = [u4(c), text(""), u4(1), triplet, u4(0)];
        files.dcl.extend(rec("communicator_definition", &fields));
    }
    // Members by rank from two triplets: 10..19 by 3, then 20..40 by 5.
    let triplets = [u4(10), u4(20), u4(19), u4(40), u4(3), u4(5)];
    let fields = [u4(5000), text("strided"), u4(2), triplets.concat(), u4(0)];
    files.dcl.extend(rec("communicator_definition", &fields));
    files.call(0, 0, 5, 10);
    let starts = [0u64, 1, 2, 3, 4, 5]
        .map(|s| s.to_le_bytes().to_vec())
        .concat();
    let deltas = [9u64; 6].map(|d| d.to_le_bytes().to_vec()).concat();
    let coll = [u4(20), u4(5000), vec![1], u4(6), starts, deltas];
    files.f0.extend(rec("all_communication", &coll));
    let stf = files.write(&dir);
    let out = common::run_in_memory("trace-cat", 300, &["-q", stf.to_str().unwrap()]).unwrap();
    let colls: Vec<&str> = out.lines().filter(|l| l.starts_with("coll\t")).collect();
    let locs: Vec<&str> = colls.iter().map(|l| col(l, "loc")).collect();
    assert_eq!(locs, ["#10", "#13", "#16", "#19", "#20", "#25"], "{out}");
}

#[test]
fn arrays_of_string_ids_do_not_expand_past_a_row() {
    let dir = scratch("stf-array-bomb");
    let long = "x".repeat(60_000);
    let mut files = Files::new(&["work", &long]);
    // Ten thousand labels, each the 60 KB string: 600 MB of text.
    let labels: Vec<u8> = (0..10_000).flat_map(|_| u4(1)).collect();
    let units: Vec<u8> = (0..10_000).flat_map(|_| u4(0)).collect();
    let at = files.dcl.len();
    let fields = [u4(7), u4(0), u4(10_000), labels, units];
    files
        .dcl
        .extend(rec("custom_statistics_definition", &fields));
    files.call(0, 0, 5, 10);
    let stf = files.write(&dir);
    let err = common::run_in_memory("trace-cat", 300, &["-q", stf.to_str().unwrap()]).unwrap_err();
    assert!(
        err.contains(&format!(
            "t.stf.dcl: byte {at}: `label` of `custom_statistics_definition` names 10000 items that would be 600010000 bytes of text"
        )),
        "{err}"
    );
}

#[test]
fn a_file_of_specification_records_alone_reads_as_a_valid_stream() {
    let dir = scratch("stf-spec-only");
    let mut files = Files::new(&["compute", "rank 1"]);
    files.dcl.extend(rec("willy_name", &[u4(1), u4(1)]));
    files.call(0, 0, 5, 10);
    files.call(1, 0, 1, 3);
    let message = [u4(2), u4(0), 7i64.to_le_bytes().to_vec(), u4(1), u4(NONE)];
    let rest = [u4(64), u4(3), u4(NONE), u4(NONE)];
    files.f0.extend(rec(
        "one_to_one_communication",
        &[&message[..], &rest[..]].concat(),
    ));
    let stf = files.write(&dir);
    let tsv = cat(&["-q"], &stf).unwrap();
    let containers: Vec<(&str, &str)> = tsv
        .lines()
        .filter(|l| l.starts_with("container\t"))
        .map(|l| (col(l, "loc"), col(l, "cat")))
        .collect();
    assert_eq!(
        containers,
        [("#0", "thread"), ("rank 1", "thread")],
        "{tsv}"
    );
    // What it wrote reads back, and through Pajé too.
    let written = dir.join("out.tsv");
    std::fs::write(&written, &tsv).unwrap();
    assert_eq!(cat(&["-q"], &written).unwrap(), tsv);
    let paje = cat(&["-q", "-t", "paje"], &written).unwrap();
    let paje_file = dir.join("out.paje");
    std::fs::write(&paje_file, paje).unwrap();
    let back = cat(&["-q"], &paje_file).unwrap();
    assert!(back.lines().any(|l| l.starts_with("msg\t")), "{back}");
}

/// `trace-cat FILE` fails naming `want`.
fn refused(stf: &Path, want: &str) {
    let err = cat(&["-q"], stf).unwrap_err();
    assert!(err.contains(want), "wanted {want:?} in {err}");
}

#[test]
fn what_breaks_the_stream_rules_is_refused_at_its_byte() {
    let dir = scratch("stf-rules");
    let base = || {
        let mut files = Files::new(&["compute"]);
        files.call(0, 0, 5, 10);
        files
    };

    // A component listed twice would be read twice.
    let mut files = base();
    let at = files.index.len();
    files.declare_file(3, Component::Process, "f.0");
    let stf = files.write(&dir.join("twice"));
    refused(
        &stf,
        &format!("t.stf: byte {at}: component 3 (`f.0`) is declared a second time"),
    );

    // A string declared twice: which one was meant is unknown.
    let mut files = base();
    let at = files.dcl.len();
    files.dcl.extend(rec("stf_string", &[u4(0), text("other")]));
    let stf = files.write(&dir.join("string"));
    refused(
        &stf,
        &format!("t.stf.dcl: byte {at}: `stf_string` 0 is declared a second time"),
    );

    // No declaration file: where the index ends.
    let mut files = base();
    files.index = header(Component::Index).to_vec();
    let spec = SPEC_LAYOUTS[id("file_declaration") as usize];
    files
        .index
        .extend_from_slice(&[0xFF, id("file_declaration")]);
    files
        .index
        .extend_from_slice(&(spec.len() as u16).to_le_bytes());
    files.index.extend_from_slice(spec.as_bytes());
    files.declare_file(2, Component::Process, "f.0");
    let end = files.index.len();
    let stf = files.write(&dir.join("no-dcl"));
    refused(
        &stf,
        &format!("t.stf: byte {end}: the index ends without declaring a declaration file"),
    );

    // An anchor file that no file_declaration names.
    let mut files = base();
    let at = files.index.len();
    let fields = [u4(9), u4(2), u4(0), u4(0)];
    files.index.extend(rec("anchor_file_declaration", &fields));
    let stf = files.write(&dir.join("anchor"));
    refused(
        &stf,
        &format!("t.stf: byte {at}: anchor file 9 is not declared"),
    );

    // A component that is a FIFO would block: refused.
    let files = base();
    let stf = files.write(&dir.join("fifo"));
    let f0 = dir.join("fifo/t.stf.f.0");
    std::fs::remove_file(&f0).unwrap();
    let made = Command::new("mkfifo").arg(&f0).status().unwrap();
    assert!(made.success());
    refused(&stf, "t.stf.f.0: not a regular file");
}

#[test]
fn tracepipe_records_are_checked_as_the_stream_reader_checks_rows() {
    let dir = scratch("stf-own-records");
    let meta = |name: &str, value: &str| [vec![0], text(name), text(value)].concat();
    let with_tracepipe = |files: &mut Files| {
        for (i, spec) in tracepipe::formats::stf::layout::TRACEPIPE_LAYOUTS
            .iter()
            .enumerate()
        {
            let rid = 0xD0 + i as u8;
            files.index.extend_from_slice(&[0xFF, rid]);
            files
                .index
                .extend_from_slice(&(spec.len() as u16).to_le_bytes());
            files.index.extend_from_slice(spec.as_bytes());
        }
    };
    let own_id = |class: &str| {
        0xD0 + tracepipe::formats::stf::layout::TRACEPIPE_LAYOUTS
            .iter()
            .position(|s| s.starts_with(&format!("{class}(")))
            .unwrap() as u8
    };

    // Two `format` metas.
    let mut files = Files::new(&["compute"]);
    with_tracepipe(&mut files);
    let mut m = meta("format", "tracepipe-stream/1");
    m[0] = own_id("tracepipe_meta");
    files.index.extend(&m);
    let at = files.index.len();
    files.index.extend(&m);
    files.call(0, 0, 5, 10);
    let stf = files.write(&dir.join("formats"));
    refused(&stf, &format!("t.stf: byte {at}: a second `format` meta"));

    // A `format` this program does not read.
    let mut files = Files::new(&["compute"]);
    with_tracepipe(&mut files);
    let at = files.index.len();
    let mut m = meta("format", "tracepipe-stream/2");
    m[0] = own_id("tracepipe_meta");
    files.index.extend(&m);
    files.call(0, 0, 5, 10);
    let stf = files.write(&dir.join("version"));
    refused(
        &stf,
        &format!("t.stf: byte {at}: unsupported stream format `tracepipe-stream/2`"),
    );

    // An `origin` that is not integer ns.
    let mut files = Files::new(&["compute"]);
    with_tracepipe(&mut files);
    let at = files.index.len();
    let mut m = meta("origin", "yesterday");
    m[0] = own_id("tracepipe_meta");
    files.index.extend(&m);
    files.call(0, 0, 5, 10);
    let stf = files.write(&dir.join("origin"));
    refused(
        &stf,
        &format!("t.stf: byte {at}: meta `origin` must be integer ns"),
    );

    // A `tracepipe_order` that puts a row of one file before a row of
    // another that completes earlier.
    let mut files = Files::new(&["compute"]);
    with_tracepipe(&mut files);
    files.declare_file(3, Component::Process, "f.1");
    files.call(0, 0, 5, 10);
    let stf = files.write(&dir.join("order"));
    let mut f1 = header(Component::Process).to_vec();
    f1.push(own_id("tracepipe_order"));
    f1.extend_from_slice(&(-50i64).to_le_bytes());
    f1.extend(u4(0));
    f1.extend(rec("enter_function", &[u4(20), u4(1), u4(0)]));
    std::fs::write(dir.join("order/t.stf.f.1"), f1).unwrap();
    let err = cat(&["-q", "--threads", "1"], &stf).unwrap_err();
    assert!(err.contains("t.stf.f.0: byte 9:"), "{err}");
    assert!(err.contains("completion-time order"), "{err}");
}

#[test]
fn a_wide_trace_is_written_and_read_with_few_files_open() {
    let dir = scratch("stf-wide");
    let mut tsv = format!("{}\n", common::HEADER);
    for i in 0..10_000 {
        tsv.push_str(&format!(
            "container\t\t\tt{i}\tthread\tT{i}\t\t\t\t\t\t\t\t\t\n"
        ));
    }
    for i in 0..10_000 {
        tsv.push_str(&format!("event\t{i}\t\tt{i}\t\ttick\t\t\t\t\t\t\t\t\t\n"));
    }
    let input = dir.join("wide.tsv");
    std::fs::write(&input, &tsv).unwrap();
    let stf = dir.join("wide.stf");
    let (input, stf) = (input.to_str().unwrap(), stf.to_str().unwrap());
    common::run_limited(
        "trace-cat",
        "-n 100",
        &["-q", "-t", "stf", "-o", stf, input],
    )
    .unwrap();
    let back = common::run_limited("trace-cat", "-n 100", &["-q", stf]).unwrap();
    let events = back.lines().filter(|l| l.starts_with("event\t")).count();
    assert_eq!(events, 10_000);
}
