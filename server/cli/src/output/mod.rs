//! The output formats of `check`: one module per format.

mod github;
mod json;
mod text;

use std::io::{self, Write};

use crate::cli::Format;
use crate::problem::Problem;

pub use json::{object as json_object, JsonProblem};
pub use text::line as text_line;

/// Says on stderr that the output could not be written, unless the reader went
/// away (`| head`: a closed pipe ends the output quietly, the exit status
/// stands); true when it was said (the command then exits 2).
pub fn failed_to_write(written: io::Result<()>) -> bool {
    match written {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("promptforge: cannot write the output: {error}");
            true
        }
        _ => false,
    }
}

/// Writes `problems`, in the order given, in `format`.
pub fn write(format: Format, problems: &[Problem], out: &mut impl Write) -> io::Result<()> {
    match format {
        Format::Text => text::write(problems, out),
        Format::Json => json::write(problems, out),
        Format::Github => github::write(problems, out),
    }
}
