//! What `fetch` makes of a body: the media type and charset of `Content-Type`,
//! charset sniffing (byte-order mark, HTML `<meta>`), decoding with `encoding_rs`,
//! and HTML turned into Markdown with `htmd`.

use std::rc::Rc;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use htmd::Node;
use markup5ever_rcdom::NodeData;
use url::Url;

/// How many leading bytes of an HTML body are searched for a `<meta>` charset.
const META_PRESCAN_BYTES: usize = 4096;

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
pub fn html_to_markdown(html: &str, page: Option<&Url>) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_TAGS.to_vec())
        .build();
    let Ok(tree) = converter.html_to_tree(html) else {
        return String::new();
    };
    if let Some(page) = page {
        absolutize(&tree, page);
    }
    converter.tree_to_markdown(&tree)
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
mod tests {
    use super::*;

    #[test]
    fn content_types_are_parsed_and_classified() {
        let parsed = ContentType::parse("Text/HTML; Charset=\"ISO-8859-1\"");
        assert_eq!(parsed.essence, "text/html");
        assert_eq!(parsed.charset.as_deref(), Some("ISO-8859-1"));
        assert_eq!(kind_of("text/html"), Some(Kind::Html));
        assert_eq!(kind_of("application/xhtml+xml"), Some(Kind::Html));
        assert_eq!(kind_of("text/plain"), Some(Kind::Text));
        assert_eq!(kind_of("application/ld+json"), Some(Kind::Text));
        assert_eq!(kind_of("image/png"), None);
        assert_eq!(kind_of("application/pdf"), None);
    }

    #[test]
    fn charsets_come_from_the_header_the_meta_or_the_bytes() {
        let latin = b"<html><body>caf\xe9</body></html>";
        assert!(decode(latin, Some("iso-8859-1"), Kind::Html).contains("café"));
        assert!(decode(latin, None, Kind::Html).contains("café"));
        let meta = "<html><head><meta charset=\"utf-8\"></head><body>café</body></html>";
        assert_eq!(meta_charset(meta.as_bytes()), Some(UTF_8));
        let equiv = b"<meta http-equiv='Content-Type' content='text/html; charset=windows-1252'>";
        assert_eq!(meta_charset(equiv), Some(WINDOWS_1252));
        let bom = b"\xef\xbb\xbfna\xc3\xafve";
        assert_eq!(decode(bom, Some("windows-1252"), Kind::Text), "naïve");
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let markdown = html_to_markdown(
            "<html><head><title>T</title><script>alert(1)</script></head><body><h1>Hello</h1><p>A <a href=\"https://example.com/\">link</a>.</p><script>x()</script></body></html>",
            None,
        );
        assert_eq!(markdown, "# Hello\n\nA [link](https://example.com/).");
    }
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn links_and_images_become_absolute() {
        let page = Url::parse("https://example.com/docs/guide/").unwrap();
        let html = "<p><a href=\"intro\">Intro</a> <a href=\"/top\">Top</a> <a href=\"mailto:a@b.c\">Mail</a> <img src=\"../logo.png\" alt=\"Logo\"></p>";
        assert_eq!(
            html_to_markdown(html, Some(&page)),
            "[Intro](https://example.com/docs/guide/intro) [Top](https://example.com/top) [Mail](mailto:a@b.c) ![Logo](https://example.com/docs/logo.png)"
        );
        let based = "<html><head><base href=\"https://cdn.example.net/x/\"></head><body><a href=\"y\">Y</a></body></html>";
        assert_eq!(
            html_to_markdown(based, Some(&page)),
            "[Y](https://cdn.example.net/x/y)"
        );
    }
}
