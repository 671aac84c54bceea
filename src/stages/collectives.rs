//! Collective instances: the k-th `coll` row of a `(comm, name)` on each
//! location is instance k of that collective.
//!
//! Each `coll` row gets `id` = its instance and, in attrs, the instance's
//! first and last arrival (`time` of its earliest and latest participant)
//! and this participant's `wait` (last arrival minus its own arrival: the
//! time it waited for the others). Those are known once every participant
//! is in, so a `coll` row and every row after it are held until its
//! instance is complete: when every location that took part in a collective
//! on its communicator has reached it, and either it has as many
//! participants as the communicator's first instance (for the first: as
//! many as there are declared locations of the participants' `cat`, say
//! every MPI process), or one of them has already reached a later instance
//! (a synchronizing collective cannot be left before all have entered it),
//! or the stream ends. Memory: the rows behind the oldest incomplete
//! instance, normally one collective's span; [`Instances::max_held`]
//! bounds them (a participant that never comes would hold every later
//! row). An instance still incomplete at the end is written flagged `I`,
//! its waits counting the participants that came, and a warning names it.

use std::collections::VecDeque;

use crate::error::{Result, Warnings};
use crate::fasthash::{FastMap, FastSet};
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::RecordSink;

/// One instance: arrivals and how many took part.
#[derive(Default)]
struct Instance {
    first: i64,
    last: i64,
    participants: u64,
    /// Where the last arrival came from, and when the root arrived.
    last_loc: Sym,
    root: Option<i64>,
    complete: bool,
    /// Written at the end without every participant.
    incomplete: bool,
}

/// A sink stage numbering collective instances and passing every row on.
pub struct Instances<S> {
    next: S,
    symbols: Symbols,
    /// Collectives reached per (comm, name, location).
    reached: FastMap<(Sym, Sym, Sym), u64>,
    /// Locations seen in a collective, per comm.
    members: FastMap<Sym, FastSet<Sym>>,
    /// Instances not yet written, per (comm, name, k).
    open: FastMap<(Sym, Sym, u64), Instance>,
    /// Rows held behind an incomplete instance, in stream order; a `coll`
    /// row carries its instance number.
    held: VecDeque<(Record, Option<u64>)>,
    spare: Vec<Record>,
    /// Declared locations: their `cat`, and how many there are of each.
    cats: FastMap<Sym, Sym>,
    per_cat: FastMap<Sym, u64>,
    /// Participant count of each comm's first instance, and the instances
    /// that had another.
    sizes: FastMap<Sym, u64>,
    odd_sized: Vec<String>,
    /// Instances written incomplete at the end: how many, and the first.
    incomplete: (u64, String),
    /// At most this many rows held (`--max-held`).
    max_held: Option<u64>,
    /// Annotate who arrived last and when the root arrived too.
    details: bool,
    warnings: Warnings,
}

impl<S: RecordSink> Instances<S> {
    /// A stage writing into `next` (rows whose identifiers are in
    /// `symbols`), reporting odd-sized instances to `warnings`.
    pub fn new(next: S, symbols: Symbols, warnings: Warnings) -> Instances<S> {
        Instances {
            next,
            symbols,
            reached: FastMap::default(),
            members: FastMap::default(),
            open: FastMap::default(),
            held: VecDeque::new(),
            spare: Vec::new(),
            cats: FastMap::default(),
            per_cat: FastMap::default(),
            sizes: FastMap::default(),
            odd_sized: Vec::new(),
            incomplete: (0, String::new()),
            max_held: None,
            details: false,
            warnings,
        }
    }

    /// Holds at most `max` rows behind an incomplete instance: one more is
    /// an error naming the instance and who has not reached it.
    pub fn max_held(mut self, max: Option<u64>) -> Instances<S> {
        self.max_held = max;
        self
    }

    /// The instance the oldest held `coll` row is part of, and the members
    /// of its communicator that have not reached it.
    /// Each `coll` row also gets `last_arrival_loc` (the location that
    /// arrived last, the first of equals) and, when the root took part,
    /// `root_arrival`: what wait-state analyses need.
    pub fn with_details(mut self) -> Instances<S> {
        self.details = true;
        self
    }

    /// The sink it writes to.
    pub fn inner(&self) -> &S {
        &self.next
    }

    /// The sink it writes to.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.next
    }

    fn oldest_waiting(&self) -> Option<(String, Vec<&str>)> {
        let (rec, k) = self.held.iter().find_map(|(r, k)| k.map(|k| (r, k)))?;
        let text = |sym| self.symbols.text(sym);
        let mut missing: Vec<&str> = self.members.get(&rec.comm).map_or(Vec::new(), |m| {
            m.iter()
                .filter(|loc| {
                    self.reached
                        .get(&(rec.comm, rec.name, **loc))
                        .is_none_or(|n| *n <= k)
                })
                .map(|loc| text(*loc))
                .collect()
        });
        missing.sort_unstable();
        let what = format!("{} #{k} on comm `{}`", text(rec.name), text(rec.comm));
        Some((what, missing))
    }

    /// Counts a participant in its instance; returns the instance number.
    fn join(&mut self, rec: &Record) -> u64 {
        let reached = self
            .reached
            .entry((rec.comm, rec.name, rec.loc))
            .or_default();
        let k = *reached;
        *reached += 1;
        self.members.entry(rec.comm).or_default().insert(rec.loc);
        let arrival = rec.time.unwrap_or_default();
        let instance = self
            .open
            .entry((rec.comm, rec.name, k))
            .or_insert(Instance {
                first: arrival,
                last: arrival,
                ..Instance::default()
            });
        instance.first = instance.first.min(arrival);
        if arrival > instance.last || instance.participants == 0 {
            instance.last_loc = rec.loc;
        }
        instance.last = instance.last.max(arrival);
        if rec.loc == rec.peer {
            instance.root = Some(arrival);
        }
        instance.participants += 1;
        k
    }

    /// Whether instance `k` of `name` on `comm` is complete (see the module
    /// documentation).
    fn is_complete(&self, comm: Sym, name: Sym, k: u64, participants: u64, cat: Sym) -> bool {
        let Some(members) = self.members.get(&comm) else {
            return true;
        };
        let mut later = false;
        for &loc in members {
            match self.reached.get(&(comm, name, loc)) {
                Some(&n) if n > k => later |= n > k + 1,
                _ => return false,
            }
        }
        let expected = match self.sizes.get(&comm) {
            Some(&n) => n,
            None => self.per_cat.get(&cat).copied().unwrap_or(u64::MAX),
        };
        later || participants >= expected
    }

    /// Writes the held rows up to the first `coll` of an incomplete
    /// instance (all of them at the end).
    fn flush(&mut self, at_end: bool) -> Result<()> {
        while let Some((front, instance)) = self.held.front() {
            if let Some(k) = *instance {
                let key = (front.comm, front.name, k);
                let participants = self.open.get(&key).map_or(0, |i| i.participants);
                let cat = self.cats.get(&front.loc).copied().unwrap_or_default();
                if !at_end && !self.is_complete(key.0, key.1, k, participants, cat) {
                    return Ok(());
                }
                let whole = !at_end || self.is_complete(key.0, key.1, k, participants, cat);
                if !whole && !self.open[&key].complete && !self.open[&key].incomplete {
                    self.note_incomplete(key, participants);
                }
                let inst = self
                    .open
                    .get_mut(&key)
                    .expect("a held coll's instance is open");
                inst.incomplete |= !whole;
                // An incomplete one is told apart; its size says nothing.
                if !inst.complete && whole {
                    inst.complete = true;
                    check_size(
                        &mut self.sizes,
                        &mut self.odd_sized,
                        &self.symbols,
                        key,
                        inst.participants,
                    );
                }
                let (rec, _) = self.held.front_mut().expect("front exists");
                annotate(rec, k, inst);
                if self.details {
                    rec.push_attr("last_arrival_loc", self.symbols.text(inst.last_loc));
                    if let Some(root) = inst.root {
                        rec.push_attr("root_arrival", &root.to_string());
                    }
                }
                inst.participants -= 1;
                if inst.participants == 0 {
                    self.open.remove(&key);
                }
            }
            let (rec, _) = self.held.pop_front().expect("front exists");
            self.next.write(&rec)?;
            self.spare.push(rec);
        }
        Ok(())
    }
}

impl<S> Instances<S> {
    /// Remembers an instance written without all its participants.
    fn note_incomplete(&mut self, (comm, name, k): (Sym, Sym, u64), participants: u64) {
        self.incomplete.0 += 1;
        if self.incomplete.0 > 1 {
            return;
        }
        let text = |sym| self.symbols.text(sym);
        let members = self.members.get(&comm).map_or(0, |m| m.len());
        self.incomplete.1 = format!(
            "{} #{k} on comm `{}`: {participants} participant(s) of {members} seen on it",
            text(name),
            text(comm)
        );
    }
}

/// Notes the participant count of a completed instance; one that differs
/// from its communicator's first instance is remembered for the warning.
fn check_size(
    sizes: &mut FastMap<Sym, u64>,
    odd: &mut Vec<String>,
    symbols: &Symbols,
    (comm, name, k): (Sym, Sym, u64),
    participants: u64,
) {
    let first = *sizes.entry(comm).or_insert(participants);
    if first != participants {
        odd.push(format!(
            "{} #{k} on comm `{}` has {participants} participant(s), the first had {first}",
            symbols.text(name),
            symbols.text(comm)
        ));
    }
}

/// Fills in a participant's instance, arrivals and wait.
fn annotate(rec: &mut Record, k: u64, inst: &Instance) {
    rec.id.clear();
    rec.id.push_str(&k.to_string());
    rec.push_attr("first_arrival", &inst.first.to_string());
    rec.push_attr("last_arrival", &inst.last.to_string());
    let wait = inst.last - rec.time.unwrap_or(inst.last);
    rec.push_attr("wait", &wait.to_string());
    if inst.incomplete {
        rec.flags.push(crate::model::record::flags::INCOMPLETE);
    }
}

impl<S: RecordSink> RecordSink for Instances<S> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.kind == Kind::Container && !self.cats.contains_key(&rec.loc) {
            self.cats.insert(rec.loc, rec.cat);
            *self.per_cat.entry(rec.cat).or_default() += 1;
        }
        let instance = (rec.kind == Kind::Coll).then(|| self.join(rec));
        if instance.is_none() && self.held.is_empty() {
            return self.next.write(rec);
        }
        if self
            .max_held
            .is_some_and(|max| self.held.len() as u64 >= max)
        {
            let (what, missing) = self.oldest_waiting().unwrap_or_default();
            return Err(crate::error::Error::Record(format!(
                "more than {} rows are held behind {what}, which {} not reached (--max-held): is a participant missing? (--max-held N raises the bound, 0 lifts it)",
                self.held.len(),
                match missing.as_slice() {
                    [] => "a participant has".to_string(),
                    [one] => format!("`{one}` has"),
                    [one, rest @ ..] => format!("`{one}` and {} other(s) have", rest.len()),
                }
            )));
        }
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.clone_from(rec);
        self.held.push_back((copy, instance));
        // Only a collective can complete an instance.
        match instance {
            Some(_) => self.flush(false),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> Result<()> {
        self.flush(true)?;
        if self.incomplete.0 > 0 {
            self.warnings.warn(format!(
                "{} collective instance(s) incomplete at the end of the stream, written flagged I (their waits count the participants that came), e.g. {}",
                self.incomplete.0, self.incomplete.1
            ));
        }
        if let Some(first) = self.odd_sized.first() {
            self.warnings.warn(format!(
                "{} collective instance(s) with another participant count than their communicator's first, e.g. {first}",
                self.odd_sized.len()
            ));
        }
        self.next.finish()
    }
}
