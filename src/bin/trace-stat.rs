use std::process::ExitCode;

use tracepipe::{cli, cmd::stat};

fn main() -> ExitCode {
    cli::run_main("trace-stat", stat::run)
}
