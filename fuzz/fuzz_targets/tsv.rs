//! The TSV stream reader on arbitrary bytes: errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracepipe::pipe::RecordSource;
use tracepipe::formats::stream::tsv::TsvReader;
use tracepipe::Record;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = TsvReader::new("fuzz.tsv", data, Default::default()) else {
        return;
    };
    let mut rec = Record::default();
    while let Ok(true) = reader.next_record(&mut rec) {}
});
