//! `trace-stat`: reports agree with figures computed independently from the
//! reference tools' outputs, and profiles add up.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use common::{bin, corpus, row, scratch, stream, Rng};

/// Runs `trace-stat ARGS FILE`: (stdout, stderr, success).
fn stat(args: &[&str], file: &Path) -> (String, String, bool) {
    let out = bin("trace-stat").args(args).arg(file).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr), out.status.success())
}

/// The report's rows as column name → value maps.
fn table(out: &str) -> Vec<HashMap<String, String>> {
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t'))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// A `%21.9f` time of seconds as integer ns.
fn ns(text: &str) -> i64 {
    text.trim().replace('.', "").parse().unwrap()
}

/// Per name: frames and inclusive time (each outermost frame of a name once)
/// from upstream `pallas_print -T` output.
fn upstream_profile(text: &str) -> BTreeMap<String, (u64, i64)> {
    let mut out: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    let mut stack: Vec<(String, i64)> = Vec::new();
    for line in text.lines() {
        if line.trim() == "Timestamp" {
            stack.clear(); // A new thread.
            continue;
        }
        let Some((time, event)) = line.trim_start().split_once("    ") else {
            continue;
        };
        let name = |e: &str| e[e.find('(').unwrap() + 1..e.len() - 1].to_string();
        if event.starts_with("Enter ") {
            stack.push((name(event), ns(time)));
        } else if event.starts_with("Leave ") {
            let (n, start) = stack.pop().unwrap();
            let outermost = !stack.iter().any(|(m, _)| *m == n);
            let e = out.entry(n).or_default();
            e.0 += 1;
            if outermost {
                e.1 += ns(time) - start;
            }
        }
    }
    out
}

/// Pallas corpus: per-function counts and inclusive times equal what the
/// upstream per-thread output gives.
#[test]
fn pallas_profile_matches_upstream_enter_leave() {
    let Some(dir) = corpus("pallas") else { return };
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let trace = entry.unwrap().path();
        let name = trace.file_name().unwrap().to_str().unwrap().to_string();
        let expected = dir.join("expected").join(format!("{name}.txt"));
        // The lossy codecs decode garbage times that the reader raises to
        // keep time order (docs/formats.md): durations differ there.
        if !trace.is_dir() || !expected.exists() || name.contains("lossy") {
            continue;
        }
        let want = upstream_profile(&std::fs::read_to_string(&expected).unwrap());
        let (out, err, ok) = stat(&["profile", "--by", "cat,name"], &trace);
        assert!(ok, "{name}: {err}");
        let got: BTreeMap<String, (u64, i64)> = table(&out)
            .into_iter()
            .filter(|r| r["cat"].is_empty())
            .map(|r| {
                (
                    r["name"].clone(),
                    (r["count"].parse().unwrap(), r["inclusive"].parse().unwrap()),
                )
            })
            .collect();
        assert_eq!(got, want, "{name}");
        checked += usize::from(!want.is_empty());
    }
    assert!(checked >= 6, "only {checked} traces checked");
}

/// Pajé corpus: time per (container, state type, value) equals the sum of
/// the `State` lines of the expected pj_dump output.
#[test]
fn paje_states_match_pjdump_state_lines() {
    let Some(dir) = corpus("paje") else { return };
    let mut checked = 0;
    let indexes = [
        ("", "expected/INDEX.tsv"),
        ("edge/", "expected/edge/INDEX.tsv"),
    ];
    let lines: Vec<(&str, String)> = indexes
        .iter()
        .flat_map(|(folder, index)| {
            let text = std::fs::read_to_string(dir.join(index)).unwrap();
            text.lines()
                .skip(1)
                .map(|l| (*folder, l.to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    for (folder, line) in &lines {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols[1] != "(none)" || cols[2] != "0" || common::paje_differs_from_pajeng(cols[0]) {
            continue;
        }
        let input = dir.join(folder).join(cols[0]);
        let listing = bin("trace-cat").arg(&input).output().unwrap();
        if !listing.status.success() {
            continue; // A deliberate difference of the reader (tests/paje.rs).
        }
        let listing = String::from_utf8(listing.stdout).unwrap();
        let mut names = HashMap::new();
        for l in listing.lines() {
            let f: Vec<&str> = l.split('\t').collect();
            match f[0] {
                "type" => names.insert(("type", f[11].to_string()), f[5].to_string()),
                "container" => names.insert(("container", f[3].to_string()), f[5].to_string()),
                _ => None,
            };
        }
        let mut want: BTreeMap<(String, String, String), (u64, f64)> = BTreeMap::new();
        let dump =
            std::fs::read_to_string(dir.join("expected").join(folder).join(cols[3])).unwrap();
        for l in dump.lines().filter(|l| l.starts_with("State, ")) {
            let f: Vec<&str> = l.split(", ").collect();
            let e = want
                .entry((f[1].into(), f[2].into(), f[7..].join(", ")))
                .or_default();
            e.0 += 1;
            e.1 += f[5].parse::<f64>().unwrap();
        }
        let (out, err, ok) = stat(&["states", "--unit", "s"], &input);
        assert!(ok, "{}: {err}", cols[0]);
        let named = |what: &'static str, id: &str| {
            names
                .get(&(what, id.to_string()))
                .cloned()
                .unwrap_or_else(|| id.to_string())
        };
        let got: BTreeMap<(String, String, String), (u64, f64)> = table(&out)
            .into_iter()
            .map(|r| {
                let key = (
                    named("container", &r["container"]),
                    named("type", &r["type"]),
                    r["value"].clone(),
                );
                (
                    key,
                    (r["count"].parse().unwrap(), r["time"].parse().unwrap()),
                )
            })
            .collect();
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{}",
            cols[0]
        );
        for (key, (n, time)) in &want {
            let (m, t) = got[key];
            // pj_dump rounds each duration to the µs.
            assert!(
                m == *n && (t - time).abs() <= 1e-6 * (*n as f64) + 1e-9,
                "{} {key:?}: {m} {t} vs {n} {time}",
                cols[0]
            );
        }
        checked += usize::from(!want.is_empty());
    }
    assert!(checked >= 8, "only {checked} traces checked");
}

/// The exclusive times of a location's frames add up to the time its
/// frames cover, and so does its inclusive time: on random nestings.
#[test]
fn exclusive_times_add_up_to_the_covered_time() {
    let dir = scratch("stat-property");
    for seed in 1..40u64 {
        let mut rng = Rng(seed * 7919);
        let mut rows = Vec::new();
        let mut covered: BTreeMap<String, i64> = BTreeMap::new();
        for loc in ["a", "b", "c"] {
            rows.push(row(&[("kind", "container"), ("loc", loc)]));
        }
        let mut t = 0i64;
        let mut stacks: BTreeMap<&str, Vec<(String, i64)>> = BTreeMap::new();
        let mut body = Vec::new();
        for _ in 0..200 {
            t += rng.below(5) as i64;
            let loc = ["a", "b", "c"][rng.below(3) as usize];
            let stack = stacks.entry(loc).or_default();
            let name = ["f", "g", "h"][rng.below(3) as usize].to_string();
            if stack.is_empty() || (stack.len() < 6 && rng.below(2) == 0) {
                body.push(row(&[
                    ("kind", "enter"),
                    ("time", &t.to_string()),
                    ("loc", loc),
                    ("name", &name),
                ]));
                stack.push((name, t));
            } else {
                let (name, start) = stack.pop().unwrap();
                if stack.is_empty() {
                    *covered.entry(loc.to_string()).or_default() += t - start;
                }
                body.push(row(&[
                    ("kind", "leave"),
                    ("time", &t.to_string()),
                    ("loc", loc),
                    ("name", &name),
                ]));
            }
        }
        for (loc, stack) in &mut stacks {
            while let Some((name, start)) = stack.pop() {
                if stack.is_empty() {
                    *covered.entry(loc.to_string()).or_default() += t - start;
                }
                body.push(row(&[
                    ("kind", "leave"),
                    ("time", &t.to_string()),
                    ("loc", loc),
                    ("name", &name),
                ]));
            }
        }
        rows.extend(body);
        let file = dir.join(format!("seed{seed}.tsv"));
        std::fs::write(&file, stream(&rows)).unwrap();
        let (out, err, ok) = stat(&["profile", "--by", "loc"], &file);
        assert!(ok, "{err}");
        let got: BTreeMap<String, (i64, i64)> = table(&out)
            .into_iter()
            .map(|r| {
                (
                    r["loc"].clone(),
                    (
                        r["exclusive"].parse().unwrap(),
                        r["inclusive"].parse().unwrap(),
                    ),
                )
            })
            .collect();
        let want: BTreeMap<String, (i64, i64)> =
            covered.iter().map(|(l, c)| (l.clone(), (*c, *c))).collect();
        assert_eq!(got, want, "seed {seed}");
        // Per name, exclusive times sum to the same total.
        let (out, _, _) = stat(&["profile", "--by", "loc,name"], &file);
        for (loc, total) in &covered {
            let sum: i64 = table(&out)
                .iter()
                .filter(|r| &r["loc"] == loc)
                .map(|r| r["exclusive"].parse::<i64>().unwrap())
                .sum();
            assert_eq!(sum, *total, "seed {seed} {loc}");
        }
    }
}

/// Reports on the project's examples, in every output form; bad input is
/// located; usage errors exit 2.
#[test]
fn reports_forms_and_errors() {
    let ping = common::data("../../examples/pingpong.tsv");
    let (out, _, ok) = stat(&["messages"], &ping);
    assert!(ok);
    assert_eq!(
        out,
        "sender\treceiver\tcount\tbytes\tmin\tmean\tmax\nMPI rank 0\tMPI rank 1\t3\t12288\t800\t800\t800\n"
    );
    let (out, _, _) = stat(&["messages", "--unit", "us", "--csv", "--ids"], &ping);
    assert_eq!(
        out,
        "sender,receiver,count,bytes,min,mean,max\r\nrank0,rank1,3,12288,0.8,0.8,0.8\r\n"
    );
    let (out, _, _) = stat(&["profile", "--json", "--top", "1"], &ping);
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        (
            v["name"].as_str(),
            v["count"].as_u64(),
            v["exclusive"].as_i64()
        ),
        (Some("main"), Some(2), Some(10130))
    );
    assert_eq!(out.lines().count(), 1);
    let (out, _, _) = stat(&["counters"], &ping);
    assert!(
        out.contains("MPI rank 1\tbytes_received\t3\t4096\t12288\t8192\t6144\t4096\t12288"),
        "{out}"
    );
    let dir = scratch("stat-errors");
    let bad = dir.join("bad.tsv");
    let rows = [
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[
            ("kind", "leave"),
            ("time", "1"),
            ("loc", "a"),
            ("name", "f"),
        ]),
    ];
    std::fs::write(&bad, stream(&rows)).unwrap();
    // A leave with no frame open is an event (one warning), or refused.
    let (_, err, ok) = stat(&[], &bad);
    assert!(
        ok && err.contains("bad.tsv:4: frames that do not nest"),
        "{err}"
    );
    let (_, err, ok) = stat(&["--strict"], &bad);
    assert!(
        !ok && err.contains("bad.tsv:4: leave of `f`, which is not open (--strict)"),
        "{err}"
    );
    let out = bin("trace-stat")
        .args(["counters", "--by", "name"])
        .arg(&ping)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--by name does not apply to the counters report"));
}

/// TRACE corpus: per resource, the claims, claimed time, busy time and
/// amount × time equal the expectations derived from the format's
/// description (`expected/*.json`).
#[test]
fn trace_resources_match_the_expectations() {
    let Some(dir) = corpus("trace") else { return };
    let seconds_per = |unit: &str| match unit {
        "NANOSECONDS" => 1e-9,
        "MICROSECONDS" => 1e-6,
        "MILLISECONDS" => 1e-3,
        "MINUTES" => 60.0,
        "HOURS" => 3600.0,
        _ => 1.0,
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(dir.join("synthetic/valid")).unwrap() {
        let input = entry.unwrap().path();
        let stem = input.file_stem().unwrap().to_str().unwrap().to_string();
        let expected = dir.join("expected").join(format!("{stem}.json"));
        let want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(expected).unwrap()).unwrap();
        let factor = seconds_per(want["time_unit"].as_str().unwrap());
        let (out, err, ok) = stat(&["resources", "--unit", "s"], &input);
        assert!(ok, "{stem}: {err}");
        let got: HashMap<String, HashMap<String, String>> = table(&out)
            .into_iter()
            .map(|r| (r["resource"].clone(), r))
            .collect();
        for (id, r) in want["resources"].as_object().unwrap() {
            let row = &got[&format!("R{id}")];
            let close = |column: &str, value: f64| {
                let ours: f64 = row[column].parse().unwrap_or(0.0);
                assert!(
                    (ours - value).abs() <= 1e-9 * value.abs().max(1e-3),
                    "{stem} R{id} {column}: {ours} vs {value}"
                );
            };
            assert_eq!(row["claims"], r["claims"].to_string(), "{stem} R{id}");
            close("claimed", r["claimed_time_seconds"].as_f64().unwrap());
            close("busy", r["busy_time_seconds"].as_f64().unwrap());
            close("amount_time", r["amount_time"].as_f64().unwrap() * factor);
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} resources checked");
}

/// Duration histograms: per name, the bins cover its shortest to its longest
/// duration in increasing log-spaced edges, and hold every frame.
#[test]
fn histograms_hold_every_frame() {
    let dir = scratch("stat-histogram");
    let mut rng = Rng(42);
    let mut rows = vec![row(&[("kind", "container"), ("loc", "a")])];
    let mut t = 0i64;
    let mut durations: HashMap<&str, Vec<i64>> = HashMap::new();
    for _ in 0..500 {
        let name = ["f", "g"][rng.below(2) as usize];
        let duration = 1 + rng.below(100_000) as i64;
        durations.entry(name).or_default().push(duration);
        rows.push(row(&[
            ("kind", "enter"),
            ("time", &t.to_string()),
            ("loc", "a"),
            ("name", name),
        ]));
        t += duration;
        rows.push(row(&[
            ("kind", "leave"),
            ("time", &t.to_string()),
            ("loc", "a"),
            ("name", name),
        ]));
    }
    let file = dir.join("frames.tsv");
    std::fs::write(&file, stream(&rows)).unwrap();
    let (profile, _, _) = stat(&["profile"], &file);
    let (out, err, ok) = stat(&["profile", "--histogram", "8"], &file);
    assert!(ok, "{err}");
    let bins = table(&out);
    for figures in table(&profile) {
        let name = &figures["name"];
        let mine: Vec<&HashMap<String, String>> =
            bins.iter().filter(|b| &b["name"] == name).collect();
        assert_eq!(mine.len(), 8);
        let total: u64 = mine
            .iter()
            .map(|b| b["count"].parse::<u64>().unwrap())
            .sum();
        assert_eq!(total.to_string(), figures["count"], "{name}");
        let edge = |b: &HashMap<String, String>, c: &str| b[c].parse::<i64>().unwrap();
        assert_eq!(edge(mine[0], "low"), figures["min"].parse::<i64>().unwrap());
        assert_eq!(
            edge(mine[7], "high"),
            figures["max"].parse::<i64>().unwrap()
        );
        // Bins are inclusive ranges, one after the other, and each count is
        // exact: the durations in [low, high].
        assert!(mine
            .windows(2)
            .all(|w| edge(w[0], "high") + 1 == edge(w[1], "low")
                && edge(w[0], "low") <= edge(w[0], "high")));
        for b in &mine {
            let exact = durations[name.as_str()]
                .iter()
                .filter(|&&d| edge(b, "low") <= d && d <= edge(b, "high"))
                .count();
            assert_eq!(b["count"], exact.to_string(), "{name} {b:?}");
        }
    }
    // Values closer than a bucket's width share a bin, and say so.
    let ping = common::data("../../examples/pingpong.tsv");
    let (out, _, _) = stat(&["profile", "--histogram", "3"], &ping);
    assert!(out.contains("\nmain\t10010\t10020\t2\n"), "{out}");
    let out = bin("trace-stat")
        .args(["counters", "--histogram", "4"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Runs `cmd ARGS` and returns its standard output, failing on an error.
fn output(cmd: &str, args: &[&str]) -> String {
    let out = bin(cmd).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Split by location, reported part by part with --partial and merged with
/// --merge (in parallel, with xargs -P2 as the README's recipe does): the
/// same bytes as one run over the whole, for every split and every
/// mergeable report.
#[test]
fn merged_partials_equal_one_run() {
    let dir = scratch("stat-merge");
    let whole = dir.join("whole.tsv");
    let matched = output(
        "trace-match",
        &[
            "-q",
            common::data("../../examples/pingpong.tsv")
                .to_str()
                .unwrap(),
        ],
    );
    let mut rng = Rng(99);
    let locs = ["rank0", "rank1", "a", "b", "c"];
    for seed in 0..6u64 {
        // Frames on a, b, c (open ones left at the end too) and the ping-pong's messages.
        let mut text = matched.clone();
        let mut t = 20_000i64;
        let mut depth = [0usize; 3];
        for _ in 0..120 {
            t += rng.below(7) as i64;
            let l = rng.below(3) as usize;
            let (kind, name) = if depth[l] == 0 || rng.below(2) == 0 {
                depth[l] += 1;
                ("enter", ["f", "g"][depth[l] % 2])
            } else {
                depth[l] -= 1;
                ("leave", ["f", "g"][(depth[l] + 1) % 2])
            };
            text.push_str(&row(&[
                ("kind", kind),
                ("time", &t.to_string()),
                ("loc", locs[2 + l]),
                ("name", name),
            ]));
            text.push('\n'); // Counter samples with fractions: their float sums must merge exactly.
            if rng.below(3) == 0 {
                let value = format!("{}.{}", rng.below(1000), rng.below(1000));
                text.push_str(&row(&[
                    ("kind", "counter"),
                    ("time", &t.to_string()),
                    ("loc", locs[2 + l]),
                    ("name", ["load", "mem"][rng.below(2) as usize]),
                    ("value", &value),
                ]));
                text.push('\n');
            }
        }
        let declared: String = ["a", "b", "c"]
            .iter()
            .map(|l| row(&[("kind", "container"), ("loc", l)]) + "\n")
            .collect();
        let at = text.find("\ncontainer").unwrap() + 1;
        text.insert_str(at, &declared);
        std::fs::write(&whole, &text).unwrap();
        // A random split of the locations into two parts.
        let mine: Vec<&str> = locs.iter().copied().filter(|_| rng.below(2) == 0).collect();
        let globs: Vec<String> = if mine.is_empty() {
            vec!["none".into()]
        } else {
            mine.iter().map(|l| l.to_string()).collect()
        };
        let mut keep = vec!["-q".to_string()];
        for g in &globs {
            keep.extend(["-l".to_string(), g.clone()]);
        }
        let part1 = dir.join("part1.tsv");
        let part2 = dir.join("part2.tsv");
        let args1: Vec<&str> = keep
            .iter()
            .map(String::as_str)
            .chain([whole.to_str().unwrap()])
            .collect();
        std::fs::write(&part1, output("trace-filter", &args1)).unwrap();
        let args2: Vec<&str> = keep
            .iter()
            .map(String::as_str)
            .chain(["-v", whole.to_str().unwrap()])
            .collect();
        std::fs::write(&part2, output("trace-filter", &args2)).unwrap();
        let reports = [
            "profile",
            "states",
            "messages",
            "counters",
            "imbalance --per-location",
            "imbalance --inclusive",
            "timeline --bin 5",
            "timeline --bin 7 --wide",
            "messages --matrix --time",
            "messages --histogram 4",
        ];
        for report in reports {
            let mut args: Vec<&str> = report.split(' ').collect();
            args.push(whole.to_str().unwrap());
            let one = output("trace-stat", &args);
            let script = format!(
                "printf '%s\\n' {p1} {p2} | xargs -P2 -I{{}} {bin} {report} -q --partial -o {{}}.part {{}} && {bin} {report} --merge {p1}.part {p2}.part",
                p1 = part1.display(),
                p2 = part2.display(),
                bin = assert_cmd::cargo::cargo_bin("trace-stat").display(),
            );
            let merged = std::process::Command::new("sh")
                .arg("-c")
                .arg(&script)
                .output()
                .unwrap();
            assert!(
                merged.status.success(),
                "{}",
                String::from_utf8_lossy(&merged.stderr)
            );
            assert_eq!(
                String::from_utf8(merged.stdout).unwrap(),
                one,
                "seed {seed} {report} split {mine:?}"
            );
        }
    }
    // A partial of another report, or no partial at all, is refused at line 1.
    let (_, err, ok) = stat(&["states", "--merge"], &dir.join("part1.tsv.part"));
    assert!(
        !ok && err.contains(
            "part1.tsv.part:1: expected a partial report starting `tracepipe-stat-partial/2 states"
        ),
        "{err}"
    );
    for report in ["summary", "waits", "critical-path"] {
        let (_, err, ok) = stat(&[report, "--partial"], &whole);
        let refusal = format!("the {report} report cannot be merged");
        assert!(!ok && err.contains(&refusal), "{err}");
    }
    let (_, err, ok) = stat(&["timeline", "--bins", "4", "--partial"], &whole);
    assert!(!ok && err.contains("need --bin WIDTH"), "{err}");
    // One counter series in two parts cannot merge exactly: refused, located.
    let part = dir.join("whole.part");
    let out = bin("trace-stat")
        .args(["counters", "--partial", "-o"])
        .arg(&part)
        .arg(&whole)
        .output()
        .unwrap();
    assert!(out.status.success());
    let (_, err, ok) = stat(&["counters", "--merge", part.to_str().unwrap()], &part);
    assert!(
        !ok && err.contains("whole.part:2: counter `")
            && err.contains("has samples in two parts: split the trace by location"),
        "{err}"
    );
}

/// The summary of the ping-pong: span, rows per kind (halves paired into
/// messages), locations, messages, unmatched halves, waits (each send
/// lasts 50 ns past its receive's enter), heaviest functions.
#[test]
fn summary_of_the_example() {
    let ping = common::data("../../examples/pingpong.tsv");
    let (out, err, ok) = stat(&["summary", "--unit", "us"], &ping);
    assert!(ok, "{err}");
    let want = "item\tname\tvalue\nfirst\t\t0\nlast\t\t10.02\nspan\t\t10.02\n\
        rows\tmeta\t2\nrows\tcontainer\t3\nrows\tenter\t11\nrows\tleave\t11\nrows\tevent\t1\n\
        rows\tmsg\t3\nrows\tcounter\t3\nlocations\t\t2\nmessages\t\t3\n\
        unmatched\tsend\t0\nunmatched\trecv\t0\n\
        wait\tlate-sender\t0\nwait\tlate-receiver\t0.15\nwait\twait-nxn\t0\n\
        wait\tlate-broadcast\t0\nwait\tearly-reduce\t0\n\
        function\tmain\t10.13\nfunction\tcompute\t6\n\
        function\tMPI_Recv\t2.7\nfunction\tMPI_Send\t1.2\n";
    assert_eq!(out, want);
}

/// The summary counts the locations that hold rows, not the containers
/// above them (a node, a process around its threads), nor one that only
/// begins and ends; a message's receiver holds it.
#[test]
fn summary_counts_the_locations_that_hold_rows() {
    let dir = scratch("stat-summary-locations");
    let file = dir.join("nested.tsv");
    let container = |loc: &str, parent: &str| {
        row(&[
            ("kind", "container"),
            ("time", "0"),
            ("loc", loc),
            ("peer", parent),
        ])
    };
    let rows = [
        container("node", ""),
        container("proc", "node"),
        container("t0", "proc"),
        container("t1", "proc"),
        container("idle", "proc"),
        container("recv", "node"),
        row(&[
            ("kind", "enter"),
            ("time", "1"),
            ("loc", "t0"),
            ("name", "f"),
        ]),
        row(&[
            ("kind", "leave"),
            ("time", "2"),
            ("loc", "t0"),
            ("name", "f"),
        ]),
        row(&[
            ("kind", "event"),
            ("time", "3"),
            ("loc", "t1"),
            ("name", "e"),
        ]),
        row(&[
            ("kind", "msg"),
            ("time", "3"),
            ("end", "4"),
            ("loc", "t1"),
            ("peer", "recv"),
        ]),
        row(&[("kind", "destroy"), ("time", "5"), ("loc", "idle")]),
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let (out, err, ok) = stat(&["summary"], &file);
    assert!(ok, "{err}");
    let locations: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("locations\t"))
        .collect();
    assert_eq!(locations, ["locations\t\t3"], "{out}");
}

/// A misspelt report is a usage error naming the reports.
#[test]
fn an_unknown_report_is_a_usage_error() {
    let out = bin("trace-stat")
        .args(["profil", "examples/pingpong.tsv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("unknown report `profil` (reports: profile, messages"));
}

/// Resources merge when each is in one part; one in two parts is refused.
#[test]
fn resources_merge_by_resource() {
    let dir = scratch("stat-merge-resources");
    let camera = common::data("../../examples/camera.etf");
    let camera = camera.to_str().unwrap();
    let (p1, p2) = (dir.join("p1.tsv"), dir.join("p2.tsv"));
    std::fs::write(&p1, output("trace-filter", &["-l", "R[01]", camera])).unwrap();
    std::fs::write(&p2, output("trace-filter", &["-v", "-l", "R[01]", camera])).unwrap();
    let one = output("trace-stat", &["resources", "--unit", "ms", camera]);
    let mut parts = Vec::new();
    for p in [&p1, &p2] {
        let part = format!("{}.partial", p.display());
        output(
            "trace-stat",
            &["resources", "--partial", "-o", &part, p.to_str().unwrap()],
        );
        parts.push(part);
    }
    let merged = output(
        "trace-stat",
        &["resources", "--unit", "ms", "--merge", &parts[0], &parts[1]],
    );
    assert_eq!(merged, one);
    assert_eq!(one.lines().count(), 4, "{one}");
    let (_, err, ok) = stat(&["resources", "--merge", &parts[0]], Path::new(&parts[0]));
    assert!(
        !ok && err.contains(
            ".partial:3: resource `R0` has claims in two parts: split the trace by resource"
        ),
        "{err}"
    );
}

/// A counter sample that is no number is left out of the figures, and said.
#[test]
fn a_sample_that_is_no_number_is_warned() {
    let dir = scratch("stat-nan");
    let file = dir.join("c.tsv");
    let rows = [
        row(&[("kind", "container"), ("loc", "a")]),
        row(&[
            ("kind", "counter"),
            ("time", "1"),
            ("loc", "a"),
            ("name", "load"),
            ("value", "2.5"),
        ]),
        row(&[
            ("kind", "counter"),
            ("time", "2"),
            ("loc", "a"),
            ("name", "load"),
            ("value", "n/a"),
        ]),
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let (out, err, ok) = stat(&["counters"], &file);
    assert!(ok, "{err}");
    assert!(
        out.ends_with("a\tload\t1\t2.5\t2.5\t2.5\t2.5\t2.5\t2.5\n"),
        "{out}"
    );
    assert!(
        err.contains("1 counter sample(s) whose value is not a number left out (the first: `n/a` of `load` on `a`)"),
        "{err}"
    );
}

/// A SimGrid-style trace (numeric aliases, a container named like another's
/// alias, two containers of one name): every report prints what the trace
/// calls a location or a type; `--ids` prints the stream's ids.
#[test]
fn reports_print_names_not_aliases() {
    let smpi = common::data("paje/smpi_aliases.paje");
    let rows = |args: &[&str]| -> Vec<String> {
        let (out, err, ok) = stat(args, &smpi);
        assert!(ok, "{args:?}: {err}");
        out.lines().skip(1).map(str::to_string).collect()
    };
    let first_fields = |args: &[&str], n: usize| -> Vec<String> {
        rows(args)
            .iter()
            .map(|l| l.split('\t').take(n).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(first_fields(&["messages"], 2), ["rank-0 rank-1"]);
    assert_eq!(first_fields(&["messages", "--ids"], 2), ["1 2"]);
    assert_eq!(
        first_fields(&["counters"], 2),
        ["9 speed", "node-a/gpu load", "node-b/gpu load"]
    );
    assert_eq!(
        first_fields(&["counters", "--ids"], 2),
        ["12 load", "13 load", "3 speed"]
    );
    assert_eq!(
        first_fields(&["states"], 3),
        [
            "rank-2 MPI_STATE compute",
            "rank-1 MPI_STATE PMPI_Recv",
            "rank-0 MPI_STATE PMPI_Send"
        ]
    );
    assert_eq!(
        first_fields(&["states", "--ids"], 3),
        ["9 3 compute", "2 3 PMPI_Recv", "1 3 PMPI_Send"]
    );
    assert_eq!(
        first_fields(&["profile", "--by", "loc,name"], 2),
        ["rank-2 compute", "rank-1 PMPI_Recv", "rank-0 PMPI_Send"]
    );
    assert_eq!(
        first_fields(&["profile", "--by", "cat,name"], 2),
        [
            "MPI_STATE compute",
            "MPI_STATE PMPI_Recv",
            "MPI_STATE PMPI_Send"
        ]
    );
    // Partial reports carry the labels, so a merge prints them too.
    let dir = common::scratch("labels");
    let part = dir.join("part");
    let (_, err, ok) = stat(
        &["states", "--partial", "-o", part.to_str().unwrap()],
        &smpi,
    );
    assert!(ok, "{err}");
    let (out, err, ok) = stat(&["states", "--merge"], &part);
    assert!(ok, "{err}");
    assert!(
        out.contains("rank-2\tMPI_STATE\tcompute\t1\t1500000000"),
        "{out}"
    );
}

/// A partial report that cannot be read is an input error (1), not a
/// usage error (2).
#[test]
fn a_missing_partial_is_an_input_error() {
    let (_, err, _) = stat(&["--merge"], Path::new("/nonexistent"));
    let status = bin("trace-stat")
        .args(["--merge", "/nonexistent"])
        .output()
        .unwrap()
        .status;
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("/nonexistent: No such file"), "{err}");
}

/// Counter means are printed as exact decimals, as min and max are: from
/// the exact sum of the values as written, in their shortest form.
#[test]
fn counter_means_are_exact_decimals() {
    let dir = scratch("counter-means");
    let file = dir.join("c.tsv");
    let sample = |t: &str, v: &str| {
        row(&[
            ("kind", "counter"),
            ("time", t),
            ("loc", "a"),
            ("name", "load"),
            ("value", v),
        ])
    };
    let rows = [
        row(&[("kind", "container"), ("loc", "a")]),
        sample("0", "0.1"),
        sample("1", "0.2"),
        sample("3", "0.3"),
    ];
    std::fs::write(&file, stream(&rows)).unwrap();
    let (out, err, ok) = stat(&["counters"], &file);
    assert!(ok, "{err}");
    // (0.1 + 0.2 + 0.3) / 3 = 0.2 exactly; in f64 arithmetic the sum is
    // 0.6000000000000001. Time-weighted: (0.1 × 1 + 0.2 × 2) / 3.
    assert_eq!(
        out.lines().nth(1),
        Some("a\tload\t3\t0.1\t0.3\t0.2\t0.16666666666666666\t0.1\t0.3"),
        "{out}"
    );
    // The exact sum travels through a partial report.
    let part = dir.join("part");
    let (_, err, ok) = stat(
        &["counters", "--partial", "-o", part.to_str().unwrap()],
        &file,
    );
    assert!(ok, "{err}");
    let (merged, err, ok) = stat(&["counters", "--merge"], &part);
    assert!(ok, "{err}");
    assert_eq!(merged, out);
}

/// A partial report is input like any other: every field is checked, and
/// a file cut at a line boundary or inside its last line is refused, each
/// at its line.
#[test]
fn damaged_partials_are_refused_at_their_line() {
    let dir = scratch("damaged-partials");
    let ping = common::data("../../examples/pingpong.tsv");
    let partial = |report: &str| {
        let (out, err, ok) = stat(&[report, "--partial"], &ping);
        assert!(ok, "{err}");
        out
    };
    // Field `col` of line `line` (1-based) of a partial replaced by `value`.
    let edit = |text: &str, line: usize, col: usize, value: &str| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut fields: Vec<&str> = lines[line - 1].split('\t').collect();
        fields[col] = value;
        lines[line - 1] = fields.join("\t");
        lines.join("\n") + "\n"
    };
    let refused = |report: &str, files: &[String], want: &str| {
        let paths: Vec<String> = files
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let p = dir.join(format!("{report}.{i}.part"));
                std::fs::write(&p, text).unwrap();
                p.display().to_string()
            })
            .collect();
        let mut args = vec![report, "--merge"];
        args.extend(paths.iter().map(String::as_str));
        let out = bin("trace-stat").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{report} {want}: {err}");
        assert!(err.contains(want), "wanted {want:?} in {err}");
    };
    let profile = partial("profile");
    let min_above_max = edit(&profile, 2, 5, "901");
    refused(
        "profile",
        &[min_above_max],
        "profile.0.part:2: minimum 901 above maximum 900",
    );
    let own_above_all = edit(&profile, 2, 3, "999999999999");
    refused(
        "profile",
        &[own_above_all],
        "profile.0.part:2: exclusive time 999999999999 above inclusive time",
    );
    let per_location = edit(&partial("imbalance"), 2, 4, "999999999999");
    refused(
        "imbalance",
        &[per_location],
        "imbalance.0.part:2: exclusive time 999999999999 above inclusive time",
    );
    let messages = partial("messages");
    let negative = edit(&messages, 2, 2, "-1");
    refused(
        "messages",
        &[negative],
        "messages.0.part:2: count `-1` is not a number",
    );
    let states = partial("states");
    let huge = edit(&states, 2, 3, &u64::MAX.to_string());
    refused(
        "states",
        &[huge.clone(), huge],
        "states.1.part:2: the merged count overflows",
    );
    let counters = partial("counters");
    let inverted = edit(&counters, 2, 3, "20000");
    refused(
        "counters",
        &[inverted],
        "counters.0.part:2: minimum 20000 above maximum 12288",
    );
    let nan = edit(&counters, 2, 5, "NaN");
    refused(
        "counters",
        &[nan],
        "counters.0.part:2: sum `NaN` is not a finite number",
    );
    // Cut inside its last line, at a line boundary, or mixed with another report.
    let cut = &profile[..profile.len() - 3];
    refused(
        "profile",
        &[cut.to_string()],
        "the last line has no newline: the file was cut",
    );
    let lines: Vec<&str> = profile.lines().collect();
    let at_boundary = lines[..lines.len() - 1].join("\n") + "\n";
    refused(
        "profile",
        &[at_boundary],
        "the file ends without its trailer",
    );
    let short = lines[..2].join("\n") + "\n" + lines[lines.len() - 1] + "\n";
    refused(
        "profile",
        &[short],
        "profile.0.part:3: expected the trailer",
    );
    let older = profile.replacen("partial/2", "partial/1", 1);
    refused(
        "profile",
        &[older],
        "written by another version of trace-stat",
    );
}

/// Durations and spans are exact or a located error in every report: two
/// times more than 2^63 ns apart never wrap around; counter extremes are
/// exact beyond 2^53, non-finite samples are left out with the warning
/// non-numbers get, and claim amounts must be finite and non-negative.
#[test]
fn figures_never_wrap_or_round() {
    let dir = scratch("arithmetic");
    let write = |name: &str, rows: &[String]| {
        let file = dir.join(name);
        let mut all = vec![row(&[("kind", "container"), ("loc", "a")])];
        all.extend_from_slice(rows);
        std::fs::write(&file, stream(&all)).unwrap();
        file
    };
    let (far_before, far_after) = ("-9000000000000000000", "9000000000000000000");
    let long_state = write(
        "state.tsv",
        &[row(&[
            ("kind", "state"),
            ("time", far_before),
            ("end", far_after),
            ("loc", "a"),
            ("name", "f"),
        ])],
    );
    for report in ["profile", "states", "summary"] {
        let (_, err, ok) = stat(&[report], &long_state);
        assert!(!ok, "{report}");
        assert!(err.contains("state.tsv:4: from -9000000000000000000 ns to 9000000000000000000 ns is more than 2^63 ns"), "{report}: {err}");
    }
    let frames = write(
        "frames.tsv",
        &[
            row(&[
                ("kind", "enter"),
                ("time", far_before),
                ("loc", "a"),
                ("name", "f"),
            ]),
            row(&[
                ("kind", "leave"),
                ("time", far_after),
                ("loc", "a"),
                ("name", "f"),
            ]),
        ],
    );
    let (_, err, ok) = stat(&["profile"], &frames);
    assert!(
        !ok && err.contains("frames.tsv:5: from -9000000000000000000"),
        "{err}"
    );
    let message = write(
        "msg.tsv",
        &[row(&[
            ("kind", "msg"),
            ("time", far_before),
            ("end", far_after),
            ("loc", "a"),
            ("peer", "a"),
            ("tag", "1"),
        ])],
    );
    let (_, err, ok) = stat(&["messages"], &message);
    assert!(
        !ok && err.contains("msg.tsv:4: from -9000000000000000000"),
        "{err}"
    );
    // A span of 18e18 ns is printed whole.
    let events = write(
        "events.tsv",
        &[
            row(&[
                ("kind", "event"),
                ("time", far_before),
                ("loc", "a"),
                ("name", "e"),
            ]),
            row(&[
                ("kind", "event"),
                ("time", far_after),
                ("loc", "a"),
                ("name", "e"),
            ]),
        ],
    );
    let (out, err, ok) = stat(&["summary"], &events);
    assert!(ok, "{err}");
    assert!(out.contains("span\t\t18000000000000000000\n"), "{out}");
    let (out, _, _) = stat(&["summary", "--unit", "s"], &events);
    assert!(out.contains("span\t\t18000000000\n"), "{out}");
    // Counters: exact extremes above 2^53; NaN and infinities left out.
    let sample = |t: &str, v: &str| {
        row(&[
            ("kind", "counter"),
            ("time", t),
            ("loc", "a"),
            ("name", "c"),
            ("value", v),
        ])
    };
    let counters = write(
        "counters.tsv",
        &[
            sample("1", "9007199254740993"),
            sample("2", "9007199254740992"),
            sample("3", "NaN"),
            sample("4", "inf"),
        ],
    );
    let (out, err, ok) = stat(&["counters"], &counters);
    assert!(ok, "{err}");
    let line = out.lines().nth(1).unwrap();
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!(
        &fields[2..5],
        ["2", "9007199254740992", "9007199254740993"],
        "{out}"
    );
    assert!(
        err.contains("2 counter sample(s) whose value is not a number left out"),
        "{err}"
    );
    // Claims: amounts that are no amount are refused at their row.
    for (n, amount) in ["NaN", "inf", "-2"].iter().enumerate() {
        let claims = write(
            &format!("claims{n}.tsv"),
            &[row(&[
                ("kind", "claim"),
                ("time", "1"),
                ("end", "5"),
                ("loc", "a"),
                ("value", amount),
            ])],
        );
        let (_, err, ok) = stat(&["resources"], &claims);
        assert!(!ok, "{amount}");
        assert!(
            err.contains(&format!(
                ":4: claim amount `{amount}` is not a finite, non-negative number"
            )),
            "{err}"
        );
    }
}
