//! Every reader locates an error that a sink raises about one of its rows:
//! the line (or event) named is the one the row came from, however far the
//! reader has read ahead (a second thread, the Pajé reorder window).

mod common;

use std::io::Cursor;

use common::scratch;
use tracepipe::error::{Error, Result};
use tracepipe::exec::pump::pump;
use tracepipe::formats::pallas::archive::{BlockCompression, Encoding};
use tracepipe::formats::pallas::writer::{
    event_token, loop_token, sequence_token, ArchiveSpec, EventSpec, ThreadSpec, TraceSpec,
};
use tracepipe::formats::stream::tsv::RowEncoder;
use tracepipe::pipe::{ReadOptions, RecordSink, RecordSource};
use tracepipe::pool::{Pool, Threads};
use tracepipe::{Kind, Record, Symbols};

/// Events in every fixture, and the one the sink refuses.
const EVENTS: u64 = 20_000;
const BAD: u64 = 15_000;

/// Fails on the `BAD`-th `event` row.
struct RefuseEvent {
    seen: u64,
    symbols: Symbols,
}

impl RecordSink for RefuseEvent {
    fn write(&mut self, rec: &Record) -> Result<()> {
        if rec.kind == Kind::Event {
            self.seen += 1;
            if self.seen == BAD {
                let name = self.symbols.text(rec.name);
                return Err(Error::Record(format!("refused `{name}`")));
            }
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// The error for each way of threading (the reader's and the pump's),
/// which must be the same; `open` opens the reader with its options (the symbol table the sink reads).
fn error_of(mut open: impl FnMut(&ReadOptions) -> Box<dyn RecordSource>) -> String {
    let mut messages = Vec::new();
    for threads in [Threads::ONE, Threads::new(2), Threads::new(4)] {
        let opts = ReadOptions {
            pool: Pool::new(threads),
            ..ReadOptions::default()
        };
        let mut source = open(&opts);
        let mut sink = RefuseEvent {
            seen: 0,
            symbols: opts.symbols.clone(),
        };
        let lines = || Box::new(RowEncoder::standard(opts.symbols.clone())) as _;
        let err = pump(&mut *source, &mut sink, &mut |_| {}, (&opts.pool, &lines)).unwrap_err();
        messages.push(err.to_string());
    }
    assert!(
        messages.iter().all(|m| *m == messages[0]),
        "the threads differ: {messages:?}"
    );
    messages.pop().unwrap()
}

#[test]
fn tsv() {
    let mut text = String::from(common::HEADER);
    text.push_str("\nmeta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\ncontainer\t\t\tt\t\t\t\t\t\t\t\t\t\t\t\n");
    for k in 1..=EVENTS {
        text.push_str(&format!("event\t{k}\t\tt\t\te{k}\t\t\t\t\t\t\t\t\t\n"));
    }
    let err = error_of(|opts| {
        let reader = tracepipe::formats::stream::tsv::TsvReader::new(
            "s.tsv",
            Cursor::new(text.clone()),
            opts.symbols.clone(),
        );
        Box::new(reader.unwrap())
    });
    // Header, meta, container: event k is on line k + 3.
    assert_eq!(err, format!("s.tsv:{}: refused `e{BAD}`", BAD + 3));
}

#[test]
fn jsonl() {
    let mut text = String::from(
        "{\"kind\":\"meta\",\"name\":\"format\",\"value\":\"tracepipe-stream/1\"}\n{\"kind\":\"container\",\"loc\":\"t\"}\n",
    );
    for k in 1..=EVENTS {
        text.push_str(&format!(
            "{{\"kind\":\"event\",\"time\":{k},\"loc\":\"t\",\"name\":\"e{k}\"}}\n"
        ));
    }
    let err = error_of(|opts| {
        let reader = tracepipe::formats::stream::jsonl::JsonlReader::new(
            "s.jsonl",
            Cursor::new(text.clone()),
            opts.symbols.clone(),
        );
        Box::new(reader)
    });
    assert_eq!(err, format!("s.jsonl:{}: refused `e{BAD}`", BAD + 2));
}

#[test]
fn paje_behind_the_reorder_window() {
    let mut text = String::new();
    for (name, id, fields) in [
        (
            "PajeDefineContainerType",
            0,
            "Alias string\n% Type string\n% Name string",
        ),
        (
            "PajeDefineEventType",
            1,
            "Alias string\n% Type string\n% Name string",
        ),
        (
            "PajeCreateContainer",
            2,
            "Time date\n% Alias string\n% Type string\n% Container string\n% Name string",
        ),
        (
            "PajeNewEvent",
            3,
            "Time date\n% Type string\n% Container string\n% Value string",
        ),
    ] {
        text.push_str(&format!(
            "%EventDef {name} {id}\n% {fields}\n%EndEventDef\n"
        ));
    }
    text.push_str("0 CT 0 \"Thread\"\n1 ET CT \"Mark\"\n2 0 t CT 0 \"t\"\n");
    let before = text.lines().count() as u64;
    for k in 1..=EVENTS {
        text.push_str(&format!("3 {k}e-6 ET t e{k}\n"));
    }
    let err = error_of(|opts| {
        let reader = tracepipe::formats::paje::reader::PajeReader::new(
            "p.paje",
            Cursor::new(text.clone()),
            opts,
        );
        Box::new(reader)
    });
    assert!(
        err.starts_with(&format!("p.paje:{}: refused", before + BAD)),
        "{err}"
    );
}

#[test]
fn trace_sorted_by_time() {
    // Listed in reverse time order: the reader sorts, the line stays the row's.
    let mut text = String::from("TU NANOSECONDS\n");
    for k in (1..=EVENTS).rev() {
        text.push_str(&format!("E {k} {k} ; name = e{k}\n"));
    }
    let err = error_of(|opts| {
        let reader = tracepipe::formats::trace::reader::TraceReader::new(
            "t.etf",
            Cursor::new(text.clone()),
            opts,
        );
        Box::new(reader.unwrap())
    });
    // Event k (the k-th by time) is on line EVENTS - k + 2.
    assert!(
        err.starts_with(&format!("t.etf:{}: refused", EVENTS - BAD + 2)),
        "{err}"
    );
}

#[test]
fn pallas_by_event_index() {
    let dir = scratch("sink_error_pallas");
    let mut trace = TraceSpec::new(BlockCompression::Zstd, Encoding::None);
    trace.defs.strings = vec![(0, "p".into()), (1, "mark".into())];
    let thread = ThreadSpec {
        events: vec![Some(EventSpec {
            // GENERIC, named by string 1.
            record: 58,
            payload: 1u32.to_le_bytes().to_vec(),
            timestamps: (1..=EVENTS).map(|k| 10 * k).collect(),
            ..EventSpec::default()
        })],
        sequences: vec![Some(vec![loop_token(0)]), Some(vec![event_token(0)])],
        loops: vec![Some((sequence_token(1), EVENTS as u32))],
        ..ThreadSpec::default()
    };
    trace.archives = vec![ArchiveSpec {
        threads: vec![thread],
        ..ArchiveSpec::default()
    }];
    trace.write(&dir).unwrap();
    let err = error_of(|opts| {
        let source = tracepipe::formats::pallas::reader::PallasSource::open("trace", &dir, opts);
        Box::new(source.unwrap())
    });
    assert!(
        err.contains(&format!(": event {BAD}: refused `mark`")),
        "{err}"
    );
}

#[test]
fn stf_by_record_offset() {
    let dir = scratch("sink_error_stf");
    let mut text = String::from(common::HEADER);
    text.push_str("\ncontainer\t\t\tt\t\t\t\t\t\t\t\t\t\t\t\n");
    for k in 1..=EVENTS {
        text.push_str(&format!("event\t{k}\t\tt\t\te{k}\t\t\t\t\t\t\t\t\t\n"));
    }
    let input = dir.join("s.tsv");
    std::fs::write(&input, text).unwrap();
    let stf = dir.join("s.stf");
    common::cat(&["-t", "stf", "-o", stf.to_str().unwrap()], &input).unwrap();
    let err = error_of(|opts| {
        let counter = tracepipe::io::ByteCounter::default();
        let input = tracepipe::io::Input::open(stf.to_str().unwrap(), &counter).unwrap();
        tracepipe::formats::stf::reader::open_reader(input, opts).unwrap()
    });
    // The process file: its 9-byte header, then one 71-byte `tracepipe_row`
    // record per row, the container's first.
    let offset = 9 + 71 * BAD;
    assert_eq!(
        err,
        format!("{}.f.0: byte {offset}: refused `e{BAD}`", stf.display())
    );
}

#[test]
fn stf_dump_by_line() {
    let mut text = String::from("NCPUS 1\nCLKPERIOD 1e-09\n");
    for k in 1..=EVENTS {
        text.push_str(&format!("{k} MARK {k}\n"));
    }
    let dir = scratch("sink_error_stf_dump");
    let path = dir.join("dump.txt");
    std::fs::write(&path, text).unwrap();
    let err = error_of(|opts| {
        let counter = tracepipe::io::ByteCounter::default();
        let input = tracepipe::io::Input::open(path.to_str().unwrap(), &counter).unwrap();
        tracepipe::formats::stf::dump::open_reader(input, opts).unwrap()
    });
    // Two header lines: event k is on line k + 2.
    assert_eq!(
        err,
        format!("{}:{}: refused `MARK`", path.display(), BAD + 2)
    );
}

#[test]
fn otf2_by_record_offset() {
    use tracepipe::formats::otf2::archive::Archive;
    use tracepipe::formats::otf2::encode::event;
    let dir = scratch("sink_error_otf2");
    let mut archive = Archive::new(256 * 1024);
    archive
        .clock(1_000_000_000, 0, 0)
        .string(0, "m")
        .string(1, "t");
    archive
        .node(0, 0, 0, u32::MAX)
        .group_of_locations(0, 0, 1, 0);
    archive.location(0, 1, 1, 0);
    for k in 1..=EVENTS {
        // MEASUREMENT_ON_OFF, 12 bytes with its timestamp.
        let e = event(10 * k, 11, false, &[], |b| {
            b.u8(1);
        });
        archive.files(0).events.push(&e);
    }
    let anchor = archive.write(&dir, "traces").unwrap();
    let err = error_of(|opts| {
        let source = tracepipe::formats::otf2::reader::Otf2Source::open("a", &anchor, opts);
        Box::new(source.unwrap())
    });
    // The chunk header (18 bytes), then per event its timestamp (9) and
    // record (3): the record of event k is at 18 + 12 (k - 1) + 9.
    let offset = 18 + 12 * (BAD - 1) + 9;
    let file = dir.join("traces/0.evt");
    assert_eq!(
        err,
        format!(
            "{}: byte {offset}: refused `MEASUREMENT_ON_OFF`",
            file.display()
        )
    );
}

/// Chrome trace JSON: rows sorted (the events come in reverse time
/// order here), each located at its event's byte offset.
#[test]
fn chrome() {
    let mut text = String::from("[");
    let mut offsets = Vec::new();
    for k in (1..=EVENTS).rev() {
        offsets.push((k, text.len() as u64));
        text.push_str(&format!(
            "{{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":{k},\"name\":\"e{k}\"}},\n"
        ));
    }
    let at = offsets.iter().find(|(k, _)| *k == BAD).unwrap().1;
    let err = error_of(|opts| {
        let reader =
            tracepipe::formats::chrome::ChromeReader::read("t.json", text.as_bytes(), opts);
        Box::new(reader.unwrap())
    });
    assert_eq!(err, format!("t.json: byte {at}: refused `e{BAD}`"));
}

/// Parquet: a file's row, and in a partitioned folder, the row of the
/// file it came from.
#[test]
fn parquet_by_row() {
    let dir = scratch("sink-errors-parquet");
    let mut text = String::from(common::HEADER);
    text.push_str("\nmeta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\ncontainer\t\t\tt\t\t\t\t\t\t\t\t\t\t\t\n");
    for k in 1..=EVENTS {
        text.push_str(&format!("event\t{k}\t\tt\t\te{k}\t\t\t\t\t\t\t\t\t\n"));
    }
    let tsv = dir.join("s.tsv");
    std::fs::write(&tsv, &text).unwrap();
    let file = dir.join("s.parquet");
    let folder = dir.join("by-kind");
    for (out, args) in [(&file, &[][..]), (&folder, &["--partition-by", "kind"][..])] {
        let mut cmd = common::bin("trace-cat");
        cmd.arg(&tsv)
            .args(["-t", "parquet", "--row-group", "1000", "-o"]);
        cmd.arg(out).args(args).assert().success();
    }
    let open = |path: &std::path::Path| {
        let name = path.to_str().unwrap().to_string();
        move |opts: &ReadOptions| {
            let input = tracepipe::io::Input::open(&name, &Default::default()).unwrap();
            tracepipe::formats::stream::parquet::open_reader(input, opts).unwrap()
        }
    };
    // The format row, the container, then event k.
    let err = error_of(open(&file));
    assert_eq!(
        err,
        format!("{}: row {}: refused `e{BAD}`", file.display(), BAD + 2)
    );
    // Events alone, a thousand to a file.
    let err = error_of(open(&folder));
    let part = folder.join(format!("kind=event/part-{}.parquet", (BAD - 1) / 1000));
    let row = (BAD - 1) % 1000 + 1;
    assert_eq!(
        err,
        format!("{}: row {row}: refused `e{BAD}`", part.display())
    );
}

/// Paraver: each row located at its record's line; an event type with no
/// `.pcf` is an `event` row.
#[test]
fn paraver_by_line() {
    let mut text = String::from("#Paraver (x):99999_ns:0:1:1(1:0)\n");
    for k in 1..=EVENTS {
        text.push_str(&format!("2:0:1:1:1:{k}:7:{k}\n"));
    }
    let err = error_of(|opts| {
        let input: Box<dyn std::io::BufRead> = Box::new(std::io::Cursor::new(text.clone()));
        let reader = tracepipe::formats::paraver::reader::ParaverReader::open("t.prv", input, opts);
        Box::new(reader.unwrap())
    });
    assert_eq!(err, format!("t.prv:{}: refused `type 7`", BAD + 1));
}
