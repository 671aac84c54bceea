//! Every writer on whatever stream the TSV reader accepts from the input, and
//! the readers on what the writers wrote: errors, never panics. A Pallas
//! trace written must read back whole, with as many rows per location.
#![no_main]

mod common;

use common::Buffer;
use libfuzzer_sys::fuzz_target;
use tracepipe::formats::otf2::reader::Otf2Source;
use tracepipe::formats::pallas::reader::PallasSource;
use tracepipe::io::Output;
use tracepipe::formats::paje::reader::PajeReader;
use tracepipe::formats::paraver::reader::ParaverReader;
use tracepipe::pipe::{ReadOptions, RecordSink, RecordSource, WriteOptions};
use tracepipe::formats::stream::jsonl::JsonlReader;
use tracepipe::formats::stream::tsv::TsvReader;
use tracepipe::formats::trace::reader::TraceReader;
use tracepipe::{Kind, Record, Symbols};

fn drain(mut source: impl RecordSource) {
    let mut rec = Record::default();
    while let Ok(true) = source.next_record(&mut rec) {}
}

fuzz_target!(|data: &[u8]| {
    let symbols = Symbols::new();
    let Ok(mut reader) = TsvReader::new("fuzz.tsv", data, symbols.clone()) else {
        return;
    };
    let mut rows = Vec::new();
    let mut rec = Record::default();
    while let Ok(true) = reader.next_record(&mut rec) {
        rows.push(rec.clone());
    }
    let opts = WriteOptions {
        symbols,
        extra_columns: reader.extra_columns().to_vec(),
        ..WriteOptions::default()
    };
    type Open = fn(Output, &WriteOptions) -> tracepipe::Result<Box<dyn RecordSink + Send>>;
    let writers: [(&str, Open); 7] = [
        ("tsv", tracepipe::formats::stream::tsv::open_writer),
        ("jsonl", tracepipe::formats::stream::jsonl::open_writer),
        ("paje", tracepipe::formats::paje::writer::open_writer),
        ("trace", tracepipe::formats::trace::writer::open_writer),
        ("pjdump", tracepipe::formats::paje::pjdump::open_writer),
        ("chrome", tracepipe::formats::viewer::chrome::open_writer),
        ("perfetto", tracepipe::formats::viewer::perfetto::open_writer),
    ];
    for (format, open) in writers {
        let buffer = Buffer::default();
        let Ok(mut sink) = open(Output::new(format, Box::new(buffer.clone())), &opts) else {
            continue;
        };
        let written = rows
            .iter()
            .try_for_each(|r| sink.write(r))
            .and_then(|()| sink.finish());
        if written.is_err() {
            continue;
        }
        let bytes = buffer.0.lock().unwrap().clone();
        let read = ReadOptions::default();
        match format {
            "tsv" => {
                if let Ok(r) = TsvReader::new("out.tsv", &bytes[..], read.symbols.clone()) {
                    drain(r);
                }
            }
            "jsonl" => drain(JsonlReader::new(
                "out.jsonl",
                &bytes[..],
                read.symbols.clone(),
            )),
            "paje" => drain(PajeReader::new("out.paje", &bytes[..], &read)),
            "trace" => {
                if let Ok(r) = TraceReader::new("out.etf", &bytes[..], &read) {
                    drain(r);
                }
            }
            _ => {}
        }
    }
    otf2_round(&rows, &opts);
    pallas_round(&rows, &opts);
    paraver_round(&rows, &opts);
});

/// The Paraver writer (its `.prv`, `.pcf` and `.row` in a folder of this
/// process's own) and its reader on what it wrote: it must read.
fn paraver_round(rows: &[Record], opts: &WriteOptions) {
    let dir = std::env::temp_dir().join(format!("paraver-writer-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let prv = dir.join("w.prv");
    let name = prv.to_str().unwrap();
    let buffer = Buffer::default();
    let Ok(mut sink) = tracepipe::formats::paraver::writer::open_writer(
        Output::new(name, Box::new(buffer.clone())),
        opts,
    ) else {
        return;
    };
    let written = rows
        .iter()
        .try_for_each(|r| sink.write(r))
        .and_then(|()| sink.finish());
    if written.is_err() {
        return;
    }
    let bytes = buffer.0.lock().unwrap().clone();
    let input: Box<dyn std::io::BufRead> = Box::new(std::io::Cursor::new(bytes));
    let source = ParaverReader::open(name, input, &ReadOptions::default());
    let mut source = source.expect("a written Paraver trace opens");
    let mut rec = Record::default();
    while source.next_record(&mut rec).expect("a written Paraver trace reads") {}
}

/// The Pallas writer (a folder of this process's own) and its reader on
/// what it wrote: every row the writer took reads back, on its location
/// (a `state` as its enter and leave).
fn pallas_round(rows: &[Record], opts: &WriteOptions) {
    let dir = std::env::temp_dir().join(format!("pallas-writer-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Output::new(dir.to_str().unwrap(), Box::new(Buffer::default()));
    let Ok(mut sink) = tracepipe::formats::pallas::writer::open_writer(out, opts) else {
        return;
    };
    let mut written = std::collections::HashMap::new();
    for r in rows {
        if sink.write(r).is_err() {
            return;
        }
        if !matches!(r.kind, Kind::Meta | Kind::Container | Kind::Type) {
            let e: &mut (u64, u64) = written.entry(r.loc).or_default();
            e.0 += 1;
            e.1 += if r.kind == Kind::State { 2 } else { 1 };
        }
    }
    if sink.finish().is_err() {
        return;
    }
    let read = ReadOptions {
        symbols: opts.symbols.clone(),
        ..ReadOptions::default()
    };
    let mut source = PallasSource::open("w", &dir, &read).expect("a written trace opens");
    let mut back = std::collections::HashMap::new();
    let mut rec = Record::default();
    while source.next_record(&mut rec).expect("a written trace reads") {
        if !matches!(rec.kind, Kind::Meta | Kind::Container | Kind::Type) {
            *back.entry(rec.loc).or_insert(0) += 1;
        }
    }
    // A state reads back as its enter and leave, or as itself when kept
    // whole.
    for (loc, (rows, most)) in &written {
        let got = back.get(loc).copied().unwrap_or(0);
        assert!(
            (*rows..=*most).contains(&got),
            "{got} rows read back of {rows} written"
        );
    }
}

/// The OTF2 writer (an archive of files, in a folder of this process's
/// own) and its reader on what it wrote.
fn otf2_round(rows: &[Record], opts: &WriteOptions) {
    let dir = std::env::temp_dir().join(format!("otf2-writer-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let anchor = dir.join("w.otf2");
    let buffer = Buffer::default();
    let out = Output::new(anchor.to_str().unwrap(), Box::new(buffer.clone()));
    let Ok(mut sink) = tracepipe::formats::otf2::writer::open_writer(out, opts) else {
        return;
    };
    let written = rows
        .iter()
        .try_for_each(|r| sink.write(r))
        .and_then(|()| sink.finish());
    if written.is_err() {
        return;
    }
    std::fs::write(&anchor, &*buffer.0.lock().unwrap()).unwrap();
    if let Ok(source) = Otf2Source::open("w.otf2", &anchor, &ReadOptions::default()) {
        drain(source);
    }
}
