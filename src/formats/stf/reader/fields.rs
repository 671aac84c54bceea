//! A record's fields as the trace's declarations name them: times in ns,
//! strings, classes, functions, communicators, operations, willies, and
//! the text of a record of any layout.

use super::*;

impl Trace {
    /// Ticks to stream nanoseconds.
    pub(super) fn ns(&self, feed: &Feed, at: u64, ticks: i128) -> Result<i64> {
        let ns = match self.ns_per_tick {
            None => ticks,
            Some(p) => (ticks as f64 * p).round() as i128,
        };
        i64::try_from(ns).map_err(|_| {
            feed.error_at(
                at,
                format!("time {ticks} ticks is beyond the stream's range"),
            )
        })
    }

    pub(super) fn string(&self, feed: &Feed, at: u64, id: u32) -> Result<&str> {
        if id == NONE {
            return Ok("");
        }
        declared(&self.strings, feed, at, "stf_string", id).map(String::as_str)
    }

    pub(super) fn class(&self, feed: &Feed, at: u64, id: u32) -> Result<&str> {
        if id == NONE {
            return Ok("");
        }
        let name = declared(&self.classes, feed, at, "class", id)?;
        self.string(feed, at, *name)
    }

    pub(super) fn function(&self, feed: &Feed, at: u64, id: u32) -> Result<(&str, &str)> {
        let (name, class) = declared(&self.functions, feed, at, "function", id)?;
        Ok((self.string(feed, at, *name)?, self.class(feed, at, *class)?))
    }

    pub(super) fn comm(&self, feed: &Feed, at: u64, id: u32) -> Result<(&str, &Members)> {
        if id == NONE {
            static NO_MEMBERS: Members = Members {
                runs: Vec::new(),
                len: 0,
            };
            return Ok(("", &NO_MEMBERS));
        }
        let (name, members) = declared(&self.comms, feed, at, "communicator", id)?;
        Ok((name, members))
    }

    pub(super) fn op(&self, feed: &Feed, at: u64, id: u32) -> Result<&str> {
        declared(&self.ops, feed, at, "collective operation", id).map(String::as_str)
    }

    pub(super) fn willy(&self, feed: &Feed, at: u64, raw: u32, out: &mut String) -> Result<()> {
        out.clear();
        out.push_str(&self.willy_name(feed, at, raw)?);
        Ok(())
    }

    /// The name of willy (location) `raw`: declared, or made of its number.
    pub(super) fn willy_name(&self, feed: &Feed, at: u64, raw: u32) -> Result<Cow<'_, str>> {
        Ok(match self.willies.get(&raw) {
            Some(&name) => Cow::Borrowed(self.string(feed, at, name)?),
            None => Cow::Owned(default_willy_name(raw)),
        })
    }

    /// A record without a mapping of its own: an `stf` event named by its
    /// class, its fields in `attrs` (string ids as their text, willies by name).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn generic_row(
        &self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        v: &Values,
        time: i64,
        rec: &mut Record,
        syms: &mut SymCache,
    ) -> Result<()> {
        rec.clear();
        rec.kind = Kind::Event;
        rec.time = Some(time);
        rec.cat = crate::model::symbol::well_known::STF;
        rec.name = syms.intern(&layout.class);
        let willy = generic_willy(layout);
        if let Some(w) = willy {
            rec.loc = syms.intern(&self.willy_name(feed, at, v.slots[w] as u32)?);
        }
        let mut text = String::new();
        let keys: Vec<&str> = generic_keys(layout, willy.is_some()).collect();
        for key in keys {
            let i = layout.field(key).expect("a field of the layout");
            text.clear();
            self.field_text(feed, at, layout, i, v, &mut text)?;
            rec.push_attr(key, &text);
        }
        Ok(())
    }

    /// The bytes of array field `i` written as text would take: checked
    /// before it is written, as each 4-byte id may stand for a long string.
    pub(super) fn array_text_len(
        &self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        i: usize,
        v: &Values,
    ) -> Result<u64> {
        let f = &layout.fields[i];
        let mut len = 0u64;
        for &bits in v.array(i) {
            len += 1 + if is_string_field(&layout.class, &f.name) {
                self.string(feed, at, bits as u32)?.len() as u64
            } else {
                self.willy_name(feed, at, bits as u32)?.len() as u64
            };
        }
        Ok(len)
    }

    pub(super) fn field_text(
        &self,
        feed: &Feed,
        at: u64,
        layout: &Layout,
        i: usize,
        v: &Values,
        out: &mut String,
    ) -> Result<()> {
        let f = &layout.fields[i];
        if f.sized_by.is_some() && is_byte_type(f.ty) {
            match f.ty {
                Scalar::C1 => out.push_str(&String::from_utf8_lossy(v.text(i))),
                _ => v.text(i).iter().for_each(|b| {
                    let _ = write!(out, "{b:02x}");
                }),
            }
            return Ok(());
        }
        let strings = is_string_field(&layout.class, &f.name);
        if f.sized_by.is_some() && (strings || f.ty == Scalar::Willy) {
            let len = self.array_text_len(feed, at, layout, i, v)?;
            if len > MAX_ROW_TEXT as u64 {
                return Err(feed.error_at(
                    at,
                    format!(
                        "`{}` of `{}` names {} items that would be {len} bytes of text, more than a row holds ({MAX_ROW_TEXT})",
                        f.name,
                        layout.class,
                        v.array(i).len()
                    ),
                ));
            }
        }
        let items: &[u64] = if f.sized_by.is_some() {
            v.array(i)
        } else {
            std::slice::from_ref(&v.slots[i])
        };
        let mut name = String::new();
        for (n, &bits) in items.iter().enumerate() {
            if n > 0 {
                out.push(ITEM_SEP);
            }
            if strings {
                let s = self.string(feed, at, bits as u32)?;
                if f.sized_by.is_some() {
                    escape_item(s, out);
                } else {
                    out.push_str(s);
                }
            } else if f.ty == Scalar::Willy {
                self.willy(feed, at, bits as u32, &mut name)?;
                out.push_str(&name);
            } else {
                out.push_str(&scalar_text(f.ty, bits));
            }
        }
        Ok(())
    }
}
