//! The command line's shape: subcommands, their arguments and the common flags.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Check, and later run and test, PromptForge prompt files.
#[derive(Debug, Parser)]
#[command(name = "promptforge", version, about, propagate_version = true)]
pub struct Cli {
    /// Flags every subcommand accepts.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The common flags of `host.md` §4 that exist so far.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Host configuration file (TOML). `check` only parses prompts for now and does not read it.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print nothing but the problems (the default for `check`).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also say on stderr which files were checked or skipped, and how many problems were found.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse every prompt and print every problem on stdout.
    ///
    /// Folders are searched recursively for `.md` and `.markdown` files (skipping
    /// hidden folders, `target/` and `node_modules/`); Markdown files found there
    /// whose frontmatter has no `promptforge:` key are skipped. Exit status: 0 when
    /// no problem was found, 1 when some were, 2 for a usage error or a path that
    /// cannot be read.
    Check(CheckArgs),
}

/// Arguments of `promptforge check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files and folders to check.
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How problems are printed.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per problem: `path:line:col: error[Kind]: message`.
    Text,
    /// One pretty-printed JSON array of problem objects.
    Json,
    /// GitHub Actions workflow commands: `::error file=...,line=...,col=...,title=Kind::message`.
    Github,
}
