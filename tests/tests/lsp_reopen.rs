//! A prompt closed and opened again at once (`didOpen`, `didClose`, `didOpen`
//! of the same document at the same version, as an editor does when a tab is
//! closed and reopened), over stdio on the real binary, a thousand times on
//! fresh servers and a thousand times on one (issue 39).
//!
//! The closed document's analysis goes on after its close and carries the same
//! version number as the reopened one's; a Plugin the prompt declares may still
//! be activating when either is analysed. Whatever the interleaving, what the
//! client is left with must be right: after the close's empty list, every list
//! published for the document is the reopened text's (none of the closed
//! document's), and the last one is complete: the reopened text's every problem,
//! the declared Plugins' included, never an empty or partial list.
//!
//! The reopened text differs from the closed one by two blank lines, so a list
//! of the closed document is told apart by its ranges (an editor reopens the
//! same text, where such a list would look right by luck, or not at all when
//! the closed analysis was left unfinished).

use std::time::Instant;

use promptforge_tests::lsp_client::{file_uri, offset_of, position, prompt, workspace, LspClient};
use promptforge_tests::Scratch;
use serde_json::{json, Value};

/// How many times each suite reopens a document.
const REOPENS: usize = 1_000;

/// What one reopening runs with.
#[derive(Debug, Clone, Copy)]
struct Variant {
    /// The prompt declares, besides the built-in `promptforge/web`, an MCP
    /// Plugin whose server takes a while to fail (a background activation).
    slow: bool,
    /// Hovers and code actions, which read the catalog and may activate the
    /// Plugins themselves, are sent between the notifications without waiting.
    hovers: bool,
    /// Another open prompt of the same folder declares the same Plugins, so
    /// their activation wakes two documents.
    neighbour: bool,
}

/// The variants, taken in turn.
const VARIANTS: [Variant; 4] = [
    Variant {
        slow: false,
        hovers: false,
        neighbour: false,
    },
    Variant {
        slow: false,
        hovers: true,
        neighbour: false,
    },
    Variant {
        slow: false,
        hovers: true,
        neighbour: true,
    },
    Variant {
        slow: true,
        hovers: true,
        neighbour: true,
    },
];

/// The configuration of the slow Plugin: its "server" exits after 20 ms
/// without a word, so its activation fails then.
const SLOW_CONFIG: &str =
    "[plugin.\"acme/slow\"]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 0.02\"]\n";

/// The prompt: a slot naming a path the web Plugin lacks (a warning once its
/// catalog is known), a Lua call of that slot (unbound, once the catalog is
/// known and the block is read) and a Lua syntax error (found in every
/// analysis: it tells which text a list is of). `blank` blank lines after the
/// title shift the body.
fn text(variant: Variant, blank: usize) -> String {
    let plugins = if variant.slow {
        "plugins: [promptforge/web, acme/slow]\n"
    } else {
        "plugins: [promptforge/web]\n"
    };
    prompt(
        &format!("{plugins}tools:\n  grab: promptforge/web/fetchh\n"),
        &format!(
            "{}\n```lua\nreturn tools.call('grab', {{ url = args }})\n```\n\n## B\n\n```lua\nx = = 1\n```\n",
            "\n".repeat(blank)
        ),
    )
}

/// A diagnostic as compared here: its code, its first line and its message.
type Seen = (String, u64, String);

fn seen(diagnostic: &Value) -> Seen {
    (
        diagnostic["code"].as_str().unwrap_or_default().to_owned(),
        diagnostic["range"]["start"]["line"]
            .as_u64()
            .unwrap_or(u64::MAX),
        diagnostic["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// The line of the first `needle` in `text`.
fn line_of(text: &str, needle: &str) -> u64 {
    u64::from(position(text, offset_of(text, needle, 0)).0)
}

/// The complete list of `text`, sorted: every problem, once every declared
/// Plugin has settled.
fn complete(variant: Variant, text: &str) -> Vec<Seen> {
    let mut all = vec![
        (
            "Lua".to_owned(),
            line_of(text, "x = = 1"),
            "unexpected symbol near '='".to_owned(),
        ),
        (
            "RequirementsUnmet".to_owned(),
            line_of(text, "promptforge/web/fetchh"),
            "the catalog has no tool promptforge/web/fetchh, so the slot \"grab\" stays unbound; did you mean promptforge/web/fetch?".to_owned(),
        ),
        (
            "UnboundTool".to_owned(),
            line_of(text, "tools.call"),
            "tool \"grab\" is not bound in this run; bound aliases: []".to_owned(),
        ),
    ];
    if variant.slow {
        all.push((
            "RequirementsUnmet".to_owned(),
            line_of(text, "acme/slow"),
            "missing required Plugin: acme/slow".to_owned(),
        ));
    }
    all.sort();
    all
}

/// The diagnostics of a publication, sorted.
fn listed(publication: &Value) -> Vec<Seen> {
    let mut list: Vec<Seen> = publication["diagnostics"]
        .as_array()
        .map(|d| d.iter().map(seen).collect())
        .unwrap_or_default();
    list.sort();
    list
}

/// The `publishDiagnostics` params for `uri` among `notifications`, in order.
fn publications<'a>(notifications: impl IntoIterator<Item = &'a Value>, uri: &str) -> Vec<Value> {
    notifications
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .map(|m| m["params"].clone())
        .collect()
}

/// A close's empty list (it carries no version).
fn is_clear(publication: &Value) -> bool {
    publication["version"].is_null() && listed(publication).is_empty()
}

/// One reopening in its own folder: its variant and the reopened document.
struct Reopening {
    variant: Variant,
    doc: String,
    neighbour: String,
    _scratch: Scratch,
}

/// Sends hovers and code actions on `uri` without waiting for their answers.
fn hover(client: &mut LspClient, uri: &str) {
    // On the declared Plugin's id (the catalog is read) and on the slot's path.
    for (line, character) in [(4, 12), (6, 14)] {
        client.send_request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
        );
    }
    client.send_request(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": uri },
            "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 30, "character": 0 } },
            "context": { "diagnostics": [] }
        }),
    );
}

/// Opens the document (and its neighbour), closes it and opens it again with
/// text B at the same version, then reads the server's messages until the
/// complete list of text B was published for it.
fn reopen(client: &mut LspClient, label: &str, variant: Variant) -> Reopening {
    let scratch = workspace(label, if variant.slow { SLOW_CONFIG } else { "" });
    let doc = file_uri(&scratch, "p.md");
    let neighbour = file_uri(&scratch, "n.md");
    let (closed, reopened) = (text(variant, 0), text(variant, 2));
    if variant.neighbour {
        client.open(&neighbour, 1, &reopened);
    }
    client.open(&doc, 1, &closed);
    if variant.hovers {
        hover(client, &doc);
    }
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": doc } }),
    );
    client.open(&doc, 1, &reopened);
    if variant.hovers {
        hover(client, &doc);
    }
    let want = complete(variant, &reopened);
    // Until the complete list came for the reopened document and, when it is
    // open, for the neighbour.
    client.pump_until(|c| {
        let published = publications(&c.notifications, &doc);
        let mut after_close = published.iter().skip_while(|p| !is_clear(p)).skip(1);
        after_close.any(|p| listed(p) == want)
            && (!variant.neighbour
                || publications(&c.notifications, &neighbour)
                    .iter()
                    .any(|p| listed(p) == want))
    });
    Reopening {
        variant,
        doc,
        neighbour,
        _scratch: scratch,
    }
}

/// Checks what the client received for one reopening: `closed` when the test
/// closed the document afterwards (then its close's empty list ends it).
fn check(reopening: &Reopening, notifications: &[Value], closed: bool, run: usize) {
    let variant = reopening.variant;
    let reopened = text(variant, 2);
    let want = complete(variant, &reopened);
    let marker = (
        "Lua".to_owned(),
        line_of(&reopened, "x = = 1"),
        "unexpected symbol near '='".to_owned(),
    );
    let published = publications(notifications, &reopening.doc);
    let shown = || format!("run {run} ({variant:?}): {published:#?}");
    let clears: Vec<usize> = (published.iter().enumerate())
        .filter(|(_, p)| is_clear(p))
        .map(|(at, _)| at)
        .collect();
    assert_eq!(clears.len(), 1 + usize::from(closed), "{}", shown());
    let end = if closed {
        assert_eq!(
            clears[1],
            published.len() - 1,
            "nothing after the last close: {}",
            shown()
        );
        clears[1]
    } else {
        published.len()
    };
    let open_again = &published[clears[0] + 1..end];
    for publication in open_again {
        let list = listed(publication);
        // The reopened text's, at its version: the syntax error at its line,
        // and nothing the complete list lacks.
        assert!(
            publication["version"] == 1
                && list.contains(&marker)
                && list.iter().all(|d| want.contains(d)),
            "a list not of the reopened text: {publication:#?}\n{}",
            shown()
        );
    }
    let last = open_again.last().map(listed);
    assert_eq!(
        last.as_ref(),
        Some(&want),
        "the last list is incomplete: {}",
        shown()
    );
    if variant.neighbour {
        let published = publications(notifications, &reopening.neighbour);
        let last = published.iter().rev().find(|p| !is_clear(p)).map(listed);
        assert_eq!(
            last.as_ref(),
            Some(&want),
            "the neighbour's last list: {}",
            shown()
        );
    }
}

#[test]
fn a_document_reopened_at_once_on_a_fresh_server_ends_with_its_complete_list() {
    // Built first, so the time printed is the reopenings'.
    promptforge_tests::binary();
    let started = Instant::now();
    for run in 0..REOPENS {
        let variant = VARIANTS[run % VARIANTS.len()];
        let mut client = LspClient::start(json!({}));
        let reopening = reopen(&mut client, "reopen-fresh", variant);
        let (notifications, code) = client.end_session();
        assert_eq!(code, Some(0));
        check(&reopening, &notifications, false, run);
    }
    eprintln!(
        "{REOPENS} reopenings on fresh servers in {:?}",
        started.elapsed()
    );
}

#[test]
fn a_document_reopened_at_once_on_one_server_ends_with_its_complete_list() {
    promptforge_tests::binary();
    let started = Instant::now();
    let mut client = LspClient::start(json!({}));
    let mut reopenings = Vec::new();
    let mut notifications = Vec::new();
    for run in 0..REOPENS {
        // A folder of its own: a Host of its own, whose Plugins activate anew.
        let variant = VARIANTS[run % VARIANTS.len()];
        let reopening = reopen(&mut client, "reopen-one", variant);
        let neighbour = variant.neighbour.then_some(&reopening.neighbour);
        for uri in std::iter::once(&reopening.doc).chain(neighbour) {
            client.notify(
                "textDocument/didClose",
                json!({ "textDocument": { "uri": uri } }),
            );
        }
        notifications.extend(client.notifications.drain(..));
        reopenings.push(reopening);
    }
    let (rest, code) = client.end_session();
    assert_eq!(code, Some(0));
    notifications.extend(rest);
    for (run, reopening) in reopenings.iter().enumerate() {
        check(reopening, &notifications, true, run);
    }
    eprintln!(
        "{REOPENS} reopenings on one server in {:?}",
        started.elapsed()
    );
}
