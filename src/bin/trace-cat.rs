use std::process::ExitCode;

use tracepipe::{cli, cmd::cat};

fn main() -> ExitCode {
    cli::run_main("trace-cat", cat::run)
}
