//! `promptforge`: the PromptForge command line.
//!
//! `check`, `run`, `test`, `catalog` and `lsp`. The rules of the language live in
//! `promptforge-syntax`: this binary parses arguments, finds files, prints what
//! the library reports and chooses the exit code.

mod allocator;
mod catalog;
mod check;
mod cli;
mod dap;
mod drop_later;
mod exit;
mod files;
mod host_setup;
mod lsp;
mod output;
mod problem;
mod run;
mod shell;
mod test;
mod trust;
mod version;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match &cli.command {
        Command::Check(args) => check::run(args, &cli.global),
        Command::Lsp(_) => lsp::run(),
        Command::Dap => dap::run(&cli.global),
        Command::Catalog(args) => catalog::run(args, &cli.global),
        Command::Run(args) => run::run(args, &cli.global),
        Command::Test(args) => test::run(args, &cli.global),
        Command::Trust(args) => trust::run(args),
        Command::Completions(args) => shell::completions(args.shell),
        Command::Man => shell::man(),
    };
    ExitCode::from(status.code())
}
