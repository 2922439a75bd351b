//! Places in the section tree and targets (`'## Name'`) resolved against a caller's
//! siblings and direct children (`language.md` §3.2).

use promptforge_syntax::{Document, Section};

use crate::messages;

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

/// The section at `path` (None for the H1 or a path out of range).
pub fn section_at<'a>(document: &'a Document, path: &[usize]) -> Option<&'a Section> {
    let (first, rest) = path.split_first()?;
    let mut section = document.sections.get(*first)?;
    for index in rest {
        section = section.children.get(*index)?;
    }
    Some(section)
}

/// The children of the section at `path` (the top-level sections for the H1).
pub fn children_at<'a>(document: &'a Document, path: &[usize]) -> &'a [Section] {
    if path.is_empty() {
        return &document.sections;
    }
    section_at(document, path).map_or(&[], |s| s.children.as_slice())
}

/// The target string naming the section at `path` (`# Title` for the H1).
pub fn target_of(document: &Document, path: &[usize]) -> String {
    match section_at(document, path) {
        Some(section) => section.heading.target(),
        None => document
            .title
            .as_ref()
            .map(|t| t.target())
            .unwrap_or_else(|| "#".to_owned()),
    }
}

/// Every section visible from `path`, in document order: siblings up to the caller,
/// its direct children, the siblings after it.
fn visible(document: &Document, path: &[usize]) -> Vec<Located> {
    let mut out = Vec::new();
    let own_children = |out: &mut Vec<Located>| {
        for index in 0..children_at(document, path).len() {
            out.push(Located {
                parent: path.to_vec(),
                index,
            });
        }
    };
    match path.split_last() {
        None => own_children(&mut out),
        Some((me, parent)) => {
            let siblings = children_at(document, parent).len();
            for index in 0..=*me {
                out.push(Located {
                    parent: parent.to_vec(),
                    index,
                });
            }
            own_children(&mut out);
            for index in me + 1..siblings {
                out.push(Located {
                    parent: parent.to_vec(),
                    index,
                });
            }
        }
    }
    out
}

/// Resolves `target` from the section at `caller`; the error is the §3.2 message.
pub fn resolve(document: &Document, caller: &[usize], target: &str) -> Result<Located, String> {
    let candidates = visible(document, caller);
    let wanted = parse_target(target);
    if let Some((level, text)) = wanted {
        let found = candidates.iter().find(|c| {
            section_at(document, &c.path())
                .is_some_and(|s| s.heading.level == level && s.heading.text == text)
        });
        if let Some(found) = found {
            return Ok(found.clone());
        }
    }
    let names: Vec<String> = candidates
        .iter()
        .map(|c| target_of(document, &c.path()))
        .collect();
    Err(messages::section_not_visible(
        target,
        &target_of(document, caller),
        &names,
    ))
}

fn parse_target(target: &str) -> Option<(u8, &str)> {
    let level = target.bytes().take_while(|b| *b == b'#').count();
    let text = target.get(level..)?.strip_prefix(' ')?;
    let level = u8::try_from(level).ok().filter(|l| (2..=6).contains(l))?;
    Some((level, text.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# Title\n\n## A\n\n### A1\n\n### A2\n\n## B\n\n### B1\n";

    fn document() -> Document {
        promptforge_syntax::parse(TEXT).document
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
