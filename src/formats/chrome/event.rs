//! One trace event parsed: where each field's JSON text lies in the event's
//! bytes (no field copied), and the conversions of those texts: times in
//! µs to exact ns, identifiers that are numbers or strings, `args` as
//! attributes.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::decimal::Decimal;

/// The fields of one event, as byte ranges of its text (JSON values as
/// written); reused from event to event.
#[derive(Debug, Default)]
pub struct Fields {
    pub(super) ph: Option<Range<usize>>,
    pub(super) name: Option<Range<usize>>,
    pub(super) cat: Option<Range<usize>>,
    pub(super) ts: Option<Range<usize>>,
    pub(super) dur: Option<Range<usize>>,
    pub(super) pid: Option<Range<usize>>,
    pub(super) tid: Option<Range<usize>>,
    pub(super) id: Option<Range<usize>>,
    pub(super) id2: Option<Range<usize>>,
    pub(super) scope: Option<Range<usize>>,
    /// `s`: an instant's scope.
    pub(super) s: Option<Range<usize>>,
    pub(super) bp: Option<Range<usize>>,
    /// The keys and values of `args`, in order (parsed once, here).
    pub(super) args: Vec<(Range<usize>, Range<usize>)>,
    /// Other keys (their text as written, escapes and all) and values.
    pub(super) other: Vec<(Range<usize>, Range<usize>)>,
}

impl Fields {
    /// Parses `event` (one JSON object, UTF-8 checked) into the fields.
    pub fn parse(&mut self, event: &str) -> Result<(), String> {
        *self = Fields {
            args: std::mem::take(&mut self.args),
            other: std::mem::take(&mut self.other),
            ..Fields::default()
        };
        self.args.clear();
        self.other.clear();
        let mut de = serde_json::Deserializer::from_str(event);
        let seed = FieldsSeed {
            fields: self,
            base: event.as_ptr() as usize,
        };
        seed.deserialize(&mut de).map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())
    }
}

struct FieldsSeed<'f> {
    fields: &'f mut Fields,
    base: usize,
}

impl<'de> DeserializeSeed<'de> for FieldsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FieldsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let base = self.base;
        let mut args_seen = false;
        while let Some(key) = map.next_key::<&'de RawValue>()? {
            if key.get() == "\"args\"" {
                if std::mem::replace(&mut args_seen, true) {
                    return Err(de::Error::custom("duplicate key \"args\""));
                }
                let items = &mut self.fields.args;
                map.next_value_seed(ArgsSeed { items, base })?;
                continue;
            }
            let value: &'de RawValue = map.next_value()?;
            let f = &mut *self.fields;
            let slot = match key.get() {
                "\"ph\"" => &mut f.ph,
                "\"name\"" => &mut f.name,
                "\"cat\"" => &mut f.cat,
                "\"ts\"" => &mut f.ts,
                "\"dur\"" => &mut f.dur,
                "\"pid\"" => &mut f.pid,
                "\"tid\"" => &mut f.tid,
                "\"id\"" => &mut f.id,
                "\"id2\"" => &mut f.id2,
                "\"scope\"" => &mut f.scope,
                "\"s\"" => &mut f.s,
                "\"bp\"" => &mut f.bp,
                _ => {
                    f.other.push((range(base, key), range(base, value)));
                    continue;
                }
            };
            if slot.is_some() {
                return Err(de::Error::custom(format!("duplicate key {}", key.get())));
            }
            *slot = Some(range(base, value));
        }
        Ok(())
    }
}

/// Where `raw`, a value of the text at `base`, lies in it.
fn range(base: usize, raw: &RawValue) -> Range<usize> {
    let at = raw.get().as_ptr() as usize - base;
    at..at + raw.get().len()
}

/// `args`: an object, its keys' and values' places pushed to `items`.
struct ArgsSeed<'f> {
    items: &'f mut Vec<(Range<usize>, Range<usize>)>,
    base: usize,
}

impl<'de> DeserializeSeed<'de> for ArgsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ArgsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`args` as an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<&'de RawValue>()? {
            let value: &'de RawValue = map.next_value()?;
            self.items
                .push((range(self.base, key), range(self.base, value)));
        }
        Ok(())
    }
}

/// The text of a JSON value: a string's content (unescaped), else the
/// value as written (a number, `true`, an object...).
pub fn text(raw: &str) -> Cow<'_, str> {
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
        Some(_) => serde_json::from_str::<String>(raw)
            .map(Cow::Owned)
            .unwrap_or(Cow::Borrowed(raw)),
        None => Cow::Borrowed(raw),
    }
}

/// A time in µs (a number or a string of one, fractions exact) as ns,
/// rounded to the nearest; `None` when it is not a number in range.
pub fn micros_to_ns(raw: &str) -> Option<i64> {
    let text = text(raw);
    Decimal::parse(text.trim())
        .and_then(|d| d.scaled(1000))
        .map(|(ns, _)| ns)
}

/// An `id2` object (`{"local": X}` or `{"global": X}`) as `local:X` or
/// `global:X`; other text as it is.
pub fn id2_text(raw: &str) -> String {
    let parsed: Result<Vec<(String, &RawValue)>, _> =
        serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(raw)
            .map(|m| m.into_iter().collect());
    match parsed {
        Ok(pairs) if pairs.len() == 1 => {
            let (key, value) = &pairs[0];
            format!("{key}:{}", text(value.get()))
        }
        _ => raw.to_string(),
    }
}

/// Calls `f` with each key and value text of an object (`otherData`), in
/// order; a value that is not an object is one item, `value`.
pub fn for_each_arg(raw: &str, mut f: impl FnMut(&str, &str)) {
    let mut items = Vec::new();
    let seed = ArgsSeed {
        items: &mut items,
        base: raw.as_ptr() as usize,
    };
    if seed
        .deserialize(&mut serde_json::Deserializer::from_str(raw))
        .is_err()
    {
        return f("value", &text(raw));
    }
    for (k, v) in items {
        f(&text(&raw[k]), &text(&raw[v]));
    }
}
