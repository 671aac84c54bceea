//! The Chrome Trace Event Format, JSON object form
//! (`{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}`),
//! one event per line, written as rows arrive. Times are µs with the ns as
//! exact decimals.

use super::{Encoder, Label, Point, Track, TrackRole};
use crate::error::Result;
use crate::io::Output;
use crate::model::text::{push_json_string, push_time};
use crate::pipe::{RecordSink, WriteOptions};

/// Opens the `chrome` writer over `out`.
pub fn open_writer(out: Output, opts: &WriteOptions) -> Result<Box<dyn RecordSink + Send>> {
    Ok(Box::new(super::matched(
        ChromeEncoder::new(out),
        &opts.symbols,
        &opts.warnings,
    )))
}

/// Writes the timeline as Chrome trace events.
pub struct ChromeEncoder {
    out: Output,
    line: Vec<u8>,
    started: bool,
}

impl ChromeEncoder {
    /// An encoder over `out`.
    pub fn new(out: Output) -> ChromeEncoder {
        ChromeEncoder {
            out,
            line: Vec::with_capacity(256),
            started: false,
        }
    }

    /// Starts an event line: the separator, `ph`, `pid` and (but for a
    /// counter) `tid`.
    fn head(&mut self, ph: &str, track: &Track) {
        self.line.clear();
        if !self.started {
            self.started = true;
            self.line.extend_from_slice(b"{\"traceEvents\":[\n");
        } else {
            self.line.extend_from_slice(b",\n");
        }
        self.line.extend_from_slice(b"{\"ph\":\"");
        self.line.extend_from_slice(ph.as_bytes());
        self.line.extend_from_slice(b"\",\"pid\":");
        crate::number::push_uint(&mut self.line, track.pid);
        if track.role != TrackRole::Counter {
            self.line.extend_from_slice(b",\"tid\":");
            crate::number::push_uint(&mut self.line, track.uuid);
        }
    }

    fn number(&mut self, key: &str, value: u64) {
        self.key(key);
        crate::number::push_uint(&mut self.line, value);
    }

    fn time(&mut self, key: &str, ns: i64) {
        self.key(key);
        push_time(&mut self.line, ns, 1000);
    }

    fn text(&mut self, key: &str, value: &str) {
        self.key(key);
        push_json_string(&mut self.line, value);
    }

    fn key(&mut self, key: &str) {
        self.line.extend_from_slice(b",\"");
        self.line.extend_from_slice(key.as_bytes());
        self.line.extend_from_slice(b"\":");
    }

    /// `cat`, `name` and `args` of a slice or instant.
    fn label(&mut self, label: &Label) {
        if !label.cat.is_empty() {
            self.text("cat", label.cat);
        }
        self.text("name", label.name);
        let line = &mut self.line;
        let mut first = true;
        label.for_each_arg(|key, value| {
            line.extend_from_slice(if first { b",\"args\":{" } else { b"," });
            first = false;
            push_json_string(line, key);
            line.push(b':');
            push_json_string(line, value);
        });
        if !first {
            line.push(b'}');
        }
    }

    fn emit(&mut self) -> Result<()> {
        self.line.push(b'}');
        self.out.write_line(&self.line)
    }

    /// A metadata event naming or ranking a process or thread.
    fn metadata(
        &mut self,
        track: &Track,
        what: &str,
        arg: &str,
        value: Result<&str, u64>,
    ) -> Result<()> {
        self.head("M", track);
        self.text("name", what);
        self.line.extend_from_slice(b",\"args\":{\"");
        self.line.extend_from_slice(arg.as_bytes());
        self.line.extend_from_slice(b"\":");
        match value {
            Ok(text) => push_json_string(&mut self.line, text),
            Err(number) => crate::number::push_uint(&mut self.line, number),
        }
        self.line.push(b'}');
        self.emit()
    }

    /// One end of a flow: a zero-length slice and the flow event bound to it.
    fn flow_end(&mut self, ph: &str, id: u64, (track, ts): Point, label: &Label) -> Result<()> {
        self.head("X", track);
        self.time("ts", ts);
        self.number("dur", 0);
        self.label(label);
        self.emit()?;
        self.head(ph, track);
        self.time("ts", ts);
        self.number("id", id);
        if ph == "f" {
            self.text("bp", "e");
        }
        if !label.cat.is_empty() {
            self.text("cat", label.cat);
        }
        self.text("name", label.name);
        self.emit()
    }
}

impl Encoder for ChromeEncoder {
    fn track(&mut self, track: &Track) -> Result<()> {
        match track.role {
            TrackRole::Process => {
                self.metadata(track, "process_name", "name", Ok(&track.name))?;
                self.metadata(track, "process_sort_index", "sort_index", Err(track.uuid))?;
            }
            TrackRole::Thread => {}
            TrackRole::Counter => return Ok(()),
        }
        // A process's own rows go to its main thread (tid = pid).
        self.metadata(track, "thread_name", "name", Ok(&track.name))?;
        self.metadata(track, "thread_sort_index", "sort_index", Err(track.uuid))
    }

    fn begin(&mut self, track: &Track, ts: i64, label: &Label) -> Result<()> {
        self.head("B", track);
        self.time("ts", ts);
        self.label(label);
        self.emit()
    }

    fn end(&mut self, track: &Track, ts: i64) -> Result<()> {
        self.head("E", track);
        self.time("ts", ts);
        self.emit()
    }

    fn complete(&mut self, track: &Track, ts: i64, end: i64, label: &Label) -> Result<()> {
        self.head("X", track);
        self.time("ts", ts);
        self.time("dur", end - ts);
        self.label(label);
        self.emit()
    }

    fn instant(&mut self, track: &Track, ts: i64, label: &Label) -> Result<()> {
        self.head("i", track);
        self.text("s", "t");
        self.time("ts", ts);
        self.label(label);
        self.emit()
    }

    fn counter(&mut self, track: &Track, ts: i64, value: &str) -> Result<()> {
        self.head("C", track);
        self.time("ts", ts);
        self.text("name", &track.name);
        self.line.extend_from_slice(b",\"args\":{\"value\":");
        self.line.extend_from_slice(value.as_bytes());
        self.line.push(b'}');
        self.emit()
    }

    fn flow(&mut self, id: u64, from: Point, to: Point, label: &Label) -> Result<()> {
        self.flow_end("s", id, from, label)?;
        self.flow_end("f", id, to, &label.without_args())
    }

    fn finish(&mut self, meta: &[(String, String)]) -> Result<()> {
        self.line.clear();
        if !self.started {
            self.started = true;
            self.line.extend_from_slice(b"{\"traceEvents\":[");
        }
        self.line
            .extend_from_slice(b"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{");
        for (i, (key, value)) in meta.iter().enumerate() {
            if i > 0 {
                self.line.push(b',');
            }
            push_json_string(&mut self.line, key);
            self.line.push(b':');
            push_json_string(&mut self.line, value);
        }
        self.line.extend_from_slice(b"}}\n");
        self.out.write_line(&self.line)?;
        self.out.finish()
    }
}
