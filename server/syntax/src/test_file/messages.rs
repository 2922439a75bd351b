//! Every message of a prompt test file's own problems (`testing.md`) and of the
//! alias warning, each built by one function. serde's wording where serde would say
//! it; tests compare them byte for byte.

/// YAML of a test file that does not parse: `invalid test file: {parser message}`.
pub fn invalid_yaml(parser_message: &str) -> String {
    format!("invalid test file: {parser_message}")
}

/// YAML of a `script` provider's turns file that does not parse.
pub fn invalid_script_yaml(parser_message: &str) -> String {
    format!("invalid model script: {parser_message}")
}

/// serde's type error: `invalid type: {found}, expected {what}`.
pub fn invalid_type(found: &str, expected: &str) -> String {
    format!("invalid type: {found}, expected {expected}")
}

/// serde's value error (a negative number for a `u64`): `invalid value: {found}, expected {what}`.
pub fn invalid_value(found: &str, expected: &str) -> String {
    format!("invalid value: {found}, expected {expected}")
}

/// serde's list of the names expected: `` `a` ``, `` `a` or `b` ``, or
/// `` one of `a`, `b`, `c` ``.
pub fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => "nothing".to_owned(),
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        many => format!("one of {}", many.join(", ")),
    }
}

/// serde's unknown field: `` unknown field `{key}`, expected {one_of(keys)} ``.
pub fn unknown_field(key: &str, keys: &[&str]) -> String {
    format!("unknown field `{key}`, expected {}", one_of(keys))
}

/// An unknown key, not named (the file's text is not to be printed).
pub fn unknown_key(keys: &[&str]) -> String {
    format!("an unknown key, expected {}", one_of(keys))
}

/// serde's unknown variant (an `expect.error.kind` that is no error kind).
pub fn unknown_variant(variant: &str, variants: &[&str]) -> String {
    format!("unknown variant `{variant}`, expected {}", one_of(variants))
}

/// serde's missing field: `` missing field `{key}` ``.
pub fn missing_field(key: &str) -> String {
    format!("missing field `{key}`")
}

/// serde's duplicate field: `` duplicate field `{key}` ``.
pub fn duplicate_field(key: &str) -> String {
    format!("duplicate field `{key}`")
}

/// serde_yaml's duplicate map key (a store path, tool path or alias written twice).
pub fn duplicate_entry(key: &str) -> String {
    format!("duplicate entry with key {key:?}")
}

/// Two cases with one name.
pub fn duplicate_case_name(name: &str) -> String {
    format!("duplicate case name {name:?}")
}

/// `model:` or `tools:` on a `live: true` case.
pub fn not_on_live_case(key: &str) -> String {
    format!("`{key}` is not allowed on a live case")
}

/// A round with both or neither of `text` and `calls`.
pub const ROUND_SHAPE: &str = "a model round holds exactly one of `text` or `calls`";

/// A call entry that is not a map of one key.
pub const CALL_SHAPE: &str = "a scripted call is a map of one alias to its arguments";

/// A tool answer with both or neither of `output` and `error`.
pub const ANSWER_SHAPE: &str = "a tool answer holds exactly one of `output` or `error`";

/// A YAML value that JSON cannot hold (a map key that is null or a collection).
pub fn not_json(reason: &str) -> String {
    format!("this value cannot be turned into JSON text: {reason}")
}

/// A `result_matches:` that the `regex` crate does not compile.
pub fn invalid_regex(reason: &str) -> String {
    format!("invalid regular expression: {reason}")
}

/// The warning on an alias a test names that the prompt neither binds nor registers.
pub fn unknown_alias(alias: &str) -> String {
    format!(
        "the prompt neither binds nor registers a tool named {alias:?}; the engine decides at run time"
    )
}

/// Related-information text on the first of a key or entry written twice.
pub const RELATED_FIRST_WRITTEN: &str = "first written here";

/// Related-information text on the first case of a name used twice.
pub const RELATED_FIRST_USED: &str = "first used here";

/// The prompt a test file tests cannot be read.
pub fn prompt_unreadable(path: &str, reason: &str) -> String {
    format!("the prompt {path} cannot be read: {reason}")
}

/// `repeat:` on a scripted case.
pub const REPEAT_ON_SCRIPTED_CASE: &str =
    "`repeat` applies to live cases: this scripted case runs once";

/// `min_pass:` on a case without `repeat:`.
pub const MIN_PASS_WITHOUT_REPEAT: &str = "`min_pass` needs `repeat` on the case";

/// What `repeat:` takes (1 to [`super::MAX_REPEAT`]).
pub const EXPECTED_REPEAT: &str = "a whole number from 1 to 1000";

/// What `min_pass:` takes.
pub const EXPECTED_MIN_PASS: &str =
    "a share of the runs above 0 and at most 1 (0.8), or a count of 1 or more (8)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repeat_bound_is_the_one_said() {
        let bound = super::super::MAX_REPEAT.to_string();
        assert!(EXPECTED_REPEAT.ends_with(&format!(" to {bound}")));
    }

    #[test]
    fn serde_lists_names_like_serde() {
        assert_eq!(one_of(&["a"]), "`a`");
        assert_eq!(one_of(&["a", "b"]), "`a` or `b`");
        assert_eq!(one_of(&["a", "b", "c"]), "one of `a`, `b`, `c`");
        assert_eq!(
            duplicate_entry("a\"b"),
            r#"duplicate entry with key "a\"b""#
        );
    }
}
