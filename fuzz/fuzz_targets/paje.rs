//! The Pajé reader on arbitrary bytes: errors, never panics; its lines
//! cut into words as jobs of a pool are those cut on the reading thread;
//! and read through those jobs (which also find each line's definition and
//! time) it gives the same rows and the same error.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tracepipe::formats::paje::lexer::{Lexed, Lines};
use tracepipe::formats::paje::reader::PajeReader;
use tracepipe::formats::paje::WordSpan;
use tracepipe::pipe::{ReadOptions, RecordSource};
use tracepipe::pool::{Pool, Threads};
use tracepipe::Record;

/// What a line is made of: number, bytes, words, cut, UTF-8.
type Seen = (u64, Vec<u8>, Vec<WordSpan>, bool, bool);

fn seen(line: Option<Lexed<'_>>) -> Option<Seen> {
    line.map(|l| {
        let utf8 = l.text().is_some();
        (
            l.number,
            l.bytes().to_vec(),
            l.spans().to_vec(),
            l.truncated,
            utf8,
        )
    })
}

/// Every row `reader` gives, and its error as text.
fn rows(mut reader: impl RecordSource) -> (Vec<Record>, Option<String>) {
    let mut rows = Vec::new();
    loop {
        let mut rec = Record::default();
        match reader.next_record(&mut rec) {
            Ok(true) => rows.push(rec),
            Ok(false) => return (rows, None),
            Err(e) => return (rows, Some(e.to_string())),
        }
    }
}

/// `data` with its lines that are not definitions repeated past two chunks
/// of the lexing jobs, so that later chunks are read through what the
/// reading thread publishes.
fn past_two_chunks(data: &[u8]) -> Vec<u8> {
    let (mut defs, mut events) = (Vec::new(), Vec::new());
    for line in data.split_inclusive(|&b| b == b'\n') {
        let definition = line.trim_ascii_start().starts_with(b"%");
        let to = if definition { &mut defs } else { &mut events };
        to.extend_from_slice(line);
        if !line.ends_with(b"\n") {
            to.push(b'\n');
        }
    }
    while !events.is_empty() && defs.len() < 2 * tracepipe::exec::chunks::CHUNK {
        defs.extend_from_slice(&events);
    }
    defs
}

fuzz_target!(|data: &[u8]| {
    // One pool for every run: a worker thread and this one.
    static POOL: OnceLock<Pool> = OnceLock::new();
    let pool = POOL.get_or_init(|| Pool::new(Threads::new(2)));
    let long = past_two_chunks(data);
    let cursor = || std::io::Cursor::new(long.clone());

    let alone = rows(PajeReader::new("fuzz.paje", &long[..], &ReadOptions::default()));
    let pooled = ReadOptions {
        pool: pool.clone(),
        ..ReadOptions::default()
    };
    let lines = Lines::ahead("fuzz.paje", cursor(), pool, true);
    assert_eq!(alone, rows(PajeReader::with_lines(lines, &pooled)));

    let mut here = Lines::here("fuzz.paje", data);
    let mut ahead = Lines::ahead("fuzz.paje", std::io::Cursor::new(data.to_vec()), pool, true);
    loop {
        let one = seen(here.next_lexed().expect("bytes in memory read"));
        let two = seen(ahead.next_lexed().expect("bytes in memory read"));
        assert_eq!(one, two);
        if one.is_none() {
            break;
        }
    }
});
