//! The static checks' messages the engine does not write (every run-time message
//! comes from `promptforge_engine::messages`): the older API's members, and the
//! static `tools.calls` check, which has no run-time twin.

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

/// `tools.calls.X` or `tools.calls['X']` for an alias that is neither a tool slot nor a
/// local tool the section (or the shared library) registers: reading it can only raise
/// `tools.calls: "X" has no seeded count` at run time. (The engine's message is the
/// run-time one; this static wording is the server's.)
pub fn calls_key_unknown(key: &str) -> String {
    format!("tools.calls: \"{key}\" is neither a bound tool slot nor a local tool of this section")
}
