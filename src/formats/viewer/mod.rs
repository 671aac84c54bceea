//! Viewer exports: the record stream laid out as a timeline of tracks
//! (processes, threads, lanes, counters) carrying slices, instants, counter
//! samples and flows, then encoded for Perfetto UI and chrome://tracing.
//!
//! [`Tracks`] is the one mapping (docs/formats.md, "Viewer exports"); an
//! [`Encoder`] turns its calls into bytes: [`chrome`] (the Chrome Trace Event
//! Format, JSON) and [`perfetto`] (Perfetto's protobuf trace). The writers run
//! behind the matcher, so message halves arrive as `msg` rows.
//!
//! Memory: one entry per location, lane, counter and type; open frames are
//! counted, not kept. Rows are written as they arrive: a complete row (a
//! `state`, a `claim`) arrives at its end, so events are not in time order
//! across tracks, which both viewers accept; on one track they are.

pub mod chrome;
pub mod perfetto;

use std::sync::Arc;

use crate::error::{Result, Warnings};
use crate::fasthash::FastMap;
use crate::model::record::{Kind, Record, Sym, ATTR_ORIG_TIME};
use crate::model::symbol::{well_known, Symbols};
use crate::model::text::is_json_number;
use crate::pipe::RecordSink;
use crate::stages::matcher::{MatchOptions, Matcher, Unmatched};
use crate::stages::window::parse_time;

/// What a track stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackRole {
    /// A top container (a location without a parent): a process.
    Process,
    /// A location below another, or a lane of one: a thread.
    Thread,
    /// The samples of one counter on one location.
    Counter,
}

/// One track of the timeline.
#[derive(Debug, Clone)]
pub struct Track {
    /// Unique, from 1, in declaration order (also the sort rank): the
    /// Perfetto track uuid and the Chrome `tid`.
    pub uuid: u64,
    /// The uuid of the process track it belongs to (its own for a process).
    pub pid: u64,
    /// The track it sits under (`None` for a process).
    pub parent: Option<u64>,
    /// What it stands for.
    pub role: TrackRole,
    /// Its name as shown (shared: tracks are copied per row).
    pub name: Arc<str>,
}

/// What a slice, instant or flow shows: its category, name and arguments
/// (the row's other columns and attributes, see [`for_each_arg`]).
pub struct Label<'a> {
    /// The category (a type's name where the stream declares one).
    pub cat: &'a str,
    /// The name.
    pub name: &'a str,
    /// The row the arguments come from (none: no arguments), and where its
    /// identifiers are.
    pub rec: Option<(&'a Record, &'a Symbols)>,
}

impl<'a> Label<'a> {
    /// The label of `rec`: its category's display name, and its name (else
    /// the category's, else `fallback`).
    fn of(rec: &'a Record, names: &'a Names, fallback: &'a str) -> Self {
        let cat = names.cat(rec.cat);
        Label {
            cat,
            name: shown_name(names.symbols.text(rec.name), cat, fallback),
            rec: Some((rec, &names.symbols)),
        }
    }

    /// The same label without arguments (for the second end of a flow:
    /// the first carries them).
    pub fn without_args(&self) -> Label<'_> {
        Label {
            cat: self.cat,
            name: self.name,
            rec: None,
        }
    }

    /// Calls `f` with each argument, as [`for_each_arg`].
    pub fn for_each_arg(&self, f: impl FnMut(&str, &str)) {
        if let Some((rec, symbols)) = self.rec {
            for_each_arg(rec, symbols, f);
        }
    }
}

/// The names the timeline shows: the symbols' texts, and the display name
/// of each type the stream declares.
struct Names {
    symbols: Symbols,
    /// The name of each type, by its id.
    types: FastMap<Sym, Sym>,
}

impl Names {
    /// The display name of a category: the name of the type it refers to,
    /// when the stream declared one.
    fn cat(&self, cat: Sym) -> &str {
        self.symbols
            .text(self.types.get(&cat).copied().unwrap_or(cat))
    }
}

/// One end of a flow: the track and the time.
pub type Point<'a> = (&'a Track, i64);

/// The calls [`Tracks`] makes; each encoder writes them in its format.
pub trait Encoder {
    /// Declares (or names again) a track, before any event on it.
    fn track(&mut self, track: &Track) -> Result<()>;
    /// Opens a slice on a track whose slices open and close in time order.
    fn begin(&mut self, track: &Track, ts: i64, label: &Label) -> Result<()>;
    /// Closes the innermost open slice of `track`.
    fn end(&mut self, track: &Track, ts: i64) -> Result<()>;
    /// A slice `ts..end` on a lane, where no two slices overlap.
    fn complete(&mut self, track: &Track, ts: i64, end: i64, label: &Label) -> Result<()>;
    /// An instant.
    fn instant(&mut self, track: &Track, ts: i64, label: &Label) -> Result<()>;
    /// A counter sample (`value` is the sample as written, a valid number).
    fn counter(&mut self, track: &Track, ts: i64, value: &str) -> Result<()>;
    /// An arrow `from` → `to`, `id` unique in the trace; each end is shown
    /// as a zero-length slice the arrow binds to.
    fn flow(&mut self, id: u64, from: Point, to: Point, label: &Label) -> Result<()>;
    /// Ends the output; `meta` holds the stream's `meta` rows.
    fn finish(&mut self, meta: &[(String, String)]) -> Result<()>;
}

/// The match options the viewer writers run behind: every half matched
/// (links by key, messages by tag), unmatched halves kept as instants.
pub fn match_options() -> MatchOptions {
    MatchOptions {
        unmatched: Unmatched::Keep,
        ..MatchOptions::default()
    }
}

/// A timeline over `encoder` of rows whose identifiers are in `symbols`,
/// behind the matcher.
pub fn matched<E: Encoder + Send>(
    encoder: E,
    symbols: &Symbols,
    warnings: &Warnings,
) -> Matcher<Tracks<E>> {
    Matcher::with_options(
        Tracks::new(encoder, symbols.clone(), warnings.clone()),
        match_options(),
        symbols.clone(),
        warnings.clone(),
    )
}

/// Calls `f` with each argument of `rec` shown beside its slice: the
/// non-empty columns the timeline does not show otherwise (`peer`, `comm`,
/// `tag`, `size`, `id`, `value`, `flags`), then its attributes and extra
/// columns.
pub fn for_each_arg(rec: &Record, symbols: &Symbols, mut f: impl FnMut(&str, &str)) {
    let mut number = itoa::Buffer::new();
    for (key, sym) in [("peer", rec.peer), ("comm", rec.comm)] {
        if !sym.is_empty() {
            f(key, symbols.text(sym));
        }
    }
    if let Some(tag) = rec.tag {
        f("tag", number.format(tag));
    }
    if let Some(size) = rec.size {
        f("size", number.format(size));
    }
    for (key, text) in [
        ("id", &rec.id),
        ("value", &rec.value),
        ("flags", &rec.flags),
    ] {
        if !text.is_empty() {
            f(key, text);
        }
    }
    if !rec.attrs.is_empty() {
        for (key, value) in rec.attrs() {
            f(&key, &value);
        }
    }
    for (key, value) in &rec.extra {
        f(key, value);
    }
}

/// A location's track and how many of its frames are open.
struct LocTrack {
    track: Track,
    open: u32,
}

/// One lane of a location: a thread whose slices never overlap, free from
/// `free_at` on.
struct Lane {
    track: Track,
    free_at: i64,
}

/// What a lane holds (part of its key and name).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum LaneOf {
    /// States of one category at one depth.
    States(Sym, u32),
    /// Claims of a resource.
    Claims,
    /// Collective operations.
    Collectives,
}

/// The name of the track of rows without a location.
const GLOBAL_TRACK: &str = "trace";

/// The mapping of rows to the timeline (docs/formats.md, "Viewer exports"),
/// a sink that hands its calls to an [`Encoder`].
pub struct Tracks<E> {
    enc: E,
    names: Names,
    next_uuid: u64,
    next_flow: u64,
    locations: FastMap<Sym, LocTrack>,
    /// The lanes of each location and what they hold.
    lanes: FastMap<(Sym, LaneOf), Vec<Lane>>,
    /// The counter tracks by location and counter name.
    counters: FastMap<(Sym, Sym), Track>,
    meta: Vec<(String, String)>,
    last_time: i64,
    stray_leaves: u64,
    bad_samples: u64,
    warnings: Warnings,
}

impl<E: Encoder> Tracks<E> {
    /// A timeline writing through `enc`, of rows whose identifiers are in
    /// `symbols`.
    pub fn new(enc: E, symbols: Symbols, warnings: Warnings) -> Tracks<E> {
        Tracks {
            enc,
            names: Names {
                symbols,
                types: FastMap::default(),
            },
            next_uuid: 1,
            next_flow: 1,
            locations: FastMap::default(),
            lanes: FastMap::default(),
            counters: FastMap::default(),
            meta: Vec::new(),
            last_time: 0,
            stray_leaves: 0,
            bad_samples: 0,
            warnings,
        }
    }

    fn uuid(&mut self) -> u64 {
        let uuid = self.next_uuid;
        self.next_uuid += 1;
        uuid
    }

    /// Declares a location (a `container` row), or names it again.
    fn declare(&mut self, rec: &Record) -> Result<()> {
        let symbols = self.names.symbols.clone();
        let name = symbols.text(if rec.name.is_empty() {
            rec.loc
        } else {
            rec.name
        });
        if let Some(known) = self.locations.get_mut(&rec.loc) {
            if *known.track.name != *name {
                known.track.name = Arc::from(name);
                self.enc.track(&known.track)?;
            }
            return Ok(());
        }
        let parent = if rec.peer.is_empty() || rec.peer == rec.loc {
            None
        } else {
            let parent = &self.location(rec.peer)?.track;
            Some((parent.uuid, parent.pid))
        };
        self.add_location(rec.loc, name, parent)?;
        Ok(())
    }

    fn add_location(
        &mut self,
        loc: Sym,
        name: &str,
        parent: Option<(u64, u64)>,
    ) -> Result<&LocTrack> {
        let uuid = self.uuid();
        let track = Track {
            uuid,
            pid: parent.map_or(uuid, |(_, pid)| pid),
            parent: parent.map(|(p, _)| p),
            role: if parent.is_some() {
                TrackRole::Thread
            } else {
                TrackRole::Process
            },
            name: Arc::from(name),
        };
        self.enc.track(&track)?;
        let entry = self.locations.entry(loc);
        Ok(entry.or_insert(LocTrack { track, open: 0 }))
    }

    /// The location `loc`, made a process of its own when the stream did
    /// not declare it (rows without a location go to one global track).
    fn location(&mut self, loc: Sym) -> Result<&mut LocTrack> {
        if !self.locations.contains_key(&loc) {
            let symbols = self.names.symbols.clone();
            let name = if loc.is_empty() {
                GLOBAL_TRACK
            } else {
                symbols.text(loc)
            };
            self.add_location(loc, name, None)?;
        }
        Ok(self.locations.get_mut(&loc).expect("just added"))
    }

    /// A lane of `loc` free over `start..end`, new when every lane of that
    /// kind is busy then: slices on a lane never overlap, so no viewer
    /// has to guess how they nest.
    fn lane(&mut self, loc: Sym, of: LaneOf, start: i64, end: i64) -> Result<&Track> {
        let key = (loc, of);
        let free = self
            .lanes
            .get(&key)
            .and_then(|lanes| lanes.iter().position(|lane| lane.free_at <= start));
        if free.is_none() {
            let owner = self.location(loc)?.track.clone();
            let count = self.lanes.get(&key).map_or(0, Vec::len);
            let name = lane_name(&owner.name, of, &self.names, count);
            let track = Track {
                uuid: self.uuid(),
                pid: owner.pid,
                parent: Some(owner.uuid),
                role: TrackRole::Thread,
                name: name.into(),
            };
            self.enc.track(&track)?;
            self.lanes.entry(key).or_default().push(Lane {
                track,
                free_at: start,
            });
        }
        let lanes = self.lanes.get_mut(&key).expect("lane made");
        let last = lanes.len() - 1;
        let lane = &mut lanes[free.unwrap_or(last)];
        lane.free_at = end;
        Ok(&lane.track)
    }

    /// The counter track of counter `name` on `loc`.
    fn counter_track(&mut self, loc: Sym, name: Sym) -> Result<&Track> {
        let key = (loc, name);
        if !self.counters.contains_key(&key) {
            let owner = self.location(loc)?.track.clone();
            let name = self.names.symbols.text(name);
            let shown = if owner.role == TrackRole::Process {
                name.to_string()
            } else {
                format!("{} · {name}", owner.name)
            };
            let track = Track {
                uuid: self.uuid(),
                pid: owner.pid,
                parent: Some(owner.uuid),
                role: TrackRole::Counter,
                name: shown.into(),
            };
            self.enc.track(&track)?;
            self.counters.insert(key, track);
        }
        Ok(&self.counters[&key])
    }

    /// Closes every open frame of `loc` at `ts`.
    fn close_frames(&mut self, loc: Sym, ts: i64) -> Result<()> {
        let Some(location) = self.locations.get_mut(&loc) else {
            return Ok(());
        };
        while location.open > 0 {
            location.open -= 1;
            self.enc.end(&location.track, ts)?;
        }
        Ok(())
    }
}

/// The name of the lane after `count` others of its kind on `owner`:
/// `rank 1 · MPI state · 1` (depth 1), `bus · claims #2`.
fn lane_name(owner: &str, of: LaneOf, names: &Names, count: usize) -> String {
    let mut name = match of {
        LaneOf::States(cat, 0) => format!("{owner} · {}", names.cat(cat)),
        LaneOf::States(cat, depth) => {
            format!("{owner} · {} · {depth}", names.cat(cat))
        }
        LaneOf::Claims => format!("{owner} · claims"),
        LaneOf::Collectives => format!("{owner} · collectives"),
    };
    if count > 0 {
        name.push_str(&format!(" #{}", count + 1));
    }
    name
}

/// The name a row shows: its own, else its category's, else `fallback`.
fn shown_name<'a>(name: &'a str, cat: &'a str, fallback: &'a str) -> &'a str {
    if !name.is_empty() {
        name
    } else if !cat.is_empty() {
        cat
    } else {
        fallback
    }
}

impl<E: Encoder> Tracks<E> {
    fn frame(&mut self, rec: &Record, ts: i64) -> Result<()> {
        let Tracks {
            enc,
            names,
            locations,
            stray_leaves,
            ..
        } = self;
        let location = locations.get_mut(&rec.loc).expect("location made before");
        if rec.kind == Kind::Enter {
            location.open += 1;
            let label = Label::of(rec, names, "frame");
            return enc.begin(&location.track, ts, &label);
        }
        if location.open > 0 {
            location.open -= 1;
            return enc.end(&location.track, ts);
        }
        // A leave with no frame open: shown, not dropped.
        *stray_leaves += 1;
        let label = Label::of(rec, names, "leave");
        enc.instant(&location.track, ts, &label)
    }

    fn span(&mut self, rec: &Record, ts: i64, end: i64) -> Result<()> {
        let (start, end) = (ts.min(end), ts.max(end));
        let of = match rec.kind {
            Kind::State => LaneOf::States(rec.cat, rec.depth.unwrap_or(0)),
            Kind::Claim => LaneOf::Claims,
            _ => LaneOf::Collectives,
        };
        let track = self.lane(rec.loc, of, start, end)?.clone();
        let label = Label::of(rec, &self.names, rec.kind.as_str());
        self.enc.complete(&track, start, end, &label)
    }

    fn arrow(&mut self, rec: &Record, ts: i64, end: i64) -> Result<()> {
        let from = self.location(rec.loc)?.track.clone();
        let to = if rec.peer.is_empty() {
            from.clone()
        } else {
            self.location(rec.peer)?.track.clone()
        };
        let id = self.next_flow;
        self.next_flow += 1;
        let label = Label::of(rec, &self.names, rec.kind.as_str());
        self.enc.flow(id, (&from, ts), (&to, end), &label)
    }

    fn sample(&mut self, rec: &Record, ts: i64) -> Result<()> {
        // Both encodings carry a number as JSON writes it.
        if is_json_number(&rec.value) {
            let track = self.counter_track(rec.loc, rec.name)?.clone();
            return self.enc.counter(&track, ts, &rec.value);
        }
        // Not a number a viewer can plot: an instant keeps it.
        self.bad_samples += 1;
        self.point(rec, ts)
    }

    /// A signal piece: samples at its start and, when it changes, its end
    /// (value = c + b·(t−t0) + a·(t−t0)², t in the piece's `time_unit`).
    fn signal(&mut self, rec: &Record, ts: i64, end: i64) -> Result<()> {
        let coefficient = |name: &str| {
            rec.attr(name)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        let unit = rec.attr("time_unit").unwrap_or_else(|| "ns".to_string());
        let (Some(c), b, a, Ok(unit_ns)) = (
            coefficient("c"),
            coefficient("b").unwrap_or(0.0),
            coefficient("a").unwrap_or(0.0),
            parse_time(&format!("1{unit}")),
        ) else {
            self.bad_samples += 1;
            return self.point(rec, ts);
        };
        let track = self.counter_track(rec.loc, well_known::SIGNAL)?.clone();
        self.enc.counter(&track, ts, &c.to_string())?;
        if (a != 0.0 || b != 0.0) && end > ts {
            let d = (end - ts) as f64 / unit_ns as f64;
            let last = c + b * d + a * d * d;
            if last.is_finite() {
                self.enc.counter(&track, end, &last.to_string())?;
            }
        }
        Ok(())
    }

    fn point(&mut self, rec: &Record, ts: i64) -> Result<()> {
        let Tracks {
            enc,
            names,
            locations,
            ..
        } = self;
        let track = &locations[&rec.loc].track;
        enc.instant(track, ts, &Label::of(rec, names, rec.kind.as_str()))
    }
}

impl<E: Encoder> RecordSink for Tracks<E> {
    fn write(&mut self, rec: &Record) -> Result<()> {
        match rec.kind {
            Kind::Meta => {
                let key = self.names.symbols.text(rec.name).to_string();
                self.meta.push((key, rec.value.clone()));
                return Ok(());
            }
            Kind::Type => {
                if !rec.name.is_empty() && rec.cat != well_known::VALUE {
                    let id = self.names.symbols.intern(&rec.id);
                    self.names.types.insert(id, rec.name);
                }
                return Ok(());
            }
            Kind::Container => return self.declare(rec),
            _ => {}
        }
        let mut ts = rec.time.unwrap_or(0);
        if matches!(rec.kind, Kind::Send | Kind::Recv) {
            // A half the matcher gave up on comes late; shown where it was.
            if let Some(orig) = rec.attr(ATTR_ORIG_TIME).and_then(|t| t.parse().ok()) {
                ts = orig;
            }
        }
        let end = rec.end.unwrap_or(ts);
        self.last_time = self.last_time.max(ts).max(end);
        self.location(rec.loc)?;
        match rec.kind {
            Kind::Enter | Kind::Leave => self.frame(rec, ts),
            Kind::State | Kind::Claim | Kind::Coll => self.span(rec, ts, end),
            Kind::Msg | Kind::Dep => self.arrow(rec, ts, end),
            Kind::Counter => self.sample(rec, ts),
            Kind::Signal => self.signal(rec, ts, end),
            Kind::Destroy => self.close_frames(rec.loc, ts),
            _ => self.point(rec, ts),
        }
    }

    fn finish(&mut self) -> Result<()> {
        let mut open: Vec<(u64, Sym)> = self
            .locations
            .iter()
            .filter(|(_, l)| l.open > 0)
            .map(|(&loc, l)| (l.track.uuid, loc))
            .collect();
        open.sort_unstable();
        for (_, loc) in open {
            self.close_frames(loc, self.last_time)?;
        }
        if self.stray_leaves > 0 {
            self.warnings.warn(format!(
                "{} `leave` rows had no frame open on their location: shown as instants",
                self.stray_leaves
            ));
        }
        if self.bad_samples > 0 {
            self.warnings.warn(format!(
                "{} counter or signal rows had no numeric value: shown as instants",
                self.bad_samples
            ));
        }
        self.enc.finish(&self.meta)
    }
}
