//! The cost floor of reading a Pajé trace, for `bench/paje.sh`: how long the
//! first steps alone take, without simulating anything or making rows.
//!
//! Usage: `paje-floor FILE STEPS` where STEPS is `lines` (find the lines),
//! `words` (also split them into words), or `lookups` (also parse the time and
//! look up the next two words, the container and type identifiers of most
//! events). Prints the number of lines.

use tracepipe::decimal::plain_seconds_to_ns;
use tracepipe::fasthash::StrMap;
use tracepipe::formats::paje::split_words;
use tracepipe::io::LineReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, steps] = &args[..] else {
        return Err("usage: paje-floor FILE lines|words|lookups".into());
    };
    let (words_too, lookups_too) = match steps.as_str() {
        "lines" => (false, false),
        "words" => (true, false),
        "lookups" => (true, true),
        other => return Err(format!("unknown steps `{other}`").into()),
    };
    let mut lines = LineReader::new(path, std::fs::File::open(path)?);
    let mut words = Vec::new();
    let mut ids: StrMap<u32> = StrMap::default();
    let (mut count, mut checksum) = (0u64, 0i64);
    while let Some(line) = lines.next_located()? {
        count += 1;
        if !words_too {
            continue;
        }
        split_words(line.text, &mut words);
        if !lookups_too || words.len() < 4 || line.text.first() == Some(&b'%') {
            continue;
        }
        let text = std::str::from_utf8(line.text)?;
        let word = |i: usize| &text[words[i].0 as usize..words[i].1 as usize];
        checksum = checksum.wrapping_add(plain_seconds_to_ns(word(1)).unwrap_or(0));
        for i in 2..4 {
            let next = ids.len() as u32;
            match ids.get(word(i)) {
                Some(&id) => checksum = checksum.wrapping_add(i64::from(id)),
                None => {
                    ids.insert(word(i).into(), next);
                }
            }
        }
    }
    println!("{count} lines (checksum {checksum})");
    Ok(())
}
