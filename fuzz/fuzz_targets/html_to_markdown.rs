//! Any bytes, decoded as `fetch` decodes an HTML body, convert to Markdown without a
//! panic or a crash (a stack overflow aborts), and a page nested too deep says so.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptforge_web::content::{self, Kind};
use url::Url;

fuzz_target!(|bytes: &[u8]| {
    let html = content::decode(bytes, None, Kind::Html);
    let page = Url::parse("https://example.com/docs/page.html").ok();
    let markdown = content::html_to_markdown(&html, page.as_ref());
    let _ = markdown.len();
});
