//! The grammar's node kinds as ids, resolved once, so walking the tree compares integers.

use std::sync::OnceLock;

use tree_sitter::Language;

/// The kind ids of the grammar's named nodes that the analysis reads.
#[derive(Debug, Clone, Copy)]
pub struct NodeKinds {
    /// `frontmatter`.
    pub frontmatter: u16,
    /// `frontmatter_content`.
    pub frontmatter_content: u16,
    /// `frontmatter_delimiter`.
    pub frontmatter_delimiter: u16,
    /// `atx_heading`.
    pub atx_heading: u16,
    /// `fenced_code_block`.
    pub fenced_code_block: u16,
    /// `fence_open`.
    pub fence_open: u16,
    /// `code_content`.
    pub code_content: u16,
    /// `fence_close`.
    pub fence_close: u16,
    /// `thematic_break`.
    pub thematic_break: u16,
}

/// The grammar's language.
pub fn language() -> Language {
    tree_sitter_promptforge::LANGUAGE.into()
}

/// The kind ids, resolved on first use.
pub fn kinds() -> &'static NodeKinds {
    static KINDS: OnceLock<NodeKinds> = OnceLock::new();
    KINDS.get_or_init(|| {
        let language = language();
        let id = |name: &str| language.id_for_node_kind(name, true);
        NodeKinds {
            frontmatter: id("frontmatter"),
            frontmatter_content: id("frontmatter_content"),
            frontmatter_delimiter: id("frontmatter_delimiter"),
            atx_heading: id("atx_heading"),
            fenced_code_block: id("fenced_code_block"),
            fence_open: id("fence_open"),
            code_content: id("code_content"),
            fence_close: id("fence_close"),
            thematic_break: id("thematic_break"),
        }
    })
}

/// A parser for the grammar of prompt files.
pub(crate) fn parser() -> tree_sitter::Parser {
    let mut parser = tree_sitter::Parser::new();
    // The grammar is compiled into this crate; its ABI always matches.
    let _ = parser.set_language(&language());
    parser
}

#[cfg(test)]
mod tests {
    use super::kinds;

    #[test]
    fn every_kind_exists_in_the_grammar() {
        let k = kinds();
        for id in [
            k.frontmatter,
            k.frontmatter_content,
            k.frontmatter_delimiter,
            k.atx_heading,
            k.fenced_code_block,
            k.fence_open,
            k.code_content,
            k.fence_close,
            k.thematic_break,
        ] {
            assert_ne!(id, 0);
        }
    }
}
