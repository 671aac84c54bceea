//! Output compatible with PajeNG's `pj_dump` (release 1.3.8): the same line
//! shapes, number formats and records, written as records complete (so line
//! order differs from `pj_dump`'s container walk; compare sorted lines).
//!
//! The stream goes through the span builder (enter/leave → state) and the
//! message matcher (send/recv → msg) before this writer sees it. Memory: the
//! names of types and containers, and the current piece of each variable.

use std::fmt::Write as _;

use super::{extent, ATTR_OP, ATTR_OPERAND, LANE, PREFIX};
use crate::error::{Error, Result};
use crate::fasthash::{FastMap, OrderedMap};
use crate::io::Output;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{FormatOption, OptionValue, RecordSink, WriteOptions};
use crate::stages::matcher::{Matcher, Unmatched};
use crate::stages::spans::SpanBuilder;

const PRECISION: &str = "precision";
/// Decimals beyond these print only zeros of a nanosecond time, or noise of a
/// double.
const MAX_PRECISION: u64 = 30;
const USER_FIELDS: &str = "user-fields";

/// The options of the pjdump writer.
pub const WRITE_OPTIONS: &[FormatOption] = &[
    FormatOption {
        name: PRECISION,
        help: "Decimals of times and values (pj_dump's -l; default 6)",
        value: OptionValue::Number("N"),
    },
    FormatOption {
        name: USER_FIELDS,
        help: "Append the values of user-defined fields (pj_dump's -u)",
        value: OptionValue::Switch,
    },
];

/// Registry constructor: span builder → matcher → pj_dump printer.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    let precision = opts.format.number(PRECISION).unwrap_or(6);
    if precision > MAX_PRECISION {
        return Err(Error::Usage(format!(
            "--precision {precision}: at most {MAX_PRECISION} decimals (times are integer nanoseconds)"
        )));
    }
    let precision = precision as usize;
    let symbols = &opts.symbols;
    let printer = PjdumpWriter::new(
        out,
        precision,
        opts.format.switch(USER_FIELDS),
        symbols.clone(),
    );
    let matcher = Matcher::new(
        printer,
        Unmatched::Drop,
        symbols.clone(),
        opts.warnings.clone(),
    );
    Ok(Box::new(SpanBuilder::new(
        matcher,
        symbols.clone(),
        opts.warnings.clone(),
    )))
}

struct ContainerEntry {
    name: Sym,
    type_: Sym,
    parent: Sym,
    start: i64,
    /// For a lane: the container whose states it holds.
    lane_of: Option<Sym>,
    extras: String,
    ended: bool,
}

struct Piece {
    start: i64,
    value: f64,
    extras: String,
}

/// The pj_dump printer.
pub struct PjdumpWriter {
    out: Output,
    symbols: Symbols,
    precision: usize,
    user_fields: bool,
    /// The name of each type, by its id.
    types: FastMap<Sym, Sym>,
    containers: OrderedMap<Sym, ContainerEntry>,
    /// Current piece of each variable, by (container, type).
    pieces: FastMap<(Sym, Sym), Piece>,
    last_time: Option<i64>,
    line: String,
}

/// Appends `n` in decimal, zero-padded to at least `width` digits.
fn push_digits(out: &mut String, n: u64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(n);
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(digits);
}

/// Seconds from integer nanoseconds.
fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// C++ stream default formatting (`%g` with 6 significant digits), which
/// pj_dump uses for Container lines.
pub fn format_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let m = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

impl PjdumpWriter {
    /// A printer with `precision` decimals, appending user fields if asked,
    /// of rows whose identifiers are in `symbols`.
    pub fn new(out: Output, precision: usize, user_fields: bool, symbols: Symbols) -> PjdumpWriter {
        PjdumpWriter {
            out,
            symbols,
            precision,
            user_fields,
            types: FastMap::default(),
            containers: OrderedMap::default(),
            pieces: FastMap::default(),
            last_time: None,
            line: String::new(),
        }
    }

    fn type_name(&self, id: Sym) -> &str {
        self.symbols
            .text(self.types.get(&id).copied().unwrap_or(id))
    }

    /// Starts a line with its label, container and type: `Label, C, T, `.
    fn line_head(&self, label: &str, container: Sym, type_: Sym, line: &mut String) {
        for part in [label, ", ", self.container_name(container), ", "] {
            line.push_str(part);
        }
        line.push_str(self.type_name(type_));
        line.push_str(", ");
    }

    fn container_name(&self, id: Sym) -> &str {
        if id.is_empty() || id == well_known::ZERO {
            return "0";
        }
        let name = self.containers.get(&id).map_or(id, |c| c.name);
        self.symbols.text(name)
    }

    /// The container whose records a location's rows are (a lane's parent).
    fn owner(&self, loc: Sym) -> Sym {
        match self.containers.get(&loc).and_then(|c| c.lane_of) {
            Some(parent) => parent,
            None => loc,
        }
    }

    /// User-defined field values of a row, as `, v1, v2`.
    fn extras(&self, rec: &Record) -> String {
        let mut s = String::new();
        self.push_extras(rec, &mut s);
        s
    }

    fn push_extras(&self, rec: &Record, out: &mut String) {
        if self.user_fields && !rec.attrs.is_empty() {
            for (k, v) in rec.attrs() {
                if !k.starts_with(PREFIX) {
                    out.push_str(", ");
                    out.push_str(&v);
                }
            }
        }
    }

    fn fixed(&self, x: f64, out: &mut String) {
        // Values that are whole multiples of the last decimal print exactly
        // from integers (the usual case: counts, sizes, halves); others go
        // through the float formatter.
        let p = self.precision;
        if p <= 9 && x.is_finite() && x.abs() < 1e9 {
            let scale = 10f64.powi(p as i32);
            let scaled = x * scale;
            if scaled == scaled.trunc() && (scaled / scale) == x {
                let units = scaled.abs() as u64;
                let ten_p = 10u64.pow(p as u32);
                if x.is_sign_negative() {
                    out.push('-');
                }
                push_digits(out, units / ten_p, 1);
                if p > 0 {
                    out.push('.');
                    push_digits(out, units % ten_p, p);
                }
                return;
            }
        }
        let _ = write!(out, "{x:.*}", p);
    }

    /// `ns` as seconds with the precision's decimals, as `%.Nf` prints the
    /// double `ns / 1e9`. Integer arithmetic where that is provably the same
    /// (not a rounding tie, well within the double's precision); else through
    /// the float.
    fn fixed_ns(&self, ns: i64, out: &mut String) {
        if !self.try_fixed_ns(ns, out) {
            self.fixed(secs(ns), out);
        }
    }

    /// The integer path of [`PjdumpWriter::fixed_ns`]; false (writing nothing)
    /// where only the float gives pj_dump's digits.
    fn try_fixed_ns(&self, ns: i64, out: &mut String) -> bool {
        let p = self.precision;
        if p <= 9 && ns.unsigned_abs() < 1_000_000_000_000_000 {
            let unit = 10u64.pow(9 - p as u32);
            let mag = ns.unsigned_abs();
            let (q, r) = (mag / unit, mag % unit);
            if unit == 1 || r * 2 != unit {
                let q = if r * 2 > unit { q + 1 } else { q };
                let scale = 10u64.pow(p as u32);
                // printf keeps the sign even of a negative value rounded to zero.
                if ns < 0 {
                    out.push('-');
                }
                push_digits(out, q / scale, 1);
                if p > 0 {
                    out.push('.');
                    push_digits(out, q % scale, p);
                }
                return true;
            }
        }
        false
    }

    fn span(&self, start: i64, end: i64, out: &mut String) {
        self.fixed_ns(start, out);
        out.push_str(", ");
        self.fixed_ns(end, out);
        out.push_str(", ");
        let (s, e) = (secs(start), secs(end));
        // pj_dump subtracts the two doubles; on a rounding tie only that
        // subtraction gives its digits.
        let small = start.unsigned_abs() < 1_000_000_000_000_000
            && end.unsigned_abs() < 1_000_000_000_000_000;
        if !(s >= 0.0 && e >= 0.0) {
            self.fixed(0.0, out);
        } else if !(small && self.try_fixed_ns(end - start, out)) {
            self.fixed(e - s, out);
        }
    }

    fn emit(&mut self) -> Result<()> {
        self.line.push('\n');
        let line = std::mem::take(&mut self.line);
        let r = self.out.write_line(line.as_bytes());
        self.line = line;
        self.line.clear();
        r
    }

    fn piece_line(&mut self, (container, type_): (Sym, Sym), p: &Piece, end: i64) -> Result<()> {
        let mut line = std::mem::take(&mut self.line);
        self.line_head("Variable", container, type_, &mut line);
        self.span(p.start, end, &mut line);
        line.push_str(", ");
        self.fixed(p.value, &mut line);
        line.push_str(&p.extras);
        self.line = line;
        self.emit()
    }

    fn close_piece(&mut self, key: (Sym, Sym), end: i64) -> Result<()> {
        match self.pieces.remove(&key) {
            Some(p) => self.piece_line(key, &p, end),
            None => Ok(()),
        }
    }

    /// Closes the pieces of `keys`, in the order of their names.
    fn close_pieces(&mut self, mut keys: Vec<(Sym, Sym)>, end: i64) -> Result<()> {
        let symbols = &self.symbols;
        keys.sort_by_key(|&(loc, cat)| (symbols.text(loc), symbols.text(cat)));
        for key in keys {
            self.close_piece(key, end)?;
        }
        Ok(())
    }

    fn container_line(&mut self, loc: Sym, end: i64) -> Result<()> {
        let Some(c) = self.containers.get(&loc) else {
            return Ok(());
        };
        if c.lane_of.is_some() || c.ended {
            return Ok(());
        }
        let mut line = std::mem::take(&mut self.line);
        let (s, e) = (secs(c.start), secs(end));
        let _ = write!(
            line,
            "Container, {}, {}, {}, {}, {}, {}{}",
            self.container_name(c.parent),
            self.type_name(c.type_),
            format_g(s),
            format_g(e),
            format_g(e - s),
            self.symbols.text(c.name),
            c.extras
        );
        self.line = line;
        if let Some(c) = self.containers.get_mut(&loc) {
            c.ended = true;
        }
        self.emit()
    }

    fn close_pieces_of(&mut self, loc: Sym, end: i64) -> Result<()> {
        let keys: Vec<(Sym, Sym)> = self.pieces.keys().filter(|k| k.0 == loc).copied().collect();
        self.close_pieces(keys, end)
    }

    fn counter(&mut self, rec: &Record) -> Result<()> {
        let t = rec.time.unwrap_or_default();
        let key = (rec.loc, rec.cat);
        // PajeNG parses values as 32-bit floats and sums in double.
        let f32_of = |s: &str| s.trim().parse::<f32>().map(f64::from).unwrap_or(0.0);
        let (op, operand) = if rec.attrs.is_empty() {
            (None, None)
        } else {
            (rec.attr(ATTR_OP), rec.attr(ATTR_OPERAND))
        };
        let previous = self.pieces.get(&key).map(|p| p.value);
        let value = match (op.as_deref(), operand, previous) {
            (Some("add"), Some(x), Some(prev)) => prev + f32_of(&x),
            (Some("sub"), Some(x), Some(prev)) => prev - f32_of(&x),
            _ => f32_of(&rec.value),
        };
        let extras = if self.user_fields {
            self.extras(rec)
        } else {
            String::new()
        };
        let Some(p) = self.pieces.get_mut(&key) else {
            let piece = Piece {
                start: t,
                value,
                extras,
            };
            self.pieces.insert(key, piece);
            return Ok(());
        };
        if p.start != t {
            // The piece ends where the new one starts.
            let done = Piece {
                start: p.start,
                value: p.value,
                extras: std::mem::take(&mut p.extras),
            };
            self.piece_line(key, &done, t)?;
            self.pieces.get_mut(&key).expect("present above").start = t;
        }
        let p = self.pieces.get_mut(&key).expect("present above");
        p.value = value;
        p.extras = extras;
        Ok(())
    }
}

impl PjdumpWriter {
    /// A container, whose line is written when it ends.
    fn declare(&mut self, rec: &Record) {
        let extras = self.extras(rec);
        let name = if rec.name.is_empty() {
            rec.loc
        } else {
            rec.name
        };
        self.containers.insert(
            rec.loc,
            ContainerEntry {
                name,
                type_: rec.cat,
                parent: rec.peer,
                start: rec.time.unwrap_or_default(),
                lane_of: (rec.cat == LANE).then_some(rec.peer),
                extras,
                ended: false,
            },
        );
    }

    fn state_line(&mut self, rec: &Record) -> Result<()> {
        let mut line = std::mem::take(&mut self.line);
        self.line_head("State", self.owner(rec.loc), rec.cat, &mut line);
        self.span(
            rec.time.unwrap_or_default(),
            rec.end.unwrap_or_default(),
            &mut line,
        );
        line.push_str(", ");
        self.fixed_ns(i64::from(rec.depth.unwrap_or(0)) * 1_000_000_000, &mut line);
        line.push_str(", ");
        line.push_str(self.symbols.text(rec.name));
        self.push_extras(rec, &mut line);
        self.line = line;
        self.emit()
    }

    /// A row the Pajé reader made from the writer's marks, printed as the
    /// lines it was made from: a state of its type (on its own lane, so
    /// depth 0) or a variable set to its constant term.
    fn marked(&mut self, rec: &Record) -> Result<()> {
        let type_ = rec.attr(extent::ATTR_TYPE).unwrap_or_default();
        let mut line = rec.clone();
        line.cat = self.symbols.intern(&type_);
        if rec.kind == Kind::Signal {
            line.kind = Kind::Counter;
            line.value = rec.attr("c").unwrap_or_else(|| "0".to_string());
            return self.counter(&line);
        }
        line.name = self
            .symbols
            .intern(&extent::state_value(&self.symbols, rec));
        line.depth = Some(0);
        self.state_line(&line)
    }

    fn event_line(&mut self, rec: &Record) -> Result<()> {
        let mut line = std::mem::take(&mut self.line);
        self.line_head("Event", self.owner(rec.loc), rec.cat, &mut line);
        self.fixed_ns(rec.time.unwrap_or_default(), &mut line);
        line.push_str(", ");
        line.push_str(self.symbols.text(rec.name));
        self.push_extras(rec, &mut line);
        self.line = line;
        self.emit()
    }

    fn link_line(&mut self, rec: &Record) -> Result<()> {
        let mut line = std::mem::take(&mut self.line);
        self.line_head("Link", rec.comm, rec.cat, &mut line);
        self.span(
            rec.time.unwrap_or_default(),
            rec.end.unwrap_or_default(),
            &mut line,
        );
        for part in [
            ", ",
            self.symbols.text(rec.name),
            ", ",
            self.container_name(rec.loc),
            ", ",
            self.container_name(rec.peer),
            ", ",
            &rec.id,
        ] {
            line.push_str(part);
        }
        self.push_extras(rec, &mut line);
        self.line = line;
        self.emit()
    }
}

impl RecordSink for PjdumpWriter {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let Some(t) = rec.completion() {
            if !rec.kind.is_structural() {
                self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
            }
        }
        match rec.kind {
            // Entity values name themselves in each row; only types are looked up.
            Kind::Type if rec.cat != well_known::VALUE => {
                let id = self.symbols.intern(&rec.id);
                self.types.insert(id, rec.name);
            }
            // Pajé's root container: its line is written at the end.
            Kind::Container if rec.loc == well_known::ZERO && rec.cat == well_known::ZERO => {}
            Kind::Container => self.declare(rec),
            Kind::Destroy => {
                let t = rec.time.unwrap_or_default();
                self.close_pieces_of(rec.loc, t)?;
                self.container_line(rec.loc, t)?;
            }
            Kind::State | Kind::Claim | Kind::Coll | Kind::Signal
                if rec.attr(extent::ATTR_TYPE).is_some() =>
            {
                self.marked(rec)?
            }
            Kind::State => self.state_line(rec)?,
            Kind::Event => self.event_line(rec)?,
            Kind::Counter => self.counter(rec)?,
            Kind::Msg => self.link_line(rec)?,
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        // A trace without timed rows: pj_dump prints the root ending at -1.
        let end = self.last_time.unwrap_or(-1_000_000_000);
        let keys: Vec<(Sym, Sym)> = self.pieces.keys().copied().collect();
        self.close_pieces(keys, end)?;
        let mut open: Vec<Sym> = self
            .containers
            .iter()
            .filter(|(_, c)| !c.ended && c.lane_of.is_none())
            .map(|(&k, _)| k)
            .collect();
        open.sort_by_key(|&loc| self.symbols.text(loc));
        for loc in open {
            self.container_line(loc, end)?;
        }
        let e = format_g(secs(end));
        self.line = format!("Container, 0, 0, 0, {e}, {e}, 0");
        self.emit()?;
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_fast_path_matches_float_printing() {
        for precision in [0, 3, 6] {
            let w = PjdumpWriter::new(
                Output::new("t", Box::new(std::io::sink())),
                precision,
                false,
                Symbols::new(),
            );
            for x in [
                0.0,
                -0.0,
                1234.5,
                -3.75,
                16777216.0,
                f64::from(0.1f32),
                1e30,
                2.5e-7,
                0.5,
                -0.25,
                999_999_999.5,
            ] {
                let mut fast = String::new();
                w.fixed(x, &mut fast);
                assert_eq!(fast, format!("{x:.precision$}"), "{x} at {precision}");
            }
        }
    }

    #[test]
    fn integer_seconds_match_float_printing() {
        for precision in [0, 2, 6, 9] {
            let w = PjdumpWriter::new(
                Output::new("t", Box::new(std::io::sink())),
                precision,
                false,
                Symbols::new(),
            );
            for ns in [
                0i64,
                1,
                499,
                500,
                501,
                1_000_000_500,
                1_234_567_891,
                -1,
                -500_000,
                -1_500_000_000,
                86_400_000_000_123,
                999_999_999,
            ] {
                let (mut fast, mut slow) = (String::new(), String::new());
                w.fixed_ns(ns, &mut fast);
                w.fixed(secs(ns), &mut slow);
                assert_eq!(fast, slow, "{ns} ns at {precision}");
            }
        }
    }

    #[test]
    fn g_format_matches_cpp_streams() {
        for (x, want) in [
            (0.0, "0"),
            (1.34, "1.34"),
            (4.295678, "4.29568"),
            (1.8741e-05, "1.8741e-05"),
            (1e8, "1e+08"),
            (40704.498590, "40704.5"),
            (1000.0110336, "1000.01"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (-1.0, "-1"),
            (0.0001, "0.0001"),
        ] {
            assert_eq!(format_g(x), want, "{x}");
        }
    }
}
