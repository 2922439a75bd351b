//! Every quick fix the semantic layer offers, applied: the problem it fixes is gone
//! and no problem is added (issue 23, trap 6). Swept over the conformance corpus and
//! the examples, and over generated names.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::mem::{discriminant, Discriminant};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use promptforge_analysis::requirements::{CatalogView, PluginState, PluginView, ToolInfo};
use promptforge_analysis::{diagnostics, FactsCache, Model};
use promptforge_syntax::{Code, Diagnostic, Fix};
use proptest::prelude::*;

/// The diagnostics of `text` against a Host that has every Plugin the prompt
/// names, each with the tools its slots name: the fixes are judged, not the Host.
fn found(text: &str) -> Vec<Diagnostic> {
    let analysis = promptforge_luacheck::parse(text);
    let model = Model::build(text, &analysis.document, &FactsCache::default());
    let mut tools: BTreeMap<String, Vec<ToolInfo>> = BTreeMap::new();
    if let Some(frontmatter) = &analysis.document.frontmatter {
        for decl in &frontmatter.plugins {
            tools.entry(decl.id.value.clone()).or_default();
        }
        for slot in &frontmatter.tools {
            let Some(path) = &slot.path else { continue };
            let Some((plugin, name)) = path.value.rsplit_once('/') else {
                continue;
            };
            tools.entry(plugin.to_owned()).or_default().push(ToolInfo {
                path: path.value.clone(),
                wire_name: name.to_owned(),
                description: String::new(),
                untrusted: false,
                structured: false,
                parameters: serde_json::json!({"type": "object"}),
            });
        }
    }
    let view = CatalogView {
        registered: tools.keys().cloned().collect(),
        plugins: tools
            .into_iter()
            .map(|(id, tools)| PluginView {
                id,
                state: PluginState::Ready(Arc::new(tools)),
                conflicts: Vec::new(),
            })
            .collect(),
        ..CatalogView::default()
    };
    diagnostics(text, &analysis, &model, &view)
}

fn apply(text: &str, fix: &Fix) -> String {
    let mut out = text.to_owned();
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    for edit in edits {
        out.replace_range(edit.range, &edit.new_text);
    }
    out
}

/// The problems as a multiset of rules broken (a message may name a line or a
/// name the fix moved or renamed: the rule is what counts).
fn problems(found: &[Diagnostic]) -> HashMap<Discriminant<Code>, usize> {
    let mut out = HashMap::new();
    for d in found {
        *out.entry(discriminant(&d.code)).or_default() += 1;
    }
    out
}

/// Applies every fix offered in `text`; the reasons it broke the rule, if any.
fn every_fix_holds(text: &str) -> Result<usize, String> {
    let before = found(text);
    let counted = problems(&before);
    let mut applied = 0;
    for diagnostic in &before {
        for fix in &diagnostic.fixes {
            let fixed = apply(text, fix);
            let after = problems(&found(&fixed));
            let key = discriminant(&diagnostic.code);
            if after.get(&key).copied().unwrap_or(0) >= counted[&key] {
                return Err(format!("`{}` left `{}`", fix.title, diagnostic.message));
            }
            for (problem, n) in &after {
                if *n > counted.get(problem).copied().unwrap_or(0) {
                    let fixed = apply(text, fix);
                    let added = found(&fixed)
                        .into_iter()
                        .find(|d| discriminant(&d.code) == *problem)
                        .map(|d| d.message)
                        .unwrap_or_default();
                    return Err(format!("`{}` added `{added}`", fix.title));
                }
            }
            applied += 1;
        }
    }
    Ok(applied)
}

fn prompts_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            prompts_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn every_fix_offered_in_the_corpus_removes_its_problem_and_adds_none() {
    let root = promptforge_tests::workspace_root();
    let mut files = Vec::new();
    prompts_under(&root.join("tests/conformance"), &mut files);
    prompts_under(&root.join("examples"), &mut files);
    files.sort();
    assert!(files.len() > 50, "the corpus is found: {}", files.len());
    let mut applied = 0;
    let mut failures = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("readable");
        match every_fix_holds(&text) {
            Ok(n) => applied += n,
            Err(why) => failures.push(format!("{}: {why}", file.display())),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(applied > 0, "the corpus offers fixes");
}

fn prompt(name: &str, plugin: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: d\npromptforge: 0\nplugins: [{plugin}]\ntools:\n  get: {plugin}/get\n---\n\n# T\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Names a newcomer writes: capitals, spaces, punctuation, accents.
    #[test]
    fn a_fix_of_a_generated_name_yields_a_valid_name(
        name in "[A-Za-z][A-Za-z0-9 _.!é-]{0,70}",
        segment in "[A-Za-z][A-Za-z0-9 _.é-]{0,12}",
    ) {
        let text = prompt(&name, &format!("acme/{segment}"));
        prop_assert_eq!(every_fix_holds(&text).map(|_| ()), Ok(()), "{}", text);
    }
}
