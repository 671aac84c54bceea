//! The stream's rules every reader of it applies to each row (see
//! `docs/stream.md`): meta rows first, the `format` version, completion-time
//! order, locations declared before use. Readers of other formats whose
//! rows map onto the stream apply them too (the STF reader does).

use crate::model::record::{Kind, Record, FORMAT_VERSION, META_FORMAT};
use crate::model::symbol::{Sym, Symbols};

/// True for the rows that describe the stream rather than the run (`meta`,
/// `type`, `container`): what `--rows-only` leaves out.
pub fn is_declaration(kind: Kind) -> bool {
    matches!(kind, Kind::Meta | Kind::Type | Kind::Container)
}

/// Checks the stream-level rules on each row a stream reader produces: meta rows
/// first, the `format` version, completion-time order, and locations declared
/// before use. Memory: one bit per symbol.
pub struct StreamCheck {
    symbols: Symbols,
    seen_data: bool,
    last_completion: Option<i64>,
    /// Per symbol, whether a `container` row declared it.
    declared: Vec<bool>,
}

/// What a reader does with a row after [`StreamCheck::check`].
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Pass the row on.
    Keep,
    /// The row is the `format` meta row: consumed here, the writer writes its own.
    Consumed,
}

/// The rule of a `format` meta's value: a version of the stream this
/// program reads (its major number), as every reader that carries one
/// checks it.
pub fn check_format(value: &str) -> Result<(), String> {
    let major = FORMAT_VERSION.rsplit('/').next().unwrap_or("1");
    let ok = value
        .strip_prefix("tracepipe-stream/")
        .is_some_and(|v| v.split('.').next() == Some(major));
    match ok {
        true => Ok(()),
        false => Err(format!(
            "unsupported stream format `{value}` (this program reads {FORMAT_VERSION})"
        )),
    }
}

impl StreamCheck {
    /// A check of rows whose identifiers are in `symbols`.
    pub fn new(symbols: Symbols) -> StreamCheck {
        StreamCheck {
            symbols,
            seen_data: false,
            last_completion: None,
            declared: Vec::new(),
        }
    }

    /// Whether a `container` row declared `loc`.
    pub fn is_declared(&self, loc: Sym) -> bool {
        self.declared.get(loc.index()).copied().unwrap_or(false)
    }

    /// Validates `rec` against the rows before it.
    #[inline]
    pub fn check(&mut self, rec: &Record) -> Result<Verdict, String> {
        rec.validate()?;
        self.check_valid(rec)
    }

    /// The stream's rules on a row a reader of another format made (its
    /// own rules checked where it was made): what a trace carries in
    /// tracepipe's marks (rows kept whole, the stream's head) is held to
    /// them like any input.
    pub fn check_made(&mut self, rec: &Record) -> Result<(), String> {
        self.check_valid(rec).map(drop)
    }

    /// [`StreamCheck::check`] of a row whose own rules
    /// ([`Record::validate`]) were checked already.
    #[inline]
    pub fn check_valid(&mut self, rec: &Record) -> Result<Verdict, String> {
        if !rec.kind.is_structural() {
            self.seen_data = true;
            return self.check_data(rec);
        }
        if rec.kind == Kind::Meta {
            return self.check_meta(rec);
        }
        self.seen_data = true;
        if rec.kind == Kind::Container {
            if !rec.peer.is_empty() && !self.is_declared(rec.peer) {
                let text = |sym| self.symbols.text(sym);
                return Err(format!(
                    "container `{}` names parent `{}`, which no earlier `container` row declares",
                    text(rec.loc),
                    text(rec.peer)
                ));
            }
            let i = rec.loc.index();
            if i >= self.declared.len() {
                self.declared.resize(i + 1, false);
            }
            self.declared[i] = true;
        }
        Ok(Verdict::Keep)
    }

    /// A `meta` row: before any other, and a `format` this program reads.
    fn check_meta(&mut self, rec: &Record) -> Result<Verdict, String> {
        if self.seen_data {
            return Err("`meta` row after other rows: meta rows come first".into());
        }
        if rec.name != META_FORMAT {
            return Ok(Verdict::Keep);
        }
        check_format(&rec.value)?;
        Ok(Verdict::Consumed)
    }

    /// The rules of a row that happens in the run: its location declared,
    /// its completion in order.
    #[inline]
    fn check_data(&mut self, rec: &Record) -> Result<Verdict, String> {
        let text = |sym| self.symbols.text(sym);
        if !rec.loc.is_empty() && !self.is_declared(rec.loc) {
            return Err(format!(
                "location `{}` is used before a `container` row declares it",
                text(rec.loc)
            ));
        }
        let at = rec.completion();
        if let (Some(prev), Some(now)) = (self.last_completion, at) {
            if now < prev {
                return Err(format!(
                    "row completes at {now} ns, before the previous row ({prev} ns): rows must be in completion-time order"
                ));
            }
        }
        if at.is_some() {
            self.last_completion = at;
        }
        Ok(Verdict::Keep)
    }
}
