//! The `resources` report: TRACE claims per resource. Claims, claimed time
//! (the sum of their durations), busy time (the union of their intervals),
//! amount × time, utilisation (amount × time over capacity × the trace's
//! span), peak concurrent amount, and Little's law: throughput λ (claims per
//! second over the span), mean time in the system W (mean claim duration),
//! L = λW, and the time-average of claims in progress measured by a sweep
//! (equal to L when every claim lies in the span). Memory: the claims (24
//! bytes each; the TRACE reader holds the whole file anyway). Partial
//! reports merge when each resource is in one part.

use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::record::{Column, ColumnSet, Kind, Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::Labels;
use crate::stats::partial::{ordered, PartialRow};
use crate::stats::{elapsed, Report, Style};
use crate::table::{Cell, TableWriter};

/// One resource: name, capacity, and its claims (start, end, amount), or
/// their figures when they come from a partial report.
#[derive(Default)]
struct Resource {
    name: Sym,
    capacity: Option<f64>,
    claims: Vec<(i64, i64, f64)>,
    merged: Option<(u64, Sweep)>,
}

impl Resource {
    /// A container that is no resource (no claims, no capacity) is left out.
    fn is_resource(&self) -> bool {
        !self.claims.is_empty() || self.capacity.is_some() || self.merged.is_some()
    }

    /// Its claims' count and figures.
    fn figures(&mut self) -> (u64, Sweep) {
        match self.merged.clone() {
            Some(done) => done,
            None => (self.claims.len() as u64, sweep(&mut self.claims)),
        }
    }
}

/// The `resources` report.
pub struct Resources {
    symbols: Symbols,
    resources: FastMap<Sym, Resource>,
    first: Option<i64>,
    last: Option<i64>,
}

impl Resources {
    /// The report over rows whose identifiers are in `symbols`.
    pub fn new(symbols: Symbols) -> Resources {
        Resources {
            symbols,
            resources: FastMap::default(),
            first: None,
            last: None,
        }
    }
}

impl RecordSink for Resources {
    /// Of each row: its place, and the claim's resource, name and amount.
    fn reads(&self) -> Reads {
        Reads::only(ColumnSet::PLACE.with(Column::Name).with(Column::Value))
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        if let (Some(t), Some(c)) = (rec.time, rec.completion()) {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(c, |l| l.max(c)));
        }
        match rec.kind {
            Kind::Container => {
                let r = self.resources.entry(rec.loc).or_default();
                r.name = rec.name;
                r.capacity = rec.value.parse().ok();
            }
            Kind::Claim => {
                let amount = claim_amount(&rec.value)?;
                let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
                elapsed(start, end)?;
                let r = self.resources.entry(rec.loc).or_default();
                r.claims.push((start, end, amount));
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Figures of one resource's claims, sorted by start.
#[derive(Clone)]
struct Sweep {
    claimed: i128,
    busy: i128,
    amount_time: f64,
    peak: f64,
}

/// A claim's amount: 1 when none is written; a finite, non-negative number.
fn claim_amount(value: &str) -> Result<f64> {
    if value.is_empty() {
        return Ok(1.0);
    }
    match value.parse::<f64>() {
        Ok(a) if a.is_finite() && a >= 0.0 => Ok(a),
        _ => Err(Error::Record(format!(
            "claim amount `{value}` is not a finite, non-negative number"
        ))),
    }
}

fn sweep(claims: &mut [(i64, i64, f64)]) -> Sweep {
    claims.sort_by_key(|c| (c.0, c.1));
    let (mut claimed, mut busy, mut amount_time) = (0i128, 0i128, 0.0);
    let mut covered_to = i64::MIN;
    for &(s, e, a) in claims.iter() {
        claimed += i128::from(e - s);
        amount_time += a * (e - s) as f64;
        let from = s.max(covered_to);
        if e > from {
            busy += i128::from(e - from);
        }
        covered_to = covered_to.max(e);
    }
    // Peak: ends before starts at one instant (a claim handed over is not
    // held twice).
    let mut edges: Vec<(i64, bool, f64)> = claims
        .iter()
        .flat_map(|&(s, e, a)| [(s, true, a), (e, false, a)])
        .collect();
    edges.sort_by(|x, y| (x.0, x.1).partial_cmp(&(y.0, y.1)).expect("no NaN keys"));
    let (mut level, mut peak) = (0.0f64, 0.0f64);
    for (_, start, a) in edges {
        level += if start { a } else { -a };
        peak = peak.max(level);
    }
    Sweep {
        claimed,
        busy,
        amount_time,
        peak,
    }
}

impl Report for Resources {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let names: Vec<&str> = {
            vec![
                "resource",
                "name",
                "capacity",
                "claims",
                "claimed",
                "busy",
                "amount_time",
                "utilisation",
                "peak",
                "throughput_per_s",
                "mean_time",
                "little_l",
                "measured_l",
            ]
        };
        names.into_iter().map(String::from).collect()
    }

    fn partial(&self, _: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let text = |t: Option<i64>| t.map_or(String::new(), |t| t.to_string());
        let mut rows = vec![vec![String::new(), text(self.first), text(self.last)]];
        for (loc, r) in &self.resources {
            let (n, s) = match &r.merged {
                Some(done) => done.clone(),
                None => (r.claims.len() as u64, sweep(&mut r.claims.clone())),
            };
            if !r.is_resource() {
                continue;
            }
            let capacity = r.capacity.map_or(String::new(), |c| c.to_string());
            rows.push(vec![
                self.symbols.text(*loc).to_string(),
                self.symbols.text(r.name).to_string(),
                capacity,
                n.to_string(),
                s.claimed.to_string(),
                s.busy.to_string(),
                s.amount_time.to_string(),
                s.peak.to_string(),
            ]);
        }
        Ok(Some(rows))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        if fields.first().is_some_and(String::is_empty) {
            // The span of a part: the report's is the union of the parts'.
            let row = PartialRow::new(fields, 3)?;
            let time = |i: usize, what| match row.text(i) {
                "" => Ok(None),
                _ => row.number::<i64>(i, what).map(Some),
            };
            let (first, last) = (time(1, "first time")?, time(2, "last time")?);
            if let (Some(f), Some(l)) = (first, last) {
                ordered(f, l)?;
            }
            if let Some(first) = first {
                self.first = Some(self.first.map_or(first, |f| f.min(first)));
            }
            if let Some(last) = last {
                self.last = Some(self.last.map_or(last, |l| l.max(last)));
            }
            return Ok(());
        }
        let row = PartialRow::new(fields, 8)?;
        let claims: u64 = row.number(3, "claims")?;
        let ints: [i128; 2] = [
            row.natural(4, "claimed time")?,
            row.natural(5, "busy time")?,
        ];
        let reals = [row.real(6, "amount × time")?, row.real(7, "peak")?];
        if reals.iter().any(|r| *r < 0.0) {
            return Err("a negative amount".into());
        }
        let capacity = match fields[2].as_str() {
            "" => None,
            _ => Some(row.real(2, "capacity")?),
        };
        // A part may declare a resource whose claims are in another one.
        let claims_in = |r: &Resource| r.merged.as_ref().map_or(0, |m| m.0);
        let loc = self.symbols.intern(&fields[0]);
        match self.resources.get(&loc) {
            Some(old) if claims_in(old) > 0 && claims > 0 => {
                return Err(format!(
                    "resource `{}` has claims in two parts: split the trace by resource",
                    fields[0]
                ))
            }
            Some(_) if claims == 0 => return Ok(()),
            _ => {}
        }
        let figures = Sweep {
            claimed: ints[0],
            busy: ints[1],
            amount_time: reals[0],
            peak: reals[1],
        };
        let resource = Resource {
            name: self.symbols.intern(&fields[1]),
            capacity,
            claims: Vec::new(),
            merged: Some((claims, figures)),
        };
        self.resources.insert(loc, resource);
        Ok(())
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, _: &Labels) -> Result<()> {
        let span = self
            .last
            .zip(self.first)
            .map_or(0, |(l, f)| i128::from(l) - i128::from(f));
        let factor = style.time_factor.max(1) as f64;
        let symbols = self.symbols.clone();
        let mut locs: Vec<Sym> = self.resources.keys().copied().collect();
        locs.sort_by_key(|&loc| symbols.text(loc));
        for loc in locs.into_iter().take(style.top.unwrap_or(usize::MAX)) {
            let r = self.resources.get_mut(&loc).expect("listed");
            if !r.is_resource() {
                continue;
            }
            let (n, s) = r.figures();
            // Shortest exact form: amounts × times can be tiny in seconds.
            let real = Cell::shortest;
            let utilisation = r
                .capacity
                .map_or(f64::NAN, |c| s.amount_time / (c * span as f64));
            let lambda = n as f64 / (span as f64 / 1e9);
            let w = s.claimed as f64 / n as f64;
            let cells = [
                Cell::Text(symbols.text(loc)),
                Cell::Text(symbols.text(r.name)),
                r.capacity.map_or(Cell::Empty, real),
                Cell::UInt(n),
                style.total(s.claimed),
                style.total(s.busy),
                real(s.amount_time / factor),
                real(utilisation),
                real(s.peak),
                real(lambda),
                style.mean(s.claimed, n),
                real(lambda * w / 1e9),
                real(s.claimed as f64 / span as f64),
            ];
            table.row(&cells)?;
        }
        Ok(())
    }
}
