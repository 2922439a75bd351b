//! `promptforge`: the PromptForge command line.
//!
//! Only `check` exists for now; `run`, `test`, `lsp` and `catalog` come with the
//! engine and the language server. The rules of the language live in
//! `promptforge-syntax`: this binary parses arguments, finds files, prints what
//! the library reports and chooses the exit code.

mod check;
mod cli;
mod files;
mod output;
mod problem;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match &cli.command {
        Command::Check(args) => check::run(args, &cli.global),
    };
    ExitCode::from(status.code())
}
