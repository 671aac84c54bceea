use std::process::ExitCode;

use tracepipe::{cli, cmd::filter};

fn main() -> ExitCode {
    cli::run_main("trace-filter", filter::run)
}
