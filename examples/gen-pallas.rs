//! Writes a synthetic Pallas trace folder for benchmarks and tests:
//! `cargo run --release --example gen-pallas -- DIR [EVENTS_PER_THREAD] [THREADS] [CODEC]`
//! (defaults: 1 000 000 events, 2 threads, `zstd`; codecs: none, masking,
//! zstd, zstd+masking, histogram, zstd+histogram, zfp).
//!
//! Each thread runs `main { N × { compute { 3 × kernel }, send, recv, tick } }`
//! with irregular time steps, so the grammar is a few sequences and loops while
//! the timestamp vectors hold every occurrence.

use std::path::PathBuf;

use tracepipe::formats::pallas::archive::{BlockCompression, Encoding};
use tracepipe::formats::pallas::writer::{
    event_token, loop_token, sequence_token, ArchiveSpec, Defs, EventSpec, ThreadSpec, TraceSpec,
};
use tracepipe::formats::pallas::RecordId;

fn event(record: RecordId, fields: &[(u64, usize)]) -> Option<EventSpec> {
    Some(EventSpec::new(record.number(), fields))
}

fn codec(name: &str) -> (BlockCompression, Encoding) {
    match name {
        "none" => (BlockCompression::None, Encoding::None),
        "masking" => (BlockCompression::None, Encoding::Masking),
        "zstd" => (BlockCompression::Zstd, Encoding::None),
        "zstd+masking" => (BlockCompression::Zstd, Encoding::Masking),
        "histogram" => (BlockCompression::Histogram, Encoding::None),
        "zstd+histogram" => (BlockCompression::ZstdHistogram, Encoding::None),
        "zfp" => (BlockCompression::Zfp, Encoding::None),
        _ => panic!("unknown codec {name}"),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .expect("usage: gen-pallas DIR [EVENTS] [THREADS] [CODEC]"),
    );
    let events: u64 = args.next().map_or(Ok(1_000_000), |s| s.parse())?;
    let threads: u32 = args.next().map_or(Ok(2), |s| s.parse())?;
    let (compression, encoding) = codec(&args.next().unwrap_or_else(|| "zstd".into()));
    const PER_ITERATION: u64 = 11;
    let iterations = (events.saturating_sub(2) / PER_ITERATION).max(1) as u32;
    let processes = threads.div_ceil(2).max(1);
    let mut trace = TraceSpec::new(compression, encoding);
    trace.defs = Defs {
        strings: ["main", "compute", "kernel", "tick"]
            .iter()
            .enumerate()
            .map(|(i, s)| (i as u32, s.to_string()))
            .chain((0..processes).map(|p| (100 + p, format!("rank {p}"))))
            .chain((0..threads).map(|t| (200 + t, format!("thread {t}"))))
            .collect(),
        regions: vec![(0, 0), (1, 1), (2, 2)],
        ..Defs::default()
    };
    trace.metadata = vec![("generator".into(), "tracepipe gen-pallas".into())];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for p in 0..processes {
        let mut archive = ArchiveSpec {
            id: p,
            name: 100 + p,
            ..ArchiveSpec::default()
        };
        for t in (2 * p)..(2 * p + 2).min(threads) {
            let next_rank = ((p + 1) % processes) as u64;
            let prev_rank = ((p + processes - 1) % processes) as u64;
            let mut thread = ThreadSpec {
                id: t,
                name: 200 + t,
                events: vec![
                    event(RecordId::Enter, &[(0, 4)]),
                    event(RecordId::Leave, &[(0, 4)]),
                    event(RecordId::Enter, &[(1, 4)]),
                    event(RecordId::Leave, &[(1, 4)]),
                    event(RecordId::Enter, &[(2, 4)]),
                    event(RecordId::Leave, &[(2, 4)]),
                    event(RecordId::Generic, &[(3, 4)]),
                    event(
                        RecordId::MpiSend,
                        &[(next_rank, 4), (0, 4), (t as u64, 4), (4096, 8)],
                    ),
                    event(
                        RecordId::MpiRecv,
                        &[(prev_rank, 4), (0, 4), (t as u64, 4), (4096, 8)],
                    ),
                ],
                sequences: vec![
                    Some(vec![event_token(0), loop_token(0), event_token(1)]),
                    Some(vec![
                        event_token(2),
                        loop_token(1),
                        event_token(3),
                        event_token(7),
                        event_token(8),
                        event_token(6),
                    ]),
                    Some(vec![event_token(4), event_token(5)]),
                ],
                loops: vec![
                    Some((sequence_token(1), iterations)),
                    Some((sequence_token(2), 3)),
                ],
                maps: None,
                root: 0,
            };
            // Timestamps in expansion order: main, then each iteration.
            let mut clock = 1_000_000u64;
            let mut tick = |e: usize, thread: &mut ThreadSpec| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                clock += 5 + state % 40;
                thread.events[e].as_mut().unwrap().timestamps.push(clock);
            };
            tick(0, &mut thread);
            for _ in 0..iterations {
                tick(2, &mut thread);
                for _ in 0..3 {
                    tick(4, &mut thread);
                    tick(5, &mut thread);
                }
                for e in [3, 7, 8, 6] {
                    tick(e, &mut thread);
                }
            }
            tick(1, &mut thread);
            archive.threads.push(thread);
        }
        trace.archives.push(archive);
    }
    trace.write(&dir)?;
    eprintln!(
        "wrote {} ({} threads x {} events)",
        dir.display(),
        threads,
        2 + PER_ITERATION * iterations as u64
    );
    Ok(())
}
