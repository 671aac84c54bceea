//! The trace-event file cut into events without parsing it whole: the
//! bytes of one event object at a time, through a buffer that holds the
//! largest event (not the file), in either form (a bare array, or an
//! object whose `traceEvents` key holds the array beside other keys).

use std::io::Read;

use crate::error::{Error, Location, Result};

/// First size of the buffer; it grows to hold the largest event.
const BUFFER: usize = 256 << 10;

/// The top-level keys kept beside the events (others are skipped as read).
const KEPT_KEYS: &[&str] = &[
    "displayTimeUnit",
    "otherData",
    "distributedInfo",
    "baseTimeNanoseconds",
    "schemaVersion",
    "traceName",
];

/// Where the scanner stands in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first byte.
    Start,
    /// Among the events; `object`: the array is the value of `traceEvents`.
    Events { object: bool },
    /// Among the keys of the top-level object.
    Keys,
    /// Past the end.
    Done,
}

/// Cuts a trace-event file into its events.
pub struct Scanner<R> {
    input: R,
    name: String,
    buf: Vec<u8>,
    /// The first byte not consumed, and the end of what was read.
    start: usize,
    end: usize,
    /// The file offset of `buf[0]`.
    base: u64,
    eof: bool,
    state: State,
    /// The top-level keys kept (`KEPT_KEYS`), with their values' JSON text.
    pub kept: Vec<(String, String)>,
    /// True when the file ended before its closing `]` or `}`.
    pub unterminated: bool,
}

impl<R: Read> Scanner<R> {
    /// A scanner over `input`, named `name` in errors.
    pub fn new(name: &str, input: R) -> Scanner<R> {
        Scanner {
            input,
            name: name.to_string(),
            buf: vec![0; BUFFER],
            start: 0,
            end: 0,
            base: 0,
            eof: false,
            state: State::Start,
            kept: Vec::new(),
            unterminated: false,
        }
    }

    /// The next event: its file offset and its bytes (one JSON object, not
    /// yet checked); `None` at the end of the events.
    pub fn next_event(&mut self) -> Result<Option<(u64, &[u8])>> {
        loop {
            match self.state {
                State::Start => self.open()?,
                State::Events { object } => {
                    let Some(b) = self.peek()? else {
                        self.unterminated = true;
                        self.state = State::Done;
                        continue;
                    };
                    match b {
                        b',' => self.start += 1,
                        b']' => {
                            self.start += 1;
                            self.state = if object { State::Keys } else { State::Done };
                            if !object {
                                self.expect_end()?;
                            }
                        }
                        b'{' => {
                            let len = self.object_len()?;
                            let at = self.base + self.start as u64;
                            let bytes = &self.buf[self.start..self.start + len];
                            self.start += len;
                            return Ok(Some((at, bytes)));
                        }
                        _ => return Err(self.error("an event object, `,` or `]`")),
                    }
                }
                State::Keys => self.key()?,
                State::Done => return Ok(None),
            }
        }
    }

    /// The offset of the next byte, for errors.
    pub fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    fn error(&self, expected: &str) -> Error {
        let found = match self.buf[self.start..self.end].first() {
            Some(b) => format!("`{}`", char::from(*b).escape_default()),
            None => "the end of the file".to_string(),
        };
        Error::Data {
            at: Location::Offset {
                file: self.name.clone(),
                offset: self.offset(),
            },
            msg: format!("expected {expected} in a Chrome trace, found {found}"),
        }
    }

    /// The first byte: `[` (the array form) or `{` (the object form).
    fn open(&mut self) -> Result<()> {
        if self.peek()?.is_some() && self.buf[self.start..self.end].starts_with(b"\xEF\xBB\xBF") {
            self.start += 3;
        }
        match self.peek()? {
            Some(b'[') => self.state = State::Events { object: false },
            Some(b'{') => self.state = State::Keys,
            _ => return Err(self.error("`[` or `{`")),
        }
        self.start += 1;
        Ok(())
    }

    /// One key of the top-level object and its value (the events, kept, or
    /// skipped), or its closing `}`.
    fn key(&mut self) -> Result<()> {
        match self.peek()? {
            None => {
                self.unterminated = true;
                self.state = State::Done;
                return Ok(());
            }
            Some(b',') => {
                self.start += 1;
                return Ok(());
            }
            Some(b'}') => {
                self.start += 1;
                self.state = State::Done;
                return self.expect_end();
            }
            Some(b'"') => {}
            Some(_) => return Err(self.error("a key, `,` or `}`")),
        }
        let raw = self.value(true)?;
        let key: String = serde_json::from_slice(&raw).map_err(|_| self.error("a key"))?;
        if self.peek()? != Some(b':') {
            return Err(self.error("`:`"));
        }
        self.start += 1;
        if key == "traceEvents" {
            if self.peek()? != Some(b'[') {
                return Err(self.error("`[` (the events)"));
            }
            self.start += 1;
            self.state = State::Events { object: true };
            return Ok(());
        }
        if self.peek()?.is_none() {
            return Err(self.error("a value"));
        }
        let keep = KEPT_KEYS.contains(&key.as_str());
        let value = self.value(keep)?;
        if keep {
            let text = String::from_utf8(value).map_err(|_| self.error("UTF-8 text"))?;
            self.kept.push((key, text));
        }
        Ok(())
    }

    /// After the closing bracket: only white space.
    fn expect_end(&mut self) -> Result<()> {
        match self.peek()? {
            None => Ok(()),
            Some(_) => Err(self.error("the end of the file")),
        }
    }

    /// The next byte that is not white space, not consumed.
    fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            while self.start < self.end {
                let b = self.buf[self.start];
                if !b.is_ascii_whitespace() {
                    return Ok(Some(b));
                }
                self.start += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Reads more input after what is held; false at the end of the input.
    fn fill(&mut self) -> Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.base += self.start as u64;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let len = self.buf.len() * 2;
            self.buf.resize(len, 0);
        }
        let n = loop {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(self.name.clone(), e)),
            }
        };
        self.end += n;
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// The length of the object that starts at `start`, read whole into
    /// the buffer: braces counted outside strings (the parser checks the
    /// rest). The scan resumes where it stopped when more is read.
    fn object_len(&mut self) -> Result<usize> {
        let (mut at, mut depth, mut in_string) = (0usize, 0u32, false);
        loop {
            let held = &self.buf[self.start..self.end];
            while at < held.len() {
                if in_string {
                    let Some(i) = memchr::memchr2(b'"', b'\\', &held[at..]) else {
                        at = held.len();
                        break;
                    };
                    at += i;
                    if held[at] == b'"' {
                        in_string = false;
                        at += 1;
                    } else if at + 1 < held.len() {
                        at += 2;
                    } else {
                        break; // the escaped byte is not read yet
                    }
                    continue;
                }
                let Some(i) = memchr::memchr3(b'"', b'{', b'}', &held[at..]) else {
                    at = held.len();
                    break;
                };
                at += i;
                match held[at] {
                    b'"' => in_string = true,
                    b'{' => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(at + 1);
                        }
                    }
                }
                at += 1;
            }
            if !self.fill()? {
                return Err(self.cut());
            }
        }
    }

    fn cut(&self) -> Error {
        Error::Data {
            at: Location::Offset {
                file: self.name.clone(),
                offset: self.offset(),
            },
            msg: "the file ends inside this event (was it cut?)".to_string(),
        }
    }

    /// The value that starts at the next byte, consumed; its bytes when
    /// `keep` (else dropped as read, so a large skipped value costs no
    /// memory).
    fn value(&mut self, keep: bool) -> Result<Vec<u8>> {
        let mut kept = Vec::new();
        let (mut depth, mut in_string, mut escaped) = (0u32, false, false);
        let mut begun = false;
        loop {
            if self.start == self.end && !self.fill()? {
                return Err(self.cut());
            }
            let b = self.buf[self.start];
            let scalar_end = !in_string
                && depth == 0
                && begun
                && matches!(b, b',' | b'}' | b']' | b':' | b' ' | b'\n' | b'\r' | b'\t');
            if scalar_end {
                return Ok(kept);
            }
            self.start += 1;
            begun = true;
            if keep {
                kept.push(b);
            }
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                if !in_string && depth == 0 {
                    return Ok(kept);
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(kept);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether `head` starts a trace-event file: an array whose first element
/// is an object (or that is empty), or an object whose first key is one a
/// trace-event file has at its top (`traceEvents`, `displayTimeUnit`,
/// Kineto's `schemaVersion`...), or any other first key but `kind` (the
/// stream's JSON Lines) when `"traceEvents"` follows in the head.
pub fn is_trace_head(head: &[u8]) -> bool {
    let text = skip_space(head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head));
    match text.first() {
        Some(b'[') => matches!(skip_space(&text[1..]).first(), Some(b'{' | b']')),
        Some(b'{') => match first_key(&text[1..]) {
            Some(key) if TOP_KEYS.contains(&key) => true,
            Some(b"kind") | None => false,
            Some(_) => memchr::memmem::find(head, b"\"traceEvents\"").is_some(),
        },
        _ => false,
    }
}

/// Whether `head` is too short to tell a trace-event object from a line of
/// the JSON Lines stream (its first key is not whole yet).
pub fn is_undecided(head: &[u8]) -> bool {
    let text = skip_space(head);
    text.first() == Some(&b'{') && first_key(&text[1..]).is_none()
}

/// Keys a trace-event object may begin with.
const TOP_KEYS: &[&[u8]] = &[
    b"traceEvents",
    b"displayTimeUnit",
    b"otherData",
    b"systemTraceEvents",
    b"stackFrames",
    b"samples",
    b"metadata",
    b"schemaVersion",
    b"deviceProperties",
    b"distributedInfo",
    b"baseTimeNanoseconds",
    b"traceName",
];

fn skip_space(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// The first key of an object whose text after `{` is `rest`, when whole.
fn first_key(rest: &[u8]) -> Option<&[u8]> {
    let rest = skip_space(rest).strip_prefix(b"\"")?;
    let end = memchr::memchr(b'"', rest)?;
    Some(&rest[..end])
}
