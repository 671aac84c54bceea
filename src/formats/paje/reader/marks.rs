//! Rows with an extent that this crate's writer marked (see
//! [`super::super::extent`]): made again from the marked line's fields.

use super::*;

/// The kind a line's `tracepipe.kind` field marks it as, if any.
pub(super) fn marked_kind(line: &Line) -> Option<Kind> {
    let (_, value) = line
        .extras()
        .find(|(key_eq, _)| key_eq.strip_suffix('=') == Some(extent::KIND))?;
    extent::kind(value)
}

/// The number a mark holds.
fn number<T: std::str::FromStr>(mark: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("field `{mark}` holds `{value}`, not a number of its column"))
}

impl Sim {
    /// The row of `kind` a marked line of type `t` begins, on container
    /// `c` at `time`: its columns from the marks, its attributes from the
    /// other user fields, then the type. Its `end` is the `tracepipe.end`
    /// mark's, if any.
    pub(super) fn marked_row(
        &mut self,
        (kind, c, t): (Kind, u32, u32),
        (time, lossy): (i64, bool),
        line: &Line,
    ) -> Result<Box<Record>, String> {
        let mut row = Box::<Record>::default();
        (row.kind, row.time, row.loc) = (kind, Some(time), self.containers[c as usize].sym);
        let mut lossy_end = false;
        for (key_eq, value) in line.extras() {
            let key = key_eq.strip_suffix('=').unwrap_or(key_eq);
            match key {
                extent::KIND => {}
                extent::CAT => row.cat = self.syms.intern(value),
                extent::NAME => row.name = self.syms.intern(value),
                extent::PEER => row.peer = self.syms.intern(value),
                extent::COMM => row.comm = self.syms.intern(value),
                extent::TAG => row.tag = Some(number(extent::TAG, value)?),
                extent::SIZE => row.size = Some(number(extent::SIZE, value)?),
                extent::VALUE => row.value.push_str(value),
                extent::ID => row.id.push_str(value),
                extent::END => {
                    let (end, lossy) = self
                        .time(value)
                        .map_err(|e| format!("field `{}`: {e}", extent::END))?;
                    (row.end, lossy_end) = (Some(end), lossy);
                }
                _ => super::super::push_user_field(&mut row, key_eq, value),
            }
        }
        row.push_attr(extent::ATTR_TYPE, &self.types[t as usize].id);
        if lossy || lossy_end {
            row.add_flag(flags::LOSSY);
        }
        Ok(row)
    }
}
