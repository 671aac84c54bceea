//! Byte tests eight bytes at a time in a `u64` ("SIMD within a register"),
//! shared by the text scanners (TSV rows, TSV escapes, Pajé words).
//!
//! Masks have the high bit of each matching byte set and are exact: no carry
//! from one byte reaches the next. The `any_` tests answer only whether some
//! byte matches, with fewer operations.

/// 0x01 in every byte.
pub const ONES: u64 = 0x0101_0101_0101_0101;
/// 0x80 in every byte.
pub const HIGHS: u64 = 0x8080_8080_8080_8080;

/// `b` in every byte.
#[inline]
pub const fn splat(b: u8) -> u64 {
    ONES * b as u64
}

/// The bytes of `x` that are zero.
#[inline]
pub fn zero_bytes(x: u64) -> u64 {
    !(((x & !HIGHS) + !HIGHS) | x) & HIGHS
}

/// The bytes of `x` equal to `b`.
#[inline]
pub fn bytes_equal(x: u64, b: u8) -> u64 {
    zero_bytes(x ^ splat(b))
}

/// The bytes of `x` below `n` (`n` at most 0x80).
#[inline]
pub fn bytes_below(x: u64, n: u8) -> u64 {
    !((((x & !HIGHS) + splat(0x80 - n)) | x) & HIGHS) & HIGHS
}

/// Whether some byte of `x` is below `n` (`n` at most 0x80).
#[inline]
pub fn any_below(x: u64, n: u8) -> bool {
    // Borrows can mark bytes after a match, never without one.
    x.wrapping_sub(splat(n)) & !x & HIGHS != 0
}

/// Whether some byte of `x` equals `b`.
#[inline]
pub fn any_equal(x: u64, b: u8) -> bool {
    any_below(x ^ splat(b), 1)
}

/// Up to eight bytes as a little-endian word, the missing high bytes set to
/// `pad`. Built in a register: copying the bytes to a buffer and loading it as
/// a word stalls the store buffer.
#[inline]
pub fn load_padded(bytes: &[u8], pad: u8) -> u64 {
    match bytes.try_into() {
        Ok(word) => u64::from_le_bytes(word),
        Err(_) => bytes
            .iter()
            .rev()
            .fold(splat(pad), |x, &b| (x << 8) | u64::from(b)),
    }
}

/// Up to eight bytes as a little-endian word, zero beyond them, without a
/// loop: two loads that overlap in the middle (a byte both give is the
/// same byte, so or-ing them is exact).
#[inline]
pub fn load_zero_padded(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let word32 =
        |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")));
    match n {
        0 => 0,
        1..=3 => {
            let (first, mid, last) = (bytes[0], bytes[n / 2], bytes[n - 1]);
            u64::from(first) | u64::from(mid) << (8 * (n / 2)) | u64::from(last) << (8 * (n - 1))
        }
        4..=7 => word32(0) | word32(n - 4) << (8 * (n - 4)),
        _ => u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
    }
}

/// One bit per byte of a mask: bit `i` for byte `i`.
#[inline]
pub fn to_bits(mask: u64) -> u64 {
    ((mask >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_padded_loads_match_byte_by_byte() {
        let bytes: Vec<u8> = (1..=9).collect();
        for n in 0..=8 {
            let want = bytes[..n]
                .iter()
                .rev()
                .fold(0u64, |x, &b| (x << 8) | u64::from(b));
            assert_eq!(load_zero_padded(&bytes[..n]), want, "{n} bytes");
        }
    }

    #[test]
    fn every_byte_value_at_every_position() {
        for pos in 0..8 {
            for b in 0..=255u8 {
                // The other bytes take the neighbouring values, where a carry
                // or borrow would show.
                let mut bytes = [b.wrapping_sub(1); 8];
                bytes[pos] = b;
                let x = u64::from_le_bytes(bytes);
                let bit = |hit: bool| if hit { 0x80u64 << (8 * pos) } else { 0 };
                let only = |mask: u64| mask & (0xffu64 << (8 * pos));
                assert_eq!(only(zero_bytes(x)), bit(b == 0));
                assert_eq!(only(bytes_equal(x, b' ')), bit(b == b' '));
                assert_eq!(only(bytes_below(x, 0x20)), bit(b < 0x20));
                assert_eq!(only(bytes_below(x, 14)), bit(b < 14));
                assert_eq!(to_bits(bit(true)), 1 << pos);
                assert_eq!(any_below(x, 14), bytes_below(x, 14) != 0);
                assert_eq!(any_equal(x, b'\\'), bytes_equal(x, b'\\') != 0);
            }
        }
        assert_eq!(load_padded(b"abc", b' '), u64::from_le_bytes(*b"abc     "));
        assert_eq!(
            load_padded(b"12345678", 0),
            u64::from_le_bytes(*b"12345678")
        );
    }
}
