//! The slicer on whatever stream the TSV reader accepts, with a window and
//! options drawn from the input's hash: errors, never panics, and what it
//! writes after reading the whole input is itself a valid stream.
#![no_main]

use std::hash::{Hash, Hasher};

mod common;

use common::Buffer;
use libfuzzer_sys::fuzz_target;
use tracepipe::formats::stream::tsv::TsvReader;
use tracepipe::io::Output;
use tracepipe::pipe::{RecordSource, WriteOptions};
use tracepipe::stages::slice::{MessageScope, SliceOptions, SliceSource};
use tracepipe::stages::window::Window;
use tracepipe::{Record, Symbols};

fuzz_target!(|data: &[u8]| {
    let symbols = Symbols::new();
    let input = std::io::Cursor::new(data.to_vec());
    let Ok(reader) = TsvReader::new("fuzz.tsv", input, symbols.clone()) else {
        return;
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut hasher);
    let h = hasher.finish();
    // Windows over the times small fixtures use (0 to 20 000 ns).
    let start = (h % 24_000) as i64 - 2_000;
    let width = ((h >> 16) % 12_000) as i64 + 1;
    let options = SliceOptions {
        window: match (h >> 32) % 4 {
            0 => Window::new(None, Some(start + width)),
            1 => Window::new(Some(start), None),
            _ => Window::new(Some(start), Some(start + width)),
        },
        messages: if (h >> 40) % 2 == 0 {
            MessageScope::Overlap
        } else {
            MessageScope::Inside
        },
        rebase: (h >> 32) % 4 != 0 && (h >> 41) % 2 == 0,
        true_ends: (h >> 42) % 2 == 0,
    };
    let extra = reader.extra_columns().to_vec();
    let mut slice = SliceSource::new(
        Box::new(reader),
        options,
        symbols.clone(),
        Default::default(),
    );
    let mut rows = Vec::new();
    let mut rec = Record::default();
    loop {
        match slice.next_record(&mut rec) {
            Ok(true) => rows.push(rec.clone()),
            Ok(false) => break,
            Err(_) => return,
        }
    }
    let buffer = Buffer::default();
    let opts = WriteOptions {
        symbols: symbols.clone(),
        extra_columns: extra,
        ..WriteOptions::default()
    };
    let mut sink = tracepipe::formats::stream::tsv::open_writer(
        Output::new("out", Box::new(buffer.clone())),
        &opts,
    )
    .expect("a TSV writer opens");
    for r in &rows {
        if let Err(e) = sink.write(r) {
            panic!("the slice {options:?} writes a row the TSV writer refuses: {e}");
        }
    }
    sink.finish().expect("the TSV writer finishes");
    let bytes = buffer.0.lock().unwrap().clone();
    let mut back = TsvReader::new("out.tsv", &bytes[..], symbols).expect("the slice has a header");
    loop {
        match back.next_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => panic!(
                "the slice {options:?} is not a valid stream: {e}\n{}",
                String::from_utf8_lossy(&bytes)
            ),
        }
    }
});
