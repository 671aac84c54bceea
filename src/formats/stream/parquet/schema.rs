//! The Parquet layout of the stream: which column is stored how, and the
//! Hive-style names of partition folders.

use parquet::basic::{IntType, LogicalType, Repetition, Type as Physical};
use parquet::schema::types::{Type, TypePtr};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::model::record::Column;

/// The name of the column a partitioned folder adds: each row's place in
/// the stream, so its partitions merge back in the stream's order.
pub const SEQ: &str = "seq";

/// The key of the file metadata that says which stream version the rows
/// follow.
pub const FORMAT_KEY: &str = "tracepipe.format";

/// The key of the file metadata that holds, in a partition's file, the
/// declarations (`meta`, `type`, `container` rows) its rows need and that
/// are in other partitions: lines of `SEQ JSON-ROW`.
pub const DECLARATIONS_KEY: &str = "tracepipe.declarations";

/// How a stream column is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// INT64, signed.
    Int,
    /// INT64 annotated unsigned (`size`, a u64).
    Unsigned,
    /// UTF-8 text (BYTE_ARRAY, STRING).
    Text,
}

impl Storage {
    /// How `column` is stored.
    pub fn of(column: Column) -> Storage {
        match column {
            Column::Time | Column::End | Column::Depth | Column::Tag => Storage::Int,
            Column::Size => Storage::Unsigned,
            _ => Storage::Text,
        }
    }
}

/// Whether `column`'s minimum and maximum per page and row group pay for
/// comparing every value: the integers (a time window skips row groups)
/// and the locations and names queries select.
pub fn statistics_pay(column: Column) -> bool {
    Storage::of(column) != Storage::Text || matches!(column, Column::Loc | Column::Name)
}

fn field(name: &str, storage: Storage, required: bool) -> Result<TypePtr> {
    let (physical, logical) = match storage {
        Storage::Int => (Physical::INT64, None),
        Storage::Unsigned => (
            Physical::INT64,
            Some(LogicalType::Integer(IntType {
                bit_width: 64,
                is_signed: false,
            })),
        ),
        Storage::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
    };
    let repetition = match required {
        true => Repetition::REQUIRED,
        false => Repetition::OPTIONAL,
    };
    Type::primitive_type_builder(name, physical)
        .with_repetition(repetition)
        .with_logical_type(logical)
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Record(format!("Parquet column `{name}`: {e}")))
}

/// The schema of a file: the standard columns but `left_out` (a
/// partition's column, which its folder names), then `extra` as text,
/// then [`SEQ`] when `with_seq`.
pub fn message(left_out: Option<Column>, extra: &[String], with_seq: bool) -> Result<TypePtr> {
    let mut fields = Vec::new();
    for column in Column::ALL.into_iter().filter(|&c| Some(c) != left_out) {
        fields.push(field(
            column.name(),
            Storage::of(column),
            column == Column::Kind,
        )?);
    }
    for name in extra {
        fields.push(field(name, Storage::Text, false)?);
    }
    if with_seq {
        fields.push(field(SEQ, Storage::Int, true)?);
    }
    let group = Type::group_type_builder("tracepipe")
        .with_fields(fields)
        .build()
        .map_err(|e| Error::Record(format!("Parquet schema: {e}")))?;
    Ok(Arc::new(group))
}

/// The folder name Hive gives an empty (NULL) partition value.
pub const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// Whether Hive escapes byte `b` in a partition value (its
/// `FileUtils.escapePathName` set: controls, DEL, and
/// `"#%'*/:=?\{[]^`). Other bytes, spaces and UTF-8 among them, stay.
fn hive_escapes(b: u8) -> bool {
    b < 0x20 || b == 0x7f || b"\"#%'*/:=?\\{[]^".contains(&b)
}

/// `value` as Hive writes it in a folder name: escaped bytes as `%XX`
/// (upper-case hex), empty as [`HIVE_NULL`].
pub fn hive_escape(value: &str) -> String {
    if value.is_empty() {
        return HIVE_NULL.to_string();
    }
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match u8::try_from(c).ok().filter(|&b| hive_escapes(b)) {
            Some(b) => out.push_str(&format!("%{b:02X}")),
            None => out.push(c),
        }
    }
    out
}

/// The value a Hive folder name holds: `%XX` decoded (any byte, as
/// readers of partitioned folders decode it), [`HIVE_NULL`] empty; `None`
/// when the decoded bytes are not UTF-8 or a `%` starts no escape.
pub fn hive_unescape(segment: &str) -> Option<String> {
    if segment == HIVE_NULL {
        return Some(String::new());
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hive_names_round_trip() {
        for value in ["", "rank 0", "a/b", "é=%;", "0:1/x\\y", "t\u{1}", "[x]^*?"] {
            let name = hive_escape(value);
            assert!(!name.contains('/') && !name.is_empty(), "{name}");
            assert_eq!(hive_unescape(&name).as_deref(), Some(value));
        }
        assert_eq!(hive_escape("a b/é"), "a b%2Fé");
        assert_eq!(hive_unescape("a%20b"), Some("a b".into()));
        assert_eq!(hive_unescape("a%2"), None);
        assert_eq!(hive_unescape("%FF"), None);
    }
}
