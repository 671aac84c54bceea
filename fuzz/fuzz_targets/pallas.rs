//! The Pallas reader on a trace written by the project's writer, then edited
//! where the input says: sizes, counts, offsets and tokens replaced by small,
//! large or raw values, read as rows and summed as frames (`trace-stat
//! profile`), and sliced (a slice that thins and stops equals the slice of
//! the rows read whole). Errors, never panics or runaway allocations.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod common;

use common::edit;
use libfuzzer_sys::fuzz_target;
use tracepipe::error::Result;
use tracepipe::formats::pallas::archive::{BlockCompression, Encoding};
use tracepipe::formats::pallas::reader::sum_frames;
use tracepipe::formats::pallas::reader::PallasSource;
use tracepipe::formats::pallas::writer::{
    event_token, loop_token, sequence_token, ArchiveSpec, EventSpec, ThreadSpec, TraceSpec,
};
use tracepipe::io::Input;
use tracepipe::pipe::{FrameSums, RecordSource};
use tracepipe::Record;

/// Frames summed into nothing.
struct NoSums;

impl FrameSums for NoSums {
    fn row(&mut self, _: &Record) -> Result<()> {
        Ok(())
    }
    fn durations(&mut self, _: &Record, _: &[u64]) -> Result<()> {
        Ok(())
    }
    fn exclusive(&mut self, _: &Record, _: i128) -> Result<()> {
        Ok(())
    }
}

/// The pristine trace: every file, by path relative to the trace folder.
fn template() -> &'static Vec<(PathBuf, Vec<u8>)> {
    static FILES: OnceLock<Vec<(PathBuf, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("pallas-fuzz-template-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut trace = TraceSpec::new(BlockCompression::Zstd, Encoding::None);
        trace.defs.strings = vec![(0, "p".into()), (1, "f".into()), (2, "g".into())];
        trace.defs.regions = vec![(1, 1), (2, 2)];
        let enter = |region: u32| EventSpec::new(2, &[(u64::from(region), 4)]);
        let leave = |region: u32| EventSpec::new(3, &[(u64::from(region), 4)]);
        // A message to itself: peer 0, communicator 0, tag 0, 8 bytes.
        let half = |record: u32| EventSpec::new(record, &[(0, 4), (0, 4), (0, 4), (8, 8)]);
        let mut thread = ThreadSpec {
            events: vec![
                Some(enter(1)),
                Some(leave(1)),
                Some(enter(2)),
                Some(leave(2)),
                Some(half(4)),
                Some(half(8)),
            ],
            sequences: vec![
                Some(vec![event_token(0), loop_token(0), event_token(1)]),
                Some(vec![
                    event_token(2),
                    event_token(4),
                    event_token(3),
                    event_token(5),
                ]),
            ],
            loops: vec![Some((sequence_token(1), 50))],
            ..ThreadSpec::default()
        };
        // Timestamps in expansion order: enter f, 50 × (enter g, send,
        // leave g, receive), leave f.
        let mut t = 10u64;
        let mut stamp = |slot: usize, thread: &mut ThreadSpec| {
            t += 3 + (t % 5);
            thread.events[slot].as_mut().unwrap().timestamps.push(t);
        };
        stamp(0, &mut thread);
        for _ in 0..50 {
            for slot in [2, 4, 3, 5] {
                stamp(slot, &mut thread);
            }
        }
        stamp(1, &mut thread);
        trace.archives = vec![ArchiveSpec {
            threads: vec![thread],
            ..ArchiveSpec::default()
        }];
        trace.write(&dir).expect("template written");
        let mut files = Vec::new();
        collect(&dir, &dir, &mut files);
        let _ = std::fs::remove_dir_all(&dir);
        files
    })
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.push((path.strip_prefix(root).unwrap().to_path_buf(), bytes));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut files = template().clone();
    for e in data.chunks_exact(8).take(16) {
        edit(&mut files, e);
    }
    let dir = std::env::temp_dir().join(format!("pallas-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, bytes) in &files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    if let Ok(mut source) = PallasSource::open("fuzz", &dir, &Default::default()) {
        let mut rec = Record::default();
        let mut rows = 0u32;
        // A grammar may legitimately expand to many events; a bound keeps
        // each run short.
        while let Ok(true) = source.next_record(&mut rec) {
            rows += 1;
            if rows > 100_000 {
                break;
            }
        }
    }
    let counter = Default::default();
    if let Ok(input) = Input::open(dir.to_str().unwrap(), &counter) {
        let _ = sum_frames(input, &Default::default(), &mut NoSums);
    }
    // The slicer's stop and thinning paths agree with reading whole.
    common::thinned_slice_agrees(data, |options| {
        let source = PallasSource::open("fuzz", &dir, options).ok()?;
        Some(Box::new(source) as Box<dyn RecordSource>)
    });
});
