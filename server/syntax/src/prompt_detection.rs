//! Telling a prompt from any other Markdown file: a frontmatter with a `promptforge:` key.

/// True when `text` starts (after an optional BOM and blank lines) with a `---`
/// line and the frontmatter below it (up to the closing `---` line, or the end of
/// the file when there is none) has a top-level `promptforge` key, in block or
/// flow style.
pub fn is_prompt(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .split(['\n', '\r'])
        .skip_while(|line| line.trim_matches([' ', '\t']).is_empty());
    if lines.next() != Some("---") {
        return false;
    }
    let mut yaml = String::new();
    for line in lines {
        if line == "---" {
            break;
        }
        if is_promptforge_key(line) {
            return true;
        }
        yaml.push_str(line);
        yaml.push('\n');
    }
    yaml.contains("promptforge") && has_promptforge_key(&yaml)
}

/// Reads the YAML for a top-level `promptforge` key (flow style, or other forms a
/// line scan misses), with the frontmatter's own reader. Invalid YAML has no key.
fn has_promptforge_key(yaml: &str) -> bool {
    crate::frontmatter::has_top_level_key(yaml, "promptforge")
}

fn is_promptforge_key(line: &str) -> bool {
    let rest = ["promptforge", "\"promptforge\"", "'promptforge'"]
        .iter()
        .find_map(|key| line.strip_prefix(key));
    rest.is_some_and(|rest| rest.trim_start_matches([' ', '\t']).starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::is_prompt;

    #[test]
    fn a_promptforge_key_makes_a_prompt() {
        assert!(is_prompt("---\nname: x\npromptforge: 0\n---\n# T\n"));
        assert!(is_prompt("\u{feff}---\r\npromptforge : 0\r\n---\r\n"));
        assert!(is_prompt("---\n\"promptforge\": 0\n"));
        assert!(is_prompt("---\n{name: x, promptforge: 0}\n---\n"));
        assert!(is_prompt("\n  \n---\npromptforge: 0\n---\n"));
    }

    #[test]
    fn other_markdown_is_not_a_prompt() {
        assert!(!is_prompt("# Title\npromptforge: 0\n"));
        assert!(!is_prompt("---\ntitle: x\n---\npromptforge: 0\n"));
        assert!(is_prompt("---\n  promptforge: 0\n---\n"));
        assert!(!is_prompt("---\npromptforge_x: 0\n---\n"));
        assert!(!is_prompt("---\n{name: promptforge}\n---\n"));
        assert!(!is_prompt("---\nnested:\n  promptforge: 0\n---\n"));
        assert!(!is_prompt(""));
    }

    /// A text that is no prompt, named explicitly (or open as a prompt): no opening
    /// `---` is the Frontmatter error at 1:1 (`language.md` §1.1); a frontmatter
    /// without a `promptforge:` key is the unlocated Version error, placed on its
    /// opening line.
    #[test]
    fn a_text_that_is_no_prompt_gets_one_verdict() {
        use crate::Code;
        let plain = "# Notes\n\nprose\n";
        let verdict = crate::parse_ignoring_lua(plain).not_a_prompt_diagnostics(plain);
        assert_eq!(verdict.len(), 1);
        assert_eq!(verdict[0].code, Code::NoFrontmatter);
        assert_eq!(
            verdict[0].message,
            "a prompt starts with YAML frontmatter between two --- lines"
        );
        assert!(verdict[0].located);
        assert_eq!(verdict[0].offset, 0);

        let keyless = "---\nname: x\n---\n# T\n";
        let verdict = crate::parse_ignoring_lua(keyless).not_a_prompt_diagnostics(keyless);
        assert_eq!(verdict.len(), 1);
        assert_eq!(verdict[0].code, Code::NotAPrompt);
        assert_eq!(verdict[0].message, crate::messages::NOT_A_PROMPT);
        assert!(!verdict[0].located);
        assert_eq!(verdict[0].range, 0..3);
    }

    /// YAML 1.1 and 1.2 read some plain scalars differently (`on`, `yes`, `010`);
    /// detection and validation use one reader (1.2), so they agree.
    #[test]
    fn detection_and_validation_read_yaml_alike() {
        let text = "---
{on: 1, promptforge: 0, name: yes, description: d, max_tool_iterations: 010}
---
\n# T\n";
        assert!(is_prompt(text));
        let analysis = crate::parse_ignoring_lua(text);
        let messages: Vec<&str> = analysis
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        // `on` is a string key (1.1 would read a boolean): an unknown field, named as written.
        assert_eq!(
            messages,
            ["unknown field `on`, expected one of `name`, `description`, `promptforge`, `plugins`, `tools`, `models`, `max_tool_iterations`"]
        );
        let frontmatter = analysis.document.frontmatter.expect("a frontmatter");
        // `yes` is the string "yes" (1.1: true), `010` is ten (1.1: eight).
        assert_eq!(frontmatter.name.map(|n| n.value).as_deref(), Some("yes"));
        assert_eq!(frontmatter.max_tool_iterations.map(|n| n.value), Some(10));
        // A key that is not a string is no `promptforge` key, for either.
        assert!(!is_prompt(
            "---
{1: promptforge}
---
"
        ));
    }
}
