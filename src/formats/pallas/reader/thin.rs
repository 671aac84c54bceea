//! A thread thinned before T0 ([`Demand::thin_before`]): iterations of a
//! loop that end before T0 are walked without the rows of their frames
//! and plain events. Such an event is counted past: its occurrence cursor
//! moves on and its timestamps stay undecoded; a sequence with no other
//! event is counted past whole. Message halves, requests and collectives
//! still come as rows, for what is in flight at T0, but for the halves
//! before a balanced cut ([`super::balance`]): a first thinning counts
//! those past up to the cut, and a second one thins on to T0. An iteration is
//! thinned only when its frames open and close inside it and the next
//! iteration starts before T0: a lossless trace's times never go back, so
//! every event of it is before T0 too. The first event's timestamps tell
//! where T0 falls, by a binary search over the iterations to go.
//!
//! [`Demand::thin_before`]: crate::pipe::Demand::thin_before

use super::frames::{children, frame_edge, reached};
use super::times::EventTimes;
use super::*;
use crate::model::record::ATTR_POSTS;

/// What thinning does with an event's occurrences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Treatment {
    /// Counted past: a frame's edge, or an event no one reads before T0.
    Counted,
    /// Still a row: a message half, a request, a collective, or an event
    /// whose attributes may make it a posting.
    Kept,
    /// A frame's edge whose row may be other than the grammar's (its
    /// columns kept in attributes): no sequence holding it is thinned.
    Opaque,
}

/// What decides the roles of a thread's events when thinned.
#[derive(Debug, Clone, Copy)]
struct Rules {
    /// Attributes may make an event a posting, or set a frame's columns.
    attributes_matter: bool,
    /// A trace written from a stream.
    restoring: bool,
    /// Message halves before this thinning's T0 pair among themselves
    /// (a balanced cut, [`super::balance`]): no one reads them.
    halves_paired: bool,
}

/// Whose row comes of each occurrence of `event` when thinned.
fn role(event: &EventDef, rules: Rules) -> Treatment {
    use RecordId::*;
    let attributed = !event.attributes.is_empty();
    match RecordId::from_number(event.record) {
        Some(Enter | Leave) => match rules.restoring && attributed {
            true => Treatment::Opaque,
            false => Treatment::Counted,
        },
        Some(MpiSend | MpiIsend | MpiRecv | MpiIrecv) if rules.halves_paired => Treatment::Counted,
        Some(
            MpiSend | MpiIsend | MpiRecv | MpiIrecv | MpiIsendComplete | MpiIrecvRequest
            | MpiCollectiveBegin | MpiCollectiveEnd,
        ) => Treatment::Kept,
        _ if attributed && rules.attributes_matter => Treatment::Kept,
        _ => Treatment::Counted,
    }
}

/// A thread's grammar as thinning sees it.
pub(super) struct Thinning {
    /// T0, as a timestamp.
    pub(super) before: u64,
    /// By event slot.
    roles: Vec<Treatment>,
    /// By sequence slot: whether a run may be thinned, whether a thinned
    /// run gives no row at all (counted past whole), its first event.
    thinnable: Vec<bool>,
    silent: Vec<bool>,
    first: Vec<Option<usize>>,
    /// The sequences the root reaches, each before those it runs, and each
    /// one's place in that order.
    order: Vec<usize>,
    place: Vec<usize>,
    /// By sequence slot, once asked: how often each event occurs in a run.
    counts: Vec<Option<Vec<(usize, u64)>>>,
    /// By event slot, once asked: its timestamps, searched.
    times: Vec<Option<EventTimes>>,
}

impl Thinning {
    /// How `file` is thinned before `before` ns; none where nothing is
    /// before it or its grammar is not well-formed (its expansion tells).
    fn new(file: &ThreadFile, before: i64, rules: Rules) -> Option<Thinning> {
        let before = u64::try_from(before).ok().filter(|&b| b > 0)?;
        let root = ThreadFile::physical(&file.sequence_map, file.root)
            .filter(|&s| file.sequences.get(s).is_some_and(Option::is_some))?;
        let order = reached(&children(file).ok()?, root).ok()?;
        let roles = file.events.iter().map(|e| match e {
            Some(e) => role(e, rules),
            None => Treatment::Opaque,
        });
        let n = file.sequences.len();
        let mut place = vec![usize::MAX; n];
        for (i, &s) in order.iter().enumerate() {
            place[s] = i;
        }
        let mut thinning = Thinning {
            before,
            roles: roles.collect(),
            thinnable: vec![false; n],
            silent: vec![false; n],
            first: vec![None; n],
            order,
            place,
            counts: (0..n).map(|_| None).collect(),
            times: (0..file.events.len()).map(|_| None).collect(),
        };
        for i in (0..thinning.order.len()).rev() {
            thinning.learn(file, thinning.order[i]);
        }
        Some(thinning)
    }

    /// Learns whether sequence `s` may be thinned, whether it is silent,
    /// and its first event, those of the sequences it runs known.
    fn learn(&mut self, file: &ThreadFile, s: usize) {
        let (mut ok, mut silent, mut first) = (true, true, None);
        let mut open: Vec<u32> = Vec::new();
        for &t in file.sequences[s].as_deref().unwrap_or(&[]) {
            let run = match token(t) {
                Some((TokenKind::Event, id)) => {
                    let Some(slot) = ThreadFile::physical(&file.event_map, id)
                        .filter(|&e| file.events.get(e).is_some_and(Option::is_some))
                    else {
                        return;
                    };
                    ok &= self.roles[slot] != Treatment::Opaque;
                    silent &= self.roles[slot] == Treatment::Counted;
                    first = first.or(Some(slot));
                    match frame_edge(file, t) {
                        Ok(Some((true, f))) => open.push(f),
                        Ok(Some((false, f))) => ok &= open.pop() == Some(f),
                        Ok(None) => {}
                        Err(_) => return,
                    }
                    continue;
                }
                Some((TokenKind::Sequence, id)) => ThreadFile::physical(&file.sequence_map, id),
                Some((TokenKind::Loop, id)) => {
                    let def = ThreadFile::physical(&file.loop_map, id)
                        .and_then(|l| file.loops.get(l).copied().flatten());
                    match def {
                        Some(def) if def.iterations == 0 => continue,
                        Some(def) => ThreadFile::physical(&file.sequence_map, def.sequence),
                        None => return,
                    }
                }
                None => return,
            };
            let Some(c) = run.filter(|&c| c < self.thinnable.len()) else {
                return;
            };
            ok &= self.thinnable[c];
            silent &= self.silent[c];
            first = first.or(self.first[c]);
        }
        self.thinnable[s] = ok && open.is_empty();
        self.silent[s] = silent && self.thinnable[s];
        self.first[s] = first;
    }

    /// Whether occurrences of event `slot` are counted past in a thinned
    /// run.
    pub(super) fn counted(&self, slot: usize) -> bool {
        self.roles.get(slot) == Some(&Treatment::Counted)
    }

    /// Whether a thinned run of sequence `s` gives no row.
    pub(super) fn silent(&self, s: usize) -> bool {
        self.silent.get(s) == Some(&true)
    }

    /// Sequence `s`'s first event, if its runs may be thinned.
    pub(super) fn first_if_thinnable(&self, s: usize) -> Option<usize> {
        self.first
            .get(s)
            .copied()
            .flatten()
            .filter(|_| self.thinnable[s])
    }

    /// How often each event occurs in one run of sequence `s`, by slot.
    pub(super) fn counts(&mut self, file: &ThreadFile, s: usize) -> &[(usize, u64)] {
        if self.counts[s].is_none() {
            let mut runs: FastMap<usize, u64> = FastMap::default();
            let mut events: FastMap<usize, u64> = FastMap::default();
            runs.insert(s, 1);
            // Those `s` runs come after it in the order.
            for &q in &self.order[self.place[s].min(self.order.len())..] {
                let Some(&m) = runs.get(&q) else { continue };
                for &t in file.sequences[q].as_deref().unwrap_or(&[]) {
                    let (into, slot, times) = match token(t) {
                        Some((TokenKind::Event, id)) => {
                            let slot = ThreadFile::physical(&file.event_map, id);
                            (&mut events, slot, 1)
                        }
                        Some((TokenKind::Sequence, id)) => {
                            (&mut runs, ThreadFile::physical(&file.sequence_map, id), 1)
                        }
                        Some((TokenKind::Loop, id)) => {
                            let def = ThreadFile::physical(&file.loop_map, id)
                                .and_then(|l| file.loops.get(l).copied().flatten());
                            let seq = def
                                .and_then(|d| ThreadFile::physical(&file.sequence_map, d.sequence));
                            (&mut runs, seq, def.map_or(0, |d| u64::from(d.iterations)))
                        }
                        None => continue,
                    };
                    if let Some(slot) = slot {
                        let n = into.entry(slot).or_default();
                        *n = n.saturating_add(m.saturating_mul(times));
                    }
                }
            }
            let mut counts: Vec<(usize, u64)> = events.into_iter().collect();
            counts.sort_unstable();
            self.counts[s] = Some(counts);
        }
        self.counts[s].as_deref().expect("just made")
    }

    /// Whether occurrence `index` of event `slot` is before T0 (false past
    /// its last).
    pub(super) fn is_before(
        &mut self,
        file: &ThreadFile,
        probe: (&DatFile, &mut BlockDecoder),
        slot: usize,
        index: u64,
    ) -> Result<bool> {
        let Some(event) = file.events.get(slot).and_then(Option::as_ref) else {
            return Ok(false);
        };
        let times = self.times[slot].get_or_insert_with(|| EventTimes::new(&event.timestamps));
        Ok(times.at(probe, index)?.is_some_and(|t| t < self.before))
    }
}

impl ThreadSource {
    /// Whether the thread's runs may be thinned: not in a lossy trace
    /// (whose times are raised to the last one's), nor where rows, or
    /// their times, are kept in attributes.
    pub(super) fn can_thin(&self) -> bool {
        if self.events.lossy {
            return false;
        }
        if self.restore.is_some() {
            let kept = self.kept_beside_grammar();
            return !(kept.whole_rows || kept.times);
        }
        true
    }

    /// Whether the trace defines the attribute that makes an event a
    /// receive's posting.
    pub(super) fn defines_postings(&self) -> bool {
        let scope = self.names.scope();
        let defined = [&scope.local.attributes, &scope.global.attributes];
        defined
            .iter()
            .flat_map(|d| d.values())
            .any(|a| scope.string(a.name) == Some(ATTR_POSTS))
    }

    /// Lets the thread thin its runs before `t0` (ns), where it can;
    /// before `paired_before` (a balanced cut, at most `t0`), message
    /// halves are counted past too.
    pub(super) fn thin_before(&mut self, t0: i64, paired_before: Option<i64>) {
        if !self.can_thin() {
            return;
        }
        let restoring = self.restore.is_some();
        let rules = Rules {
            attributes_matter: restoring || self.defines_postings(),
            restoring,
            halves_paired: false,
        };
        let file = &self.events.file;
        let halves_paired = Rules {
            halves_paired: true,
            ..rules
        };
        (self.events.thinning, self.events.thinning_after) = match paired_before {
            Some(tau) if tau >= t0 => (Thinning::new(file, t0, halves_paired), None),
            Some(tau) => (
                Thinning::new(file, tau, halves_paired),
                Thinning::new(file, t0, rules),
            ),
            None => (Thinning::new(file, t0, rules), None),
        };
    }
}
