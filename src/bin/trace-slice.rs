use std::process::ExitCode;

use tracepipe::{cli, cmd::slice};

fn main() -> ExitCode {
    cli::run_main("trace-slice", slice::run)
}
