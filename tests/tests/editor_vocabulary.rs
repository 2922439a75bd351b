//! The editors' copies of the debugger's vocabulary stay the debugger's: the
//! Neovim plugin offers the function-breakpoint names of `FUNCTION_NAMES` in
//! `editors/nvim/lua/promptforge/dap.lua` (`:PromptForgeFunctionBreakpoints`
//! completes them), which must be the engine's names and the `tool:` prefix of
//! `tool:ALIAS`, in the engine's order.

use std::fs;

use promptforge_engine::run::debugger::{function_name_problem, FUNCTION_NAMES};
use promptforge_tests::workspace_root;

/// The single-quoted strings of the Lua table assigned to `M.FUNCTION_NAMES`.
fn neovim_function_names() -> Vec<String> {
    let path = workspace_root().join("editors/nvim/lua/promptforge/dap.lua");
    let lua = fs::read_to_string(&path).expect("editors/nvim/lua/promptforge/dap.lua");
    let start = lua
        .find("M.FUNCTION_NAMES = {")
        .expect("dap.lua assigns M.FUNCTION_NAMES = { ... }");
    let table = &lua[start..];
    let table = &table[..table.find('}').expect("the table's closing brace")];
    table
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_neovim_plugin_offers_the_debuggers_function_breakpoint_names() {
    let mut expected: Vec<String> = FUNCTION_NAMES.iter().map(|name| name.to_string()).collect();
    expected.push("tool:".to_string());
    assert_eq!(neovim_function_names(), expected);
}

#[test]
fn every_name_the_neovim_plugin_offers_is_accepted_by_the_debugger() {
    for name in neovim_function_names() {
        // `tool:` is completed as a prefix: the user types the alias after it.
        let name = if name == "tool:" {
            "tool:fetch".to_string()
        } else {
            name
        };
        assert_eq!(function_name_problem(&name), None, "{name}");
    }
}
