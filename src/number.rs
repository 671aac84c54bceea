//! Integers as the stream writes them: canonical decimal parsing (so writing a
//! parsed value back gives the same bytes) and printing through `itoa`.

/// Appends the decimal form of `n`.
#[inline]
pub fn push_int(out: &mut Vec<u8>, n: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Appends the decimal form of `n`.
#[inline]
pub fn push_uint(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Parses a canonical decimal integer (`0`, or an optional `-` and digits without
/// a leading zero), so that writing it back gives the same bytes.
#[inline]
pub fn parse_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_uint(digits)?;
    if neg {
        if magnitude == 0 {
            return None;
        }
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Parses a canonical unsigned decimal integer.
#[inline]
pub fn parse_uint(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || (s[0] == b'0' && s.len() > 1) {
        return None;
    }
    match s.len() {
        1..=8 => eight_digits(s),
        9..=16 => {
            let (high, low) = s.split_at(s.len() - 8);
            Some(eight_digits(high)? * 100_000_000 + eight_digits(low)?)
        }
        _ => parse_uint_slow(s),
    }
}

/// Up to eight ASCII digits as a number, all eight bytes at once.
#[inline]
fn eight_digits(s: &[u8]) -> Option<u64> {
    const LOW_NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    let zeros = crate::swar::splat(b'0');
    // Padded with '0' digits after the given ones, shifted out below.
    let given = match s.len() {
        8 => u64::MAX,
        n => (1u64 << (8 * n)) - 1,
    };
    let w = crate::swar::load_zero_padded(s) | (zeros & !given);
    // Each byte 0x30..=0x39: high nibble 3, and adding 6 keeps it 3.
    let high_nibbles = !LOW_NIBBLES;
    if w & high_nibbles != zeros || w.wrapping_add(crate::swar::splat(6)) & high_nibbles != zeros {
        return None;
    }
    // The digits' values, the first in the high byte, zeros before it.
    let v = (w - zeros) << (8 * (8 - s.len()));
    // Pairs, then fours, then all eight (the first digit is the most
    // significant, and it sits in the lowest byte of a little-endian word).
    let v = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = (v * 100 + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some((v * 10_000 + (v >> 32)) & 0xFFFF_FFFF)
}

/// [`parse_uint`] digit by digit, with overflow checks (17 to 20 digits).
fn parse_uint_slow(s: &[u8]) -> Option<u64> {
    let mut n: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_parsing_agrees_with_digit_by_digit() {
        let mut cases: Vec<String> = Vec::new();
        for n in [
            0u64,
            1,
            9,
            10,
            99,
            12345678,
            99999999,
            100000000,
            123456789012,
            9999999999999999,
            10000000000000000,
            u64::MAX,
        ] {
            cases.push(n.to_string());
        }
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x >> (x % 64)).to_string());
        }
        for bad in [
            "1a",
            "a1",
            "12:4",
            "1/3",
            "1234567x",
            "12345678x",
            " 12",
            "12 ",
            "0012",
        ] {
            cases.push(bad.to_string());
        }
        for case in &cases {
            let canonical = case == "0" || !case.starts_with('0');
            let want = parse_uint_slow(case.as_bytes()).filter(|_| canonical);
            assert_eq!(parse_uint(case.as_bytes()), want, "{case}");
        }
        // Every byte value in every position of short numbers.
        for len in 1..=9 {
            for pos in 0..len {
                for b in 0..=255u8 {
                    let mut digits = vec![b'7'; len];
                    digits[pos] = b;
                    let want = parse_uint_slow(&digits);
                    let want = want.filter(|_| digits[0] != b'0' || len == 1);
                    assert_eq!(parse_uint(&digits), want, "{digits:?}");
                }
            }
        }
    }

    #[test]
    fn integers_are_canonical() {
        assert_eq!(parse_int(b"0"), Some(0));
        assert_eq!(parse_int(b"-12"), Some(-12));
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int(b"9223372036854775808"), None);
        for bad in [&b""[..], b"-", b"-0", b"007", b"+1", b"1.0", b"1e3", b" 1"] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
        let mut out = Vec::new();
        push_int(&mut out, i64::MIN);
        assert_eq!(out, b"-9223372036854775808");
    }
}
