//! One module per command: its clap definition (`Args`, also used to generate
//! man pages and completions) and its `run`.

pub mod cat;
pub mod filter;

use clap::CommandFactory;

/// The clap definitions of every command, for docs and completions.
pub fn all_commands() -> Vec<clap::Command> {
    vec![cat::Args::command(), filter::Args::command()]
}
