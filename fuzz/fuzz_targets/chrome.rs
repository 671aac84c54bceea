//! The Chrome trace JSON reader on arbitrary bytes: errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracepipe::formats::chrome::ChromeReader;
use tracepipe::pipe::{ReadOptions, RecordSource};
use tracepipe::Record;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = ChromeReader::read("fuzz.json", data, &ReadOptions::default()) else {
        return;
    };
    let mut rec = Record::default();
    while let Ok(true) = reader.next_record(&mut rec) {}
});
