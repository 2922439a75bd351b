//! The GitHub Actions format: one `::error`, `::warning` or `::notice` workflow
//! command per problem.
//!
//! Escaping follows the workflow-command rules of GitHub's toolkit: in the
//! message `%`, `\r` and `\n`; in property values also `:` and `,`.

use std::io::{self, Write};

use promptforge_syntax::Severity;

use crate::problem::Problem;

/// Writes `::error file={path},line={line},col={col},title={Kind}::{message}` per
/// problem (without `line` and `col` when the problem has no position).
pub fn write(problems: &[Problem], out: &mut impl Write) -> io::Result<()> {
    for problem in problems {
        writeln!(out, "{}", command(problem))?;
    }
    Ok(())
}

/// The workflow command of one problem, without the final newline.
pub fn command(problem: &Problem) -> String {
    let mut properties = format!("file={}", escape_property(&problem.path));
    if let Some((line, column)) = problem.position {
        properties.push_str(&format!(",line={line},col={column}"));
    }
    properties.push_str(&format!(",title={}", escape_property(problem.kind)));
    let command = match problem.severity {
        Severity::Information => "notice",
        other => other.as_str(),
    };
    format!(
        "::{command} {properties}::{}",
        escape_data(&problem.message)
    )
}

/// Escapes a command's data (the message).
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value (file, title).
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_data_and_properties() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a:b,c%d\n"), "a%3Ab%2Cc%25d%0A");
    }

    #[test]
    fn command_with_and_without_position() {
        let mut problem = Problem::not_a_prompt("dir,x/a:b.md", "---\nname: x\n---\n").remove(0);
        assert_eq!(
            command(&problem),
            "::error file=dir%2Cx/a%3Ab.md,title=Version::not a PromptForge prompt: the frontmatter has no promptforge: key"
        );
        problem.position = Some((2, 5));
        assert!(command(&problem)
            .starts_with("::error file=dir%2Cx/a%3Ab.md,line=2,col=5,title=Version::"));
    }
}
