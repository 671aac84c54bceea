//! Row selection that keeps the output a valid stream.
//!
//! [`Predicate`] decides about one row. [`FilterSink`] applies it and makes sure
//! every kept row's `container` rows (its location, its peer, and their
//! ancestors) are written before it: container rows are held back until a kept
//! row refers to them. Memory: one record per declared container.

use crate::fasthash::FastMap;

use regex::Regex;

use super::window::Window;
use crate::error::{Error, Result};
use crate::format::RecordSink;
use crate::record::{Kind, Record};

/// A shell-style glob: `*` any run, `?` one character, `[abc]`, `[a-z]`, `[!x]`.
#[derive(Debug, Clone)]
pub struct Glob {
    pattern: Vec<char>,
}

impl Glob {
    /// Compiles `pattern`, rejecting unclosed brackets.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '[' {
                match chars[i + 1..].iter().skip(1).position(|&c| c == ']') {
                    Some(_) => {}
                    None => return Err(format!("bad glob `{pattern}`: unclosed `[`")),
                }
            }
            i += 1;
        }
        Ok(Glob { pattern: chars })
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        glob_match(&self.pattern, &text)
    }
}

fn glob_match(p: &[char], t: &[char]) -> bool {
    // Iterative matcher with backtracking to the last `*` (linear in practice).
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, next)) = class_match(&p[pi..], t[ti]) {
                        if matched {
                            pi += next;
                            ti += 1;
                            continue;
                        }
                    }
                }
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Matches `c` against the class at the start of `p` (`[...]`); returns whether
/// it matched and the class length.
fn class_match(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(1), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() && (p[i] != ']' || first) {
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    (i < p.len()).then_some((matched != negate, i + 1))
}

/// One `--attr` condition: the key is present, or present with this value.
#[derive(Debug, Clone)]
pub struct AttrCondition {
    /// Attribute key.
    pub key: String,
    /// Required value, or `None` for presence only.
    pub value: Option<String>,
}

impl AttrCondition {
    /// Parses `key=value` or `key`.
    pub fn parse(s: &str) -> Result<AttrCondition, String> {
        let (key, value) = match s.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (s, None),
        };
        if key.is_empty() {
            return Err(format!("bad attribute condition `{s}`: empty key"));
        }
        Ok(AttrCondition {
            key: key.to_string(),
            value,
        })
    }
}

/// The conditions of `trace-filter`; all given conditions must hold.
#[derive(Debug, Clone, Default)]
pub struct Predicate {
    /// Kinds to keep (any of them); empty keeps every kind.
    pub kinds: Vec<Kind>,
    /// Location globs (any of them); empty keeps every location.
    pub locs: Vec<Glob>,
    /// Category globs (any of them).
    pub cats: Vec<Glob>,
    /// Regular expression the `name` must match (anywhere; anchor it for whole names).
    pub name: Option<Regex>,
    /// Time window the row must overlap.
    pub window: Option<Window>,
    /// Attribute conditions (all of them).
    pub attrs: Vec<AttrCondition>,
    /// Keep the rows that do *not* match instead.
    pub invert: bool,
}

impl Predicate {
    /// Whether `rec` is selected (after `invert`). `meta` and `type` rows are
    /// always selected (they describe the stream).
    pub fn selects(&self, rec: &Record) -> bool {
        if matches!(rec.kind, Kind::Meta | Kind::Type) {
            return true;
        }
        self.matches(rec) != self.invert
    }

    fn matches(&self, rec: &Record) -> bool {
        (self.kinds.is_empty() || self.kinds.contains(&rec.kind))
            && (self.locs.is_empty() || self.locs.iter().any(|g| g.is_match(&rec.loc)))
            && (self.cats.is_empty() || self.cats.iter().any(|g| g.is_match(&rec.cat)))
            && self.name.as_ref().is_none_or(|re| re.is_match(&rec.name))
            && self.window.is_none_or(|w| w.contains(rec))
            && self.attrs.iter().all(|c| match rec.attr(&c.key) {
                Some(v) => c.value.as_ref().is_none_or(|want| *want == v),
                None => false,
            })
    }
}

struct Held {
    rec: Record,
    written: bool,
}

/// A sink stage that keeps the rows selected by a [`Predicate`] and the
/// `container` rows they need.
pub struct FilterSink<S> {
    next: S,
    predicate: Predicate,
    containers: FastMap<String, Held>,
}

impl<S: RecordSink> FilterSink<S> {
    /// A filter writing into `next`.
    pub fn new(next: S, predicate: Predicate) -> FilterSink<S> {
        FilterSink {
            next,
            predicate,
            containers: FastMap::default(),
        }
    }

    /// Writes the container row of `loc` and its ancestors, outermost first,
    /// unless written already.
    fn ensure(&mut self, loc: &str) -> Result<()> {
        let mut chain: Vec<String> = Vec::new();
        let mut at = loc;
        while let Some(held) = self.containers.get(at) {
            if held.written || chain.iter().any(|c| c == at) {
                break;
            }
            chain.push(at.to_string());
            at = &held.rec.peer;
            if at.is_empty() {
                break;
            }
        }
        for loc in chain.iter().rev() {
            if let Some(held) = self.containers.get_mut(loc) {
                held.written = true;
                self.next.write(&held.rec)?;
            }
        }
        Ok(())
    }
}

impl<S: RecordSink> RecordSink for FilterSink<S> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        let selected = self.predicate.selects(rec);
        if rec.kind == Kind::Container {
            let held = Held {
                rec: rec.clone(),
                written: false,
            };
            if let Some(old) = self.containers.insert(rec.loc.clone(), held) {
                if old.written && old.rec == *rec {
                    // An identical re-declaration (merged inputs): already written.
                    if let Some(h) = self.containers.get_mut(&rec.loc) {
                        h.written = true;
                    }
                    return Ok(());
                }
            }
            if selected {
                self.ensure(&rec.loc)?;
            }
            return Ok(());
        }
        if !selected {
            return Ok(());
        }
        if !rec.loc.is_empty() {
            self.ensure(&rec.loc)?;
        }
        if !rec.peer.is_empty() && self.containers.contains_key(&rec.peer) {
            self.ensure(&rec.peer)?;
        }
        self.next.write(rec)
    }

    fn finish(&mut self) -> Result<()> {
        self.next.finish()
    }
}

/// Compiles a `--name` regular expression with a usage error on failure.
pub fn compile_name(pattern: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|e| Error::Usage(format!("bad --name regex: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let g = |p: &str, t: &str| Glob::new(p).unwrap().is_match(t);
        assert!(g("p*", "p12"));
        assert!(g("*", ""));
        assert!(g("p?", "p1"));
        assert!(!g("p?", "p12"));
        assert!(g("rank[0-3]/*", "rank2/thread0"));
        assert!(!g("rank[!0-3]*", "rank2"));
        assert!(g("a*b*c", "axxbyyc"));
        assert!(!g("a*b*c", "axxbyy"));
        assert!(g("[]]", "]"));
        assert!(Glob::new("p[").is_err());
    }
}
