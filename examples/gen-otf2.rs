//! Writes a synthetic OTF2 archive for benchmarks:
//! `cargo run --release --example gen-otf2 -- DIR [EVENTS_PER_RANK] [RANKS]`
//! (defaults: 1 250 000 events, 8 ranks; the archive is `DIR/traces.otf2`).
//!
//! Each rank runs `main { N × { compute { kernel }, MPI_Send, MPI_Recv
//! (a ring), cycles metric } }` on a 2.5 GHz clock whose ticks start far
//! from zero (as Score-P's do), with irregular steps.

use std::path::PathBuf;

use tracepipe::formats::otf2::archive::Archive;
use tracepipe::formats::otf2::encode::event;

/// Events one iteration writes per rank.
const PER_ITERATION: u64 = 9;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .expect("usage: gen-otf2 DIR [EVENTS_PER_RANK] [RANKS]"),
    );
    let events: u64 = args.next().map_or(Ok(1_250_000), |s| s.parse())?;
    let ranks: u64 = args.next().map_or(Ok(8), |s| s.parse())?;
    let first = 6_127_384_835_033_798u64;
    let mut a = Archive::new(1 << 20);
    a.clock(2_500_000_000, first, 0);
    let mut strings = vec![
        "",
        "machine",
        "node",
        "Master thread",
        "main",
        "compute",
        "kernel",
    ];
    strings.extend(["MPI_Send", "MPI_Recv", "MPI_COMM_WORLD", "cycles", "#"]);
    for (i, s) in strings.iter().enumerate() {
        a.string(i as u32, s);
    }
    let rank_names: Vec<String> = (0..ranks).map(|r| format!("MPI Rank {r}")).collect();
    for (r, name) in rank_names.iter().enumerate() {
        a.string((strings.len() + r) as u32, name);
    }
    a.node(0, 1, 0, u32::MAX).node(1, 2, 2, 0);
    for r in 0..ranks {
        a.group_of_locations(r as u32, (strings.len() as u64 + r) as u32, 1, 1);
        a.location(r << 32, 3, 1, r as u32);
    }
    for (i, (role, paradigm)) in [(1, 1), (1, 2), (1, 2), (28, 4), (28, 4)]
        .iter()
        .enumerate()
    {
        a.region(i as u32, 4 + i as u32, *role, *paradigm);
    }
    let locations: Vec<u64> = (0..ranks).map(|r| r << 32).collect();
    a.group(0, 9, 4, 4, &locations)
        .group(1, 9, 5, 4, &(0..ranks).collect::<Vec<_>>());
    a.comm(0, 9, 1)
        .metric_member(0, 10, 0x00, 4, 11)
        .metric_class(0, &[0]);
    for r in 0..ranks {
        write_rank(&mut a, r, ranks, first, events / PER_ITERATION);
    }
    let anchor = a.write(&dir, "traces")?;
    eprintln!("wrote {}", anchor.display());
    Ok(())
}

/// Rank `r`'s events: `iterations` of the loop, inside `main`.
fn write_rank(a: &mut Archive, r: u64, ranks: u64, first: u64, iterations: u64) {
    let files = a.files(r << 32);
    let mut t = first + 1000 * r;
    let mut step = |k: u64| {
        t += 2500 + (k * 7919 + r * 104_729) % 5000;
        t
    };
    let enter = |region: u32| {
        move |b: &mut tracepipe::formats::otf2::encode::Buf| {
            b.u32c(region);
        }
    };
    files.events.push(&event(step(0), 12, true, &[], enter(0)));
    let (peer_out, peer_in) = (((r + 1) % ranks) as u32, ((r + ranks - 1) % ranks) as u32);
    for k in 0..iterations {
        files.events.push(&event(step(k), 12, true, &[], enter(1)));
        files.events.push(&event(step(k), 12, true, &[], enter(2)));
        files.events.push(&event(step(k), 13, true, &[], enter(2)));
        files.events.push(&event(step(k), 13, true, &[], enter(1)));
        files.events.push(&event(step(k), 14, false, &[], |b| {
            b.u32c(peer_out).u32c(0).u32c((k % 64) as u32).u64c(4096);
        }));
        files.events.push(&event(step(k), 12, true, &[], enter(4)));
        files.events.push(&event(step(k), 18, false, &[], |b| {
            b.u32c(peer_in).u32c(0).u32c((k % 64) as u32).u64c(4096);
        }));
        files.events.push(&event(step(k), 13, true, &[], enter(4)));
        files.events.push(&event(step(k), 31, false, &[], |b| {
            b.u32c(0).u8(1).u8(4).u64c(k * 1000 + r);
        }));
    }
    files.events.push(&event(step(0), 13, true, &[], enter(0)));
}
