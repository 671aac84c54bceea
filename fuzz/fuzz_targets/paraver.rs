//! The Paraver reader on arbitrary bytes as a `.prv`, and the `.pcf` and
//! `.row` parsers on the same bytes: errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracepipe::formats::paraver::names::{Pcf, RowNames};
use tracepipe::formats::paraver::reader::ParaverReader;
use tracepipe::pipe::{ReadOptions, RecordSource};
use tracepipe::Record;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Pcf::parse(text);
        let _ = RowNames::parse(text);
    }
    let input: Box<dyn std::io::BufRead> = Box::new(std::io::Cursor::new(data.to_vec()));
    let Ok(mut reader) = ParaverReader::open("fuzz.prv", input, &ReadOptions::default()) else {
        return;
    };
    let mut rec = Record::default();
    while let Ok(true) = reader.next_record(&mut rec) {}
});
