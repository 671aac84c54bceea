//! The `compare` report: two runs' profiles side by side, per key. For one
//! metric (exclusive time, inclusive time or the count of frames), each
//! key's base value, new value, difference and change in percent of the
//! base; a key in one run only is `new` or `gone`. As a CI gate
//! ([`Thresholds`]), the comparison fails when a key present in both runs grew by
//! more than a given percentage of its base value.

use std::cmp::Reverse;

use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::record::Record;
use crate::pipe::{Reads, RecordSink};
use crate::stats::labels::Labels;
use crate::stats::profile::Totals;
use crate::stats::{Report, Style};
use crate::table::{Cell, TableWriter};

/// What is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Exclusive time.
    Exclusive,
    /// Inclusive time.
    Inclusive,
    /// The number of frames.
    Count,
}

impl Metric {
    /// The values of `--metric`, the default first.
    pub const NAMES: [&'static str; 3] = ["exclusive", "inclusive", "count"];

    /// Parses one of [`Metric::NAMES`].
    pub fn parse(text: &str) -> Option<Metric> {
        Some(match text {
            "exclusive" => Metric::Exclusive,
            "inclusive" => Metric::Inclusive,
            "count" => Metric::Count,
            _ => return None,
        })
    }

    fn of(self, totals: &Totals) -> i128 {
        match self {
            Metric::Exclusive => totals.exclusive,
            Metric::Inclusive => totals.inclusive,
            Metric::Count => i128::from(totals.count),
        }
    }
}

/// When a comparison fails, and what it leaves out.
#[derive(Debug, Clone, Copy, Default)]
pub struct Thresholds {
    /// Fail when a key in both runs grew by more than this percentage of
    /// its base value (a key whose base value is 0 and grew: always).
    pub fail_over: Option<f64>,
    /// Leave out the keys whose inclusive time is below this (ns) in both
    /// runs: noise.
    pub min: Option<i64>,
}

/// One run's rows: each key's label and totals.
pub type Run = Vec<(Vec<String>, Totals)>;

/// One key of either run.
struct Compared {
    key: Vec<String>,
    base: Option<Totals>,
    new: Option<Totals>,
}

impl Compared {
    fn values(&self, metric: Metric) -> (i128, i128) {
        let value = |t: &Option<Totals>| t.as_ref().map_or(0, |t| metric.of(t));
        (value(&self.base), value(&self.new))
    }

    /// The change in percent of the base value, when both runs have the
    /// key (infinite when the base value is 0 and the new one is not).
    fn change(&self, metric: Metric) -> Option<f64> {
        self.base.as_ref().and(self.new.as_ref())?;
        let (base, new) = self.values(metric);
        Some(match base {
            0 if new == 0 => 0.0,
            0 => f64::INFINITY * new.signum() as f64,
            _ => (new - base) as f64 * 100.0 / base as f64,
        })
    }
}

/// The `compare` report.
pub struct Comparison {
    key_columns: &'static [&'static str],
    metric: Metric,
    gate: Thresholds,
    rows: Vec<Compared>,
}

impl Comparison {
    /// The comparison of the `base` and `new` runs' rows (keys under
    /// `key_columns`, as [`Profile::totals`](super::profile::Profile::totals)
    /// gives them) on `metric`; largest difference first, ties by key.
    pub fn new(
        key_columns: &'static [&'static str],
        (base, new): (Run, Run),
        metric: Metric,
        gate: Thresholds,
    ) -> Comparison {
        let mut rows: FastMap<Vec<String>, Compared> = FastMap::default();
        let row = |key: Vec<String>| Compared {
            key,
            base: None,
            new: None,
        };
        for (key, totals) in base {
            rows.entry(key.clone()).or_insert_with(|| row(key)).base = Some(totals);
        }
        for (key, totals) in new {
            rows.entry(key.clone()).or_insert_with(|| row(key)).new = Some(totals);
        }
        let noise = |r: &Compared| {
            let inclusive = |t: &Option<Totals>| t.as_ref().map_or(0, |t| t.inclusive);
            let floor = i128::from(gate.min.unwrap_or(i64::MIN));
            inclusive(&r.base).max(inclusive(&r.new)) < floor
        };
        let mut rows: Vec<Compared> = rows.into_values().filter(|r| !noise(r)).collect();
        rows.sort_by_cached_key(|r| {
            let (base, new) = r.values(metric);
            (Reverse(new - base), r.key.clone())
        });
        Comparison {
            key_columns,
            metric,
            gate,
            rows,
        }
    }

    /// The gate's verdict: an error naming the key that grew most, when
    /// any grew by more than `--fail-over` allows.
    fn verdict(&self) -> Result<()> {
        let Some(allowed) = self.gate.fail_over else {
            return Ok(());
        };
        let over: Vec<(&Compared, f64)> = self
            .rows
            .iter()
            .filter_map(|r| Some((r, r.change(self.metric)?)))
            .filter(|&(_, change)| change > allowed)
            .collect();
        let Some(&(worst, change)) = over.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            return Ok(());
        };
        let (base, new) = worst.values(self.metric);
        let unit = match self.metric {
            Metric::Count => " frames",
            _ => " ns",
        };
        Err(Error::Failed(format!(
            "compare: `{}` grew by {change:.2} % ({} {base}{unit} to {new}{unit}), over the {allowed} % --fail-over allows ({} key{} over)",
            worst.key.join(" "),
            Metric::NAMES[self.metric as usize],
            over.len(),
            if over.len() == 1 { "" } else { "s" },
        )))
    }
}

impl RecordSink for Comparison {
    /// It reads its runs when it opens; no row comes.
    fn reads(&self) -> Reads {
        Reads::only(crate::model::record::ColumnSet::PLACE)
    }

    fn write(&mut self, _: &Record) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Report for Comparison {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let mut columns: Vec<String> = self.key_columns.iter().map(|c| c.to_string()).collect();
        columns.extend(["status", "base", "new", "diff", "change"].map(String::from));
        columns
    }

    /// The table, then the gate's verdict: the table is flushed first, so
    /// a failing gate still prints it whole.
    fn print(&mut self, table: &mut TableWriter, style: &Style, _: &Labels) -> Result<()> {
        let value = |v: i128| match self.metric {
            Metric::Count => Cell::Number(v.to_string()),
            _ => style.total(v),
        };
        for row in self.rows.iter().take(style.top.unwrap_or(usize::MAX)) {
            let (base, new) = row.values(self.metric);
            let status = match (&row.base, &row.new) {
                (Some(_), Some(_)) => "both",
                (None, _) => "new",
                (_, None) => "gone",
            };
            let mut cells: Vec<Cell> = row.key.iter().map(|k| Cell::Text(k)).collect();
            cells.extend([
                Cell::Text(status),
                row.base.map_or(Cell::Empty, |_| value(base)),
                row.new.map_or(Cell::Empty, |_| value(new)),
                value(new - base),
                match row.change(self.metric) {
                    Some(change) => Cell::Real(change, 2),
                    None => Cell::Empty,
                },
            ]);
            table.row(&cells)?;
        }
        table.finish()?;
        self.verdict()
    }
}
