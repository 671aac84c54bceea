//! The stream codec: the TSV and JSON Lines forms of the record stream, and the
//! rules both readers enforce (see `docs/stream.md`).

pub mod jsonl;
pub mod tsv;

use crate::record::{Kind, Record, FORMAT_VERSION, META_FORMAT};
use crate::swar::{any_below, any_equal, bytes_equal, load_padded, HIGHS};
use crate::symbol::{Sym, Symbols};

/// True for the rows that describe the stream rather than the run (`meta`,
/// `type`, `container`): what `--rows-only` leaves out.
pub fn is_declaration(kind: Kind) -> bool {
    matches!(kind, Kind::Meta | Kind::Type | Kind::Container)
}

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

/// Checks the stream-level rules on each row a stream reader produces: meta rows
/// first, the `format` version, completion-time order, and locations declared
/// before use. Memory: one bit per symbol.
pub struct StreamCheck {
    symbols: Symbols,
    seen_data: bool,
    last_completion: Option<i64>,
    /// Per symbol, whether a `container` row declared it.
    declared: Vec<bool>,
}

/// What a reader does with a row after [`StreamCheck::check`].
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Pass the row on.
    Keep,
    /// The row is the `format` meta row: consumed here, the writer writes its own.
    Consumed,
}

impl StreamCheck {
    /// A check of rows whose identifiers are in `symbols`.
    pub fn new(symbols: Symbols) -> StreamCheck {
        StreamCheck {
            symbols,
            seen_data: false,
            last_completion: None,
            declared: Vec::new(),
        }
    }

    fn is_declared(&self, loc: Sym) -> bool {
        self.declared.get(loc.index()).copied().unwrap_or(false)
    }

    /// Validates `rec` against the rows before it.
    pub fn check(&mut self, rec: &Record) -> Result<Verdict, String> {
        rec.validate()?;
        let text = |sym| self.symbols.text(sym);
        match rec.kind {
            Kind::Meta => {
                if self.seen_data {
                    return Err("`meta` row after other rows: meta rows come first".into());
                }
                if rec.name == META_FORMAT {
                    let major = FORMAT_VERSION.rsplit('/').next().unwrap_or("1");
                    let ok = rec
                        .value
                        .strip_prefix("tracepipe-stream/")
                        .is_some_and(|v| v.split('.').next() == Some(major));
                    if !ok {
                        return Err(format!(
                            "unsupported stream format `{}` (this program reads {FORMAT_VERSION})",
                            rec.value
                        ));
                    }
                    return Ok(Verdict::Consumed);
                }
                return Ok(Verdict::Keep);
            }
            Kind::Type => {
                self.seen_data = true;
                return Ok(Verdict::Keep);
            }
            Kind::Container => {
                self.seen_data = true;
                if !rec.peer.is_empty() && !self.is_declared(rec.peer) {
                    return Err(format!(
                        "container `{}` names parent `{}`, which no earlier `container` row declares",
                        text(rec.loc),
                        text(rec.peer)
                    ));
                }
                let i = rec.loc.index();
                if i >= self.declared.len() {
                    self.declared.resize(i + 1, false);
                }
                self.declared[i] = true;
                return Ok(Verdict::Keep);
            }
            _ => self.seen_data = true,
        }
        if !rec.loc.is_empty() && !self.is_declared(rec.loc) {
            return Err(format!(
                "location `{}` is used before a `container` row declares it",
                text(rec.loc)
            ));
        }
        let at = rec.completion();
        if let (Some(prev), Some(now)) = (self.last_completion, at) {
            if now < prev {
                return Err(format!(
                    "row completes at {now} ns, before the previous row ({prev} ns): rows must be in completion-time order"
                ));
            }
        }
        if at.is_some() {
            self.last_completion = at;
        }
        Ok(Verdict::Keep)
    }
}

/// What [`scan_row`] found in a row besides its field boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowScan {
    /// Every byte is ASCII (so the row is valid UTF-8).
    pub ascii: bool,
    /// The row contains a backslash (so some field may need unescaping).
    pub backslash: bool,
}

/// Finds the end of every tab-separated field of `line` (the last end is
/// `line.len()`) in one pass, eight bytes at a time, and reports whether the row
/// is pure ASCII and whether it holds a backslash.
#[inline]
pub fn scan_row(line: &[u8], ends: &mut Vec<usize>) -> RowScan {
    ends.clear();
    let mut high = 0u64;
    let mut backslashes = 0u64;
    let mut chunks = line.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        high |= w;
        backslashes |= bytes_equal(w, b'\\');
        let mut tabs = bytes_equal(w, b'\t');
        while tabs != 0 {
            ends.push(base + (tabs.trailing_zeros() / 8) as usize);
            tabs &= tabs - 1;
        }
        base += 8;
    }
    let mut ascii = high & HIGHS == 0;
    let mut backslash = backslashes != 0;
    for (i, &b) in chunks.remainder().iter().enumerate() {
        ascii &= b < 0x80;
        backslash |= b == b'\\';
        if b == b'\t' {
            ends.push(base + i);
        }
    }
    ends.push(line.len());
    RowScan { ascii, backslash }
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

/// True when `s` is a JSON number literal, so it can be written unquoted.
pub fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn scan_row_finds_every_tab() {
        let mut ends = Vec::new();
        for line in [
            &b""[..],
            b"\t",
            b"abc",
            b"a\tb\t\tc",
            b"0123456\t89abcdef\t\t\t\t\t\t\t\t\t",
            "kind\t\u{e9}\\t\tx".as_bytes(),
        ] {
            let scan = scan_row(line, &mut ends);
            let mut want: Vec<usize> = line
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\t')
                .map(|(i, _)| i)
                .collect();
            want.push(line.len());
            assert_eq!(ends, want, "{line:?}");
            assert_eq!(scan.ascii, line.is_ascii());
            assert_eq!(scan.backslash, line.contains(&b'\\'));
        }
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
