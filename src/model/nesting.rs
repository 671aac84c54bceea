//! Frames that do not nest: a `leave` of a frame that is open but not the
//! innermost (APEX and HPX tasks suspended and resumed on one thread, timers
//! stopped out of order). The stream's frames nest, so such a `leave` is
//! kept as this: the frames above the one it closes are left at its time,
//! it closes its frame, and they are entered again at once, in their order.
//! Those leaves and enters are flagged `S` (made by the reader) and `X`
//! (cut by a crossing) and carry [`CROSSED_ATTR`], the name of the frame
//! that closed across them. Every
//! `enter` and `leave` time of the source is kept; a frame so cut is one
//! call (`trace-stat profile` joins its parts), and its inclusive time is
//! its enter-to-leave span. A `leave` that names no open frame (APEX names
//! some tasks differently at their start and stop) closes the innermost
//! frame, as pairing by the stack does (otf2-print's order, pipit's
//! matching), and keeps the name it gave in [`NAMED_ATTR`]; with no frame
//! open, it is an `event`. Readers count both in a [`Crossings`] and report
//! one warning; with `--strict` they refuse the first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Location, Result, Warnings};
use crate::model::record::{flags, Kind, Record, Sym};
use crate::model::symbol::Symbols;

/// The attribute of the rows that cut a frame a `leave` crossed: the name
/// of the frame whose `leave` it was.
pub const CROSSED_ATTR: &str = "crossed";

/// The attribute of a `leave` that named no open frame and closed the
/// innermost one: the name it gave.
pub const NAMED_ATTR: &str = "named";

/// How a `leave` meets the frames open on its location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// It closes the innermost frame.
    Innermost,
    /// It closes the frame at this index of the stack, below the innermost.
    Crosses(usize),
    /// No open frame is the one it names.
    NotOpen,
}

/// How a `leave` of `frame` meets the stack `open` (outermost first): the
/// innermost frame equal to it decides.
pub fn closing<T: PartialEq>(open: &[T], frame: &T) -> Closing {
    match open.iter().rposition(|f| f == frame) {
        Some(i) if i + 1 == open.len() => Closing::Innermost,
        Some(i) => Closing::Crosses(i),
        None => Closing::NotOpen,
    }
}

/// The error `--strict` gives for a `leave` (`record`, as the format
/// names it) of `name` that does not nest: `open` is the innermost frame
/// where it crosses one, none where it names no open frame.
pub fn strict_refusal(record: &str, name: &str, open: Option<&str>) -> String {
    match open {
        Some(open) => format!(
            "{record} of `{name}` while `{open}` is open (a frame that does not nest; --strict)"
        ),
        None => format!("{record} of `{name}`, which is not open (--strict)"),
    }
}

/// Queues the rows that keep `leave`, which closes a frame below the frames
/// `above` (their names and categories, outermost first) on its location:
/// those left (innermost first), `leave` itself, and those entered again.
/// `leave.depth` is the depth of the frame it closes.
pub fn cross(leave: Record, above: &[(Sym, Sym)], symbols: &Symbols, out: &mut VecDeque<Record>) {
    let (depth, time, loc) = (leave.depth.unwrap_or(0), leave.time, leave.loc);
    let crossed = symbols.text(leave.name);
    let cut = |kind, (name, cat): (Sym, Sym), depth: usize| {
        let mut r = Record::new(kind);
        r.time = time;
        r.loc = loc;
        r.name = name;
        r.cat = cat;
        r.depth = Some(depth as u32);
        r.push_attr(CROSSED_ATTR, crossed);
        r.add_flag(flags::SYNTHETIC);
        r.add_flag(flags::CROSSED);
        r
    };
    let base = depth as usize + 1;
    for (k, &f) in above.iter().enumerate().rev() {
        out.push_back(cut(Kind::Leave, f, base + k));
    }
    out.push_back(leave);
    for (k, &f) in above.iter().enumerate() {
        out.push_back(cut(Kind::Enter, f, base - 1 + k));
    }
}

/// The frames open on each location of a stream, by name and category,
/// followed so that a `leave` that does not close the innermost is kept by
/// the rule above: what the stream's readers apply (their rows name what
/// they leave; the other readers follow their format's own references).
#[derive(Debug, Default)]
pub struct Follower {
    /// By location (its symbol's index): the frames open, outermost first.
    stacks: Vec<Vec<(Sym, Sym)>>,
    /// The `leave`s that did not nest, for one warning at the end.
    pub crossings: Crossings,
    /// `--strict`: the first is an error.
    pub strict: bool,
}

impl Follower {
    /// Follows `rec`. False: it goes on as it is. True: it did not nest; it
    /// was made whole by `whole` (its columns were read in part), and the
    /// rows that keep it are queued in `out` in its place. `at` locates it.
    pub fn follow(
        &mut self,
        rec: &mut Record,
        (symbols, out): (&Symbols, &mut VecDeque<Record>),
        whole: impl FnOnce(&mut Record) -> Result<(), String>,
        at: impl Fn() -> Location,
    ) -> Result<bool> {
        let i = rec.loc.index();
        if self.stacks.len() <= i {
            self.stacks.resize_with(i + 1, Vec::new);
        }
        let stack = &mut self.stacks[i];
        if rec.kind == Kind::Enter {
            stack.push((rec.name, rec.cat));
            return Ok(false);
        }
        let closing = match rec.name.is_empty() && !stack.is_empty() {
            // A leave that names nothing closes the innermost.
            true => Closing::Innermost,
            false => match stack.iter().rposition(|f| f.0 == rec.name) {
                Some(k) if k + 1 == stack.len() => Closing::Innermost,
                Some(k) => Closing::Crosses(k),
                None => Closing::NotOpen,
            },
        };
        if closing == Closing::Innermost {
            stack.pop();
            return Ok(false);
        }
        let name = symbols.text(rec.name);
        if self.strict {
            let open = match closing {
                Closing::Crosses(_) => stack.last().map(|f| symbols.text(f.0)),
                _ => None,
            };
            let msg = strict_refusal("leave", name, open);
            return Err(Error::Data { at: at(), msg });
        }
        let crossing = matches!(closing, Closing::Crosses(_));
        let time = rec.time.unwrap_or_default();
        self.crossings
            .note(crossing, time, symbols.text(rec.loc), &at);
        whole(rec).map_err(|msg| Error::Data { at: at(), msg })?;
        let stack = &mut self.stacks[i];
        match (closing, stack.pop()) {
            (Closing::Crosses(k), Some(innermost)) => {
                let mut above = stack.split_off(k + 1);
                above.push(innermost);
                stack.pop();
                rec.depth = Some(k as u32);
                cross(std::mem::take(rec), &above, symbols, out);
                stack.extend(above);
            }
            (_, Some((open, cat))) => {
                let named = symbols.text(rec.name);
                rec.push_attr(NAMED_ATTR, named);
                (rec.name, rec.cat) = (open, cat);
                rec.depth = Some(stack.len() as u32);
                out.push_back(std::mem::take(rec));
            }
            (_, None) => {
                rec.kind = Kind::Event;
                rec.depth = None;
                rec.push_attr("record", "leave");
                out.push_back(std::mem::take(rec));
            }
        }
        Ok(true)
    }
}

/// Whether `rec` is a row that cuts a frame a `leave` crossed ([`cross`]).
pub fn is_cut(rec: &Record) -> bool {
    matches!(rec.kind, Kind::Enter | Kind::Leave) && rec.flags.contains(flags::CROSSED)
}

/// The `leave`s of a reader's locations that did not nest, counted across
/// its locations (clones share the count), for one warning at its end.
#[derive(Debug, Clone, Default)]
pub struct Crossings {
    tally: Arc<Mutex<CrossingTally>>,
}

#[derive(Debug, Default)]
struct CrossingTally {
    crossing: u64,
    not_open: u64,
    /// The earliest: its time, its location's id, where it was read.
    first: Option<(i64, String, Location)>,
}

impl Crossings {
    /// Counts one `leave` at `time` on location `loc`, read at `at`, that
    /// crossed (`crossing`) or closed no open frame.
    pub fn note(&self, crossing: bool, time: i64, loc: &str, at: impl FnOnce() -> Location) {
        let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        match crossing {
            true => t.crossing += 1,
            false => t.not_open += 1,
        }
        if t.first.as_ref().is_none_or(|(first, _, _)| time < *first) {
            t.first = Some((time, loc.to_string(), at()));
        }
    }

    /// Reports what was counted, once: one warning, at the earliest.
    pub fn report(&self, warnings: &Warnings) {
        let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        let Some((time, loc, at)) = t.first.take() else {
            return;
        };
        let mut what = Vec::new();
        if t.crossing > 0 {
            what.push(format!(
                "{} leave(s) closed a frame that was not the innermost (the frames above were left and entered again, flagged SX with attribute `{CROSSED_ATTR}`)",
                t.crossing
            ));
        }
        if t.not_open > 0 {
            what.push(format!(
                "{} leave(s) named no open frame (each closed the innermost, its own name in attribute `{NAMED_ATTR}`; with none open, an `event`)",
                t.not_open
            ));
        }
        warnings.warn_at(
            at,
            format!(
                "frames that do not nest: {}; the first at {time} ns on `{loc}` (--strict refuses them)",
                what.join("; ")
            ),
        );
        *t = CrossingTally::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_equal_frame_decides() {
        assert_eq!(closing(&[1, 2, 3], &3), Closing::Innermost);
        assert_eq!(closing(&[1, 2, 3], &1), Closing::Crosses(0));
        assert_eq!(closing(&[1, 2, 1, 3], &1), Closing::Crosses(2));
        assert_eq!(closing(&[1, 2], &7), Closing::NotOpen);
        assert_eq!(closing::<u32>(&[], &7), Closing::NotOpen);
    }

    #[test]
    fn a_crossing_leave_cuts_the_frames_above_it() {
        let symbols = Symbols::default();
        let s = |t: &str| symbols.intern(t);
        let mut leave = Record::new(Kind::Leave);
        leave.time = Some(50);
        leave.loc = s("t0");
        leave.name = s("a");
        leave.depth = Some(1);
        let above = [(s("b"), s("")), (s("c"), s("X"))];
        let mut out = VecDeque::new();
        cross(leave, &above, &symbols, &mut out);
        let rows: Vec<(Kind, &str, u32, bool)> = out
            .iter()
            .map(|r| {
                assert_eq!(r.time, Some(50));
                let name = symbols.text(r.name);
                let name: &'static str = match name {
                    "a" => "a",
                    "b" => "b",
                    _ => "c",
                };
                (r.kind, name, r.depth.unwrap(), is_cut(r))
            })
            .collect();
        assert_eq!(
            rows,
            [
                (Kind::Leave, "c", 3, true),
                (Kind::Leave, "b", 2, true),
                (Kind::Leave, "a", 1, false),
                (Kind::Enter, "b", 1, true),
                (Kind::Enter, "c", 2, true),
            ]
        );
        assert_eq!(out[0].attr(CROSSED_ATTR).as_deref(), Some("a"));
    }

    #[test]
    fn one_warning_names_the_earliest() {
        let crossings = Crossings::default();
        let other = crossings.clone();
        crossings.note(true, 90, "b", || Location::File("f2".into()));
        other.note(true, 10, "a", || Location::File("f1".into()));
        other.note(false, 20, "a", || Location::File("f1".into()));
        let (warnings, kept) = Warnings::collecting();
        crossings.report(&warnings);
        other.report(&warnings);
        let kept = kept.lock().unwrap();
        assert_eq!(kept.len(), 1);
        let text = kept[0].to_string();
        assert!(text.starts_with("f1: "), "{text}");
        assert!(text.contains("2 leave(s) closed a frame"), "{text}");
        assert!(text.contains("1 leave(s) named no open frame"), "{text}");
        assert!(text.contains("at 10 ns on `a`"), "{text}");
    }
}
