//! Shell completions and the manual page, both generated from the one clap
//! definition in [`crate::cli`], so they never drift from the flags.

use std::io::{self, Write};

use clap::CommandFactory;

use crate::cli::Cli;
use crate::exit::Exit;

/// Prints the completion script of `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Exit {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "promptforge", &mut out);
    write(&out)
}

/// Prints the manual page (roff) on stdout.
pub fn man() -> Exit {
    let mut out = Vec::new();
    if let Err(error) = clap_mangen::Man::new(Cli::command()).render(&mut out) {
        eprintln!("promptforge: cannot render the manual page: {error}");
        return Exit::Usage;
    }
    write(&out)
}

fn write(bytes: &[u8]) -> Exit {
    let mut stdout = io::stdout().lock();
    if crate::output::failed_to_write(stdout.write_all(bytes).and_then(|()| stdout.flush())) {
        Exit::Usage
    } else {
        Exit::Ok
    }
}
