//! The Parquet reader on a file the project's writer made from the
//! fixture with every kind of field, then edited where the input says
//! (eight bytes per edit: any byte, small, large or raw values), or on the
//! input itself when it is a Parquet file. Errors, never panics or
//! runaway allocations.
#![no_main]

use std::sync::OnceLock;

mod common;

use common::{edit, Buffer};
use libfuzzer_sys::fuzz_target;
use tracepipe::formats::stream::parquet::{open_reader, writer::ParquetWriter};
use tracepipe::formats::stream::tsv::TsvReader;
use tracepipe::io::{Input, Output};
use tracepipe::model::symbol::Symbols;
use tracepipe::pipe::{ReadOptions, RecordSink, RecordSource, WriteOptions};
use tracepipe::Record;

/// The pristine file: the fixture in row groups of three rows.
fn template() -> &'static Vec<u8> {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let text: &[u8] = include_bytes!("../../tests/data/nasty.tsv");
        let symbols = Symbols::new();
        let mut reader = TsvReader::new("nasty.tsv", text, symbols.clone()).unwrap();
        let buffer = Buffer::default();
        let opts = WriteOptions {
            symbols,
            ..WriteOptions::default()
        };
        let out = Output::new("template.parquet", Box::new(buffer.clone()));
        let mut writer = ParquetWriter::new(out, &opts, 3).unwrap();
        let mut rec = Record::default();
        while reader.next_record(&mut rec).unwrap() {
            writer.write(&rec).unwrap();
        }
        writer.finish().unwrap();
        let bytes = buffer.0.lock().unwrap().clone();
        bytes
    })
}

/// Panics of the parquet crate unwind to the reader's guard, which makes
/// them errors; any other panic is a crash (libFuzzer's harness aborts
/// on it), with its message.
fn quiet_crate_panics() {
    static SET: OnceLock<()> = OnceLock::new();
    SET.get_or_init(|| {
        std::panic::set_hook(Box::new(|info| {
            let in_crate = info.location().is_some_and(|l| l.file().contains("/parquet-"));
            if !in_crate {
                eprintln!("{info}");
            }
        }));
    });
}

fuzz_target!(|data: &[u8]| {
    quiet_crate_panics();
    let bytes = match data.starts_with(b"PAR1") {
        true => data.to_vec(),
        false => {
            let mut files = [("template", template().clone())];
            for e in data.chunks_exact(8) {
                edit(&mut files, e);
            }
            let [(_, bytes)] = files;
            bytes
        }
    };
    let dir = std::env::temp_dir();
    let path = dir.join(format!("tracepipe-fuzz-{}.parquet", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let counter = Default::default();
    let input = Input::open(path.to_str().unwrap(), &counter).unwrap();
    if let Ok(mut reader) = open_reader(input, &ReadOptions::default()) {
        let mut rec = Record::default();
        while let Ok(true) = reader.next_record(&mut rec) {}
    }
});
