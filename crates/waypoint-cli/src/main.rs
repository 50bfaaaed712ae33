//! `waypoint`: a thin binary over the library crates. It parses arguments, loads the
//! catalog, calls the engine and renders the answer for a person or a script.

mod cli;
mod commands;
mod configuring;
mod report;
mod running;
mod serving;
mod setup;
mod training;

use std::process::ExitCode;

use clap::Parser;

/// Planning makes many small, short-lived allocations; under a server's load glibc's
/// malloc cost a fifth of the throughput (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cli.global.color {
        cli::ColorChoice::Always => anstream::ColorChoice::Always.write_global(),
        cli::ColorChoice::Never => anstream::ColorChoice::Never.write_global(),
        cli::ColorChoice::Auto => {}
    }
    // Traces and logs when configured (docs/telemetry.md); spans still buffered are sent
    // when the guard drops at the end of the command. A config file that does not load
    // is the command's error to report, so telemetry falls back to the environment here.
    let section = waypoint_app::Config::load(cli.global.planner.config.as_deref())
        .map(|c| c.telemetry)
        .unwrap_or_default();
    let verbosity = if matches!(cli.command, cli::Command::Serve(_)) {
        waypoint_app::telemetry::Verbosity::Server
    } else {
        waypoint_app::telemetry::Verbosity::Command
    };
    let telemetry = match waypoint_app::telemetry::init(&section, verbosity) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("warning: telemetry is off: {e}");
            None
        }
    };
    let code = match commands::run(&cli) {
        Ok(code) => code,
        // `waypoint route … | head`: the reader has what it wanted; like other Unix
        // tools, stop quietly.
        Err(err) if broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            report::error(&err);
            ExitCode::from(1)
        }
    };
    drop(telemetry);
    code
}

fn broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
