//! The command line's shape: subcommands, their arguments and the common flags.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Check and run PromptForge prompt files.
#[derive(Debug, Parser)]
#[command(
    name = "promptforge",
    version = crate::version::VERSION,
    about,
    propagate_version = true
)]
pub struct Cli {
    /// Flags every subcommand accepts.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The common flags of `host.md` §4 (`--format` is each command's own).
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Host configuration file (TOML), read alone; otherwise `$PROMPTFORGE_CONFIG`, else
    /// the nearest `promptforge.toml` upward from the prompt laid over your own config file.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Quiet: no notices, progress or summaries, only the problems (and a run's result).
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
    /// Trust the project's `promptforge.toml` for this invocation (its Plugin
    /// commands, environment variables, files outside its folder, raised limits,
    /// trace endpoint), as `PROMPTFORGE_TRUST=1` does: for CI on your own repository.
    #[arg(long, global = true)]
    pub trust: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse every prompt and print every problem on stdout.
    ///
    /// Folders are searched recursively for `.md` and `.markdown` files and prompt
    /// test files (`*.test.yaml`), skipping hidden folders, `target/` and
    /// `node_modules/`; Markdown files found there whose frontmatter has no
    /// `promptforge:` key are skipped. Exit status: 0 when
    /// no problem was found, 1 when some were, 2 for a usage error or a path that
    /// cannot be read.
    Check(CheckArgs),
    /// Serve the Language Server Protocol on stdin/stdout for editors.
    Lsp(LspArgs),
    /// Serve the Debug Adapter Protocol on stdin/stdout for editors' debuggers.
    ///
    /// `launch` runs a prompt as `run` does (its `program`, `args`, `seed`, `input`,
    /// `stopOnEntry`), with line, function and exception breakpoints, stepping,
    /// threads for chains, variables and evaluate. Give `--trust` when the editor
    /// trusts the workspace, so its `promptforge.toml` may act.
    Dap,
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
    /// Run prompt tests: the cases of every `*.test.yaml` file, offline, with the
    /// model and the Harness tools answered from each case's scripts.
    ///
    /// Folders are searched recursively for `*.test.yaml` files (skipping hidden
    /// folders, `target/` and `node_modules/`). Cases run in parallel; one line per
    /// case, the failures' details, then `N passed, N failed`. Live cases
    /// (`live: true`) are skipped unless `--live`. Exit status: 0 when every case
    /// selected passed (skipped cases included), 1 when a case or a test file
    /// failed, 2 for a usage error or a path that cannot be read.
    Test(TestArgs),
    /// Trust a repository's `promptforge.toml`, after showing what it will do.
    ///
    /// A project configuration (the nearest `promptforge.toml` upward from a
    /// prompt) is code: until it is trusted, what in it acts on the world (a
    /// Plugin's command, an environment variable it hands on, a file outside its
    /// folder, a raised limit) is refused. This records the file's path and the
    /// hash of its content in `$XDG_STATE_HOME/promptforge/trusted.json`: an edited
    /// file must be trusted again. Exit status: 0 done, 2 no configuration found
    /// or it cannot be read.
    Trust(TrustArgs),
    /// Print a shell's completion script for promptforge.
    ///
    /// bash: `promptforge completions bash > ~/.local/share/bash-completion/completions/promptforge`;
    /// zsh: into a folder of `$fpath` as `_promptforge`; fish:
    /// `promptforge completions fish > ~/.config/fish/completions/promptforge.fish`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `promptforge man > promptforge.1; man ./promptforge.1`.
    Man,
}

/// Arguments of `promptforge completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `promptforge trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The folder whose configuration (`promptforge.toml` there or above it) is
    /// trusted, or the file itself.
    #[arg(value_name = "DIR", default_value = ".", conflicts_with = "list")]
    pub dir: PathBuf,
    /// List the trusted configurations, and whether each changed since.
    #[arg(long)]
    pub list: bool,
    /// Forget the trust of DIR's configuration instead.
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,
}

/// Arguments of `promptforge test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Test files and folders to run.
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Run only the cases whose name contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Run live cases too, against the Host's real model and tools.
    #[arg(long)]
    pub live: bool,
    /// Run the I-th of N stable parts of the cases (1-based), for a CI matrix.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Run every live case N times, 1 to 1000 (over its `repeat:`); `min_pass:`
    /// decides it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=promptforge_syntax::test_file::MAX_REPEAT))]
    pub repeat: Option<u64>,
    /// Run each live case once per Host model named (its labels all resolved to
    /// it) and print a table of pass rates per case and model; implies --live.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', num_args = 1)]
    pub models: Option<Vec<String>>,
    /// Keep live models' answers in DIR, keyed by the exact request, and reuse
    /// them (over the configuration's `[test] cache`).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Keep and reuse no answers, whatever the configuration's `[test] cache` says.
    #[arg(long, conflicts_with_all = ["cache", "cache_max_age"])]
    pub no_cache: bool,
    /// Ask again for kept answers older than SECONDS (over `[test] cache_max_age`).
    #[arg(long, value_name = "SECONDS")]
    pub cache_max_age: Option<u64>,
    /// Write the trace of each failing case's run into DIR, as OTLP/JSON.
    #[arg(long, value_name = "DIR")]
    pub trace: Option<PathBuf>,
    /// How the results are printed.
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    pub format: TestFormat,
    /// Run the tests, then again whenever a test file, a prompt one tests or a
    /// configuration file changes: the cases it affects (until Ctrl-C).
    #[arg(long)]
    pub watch: bool,
}

/// Output formats of `test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    /// One line per case, the failures' details, and `N passed, N failed`.
    Text,
    /// One JSON object: files, their problems and cases, and the counts.
    Json,
    /// JUnit XML, for CI test reports.
    Junit,
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
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The prompt file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The argument string, joined by spaces. Flags are flags wherever they stand;
    /// after `--` every word is an argument (`run p.md -- --format` passes `--format`).
    #[arg(value_name = "ARGS")]
    pub args: Vec<String>,
    /// Read the argument string from a file (`-` for stdin) instead of ARGS.
    #[arg(long, value_name = "FILE", conflicts_with = "args")]
    pub args_file: Option<PathBuf>,
    /// How the outcome is printed.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub format: RunFormat,
    /// Record the run as a case appended to this prompt test file (created when
    /// missing), so `promptforge test` replays it offline.
    #[arg(long, value_name = "CASE.test.yaml")]
    pub record: Option<PathBuf>,
    /// The recorded case's name (default: the argument string, `no arguments` when
    /// empty); ` (2)`, ` (3)`, ... is added when the file already has it.
    #[arg(long, value_name = "NAME", requires = "record")]
    pub record_name: Option<String>,
    /// Write the run's trace to FILE as OpenTelemetry (OTLP/JSON).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Export the run's trace to an OpenTelemetry collector over OTLP/HTTP
    /// (`/v1/traces` is added unless URL ends in it); wins over `[trace]
    /// otlp_endpoint`. A failed export is reported and does not fail the run.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(words: &[&str]) -> RunArgs {
        let cli = Cli::try_parse_from(["promptforge", "run"].iter().chain(words)).unwrap();
        match cli.command {
            Command::Run(args) => args,
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn flags_after_the_args_are_flags_and_double_dash_ends_them() {
        let args = parsed(&["p.md", "The", "quick", "--format", "json", "--seed", "3"]);
        assert_eq!(args.args, ["The", "quick"]);
        assert_eq!(args.format, RunFormat::Json);
        let args = parsed(&["p.md", "What", "is", "Rust?", "--record", "p.test.yaml"]);
        assert_eq!(args.args, ["What", "is", "Rust?"]);
        assert_eq!(args.record, Some(PathBuf::from("p.test.yaml")));
        let named = parsed(&["p.md", "x", "--record=t.test.yaml", "--record-name", "a b"]);
        assert_eq!(named.args, ["x"]);
        assert_eq!(named.record_name.as_deref(), Some("a b"));
        let words = parsed(&["p.md", "--", "--format", "-q"]);
        assert_eq!(words.args, ["--format", "-q"]);
        assert_eq!(words.format, RunFormat::Text);
        let global = Cli::try_parse_from([
            "promptforge",
            "run",
            "p.md",
            "a",
            "--seed",
            "7",
            "--no-input",
        ])
        .unwrap();
        assert_eq!(
            (global.global.seed, global.global.no_input),
            (Some(7), true)
        );
    }
}

/// `promptforge lsp`'s flags.
#[derive(Debug, Args)]
pub struct LspArgs {
    /// Accepted and ignored: the server always speaks on stdin/stdout
    /// (`vscode-languageclient` and other clients pass it).
    #[arg(long)]
    pub stdio: bool,
}
