//! Writes a large synthetic TRACE (.etf) file for benchmarks:
//! `cargo run --release --example gen-trace -- CLAIMS > big.etf`.
//!
//! Resources with and without offsets, claims in shuffled (non-time) order with
//! attributes, events, dependencies of every type, and a signal.

use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let claims: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("CLAIMS is a number"))
        .unwrap_or(1_000_000);
    let mut out = BufWriter::new(std::io::stdout().lock());
    writeln!(out, "TU MICROSECONDS")?;
    writeln!(out, "O 1700000000000")?;
    writeln!(out, "T name = generated, claims = {claims}")?;
    let resources = 64u64;
    for r in 0..resources {
        let offset = r % 8 == 7;
        writeln!(
            out,
            "R {r} {} {offset} ; name = res{r}, kind = {}",
            if offset { 4096 } else { 4 },
            if offset { "memory" } else { "cpu" }
        )?;
    }
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let events = claims / 10;
    for c in 0..claims {
        // Claims come in blocks of 1000 listed back to front, so the file is not
        // in time order.
        let slot = (c / 1000) * 1000 + (999 - c % 1000).min(claims - 1 - (c / 1000) * 1000);
        let r = next() % resources;
        let t0 = slot as f64 * 2.5 + (next() % 100) as f64 / 10.0;
        let t1 = t0 + 1.0 + (next() % 500) as f64 / 4.0;
        if r % 8 == 7 {
            writeln!(
                out,
                "C {slot} {t0} {t1} {r} {} {} ; task = t{}, frame = {}",
                next() % 2048,
                1 + next() % 2048,
                slot % 97,
                slot / 1000
            )?;
        } else {
            writeln!(
                out,
                "C {slot} {t0} {t1} {r} {} ; task = t{}, frame = {}",
                1 + next() % 4,
                slot % 97,
                slot / 1000
            )?;
        }
    }
    for e in 0..events {
        writeln!(out, "E {e} {} ; name = tick{}", e as f64 * 25.0, e % 13)?;
    }
    for d in 0..events {
        let kind = d % 9;
        let (src, dst) = match kind {
            0..=3 => (next() % claims, next() % claims),
            4 => (next() % events, next() % events),
            5 | 6 => (next() % claims, next() % events),
            _ => (next() % events, next() % claims),
        };
        writeln!(out, "D {d} {kind} {src} {dst} ; kind = k{kind}")?;
    }
    writeln!(out, "S 0 ; name = load")?;
    let span = claims as f64 * 2.5;
    let step = span / 1000.0;
    for i in 0..1000 {
        writeln!(
            out,
            "F 0 {} {} {} 0.01 0",
            i as f64 * step,
            (i + 1) as f64 * step,
            i % 7
        )?;
    }
    out.flush()
}
