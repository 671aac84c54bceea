//! The text `stftool FILE --dump` prints (`-f stf-dump`): how owners of real
//! Intel Trace Analyzer traces export them, since Intel's binary layout was
//! never published.
//!
//! Header lines (`NCPUS`, `CLKPERIOD`, `DURATION`, `EVENTBITS`, `DEFGROUP`)
//! come first; every other line starts with its time stamp. Known event
//! lines are `SAMP` (a counter sample) and `ONETOONE` (a matched message,
//! `--matched-vtf`); a line of any other shape becomes an `event` named by
//! its keyword with the rest of the line in `attrs`, counted in one warning.
//! CPU numbers are kept as printed (1-based; thread in the upper 16 bits).

use std::io::BufRead;

use super::PREFIX;
use crate::error::{Error, Location, Result, Warnings};
use crate::exec::reorder::RowQueue;
use crate::fasthash::FastSet;
use crate::io::{Input, LineReader};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::SymCache;
use crate::pipe::{Probe, ReadOptions, RecordSource};

/// Header keywords the dump is known to start with.
const HEADER: [&str; 5] = ["NCPUS", "CLKPERIOD", "DURATION", "EVENTBITS", "DEFGROUP"];

/// `text` as a number, or an error naming it as `what`.
fn number<T: std::str::FromStr>(text: &str, what: &str) -> std::result::Result<T, String> {
    text.parse()
        .map_err(|_| format!("{what} {text:?} is not a number"))
}

/// Rows held to put matched messages (written at their send time, complete
/// at their receive) in time order.
pub const WINDOW: usize = 65_536;

/// A dump starts with one of the header keywords.
pub fn sniff(probe: &Probe) -> bool {
    let text = probe.head.trim_ascii_start();
    HEADER.iter().any(|k| {
        text.strip_prefix(k.as_bytes())
            .is_some_and(|rest| rest.first().is_some_and(|b| *b == b' ' || *b == b'\t'))
    })
}

/// Opens a dump reader.
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    let mut dump = DumpReader {
        lines: LineReader::new(&name, reader),
        queue: RowQueue::new(WINDOW),
        clock: Clock::default(),
        syms: SymCache::new(opts.symbols.clone()),
        cpus: FastSet::default(),
        in_header: true,
        done: false,
        unknown: 0,
        first_unknown: None,
        warnings: opts.warnings.clone(),
        name: name.clone(),
    };
    dump.meta("source_format", "stf-dump");
    dump.meta("source", &name);
    Ok(Box::new(dump))
}

/// The tick length, set by the header.
#[derive(Default)]
struct Clock {
    period: Option<f64>,
    event_bits: u32,
}

impl Clock {
    /// Ticks to nanoseconds: `(ts >> bits) × period × 2^bits`, ITAC's exact
    /// conversion; ticks are nanoseconds when no period was given.
    fn ns(&self, ticks: i128) -> Option<i64> {
        let ns = match self.period {
            None => ticks,
            Some(p) => {
                let scale = 2f64.powi(self.event_bits as i32);
                ((ticks >> self.event_bits) as f64 * p * scale * 1e9).round() as i128
            }
        };
        i64::try_from(ns).ok()
    }
}

struct DumpReader {
    lines: LineReader<Box<dyn BufRead>>,
    queue: RowQueue,
    clock: Clock,
    syms: SymCache,
    /// CPUs declared so far (a `container` row each).
    cpus: FastSet<Sym>,
    in_header: bool,
    done: bool,
    unknown: u64,
    first_unknown: Option<u64>,
    warnings: Warnings,
    name: String,
}

impl DumpReader {
    /// Reads one line into the queue; false at the end.
    fn read_line(&mut self) -> Result<bool> {
        let Some(line) = self.lines.next_located()? else {
            return Ok(false);
        };
        let text = String::from_utf8_lossy(line.text).trim().to_string();
        let number = line.number;
        let file = self.name.clone();
        let at = |msg: String| Error::line(&file, number, msg);
        if text.is_empty() {
            return Ok(true);
        }
        self.queue.set_mark(number);
        let starts_event = text.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
        if !starts_event {
            if !self.in_header {
                return Err(at(format!(
                    "a header line after the events began: {text:?}"
                )));
            }
            return self.header(&text).map_err(at).map(|_| true);
        }
        if self.in_header {
            self.in_header = false;
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        let rows = self.event(&words).map_err(at)?;
        for row in rows {
            self.push(row, number)?;
        }
        Ok(true)
    }

    fn push(&mut self, row: Record, number: u64) -> Result<()> {
        let key = row.completion().unwrap_or(i64::MIN);
        let slot = self.queue.slot();
        *self.queue.get(slot) = row;
        self.queue.commit(slot, key).map(|_| ()).map_err(|_| {
            Error::line(
                &self.name,
                number,
                format!("more than {WINDOW} rows out of time order"),
            )
        })
    }

    fn meta(&mut self, key: &str, value: &str) {
        let key = self.syms.intern(key);
        let slot = self.queue.slot();
        *self.queue.get(slot) = Record::meta(key, value);
        let _ = self.queue.commit(slot, i64::MIN);
    }

    fn header(&mut self, text: &str) -> std::result::Result<(), String> {
        let (key, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let rest = rest.trim();
        match key {
            "CLKPERIOD" => {
                let p: f64 = number(rest, "CLKPERIOD")?;
                if !(p.is_finite() && p > 0.0) {
                    return Err(format!("CLKPERIOD {rest} is not a positive number"));
                }
                self.clock.period = Some(p);
                self.meta("time_unit", &format!("ticks@{}", 1.0 / p));
            }
            "EVENTBITS" => {
                self.clock.event_bits = rest
                    .parse()
                    .ok()
                    .filter(|b| *b < 64)
                    .ok_or("EVENTBITS wants a number below 64")?;
            }
            _ => {}
        }
        let name = format!("{PREFIX}{}", key.to_ascii_lowercase());
        self.meta(&name, rest);
        Ok(())
    }

    /// The location of CPU `cpu` (as printed), declared before its first use.
    fn cpu(&mut self, cpu: &str, rows: &mut Vec<Record>) -> std::result::Result<Sym, String> {
        let n: u64 = number(cpu, "CPU")?;
        let loc = self.syms.intern(cpu);
        if self.cpus.insert(loc) {
            let mut c = Record::new(Kind::Container);
            c.loc = loc;
            c.cat = self.syms.intern("cpu");
            let name = format!("process {} thread {}", n & 0xFFFF, (n >> 16) & 0x7FFF);
            c.name = self.syms.intern(&name);
            rows.push(c);
        }
        Ok(loc)
    }

    /// A time stamp in ticks, in nanoseconds.
    fn time(&self, ticks: i128) -> std::result::Result<i64, String> {
        self.clock
            .ns(ticks)
            .ok_or_else(|| format!("time stamp {ticks} is beyond the stream's range"))
    }

    /// The rows of one event line.
    fn event(&mut self, words: &[&str]) -> std::result::Result<Vec<Record>, String> {
        let mut rows = Vec::new();
        let ticks: i128 = number(words[0], "time stamp")?;
        let time = self.time(ticks)?;
        let known = match words.get(1..) {
            Some(["SAMP", "CPU", cpu, "DEF", def, ty, bits, value]) => {
                let loc = self.cpu(cpu, &mut rows)?;
                let mut r = Record::new(Kind::Counter);
                r.time = Some(time);
                r.loc = loc;
                r.name = self.syms.intern(def);
                r.value.push_str(value);
                r.push_attr("type", &format!("{ty} {bits}"));
                Some(r)
            }
            Some(
                ["ONETOONE", "CPU", from, "TO", to, "DELTA", delta, "COM", comm, "LEN", len, "TAG", tag],
            ) => {
                let from = self.cpu(from, &mut rows)?;
                let to = self.cpu(to, &mut rows)?;
                let delta: i128 = number(delta, "DELTA")?;
                let end = ticks.checked_add(delta).ok_or("DELTA overflows")?;
                let end = self.time(end)?;
                let mut r = Record::new(Kind::Msg);
                r.time = Some(time);
                r.end = Some(end);
                r.loc = from;
                r.peer = to;
                r.comm = self.syms.intern(comm);
                r.size = Some(number(len, "LEN")?);
                r.tag = Some(number(tag, "TAG")?);
                if delta < 0 {
                    r.flags.push('R');
                }
                Some(r)
            }
            _ => None,
        };
        let row = match known {
            Some(r) => r,
            None => self.unknown_line(words, time),
        };
        rows.push(row);
        Ok(rows)
    }

    /// A line of an undocumented shape, kept whole.
    fn unknown_line(&mut self, words: &[&str], time: i64) -> Record {
        self.unknown += 1;
        self.first_unknown.get_or_insert(self.lines.line_number());
        let mut r = Record::new(Kind::Event);
        r.time = Some(time);
        r.cat = self.syms.intern("stf-dump");
        r.name = self.syms.intern(words.get(1).copied().unwrap_or(""));
        r.push_attr("text", &words.get(2..).unwrap_or(&[]).join(" "));
        r
    }
}

impl RecordSource for DumpReader {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        while !self.done && !self.queue.is_full() {
            if !self.read_line()? {
                self.done = true;
                if let Some(line) = self.first_unknown {
                    self.warnings.warn_at(
                        Location::Line { file: self.name.clone(), line },
                        format!(
                            "{} line(s) of a shape tracepipe does not know were kept as `event` rows named by their keyword",
                            self.unknown
                        ),
                    );
                }
            }
        }
        Ok(self.queue.pop_into(rec))
    }

    fn mark(&self) -> u64 {
        self.queue.released_mark()
    }

    fn locate(&self, mark: u64) -> Location {
        Location::Line {
            file: self.name.clone(),
            line: mark,
        }
    }

    /// STF's messages, scopes and collectives are records with extents,
    /// given at their completion, that begin at any earlier time.
    fn horizon(&self) -> Option<i64> {
        None
    }
}
