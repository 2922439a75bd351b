//! The `[test]` table: how `promptforge test` keeps live answers (`cache`, a
//! folder relative to the file that sets it, and `cache_max_age`). A project
//! file's `cache` inside its own folder needs no trust; one that leads outside
//! it (an absolute path, a `..` that climbs out) would write files there, and
//! needs trust.

use serde::Deserialize;
use toml::Spanned;

use super::{escapes, Layer};
use crate::host::config::TestConfig;
use crate::host::trust::{Act, Part, TrustNeed};

/// The `[test]` table as a file holds it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::host) struct TestFile {
    pub(super) cache: Option<Spanned<String>>,
    cache_max_age: Option<u64>,
}

/// The `[test]` keys of every layer, the topmost that sets each one winning;
/// `cache` resolved against the folder of the file that sets it.
pub(super) fn merged(layers: &[&Layer]) -> TestConfig {
    let tables = || {
        layers
            .iter()
            .rev()
            .filter_map(|l| Some((*l, l.file.test.as_ref()?)))
    };
    TestConfig {
        cache: tables().find_map(|(layer, t)| Some(layer.dir().join(t.cache.as_ref()?.get_ref()))),
        cache_max_age: tables().find_map(|(_, t)| t.cache_max_age),
    }
}

/// The need for trust of a `cache` of `top` that leads outside its folder.
pub(super) fn need(top: &Layer) -> Option<TrustNeed> {
    let cache = top.file.test.as_ref()?.cache.as_ref()?;
    escapes(&top.dir(), cache.get_ref()).then(|| TrustNeed {
        file: top.path.clone(),
        line: top.line(cache.span().start),
        key: "test.cache".to_owned(),
        part: Part::Test,
        act: Act::WriteOutside,
    })
}
