//! A thread's grammar expanded lazily: sequences and loops walked on a
//! stack of frames, each event's occurrences taken in turn with their
//! timestamps and durations from the `.dat` vectors.

use super::*;

impl ThreadEvents {
    /// Opens the thread whose files are in `dir`.
    pub fn open(params: &Parameters, dir: &Path) -> Result<ThreadEvents> {
        let path = dir.join("thread.pallas");
        let name = path.display().to_string();
        let bytes = read_file(&path)?;
        let file = ThreadFile::parse(&name, &bytes, params.abi)?;
        let dat = DatFile::open(&dir.join("event_durations.dat"))?;
        let mut cursors = Vec::with_capacity(file.events.len());
        cursors.resize_with(file.events.len(), EventCursor::default);
        let mut t = ThreadEvents {
            name,
            dat,
            decoder: BlockDecoder::new(params),
            lossy: params.compression.is_lossy(),
            cursors,
            stack: Vec::new(),
            passed: 0,
            thinning: None,
            thinning_after: None,
            file,
        };
        let root = ThreadFile::physical(&t.file.sequence_map, t.file.root)
            .filter(|&s| t.file.sequences.get(s).is_some_and(Option::is_some));
        match root {
            Some(s) => t.stack.push(GrammarFrame {
                sequence: s,
                pos: 0,
                remaining: 0,
                thin: false,
            }),
            None if t.file.events.iter().all(Option::is_none) => {}
            None => {
                return Err(Error::offset(
                    &t.name,
                    t.file.root_offset,
                    format!("root sequence {} is not defined", t.file.root),
                ))
            }
        }
        Ok(t)
    }

    pub(super) fn grammar_error(&self, msg: String) -> Error {
        let at = match self.stack.last() {
            Some(f) => self.file.sequence_offsets[f.sequence] + 4 * f.pos.saturating_sub(1),
            None => 0,
        };
        Error::offset(&self.name, at as u64, msg)
    }

    /// The next event occurrence, or `None` at the end of the thread.
    pub fn next_occurrence(&mut self) -> Result<Option<Occurrence>> {
        let mut idle = 0u64;
        loop {
            idle += 1;
            if idle > MAX_IDLE_STEPS {
                return Err(self.grammar_error(format!(
                    "no event in {MAX_IDLE_STEPS} grammar steps: loops that repeat nothing"
                )));
            }
            let Some(top) = self.stack.last_mut() else {
                return Ok(None);
            };
            let tokens = self.file.sequences[top.sequence]
                .as_deref()
                .expect("only live sequences are pushed");
            if top.pos == tokens.len() {
                if top.remaining > 0 {
                    top.remaining -= 1;
                    top.pos = 0;
                    if !top.thin {
                        self.thin_ahead()?;
                    }
                } else {
                    self.stack.pop();
                }
                continue;
            }
            let t = tokens[top.pos];
            top.pos += 1;
            let thin = top.thin;
            let Some((kind, id)) = token(t) else {
                return Err(self.grammar_error(format!("invalid token {t:#x}")));
            };
            match kind {
                TokenKind::Event => {
                    let slot = ThreadFile::physical(&self.file.event_map, id)
                        .filter(|&s| self.file.events[s].is_some())
                        .ok_or_else(|| {
                            self.grammar_error(format!("token names undefined event {id}"))
                        })?;
                    if thin && self.thinning.as_ref().is_some_and(|th| th.counted(slot)) {
                        self.count(slot, 1)?;
                        idle = 0;
                        continue;
                    }
                    let o = self.occurrence(slot)?;
                    if !thin && self.thinning.as_ref().is_some_and(|th| o.time >= th.before) {
                        let after = self.thinning_after.take();
                        self.thinning = after.filter(|th| o.time < th.before);
                    }
                    return Ok(Some(o));
                }
                TokenKind::Sequence => {
                    let s = self.live_sequence(id)?;
                    idle *= u64::from(!self.run(s, 1, thin)?);
                }
                TokenKind::Loop => {
                    let def = ThreadFile::physical(&self.file.loop_map, id)
                        .and_then(|l| self.file.loops[l])
                        .ok_or_else(|| {
                            self.grammar_error(format!("token names undefined loop {id}"))
                        })?;
                    let s = self.live_sequence(def.sequence)?;
                    if def.iterations > 0 {
                        idle *= u64::from(!self.run(s, def.iterations, thin)?);
                    }
                }
            }
        }
    }

    /// Runs sequence `s` `runs` times from here, thinned inside a thinned
    /// run: counted past whole when that gives no row (true).
    fn run(&mut self, s: usize, runs: u32, thin: bool) -> Result<bool> {
        let thinning = self.thinning.as_ref();
        if thin && thinning.is_some_and(|th| th.silent(s)) {
            self.count_runs(s, u64::from(runs))?;
            return Ok(true);
        }
        self.push(s, runs - 1, thin)?;
        if !thin {
            self.thin_ahead()?;
        }
        Ok(false)
    }

    /// At the start of an iteration of the top frame, not thinned: the
    /// iterations to go that end before T0 (the next one starts before it)
    /// are thinned first, found by a binary search on the first event's
    /// timestamps.
    fn thin_ahead(&mut self) -> Result<()> {
        // The thread's first occurrence is read as it is (a slice tells the
        // trace's span from its rows).
        let Some(th) = self.thinning.as_mut().filter(|_| self.passed > 0) else {
            return Ok(());
        };
        let top = self.stack.last().expect("a frame starts");
        let (s, to_go) = (top.sequence, u64::from(top.remaining));
        let Some(first) = th.first_if_thinnable(s).filter(|_| to_go > 0) else {
            return Ok(());
        };
        let counts = th.counts(&self.file, s);
        let per_run = counts
            .binary_search_by_key(&first, |&(slot, _)| slot)
            .map_or(1, |i| counts[i].1);
        let from = self.cursors[first].occurrences;
        let (mut lo, mut hi) = (0u64, to_go);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            let index = mid.checked_mul(per_run).and_then(|n| n.checked_add(from));
            let probe = (&self.dat, &mut self.decoder);
            match index {
                Some(i) if th.is_before(&self.file, probe, first, i)? => lo = mid,
                _ => hi = mid - 1,
            }
        }
        if lo > 0 {
            let thinned = u32::try_from(lo).expect("at most the iterations to go");
            self.stack.last_mut().expect("a frame").remaining -= thinned;
            self.push(s, thinned - 1, true)?;
        }
        Ok(())
    }

    /// Counts `n` occurrences of event `slot` past, unread.
    fn count(&mut self, slot: usize, n: u64) -> Result<()> {
        let event = self.file.events[slot].as_ref().expect("live slot");
        self.passed = self.passed.saturating_add(n);
        count_past(&mut self.cursors[slot], event, n, &self.name)
    }

    /// Counts `runs` runs of sequence `s` past, unread.
    fn count_runs(&mut self, s: usize, runs: u64) -> Result<()> {
        let th = self.thinning.as_mut().expect("thinning");
        for &(slot, n) in th.counts(&self.file, s) {
            let event = self.file.events[slot].as_ref().expect("live slot");
            let n = n.saturating_mul(runs);
            self.passed = self.passed.saturating_add(n);
            count_past(&mut self.cursors[slot], event, n, &self.name)?;
        }
        Ok(())
    }

    pub(super) fn live_sequence(&self, id: u32) -> Result<usize> {
        ThreadFile::physical(&self.file.sequence_map, id)
            .filter(|&s| self.file.sequences[s].is_some())
            .ok_or_else(|| self.grammar_error(format!("token names undefined sequence {id}")))
    }

    pub(super) fn push(&mut self, sequence: usize, remaining: u32, thin: bool) -> Result<()> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.grammar_error(format!(
                "grammar nests deeper than {MAX_DEPTH} (a sequence that contains itself?)"
            )));
        }
        self.stack.push(GrammarFrame {
            sequence,
            pos: 0,
            remaining,
            thin,
        });
        Ok(())
    }

    pub(super) fn occurrence(&mut self, slot: usize) -> Result<Occurrence> {
        let event = self.file.events[slot].as_ref().expect("live slot");
        let c = &mut self.cursors[slot];
        let index = c.occurrences;
        count_past(c, event, 1, &self.name)?;
        self.passed += 1;
        let blocks = &event.timestamps.blocks;
        // Blocks whose occurrences were all counted past stay undecoded.
        while index - c.base >= blocks[c.block].size {
            c.base += blocks[c.block].size;
            c.block += 1;
            c.values.clear();
        }
        let header = &blocks[c.block];
        if c.values.is_empty() {
            self.decoder.decode(&self.dat, header, &mut c.values)?;
            if self.lossy {
                // The block header keeps exact copies of the ends; Pallas's
                // own reader shows them where it reads the header rather than
                // the block (the first value, and the second of two).
                c.values[0] = header.first;
                if header.size == 2 {
                    c.values[1] = header.last;
                }
            }
        }
        let time = c.values[(index - c.base) as usize];
        if c.occurrences == event.timestamps.size {
            c.values = Vec::new();
        }
        let attributes = attribute_list(&self.name, event, c, index)?;
        Ok(Occurrence {
            slot,
            number: self.passed,
            index,
            time,
            attributes,
        })
    }
}

/// Moves cursor `c` of `event` `n` occurrences on, unread; an error past
/// its timestamps.
fn count_past(c: &mut EventCursor, event: &EventDef, n: u64, file: &str) -> Result<()> {
    c.occurrences = c.occurrences.saturating_add(n);
    if c.occurrences > event.timestamps.size {
        return Err(Error::offset(
            file,
            event.offset as u64,
            format!(
                "event occurs more often than its {} timestamps",
                event.timestamps.size
            ),
        ));
    }
    Ok(())
}
