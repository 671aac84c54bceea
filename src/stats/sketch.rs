//! Quantiles of durations with a bounded relative error, in bounded memory:
//! a logarithmic-bucket sketch in the manner of DDSketch.
//!
//! A positive value `x` falls in bucket `ceil(log_γ x)` with
//! `γ = (1 + α) / (1 − α)`, α = 1 %; a quantile is the centre
//! `2γ^i / (γ + 1)` of the bucket that holds its rank, so it is within 1 %
//! of a value of the input at that rank. Zero has a bucket of its own.
//! Buckets only count, so two sketches merge by adding counts, and the
//! result does not depend on the order values came in.

use std::collections::BTreeMap;

/// Relative accuracy of the quantiles.
pub const RELATIVE_ERROR: f64 = 0.01;

/// Counts of values per logarithmic bucket.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Sketch {
    zeros: u64,
    buckets: BTreeMap<i32, u64>,
    count: u64,
}

fn gamma() -> f64 {
    (1.0 + RELATIVE_ERROR) / (1.0 - RELATIVE_ERROR)
}

impl Sketch {
    /// The bucket a positive value falls in.
    pub fn index(value: i64) -> i32 {
        ((value as f64).ln() / gamma().ln()).ceil() as i32
    }

    /// The largest integer that falls in bucket `i` or below (computed with
    /// [`Sketch::index`] itself, so it agrees with where values went).
    pub fn bucket_top(i: i32) -> i64 {
        let mut top = gamma().powi(i).floor().min(i64::MAX as f64) as i64;
        while top > 0 && Sketch::index(top) > i {
            top -= 1;
        }
        while top < i64::MAX && Sketch::index(top + 1) <= i {
            top += 1;
        }
        top
    }

    /// How many zeros (and negative values) were added.
    pub fn zeros(&self) -> u64 {
        self.zeros
    }

    /// How many values fell in buckets `from..=to`.
    pub fn count_in(&self, from: i32, to: i32) -> u64 {
        self.buckets.range(from..=to).map(|(_, &n)| n).sum()
    }

    /// Adds a value (negative values count as zero: durations are not negative).
    pub fn add(&mut self, value: i64) {
        self.count += 1;
        if value <= 0 {
            self.zeros += 1;
            return;
        }
        *self.buckets.entry(Sketch::index(value)).or_default() += 1;
    }

    /// The values, seen from `min` to `max`, in up to `bins` bins
    /// log-spaced between them, each bin's edges moved to the nearest edge
    /// of the buckets so its count is exact: `(low, high, count)` with
    /// `low` and `high` both in the bin (the next starts at `high + 1`). A
    /// zero counts in the first bin. Fewer bins when the span holds fewer
    /// buckets.
    pub fn histogram(&self, min: i64, max: i64, bins: usize) -> Vec<(i64, i64, u64)> {
        let (low, high) = (min.max(1), max.max(1));
        let (first, last) = (Sketch::index(low), Sketch::index(high));
        let ratio = high as f64 / low as f64;
        let mut ends: Vec<i32> = (1..bins)
            .map(|k| {
                let edge = low as f64 * ratio.powf(k as f64 / bins as f64);
                Sketch::index(edge.round() as i64).clamp(first, last)
            })
            .collect();
        ends.push(last);
        ends.dedup();
        let (mut from, mut bottom) = (first, min.min(low));
        let mut rows = Vec::with_capacity(ends.len());
        for (n, &end) in ends.iter().enumerate() {
            let mut count = self.count_in(from, end);
            if n == 0 {
                count += self.zeros();
            }
            let top = if end == last {
                max
            } else {
                Sketch::bucket_top(end)
            };
            rows.push((bottom, top, count));
            (from, bottom) = (end + 1, top + 1);
        }
        rows
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Sketch) {
        self.zeros += other.zeros;
        self.count += other.count;
        for (&i, &n) in &other.buckets {
            *self.buckets.entry(i).or_default() += n;
        }
    }

    /// The values (bucket centres, 0 for zeros) and how many fell there,
    /// smallest first.
    pub fn buckets(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        let g = gamma();
        let zeros = (self.zeros > 0).then_some((0, self.zeros));
        zeros.into_iter().chain(
            self.buckets
                .iter()
                .map(move |(&i, &n)| ((2.0 * g.powi(i) / (g + 1.0)).round() as i64, n)),
        )
    }

    /// The sketch as text (`zeros` then `index:count` pairs), for partial
    /// reports.
    pub fn encode(&self) -> String {
        let mut out = self.zeros.to_string();
        for (i, n) in &self.buckets {
            out.push_str(&format!(" {i}:{n}"));
        }
        out
    }

    /// Reads what [`Sketch::encode`] wrote.
    pub fn decode(text: &str) -> Option<Sketch> {
        let mut parts = text.split(' ');
        let zeros: u64 = parts.next()?.parse().ok()?;
        let mut sketch = Sketch {
            zeros,
            count: zeros,
            ..Sketch::default()
        };
        for part in parts {
            let (i, n) = part.split_once(':')?;
            let n: u64 = n.parse().ok()?;
            sketch.buckets.insert(i.parse().ok()?, n);
            sketch.count += n;
        }
        Some(sketch)
    }

    /// The `q` quantile (0 ≤ q ≤ 1), rounded to an integer; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<i64> {
        if self.count == 0 {
            return None;
        }
        // The rank of the value, 0-based, as the nearest-rank method counts.
        let rank = (q * (self.count - 1) as f64).round() as u64;
        if rank < self.zeros {
            return Some(0);
        }
        let mut seen = self.zeros;
        for (&i, &n) in &self.buckets {
            seen += n;
            if rank < seen {
                let g = gamma();
                return Some((2.0 * g.powi(i) / (g + 1.0)).round() as i64);
            }
        }
        unreachable!("the ranks of a sketch end at its count")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_the_relative_error() {
        let mut s = Sketch::default();
        let values: Vec<i64> = (1..=10_000).map(|i| i * 37).collect();
        for &v in values.iter().rev() {
            s.add(v);
        }
        for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
            let exact = values[(q * (values.len() - 1) as f64).round() as usize] as f64;
            let got = s.quantile(q).unwrap() as f64;
            assert!(
                (got - exact).abs() <= exact * RELATIVE_ERROR + 1.0,
                "q {q}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn bucket_tops_agree_with_where_values_go() {
        for v in (1..5000).chain([10_010, 10_020, 1 << 40, i64::MAX / 3]) {
            let i = Sketch::index(v);
            assert!(Sketch::bucket_top(i) >= v, "{v}");
            assert!(Sketch::bucket_top(i - 1) < v, "{v}");
        }
    }

    #[test]
    fn merged_sketches_equal_one_sketch_of_everything() {
        let (mut a, mut b, mut all) = (Sketch::default(), Sketch::default(), Sketch::default());
        for v in 0..1000 {
            if v % 3 == 0 {
                a.add(v * v)
            } else {
                b.add(v * v)
            }
            all.add(v * v);
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert_eq!(Sketch::decode(&all.encode()), Some(all));
        assert_eq!(Sketch::default().quantile(0.5), None);
    }
}
