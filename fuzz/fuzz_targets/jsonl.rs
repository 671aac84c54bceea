//! The JSON Lines stream reader on arbitrary bytes: errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracepipe::pipe::RecordSource;
use tracepipe::formats::stream::jsonl::JsonlReader;
use tracepipe::Record;

fuzz_target!(|data: &[u8]| {
    let mut reader = JsonlReader::new("fuzz.jsonl", data, Default::default());
    let mut rec = Record::default();
    while let Ok(true) = reader.next_record(&mut rec) {}
});
