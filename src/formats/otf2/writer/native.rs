//! `event` rows that are an OTF2 record the reader maps to an `event`
//! (docs/formats.md, "OTF2"), written back as that record rather than as
//! a parameter: the thread model's forks, joins, teams, locks and tasks,
//! the MPI request records, `PROGRAM_END`, `MEASUREMENT_ON_OFF`,
//! `BUFFER_FLUSH`. A row is one when
//! its `name` is the record's, its `cat` the record's family, and its first
//! attributes are the record's fields by name, each a value the field
//! holds (a number, a time, an enumeration's name, a string, a
//! communicator); the request records hold their request in `id`. A field
//! that refers to another definition (a location, a region, a group, an
//! RMA window, whose communicator the row does not give, an I/O handle, a
//! calling context) is not written so: such a row keeps the parameter.

use super::super::catalogue::{family, id, Spec, EVENTS, F, N, R};
use super::super::encode::{event_into, Buf};
use super::super::RMA_WIN_COMM;
use super::order::TiePlace;
use super::{ticks, Otf2Writer};
use crate::error::Result;
use crate::model::hpc::{collective_op, PARADIGMS};
use crate::model::record::{Column, Record};
use crate::number;

/// The most fields a record written natively has.
const MOST_FIELDS: usize = 8;

/// The record named `name` that the reader maps to an `event`.
fn spec_named(name: &str) -> Option<&'static Spec> {
    EVENTS.iter().find(|s| s.name == name)
}

/// Whether `spec`'s one field is a request the reader puts in `id`.
fn holds_request(spec: &Spec) -> bool {
    matches!(spec.fields, [("request_id", F::U64)])
}

impl Otf2Writer {
    /// Writes `rec` as the OTF2 record it came from; false when it is not
    /// one this writer can give back.
    pub(super) fn native(&mut self, rec: &Record) -> Result<bool> {
        let symbols = self.symbols.clone();
        let Some(spec) = spec_named(symbols.text(rec.name)) else {
            return Ok(false);
        };
        let native = *symbols.text(rec.cat) == *family(spec.id)
            && rec.end.is_none()
            && !rec.loc.is_empty()
            && spec.fields.len() <= MOST_FIELDS;
        if !native {
            return Ok(false);
        }
        let mut values = [0u64; MOST_FIELDS];
        let given = match holds_request(spec) {
            true => match number::parse_uint(rec.id.as_bytes()) {
                Some(request) => {
                    values[0] = request;
                    0
                }
                None => return Ok(false),
            },
            false => match self.field_values(rec, spec, &mut values)? {
                true => spec.fields.len() + self.window_comm(rec, spec)?,
                false => return Ok(false),
            },
        };
        let l = self.location(rec.loc)?;
        self.row_attrs(rec, given)?;
        if let Some(depth) = rec.depth {
            self.column("depth", itoa::Buffer::new().format(depth))?;
        }
        let held: &[Column] = match holds_request(spec) {
            true => &[Column::Id],
            false => &[],
        };
        self.rest(rec, held)?;
        let t = ticks(rec.time)?;
        self.event.clear();
        let fields = &values[..spec.fields.len()];
        event_into(
            &mut self.event,
            (t, spec.id, spec.singleton),
            &self.attrs,
            |b| {
                for (&(_, f), &v) in spec.fields.iter().zip(fields) {
                    encode_field(b, f, v);
                }
            },
        );
        self.queue(l, (t, TiePlace::InOrder)).map(|()| true)
    }

    /// How many attributes after its fields an `RMA_WIN_CREATE` row gives
    /// its window's communicator in (`RMA_WIN_COMM`, which the window's
    /// definition takes): 1, or 0 for other rows.
    fn window_comm(&mut self, rec: &Record, spec: &Spec) -> Result<usize> {
        if spec.id != id::RMA_WIN_CREATE {
            return Ok(0);
        }
        let mut attrs = rec.attrs();
        let win = attrs.next().map(|(_, v)| v).unwrap_or_default();
        let comm = match attrs.next() {
            Some((key, comm)) if key == RMA_WIN_COMM => comm,
            _ => return Ok(0),
        };
        let c = match &*comm {
            "UNDEFINED" => None,
            text => Some(self.registry.comm(self.symbols.intern(text), text)?),
        };
        self.registry.rma_win(&win, c)?;
        Ok(1)
    }

    /// The values of `spec`'s fields from the first attributes of `rec`;
    /// false when one is missing or not a value its field holds.
    fn field_values(
        &mut self,
        rec: &Record,
        spec: &Spec,
        values: &mut [u64; MOST_FIELDS],
    ) -> Result<bool> {
        let mut attrs = rec.attrs();
        for (i, &(name, f)) in spec.fields.iter().enumerate() {
            let Some((key, text)) = attrs.next() else {
                return Ok(false);
            };
            if key != name {
                return Ok(false);
            }
            match self.field_value(f, &text)? {
                Some(v) => values[i] = v,
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// The raw value of a field of type `f` the reader wrote as `text`.
    fn field_value(&mut self, f: F, text: &str) -> Result<Option<u64>> {
        let bytes = text.as_bytes();
        Ok(match f {
            F::U8 => number::parse_uint(bytes).filter(|&v| v <= u8::MAX.into()),
            F::U32 => number::parse_uint(bytes).filter(|&v| v <= u32::MAX.into()),
            F::U64 | F::Time => number::parse_uint(bytes),
            F::I64 => number::parse_int(bytes).map(|v| v as u64),
            F::Enum(n) => enum_value(n, text),
            F::Ref(R::String) => Some(self.registry.value_string(text)?.into()),
            F::Ref(R::Comm) => {
                let sym = self.symbols.intern(text);
                let c = self.registry.comm(sym, text)?;
                Some(self.registry.comm_ref(c).into())
            }
            F::Ref(R::RmaWin) if text != "UNDEFINED" => {
                Some(self.registry.rma_win(text, None)?.into())
            }
            F::Ref(_) | F::Array => None,
        })
    }
}

/// The number of enumeration `n`'s value named `text` (as the reader
/// names them), or given as a number.
fn enum_value(n: N, text: &str) -> Option<u64> {
    let named = match n {
        N::Paradigm => PARADIGMS.iter().position(|p| *p == text).map(|p| p as u64),
        N::CollectiveOp => collective_op(text).map(u64::from),
        N::MeasurementMode => ["UNKNOWN", "ON", "OFF"]
            .iter()
            .position(|m| *m == text)
            .map(|m| m as u64),
        N::LockType => ["EXCLUSIVE", "SHARED"]
            .iter()
            .position(|m| *m == text)
            .map(|m| m as u64),
    };
    named
        .or_else(|| number::parse_uint(text.as_bytes()))
        .filter(|&v| v <= u8::MAX.into())
}

/// A field's value in its encoding.
fn encode_field(b: &mut Buf, f: F, v: u64) {
    match f {
        F::U8 | F::Enum(_) | F::Ref(R::IoParadigm) => {
            b.u8(v as u8);
        }
        F::U32 | F::Ref(_) => {
            b.u32c(v as u32);
        }
        F::U64 => {
            b.u64c(v);
        }
        F::I64 => {
            b.i64c(v as i64);
        }
        F::Time => {
            b.u64(v);
        }
        F::Array => {}
    }
}
