//! The OTF2 reader on an archive made by the project's encoder, then edited
//! where the input says: half the edits hit the fields the encoder marked
//! (record lengths, references, counts, chunk sizes), half any byte, with
//! small, large or raw values; some cut a file; then sliced (a slice that
//! thins and stops equals the slice of the rows read whole). Errors, never
//! panics or runaway allocations.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

mod common;

use common::edit;
use libfuzzer_sys::fuzz_target;
use tracepipe::formats::otf2::archive::Archive;
use tracepipe::formats::otf2::encode::{event, Buf};
use tracepipe::formats::otf2::reader::Otf2Source;
use tracepipe::pipe::RecordSource;
use tracepipe::Record;

/// The pristine archive: its files and their marked fields.
fn template() -> &'static Vec<(PathBuf, Buf)> {
    static FILES: OnceLock<Vec<(PathBuf, Buf)>> = OnceLock::new();
    FILES.get_or_init(|| {
        // Chunks of 1 KiB, so a few dozen events cross chunk boundaries.
        let mut a = Archive::new(1024);
        a.clock(1_000_000, 500, 10_000);
        for (i, s) in ["", "n", "r0", "r1", "t", "main", "send", "w", "m", "k"]
            .iter()
            .enumerate()
        {
            a.string(i as u32, s);
        }
        a.node(0, 1, 0, u32::MAX)
            .group_of_locations(0, 2, 1, 0)
            .group_of_locations(1, 3, 1, 0);
        a.location(0, 4, 1, 0).location(1 << 32, 4, 1, 1);
        a.region(0, 5, 1, 1).region(1, 6, 28, 4);
        a.group(0, 7, 4, 4, &[0, 1 << 32])
            .group(1, 7, 5, 4, &[0, 1])
            .comm(0, 7, 1);
        a.metric_member(0, 8, 0x10, 10, 0)
            .metric_class(0, &[0])
            .attribute(0, 9, 3);
        let files = a.files(0);
        let local = files.local_defs();
        // A mapping table of regions (dense, swapping 0 and 1), two clock offsets.
        local.record(5, |b| {
            b.u8(3).u64c(2).u8(0).u64c(1).u64c(0);
        });
        local.record(6, |b| {
            b.u64(1000).i64c(5).u64(0);
        });
        local.record(6, |b| {
            b.u64(9000).i64c(-5).u64(0);
        });
        for (loc, (first, second)) in [(0u64, (1u32, 0u32)), (1 << 32, (0, 1))] {
            let l = a.files(loc);
            l.events.push(&event(1000, 12, true, &[(0, 3, 7)], |b| {
                b.u32c(first);
            }));
            for k in 0..60u64 {
                let t = 1100 + 100 * k;
                l.events.push(&event(t, 12, true, &[], |b| {
                    b.u32c(second);
                }));
                let id = if loc == 0 { 14 } else { 18 };
                l.events.push(&event(t + 10, id, false, &[], |b| {
                    b.u32c(1 - (loc >> 32) as u32)
                        .u32c(0)
                        .u32c(k as u32)
                        .u64c(8);
                }));
                l.events.push(&event(t + 20, 13, true, &[], |b| {
                    b.u32c(second);
                }));
                l.events.push(&event(t + 30, 31, false, &[], |b| {
                    b.u32c(0).u8(1).u8(10).u64c(1.5f64.to_bits());
                }));
            }
            l.events.push(&event(9000, 22, false, &[], |_| {}));
            l.events.push(&event(9100, 23, false, &[], |b| {
                b.u8(11).u32c(0).u32c(u32::MAX).u64c(8).u64c(8);
            }));
            l.events.push(&event(9200, 13, true, &[], |b| {
                b.u32c(first);
            }));
        }
        a.into_files("traces")
    })
}

fuzz_target!(|data: &[u8]| {
    let mut files: Vec<(PathBuf, Vec<u8>)> = template()
        .iter()
        .map(|(p, b)| (p.clone(), b.bytes.clone()))
        .collect();
    for e in data.chunks_exact(8).take(16) {
        let i = usize::from(e[0]) % files.len();
        match e[3] >> 4 {
            // A marked field, overwritten as `edit` writes values.
            0..=7 => {
                let marks = &template()[i].1.marks;
                if marks.is_empty() {
                    continue;
                }
                let at = marks[usize::from(u16::from_le_bytes([e[1], e[2]])) % marks.len()];
                let mut e = e.to_vec();
                e[1..3].copy_from_slice(&(at as u16).to_le_bytes());
                edit(&mut files[i..=i], &{
                    e[0] = 0;
                    e
                });
            }
            // A file cut.
            8 => {
                let file = &mut files[i].1;
                let keep = usize::from(u16::from_le_bytes([e[1], e[2]])) % (file.len() + 1);
                file.truncate(keep);
            }
            _ => edit(&mut files, e),
        }
    }
    let dir = std::env::temp_dir().join(format!("otf2-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, bytes) in &files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    if let Ok(mut source) = Otf2Source::open("fuzz", &dir.join("traces.otf2"), &Default::default())
    {
        let mut rec = Record::default();
        let mut rows = 0u32;
        while let Ok(true) = source.next_record(&mut rec) {
            rows += 1;
            if rows > 100_000 {
                break;
            }
        }
    }
    // The slicer's stop and thinning paths agree with reading whole.
    common::thinned_slice_agrees(data, |options| {
        let source = Otf2Source::open("fuzz", &dir.join("traces.otf2"), options).ok()?;
        Some(Box::new(source) as Box<dyn RecordSource>)
    });
});
