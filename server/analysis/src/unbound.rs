//! The static Lua checks that need the catalog: a slot whose Plugin activated but
//! lacks its tool path stays unbound without a prepare refusal (Tools chapter,
//! "Tool slots"), so offering or calling its alias fails at run time with the
//! engine's own message. Reported where the alias is named in Lua.

use promptforge_engine::requirements::{CatalogView, PluginState};
use promptforge_syntax::{Code, Diagnostic, Frontmatter, ScopeFunction};

use crate::symbols::literal_uses;
use crate::Model;

/// The aliases of the slots that stay unbound although their Plugin activated.
fn unbound_slots<'a>(frontmatter: &'a Frontmatter, view: &CatalogView) -> Vec<&'a str> {
    frontmatter
        .tools
        .iter()
        .filter(|s| s.valid)
        .filter(|slot| {
            let (Some(path), Some(plugin)) = (&slot.path, slot.plugin_id()) else {
                return false;
            };
            let declared = frontmatter
                .plugins
                .iter()
                .any(|d| d.valid && !d.optional && d.id.value == plugin);
            let missing = match view.plugin(plugin).map(|p| &p.state) {
                Some(PluginState::Ready(tools)) => {
                    !tools.is_empty() && !tools.iter().any(|t| t.path == path.value)
                }
                _ => false,
            };
            declared && missing
        })
        .map(|s| s.alias.value.as_str())
        .collect()
}

/// `tools.add`/`tools.always`/`tools.call` naming a slot that stays unbound.
pub fn check(frontmatter: &Frontmatter, model: &Model, view: &CatalogView) -> Vec<Diagnostic> {
    if frontmatter.keys.is_empty() {
        return Vec::new();
    }
    let unbound = unbound_slots(frontmatter, view);
    if unbound.is_empty() {
        return Vec::new();
    }
    // The bound aliases are known once no declared Plugin is still activating.
    let settled = view.settled();
    let bound: Vec<String> = frontmatter
        .tools
        .iter()
        .filter(|s| s.valid && !unbound.contains(&s.alias.value.as_str()))
        .map(|s| s.alias.value.clone())
        .collect();
    literal_uses(model)
        .into_iter()
        .filter(|used| unbound.contains(&used.literal.value.as_str()))
        .filter_map(|used| {
            let alias = used.literal.value.clone();
            let code = match used.callee {
                "tools.add" => Code::UnboundToolSlot {
                    function: ScopeFunction::Add,
                    alias,
                },
                "tools.always" => Code::UnboundToolSlot {
                    function: ScopeFunction::Always,
                    alias,
                },
                "tools.call" if settled => Code::UnboundTool {
                    name: alias,
                    bound: bound.clone(),
                },
                _ => return None,
            };
            Some(Diagnostic::new(code, used.literal.range.clone()))
        })
        .collect()
}
