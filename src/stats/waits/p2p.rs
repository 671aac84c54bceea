//! Point-to-point waits: each location's open frames, each half's frame,
//! and halves paired by the library's matcher (as a pairing oracle), so a
//! message's send and receive frames are known; a frame's waits are
//! decided when it closes, from the candidates its messages left on it.

use crate::error::{Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::frames::{self, FrameStack, OpenFrame};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};
use crate::pipe::{Discard, RecordSink};
use crate::stages::matcher::{is_posting, MatchOptions, MatchSummary, Matcher, Pairing, Unmatched};
use crate::stats::elapsed;

use super::{Jump, Pattern, Tally, Wait};

/// A wait a message may have caused its frame: the raw waiting time
/// (from the frame's enter to the other side's), and for whom.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    pattern: Pattern,
    raw: i64,
    waited_for: Sym,
}

/// An open frame.
#[derive(Default)]
struct WaitFrame {
    serial: u64,
    enter: i64,
    name: Sym,
    /// Halves inside it not yet paired or given up.
    unpaired: u32,
    candidates: Vec<Candidate>,
}

/// How many closed frames each location remembers, for `msg` rows (both
/// halves in one row, at the receive) whose send happened in a frame that
/// has since closed.
const RECENT: usize = 64;

impl OpenFrame for WaitFrame {
    fn name(&self) -> Sym {
        self.name
    }
}

/// One location's open frames and its last [`RECENT`] closed frames (with
/// their depth).
#[derive(Default)]
struct WaitStack {
    frames: FrameStack<WaitFrame>,
    recent: std::collections::VecDeque<(FrameAt, usize)>,
}

/// Where a half happened: its frame (by serial), on which location, and
/// its end when it had closed.
#[derive(Debug, Clone, Copy)]
struct FrameAt {
    serial: u64,
    enter: i64,
    end: Option<i64>,
    name: Sym,
    loc: Sym,
}

/// A half waiting to be paired.
#[derive(Debug, Clone, Copy)]
struct Half {
    kind: Kind,
    time: i64,
    frame: Option<FrameAt>,
}

/// A frame that closed with halves inside still unpaired.
struct Ended {
    end: i64,
    halves: u32,
}

/// Frames and halves: what point-to-point waits are found from.
pub struct WaitFinder {
    symbols: Symbols,
    stacks: FastMap<Sym, WaitStack>,
    serial: u64,
    matcher: Matcher<Discard>,
    halves: FastMap<u64, Half>,
    mark: u64,
    ended: FastMap<u64, Ended>,
    /// Each container's lanes (Pajé: one stack per state type).
    lanes: FastMap<Sym, Vec<Sym>>,
    /// The matcher's pairings being handled (a reused buffer).
    pairings: Vec<Pairing>,
}

impl WaitFinder {
    /// Frames of rows whose identifiers are in `symbols`; halves left
    /// unpaired are told to `warnings`.
    pub fn new(symbols: Symbols, warnings: Warnings) -> WaitFinder {
        let options = MatchOptions {
            unmatched: Unmatched::Drop,
            ..MatchOptions::default()
        };
        let mut matcher = Matcher::with_options(Discard, options, symbols.clone(), warnings);
        matcher.observe_pairings();
        WaitFinder {
            symbols,
            stacks: FastMap::default(),
            serial: 0,
            matcher,
            halves: FastMap::default(),
            mark: 0,
            ended: FastMap::default(),
            lanes: FastMap::default(),
            pairings: Vec::new(),
        }
    }

    /// Pushes a frame.
    pub fn enter(&mut self, rec: &Record) {
        let t = rec.time.unwrap_or_default();
        self.serial += 1;
        let open = self.stacks.entry(rec.loc).or_default().frames.enter(t);
        open.serial = self.serial;
        open.enter = t;
        open.name = rec.name;
        open.unpaired = 0;
        open.candidates.clear();
    }

    /// Pops a frame and counts its waits; a `leave` that matches no open
    /// frame is an error, as in the profile.
    pub fn leave(&mut self, rec: &Record, tally: &mut Tally) -> Result<()> {
        let stack = self.stacks.entry(rec.loc).or_default();
        stack
            .frames
            .check_leave((rec.loc, rec.name), &self.symbols)?;
        self.close(rec.loc, rec.time.unwrap_or_default(), tally)
    }

    fn close(&mut self, loc: Sym, end: i64, tally: &mut Tally) -> Result<()> {
        let Some(stack) = self.stacks.get_mut(&loc) else {
            return Ok(());
        };
        let Some(closed) = stack.frames.close(end) else {
            return Ok(());
        };
        let (open, depth) = (&*closed.frame, closed.depth);
        let duration = elapsed(open.enter, end)?;
        for pattern in [Pattern::LateSender, Pattern::LateReceiver] {
            let best = open
                .candidates
                .iter()
                .filter(|c| c.pattern == pattern)
                .filter_map(|c| decide(c, duration).map(|time| (time, c.waited_for)))
                .max_by_key(|&(time, _)| time);
            if let Some((time, waited_for)) = best {
                let (waiter, name) = (loc, open.name);
                tally.add(Wait {
                    pattern,
                    waiter,
                    name,
                    waited_for,
                    time,
                });
            }
        }
        if open.unpaired > 0 {
            let ended = Ended {
                end,
                halves: open.unpaired,
            };
            self.ended.insert(open.serial, ended);
        }
        let closed = FrameAt {
            serial: open.serial,
            enter: open.enter,
            end: Some(end),
            name: open.name,
            loc,
        };
        if stack.recent.len() == RECENT {
            stack.recent.pop_front();
        }
        stack.recent.push_back((closed, depth));
        Ok(())
    }

    /// The innermost frame of `loc` around `t`, open or among its recently
    /// closed ones; for a location without frames of its own (a Pajé
    /// container), the innermost of its lanes'.
    fn frame_at(&self, loc: Sym, t: i64) -> Option<FrameAt> {
        if self.stacks.contains_key(&loc) {
            return self.frame_on(loc, t);
        }
        let lanes = self.lanes.get(&loc)?.iter();
        let found = lanes.filter_map(|&lane| self.frame_on(lane, t));
        found.max_by_key(|f| f.enter)
    }

    /// The innermost frame of `loc`'s own stack around `t`.
    fn frame_on(&self, loc: Sym, t: i64) -> Option<FrameAt> {
        let stack = self.stacks.get(&loc)?;
        let mut open = stack.frames.open().iter().enumerate().rev();
        let open = open.find(|(_, o)| o.enter <= t).map(|(depth, o)| {
            let at = FrameAt {
                serial: o.serial,
                enter: o.enter,
                end: None,
                name: o.name,
                loc,
            };
            (at, depth)
        });
        let closed = stack
            .recent
            .iter()
            .filter(|(f, _)| f.enter <= t && f.end.is_some_and(|end| t <= end))
            .max_by_key(|(f, depth)| (f.enter, *depth));
        match (open, closed) {
            (Some(o), Some(c)) => Some(if (c.0.enter, c.1) > (o.0.enter, o.1) {
                *c
            } else {
                o
            })
            .map(|f| f.0),
            (o, c) => o.or(c.copied()).map(|f| f.0),
        }
    }

    /// What pairing the halves found: messages made, halves unmatched.
    pub fn matching(&self) -> &MatchSummary {
        self.matcher.summary()
    }

    /// The symbol table the rows' identifiers are in.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// The innermost frame open on `loc`: its name and enter.
    pub fn top(&self, loc: Sym) -> Option<(Sym, i64)> {
        let open = self.stacks.get(&loc)?.frames.innermost()?;
        Some((open.name, open.enter))
    }

    /// A half, a posting, a destruction or a declaration: through the
    /// matcher; the pairings it makes become candidates on their frames.
    pub fn pair(&mut self, rec: &Record, tally: &mut Tally) -> Result<()> {
        if rec.kind == Kind::Container && rec.cat == well_known::LANE {
            let lanes = self.lanes.entry(rec.peer).or_default();
            if !lanes.contains(&rec.loc) {
                lanes.push(rec.loc);
            }
        }
        if rec.kind == Kind::Msg {
            return self.msg(rec, tally);
        }
        let half = matches!(rec.kind, Kind::Send | Kind::Recv);
        let matched = matches!(rec.kind, Kind::Destroy | Kind::Container) || is_posting(rec);
        if !half && !matched {
            return Ok(());
        }
        self.mark += 1;
        if half {
            self.half(rec);
        }
        self.matcher.set_mark(self.mark);
        self.matcher.write(rec)?;
        self.take_pairings(tally)
    }

    /// A message given whole (a format that stores messages, not halves):
    /// its send's frame is found among the sender's open and recently
    /// closed frames, its receive's is the receiver's innermost.
    fn msg(&mut self, rec: &Record, tally: &mut Tally) -> Result<()> {
        let (Some(sent), Some(received)) = (rec.time, rec.end) else {
            return Ok(());
        };
        let send = Half {
            kind: Kind::Send,
            time: sent,
            frame: self.frame_at(rec.loc, sent),
        };
        let recv = Half {
            kind: Kind::Recv,
            time: received,
            frame: self.frame_at(rec.peer, received),
        };
        self.message(send, recv, tally)
    }

    /// Notes a half's frame, under the mark it goes to the matcher with.
    fn half(&mut self, rec: &Record) {
        let on = match rec.attr("thread") {
            Some(thread) => self.symbols.intern(&thread),
            None => rec.loc,
        };
        let frame = self.frame_at(on, rec.time.unwrap_or_default());
        if let Some(open) = frame
            .filter(|f| f.end.is_none())
            .and_then(|f| self.open_mut(f))
        {
            open.unpaired += 1;
        }
        let half = Half {
            kind: rec.kind,
            time: rec.time.unwrap_or_default(),
            frame,
        };
        self.halves.insert(self.mark, half);
    }

    fn take_pairings(&mut self, tally: &mut Tally) -> Result<()> {
        // The buffer is reused: pairing a message allocates nothing.
        let mut pairings = std::mem::take(&mut self.pairings);
        pairings.extend(self.matcher.take_pairings());
        for pairing in pairings.drain(..) {
            match pairing {
                Pairing::Paired(a, b) => {
                    let (a, b) = (self.settle(a), self.settle(b));
                    if let (Some(a), Some(b)) = (a, b) {
                        self.message(a, b, tally)?;
                    }
                }
                Pairing::GivenUp(a) => {
                    self.settle(a);
                }
            }
        }
        self.pairings = pairings;
        Ok(())
    }

    /// The half of `mark`, no longer counted as unpaired in its frame.
    fn settle(&mut self, mark: u64) -> Option<Half> {
        let half = self.halves.remove(&mark)?;
        let Some(frame) = half.frame.filter(|f| f.end.is_none()) else {
            return Some(half);
        };
        if let Some(open) = self.open_mut(frame) {
            open.unpaired = open.unpaired.saturating_sub(1);
        } else if let Some(ended) = self.ended.get_mut(&frame.serial) {
            ended.halves = ended.halves.saturating_sub(1);
        }
        Some(half)
    }

    fn open_mut(&mut self, frame: FrameAt) -> Option<&mut WaitFrame> {
        let stack = self.stacks.get_mut(&frame.loc)?;
        stack
            .frames
            .open_mut()
            .iter_mut()
            .rev()
            .find(|open| open.serial == frame.serial)
    }

    /// A message's halves: the waiting side gets a candidate (decided now
    /// when its frame has closed).
    fn message(&mut self, a: Half, b: Half, tally: &mut Tally) -> Result<()> {
        let (send_half, recv_half) = if a.kind == Kind::Send { (a, b) } else { (b, a) };
        let (Some(send), Some(recv)) = (send_half.frame, recv_half.frame) else {
            return Ok(());
        };
        if send.enter > recv.enter && send_half.time <= recv_half.time {
            // The receive waited: the path to it comes from the sender.
            let at = send_half.time;
            tally.jump(Jump {
                waiter: recv.loc,
                to: send.loc,
                at,
            });
        }
        let (waiting, other, pattern) = match send.enter.cmp(&recv.enter) {
            std::cmp::Ordering::Greater => (recv, send, Pattern::LateSender),
            std::cmp::Ordering::Less => (send, recv, Pattern::LateReceiver),
            std::cmp::Ordering::Equal => {
                self.release(send);
                self.release(recv);
                return Ok(());
            }
        };
        let raw = elapsed(waiting.enter, other.enter)?;
        let candidate = Candidate {
            pattern,
            raw,
            waited_for: other.loc,
        };
        let end = waiting
            .end
            .or_else(|| self.ended.get(&waiting.serial).map(|e| e.end));
        if let Some(open) = self.open_mut(waiting) {
            open.candidates.push(candidate);
        } else if let Some(end) = end {
            let duration = elapsed(waiting.enter, end)?;
            if let Some(time) = decide(&candidate, duration) {
                let (waiter, name) = (waiting.loc, waiting.name);
                tally.add(Wait {
                    pattern,
                    waiter,
                    name,
                    waited_for: other.loc,
                    time,
                });
            }
        }
        self.release(send);
        self.release(recv);
        Ok(())
    }

    /// Forgets a closed frame once no half inside it is unpaired.
    fn release(&mut self, frame: FrameAt) {
        if self.ended.get(&frame.serial).is_some_and(|e| e.halves == 0) {
            self.ended.remove(&frame.serial);
        }
    }

    /// Closes the frames still open at their location's last time, and
    /// gives up the halves never paired.
    pub fn finish(&mut self, tally: &mut Tally) -> Result<()> {
        self.matcher.finish()?;
        self.take_pairings(tally)?;
        for (loc, last) in frames::still_open(
            self.stacks.iter().map(|(l, s)| (l, &s.frames)),
            &self.symbols,
        ) {
            while self.stacks[&loc].frames.depth() > 0 {
                self.close(loc, last, tally)?;
            }
        }
        Ok(())
    }
}

/// A candidate's waiting time in a frame lasting `duration`: a late
/// sender's at most the frame's duration; a late receiver's only when the
/// frame lasted past the receive's enter.
fn decide(candidate: &Candidate, duration: i64) -> Option<i64> {
    match candidate.pattern {
        Pattern::LateSender => Some(candidate.raw.min(duration)),
        Pattern::LateReceiver if duration > candidate.raw => Some(candidate.raw),
        _ => None,
    }
}
