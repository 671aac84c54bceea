//! Exact decimal numbers: text formats write times as decimals in some unit, the
//! stream holds integer nanoseconds. Converting through `f64` would lose
//! nanoseconds on long traces, so this module converts the digits exactly.

/// A parsed decimal number: `mantissa * 10^exp`, with its sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    /// True for a negative number (never for zero).
    pub negative: bool,
    /// The significant digits as an integer.
    pub mantissa: u128,
    /// Power of ten applied to the mantissa.
    pub exp: i32,
}

/// Most significant digits a [`Decimal`] keeps exactly.
const MAX_DIGITS: usize = 36;

impl Decimal {
    /// Parses `[+-]digits[.digits][(e|E)[+-]digits]` (also `.5` and `5.`).
    /// Rejects NaN, infinities, hexadecimal and suffixes.
    pub fn parse(text: &str) -> Option<Decimal> {
        let b = text.as_bytes();
        let mut i = 0;
        let negative = match b.first() {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut mantissa: u128 = 0;
        let mut digits = 0usize;
        let mut significant = 0usize;
        let mut exp: i64 = 0;
        let mut seen_point = false;
        while i < b.len() {
            match b[i] {
                d @ b'0'..=b'9' => {
                    digits += 1;
                    if mantissa == 0 && d == b'0' {
                        // Leading zeros are not significant.
                    } else {
                        significant += 1;
                        if significant > MAX_DIGITS {
                            return None;
                        }
                        mantissa = mantissa * 10 + u128::from(d - b'0');
                    }
                    if seen_point {
                        exp -= 1;
                    }
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            i += 1;
        }
        if digits == 0 {
            return None;
        }
        if i < b.len() {
            if !matches!(b[i], b'e' | b'E') {
                return None;
            }
            i += 1;
            let (sign, digits) = match b.get(i) {
                Some(b'-') => (-1, &text[i + 1..]),
                Some(b'+') => (1, &text[i + 1..]),
                _ => (1, &text[i..]),
            };
            if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|c| c.is_ascii_digit())
            {
                return None;
            }
            exp += sign * digits.parse::<i64>().ok()?;
        }
        Some(Decimal {
            negative: negative && mantissa != 0,
            mantissa,
            exp: i32::try_from(exp).ok()?,
        })
    }

    /// True when the number is greater than zero.
    pub fn is_positive(&self) -> bool {
        !self.negative && self.mantissa != 0
    }

    /// True when the number has no fractional part.
    pub fn is_integer(&self) -> bool {
        if self.exp >= 0 || self.mantissa == 0 {
            return true;
        }
        let scale = 10u128.checked_pow(self.exp.unsigned_abs());
        scale.is_some_and(|s| self.mantissa % s == 0)
    }

    /// The value times `factor`, rounded to the nearest integer (halves away from
    /// zero), with `true` when rounding changed it. `None` when out of i64 range.
    pub fn scaled(&self, factor: u64) -> Option<(i64, bool)> {
        let base = self.mantissa.checked_mul(u128::from(factor))?;
        let (magnitude, inexact) = if self.exp >= 0 {
            let p = 10u128.checked_pow(self.exp.unsigned_abs())?;
            (base.checked_mul(p)?, false)
        } else {
            match 10u128.checked_pow(self.exp.unsigned_abs()) {
                Some(div) => {
                    let (q, r) = (base / div, base % div);
                    (if r * 2 >= div { q + 1 } else { q }, r != 0)
                }
                // Smaller than any representable unit: rounds to zero.
                None => (0, base != 0),
            }
        };
        let magnitude = i128::try_from(magnitude).ok()?;
        let value = if self.negative { -magnitude } else { magnitude };
        Some((i64::try_from(value).ok()?, inexact))
    }

    /// The exact sum `self + other`, or `None` when it needs more than 36 digits.
    pub fn add(&self, other: &Decimal) -> Option<Decimal> {
        let exp = self.exp.min(other.exp);
        let widen = |d: &Decimal| -> Option<i128> {
            let m = i128::try_from(
                d.mantissa
                    .checked_mul(10u128.checked_pow((d.exp - exp).unsigned_abs())?)?,
            )
            .ok()?;
            Some(if d.negative { -m } else { m })
        };
        let sum = widen(self)?.checked_add(widen(other)?)?;
        let mut d = Decimal {
            negative: sum < 0,
            mantissa: sum.unsigned_abs(),
            exp,
        };
        // Keep the mantissa small: drop trailing zeros of the fraction.
        while d.exp < 0 && d.mantissa != 0 && d.mantissa % 10 == 0 {
            d.mantissa /= 10;
            d.exp += 1;
        }
        if d.mantissa == 0 {
            d.exp = 0;
        }
        (d.mantissa < 10u128.pow(MAX_DIGITS as u32)).then_some(d)
    }

    /// Compares two values exactly (falling back to `f64` when their
    /// difference needs more than 36 digits).
    pub fn compare(&self, other: &Decimal) -> std::cmp::Ordering {
        match self.add(&other.neg()) {
            Some(d) if d.mantissa == 0 => std::cmp::Ordering::Equal,
            Some(d) if d.negative => std::cmp::Ordering::Less,
            Some(_) => std::cmp::Ordering::Greater,
            None => self.to_f64().total_cmp(&other.to_f64()),
        }
    }

    /// The negated value.
    pub fn neg(&self) -> Decimal {
        Decimal {
            negative: !self.negative && self.mantissa != 0,
            ..*self
        }
    }

    /// The quotient `self / n` as the nearest `f64` to its first 24
    /// significant digits (a mean of exact values: `0.6 / 3` is `0.2`, where
    /// `f64` arithmetic gives `0.19999999999999998`).
    pub fn div_to_f64(&self, n: u64) -> f64 {
        let n = u128::from(n.max(1));
        let mut digits = (self.mantissa / n).to_string();
        let mut remainder = self.mantissa % n;
        let mut exp = i64::from(self.exp);
        // Significant digits past the integer part, while they matter.
        let significant = |d: &str| d.trim_start_matches('0').len();
        while remainder != 0 && significant(&digits) < 24 {
            remainder *= 10;
            digits.push(char::from(b'0' + (remainder / n) as u8));
            remainder %= n;
            exp -= 1;
        }
        let sign = if self.negative { "-" } else { "" };
        format!("{sign}{digits}e{exp}").parse().unwrap_or(f64::NAN)
    }

    /// The value as `f64` (for comparisons and statistics, not for times).
    pub fn to_f64(&self) -> f64 {
        let v = self.mantissa as f64 * 10f64.powi(self.exp);
        if self.negative {
            -v
        } else {
            v
        }
    }
}

/// Fast path for the common time syntax `digits[.digits]` with at most nine
/// decimals: integer nanoseconds without building a [`Decimal`]. `None` for
/// anything else (the caller falls back to [`Decimal::parse`]).
#[inline]
pub fn plain_seconds_to_ns(text: impl AsRef<[u8]>) -> Option<i64> {
    const POW: [i64; 10] = [
        1_000_000_000,
        100_000_000,
        10_000_000,
        1_000_000,
        100_000,
        10_000,
        1_000,
        100,
        10,
        1,
    ];
    // One pass: whole seconds up to the point, then at most nine decimals.
    let b = text.as_ref();
    let mut secs: i64 = 0;
    let mut i = 0;
    while i < b.len() && b[i] != b'.' {
        let d = b[i].wrapping_sub(b'0');
        if d > 9 || i == 9 {
            return None;
        }
        secs = secs * 10 + i64::from(d);
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut ns: i64 = 0;
    let mut decimals = 0;
    for &c in b.get(i + 1..).unwrap_or_default() {
        let d = c.wrapping_sub(b'0');
        if d > 9 || decimals == 9 {
            return None;
        }
        ns = ns * 10 + i64::from(d);
        decimals += 1;
    }
    Some(secs * 1_000_000_000 + ns * POW[decimals])
}

impl Decimal {
    /// Appends the number in plain decimal notation without exponent
    /// (`1.75`, `-0.001`, `1200`), as `Display` writes it: variables write
    /// one per row, so without `core::fmt` and with 64-bit division when the
    /// mantissa fits (a `u128` division is a call per digit).
    pub fn push_to(&self, out: &mut String) {
        let mut buf = itoa::Buffer::new();
        let mut wide = [0u8; 40];
        let digits = match u64::try_from(self.mantissa) {
            Ok(m) => buf.format(m),
            Err(_) => u128_digits(self.mantissa, &mut wide),
        };
        if self.negative {
            out.push('-');
        }
        if self.exp >= 0 {
            out.push_str(digits);
            out.extend(std::iter::repeat_n('0', self.exp as usize));
            return;
        }
        let frac = self.exp.unsigned_abs() as usize;
        let (int, fraction, zeros) = if digits.len() > frac {
            let (a, b) = digits.split_at(digits.len() - frac);
            (a, b, 0)
        } else {
            ("0", digits, frac - digits.len())
        };
        let fraction = fraction.trim_end_matches('0');
        out.push_str(int);
        if !fraction.is_empty() {
            out.push('.');
            out.extend(std::iter::repeat_n('0', zeros));
            out.push_str(fraction);
        }
    }
}

/// The decimal digits of `m`, written at the end of `buf` (a `u128` has at
/// most 39).
fn u128_digits(mut m: u128, buf: &mut [u8; 40]) -> &str {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[start..]).unwrap_or_default()
}

impl std::fmt::Display for Decimal {
    /// Plain decimal notation without exponent (see [`Decimal::push_to`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = String::new();
        self.push_to(&mut text);
        f.write_str(&text)
    }
}

/// Writes `value / factor` as a short decimal that [`Decimal::scaled`] turns back
/// into exactly `value` (exact when `factor` is a power of ten).
pub fn format_scaled(value: i64, factor: u64) -> String {
    let mut out = String::new();
    push_scaled(&mut out, value, factor);
    out
}

/// Appends `value / factor` as [`format_scaled`] writes it.
pub fn push_scaled(out: &mut String, value: i64, factor: u64) {
    out.push_str(scaled(value, factor, &mut [0; SCALED_MAX]));
}

/// Room for the longest text [`scaled`] writes: sign, 20 digits, point, 18 digits.
pub const SCALED_MAX: usize = 40;

/// `value / factor` as a short decimal, written into `buf` (no allocation,
/// for writers that print one per row).
pub fn scaled(value: i64, factor: u64, buf: &mut [u8; SCALED_MAX]) -> &str {
    let magnitude = value.unsigned_abs();
    let (q, mut r) = (magnitude / factor, magnitude % factor);
    let mut len = 0;
    let mut put = |b: u8| {
        buf[len] = b;
        len += 1;
    };
    if value < 0 {
        put(b'-');
    }
    for &b in itoa::Buffer::new().format(q).as_bytes() {
        put(b);
    }
    if r != 0 {
        put(b'.');
        // Long division; 18 digits leave an error far below half a unit of
        // `value` for every factor used here (at most 3.6e12).
        for _ in 0..18 {
            let wide = u128::from(r) * 10;
            put(b'0' + (wide / u128::from(factor)) as u8);
            r = (wide % u128::from(factor)) as u64;
            if r == 0 {
                break;
            }
        }
        while buf[len - 1] == b'0' {
            len -= 1;
        }
    }
    std::str::from_utf8(&buf[..len]).expect("ASCII digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_quotients() {
        let q = |text: &str, n: u64| Decimal::parse(text).unwrap().div_to_f64(n);
        assert_eq!(q("0.6", 3), 0.2);
        assert_eq!(q("1", 3), 1.0 / 3.0);
        assert_eq!(q("-7.5", 2), -3.75);
        assert_eq!(q("1e300", 7), 1e300 / 7.0);
        assert_eq!(q("0", 5), 0.0);
    }

    #[test]
    fn scaled_values_are_exact_and_short() {
        let cases: [(i64, u64, &str); 7] = [
            (1500, 1_000, "1.5"),
            (1_000_000, 1_000_000, "1"),
            (-5, 1_000, "-0.005"),
            (0, 1_000_000_000, "0"),
            (123_456_789_012, 1_000_000_000, "123.456789012"),
            (i64::MIN, 1_000_000_000, "-9223372036.854775808"),
            (i64::MIN, 1, "-9223372036854775808"),
        ];
        for (value, factor, want) in cases {
            assert_eq!(
                scaled(value, factor, &mut [0; SCALED_MAX]),
                want,
                "{value} / {factor}"
            );
        }
    }

    fn ns(text: &str, factor: u64) -> (i64, bool) {
        Decimal::parse(text).unwrap().scaled(factor).unwrap()
    }

    #[test]
    fn parses_java_style_decimals() {
        assert_eq!(ns("13.2", 1_000_000_000), (13_200_000_000, false));
        assert_eq!(ns(".5", 1_000), (500, false));
        assert_eq!(ns("5.", 1), (5, false));
        assert_eq!(ns("+1e-3", 1_000_000_000), (1_000_000, false));
        assert_eq!(ns("2.5E2", 1), (250, false));
        assert_eq!(ns("-0.0e0", 1), (0, false));
        assert_eq!(ns("100.5", 1), (101, true));
        assert_eq!(ns("-100.5", 1), (-101, true));
        assert_eq!(ns("0.0833", 1_000_000), (83_300, false));
        assert_eq!(ns("1e-30", 1), (0, true));
        for bad in [
            "", ".", "-", "NaN", "Infinity", "0x10", "1.0d", "1e", "1e+", "1..2", "1e-+3", "1 2",
        ] {
            assert!(Decimal::parse(bad).is_none(), "{bad}");
        }
        assert!(Decimal::parse("1e400").unwrap().scaled(1).is_none());
        assert!(Decimal::parse("0").map(|d| !d.is_positive()).unwrap());
        assert!(Decimal::parse("1600000000000").unwrap().is_integer());
        assert!(!Decimal::parse("1600000000000.5").unwrap().is_integer());
        assert!(Decimal::parse("12.50e1").unwrap().is_integer());
    }

    #[test]
    fn fast_seconds_agree_with_the_general_path() {
        for t in [
            "0",
            "1",
            "0.5",
            "12.345678901",
            "123456789.123456789",
            "7.",
            "0.000000001",
            "000012.5",
            "999999999.999999999",
        ] {
            let general = Decimal::parse(t).unwrap().scaled(1_000_000_000).unwrap().0;
            if let Some(fast) = plain_seconds_to_ns(t) {
                assert_eq!(fast, general, "{t}");
            }
        }
        for t in [
            "",
            ".5",
            "1e3",
            "-1",
            "+1",
            "1.0000000001",
            "1234567890",
            "1.2.3",
            "1 ",
        ] {
            assert_eq!(plain_seconds_to_ns(t), None, "{t}");
        }
    }

    #[test]
    fn adds_exactly() {
        let d = |s: &str| Decimal::parse(s).unwrap();
        assert_eq!(d("0.1").add(&d("0.2")).unwrap().to_string(), "0.3");
        assert_eq!(d("1.5").add(&d("-2.25")).unwrap().to_string(), "-0.75");
        assert_eq!(d("1e3").add(&d("1")).unwrap().to_string(), "1001");
        assert_eq!(d("5").add(&d("-5")).unwrap().to_string(), "0");
        assert_eq!(d("123456789.123").to_string(), "123456789.123");
        assert_eq!(d("2.5").neg().to_string(), "-2.5");
        for (text, shown) in [
            ("-0.001", "-0.001"),
            ("0.05", "0.05"),
            ("1.2e3", "1200"),
            ("1.50", "1.5"),
            ("100.000", "100"),
            ("0", "0"),
            // Mantissas past 64 bits take the 128-bit digits.
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            ("-1844674407370955161.7", "-1844674407370955161.7"),
            ("18446744073709551616e-25", "0.0000018446744073709551616"),
        ] {
            assert_eq!(d(text).to_string(), shown, "{text}");
        }
        assert!(d("1e30").add(&d("1e-30")).is_none());
    }

    #[test]
    fn formats_back_exactly() {
        for (v, f) in [
            (13_200_000_000i64, 1_000_000_000u64),
            (1, 60_000_000_000),
            (-7, 3_600_000_000_000),
            (123_456_789, 1_000),
            (0, 1),
            (i64::MAX, 60_000_000_000),
        ] {
            let s = format_scaled(v, f);
            assert_eq!(ns(&s, f).0, v, "{v} / {f} = {s}");
        }
        assert_eq!(format_scaled(13_200_000_000, 1_000_000_000), "13.2");
        assert_eq!(format_scaled(-500, 1_000), "-0.5");
    }
}
