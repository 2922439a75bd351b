//! The Lua API as the author sees it in hovers, completion and signature help:
//! each function's signature and reference text, from `language.md` §3-§5 and
//! the Tools chapter.

use promptforge_syntax::api_names::{LUA_GLOBALS, SECTION_GLOBALS, UNRESERVED_LUA_GLOBALS};

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

/// Every documented member of the Lua API: the globals and the members of the
/// global tables, then the fields and methods of the values the API returns
/// (Tool objects, model handles, message lists, error values). The book's
/// reference page lists them in this order.
pub const API: &[ApiEntry] = &[
    v("args", "The run's argument string (\"\" when none); in a chain, the chain's input."),
    v("var", "The walk's shared table of JSON data; a chain or fanout arm gets a copy, and its writes do not come back. Assigning a value JSON cannot hold (a function, userdata) raises an error."),
    v("sys", "Read-only facts: `prompt` (the prompt's name), `section` (the heading text, \"\" in the H1 body), `run` (the run id, derived from the seed when there is one), `seed` (an integer or nil), `index` (in a fanout arm, its 1-based index; reading it elsewhere raises `sys.index exists only in a fanout arm`), `model` (the section's model label, readable after the section's first tool or model call)."),
    v("item", "In a fanout arm, its member of the collection."),
    f("log", "log(...)", &["..."], "Writes one line to the run log: the arguments as `tostring` writes them, tab-separated."),
    f("print", "print(...)", &["..."], "The sandbox's `print` writes to the run log, one line as `log` writes it."),
    f("untrusted", "untrusted(s)", &["s"], "Returns `s` in the untrusted envelope of the run's nonce."),
    f("jump", "jump(target)", &["target"],
      "Ends the running block and moves the walk to the target section (`'## Name'`, resolved against the caller's siblings and direct children); the walk goes on from there. A jump to a child walks the children from it, then the parent walk resumes after the jumper. Refused inside local tool handlers and while the shared library loads. A target that is not visible raises `no section \"{target}\" is visible from \"{caller}\"; visible: [...]`."),
    f("call", "call(target [, input])", &["target", "input"],
      "Runs a chain from the target section (a walk that never moves the caller's walk) with `args` = `input`, a string (default \"\"), and returns the chain's result, or nil. Chains nest at most 8 deep by default; deeper raises `call depth limit of 8 reached` (kind `limit`)."),
    f("fanout", "fanout(target, collection)", &["target", "collection"],
      "Runs one chain per member of a non-empty array, each with `item` and `sys.index`, and returns their results in member order (`false` for an arm without a result). At most the Host's fanout concurrency (8 by default) run at once. One arm failing cancels the others and raises its error. Two arms writing (not appending) the same store path raise `fanout arms {a} and {b} both wrote \"{path}\"`."),
    f("input.ask", "input.ask(question)", &["question"],
      "Asks the operator through the Host's input broker and returns the answer; with no one to ask (`--no-input`, say), raises kind `input_unavailable`: `no operator is available to answer input.ask`."),
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
    v("tool.name", "The alias the tool slot is bound under: the name of the global that holds the object."),
    v("tool.description", "The tool's own catalog description; a description given to `tools.add` or `tools.always` does not show here."),
    v("tool.parameters", "Always an empty table: a tool's argument schema cannot be read from Lua."),
    v("tool.wire_name", "The last segment of the tool path (`fetch` for `promptforge/web/fetch`), whatever the alias."),
    v("tool.untrusted", "Always `false`, whether or not the tool's output is untrusted; untrusted output is recognised by its envelope."),
    f("models.use", "models.use(label)", &["label"],
      "Sets this section's model to the declared label and returns its handle. An undeclared label raises `model label \"{label}\" is not declared under models; declared: [...]`."),
    f("models.get", "models.get(label)", &["label"],
      "Returns the handle of a declared model label without selecting it."),
    f("models.default", "models.default(label)", &["label"],
      "Sets the run's default model (usually from the H1 body); any section without models.use uses it."),
    f("models.infer", "models.infer(x)", &["x"],
      "One round without tools on the section's model: `x` is a string (one user message) or a message list, which it does not change. Returns the reply text."),
    f("models.loop", "models.loop(msgs)", &["msgs"],
      "Runs rounds on the message list with the section's tool scope until the model replies with text; appends the records to `msgs` and returns the reply text. Past `max_tool_iterations` rounds: `tool loop reached its round cap of {n} rounds without a final reply` (kind `tool`)."),
    v("handle.name", "The model label the handle stands for, as declared under `models:`."),
    v("handle.model", "The Host model the label resolved to."),
    f("handle:infer", "handle:infer(x)", &["x"],
      "As `models.infer`, on this handle's model: one round without tools; `x` is a string (one user message) or a message list, which it does not change. Returns the reply text."),
    f("handle:loop", "handle:loop(msgs)", &["msgs"],
      "As `models.loop`, on this handle's model: rounds with the section's tool scope until the model replies with text; appends the records to `msgs` and returns the reply text."),
    f("messages.new", "messages.new()", &[],
      "Returns an empty message list; `:system(text)`, `:user(text)`, `:assistant(text)` append and return the list; `#msgs` is its length and `msgs[i]` a read-only record `{ role, content, tool_calls, tool_call_id, name }`."),
    f("msgs:system", "msgs:system(text)", &["text"], "Appends a system message and returns the list, so calls chain."),
    f("msgs:user", "msgs:user(text)", &["text"], "Appends a user message and returns the list."),
    f("msgs:assistant", "msgs:assistant(text)", &["text"], "Appends an assistant message and returns the list."),
    v("#msgs", "The number of records in the list."),
    v("msgs[i]",
      "The `i`-th record (1-based), read-only: `role`, `content`, `tool_calls`, `tool_call_id`, `name`. An assistant record with calls has `tool_calls = { { id, name, arguments } }` (`arguments` the raw JSON text) and a `content` that may be `\"\"`; a tool record has `role = 'tool'`, `tool_call_id`, `name` (the alias) and `content`. Assigning into the list or a record raises an error."),
    f("store.read", "store.read(path [, first [, last]])", &["path", "first", "last"],
      "Reads a store file, optionally only lines `first` to `last` (1-based, inclusive), each with its line end as the file holds it. A missing file raises `no such store file \"{path}\"`."),
    f("store.write", "store.write(path, text)", &["path", "text"], "Writes a store file, replacing its content."),
    f("store.append", "store.append(path, text)", &["path", "text"], "Appends text to a store file, creating it when missing."),
    f("store.exists", "store.exists(path)", &["path"], "True when the store file exists."),
    f("store.delete", "store.delete(path)", &["path"], "Deletes a store file; silent when it is missing."),
    f("store.list", "store.list([pattern])", &["pattern"],
      "The store's paths, sorted; `*` matches within a segment, `**` across segments."),
    v("err.kind",
      "The error's kind: `tool`, `unbound_tool`, `out_of_scope_tool`, `model`, `store`, `input_unavailable`, `limit` or `cancelled`."),
    v("err.name", "The tool name the call used, for `unbound_tool` and `out_of_scope_tool`; nil otherwise."),
    v("err.message", "The message, as `tostring(err)` gives it."),
];

/// True for an entry Lua code reaches by its name: a global or a member of a
/// global table (`tools.call`), not a field or method of a value the API returns
/// (`handle:infer`, `tool.name`, `msgs[i]`, `err.kind`).
pub fn is_global(entry: &ApiEntry) -> bool {
    let top = entry.name.split('.').next().unwrap_or_default();
    SECTION_GLOBALS.contains(&top) || LUA_GLOBALS.contains(&top)
}

/// The global entry named `name`.
pub fn lookup(name: &str) -> Option<&'static ApiEntry> {
    API.iter().find(|e| e.name == name && is_global(e))
}

/// The members of a global table (`tools`, `models`, `messages`, `store`, `input`).
pub fn members(table: &str) -> impl Iterator<Item = &'static ApiEntry> + '_ {
    API.iter()
        .filter(move |e| is_global(e) && e.name.split_once('.').is_some_and(|(t, _)| t == table))
}

/// The hover text of an entry: the signature as Lua code, then the reference text.
pub fn hover_markdown(entry: &ApiEntry) -> String {
    format!("```lua\n{}\n```\n\n{}", entry.signature, entry.doc)
}

/// One part of the reference page: its heading, its introduction, and which
/// entries it holds.
struct Group {
    heading: &'static str,
    intro: &'static str,
    holds: fn(&str) -> bool,
}

fn under(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with(['.', ':', '[']) || rest.is_empty())
}

/// The page's parts, in order; every entry belongs to exactly one.
const GROUPS: &[Group] = &[
    Group {
        heading: "Globals",
        intro: "Every section VM has these globals. `item` exists only in a fanout arm.",
        holds: |n| !n.contains(['.', ':', '[', '#']) || under(n, "input"),
    },
    Group {
        heading: "tools",
        intro: "Every tool operation lives in the `tools` table. A tool is named by its alias string or by its Tool object.",
        holds: |n| under(n, "tools"),
    },
    Group {
        heading: "Tool objects",
        intro: "Each bound tool slot is also a global named by its alias, holding a Tool object. It has the five fields below (`tool` stands for the object) and no methods. It is frozen: assigning any field raises `Tool objects are frozen: cannot assign field \"{key}\"`. `tools.call`, `tools.add` and `tools.calls` accept it in place of the alias string.",
        holds: |n| under(n, "tool"),
    },
    Group {
        heading: "models",
        intro: "Model operations live in the `models` table; the labels come from the frontmatter's `models:` key.",
        holds: |n| under(n, "models"),
    },
    Group {
        heading: "Model handles",
        intro: "`models.use` and `models.get` return a handle, and each label declared under `models:` is a global holding its handle. A handle is frozen like a Tool object. Below, `handle` stands for one.",
        holds: |n| under(n, "handle"),
    },
    Group {
        heading: "messages",
        intro: "A message list is what `models.infer` and `models.loop` (and a handle's `infer` and `loop`) take. `messages.new` makes one. Below, `msgs` stands for a list; its methods are called with `:`.",
        holds: |n| under(n, "messages") || under(n, "msgs") || n == "#msgs",
    },
    Group {
        heading: "store",
        intro: "The store is the run's filesystem, shared by every section, chain, fanout arm and Plugin of the run. A path is relative and `/`-separated, at most 1024 bytes, with no empty, `.` or `..` segment, no backslash and no NUL; any other path raises kind `store`.",
        holds: |n| under(n, "store"),
    },
    Group {
        heading: "Error values",
        intro: "An error the engine raises in Lua is a value with the fields below (`err` stands for it), and `tostring(err)` gives its message; `pcall` returns it as its second result. Argument and usage errors are plain strings instead. A jump, a cancellation or a limit passes through every `pcall`.",
        holds: |n| under(n, "err"),
    },
];

/// The book's Lua API reference page (`docs/src/reference/lua-api.md`), made from
/// [`API`]: the text hover, completion and signature help show, grouped.
pub fn markdown() -> String {
    let mut page = String::from(
        "<!-- Generated from server/analysis/src/api_reference.rs: do not edit. Regenerate with\n     UPDATE_BOOK=1 cargo test -p promptforge-tests --test book_reference -->\n\n\
         # Lua API reference\n\n\
         The code in a prompt's Lua blocks runs in Lua 5.4, in a sandbox, with the \
         globals on this page. This page is generated from the same table as the \
         language server's hover, completion and signature help, so it says what the \
         editor says.\n\n\
         In a signature, `[ ]` marks optional arguments. A `{name}` inside a quoted \
         message stands for the value the message names.\n\n",
    );
    page.push_str("Lua's own globals the sandbox keeps: ");
    let own: Vec<String> = LUA_GLOBALS
        .iter()
        .chain(UNRESERVED_LUA_GLOBALS)
        .map(|g| format!("`{g}`"))
        .collect();
    page.push_str(&own.join(", "));
    page.push_str(
        ". It has no `io`, `os`, `debug`, `package`, `require`, `load`, `loadfile`, \
         `dofile`, `collectgarbage` or `string.dump`.\n",
    );
    for group in GROUPS {
        page.push_str(&format!("\n## {}\n", group.heading));
        if !group.intro.is_empty() {
            page.push_str(&format!("\n{}\n", group.intro));
        }
        for entry in API.iter().filter(|e| (group.holds)(e.name)) {
            page.push_str(&format!("\n### {}\n\n", entry.name));
            if entry.function {
                page.push_str(&format!(
                    "<!-- illustrative: a signature, not a program -->\n```lua\n{}\n```\n\n",
                    entry.signature
                ));
            }
            page.push_str(entry.doc);
            page.push('\n');
        }
    }
    page
}

#[cfg(test)]
mod drift {
    use super::*;

    #[test]
    fn every_section_global_has_reference_text() {
        for global in SECTION_GLOBALS {
            assert!(
                API.iter()
                    .any(|e| e.name == *global || e.name.starts_with(&format!("{global}."))),
                "{global} has no reference entry"
            );
        }
    }

    #[test]
    fn every_entry_is_on_the_page_once_and_values_fields_are_no_globals() {
        for entry in API {
            let groups: Vec<&str> = GROUPS
                .iter()
                .filter(|g| (g.holds)(entry.name))
                .map(|g| g.heading)
                .collect();
            assert_eq!(
                groups.len(),
                1,
                "{} is in the groups {groups:?}",
                entry.name
            );
            let top = entry.name.split(['.', ':', '[']).next().unwrap_or_default();
            let global = SECTION_GLOBALS.contains(&top) || LUA_GLOBALS.contains(&top);
            assert_eq!(is_global(entry), global, "{}", entry.name);
            if !global {
                assert!(
                    ["tool", "handle", "msgs", "#msgs", "err"].contains(&top),
                    "{} is neither a global nor a member of a value the API returns",
                    entry.name
                );
            }
        }
    }

    #[test]
    fn value_members_are_not_looked_up_as_globals() {
        assert!(lookup("tool.name").is_none());
        assert!(lookup("handle:infer").is_none());
        assert_eq!(members("tool").count(), 0);
        assert!(lookup("tools.call").is_some());
        assert!(lookup("print").is_some());
    }

    #[test]
    fn the_page_has_every_entry() {
        let page = markdown();
        for entry in API {
            assert!(
                page.contains(&format!("\n### {}\n", entry.name)),
                "{}",
                entry.name
            );
        }
    }
}
