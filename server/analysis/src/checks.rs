//! Static Lua checks: what the engine would refuse at run time and can be known
//! from the text, each a diagnostic with its rule's code.

use std::sync::Arc;

use promptforge_syntax::api_names::{is_engine_tool, PARAM_TYPES};
use promptforge_syntax::frontmatter::names::is_valid_alias;
use promptforge_syntax::{messages, Code, Diagnostic, Frontmatter, ScopeFunction};

use crate::local_tools::{registered, LocalTools};
use crate::lua_facts::{in_file, Arg, CallsRead, LuaFacts, NamedField, StringLit};
use crate::Parsed;
use promptforge_syntax::sections::{Caller, Sections};

/// What the checks know about the prompt's declarations.
struct Declarations<'a> {
    frontmatter: Option<&'a Frontmatter>,
    /// Valid slots, in declaration order: the aliases the run binds when prepare succeeds.
    bound: Vec<String>,
    labels: Vec<String>,
}

/// Runs every check over every Lua block; problems in block order, then source order.
/// `facts` are indexed like the document's blocks, their ranges relative to the
/// block's code; the problems' ranges are the file's.
pub fn check(parsed: Parsed<'_>, sections: &Sections, facts: &[Arc<LuaFacts>]) -> Vec<Diagnostic> {
    let context = Context::new(parsed, sections, facts);
    let mut problems = Vec::new();
    for (index, block) in facts.iter().enumerate() {
        context.check_block(index, block, &mut problems);
    }
    problems
}

/// The problems of the block with this index alone, as [`check`] finds them
/// (the checks of a block read the others' only for the local tools they
/// register: see [`same_registrations`]).
pub fn check_block(
    parsed: Parsed<'_>,
    sections: &Sections,
    facts: &[Arc<LuaFacts>],
    index: usize,
) -> Vec<Diagnostic> {
    let context = Context::new(parsed, sections, facts);
    let mut problems = Vec::new();
    if let Some(block) = facts.get(index) {
        context.check_block(index, block, &mut problems);
    }
    problems
}

/// True when two versions of a block register the same local tools, so that
/// the other blocks' problems are the same with either.
pub fn same_registrations(a: &LuaFacts, b: &LuaFacts) -> bool {
    a.unread == b.unread && registered(a).eq(registered(b))
}

/// What every block's checks read: the declarations and the local tools.
pub(crate) struct Context<'a> {
    parsed: Parsed<'a>,
    sections: &'a Sections,
    frontmatter: Option<&'a Frontmatter>,
    declarations: Declarations<'a>,
    /// Every `tools.add_local` registration, by where it runs.
    locals: LocalTools<'a>,
}

impl<'a> Context<'a> {
    fn new(parsed: Parsed<'a>, sections: &'a Sections, facts: &'a [Arc<LuaFacts>]) -> Self {
        Self::with_locals(parsed, sections, LocalTools::new(sections, facts))
    }

    /// The context of blocks whose local tools are `locals`.
    pub(crate) fn with_locals(
        parsed: Parsed<'a>,
        sections: &'a Sections,
        locals: LocalTools<'a>,
    ) -> Self {
        // Without a readable frontmatter (none, or YAML that did not parse) every alias and
        // label would look undeclared: those checks wait for it.
        let frontmatter = parsed.frontmatter.filter(|f| !f.keys.is_empty());
        let declarations = Declarations {
            frontmatter,
            bound: frontmatter
                .map(|f| {
                    f.tools
                        .iter()
                        .filter(|s| s.valid)
                        .map(|s| s.alias.value.clone())
                        .collect()
                })
                .unwrap_or_default(),
            labels: frontmatter
                .map(|f| f.models.iter().map(|m| m.label.value.clone()).collect())
                .unwrap_or_default(),
        };
        Context {
            parsed,
            sections,
            frontmatter,
            declarations,
            locals,
        }
    }

    /// Appends the problems of the block with this index.
    pub(crate) fn check_block(
        &self,
        index: usize,
        block: &LuaFacts,
        problems: &mut Vec<Diagnostic>,
    ) {
        let (declarations, locals, sections) = (&self.declarations, &self.locals, self.sections);
        let frontmatter = self.frontmatter;
        let block_problems = problems.len();
        let caller = sections.caller_of_block(index);
        for call in &block.calls {
            let first = call.first_string();
            match call.callee.as_str() {
                "tools.add" | "tools.always" if frontmatter.is_some() => {
                    let mut literals: Vec<&StringLit> = first.into_iter().collect();
                    if let (Some(Arg::Table { strings, .. }), "tools.add") =
                        (call.args.first(), call.callee.as_str())
                    {
                        literals.extend(strings);
                    }
                    for lit in literals {
                        let function = if call.callee == "tools.always" {
                            ScopeFunction::Always
                        } else {
                            ScopeFunction::Add
                        };
                        scope_alias(declarations, function, lit, problems);
                    }
                }
                "tools.call" if frontmatter.is_some() => {
                    if let Some(lit) = first {
                        tool_call(declarations, locals, caller, lit, problems);
                    }
                }
                "tools.add_local" => {
                    if let Some(lit) = first {
                        add_local(declarations, lit, problems);
                    }
                    if let Some(Arg::Table { named, .. }) = call.args.get(2) {
                        local_params(named, problems);
                    }
                }
                "jump" | "call" | "fanout" => {
                    if let Some(lit) = first.filter(|_| caller != Caller::Shared) {
                        target(sections, caller, lit, problems);
                    }
                }
                "models.use" | "models.get" | "models.default" if frontmatter.is_some() => {
                    if let Some(lit) = first.filter(|l| !declarations.labels.contains(&l.value)) {
                        problems.push(Diagnostic::new(
                            Code::UndeclaredModelLabel {
                                label: lit.value.clone(),
                                declared: declarations.labels.clone(),
                            },
                            lit.range.clone(),
                        ));
                    }
                }
                member => {
                    if messages::older_api(member).is_some() {
                        problems.push(Diagnostic::new(
                            Code::OlderApi {
                                member: member.to_owned(),
                            },
                            call.callee_range.clone(),
                        ));
                    }
                }
            }
        }
        if frontmatter.is_some() {
            for read in &block.calls_reads {
                calls_read(declarations, locals, caller, read, problems);
            }
        }
        // Every problem above is placed on a fact (its related places, on the
        // frontmatter, are the file's already).
        let code_start = self
            .parsed
            .lua_blocks
            .get(index)
            .map_or(0, |b| b.code_range.start);
        for problem in &mut problems[block_problems..] {
            problem.range = in_file(code_start, &problem.range);
            problem.offset += code_start;
        }
    }
}

/// `tools.calls.X` / `tools.calls['X']`: X must be a slot or a local tool the section
/// (or the shared library) registers, else the read can only raise.
fn calls_read(
    declarations: &Declarations<'_>,
    locals: &LocalTools<'_>,
    caller: Caller,
    read: &CallsRead,
    problems: &mut Vec<Diagnostic>,
) {
    let key = read.key.as_str();
    if declarations.bound.iter().any(|a| a == key) || locals.in_scope(caller, key) {
        return;
    }
    problems.push(Diagnostic::new(
        Code::UnknownCallsKey {
            key: key.to_owned(),
        },
        read.range.clone(),
    ));
}

/// `tools.add('x')`, `tools.add({'x', ...})`, `tools.always('x')`.
fn scope_alias(
    declarations: &Declarations<'_>,
    function: ScopeFunction,
    lit: &StringLit,
    problems: &mut Vec<Diagnostic>,
) {
    if !is_valid_alias(&lit.value) {
        problems.push(invalid_alias(lit));
    } else if !declarations.bound.contains(&lit.value) {
        problems.push(Diagnostic::new(
            Code::UnboundToolSlot {
                function,
                alias: lit.value.clone(),
            },
            lit.range.clone(),
        ));
    }
}

/// `tools.call('x', ...)`: unbound unless a slot or a local tool the section
/// (or the shared library) registers; an Engine task tool name never is.
fn tool_call(
    declarations: &Declarations<'_>,
    locals: &LocalTools<'_>,
    caller: Caller,
    lit: &StringLit,
    problems: &mut Vec<Diagnostic>,
) {
    let name = lit.value.as_str();
    let engine_tool = is_engine_tool(name);
    if !engine_tool && declarations.bound.iter().any(|a| a == name) {
        return;
    }
    let local = locals.in_scope(caller, name);
    if !engine_tool && local {
        return;
    }
    problems.push(Diagnostic::new(
        Code::UnboundTool {
            name: name.to_owned(),
            bound: declarations.bound.clone(),
        },
        lit.range.clone(),
    ));
}

/// `tools.add_local('x', ...)`: a valid alias that is not a slot.
fn add_local(declarations: &Declarations<'_>, lit: &StringLit, problems: &mut Vec<Diagnostic>) {
    if !is_valid_alias(&lit.value) {
        problems.push(invalid_alias(lit));
        return;
    }
    let slot = declarations
        .frontmatter
        .and_then(|f| f.slot(&lit.value))
        .filter(|s| s.valid);
    if let Some(slot) = slot {
        problems.push(
            Diagnostic::new(
                Code::LocalToolClash {
                    alias: lit.value.clone(),
                },
                lit.range.clone(),
            )
            .with_related(slot.alias.range.clone(), messages::RELATED_TOOL_SLOT),
        );
    }
}

/// An alias literal that breaks the alias grammar.
fn invalid_alias(lit: &StringLit) -> Diagnostic {
    Diagnostic::new(
        Code::InvalidAliasArgument {
            alias: lit.value.clone(),
        },
        lit.range.clone(),
    )
}

/// `tools.add_local(alias, description, { name = 'type' | {'type', 'description'} }, handler)`:
/// literal specs of an unsupported type or of the wrong shape.
fn local_params(named: &[NamedField], problems: &mut Vec<Diagnostic>) {
    for field in named {
        let type_literal = match &field.value {
            Arg::Str(lit) => Some(lit),
            Arg::Table { strings, named, .. } if named.is_empty() => strings.first(),
            Arg::Literal(_, range) => {
                problems.push(Diagnostic::new(
                    Code::LocalToolParamShape {
                        name: field.name.clone(),
                    },
                    field.name_range.start..range.end,
                ));
                None
            }
            _ => None,
        };
        if let Some(lit) = type_literal.filter(|l| !PARAM_TYPES.contains(&l.value.as_str())) {
            problems.push(Diagnostic::new(
                Code::LocalToolParamType {
                    name: field.name.clone(),
                    type_text: lit.value.clone(),
                },
                lit.range.clone(),
            ));
        }
    }
}

/// `jump('## X')`, `call('## X', ...)`, `fanout('## X', ...)`.
fn target(sections: &Sections, caller: Caller, lit: &StringLit, problems: &mut Vec<Diagnostic>) {
    if sections.resolve(caller, &lit.value).is_some() {
        return;
    }
    let (visible, more) = sections.visible_targets_shown(caller, messages::SECTIONS_SHOWN);
    problems.push(Diagnostic::new(
        Code::InvisibleTarget {
            target: lit.value.clone(),
            caller: sections.caller_name(caller),
            visible,
            more: u32::try_from(more).unwrap_or(u32::MAX),
        },
        lit.range.clone(),
    ));
}
