//! Collectives: a participant row as the reader makes of a raw event, and
//! the participants of one combined record gathered back into it.

use super::records::{attrs_exactly, parse_u32, uses_only};
use super::{ticks, StfWriter};
use crate::error::Result;
use crate::formats::stf::layout::Layout;
use crate::formats::stf::NONE;
use crate::model::record::Column;
use crate::model::record::{Attr, Record, Sym};

/// The columns of a raw collective's row.
const RAW_COLUMNS: [Column; 7] = [
    Column::End,
    Column::Name,
    Column::Peer,
    Column::Comm,
    Column::Size,
    Column::Id,
    Column::Value,
];

/// The participants of one collective seen so far, by slot.
pub(super) struct Instance {
    pub(super) rows: Vec<Option<Record>>,
    got: usize,
}

/// How a participant row of a collective record says where it belongs.
struct Seat {
    index: usize,
    of: usize,
    /// `recvd` or `sent` with the root's bytes.
    root: Option<(&'static str, u64)>,
    scl: Option<u32>,
    unknown_start: bool,
}

/// What one record holds of a collective whose rows agree.
struct RecordShape {
    /// The layout, as the specification names it.
    layout: &'static str,
    /// `recvd` or `sent`, with the root's bytes.
    root: Option<(&'static str, u64)>,
    /// The record's time: the first known start.
    time: i64,
}

/// The record the participants `rows` (with their `slots`) make, if they
/// agree on one: same operation, communicator, root and columns, each
/// value fitting its field.
fn collective_shape(rows: &[Record], slots: &[Seat]) -> Option<RecordShape> {
    let head = &rows[0];
    let (root, scl) = (slots.first()?.root, slots[0].scl.is_some());
    let (has_size, has_value) = (head.size.is_some(), !head.value.is_empty());
    let agree = slots.len() == rows.len()
        && !head.name.is_empty()
        && (root.is_none() || !head.peer.is_empty())
        && rows.iter().zip(slots).all(|(r, s)| {
            (&r.name, &r.comm, &r.peer) == (&head.name, &head.comm, &head.peer)
                && (r.size.is_some(), !r.value.is_empty()) == (has_size, has_value)
                && r.size.is_none_or(|v| v <= u32::MAX as u64)
                && (r.value.is_empty() || parse_u32(&r.value).is_some())
                && r.end >= r.time
                && (s.root, s.scl.is_some()) == (root, scl)
                && r.cat.is_empty()
                && r.flags.is_empty()
                && r.tag.is_none()
                && r.depth.is_none()
        });
    let layout = match (root.map(|r| r.0), has_size, has_value, scl) {
        (Some("recvd"), true, false, false) => "all_to_one_communication",
        (Some("recvd"), true, false, true) => "all_to_one_communication_1",
        (Some("sent"), false, true, false) => "one_to_all_communication",
        (Some("sent"), false, true, true) => "one_to_all_communication_1",
        (None, true, true, false) => "all_to_all_communication",
        (None, true, true, true) => "all_to_all_communication_1",
        (None, false, false, false) => "all_communication",
        (None, false, false, true) => "all_communication_1",
        _ => return None,
    };
    // A participant whose start is unknown is read back at the record's time.
    let known = rows.iter().zip(slots).filter(|(_, s)| !s.unknown_start);
    let first = known.filter_map(|(r, _)| r.time).min();
    let time = first.or_else(|| rows.iter().filter_map(|r| r.time).min())?;
    let unknown_elsewhere = rows
        .iter()
        .zip(slots)
        .any(|(r, s)| s.unknown_start && r.time != Some(time));
    (agree && !unknown_elsewhere).then_some(RecordShape { layout, root, time })
}

/// The per-participant arrays of a collective record at time `t`.
fn collective_arrays(rows: &[Record], slots: &[Seat], t: u64) -> [(&'static str, Vec<u64>); 5] {
    let column = |pick: &dyn Fn(&Record, &Seat) -> u64| -> Vec<u64> {
        rows.iter().zip(slots).map(|(r, s)| pick(r, s)).collect()
    };
    let time = |r: &Record| r.time.unwrap_or(0);
    [
        (
            "start_time",
            column(&|r, s| {
                if s.unknown_start {
                    u64::MAX
                } else {
                    time(r) as u64 - t
                }
            }),
        ),
        (
            "delta",
            column(&|r, _| (r.end.unwrap_or(0) - time(r)) as u64),
        ),
        ("send_size", column(&|r, _| r.size.unwrap_or(0))),
        ("receive_size", column(&|r, _| r.value.parse().unwrap_or(0))),
        ("scl", column(&|_, s| s.scl.unwrap_or(0) as u64)),
    ]
}

/// Parses the `slot`, `of`, root bytes, `scl` and `start` attributes, in
/// the order the reader writes them.
fn parse_slot(rec: &Record) -> Option<Seat> {
    let attrs: Vec<Attr<'_>> = rec.attrs().collect();
    let mut it = attrs.iter().peekable();
    let mut next_if = |key: &str| it.next_if(|(k, _)| k == key).map(|(_, v)| v.clone());
    let index = next_if("slot")?.parse().ok()?;
    let of: usize = next_if("of")?.parse().ok()?;
    let root = match (next_if("recvd"), next_if("sent")) {
        (Some(v), None) => Some(("recvd", v.parse().ok()?)),
        (None, Some(v)) => Some(("sent", v.parse().ok()?)),
        (None, None) => None,
        _ => return None,
    };
    let scl = next_if("scl")
        .map(|v| parse_u32(&v))
        .map_or(Some(None), |v| v.map(Some))?;
    let unknown_start = next_if("start")
        .map(|v| v == "unknown")
        .map_or(Some(false), |ok| ok.then_some(true))?;
    (it.next().is_none() && index < of).then_some(Seat {
        index,
        of,
        root,
        scl,
        unknown_start,
    })
}

impl StfWriter {
    pub(super) fn write_coll(&mut self, rec: &Record, t: u64) -> Result<bool> {
        if rec.attrs.starts_with("slot=") {
            return self.gather(rec);
        }
        self.write_raw_collective(rec, t)
    }

    /// A participant of a collective record: held until all have come.
    fn gather(&mut self, rec: &Record) -> Result<bool> {
        let Some(slot) = parse_slot(rec) else {
            return Ok(false);
        };
        let instance = self
            .instances
            .entry(rec.id.clone())
            .or_insert_with(|| Instance {
                rows: vec![None; slot.of],
                got: 0,
            });
        if instance.rows.len() != slot.of || instance.rows[slot.index].is_some() {
            return Ok(false);
        }
        instance.rows[slot.index] = Some(rec.clone());
        instance.got += 1;
        if instance.got < slot.of {
            return Ok(true);
        }
        let instance = self.instances.remove(&rec.id).expect("present");
        // Its rows come back in time order from the one record.
        self.place = None;
        let rows: Vec<Record> = instance
            .rows
            .into_iter()
            .map(|r| r.expect("complete"))
            .collect();
        if !self.write_collective(&rows)? {
            for row in &rows {
                let time = row.time.map(ticks).transpose()?;
                self.write_row(row, time)?;
            }
        }
        Ok(true)
    }

    /// The record of a whole collective, if its rows agree on one.
    fn write_collective(&mut self, rows: &[Record]) -> Result<bool> {
        let slots: Vec<Seat> = rows.iter().filter_map(parse_slot).collect();
        let Some(shape) = collective_shape(rows, &slots) else {
            return Ok(false);
        };
        let head = &rows[0];
        let Some(op) = self.op(head.name)? else {
            return Ok(false);
        };
        let mut members = Vec::with_capacity(rows.len());
        for r in rows {
            members.push(self.willy_of(r.loc)?.0);
        }
        let comm = self.comm_with(head.comm, &members)?;
        let root = match shape.root {
            Some((field, bytes)) => Some((field, bytes, self.willy_of(head.peer)?.0)),
            None => None,
        };
        let id = self.ids[shape.layout];
        let layout: &'static Layout = &self.layouts[id as usize];
        let t = ticks(shape.time)?;
        self.values.reset(layout.fields.len());
        let slot = |field: &str| layout.field(field).expect("a field of the layout");
        self.values.slots[slot("communicator")] = comm as u64;
        self.values.slots[slot("type")] = op as u64;
        if let Some((field, bytes, willy)) = root {
            let root_field = if field == "recvd" {
                "receiver"
            } else {
                "sender"
            };
            self.values.slots[slot(root_field)] = willy as u64;
            self.values.slots[slot(field)] = bytes;
        }
        for (field, items) in collective_arrays(rows, &slots, t) {
            if let Some(i) = layout.field(field) {
                self.values.set_array(i, &items);
            }
        }
        let f = self.route(head, None)?;
        self.emit(f, id, Some(t))?;
        Ok(true)
    }

    /// `collop_raw_event` for a `coll` row as the reader makes of one.
    fn write_raw_collective(&mut self, rec: &Record, t: u64) -> Result<bool> {
        let Some([kind, scl]) = attrs_exactly(rec, ["kind", "scl"]) else {
            return Ok(false);
        };
        let numbers = (parse_u32(&kind), parse_u32(&scl), parse_u32(&rec.value));
        let counter = if rec.id.is_empty() {
            Some(0)
        } else {
            parse_u32(&rec.id).filter(|&c| c != 0)
        };
        let plain = !rec.loc.is_empty() && uses_only(rec, &RAW_COLUMNS);
        let (Some(kind), Some(scl), Some(received)) = numbers else {
            return Ok(false);
        };
        let size = rec.size.filter(|&s| s <= u32::MAX as u64);
        let end = rec.end.and_then(|e| e.checked_sub(t as i64));
        let (Some(counter), Some(size), Some(end), true) = (counter, size, end, plain) else {
            return Ok(false);
        };
        let Some(op) = self.op(rec.name)? else {
            return Ok(false);
        };
        let willy = self.willy_of(rec.loc)?.0;
        let root = if rec.peer.is_empty() {
            NONE
        } else {
            self.willy_of(rec.peer)?.0
        };
        let comm = self.comm(rec.comm)?;
        let f = self.route(rec, None)?;
        self.start("collop_raw_event");
        let slots = [
            0,
            willy as u64,
            kind as u64,
            op as u64,
            comm as u64,
            counter as u64,
            root as u64,
            size,
            received as u64,
            end as u64,
            scl as u64,
        ];
        self.values.slots.copy_from_slice(&slots);
        self.emit(f, self.ids["collop_raw_event"], Some(t))?;
        Ok(true)
    }

    /// The id of collective operation `name` (declared on first use); `None`
    /// once the 256 ids of its U1 field are taken.
    fn op(&mut self, name: Sym) -> Result<Option<u32>> {
        if let Some(&id) = self.declared.ops.get(&name) {
            return Ok(Some(id));
        }
        let id = self.declared.ops.len() as u32;
        if id > u8::MAX as u32 || name.is_empty() {
            return Ok(None);
        }
        self.declared.ops.insert(name, id);
        self.start_decl("collective_operation_definition");
        self.dvalues.slots[0] = id as u64;
        let symbols = self.symbols.clone();
        self.dvalues.set_text(2, symbols.text(name).as_bytes());
        self.declare("collective_operation_definition")?;
        Ok(Some(id))
    }
}
