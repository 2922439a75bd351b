//! What `fetch` makes of a body: the media type and charset of `Content-Type`,
//! charset sniffing (byte-order mark, HTML `<meta>`), decoding with `encoding_rs`,
//! and HTML turned into Markdown with `htmd`.
//!
//! Nesting is bounded before the conversion: `htmd` converts by recursion, a few
//! kilobytes of stack a level, and html5ever's tree builder scans its stack of open
//! elements for most tags, so a hostile page of 10,000 nested `<b>` (50 KB) would
//! overflow a 2 MiB worker stack and abort the process, and 100,000 nested `<div>`
//! would keep the parser busy for minutes. The parse drops start tags once the tree
//! builder holds [`PARSE_LIMIT`] elements, and every element at [`MAX_DEPTH`] with
//! elements inside becomes one text node; a note then says so. Every walk here is
//! iterative, and `markup5ever_rcdom` frees a tree iteratively too.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use htmd::Node;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{Tracer, TreeBuilder, TreeBuilderOpts};
use html5ever::TokenizerResult;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use url::Url;

use crate::messages;

/// How many leading bytes of an HTML body are searched for a `<meta>` charset.
const META_PRESCAN_BYTES: usize = 4096;

/// The deepest element nesting converted as it is, the `<html>` element being level
/// 1; deeper content is flattened to plain text. `htmd` needs at most about 5 KB of
/// stack a level in a debug build (a `<table><caption>` chain, the worst measured;
/// about 1.3 KB in release), so 256 levels stay within about two thirds of a tokio
/// worker's 2 MiB in debug and a sixth in release. Browsers cap their parsers' DOM
/// depth at 512; real pages stay far below either.
pub const MAX_DEPTH: usize = 256;

/// The handles the tree builder may hold (the document, its stack of open elements,
/// its active formatting elements, `<head>` and `<form>`) before start tags are
/// dropped: a little over [`MAX_DEPTH`], so that a page nested deeper keeps a few
/// levels for `bound_depth` to flatten, while the builder's scans of its stack stay
/// short.
pub const PARSE_LIMIT: usize = MAX_DEPTH + 16;

/// The start tags dropped only past [`PARSE_LIMIT`] + [`NON_NESTING_SLACK`]: void
/// elements, popped as soon as they are pushed, and the raw-text elements, which
/// hold only text and switch the tokenizer (a dropped `<script>` would turn its code
/// into page text).
const NON_NESTING: [&str; 28] = [
    "area",
    "base",
    "basefont",
    "bgsound",
    "br",
    "col",
    "embed",
    "frame",
    "hr",
    "img",
    "input",
    "keygen",
    "link",
    "meta",
    "param",
    "source",
    "track",
    "wbr",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "plaintext",
];

/// How far past [`PARSE_LIMIT`] the [`NON_NESTING`] tags are still let through: in
/// HTML they add one level at most, but in SVG or MathML content they nest like any
/// element, and this bounds them there.
const NON_NESTING_SLACK: usize = 16;

/// The elements whose edges do not separate words when a subtree is flattened.
const INLINE_TAGS: [&str; 24] = [
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "u", "var",
];

/// The tags whose content never reaches the Markdown.
const SKIPPED_TAGS: [&str; 10] = [
    "script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas", "head",
];

/// What a body is, by its media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `text/html`, `application/xhtml+xml`: turned into Markdown.
    Html,
    /// `text/*`, JSON, XML, YAML, JavaScript: passed on as text.
    Text,
}

/// A parsed `Content-Type`: the media type (lowercased, no parameters) and its charset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentType {
    /// `type/subtype`, lowercased.
    pub essence: String,
    /// The `charset` parameter, if any.
    pub charset: Option<String>,
}

impl ContentType {
    /// Parses a `Content-Type` header value.
    pub fn parse(value: &str) -> ContentType {
        let mut parts = value.split(';');
        let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let charset = parts.find_map(|part| {
            let (name, value) = part.split_once('=')?;
            name.trim().eq_ignore_ascii_case("charset").then(|| {
                value
                    .trim()
                    .trim_matches(|c| c == '"' || c == '\'')
                    .to_owned()
            })
        });
        ContentType { essence, charset }
    }
}

/// The kind of a media type, None for one `fetch` does not read (images, PDF, ...).
pub fn kind_of(essence: &str) -> Option<Kind> {
    match essence {
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-javascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-ndjson" => Some(Kind::Text),
        other if other.starts_with("text/") => Some(Kind::Text),
        other if other.ends_with("+json") || other.ends_with("+xml") => Some(Kind::Text),
        _ => None,
    }
}

/// The kind of a body that came without a `Content-Type`: HTML when it starts like
/// HTML, text when it is UTF-8 without NUL bytes, else None.
pub fn sniff(body: &[u8]) -> Option<Kind> {
    let head = String::from_utf8_lossy(body.get(..512).unwrap_or(body)).to_ascii_lowercase();
    let start = head.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        return Some(Kind::Html);
    }
    (std::str::from_utf8(body).is_ok() && !body.contains(&0)).then_some(Kind::Text)
}

/// The charset an HTML `<meta charset>` or `<meta http-equiv content>` in the first
/// bytes of `body` names.
pub fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = body.get(..META_PRESCAN_BYTES).unwrap_or(body);
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<meta") {
        rest = rest.get(at + 5..).unwrap_or_default();
        let tag = rest.split('>').next().unwrap_or_default();
        let Some((_, after)) = tag.split_once("charset") else {
            continue;
        };
        let Some(value) = after.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start().trim_start_matches(['"', '\'']);
        let label = value
            .split(|c: char| matches!(c, '"' | '\'' | ';' | '/') || c.is_whitespace())
            .next()
            .unwrap_or_default();
        if let Some(encoding) = Encoding::for_label(label.as_bytes()) {
            return Some(encoding);
        }
    }
    None
}

/// Decodes `body`: a byte-order mark wins, then the header's charset, then (for
/// HTML) a `<meta>` charset, then UTF-8 when the bytes are valid UTF-8, else
/// windows-1252. A UTF-16 label in a `<meta>` is read as UTF-8, as browsers do.
pub fn decode(body: &[u8], header_charset: Option<&str>, kind: Kind) -> String {
    let declared = header_charset
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .or_else(|| match kind {
            Kind::Html => meta_charset(body).map(|e| e.output_encoding()),
            Kind::Text => None,
        });
    let encoding = declared.unwrap_or_else(|| {
        if std::str::from_utf8(body).is_ok() {
            UTF_8
        } else {
            WINDOWS_1252
        }
    });
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// `html` as Markdown, scripts, styles and the document head left out; link and
/// image addresses made absolute against `page` (or the page's `<base href>`).
/// Content nested deeper than [`MAX_DEPTH`] comes as plain text, and a note at the
/// end says so.
pub fn html_to_markdown(html: &str, page: Option<&Url>) -> String {
    let (tree, dropped) = parse(html);
    let flattened = bound_depth(&tree, MAX_DEPTH) || dropped;
    if let Some(page) = page {
        absolutize(&tree, page);
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_TAGS.to_vec())
        .build();
    let mut markdown = converter.tree_to_markdown(&tree);
    if flattened {
        if !markdown.is_empty() {
            markdown.push_str("\n\n");
        }
        markdown.push_str(&messages::fetch_deep_note(MAX_DEPTH));
    }
    markdown
}

/// `html` parsed into a tree as `htmd` parses it, except that start tags are dropped
/// while the tree builder holds [`PARSE_LIMIT`] handles; true when any was.
fn parse(html: &str) -> (Handle, bool) {
    let builder = TreeBuilder::new(
        RcDom::default(),
        TreeBuilderOpts {
            scripting_enabled: true,
            ..TreeBuilderOpts::default()
        },
    );
    let guard = DepthGuard {
        builder,
        known: Cell::new(None),
        dropped: Cell::new(false),
    };
    let tokenizer = Tokenizer::new(guard, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // Any other result (after a `</script>`, at a `<meta charset>`) only pauses it.
    while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
    tokenizer.end();
    let guard = tokenizer.sink;
    (guard.builder.sink.document.clone(), guard.dropped.get())
}

/// The tree builder behind a filter that drops start tags once it holds
/// [`PARSE_LIMIT`] handles, which keeps its stack of open elements, and so the
/// tree's depth and the builder's scans of that stack, bounded. A dropped start tag
/// of a block element leaves a line break, so that words stay apart.
struct DepthGuard {
    builder: TreeBuilder<Handle, RcDom>,
    /// The handles counted at the last dropped start tag: since then the builder was
    /// given only line breaks, which close nothing, so it holds at least as many.
    known: Cell<Option<usize>>,
    dropped: Cell<bool>,
}

impl DepthGuard {
    /// The handles the tree builder holds: its stack of open elements, its active
    /// formatting elements, the document, `<head>` and `<form>`.
    fn held(&self) -> usize {
        let counter = Counter(Cell::new(0));
        self.builder.trace_handles(&counter);
        counter.0.get()
    }

    /// True when a start tag `name` is to be dropped.
    fn drops(&self, name: &str) -> bool {
        let limit = if NON_NESTING.contains(&name) {
            PARSE_LIMIT + NON_NESTING_SLACK
        } else {
            PARSE_LIMIT
        };
        let held = match self.known.get() {
            Some(known) if known >= limit => known,
            _ => self.held(),
        };
        self.known.set((held >= limit).then_some(held));
        held >= limit
    }
}

/// Counts the handles it is shown.
struct Counter(Cell<usize>);

impl Tracer for Counter {
    type Handle = Handle;

    fn trace_handle(&self, _node: &Handle) {
        self.0.set(self.0.get() + 1);
    }
}

impl TokenSink for DepthGuard {
    type Handle = Handle;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<Handle> {
        if let Token::TagToken(Tag {
            kind: TagKind::StartTag,
            name,
            ..
        }) = &token
        {
            if self.drops(name) {
                self.dropped.set(true);
                if !INLINE_TAGS.contains(&&**name) {
                    let gap = Token::CharacterTokens(StrTendril::from_slice("\n"));
                    let _ = self.builder.process_token(gap, line_number);
                }
                return TokenSinkResult::Continue;
            }
        }
        self.known.set(None);
        self.builder.process_token(token, line_number)
    }

    fn end(&self) {
        self.builder.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.builder
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// Flattens every element at depth `max_depth` under `root` (its children at 1) that
/// holds elements: its content becomes one text node. Skipped tags are not entered,
/// as `htmd` does not enter them. True when anything was flattened.
fn bound_depth(root: &Handle, max_depth: usize) -> bool {
    let mut flattened = false;
    let mut stack = vec![(root.clone(), 0)];
    while let Some((node, depth)) = stack.pop() {
        if let NodeData::Element { name, .. } = &node.data {
            if SKIPPED_TAGS.contains(&&*name.local) {
                continue;
            }
        }
        let has_elements = node
            .children
            .borrow()
            .iter()
            .any(|child| matches!(child.data, NodeData::Element { .. }));
        if !has_elements {
            continue;
        }
        if depth >= max_depth {
            flatten(&node);
            flattened = true;
            continue;
        }
        let children = node.children.borrow();
        stack.extend(
            children
                .iter()
                .rev()
                .map(|child| (child.clone(), depth + 1)),
        );
    }
    flattened
}

/// Replaces the content of `element` with one text node: the text under it in
/// document order, skipped tags left out, words at the edges of block elements kept
/// apart by a space. The old content is freed by `markup5ever_rcdom`'s `Drop`, which
/// takes every node's children into a list instead of recursing.
fn flatten(element: &Handle) {
    let mut text = String::new();
    let mut gap = false;
    // A node to enter, or None where a block element ends.
    let mut stack: Vec<Option<Handle>> = element
        .children
        .borrow()
        .iter()
        .rev()
        .cloned()
        .map(Some)
        .collect();
    while let Some(entry) = stack.pop() {
        let Some(node) = entry else {
            gap = true;
            continue;
        };
        match &node.data {
            NodeData::Text { contents } => {
                let piece = contents.borrow();
                if piece.is_empty() {
                    continue;
                }
                if gap
                    && !text.is_empty()
                    && !text.ends_with(char::is_whitespace)
                    && !piece.starts_with(char::is_whitespace)
                {
                    text.push(' ');
                }
                text.push_str(&piece);
                gap = false;
            }
            NodeData::Element { name, .. } => {
                let tag = &*name.local;
                if SKIPPED_TAGS.contains(&tag) {
                    continue;
                }
                if !INLINE_TAGS.contains(&tag) {
                    gap = true;
                    stack.push(None);
                }
                stack.extend(node.children.borrow().iter().rev().cloned().map(Some));
            }
            _ => {}
        }
    }
    let old = std::mem::take(&mut *element.children.borrow_mut());
    if !text.is_empty() {
        let node = Node::new(NodeData::Text {
            contents: RefCell::new(StrTendril::from(text)),
        });
        node.parent.set(Some(Rc::downgrade(element)));
        element.children.borrow_mut().push(node);
    }
    drop(old);
}

/// Every element under `root`, in document order.
fn elements(root: &Rc<Node>) -> Vec<Rc<Node>> {
    let mut found = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if let Ok(children) = node.children.try_borrow() {
            stack.extend(children.iter().rev().cloned());
        }
        if matches!(node.data, NodeData::Element { .. }) {
            found.push(node);
        }
    }
    found
}

/// The value of `attribute` when `node` is a `tag` element that has it.
fn attribute_of(node: &Node, tag: &str, attribute: &str) -> Option<String> {
    let NodeData::Element { name, attrs, .. } = &node.data else {
        return None;
    };
    if &*name.local != tag {
        return None;
    }
    let attrs = attrs.try_borrow().ok()?;
    attrs
        .iter()
        .find(|a| &*a.name.local == attribute)
        .map(|a| a.value.to_string())
}

/// Rewrites `a href` and `img src` as absolute http(s) addresses.
fn absolutize(root: &Rc<Node>, page: &Url) {
    let elements = elements(root);
    let base = elements
        .iter()
        .find_map(|node| attribute_of(node, "base", "href"))
        .and_then(|href| page.join(href.trim()).ok())
        .unwrap_or_else(|| page.clone());
    for node in &elements {
        let NodeData::Element { name, attrs, .. } = &node.data else {
            continue;
        };
        let wanted = match &*name.local {
            "a" => "href",
            "img" => "src",
            _ => continue,
        };
        let Ok(mut attrs) = attrs.try_borrow_mut() else {
            continue;
        };
        for attr in attrs.iter_mut().filter(|a| &*a.name.local == wanted) {
            if let Ok(joined) = base.join(attr.value.trim()) {
                if matches!(joined.scheme(), "http" | "https") {
                    attr.value = joined.as_str().into();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
