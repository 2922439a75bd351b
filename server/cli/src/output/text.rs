//! The text format: `path:line:col: error[Code]: message` (`warning[Code]` for a
//! warning), one problem per line.

use std::io::{self, Write};

use crate::problem::Problem;

/// Writes one line per problem (`path: error[Kind]: message` when it has no
/// position); a message of several lines continues on the following lines as it is.
pub fn write(problems: &[Problem], out: &mut impl Write) -> io::Result<()> {
    for problem in problems {
        writeln!(out, "{}", line(problem))?;
    }
    Ok(())
}

/// The printed form of one problem, without the final newline.
pub fn line(problem: &Problem) -> String {
    let severity = problem.severity.as_str();
    match problem.position {
        Some((line, column)) => format!(
            "{}:{}:{}: {severity}[{}]: {}",
            problem.path, line, column, problem.kind, problem.message
        ),
        None => format!(
            "{}: {severity}[{}]: {}",
            problem.path, problem.kind, problem.message
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Problem;

    #[test]
    fn unlocated_problem_has_no_position() {
        let problem = Problem::not_a_prompt("notes/readme.md", "---\nname: x\n---\n").remove(0);
        assert_eq!(
            line(&problem),
            "notes/readme.md: error[Version]: not a PromptForge prompt: the frontmatter has no promptforge: key"
        );
    }

    #[test]
    fn located_problem() {
        let mut problem = Problem::not_a_prompt("a.md", "---\nname: x\n---\n").remove(0);
        problem.position = Some((3, 7));
        problem.kind = "Frontmatter";
        problem.message = "m".to_owned();
        assert_eq!(line(&problem), "a.md:3:7: error[Frontmatter]: m");
    }
}
