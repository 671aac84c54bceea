//! Perfetto's protobuf trace: `TracePacket`s holding `TrackDescriptor`s and
//! `TrackEvent`s on one packet sequence, event names and categories
//! interned, encoded directly (the few message types needed are below, with
//! their field numbers from Perfetto's `perfetto_trace.proto`).
//!
//! Timestamps are unsigned there, and stream times may be negative: a
//! packet's timestamp is the stream time plus [`TIME_BIAS`]. Perfetto UI
//! shows times from the start of the trace, so the bias does not show.

use super::{Encoder, Label, Point, Track, TrackRole};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::io::Output;
use crate::pipe::{RecordSink, WriteOptions};

/// Added to every stream time to make Perfetto's unsigned timestamp:
/// 10^18 ns, so a timestamp's last digits read as the stream time.
pub const TIME_BIAS: i64 = 1_000_000_000_000_000_000;

/// Opens the `perfetto` writer over `out`.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    Ok(Box::new(super::matched(
        PerfettoEncoder::new(out),
        &opts.symbols,
        &opts.warnings,
    )))
}

/// Field numbers of the messages written.
mod field {
    pub const TRACE_PACKET: u32 = 1;
    // TracePacket
    pub const TIMESTAMP: u32 = 8;
    pub const SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    // TrackDescriptor
    pub const UUID: u32 = 1;
    pub const NAME: u32 = 2;
    pub const PROCESS: u32 = 3;
    pub const PARENT_UUID: u32 = 5;
    pub const COUNTER: u32 = 8;
    pub const CHILD_ORDERING: u32 = 11;
    pub const SIBLING_ORDER_RANK: u32 = 12;
    // ProcessDescriptor
    pub const PID: u32 = 1;
    pub const PROCESS_NAME: u32 = 6;
    // TrackEvent
    pub const CATEGORY_IIDS: u32 = 3;
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    pub const TYPE: u32 = 9;
    pub const NAME_IID: u32 = 10;
    pub const TRACK_UUID: u32 = 11;
    pub const COUNTER_VALUE: u32 = 30;
    pub const DOUBLE_COUNTER_VALUE: u32 = 44;
    pub const FLOW_IDS: u32 = 47;
    pub const TERMINATING_FLOW_IDS: u32 = 48;
    // DebugAnnotation
    pub const ANNOTATION_NAME_IID: u32 = 1;
    pub const ANNOTATION_STRING: u32 = 6;
    // InternedData, and EventCategory / EventName / DebugAnnotationName inside it
    pub const EVENT_CATEGORIES: u32 = 1;
    pub const EVENT_NAMES: u32 = 2;
    pub const ANNOTATION_NAMES: u32 = 3;
    pub const IID: u32 = 1;
    pub const INTERNED_NAME: u32 = 2;
}

/// `TrackEvent.Type`.
#[derive(Clone, Copy)]
enum EventType {
    SliceBegin = 1,
    SliceEnd = 2,
    Instant = 3,
    Counter = 4,
}

const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
/// `TrackDescriptor.ChildTracksOrdering.EXPLICIT`: children in
/// `sibling_order_rank` order (the container tree's declaration order).
const ORDERING_EXPLICIT: u64 = 3;
/// The one packet sequence of the file.
const SEQUENCE: u64 = 1;
/// Interned strings kept before the table starts again, so memory stays
/// bounded whatever the number of distinct names.
const INTERN_LIMIT: usize = 1 << 16;

/// A protobuf message being written: fields appended to a buffer.
#[derive(Default)]
struct Message {
    buf: Vec<u8>,
}

/// `v` as a protobuf varint in `out`; returns its length.
fn encode_varint(mut v: u64, out: &mut [u8; 10]) -> usize {
    let mut len = 0;
    while v >= 0x80 {
        out[len] = (v as u8) | 0x80;
        v >>= 7;
        len += 1;
    }
    out[len] = v as u8;
    len + 1
}

impl Message {
    fn varint(&mut self, v: u64) {
        let mut bytes = [0; 10];
        let len = encode_varint(v, &mut bytes);
        self.buf.extend_from_slice(&bytes[..len]);
    }

    fn tag(&mut self, field: u32, wire: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire));
    }

    fn uint(&mut self, field: u32, v: u64) {
        self.tag(field, 0);
        self.varint(v);
    }

    fn int(&mut self, field: u32, v: i64) {
        self.uint(field, v as u64);
    }

    fn fixed64(&mut self, field: u32, v: u64) {
        self.tag(field, 1);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn double(&mut self, field: u32, v: f64) {
        self.fixed64(field, v.to_bits());
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.tag(field, 2);
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A nested message written by `build`, its length put before it once known.
    fn nested(&mut self, field: u32, build: impl FnOnce(&mut Message)) {
        self.tag(field, 2);
        let at = self.buf.len();
        self.buf.push(0);
        build(self);
        let len = self.buf.len() - at - 1;
        if len < 0x80 {
            self.buf[at] = len as u8;
        } else {
            let mut prefix = [0; 10];
            let n = encode_varint(len as u64, &mut prefix);
            self.buf.splice(at..=at, prefix[..n].iter().copied());
        }
    }
}

/// Strings interned on the packet sequence, one table per `InternedData`
/// field (1 categories, 2 event names, 3 annotation names), and those new
/// in the packet being built.
#[derive(Default)]
struct Interned {
    tables: [FastMap<String, u64>; 3],
    count: usize,
    /// (table field, iid, end of its text in `fresh_text`)
    fresh: Vec<(u32, u64, usize)>,
    fresh_text: String,
}

impl Interned {
    /// The iid of `text` in `table`, interning it in this packet if new.
    fn iid(&mut self, table: u32, text: &str) -> u64 {
        let map = &mut self.tables[table as usize - 1];
        if let Some(&iid) = map.get(text) {
            return iid;
        }
        let iid = map.len() as u64 + 1;
        map.insert(text.to_string(), iid);
        self.count += 1;
        self.fresh_text.push_str(text);
        self.fresh.push((table, iid, self.fresh_text.len()));
        iid
    }

    fn clear(&mut self) {
        self.tables.iter_mut().for_each(FastMap::clear);
        self.count = 0;
    }
}

/// Writes the timeline as Perfetto trace packets.
pub struct PerfettoEncoder {
    out: Output,
    packet: Message,
    annotations: Message,
    interned: Interned,
    cleared: bool,
}

impl PerfettoEncoder {
    /// An encoder over `out`.
    pub fn new(out: Output) -> PerfettoEncoder {
        PerfettoEncoder {
            out,
            packet: Message::default(),
            annotations: Message::default(),
            interned: Interned::default(),
            cleared: false,
        }
    }

    /// Writes the packet built in `self.packet` as one `Trace.packet`.
    fn emit(&mut self) -> Result<()> {
        let mut head = [0; 11];
        head[0] = (field::TRACE_PACKET << 3 | 2) as u8;
        let mut len = [0; 10];
        let n = encode_varint(self.packet.buf.len() as u64, &mut len);
        head[1..=n].copy_from_slice(&len[..n]);
        self.out.write_line(&head[..=n])?;
        self.out.write_line(&self.packet.buf)
    }

    /// Starts an event packet at `ts`: interns `label`'s strings (the new
    /// ones go in this packet) and writes its debug annotations aside;
    /// returns the category and name iids.
    fn start_event(&mut self, ts: i64, label: Option<&Label>) -> Result<Option<(u64, u64)>> {
        // The field is unsigned, but Perfetto's trace processor reads it
        // as a signed 64-bit number: the biased time must fit both.
        let timestamp = ts.checked_add(TIME_BIAS).filter(|t| *t >= 0).ok_or_else(|| {
            Error::Record(format!(
                "time {ts} ns is outside what Perfetto can show: stream times from -10^18 to {} ns (the timestamp is the time + 10^18 ns, read as a signed 64-bit number)",
                i64::MAX - TIME_BIAS
            ))
        })?;
        if self.interned.count > INTERN_LIMIT {
            self.interned.clear();
            self.cleared = false;
        }
        let mut flags = SEQ_NEEDS_INCREMENTAL_STATE;
        if !self.cleared {
            self.cleared = true;
            flags |= SEQ_INCREMENTAL_STATE_CLEARED;
        }
        let p = &mut self.packet;
        p.buf.clear();
        p.uint(field::TIMESTAMP, timestamp as u64);
        p.uint(field::SEQUENCE_ID, SEQUENCE);
        p.uint(field::SEQUENCE_FLAGS, flags);
        let Some(label) = label else {
            return Ok(None);
        };
        let interned = &mut self.interned;
        let cat = interned.iid(field::EVENT_CATEGORIES, label.cat);
        let name = interned.iid(field::EVENT_NAMES, label.name);
        let annotations = &mut self.annotations;
        annotations.buf.clear();
        label.for_each_arg(|key, value| {
            let iid = interned.iid(field::ANNOTATION_NAMES, key);
            annotations.nested(field::DEBUG_ANNOTATIONS, |a| {
                a.uint(field::ANNOTATION_NAME_IID, iid);
                a.bytes(field::ANNOTATION_STRING, value.as_bytes());
            });
        });
        if !interned.fresh.is_empty() {
            p.nested(field::INTERNED_DATA, |d| {
                let mut from = 0;
                for &(table, iid, to) in &interned.fresh {
                    let text = &interned.fresh_text.as_bytes()[from..to];
                    from = to;
                    d.nested(table, |e| {
                        e.uint(field::IID, iid);
                        e.bytes(field::INTERNED_NAME, text);
                    });
                }
            });
            interned.fresh.clear();
            interned.fresh_text.clear();
        }
        Ok(Some((cat, name)))
    }

    /// One `TrackEvent` packet; `more` adds fields to the event.
    fn event(
        &mut self,
        kind: EventType,
        track: &Track,
        ts: i64,
        label: Option<&Label>,
        more: impl FnOnce(&mut Message),
    ) -> Result<()> {
        let iids = self.start_event(ts, label)?;
        let annotations = &self.annotations.buf;
        self.packet.nested(field::TRACK_EVENT, |e| {
            e.uint(field::TYPE, kind as u64);
            e.uint(field::TRACK_UUID, track.uuid);
            if let Some((cat, name)) = iids {
                e.uint(field::CATEGORY_IIDS, cat);
                e.uint(field::NAME_IID, name);
                e.buf.extend_from_slice(annotations);
            }
            more(e);
        });
        self.emit()
    }
}

impl Encoder for PerfettoEncoder {
    fn track(&mut self, track: &Track) -> Result<()> {
        let p = &mut self.packet;
        p.buf.clear();
        p.uint(field::SEQUENCE_ID, SEQUENCE);
        p.nested(field::TRACK_DESCRIPTOR, |d| {
            d.uint(field::UUID, track.uuid);
            d.bytes(field::NAME, track.name.as_bytes());
            if let Some(parent) = track.parent {
                d.uint(field::PARENT_UUID, parent);
            }
            match track.role {
                TrackRole::Process => d.nested(field::PROCESS, |p| {
                    p.int(field::PID, track.pid as i64);
                    p.bytes(field::PROCESS_NAME, track.name.as_bytes());
                }),
                TrackRole::Counter => d.nested(field::COUNTER, |_| {}),
                TrackRole::Thread => {}
            }
            d.uint(field::CHILD_ORDERING, ORDERING_EXPLICIT);
            d.int(field::SIBLING_ORDER_RANK, track.uuid as i64);
        });
        self.emit()
    }

    fn begin(&mut self, track: &Track, ts: i64, label: &Label) -> Result<()> {
        self.event(EventType::SliceBegin, track, ts, Some(label), |_| {})
    }

    fn end(&mut self, track: &Track, ts: i64) -> Result<()> {
        self.event(EventType::SliceEnd, track, ts, None, |_| {})
    }

    fn complete(&mut self, track: &Track, ts: i64, end: i64, label: &Label) -> Result<()> {
        self.begin(track, ts, label)?;
        self.end(track, end)
    }

    fn instant(&mut self, track: &Track, ts: i64, label: &Label) -> Result<()> {
        self.event(EventType::Instant, track, ts, Some(label), |_| {})
    }

    fn counter(&mut self, track: &Track, ts: i64, value: &str) -> Result<()> {
        self.event(EventType::Counter, track, ts, None, |e| {
            match value.parse::<i64>() {
                Ok(n) => e.int(field::COUNTER_VALUE, n),
                Err(_) => e.double(field::DOUBLE_COUNTER_VALUE, value.parse().unwrap_or(0.0)),
            }
        })
    }

    fn flow(&mut self, id: u64, (from, ts): Point, (to, end): Point, label: &Label) -> Result<()> {
        self.event(EventType::Instant, from, ts, Some(label), |e| {
            e.fixed64(field::FLOW_IDS, id)
        })?;
        self.event(
            EventType::Instant,
            to,
            end,
            Some(&label.without_args()),
            |e| e.fixed64(field::TERMINATING_FLOW_IDS, id),
        )
    }

    fn finish(&mut self, _meta: &[(String, String)]) -> Result<()> {
        self.out.finish()
    }
}
