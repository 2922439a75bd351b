//! PromptForge prompt files: text -> [`Document`] + diagnostics.
//!
//! One parse gives every error of a file in document order, each with its exact
//! message (`language.md` §1), its 1-based `line:column` and, for the editor, its
//! exact byte range. [`ParsedFile`] keeps the tree-sitter tree and re-analyses
//! incrementally after an edit.

pub mod api_names;
pub mod block_edit;
pub mod body;
pub mod cores;
pub mod diagnostic;
pub mod document;
mod duplicate_sections;
pub mod excerpt;
pub mod frontmatter;
mod indexed;
pub mod items;
pub mod line_index;
pub mod lua;
pub mod message_text;
pub mod messages;
pub mod node_kinds;
pub mod parsed_file;
mod points;
pub mod prompt_detection;
pub mod sections;
pub mod spanned;
pub mod test_file;
mod windows;

pub use block_edit::BlockEdit;
pub use diagnostic::{
    Code, Diagnostic, FieldPlace, Fix, ParseKind, Related, ScopeFunction, Severity, TextEdit,
    CODE_NAMES,
};
pub use document::{Body, Document, Heading, LuaBlock, Section};
pub use frontmatter::Frontmatter;
pub use indexed::Indexed;
pub use line_index::{ColumnUnit, LineCol, LineIndex};
pub use messages::NOT_A_PROMPT;
pub use parsed_file::{AnalysisWork, Edit, EditError, ParsedFile};
pub use prompt_detection::is_prompt;
pub use sections::{Caller, Sections};

/// The result of analysing one text: the document model, every diagnostic in
/// document order, and the line index to print their positions.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// What the file declares and contains.
    pub document: Document,
    /// Every problem, in document order.
    pub diagnostics: Vec<Diagnostic>,
    /// Positions of the analysed text.
    pub line_index: LineIndex,
}

impl Default for Analysis {
    /// The analysis of no text: no document, no diagnostic.
    fn default() -> Self {
        Analysis {
            document: Document::default(),
            diagnostics: Vec::new(),
            line_index: LineIndex::new(""),
        }
    }
}

/// Parses and validates `text` from scratch, its Lua blocks compiled by `lua`
/// (the product's is `promptforge_luacheck::compiler()`, and
/// `promptforge_luacheck::parse` is this with it).
pub fn parse_with(text: &str, lua: std::sync::Arc<dyn lua::LuaCompiler>) -> Analysis {
    ParsedFile::analyse_once(text.to_owned(), lua).0
}

/// For this crate's own tests of the frontmatter and the structure: a parse whose
/// Lua blocks all compile (their checks are `promptforge-luacheck`'s tests).
#[cfg(test)]
pub(crate) fn parse_ignoring_lua(text: &str) -> Analysis {
    struct AllCompiles;
    impl lua::LuaCompiler for AllCompiles {
        fn check(&self, _code: &str) -> Result<(), lua::LuaSyntaxError> {
            Ok(())
        }
    }
    parse_with(text, std::sync::Arc::new(AllCompiles))
}

impl Analysis {
    /// The diagnostics of a text that is not a prompt ([`is_prompt`] false) but must
    /// be reported as one: a file named explicitly to `check`, `run` or `catalog`,
    /// or an open document that stays a prompt (`editor.md` §1). A text that does
    /// not open with closed frontmatter gets the parse's Frontmatter error
    /// (`language.md` §1.1); one whose frontmatter has no `promptforge:` key gets
    /// the Version error, printed without a position and placed on the
    /// frontmatter's opening line for the editor.
    pub fn not_a_prompt_diagnostics(&self, text: &str) -> Vec<Diagnostic> {
        if self
            .diagnostics
            .iter()
            .any(|d| d.code == Code::NoFrontmatter)
        {
            return self.diagnostics.clone();
        }
        let range = self
            .document
            .frontmatter
            .as_ref()
            .and_then(|f| {
                let line = self.line_index.line_of(f.range.start);
                self.line_index.line_range(text, line)
            })
            .unwrap_or(0..0);
        vec![Diagnostic::new(Code::NotAPrompt, range).unlocated()]
    }
}
