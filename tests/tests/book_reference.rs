//! The book's two generated reference pages never drift from their one source:
//! `docs/src/reference/lua-api.md` is the analysis layer's API table
//! (`promptforge_analysis::api_reference::markdown`), and `docs/src/reference/cli.md`
//! is the real binary's `--help` texts and the exit statuses of
//! `server/cli/src/exit.rs`. Each test compares the checked-in page with the
//! generated text; with `UPDATE_BOOK=1` it rewrites the page instead. And the API
//! table is checked against the engine both ways: every global and global-table
//! member a section VM has is documented, and every documented one exists.

use std::collections::BTreeSet;

use promptforge_analysis::api_reference::{self, API};
use promptforge_engine::testing::{
    prompt, result, run, run_on, section, section_body, web_frontmatter, TestHost, TestTool,
};
use promptforge_syntax::api_names::{LUA_GLOBALS, SECTION_GLOBALS, UNRESERVED_LUA_GLOBALS};
use promptforge_tests::{run_in, workspace_root};

const REGENERATE: &str = "UPDATE_BOOK=1 cargo test -p promptforge-tests --test book_reference";

/// Compares the page at `relative` (from the workspace root) with `generated`,
/// or writes it when `UPDATE_BOOK=1`.
fn check_page(relative: &str, generated: &str) {
    let path = workspace_root().join(relative);
    if std::env::var_os("UPDATE_BOOK").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("the page has a folder"))
            .expect("the page's folder can be made");
        std::fs::write(&path, generated).expect("the page can be written");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != generated {
        let first = current
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(generated.lines().count()));
        panic!(
            "{relative} is not what its source generates (first difference at line {}: \
             checked in {:?}, generated {:?}).\nRegenerate it with: {REGENERATE}",
            first + 1,
            current.lines().nth(first).unwrap_or("<end of file>"),
            generated.lines().nth(first).unwrap_or("<end of file>"),
        );
    }
}

#[test]
fn the_lua_api_page_is_the_api_table() {
    check_page("docs/src/reference/lua-api.md", &api_reference::markdown());
}

/// What a section VM holds beyond Lua's own globals, as the engine installs it:
/// each such global, and each member of such a global that is a table
/// (`tools.call`), one per line.
fn installed_names() -> BTreeSet<String> {
    let code = r#"
local names = {}
for k, v in pairs(_G) do
  names[#names + 1] = k
  if type(v) == 'table' and k ~= '_G' then
    for m in pairs(v) do names[#names + 1] = k .. '.' .. m end
  end
end
return table.concat(names, '\n')
"#;
    let listed = result(&run(&section(code), "")).expect("the section returns the names");
    listed
        .lines()
        .filter(|name| {
            let top = name.split('.').next().unwrap_or_default();
            !LUA_GLOBALS.contains(&top) && !UNRESERVED_LUA_GLOBALS.contains(&top)
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_global_and_member_the_engine_installs_has_an_entry() {
    let installed = installed_names();
    // The run must have listed the API, not an empty or foreign VM.
    for expected in [
        "tools.call",
        "models.loop",
        "store.read",
        "messages.new",
        "input.ask",
    ] {
        assert!(
            installed.contains(expected),
            "{expected} not in {installed:?}"
        );
    }
    let documented: BTreeSet<&str> = API
        .iter()
        .filter(|e| api_reference::is_global(e))
        .map(|e| e.name)
        .collect();
    let missing: Vec<&str> = installed
        .iter()
        .map(String::as_str)
        .chain(SECTION_GLOBALS.iter().copied())
        .filter(|name| {
            !documented.contains(name)
                && !documented
                    .iter()
                    .any(|d| d.starts_with(&format!("{name}.")))
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        missing.is_empty(),
        "these globals and members (of the VM, or of SECTION_GLOBALS) have no entry in server/analysis/src/api_reference.rs: {missing:?}"
    );
    // And the other way: every documented member of a global table exists. `tools.calls`
    // appears (through the table's metatable) with the section's first tool call, and
    // `item` only in a fanout arm.
    let stale: Vec<&str> = documented
        .iter()
        .copied()
        .filter(|name| !installed.contains(*name))
        .filter(|name| !["tools.calls", "item", "print"].contains(name))
        .collect();
    assert!(
        stale.is_empty(),
        "these entries of server/analysis/src/api_reference.rs name nothing the VM has: {stale:?}"
    );
}

/// The Lua expression that reads an entry for a member of a value the API returns,
/// in the prompt of [`every_documented_member_of_a_returned_value_exists`]: `fetch`
/// is a Tool object, `w` a model handle, `msgs` a list with one record, `err` an
/// `unbound_tool` error value.
fn reading(name: &str) -> Option<String> {
    let (value, member) = name
        .strip_prefix("tool.")
        .map(|m| ("fetch", m))
        .or_else(|| name.strip_prefix("handle.").map(|m| ("w", m)))
        .or_else(|| name.strip_prefix("handle:").map(|m| ("w", m)))
        .or_else(|| name.strip_prefix("msgs:").map(|m| ("msgs", m)))
        .or_else(|| name.strip_prefix("err.").map(|m| ("err", m)))
        .or(match name {
            "#msgs" => return Some("(#msgs == 1 or nil)".to_owned()),
            "msgs[i]" => return Some("msgs[1]".to_owned()),
            _ => None,
        })?;
    Some(format!("{value}.{member}"))
}

#[test]
fn every_documented_member_of_a_returned_value_exists() {
    let mut checks = String::new();
    for entry in API.iter().filter(|e| !api_reference::is_global(e)) {
        let read = reading(entry.name).unwrap_or_else(|| {
            panic!(
                "book_reference.rs cannot check {}: teach `reading` its value",
                entry.name
            )
        });
        checks.push_str(&format!(
            "if {read} == nil then missing[#missing + 1] = '{}' end\n",
            entry.name
        ));
    }
    let code = format!(
        "local missing = {{}}\n\
         local msgs = messages.new():user('hello')\n\
         local _, err = pcall(tools.call, 'nope')\n\
         {checks}return 'missing: ' .. table.concat(missing, ', ')"
    );
    let text = prompt(
        &web_frontmatter(&[("fetch", "acme/web/fetch")]),
        &section_body(&code),
    );
    let host = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]).host;
    let outcome = run_on(&text, host, "", Some(1));
    assert_eq!(
        result(&outcome).as_deref(),
        Some("missing: "),
        "entries of server/analysis/src/api_reference.rs name members the engine's values lack"
    );
}

/// The visible subcommands a `--help` text lists under `Commands:` (clap leaves
/// hidden ones out), without clap's own `help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// `promptforge PATH... --help`, then each of its subcommands, depth first.
fn help_sections(path: &mut Vec<String>, out: &mut Vec<(String, String)>) {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = run_in(&workspace_root(), &args);
    assert_eq!(help.code, Some(0), "{args:?}: {}", help.stderr);
    let title = std::iter::once("promptforge")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let children = subcommands(&help.stdout);
    out.push((title, help.stdout));
    for child in children {
        path.push(child);
        help_sections(path, out);
        path.pop();
    }
}

/// The exit statuses of `server/cli/src/exit.rs`: each `Exit` variant's code (from
/// `Exit::code`) and its doc comment.
fn exit_statuses(source: &str) -> Vec<(u8, String, String)> {
    let enum_body = source
        .split_once("pub enum Exit {")
        .and_then(|(_, rest)| rest.split_once('}'))
        .map(|(body, _)| body)
        .expect("exit.rs defines `pub enum Exit`");
    let mut statuses = Vec::new();
    let mut doc = Vec::new();
    for line in enum_body.lines().map(str::trim) {
        if let Some(text) = line.strip_prefix("///") {
            doc.push(text.trim().to_owned());
        } else if let Some(variant) = line.strip_suffix(',') {
            let arm = format!("Exit::{variant} => ");
            let code = source
                .lines()
                .find_map(|l| l.trim().strip_prefix(&arm))
                .and_then(|c| c.trim_end_matches(',').parse::<u8>().ok())
                .unwrap_or_else(|| panic!("Exit::code has no number for {variant}"));
            // The doc names the code in parentheses at its end, `(0).` or
            // `(130, as for SIGINT).`: the table's first column says it already.
            let text = doc
                .join(" ")
                .replace(&format!(" ({code})"), "")
                .replace(&format!("({code}, "), "(")
                .replace('|', "\\|");
            statuses.push((code, variant.to_owned(), text));
            doc.clear();
        }
    }
    assert!(!statuses.is_empty(), "no variant found in `pub enum Exit`");
    statuses
}

fn cli_markdown() -> String {
    let mut page = String::from(
        "<!-- Generated from the promptforge binary's --help texts and server/cli/src/exit.rs:\n     \
         do not edit. Regenerate with\n     \
         UPDATE_BOOK=1 cargo test -p promptforge-tests --test book_reference -->\n\n\
         # Command-line reference\n\n\
         `promptforge` checks, runs and tests prompt files, and serves the language \
         server and the debug adapter for editors. This page is each command's \
         `--help` text, as the binary prints it. `-h` prints a shorter form of the \
         same text. The options listed for `promptforge` itself are accepted by every \
         subcommand.\n\n## Exit status\n\n\
         Every command ends with one of these statuses; where a command's help \
         below has an `Exit status:` sentence, it says which of them that command uses.\n\n\
         | status | meaning |\n| --- | --- |\n",
    );
    let source = std::fs::read_to_string(workspace_root().join("server/cli/src/exit.rs"))
        .expect("server/cli/src/exit.rs can be read");
    for (code, _, doc) in exit_statuses(&source) {
        page.push_str(&format!("| {code} | {doc} |\n"));
    }
    let mut sections = Vec::new();
    help_sections(&mut Vec::new(), &mut sections);
    for (title, help) in sections {
        page.push_str(&format!(
            "\n## {title}\n\n<!-- checked by: book_reference.rs -->\n```text\n{}\n```\n",
            help.trim_end()
        ));
    }
    page
}

#[test]
fn the_command_line_page_is_the_help_texts() {
    check_page("docs/src/reference/cli.md", &cli_markdown());
}

#[test]
fn exit_statuses_are_read_from_the_enum() {
    let source = "pub enum Exit {\n    /// Fine (0).\n    Ok,\n    /// Stopped (7, as for a signal).\n    Bad,\n}\n\
                  fn code(self) -> u8 {\n    match self {\n        Exit::Ok => 0,\n        Exit::Bad => 7,\n    }\n}\n";
    assert_eq!(
        exit_statuses(source),
        [
            (0, "Ok".to_owned(), "Fine.".to_owned()),
            (7, "Bad".to_owned(), "Stopped (as for a signal).".to_owned())
        ]
    );
}

/// The heading whose table `docs/src/configuration.md` takes from the reader's keys.
const EVERY_KEY: &str = "## Every key\n\n";

#[test]
fn the_configuration_pages_table_of_keys_is_the_readers() {
    let relative = "docs/src/configuration.md";
    let page = std::fs::read_to_string(workspace_root().join(relative)).expect("the page");
    let start = page
        .find(EVERY_KEY)
        .expect("the page has an Every key section")
        + EVERY_KEY.len();
    let end = page[start..]
        .find("\n\n")
        .map_or(page.len(), |at| start + at + 1);
    let table = promptforge_engine::host::config_keys::markdown_table();
    let generated = format!("{}{table}{}", &page[..start], &page[end..]);
    check_page(relative, &generated);
}
