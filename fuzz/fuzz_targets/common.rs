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
