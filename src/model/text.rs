//! How values are written as text wherever rows are encoded: times in a
//! unit, the stream's TSV escapes (also those of report tables and partial
//! reports), JSON strings and numbers.

use crate::swar::{any_below, any_equal, load_padded};

/// Appends a time: integer ns when `factor` is 1, else `ns / factor` as an
/// exact decimal (`--unit`).
pub fn push_time(out: &mut Vec<u8>, ns: i64, factor: u64) {
    if factor == 1 {
        crate::number::push_int(out, ns);
    } else {
        let mut buf = [0; crate::decimal::SCALED_MAX];
        out.extend_from_slice(crate::decimal::scaled(ns, factor, &mut buf).as_bytes());
    }
}

/// Appends `s` as a JSON string (quoted, escaped).
pub fn push_json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f | 0x7f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(esc);
        }
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

/// True when `s` is a JSON number literal, so it can be written unquoted.
pub fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    // The digits from `i` on: how many, `i` moved past them.
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut i = usize::from(b.first() == Some(&b'-'));
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// True when `bytes` holds a tab, newline, carriage return or backslash.
///
/// Eight bytes at a time: a byte below 14 or equal to `\\` sends the field to
/// the exact per-byte path, so the other control bytes below 14 only cost a
/// false alarm, never a wrong answer.
#[inline]
fn needs_escape(bytes: &[u8]) -> bool {
    let suspect = |x: u64| any_below(x, 14) | any_equal(x, b'\\');
    let mut chunks = bytes.chunks_exact(8);
    let mut alarm = chunks.any(|c| suspect(load_padded(c, b' ')));
    if !alarm && !chunks.remainder().is_empty() {
        // Padded with spaces, which never raise the alarm.
        alarm = suspect(load_padded(chunks.remainder(), b' '));
    }
    alarm && bytes.iter().any(|&b| is_escaped(b))
}

#[inline]
fn is_escaped(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\r' | b'\\')
}

/// Appends `s` with the TSV escapes `\t` `\n` `\r` `\\`.
#[inline]
pub fn escape_tsv(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return;
    }
    if !needs_escape(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
    for &b in bytes {
        match b {
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b => out.push(b),
        }
    }
}

/// Replaces `out` with the unescaped form of the TSV field `s`.
pub fn unescape_tsv(s: &str, out: &mut String) -> Result<(), String> {
    out.clear();
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let c = match rest.as_bytes().get(i + 1) {
            Some(b't') => '\t',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b'\\') => '\\',
            Some(_) => {
                let seq: String = rest[i..].chars().take(2).collect();
                return Err(format!(
                    "bad escape `{seq}`: only \\t \\n \\r \\\\ are allowed"
                ));
            }
            None => return Err("bad escape: `\\` at the end of a field".into()),
        };
        out.push(c);
        rest = &rest[i + 2..];
    }
    out.push_str(rest);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_check_sees_every_position() {
        // Every byte value at every position of fields of 1 to 19 bytes,
        // around the 8-byte steps of the word-at-a-time check.
        for len in 1..20 {
            for pos in 0..len {
                for b in 0..=255u8 {
                    let mut field = vec![b'x'; len];
                    field[pos] = b;
                    assert_eq!(
                        needs_escape(&field),
                        is_escaped(b),
                        "byte {b} at {pos} of {len}"
                    );
                }
            }
        }
        assert!(!needs_escape(b""));
    }

    #[test]
    fn escapes_round_trip() {
        let s = "a\tb\nc\rd\\e=f,g;h é";
        let mut enc = Vec::new();
        escape_tsv(s, &mut enc);
        assert_eq!(enc, b"a\\tb\\nc\\rd\\\\e=f,g;h \xc3\xa9");
        let mut dec = String::new();
        unescape_tsv(std::str::from_utf8(&enc).unwrap(), &mut dec).unwrap();
        assert_eq!(dec, s);
        assert!(unescape_tsv("a\\x", &mut dec).is_err());
        assert!(unescape_tsv("a\\", &mut dec).is_err());
    }

    #[test]
    fn json_numbers() {
        for ok in ["0", "-1", "1.5", "2e10", "1E-3", "-0.0"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in ["", "01", "1.", ".5", "inf", "NaN", "1e", "+1", "0x10"] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }
}
