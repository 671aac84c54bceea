//! Man pages and shell completions are generated from the clap definitions and
//! committed; this test fails when a committed copy is stale.
//! Regenerate with: TRACEPIPE_BLESS=1 cargo test --test generated_docs

mod common;

use std::path::PathBuf;

use clap_complete::{generate, Shell};

fn rendered() -> Vec<(PathBuf, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    // One file that loads every command's bash completion from beside it:
    // one line loads all five.
    let names: Vec<String> = tracepipe::cmd::all_commands()
        .iter()
        .map(|c| c.get_name().to_string())
        .collect();
    let loader = format!(
        "# The bash completions of every tracepipe command: source this file.\n\
         for _tracepipe_cmd in {}; do\n  \
         . \"$(dirname \"${{BASH_SOURCE[0]}}\")/$_tracepipe_cmd.bash\"\n\
         done\nunset _tracepipe_cmd\n",
        names.join(" ")
    );
    files.push((root.join("completions/tracepipe.bash"), loader.into_bytes()));
    for cmd in tracepipe::cmd::all_commands() {
        let name = cmd.get_name().to_string();
        files.push((root.join("man").join(format!("{name}.1")), man_page(&cmd)));
        // A page per subcommand (trace-stat's reports), as git has.
        for sub in cmd.get_subcommands() {
            let page = format!("{name}-{}", sub.get_name());
            let sub = sub.clone().name(&page);
            files.push((root.join("man").join(format!("{page}.1")), man_page(&sub)));
        }
        for (shell, file) in [
            (Shell::Bash, format!("{name}.bash")),
            (Shell::Zsh, format!("_{name}")),
            (Shell::Fish, format!("{name}.fish")),
        ] {
            let out = match shell {
                Shell::Bash => bash_completion(&cmd, &name),
                _ => {
                    let mut out = Vec::new();
                    generate(shell, &mut cmd.clone(), name.clone(), &mut out);
                    out
                }
            };
            files.push((root.join("completions").join(file), out));
        }
    }
    files
}

/// The bash completion of `cmd`. clap_complete spells a subcommand's state
/// two ways when the command's name holds a hyphen, so no subcommand option
/// would complete (clap-rs/clap#6421): it is generated for the name with
/// the hyphen spelt as the script spells it, then registered for the name.
fn bash_completion(cmd: &clap::Command, name: &str) -> Vec<u8> {
    let spelt = name.replace('-', "__");
    let mut out = Vec::new();
    generate(Shell::Bash, &mut cmd.clone(), spelt.clone(), &mut out);
    let text = String::from_utf8(out).unwrap();
    let mut fixed = String::new();
    for line in text.lines() {
        match line.trim_start().starts_with("complete -F") {
            true => fixed.push_str(&line.replace(&format!(" {spelt}"), &format!(" {name}"))),
            false => fixed.push_str(line),
        }
        fixed.push('\n');
    }
    fixed.into_bytes()
}

/// A man page from the clap definition: clap_mangen's sections, with a
/// SYNOPSIS that shows the placeholders (clap's usage line), the text
/// after the options split into EXAMPLES (kept as laid out) and NOTES, and
/// what the command holds in memory (MEMORY, not in `--help`).
fn man_page(cmd: &clap::Command) -> Vec<u8> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out).unwrap();
    man.render_name_section(&mut out).unwrap();
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    let (name, rest) = usage.split_once(' ').unwrap_or((usage, ""));
    out.extend(format!(".SH SYNOPSIS\n\\fB{}\\fR {}\n", roff(name), roff(rest)).bytes());
    man.render_description_section(&mut out).unwrap();
    man.render_options_section(&mut out).unwrap();
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out).unwrap();
    }
    let after = cmd
        .get_after_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    let mut paragraphs = after.split("\n\n");
    if let Some(examples) = paragraphs.next() {
        out.extend(b".SH EXAMPLES\n.nf\n");
        for line in examples.lines().skip(1) {
            out.extend(format!("{}\n", roff(line)).bytes());
        }
        out.extend(b".fi\n");
    }
    let notes: Vec<&str> = paragraphs.collect();
    if !notes.is_empty() {
        out.extend(b".SH NOTES\n");
        for p in notes {
            out.extend(format!(".PP\n{}\n", roff(p)).bytes());
        }
    }
    // A subcommand's page (trace-stat-profile) says its command's memory.
    let command = cmd
        .get_name()
        .split('-')
        .take(2)
        .collect::<Vec<_>>()
        .join("-");
    let memory = tracepipe::cmd::memory(&command).expect("every command says its memory");
    out.extend(format!(".SH MEMORY\n.PP\n{}\n", roff(memory)).bytes());
    man.render_version_section(&mut out).unwrap();
    out
}

/// Text escaped for roff: backslashes, hyphens (so they stay ASCII), and a
/// leading dot or quote that would read as a request.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    escaped
        .lines()
        .map(|l| match l.chars().next() {
            Some('.' | '\'') => format!("\\&{l}"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn man_pages_and_completions_are_current() {
    let bless = std::env::var_os("TRACEPIPE_BLESS").is_some();
    let mut stale = Vec::new();
    for (path, content) in rendered() {
        let current = std::fs::read(&path).ok();
        if current.as_deref() != Some(&content[..]) {
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &content).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files (run TRACEPIPE_BLESS=1 cargo test --test generated_docs): {stale:?}"
    );
}

#[test]
fn every_command_has_an_example_in_its_help() {
    for cmd in tracepipe::cmd::all_commands() {
        let help = cmd.clone().render_long_help().to_string();
        assert!(
            help.contains("Examples:"),
            "{} --help has no example",
            cmd.get_name()
        );
        assert!(help.contains(cmd.get_name()), "{}", cmd.get_name());
    }
}

/// The README's install lines put the man pages where `man` finds them
/// beside `~/.cargo/bin` (man derives `../share/man` from each PATH entry),
/// and load every completion in one line.
#[test]
fn readme_install_lines_reach_man_and_the_shell() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains("cp man/*.1 ~/.cargo/share/man/man1/"),
        "README: man pages beside ~/.cargo/bin"
    );
    assert!(readme.contains("source completions/tracepipe.bash"));
    // Sourced from elsewhere, it loads every command's completion.
    let loaded = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "cd / && source {} && complete -p",
            root.join("completions/tracepipe.bash").display()
        ))
        .output()
        .unwrap();
    let loaded = String::from_utf8(loaded.stdout).unwrap();
    for cmd in tracepipe::cmd::all_commands() {
        assert!(
            loaded
                .lines()
                .any(|l| l.ends_with(&format!(" {}", cmd.get_name()))),
            "{}: {loaded}",
            cmd.get_name()
        );
    }
    // Where man-db is installed, check it finds that folder.
    let home = std::env::temp_dir().join("tracepipe-manpath");
    let man1 = home.join(".cargo/share/man/man1");
    std::fs::create_dir_all(&man1).unwrap();
    std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
    let path = format!("{}:/usr/bin:/bin", home.join(".cargo/bin").display());
    let Ok(out) = std::process::Command::new("manpath")
        .env("PATH", path)
        .env_remove("MANPATH")
        .output()
    else {
        common::skipped("manpath is not installed");
        return;
    };
    let manpath = String::from_utf8_lossy(&out.stdout);
    let want = home.join(".cargo/share/man").display().to_string();
    assert!(manpath.split(':').any(|d| d.trim() == want), "{manpath}");
}

/// `--help` keeps to usage and examples: what a command holds in memory is
/// in its man page only.
#[test]
fn help_keeps_to_usage_and_the_man_page_says_the_memory() {
    for mut cmd in tracepipe::cmd::all_commands() {
        let name = cmd.get_name().to_string();
        let help = cmd.render_long_help().to_string();
        let memory = tracepipe::cmd::memory(&name).unwrap();
        assert!(!help.contains("Memory"), "{name} --help: {help}");
        let start: String = memory.chars().take(40).collect();
        assert!(!help.contains(&start), "{name} --help repeats its memory");
        let man = String::from_utf8(man_page(&cmd)).unwrap();
        assert!(man.contains(".SH MEMORY"), "{name}.1");
    }
}

/// `-h` is the short help in every command (each option's first sentence,
/// and the examples), `--help` the whole.
#[test]
fn short_help_differs_from_long_help_in_every_command() {
    for cmd in tracepipe::cmd::all_commands() {
        let name = cmd.get_name();
        let help = |flag: &str| {
            let exe =
                std::env::var_os(format!("CARGO_BIN_EXE_{name}")).expect("a binary per command");
            let out = std::process::Command::new(exe).arg(flag).output().unwrap();
            assert!(out.status.success(), "{name} {flag}");
            String::from_utf8(out.stdout).unwrap()
        };
        let short = help("-h");
        assert_ne!(short, help("--help"), "{name}: -h is --help");
        assert!(short.contains("Examples:"), "{name} -h has no example");
    }
}
