use std::process::ExitCode;

use tracepipe::{cli, cmd::matching};

fn main() -> ExitCode {
    cli::run_main("trace-match", matching::run)
}
