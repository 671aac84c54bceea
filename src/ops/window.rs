//! Time values on the command line and time windows.

use crate::record::{Kind, Record};

/// Parses a time given by a user: integer nanoseconds, or a decimal number with a
/// unit `ns`, `us` (or `µs`), `ms`, `s`, `min`, `h`. Exact: no floating point.
pub fn parse_time(text: &str) -> Result<i64, String> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let scale: i128 = match unit.trim() {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        other => {
            return Err(format!(
                "bad time `{text}`: unknown unit `{other}` (use ns, us, ms, s, min or h)"
            ))
        }
    };
    let bad = || format!("bad time `{text}`: expected a number with an optional unit, like 1.5ms");
    let (neg, digits) = match number.as_bytes().first() {
        Some(b'-') => (true, &number[1..]),
        Some(b'+') => (false, &number[1..]),
        _ => (false, number),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let mut value: i128 = 0;
    for b in int.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b - b'0')))
            .ok_or_else(bad)?;
    }
    value = value.checked_mul(scale).ok_or_else(bad)?;
    let mut place = scale;
    for b in frac.bytes() {
        place /= 10;
        if place == 0 {
            if b != b'0' {
                return Err(format!("bad time `{text}`: finer than a nanosecond"));
            }
            continue;
        }
        value += i128::from(b - b'0') * place;
    }
    if neg {
        value = -value;
    }
    i64::try_from(value).map_err(|_| format!("bad time `{text}`: out of range"))
}

/// A half-open time window `[start, end)` in stream nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First instant inside.
    pub start: i64,
    /// First instant after.
    pub end: i64,
}

impl Window {
    /// A window from optional bounds (missing ones are unbounded).
    pub fn new(start: Option<i64>, end: Option<i64>) -> Window {
        Window {
            start: start.unwrap_or(i64::MIN),
            end: end.unwrap_or(i64::MAX),
        }
    }

    /// Whether `rec` lies in the window. A point row is inside when
    /// `start <= time < end`; a row with an extent (`time`..`end`, or a container's
    /// lifetime) is inside when it overlaps the window. Rows without a time
    /// (meta, timeless containers) are always inside.
    pub fn contains(&self, rec: &Record) -> bool {
        let Some(t) = rec.time else {
            return true;
        };
        let until = match (rec.kind, rec.end) {
            (Kind::Container, None) => i64::MAX,
            (_, Some(e)) => e,
            (_, None) => t,
        };
        let (lo, hi) = (t.min(until), t.max(until));
        if lo == hi {
            self.start <= lo && lo < self.end
        } else {
            lo < self.end && hi > self.start
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_exactly() {
        assert_eq!(parse_time("15").unwrap(), 15);
        assert_eq!(parse_time("1.5ms").unwrap(), 1_500_000);
        assert_eq!(parse_time("0.000000001s").unwrap(), 1);
        assert_eq!(parse_time("-2us").unwrap(), -2_000);
        assert_eq!(parse_time("2min").unwrap(), 120_000_000_000);
        assert!(parse_time("1.5").is_err());
        assert!(parse_time("1x").is_err());
        assert!(parse_time("").is_err());
        assert!(parse_time("99999999999h").is_err());
    }

    #[test]
    fn window_overlap() {
        let w = Window::new(Some(10), Some(20));
        let mut r = Record::new(Kind::Event);
        for (t, inside) in [(9, false), (10, true), (19, true), (20, false)] {
            r.time = Some(t);
            assert_eq!(w.contains(&r), inside, "{t}");
        }
        r.kind = Kind::State;
        for (t, e, inside) in [
            (0, 10, false),
            (0, 11, true),
            (19, 30, true),
            (20, 30, false),
        ] {
            r.time = Some(t);
            r.end = Some(e);
            assert_eq!(w.contains(&r), inside, "{t}..{e}");
        }
    }
}
