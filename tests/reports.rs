//! `trace-stat`'s reports come from one registry: each report's help, man
//! page, completions, `--by` keys and option checks are made from its
//! entry, so a report left out of any of them fails here.

mod common;

use std::path::{Path, PathBuf};

use common::bin;
use tracepipe::cmd::stat::registry::{Inputs, ReportSpec, REPORTS, REPORT_OPTIONS};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example() -> PathBuf {
    root().join("examples/pingpong.tsv")
}

/// Runs `trace-stat ARGS`: (stdout, stderr, exit code).
fn stat(args: &[&str]) -> (String, String, i32) {
    let out = bin("trace-stat").args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        text(&out.stdout),
        text(&out.stderr),
        out.status.code().unwrap(),
    )
}

/// The arguments that give `option` to a report: a value where it takes
/// one, `--matrix` where it needs it.
fn giving(option: &str) -> Vec<String> {
    let value = match option {
        "histogram" => Some("3"),
        "kinds" => Some("thread"),
        "bins" => Some("10"),
        "bin" => Some("1us"),
        "name" => Some("MPI"),
        "metric" => Some("count"),
        "fail-over" => Some("10"),
        "min" => Some("1us"),
        _ => None,
    };
    let mut args = vec![format!("--{option}")];
    args.extend(value.map(str::to_string));
    if matches!(option, "count" | "time") {
        args.insert(0, "--matrix".into());
    }
    args
}

/// The options the completion of `report` offers (bash: its `opts` line).
fn completed_options(bash: &str, report: &ReportSpec) -> Vec<String> {
    let state = format!(
        "trace__stat__subcmd__{})",
        report.name.replace('-', "__subcmd__")
    );
    let at = bash
        .find(&format!("        {state}"))
        .unwrap_or_else(|| panic!("{}: no state in the bash completion", report.name));
    let opts = &bash[at..];
    let line = opts
        .lines()
        .find(|l| l.trim_start().starts_with("opts="))
        .unwrap();
    line.trim()
        .trim_start_matches("opts=\"")
        .trim_end_matches('"')
        .split(' ')
        .map(str::to_string)
        .collect()
}

#[test]
fn every_report_is_listed_helped_paged_and_completed() {
    let (help, _, code) = stat(&["--help"]);
    assert_eq!(code, 0);
    let bash = std::fs::read_to_string(root().join("completions/trace-stat.bash")).unwrap();
    let fish = std::fs::read_to_string(root().join("completions/trace-stat.fish")).unwrap();
    let zsh = std::fs::read_to_string(root().join("completions/_trace-stat")).unwrap();
    let page = std::fs::read_to_string(root().join("man/trace-stat.1")).unwrap();
    for report in REPORTS {
        let name = report.name;
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(name) && l.contains(report.summary)),
            "{name} in --help"
        );
        let (own, _, code) = stat(&[name, "--help"]);
        assert_eq!(code, 0, "{name} --help");
        let start: String = report.about.chars().take(60).collect();
        assert!(
            own.replace('\n', " ").contains(&start.replace('\n', " ")),
            "{name} --help: {own}"
        );
        let man = std::fs::read_to_string(root().join(format!("man/trace-stat-{name}.1")))
            .unwrap_or_else(|_| panic!("man/trace-stat-{name}.1"));
        assert!(
            man.contains(&format!("trace\\-stat {}", name.replace('-', "\\-"))),
            "{name}.1 synopsis"
        );
        assert!(
            page.contains(&name.replace('-', "\\-")),
            "trace-stat.1 lists {name}"
        );
        assert!(
            fish.contains(&format!("__fish_trace_stat_using_subcommand {name}\"")),
            "fish: {name}"
        );
        assert!(
            zsh.contains(&format!("'{name}:")) || zsh.contains(&format!("({name})")),
            "zsh: {name}"
        );
        let offered = completed_options(&bash, report);
        for option in REPORT_OPTIONS.iter().chain(&["by", "partial", "merge"]) {
            let takes = match *option {
                "by" => !report.keys.is_empty(),
                "partial" | "merge" => report.mergeable,
                _ => report.options.contains(option),
            };
            assert_eq!(
                offered.contains(&format!("--{option}")),
                takes,
                "bash offers --{option} to {name}"
            );
        }
    }
}

#[test]
fn every_report_runs_with_each_option_it_takes_and_refuses_the_others() {
    let file = example();
    let file = file.to_str().unwrap();
    for report in REPORTS {
        let name = report.name;
        // A report that reads its inputs its own way (compare) takes two.
        let inputs = match report.inputs {
            Inputs::Own => vec![file, file],
            Inputs::Stream => vec![file],
        };
        let (_, err, code) = stat(&[&[name][..], &inputs].concat());
        assert_eq!(code, 0, "{name}: {err}");
        for option in REPORT_OPTIONS {
            let mut args: Vec<String> = vec![name.into()];
            args.extend(giving(option));
            args.extend(inputs.iter().map(|i| i.to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (_, err, code) = stat(&args);
            if report.options.contains(option) {
                assert_eq!(code, 0, "{args:?}: {err}");
            } else {
                assert_eq!(code, 2, "{args:?} is refused");
                assert!(err.contains(" report, not "), "{args:?}: {err}");
            }
        }
        for key in report.keys {
            // The timeline's keys of messages go with --messages.
            let with = match (name, *key) {
                ("timeline", "pair" | "loc") => &["--messages"][..],
                _ => &[],
            };
            let (_, err, code) = stat(&[&[name, "--by", key][..], with, &inputs].concat());
            assert_eq!(code, 0, "{name} --by {key}: {err}");
        }
        if report.keys.is_empty() {
            let (_, err, code) = stat(&[name, "--by", "name", file]);
            assert_eq!(code, 2);
            assert!(
                err.contains(&format!("does not apply to the {name} report")),
                "{err}"
            );
        }
        let (_, err, code) = stat(&[name, "--partial", file]);
        match report.mergeable {
            true => assert!(
                code == 0 || err.contains("--bin WIDTH"),
                "{name} --partial: {err}"
            ),
            false => assert!(
                code == 2 && err.contains("cannot be merged"),
                "{name} --partial: {err}"
            ),
        }
    }
}

/// Options every report takes go before or after the report's name; a
/// report's own option before it, or the name after options that are
/// the default report's, is told.
#[test]
fn shared_options_go_on_either_side_of_the_report() {
    let file = example();
    let file = file.to_str().unwrap();
    let after = stat(&["messages", "--csv", "--top", "1", file]);
    let before = stat(&["--csv", "--top", "1", "messages", file]);
    assert_eq!(after.2, 0, "{}", after.1);
    assert_eq!(after, before);
    assert!(after.0.starts_with("sender,receiver,"), "{}", after.0);
    let (_, err, code) = stat(&["--matrix", "messages", file]);
    assert_eq!(code, 2);
    assert!(err.contains("--matrix goes after the report"), "{err}");
    let (_, err, code) = stat(&[file, "messages"]);
    assert_eq!(code, 2);
    assert!(err.contains("the report comes first"), "{err}");
    // No report named: the default one.
    let (default, _, _) = stat(&[file]);
    assert_eq!(default, stat(&[REPORTS[0].name, file]).0);
    // A file named like a report is an input when given as a path.
    let dir = common::scratch("reports_file_named_like_a_report");
    std::fs::copy(file, dir.join("summary")).unwrap();
    let named = bin("trace-stat")
        .current_dir(&dir)
        .arg("./summary")
        .output()
        .unwrap();
    assert!(named.status.success());
    assert_eq!(String::from_utf8(named.stdout).unwrap(), default);
    let _ = Path::new(file);
}
