//! Static Lua checks: what the engine would refuse at run time and can be known
//! from the text, each with the engine's own message and a stable code.

use std::ops::Range;
use std::sync::Arc;

use promptforge_syntax::frontmatter::names::is_valid_alias;
use promptforge_syntax::{Document, Frontmatter};

use super::lua_facts::{Arg, CallsRead, LuaFacts, NamedField, StringLit};
use promptforge_engine::messages;

use super::messages as static_messages;
use super::sections::{Caller, Sections};

/// The names of the Engine's own task tools: `tools.call` never reaches them.
pub const ENGINE_TOOLS: &[&str] = &["task", "task_cancel", "task_status", "await_tasks"];

/// The stable codes of the static checks.
pub mod codes {
    /// An alias given to `tools.add`/`tools.always` that is not a bound tool slot.
    pub const UNBOUND_TOOL_SLOT: &str = "UnboundToolSlot";
    /// A name given to `tools.call` that is neither bound nor a local tool.
    pub const UNBOUND_TOOL: &str = "UnboundTool";
    /// A `tools.add_local` alias that is also a tool slot.
    pub const LOCAL_TOOL_CLASH: &str = "LocalToolClash";
    /// An alias literal that breaks the alias grammar.
    pub const INVALID_ALIAS: &str = "InvalidAlias";
    /// A `tools.add_local` parameter spec of the wrong shape or type.
    pub const LOCAL_TOOL_PARAM: &str = "LocalToolParam";
    /// A `jump`/`call`/`fanout` target that is not visible from its caller.
    pub const INVISIBLE_TARGET: &str = "InvisibleTarget";
    /// A label given to `models.use`/`get`/`default` that is not declared.
    pub const UNDECLARED_MODEL_LABEL: &str = "UndeclaredModelLabel";
    /// A member of the older API.
    pub const OLDER_API: &str = "OlderApi";
    /// A `tools.calls` key that is neither a slot nor a local tool of the section.
    pub const UNKNOWN_CALLS_KEY: &str = "UnknownCallsKey";
}

/// One problem a static check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticProblem {
    /// The check's stable code (see [`codes`]).
    pub code: &'static str,
    /// The engine's message.
    pub message: String,
    /// Byte range in the file text.
    pub range: Range<usize>,
    /// Other places the problem involves, with what each is.
    pub related: Vec<(Range<usize>, String)>,
}

/// What the checks know about the prompt's declarations.
struct Declarations<'a> {
    frontmatter: Option<&'a Frontmatter>,
    /// Valid slots, in declaration order: the aliases the run binds when prepare succeeds.
    bound: Vec<String>,
    labels: Vec<String>,
}

/// Runs every check over every Lua block; problems in block order, then source order.
pub fn check(
    document: &Document,
    sections: &Sections,
    facts: &[Arc<LuaFacts>],
) -> Vec<StaticProblem> {
    // Without a readable frontmatter (none, or YAML that did not parse) every alias and
    // label would look undeclared: those checks wait for it.
    let frontmatter = document.frontmatter.as_ref().filter(|f| !f.keys.is_empty());
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
    // Every `tools.add_local` registration: where it runs and its literal alias.
    let locals: Vec<(Caller, Option<&str>)> = facts
        .iter()
        .enumerate()
        .flat_map(|(index, block)| {
            let caller = sections.caller_of_block(index);
            block
                .calls
                .iter()
                .filter(|c| c.callee == "tools.add_local")
                .map(move |c| (caller, c.first_string().map(|l| l.value.as_str())))
        })
        .collect();
    let mut problems = Vec::new();
    for (index, block) in facts.iter().enumerate() {
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
                        scope_alias(&declarations, &call.callee, lit, &mut problems);
                    }
                }
                "tools.call" if frontmatter.is_some() => {
                    if let Some(lit) = first {
                        tool_call(&declarations, &locals, caller, lit, &mut problems);
                    }
                }
                "tools.add_local" => {
                    if let Some(lit) = first {
                        add_local(&declarations, lit, &mut problems);
                    }
                    if let Some(Arg::Table { named, .. }) = call.args.get(2) {
                        local_params(named, &mut problems);
                    }
                }
                "jump" | "call" | "fanout" => {
                    if let Some(lit) = first.filter(|_| caller != Caller::Shared) {
                        target(sections, caller, lit, &mut problems);
                    }
                }
                "models.use" | "models.get" | "models.default" if frontmatter.is_some() => {
                    if let Some(lit) = first.filter(|l| !declarations.labels.contains(&l.value)) {
                        problems.push(problem(
                            codes::UNDECLARED_MODEL_LABEL,
                            messages::undeclared_label(&lit.value, &declarations.labels),
                            lit.range.clone(),
                        ));
                    }
                }
                member => {
                    if let Some(message) = static_messages::older_api(member) {
                        problems.push(problem(
                            codes::OLDER_API,
                            message.to_owned(),
                            call.callee_range.clone(),
                        ));
                    }
                }
            }
        }
        if frontmatter.is_some() {
            for read in &block.calls_reads {
                calls_read(&declarations, &locals, caller, read, &mut problems);
            }
        }
    }
    problems
}

/// `tools.calls.X` / `tools.calls['X']`: X must be a slot or a local tool the section
/// (or the shared library) registers, else the read can only raise.
fn calls_read(
    declarations: &Declarations<'_>,
    locals: &[(Caller, Option<&str>)],
    caller: Caller,
    read: &CallsRead,
    problems: &mut Vec<StaticProblem>,
) {
    let key = read.key.as_str();
    if declarations.bound.iter().any(|a| a == key) || local_in_scope(locals, caller, key) {
        return;
    }
    problems.push(problem(
        codes::UNKNOWN_CALLS_KEY,
        static_messages::calls_key_unknown(key),
        read.range.clone(),
    ));
}

/// True when a local tool registered where `caller` can see it may be named `name`
/// (one registered under a computed alias could be).
fn local_in_scope(locals: &[(Caller, Option<&str>)], caller: Caller, name: &str) -> bool {
    locals.iter().any(|(c, alias)| {
        let same_section = *c == caller || *c == Caller::Shared || caller == Caller::Shared;
        same_section && alias.is_none_or(|alias| alias == name)
    })
}

fn problem(code: &'static str, message: String, range: Range<usize>) -> StaticProblem {
    StaticProblem {
        code,
        message,
        range,
        related: Vec::new(),
    }
}

/// `tools.add('x')`, `tools.add({'x', ...})`, `tools.always('x')`.
fn scope_alias(
    declarations: &Declarations<'_>,
    function: &str,
    lit: &StringLit,
    problems: &mut Vec<StaticProblem>,
) {
    if !is_valid_alias(&lit.value) {
        problems.push(problem(
            codes::INVALID_ALIAS,
            messages::invalid_alias(&lit.value),
            lit.range.clone(),
        ));
    } else if !declarations.bound.contains(&lit.value) {
        problems.push(problem(
            codes::UNBOUND_TOOL_SLOT,
            if function == "tools.always" {
                messages::always_not_bound(&lit.value)
            } else {
                messages::add_not_bound(&lit.value)
            },
            lit.range.clone(),
        ));
    }
}

/// `tools.call('x', ...)`: unbound unless a slot or a local tool the section
/// (or the shared library) registers; an Engine task tool name never is.
fn tool_call(
    declarations: &Declarations<'_>,
    locals: &[(Caller, Option<&str>)],
    caller: Caller,
    lit: &StringLit,
    problems: &mut Vec<StaticProblem>,
) {
    let name = lit.value.as_str();
    let engine_tool = ENGINE_TOOLS.contains(&name);
    if !engine_tool && declarations.bound.iter().any(|a| a == name) {
        return;
    }
    let local = local_in_scope(locals, caller, name);
    if !engine_tool && local {
        return;
    }
    problems.push(problem(
        codes::UNBOUND_TOOL,
        messages::unbound_tool(name, &declarations.bound),
        lit.range.clone(),
    ));
}

/// `tools.add_local('x', ...)`: a valid alias that is not a slot.
fn add_local(declarations: &Declarations<'_>, lit: &StringLit, problems: &mut Vec<StaticProblem>) {
    if !is_valid_alias(&lit.value) {
        problems.push(problem(
            codes::INVALID_ALIAS,
            messages::invalid_alias(&lit.value),
            lit.range.clone(),
        ));
        return;
    }
    let slot = declarations
        .frontmatter
        .and_then(|f| f.slot(&lit.value))
        .filter(|s| s.valid);
    if let Some(slot) = slot {
        let mut found = problem(
            codes::LOCAL_TOOL_CLASH,
            messages::add_local_duplicates_slot(&lit.value),
            lit.range.clone(),
        );
        found
            .related
            .push((slot.alias.range.clone(), "the tool slot".to_owned()));
        problems.push(found);
    }
}

/// The parameter types `tools.add_local` accepts.
const PARAM_TYPES: &[&str] = &["string", "integer", "number", "boolean"];

/// `tools.add_local(alias, description, { name = 'type' | {'type', 'description'} }, handler)`:
/// literal specs of an unsupported type or of the wrong shape.
fn local_params(named: &[NamedField], problems: &mut Vec<StaticProblem>) {
    for field in named {
        let type_literal = match &field.value {
            Arg::Str(lit) => Some(lit),
            Arg::Table { strings, named, .. } if named.is_empty() => strings.first(),
            Arg::Literal(_, range) => {
                problems.push(problem(
                    codes::LOCAL_TOOL_PARAM,
                    messages::add_local_bad_param(&field.name),
                    field.name_range.start..range.end,
                ));
                None
            }
            _ => None,
        };
        if let Some(lit) = type_literal.filter(|l| !PARAM_TYPES.contains(&l.value.as_str())) {
            problems.push(problem(
                codes::LOCAL_TOOL_PARAM,
                messages::add_local_unsupported_type(&field.name, &lit.value),
                lit.range.clone(),
            ));
        }
    }
}

/// `jump('## X')`, `call('## X', ...)`, `fanout('## X', ...)`.
fn target(sections: &Sections, caller: Caller, lit: &StringLit, problems: &mut Vec<StaticProblem>) {
    if sections.resolve(caller, &lit.value).is_some() {
        return;
    }
    let visible: Vec<String> = sections
        .visible(caller)
        .into_iter()
        .filter_map(|i| sections.get(i).map(|s| s.heading.target()))
        .collect();
    problems.push(problem(
        codes::INVISIBLE_TARGET,
        messages::section_not_visible(&lit.value, &sections.caller_name(caller), &visible),
        lit.range.clone(),
    ));
}
