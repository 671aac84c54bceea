//! One module per command: its clap definition (`Args`, also used to generate
//! man pages and completions) and its `run`.

pub mod cat;
pub mod filter;
pub mod matching;
pub mod slice;
pub mod stat;

/// The clap definitions of every command (with the format options), for docs
/// and completions.
pub fn all_commands() -> Vec<clap::Command> {
    vec![
        crate::cli::command::<cat::Args>(),
        crate::cli::command::<filter::Args>(),
        crate::cli::command::<matching::Args>(),
        crate::cli::command::<slice::Args>(),
        crate::cli::command::<stat::Args>(),
    ]
}
