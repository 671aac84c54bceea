//! The Pajé reader on arbitrary bytes: errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracepipe::paje::reader::PajeReader;
use tracepipe::pipe::{ReadOptions, RecordSource};
use tracepipe::Record;

fuzz_target!(|data: &[u8]| {
    let mut reader = PajeReader::new("fuzz.paje", data, &ReadOptions::default());
    let mut rec = Record::default();
    while let Ok(true) = reader.next_record(&mut rec) {}
});
