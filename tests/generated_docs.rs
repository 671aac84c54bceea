//! Man pages and shell completions are generated from the clap definitions and
//! committed; this test fails when a committed copy is stale.
//! Regenerate with: TRACEPIPE_BLESS=1 cargo test --test generated_docs

use std::path::PathBuf;

use clap_complete::{generate, Shell};

fn rendered() -> Vec<(PathBuf, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for cmd in tracepipe::cmd::all_commands() {
        let name = cmd.get_name().to_string();
        let mut man = Vec::new();
        clap_mangen::Man::new(cmd.clone())
            .render(&mut man)
            .expect("man page renders");
        files.push((root.join("man").join(format!("{name}.1")), man));
        for (shell, file) in [
            (Shell::Bash, format!("{name}.bash")),
            (Shell::Zsh, format!("_{name}")),
            (Shell::Fish, format!("{name}.fish")),
        ] {
            let mut out = Vec::new();
            generate(shell, &mut cmd.clone(), name.clone(), &mut out);
            files.push((root.join("completions").join(file), out));
        }
    }
    files
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
