//! What the targets share (each uses part of it).
#![allow(dead_code)]

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A writer into a buffer the target reads back.
#[derive(Clone, Default)]
pub struct Buffer(pub Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Applies one edit of 8 input bytes: which file, where, and what value of
/// which width goes there.
pub fn edit<N>(files: &mut [(N, Vec<u8>)], e: &[u8]) {
    let file = &mut files[usize::from(e[0]) % files.len()].1;
    if file.is_empty() {
        return;
    }
    let at = usize::from(u16::from_le_bytes([e[1], e[2]])) % file.len();
    let width = [1usize, 2, 4, 8][usize::from(e[3] & 3)];
    let raw = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
    let value: u64 = match e[3] >> 2 & 3 {
        0 => u64::from(raw),
        1 => u64::from(raw & 0xF),
        2 => u64::MAX - u64::from(raw & 0xFF),
        _ => 1u64 << (raw % 64),
    };
    for (i, b) in value.to_le_bytes().iter().take(width).enumerate() {
        if let Some(slot) = file.get_mut(at + i) {
            *slot = *b;
        }
    }
}

/// Rows held in memory as a source that cannot tell what is still to
/// come: a slice of it reads every row, and nothing is thinned.
pub struct HeldRows {
    rows: std::vec::IntoIter<tracepipe::Record>,
    read: u64,
}

impl tracepipe::pipe::RecordSource for HeldRows {
    fn next_record(&mut self, rec: &mut tracepipe::Record) -> tracepipe::Result<bool> {
        match self.rows.next() {
            Some(row) => {
                *rec = row;
                self.read += 1;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn mark(&self) -> u64 {
        self.read
    }

    fn locate(&self, mark: u64) -> tracepipe::error::Location {
        tracepipe::error::Location::Line {
            file: "held rows".into(),
            line: mark,
        }
    }

    fn horizon(&self) -> Option<i64> {
        None
    }
}

/// Every row of a source; none when it fails or gives more than `bound`.
fn all_rows(
    mut source: Box<dyn tracepipe::pipe::RecordSource>,
    bound: usize,
) -> Option<Vec<tracepipe::Record>> {
    let mut rows = Vec::new();
    let mut rec = tracepipe::Record::default();
    while source.next_record(&mut rec).ok()? {
        rows.push(rec.clone());
        if rows.len() > bound {
            return None;
        }
    }
    Some(rows)
}

/// The stop and thinning paths against reading whole: the slice of a
/// freshly opened source (which hears the slice's T0 and may stop after
/// T1) equals the slice of all its rows held in memory, for a window and
/// options drawn from the hash of `data` within the rows' span. `open`
/// opens the input with the options given, `None` when it cannot.
pub fn thinned_slice_agrees(
    data: &[u8],
    open: impl Fn(&tracepipe::pipe::ReadOptions) -> Option<Box<dyn tracepipe::pipe::RecordSource>>,
) {
    use std::hash::{Hash, Hasher};
    use tracepipe::stages::slice::{MessageScope, SliceOptions, SliceSource};
    use tracepipe::stages::window::Window;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut hasher);
    let h = hasher.finish();
    // One symbol table for both slices, so their rows compare as they are.
    let symbols = tracepipe::Symbols::new();
    let read = tracepipe::pipe::ReadOptions {
        symbols: symbols.clone(),
        ..Default::default()
    };
    let Some(rows) = open(&read).and_then(|s| all_rows(s, 100_000)) else {
        return;
    };
    let times = rows.iter().filter_map(|r| r.time);
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        return;
    };
    let span = last.saturating_sub(first).max(1) as u64;
    let start = first.saturating_add((h % (span + 2)) as i64 - 1);
    let end = start.saturating_add(((h >> 20) % span) as i64 + 1);
    let options = SliceOptions {
        window: match (h >> 40) % 3 {
            0 => Window::new(None, Some(end)),
            _ => Window::new(Some(start), Some(end)),
        },
        messages: match (h >> 42) % 2 {
            0 => MessageScope::Overlap,
            _ => MessageScope::Inside,
        },
        rebase: (h >> 43) % 2 == 0,
        true_ends: (h >> 44) % 4 == 0,
    };
    let slice = |inner: Box<dyn tracepipe::pipe::RecordSource>| {
        let source = SliceSource::new(inner, options, symbols.clone(), Default::default());
        all_rows(Box::new(source), usize::MAX)
    };
    let held = HeldRows {
        rows: rows.into_iter(),
        read: 0,
    };
    let Some(expected) = slice(Box::new(held)) else {
        return;
    };
    let opened = open(&read).expect("opens again");
    let got = slice(opened);
    assert!(
        got.as_ref() == Some(&expected),
        "the slice {options:?} of the source differs from the slice of its rows:\n{got:#?}\nagainst\n{expected:#?}"
    );
}
