//! The messages of a test file's own problems ([`Problem`], whose variants are
//! data of [`crate::Code::TestFile`] in `diagnostic::test_file_rules`), and the
//! places whose keys they name.

pub use crate::diagnostic::test_file_rules::*;

use super::messages;
use crate::api_names::RUN_ERROR_KINDS;
use crate::frontmatter::messages as fm;

impl Problem {
    /// The exact message of the rule.
    pub fn message(&self) -> String {
        match self {
            Problem::InvalidYaml { reason } => messages::invalid_yaml(reason),
            Problem::InvalidScriptYaml { reason } => messages::invalid_script_yaml(reason),
            Problem::InvalidType { found, expected } => messages::invalid_type(found, expected),
            Problem::InvalidValue { found, expected } => messages::invalid_value(found, expected),
            Problem::UnknownField { place, key } => messages::unknown_field(key, place.keys()),
            Problem::UnknownErrorKind { kind } => messages::unknown_variant(kind, &RUN_ERROR_KINDS),
            Problem::DuplicateField { key } => messages::duplicate_field(key),
            Problem::DuplicateEntry { key } => messages::duplicate_entry(key),
            Problem::MissingField { key } => messages::missing_field(key),
            Problem::DuplicateCaseName { name } => messages::duplicate_case_name(name),
            Problem::NotOnLiveCase { key } => messages::not_on_live_case(key),
            Problem::InvalidToolPath { text, reason } => fm::invalid_tool_path(text, reason),
            Problem::RoundShape => messages::ROUND_SHAPE.to_owned(),
            Problem::PromptUnreadable { path, reason } => messages::prompt_unreadable(path, reason),
            Problem::CallShape => messages::CALL_SHAPE.to_owned(),
            Problem::AnswerShape => messages::ANSWER_SHAPE.to_owned(),
            Problem::NotJson { reason } => messages::not_json(reason),
            Problem::InvalidRegex { reason } => messages::invalid_regex(reason),
            Problem::RepeatOnScriptedCase => messages::REPEAT_ON_SCRIPTED_CASE.to_owned(),
            Problem::MinPassWithoutRepeat => messages::MIN_PASS_WITHOUT_REPEAT.to_owned(),
        }
    }

    /// True for the rules that warn and let the file run.
    pub fn is_warning(&self) -> bool {
        matches!(self, Problem::RepeatOnScriptedCase)
    }

    /// What the rule says without any text taken from the file (no value, key,
    /// name or parser reason): how a file read for someone else, such as a
    /// configuration's turns file, is described, so its content is never printed.
    pub fn without_content(&self) -> String {
        match self {
            Problem::InvalidYaml { .. } | Problem::InvalidScriptYaml { .. } => {
                "the YAML does not parse".to_owned()
            }
            Problem::InvalidType { expected, .. } => format!("invalid type, expected {expected}"),
            Problem::InvalidValue { expected, .. } => {
                format!("invalid value, expected {expected}")
            }
            Problem::UnknownField { place, .. } => messages::unknown_key(place.keys()),
            Problem::UnknownErrorKind { .. } => "an unknown error kind".to_owned(),
            Problem::DuplicateField { .. } | Problem::DuplicateEntry { .. } => {
                "a key written twice".to_owned()
            }
            Problem::MissingField { key } => messages::missing_field(key),
            Problem::DuplicateCaseName { .. } => "two cases with one name".to_owned(),
            Problem::NotOnLiveCase { key } => messages::not_on_live_case(key),
            Problem::InvalidToolPath { .. } => "an invalid tool path".to_owned(),
            Problem::RoundShape => messages::ROUND_SHAPE.to_owned(),
            Problem::PromptUnreadable { .. } => "its prompt cannot be read".to_owned(),
            Problem::CallShape => messages::CALL_SHAPE.to_owned(),
            Problem::AnswerShape => messages::ANSWER_SHAPE.to_owned(),
            Problem::NotJson { .. } => "a value JSON cannot hold".to_owned(),
            Problem::InvalidRegex { .. } => "an invalid regular expression".to_owned(),
            Problem::RepeatOnScriptedCase => messages::REPEAT_ON_SCRIPTED_CASE.to_owned(),
            Problem::MinPassWithoutRepeat => messages::MIN_PASS_WITHOUT_REPEAT.to_owned(),
        }
    }
}
