//! STF: the input as the text `stftool --dump` prints; as a stream (when the
//! TSV reader takes it) through the STF writer and back; and as edits (as in
//! the Pallas target) to a file set written by the project's writer: sizes,
//! counts, ids and times replaced by small, large or raw values. Errors,
//! never panics or runaway allocations; and a slice of a file set (thinned
//! before its T0) is the slice of its rows.
#![no_main]

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::OnceLock;

mod common;

use common::edit;
use libfuzzer_sys::fuzz_target;
use tracepipe::io::{ByteCounter, Input, Output};
use tracepipe::pipe::{ReadOptions, RecordSource, WriteOptions};
use tracepipe::formats::stream::tsv::TsvReader;
use tracepipe::Record;

/// A stream with a row of each mapping (functions, messages, counters,
/// scopes, a collective, a generic record, a row of tracepipe's own).
const TEMPLATE: &str =
    "kind\ttime\tend\tloc\tcat\tname\tdepth\tpeer\tcomm\ttag\tsize\tid\tvalue\tflags\tattrs
container\t\t\tp0\tprocess\tP0\t\t\t\t\t\t\t\t\t
container\t\t\tp1\tprocess\tP1\t\t\t\t\t\t\t\t\t
enter\t10\t\tp0\tMPI\tMPI_Send\t0\t\t\t\t\t\t\t\t
leave\t20\t\tp0\tMPI\tMPI_Send\t0\t\t\t\t\t\t\t\tscl=4
state\t5\t25\tp1\tUSER\tloop\t\t\t\t\t\t\t\t\tseqnr=1;scl1=2;scl2=3
msg\t15\t30\tp0\t\t\t\tp1\tworld\t5\t1024\t\t\t\t
counter\t40\t\tp1\tHW\tcycles\t\t\t\t\t\t\t-12\t\tunit=c
coll\t40\t65\tp0\t\tBCAST\t\tp0\tworld\t\t\t0\t16\t\tslot=0;of=2;sent=64
coll\t45\t70\tp1\t\tBCAST\t\tp0\tworld\t\t\t0\t16\t\tslot=1;of=2;sent=64
event\t80\t\tp0\tstf\tcomment\t\t\t\t\t\t\t\t\ttext=hello
event\t90\t\tp1\tUSER\tmark\t\t\t\t\t\tid7\t3.5\t\tk=v
";

/// The template's files (name suffix after the index's name, bytes).
fn template() -> &'static Vec<(String, Vec<u8>)> {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("stf-fuzz-template-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let index = dir.join("t.stf");
        let file = std::fs::File::create(&index).unwrap();
        let out = Output::new(index.to_str().unwrap(), Box::new(file));
        let opts = WriteOptions::default();
        let mut writer = tracepipe::formats::stf::writer::open_writer(out, &opts).unwrap();
        let mut reader =
            TsvReader::new("template.tsv", Cursor::new(TEMPLATE), opts.symbols.clone()).unwrap();
        let mut rec = Record::default();
        while reader.next_record(&mut rec).unwrap() {
            writer.write(&rec).unwrap();
        }
        writer.finish().unwrap();
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                let suffix = name.strip_prefix("t.stf").unwrap().to_string();
                (suffix, std::fs::read(&p).unwrap())
            })
            .collect();
        files.sort();
        let _ = std::fs::remove_dir_all(&dir);
        files
    })
}

/// Ids the template leaves free, defined for the records below.
const ADDED: [(u8, &str); 5] = [
    (0xE0, "communicator_definition(U4 id, U4 size_1_1, <C1 name>, U4 size_2_3, <willy_id first_id>, <willy_id last_id>, <I4 stride>, I4 left_size)"),
    (0xE1, "custom_statistics_definition(U4 id, U4 name, U4 size_1_2, <U4 label>, <U4 unit>)"),
    (0xE2, "file_declaration(U4 id, U1 filetype, U4 size_1_1, <C1 suffix>)"),
    (0xE3, "stf_string(U4 id, U4 size_1_1, <C1 string>)"),
    (0xE4, "all_communication(U4 time, U4 communicator, U1 type, U4 size_1_2, <U8 start_time>, <U8 delta>)"),
];

/// Structure-aware damage, chosen by the input's bytes from the 129th on:
/// communicators of the triplets the input gives (any span, many of them),
/// arrays of string ids of any count, long strings, a string or a component
/// declared twice, a collective over a communicator of any size.
fn add_structure(files: &mut [(String, Vec<u8>)], data: &[u8]) {
    let Some((&choice, rest)) = data.get(128..).and_then(<[u8]>::split_first) else {
        return;
    };
    let word = |i: usize| {
        let b = |j: usize| rest.get(i * 4 + j).copied().unwrap_or(0);
        u32::from_le_bytes([b(0), b(1), b(2), b(3)])
    };
    let mut index = Vec::new();
    for (id, spec) in ADDED {
        index.extend_from_slice(&[0xFF, id]);
        index.extend_from_slice(&(spec.len() as u16).to_le_bytes());
        index.extend_from_slice(spec.as_bytes());
    }
    let mut dcl = Vec::new();
    let mut data_file = Vec::new();
    let n = (word(0) % 8) as usize;
    if choice & 1 != 0 {
        for c in 0..1 + word(1) % 64 {
            dcl.push(0xE0);
            dcl.extend_from_slice(&c.to_le_bytes());
            dcl.extend_from_slice(&0u32.to_le_bytes());
            dcl.extend_from_slice(&(n as u32).to_le_bytes());
            for k in 0..3 * n {
                dcl.extend_from_slice(&word(2 + k).to_le_bytes());
            }
            dcl.extend_from_slice(&0u32.to_le_bytes());
        }
    }
    if choice & 2 != 0 {
        let long = (word(30) % 4096) as usize;
        dcl.push(0xE3);
        dcl.extend_from_slice(&900u32.to_le_bytes());
        dcl.extend_from_slice(&(long as u32).to_le_bytes());
        dcl.extend(std::iter::repeat_n(b'x', long));
        let items = word(31) % 2048;
        dcl.push(0xE1);
        dcl.extend_from_slice(&[7, 0, 0, 0, 0x84, 3, 0, 0]);
        dcl.extend_from_slice(&(if choice & 16 != 0 { word(32) } else { items }).to_le_bytes());
        for _ in 0..2 * items {
            dcl.extend_from_slice(&900u32.to_le_bytes());
        }
    }
    if choice & 4 != 0 {
        dcl.push(0xE3);
        dcl.extend_from_slice(&900u32.to_le_bytes());
        dcl.extend_from_slice(&1u32.to_le_bytes());
        dcl.push(b'y');
    }
    if choice & 8 != 0 {
        let suffix = files[usize::from(choice >> 5) % files.len()].0.trim_start_matches('.').to_string();
        index.push(0xE2);
        index.extend_from_slice(&word(33).to_le_bytes());
        index.push((word(34) % 8) as u8);
        index.extend_from_slice(&(suffix.len() as u32).to_le_bytes());
        index.extend_from_slice(suffix.as_bytes());
    }
    if choice & 64 != 0 {
        let m = (word(35) % 16) as usize;
        data_file.push(0xE4);
        data_file.extend_from_slice(&[0, 0, 0, 0]);
        data_file.extend_from_slice(&(word(36) % 64).to_le_bytes());
        data_file.push(0);
        data_file.extend_from_slice(&(m as u32).to_le_bytes());
        for k in 0..2 * m {
            data_file.extend_from_slice(&u64::from(word(37 + k) % 100).to_le_bytes());
        }
    }
    for (suffix, bytes) in files.iter_mut() {
        match suffix.as_str() {
            "" => bytes.extend_from_slice(&index),
            ".dcl" => bytes.extend_from_slice(&dcl),
            ".cop" | ".f.0" => bytes.extend_from_slice(&data_file),
            _ => {}
        }
    }
}

/// Reads a source to its end or its first error, a bounded number of rows.
fn drain(mut source: Box<dyn RecordSource>) {
    let mut rec = Record::default();
    let mut rows = 0u32;
    while let Ok(true) = source.next_record(&mut rec) {
        rows += 1;
        if rows > 100_000 {
            break;
        }
    }
}

fn open(path: &std::path::Path, open: tracepipe::format::ReaderFn) {
    let counter = ByteCounter::default();
    if let Ok(input) = Input::open(path.to_str().unwrap(), &counter) {
        if let Ok(source) = open(input, &ReadOptions::default()) {
            drain(source);
        }
    }
}

/// The slice of the file set at `path`, thinned before T0, against the
/// slice of its rows.
fn slice_agrees(path: &std::path::Path, data: &[u8]) {
    common::thinned_slice_agrees(data, |options| {
        let counter = ByteCounter::default();
        let input = Input::open(path.to_str().unwrap(), &counter).ok()?;
        tracepipe::formats::stf::reader::open_reader(input, options).ok()
    });
}

fuzz_target!(|data: &[u8]| {
    let dir: PathBuf = std::env::temp_dir().join(format!("stf-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dump = dir.join("dump.txt");
    std::fs::write(&dump, data).unwrap();
    open(&dump, tracepipe::formats::stf::dump::open_reader);

    let opts = WriteOptions::default();
    if let Ok(mut reader) = TsvReader::new("fuzz.tsv", data, opts.symbols.clone()) {
        let index = dir.join("w.stf");
        let file = std::fs::File::create(&index).unwrap();
        let out = Output::new(index.to_str().unwrap(), Box::new(file));
        let mut writer = tracepipe::formats::stf::writer::open_writer(out, &opts).unwrap();
        let mut rec = Record::default();
        let mut written = Ok(());
        while let (Ok(true), Ok(())) = (reader.next_record(&mut rec), &written) {
            written = writer.write(&rec);
        }
        if written.and_then(|()| writer.finish()).is_ok() {
            open(&index, tracepipe::formats::stf::reader::open_reader);
            slice_agrees(&index, data);
        }
    }

    let mut files = template().clone();
    for e in data.chunks_exact(8).take(16) {
        edit(&mut files, e);
    }
    add_structure(&mut files, data);
    for (suffix, bytes) in &files {
        std::fs::write(dir.join(format!("t.stf{suffix}")), bytes).unwrap();
    }
    open(&dir.join("t.stf"), tracepipe::formats::stf::reader::open_reader);
    slice_agrees(&dir.join("t.stf"), data);
});
