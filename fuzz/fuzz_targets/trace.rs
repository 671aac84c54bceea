//! The TRACE reader on arbitrary bytes: errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracepipe::pipe::{ReadOptions, RecordSource};
use tracepipe::formats::trace::reader::TraceReader;
use tracepipe::Record;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = TraceReader::new("fuzz.etf", data, &ReadOptions::default()) else {
        return;
    };
    let mut rec = Record::default();
    while let Ok(true) = reader.next_record(&mut rec) {}
});
