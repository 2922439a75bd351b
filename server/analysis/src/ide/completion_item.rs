//! What a completion is, for every completion source ([`super::completion`],
//! [`super::catalog_completion`], and the test files' in the language server).

use std::ops::Range;

/// What a completion item names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A frontmatter key, or a value of the Lua API.
    Property,
    /// A tool slot alias, a tool path, or a function of the Lua API.
    Function,
    /// A model label.
    Variable,
    /// A section target.
    EnumMember,
    /// A Plugin id.
    Module,
}

/// One completion: what the list shows and the text it puts in place of `replace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    /// What the list shows.
    pub label: String,
    /// What it names.
    pub kind: CompletionKind,
    /// One line beside the label.
    pub detail: Option<String>,
    /// More about it, in Markdown.
    pub documentation: Option<String>,
    /// The byte range the completion replaces (what was typed of it).
    pub replace: Range<usize>,
    /// The text put there.
    pub insert_text: String,
}
