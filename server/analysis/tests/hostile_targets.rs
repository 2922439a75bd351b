//! A prompt of many sections, each block with a target it cannot see: every
//! message names at most fifty sections, so the diagnostics grow with the
//! prompt, not with its square (a 400 KiB prompt once gave 76 MB of messages).

use std::sync::Arc;

use promptforge_analysis::{FactsCache, Model};
use promptforge_syntax::lua::{LuaCompiler, LuaSyntaxError};
use promptforge_syntax::messages::SECTIONS_SHOWN;
use promptforge_syntax::{Code, ParsedFile};

/// Every block compiles: the checks read facts, not Lua's syntax errors.
struct AllCompiles;

impl LuaCompiler for AllCompiles {
    fn check(&self, _code: &str) -> Result<(), LuaSyntaxError> {
        Ok(())
    }
}

#[test]
fn each_invisible_target_names_at_most_fifty_sections() {
    const SECTIONS: usize = 3_000;
    let mut text = "---\nname: many\ndescription: d\npromptforge: 0\n---\n\n# Many\n\n".to_owned();
    for i in 0..SECTIONS {
        text.push_str(&format!(
            "## S{i}\n\n```lua\njump('## Missing{i}')\n```\n\n"
        ));
    }
    let file = ParsedFile::new(text.clone(), Arc::new(AllCompiles));
    let analysis = file.analysis();
    let model = Model::build(&text, &analysis.document, &FactsCache::default());
    let targets: Vec<_> = model
        .problems
        .iter()
        .filter_map(|p| match &p.code {
            Code::InvisibleTarget { visible, more, .. } => Some((p, visible.len(), *more)),
            _ => None,
        })
        .collect();
    assert_eq!(targets.len(), SECTIONS);
    for (problem, shown, more) in targets {
        assert_eq!(
            (shown, more as usize),
            (SECTIONS_SHOWN, SECTIONS - SECTIONS_SHOWN)
        );
        assert!(problem.message.len() < 1_000, "{}", problem.message);
        assert!(
            problem.message.ends_with(", ## S49, and 2950 more]"),
            "{}",
            problem.message
        );
    }
}
