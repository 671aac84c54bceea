//! TRACE (`.etf`), the text format of TNO-ESI's TRACE4CPS: events, resources and
//! claims, dependencies, and signals as piecewise polynomials.
//!
//! `reader.rs` validates a file and maps it to the stream, `writer.rs` maps a
//! stream back; this module holds the syntax both share. The mapping is
//! documented in `docs/formats.md`.

pub mod reader;
pub mod writer;

use crate::format::Probe;

/// Prefix of the attribute keys and meta names that carry TRACE fields which
/// have no stream column. Source attributes keep their own keys.
pub const PREFIX: &str = "trace.";

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

/// What each dependency type links: (source is a claim, source at claim end,
/// destination is a claim, destination at claim end). Events have no end.
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

/// The dependency type linking `src` to `dst`.
pub fn dep_type(src: Endpoint, dst: Endpoint) -> Option<usize> {
    DEP_TYPES.iter().position(|&(s, d)| s == src && d == dst)
}

/// Decodes an attribute list: items split on unescaped `,`, key and value on the
/// first unescaped `=`, `\,` and `\=` unescaped (other backslashes kept), both
/// trimmed. An empty list is fine; an item without `=` or with an empty key is not.
pub fn parse_attrs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    if text.trim().is_empty() {
        return Ok(out);
    }
    let mut key = String::new();
    let mut value = String::new();
    let mut in_value = false;
    let mut chars = text.chars().peekable();
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
        out.push((k.to_string(), value.trim().to_string()));
        key.clear();
        value.clear();
        Ok(())
    };
    while let Some(c) = chars.next() {
        let target = if in_value { &mut value } else { &mut key };
        match c {
            '\\' if matches!(chars.peek(), Some(',' | '=')) => {
                target.push(chars.next().unwrap_or_default());
            }
            ',' => {
                finish(&mut key, &mut value, in_value)?;
                in_value = false;
            }
            '=' if !in_value => in_value = true,
            c => target.push(c),
        }
    }
    finish(&mut key, &mut value, in_value)?;
    Ok(out)
}

/// Appends `s` with `,` and `=` escaped (and a backslash before either kept
/// apart), trimmed spaces protected by the reader's trimming rule being moot:
/// keys and values are written as they are stored, which are already trimmed.
pub fn escape_attr(s: &str, out: &mut String) {
    for c in s.chars() {
        if c == ',' || c == '=' {
            out.push('\\');
        }
        out.push(c);
    }
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

    #[test]
    fn attributes_follow_the_escaping_rules() {
        let got = parse_attrs(r"title = a\=b\, c   ,   empty\,ish = yes ,path=C:\=root").unwrap();
        let want = [("title", "a=b, c"), ("empty,ish", "yes"), ("path", "C:=root")];
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
        escape_attr("a=b, c", &mut out);
        assert_eq!(parse_attrs(&format!("k={out}")).unwrap()[0].1, "a=b, c");
    }
}
