//! Time values on the command line and time windows.

use crate::model::record::{Kind, Record};

/// How a time is written on the command line, for messages and `--help`.
pub const TIME_SYNTAX: &str = "nanoseconds from the trace's origin: a bare number is ns \
(15, 1e9); a decimal with a unit is exact (1.5ms, 2s, 10us, 1min, 1h); negative is before the origin";

/// Parses a time given by a user: a bare number in nanoseconds, or a decimal
/// number (with an optional exponent, `1e9`, `2.5e-3s`) followed by a unit
/// `ns`, `us` (or `µs`), `ms`, `s`, `min`, `h`. Exact: no floating point.
pub fn parse_time(text: &str) -> Result<i64, String> {
    let s = text.trim();
    let bad = |why: &str| format!("bad time `{text}`: {why} (a time is {TIME_SYNTAX})");
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, rest) = s.split_at(digits_end);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(bad("expected a number"));
    }
    let (exponent, unit) = split_exponent(rest).ok_or_else(|| bad("bad exponent"))?;
    let unit_ns: i128 = match unit {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        other => return Err(bad(&format!("unknown unit `{other}`"))),
    };
    // value = mantissa × 10^power × unit, computed exactly.
    let too_big = || bad("out of range");
    let mut mantissa: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(i128::from(b - b'0')))
            .ok_or_else(too_big)?;
    }
    let power = exponent - frac.len() as i64;
    let mut value = mantissa.checked_mul(unit_ns).ok_or_else(too_big)?;
    if power >= 0 {
        let scale = u32::try_from(power)
            .ok()
            .and_then(|p| 10i128.checked_pow(p));
        value = scale
            .and_then(|f| value.checked_mul(f))
            .ok_or_else(too_big)?;
    } else {
        let divisor = u32::try_from(-power)
            .ok()
            .and_then(|p| 10i128.checked_pow(p));
        match divisor {
            Some(d) if value % d == 0 => value /= d,
            _ if value == 0 => {}
            _ => return Err(bad("finer than a nanosecond")),
        }
    }
    if neg {
        value = -value;
    }
    i64::try_from(value).map_err(|_| too_big())
}

/// Splits `e9ms` into (9, "ms"); text without an exponent gives (0, text).
/// None when an `e` is followed by a sign or digits that do not make one.
fn split_exponent(rest: &str) -> Option<(i64, &str)> {
    let Some(after) = rest.strip_prefix(['e', 'E']) else {
        return Some((0, rest.trim()));
    };
    let sign_len = usize::from(after.starts_with(['-', '+']));
    let end = after[sign_len..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(after.len(), |i| i + sign_len);
    if end == sign_len {
        // Not an exponent: `e` starts the unit (an unknown one).
        return (sign_len == 0).then_some((0, rest.trim()));
    }
    let exponent: i64 = after[..end].parse().ok()?;
    (exponent.abs() <= 40).then_some((exponent, after[end..].trim()))
}

/// The window between two optional times given on the command line under
/// `names` (`("--from", "--to")`): `None` when neither is given; an empty
/// window is refused.
pub fn parse_window(
    start: Option<&str>,
    end: Option<&str>,
    names: (&str, &str),
) -> Result<Option<Window>, String> {
    let (s, e) = (
        start.map(parse_time).transpose()?,
        end.map(parse_time).transpose()?,
    );
    if let (Some(s), Some(e)) = (s, e) {
        if e <= s {
            return Err(format!(
                "empty window: {} ({e} ns) is not after {} ({s} ns)",
                names.1, names.0
            ));
        }
    }
    // The window ends before its end bound: nothing is before the first
    // time a stream holds.
    if e == Some(i64::MIN) {
        return Err(format!(
            "empty window: no time is before {} ({} ns)",
            names.1,
            i64::MIN
        ));
    }
    Ok((s.is_some() || e.is_some()).then(|| Window::new(s, e)))
}

/// A half-open time window `[start, end)` in stream nanoseconds; with no
/// end, `[start, ∞)`: every time from `start` on, the last one too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First instant inside (`i64::MIN`, the first a stream holds, when
    /// the window has no start).
    pub start: i64,
    /// First instant after; None: the window is open at its end.
    pub end: Option<i64>,
}

impl Window {
    /// A window from optional bounds (missing ones are unbounded).
    pub fn new(start: Option<i64>, end: Option<i64>) -> Window {
        Window {
            start: start.unwrap_or(i64::MIN),
            end,
        }
    }

    /// Whether `t` is before the window's end (every time is, with none).
    pub fn ends_after(&self, t: i64) -> bool {
        self.end.is_none_or(|end| t < end)
    }

    /// The window of `width` ns centred on `center` (the odd nanosecond of an
    /// odd width goes after it).
    pub fn around(center: i64, width: i64) -> Result<Window, String> {
        let start = center.checked_sub(width / 2);
        let end = start.and_then(|s| s.checked_add(width));
        match (start, end) {
            _ if width <= 0 => Err(format!("--width must be positive, not {width} ns")),
            (Some(start), Some(end)) => Ok(Window {
                start,
                end: Some(end),
            }),
            _ => Err("the window around that time is out of range".into()),
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
            // Alive from its creation on.
            (Kind::Container, None) => return self.ends_after(t),
            (_, Some(e)) => e,
            (_, None) => t,
        };
        let (lo, hi) = (t.min(until), t.max(until));
        if lo == hi {
            self.start <= lo && self.ends_after(lo)
        } else {
            self.ends_after(lo) && hi > self.start
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_from_bounds_and_around_a_time() {
        let names = ("--from", "--to");
        assert_eq!(parse_window(None, None, names), Ok(None));
        assert_eq!(
            parse_window(Some("1us"), None, names),
            Ok(Some(Window::new(Some(1000), None)))
        );
        assert!(parse_window(Some("2"), Some("2"), names)
            .unwrap_err()
            .starts_with("empty window: --to (2 ns) is not after --from (2 ns)"));
        assert_eq!(Window::around(10, 5), Ok(Window::new(Some(8), Some(13))));
        assert!(Window::around(10, 0).is_err());
        assert!(Window::around(i64::MIN, 4).is_err());
    }

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
        assert_eq!(parse_time("1e3").unwrap(), 1_000);
        assert_eq!(parse_time("2.5e-3s").unwrap(), 2_500_000);
        assert_eq!(parse_time("1E9").unwrap(), 1_000_000_000);
        assert_eq!(parse_time("-0.5s").unwrap(), -500_000_000);
        assert_eq!(parse_time(".5us").unwrap(), 500);
        assert_eq!(parse_time("0.0").unwrap(), 0);
        assert!(parse_time("1e-1").is_err());
        assert!(parse_time("1e").is_err());
        assert!(parse_time("1e+").is_err());
        assert!(parse_time("1.2.3").is_err());
        assert!(parse_time("1e99").is_err());
        // The messages say the rule.
        let e = parse_time("1.5").unwrap_err();
        assert!(
            e.contains("finer than a nanosecond") && e.contains("a bare number is ns"),
            "{e}"
        );
        let e = parse_time("3 parsecs").unwrap_err();
        assert!(
            e.contains("unknown unit `parsecs`") && e.contains("1.5ms"),
            "{e}"
        );
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

    #[test]
    fn an_open_end_holds_the_last_instant() {
        let names = ("--from", "--to");
        let w = parse_window(Some("10"), None, names).unwrap().unwrap();
        let mut r = Record::new(Kind::Event);
        for (t, inside) in [(9, false), (10, true), (i64::MAX, true)] {
            r.time = Some(t);
            assert_eq!(w.contains(&r), inside, "{t}");
        }
        let last = parse_window(Some(&i64::MAX.to_string()), None, names);
        assert_eq!(last, Ok(Some(Window::new(Some(i64::MAX), None))));
    }
}
