//! The engine's run-time messages that the static Lua checks report before the
//! run (Tools chapter, `language.md` §3.2 and §4), each built by one function.
//! Lists are written `[a, b, c]` (`language.md` §1.5).

/// `[a, b, c]`, no quotes; `[]` when empty.
pub fn list<S: AsRef<str>>(items: &[S]) -> String {
    let joined: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("[{}]", joined.join(", "))
}

/// `tools.add` or `tools.always` given an alias that is not a bound tool slot.
pub fn not_a_bound_slot(function: &str, alias: &str) -> String {
    format!("{function} alias \"{alias}\" is not a bound tool slot")
}

/// `tools.call` given a name that is neither a local tool nor a bound alias.
pub fn not_bound_in_run(name: &str, bound: &[String]) -> String {
    format!(
        "tool \"{name}\" is not bound in this run; bound aliases: {}",
        list(bound)
    )
}

/// `tools.add_local` given the alias of a bound tool slot.
pub fn local_duplicates_slot(alias: &str) -> String {
    format!("tools.add_local alias \"{alias}\" duplicates a bound tool slot")
}

/// A second `tools.add_local` with the same alias in one section.
pub fn local_already_registered(alias: &str) -> String {
    format!("tools.add_local alias \"{alias}\" is already registered")
}

/// `tools.add_local` with a parameter type string that is not supported.
pub fn local_param_type(name: &str, ty: &str) -> String {
    format!(
        "tools.add_local param \"{name}\" has unsupported type \"{ty}\": expected \"string\", \"integer\", \"number\", or \"boolean\""
    )
}

/// `tools.add_local` with a parameter spec that is neither a type string nor a table.
pub fn local_param_shape(name: &str) -> String {
    format!(
        "tools.add_local param \"{name}\" must be a type string or a {{type, description}} array"
    )
}

/// A `jump`, `call` or `fanout` target that is not visible from its caller.
pub fn target_not_visible(target: &str, caller: &str, visible: &[String]) -> String {
    format!(
        "no section \"{target}\" is visible from \"{caller}\"; visible: {}",
        list(visible)
    )
}

/// `models.use`, `models.get` or `models.default` given an undeclared label.
pub fn label_not_declared(label: &str, declared: &[String]) -> String {
    format!(
        "model label \"{label}\" is not declared under models; declared: {}",
        list(declared)
    )
}

/// An alias given to `tools.add`, `tools.always` or `tools.add_local` that breaks the alias grammar.
pub fn invalid_alias(alias: &str) -> String {
    promptforge_syntax::frontmatter::messages::invalid_alias(alias)
}

/// A member of the older API (seed 002), with the current call to use instead.
pub fn older_api(member: &str) -> Option<&'static str> {
    match member {
        "tools.bind" => Some(
            "tools.bind is the older API and does not exist: bind the tool under tools: in the frontmatter (alias: namespace/plugin/name), then offer it with tools.add or tools.always",
        ),
        "tools.need" => Some(
            "tools.need is the older API and does not exist: declare the Plugin under plugins: in the frontmatter",
        ),
        "models.need" => Some(
            "models.need is the older API and does not exist: declare the label under models: in the frontmatter, then select it with models.use or models.default",
        ),
        _ => None,
    }
}
