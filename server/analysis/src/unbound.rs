//! The static Lua checks that need the catalog: a slot whose Plugin activated but
//! lacks its tool path stays unbound without a prepare refusal (Tools chapter,
//! "Tool slots"), so offering or calling its alias fails at run time with the
//! engine's own message. Reported where the alias is named in Lua.

use crate::requirements::{CatalogView, PluginState};
use promptforge_syntax::{Code, Diagnostic, Frontmatter, ScopeFunction};

use crate::symbols::{literal_uses, LiteralUse};
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

/// The valid slots' aliases, in declaration order, but those in `unbound`.
fn bound_aliases(frontmatter: &Frontmatter, unbound: &[&str]) -> Vec<String> {
    frontmatter
        .tools
        .iter()
        .filter(|s| s.valid && !unbound.contains(&s.alias.value.as_str()))
        .map(|s| s.alias.value.clone())
        .collect()
}

/// Narrows the bound aliases the static `tools.call` problems (UnboundTool, from
/// [`crate::checks`], which knows no catalog) list to the slots the catalog binds:
/// a slot whose activated Plugin lacks its tool path is not bound.
pub fn narrow_bound(problems: &mut [Diagnostic], frontmatter: &Frontmatter, view: &CatalogView) {
    if frontmatter.keys.is_empty() {
        return;
    }
    let unbound = unbound_slots(frontmatter, view);
    if unbound.is_empty() {
        return;
    }
    for problem in problems.iter_mut() {
        if let Code::UnboundTool { bound, .. } = &mut problem.code {
            bound.retain(|alias| !unbound.contains(&alias.as_str()));
            problem.message = problem.code.message();
        }
    }
}

/// `tools.add`/`tools.always`/`tools.call` naming a slot that stays unbound.
pub fn check(frontmatter: &Frontmatter, model: &Model, view: &CatalogView) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    if let Some(slots) = UnboundSlots::of(frontmatter, view) {
        slots.check(literal_uses(model), &mut found);
    }
    found
}

/// The slots that stay unbound although their Plugin activated, and what a
/// problem naming one says: what [`check`] finds, block by block.
pub struct UnboundSlots<'a> {
    unbound: Vec<&'a str>,
    bound: Vec<String>,
    /// The bound aliases are known once no declared Plugin is still activating.
    settled: bool,
}

impl<'a> UnboundSlots<'a> {
    /// None when no slot stays unbound (or the frontmatter is unreadable).
    pub fn of(frontmatter: &'a Frontmatter, view: &CatalogView) -> Option<Self> {
        if frontmatter.keys.is_empty() {
            return None;
        }
        let unbound = unbound_slots(frontmatter, view);
        if unbound.is_empty() {
            return None;
        }
        Some(UnboundSlots {
            bound: bound_aliases(frontmatter, &unbound),
            unbound,
            settled: view.settled(),
        })
    }

    /// Appends the problems of these literal uses, in their order.
    pub fn check<'u>(
        &self,
        uses: impl IntoIterator<Item = LiteralUse<'u>>,
        found: &mut Vec<Diagnostic>,
    ) {
        for used in uses {
            if !self.unbound.contains(&used.literal.value.as_str()) {
                continue;
            }
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
                "tools.call" if self.settled => Code::UnboundTool {
                    name: alias,
                    bound: self.bound.clone(),
                },
                _ => continue,
            };
            found.push(Diagnostic::new(code, used.range()));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::requirements::{CatalogView, PluginState, PluginView, ToolInfo};
    use promptforge_syntax::Code;

    use crate::{diagnostics, FactsCache, Model};

    const PROMPT: &str = "---
name: p
description: d
promptforge: 0
plugins:
  - acme/kit
tools:
  fetch: acme/kit/fetch
  gone: acme/kit/gone
---

# T

```lua
return tools.call('nope', {})
```
";

    fn view(state: PluginState) -> CatalogView {
        CatalogView {
            registered: vec!["acme/kit".to_owned()],
            plugins: vec![PluginView {
                id: "acme/kit".to_owned(),
                state,
                conflicts: Vec::new(),
            }],
            ..CatalogView::default()
        }
    }

    fn tool(path: &str) -> ToolInfo {
        ToolInfo {
            path: path.to_owned(),
            wire_name: path.replace('/', "_"),
            description: String::new(),
            parameters: serde_json::json!({}),
            untrusted: false,
            structured: false,
        }
    }

    /// The `tools.call('nope')` problems' messages against `view`.
    fn unbound_tool_messages(view: &CatalogView) -> Vec<String> {
        let analysis = crate::parse_for_tests(PROMPT);
        let model = Model::build(PROMPT, &analysis.document, &FactsCache::default());
        diagnostics(PROMPT, &analysis, &model, view)
            .into_iter()
            .filter(|d| matches!(d.code, Code::UnboundTool { .. }))
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn the_static_call_check_lists_only_the_slots_the_catalog_binds() {
        let ready = view(PluginState::Ready(Arc::new(vec![tool("acme/kit/fetch")])));
        assert_eq!(
            unbound_tool_messages(&ready),
            [r#"tool "nope" is not bound in this run; bound aliases: [fetch]"#]
        );
        // Until the Plugin activates, every valid slot may be bound.
        assert_eq!(
            unbound_tool_messages(&view(PluginState::Pending)),
            [r#"tool "nope" is not bound in this run; bound aliases: [fetch, gone]"#]
        );
    }
}
