//! One module per command: its clap definition (`Args`, also used to generate
//! man pages and completions) and its `run`.

pub mod cat;
pub mod filter;
pub mod matching;
pub mod slice;
pub mod stat;

/// What command `name` holds in memory, for its man page: `--help` keeps to
/// usage and examples.
pub fn memory(name: &str) -> Option<&'static str> {
    match name {
        "trace-cat" => Some(cat::MEMORY),
        "trace-filter" => Some(filter::MEMORY),
        "trace-match" => Some(matching::MEMORY),
        "trace-slice" => Some(slice::MEMORY),
        "trace-stat" => Some(stat::MEMORY),
        _ => None,
    }
}

/// The clap definitions of every command (with the format options), for docs
/// and completions.
pub fn all_commands() -> Vec<clap::Command> {
    vec![
        crate::cli::command::<cat::Args>(),
        crate::cli::command::<filter::Args>(),
        crate::cli::command::<matching::Args>(),
        crate::cli::command::<slice::Args>(),
        crate::cli::with_format_options(stat::documented_command()),
    ]
}
