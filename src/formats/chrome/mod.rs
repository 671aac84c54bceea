//! Chrome trace JSON (the trace-event format: PyTorch/Kineto, Chrome,
//! clang `-ftime-trace`, Perfetto's JSON, and what `-t chrome` writes),
//! read into the stream (docs/formats.md, "Chrome trace JSON").
//!
//! The file is cut into events by [`scan`] (a buffer the size of the
//! largest event), each parsed where it lies ([`event`]) and mapped to rows
//! ([`rows`]). Events come in no useful order (an `X` is written when it
//! completes, GPU events after the CPU's), so the rows are sorted by
//! [`crate::exec::spill`] in bounded memory, runs spilled to temporary
//! files; the metadata is known once the file is read, so the `container`
//! rows come first, named. Frames (`X`) become `enter` and `leave` as the
//! sorted rows go out ([`frames`]), then follow the stream's rule for
//! frames that do not nest.

mod event;
mod frames;
mod rows;
pub mod scan;

use std::io::Read;

use crate::error::{Error, Location, Result};
use crate::exec::spill::Sorter;
use crate::io::Input;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{Probe, ReadOptions, RecordSource};

use frames::Frames;
use rows::{EventMapper, ProcessOrThread};

/// Whether the input is a trace-event file (see [`scan::is_trace_head`]).
pub fn sniff(p: &Probe) -> bool {
    !p.is_dir && scan::is_trace_head(p.head)
}

/// Registry constructor for [`ChromeReader`].
pub fn open_reader(input: Input, opts: &ReadOptions) -> Result<Box<dyn RecordSource>> {
    let (name, reader) = input.into_reader()?;
    Ok(Box::new(ChromeReader::read(&name, reader, opts)?))
}

/// A Chrome trace read and sorted, handed out as rows.
pub struct ChromeReader {
    name: String,
    prelude: std::vec::IntoIter<Record>,
    frames: Frames,
}

impl ChromeReader {
    /// Reads the whole of `input` (named `name`), sorting its rows.
    pub fn read(name: &str, input: impl Read, opts: &ReadOptions) -> Result<ChromeReader> {
        let mut scanner = scan::Scanner::new(name, input);
        let mut mapper = EventMapper::new(opts.symbols.clone());
        let mut sorter = Sorter::default();
        let mut fields = event::Fields::default();
        while let Some((at, bytes)) = scanner.next_event()? {
            let located = |msg: String| Error::Data {
                at: Location::Offset {
                    file: name.to_string(),
                    offset: at,
                },
                msg,
            };
            let event =
                std::str::from_utf8(bytes).map_err(|e| located(format!("not UTF-8 text: {e}")))?;
            fields
                .parse(event)
                .map_err(|e| located(format!("not a valid event object: {e}")))?;
            mapper
                .map(&fields, event, at, &mut sorter)
                .map_err(|e| match e {
                    Error::Record(msg) => located(msg),
                    other => other,
                })?;
        }
        let clipped = mapper.close_open(&mut sorter)?;
        warn_about(name, &scanner, &mapper, clipped, opts);
        let sorted = sorter.finish()?;
        let rank = rank_of(&scanner.kept);
        let id_prefix = rank.as_ref().map_or(String::new(), |r| format!("rank{r}:"));
        let (prelude, renamed) = prelude(name, &scanner.kept, &mapper.places, rank, &opts.symbols);
        Ok(ChromeReader {
            name: name.to_string(),
            prelude: prelude.into_iter(),
            frames: Frames::new(sorted, (renamed, id_prefix), opts),
        })
    }
}

/// The warnings of a file read: cut, async spans left open, phases kept as
/// events.
fn warn_about(
    name: &str,
    scanner: &scan::Scanner<impl Read>,
    mapper: &EventMapper,
    clipped: u64,
    opts: &ReadOptions,
) {
    if scanner.unterminated {
        opts.warnings.warn(format!(
            "{name}: the events end without their closing bracket (the format allows it; was the file cut?)"
        ));
    }
    if clipped > 0 {
        opts.warnings.warn(format!(
            "{name}: {clipped} async span(s) never ended: claims to the last time, flagged C"
        ));
    }
    if !mapper.other_phases.is_empty() {
        let mut phases: Vec<String> = mapper
            .other_phases
            .iter()
            .map(|(ph, n)| format!("{n} `{ph}`"))
            .collect();
        phases.sort();
        opts.warnings.warn(format!(
            "{name}: events of phases with no row kind of their own kept as `event` rows with attribute ph: {}",
            phases.join(", ")
        ));
    }
}

/// The rank `distributedInfo` gives (Kineto), if any.
fn rank_of(kept: &[(String, String)]) -> Option<String> {
    let (_, info) = kept.iter().find(|(k, _)| k == "distributedInfo")?;
    let value: serde_json::Value = serde_json::from_str(info).ok()?;
    let rank = value.get("rank")?;
    Some(match rank {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// The meta rows and the `container` rows (processes, then threads, each
/// by sort index then first appearance), and the locations renamed by a
/// rank's prefix (`rank0/PID/TID`).
fn prelude(
    name: &str,
    kept: &[(String, String)],
    places: &[ProcessOrThread],
    rank: Option<String>,
    symbols: &Symbols,
) -> (Vec<Record>, crate::fasthash::FastMap<Sym, Sym>) {
    let mut rows = vec![
        Record::meta(symbols.intern("source_format"), "chrome"),
        Record::meta(symbols.intern("source"), name),
        Record::meta(symbols.intern("time_unit"), "us"),
    ];
    for (key, value) in kept {
        if key == "baseTimeNanoseconds" {
            rows.push(Record::meta(well_known::ORIGIN, &event::text(value)));
        } else if key == "otherData" {
            event::for_each_arg(value, |k, v| {
                rows.push(Record::meta(
                    symbols.intern(&format!("chrome.other.{k}")),
                    v,
                ));
            });
        } else {
            rows.push(Record::meta(
                symbols.intern(&format!("chrome.{key}")),
                &event::text(value),
            ));
        }
    }
    let mut renamed = crate::fasthash::FastMap::default();
    let final_loc = |p: &ProcessOrThread| match &rank {
        Some(r) => symbols.intern(&format!("rank{r}/{}", symbols.text(p.loc))),
        None => p.loc,
    };
    let mut order: Vec<usize> = (0..places.len()).collect();
    order.sort_by_key(|&i| {
        (
            places[i].is_thread,
            places[i].sort_index.unwrap_or(i64::MAX),
            i,
        )
    });
    for i in order {
        let p = &places[i];
        let loc = final_loc(p);
        if loc != p.loc {
            renamed.insert(p.loc, loc);
        }
        let mut rec = Record::new(Kind::Container);
        rec.loc = loc;
        let threads_gpu = || {
            places
                .iter()
                .filter(|t| t.is_thread && t.process == i)
                .all(|t| t.gpu)
        };
        rec.cat = symbols.intern(match (p.is_thread, p.gpu) {
            (true, true) => "gpu",
            (true, false) => "thread",
            (false, _)
                if p.gpu
                    || (threads_gpu() && places.iter().any(|t| t.is_thread && t.process == i)) =>
            {
                "accelerator"
            }
            (false, _) => "process",
        });
        if p.is_thread {
            rec.peer = final_loc(&places[p.process]);
        }
        if let Some(n) = &p.name {
            rec.name = symbols.intern(n);
        }
        rec.attrs.push_str(&p.attrs);
        rows.push(rec);
    }
    (rows, renamed)
}

impl RecordSource for ChromeReader {
    fn next_record(&mut self, rec: &mut Record) -> Result<bool> {
        if let Some(row) = self.prelude.next() {
            *rec = row;
            return Ok(true);
        }
        self.frames.next_into(rec, &self.name)
    }

    fn mark(&self) -> u64 {
        self.frames.mark()
    }

    fn locate(&self, mark: u64) -> Location {
        Location::Offset {
            file: self.name.clone(),
            offset: mark,
        }
    }
}
