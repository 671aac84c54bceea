//! The command layer shared by every command: format options, detection of
//! folders, report tables, warnings.

mod common;

use common::{bin, data, scratch};
use predicates::prelude::*;

#[test]
fn format_options_apply_only_to_their_format() {
    // Reader options are refused when no input is read in their format.
    bin("trace-cat")
        .args(["--reorder-window", "10", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--reorder-window is an option of the paje reader, but no input is read as paje",
        ));
    // `--lenient` promises only what the TRACE reader does.
    bin("trace-cat")
        .args(["--lenient", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--lenient is an option of the trace reader, but no input is read as trace",
        ));
    // Writer options likewise for another output format.
    bin("trace-filter")
        .args(["--precision", "3"])
        .arg(data("paje/sample.paje"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--precision is an option of the pjdump writer, but the output is tsv",
        ));
    // Where they apply, they take effect.
    let three = bin("trace-cat")
        .args(["-t", "pjdump", "--precision", "3"])
        .arg(data("paje/sample.paje"))
        .assert()
        .success();
    let text = String::from_utf8(three.get_output().stdout.clone()).unwrap();
    let state = text.lines().find(|l| l.starts_with("State")).unwrap();
    let start = state.split(", ").nth(3).unwrap();
    assert_eq!(start.split('.').nth(1).map(str::len), Some(3), "{state}");
    // They are listed under their format's heading.
    let help = bin("trace-cat").arg("--help").assert().success();
    let help = String::from_utf8(help.get_output().stdout.clone()).unwrap();
    let paje = help.find("paje input:").expect("a paje heading");
    assert!(help[paje..].contains("--reorder-window"));
    assert!(help.contains("pjdump output:"));
}

#[test]
fn a_folder_is_claimed_only_by_what_it_holds() {
    let dir = scratch("a_folder_is_claimed");
    std::fs::write(dir.join("notes.txt"), "not a trace\n").unwrap();
    bin("trace-cat")
        .arg(&dir)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "a folder that no format recognises (looked for `.parquet` files or `COLUMN=VALUE` partition folders (Parquet), a `.pallas` file (Pallas), a `.otf2` anchor file (OTF2))",
        ));
}

#[test]
fn list_formats_is_a_table() {
    let out = bin("trace-cat")
        .args(["--list-formats", "--json"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pjdump = rows.iter().find(|r| r["format"] == "pjdump").unwrap();
    assert_eq!(
        (&pjdump["read"], &pjdump["write"]),
        (&"no".into(), &"yes".into())
    );
    let tsv = bin("trace-cat")
        .args(["--list-formats", "--no-header"])
        .assert()
        .success();
    let text = String::from_utf8(tsv.get_output().stdout.clone()).unwrap();
    assert!(text.starts_with("tsv\tyes\tyes\t"), "{text}");
    assert_eq!(text.lines().count(), rows.len());
}

#[test]
fn warnings_are_located_counted_and_silenced() {
    let dir = scratch("warnings_are_located");
    let file = dir.join("bad.etf");
    let mut text = String::from("TU NANOSECONDS\nR 0 1 false ; name = r\n");
    for _ in 0..8 {
        text.push_str("bogus line\n");
    }
    std::fs::write(&file, text).unwrap();
    let out = bin("trace-cat")
        .arg("--lenient")
        .arg(&file)
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let shown: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("unknown line kind"))
        .collect();
    // Five located, the other three counted.
    assert_eq!(shown.len(), 6, "{stderr}");
    assert!(shown[0].contains(&format!("{}:3: unknown line kind", file.display())));
    assert!(shown[4].contains(&format!("{}:7: ", file.display())));
    assert!(shown[5].starts_with("trace-cat: warning: 3 more like: unknown line kind"));
    bin("trace-cat")
        .args(["--lenient", "--quiet"])
        .arg(&file)
        .assert()
        .success()
        .stderr("");
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("output_is_an_input");
    let input = dir.join("v.trace");
    std::fs::copy(data("paje/sample.paje"), &input).unwrap();
    let original = std::fs::read(&input).unwrap();
    let hard = dir.join("hard.trace");
    std::fs::hard_link(&input, &hard).unwrap();
    let soft = dir.join("soft.trace");
    std::os::unix::fs::symlink(&input, &soft).unwrap();
    for output in [&input, &hard, &soft] {
        for cmd in ["trace-cat", "trace-filter"] {
            bin(cmd)
                .args(["-t", "pjdump", "-o"])
                .arg(output)
                .arg(&input)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("would overwrite the input"));
            assert_eq!(
                std::fs::read(&input).unwrap(),
                original,
                "{cmd} -o {output:?}"
            );
        }
    }
    // Another file is written as usual.
    let other = dir.join("out.pjdump");
    bin("trace-cat")
        .args(["-t", "pjdump", "-o"])
        .arg(&other)
        .arg(&input)
        .assert()
        .success();
    assert!(std::fs::metadata(&other).unwrap().len() > 0);
}

/// Writes `text` to the command's stdin in two pieces with a pause between,
/// as a slow producer on a pipe does, and returns its output.
fn through_slow_pipe(cmd: &str, text: &str, cut: usize) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin(cmd))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&text.as_bytes()[..cut]).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    stdin.write_all(&text.as_bytes()[cut..]).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn detection_on_a_pipe_waits_for_enough_input() {
    // A Pajé trace whose first line (a comment) arrives alone.
    let paje = std::fs::read_to_string(data("paje/sample.paje")).unwrap();
    let first_line = paje.find('\n').unwrap() + 1;
    let out = through_slow_pipe("trace-cat", &paje, first_line);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let whole = bin("trace-cat")
        .arg(data("paje/sample.paje"))
        .output()
        .unwrap();
    let strip_source = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .filter(|l| !l.starts_with("meta\t\t\t\t\tsource\t"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip_source(&out.stdout), strip_source(&whole.stdout));
    // A stream whose header is cut in the middle, with an extra column whose
    // name has capitals and a dash.
    let header = format!("{}\tRank-ID", common::HEADER);
    let format_row = "meta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\t";
    let stream = format!("{header}\n{format_row}\ncontainer\t\t\tr0\t\t\t\t\t\t\t\t\t\t\t\t7\n");
    let out = through_slow_pipe("trace-cat", &stream, 10);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(&header), "{text}");
    assert!(
        text.contains("container\t\t\tr0\t") && text.trim_end().ends_with("\t7"),
        "{text}"
    );
}

/// Edges that panicked or passed silently: each is now a located error, or
/// works.
#[test]
fn edges_are_errors_not_panics_or_silence() {
    let dir = scratch("edges");
    let usage = |args: &[&str], input: &str, msg: &str| {
        bin("trace-cat")
            .args(args)
            .write_stdin(input.to_string())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
    };
    usage(
        &[
            "-t",
            "pjdump",
            "--precision",
            "65536",
            data("paje/sample.paje").to_str().unwrap(),
        ],
        "",
        "--precision 65536: at most 30 decimals",
    );
    usage(
        &["-", "-"],
        "",
        "standard input (`-`) is named more than once",
    );
    usage(
        &["--no-header", "--json", "examples/pingpong.tsv"],
        "",
        "--no-header leaves out the TSV header line; the output is jsonl",
    );
    let data_error = |file: &std::path::Path, text: &str, msg: &str| {
        std::fs::write(file, text).unwrap();
        bin("trace-cat")
            .arg(file)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(msg));
    };
    // Origins too far apart to share an i64 clock.
    let stream = |origin: &str| {
        format!(
            "{}\nmeta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\nmeta\t\t\t\t\torigin\t\t\t\t\t\t\t{origin}\t\t\n",
            common::HEADER
        )
    };
    let far = dir.join("far.tsv");
    std::fs::write(&far, stream("9223372036854775807")).unwrap();
    let near = dir.join("near.tsv");
    std::fs::write(&near, stream("-10")).unwrap();
    bin("trace-cat")
        .arg(&near)
        .arg(&far)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "is too far from the earliest origin",
        ));
    // A TRACE offset beyond the range of the origin.
    data_error(
        &dir.join("o.etf"),
        "TU NANOSECONDS\nO 9223372036854775\n",
        "o.etf:2: offset `9223372036854775` ms is beyond the range",
    );
    // Messages speak English: "an `event` row".
    data_error(
        &dir.join("no-time.jsonl"),
        "{\"kind\":\"meta\",\"name\":\"format\",\"value\":\"tracepipe-stream/1\"}\n{\"kind\":\"event\"}\n",
        "no-time.jsonl:2: an `event` row needs a `time`",
    );
    // JSON Lines with a key twice.
    data_error(
        &dir.join("dup.jsonl"),
        "{\"kind\":\"meta\",\"name\":\"format\",\"value\":\"tracepipe-stream/1\"}\n{\"kind\":\"meta\",\"name\":\"a\",\"name\":\"b\"}\n",
        "dup.jsonl:2: key `name` appears twice",
    );
    // A header name with a backslash keeps its spelling pass after pass.
    let header = dir.join("h.tsv");
    std::fs::write(
        &header,
        "kind\tname\tvalue\ta\\\\b\nmeta\tformat\ttracepipe-stream/1\t\nmeta\tk\tv\tx\n",
    )
    .unwrap();
    let once = bin("trace-cat").arg(&header).output().unwrap().stdout;
    let twice = bin("trace-cat")
        .write_stdin(once.clone())
        .output()
        .unwrap()
        .stdout;
    assert_eq!(once, twice);
    assert!(String::from_utf8(once)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .ends_with("\ta\\\\b"));
}

#[test]
fn stdout_closed_is_an_error_and_stderr_full_is_no_reason_to_stop() {
    use std::process::{Command, Stdio};
    // `>&-`: Rust reopens the descriptor on /dev/null, so writing "works".
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} examples/pingpong.tsv >&- 2>/dev/null",
            assert_cmd::cargo::cargo_bin("trace-cat").display()
        ))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    // Standard output open read-write on /dev/null (`1<>/dev/null`, Python's
    // subprocess.DEVNULL) is an open output, not a closed one.
    let devnull = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("trace-cat"))
        .arg("examples/pingpong.tsv")
        .stdout(Stdio::from(devnull))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Warnings to a full device: the output is still written in full.
    let dir = scratch("stderr_full");
    let file = dir.join("bad.etf");
    std::fs::write(
        &file,
        "TU NANOSECONDS\nR 0 1 false ; name = r\nbogus\nE 0 5 ; name = e\n",
    )
    .unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("trace-cat"))
        .arg("--lenient")
        .arg(&file)
        .stderr(Stdio::from(std::fs::File::create("/dev/full").unwrap()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("event\t5\t"));
}

/// Every text reader: a complete last line without its newline is read with
/// a warning; a last line that does not parse is an error saying the file was
/// cut.
#[test]
fn a_last_line_without_newline_is_read_when_complete() {
    let dir = scratch("last_line");
    let tsv_head = format!(
        "{}\nmeta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\n",
        common::HEADER
    );
    let json_head = "{\"kind\":\"meta\",\"name\":\"format\",\"value\":\"tracepipe-stream/1\"}\n";
    let cases = [
        (
            "s.tsv",
            format!("{tsv_head}meta\t\t\t\t\tk\t\t\t\t\t\t\tv\t\t"),
            format!("{tsv_head}meta\t\t\t"),
        ),
        (
            "s.jsonl",
            format!("{json_head}{{\"kind\":\"meta\",\"name\":\"k\",\"value\":\"v\"}}"),
            format!("{json_head}{{\"kind\":\"meta\",\"na"),
        ),
        (
            "t.etf",
            "TU NANOSECONDS\nE 0 5 ; name = k".to_string(),
            "TU NANOSECONDS\nE 0".to_string(),
        ),
    ];
    for (name, complete, cut) in cases {
        let last = complete.lines().count();
        let file = dir.join(name);
        std::fs::write(&file, &complete).unwrap();
        let out = bin("trace-cat")
            .arg(&file)
            .assert()
            .success()
            .stderr(predicate::str::contains(format!(
                "{}:{last}: the last line has no final newline",
                file.display()
            )));
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert!(text.lines().any(|l| l.contains("\tk\t")), "{name}: {text}");
        std::fs::write(&file, &cut).unwrap();
        bin("trace-cat")
            .arg(&file)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "{}:{last}: truncated line (no final newline): the file was cut?",
                file.display()
            )));
    }
}

/// Inputs that name different locations alike are an error naming both, and
/// `--prefix-inputs` keeps them apart; the same location declared alike by
/// two inputs (per-rank files of one run) is fine.
#[test]
fn colliding_locations_across_inputs() {
    let dir = scratch("collisions");
    let a = dir.join("a.etf");
    let b = dir.join("b.etf");
    std::fs::write(
        &a,
        "TU NANOSECONDS\nR 0 1 false ; name = irq\nC 0 0 5 0 1 ; task = x\n",
    )
    .unwrap();
    std::fs::write(
        &b,
        "TU NANOSECONDS\nR 0 2 false ; name = core0\nC 0 0 7 0 1 ; task = y\n",
    )
    .unwrap();
    bin("trace-cat")
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "{}:2: location `R0` is declared here as `core0` (resource) and by {} as `irq`",
            b.display(),
            a.display()
        )));
    let out = bin("trace-cat")
        .arg("--prefix-inputs")
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let locs: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("claim\t"))
        .map(|l| common::col(l, "loc"))
        .collect();
    assert_eq!(locs, ["a.etf/R0", "b.etf/R0"]);
    // The same declaration in two inputs is one location.
    bin("trace-cat")
        .arg("examples/pingpong.tsv")
        .arg("examples/pingpong.tsv")
        .assert()
        .success();
}

#[test]
fn output_format_follows_the_file_name_and_extensions_name_formats() {
    let dir = scratch("output-by-extension");
    let etf = dir.join("out.etf");
    bin("trace-cat")
        .arg("-o")
        .arg(&etf)
        .arg("examples/pingpong.tsv")
        .assert()
        .success();
    let written = std::fs::read_to_string(&etf).unwrap();
    assert!(written.starts_with("TU "), "{written}");
    // `-f etf` and `-t etf` name the TRACE format by its extension.
    bin("trace-cat")
        .args(["-f", "etf"])
        .arg(&etf)
        .assert()
        .success()
        .stdout(predicate::str::contains("source_format\t\t\t\t\t\t\ttrace"));
    bin("trace-cat")
        .args(["-t", "etf", "examples/pingpong.tsv"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("TU "));
    // -t wins over the name; an unknown extension keeps TSV.
    let jsonl = dir.join("out.jsonl");
    bin("trace-cat")
        .args(["-t", "tsv", "-o"])
        .arg(&jsonl)
        .arg("examples/pingpong.tsv")
        .assert()
        .success();
    assert!(std::fs::read_to_string(&jsonl)
        .unwrap()
        .starts_with("kind\t"));
    let other = dir.join("out.txt");
    bin("trace-cat")
        .arg("-o")
        .arg(&other)
        .arg("examples/pingpong.tsv")
        .assert()
        .success();
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .starts_with("kind\t"));
}

#[test]
fn messages_name_the_command_and_say_the_rule() {
    // clap's usage errors carry the command's name like every other error.
    bin("trace-cat")
        .args(["-t", "bogus", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "trace-cat: error: invalid value 'bogus'",
        ));
    bin("trace-filter")
        .arg("--bogus")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "trace-filter: error: unexpected argument",
        ));
    // A time without a unit is nanoseconds, and the message says so.
    bin("trace-filter")
        .args(["--start", "1.5", "examples/pingpong.tsv"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("finer than a nanosecond")
                .and(predicate::str::contains("a bare number is ns")),
        );
    bin("trace-filter")
        .args(["--from", "1e3", "--to", "1.2e3", "-k", "send"])
        .arg("examples/pingpong.tsv")
        .assert()
        .success()
        .stdout(predicate::str::contains("send\t1100\t"));
    // A format forced on the wrong file: the reader's error, and why.
    bin("trace-cat")
        .args(["-f", "pallas", "examples/pingpong.tsv"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("read as pallas as -f says, though it looks like tsv")
                .and(predicate::str::contains("is it a Pallas main file at all?")),
        );
    bin("trace-cat")
        .args(["-f", "jsonl", "examples/pingpong.tsv"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "expected a JSON object (`{...}`) per line, found `kind\\ttime",
        ));
    // An empty input is read as an empty stream, with a warning.
    let empty = scratch("empty-input").join("empty.tsv");
    std::fs::write(&empty, "").unwrap();
    bin("trace-cat")
        .arg(&empty)
        .assert()
        .success()
        .stderr(predicate::str::contains("empty.tsv: the input is empty"));
}

#[test]
fn compressed_inputs_are_read_transparently() {
    use std::io::Write as _;
    let dir = scratch("compressed-inputs");
    let plain = bin("trace-cat")
        .arg("examples/camera.etf")
        .assert()
        .success();
    let want = String::from_utf8(plain.get_output().stdout.clone()).unwrap();
    let source = std::fs::read("examples/camera.etf").unwrap();
    let gz = dir.join("camera.etf.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&source).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let zst = dir.join("camera.etf.zst");
    std::fs::write(&zst, zstd::encode_all(&source[..], 3).unwrap()).unwrap();
    // As pzstd writes it: a skippable frame (its magic 0x184D2A50, its
    // length, a payload), then the source in two frames.
    let pzst = dir.join("camera.etf.pzst");
    let mut framed = vec![0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4];
    let half = source.len() / 2;
    framed.extend(zstd::encode_all(&source[..half], 3).unwrap());
    framed.extend(zstd::encode_all(&source[half..], 3).unwrap());
    std::fs::write(&pzst, framed).unwrap();
    for (file, name) in [
        (&gz, "camera.etf.gz"),
        (&zst, "camera.etf.zst"),
        (&pzst, "camera.etf.pzst"),
    ] {
        let out = bin("trace-cat").arg(file).assert().success();
        let got = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        // Only the `source` meta row names the file.
        let strip = |s: &str| s.replace(&format!("{}", file.display()), "examples/camera.etf");
        assert_eq!(strip(&got), want, "{name}");
    }
    // On standard input too, detected by content.
    bin("trace-cat")
        .pipe_stdin(&zst)
        .unwrap()
        .assert()
        .success()
        .stdout(predicate::str::contains("claim\t"));
    // A damaged stream is an error naming the file.
    let mut bytes = std::fs::read(&gz).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&gz, bytes).unwrap();
    bin("trace-cat")
        .arg(&gz)
        .assert()
        .failure()
        .stderr(predicate::str::contains("camera.etf.gz"));
}

/// Formats tracepipe recognises but does not read are named, not taken for
/// another format (a Chrome trace is no JSON Lines stream); an OTF2 folder
/// is read as OTF2 (not as another folder format), so a broken anchor file
/// is an OTF2 error.
#[test]
fn formats_recognised_but_not_read_are_named_and_chrome_json_is_read() {
    let dir = scratch("foreign");
    let archive = dir.join("run");
    std::fs::create_dir_all(archive.join("traces")).unwrap();
    std::fs::write(archive.join("traces.otf2"), b"\x00\x01").unwrap();
    std::fs::write(archive.join("traces.def"), b"\x00\x01").unwrap();
    let chrome = dir.join("trace.json");
    std::fs::write(
        &chrome,
        r#"{"traceEvents": [{"name": "a", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}"#,
    )
    .unwrap();
    let array = dir.join("array.json");
    std::fs::write(
        &array,
        r#"[{"name": "a", "ph": "B", "ts": 1, "pid": 1, "tid": 1}]"#,
    )
    .unwrap();
    let fails = |args: &[&str], input: &std::path::Path, code: i32, says: &str| {
        bin("trace-cat")
            .args(args)
            .arg(input)
            .assert()
            .code(code)
            .stderr(predicate::str::contains(says));
    };
    fails(
        &[],
        &archive,
        1,
        "traces.otf2: byte 0: not an OTF2 anchor file",
    );
    fails(
        &["-f", "otf2"],
        &archive.join("traces.otf2"),
        1,
        "traces.otf2: byte 0: not an OTF2 anchor file",
    );
    fails(
        &["-f", "paraver"],
        &chrome,
        1,
        "trace.json:1: expected the Paraver header",
    );
    // Chrome trace JSON is read, in both forms, and through a pipe, where
    // it arrives in pieces.
    for input in [&chrome, &array] {
        let out = bin("trace-cat").arg(input).assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(text.contains("source_format\t\t\t\t\t\t\tchrome"), "{text}");
        assert!(text.contains("\nenter\t1000\t\t1/1\t\ta\t"), "{text}");
    }
    bin("trace-cat")
        .pipe_stdin(&chrome)
        .unwrap()
        .assert()
        .success()
        .stdout(predicate::str::contains("\nleave\t3000\t\t1/1\t\ta\t"));
    // A JSON Lines stream whose first key starts alike is still read.
    let jsonl = dir.join("s.jsonl");
    std::fs::write(
        &jsonl,
        "{\"kind\":\"meta\",\"name\":\"format\",\"value\":\"tracepipe-stream/1\"}\n",
    )
    .unwrap();
    bin("trace-cat").arg(&jsonl).assert().success();
}

/// A writer's refusal names the input line of the refused row through every
/// stage (filter, match, slice), with one thread and with two, however far
/// the reader has read ahead.
#[test]
fn located_errors_through_every_stage() {
    const ROWS: u64 = 30_000;
    const BAD: u64 = 20_000;
    let dir = scratch("stage-errors");
    let file = dir.join("s.tsv");
    let mut text = format!(
        "{}\nmeta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\n",
        common::HEADER
    );
    text.push_str(
        "container\t\t\ta\t\t\t\t\t\t\t\t\t\t\t\ncontainer\t\t\tb\t\t\t\t\t\t\t\t\t\t\t\n",
    );
    let mut line = 4;
    let mut bad_line = 0;
    for k in 1..=ROWS {
        let value = if k == BAD { "n/a" } else { "1" };
        text.push_str(&format!(
            "counter\t{k}\t\ta\t\tc\t\t\t\t\t\t\t{value}\t\t\n"
        ));
        line += 1;
        if k == BAD {
            bad_line = line;
        }
        if k % 7 == 0 {
            text.push_str(&format!("send\t{k}\t\ta\t\t\t\tb\tw\t0\t8\t\t\t\t\n"));
            text.push_str(&format!("recv\t{k}\t\tb\t\t\t\ta\tw\t0\t8\t\t\t\t\n"));
            line += 2;
        }
    }
    std::fs::write(&file, text).unwrap();
    let want = format!("s.tsv:{bad_line}: counter `c` has the value `n/a`");
    let to = (ROWS + 1).to_string();
    let commands: [(&str, Vec<&str>); 4] = [
        ("trace-cat", vec![]),
        ("trace-filter", vec!["-k", "counter,send,recv"]),
        ("trace-match", vec![]),
        ("trace-slice", vec!["--from", "0", "--to", &to]),
    ];
    for (cmd, args) in &commands {
        for threads in ["1", "2"] {
            bin(cmd)
                .args(args)
                .args(["-t", "paje", "--threads", threads])
                .arg(&file)
                .assert()
                .code(1)
                .stderr(predicate::str::contains(&want));
        }
    }
}

/// One syntax everywhere: `-f/--input-format` and `-t/--output-format` name
/// formats in every command, `--from/--to` is the window in trace-filter and
/// trace-slice alike.
#[test]
fn one_syntax_for_formats_and_windows() {
    let ping = "examples/pingpong.tsv";
    for cmd in [
        "trace-cat",
        "trace-filter",
        "trace-match",
        "trace-slice",
        "trace-stat",
    ] {
        let help = bin(cmd).arg("--help").output().unwrap().stdout;
        let help = String::from_utf8(help).unwrap();
        assert!(help.contains("-f, --input-format <FORMAT>"), "{cmd}");
        if cmd != "trace-stat" {
            assert!(help.contains("-t, --output-format <FORMAT>"), "{cmd}");
        }
    }
    for cmd in ["trace-cat", "trace-match"] {
        bin(cmd)
            .args(["--input-format", "tsv", "--output-format", "jsonl", ping])
            .assert()
            .success()
            .stdout(predicate::str::starts_with("{"));
        // --from and --to name no format any more.
        bin(cmd).args(["--from", "tsv", ping]).assert().code(2);
    }
    let window = [
        "--from",
        "1us",
        "--to",
        "2us",
        "-k",
        "send,recv",
        "--rows-only",
    ];
    let filtered = bin("trace-filter").args(window).arg(ping).output().unwrap();
    assert!(filtered.status.success());
    let sliced = bin("trace-slice")
        .args(&window[..4])
        .args(["-t", "tsv"])
        .arg(ping)
        .output()
        .unwrap();
    assert!(sliced.status.success());
    let text = String::from_utf8(filtered.stdout).unwrap();
    assert!(text.starts_with("send\t1100\t"), "{text}");
}

/// What used to pass silently is warned about (or done): selectors that
/// match nothing, a profile without frames, a slice outside the trace,
/// halves a report leaves out, a compressed output name; `-q` silences
/// trace-match's summary too.
#[test]
fn what_would_pass_silently_says_so() {
    let ping = "examples/pingpong.tsv";
    let stderr_of = |cmd: &str, args: &[&str]| {
        let out = bin(cmd).args(args).output().unwrap();
        assert!(out.status.success(), "{cmd} {args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let err = stderr_of(
        "trace-filter",
        &[
            "-l", "rank9", "-L", "nobody", "--under", "nowhere", "-n", "^x$", ping,
        ],
    );
    for want in [
        "-l `rank9` matched no location id",
        "-L `nobody` matched no location name",
        "--under `nowhere` matched no container",
        "-n `^x$` matched no name",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    // Selectors that match say nothing.
    let err = stderr_of(
        "trace-filter",
        &["-l", "rank0", "-L", "MPI*", "-n", "MPI", ping],
    );
    assert!(err.is_empty(), "{err}");
    let err = stderr_of("trace-stat", &["examples/camera.etf"]);
    assert!(
        err.contains("no frames to profile") && err.contains("trace-stat resources"),
        "{err}"
    );
    let err = stderr_of("trace-slice", &["--from", "1s", "--to", "2s", ping]);
    assert!(err.contains("after the trace's last time"), "{err}");
    let err = stderr_of("trace-slice", &["--from", "-2s", "--to", "-1s", ping]);
    assert!(err.contains("before the trace's first time"), "{err}");
    let err = stderr_of("trace-slice", &["--from", "3us", "--to", "6us", ping]);
    assert!(err.is_empty(), "{err}");
    // Halves a report cannot pair are left out, with the way to see them.
    let sends = bin("trace-filter")
        .args(["-k", "send", ping])
        .output()
        .unwrap()
        .stdout;
    let out = bin("trace-stat")
        .arg("messages")
        .write_stdin(sends)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("3 message half/halves never matched")
            && err.contains("trace-match lists them"),
        "{err}"
    );
    let err = stderr_of("trace-match", &["-q", ping]);
    assert!(err.is_empty(), "{err}");
    // -o with a compression suffix compresses, and reads back as it is.
    let dir = scratch("silent");
    for name in ["s.tsv.gz", "s.etf.zst", "s.jsonl.gz"] {
        let file = dir.join(name);
        bin("trace-cat")
            .args([ping, "-o"])
            .arg(&file)
            .assert()
            .success();
        let head = std::fs::read(&file).unwrap();
        assert!(
            head.starts_with(&[0x1f, 0x8b]) || head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]),
            "{name}"
        );
        bin("trace-stat")
            .arg("summary")
            .arg(&file)
            .assert()
            .success()
            .stdout(predicate::str::contains("span\t\t10020"));
    }
    bin("trace-cat")
        .args([ping, "-o"])
        .arg(dir.join("s.stf.gz"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("write it uncompressed"));
}

/// Two runs merged onto one track are warned about (once, naming both
/// inputs and the location); per-rank files of one run, which declare their
/// shared upper levels alike but put rows on their own locations, are not.
#[test]
fn two_runs_on_one_track_are_warned_about() {
    let smpi = data("paje/smpi_aliases.paje");
    let dir = scratch("two-runs");
    let other = dir.join("run2.paje");
    std::fs::copy(&smpi, &other).unwrap();
    let out = bin("trace-cat").arg(&smpi).arg(&other).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("both put rows on location").count(), 1, "{err}");
    assert!(
        err.contains("smpi_aliases.paje and ") && err.contains("run2.paje"),
        "{err}"
    );
    assert!(err.contains("--prefix-inputs"), "{err}");
    let out = bin("trace-cat")
        .arg("--prefix-inputs")
        .arg(&smpi)
        .arg(&other)
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty());
    // Per-rank files: `node` declared alike by both, rows on each rank only.
    let rank = |r: &str| {
        let rows = [
            common::row(&[("kind", "container"), ("loc", "node"), ("name", "node")]),
            common::row(&[("kind", "container"), ("loc", r), ("peer", "node")]),
            common::row(&[("kind", "enter"), ("time", "1"), ("loc", r), ("name", "f")]),
            common::row(&[("kind", "leave"), ("time", "2"), ("loc", r), ("name", "f")]),
        ];
        let file = dir.join(format!("{r}.tsv"));
        std::fs::write(&file, common::stream(&rows)).unwrap();
        file
    };
    let (r0, r1) = (rank("r0"), rank("r1"));
    let out = bin("trace-stat").arg(&r0).arg(&r1).output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `-o FILE` replaces FILE only when the output is whole: an error in the
/// input or an interruption leaves the old file as it was, and no partial
/// file beside it.
#[test]
fn an_unfinished_output_leaves_the_old_file() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = scratch("unfinished-output");
    let out = dir.join("out.tsv");
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    std::fs::write(&out, "old\n").unwrap();
    let mut text = std::fs::read_to_string("examples/pingpong.tsv").unwrap();
    text.push_str("enter\tnot-a-time\n");
    bin("trace-cat")
        .arg("-o")
        .arg(&out)
        .write_stdin(text)
        .assert()
        .code(1);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    assert_eq!(listing(), ["out.tsv"]);
    // Interrupted while reading a pipe that stays open.
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("trace-cat"))
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            std::fs::read_to_string("examples/pingpong.tsv")
                .unwrap()
                .as_bytes(),
        )
        .unwrap();
    stdin.flush().unwrap();
    for _ in 0..200 {
        if listing().len() > 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(listing().len(), 2, "{:?}", listing());
    // SAFETY: sends SIGINT to the child we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    drop(stdin);
    assert!(!status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    assert_eq!(listing(), ["out.tsv"]);
    // A whole run replaces it.
    bin("trace-cat")
        .args(["examples/pingpong.tsv", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("kind\t"));
    assert_eq!(listing(), ["out.tsv"]);
}

/// The single STF file is built from temporary components that have no
/// name from the start: an interrupted `-o X.single.stf` leaves nothing in
/// the temporary folder, and the old X.single.stf as it was.
#[test]
fn an_interrupted_single_stf_leaves_no_components_behind() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = scratch("unfinished-single-stf");
    let (out_dir, tmp) = (dir.join("out"), dir.join("tmp"));
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let out = out_dir.join("x.single.stf");
    std::fs::write(&out, "old\n").unwrap();
    let names = |d: &std::path::Path| {
        let mut n: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("trace-cat"))
        .arg("-o")
        .arg(&out)
        .env("TMPDIR", &tmp)
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = std::fs::read_to_string("examples/pingpong.tsv").unwrap();
    stdin.write_all(text.as_bytes()).unwrap();
    stdin.flush().unwrap();
    for _ in 0..200 {
        if names(&out_dir).len() > 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(names(&out_dir).len(), 2, "{:?}", names(&out_dir));
    assert_eq!(names(&tmp), Vec::<String>::new());
    // SAFETY: sends SIGINT to the child we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    assert!(!child.wait().unwrap().success());
    drop(stdin);
    assert_eq!(names(&out_dir), ["x.single.stf"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    assert_eq!(names(&tmp), Vec::<String>::new());
    // A whole run writes a single file that reads back.
    bin("trace-cat")
        .args(["examples/pingpong.tsv", "-o"])
        .arg(&out)
        .env("TMPDIR", &tmp)
        .assert()
        .success();
    bin("trace-cat")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("msg\t").or(predicate::str::contains("send\t")));
    assert_eq!(names(&tmp), Vec::<String>::new());
}

/// An error quotes at most a few hundred bytes of the line or value it is
/// about, with its length: a 100 KB line is not echoed.
#[test]
fn errors_quote_long_lines_by_their_start() {
    let dir = scratch("long-quotes");
    let mut dump = std::fs::read_to_string("tests/data/stf/dump.txt").unwrap();
    dump.push_str(&format!("NCPUS {}\n", "x".repeat(100_000)));
    let file = dir.join("long.txt");
    std::fs::write(&file, dump).unwrap();
    let out = bin("trace-cat")
        .args(["-f", "stf-dump"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.len() < 400, "{} bytes: {err}", err.len());
    assert!(
        err.contains("a header line after the events began: \"NCPUS xxx"),
        "{err}"
    );
    assert!(err.contains("…\" (100006 bytes)"), "{err}");
}

/// `-o` into what is not a regular file writes into it (`/dev/null` stays
/// the device, whoever runs it), and through a symbolic link replaces the
/// file it names, the link kept.
#[test]
fn output_into_a_device_or_through_a_link() {
    use std::os::unix::fs::FileTypeExt;
    let example = data("../../examples/pingpong.tsv");
    bin("trace-cat")
        .arg(&example)
        .args(["-o", "/dev/null"])
        .assert()
        .success();
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(
        null.file_type().is_char_device(),
        "/dev/null is still the device"
    );
    let dir = scratch("output-link");
    let (file, link) = (dir.join("file.tsv"), dir.join("link.tsv"));
    std::fs::write(&file, "old\n").unwrap();
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&file, &link).unwrap();
    bin("trace-cat")
        .arg(&example)
        .arg("-o")
        .arg(&link)
        .assert()
        .success();
    let kept = std::fs::symlink_metadata(&link).unwrap();
    assert!(kept.file_type().is_symlink(), "the link stays a link");
    let direct = bin("trace-cat").arg(&example).output().unwrap().stdout;
    assert_eq!(std::fs::read(&file).unwrap(), direct);
}

/// `-o` takes any name the file system takes: the file staged beside it
/// keeps within the 255 bytes a name may have.
#[test]
fn an_output_named_as_long_as_a_name_may_be_is_written() {
    let dir = scratch("cli-long-output");
    let name = format!("{}.tsv", "a".repeat(250));
    bin("trace-cat")
        .arg(data("../../examples/pingpong.tsv"))
        .arg("-o")
        .arg(dir.join(&name))
        .assert()
        .success();
    let written = std::fs::read_to_string(dir.join(&name)).unwrap();
    assert!(written.lines().any(|l| l.starts_with("enter\t")));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

/// A writer that writes files beside the one `-o` names (OTF2's
/// definitions and event folder, Pallas's archives) refuses an output
/// whose files are inputs, before truncating any.
#[test]
fn files_written_beside_the_output_are_not_inputs() {
    let dir = scratch("cli-beside");
    let input = dir.join("in.def");
    let ping = std::fs::read(data("../../examples/pingpong.tsv")).unwrap();
    std::fs::write(&input, &ping).unwrap();
    let out = bin("trace-cat")
        .args(["-f", "tsv"])
        .arg(&input)
        .args(["-t", "otf2", "-o"])
        .arg(dir.join("in.otf2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("would overwrite the input") && err.contains("in.def"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&input).unwrap(),
        ping,
        "the input is untouched"
    );
    // A Pallas trace written over itself.
    let trace = dir.join("t.pallas");
    bin("trace-cat")
        .arg(&input)
        .args(["-f", "tsv", "-t", "pallas", "-o"])
        .arg(format!("{}/", trace.display()))
        .assert()
        .success();
    let out = bin("trace-cat")
        .arg(&trace)
        .args(["-t", "pallas", "-o"])
        .arg(&trace)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("would overwrite the input"), "{err}");
}

/// The OTF2 and Pallas writers write in a folder beside the output and
/// move the trace in place only once finished: an input that fails
/// midway leaves the old trace as it was, and nothing else.
#[test]
fn a_failed_write_leaves_the_old_trace_whole() {
    let dir = scratch("cli-atomic");
    let ping = data("../../examples/pingpong.tsv");
    let text = std::fs::read_to_string(&ping).unwrap();
    // The same stream cut by a row out of time order near its end.
    let bad = dir.join("bad.tsv");
    let mut lines: Vec<&str> = text.lines().collect();
    let late = "event\t1\t\trank0\t\tlate\t\t\t\t\t\t\t\t\t";
    lines.insert(lines.len() - 1, late);
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    for (writer, name, files) in [
        ("otf2", "old.otf2", &["old.otf2", "old.def", "old"][..]),
        ("pallas", "old-pallas/", &["main.pallas", "archive_0"][..]),
    ] {
        let out = dir.join(name);
        let folder = match writer {
            "pallas" => out.clone(),
            _ => dir.clone(),
        };
        bin("trace-cat")
            .arg(&ping)
            .args(["-t", writer, "-o"])
            .arg(&out)
            .assert()
            .success();
        let listing = |d: &std::path::Path| {
            let mut names: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let before = listing(&folder);
        let stream_before = bin("trace-cat").arg(&out).output().unwrap().stdout;
        for f in files {
            assert!(before.contains(&f.to_string()), "{writer}: {before:?}");
        }
        let failed = bin("trace-cat")
            .arg(&bad)
            .args(["-t", writer, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&failed.stderr);
        assert_eq!(failed.status.code(), Some(1), "{writer}: {err}");
        assert!(err.contains("bad.tsv:"), "{writer}: {err}");
        assert_eq!(listing(&folder), before, "{writer}: files left or lost");
        let stream_after = bin("trace-cat").arg(&out).output().unwrap().stdout;
        assert_eq!(
            stream_after, stream_before,
            "{writer}: the old trace changed"
        );
    }
}
