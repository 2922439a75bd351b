//! The output formats of `check`: one module per format.

mod github;
mod json;
mod text;

use std::io::{self, Write};

use crate::cli::Format;
use crate::problem::Problem;

pub use json::{object as json_object, JsonProblem};
pub use text::line as text_line;

/// Writes `problems`, in the order given, in `format`.
pub fn write(format: Format, problems: &[Problem], out: &mut impl Write) -> io::Result<()> {
    match format {
        Format::Text => text::write(problems, out),
        Format::Json => json::write(problems, out),
        Format::Github => github::write(problems, out),
    }
}
