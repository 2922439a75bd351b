//! A real section VM has exactly the documented globals (`language.md` §3.1 and
//! the Lua library the sandbox keeps), as `promptforge_syntax::api_names` lists
//! them: the lists the frontmatter reserves and the editor's hover and
//! completion read cannot drift from the engine.

use std::collections::BTreeSet;

use promptforge_engine::testing::runs::{result, run};
use promptforge_syntax::api_names::{
    ARM_GLOBALS, LUA_GLOBALS, SECTION_GLOBALS, UNRESERVED_LUA_GLOBALS,
};

const LIST_GLOBALS: &str = "local names = {}\nfor k in pairs(_G) do names[#names + 1] = k end\ntable.sort(names)\nreturn table.concat(names, ',')";

fn prompt(body: &str) -> String {
    format!("---\nname: g\ndescription: globals\npromptforge: 0\n---\n\n# G\n\n{body}")
}

fn globals(text: &str) -> BTreeSet<String> {
    let outcome = run(text, "");
    let listed = result(&outcome).unwrap_or_else(|| panic!("{outcome:?}"));
    listed.split(',').map(str::to_owned).collect()
}

fn documented(arm: bool) -> BTreeSet<String> {
    SECTION_GLOBALS
        .iter()
        .filter(|name| arm || !ARM_GLOBALS.contains(name))
        .chain(LUA_GLOBALS)
        .chain(UNRESERVED_LUA_GLOBALS)
        .map(|name| (*name).to_owned())
        .collect()
}

#[test]
fn a_section_vm_has_exactly_the_documented_globals() {
    let text = prompt(&format!("## S\n\n```lua\n{LIST_GLOBALS}\n```\n"));
    assert_eq!(globals(&text), documented(false));
}

#[test]
fn a_fanout_arm_also_has_item() {
    let text = prompt(&format!(
        "## S\n\n```lua\nreturn fanout('## Arm', {{1}})[1]\n```\n\n## Arm\n\n---\n\n```lua\n{LIST_GLOBALS}\n```\n"
    ));
    assert_eq!(globals(&text), documented(true));
}
