//! The text of every diagnostic: [`Code::message`], one arm per rule, each calling
//! the message function of the module that owns the rule (the frontmatter's, the
//! body's, the static checks' and the test file's). It sits above those modules so
//! that they can make diagnostics without importing one another's messages.

use crate::diagnostic::{Code, FieldPlace, ScopeFunction};
use crate::frontmatter::messages as fm;
use crate::messages;

impl Code {
    /// The exact message of the rule.
    pub fn message(&self) -> String {
        match self {
            Code::NoFrontmatter => messages::NO_FRONTMATTER.to_owned(),
            Code::InvalidYaml { reason } => fm::invalid_yaml(reason),
            Code::MissingField { key } => fm::missing_field(key),
            Code::DuplicateField { key } => fm::duplicate_field(key),
            Code::UnknownField { place, key } => match place {
                FieldPlace::TopLevel => fm::unknown_top_level_field(key),
                FieldPlace::PluginEntry => fm::unknown_plugin_field(key),
                FieldPlace::ModelOption => fm::unknown_model_option(key),
            },
            Code::InvalidType { found, expected } => fm::invalid_type(found, expected),
            Code::InvalidPromptName { name } => fm::invalid_prompt_name(name),
            Code::EmptyDescription => fm::empty_description(),
            Code::MaxToolIterationsOutOfRange { value } => {
                fm::max_tool_iterations_out_of_range(value)
            }
            Code::TemperatureOutOfRange { value } => fm::temperature_out_of_range(value),
            Code::MaxTokensOutOfRange { value } => fm::max_tokens_out_of_range(value),
            Code::InvalidAliasKey { alias } | Code::InvalidAliasArgument { alias } => {
                fm::invalid_alias(alias)
            }
            Code::ReservedName { name } => fm::reserved_name(name),
            Code::AliasAndLabel { name } => fm::alias_and_label(name),
            Code::PluginDeclaredTwice { id } => fm::plugin_declared_twice(id),
            Code::SlotNeedsRequiredPlugin { alias, path, id } => {
                fm::slot_needs_required_plugin(alias, path, id)
            }
            Code::InvalidPluginId { text, reason } => fm::invalid_plugin_id(text, reason),
            Code::PluginIdSegments { text } => fm::plugin_id_two_segments(text),
            Code::InvalidToolPath { text, reason } => fm::invalid_tool_path(text, reason),
            Code::UnsupportedVersion { version } => fm::unsupported_version(version),
            Code::NotAPrompt => messages::NOT_A_PROMPT.to_owned(),
            Code::OneH1 => crate::body::ONE_H1.to_owned(),
            Code::HeadingLevelSkipped {
                heading,
                level,
                parent,
            } => crate::body::level_skipped(heading, *level, *parent),
            Code::DuplicateSection { heading, line } => {
                crate::body::duplicate_section(heading, *line)
            }
            Code::SharedOutsideH1 => crate::body::SHARED_OUTSIDE_H1.to_owned(),
            Code::UnclosedLuaBlock { line } => crate::body::unclosed_block(*line),
            Code::EmptyHeading => crate::body::EMPTY_HEADING.to_owned(),
            Code::LuaSyntax { message } => message.clone(),
            Code::UnboundToolSlot { function, alias } => match function {
                ScopeFunction::Add => messages::add_not_bound(alias),
                ScopeFunction::Always => messages::always_not_bound(alias),
            },
            Code::UnboundTool { name, bound } => messages::unbound_tool(name, bound),
            Code::LocalToolClash { alias } => messages::add_local_duplicates_slot(alias),
            Code::LocalToolParamShape { name } => messages::add_local_bad_param(name),
            Code::LocalToolParamType { name, type_text } => {
                messages::add_local_unsupported_type(name, type_text)
            }
            Code::InvisibleTarget {
                target,
                caller,
                visible,
                more,
            } => messages::section_not_visible(target, caller, visible, *more as usize),
            Code::UndeclaredModelLabel { label, declared } => {
                messages::undeclared_label(label, declared)
            }
            Code::OlderApi { member } => messages::older_api(member).unwrap_or_default().to_owned(),
            Code::UnknownCallsKey { key } => messages::calls_key_unknown(key),
            Code::LuaBlockNotRead {
                bytes,
                limit,
                whole_document,
                later,
            } => messages::lua_block_not_read(*bytes, *limit, *whole_document, *later),
            Code::MissingPlugin { id } => {
                messages::notice_line_alone(&messages::missing_plugin(id)).to_owned()
            }
            Code::UndeclaredPlugin {
                id,
                alias,
                path,
                registered,
            } => messages::undeclared_plugin(alias, path, id, *registered),
            Code::ConflictingPlugins { first, second } => {
                messages::notice_line_alone(&messages::conflicting_plugins(first, second))
                    .to_owned()
            }
            Code::SkippedOptionalPlugin { id, reason } => {
                messages::skipped_optional_plugin(id, reason)
            }
            Code::UnknownToolPath {
                path,
                alias,
                nearest,
            } => messages::unknown_tool_path(path, alias, nearest.as_deref()),
            Code::UnboundModelLabel { reason, .. } => reason.clone(),
            Code::Configuration { error } => messages::configuration_unusable(error),
            Code::UntrustedPlugin { id, reason } => messages::untrusted_plugin(id, reason),
            Code::TestFile(problem) => problem.message(),
            Code::UnknownAlias { alias } => crate::test_file::messages::unknown_alias(alias),
        }
    }
}
