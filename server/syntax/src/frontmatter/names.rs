//! The name grammars: Plugin ids and tool paths (Tools chapter, "Plugin ids and tool paths",
//! `language.md` §1.3), aliases and model labels, prompt names, and the reserved names.

use std::ops::Range;

use super::messages;
use crate::api_names::{LUA_GLOBALS, SECTION_GLOBALS};
use crate::diagnostic::Code;

/// A Plugin id or tool path that breaks the grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    /// The rule broken, with the name and the reason.
    pub code: Code,
    /// The reason part alone (the text after `invalid global name: ` or `invalid tool id: `,
    /// or the whole two-segment rule for a three-segment Plugin id).
    pub reason: String,
    /// Byte range, within the name, of the segment the reason names; the whole name for a
    /// count error (empty, at the segment's place, for an empty segment).
    pub segment: Range<usize>,
}

impl NameError {
    /// The full message (`invalid Plugin id `...`: ...` or `invalid exact tool path `...`: ...`).
    pub fn message(&self) -> String {
        self.code.message()
    }
}

/// Checks a Plugin id (`namespace/plugin`) in the order of `language.md` §1.3.
pub fn check_plugin_id(text: &str) -> Result<(), NameError> {
    match check_segments(text) {
        Err((reason, segment)) => Err(NameError {
            code: Code::InvalidPluginId {
                text: text.to_owned(),
                reason: reason.clone(),
            },
            reason,
            segment,
        }),
        Ok(2) => Ok(()),
        Ok(_) => Err(NameError {
            code: Code::PluginIdSegments {
                text: text.to_owned(),
            },
            reason: "a Plugin id has exactly 2 segments (namespace/plugin)".to_owned(),
            segment: 0..text.len(),
        }),
    }
}

/// Checks an exact tool path (`namespace/plugin/name`) in the order of `language.md` §1.3.
pub fn check_tool_path(text: &str) -> Result<(), NameError> {
    let reason = match check_segments(text) {
        Err((reason, segment)) => {
            return Err(NameError {
                code: Code::InvalidToolPath {
                    text: text.to_owned(),
                    reason: reason.clone(),
                },
                reason,
                segment,
            })
        }
        Ok(3) => return Ok(()),
        Ok(_) => messages::reason_tool_id_three_segments(),
    };
    Err(NameError {
        code: Code::InvalidToolPath {
            text: text.to_owned(),
            reason: reason.clone(),
        },
        reason,
        segment: 0..text.len(),
    })
}

/// True when `name` follows the alias and model label grammar `[A-Za-z][A-Za-z0-9_-]{0,63}`.
pub fn is_valid_alias(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// True when `name` follows the prompt name grammar `[a-z0-9][a-z0-9_-]{0,63}`.
pub fn is_valid_prompt_name(name: &str) -> bool {
    let lower_or_digit = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if lower_or_digit(c))
        && name.len() <= 64
        && chars.all(|c| lower_or_digit(c) || c == '_' || c == '-')
}

/// True when `name` is reserved: a global of a section VM ([`SECTION_GLOBALS`], [`LUA_GLOBALS`]), which no alias or model label may take.
pub fn is_reserved(name: &str) -> bool {
    SECTION_GLOBALS.contains(&name) || LUA_GLOBALS.contains(&name)
}

/// The shared checks: the overall count, then each segment left to right. Returns the
/// segment count, or the reason and the byte range it names.
fn check_segments(text: &str) -> Result<usize, (String, Range<usize>)> {
    let count = text.split('/').count();
    if count != 2 && count != 3 {
        return Err((messages::reason_segment_count(count), 0..text.len()));
    }
    let mut start = 0;
    for (index, segment) in text.split('/').enumerate() {
        let number = index + 1;
        let range = start..start + segment.len();
        if segment.is_empty() {
            return Err((messages::reason_empty_segment(number), range));
        }
        if let Some(c) = segment.chars().find(|&c| !is_segment_char(c)) {
            let reason = if is_control(c) {
                messages::reason_control_character(number)
            } else {
                messages::reason_bad_character(number, c)
            };
            return Err((reason, range));
        }
        start = range.end + 1;
    }
    Ok(count)
}

/// True when `name` is one segment of a Plugin id or tool path: at least one
/// character, each a-z 0-9 - _ . (an MCP server's tool name must be one).
pub fn is_segment(name: &str) -> bool {
    !name.is_empty() && name.chars().all(is_segment_char)
}

/// a-z 0-9 - _ .
fn is_segment_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.')
}

/// U+0000-U+001F and U+007F-U+009F.
fn is_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin_err(text: &str) -> NameError {
        match check_plugin_id(text) {
            Err(e) => e,
            Ok(()) => panic!("{text} should be invalid"),
        }
    }

    fn tool_err(text: &str) -> NameError {
        match check_tool_path(text) {
            Err(e) => e,
            Ok(()) => panic!("{text} should be invalid"),
        }
    }

    #[test]
    fn valid_names_from_the_tools_chapter() {
        for id in [
            "promptforge/web",
            "io.github.corp/mcp",
            "acme/web-search",
            "acme/web_search",
            "-/9.",
        ] {
            assert_eq!(check_plugin_id(id), Ok(()), "{id}");
        }
        for path in ["promptforge/web/fetch", "promptforge/web2/fetch", "a/b/c"] {
            assert_eq!(check_tool_path(path), Ok(()), "{path}");
        }
    }

    #[test]
    fn count_comes_before_empty_segments() {
        let e = plugin_err("a//b/");
        assert_eq!(e.code.message(), "invalid Plugin id `a//b/`: invalid global name: expected 2 or 3 segments separated by /, found 4");
        assert_eq!(e.segment, 0..5);
        assert_eq!(
            plugin_err("").reason,
            "expected 2 or 3 segments separated by /, found 1"
        );
        assert_eq!(tool_err("a").segment, 0..1);
    }

    #[test]
    fn empty_segment_comes_before_characters_and_goes_left_to_right() {
        // Segment 1 has a bad character, but segments are checked left to right.
        let e = plugin_err("A/");
        assert_eq!(
            e.reason,
            "segment 1 contains `A`; allowed are a-z, 0-9, -, _ and ."
        );
        // Segment 2 is empty and segment 3 has a bad character: the empty one is first.
        let e = tool_err("a//B");
        assert_eq!(
            e.code.message(),
            "invalid exact tool path `a//B`: invalid tool id: segment 2 is empty"
        );
        assert_eq!(e.segment, 2..2);
    }

    #[test]
    fn the_first_bad_character_decides_control_or_character_set() {
        let e = plugin_err("acme/w\u{1}B");
        assert_eq!(e.reason, "segment 2 contains a control character");
        assert_eq!(e.segment, 5..8);
        let e = plugin_err("acme/wB\u{1}");
        assert_eq!(
            e.reason,
            "segment 2 contains `B`; allowed are a-z, 0-9, -, _ and ."
        );
        let e = plugin_err("acme/\u{85}");
        assert_eq!(e.reason, "segment 2 contains a control character");
        let e = plugin_err("acmé/x");
        assert_eq!(e.code.message(), "invalid Plugin id `acmé/x`: invalid global name: segment 1 contains `é`; allowed are a-z, 0-9, -, _ and .");
        assert_eq!(e.segment, 0..5);
    }

    #[test]
    fn the_exact_count_comes_last() {
        let e = plugin_err("promptforge/web/fetch");
        assert_eq!(e.code.message(), "invalid Plugin id `promptforge/web/fetch`: a Plugin id has exactly 2 segments (namespace/plugin)");
        assert_eq!(e.segment, 0..21);
        // A bad segment in a three-segment Plugin id gets the grammar reason, not the count.
        let e = plugin_err("a/b/C");
        assert_eq!(
            e.reason,
            "segment 3 contains `C`; allowed are a-z, 0-9, -, _ and ."
        );
        let e = tool_err("promptforge/web");
        assert_eq!(e.code.message(), "invalid exact tool path `promptforge/web`: invalid tool id: a tool id has exactly 3 segments (namespace/plugin/name)");
        assert_eq!(
            tool_err("Promptforge/web").reason,
            "segment 1 contains `P`; allowed are a-z, 0-9, -, _ and ."
        );
    }

    #[test]
    fn alias_and_prompt_name_grammars() {
        assert!(is_valid_alias("fetch"));
        assert!(is_valid_alias("Web_search-2"));
        assert!(is_valid_alias(&"a".repeat(64)));
        assert!(!is_valid_alias(&"a".repeat(65)));
        assert!(!is_valid_alias("2fetch"));
        assert!(!is_valid_alias("_G"));
        assert!(!is_valid_alias(""));
        assert!(!is_valid_alias("fé"));
        assert!(is_valid_prompt_name("page-fetcher"));
        assert!(is_valid_prompt_name("0_x"));
        assert!(!is_valid_prompt_name("Page"));
        assert!(!is_valid_prompt_name("-x"));
        assert!(!is_valid_prompt_name(&"a".repeat(65)));
        assert!(is_reserved("store") && is_reserved("pairs") && is_reserved("utf8"));
        assert!(!is_reserved("fetch"));
    }
}
