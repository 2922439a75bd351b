//! The texts of `promptforge/web`: each tool failure is one short, model-safe line
//! (the Tools chapter: no deeper cause, no error chain).

use std::net::IpAddr;
use std::time::Duration;

use crate::address::Blocked;

/// Fetch arguments that are not `{"url": "..."}`.
pub const FETCH_BAD_ARGUMENTS: &str =
    "fetch refused: the arguments must be a JSON object with a string \"url\"";
/// The run was cancelled during a fetch.
pub const FETCH_CANCELLED: &str = "fetch cancelled";
/// A redirect without a usable `Location`.
pub const FETCH_BAD_REDIRECT: &str = "fetch failed: the server sent an unusable redirect";
/// The connection broke while the body was read.
pub const FETCH_BROKEN_BODY: &str = "fetch failed: the connection broke while reading the page";
/// The HTML-to-Markdown conversion stopped (an engine bug; the spec leaves the text open).
pub const FETCH_CONVERSION_FAILED: &str =
    "fetch failed: the page could not be turned into Markdown";
/// A body without a content type that is neither HTML nor text.
pub const FETCH_UNKNOWN_TYPE: &str = "fetch failed: the page has no content type and is not text";
/// A URL without a host.
pub const NO_HOST: &str = "the URL has no host";
/// The run was cancelled during a search.
pub const SEARCH_CANCELLED: &str = "search cancelled";
/// Search arguments that are not a JSON object.
pub const SEARCH_BAD_ARGUMENTS: &str = "search refused: the arguments must be a JSON object";
/// The search service's reply was not the expected JSON.
pub const SEARCH_BAD_REPLY: &str = "search failed: the search service sent an unreadable reply";
/// The search service could not be reached.
pub const SEARCH_UNREACHABLE: &str = "search failed: the search service could not be reached";

/// A duration as the failure texts give it: whole seconds, else milliseconds.
fn duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// At most 200 characters of something the model sent, for echoing back.
fn echo(text: &str) -> String {
    let mut shown: String = text.chars().take(200).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

/// A refusal; `after_redirect` says it concerns a redirect's target.
pub fn fetch_refused(after_redirect: bool, reason: &str) -> String {
    if after_redirect {
        format!("fetch refused: after a redirect, {reason}")
    } else {
        format!("fetch refused: {reason}")
    }
}

/// A scheme other than http and https.
pub fn bad_scheme(scheme: &str) -> String {
    format!(
        "only http and https URLs can be fetched, not {}:",
        echo(scheme)
    )
}

/// What lets `fetch` reach a refused range, said after each refusal of one.
pub const ALLOW_PRIVATE_HINT: &str =
    "(set allow_private_addresses = true under [web] in the Host configuration to reach it)";

/// An address in a refused range; `name` is the host name it was resolved from.
pub fn blocked_address(name: Option<&str>, ip: IpAddr, blocked: Blocked) -> String {
    let what = blocked.describe();
    match name {
        Some(name) => format!("{name} resolves to {ip}, {what} {ALLOW_PRIVATE_HINT}"),
        None => format!("the address {ip} is {what} {ALLOW_PRIVATE_HINT}"),
    }
}

/// An argument fetch does not take.
pub fn fetch_unknown_argument(name: &str) -> String {
    format!("fetch refused: unknown argument \"{}\"", echo(name))
}

/// A `url` that does not parse.
pub fn fetch_bad_url(url: &str) -> String {
    format!("fetch refused: \"{}\" is not a valid URL", echo(url))
}

/// The whole fetch took too long.
pub fn fetch_timed_out(timeout: Duration) -> String {
    format!("fetch failed: timed out after {}", duration(timeout))
}

/// Redirect number `max + 1`.
pub fn fetch_too_many_redirects(max: usize) -> String {
    format!("fetch refused: more than {max} redirects")
}

/// A status that is neither success nor a followed redirect.
pub fn fetch_status(status: u16) -> String {
    format!("fetch failed: HTTP {status}")
}

/// A host name that does not resolve.
pub fn fetch_unresolved(host: &str) -> String {
    format!(
        "fetch failed: the host {} could not be resolved",
        echo(host)
    )
}

/// A connection that could not be opened.
pub fn fetch_connect(host: &str) -> String {
    format!("fetch failed: could not connect to {}", echo(host))
}

/// A request that failed after connecting.
pub fn fetch_request(host: &str) -> String {
    format!("fetch failed: the request to {} failed", echo(host))
}

/// A media type fetch does not read.
pub fn fetch_unsupported(essence: &str) -> String {
    format!("fetch failed: unsupported content type {}", echo(essence))
}

/// The note after a body cut at the size limit.
pub fn fetch_cut_note(max_bytes: u64) -> String {
    format!("[fetch: the page is larger than {max_bytes} bytes; only the first {max_bytes} bytes were read]")
}

/// The note after a page whose elements nest deeper than `max_depth` levels.
pub fn fetch_deep_note(max_depth: usize) -> String {
    format!("[fetch: the page nests its elements more than {max_depth} levels deep; what lies deeper was flattened to plain text]")
}

/// An argument search does not take.
pub fn search_unknown_argument(name: &str) -> String {
    format!("search refused: unknown argument \"{}\"", echo(name))
}

/// An argument of the wrong shape or out of bounds.
pub fn search_bad_argument(name: &str, rule: &str) -> String {
    format!("search refused: {name} {rule}")
}

/// The search key's variable is not set.
pub fn search_missing_key(variable: &str) -> String {
    format!("search failed: the search key is not configured (the environment variable {variable} is not set)")
}

/// A status other than success from the search service.
pub fn search_status(status: u16) -> String {
    format!("search failed: the search service answered HTTP {status}")
}

/// The search took too long.
pub fn search_timed_out(timeout: Duration) -> String {
    format!("search failed: timed out after {}", duration(timeout))
}

/// No results.
pub fn search_no_results(query: &str) -> String {
    format!("No results for \"{}\".", echo(query))
}
