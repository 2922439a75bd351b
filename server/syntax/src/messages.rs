//! The messages of the rules the syntax crate's `Code` names beyond the
//! frontmatter's keys and the body's structure (a file without frontmatter or
//! not a prompt, the static checks, the requirements against a catalog), each built by one function (`language.md` §2–§7, the Tools chapter);
//! the run reuses those it also raises. The frontmatter's own are in
//! [`crate::frontmatter::messages`], the engine's run messages in the engine's
//! `messages` module. Tests compare them byte for byte.

/// The message for a file without frontmatter, or without its closing line.
pub const NO_FRONTMATTER: &str = "a prompt starts with YAML frontmatter between two --- lines";

/// The message for a Markdown file named explicitly that is not a prompt (kind Version).
pub const NOT_A_PROMPT: &str = "not a PromptForge prompt: the frontmatter has no promptforge: key";

/// A list in a message: `[a, b, c]`, no quotes, `[]` when empty (`language.md` §1.5).
pub fn list<S: AsRef<str>>(items: &[S]) -> String {
    list_and_more(items, 0)
}

/// The most sections a message names as visible: a prompt of thousands of
/// sections with a wrong target in each block would otherwise write every
/// heading into every one of those messages (a 400 KiB prompt made 76 MB of
/// `check` output and took 1 GiB; a 3 MiB one exhausted the machine).
pub const SECTIONS_SHOWN: usize = 50;

/// A list in a message of `items` and `more` others left out: `[a, b, c]`, or
/// `[a, b, c, and 12 more]`.
pub fn list_and_more<S: AsRef<str>>(items: &[S], more: usize) -> String {
    let inner: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match more {
        0 => format!("[{}]", inner.join(", ")),
        more => format!("[{}, and {more} more]", inner.join(", ")),
    }
}

/// One line of the notice for a missing required Plugin.
pub fn missing_plugin(id: &str) -> String {
    format!("- missing required Plugin: {id}")
}

/// A slot whose Plugin the prompt does not declare, at the slot (the notice still
/// lists the Plugin as missing).
pub fn undeclared_plugin(alias: &str, path: &str, id: &str, registered: bool) -> String {
    let remedy = if registered {
        format!("add `- {id}` under plugins:")
    } else {
        format!("declare it under plugins: (the Host registers no Plugin {id} yet)")
    };
    format!("tool alias '{alias}' names {path}, but this prompt does not declare its Plugin {id}: {remedy}")
}

/// One line of the notice for two conflicting Plugins.
pub fn conflicting_plugins(first: &str, second: &str) -> String {
    format!("- conflicting Plugins: {first} and {second} cannot be activated together; declare one or the other")
}

/// The log line of an optional Plugin skipped at prepare.
pub fn skipped_optional_plugin(id: &str, reason: &str) -> String {
    format!("skipped optional Plugin {id}: {reason}")
}

/// A jump, call or fanout target that is not visible.
/// `visible` are the first of the sections visible from the caller, `more` the
/// others ([`SECTIONS_SHOWN`]).
pub fn section_not_visible(target: &str, caller: &str, visible: &[String], more: usize) -> String {
    format!(
        "no section \"{target}\" is visible from \"{caller}\"; visible: {}",
        list_and_more(visible, more)
    )
}

/// An undeclared model label.
pub fn undeclared_label(label: &str, declared: &[String]) -> String {
    format!(
        "model label \"{label}\" is not declared under models; declared: {}",
        list(declared)
    )
}

/// The round cap of `models.loop`.
pub fn round_cap(n: u32) -> String {
    format!("tool loop reached its round cap of {n} rounds without a final reply")
}

// ---- The tools API (Tools chapter) ----

/// An alias that breaks the alias rule (`tools.always`, `tools.add`, `tools.add_local`):
/// the same message as a `tools:` key that breaks it, so the syntax crate's.
pub use crate::frontmatter::messages::invalid_alias;

/// `tools.always` naming an alias that is not a bound tool slot.
pub fn always_not_bound(alias: &str) -> String {
    format!("tools.always alias \"{alias}\" is not a bound tool slot")
}

/// `tools.add` naming an alias that is not a bound tool slot.
pub fn add_not_bound(alias: &str) -> String {
    format!("tools.add alias \"{alias}\" is not a bound tool slot")
}

/// `tools.call` naming neither a local tool nor a bound alias (kind `unbound_tool`).
pub fn unbound_tool(name: &str, bound: &[String]) -> String {
    format!(
        "tool \"{name}\" is not bound in this run; bound aliases: {}",
        list(bound)
    )
}

/// `tools.add_local` with an alias that is a bound tool slot.
pub fn add_local_duplicates_slot(alias: &str) -> String {
    format!("tools.add_local alias \"{alias}\" duplicates a bound tool slot")
}

/// A parameter type other than the four.
pub fn add_local_unsupported_type(name: &str, type_text: &str) -> String {
    format!("tools.add_local param \"{name}\" has unsupported type \"{type_text}\": expected \"string\", \"integer\", \"number\", or \"boolean\"")
}

/// A parameter spec that is neither a string nor a table (and a table that is not a
/// `{type, description}` array: the spec leaves that case open, this message fits it).
pub fn add_local_bad_param(name: &str) -> String {
    format!(
        "tools.add_local param \"{name}\" must be a type string or a {{type, description}} array"
    )
}

// ---- Static checks and the catalog: what the editor and `check` say before a run ----

/// The reason an optional Plugin the Harness lacks is skipped (the spec leaves it open).
pub const PLUGIN_NOT_REGISTERED: &str = "the Host registers no Plugin with this id";

/// Related-information text on the earlier of two conflicting Plugins.
pub const RELATED_CONFLICT: &str = "conflicts with this earlier declaration";
/// Related-information text on a declared Plugin that contributed no tools.
pub const RELATED_NO_TOOLS: &str = "this Plugin contributed no tools";
/// Related-information text on the slot a local tool's alias clashes with.
pub const RELATED_TOOL_SLOT: &str = "the tool slot";

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
/// at run time (the engine's `calls_no_seeded_count` is the run-time message).
pub fn calls_key_unknown(key: &str) -> String {
    format!("tools.calls: \"{key}\" is neither a bound tool slot nor a local tool of this section")
}

/// A Lua block the analysis does not read (`bytes` long, past `limit` bytes of
/// one block, or of the document's blocks together when `whole_document`), and
/// how many `later` blocks the document's limit also leaves unread.
pub fn lua_block_not_read(
    bytes: usize,
    limit: usize,
    whole_document: bool,
    later: usize,
) -> String {
    let past = if whole_document {
        format!("the document's Lua blocks together are past the {limit} bytes the analysis reads")
    } else {
        format!("this Lua block is {bytes} bytes, past the {limit} bytes the analysis reads of one block")
    };
    let left_out = "no static checks, and no hover, completion or other Lua features in";
    match later {
        0 => format!("{past}: only its syntax is checked ({left_out} it)"),
        1 => format!("{past}: only the syntax of this block and of 1 later block is checked ({left_out} them)"),
        n => format!("{past}: only the syntax of this block and of {n} later blocks is checked ({left_out} them)"),
    }
}

/// A notice line ([`missing_plugin`], [`conflicting_plugins`]) as one diagnostic's
/// message: without its `- `.
pub fn notice_line_alone(notice_line: &str) -> &str {
    notice_line.strip_prefix("- ").unwrap_or(notice_line)
}

/// A slot path the catalog lacks; `nearest` is the hint.
pub fn unknown_tool_path(path: &str, alias: &str, nearest: Option<&str>) -> String {
    let mut message =
        format!("the catalog has no tool {path}, so the slot \"{alias}\" stays unbound");
    if let Some(nearest) = nearest {
        message.push_str(&format!("; did you mean {nearest}?"));
    }
    message
}

/// A declared Plugin the editor does not start because its configuration is not
/// trusted (`host.md` §1.1); `reason` is the refusal naming the key and the remedy.
pub fn untrusted_plugin(id: &str, reason: &str) -> String {
    format!("the Plugin {id} is not started here: {reason}")
}

/// A configuration that gives no Host.
pub fn configuration_unusable(error: &str) -> String {
    format!("the Host configuration cannot be used: {error}")
}
