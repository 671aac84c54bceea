//! One Pallas event record as a row, by its [`RecordId`]: enter and
//! leave, MPI halves, requests and collectives, OpenMP and thread blocks,
//! generic events; its payload's fields and attribute lists.

use super::*;

/// The attribute list of occurrence `index`, if it has one; lists are stored
/// in occurrence order and occurrences without attributes have none.
pub(super) fn attribute_list(
    file: &str,
    event: &EventDef,
    c: &mut EventCursor,
    index: u64,
) -> Result<Option<(usize, usize)>> {
    let buf = &event.attributes;
    while c.attr_pos < buf.len() {
        let at = c.attr_pos;
        let err = |msg: &str| Error::offset(file, (event.attributes_offset + at) as u64, msg);
        if buf.len() - at < 7 {
            return Err(err("truncated attribute list"));
        }
        let list_index = i32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
        let size = u16::from_le_bytes(buf[at + 4..at + 6].try_into().expect("2 bytes")) as usize;
        if size < 7 || size > buf.len() - at {
            return Err(err("attribute list size outside its buffer"));
        }
        match (list_index as i64).cmp(&(index as i64)) {
            std::cmp::Ordering::Less => c.attr_pos += size,
            std::cmp::Ordering::Equal => {
                c.attr_pos += size;
                return Ok(Some((at, at + size)));
            }
            std::cmp::Ordering::Greater => return Ok(None),
        }
    }
    Ok(None)
}

/// Appends an attribute list's values to `rec.attrs` as `name=value`, using
/// `key` and `value` as scratch buffers.
pub(super) fn push_attributes(
    rec: &mut Record,
    list: &[u8],
    (scope, mut restore): (Scope, Option<&mut SymCache>),
    (key, value): (&mut String, &mut String),
    file: &str,
    at: u64,
) -> Result<()> {
    let err = |msg: String| Error::offset(file, at, msg);
    let count = list[6] as usize;
    let mut pos = 7;
    for _ in 0..count {
        if list.len() - pos < 6 {
            return Err(err("attribute value header beyond its list".into()));
        }
        let size = u16::from_le_bytes([list[pos], list[pos + 1]]) as usize;
        let r = u32::from_le_bytes(list[pos + 2..pos + 6].try_into().expect("4 bytes"));
        if size < 6 || size > list.len() - pos {
            return Err(err(format!(
                "attribute value of {size} bytes beyond its list"
            )));
        }
        let bytes = &list[pos + 6..pos + size];
        pos += size;
        let def = scope.attribute(r);
        key.clear();
        match def.and_then(|d| scope.string(d.name)) {
            Some(n) => key.push_str(n),
            None => {
                let _ = write!(key, "attribute_{r}");
            }
        }
        value.clear();
        let kind = def.map(|d| d.kind).unwrap_or(0);
        format_attribute(value, kind, bytes, scope)
            .map_err(|m| err(format!("attribute `{key}`: {m}")))?;
        if let Some(syms) = restore.as_deref_mut() {
            if stream::apply(rec, key, value, syms).map_err(err)? {
                continue;
            }
        }
        rec.push_attr(key, value);
    }
    Ok(())
}

fn format_attribute(out: &mut String, kind: u8, bytes: &[u8], scope: Scope) -> Result<(), String> {
    let mut raw = [0u8; 8];
    if bytes.len() > 8 || bytes.is_empty() {
        return Err(format!("value of {} bytes", bytes.len()));
    }
    raw[..bytes.len()].copy_from_slice(bytes);
    let unsigned = u64::from_le_bytes(raw);
    let need = |n: usize| {
        if bytes.len() == n {
            Ok(())
        } else {
            Err(format!(
                "type {kind} needs {n} bytes, value has {}",
                bytes.len()
            ))
        }
    };
    match kind {
        5 => {
            need(1)?;
            let _ = write!(out, "{}", bytes[0] as i8);
        }
        6 => {
            need(2)?;
            let _ = write!(out, "{}", unsigned as u16 as i16);
        }
        7 => {
            need(4)?;
            let _ = write!(out, "{}", unsigned as u32 as i32);
        }
        8 => {
            need(8)?;
            let _ = write!(out, "{}", unsigned as i64);
        }
        9 => {
            need(4)?;
            let _ = write!(out, "{}", f32::from_bits(unsigned as u32));
        }
        10 => {
            need(8)?;
            let _ = write!(out, "{}", f64::from_bits(unsigned));
        }
        11 => match scope.string(unsigned as u32) {
            Some(s) => out.push_str(s),
            None => return Err(format!("undefined string {unsigned}")),
        },
        _ => {
            // Unsigned integers, other refs, and values whose definition is
            // missing (read by their size, as Pallas does).
            let _ = write!(out, "{unsigned}");
        }
    }
    Ok(())
}

impl Mapper<'_> {
    /// The location of MPI records on `comm`: the thread when the
    /// communicator's ranks are threads, else the process.
    pub(super) fn mpi_loc(&self, comm: u32) -> Sym {
        match self.ranks.by_thread(comm) {
            true => self.loc,
            false => self.process,
        }
    }

    pub(super) fn error(&self, msg: String) -> Error {
        Error::offset(self.p.file, self.p.at, msg)
    }

    pub(super) fn enter(&mut self, rec: &mut Record) -> Result<()> {
        let region = self.p.u32(0)?;
        rec.name = self.names.name(Name::Region(region));
        rec.cat = self.names.name(Name::RegionCat(region));
        rec.kind = Kind::Enter;
        rec.depth = Some(self.frames.len() as u32);
        self.frames.push(region);
        Ok(())
    }

    /// A `LEAVE`: it closes the innermost region, or one below it (the
    /// frames above are put in `cut`, to be cut), or names none open (it
    /// closes the innermost; `model::nesting`).
    pub(super) fn leave(&mut self, rec: &mut Record) -> Result<()> {
        let region = self.p.u32(0)?;
        rec.name = self.names.name(Name::Region(region));
        rec.cat = self.names.name(Name::RegionCat(region));
        rec.kind = Kind::Leave;
        let closing = nesting::closing(self.frames, &region);
        if closing != Closing::Innermost {
            self.not_nested(rec, closing)?;
        }
        match closing {
            Closing::Innermost => {
                self.frames.pop();
            }
            Closing::Crosses(i) => {
                self.cut.clear();
                for &r in &self.frames[i + 1..] {
                    let names = (Name::Region(r), Name::RegionCat(r));
                    self.cut
                        .push((self.names.name(names.0), self.names.name(names.1)));
                }
                self.frames.remove(i);
                rec.depth = Some(i as u32);
                return Ok(());
            }
            Closing::NotOpen => {
                let Some(open) = self.frames.pop() else {
                    rec.kind = Kind::Event;
                    rec.push_attr("record", "LEAVE");
                    return Ok(());
                };
                let named = self.names.syms.symbols().text(rec.name).to_string();
                rec.push_attr(nesting::NAMED_ATTR, &named);
                rec.name = self.names.name(Name::Region(open));
                rec.cat = self.names.name(Name::RegionCat(open));
            }
        }
        rec.depth = Some(self.frames.len() as u32);
        Ok(())
    }

    /// Counts a `LEAVE` that does not close the innermost region, or
    /// refuses it (`--strict`).
    fn not_nested(&mut self, rec: &Record, closing: Closing) -> Result<()> {
        let symbols = self.names.syms.symbols().clone();
        let name = symbols.text(rec.name);
        if self.strict {
            let open = match closing {
                Closing::Crosses(_) => self
                    .frames
                    .last()
                    .map(|&r| self.names.name(Name::Region(r))),
                _ => None,
            };
            let open = open.map(|o| symbols.text(o));
            return Err(self.error(nesting::strict_refusal("LEAVE", name, open)));
        }
        let (file, at) = (self.p.file, self.p.at);
        let crossing = matches!(closing, Closing::Crosses(_));
        let loc = symbols.text(self.loc);
        // The location is made only for the earliest one.
        self.crossings
            .note(crossing, rec.time.unwrap_or_default(), loc, || {
                Location::Offset {
                    file: file.to_string(),
                    offset: at,
                }
            });
        Ok(())
    }

    /// A point-to-point send or receive: a half with its peer, channel and
    /// size (and request id for the nonblocking ones).
    pub(super) fn half(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        let send = matches!(id, RecordId::MpiSend | RecordId::MpiIsend);
        rec.kind = if send { Kind::Send } else { Kind::Recv };
        let comm = self.p.u32(4)?;
        rec.loc = self.mpi_loc(comm);
        rec.cat = well_known::MPI;
        rec.name = self.names.name(Name::Record(id.number()));
        let ranks = (self.ranks, self.restoring);
        ThreadSource::set_peer(ranks, self.names, rec, comm, self.p.u32(0)?);
        rec.comm = self.names.name(Name::Comm(comm));
        rec.tag = Some(self.p.u32(8)? as i64);
        rec.size = Some(self.p.u64(12)?);
        if matches!(id, RecordId::MpiIsend | RecordId::MpiIrecv) {
            let _ = write!(rec.id, "{}", self.p.u64(20)?);
        }
        if !self.restoring {
            rec.push_attr("thread", self.thread);
        }
        Ok(())
    }

    /// A request's completion or a receive posted: an event with its id.
    pub(super) fn request(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        rec.kind = Kind::Event;
        rec.cat = well_known::MPI;
        rec.name = self.names.name(Name::Record(id.number()));
        let _ = write!(rec.id, "{}", self.p.u64(0)?);
        if id == RecordId::MpiIrecvRequest {
            // Receives complete later, matched in posting order.
            rec.push_attr(crate::model::record::ATTR_POSTS, "recv");
        }
        Ok(())
    }

    /// A collective from its begin to this end, each (as emitted, as read).
    pub(super) fn collective(
        &mut self,
        rec: &mut Record,
        (begin, raw_begin): (i64, i64),
        (end, raw_end): (i64, i64),
    ) -> Result<()> {
        rec.kind = Kind::Coll;
        rec.time = Some(begin);
        if raw_begin != begin {
            rec.push_attr("raw_time", &raw_begin.to_string());
        }
        if raw_end != end {
            rec.push_attr("raw_end", &raw_end.to_string());
        }
        rec.end = Some(end);
        let comm = self.p.u32(4)?;
        rec.loc = self.mpi_loc(comm);
        rec.cat = well_known::MPI;
        rec.name = self.names.name(Name::Collective(self.p.u32(0)?));
        rec.comm = self.names.name(Name::Comm(comm));
        let root = self.p.u32(8)?;
        if root != u32::MAX {
            ThreadSource::set_peer((self.ranks, self.restoring), self.names, rec, comm, root);
        }
        rec.size = Some(self.p.u64(12)?);
        let _ = write!(rec.value, "{}", self.p.u64(20)?);
        if !self.restoring {
            rec.push_attr("thread", self.thread);
        }
        Ok(())
    }

    /// An OpenMP or thread block opens or closes: an event of the thread
    /// model, not a frame, so it takes no time from the frame around it
    /// (a fork's thread count with it).
    pub(super) fn thread_model(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        let record = id.number();
        rec.kind = Kind::Event;
        rec.cat = self.names.name(Name::BlockCat(record));
        rec.name = self.names.name(Name::Record(record));
        if matches!(id, RecordId::OmpFork | RecordId::ThreadFork) {
            self.value.clear();
            let _ = write!(self.value, "{}", self.p.u32(0)?);
            rec.push_attr("nthreads", self.value);
        }
        Ok(())
    }

    /// A lock or task event of an OpenMP or thread block, with the lock's
    /// or the task's id where the record has one.
    pub(super) fn block_event(&mut self, rec: &mut Record, id: RecordId) -> Result<()> {
        use RecordId::*;
        let record = id.number();
        rec.kind = Kind::Event;
        rec.cat = self.names.name(Name::BlockCat(record));
        rec.name = self.names.name(Name::Record(record));
        match id {
            OmpAcquireLock | OmpReleaseLock | ThreadAcquireLock | ThreadReleaseLock => {
                let _ = write!(rec.id, "{}", self.p.u32(0)?);
            }
            OmpTaskCreate | OmpTaskSwitch | OmpTaskComplete => {
                let _ = write!(rec.id, "{}", self.p.u64(0)?);
            }
            _ => {}
        }
        Ok(())
    }

    /// A generic event, named by a defined string.
    pub(super) fn generic(&mut self, rec: &mut Record) -> Result<()> {
        let s = self.p.u32(0)?;
        rec.kind = Kind::Event;
        rec.name = self
            .names
            .sym(Name::Text(s))
            .map_err(|s| self.error(format!("GENERIC event names undefined string {s}")))?;
        Ok(())
    }

    /// A record with no row of its own: an event named after it, its
    /// payload in hex.
    pub(super) fn other(&mut self, rec: &mut Record) {
        rec.kind = Kind::Event;
        rec.name = self.names.name(Name::Other(self.p.record));
        if !self.p.bytes.is_empty() {
            let mut hex = String::with_capacity(2 * self.p.bytes.len());
            for b in self.p.bytes {
                let _ = write!(hex, "{b:02x}");
            }
            rec.push_attr("payload", &hex);
        }
    }
}

impl Payload<'_> {
    pub(super) fn field<const N: usize>(&self, offset: usize) -> Result<[u8; N]> {
        self.bytes
            .get(offset..offset + N)
            .map(|s| s.try_into().expect("N bytes"))
            .ok_or_else(|| {
                Error::offset(
                    self.file,
                    self.at,
                    format!(
                        "{} payload of {} bytes is too short (field at byte {offset})",
                        record_name(self.record),
                        self.bytes.len()
                    ),
                )
            })
    }

    pub(super) fn u32(&self, offset: usize) -> Result<u32> {
        self.field::<4>(offset).map(u32::from_le_bytes)
    }

    pub(super) fn u64(&self, offset: usize) -> Result<u64> {
        self.field::<8>(offset).map(u64::from_le_bytes)
    }
}
