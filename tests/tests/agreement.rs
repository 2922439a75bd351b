//! `promptforge check` and the language server agree on every diagnostic: the
//! same codes, severities, messages and ranges (`promptforge_tests::agreement`
//! says how check's one RequirementsUnmet notice maps to the server's per-place
//! diagnostics). Over the conformance corpus, the examples, and generated prompts
//! full of static-check and catalog problems.

use std::fs;
use std::path::Path;

use promptforge_tests::agreement::{self, Agreed};
use promptforge_tests::lsp_client::{file_uri, start, LspClient};
use promptforge_tests::{run_in, workspace_root, Scratch};
use proptest::prelude::*;
use serde_json::Value;

/// What `check --format json FILE` (run in `dir`) gives, None for a file it does
/// not judge (not UTF-8). A file that is not a prompt gets the error the server
/// shows for a document opened as a prompt.
fn check_file(dir: &Path, file: &str) -> Option<Vec<Agreed>> {
    let run = run_in(dir, &["check", "--format", "json", file]);
    let problems: Vec<Value> = serde_json::from_str(&run.stdout).ok()?;
    Some(agreement::checked(&problems))
}

/// Opens `path` in the server and asserts its publication equals `check`'s.
fn assert_agree(client: &mut LspClient, dir: &Path, file: &str, version: &mut i64) -> bool {
    let path = dir.join(file);
    let Ok(text) = fs::read_to_string(&path) else {
        return false;
    };
    let Some(checked) = check_file(dir, file) else {
        return false;
    };
    let uri = format!("file://{}", path.display());
    *version += 1;
    // As a prompt whatever its text, as an author's prompt stays one (`editor.md` §1).
    client.open_as(&uri, "promptforge", *version, &text);
    let published = agreement::published(&client.diagnostics(&uri, *version));
    assert_eq!(published, checked, "{} disagrees", path.display());
    true
}

fn markdown_files(dir: &Path, out: &mut Vec<String>, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, out, &format!("{prefix}{name}/"));
        } else if name.ends_with(".md") {
            out.push(format!("{prefix}{name}"));
        }
    }
}

#[test]
fn the_conformance_corpus_and_the_examples_agree() {
    let root = workspace_root();
    let mut client = start();
    let mut version = 0;
    let corpus = root.join("tests").join("conformance");
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files, "");
    let mut compared = 0;
    for file in &files {
        compared += usize::from(assert_agree(&mut client, &corpus, file, &mut version));
    }
    assert!(compared > 60, "only {compared} corpus files compared");
    let mut examples = Vec::new();
    markdown_files(&root.join("examples"), &mut examples, "examples/");
    for file in &examples {
        assert!(
            assert_agree(&mut client, &root, file, &mut version),
            "{file} is a prompt"
        );
    }
    assert_eq!(client.shutdown(), Some(0));
}

/// Frontmatter tails: slots, labels and Plugins the checks below judge against.
const FRONTMATTERS: &[&str] = &[
    "",
    "plugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\n",
    "plugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\n  find: promptforge/web/serch\nmodels:\n  writer: {}\n",
    "tools:\n  fetch: promptforge/web/fetch\n",
    "plugins:\n  - promptforge/web\n  - acme/none\n  - ref: acme/maybe\n    optional: true\ntools:\n  get: promptforge/web/fetch\n  x: acme/none/x\n",
    "models:\n  writer: {}\n  critic:\n    model: nowhere\n",
];

/// Lua lines, most of them with a static-check problem.
const LINES: &[&str] = &[
    "tools.add('nope')",
    "tools.add({'fetch', 'other'})",
    "tools.always('find', 'Search')",
    "tools.add('1bad')",
    "tools.call('task', {})",
    "tools.call('fetch', { url = 'https://example.com' })",
    "tools.call('mine', {})",
    "tools.add_local('fetch', 'd', {}, function() end)",
    "tools.add_local('mine', 'd', { n = 'float', m = 3 }, function() end)",
    "jump('## Nowhere')",
    "call('## B', 'x')",
    "fanout('## A', {})",
    "models.use('writer')",
    "models.use('nolabel')",
    "models.default('critic')",
    "tools.bind('x', 'a/b/c')",
    "models.need('x')",
    "local n = tools.calls.fetch + tools.calls['zz']",
    "x = = 1",
    "return 'ok'",
];

fn generated_prompt(frontmatter: usize, blocks: &[Vec<usize>]) -> String {
    let mut text = format!(
        "---\nname: gen\ndescription: generated\npromptforge: 0\n{}---\n\n# Generated\n",
        FRONTMATTERS[frontmatter % FRONTMATTERS.len()]
    );
    for (i, block) in blocks.iter().enumerate() {
        let heading = if i % 3 == 2 { "### B" } else { "## A" };
        let heading = if i == 0 {
            String::new()
        } else {
            format!("\n{heading}{i}\n")
        };
        let lines: Vec<&str> = block.iter().map(|l| LINES[l % LINES.len()]).collect();
        text.push_str(&format!("{heading}\n```lua\n{}\n```\n", lines.join("\n")));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn generated_prompts_agree(
        frontmatter in 0..FRONTMATTERS.len(),
        blocks in prop::collection::vec(prop::collection::vec(0..LINES.len(), 1..5), 1..5),
    ) {
        let text = generated_prompt(frontmatter, &blocks);
        let scratch = Scratch::new("agree");
        let (checked, code) = agreement::check_text(&scratch, "gen.md", &text);
        let mut client = start();
        let uri = file_uri(&scratch, "gen.md");
        client.open(&uri, 1, &text);
        let published = agreement::published(&client.diagnostics(&uri, 1));
        prop_assert_eq!(&published, &checked, "{}", text);
        let errors = checked.iter().any(|d| d.1 == "error");
        prop_assert_eq!(code, Some(if errors { 1 } else { 0 }));
        prop_assert_eq!(client.shutdown(), Some(0));
    }
}

#[test]
fn an_unbound_alias_in_tools_add_fails_check() {
    let scratch = Scratch::new("unbound");
    let text = generated_prompt(1, &[vec![0]]);
    let (checked, code) = agreement::check_text(&scratch, "p.md", &text);
    assert_eq!(code, Some(1));
    assert_eq!(checked.len(), 1, "{checked:?}");
    assert_eq!(checked[0].0, "UnboundToolSlot");
    assert_eq!(
        checked[0].2,
        "tools.add alias \"nope\" is not a bound tool slot"
    );
}
