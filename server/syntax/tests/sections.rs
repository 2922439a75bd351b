//! The sections index's answers about visibility (`language.md` §3.2): which
//! sections a caller sees, and the message for a target it does not.

use promptforge_luacheck::parse;
use promptforge_syntax::messages::SECTIONS_SHOWN;
use promptforge_syntax::{Caller, Sections};

const FRONTMATTER: &str = "---\nname: t\ndescription: d\npromptforge: 0\n---\n";

fn sections_of(body: &str) -> Sections {
    Sections::new(&parse(&format!("{FRONTMATTER}{body}")).document)
}

#[test]
fn the_sections_shown_are_the_first_visible_ones_in_document_order() {
    let sections = sections_of(
        "\n# T\n\n## A\n\n### A1\n\n### A2\n\n## B\n\n## C\n\n### C1\n\n#### C1a\n\n### C2\n\n## D\n",
    );
    let callers = [Caller::H1, Caller::Shared]
        .into_iter()
        .chain((0..sections.all().len()).map(Caller::Section));
    for caller in callers {
        let all = sections.visible_targets(caller);
        for limit in 0..=all.len() + 1 {
            let (shown, more) = sections.visible_targets_shown(caller, limit);
            let kept = limit.min(all.len());
            assert_eq!(shown, all[..kept], "{caller:?}, limit {limit}");
            assert_eq!(more, all.len() - kept, "{caller:?}, limit {limit}");
        }
    }
    // A section with both siblings and children: the two lists merged.
    let c = sections.at_path(&[2]).expect("C");
    assert_eq!(
        sections.visible_targets_shown(Caller::Section(c), 5),
        (
            ["## A", "## B", "## C", "### C1", "### C2"]
                .map(String::from)
                .to_vec(),
            1
        )
    );
}

#[test]
fn a_target_message_names_the_first_fifty_sections_and_counts_the_rest() {
    let body: String = (0..60).map(|i| format!("## S{i}\n\n")).collect();
    let sections = sections_of(&format!("\n# T\n\n{body}"));
    let named: Vec<String> = (0..SECTIONS_SHOWN).map(|i| format!("## S{i}")).collect();
    assert_eq!(SECTIONS_SHOWN, 50);
    assert_eq!(
        sections.resolve_or_message(Caller::Section(3), "## Nope"),
        Err(format!(
            "no section \"## Nope\" is visible from \"## S3\"; visible: [{}, and 10 more]",
            named.join(", ")
        ))
    );
    // Fifty or fewer are all named, as the language's lists are.
    let sections = sections_of("\n# T\n\n## A\n\n## B\n");
    assert_eq!(
        sections.resolve_or_message(Caller::H1, "## Nope"),
        Err("no section \"## Nope\" is visible from \"# T\"; visible: [## A, ## B]".to_owned())
    );
}
