//! The command line's shape: subcommands, their arguments and the common flags.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Check and run PromptForge prompt files.
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

/// The common flags of `host.md` §4 (`--format` is each command's own).
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Host configuration file (TOML); otherwise one is looked for (`$PROMPTFORGE_CONFIG`,
    /// `promptforge.toml` upward from the prompt, the user's config file).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print nothing but the problems (the default for `check`).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also say on stderr which files were checked or skipped, and how many problems were found.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Seed: fixes the untrusted nonce and the run id, so two runs are byte-for-byte identical.
    #[arg(long, global = true, value_name = "N")]
    pub seed: Option<u64>,
    /// The run's filesystem on disk (default: in memory).
    #[arg(long, global = true, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// No operator: `input.ask` raises input_unavailable, and Plugins get no input broker.
    #[arg(long, global = true)]
    pub no_input: bool,
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
    /// Serve the Language Server Protocol on stdin/stdout for editors.
    Lsp,
    /// Run a prompt: the result alone on stdout, problems and the run log on stderr.
    ///
    /// ARGS joined by spaces become the prompt's `args`. Exit status: 0 when the run
    /// succeeded, 1 for a run error, 2 for a usage error, 130 when cancelled (Ctrl-C;
    /// a second Ctrl-C exits at once).
    Run(RunArgs),
    /// List the Host's Plugins and their tools, or a prompt's catalog and tool slots.
    ///
    /// Each Plugin is activated to learn its tools (an MCP server starts and
    /// stops). For a prompt, its declared Plugins are prepared as `run` would.
    /// Exit status: 0 listed, 1 the prompt has a problem (printed), 2 usage error.
    Catalog(CatalogArgs),
}

/// Arguments of `promptforge catalog`.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// A prompt file: list its catalog and slots instead of the Host's Plugins.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// How the listing is printed.
    #[arg(long, value_enum, default_value_t = CatalogFormat::Text)]
    pub format: CatalogFormat,
}

/// Output formats of `catalog`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CatalogFormat {
    /// Readable text.
    Text,
    /// One JSON object.
    Json,
}

/// Arguments of `promptforge run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The argument string, joined by spaces.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
    /// Read the argument string from a file (`-` for stdin) instead of ARGS.
    #[arg(long, value_name = "FILE", conflicts_with = "args")]
    pub args_file: Option<PathBuf>,
    /// How the outcome is printed.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub format: RunFormat,
}

/// Output formats of `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// The result on stdout; problems, notices and `log: ` lines on stderr.
    Text,
    /// One JSON object on stdout: ok, result, error, calls, log, duration_ms.
    Json,
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
    /// Exit 1 on these problems too (`warnings`: warnings fail the check as errors do).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub deny: Vec<Deny>,
}

/// What `check --deny` turns into failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Deny {
    /// Every warning.
    Warnings,
}

impl CheckArgs {
    /// True when warnings fail the check.
    pub fn deny_warnings(&self) -> bool {
        self.deny.contains(&Deny::Warnings)
    }
}

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per problem: `path:line:col: error[Code]: message` (or `warning[Code]`).
    Text,
    /// One pretty-printed JSON array of problem objects.
    Json,
    /// GitHub Actions workflow commands: `::error file=...,line=...,col=...,title=Kind::message`.
    Github,
}
