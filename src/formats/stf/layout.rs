//! The definition layer: record layouts written as textual specifiers, the
//! catalogue of the specification's layouts, and the generic codec that reads
//! and writes any defined record without knowing what it means.
//!
//! A specifier is `class(type field, ...)`; `<type field>` is an array whose
//! length is the nearest `size_*` field before it (the specification lists
//! those size fields explicitly, and several arrays may share one).

use std::fmt::Write as _;

/// A basic type of the definition layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// Unsigned 8, 16, 32, 64-bit integers.
    U1,
    #[allow(missing_docs)]
    U2,
    #[allow(missing_docs)]
    U4,
    #[allow(missing_docs)]
    U8,
    /// Signed 32 and 64-bit integers.
    I4,
    #[allow(missing_docs)]
    I8,
    /// IEEE-754 binary64.
    F8,
    /// One character byte (arrays of it are text).
    C1,
    /// Eight opaque bytes (a file offset, or a counter value typed elsewhere).
    O8,
    /// A process/thread/group id (U4).
    Willy,
}

impl Scalar {
    /// The largest unsigned value the type holds.
    pub fn max(self) -> u64 {
        u64::MAX >> (64 - 8 * self.width())
    }

    const NAMES: [(&'static str, Scalar); 10] = [
        ("U1", Scalar::U1),
        ("U2", Scalar::U2),
        ("U4", Scalar::U4),
        ("U8", Scalar::U8),
        ("I4", Scalar::I4),
        ("I8", Scalar::I8),
        ("F8", Scalar::F8),
        ("C1", Scalar::C1),
        ("O8", Scalar::O8),
        ("willy_id", Scalar::Willy),
    ];

    /// Bytes one value takes.
    pub fn width(self) -> usize {
        match self {
            Scalar::U1 | Scalar::C1 => 1,
            Scalar::U2 => 2,
            Scalar::U4 | Scalar::I4 | Scalar::Willy => 4,
            Scalar::U8 | Scalar::I8 | Scalar::F8 | Scalar::O8 => 8,
        }
    }

    /// The type's name in a specifier.
    pub fn name(self) -> &'static str {
        Scalar::NAMES.iter().find(|(_, s)| *s == self).unwrap().0
    }

    fn parse(word: &str) -> Option<Scalar> {
        Scalar::NAMES
            .iter()
            .find(|(n, _)| *n == word)
            .map(|(_, s)| *s)
    }
}

/// One field of a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its type (the element type for an array).
    pub ty: Scalar,
    /// For an array: the index of the size field that gives its length.
    pub sized_by: Option<usize>,
}

impl Field {
    /// A `size_*` field: it counts the arrays after it, and carries no value
    /// of its own.
    pub fn is_size(&self) -> bool {
        self.sized_by.is_none() && self.name.starts_with("size_")
    }
}

/// A record layout: its class (the specifier name) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The class; layouts of one class differ by optional fields.
    pub class: String,
    /// The fields, in order.
    pub fields: Vec<Field>,
    /// Index of the field named `time` (a delta from the file's running time).
    pub time: Option<usize>,
}

/// Fields a layout may have at most (a bound for corrupt definitions).
const MAX_FIELDS: usize = 64;

impl Layout {
    /// Parses a specifier; the error says what is wrong.
    pub fn parse(spec: &str) -> Result<Layout, String> {
        let open = spec.find('(').ok_or("no `(` after the class name")?;
        let class = spec[..open].trim();
        if !is_identifier(class) {
            return Err(format!("bad class name {class:?}"));
        }
        let body = spec[open + 1..].trim_end();
        let body = body.strip_suffix(')').ok_or("no closing `)`")?;
        let mut fields: Vec<Field> = Vec::new();
        let mut size: Option<usize> = None;
        for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (array, item) = match item.strip_prefix('<') {
                Some(rest) => (
                    true,
                    rest.strip_suffix('>').ok_or("an array without `>`")?.trim(),
                ),
                None => (false, item),
            };
            let (ty, name) = item
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("field {item:?} is not `type name`"))?;
            let ty = Scalar::parse(ty).ok_or_else(|| format!("unknown type {ty:?}"))?;
            let name = name.trim();
            if !is_identifier(name) || fields.iter().any(|f| f.name == name) {
                return Err(format!("bad or repeated field name {name:?}"));
            }
            let sized_by = if array {
                Some(size.ok_or_else(|| format!("array {name:?} has no size field before it"))?)
            } else {
                None
            };
            let field = Field {
                name: name.to_string(),
                ty,
                sized_by,
            };
            if field.is_size() {
                if !matches!(ty, Scalar::U1 | Scalar::U2 | Scalar::U4) {
                    return Err(format!("size field {name:?} must be U1, U2 or U4"));
                }
                size = Some(fields.len());
            }
            fields.push(field);
            if fields.len() > MAX_FIELDS {
                return Err(format!("more than {MAX_FIELDS} fields"));
            }
        }
        let time = fields
            .iter()
            .position(|f| f.name == "time" && f.sized_by.is_none());
        if let Some(t) = time {
            if !matches!(
                fields[t].ty,
                Scalar::U1 | Scalar::U2 | Scalar::U4 | Scalar::U8
            ) {
                return Err("the `time` field must be unsigned".to_string());
            }
        }
        Ok(Layout {
            class: class.to_string(),
            fields,
            time,
        })
    }

    /// The specifier text of this layout (what [`Layout::parse`] reads).
    pub fn specifier(&self) -> String {
        let mut s = format!("{}(", self.class);
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let (open, close) = if f.sized_by.is_some() {
                ("<", ">")
            } else {
                ("", "")
            };
            let _ = write!(s, "{open}{} {}{close}", f.ty.name(), f.name);
        }
        s.push(')');
        s
    }

    /// Index of the field called `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// The names of the fields that carry values (not `size_*`), in order.
    pub fn value_fields(&self) -> impl Iterator<Item = (usize, &Field)> {
        self.fields.iter().enumerate().filter(|(_, f)| !f.is_size())
    }
}

fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The class of a layout named as in the specification (`enter_function_1` →
/// `enter_function`: the specification tells overloads apart by a number).
pub fn class_of(spec_name: &str) -> &str {
    match spec_name.rsplit_once('_') {
        Some((class, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => class,
        _ => spec_name,
    }
}

/// Every record layout of the specification (section 3), as it names them;
/// [`class_of`] gives the class written in a specifier. Layouts the
/// specification lists twice with the same fields appear once.
pub const SPEC_LAYOUTS: &[&str] = &[
    "add_time(U4 time)",
    "add_time_1(U8 time)",
    "all_communication(U4 time, U4 communicator, U1 type, U4 size_1_2, <U8 start_time>, <U8 delta>)",
    "all_communication_1(U4 time, U4 communicator, U1 type, U4 size_1_3, <U8 start_time>, <U8 delta>, <U4 scl>)",
    "all_to_all_communication(U4 time, U4 communicator, U1 type, U4 size_1_4, <U8 start_time>, <U8 delta>, <U4 send_size>, <U4 receive_size>)",
    "all_to_all_communication_1(U4 time, U4 communicator, U1 type, U4 size_1_5, <U8 start_time>, <U8 delta>, <U4 send_size>, <U4 receive_size>, <U4 scl>)",
    "all_to_one_communication(U4 time, willy_id receiver, U4 recvd, U4 communicator, U1 type, U4 size_1_3, <U8 start_time>, <U8 delta>, <U4 send_size>)",
    "all_to_one_communication_1(U4 time, willy_id receiver, U4 recvd, U4 communicator, U1 type, U4 size_1_4, <U8 start_time>, <U8 delta>, <U4 send_size>, <U4 scl>)",
    "anchor(U8 time_prev, U8 offset)",
    "anchor_file_declaration(U4 anchor_file, U4 data_file, U4 categories, U4 willies)",
    "begin_of_history(U4 time)",
    "class_definition(U4 id, U4 name, U4 nameself, U4 parent)",
    "clock_resolution(F8 resolution, U4 eventbits)",
    "collective_operation_definition(U1 id, U4 size_1_1, <C1 name>, U1 type)",
    "collop_profile(U1 type, willy_id root, U4 comm, U4 size_1_13, <U4 count_exch>, <U4 min_bytes_sent>, <U4 max_bytes_sent>, <U4 sum_bytes_sent>, <U4 min_bytes_recvd>, <U4 max_bytes_recvd>, <U4 sum_bytes_recvd>, <F8 min_rate>, <F8 max_rate>, <F8 avg_rate>, <U8 min_duration>, <U8 max_duration>, <U8 sum_duration>)",
    "collop_raw_event(U4 time, willy_id willy, U4 kind, U4 operation, U4 comm, U4 counter, willy_id root, U4 send_size, U4 receive_size, I8 endtime, U4 scl)",
    "collop_statistics(U4 numprocs, U1 type, U4 count)",
    "comment(U4 time, willy_id willy, U4 size_1_1, <C1 text>)",
    "communicator_definition(U4 id, U4 size_1_1, <C1 name>, U4 size_2_3, <willy_id first_id>, <willy_id last_id>, <I4 stride>, I4 left_size)",
    "counter_definition(U4 id, U4 name, U1 type, U1 do_diff, O8 lower_bound, O8 upper_bound, willy_id willy, U4 classid, U4 size_1_1, <C1 unit>)",
    "counter_history(U1 size_1_2, <U4 counters>, <O8 values>)",
    "counter_value(U4 time, willy_id willy, U1 size_1_2, <O8 values>, <U4 counters>)",
    "custom_statistics(U4 stats_handle, U4 name, U4 size_1_1, <F8 value>)",
    "custom_statistics_definition(U4 id, U4 name, U4 size_1_2, <U4 label>, <U4 unit>)",
    "duration(U8 start, U8 end)",
    "end_of_filter(U4 time, U4 categories, U4 size_1_1, <U4 willies>)",
    "end_of_history(U4 time)",
    "enter_function(U4 time, willy_id willy, U4 function)",
    "enter_function_1(U4 time, willy_id willy, U4 function, U4 scl)",
    "enter_scope(U4 time, willy_id willy, U4 scope, U4 seqnr)",
    "enter_scope_1(U4 time, willy_id willy, U4 scope, U4 seqnr, U4 scl)",
    "event_summary(U4 num_funcs, U4 num_one_to_ones, U4 num_collectives, U4 num_scopes, U4 num_counters)",
    "file_declaration(U4 id, U1 filetype, U4 size_1_1, <C1 suffix>)",
    "file_definition(U4 id, U4 size_1_1, <C1 file>)",
    "file_io_begin(U4 time, willy_id willy, U1 type, U4 file, U4 bytes)",
    "file_io_begin_1(U4 time, willy_id willy, U1 type, U4 file, U4 bytes, U4 scl)",
    "file_io_end(U4 time, willy_id willy, U1 type, U4 file, U4 bytes)",
    "file_io_end_1(U4 time, willy_id willy, U1 type, U4 file, U4 bytes, U4 scl)",
    "file_io_file_definition(U4 id, U4 communicator, U4 name)",
    "function_definition(U4 id, U4 name, U4 classid)",
    "function_history(willy_id willy, U4 size_1_1, <U4 function_stack>)",
    "function_history_1(willy_id willy, U4 size_1_2, <U4 function_stack>, <U4 scls>)",
    "function_profile(willy_id willy, U4 function, U4 count, U8 min_self, U8 max_self, U8 total_self, U8 min_inclusive, U8 max_inclusive, U8 total_inclusive)",
    "function_statistics(U4 function, willy_id willy, U4 calls, U8 min_self, U8 max_self, U8 total_self, U8 min_inclusive, U8 max_inclusive, U8 total_inclusive)",
    "group_definition(U4 id, U4 size_1_1, <C1 name>, U4 size_2_1, <willy_id willies>)",
    "history(U1 size_1_3, <U4 file>, <U8 offset>, <U8 prevtime>)",
    "info(U4 info_class, U4 size_1_1, <C1 info>)",
    "leave_function(U4 time, willy_id willy)",
    "leave_function_1(U4 time, willy_id willy, U4 scl)",
    "leave_scope(U4 time, willy_id willy, U4 scope, U4 seqnr)",
    "leave_scope_1(U4 time, willy_id willy, U4 scope, U4 seqnr, U4 scl)",
    "lw_statistics(willy_id willy, U4 function, willy_id receiver, U4 bytes_sent, I4 comm_size, U4 count, U8 minTicksIncl, U8 maxTicksIncl, U8 sumTicksIncl, U8 minTicksExcl, U8 maxTicksExcl, U8 sumTicksExcl)",
    "message_raw_event(U4 time, willy_id willy, U4 kind, willy_id other, U4 tag, U4 size, U4 comm, U4 function, U4 scl)",
    "one_to_all_communication(U4 time, willy_id sender, U4 sent, U4 communicator, U1 type, U4 size_1_3, <U8 start_time>, <U8 delta>, <U4 receive_size>)",
    "one_to_all_communication_1(U4 time, willy_id sender, U4 sent, U4 communicator, U1 type, U4 size_1_4, <U8 start_time>, <U8 delta>, <U4 receive_size>, <U4 scl>)",
    "one_to_one_communication(U4 time, willy_id sender, I8 receive_time, willy_id receiver, U4 communicator, U4 size, U4 tag, U4 sender_function, U4 receiver_function)",
    "one_to_one_communication_1(U4 time, willy_id sender, I8 receive_time, willy_id receiver, U4 communicator, U4 size, U4 tag, U4 sender_scl, U4 receiver_scl, U4 sender_function, U4 receiver_function)",
    "one_to_one_communication_4(U4 time, willy_id sender, I8 receive_time, willy_id receiver, U4 communicator, U4 size, U4 tag, U4 sender_scl, U4 receiver_scl, U4 sender_checksum, U4 receiver_checksum, U4 sender_function, U4 receiver_function)",
    "onetoone_profile(willy_id sender, willy_id receiver, U4 funcsender, U4 funcreceiver, U4 tag, U4 comm, U4 size, U4 count, I8 sum_time, I8 min_time, I8 max_time)",
    "onetoone_statistics(U4 sender, U4 receiver, U4 count, U4 min_size, U4 max_size, U4 total)",
    "opaque_data(U4 time, willy_id willy, U4 size_1_1, <U1 data>, U4 scl)",
    "process_declaration(U4 size_1_1, <willy_id thread_numbers>)",
    "report(U4 time, willy_id willy, U4 type, U4 level, U4 description, U4 size_1_6, <U8 times>, <willy_id willys>, <U4 headers>, <U4 functions>, <U4 calls>, <U4 scls>)",
    "scl_definition(U4 id, U1 size_1_4, <U4 file>, <U4 line>, <U4 symbol>, <U4 object>)",
    "scope_definition(U4 id, U4 name, U4 classid, U4 scl1, U4 scl2)",
    "stf_string(U4 id, U4 size_1_1, <C1 string>)",
    "sub_time(U8 time)",
    "willy_definition(willy_id willy, U4 hostname, U4 ip, U4 pid, U8 tid, F8 offset, F8 skew)",
    "willy_list(U4 id, U4 size_1_3, <willy_id first_id>, <willy_id last_id>, <I4 stride>)",
    "willy_name(willy_id willy, U4 name)",
];

/// The layouts tracepipe adds: any stream row, the stream's meta rows, and
/// a row's place in the stream (docs/stf.md).
pub const TRACEPIPE_LAYOUTS: &[&str] = &[
    "tracepipe_row(U4 time, U1 kind, U1 present, willy_id willy, I8 end, U4 depth, I8 tag, U8 size, \
     U4 cat, U4 name, U4 peer, U4 comm, \
     U4 size_1_1, <C1 id>, U4 size_2_1, <C1 value>, U4 size_3_1, <C1 flags>, U4 size_4_1, <C1 attrs>)",
    "tracepipe_meta(U4 size_1_1, <C1 name>, U4 size_2_1, <C1 value>)",
    "tracepipe_order(I8 key, U4 rank)",
];

/// Bits of `tracepipe_row.present`: which optional columns the row has.
pub mod present {
    /// `time`
    pub const TIME: u64 = 1;
    /// `loc` (in `willy`)
    pub const LOC: u64 = 2;
    /// `end`
    pub const END: u64 = 4;
    /// `depth`
    pub const DEPTH: u64 = 8;
    /// `tag`
    pub const TAG: u64 = 16;
    /// `size`
    pub const SIZE: u64 = 32;
}

/// The specification's layouts and tracepipe's, in the writer's record-id
/// order (the id of a layout is its index), each class without the number
/// the specification adds to tell overloads apart. Only layouts found here
/// are read with a meaning; any other, whatever its class, goes the generic
/// way.
pub fn catalogue() -> &'static [Layout] {
    static CATALOGUE: std::sync::OnceLock<Vec<Layout>> = std::sync::OnceLock::new();
    CATALOGUE.get_or_init(|| {
        SPEC_LAYOUTS
            .iter()
            .chain(TRACEPIPE_LAYOUTS)
            .map(|spec| {
                let mut l = Layout::parse(spec).expect("built-in specifier");
                l.class = class_of(&l.class).to_string();
                l
            })
            .collect()
    })
}

/// Fields that hold an `stf_string` id (the specification's "References
/// stf_string.id"): generic rows carry the text instead, so they survive a
/// rewrite that numbers strings anew.
pub const STRING_FIELDS: &[(&str, &str)] = &[
    ("class_definition", "name"),
    ("class_definition", "nameself"),
    ("counter_definition", "name"),
    ("custom_statistics", "name"),
    ("custom_statistics_definition", "label"),
    ("custom_statistics_definition", "name"),
    ("custom_statistics_definition", "unit"),
    ("file_io_file_definition", "name"),
    ("function_definition", "name"),
    ("report", "calls"),
    ("report", "description"),
    ("report", "headers"),
    ("report", "level"),
    ("report", "type"),
    ("scl_definition", "object"),
    ("scl_definition", "symbol"),
    ("scope_definition", "name"),
    ("willy_definition", "hostname"),
    ("willy_definition", "ip"),
    ("willy_name", "name"),
];

/// Whether field `field` of class `class` holds an `stf_string` id.
pub fn is_string_field(class: &str, field: &str) -> bool {
    STRING_FIELDS.contains(&(class, field))
}

/// One decoded record: a value per field (for an array, the range of its
/// items), items as raw 64-bit patterns, text and byte arrays apart.
/// Reused from record to record, so decoding does not allocate per record.
#[derive(Debug, Default, Clone)]
pub struct Values {
    /// Per field: the scalar's bits, or for an array the start of its items
    /// (in `items`, or in `bytes` for `C1`/`U1` arrays).
    pub slots: Vec<u64>,
    /// Per field: the length of an array (0 for a scalar).
    pub lens: Vec<u32>,
    /// Items of numeric arrays.
    pub items: Vec<u64>,
    /// Items of `C1` and `U1` arrays.
    pub bytes: Vec<u8>,
}

impl Values {
    /// Empties the values for a record of `n` fields.
    pub fn reset(&mut self, n: usize) {
        self.slots.clear();
        self.slots.resize(n, 0);
        self.lens.clear();
        self.lens.resize(n, 0);
        self.items.clear();
        self.bytes.clear();
    }

    /// The items of numeric array field `i`.
    pub fn array(&self, i: usize) -> &[u64] {
        let start = self.slots[i] as usize;
        &self.items[start..start + self.lens[i] as usize]
    }

    /// The bytes of byte array field `i`.
    pub fn text(&self, i: usize) -> &[u8] {
        let start = self.slots[i] as usize;
        &self.bytes[start..start + self.lens[i] as usize]
    }

    /// Appends numeric array `items` as field `i`.
    pub fn set_array(&mut self, i: usize, items: &[u64]) {
        self.slots[i] = self.items.len() as u64;
        self.lens[i] = items.len() as u32;
        self.items.extend_from_slice(items);
    }

    /// Appends byte array `text` as field `i`.
    pub fn set_text(&mut self, i: usize, text: &[u8]) {
        self.slots[i] = self.bytes.len() as u64;
        self.lens[i] = text.len() as u32;
        self.bytes.extend_from_slice(text);
    }
}

/// Whether arrays of `ty` are kept as bytes (text or opaque data).
pub fn is_byte_type(ty: Scalar) -> bool {
    matches!(ty, Scalar::C1 | Scalar::U1)
}

/// Appends the bytes of one scalar.
fn put(out: &mut Vec<u8>, ty: Scalar, bits: u64) {
    out.extend_from_slice(&bits.to_le_bytes()[..ty.width()]);
}

/// Encodes `values` by `layout` (without the record id). Size fields are
/// filled from the arrays they count, which must agree in length.
pub fn encode(layout: &Layout, values: &Values, out: &mut Vec<u8>) -> Result<(), String> {
    for (i, f) in layout.fields.iter().enumerate() {
        if f.is_size() {
            let n = layout
                .fields
                .iter()
                .enumerate()
                .filter(|(_, a)| a.sized_by == Some(i))
                .map(|(j, _)| values.lens[j] as u64)
                .try_fold(None, |seen: Option<u64>, n| match seen {
                    Some(m) if m != n => Err(format!(
                        "arrays counted by `{}` differ in length ({m} and {n})",
                        f.name
                    )),
                    _ => Ok(Some(n)),
                })?
                .unwrap_or(0);
            let max = f.ty.max();
            if n > max {
                return Err(format!(
                    "{n} items do not fit the {} `{}`",
                    f.ty.name(),
                    f.name
                ));
            }
            put(out, f.ty, n);
        } else if f.sized_by.is_some() {
            if is_byte_type(f.ty) {
                out.extend_from_slice(values.text(i));
            } else {
                for &item in values.array(i) {
                    put(out, f.ty, item);
                }
            }
        } else {
            put(out, f.ty, values.slots[i]);
        }
    }
    Ok(())
}
