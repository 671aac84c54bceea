//! TRACE (`.etf`), the text format of TNO-ESI's TRACE4CPS: events, resources and
//! claims, dependencies, and signals as piecewise polynomials.
//!
//! `reader.rs` validates a file and maps it to the stream, `writer.rs` maps a
//! stream back; this module holds the syntax both share. The mapping is
//! documented in `docs/formats.md`.

pub mod reader;
pub mod writer;

use crate::pipe::Probe;

/// Prefix of the attribute keys and meta names that carry TRACE fields which
/// have no stream column. Source attributes keep their own keys.
pub const PREFIX: &str = crate::model::record::prefix::TRACE;

/// Meta name prefix of the trace's general (`T` line) attributes.
pub const META_ATTR: &str = "trace.attr.";

/// Attribute: the resource's claims carry an offset.
pub const ATTR_USES_OFFSET: &str = "trace.uses_offset";
/// Attribute: a claim's offset.
pub const ATTR_OFFSET: &str = "trace.offset";
/// Attribute: a dependency's source element id.
pub const ATTR_SRC: &str = "trace.src";
/// Attribute: a dependency's destination element id.
pub const ATTR_DST: &str = "trace.dst";

/// Location prefix of resources (`R3` is resource 3).
pub const RESOURCE_LOC: &str = "R";
/// Location prefix of signals (`S0` is signal 0).
pub const SIGNAL_LOC: &str = "S";

/// The time units of the `TU` line: name, stream abbreviation, nanoseconds.
pub const UNITS: [(&str, &str, u64); 6] = [
    ("NANOSECONDS", "ns", 1),
    ("MICROSECONDS", "us", 1_000),
    ("MILLISECONDS", "ms", 1_000_000),
    ("SECONDS", "s", 1_000_000_000),
    ("MINUTES", "min", 60_000_000_000),
    ("HOURS", "h", 3_600_000_000_000),
];

/// The unit a file without a `TU` line uses.
pub const DEFAULT_UNIT: usize = 3;

/// The (source, destination) endpoints of each dependency type, by type number.
pub const DEP_TYPES: [(Endpoint, Endpoint); 9] = [
    (Endpoint::ClaimStart, Endpoint::ClaimStart),
    (Endpoint::ClaimStart, Endpoint::ClaimEnd),
    (Endpoint::ClaimEnd, Endpoint::ClaimStart),
    (Endpoint::ClaimEnd, Endpoint::ClaimEnd),
    (Endpoint::Event, Endpoint::Event),
    (Endpoint::ClaimStart, Endpoint::Event),
    (Endpoint::ClaimEnd, Endpoint::Event),
    (Endpoint::Event, Endpoint::ClaimStart),
    (Endpoint::Event, Endpoint::ClaimEnd),
];

/// One end of a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// An event.
    Event,
    /// The start of a claim.
    ClaimStart,
    /// The end of a claim.
    ClaimEnd,
}

impl Endpoint {
    /// "event" or "claim", for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Endpoint::Event => "event",
            _ => "claim",
        }
    }
}

/// Decodes an attribute list and calls `each` with every key and value.
///
/// Items split on unescaped `,`, key and value on the first unescaped `=`; `\,`
/// and `\=` are unescaped (other backslashes kept); key and value are trimmed.
/// An empty list is fine; an item without `=` or with an empty key is not.
/// `key` and `value` are scratch buffers, reused so that no item allocates.
pub fn decode_attrs(
    text: &str,
    key: &mut String,
    value: &mut String,
    mut each: impl FnMut(&str, &str),
) -> Result<(), String> {
    if text.trim().is_empty() {
        return Ok(());
    }
    key.clear();
    value.clear();
    let mut in_value = false;
    let mut finish = |key: &mut String, value: &mut String, in_value: bool| {
        if !in_value {
            return Err(format!(
                "attribute `{}` has no `=` (attributes are key=value pairs separated by `,`)",
                key.trim()
            ));
        }
        let k = key.trim();
        if k.is_empty() {
            return Err("attribute with an empty key".to_string());
        }
        each(k, value.trim());
        key.clear();
        value.clear();
        Ok(())
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let target = if in_value { &mut *value } else { &mut *key };
        match c {
            '\\' if matches!(chars.peek(), Some(',' | '=')) => {
                target.push(chars.next().unwrap_or_default());
            }
            ',' => {
                finish(key, value, in_value)?;
                in_value = false;
            }
            '=' if !in_value => in_value = true,
            c => target.push(c),
        }
    }
    finish(key, value, in_value)
}

/// Appends `s` as an attribute key or value: `,` and `=` escaped, line
/// breaks (which would end the line) as spaces, white space at the ends
/// dropped (readers trim it), and a space after a final backslash so that
/// the separator that follows is not read as escaped. Returns whether the
/// text read back will differ from `s`.
pub fn escape_attr(s: &str, out: &mut String) -> bool {
    let trimmed = s.trim();
    let mut changed = trimmed.len() != s.len();
    for c in trimmed.chars() {
        match c {
            ',' | '=' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => {
                changed = true;
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    if trimmed.ends_with('\\') {
        out.push(' ');
    }
    changed
}

/// Content sniffer: the first meaningful line starts with a TRACE line letter
/// followed by white space.
pub fn sniff(p: &Probe) -> bool {
    let text = p.head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(p.head);
    for line in text.split(|&b| b == b'\n') {
        let line = line.trim_ascii_start();
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let token_end = line
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(line.len());
        let rest = &line[token_end..];
        return matches!(
            &line[..token_end],
            b"TU" | b"O" | b"T" | b"E" | b"R" | b"C" | b"D" | b"S" | b"F"
        ) && !rest.is_empty();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes an attribute list into pairs (see [`decode_attrs`]).
    fn parse_attrs(text: &str) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        let (mut k, mut v) = (String::new(), String::new());
        decode_attrs(text, &mut k, &mut v, |k, v| {
            out.push((k.to_string(), v.to_string()))
        })?;
        Ok(out)
    }

    #[test]
    fn attributes_follow_the_escaping_rules() {
        let got = parse_attrs(r"title = a\=b\, c   ,   empty\,ish = yes ,path=C:\=root").unwrap();
        let want = [
            ("title", "a=b, c"),
            ("empty,ish", "yes"),
            ("path", "C:=root"),
        ];
        assert_eq!(
            got,
            want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec()
        );
        assert_eq!(parse_attrs(r"k=a\b").unwrap()[0].1, r"a\b");
        assert_eq!(parse_attrs(" ").unwrap(), vec![]);
        assert_eq!(parse_attrs("a=b=c").unwrap()[0].1, "b=c");
        assert!(parse_attrs("novalue").is_err());
        assert!(parse_attrs(" = v").is_err());
        assert!(parse_attrs("a=1,").is_err());
        let mut out = String::new();
        assert!(!escape_attr("a=b, c", &mut out));
        assert_eq!(parse_attrs(&format!("k={out}")).unwrap()[0].1, "a=b, c");
        for (value, read_back) in [("x\\", "x\\"), (" two\nlines\r ", "two lines")] {
            out.clear();
            let changed = escape_attr(value, &mut out);
            assert_eq!(changed, value != read_back, "{value:?}");
            let list = parse_attrs(&format!("k={out}, next=1")).unwrap();
            assert_eq!(
                (list[0].1.as_str(), list.len()),
                (read_back, 2),
                "{value:?}"
            );
        }
    }
}
