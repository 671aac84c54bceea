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
            file,
        };
        let root = ThreadFile::physical(&t.file.sequence_map, t.file.root)
            .filter(|&s| t.file.sequences.get(s).is_some_and(Option::is_some));
        match root {
            Some(s) => t.stack.push(GrammarFrame {
                sequence: s,
                pos: 0,
                remaining: 0,
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
                } else {
                    self.stack.pop();
                }
                continue;
            }
            let t = tokens[top.pos];
            top.pos += 1;
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
                    return self.occurrence(slot).map(Some);
                }
                TokenKind::Sequence => {
                    let s = self.live_sequence(id)?;
                    self.push(s, 0)?;
                }
                TokenKind::Loop => {
                    let def = ThreadFile::physical(&self.file.loop_map, id)
                        .and_then(|l| self.file.loops[l])
                        .ok_or_else(|| {
                            self.grammar_error(format!("token names undefined loop {id}"))
                        })?;
                    let s = self.live_sequence(def.sequence)?;
                    if def.iterations > 0 {
                        self.push(s, def.iterations - 1)?;
                    }
                }
            }
        }
    }

    pub(super) fn live_sequence(&self, id: u32) -> Result<usize> {
        ThreadFile::physical(&self.file.sequence_map, id)
            .filter(|&s| self.file.sequences[s].is_some())
            .ok_or_else(|| self.grammar_error(format!("token names undefined sequence {id}")))
    }

    pub(super) fn push(&mut self, sequence: usize, remaining: u32) -> Result<()> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.grammar_error(format!(
                "grammar nests deeper than {MAX_DEPTH} (a sequence that contains itself?)"
            )));
        }
        self.stack.push(GrammarFrame {
            sequence,
            pos: 0,
            remaining,
        });
        Ok(())
    }

    pub(super) fn occurrence(&mut self, slot: usize) -> Result<Occurrence> {
        let event = self.file.events[slot].as_ref().expect("live slot");
        let c = &mut self.cursors[slot];
        let index = c.occurrences;
        c.occurrences += 1;
        if c.pos >= c.values.len() {
            let Some(header) = event.timestamps.blocks.get(c.block) else {
                return Err(Error::offset(
                    &self.name,
                    event.offset as u64,
                    format!(
                        "event occurs more often than its {} timestamps",
                        event.timestamps.size
                    ),
                ));
            };
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
            c.block += 1;
            c.pos = 0;
        }
        let time = c.values[c.pos];
        c.pos += 1;
        if c.pos == c.values.len() && c.block == event.timestamps.blocks.len() {
            c.values = Vec::new();
        }
        let attributes = attribute_list(&self.name, event, c, index)?;
        Ok(Occurrence {
            slot,
            index,
            time,
            attributes,
        })
    }
}
