//! The editor's questions about one prompt, answered on byte offsets and plain
//! types (as rust-analyzer's `ide` crate does): hover, completion, definition,
//! references, rename, inlay hints and signature help. The language server only
//! converts positions and results to and from the protocol; `check`, a future
//! CLI command and the tests ask the same questions without a server.

pub mod catalog_completion;
pub mod completion;
pub mod completion_item;
pub mod cursor;
pub mod definition;
pub mod hover;
pub mod inlay_hints;
pub mod lua_context;
pub mod references;
pub mod rename;
pub mod signature_help;
pub mod token_hints;

use std::ops::Range;

use promptforge_syntax::{Analysis, LuaBlock};

use crate::Model;

/// One version of a prompt as every question reads it: its text, the syntax
/// crate's analysis of it and its semantic model.
#[derive(Debug, Clone, Copy)]
pub struct PromptText<'a> {
    /// The text.
    pub text: &'a str,
    /// The syntax crate's analysis of the text.
    pub analysis: &'a Analysis,
    /// The semantic model of the text.
    pub model: &'a Model,
}

impl PromptText<'_> {
    /// The index of the Lua block whose code holds `offset` (its ends included), with the block.
    pub fn lua_block_at(&self, offset: usize) -> Option<(usize, &LuaBlock)> {
        self.analysis
            .document
            .lua_blocks
            .iter()
            .enumerate()
            .find(|(_, b)| contains(&b.code_range, offset))
    }
}

/// True when `offset` is inside `range` or at one of its ends.
pub(crate) fn contains(range: &Range<usize>, offset: usize) -> bool {
    range.start <= offset && offset <= range.end
}

/// A prompt's text, analysed, for the features' unit tests.
#[cfg(test)]
pub(crate) struct Fixture {
    pub text: String,
    pub analysis: Analysis,
    pub model: Model,
}

#[cfg(test)]
impl Fixture {
    /// `text` parsed (every Lua block compiles) with its model built.
    pub fn new(text: &str) -> Self {
        let analysis = crate::parse_for_tests(text);
        let model = Model::build(text, &analysis.document, &crate::FactsCache::default());
        Fixture {
            text: text.to_owned(),
            analysis,
            model,
        }
    }

    /// The prompt as the features read it.
    pub fn prompt(&self) -> PromptText<'_> {
        PromptText {
            text: &self.text,
            analysis: &self.analysis,
            model: &self.model,
        }
    }

    /// The byte offset of the first `needle` in the text, plus `shift`.
    pub fn at(&self, needle: &str, shift: usize) -> usize {
        self.text.find(needle).expect("the needle is in the text") + shift
    }
}

/// The prompt the features' unit tests ask about.
#[cfg(test)]
pub(crate) const DEMO: &str = "---
name: demo
description: Demo
promptforge: 0
plugins:
  - promptforge/web
tools:
  fetch: promptforge/web/fetch
  search: promptforge/web/search
models:
  writer: {model: gpt, temperature: 0.5}
---

# Demo

```lua
models.default('writer')
tools.always('search')
```

## Fetch

Fetches the page.

```lua
local page = tools.call('fetch', { url = args })
jump('## Write')
```

## Write

Writes the answer.
";

/// A catalog where `promptforge/web` is ready with one tool, `fetch`.
#[cfg(test)]
pub(crate) fn web_catalog() -> crate::requirements::CatalogView {
    use crate::requirements::{CatalogView, PluginState, PluginView, ToolInfo};
    let fetch = ToolInfo {
        path: "promptforge/web/fetch".to_owned(),
        wire_name: "fetch".to_owned(),
        description: "Fetches a page.\nReturns its text.".to_owned(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": { "url": { "type": "string" } },
            "required": ["url"]
        }),
        untrusted: true,
        structured: false,
    };
    CatalogView {
        registered: vec!["promptforge/web".to_owned(), "acme/notes".to_owned()],
        plugins: vec![PluginView {
            id: "promptforge/web".to_owned(),
            state: PluginState::Ready(std::sync::Arc::new(vec![fetch])),
            conflicts: Vec::new(),
        }],
        ..CatalogView::default()
    }
}
