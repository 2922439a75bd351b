//! The rules a diagnostic can report: one [`Code`] variant per rule of the spec,
//! carrying what the rule found. The message is built from the code, by
//! [`Code::message`] alone (in [`crate::message_text`], above the rules whose
//! message functions it calls); everything that reacts to a diagnostic (a fix, a
//! test, a renderer) matches on the code, never on its text.

use crate::diagnostic::ParseKind;

/// Where an unknown frontmatter key was found: each place lists its own keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldPlace {
    /// The frontmatter's top level.
    TopLevel,
    /// A `plugins:` entry map.
    PluginEntry,
    /// A model label's options.
    ModelOption,
}

/// The Lua API function a scope alias was given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeFunction {
    /// `tools.add`.
    Add,
    /// `tools.always`.
    Always,
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The run is refused (or would fail where the problem is).
    Error,
    /// The run goes ahead without it.
    Warning,
    /// Nothing is wrong with the prompt: something the author should know,
    /// such as what the analysis did not do or a Plugin awaiting trust.
    Information,
}

impl Severity {
    /// `error`, `warning` or `info`, as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
        }
    }
}

/// One rule of the spec, with the facts it found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Code {
    // ---- Parse: the frontmatter (language.md §1, the Tools chapter) ----
    /// The file does not open with frontmatter.
    NoFrontmatter,
    /// The YAML does not parse; the YAML reader's reason.
    InvalidYaml { reason: String },
    /// A required key is missing.
    MissingField { key: String },
    /// A key is written twice.
    DuplicateField { key: String },
    /// A key the place does not know.
    UnknownField { place: FieldPlace, key: String },
    /// A value of the wrong type (serde's wording: what was found, what was expected).
    InvalidType {
        found: String,
        expected: &'static str,
    },
    /// A `name:` that breaks the prompt name grammar.
    InvalidPromptName { name: String },
    /// An empty `description:`.
    EmptyDescription,
    /// `max_tool_iterations` outside 1 to 1000, as written.
    MaxToolIterationsOutOfRange { value: String },
    /// `temperature` outside 0 to 2, as written.
    TemperatureOutOfRange { value: String },
    /// `max_tokens` below 1, as written.
    MaxTokensOutOfRange { value: String },
    /// A `tools:` alias or model label that breaks the alias grammar.
    InvalidAliasKey { alias: String },
    /// An alias or label that is a reserved name.
    ReservedName { name: String },
    /// A name that is both an alias and a label.
    AliasAndLabel { name: String },
    /// A Plugin declared more than once under `plugins:`.
    PluginDeclaredTwice { id: String },
    /// A slot whose Plugin is declared optional.
    SlotNeedsRequiredPlugin {
        alias: String,
        path: String,
        id: String,
    },
    /// A Plugin id that breaks the shared name grammar; the reason.
    InvalidPluginId { text: String, reason: String },
    /// A Plugin id with three otherwise valid segments.
    PluginIdSegments { text: String },
    /// A tool path that breaks the tool path grammar; the reason.
    InvalidToolPath { text: String, reason: String },
    // ---- Parse: the version ----
    /// A `promptforge:` other than 0.
    UnsupportedVersion { version: String },
    /// A Markdown file named on the command line without a `promptforge:` key.
    NotAPrompt,
    // ---- Parse: the structure (language.md §1.4) ----
    /// Not exactly one H1, or something before it.
    OneH1,
    /// A heading more than one level under its parent.
    HeadingLevelSkipped {
        heading: String,
        level: u8,
        parent: u8,
    },
    /// Two sibling sections with one heading; the other's 1-based line.
    DuplicateSection { heading: String, line: u32 },
    /// A `lua shared` block outside the H1 body.
    SharedOutsideH1,
    /// An executable block with no closing line; its opener's 1-based line.
    UnclosedLuaBlock { line: u32 },
    /// A heading with only blanks after its `#` marks.
    EmptyHeading,
    // ---- Parse: Lua ----
    /// A Lua syntax error; Lua's message.
    LuaSyntax { message: String },
    // ---- Static Lua checks: what the run would refuse, known from the text ----
    /// `tools.add`/`tools.always` naming an alias that is not a bound tool slot.
    UnboundToolSlot {
        function: ScopeFunction,
        alias: String,
    },
    /// `tools.call` naming neither a bound slot nor a local tool; the bound aliases.
    UnboundTool { name: String, bound: Vec<String> },
    /// A `tools.add_local` alias that is also a tool slot.
    LocalToolClash { alias: String },
    /// An alias literal given to the tools API that breaks the alias grammar.
    InvalidAliasArgument { alias: String },
    /// A `tools.add_local` parameter spec that is not a type or `{type, description}`.
    LocalToolParamShape { name: String },
    /// A `tools.add_local` parameter of a type the engine does not offer.
    LocalToolParamType { name: String, type_text: String },
    /// A `jump`/`call`/`fanout` target not visible from its caller.
    InvisibleTarget {
        target: String,
        caller: String,
        /// The first [`crate::messages::SECTIONS_SHOWN`] sections visible from the caller.
        visible: Vec<String>,
        /// How many more are visible (four bytes: the code stays 80 bytes).
        more: u32,
    },
    /// A label given to `models.use`/`get`/`default` that is not declared.
    UndeclaredModelLabel {
        label: String,
        declared: Vec<String>,
    },
    /// A member of the older API (`tools.bind`, ...).
    OlderApi { member: String },
    /// A `tools.calls` key that is neither a slot nor a local tool of the section.
    UnknownCallsKey { key: String },
    // ---- What the analysis leaves out (the trust issue) ----
    /// A Lua block the static checks and the editor's Lua features do not read:
    /// its size, and the limit it is past (of one block, or of the document's
    /// blocks together when `whole_document`). The document's limit is reported
    /// once, on the first block past it, with how many `later` blocks are not read
    /// for the same reason (0 for a block past its own limit).
    LuaBlockNotRead {
        bytes: usize,
        limit: usize,
        whole_document: bool,
        later: usize,
    },
    // ---- Prepare against the Host's catalog (the Tools chapter) ----
    /// A required Plugin the Host lacks, that failed, or that contributed no tools.
    MissingPlugin { id: String },
    /// A slot's Plugin the prompt does not declare under `plugins:` (`registered`:
    /// whether the Host has it). It refuses the run as a missing Plugin does.
    UndeclaredPlugin {
        id: String,
        alias: String,
        path: String,
        registered: bool,
    },
    /// Two declared Plugins that conflict, the earlier first.
    ConflictingPlugins { first: String, second: String },
    /// An optional Plugin skipped, and why.
    SkippedOptionalPlugin { id: String, reason: String },
    /// A slot path the catalog lacks (the slot stays unbound); the nearest catalog path.
    UnknownToolPath {
        path: String,
        alias: String,
        nearest: Option<String>,
    },
    /// A model label the Host cannot bind; the Host's reason (its whole message).
    UnboundModelLabel { label: String, reason: String },
    /// A configuration that gives no Host.
    Configuration { error: String },
    /// A declared Plugin whose configuration is not trusted, so it is not started; the refusal.
    UntrustedPlugin { id: String, reason: String },
    // ---- Prompt test files (testing.md) ----
    /// A problem of a test file itself (its YAML, keys, values and names).
    TestFile(crate::diagnostic::test_file_rules::Problem),
    /// An alias a test file names that the prompt neither binds nor registers.
    UnknownAlias { alias: String },
}

/// Every name [`Code::name`] gives: the four parse kinds, then the codes of the
/// checks, of preparing against the Host and of test files. The book's diagnostics
/// reference has an entry for each.
pub const CODE_NAMES: &[&str] = &[
    "Frontmatter",
    "Version",
    "Structure",
    "Lua",
    "Binding",
    "Configuration",
    "InvalidAlias",
    "InvisibleTarget",
    "LocalToolClash",
    "LocalToolParam",
    "LuaBlockNotRead",
    "OlderApi",
    "RequirementsUnmet",
    "TestFile",
    "Trust",
    "UnboundTool",
    "UnboundToolSlot",
    "UndeclaredModelLabel",
    "UnknownAlias",
    "UnknownCallsKey",
];

impl Code {
    /// What the rule is for its stable code: a parse rule of one kind, or a named
    /// rule after the parse. Every variant is listed (no catch-all arm), so a new
    /// rule does not compile until it is given its code here.
    fn stable(&self) -> Stable {
        match self {
            Code::UnsupportedVersion { .. } | Code::NotAPrompt => Stable::Parse(ParseKind::Version),
            Code::OneH1
            | Code::HeadingLevelSkipped { .. }
            | Code::DuplicateSection { .. }
            | Code::SharedOutsideH1
            | Code::UnclosedLuaBlock { .. }
            | Code::EmptyHeading => Stable::Parse(ParseKind::Structure),
            Code::LuaSyntax { .. } => Stable::Parse(ParseKind::Lua),
            Code::NoFrontmatter
            | Code::InvalidYaml { .. }
            | Code::MissingField { .. }
            | Code::DuplicateField { .. }
            | Code::UnknownField { .. }
            | Code::InvalidType { .. }
            | Code::InvalidPromptName { .. }
            | Code::EmptyDescription
            | Code::MaxToolIterationsOutOfRange { .. }
            | Code::TemperatureOutOfRange { .. }
            | Code::MaxTokensOutOfRange { .. }
            | Code::InvalidAliasKey { .. }
            | Code::ReservedName { .. }
            | Code::AliasAndLabel { .. }
            | Code::PluginDeclaredTwice { .. }
            | Code::SlotNeedsRequiredPlugin { .. }
            | Code::InvalidPluginId { .. }
            | Code::PluginIdSegments { .. }
            | Code::InvalidToolPath { .. } => Stable::Parse(ParseKind::Frontmatter),
            Code::UnboundToolSlot { .. } => Stable::Named("UnboundToolSlot"),
            Code::UnboundTool { .. } => Stable::Named("UnboundTool"),
            Code::LocalToolClash { .. } => Stable::Named("LocalToolClash"),
            Code::InvalidAliasArgument { .. } => Stable::Named("InvalidAlias"),
            Code::LocalToolParamShape { .. } | Code::LocalToolParamType { .. } => {
                Stable::Named("LocalToolParam")
            }
            Code::InvisibleTarget { .. } => Stable::Named("InvisibleTarget"),
            Code::UndeclaredModelLabel { .. } => Stable::Named("UndeclaredModelLabel"),
            Code::OlderApi { .. } => Stable::Named("OlderApi"),
            Code::UnknownCallsKey { .. } => Stable::Named("UnknownCallsKey"),
            Code::LuaBlockNotRead { .. } => Stable::Named("LuaBlockNotRead"),
            Code::MissingPlugin { .. }
            | Code::UndeclaredPlugin { .. }
            | Code::ConflictingPlugins { .. }
            | Code::SkippedOptionalPlugin { .. }
            | Code::UnknownToolPath { .. } => Stable::Named("RequirementsUnmet"),
            Code::UnboundModelLabel { .. } => Stable::Named("Binding"),
            Code::Configuration { .. } => Stable::Named("Configuration"),
            Code::UntrustedPlugin { .. } => Stable::Named("Trust"),
            Code::TestFile(_) => Stable::Named("TestFile"),
            Code::UnknownAlias { .. } => Stable::Named("UnknownAlias"),
        }
    }

    /// The parse kind of a parse rule (None for the checks after the parse).
    pub fn parse_kind(&self) -> Option<ParseKind> {
        match self.stable() {
            Stable::Parse(kind) => Some(kind),
            Stable::Named(_) => None,
        }
    }

    /// The stable code printed in `error[Code]` and published as the LSP `code`: the
    /// parse kind for a parse rule, the check's or prepare's name otherwise.
    pub fn name(&self) -> &'static str {
        match self.stable() {
            Stable::Parse(kind) => kind.as_str(),
            Stable::Named(name) => name,
        }
    }

    /// The severity the rule reports with (every variant listed, no catch-all arm).
    pub fn severity(&self) -> Severity {
        match self {
            Code::SkippedOptionalPlugin { .. }
            | Code::UnknownToolPath { .. }
            | Code::Configuration { .. }
            | Code::UnknownAlias { .. } => Severity::Warning,
            Code::UntrustedPlugin { .. } | Code::LuaBlockNotRead { .. } => Severity::Information,
            Code::TestFile(problem) if problem.is_warning() => Severity::Warning,
            Code::NoFrontmatter
            | Code::InvalidYaml { .. }
            | Code::MissingField { .. }
            | Code::DuplicateField { .. }
            | Code::UnknownField { .. }
            | Code::InvalidType { .. }
            | Code::InvalidPromptName { .. }
            | Code::EmptyDescription
            | Code::MaxToolIterationsOutOfRange { .. }
            | Code::TemperatureOutOfRange { .. }
            | Code::MaxTokensOutOfRange { .. }
            | Code::InvalidAliasKey { .. }
            | Code::ReservedName { .. }
            | Code::AliasAndLabel { .. }
            | Code::PluginDeclaredTwice { .. }
            | Code::SlotNeedsRequiredPlugin { .. }
            | Code::InvalidPluginId { .. }
            | Code::PluginIdSegments { .. }
            | Code::InvalidToolPath { .. }
            | Code::UnsupportedVersion { .. }
            | Code::NotAPrompt
            | Code::OneH1
            | Code::HeadingLevelSkipped { .. }
            | Code::DuplicateSection { .. }
            | Code::SharedOutsideH1
            | Code::UnclosedLuaBlock { .. }
            | Code::EmptyHeading
            | Code::LuaSyntax { .. }
            | Code::UnboundToolSlot { .. }
            | Code::UnboundTool { .. }
            | Code::LocalToolClash { .. }
            | Code::InvalidAliasArgument { .. }
            | Code::LocalToolParamShape { .. }
            | Code::LocalToolParamType { .. }
            | Code::InvisibleTarget { .. }
            | Code::UndeclaredModelLabel { .. }
            | Code::OlderApi { .. }
            | Code::UnknownCallsKey { .. }
            | Code::MissingPlugin { .. }
            | Code::UndeclaredPlugin { .. }
            | Code::ConflictingPlugins { .. }
            | Code::UnboundModelLabel { .. }
            | Code::TestFile(_) => Severity::Error,
        }
    }

    /// True for the prepare problems that refuse the run with the RequirementsUnmet notice.
    pub fn refuses_requirements(&self) -> bool {
        matches!(
            self,
            Code::MissingPlugin { .. }
                | Code::UndeclaredPlugin { .. }
                | Code::ConflictingPlugins { .. }
        )
    }
}

/// A rule's stable code: its parse kind, or the name of a rule after the parse.
#[derive(Debug, Clone, Copy)]
enum Stable {
    /// A parse rule of this kind (its name is the kind's).
    Parse(ParseKind),
    /// A rule after the parse, by name (one of [`CODE_NAMES`]).
    Named(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value of every variant. The exhaustive match in `sample_is_listed` stops
    /// compiling when a variant is added, so the new one gets a sample here too.
    fn one_of_each() -> Vec<Code> {
        let s = || String::from("x");
        vec![
            Code::NoFrontmatter,
            Code::InvalidYaml { reason: s() },
            Code::MissingField { key: s() },
            Code::DuplicateField { key: s() },
            Code::UnknownField {
                place: FieldPlace::TopLevel,
                key: s(),
            },
            Code::InvalidType {
                found: s(),
                expected: "a string",
            },
            Code::InvalidPromptName { name: s() },
            Code::EmptyDescription,
            Code::MaxToolIterationsOutOfRange { value: s() },
            Code::TemperatureOutOfRange { value: s() },
            Code::MaxTokensOutOfRange { value: s() },
            Code::InvalidAliasKey { alias: s() },
            Code::ReservedName { name: s() },
            Code::AliasAndLabel { name: s() },
            Code::PluginDeclaredTwice { id: s() },
            Code::SlotNeedsRequiredPlugin {
                alias: s(),
                path: s(),
                id: s(),
            },
            Code::InvalidPluginId {
                text: s(),
                reason: s(),
            },
            Code::PluginIdSegments { text: s() },
            Code::InvalidToolPath {
                text: s(),
                reason: s(),
            },
            Code::UnsupportedVersion { version: s() },
            Code::NotAPrompt,
            Code::OneH1,
            Code::HeadingLevelSkipped {
                heading: s(),
                level: 3,
                parent: 1,
            },
            Code::DuplicateSection {
                heading: s(),
                line: 1,
            },
            Code::SharedOutsideH1,
            Code::UnclosedLuaBlock { line: 1 },
            Code::EmptyHeading,
            Code::LuaSyntax { message: s() },
            Code::UnboundToolSlot {
                function: ScopeFunction::Add,
                alias: s(),
            },
            Code::UnboundTool {
                name: s(),
                bound: vec![],
            },
            Code::LocalToolClash { alias: s() },
            Code::InvalidAliasArgument { alias: s() },
            Code::LocalToolParamShape { name: s() },
            Code::LocalToolParamType {
                name: s(),
                type_text: s(),
            },
            Code::InvisibleTarget {
                target: s(),
                caller: s(),
                visible: vec![],
                more: 0,
            },
            Code::UndeclaredModelLabel {
                label: s(),
                declared: vec![],
            },
            Code::OlderApi { member: s() },
            Code::UnknownCallsKey { key: s() },
            Code::LuaBlockNotRead {
                bytes: 2,
                limit: 1,
                whole_document: false,
                later: 0,
            },
            Code::MissingPlugin { id: s() },
            Code::UndeclaredPlugin {
                id: s(),
                alias: s(),
                path: s(),
                registered: false,
            },
            Code::ConflictingPlugins {
                first: s(),
                second: s(),
            },
            Code::SkippedOptionalPlugin {
                id: s(),
                reason: s(),
            },
            Code::UnknownToolPath {
                path: s(),
                alias: s(),
                nearest: None,
            },
            Code::UnboundModelLabel {
                label: s(),
                reason: s(),
            },
            Code::Configuration { error: s() },
            Code::UntrustedPlugin {
                id: s(),
                reason: s(),
            },
            Code::TestFile(crate::diagnostic::test_file_rules::Problem::InvalidYaml {
                reason: s(),
            }),
            Code::UnknownAlias { alias: s() },
        ]
    }

    /// No wildcard: a new variant is a compile error here until it has a sample.
    fn sample_is_listed(code: &Code) -> bool {
        match code {
            Code::NoFrontmatter
            | Code::InvalidYaml { .. }
            | Code::MissingField { .. }
            | Code::DuplicateField { .. }
            | Code::UnknownField { .. }
            | Code::InvalidType { .. }
            | Code::InvalidPromptName { .. }
            | Code::EmptyDescription
            | Code::MaxToolIterationsOutOfRange { .. }
            | Code::TemperatureOutOfRange { .. }
            | Code::MaxTokensOutOfRange { .. }
            | Code::InvalidAliasKey { .. }
            | Code::ReservedName { .. }
            | Code::AliasAndLabel { .. }
            | Code::PluginDeclaredTwice { .. }
            | Code::SlotNeedsRequiredPlugin { .. }
            | Code::InvalidPluginId { .. }
            | Code::PluginIdSegments { .. }
            | Code::InvalidToolPath { .. }
            | Code::UnsupportedVersion { .. }
            | Code::NotAPrompt
            | Code::OneH1
            | Code::HeadingLevelSkipped { .. }
            | Code::DuplicateSection { .. }
            | Code::SharedOutsideH1
            | Code::UnclosedLuaBlock { .. }
            | Code::EmptyHeading
            | Code::LuaSyntax { .. }
            | Code::UnboundToolSlot { .. }
            | Code::UnboundTool { .. }
            | Code::LocalToolClash { .. }
            | Code::InvalidAliasArgument { .. }
            | Code::LocalToolParamShape { .. }
            | Code::LocalToolParamType { .. }
            | Code::InvisibleTarget { .. }
            | Code::UndeclaredModelLabel { .. }
            | Code::OlderApi { .. }
            | Code::UnknownCallsKey { .. }
            | Code::LuaBlockNotRead { .. }
            | Code::MissingPlugin { .. }
            | Code::UndeclaredPlugin { .. }
            | Code::ConflictingPlugins { .. }
            | Code::SkippedOptionalPlugin { .. }
            | Code::UnknownToolPath { .. }
            | Code::UnboundModelLabel { .. }
            | Code::Configuration { .. }
            | Code::UntrustedPlugin { .. }
            | Code::TestFile(_)
            | Code::UnknownAlias { .. } => true,
        }
    }

    #[test]
    fn every_code_name_is_in_code_names_and_every_listed_name_is_given() {
        let codes = one_of_each();
        // 49 variants: keep in step with `sample_is_listed`.
        assert_eq!(codes.len(), 49, "one sample per variant");
        for code in &codes {
            assert!(sample_is_listed(code));
            assert!(
                CODE_NAMES.contains(&code.name()),
                "{} is missing from CODE_NAMES",
                code.name()
            );
        }
        for name in CODE_NAMES {
            assert!(
                codes.iter().any(|code| code.name() == *name),
                "CODE_NAMES lists {name}, which no code gives"
            );
        }
    }
}
