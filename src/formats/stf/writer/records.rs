//! The rows the specification has records for: functions, messages and
//! their halves, counters, scopes, and `stf` events of any other layout.

use std::borrow::Cow;

use super::{intern, ticks, StfWriter};
use crate::error::Result;
use crate::fasthash::make_key;
use crate::formats::stf::generic::{
    generic_keys, generic_willy, parse_hex, scalar_bits, unescape_item, ITEM_SEP,
};
use crate::formats::stf::layout::{self, is_byte_type, Layout, Scalar, SPEC_LAYOUTS};
use crate::formats::stf::{DECLARATIONS, INDEX_ONLY, NONE, RECEIVER_UNKNOWN, SENDER_UNKNOWN};
use crate::model::record::{Attr, Column, Kind, Record};
use crate::model::symbol::well_known;
use crate::number;

/// Classes the reader turns into rows of a kind of their own (or into no
/// row: time steps, places).
const ROW_CLASSES: &[&str] = &[
    "add_time",
    "sub_time",
    "enter_function",
    "leave_function",
    "one_to_one_communication",
    "counter_value",
    "enter_scope",
    "leave_scope",
    "collop_raw_event",
    "all_communication",
    "all_to_all_communication",
    "all_to_one_communication",
    "one_to_all_communication",
    "tracepipe_row",
    "tracepipe_order",
];

/// Whether the reader makes something else than a generic `stf` event of
/// records of `class`: such an event never stands for one.
pub fn is_mapped(class: &str) -> bool {
    [ROW_CLASSES, DECLARATIONS, INDEX_ONLY]
        .iter()
        .any(|list| list.contains(&class))
}

/// True when `rec` has nothing in the optional columns but `used` (its
/// kind, time, location and attributes are the caller's to check).
pub(super) fn uses_only(rec: &Record, used: &[Column]) -> bool {
    let empty = |column: &Column| match column {
        Column::End => rec.end.is_none(),
        Column::Cat => rec.cat.is_empty(),
        Column::Name => rec.name.is_empty(),
        Column::Depth => rec.depth.is_none(),
        Column::Peer => rec.peer.is_empty(),
        Column::Comm => rec.comm.is_empty(),
        Column::Tag => rec.tag.is_none(),
        Column::Size => rec.size.is_none(),
        Column::Id => rec.id.is_empty(),
        Column::Value => rec.value.is_empty(),
        Column::Flags => rec.flags.is_empty(),
        Column::Kind | Column::Time | Column::Loc | Column::Attrs => true,
    };
    Column::ALL.iter().all(|c| used.contains(c) || empty(c))
}

/// True when a row uses none of the columns a frame's record has no field
/// for.
fn only_core(rec: &Record) -> bool {
    uses_only(rec, &[Column::Cat, Column::Name, Column::Depth])
}

/// The values of the attributes of `rec` when their keys are exactly
/// `keys` in order (read in place: no allocation per row).
pub(super) fn attrs_exactly<'a, const N: usize>(
    rec: &'a Record,
    keys: [&str; N],
) -> Option<[Cow<'a, str>; N]> {
    let mut attrs = rec.attrs();
    let mut values = keys.map(|_| Cow::Borrowed(""));
    for (value, key) in values.iter_mut().zip(keys) {
        let (k, v) = attrs.next()?;
        if k != key {
            return None;
        }
        *value = v;
    }
    attrs.next().is_none().then_some(values)
}

/// A canonical unsigned 32-bit number.
pub(super) fn parse_u32(text: &str) -> Option<u32> {
    number::parse_uint(text.as_bytes()).and_then(|n| u32::try_from(n).ok())
}

/// A counter value's type code and bits, when the text reads back the same:
/// 0 a signed 64-bit integer, 1 a binary64.
pub fn counter_bits(text: &str) -> Option<(u8, u64)> {
    if let Some(n) = number::parse_int(text.as_bytes()) {
        return Some((0, n as u64));
    }
    let v: f64 = text.parse().ok()?;
    (v.to_string() == text).then_some((1, v.to_bits()))
}

/// The optional message attributes, in the order of each layout's fields.
const MSG_ATTRS: [(&str, &[&str]); 3] = [
    ("one_to_one_communication", &[]),
    (
        "one_to_one_communication_1",
        &["sender_scl", "receiver_scl"],
    ),
    (
        "one_to_one_communication_4",
        &[
            "sender_scl",
            "receiver_scl",
            "sender_checksum",
            "receiver_checksum",
        ],
    ),
];

impl StfWriter {
    /// Writes `rec` as the specification's record for it, if one holds it
    /// exactly; false leaves it to [`StfWriter::write_row`].
    pub(super) fn write_mapped(&mut self, rec: &Record, time: Option<u64>) -> Result<bool> {
        let Some(t) = time else { return Ok(false) };
        match rec.kind {
            Kind::Enter => self.write_enter(rec, t),
            Kind::Leave => self.write_leave(rec, t),
            Kind::Msg | Kind::Send | Kind::Recv => self.write_message(rec, t),
            Kind::Counter => self.write_counter(rec, t),
            Kind::Coll => self.write_coll(rec, t),
            Kind::State => self.write_scope(rec, t),
            Kind::Event if rec.cat == well_known::STF => self.write_generic(rec, t),
            _ => Ok(false),
        }
    }

    /// `scl` as the only attribute: `Some(Some(scl))`; no attribute:
    /// `Some(None)`; anything else: `None`.
    fn scl_only(rec: &Record) -> Option<Option<u32>> {
        if rec.attrs.is_empty() {
            return Some(None);
        }
        let [scl] = attrs_exactly(rec, ["scl"])?;
        parse_u32(&scl).map(Some)
    }

    fn write_enter(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let scl = Self::scl_only(rec);
        if !only_core(rec) || rec.name.is_empty() || rec.loc.is_empty() || scl.is_none() {
            return Ok(false);
        }
        let (w, _) = self.willy_of(rec.loc)?;
        let depth = self.stacks.get(&w).map_or(0, Vec::len);
        if rec.depth != Some(depth as u32) {
            return Ok(false);
        }
        let function = self.function_of(rec.name, rec.cat)?;
        let f = self.route(rec, None)?;
        let name = match scl.flatten() {
            Some(_) => "enter_function_1",
            None => "enter_function",
        };
        self.start(name);
        self.values.slots[1] = w as u64;
        self.values.slots[2] = function as u64;
        if let Some(scl) = scl.flatten() {
            self.values.slots[3] = scl as u64;
        }
        self.emit(f, self.ids[name], Some(t))?;
        self.stacks.entry(w).or_default().push(function);
        Ok(true)
    }

    fn write_leave(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let scl = Self::scl_only(rec);
        if !only_core(rec) || rec.loc.is_empty() || scl.is_none() {
            return Ok(false);
        }
        let (w, _) = self.willy_of(rec.loc)?;
        let top = self.stacks.get(&w).and_then(|s| s.last().copied());
        let depth = self.stacks.get(&w).map_or(0, Vec::len);
        let fits = top.is_some()
            && top == self.function_id(rec.name, rec.cat)
            && rec.depth == Some(depth as u32 - 1);
        if !fits {
            return Ok(false);
        }
        let f = self.route(rec, None)?;
        let name = match scl.flatten() {
            Some(_) => "leave_function_1",
            None => "leave_function",
        };
        self.start(name);
        self.values.slots[1] = w as u64;
        if let Some(scl) = scl.flatten() {
            self.values.slots[2] = scl as u64;
        }
        self.emit(f, self.ids[name], Some(t))?;
        self.stacks.get_mut(&w).map(Vec::pop);
        Ok(true)
    }

    /// The message layout the attributes of `rec` fit, with the values of
    /// its optional numbers and the two function names.
    fn message_layout(rec: &Record) -> Option<(&'static str, Vec<u32>, [String; 2])> {
        let attrs: Vec<Attr<'_>> = rec.attrs().collect();
        let split = attrs
            .iter()
            .position(|(k, _)| k.ends_with("_function"))
            .unwrap_or(attrs.len());
        let (numbers, functions) = attrs.split_at(split);
        let mut names = [String::new(), String::new()];
        let mut next = 0;
        for (k, v) in functions {
            let i = match k.as_ref() {
                "sender_function" => 0,
                "receiver_function" => 1,
                _ => return None,
            };
            if i < next || v.is_empty() {
                return None;
            }
            names[i] = v.to_string();
            next = i + 1;
        }
        let (name, _) = MSG_ATTRS.iter().find(|(_, keys)| {
            keys.len() == numbers.len() && keys.iter().zip(numbers.iter()).all(|(a, (b, _))| a == b)
        })?;
        let values = numbers
            .iter()
            .map(|(_, v)| parse_u32(v))
            .collect::<Option<Vec<_>>>()?;
        Some((name, values, names))
    }

    fn write_message(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let fits = !rec.loc.is_empty()
            && !rec.peer.is_empty()
            && rec.tag.is_some_and(|v| (0..=u32::MAX as i64).contains(&v))
            && rec.size.is_some_and(|v| v <= u32::MAX as u64)
            && uses_only(
                rec,
                &[
                    Column::End,
                    Column::Peer,
                    Column::Comm,
                    Column::Tag,
                    Column::Size,
                    Column::Flags,
                ],
            );
        let receive = match (rec.kind, rec.end) {
            (Kind::Msg, Some(end)) => end.checked_sub(t as i64),
            (Kind::Send, None) => Some(RECEIVER_UNKNOWN),
            (Kind::Recv, None) => Some(SENDER_UNKNOWN),
            _ => None,
        };
        let Some(receive) = receive.filter(|_| fits) else {
            return Ok(false);
        };
        // Flags as the reader gives them: `R` on a message received before
        // it was sent, `U` on a half (its partner unknown).
        let reversed = rec.kind == Kind::Msg && receive < 0;
        let marker =
            rec.kind == Kind::Msg && (receive == RECEIVER_UNKNOWN || receive == SENDER_UNKNOWN);
        let flags = match rec.kind {
            Kind::Msg if reversed => "R",
            Kind::Msg => "",
            _ => "U",
        };
        // Byte by byte: flags are a letter or none, and a `memcmp` call at
        // every message cost the writer 5 % of its time.
        if marker || !rec.flags.bytes().eq(flags.bytes()) {
            return Ok(false);
        }
        let Some((name, numbers, functions)) = Self::message_layout(rec) else {
            return Ok(false);
        };
        let (sender, receiver) = match rec.kind {
            Kind::Recv => (rec.peer, rec.loc),
            _ => (rec.loc, rec.peer),
        };
        let (sender, _) = self.willy_of(sender)?;
        let (receiver, _) = self.willy_of(receiver)?;
        let comm = self.comm(rec.comm)?;
        let mut ids = [NONE; 2];
        for (id, function) in ids.iter_mut().zip(&functions) {
            if !function.is_empty() {
                *id = self.function(function, "")?;
            }
        }
        let f = self.route(rec, None)?;
        self.start(name);
        let head = [
            0,
            sender as u64,
            receive as u64,
            receiver as u64,
            comm as u64,
            rec.size.unwrap_or(0),
            rec.tag.unwrap_or(0) as u64,
        ];
        self.values.slots[..7].copy_from_slice(&head);
        let n = self.values.slots.len();
        for (slot, v) in self.values.slots[7..n - 2].iter_mut().zip(&numbers) {
            *slot = *v as u64;
        }
        self.values.slots[n - 2] = ids[0] as u64;
        self.values.slots[n - 1] = ids[1] as u64;
        self.emit(f, self.ids[name], Some(t))?;
        Ok(true)
    }

    /// A `state` the reader made of a scope instance: its `enter_scope`
    /// and `leave_scope`, one after the other.
    fn write_scope(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let attrs: Vec<Attr<'_>> = rec.attrs().collect();
        let keys: Vec<&str> = attrs.iter().map(|(k, _)| k.as_ref()).collect();
        let (enter_scl, leave_scl) = match keys[..] {
            ["seqnr", "scl1", "scl2"] => (false, false),
            ["seqnr", "scl1", "scl2", "enter_scl"] => (true, false),
            ["seqnr", "scl1", "scl2", "leave_scl"] => (false, true),
            ["seqnr", "scl1", "scl2", "enter_scl", "leave_scl"] => (true, true),
            _ => return Ok(false),
        };
        let numbers: Option<Vec<u32>> = attrs.iter().map(|(_, v)| parse_u32(v)).collect();
        let plain = uses_only(rec, &[Column::End, Column::Cat, Column::Name])
            && !rec.loc.is_empty()
            && rec.end >= rec.time;
        let (Some(n), true, Some(end)) = (numbers, plain, rec.end) else {
            return Ok(false);
        };
        let end = ticks(end)?;
        let willy = self.willy_of(rec.loc)?.0;
        let symbols = self.symbols.clone();
        let scope = self.scope(symbols.text(rec.name), symbols.text(rec.cat), n[1], n[2])?;
        let f = self.route(rec, None)?;
        let mut scl = n[3..].iter();
        for (name, with_scl, time) in [
            ("enter_scope", enter_scl, t),
            ("leave_scope", leave_scl, end),
        ] {
            let name = if with_scl {
                format!("{name}_1")
            } else {
                name.to_string()
            };
            self.start(&name);
            self.values.slots[1..4].copy_from_slice(&[willy as u64, scope as u64, n[0] as u64]);
            if with_scl {
                self.values.slots[4] = *scl.next().expect("counted") as u64;
            }
            self.emit(f, self.ids[name.as_str()], Some(time))?;
        }
        Ok(true)
    }

    /// The scope called `name` of class `cat` with the definition's SCLs.
    fn scope(&mut self, name: &str, cat: &str, scl1: u32, scl2: u32) -> Result<u32> {
        let scls = format!("{scl1} {scl2}");
        make_key(&mut self.key, &[name, cat, &scls]);
        let (id, new) = intern(&mut self.declared.scopes, &self.key);
        if new {
            let name = self.string(name)? as u64;
            let class = self.class(cat)? as u64;
            self.start_decl("scope_definition");
            let slots = [id as u64, name, class, scl1 as u64, scl2 as u64];
            self.dvalues.slots.copy_from_slice(&slots);
            self.declare("scope_definition")?;
        }
        Ok(id)
    }

    fn write_counter(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let unit = if rec.attrs.is_empty() {
            Some(Cow::Borrowed(""))
        } else {
            attrs_exactly(rec, ["unit"])
                .map(|[unit]| unit)
                .filter(|u| !u.is_empty())
        };
        let plain = uses_only(rec, &[Column::Cat, Column::Name, Column::Value])
            && !rec.loc.is_empty()
            && !rec.name.is_empty();
        let (Some(unit), Some((ty, bits)), true) = (unit, counter_bits(&rec.value), plain) else {
            return Ok(false);
        };
        let (w, _) = self.willy_of(rec.loc)?;
        let ty_code = [b'0' + ty];
        let ty_text = std::str::from_utf8(&ty_code).expect("a digit");
        let symbols = self.symbols.clone();
        let (name, cat) = (symbols.text(rec.name), symbols.text(rec.cat));
        make_key(&mut self.key, &[name, cat, &unit, ty_text]);
        let (counter, new) = intern(&mut self.declared.counters, &self.key);
        if new {
            self.declare_counter(counter, name, cat, &unit, ty)?;
        }
        let f = self.route(rec, None)?;
        self.start("counter_value");
        self.values.slots[1] = w as u64;
        self.values.set_array(3, &[bits]);
        self.values.set_array(4, &[counter as u64]);
        self.emit(f, self.ids["counter_value"], Some(t))?;
        Ok(true)
    }

    fn declare_counter(
        &mut self,
        id: u32,
        name: &str,
        cat: &str,
        unit: &str,
        ty: u8,
    ) -> Result<()> {
        let name = self.string(name)? as u64;
        let class = self.class(cat)? as u64;
        self.start_decl("counter_definition");
        let slots = [id as u64, name, ty as u64, 0, 0, 0, NONE as u64, class];
        self.dvalues.slots[..8].copy_from_slice(&slots);
        self.dvalues.set_text(9, unit.as_bytes());
        self.declare("counter_definition")
    }
}

impl StfWriter {
    /// An `stf` event whose name is a specification class and whose
    /// attributes are exactly the fields of one of its layouts.
    fn write_generic(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let symbols = self.symbols.clone();
        let name = symbols.text(rec.name);
        if is_mapped(name) || !(only_core(rec) && rec.depth.is_none()) {
            return Ok(false);
        }
        let attrs: Vec<Attr<'_>> = rec.attrs().collect();
        let found = (0..SPEC_LAYOUTS.len()).find(|&i| {
            let l = &self.layouts[i];
            l.class == name
                && generic_keys(l, !rec.loc.is_empty()).eq(attrs.iter().map(|(k, _)| k.as_ref()))
        });
        let Some(id) = found else { return Ok(false) };
        let layout: &'static Layout = &self.layouts[id];
        let f = self.route(rec, Some(layout))?;
        self.values.reset(layout.fields.len());
        if let Some(w) = generic_willy(layout).filter(|_| !rec.loc.is_empty()) {
            self.values.slots[w] = self.willy_of(rec.loc)?.0 as u64;
        }
        let mut values = attrs.iter().map(|(_, v)| v);
        for (i, field) in layout.value_fields() {
            if Some(i) == layout.time || (Some(i) == generic_willy(layout) && !rec.loc.is_empty()) {
                continue;
            }
            let text = values.next().expect("matched keys");
            if !self.put_field(layout, i, field, text)? {
                return Ok(false);
            }
        }
        self.emit(f, id as u8, Some(t))?;
        Ok(true)
    }

    /// Sets field `i` from its attribute text; false when the text does not
    /// read back the same.
    fn put_field(
        &mut self,
        layout: &Layout,
        i: usize,
        field: &layout::Field,
        text: &str,
    ) -> Result<bool> {
        if field.sized_by.is_some() && is_byte_type(field.ty) {
            let bytes = if field.ty == Scalar::C1 {
                text.as_bytes().to_vec()
            } else {
                match parse_hex(text) {
                    Some(b) => b,
                    None => return Ok(false),
                }
            };
            self.values.set_text(i, &bytes);
            return Ok(true);
        }
        let strings = layout::is_string_field(&layout.class, &field.name);
        let mut items = Vec::new();
        let parts: Vec<&str> = match (field.sized_by.is_some(), text.is_empty()) {
            (true, true) => Vec::new(),
            (true, false) => text.split(ITEM_SEP).collect(),
            (false, _) => vec![text],
        };
        for part in parts {
            let bits = if strings {
                let item = if field.sized_by.is_some() {
                    unescape_item(part)
                } else {
                    part.to_string()
                };
                Some(self.string(&item)? as u64)
            } else if field.ty == Scalar::Willy {
                Some(self.willy(part)?.0 as u64)
            } else {
                scalar_bits(field.ty, part)
            };
            match bits {
                Some(b) => items.push(b),
                None => return Ok(false),
            }
        }
        if field.sized_by.is_some() {
            self.values.set_array(i, &items);
        } else {
            self.values.slots[i] = items[0];
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys must be exactly those asked, in order: none missing, none more.
    #[test]
    fn attrs_exactly_takes_exactly_the_keys_asked() {
        let with = |attrs: &str| {
            let mut rec = Record::new(Kind::Counter);
            rec.attrs = attrs.to_string();
            rec
        };
        let rec = with("kind=3;scl=7");
        assert_eq!(
            attrs_exactly(&rec, ["kind", "scl"]),
            Some(["3".into(), "7".into()])
        );
        assert_eq!(attrs_exactly(&rec, ["scl", "kind"]), None);
        assert_eq!(attrs_exactly(&rec, ["kind"]), None);
        assert_eq!(attrs_exactly(&rec, ["kind", "scl", "x"]), None);
        let escaped = with("unit=%25");
        assert_eq!(attrs_exactly(&escaped, ["unit"]), Some(["%".into()]));
        assert_eq!(attrs_exactly(&with(""), []), Some([]));
    }
}
