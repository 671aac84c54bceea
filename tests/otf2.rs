//! OTF2 archives written by the reference library (`tests/otf2/gen.py`,
//! through Debian's python3-otf2) read by tracepipe and compared with what
//! the reference library's `otf2-print` prints: every event of every
//! location, in order, at its time, with its fields and attributes; and the
//! analyses that follow (messages matched, region times).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, col, kind_of, scratch};
use tracepipe::formats::otf2::archive::{def, Archive};
use tracepipe::formats::otf2::encode::{event, Buf};

/// A Python that has the reference library's bindings (`import otf2`), when
/// it and `otf2-print` are installed; under CI (`CI` set) their absence is
/// a failure, since `.ci/setup --tests` installs them.
fn reference() -> Option<PathBuf> {
    let printer = Command::new("otf2-print")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let python = ["python3", "/usr/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| {
            Command::new(p)
                .args(["-c", "import otf2"])
                .output()
                .is_ok_and(|o| o.status.success())
        });
    match (printer, python) {
        (true, Some(p)) => Some(p),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "otf2-print or python3-otf2 is missing (CI is set; .ci/setup --tests installs them)"
            );
            common::skipped("otf2-print or python3-otf2 is missing");
            None
        }
    }
}

/// Writes archive `variant` of the generator; returns its anchor file.
fn generate(python: &Path, variant: &str) -> PathBuf {
    let dir = scratch(&format!("otf2-{variant}"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otf2/gen.py");
    let out = Command::new(python)
        .arg(script)
        .arg(dir.join("run"))
        .arg(variant)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "gen.py {variant}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("run/traces.otf2")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `"name" <ref>` → `name`; other text as it is.
fn unquote(s: &str) -> &str {
    let s = s.trim();
    match s.strip_prefix('"') {
        Some(rest) => &rest[..rest.rfind('"').unwrap_or(rest.len())],
        None => s,
    }
}

/// The `(name, value)` pairs of `("name" <r>; TYPE; value), (...)`.
fn typed_values(text: &str) -> Vec<(String, String)> {
    let text = text.trim().trim_start_matches('(').trim_end_matches(')');
    text.split("), (")
        .map(|item| {
            let parts: Vec<&str> = item.splitn(3, "; ").collect();
            (unquote(parts[0]).to_string(), unquote(parts[2]).to_string())
        })
        .collect()
}

/// Whether attribute `key` of a printed attribute list is of type LOCATION.
fn location_typed(list: &str, key: &str) -> bool {
    let item = format!("(\"{key}\" <");
    list.find(&item)
        .is_some_and(|at| list[at..].split("; ").nth(1) == Some("LOCATION"))
}

/// The value of field `key` (`Key: value, Other: ...`) of an otf2-print line.
fn field<'a>(fields: &'a str, key: &str) -> &'a str {
    let at = fields
        .find(&format!("{key}: "))
        .unwrap_or_else(|| panic!("{key} in {fields}"));
    let rest = &fields[at + key.len() + 2..];
    // A quoted name may hold ", ": it ends at its `" <REF>`.
    let from = match rest.starts_with('"') {
        true => rest.find("\" <").unwrap_or(0),
        false => 0,
    };
    let end = rest[from..].find(", ").map_or(rest.len(), |e| from + e);
    &rest[..end]
}

/// The location id of a `Receiver: 1 ("Master thread" <4294967296>)`
/// field, or `-` for none.
fn location_of(value: &str) -> String {
    match (value.rfind('<'), value.rfind('>')) {
        (Some(a), Some(b)) if b > a => value[a + 1..b].to_string(),
        _ => "-".to_string(),
    }
}

/// The reference of a `"MPI_COMM_WORLD" <0>` field.
fn reference_of(value: &str) -> String {
    location_of(value)
}

/// One event as both sides are compared: its time (ns) and a key naming
/// what it is and its fields.
type Keyed = (i64, String);

/// Per location id: its events keyed, and each one's attributes.
type Printed = (
    BTreeMap<String, Vec<Keyed>>,
    BTreeMap<String, Vec<Vec<(String, String)>>>,
);

/// What otf2-print prints of `anchor`, keyed per location id.
fn printed(anchor: &Path) -> Printed {
    let defs = run(Command::new("otf2-print").arg("-G").arg(anchor));
    let clock = defs
        .lines()
        .find(|l| l.starts_with("CLOCK_PROPERTIES"))
        .expect("clock");
    let res: i128 = field(clock, "Ticks per Seconds").parse().unwrap();
    let offset: i128 = field(clock, "Global Offset").parse().unwrap();
    let ns = |ticks: i128| ((ticks - offset) * 1_000_000_000).div_euclid(res) as i64;
    let comms = comm_texts(&defs);
    let text = run(Command::new("otf2-print").arg(anchor));
    let mut events: BTreeMap<String, Vec<Keyed>> = BTreeMap::new();
    let mut attrs: BTreeMap<String, Vec<Vec<(String, String)>>> = BTreeMap::new();
    let mut last_loc = String::new();
    for line in text.lines().skip_while(|l| !l.starts_with("----")).skip(1) {
        let trimmed = line.trim_start();
        if let Some(list) = trimmed.strip_prefix("ADDITIONAL ATTRIBUTES: ") {
            let per = attrs.get_mut(&last_loc).unwrap();
            // A location is named by its `loc` in the stream: its own
            // name is the last part.
            *per.last_mut().unwrap() = typed_values(list)
                .into_iter()
                .map(|(k, v)| match location_typed(list, &k) {
                    true => (k, format!("*/{v}")),
                    false => (k, v),
                })
                .collect();
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(name), Some(loc), Some(ticks)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let at = line.find(ticks).unwrap() + ticks.len();
        let fields = line[at..].trim();
        let t = ns(ticks.parse().unwrap());
        last_loc = loc.to_string();
        for key in printed_keys(name, fields, &comms) {
            events.entry(loc.to_string()).or_default().push((t, key));
            attrs.entry(loc.to_string()).or_default().push(Vec::new());
        }
    }
    (events, attrs)
}

/// The `comm` each communicator of otf2-print's definitions (`-G`) is
/// read as, by reference: its name where no other has it, else its
/// reference (`#R` where that is another's name).
fn comm_texts(defs: &str) -> BTreeMap<String, String> {
    let comms: Vec<(String, String)> = defs
        .lines()
        .filter(|l| l.starts_with("COMM "))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let r = parts.nth(1).unwrap().to_string();
            (r, unquote(field(l, "Name")).to_string())
        })
        .collect();
    let uses = |n: &str| comms.iter().filter(|(_, m)| m == n).count();
    comms
        .iter()
        .map(|(r, n)| {
            let text = match (n.is_empty(), uses(n)) {
                (false, 1) => n.clone(),
                _ if uses(r) > 0 => format!("#{r}"),
                _ => r.clone(),
            };
            (r.clone(), text)
        })
        .collect()
}

/// The keys of one printed event (none for a collective's begin, one per
/// value for a metric), communicators by `comms`.
fn printed_keys(name: &str, f: &str, comms: &BTreeMap<String, String>) -> Vec<String> {
    let comm = || {
        let r = reference_of(field(f, "Communicator"));
        comms.get(&r).cloned().unwrap_or(r)
    };
    let half = |peer_key: &str| {
        let mut k = format!(
            "{name} peer={} comm={} tag={} size={}",
            location_of(field(f, peer_key)),
            comm(),
            field(f, "Tag"),
            field(f, "Length")
        );
        if f.contains("Request: ") {
            k += &format!(" id={}", field(f, "Request"));
        }
        k
    };
    let coll = || {
        format!(
            "COLL {} comm={} root={} sent={} received={}",
            field(f, "Operation"),
            comm(),
            location_of(field(f, "Root")),
            field(f, "Sent"),
            field(f, "Received")
        )
    };
    match name {
        "ENTER" => vec![format!("ENTER {}", unquote(field(f, "Region")))],
        "LEAVE" => vec![format!("LEAVE {}", unquote(field(f, "Region")))],
        "MPI_SEND" | "MPI_ISEND" => vec![half("Receiver")],
        "MPI_RECV" | "MPI_IRECV" => vec![half("Sender")],
        "MPI_ISEND_COMPLETE"
        | "MPI_IRECV_REQUEST"
        | "MPI_REQUEST_TEST"
        | "MPI_REQUEST_CANCELLED"
        | "NON_BLOCKING_COLLECTIVE_REQUEST" => {
            vec![format!("{name} id={}", field(f, "Request"))]
        }
        "MPI_COLLECTIVE_BEGIN" => vec![],
        "MPI_COLLECTIVE_END" | "NON_BLOCKING_COLLECTIVE_COMPLETE" => vec![coll()],
        "METRIC" => {
            let values = &f[f.find('(').unwrap()..];
            typed_values(values)
                .into_iter()
                .map(|(n, v)| format!("METRIC {n}={v}"))
                .collect()
        }
        n if n.starts_with("PARAMETER_") => {
            let value = unquote(field(f, "Value"));
            vec![format!(
                "PARAMETER {}={value}",
                unquote(field(f, "Parameter"))
            )]
        }
        n => vec![n.to_string()],
    }
}

/// tracepipe's rows of `anchor`, keyed per location id as [`printed`]
/// keys otf2-print's, and each row's `attrs`.
fn read(anchor: &Path) -> (BTreeMap<String, Vec<Keyed>>, BTreeMap<String, Vec<String>>) {
    let out = bin("trace-cat").arg(anchor).output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    let mut events: BTreeMap<String, Vec<Keyed>> = BTreeMap::new();
    let mut attrs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let a = col(line, "attrs");
        let attr = |k: &str| {
            a.split(';')
                .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                .unwrap_or("")
        };
        if kind_of(line) == "container" {
            if ["thread", "gpu", "metric", "location"].contains(&col(line, "cat")) {
                ids.insert(col(line, "loc").to_string(), attr("otf2.id").to_string());
            }
            continue;
        }
        if kind_of(line) == "meta" {
            continue;
        }
        let id_of = |loc: &str| ids.get(loc).cloned().unwrap_or_else(|| "-".into());
        let name = col(line, "name");
        let (time, key) = match kind_of(line) {
            "enter" => (col(line, "time"), format!("ENTER {name}")),
            // A leave that named no open region closed the innermost one
            // (docs/stream.md, "Frames that do not nest").
            "leave" => match attr("named") {
                "" => (col(line, "time"), format!("LEAVE {name}")),
                named => (col(line, "time"), format!("LEAVE {named}")),
            },
            "send" | "recv" => {
                let mut k = format!(
                    "{name} peer={} comm={} tag={} size={}",
                    id_of(col(line, "peer")),
                    col(line, "comm"),
                    col(line, "tag"),
                    col(line, "size")
                );
                if !col(line, "id").is_empty() {
                    k += &format!(" id={}", col(line, "id"));
                }
                (col(line, "time"), k)
            }
            "coll" => (
                col(line, "end"),
                format!(
                    "COLL {name} comm={} root={} sent={} received={}",
                    col(line, "comm"),
                    id_of(col(line, "peer")),
                    col(line, "size"),
                    col(line, "value")
                ),
            ),
            "counter" => (
                col(line, "time"),
                format!("METRIC {name}={}", col(line, "value")),
            ),
            _ if col(line, "cat") == "PARAMETER" => (
                col(line, "time"),
                format!("PARAMETER {name}={}", col(line, "value")),
            ),
            _ if !col(line, "id").is_empty() && col(line, "cat") == "MPI" => {
                (col(line, "time"), format!("{name} id={}", col(line, "id")))
            }
            _ => (col(line, "time"), name.to_string()),
        };
        let loc = id_of(col(line, "loc"));
        events
            .entry(loc.clone())
            .or_default()
            .push((time.parse().unwrap(), key));
        attrs.entry(loc).or_default().push(a.to_string());
    }
    (events, attrs)
}

/// Every location's events as tracepipe reads them equal what otf2-print
/// prints, and every printed attribute is in the row's `attrs`.
fn agrees_with_otf2_print(anchor: &Path) {
    let (want, want_attrs) = printed(anchor);
    let (got, got_attrs) = read(anchor);
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "locations"
    );
    for (loc, w) in &want {
        let g = &got[loc];
        for (i, (a, b)) in w.iter().zip(g).enumerate() {
            assert_eq!(a, b, "location {loc}, event {i}");
        }
        assert_eq!(w.len(), g.len(), "location {loc}: events");
        for (i, pairs) in want_attrs[loc].iter().enumerate() {
            for (k, v) in pairs {
                let attrs = &got_attrs[loc][i];
                let found = match v.strip_prefix("*/") {
                    Some(name) => attrs.split(';').any(|kv| {
                        kv == format!("{k}={name}")
                            || kv.starts_with(&format!("{k}=")) && kv.ends_with(&format!("/{name}"))
                    }),
                    None => attrs.split(';').any(|kv| kv == format!("{k}={v}")),
                };
                assert!(
                    found,
                    "location {loc}, event {i}: attribute {k}={v} not in {attrs}"
                );
            }
        }
    }
}

/// Inclusive time per region, from otf2-print's `ENTER`/`LEAVE` lines.
fn region_times(events: &BTreeMap<String, Vec<Keyed>>) -> BTreeMap<String, i64> {
    let mut total = BTreeMap::new();
    for list in events.values() {
        let mut open: Vec<(&str, i64)> = Vec::new();
        for (t, key) in list {
            if let Some(name) = key.strip_prefix("ENTER ") {
                open.push((name, *t));
            } else if key.starts_with("LEAVE ") {
                let (entered, since) = open.pop().expect("balanced");
                *total.entry(entered.to_string()).or_insert(0) += t - since;
            }
        }
    }
    total
}

/// `trace-stat profile`'s inclusive time per function agrees with the
/// region times otf2-print's events give.
fn profile_agrees(anchor: &Path) {
    let (printed, _) = printed(anchor);
    let text = common::output_of("trace-stat", &["profile"], &[anchor]);
    let got: BTreeMap<String, i64> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[2].parse().unwrap())
        })
        .collect();
    for (name, want) in region_times(&printed) {
        assert_eq!(got.get(&name), Some(&want), "inclusive time of {name}");
    }
}

/// `trace-match` pairs every message of the archive.
fn messages_pair(anchor: &Path) {
    let out = bin("trace-match")
        .arg(anchor)
        .arg("-o")
        .arg("/dev/null")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("24 message(s) matched") && err.contains("0 half/halves unmatched"),
        "{err}"
    );
}

#[test]
fn generated_archives_agree_with_otf2_print() {
    let Some(python) = reference() else {
        return;
    };
    for variant in ["mpi", "ghz", "ps"] {
        let anchor = generate(&python, variant);
        agrees_with_otf2_print(&anchor);
        profile_agrees(&anchor);
        messages_pair(&anchor);
        written_again_reads_the_same(&python, &anchor);
    }
}

/// `anchor` written again with `-t otf2`: otf2-print and the Python reader
/// read it, and tracepipe reads from it the rows it read from `anchor`
/// (all but the `meta` rows, which describe the archive).
fn written_again_reads_the_same(python: &Path, anchor: &Path) {
    let copy = anchor.with_file_name("again.otf2");
    write_otf2(anchor, &copy, &[]).unwrap();
    assert_eq!(python_events(python, &copy), printed_events(&copy));
    assert_eq!(
        sorted_rows(&copy),
        sorted_rows(anchor),
        "{anchor:?} written again"
    );
}

/// Strings `strings` (by their index), a node, and two ranks of one thread
/// each: groups named by strings 2 and 3, locations 0 and `second` named
/// by string 4.
fn two_ranks(a: &mut Archive, strings: &[&str], second: u64) {
    for (i, s) in strings.iter().enumerate() {
        a.string(i as u32, s);
    }
    a.node(0, 1, 0, u32::MAX);
    a.group_of_locations(0, 2, 1, 0)
        .group_of_locations(1, 3, 1, 0);
    a.location(0, 4, 1, 0).location(second, 4, 1, 1);
}

/// A small archive made with tracepipe's own encoder: two ranks of one
/// thread each, regions, messages, a collective, a metric, an attribute,
/// in chunks of 256 KiB (the smallest the library reads; several per
/// location); `extra` adds to it, at [`EXTRA`] ticks.
fn small_archive(extra: impl FnOnce(&mut Archive)) -> Archive {
    let mut a = Archive::new(CHUNK);
    a.clock(1_000_000, 500, 10_000);
    let strings = [
        "",
        "machine",
        "rank 0",
        "rank 1",
        "Master thread",
        "main",
        "MPI_Send",
        "world",
        "cycles",
        "color",
        "red",
    ];
    two_ranks(&mut a, &strings, 1 << 32);
    a.region(0, 5, 1, 1).region(1, 6, 28, 4);
    a.group(0, 7, 4, 4, &[0, 1 << 32])
        .group(1, 7, 5, 4, &[0, 1])
        .comm(0, 7, 1);
    a.metric_member(0, 8, 0x00, 4, 0).metric_class(0, &[0]);
    a.attribute(0, 9, 11);
    for (loc, peer) in [(0u64, 1u32), (1 << 32, 0)] {
        let l = a.files(loc);
        let base = 1000 + (loc >> 32) * 5;
        l.events.push(&event(base, 12, true, &[(0, 11, 10)], |b| {
            b.u32c(0);
        }));
        for k in 0..ITERATIONS {
            let t = base + 100 + 100 * k;
            l.events.push(&event(t, 12, true, &[], |b| {
                b.u32c(1);
            }));
            let id = if loc == 0 { 14 } else { 18 };
            l.events.push(&event(t + 10, id, false, &[], |b| {
                b.u32c(peer).u32c(0).u32c(k as u32).u64c(64);
            }));
            l.events.push(&event(t + 20, 13, true, &[], |b| {
                b.u32c(1);
            }));
            l.events.push(&event(t + 30, 31, false, &[], |b| {
                b.u32c(0).u8(1).u8(4).u64c(k * 7);
            }));
        }
        let end = base + 100 * ITERATIONS + 1000;
        l.events.push(&event(end, 22, false, &[], |_| {}));
        l.events.push(&event(end + 100, 23, false, &[], |b| {
            b.u8(11).u32c(0).u32c(u32::MAX).u64c(8).u64c(8);
        }));
    }
    extra(&mut a);
    for loc in [0u64, 1 << 32] {
        let end = 1000 + 100 * ITERATIONS + 5000;
        a.files(loc).events.push(&event(end, 13, true, &[], |b| {
            b.u32c(0);
        }));
    }
    a
}

/// Iterations of the small archive's loop.
const ITERATIONS: u64 = 12_000;

/// The small archive's chunk size.
const CHUNK: u64 = 256 * 1024;

/// The tick the small archive's additions happen at: after its loop and
/// collective, before it leaves `main`.
const EXTRA: u64 = 1000 + 100 * ITERATIONS + 3000;

/// Reads `anchor` with trace-cat: its stdout and stderr, or its stderr on
/// failure.
fn cat(anchor: &Path) -> Result<(String, String), String> {
    let out = bin("trace-cat").arg(anchor).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    match out.status.success() {
        true => Ok((String::from_utf8(out.stdout).unwrap(), err)),
        false => Err(err),
    }
}

#[test]
fn archives_tracepipe_encodes_read_back_and_agree_with_otf2_print() {
    let dir = scratch("otf2-small");
    let anchor = small_archive(|_| {}).write(&dir, "traces").unwrap();
    let (text, _) = cat(&anchor).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| kind_of(l) == "send").collect();
    assert_eq!(rows.len(), ITERATIONS as usize);
    assert_eq!(col(rows[0], "peer"), "rank 1/Master thread");
    assert_eq!(
        col(rows[0], "time"),
        "610000",
        "(1110 - 500) ticks at 1 MHz"
    );
    // The chunks were several, and each was found.
    assert!(std::fs::metadata(dir.join("traces/0.evt")).unwrap().len() > 2 * CHUNK);
    let counters = text.lines().filter(|l| kind_of(l) == "counter").count();
    assert_eq!(counters, 2 * ITERATIONS as usize);
    if reference().is_some() {
        agrees_with_otf2_print(&anchor);
    }
}

#[test]
fn the_output_is_the_same_for_every_thread_count() {
    let dir = scratch("otf2-threads");
    let anchor = small_archive(|_| {}).write(&dir, "traces").unwrap();
    let outputs: Vec<String> = ["1", "2", "3", "8"]
        .iter()
        .map(|n| {
            let out = bin("trace-cat")
                .args(["--threads", n])
                .arg(&anchor)
                .output()
                .unwrap();
            assert!(out.status.success());
            String::from_utf8(out.stdout).unwrap()
        })
        .collect();
    assert!(outputs.iter().all(|o| *o == outputs[0]));
}

/// Writes the small archive (with `extra`) and lets `damage` change its
/// files; what trace-cat gives.
fn damaged(
    test: &str,
    extra: impl FnOnce(&mut Archive),
    damage: impl FnOnce(&Path),
) -> Result<(String, String), String> {
    let dir = scratch(test);
    let anchor = small_archive(extra).write(&dir, "traces").unwrap();
    damage(&dir);
    cat(&anchor)
}

#[test]
fn a_missing_location_file_is_named() {
    let err = damaged(
        "otf2-missing",
        |_| {},
        |d| std::fs::remove_file(d.join("traces/4294967296.evt")).unwrap(),
    )
    .unwrap_err();
    assert!(
        err.contains("traces/4294967296.evt") && err.contains("No such file"),
        "{err}"
    );
}

/// The parts of an archive found beside its anchor are read whole or by
/// offset: a FIFO (which would block) or a link to a device (which never
/// ends) is refused at once, naming it.
#[test]
fn parts_that_are_not_regular_files_are_refused() {
    type Damage = fn(&Path);
    let cases: [(&str, &str, Damage); 3] = [
        ("otf2-fifo-def", "traces.def", |p| {
            std::fs::remove_file(p).unwrap();
            let made = Command::new("mkfifo").arg(p).status().unwrap();
            assert!(made.success());
        }),
        ("otf2-zero-def", "traces.def", |p| {
            std::fs::remove_file(p).unwrap();
            std::os::unix::fs::symlink("/dev/zero", p).unwrap();
        }),
        ("otf2-zero-evt", "traces/0.evt", |p| {
            std::fs::remove_file(p).unwrap();
            std::os::unix::fs::symlink("/dev/zero", p).unwrap();
        }),
    ];
    for (test, part, damage) in cases {
        let dir = scratch(test);
        let anchor = small_archive(|_| {}).write(&dir, "traces").unwrap();
        damage(&dir.join(part));
        let out = bin("trace-cat")
            .arg(&anchor)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{test}: {err}");
        assert!(
            err.contains(&format!("{part}: not a regular file")),
            "{test}: {err}"
        );
    }
}

#[test]
fn a_cut_event_file_is_located() {
    // Cut inside its third chunk, and inside a record.
    let err = damaged(
        "otf2-cut",
        |_| {},
        |d| {
            common::edit(&d.join("traces/0.evt"), |b| {
                b.truncate(2 * CHUNK as usize + 1001)
            })
        },
    )
    .unwrap_err();
    assert!(err.contains("traces/0.evt: byte 52"), "{err}");
    assert!(err.contains("cut") || err.contains("truncated"), "{err}");
}

/// An anchor that says the chunks are larger than they are would skip the
/// chunks between: the gap in the chunk headers' event numbers is a located
/// error, not a trace with events missing.
#[test]
fn chunks_skipped_by_a_wrong_chunk_size_are_an_error() {
    let err = damaged(
        "otf2-chunk-size",
        |_| {},
        |d| {
            common::edit(&d.join("traces.otf2"), |b| {
                let sizes = [CHUNK.to_le_bytes(), CHUNK.to_le_bytes()].concat();
                let at = b.windows(16).position(|w| w == sizes).unwrap();
                let doubled = 2 * CHUNK;
                b[at..at + 16]
                    .copy_from_slice(&[doubled.to_le_bytes(), doubled.to_le_bytes()].concat());
            })
        },
    )
    .unwrap_err();
    assert!(
        err.contains(&format!(
            "traces/0.evt: byte {}: this chunk's first event is number",
            2 * CHUNK
        )) && err.contains("chunks were skipped (are they 524288 bytes, as the anchor file says?)"),
        "{err}"
    );
}

/// On `MPI_COMM_SELF` (group type 6) rank 0 is the recording location, as
/// otf2-print resolves it: its halves pair; a rank no definition gives a
/// location is an error at its record, not a half no reader can pair.
#[test]
fn comm_self_ranks_resolve_and_undefined_ranks_are_located() {
    let self_comm = |a: &mut Archive| {
        a.group(2, 7, 6, 4, &[]).comm(1, 7, 2);
        let l = a.files(0);
        l.events.push(&event(EXTRA, 14, false, &[], |b| {
            b.u32c(0).u32c(1).u32c(3).u64c(8);
        }));
        l.events.push(&event(EXTRA + 10, 18, false, &[], |b| {
            b.u32c(0).u32c(1).u32c(3).u64c(8);
        }));
    };
    let (text, _) = damaged("otf2-comm-self", self_comm, |_| {}).unwrap();
    let on_self: Vec<&str> = text
        .lines()
        .filter(|l| matches!(kind_of(l), "send" | "recv") && col(l, "comm") == "1")
        .collect();
    assert_eq!(on_self.len(), 2, "{text}");
    assert!(
        on_self.iter().all(|l| col(l, "peer") == col(l, "loc")),
        "{on_self:?}"
    );
    let dir = scratch("otf2-comm-self-match");
    let file = dir.join("self.tsv");
    std::fs::write(&file, &text).unwrap();
    let out = bin("trace-match")
        .args(["--unmatched", "error"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let err = damaged(
        "otf2-undefined-rank",
        |a| {
            a.files(0).events.push(&event(EXTRA, 14, false, &[], |b| {
                b.u32c(5).u32c(0).u32c(3).u64c(8);
            }));
        },
        |_| {},
    )
    .unwrap_err();
    assert!(
        err.contains("traces/0.evt: byte ")
            && err.contains("names rank 5 of communicator `world`, which its definitions do not give a location"),
        "{err}"
    );
}

#[test]
fn a_record_longer_than_its_chunk_is_located() {
    let err = damaged(
        "otf2-long",
        |a| {
            // An MPI_SEND whose length says 2^40 bytes.
            let mut e = Buf::default();
            e.u8(5).u64(EXTRA).u8(14).u8(0xff).u64(1 << 40).u8(0);
            a.files(0).events.push(&e);
        },
        |_| {},
    )
    .unwrap_err();
    assert!(
        err.contains("traces/0.evt: byte ")
            && err.contains("record length 1099511627776 runs past its chunk"),
        "{err}"
    );
}

#[test]
fn a_version_from_the_future_reads_with_a_warning_and_big_endian_archives_are_refused() {
    let (text, err) = damaged(
        "otf2-future",
        |_| {},
        |d| common::edit(&d.join("traces.otf2"), |b| b[9] = 4),
    )
    .unwrap();
    assert!(
        err.contains(
            "traces.otf2: OTF2 version 4.0.0 is newer than this reader knows; read as 3.x"
        ),
        "{err}"
    );
    let sends = text.lines().filter(|l| kind_of(l) == "send").count();
    assert_eq!(sends, ITERATIONS as usize);
    let err = damaged(
        "otf2-zero",
        |_| {},
        |d| common::edit(&d.join("traces.otf2"), |b| b[9] = 0),
    )
    .unwrap_err();
    assert!(
        err.contains("traces.otf2: byte 9: OTF2 version 0.0.0"),
        "{err}"
    );
    let err = damaged(
        "otf2-big",
        |_| {},
        |d| common::edit(&d.join("traces.otf2"), |b| b[1] = 0x23),
    )
    .unwrap_err();
    assert!(err.contains("byte 1: a big-endian archive"), "{err}");
}

/// An archive as OTF2 1.0 writes it: an anchor of format 1 (no
/// properties, no trace id), regions with a region type and no role or
/// paradigm, groups with the type of before 1.2 only.
fn otf2_1_0_archive(dir: &Path) -> PathBuf {
    let mut a = Archive::new(CHUNK);
    a.clock(1_000_000, 0, 10_000);
    let strings = [
        "",
        "m",
        "rank 0",
        "rank 1",
        "Master thread",
        "main",
        "MPI_Barrier",
        "MPI_Send",
        "world",
    ];
    two_ranks(&mut a, &strings, 1);
    // Region types 1 (a function), 22 (an MPI barrier), 1.
    for (r, name, region_type) in [(0u32, 5u32, 1u8), (1, 6, 22), (2, 7, 1)] {
        a.def(15, |b| {
            b.u32c(r).u32c(name).u32c(0).u8(region_type);
            b.u32c(u32::MAX).u32c(0).u32c(0);
        });
    }
    // Groups of before 1.2: MPI_COMM_WORLD's locations by rank (6), then
    // an MPI group of ranks (4).
    a.def(18, |b| {
        b.u32c(0).u32c(8).u8(6).u32c(2).u64c(0).u64c(1);
    });
    a.def(18, |b| {
        b.u32c(1).u32c(8).u8(4).u32c(2).u64c(0).u64c(1);
    });
    a.def(22, |b| {
        b.u32c(0).u32c(8).u32c(1).u32c(u32::MAX);
    });
    for (loc, peer) in [(0u64, 1u32), (1, 0)] {
        let l = a.files(loc);
        l.events.push(&event(100, 12, true, &[], |b| {
            b.u32c(0);
        }));
        l.events.push(&event(200, 12, true, &[], |b| {
            b.u32c(1);
        }));
        l.events.push(&event(300, 13, true, &[], |b| {
            b.u32c(1);
        }));
        let id = if loc == 0 { 14 } else { 18 };
        l.events.push(&event(400, id, false, &[], |b| {
            b.u32c(peer).u32c(0).u32c(7).u64c(64);
        }));
        l.events.push(&event(500, 13, true, &[], |b| {
            b.u32c(0);
        }));
    }
    let mut files = a.into_files("traces");
    let mut anchor = Buf::default();
    anchor.u8(3).u8(0x42);
    anchor.bytes.extend_from_slice(b"OTF2\0");
    // Anchor format 1, trace format 2, version 1.0.0, chunk sizes, POSIX,
    // no compression, 2 locations, the definitions, three strings: the end.
    anchor.u8(1).u8(2).u8(1).u8(0).u8(0);
    anchor.u64(CHUNK).u64(CHUNK).u8(1).u8(1).u64(2).u64(21);
    anchor.string("").string("OTF2 1.0").string("");
    anchor.u8(2).u8(1);
    files[0].1 = anchor;
    for (path, buf) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, buf.bytes).unwrap();
    }
    dir.join("traces.otf2")
}

#[test]
fn an_otf2_1_0_archive_reads_with_what_its_records_lack_derived() {
    let dir = scratch("otf2-1.0");
    let anchor = otf2_1_0_archive(&dir);
    let (text, err) = cat(&anchor).unwrap();
    assert_eq!(err, "");
    let meta = |name: &str| {
        let line = text
            .lines()
            .find(|l| kind_of(l) == "meta" && col(l, "name") == name)
            .unwrap_or_else(|| panic!("no meta {name}: {text}"));
        col(line, "value").to_string()
    };
    assert_eq!(meta("otf2.version"), "1.0.0");
    // Region type 22 is an MPI barrier: category MPI, role BARRIER.
    let barrier = text
        .lines()
        .find(|l| kind_of(l) == "enter" && col(l, "name") == "MPI_Barrier")
        .unwrap();
    assert_eq!(col(barrier, "cat"), "MPI");
    // The groups of before 1.2 give the ranks their locations.
    let send = text.lines().find(|l| kind_of(l) == "send").unwrap();
    assert_eq!(col(send, "peer"), "rank 1/Master thread");
    assert_eq!(col(send, "comm"), "world");
    if reference().is_some() {
        agrees_with_otf2_print(&anchor);
        profile_agrees(&anchor);
    }
}

#[test]
fn an_unknown_record_is_skipped_by_its_length_and_counted() {
    let (text, err) = damaged(
        "otf2-unknown",
        |a| {
            for t in [EXTRA, EXTRA + 1] {
                a.files(0).events.push(&event(t, 200, false, &[], |b| {
                    b.u8(1).u8(2).u8(3);
                }));
            }
        },
        |_| {},
    )
    .unwrap();
    assert_eq!(
        text.lines().filter(|l| kind_of(l) == "send").count(),
        ITERATIONS as usize
    );
    assert!(
        err.contains("traces/0.evt: 2 records of types this reader does not know were skipped"),
        "{err}"
    );
}

#[test]
fn an_undefined_region_is_named_by_its_number() {
    let (text, _) = damaged(
        "otf2-undefined",
        |a| {
            let l = a.files(0);
            l.events.push(&event(EXTRA, 12, true, &[], |b| {
                b.u32c(9);
            }));
            l.events.push(&event(EXTRA + 1, 13, true, &[], |b| {
                b.u32c(9);
            }));
        },
        |_| {},
    )
    .unwrap();
    assert!(
        text.lines()
            .any(|l| kind_of(l) == "enter" && col(l, "name") == "region 9"),
        "{text}"
    );
}

/// Two tasks on location 0 at [`EXTRA`] ticks: `task a` entered, `task b`
/// entered, then the leaves `leaves` names (region 2 is `task a`, 3 `task
/// b`, 4 `task c`, never entered), 10 ticks apart.
fn tasks(leaves: &'static [u32]) -> impl FnOnce(&mut Archive) {
    move |a| {
        a.string(11, "task a")
            .string(12, "task b")
            .string(13, "task c");
        a.region(2, 11, 1, 1)
            .region(3, 12, 1, 1)
            .region(4, 13, 1, 1);
        let l = a.files(0);
        for (k, &(record, region)) in [(12, 2), (12, 3)]
            .iter()
            .chain(leaves.iter().map(|r| (13u8, *r)).collect::<Vec<_>>().iter())
            .enumerate()
        {
            l.events
                .push(&event(EXTRA + 10 * k as u64, record, true, &[], |b| {
                    b.u32c(region);
                }));
        }
    }
}

/// The enter and leave rows of the tasks: kind, name, depth, flags and
/// attributes.
fn task_rows(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| col(l, "name").starts_with("task") && col(l, "loc") == "rank 0/Master thread")
        .map(|l| {
            let fields = ["time", "name", "depth", "flags", "attrs"].map(|c| col(l, c));
            format!("{} {}", kind_of(l), fields.join(" "))
        })
        .collect()
}

#[test]
fn a_leave_that_crosses_cuts_the_frames_above_it_and_warns_once() {
    let dir = scratch("otf2-cross");
    let anchor = small_archive(tasks(&[2, 3])).write(&dir, "traces").unwrap();
    let (text, err) = cat(&anchor).unwrap();
    // EXTRA ticks at 1 MHz from tick 500: 1 203 500 000 ns.
    assert_eq!(
        task_rows(&text),
        [
            "enter 1203500000 task a 1  ",
            "enter 1203510000 task b 2  ",
            "leave 1203520000 task b 2 SX crossed=task a",
            "leave 1203520000 task a 1  ",
            "enter 1203520000 task b 1 SX crossed=task a",
            "leave 1203530000 task b 1  ",
        ]
    );
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(
        err.contains("traces/0.evt: byte ")
            && err.contains(
                "frames that do not nest: 1 leave(s) closed a frame that was not the innermost"
            )
            && err.contains("the first at 1203520000 ns on `rank 0/Master thread`"),
        "{err}"
    );
    // The profile: each task one call, inclusive its enter-to-leave span,
    // exclusive times that add up to the time the tasks cover.
    let profile = common::output_of("trace-stat", &["profile", "-q"], &[&anchor]);
    let row = |name: &str| {
        let line = profile
            .lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .unwrap();
        line.split('\t')
            .skip(1)
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(row("task a"), "1 20000 10000");
    assert_eq!(row("task b"), "1 20000 20000");
    // --strict refuses it, located.
    let out = bin("trace-cat")
        .arg("--strict")
        .arg(&anchor)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("traces/0.evt: byte ")
            && err.contains(
                "LEAVE of `task a` while `task b` is open (a frame that does not nest; --strict)"
            ),
        "{err}"
    );
}

#[test]
fn a_leave_that_names_no_open_region_closes_the_innermost() {
    let (text, err) = damaged("otf2-named", tasks(&[4, 3]), |_| {}).unwrap();
    assert_eq!(
        task_rows(&text),
        [
            "enter 1203500000 task a 1  ",
            "enter 1203510000 task b 2  ",
            "leave 1203520000 task b 2  named=task c",
            "leave 1203530000 task a 1  named=task b",
        ]
    );
    assert!(err.contains("2 leave(s) named no open frame"), "{err}");
}

#[test]
fn a_count_larger_than_the_file_is_refused_before_allocating() {
    let err = damaged(
        "otf2-count",
        |a| {
            a.def(18, |b| {
                b.u32c(5).u32c(7).u8(0).u32c(1_000_000_000);
            });
        },
        |_| {},
    )
    .unwrap_err();
    assert!(
        err.contains("traces.def: byte ") && err.contains("number of members is 1000000000"),
        "{err}"
    );
}

/// Archives named in `TRACEPIPE_OTF2_ARCHIVES` (colon-separated anchor
/// files: real traces one cannot ship) agree with otf2-print too.
#[test]
fn archives_named_in_the_environment_agree_with_otf2_print() {
    let Some(list) = std::env::var_os("TRACEPIPE_OTF2_ARCHIVES") else {
        return;
    };
    if reference().is_none() {
        return;
    }
    for anchor in std::env::split_paths(&list) {
        agrees_with_otf2_print(&anchor);
    }
}

/// Thousands of locations read with few file descriptors: a location's
/// file is opened only while its window is refilled.
#[test]
fn many_locations_read_under_a_low_descriptor_limit() {
    let dir = scratch("otf2-many");
    let mut a = Archive::new(256 * 1024);
    a.clock(1_000_000_000, 0, 0);
    a.string(0, "").string(1, "n").string(2, "t").string(3, "f");
    a.node(0, 1, 0, u32::MAX).group_of_locations(0, 1, 1, 0);
    a.region(0, 3, 1, 1);
    const LOCATIONS: u64 = 2000;
    for l in 0..LOCATIONS {
        a.location(l, 2, 1, 0);
        for k in 0..5 {
            a.files(l)
                .events
                .push(&event(100 * k + l, 12, true, &[], |b| {
                    b.u32c(0);
                }));
            a.files(l)
                .events
                .push(&event(100 * k + l + 1, 13, true, &[], |b| {
                    b.u32c(0);
                }));
        }
    }
    let anchor = a.write(&dir, "traces").unwrap();
    let bin = env!("CARGO_BIN_EXE_trace-stat");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 64 && exec '{bin}' summary '{}'",
            anchor.display()
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("rows\tenter\t10000"), "{text}");
}

// Writing (`-t otf2`). The round trip of every kind of row (stream → OTF2
// → stream) is in tests/writers.rs, with the other writers.

/// The events `otf2-print` prints of `anchor` (a line per event: its record,
/// location and time; the lines of attributes and of names holding a line
/// break are not events).
fn printed_events(anchor: &Path) -> usize {
    let out = Command::new("otf2-print").arg(anchor).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.is_empty(), "otf2-print: {err}");
    let text = String::from_utf8(out.stdout).unwrap();
    let is_number = |s: Option<&str>| s.is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()));
    text.lines()
        .skip_while(|l| !l.starts_with("----"))
        .skip(1)
        .filter(|l| {
            let mut parts = l.split_whitespace();
            let record = parts.next().unwrap_or("");
            // Record names such as PARAMETER_INT64 hold digits too.
            record
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                && record.starts_with(|c: char| c.is_ascii_uppercase())
                && is_number(parts.next())
                && is_number(parts.next())
        })
        .count()
}

/// The events the reference library's Python reader reads of `anchor`
/// (tests/otf2/read.py also checks each location's count against its
/// definition).
fn python_events(python: &Path, anchor: &Path) -> usize {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otf2/read.py");
    let text = run(Command::new(python).arg(script).arg(anchor));
    text.trim().parse().unwrap()
}

/// Writes `input` as an OTF2 archive `anchor`; Err(the refusal).
fn write_otf2(input: &Path, anchor: &Path, extra: &[&str]) -> Result<(), String> {
    let mut args = vec!["-q", "-t", "otf2", "-o", anchor.to_str().unwrap()];
    args.extend_from_slice(extra);
    common::cat(&args, input).map(|_| ())
}

#[test]
fn every_trace_written_as_otf2_reads_in_otf2_print_and_the_python_reader() {
    let Some(python) = reference() else {
        return;
    };
    // A trace of every format read: the examples (stream, TRACE), the text
    // of stftool (STF), the corpora (Pajé, TRACE, Pallas).
    let mut inputs = vec![
        common::data("../../examples/pingpong.tsv"),
        common::data("../../examples/camera.etf"),
        common::data("stf/dump.txt"),
    ];
    for format in ["paje", "trace", "pallas"] {
        if let Some(dir) = common::corpus(format) {
            inputs.extend(common::accepted_traces(&dir));
        }
    }
    let dir = scratch("otf2-written");
    let mut written = 0;
    for (i, input) in inputs.iter().enumerate() {
        let anchor = dir.join(format!("t{i}.otf2"));
        if let Err(e) = write_otf2(input, &anchor, &[]) {
            // OTF2's times are unsigned: its one refusal.
            assert!(e.contains("OTF2 times are not negative"), "{input:?}: {e}");
            continue;
        }
        let printed = printed_events(&anchor);
        assert_eq!(python_events(&python, &anchor), printed, "{input:?}");
        // Every row of the trace is in the archive: none is lost.
        let rows = common::stream_of(&[], input)
            .lines()
            .filter(|l| !["kind", "meta", "container", "type"].contains(&kind_of(l)))
            .count();
        assert!(
            printed >= rows,
            "{input:?}: {printed} events for {rows} rows"
        );
        written += 1;
    }
    assert!(written >= 2, "the examples at least");
}

#[test]
fn a_frame_longer_than_the_reorder_buffer_is_kept_whole() {
    let dir = scratch("otf2-window");
    let mut rows = vec![common::row(&[("kind", "container"), ("loc", "a")])];
    for t in 1..=50 {
        let t = t.to_string();
        rows.push(common::row(&[
            ("kind", "event"),
            ("time", &t),
            ("loc", "a"),
            ("name", "tick"),
        ]));
    }
    // A frame from 0 to 60 closes after the 50 events it holds.
    let frame = common::row(&[
        ("kind", "state"),
        ("time", "0"),
        ("end", "60"),
        ("loc", "a"),
        ("name", "outer"),
    ]);
    rows.push(frame.clone());
    let input = dir.join("long-frame.tsv");
    std::fs::write(&input, common::stream(&rows)).unwrap();
    let anchor = dir.join("t.otf2");
    // Past a buffer of 10 events the frame's start is late: the row is
    // kept whole, and read back as it was.
    write_otf2(&input, &anchor, &["--otf2-window", "10"]).unwrap();
    let (back, _) = cat(&anchor).unwrap();
    assert!(back.lines().any(|l| l == frame), "{back}");
    assert!(!back.lines().any(|l| kind_of(l) == "enter"));
    // Within the default buffer, it is a region entered at 0.
    write_otf2(&input, &anchor, &[]).unwrap();
    let (back, _) = cat(&anchor).unwrap();
    let enter = back.lines().find(|l| kind_of(l) == "enter").unwrap();
    assert_eq!((col(enter, "time"), col(enter, "name")), ("0", "outer"));
    let ticks = back.lines().filter(|l| col(l, "name") == "tick").count();
    assert_eq!(ticks, 50);
}

#[test]
fn an_archive_written_into_a_folder_is_its_traces_otf2() {
    let dir = scratch("otf2-folder");
    let input = common::data("../../examples/pingpong.tsv");
    write_otf2(&input, &dir.join("named.otf2"), &[]).unwrap();
    let folder = dir.join("run");
    write_otf2(&input, &folder, &[]).unwrap();
    assert!(folder.join("traces.otf2").is_file());
    assert!(!dir.join("run.otf2").exists());
    let rows = |p: &Path| {
        let (text, _) = cat(p).unwrap();
        text.lines()
            .filter(|l| kind_of(l) != "meta")
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&folder), rows(&dir.join("named.otf2")));
}

#[test]
fn an_otf2_output_needs_the_anchor_file_named() {
    let err = bin("trace-cat")
        .args(["-t", "otf2"])
        .arg(common::data("../../examples/pingpong.tsv"))
        .output()
        .unwrap();
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("-o NAME.otf2"));
}

#[test]
fn events_at_an_instant_are_parameter_records_and_read_back_as_they_were() {
    let dir = scratch("otf2-parameters");
    let event = |t: usize, extra: &[(&str, &str)]| {
        let t = t.to_string();
        let mut fields = vec![("kind", "event"), ("time", t.as_str()), ("loc", "a")];
        fields.extend_from_slice(extra);
        common::row(&fields)
    };
    let mut rows = vec![
        common::row(&[("kind", "container"), ("loc", "a")]),
        common::row(&[("kind", "container"), ("loc", "b")]),
    ];
    // Values of every parameter type, and columns a parameter does not hold.
    let odd = [
        event(1, &[("name", "step"), ("value", "-5")]),
        event(2, &[("name", "step"), ("value", "18446744073709551615")]),
        event(3, &[("name", "step"), ("value", "007")]),
        event(3, &[("name", "step"), ("value", "-0")]),
        event(4, &[("name", "step"), ("value", "converged")]),
        event(5, &[("name", "mark")]),
        event(6, &[("name", "mark"), ("cat", "PARAMETER"), ("value", "1")]),
        event(
            7,
            &[
                ("name", "mark"),
                ("cat", "USER"),
                ("depth", "2"),
                ("id", "x"),
                ("peer", "b"),
            ],
        ),
        event(
            8,
            &[
                ("name", "mark"),
                ("flags", "E"),
                ("attrs", "file=a.c;line=3"),
            ],
        ),
        // Kept whole: an event with an end, one named as the whole rows,
        // one of no location.
        event(9, &[("name", "mark"), ("end", "9")]),
        event(10, &[("name", "tracepipe.row"), ("value", "2")]),
        common::row(&[("kind", "event"), ("time", "10"), ("name", "nowhere")]),
    ];
    rows.extend(odd.iter().cloned());
    // Many events: the global definitions do not grow with them.
    for t in 11..20_011 {
        rows.push(event(
            t,
            &[("name", "iteration"), ("value", &(t % 7).to_string())],
        ));
    }
    let input = dir.join("events.tsv");
    std::fs::write(&input, common::stream(&rows)).unwrap();
    let anchor = dir.join("t.otf2");
    write_otf2(&input, &anchor, &[]).unwrap();
    let (back, _) = cat(&anchor).unwrap();
    let body = |text: &str| {
        text.lines()
            .filter(|l| !["meta", "kind"].contains(&kind_of(l)))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(body(&back), body(&common::stream(&rows)));
    let defs = std::fs::metadata(anchor.with_extension("def"))
        .unwrap()
        .len();
    assert!(defs < 4096, "{defs} bytes of definitions");
    if reference().is_some() {
        let out = run(Command::new("otf2-print").arg(&anchor));
        for record in ["PARAMETER_INT64", "PARAMETER_UINT64", "PARAMETER_STRING"] {
            assert!(out.contains(record), "{record} in {out:.2000}");
        }
        let whole = out.matches("Parameter: \"tracepipe.row\"").count();
        assert_eq!(whole, 3, "the three rows kept whole");
    }
}

/// The external archives, when they and otf2-print are here (skipped
/// otherwise, failing under CI: [`common::corpus`], [`reference`]).
fn archives_and_reference() -> Option<Vec<(String, PathBuf)>> {
    let archives = common::external_archives();
    (!archives.is_empty() && reference().is_some()).then_some(archives)
}

#[test]
fn archives_other_tools_wrote_read_as_otf2_print_reads_them() {
    let Some(archives) = archives_and_reference() else {
        return;
    };
    for (name, anchor) in &archives {
        let out = bin("trace-cat").arg(anchor).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        // One warning at most: APEX's leaves that name no open region.
        let warnings = err.matches("warning").count();
        match name.starts_with("apex") {
            true => assert!(
                warnings == 1 && err.contains("leave(s) named no open frame"),
                "{name}: {err}"
            ),
            false => assert_eq!(warnings, 0, "{name}: {err}"),
        }
        agrees_with_otf2_print(anchor);
        profile_agrees(anchor);
    }
}

/// Per region, exclusive time from otf2-print's `ENTER`/`LEAVE` lines: the
/// region's time less its direct children's, on each location's stack.
fn region_exclusive_times(events: &BTreeMap<String, Vec<Keyed>>) -> BTreeMap<String, i64> {
    let mut total = BTreeMap::new();
    for list in events.values() {
        let mut open: Vec<(&str, i64, i64)> = Vec::new();
        for (t, key) in list {
            if let Some(name) = key.strip_prefix("ENTER ") {
                open.push((name, *t, 0));
            } else if key.starts_with("LEAVE ") {
                let (name, since, children) = open.pop().expect("balanced");
                *total.entry(name.to_string()).or_insert(0) += t - since - children;
                if let Some(parent) = open.last_mut() {
                    parent.2 += t - since;
                }
            }
        }
    }
    total
}

#[test]
fn thread_forks_and_teams_take_no_time_from_the_function_around_them() {
    let archives = common::external_archives();
    let Some((_, anchor)) = archives.iter().find(|(n, _)| n.contains("jacobi")) else {
        return;
    };
    if reference().is_none() {
        return;
    }
    let (printed, _) = printed(anchor);
    let want = region_exclusive_times(&printed);
    let text = common::output_of("trace-stat", &["profile"], &[anchor]);
    let got: BTreeMap<&str, i64> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0], f[3].parse().unwrap())
        })
        .collect();
    // jacobi forks its OpenMP teams: its exclusive time is its own.
    assert!(want["jacobi"] > 40_000_000, "{}", want["jacobi"]);
    for (name, time) in &want {
        assert_eq!(
            got.get(name.as_str()),
            Some(time),
            "exclusive time of {name}"
        );
    }
}

#[test]
fn imbalance_on_a_trace_with_gpu_streams_compares_the_ranks() {
    let archives = common::external_archives();
    let Some((_, anchor)) = archives.iter().find(|(n, _)| n.contains("cloverleaf")) else {
        return;
    };
    let out = bin("trace-stat")
        .arg("imbalance")
        .arg(anchor)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let waitall: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("MPI_Waitall\t"))
        .expect("MPI_Waitall")
        .split('\t')
        .collect();
    // The two ranks' master threads, by their short labels.
    assert_eq!(waitall[1], "2");
    assert_eq!(waitall[5], "MPI Rank 1/Master thread");
    assert_eq!(waitall[6], "1.313");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("(2 `gpu`)"), "{err}");
}

/// How many records of each kind otf2-print prints of `anchor`, and what
/// it says on stderr.
fn record_counts(anchor: &Path) -> (BTreeMap<String, usize>, String) {
    let out = Command::new("otf2-print").arg(anchor).output().unwrap();
    assert!(out.status.success(), "otf2-print {}", anchor.display());
    let mut counts = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut parts = line.split_whitespace();
        if let (Some(record), Some(loc)) = (parts.next(), parts.next()) {
            if loc.parse::<u64>().is_ok()
                && record.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            {
                *counts.entry(record.to_string()).or_default() += 1;
            }
        }
    }
    (counts, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The rows of `anchor` as tracepipe reads them, but the `meta` rows, in
/// order (rows of one time on several locations may come in another order
/// once written: locations are numbered anew).
fn sorted_rows(anchor: &Path) -> Vec<String> {
    let text = common::output_of("trace-cat", &["-q"], &[anchor]);
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| kind_of(l) != "meta")
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

#[test]
fn archives_other_tools_wrote_are_written_back_record_for_record() {
    let Some(archives) = archives_and_reference() else {
        return;
    };
    for (name, anchor) in &archives {
        let copy = scratch(&format!("otf2-again-{name}")).join("traces.otf2");
        write_otf2(anchor, &copy, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (want, _) = record_counts(anchor);
        let (got, warnings) = record_counts(&copy);
        assert_eq!(warnings, "", "{name}: otf2-print warned");
        assert_eq!(got, want, "{name}: records by kind");
        assert!(
            sorted_rows(&copy) == sorted_rows(anchor),
            "{name}: rows read back"
        );
    }
}

/// A location defined again is read once, with a warning, as the
/// reference library does: its events are not read twice.
#[test]
fn a_location_defined_again_is_read_once() {
    let (text, err) = damaged(
        "otf2-redefined",
        |a| {
            // The definitions only: the builder's own files stay as they are.
            a.push(|b| def::location(b, 0, 4, 1, 0))
                .group_of_locations(1, 3, 1, 0);
        },
        |_| {},
    )
    .unwrap();
    let sends = text.lines().filter(|l| kind_of(l) == "send").count();
    assert_eq!(sends, ITERATIONS as usize);
    assert!(
        err.contains("2 definition(s) given again, e.g. location 0: the first of each is read"),
        "{err}"
    );
}

/// Definitions that name large tables many times are read in memory and
/// time of what the file holds: communicators of one group share its rank
/// table, instances of a metric class its members, and a record naming a
/// long string again and again is refused at its place. Both archives
/// once took gigabytes.
#[test]
fn definitions_that_multiply_stay_bounded() {
    use tracepipe::formats::otf2::defs::id;
    let dir = scratch("otf2-defs-bomb");
    let mut a = small_archive(|a| {
        let members: Vec<u64> = (0..50_000).collect();
        a.group(3, 7, 4, 5, &members);
        for c in 2..20_002 {
            a.comm(c, 7, 3);
        }
        a.metric_class(1, &[0; 250]);
        for m in 2..20_002u32 {
            a.def(id::METRIC_INSTANCE, |b| {
                b.u32c(m).u32c(1).u64c(0).u8(0).u64c(0);
            });
        }
    });
    let text =
        common::run_in_memory("trace-cat", 768, &[a.write(&dir, "traces").unwrap()]).unwrap();
    let sends = text.lines().filter(|l| kind_of(l) == "send").count();
    assert_eq!(sends, ITERATIONS as usize);
    let dir = scratch("otf2-attribute-bomb");
    a = small_archive(|a| {
        a.string(20, &"x".repeat(100_000));
        let attrs = vec![(0, 11, 20); 5_000];
        a.files(0)
            .events
            .push(&event(EXTRA, 14, false, &attrs, |b| {
                b.u32c(1).u32c(0).u32c(3).u64c(8);
            }));
    });
    let err =
        common::run_in_memory("trace-cat", 768, &[a.write(&dir, "traces").unwrap()]).unwrap_err();
    assert!(
        err.contains("traces/0.evt: byte ")
            && err.contains("would make a row of more than 1048576 bytes of text"),
        "{err}"
    );
}

/// Many small locations cost what they hold: a window no larger than the
/// event file, each location's reader made once in its box. 20 000
/// locations of one frame each took 170 MB; 100 000 took 800 MB.
#[test]
fn many_small_locations_cost_their_files_not_a_window_each() {
    const THREADS: usize = 20_000;
    let dir = scratch("otf2-many-locations");
    let mut rows = Vec::new();
    for t in 0..THREADS {
        let loc = format!("t{t}");
        rows.push(common::row(&[
            ("kind", "container"),
            ("loc", &loc),
            ("cat", "thread"),
        ]));
    }
    for (kind, from) in [("enter", 0), ("leave", THREADS)] {
        for t in 0..THREADS {
            let (time, loc) = ((from + t).to_string(), format!("t{t}"));
            let fields = [
                ("kind", kind),
                ("time", &*time),
                ("loc", &*loc),
                ("name", "f"),
            ];
            rows.push(common::row(&fields));
        }
    }
    let input = dir.join("threads.tsv");
    std::fs::write(&input, common::stream(&rows)).unwrap();
    let anchor = dir.join("threads.otf2");
    bin("trace-cat")
        .args(["-q", "-t", "otf2", "-o"])
        .arg(&anchor)
        .arg(&input)
        .assert()
        .success();
    let text = common::run_in_memory("trace-cat", 128, &[anchor]).expect("read in 128 MiB");
    let frames = text.lines().filter(|l| kind_of(l) == "leave").count();
    assert_eq!(frames, THREADS);
}

/// `trace-stat profile --counters` on a Score-P trace with PAPI counters at
/// every frame boundary (`tests/data/otf2-papi`, from pipit's tests)
/// agrees with the changes `tests/otf2/counters.py` works out through the
/// reference library's reader.
#[test]
fn counters_per_function_agree_with_the_reference_reader() {
    let Some(python) = reference() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let anchor = root.join("tests/data/otf2-papi/traces.otf2");
    let want = run(Command::new(python)
        .arg(root.join("tests/otf2/counters.py"))
        .arg(&anchor));
    let got = common::output_of(
        "trace-stat",
        &["profile", "--counters", "--no-header"],
        &[&anchor],
    );
    let mut got: Vec<&str> = got.lines().collect();
    got.sort_unstable();
    assert_eq!(want.lines().count(), 21, "{want}");
    assert_eq!(got, want.lines().collect::<Vec<_>>());
}
