//! A trace's frames summed from its grammar (`trace-stat profile`): Pallas
//! stores each sequence's duration per occurrence, so the durations of a
//! block sequence (`ENTER r` … `LEAVE r`) are those of its frames, read
//! without expanding a single event (an OpenMP or thread block is no
//! frame: its records are events of the thread model). A frame's exclusive
//! time is its durations less those of the blocks run
//! directly inside it, which the grammar tells when each block sequence
//! always runs in frames of one name. Where the grammar does not tell (or
//! the rows could differ from it), [`Summed::Not`] says why and the caller
//! reads the rows (docs/formats.md, "Pallas", "Profiles from the grammar").

use super::*;
use crate::pipe::{FrameSums, Summed};

/// Frames of a Pallas trace summed from its grammar into `sums`, or why
/// the rows must be read instead (nothing is given to `sums` then).
pub fn sum_frames(input: Input, opts: &ReadOptions, sums: &mut dyn FrameSums) -> Result<Summed> {
    let path = trace_path(&input)?;
    let (head, mut threads, _) = open_threads(&path, &input.name, opts)?;
    let mut plans = Vec::with_capacity(threads.len());
    for t in &mut threads {
        match t.frame_plan() {
            Ok(plan) => plans.push(plan),
            Err(why) => return Ok(Summed::Not(format!("{}: {why}", t.events.name))),
        }
    }
    for rec in &head {
        sums.row(rec)?;
    }
    for (t, plan) in threads.iter_mut().zip(&plans) {
        t.sum_frames(plan, sums)?;
    }
    Ok(Summed::Done)
}

/// How a thread's frames are summed: its distinct frames, and each block
/// sequence the root reaches with its frame and the frame it runs in.
#[derive(Default)]
struct FramePlan {
    /// Their regions.
    frames: Vec<u32>,
    /// Physical sequence slot, its frame, the frame it runs directly in.
    blocks: Vec<(usize, usize, Option<usize>)>,
}

/// Where a sequence runs: at the thread's top, directly in one frame, or
/// in frames of several (which the vectors cannot tell apart).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Top,
    In(usize),
    Mixed,
}

/// The region an event token enters (true) or leaves (false), if any
/// (OpenMP and thread blocks are events of the thread model, not frames).
pub(super) fn frame_edge(
    file: &ThreadFile,
    t: u32,
) -> std::result::Result<Option<(bool, u32)>, String> {
    let Some((TokenKind::Event, id)) = token(t) else {
        return Ok(None);
    };
    let event = ThreadFile::physical(&file.event_map, id)
        .and_then(|s| file.events[s].as_ref())
        .ok_or_else(|| format!("a token names undefined event {id}"))?;
    let region = || {
        let bytes = event
            .payload
            .get(..4)
            .ok_or("a short ENTER or LEAVE payload")?;
        Ok::<u32, String>(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    };
    Ok(match RecordId::from_number(event.record) {
        Some(RecordId::Enter) => Some((true, region()?)),
        Some(RecordId::Leave) => Some((false, region()?)),
        _ => None,
    })
}

/// The region a sequence is the block of, none when it holds no frame's
/// ends; an error when a frame opens or closes elsewhere in it.
fn block_of(file: &ThreadFile, tokens: &[u32]) -> std::result::Result<Option<u32>, String> {
    let n = tokens.len();
    for &t in tokens.iter().take(n.saturating_sub(1)).skip(1) {
        if frame_edge(file, t)?.is_some() {
            return Err("a frame opens or closes inside a sequence (not at its ends)".into());
        }
    }
    let first = frame_edge(file, tokens[0])?;
    let last = frame_edge(file, tokens[n - 1])?;
    match (first, last) {
        (None, None) => Ok(None),
        (Some((true, a)), Some((false, b))) if a == b && n > 1 => Ok(Some(a)),
        _ => Err("a frame opens in one sequence and closes in another".into()),
    }
}

/// Each sequence slot's children: the sequences its tokens run, each with
/// how many times per run (none for a dead slot).
pub(super) type Children = Vec<Vec<(usize, u64)>>;

/// The children of every sequence of `file`.
pub(super) fn children(file: &ThreadFile) -> std::result::Result<Children, String> {
    let live = |id: u32| {
        ThreadFile::physical(&file.sequence_map, id)
            .filter(|&s| file.sequences[s].is_some())
            .ok_or_else(|| format!("a token names undefined sequence {id}"))
    };
    let mut all = Vec::with_capacity(file.sequences.len());
    for tokens in &file.sequences {
        let mut out = Vec::new();
        for &t in tokens.as_deref().unwrap_or(&[]) {
            match token(t) {
                Some((TokenKind::Sequence, id)) => out.push((live(id)?, 1)),
                Some((TokenKind::Loop, id)) => {
                    let def = ThreadFile::physical(&file.loop_map, id)
                        .and_then(|l| file.loops[l])
                        .ok_or_else(|| format!("a token names undefined loop {id}"))?;
                    if def.iterations > 0 {
                        out.push((live(def.sequence)?, u64::from(def.iterations)));
                    }
                }
                Some((TokenKind::Event, _)) => {}
                None => return Err(format!("invalid token {t:#x}")),
            }
        }
        all.push(out);
    }
    Ok(all)
}

/// The sequences the root reaches, each before those it runs (a reverse
/// post-order); an error for a grammar that contains itself.
pub(super) fn reached(kids: &Children, root: usize) -> std::result::Result<Vec<usize>, String> {
    // 0: unseen, 1: on the path, 2: done.
    let mut state = vec![0u8; kids.len()];
    let mut order = Vec::new();
    let mut stack = vec![(root, 0)];
    state[root] = 1;
    while let Some((s, next)) = stack.last_mut() {
        let Some(&(c, _)) = kids[*s].get(*next) else {
            state[*s] = 2;
            order.push(*s);
            stack.pop();
            continue;
        };
        *next += 1;
        match state[c] {
            0 => {
                state[c] = 1;
                stack.push((c, 0));
            }
            1 => return Err("a sequence contains itself".into()),
            _ => {}
        }
    }
    order.reverse();
    Ok(order)
}

/// Each reached sequence's number of runs, and where it runs.
fn propagate(
    kids: &Children,
    order: &[usize],
    root: usize,
    frame_of: &[Option<usize>],
) -> (Vec<u128>, Vec<Context>) {
    let mut runs = vec![0u128; kids.len()];
    let mut context: Vec<Option<Context>> = vec![None; kids.len()];
    runs[root] = 1;
    context[root] = Some(Context::Top);
    for &s in order {
        let inside = match frame_of[s] {
            Some(f) => Context::In(f),
            None => context[s].unwrap_or(Context::Top),
        };
        for &(c, times) in &kids[s] {
            runs[c] = runs[c].saturating_add(runs[s].saturating_mul(u128::from(times)));
            context[c] = Some(match context[c] {
                None => inside,
                Some(had) if had == inside => had,
                Some(_) => Context::Mixed,
            });
        }
    }
    let context = context.into_iter().map(|c| c.unwrap_or(Context::Top));
    (runs, context.collect())
}

impl ThreadSource {
    /// How this thread's frames are summed from its grammar, or why they
    /// cannot be.
    fn frame_plan(&mut self) -> std::result::Result<FramePlan, String> {
        if self.events.lossy {
            return Err("lossy timestamps (the rows' times are the decoded events')".into());
        }
        let file = &self.events.file;
        let root = ThreadFile::physical(&file.sequence_map, file.root)
            .filter(|&s| file.sequences.get(s).is_some_and(Option::is_some));
        let Some(root) = root else {
            return Ok(FramePlan::default());
        };
        if self.restore.is_some() {
            self.rows_are_the_grammars()?;
        }
        let file = &self.events.file;
        let kids = children(file)?;
        let order = reached(&kids, root)?;
        let mut plan = FramePlan::default();
        let mut frame_of: Vec<Option<usize>> = vec![None; file.sequences.len()];
        let mut index: FastMap<u32, usize> = FastMap::default();
        for &s in &order {
            let tokens = file.sequences[s].as_deref().expect("live");
            if let Some(f) = block_of(file, tokens)? {
                let i = *index.entry(f).or_insert_with(|| {
                    plan.frames.push(f);
                    plan.frames.len() - 1
                });
                frame_of[s] = Some(i);
            }
        }
        let (runs, context) = propagate(&kids, &order, root, &frame_of);
        for &s in &order {
            let Some(f) = frame_of[s] else { continue };
            let parent = match context[s] {
                Context::Top => None,
                Context::In(p) => Some(p),
                Context::Mixed => {
                    return Err("a block runs directly inside frames of different names".into())
                }
            };
            let have = file.durations[s].size;
            if u128::from(have) != runs[s] {
                return Err(format!(
                    "a block sequence has {have} durations for {} runs",
                    runs[s]
                ));
            }
            plan.blocks.push((s, f, parent));
        }
        self.no_recursion(&plan)?;
        Ok(plan)
    }

    /// Refuses frames nested in frames of their name (whose inclusive time
    /// counts the outermost only): no cycle among the names of frames and
    /// of the frames they run in.
    fn no_recursion(&mut self, plan: &FramePlan) -> std::result::Result<(), String> {
        let names: Vec<Sym> = plan
            .frames
            .iter()
            .map(|&f| self.names.name(Name::Region(f)))
            .collect();
        let mut edges: Vec<(Sym, Sym)> = plan
            .blocks
            .iter()
            .filter_map(|&(_, f, parent)| Some((names[parent?], names[f])))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        // Names that run inside no other are peeled off until none is left;
        // what remains lies on a cycle.
        let mut left = edges;
        loop {
            let before = left.len();
            let inner: crate::fasthash::FastSet<Sym> = left.iter().map(|&(_, c)| c).collect();
            left.retain(|(p, _)| inner.contains(p));
            if left.is_empty() {
                return Ok(());
            }
            if left.len() == before {
                return Err("frames run inside frames of their own name (recursion)".into());
            }
        }
    }

    /// In a trace written from a stream, refuses rows the grammar does not
    /// show: frames whose name, category or times are kept in attributes
    /// (`tracepipe.name`...), and rows kept whole (which may be frames).
    fn rows_are_the_grammars(&self) -> std::result::Result<(), String> {
        let kept = self.kept_beside_grammar();
        if kept.frame_columns {
            return Err("a frame's name, category or time is kept in an attribute".into());
        }
        if kept.whole_rows {
            return Err("rows kept whole, which may be frames".into());
        }
        Ok(())
    }

    /// Gives `sums` this thread's frames as `plan` says.
    fn sum_frames(&mut self, plan: &FramePlan, sums: &mut dyn FrameSums) -> Result<()> {
        if plan.blocks.is_empty() {
            return Ok(());
        }
        let path = Path::new(&self.events.name).with_file_name("sequence_durations.dat");
        let dat = DatFile::open(&path)?;
        let keys: Vec<Record> = plan
            .frames
            .iter()
            .map(|&f| {
                let mut r = Record::new(Kind::Enter);
                r.loc = self.loc;
                r.cat = self.names.name(Name::RegionCat(f));
                r.name = self.names.name(Name::Region(f));
                r
            })
            .collect();
        let mut total = vec![0i128; keys.len()];
        let mut inner = vec![0i128; keys.len()];
        let mut values = Vec::new();
        for &(s, f, parent) in &plan.blocks {
            let vector = &self.events.file.durations[s];
            for header in &vector.blocks {
                self.events.decoder.decode(&dat, header, &mut values)?;
                if let Some(d) = values.iter().find(|&&d| d > i64::MAX as u64) {
                    let msg =
                        format!("a duration of {d} ns is beyond the stream's range (2^63-1 ns)");
                    return Err(Error::offset(dat.name(), header.offset, msg));
                }
                sums.durations(&keys[f], &values)?;
                let sum: i128 = values.iter().map(|&d| i128::from(d)).sum();
                total[f] += sum;
                if let Some(p) = parent {
                    inner[p] += sum;
                }
            }
        }
        for (f, key) in keys.iter().enumerate() {
            sums.exclusive(key, total[f] - inner[f])?;
        }
        Ok(())
    }
}
