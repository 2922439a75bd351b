//! The alias warning of a prompt test file: an alias a case's script calls or its
//! `expect.calls` counts that the prompt neither binds nor registers, and that is
//! no Engine tool, is warned about at the alias; the engine decides at run time.

use promptforge_analysis::test_file::diagnostics;
use promptforge_syntax::{test_file, Code, Diagnostic, LineIndex, Severity};

/// A prompt binding `search` and registering the local tool `grab` in a section.
const PROMPT: &str = "---\nname: p\ndescription: d\npromptforge: 0\nplugins: [promptforge/web]\ntools:\n  search: promptforge/web/search\n---\n\n# T\n\n## A\n\n```lua\ntools.add_local('grab', 'Grabs', {}, function() return 'x' end)\nreturn models.loop(messages.new():user('go'))\n```\n";

/// A test file whose one case calls `calls` in one round and counts `counted`.
fn test_file(calls: &[&str], counted: &[&str]) -> String {
    let mut text = String::from("cases:\n  - name: a\n    model:\n      - calls:\n");
    for alias in calls {
        text.push_str(&format!("          - {alias}: {{}}\n"));
    }
    text.push_str("      - text: done\n");
    if !counted.is_empty() {
        text.push_str("    expect:\n      calls:\n");
    }
    for alias in counted {
        text.push_str(&format!("        {alias}: 1\n"));
    }
    text
}

/// The warnings as `line:col "text at the range" message`.
fn warnings(text: &str, prompt: Option<&str>) -> Vec<String> {
    let (file, problems) = test_file::parse(text);
    assert_eq!(problems, vec![], "the test file reads");
    let analysis = prompt.map(promptforge_luacheck::parse);
    let found: Vec<Diagnostic> = diagnostics(&file, prompt.zip(analysis.as_ref()));
    let index = LineIndex::new(text);
    found
        .iter()
        .map(|d| {
            assert_eq!(d.severity, Severity::Warning);
            assert_eq!(d.code.name(), "UnknownAlias");
            let (line, col) = index.position(text, d.offset);
            format!("{line}:{col} {:?} {}", &text[d.range.clone()], d.message)
        })
        .collect()
}

#[test]
fn bound_local_and_engine_tools_are_known() {
    let text = test_file(
        &["search", "grab", "task"],
        &["search", "grab", "await_tasks"],
    );
    assert_eq!(warnings(&text, Some(PROMPT)), Vec::<String>::new());
}

#[test]
fn an_alias_neither_bound_nor_registered_is_warned_about_where_it_is_named() {
    let text = test_file(&["search", "fetch"], &["fetch"]);
    assert_eq!(
        warnings(&text, Some(PROMPT)),
        [
            "6:13 \"fetch\" the prompt neither binds nor registers a tool named \"fetch\"; the engine decides at run time",
            "10:9 \"fetch\" the prompt neither binds nor registers a tool named \"fetch\"; the engine decides at run time",
        ]
    );
    let (file, _) = test_file::parse(&text);
    let analysis = promptforge_luacheck::parse(PROMPT);
    let found = diagnostics(&file, Some((PROMPT, &analysis)));
    assert_eq!(
        found[0].code,
        Code::UnknownAlias {
            alias: "fetch".to_owned()
        }
    );
}

#[test]
fn without_a_prompt_or_a_readable_frontmatter_nothing_is_warned() {
    let text = test_file(&["fetch"], &["fetch"]);
    assert_eq!(warnings(&text, None), Vec::<String>::new());
    let broken = "---\nname: [\n---\n\n# T\n";
    assert_eq!(warnings(&text, Some(broken)), Vec::<String>::new());
}

#[test]
fn a_local_tool_of_any_block_counts_and_only_a_literal_alias_does() {
    let prompt = "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# T\n\n```lua shared\nlocal n = 'dyn'\ntools.add_local(n, 'd', {}, function() end)\n```\n\n## B\n\n```lua\ntools.add_local(\"late\", 'd', {}, function() end)\n```\n";
    let text = test_file(&["late", "dyn"], &[]);
    assert_eq!(
        warnings(&text, Some(prompt)),
        ["6:13 \"dyn\" the prompt neither binds nor registers a tool named \"dyn\"; the engine decides at run time"]
    );
}

/// Files held in memory: the analysis reads nothing but what its front end gives it.
struct MemoryFiles(std::collections::HashMap<std::path::PathBuf, Vec<u8>>);

impl promptforge_analysis::source_files::SourceFiles for MemoryFiles {
    fn read(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        self.0
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::ErrorKind::NotFound.into())
    }
}

/// The prompt of a test file comes through the front end's files: its text when
/// given, the test file's own error (at the `prompt:` value) when missing or not text.
#[test]
fn the_prompt_is_read_through_the_front_ends_files() {
    use promptforge_analysis::test_file::prompt_of;
    let test_path = std::path::Path::new("/p/a.test.yaml");
    let text = "prompt: b.md\ncases: []\n";
    let (file, _) = test_file::parse(text);
    let mut files = MemoryFiles(Default::default());
    let missing = prompt_of(&files, test_path, &file).expect_err("no b.md yet");
    assert_eq!(&text[missing.range.clone()], "b.md");
    assert!(
        missing.message.ends_with("no such file"),
        "{}",
        missing.message
    );
    files.0.insert("/p/b.md".into(), vec![0xff, 0xfe]);
    let binary = prompt_of(&files, test_path, &file).expect_err("not text");
    assert!(
        binary.message.ends_with("it is not UTF-8 text"),
        "{}",
        binary.message
    );
    files.0.insert("/p/b.md".into(), PROMPT.as_bytes().to_vec());
    let (path, prompt) = prompt_of(&files, test_path, &file).expect("read");
    assert_eq!(
        (path.as_path(), prompt.as_str()),
        (std::path::Path::new("/p/b.md"), PROMPT)
    );
}
