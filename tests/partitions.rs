//! A location selection known before reading (`-l`, `-L`, `--under`, on
//! every command that reads) gives the rows filtering gives, and an OTF2 or
//! Pallas reader leaves the files of the locations it does not select
//! unread: with them deleted, the selection still reads.

mod common;

use std::path::{Path, PathBuf};

use common::{run as output, scratch};
use tracepipe::formats::otf2::archive::Archive;
use tracepipe::formats::otf2::encode::event;
use tracepipe::formats::pallas::archive::{BlockCompression, Encoding};
use tracepipe::formats::pallas::writer::{
    event_token, loop_token, sequence_token, ArchiveSpec, EventSpec, ThreadSpec, TraceSpec,
};

/// The rows `trace-filter` keeps of the whole trace read.
fn filtered(args: &[&str], input: &Path) -> String {
    let dir = input.parent().unwrap().join("whole.tsv");
    std::fs::write(&dir, output("trace-cat", &[], input).unwrap()).unwrap();
    output("trace-filter", args, &dir).unwrap()
}

/// Three ranks of two threads; every thread sends to the next rank's first.
fn otf2_archive(dir: &Path) -> PathBuf {
    let mut a = Archive::new(256 * 1024);
    a.clock(1_000_000_000, 0, 0);
    let names = [
        "",
        "node",
        "rank 0",
        "rank 1",
        "rank 2",
        "Master thread",
        "worker",
        "f",
        "w",
    ];
    for (i, s) in names.iter().enumerate() {
        a.string(i as u32, s);
    }
    a.node(0, 1, 0, u32::MAX);
    let mut masters = Vec::new();
    for r in 0..3u64 {
        a.group_of_locations(r as u32, 2 + r as u32, 1, 0);
        a.location(r << 32, 5, 1, r as u32)
            .location((r << 32) + 1, 6, 1, r as u32);
        masters.push(r << 32);
    }
    a.region(0, 7, 1, 1);
    a.group(0, 8, 4, 4, &masters)
        .group(1, 8, 5, 4, &[0, 1, 2])
        .comm(0, 8, 1);
    for r in 0..3u64 {
        for t in 0..2u64 {
            let l = a.files((r << 32) + t);
            for k in 0..50u64 {
                let at = 1000 * k + 10 * r + t;
                l.events.push(&event(at, 12, true, &[], |b| {
                    b.u32c(0);
                }));
                if t == 0 {
                    l.events.push(&event(at + 1, 14, false, &[], |b| {
                        b.u32c(((r + 1) % 3) as u32).u32c(0).u32c(1).u64c(8);
                    }));
                }
                l.events.push(&event(at + 2, 13, true, &[], |b| {
                    b.u32c(0);
                }));
            }
        }
    }
    a.write(dir, "traces").unwrap()
}

#[test]
fn otf2_selections_read_what_filtering_keeps_and_only_their_files() {
    let dir = scratch("partitions-otf2");
    let anchor = otf2_archive(&dir);
    let selections: [&[&str]; 4] = [
        &["-l", "rank 1/*"],
        &["-L", "worker"],
        &["--under", "rank 2"],
        &["-l", "rank 0/*", "-L", "Master thread"],
    ];
    for sel in selections {
        let got = output("trace-cat", sel, &anchor).unwrap();
        assert_eq!(got, filtered(sel, &anchor), "{sel:?}");
        assert!(
            got.lines().any(|l| l.starts_with("enter")),
            "{sel:?}: {got}"
        );
    }
    // Every command takes the options.
    let profile = output("trace-stat", &["profile", "--under", "rank 1"], &anchor).unwrap();
    assert!(profile.contains("f\t100\t"), "{profile}");
    // Rank 0's files gone, a selection without it still reads.
    for t in [0u64, 1] {
        std::fs::remove_file(dir.join(format!("traces/{t}.evt"))).unwrap();
    }
    assert!(output("trace-cat", &[], &anchor)
        .unwrap_err()
        .contains("traces/0.evt"));
    output("trace-cat", &["--under", "rank 1"], &anchor).unwrap();
    output("trace-stat", &["summary", "-l", "rank 2/*"], &anchor).unwrap();
    // Inverted, the locations are conditions of trace-filter's own, and
    // every file is read.
    let err = output("trace-filter", &["--invert", "-l", "rank 0/*"], &anchor).unwrap_err();
    assert!(err.contains("traces/0.evt"), "{err}");
}

/// Two processes of two threads, each thread a loop of one event.
fn pallas_trace(dir: &Path) {
    let mut trace = TraceSpec::new(BlockCompression::None, Encoding::None);
    trace.defs.strings = vec![(0, "p".into()), (1, "mark".into())];
    trace
        .defs
        .strings
        .extend((0..4).map(|t| (2 + t, format!("thread {t}"))));
    trace.archives = (0..2)
        .map(|p| ArchiveSpec {
            id: p,
            threads: (0..2)
                .map(|t| ThreadSpec {
                    id: 2 * p + t,
                    name: 2 + 2 * p + t,
                    events: vec![Some(EventSpec {
                        // GENERIC, named by string 1.
                        record: 58,
                        payload: 1u32.to_le_bytes().to_vec(),
                        timestamps: (1..=20).map(|k| 100 * k + u64::from(2 * p + t)).collect(),
                        ..EventSpec::default()
                    })],
                    sequences: vec![Some(vec![loop_token(0)]), Some(vec![event_token(0)])],
                    loops: vec![Some((sequence_token(1), 20))],
                    ..ThreadSpec::default()
                })
                .collect(),
            ..ArchiveSpec::default()
        })
        .collect();
    trace.write(dir).unwrap();
}

#[test]
fn pallas_selections_read_what_filtering_keeps_and_only_their_files() {
    let dir = scratch("partitions-pallas");
    pallas_trace(&dir);
    for (sel, rows) in [
        (&["-l", "P1T*"][..], 40),
        (&["--under", "P0"], 40),
        (&["-L", "thread 3"], 20),
    ] {
        let got = output("trace-cat", sel, &dir).unwrap();
        assert_eq!(got, filtered(sel, &dir), "{sel:?}");
        assert_eq!(
            got.lines().filter(|l| l.starts_with("event")).count(),
            rows,
            "{sel:?}"
        );
    }
    let whole = output("trace-cat", &[], &dir).unwrap();
    assert!(
        whole
            .lines()
            .any(|l| l.starts_with("container") && l.contains("\tthread 3\t")),
        "{whole}"
    );
    std::fs::remove_dir_all(dir.join("archive_0/thread_0")).unwrap();
    assert!(output("trace-cat", &[], &dir).is_err());
    output("trace-cat", &["--under", "P1"], &dir).unwrap();
}
