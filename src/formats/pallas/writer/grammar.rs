//! A thread's grammar discovered while its events come, in one pass.
//!
//! Events are kept once per distinct record and payload, each with its
//! timestamps. Every block (an `ENTER` … `LEAVE`) is a sequence of its
//! own, opened on the stack when it begins and kept once per distinct
//! token list when it ends. In the sequence being built, a run of tokens
//! repeated back to back becomes a loop (Pallas's "Basic" loop finding,
//! bodies of at most `max_loop` tokens): when the last `k` tokens equal
//! the `k` before them, the `2k` become a loop of a body sequence, twice;
//! while the loop is the last one made, each further run of its body adds
//! an iteration. A loop that can grow no more is kept once per (body,
//! iterations). Loops of loops come from loop tokens compared like any
//! other. Memory: the distinct events, sequences and loops, the open
//! blocks' tokens, and one block of values per vector.
//!
//! Each sequence's vectors get one value per occurrence, in the order the
//! reader meets them: start, duration (end of its last token − start),
//! and exclusive duration (a block: its duration less the blocks it holds;
//! any other sequence: the time of the blocks it holds, as Pallas does).

use std::hash::{Hash, Hasher};
use std::io::Write;

use super::super::archive::{make_token, token, TokenKind};
use super::attributes::EventAttributes;
use super::layout::{Dat, Vector};
use crate::error::{Error, Result};
use crate::fasthash::FastMap;

/// Longest payload of a record the writer writes (`MPI_ISEND`,
/// `MPI_COLLECTIVE_END`).
pub const MAX_PAYLOAD: usize = 28;

/// An event's identity: its record and payload bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventKey {
    /// Record number.
    pub record: u32,
    len: u8,
    bytes: [u8; MAX_PAYLOAD],
}

impl EventKey {
    /// The event of `record` with `payload` (at most [`MAX_PAYLOAD`] bytes).
    pub fn new(record: u32, payload: &[u8]) -> EventKey {
        let mut bytes = [0; MAX_PAYLOAD];
        bytes[..payload.len()].copy_from_slice(payload);
        EventKey {
            record,
            len: payload.len() as u8,
            bytes,
        }
    }

    /// The event of `record` whose payload packs `words` then `longs`,
    /// little-endian, as Pallas lays out its MPI records (at most
    /// [`MAX_PAYLOAD`] bytes).
    pub fn packed(record: u32, words: &[u32], longs: &[u64]) -> EventKey {
        let mut key = EventKey::new(record, &[]);
        for b in words.iter().flat_map(|w| w.to_le_bytes()) {
            key.bytes[key.len as usize] = b;
            key.len += 1;
        }
        for b in longs.iter().flat_map(|l| l.to_le_bytes()) {
            key.bytes[key.len as usize] = b;
            key.len += 1;
        }
        key
    }

    /// Its payload.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// One distinct event: its identity, timestamps and attribute lists.
pub struct EventSlot {
    /// Record and payload.
    pub key: EventKey,
    /// One timestamp per occurrence.
    pub timestamps: Vector,
    /// Occurrences so far.
    pub occurrences: u64,
    /// Attribute lists of its occurrences, laid out.
    pub attributes: EventAttributes,
}

/// One distinct sequence and its occurrences' values.
pub struct SequenceSlot {
    /// Its tokens.
    pub tokens: Box<[u32]>,
    /// Start, duration and exclusive duration of each occurrence.
    pub values: SequenceValues,
}

/// A sequence's three vectors (start, duration, exclusive duration per
/// occurrence): held inline while it has occurred once, as most sequences
/// of a trace whose blocks all differ do, and as vectors from its second
/// occurrence on.
#[derive(Default)]
pub enum SequenceValues {
    /// It has not occurred.
    #[default]
    Unseen,
    /// Once.
    Once([u64; 3]),
    /// More.
    Vectors(Box<[Vector; 3]>),
}

impl SequenceValues {
    /// Adds an occurrence's values; full blocks go to `dat`.
    fn push<W: Write>(&mut self, values: [u64; 3], dat: &mut Dat<W>) -> Result<()> {
        match self {
            SequenceValues::Unseen => *self = SequenceValues::Once(values),
            SequenceValues::Once(first) => {
                let mut vectors: Box<[Vector; 3]> = Box::default();
                for ((v, a), b) in vectors.iter_mut().zip(*first).zip(values) {
                    v.push(a, dat)?;
                    v.push(b, dat)?;
                }
                *self = SequenceValues::Vectors(vectors);
            }
            SequenceValues::Vectors(vectors) => {
                for (v, x) in vectors.iter_mut().zip(values) {
                    v.push(x, dat)?;
                }
            }
        }
        Ok(())
    }

    /// The vectors, every value written to `dat`; none held after.
    pub fn written<W: Write>(&mut self, dat: &mut Dat<W>) -> Result<Box<[Vector; 3]>> {
        let mut vectors = match std::mem::take(self) {
            SequenceValues::Unseen => Box::default(),
            SequenceValues::Once(values) => {
                let mut vectors: Box<[Vector; 3]> = Box::default();
                for (v, x) in vectors.iter_mut().zip(values) {
                    v.push(x, dat)?;
                }
                vectors
            }
            SequenceValues::Vectors(vectors) => vectors,
        };
        for v in vectors.iter_mut() {
            v.flush(dat)?;
        }
        Ok(vectors)
    }
}

/// One loop: its body (a sequence token), iterations, and how many times
/// it occurs; a loop merged into an equal one is dead (`None`).
pub type LoopSlot = Option<(u32, u32, u64)>;

/// Where a token's occurrence lies: first and last time, and the time of
/// the blocks it holds.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: u64,
    end: u64,
    blocks: u64,
}

impl Span {
    fn join(self, next: Span) -> Span {
        Span {
            start: self.start,
            end: next.end,
            blocks: self.blocks + next.blocks,
        }
    }
}

/// A sequence being built: a block still open, or the thread's root.
#[derive(Default)]
struct OpenSequence {
    tokens: Vec<u32>,
    spans: Vec<Span>,
    /// Positions of the loops that may still grow, outermost first.
    growing: Vec<usize>,
}

/// A thread's grammar being discovered.
pub struct Grammar {
    /// The distinct events, by id.
    pub events: Vec<EventSlot>,
    by_key: FastMap<EventKey, u32>,
    /// The distinct sequences, by id; 0 is the root, filled at the end.
    pub sequences: Vec<SequenceSlot>,
    by_tokens: FastMap<u64, Vec<u32>>,
    /// The loops, by id.
    pub loops: Vec<LoopSlot>,
    by_loop: FastMap<(u32, u32), u32>,
    free_loops: Vec<u32>,
    stack: Vec<OpenSequence>,
    max_loop: usize,
    /// First and last timestamps.
    pub first: Option<u64>,
    last: u64,
}

fn hash_tokens(tokens: &[u32]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    tokens.hash(&mut h);
    h.finish()
}

impl Grammar {
    /// An empty grammar finding loops of bodies up to `max_loop` tokens.
    pub fn new(max_loop: usize) -> Grammar {
        let root = SequenceSlot {
            tokens: Box::new([]),
            values: SequenceValues::Unseen,
        };
        Grammar {
            events: Vec::new(),
            by_key: FastMap::default(),
            sequences: vec![root],
            by_tokens: FastMap::default(),
            loops: Vec::new(),
            by_loop: FastMap::default(),
            free_loops: Vec::new(),
            stack: vec![OpenSequence::default()],
            max_loop: max_loop.max(1),
            first: None,
            last: 0,
        }
    }

    /// Blocks open.
    pub fn depth(&self) -> usize {
        self.stack.len() - 1
    }

    /// The id of event `key`, made on first use.
    pub fn event(&mut self, key: EventKey) -> u32 {
        if let Some(&id) = self.by_key.get(&key) {
            return id;
        }
        let id = self.events.len() as u32;
        self.events.push(EventSlot {
            key,
            timestamps: Vector::default(),
            occurrences: 0,
            attributes: EventAttributes::default(),
        });
        self.by_key.insert(key, id);
        id
    }

    /// Records an occurrence of event `id` at `time`; `open` when it begins a
    /// block, `close` when it ends the one open (checked by the caller).
    /// Returns the occurrence's index.
    pub fn occur<W: Write>(
        &mut self,
        id: u32,
        time: u64,
        (open, close): (bool, bool),
        dats: &mut [Dat<W>; 2],
    ) -> Result<u64> {
        let slot = &mut self.events[id as usize];
        slot.timestamps.push(time, &mut dats[0])?;
        let index = slot.occurrences;
        slot.occurrences += 1;
        self.first.get_or_insert(time);
        self.last = time;
        if open {
            self.stack.push(OpenSequence::default());
        }
        let span = Span {
            start: time,
            end: time,
            blocks: 0,
        };
        self.append(make_token(TokenKind::Event, id), span, &mut dats[1])?;
        if close && self.stack.len() > 1 {
            self.close_block(&mut dats[1])?;
        }
        Ok(index)
    }

    /// Ends the block on top of the stack: its sequence gets an occurrence
    /// and its token goes to the sequence around it.
    fn close_block<W: Write>(&mut self, dat: &mut Dat<W>) -> Result<()> {
        self.settle_growing();
        let open = self.stack.pop().expect("a block is open");
        let span = open
            .spans
            .iter()
            .copied()
            .reduce(Span::join)
            .unwrap_or_default();
        let duration = span.end - span.start;
        let id = self.sequence(&open.tokens);
        let exclusive = duration.saturating_sub(span.blocks);
        self.sequence_occurs(id, (span.start, duration, exclusive), dat)?;
        let token = make_token(TokenKind::Sequence, id);
        let block = Span {
            start: span.start,
            end: span.end,
            blocks: duration,
        };
        self.append(token, block, dat)
    }

    /// Closes what is open at the end of the thread and writes the root's
    /// occurrence: blocks left open become sequences of their own (no
    /// `LEAVE` ends them).
    pub fn finish<W: Write>(&mut self, dat: &mut Dat<W>) -> Result<()> {
        while self.stack.len() > 1 {
            self.settle_growing();
            let open = self.stack.pop().expect("a block is open");
            let span = open.spans.iter().copied().reduce(Span::join);
            let span = span.unwrap_or_default();
            let id = self.sequence(&open.tokens);
            let duration = span.end - span.start;
            let exclusive = duration.saturating_sub(span.blocks);
            self.sequence_occurs(id, (span.start, duration, exclusive), dat)?;
            let block = Span {
                blocks: duration,
                ..span
            };
            self.append(make_token(TokenKind::Sequence, id), block, dat)?;
        }
        self.settle_growing();
        self.find_loop(dat)?;
        self.settle_growing();
        let mut root = std::mem::take(&mut self.stack[0].tokens);
        let single = root.len() == 1 && !matches!(token(root[0]), Some((TokenKind::Event, _)));
        if !root.is_empty() && !single {
            // Pallas's readers cannot start a thread on an event, and
            // stop after the root's first token: the root holds one
            // sequence of its tokens.
            let spans = std::mem::take(&mut self.stack[0].spans);
            let span = spans.into_iter().reduce(Span::join).unwrap_or_default();
            let id = self.sequence(&root);
            let duration = span.end - span.start;
            self.sequence_occurs(id, (span.start, duration, span.blocks), dat)?;
            root = vec![make_token(TokenKind::Sequence, id)];
        }
        self.sequences[0].tokens = root.into_boxed_slice();
        let first = self.first.unwrap_or(0);
        self.sequence_occurs(0, (first, self.last - first, 0), dat)
    }

    /// Appends `token` to the sequence being built, then finds loops.
    fn append<W: Write>(&mut self, token: u32, span: Span, dat: &mut Dat<W>) -> Result<()> {
        // Growing loops `token` cannot continue end before it: settled,
        // they may make a loop with what precedes them.
        while self.cannot_continue(token) {
            self.settle_innermost();
            self.find_loop(dat)?;
        }
        let open = self.stack.last_mut().expect("the root is open");
        open.tokens.push(token);
        open.spans.push(span);
        if self.grow(dat)? {
            return Ok(());
        }
        self.find_loop(dat)
    }

    /// The innermost growing loop's position, body (its id and tokens)
    /// and iterations.
    fn innermost(&self) -> Option<(usize, u32, &[u32], u32)> {
        let open = self.stack.last().expect("the root is open");
        let &p = open.growing.last()?;
        let (_, l) = token(open.tokens[p]).expect("a loop token");
        let (body, iterations, _) = self.loops[l as usize].expect("a live loop");
        let (_, b) = token(body).expect("a sequence token");
        Some((p, b, &self.sequences[b as usize].tokens, iterations))
    }

    /// Whether the innermost growing loop certainly cannot go on with
    /// `next`: the tokens after it begin its body, which has another event
    /// or sequence next (tokens only ever fold into loops), or more tokens
    /// than could still fold into a body follow it.
    fn cannot_continue(&self, next: u32) -> bool {
        let Some((p, _, body, _)) = self.innermost() else {
            return false;
        };
        let after = &self.stack.last().expect("the root is open").tokens[p + 1..];
        if after.len() < body.len() && body.starts_with(after) {
            let want = body[after.len()];
            let a_loop = matches!(token(want), Some((TokenKind::Loop, _)));
            return want != next && !a_loop;
        }
        after.len() >= self.unfolded_bound(body.len())
    }

    /// How many tokens may follow a growing loop of a body of `k` tokens
    /// before they fold into a run of it: a loop in the body is seen as
    /// its first runs before they fold.
    fn unfolded_bound(&self, k: usize) -> usize {
        k + 2 * self.max_loop
    }

    /// Adds an iteration to the innermost growing loop when the tokens
    /// after it are its body again; settles growing loops that more
    /// tokens than a body follow.
    fn grow<W: Write>(&mut self, dat: &mut Dat<W>) -> Result<bool> {
        loop {
            let Some((p, b, body, iterations)) = self.innermost() else {
                return Ok(false);
            };
            let open = self.stack.last().expect("the root is open");
            let (k, after) = (body.len(), open.tokens.len() - 1 - p);
            if after > self.unfolded_bound(k) {
                self.settle_innermost();
                continue;
            }
            if after != k || iterations == u32::MAX || open.tokens[p + 1..] != *body {
                return Ok(false);
            }
            let open = self.stack.last_mut().expect("the root is open");
            let run = open.spans[p + 1..]
                .iter()
                .copied()
                .reduce(Span::join)
                .expect("a body has tokens");
            open.tokens.truncate(p + 1);
            open.spans.truncate(p + 1);
            open.spans[p] = open.spans[p].join(run);
            let (_, l) = token(open.tokens[p]).expect("a loop token");
            if let Some(l) = &mut self.loops[l as usize] {
                l.1 += 1;
            }
            self.iteration(b, run, dat)?;
            return Ok(true);
        }
    }

    /// Makes a loop of the last `2k` tokens when they are a run of `k`
    /// repeated, the shortest such run first. (Growing loops are each
    /// unique, so no run holds one.)
    fn find_loop<W: Write>(&mut self, dat: &mut Dat<W>) -> Result<()> {
        let open = self.stack.last().expect("the root is open");
        let n = open.tokens.len();
        if n < 2 {
            return Ok(());
        }
        let t = &open.tokens;
        let Some(k) = (1..=self.max_loop.min(n / 2))
            .find(|&k| t[n - 1] == t[n - 1 - k] && t[n - 2 * k..n - k] == t[n - k..])
        else {
            return Ok(());
        };
        let open = self.stack.last_mut().expect("the root is open");
        let body_tokens: Vec<u32> = open.tokens[n - k..].to_vec();
        let join = |s: &[Span]| s.iter().copied().reduce(Span::join).expect("k > 0");
        let (first, second) = (
            join(&open.spans[n - 2 * k..n - k]),
            join(&open.spans[n - k..]),
        );
        open.tokens.truncate(n - 2 * k);
        open.spans.truncate(n - 2 * k);
        let body = self.sequence(&body_tokens);
        self.iteration(body, first, dat)?;
        self.iteration(body, second, dat)?;
        let id = match self.free_loops.pop() {
            Some(id) => id,
            None => {
                self.loops.push(None);
                self.loops.len() as u32 - 1
            }
        };
        self.loops[id as usize] = Some((make_token(TokenKind::Sequence, body), 2, 1));
        let open = self.stack.last_mut().expect("the root is open");
        open.growing.push(open.tokens.len());
        open.tokens.push(make_token(TokenKind::Loop, id));
        open.spans.push(first.join(second));
        Ok(())
    }

    /// Settles every growing loop of the sequence being built.
    fn settle_growing(&mut self) {
        while !self
            .stack
            .last()
            .expect("the root is open")
            .growing
            .is_empty()
        {
            self.settle_innermost();
        }
    }

    /// The innermost growing loop grows no more: it is merged into an
    /// equal loop when there is one.
    fn settle_innermost(&mut self) {
        let open = self.stack.last_mut().expect("the root is open");
        let Some(p) = open.growing.pop() else {
            return;
        };
        let (_, l) = token(open.tokens[p]).expect("a loop token");
        let (body, iterations, _) = self.loops[l as usize].expect("a live loop");
        match self.by_loop.get(&(body, iterations)) {
            Some(&same) => {
                open.tokens[p] = make_token(TokenKind::Loop, same);
                if let Some(s) = &mut self.loops[same as usize] {
                    s.2 += 1;
                }
                self.loops[l as usize] = None;
                self.free_loops.push(l);
            }
            None => {
                self.by_loop.insert((body, iterations), l);
            }
        }
    }

    /// An iteration of loop body `body` over `span`.
    fn iteration<W: Write>(&mut self, body: u32, span: Span, dat: &mut Dat<W>) -> Result<()> {
        let duration = span.end - span.start;
        self.sequence_occurs(body, (span.start, duration, span.blocks), dat)
    }

    /// The id of the sequence of `tokens`, made on first use.
    fn sequence(&mut self, tokens: &[u32]) -> u32 {
        let h = hash_tokens(tokens);
        let sequences = &self.sequences;
        if let Some(ids) = self.by_tokens.get(&h) {
            if let Some(&id) = ids
                .iter()
                .find(|&&id| *sequences[id as usize].tokens == *tokens)
            {
                return id;
            }
        }
        let id = self.sequences.len() as u32;
        self.sequences.push(SequenceSlot {
            tokens: tokens.into(),
            values: SequenceValues::Unseen,
        });
        self.by_tokens.entry(h).or_default().push(id);
        id
    }

    /// An occurrence of sequence `id`: its start, duration and exclusive
    /// duration.
    fn sequence_occurs<W: Write>(
        &mut self,
        id: u32,
        (start, duration, exclusive): (u64, u64, u64),
        dat: &mut Dat<W>,
    ) -> Result<()> {
        let values = &mut self.sequences[id as usize].values;
        values.push([start, duration, exclusive], dat)
    }

    /// Flushes every event's last block of timestamps (the sequences'
    /// values are written with their headers: [`SequenceValues::written`]).
    pub fn flush_events<W: Write>(&mut self, dat: &mut Dat<W>) -> Result<()> {
        for e in &mut self.events {
            e.timestamps.flush(dat)?;
        }
        Ok(())
    }
}

/// The error for a grammar deeper than a reader follows.
pub fn too_deep(depth: usize) -> Error {
    Error::Record(format!(
        "blocks nested {depth} deep: Pallas readers follow at most 4096"
    ))
}
