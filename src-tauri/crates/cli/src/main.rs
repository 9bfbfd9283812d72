//! The `crosscheck` command: `serve` runs web mode; `gate` and `review` run the cold review.
//! The gate path starts no async runtime unless a review has to run, so a ledger hit is fast.

mod gate;
mod port;
mod report;
mod serve;
mod token;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Crosscheck: a second pair of eyes for coding agents.
#[derive(Parser)]
#[command(name = "crosscheck", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the UI and the Api on loopback (web mode).
    Serve(serve::ServeArgs),
    /// Cold-review gates for agents' hooks.
    #[command(subcommand)]
    Gate(gate::GateCommand),
    /// Review a plan file once and print the outcome; `review report` prints a folder's
    /// newest review loop as markdown.
    Review(gate::ReviewArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Gate(cmd) => gate::run_gate(cmd),
        Command::Review(args) => gate::run_review(args),
    }
}
