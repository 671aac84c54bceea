//! The `resources` report: TRACE claims per resource. Claims, claimed time
//! (the sum of their durations), busy time (the union of their intervals),
//! amount × time, utilisation (amount × time over capacity × the trace's
//! span), peak concurrent amount, and Little's law: throughput λ (claims per
//! second over the span), mean time in the system W (mean claim duration),
//! L = λW, and the time-average of claims in progress measured by a sweep
//! (equal to L when every claim lies in the span). Memory: the claims (24
//! bytes each; the TRACE reader holds the whole file anyway).

use crate::error::Result;
use crate::fasthash::FastMap;
use crate::pipe::RecordSink;
use crate::record::{Kind, Record};
use crate::stats::{Report, Style};
use crate::table::{Cell, TableWriter};

/// One resource: name, capacity, and its claims (start, end, amount).
#[derive(Default)]
struct Resource {
    name: String,
    capacity: Option<f64>,
    claims: Vec<(i64, i64, f64)>,
}

/// The `resources` report.
#[derive(Default)]
pub struct Resources {
    resources: FastMap<String, Resource>,
    first: Option<i64>,
    last: Option<i64>,
}

impl RecordSink for Resources {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if let (Some(t), Some(c)) = (rec.time, rec.completion()) {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(c, |l| l.max(c)));
        }
        match rec.kind {
            Kind::Container => {
                let r = self.resources.entry(rec.loc.clone()).or_default();
                r.name.clone_from(&rec.name);
                r.capacity = rec.value.parse().ok();
            }
            Kind::Claim => {
                let amount = rec.value.parse().unwrap_or(1.0);
                let (start, end) = (rec.time.unwrap_or_default(), rec.end.unwrap_or_default());
                let r = match self.resources.get_mut(rec.loc.as_str()) {
                    Some(r) => r,
                    None => self.resources.entry(rec.loc.clone()).or_default(),
                };
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
struct Sweep {
    claimed: i128,
    busy: i128,
    amount_time: f64,
    peak: f64,
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
    fn columns(&self) -> Vec<&'static str> {
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
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style) -> Result<()> {
        let span = self.last.zip(self.first).map_or(0, |(l, f)| l - f);
        let factor = style.time_factor.max(1) as f64;
        let mut locs: Vec<&String> = self.resources.keys().collect();
        locs.sort();
        let locs: Vec<String> = locs.into_iter().cloned().collect();
        for loc in locs.iter().take(style.top.unwrap_or(usize::MAX)) {
            let r = self.resources.get_mut(loc).expect("listed");
            if r.claims.is_empty() && r.capacity.is_none() {
                continue; // A container that is no resource.
            }
            let n = r.claims.len() as u64;
            let s = sweep(&mut r.claims);
            // Shortest exact form: amounts × times can be tiny in seconds.
            let real = |x: f64| {
                if x.is_finite() {
                    Cell::Number(x.to_string())
                } else {
                    Cell::Empty
                }
            };
            let utilisation = r
                .capacity
                .map_or(f64::NAN, |c| s.amount_time / (c * span as f64));
            let lambda = n as f64 / (span as f64 / 1e9);
            let w = s.claimed as f64 / n as f64;
            let cells = [
                Cell::Text(loc),
                Cell::Text(&r.name),
                r.capacity.map_or(Cell::Empty, real),
                Cell::UInt(n),
                style.time(i64::try_from(s.claimed).unwrap_or(i64::MAX)),
                style.time(i64::try_from(s.busy).unwrap_or(i64::MAX)),
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
