//! `promptforge`: the PromptForge command line.
//!
//! `check` and `run` exist; `test`, `lsp` and `catalog` come later. The rules of the language live in
//! `promptforge-syntax`: this binary parses arguments, finds files, prints what
//! the library reports and chooses the exit code.

mod check;
mod cli;
mod files;
mod lsp;
mod output;
mod problem;
mod run;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match &cli.command {
        Command::Check(args) => check::run(args, &cli.global),
        Command::Lsp => lsp::run(),
        Command::Run(args) => return ExitCode::from(run::run(args, &cli.global)),
    };
    ExitCode::from(status.code())
}
