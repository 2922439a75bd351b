//! Places in the section tree as the walk addresses them (index paths), and
//! targets (`'## Name'`) resolved by the syntax crate's [`Sections`] against a
//! caller's siblings and direct children (`language.md` §3.2).

use promptforge_syntax::{Document, Section, Sections};

/// A section's place: the indices from the top-level sections down; empty is the H1.
pub type SectionPath = Vec<usize>;

/// A resolved target: the `index`-th child of the section at `parent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The parent's path (empty: the top level, under the H1).
    pub parent: SectionPath,
    /// The index among the parent's children.
    pub index: usize,
}

impl Located {
    /// The target section's own path.
    pub fn path(&self) -> SectionPath {
        let mut path = self.parent.clone();
        path.push(self.index);
        path
    }
}

/// The children of the section at `path` (the top-level sections for the H1).
pub fn children_at<'a>(document: &'a Document, path: &[usize]) -> &'a [Section] {
    if path.is_empty() {
        return &document.sections;
    }
    document
        .section_at(path)
        .map_or(&[], |s| s.children.as_slice())
}

/// The target string naming the section at `path` (`# Title` for the H1).
pub fn target_of(document: &Document, path: &[usize]) -> String {
    match document.section_at(path) {
        Some(section) => section.heading.target(),
        None => document
            .title
            .as_ref()
            .map(|t| t.target())
            .unwrap_or_else(|| "#".to_owned()),
    }
}

/// Resolves `target` from the section at `caller` with the prompt's
/// [`Sections`] (the one implementation of §3.2); the error is the §3.2 message.
pub fn resolve(sections: &Sections, caller: &[usize], target: &str) -> Result<Located, String> {
    let caller = sections.caller_at_path(caller);
    let index = sections.resolve_or_message(caller, target)?;
    // A section's path is never empty (the H1 has no entry).
    let path = sections.path(index);
    let (index, parent) = path
        .split_last()
        .ok_or_else(|| sections.not_visible_message(caller, target))?;
    Ok(Located {
        parent: parent.to_vec(),
        index: *index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# Title\n\n## A\n\n### A1\n\n### A2\n\n## B\n\n### B1\n";

    fn document() -> Sections {
        Sections::new(&promptforge_luacheck::parse(TEXT).document)
    }

    #[test]
    fn targets_resolve_among_siblings_and_children() {
        let doc = document();
        assert_eq!(
            resolve(&doc, &[], "## B").unwrap(),
            Located {
                parent: vec![],
                index: 1
            }
        );
        assert_eq!(
            resolve(&doc, &[0], "### A2").unwrap(),
            Located {
                parent: vec![0],
                index: 1
            }
        );
        assert_eq!(
            resolve(&doc, &[0], "## B").unwrap(),
            Located {
                parent: vec![],
                index: 1
            }
        );
        assert_eq!(
            resolve(&doc, &[0, 0], "### A2").unwrap(),
            Located {
                parent: vec![0],
                index: 1
            }
        );
        assert_eq!(
            resolve(&doc, &[0], "## A").unwrap(),
            Located {
                parent: vec![],
                index: 0
            }
        );
    }

    #[test]
    fn a_target_out_of_sight_lists_the_visible_sections() {
        let doc = document();
        assert_eq!(
            resolve(&doc, &[0], "### B1").unwrap_err(),
            "no section \"### B1\" is visible from \"## A\"; visible: [## A, ### A1, ### A2, ## B]"
        );
        assert_eq!(
            resolve(&doc, &[], "B").unwrap_err(),
            "no section \"B\" is visible from \"# Title\"; visible: [## A, ## B]"
        );
        assert!(resolve(&doc, &[0, 1], "## B").is_err());
    }
}
