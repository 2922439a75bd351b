//! The names an author navigates: aliases, model labels and sections, where each
//! is declared and every place it is used (for definition, references, rename,
//! hover and semantic tokens).

use std::ops::Range;

use promptforge_syntax::Document;

use crate::lua_facts::{in_file, Arg, LuaFacts, StringLit};
use crate::Model;
use promptforge_syntax::sections::Caller;

/// A name with a declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Symbol {
    /// A tool slot alias (a `tools:` key).
    Alias(String),
    /// A model label (a `models:` key).
    Label(String),
    /// The section with this index in `Sections::all`.
    Section(usize),
}

/// How a name is written at one place, which decides how rename rewrites it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// The name itself (a key, an identifier, the inside of a string, a heading's text).
    Name,
    /// A target string's inside: `##` markers and a space, then the heading text;
    /// the range covers the heading text only.
    TargetText,
}

/// One place a symbol appears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// Byte range of the name at that place.
    pub range: Range<usize>,
    /// True for the declaration (the frontmatter key, the heading).
    pub declaration: bool,
    /// How it is written there.
    pub spelling: Spelling,
}

/// The Lua API functions whose first string argument is an alias.
pub const ALIAS_FUNCTIONS: &[&str] = &["tools.add", "tools.always", "tools.call"];
/// The Lua API functions whose first string argument is a model label.
pub const LABEL_FUNCTIONS: &[&str] = &["models.use", "models.get", "models.default"];
/// The control-flow functions whose first string argument is a target.
pub const TARGET_FUNCTIONS: &[&str] = &["jump", "call", "fanout"];

fn contains(range: &Range<usize>, offset: usize) -> bool {
    range.start <= offset && offset <= range.end
}

/// A string literal argument of a Lua API call, with what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralUse<'a> {
    /// The function called (`tools.add`, `jump`, ...).
    pub callee: &'a str,
    /// The literal (its ranges relative to its block's code).
    pub literal: &'a StringLit,
    /// The caller of the block it is in.
    pub caller: Caller,
    /// Where the block's code starts in the file.
    pub code_start: usize,
}

impl LiteralUse<'_> {
    /// The file range of the whole literal, quotes included.
    pub fn range(&self) -> Range<usize> {
        in_file(self.code_start, &self.literal.range)
    }

    /// The file range of the literal's value, between its quotes.
    pub fn content(&self) -> Range<usize> {
        in_file(self.code_start, &self.literal.content)
    }
}

/// Every string literal given as the name argument of a Lua API call, in block order.
pub fn literal_uses(model: &Model) -> Vec<LiteralUse<'_>> {
    let mut uses = Vec::new();
    for (index, (facts, code_start)) in model.blocks_in_file().enumerate() {
        let caller = model.sections.caller_of_block(index);
        block_literal_uses(facts, caller, code_start, &mut uses);
    }
    uses
}

/// Appends the literal uses of one block, `facts`, run by `caller`, whose
/// code starts at byte `code_start`, in source order.
pub fn block_literal_uses<'a>(
    facts: &'a LuaFacts,
    caller: Caller,
    code_start: usize,
    uses: &mut Vec<LiteralUse<'a>>,
) {
    for call in &facts.calls {
        let callee = call.callee.as_str();
        match call.args.first() {
            Some(Arg::Str(literal)) => uses.push(LiteralUse {
                callee,
                literal,
                caller,
                code_start,
            }),
            Some(Arg::Table { strings, .. }) if callee == "tools.add" => {
                uses.extend(strings.iter().map(|literal| LiteralUse {
                    callee,
                    literal,
                    caller,
                    code_start,
                }));
            }
            _ => {}
        }
    }
}

/// The symbol at `offset`, with the range of the name there.
pub fn symbol_at(
    document: &Document,
    model: &Model,
    offset: usize,
) -> Option<(Symbol, Range<usize>)> {
    if let Some(frontmatter) = &document.frontmatter {
        if let Some(slot) = frontmatter
            .tools
            .iter()
            .find(|s| contains(&s.alias.range, offset))
        {
            return Some((
                Symbol::Alias(slot.alias.value.clone()),
                slot.alias.range.clone(),
            ));
        }
        if let Some(decl) = frontmatter
            .models
            .iter()
            .find(|m| contains(&m.label.range, offset))
        {
            return Some((
                Symbol::Label(decl.label.value.clone()),
                decl.label.range.clone(),
            ));
        }
    }
    if let Some(index) = model
        .sections
        .all()
        .iter()
        .position(|s| contains(&s.heading.text_range, offset))
    {
        let range = model.sections.get(index)?.heading.text_range.clone();
        return Some((Symbol::Section(index), range));
    }
    for used in literal_uses(model) {
        let range = used.content();
        if !contains(&range, offset) {
            continue;
        }
        let value = used.literal.value.clone();
        if ALIAS_FUNCTIONS.contains(&used.callee) {
            return Some((Symbol::Alias(value), range));
        }
        if LABEL_FUNCTIONS.contains(&used.callee) {
            return Some((Symbol::Label(value), range));
        }
        if TARGET_FUNCTIONS.contains(&used.callee) {
            let index = model.sections.resolve(used.caller, &value)?;
            return Some((Symbol::Section(index), range));
        }
    }
    let frontmatter = document.frontmatter.as_ref()?;
    for (facts, code_start) in model.blocks_in_file() {
        let Some(at) = offset.checked_sub(code_start) else {
            continue;
        };
        if let Some(ident) = facts.identifiers.iter().find(|i| contains(&i.range, at)) {
            let range = in_file(code_start, &ident.range);
            if frontmatter.slot(&ident.name).is_some() {
                return Some((Symbol::Alias(ident.name.clone()), range));
            }
            if frontmatter.model(&ident.name).is_some() {
                return Some((Symbol::Label(ident.name.clone()), range));
            }
        }
        if let Some(read) = facts.calls_reads.iter().find(|r| contains(&r.range, at)) {
            if frontmatter.slot(&read.key).is_some() {
                let range = in_file(code_start, &read.range);
                return Some((Symbol::Alias(read.key.clone()), range));
            }
        }
    }
    None
}

/// Every place `symbol` appears: its declaration first, then its uses in document order.
pub fn occurrences(document: &Document, model: &Model, symbol: &Symbol) -> Vec<Occurrence> {
    let mut found = Vec::new();
    let name_at = |range: Range<usize>, declaration: bool| Occurrence {
        range,
        declaration,
        spelling: Spelling::Name,
    };
    match symbol {
        Symbol::Alias(alias) | Symbol::Label(alias) => {
            let is_alias = matches!(symbol, Symbol::Alias(_));
            let frontmatter = document.frontmatter.as_ref();
            let declaration = if is_alias {
                frontmatter
                    .and_then(|f| f.slot(alias))
                    .map(|s| s.alias.range.clone())
            } else {
                frontmatter
                    .and_then(|f| f.model(alias))
                    .map(|m| m.label.range.clone())
            };
            found.extend(declaration.map(|r| name_at(r, true)));
            let functions = if is_alias {
                ALIAS_FUNCTIONS
            } else {
                LABEL_FUNCTIONS
            };
            let mut uses: Vec<Occurrence> = literal_uses(model)
                .into_iter()
                .filter(|u| functions.contains(&u.callee) && u.literal.value == *alias)
                .map(|u| name_at(u.content(), false))
                .collect();
            for (facts, code_start) in model.blocks_in_file() {
                uses.extend(
                    facts
                        .identifiers
                        .iter()
                        .filter(|i| i.name == *alias)
                        .map(|i| name_at(in_file(code_start, &i.range), false)),
                );
                if is_alias {
                    uses.extend(
                        facts
                            .calls_reads
                            .iter()
                            .filter(|r| r.key == *alias)
                            .map(|r| name_at(in_file(code_start, &r.range), false)),
                    );
                }
            }
            uses.sort_by_key(|o| o.range.start);
            found.extend(uses);
        }
        Symbol::Section(index) => {
            let Some(section) = model.sections.get(*index) else {
                return found;
            };
            found.push(name_at(section.heading.text_range.clone(), true));
            let level = usize::from(section.heading.level);
            for used in literal_uses(model) {
                let resolves = TARGET_FUNCTIONS.contains(&used.callee)
                    && model.sections.resolve(used.caller, &used.literal.value) == Some(*index);
                // The heading text inside the target, after its `#` markers.
                let within = used
                    .literal
                    .value
                    .get(level..)
                    .and_then(|rest| rest.find(&*section.heading.text))
                    .map(|at| used.content().start + level + at);
                if let (true, Some(start)) = (resolves, within) {
                    found.push(Occurrence {
                        range: start..start + section.heading.text.len(),
                        declaration: false,
                        spelling: Spelling::TargetText,
                    });
                }
            }
        }
    }
    found
}
