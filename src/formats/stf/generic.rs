//! The generic row: how a record without a mapping of its own is written
//! as an `stf` event (its fields as attributes) and read back, shared by the
//! reader and the writer (docs/stf.md, "Mapping to the stream").

use super::layout::{Layout, Scalar};

/// Separator of array items in a generic row's attribute.
pub const ITEM_SEP: char = ',';

/// Escapes one text item of an array (`%` and the separator).
pub fn escape_item(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            ITEM_SEP => out.push_str("%2C"),
            c => out.push(c),
        }
    }
}

/// Reverses [`escape_item`].
pub fn unescape_item(text: &str) -> String {
    text.replace("%2C", ",").replace("%25", "%")
}

/// The field a generic row's `loc` stands for: a scalar `willy` field.
pub fn generic_willy(layout: &Layout) -> Option<usize> {
    layout
        .fields
        .iter()
        .position(|f| f.name == "willy" && f.ty == Scalar::Willy && f.sized_by.is_none())
}

/// The attribute keys of a generic row of `layout`, in order: the value
/// fields but `time` and (when the row has a location) `willy`.
pub fn generic_keys(layout: &Layout, has_loc: bool) -> impl Iterator<Item = &str> {
    let willy = generic_willy(layout).filter(|_| has_loc);
    layout
        .value_fields()
        .filter(move |(i, _)| Some(*i) != layout.time && Some(*i) != willy)
        .map(|(_, f)| f.name.as_str())
}

/// The bits of a number field written as text, if canonical.
pub fn scalar_bits(ty: Scalar, text: &str) -> Option<u64> {
    let bits = match ty {
        Scalar::I4 => text.parse::<i32>().ok()? as i64 as u64,
        Scalar::I8 => text.parse::<i64>().ok()? as u64,
        Scalar::F8 => text.parse::<f64>().ok()?.to_bits(),
        _ => {
            let v = text.parse::<u64>().ok()?;
            (v <= ty.max()).then_some(v)?
        }
    };
    (scalar_text(ty, bits) == text).then_some(bits)
}

/// A number field's text in a generic row.
pub fn scalar_text(ty: Scalar, bits: u64) -> String {
    match ty {
        Scalar::I4 | Scalar::I8 => super::feed::signed(ty, bits).to_string(),
        Scalar::F8 => f64::from_bits(bits).to_string(),
        _ => bits.to_string(),
    }
}

/// Bytes written in lower-case hexadecimal, if canonical.
pub fn parse_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            let b = u8::from_str_radix(text.get(i..i + 2)?, 16).ok()?;
            text[i..i + 2]
                .bytes()
                .all(|c| !c.is_ascii_uppercase())
                .then_some(b)
        })
        .collect()
}
