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
    if s.len() <= 19 {
        // Nineteen digits cannot overflow a u64: no checks per digit.
        let mut n: u64 = 0;
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            n = n * 10 + u64::from(d);
        }
        return Some(n);
    }
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
