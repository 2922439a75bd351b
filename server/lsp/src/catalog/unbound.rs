//! The static Lua checks that need the catalog: a slot whose Plugin activated but
//! lacks its tool path stays unbound without a prepare report (Tools chapter,
//! "Tool slots"), so offering or calling its alias fails at run time with the
//! engine's own message. Reported where the alias is named in Lua.

use promptforge_engine::messages;
use promptforge_syntax::Frontmatter;

use super::{DocCatalog, PluginState};
use crate::analysis::checks::codes;
use crate::analysis::symbols::literal_uses;
use crate::analysis::{Model, StaticProblem};

/// The aliases of the slots that stay unbound although their Plugin activated.
fn unbound_slots<'a>(frontmatter: &'a Frontmatter, catalog: &DocCatalog) -> Vec<&'a str> {
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
            let missing = match catalog.plugin(plugin).map(|p| &p.state) {
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
pub fn problems(
    frontmatter: &Frontmatter,
    model: &Model,
    catalog: &DocCatalog,
) -> Vec<StaticProblem> {
    if frontmatter.keys.is_empty() {
        return Vec::new();
    }
    let unbound = unbound_slots(frontmatter, catalog);
    if unbound.is_empty() {
        return Vec::new();
    }
    // The bound aliases are known once no declared Plugin is still activating.
    let settled = catalog
        .plugins
        .iter()
        .all(|p| p.state != PluginState::Pending);
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
            let alias = used.literal.value.as_str();
            let (code, message) = match used.callee {
                "tools.add" => (codes::UNBOUND_TOOL_SLOT, messages::add_not_bound(alias)),
                "tools.always" => (codes::UNBOUND_TOOL_SLOT, messages::always_not_bound(alias)),
                "tools.call" if settled => {
                    (codes::UNBOUND_TOOL, messages::unbound_tool(alias, &bound))
                }
                _ => return None,
            };
            Some(StaticProblem {
                code,
                message,
                range: used.literal.range.clone(),
                related: Vec::new(),
            })
        })
        .collect()
}
