//! The Lua API as the author sees it in hovers, completion and signature help:
//! each function's signature and reference text, from `language.md` §3-§5 and
//! the Tools chapter.

/// One function or global of the Lua API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiEntry {
    /// The name as written in Lua: `tools.call`, `jump`, `args`.
    pub name: &'static str,
    /// The signature (`tools.call(alias, args)`), or the name for a value.
    pub signature: &'static str,
    /// The parameters' labels, in order (empty for a value).
    pub params: &'static [&'static str],
    /// The reference text.
    pub doc: &'static str,
    /// True for a function (signature help applies), false for a value.
    pub function: bool,
}

const fn f(
    name: &'static str,
    signature: &'static str,
    params: &'static [&'static str],
    doc: &'static str,
) -> ApiEntry {
    ApiEntry {
        name,
        signature,
        params,
        doc,
        function: true,
    }
}

const fn v(name: &'static str, doc: &'static str) -> ApiEntry {
    ApiEntry {
        name,
        signature: name,
        params: &[],
        doc,
        function: false,
    }
}

/// Every documented member of the Lua API.
pub const API: &[ApiEntry] = &[
    f("tools.call", "tools.call(alias, args)", &["alias", "args"],
      "Calls a bound tool (or a local tool of this section) from Lua and returns its output: a string for a plain tool, a table for a structured one; untrusted output arrives in the untrusted envelope. `alias` is an alias string or a Tool object; `args` a table that converts to a JSON object (nil gives `{}`). A name that is neither bound nor local raises `unbound_tool`: `tool \"{name}\" is not bound in this run; bound aliases: [...]`."),
    f("tools.add", "tools.add(alias [, description])", &["alias", "description"],
      "Offers bound tools to the model in the current section only. Takes an alias string, a Tool object, or an array of either (the array form takes no description). `description` overrides what the model sees in this section. An alias that is not a bound slot raises `tools.add alias \"{alias}\" is not a bound tool slot`; all-or-nothing."),
    f("tools.always", "tools.always(alias [, description])", &["alias", "description"],
      "Offers a bound tool in every later section of the run (one prompt-wide list, usually filled in the H1 body). `description` sets the model-facing description for the whole run. An alias that is not a bound slot raises `tools.always alias \"{alias}\" is not a bound tool slot`."),
    f("tools.add_local", "tools.add_local(alias, description, params, handler)", &["alias", "description", "params", "handler"],
      "Registers a local tool in this section: the model sees it under `alias` and `description`; `params` maps each parameter name to \"string\", \"integer\", \"number\" or \"boolean\", or to a {type, description} array (every parameter is required); `handler(a)` runs in the calling chain and returns a scalar. The alias may not be a bound tool slot."),
    f("tools.allow_tasks", "tools.allow_tasks(targets)", &["targets"],
      "Offers the model the Engine's task tools (`task`, `task_status`, `task_cancel`, `await_tasks`) in this section, for chains started at the given target strings; the array replaces the section's list."),
    v("tools.calls",
      "A read-only live view of this section's tool call counts by alias; nil until the section's first tool call. Reading an alias without a count raises `tools.calls: \"{key}\" has no seeded count; seeded aliases: [...]`."),
    f("models.use", "models.use(label)", &["label"],
      "Sets this section's model to the declared label and returns its handle. An undeclared label raises `model label \"{label}\" is not declared under models; declared: [...]`."),
    f("models.get", "models.get(label)", &["label"],
      "Returns the handle of a declared model label without selecting it."),
    f("models.default", "models.default(label)", &["label"],
      "Sets the run's default model (usually from the H1 body); any section without models.use uses it."),
    f("models.infer", "models.infer(x)", &["x"],
      "One round without tools on the section's model: `x` is a string (one user message) or a message list, which it does not change. Returns the reply text."),
    f("models.loop", "models.loop(msgs)", &["msgs"],
      "Runs rounds on the message list with the section's tool scope until the model replies with text; appends the records to `msgs` and returns the reply text. Past `max_tool_iterations` rounds: `tool loop reached its round cap of {n} rounds without a final reply`."),
    f("messages.new", "messages.new()", &[],
      "Returns an empty message list; `:system(text)`, `:user(text)`, `:assistant(text)` append and return the list; `#msgs` is its length and `msgs[i]` a read-only record `{ role, content, tool_calls, tool_call_id, name }`."),
    f("store.read", "store.read(path [, first [, last]])", &["path", "first", "last"],
      "Reads a store file, optionally only lines `first` to `last` (1-based, inclusive). A missing file raises `no such store file \"{path}\"`."),
    f("store.write", "store.write(path, text)", &["path", "text"], "Writes a store file, replacing its content."),
    f("store.append", "store.append(path, text)", &["path", "text"], "Appends text to a store file, creating it when missing."),
    f("store.exists", "store.exists(path)", &["path"], "True when the store file exists."),
    f("store.delete", "store.delete(path)", &["path"], "Deletes a store file; silent when it is missing."),
    f("store.list", "store.list([pattern])", &["pattern"],
      "The store's paths, sorted; `*` matches within a segment, `**` across segments."),
    f("log", "log(...)", &["..."], "Writes one line to the run log: the arguments as `tostring` writes them, tab-separated."),
    f("untrusted", "untrusted(s)", &["s"], "Returns `s` in the untrusted envelope of the run's nonce."),
    f("jump", "jump(target)", &["target"],
      "Ends the running block and moves the walk to the target section (`'## Name'`, resolved against the caller's siblings and direct children); the walk goes on from there. Refused inside local tool handlers."),
    f("call", "call(target [, input])", &["target", "input"],
      "Runs a chain from the target section with `args` = `input` (default \"\") and returns the chain's result, or nil. Chains nest at most 8 deep."),
    f("fanout", "fanout(target, collection)", &["target", "collection"],
      "Runs one chain per member of a non-empty array, each with `item` and `sys.index`, and returns their results in member order (`false` for an arm without a result). One arm failing cancels the others."),
    f("input.ask", "input.ask(question)", &["question"],
      "Asks the operator through the Host's input broker and returns the answer; with no one to ask, raises `input_unavailable`."),
    v("args", "The run's argument string (\"\" when none); in a chain, the chain's input."),
    v("var", "The walk's shared table of JSON data; a chain or fanout arm gets a copy, and its writes do not come back."),
    v("sys", "Read-only: `prompt`, `section`, `run`, `seed`, `index` (in a fanout arm), `model` (after the section's first tool or model call)."),
    v("item", "In a fanout arm, its member of the collection."),
];

/// The entry named `name`.
pub fn lookup(name: &str) -> Option<&'static ApiEntry> {
    API.iter().find(|e| e.name == name)
}

/// The members of a global table (`tools`, `models`, `messages`, `store`, `input`).
pub fn members(table: &str) -> impl Iterator<Item = &'static ApiEntry> + '_ {
    API.iter()
        .filter(move |e| e.name.split_once('.').is_some_and(|(t, _)| t == table))
}

/// The hover text of an entry: the signature as Lua code, then the reference text.
pub fn hover_markdown(entry: &ApiEntry) -> String {
    format!("```lua\n{}\n```\n\n{}", entry.signature, entry.doc)
}

#[cfg(test)]
mod drift {
    use promptforge_syntax::api_names::SECTION_GLOBALS;

    use super::*;

    #[test]
    fn every_section_global_has_reference_text_and_nothing_else_does() {
        for global in SECTION_GLOBALS {
            assert!(
                API.iter()
                    .any(|e| e.name == *global || e.name.starts_with(&format!("{global}."))),
                "{global} has no reference entry"
            );
        }
        for entry in API {
            let top = entry.name.split('.').next().unwrap_or_default();
            assert!(
                SECTION_GLOBALS.contains(&top),
                "{} is no global",
                entry.name
            );
        }
    }
}
