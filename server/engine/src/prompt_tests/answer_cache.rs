//! `promptforge test --cache DIR` (issue 28): a live model's answers kept on
//! disk, keyed by the exact request, so a live suite run again after an
//! unrelated change asks no model. The key is the SHA-256 of the provider's kind
//! and the request as it goes on the wire (its address without credentials and
//! its body), or the engine's request for a provider without one. Failures are
//! never kept; an answer older than the maximum age, or a file that does not
//! read as one, is asked again and replaced (atomically).
//!
//! A case's verdict that rests on kept answers says so: each live case counts
//! the answers its runs got and how many a cache gave ([`CacheUse`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::models::{ModelError, ModelProvider, ModelReply, ModelRequest, ToolCall};
use crate::trace::{Usage, WireRequest};

/// The cache's folder, its maximum age and what it did.
#[derive(Debug)]
pub struct AnswerCache {
    dir: PathBuf,
    max_age: Option<Duration>,
    reused: AtomicU64,
    asked: AtomicU64,
}

/// A kept answer, as its file holds it.
#[derive(Serialize, Deserialize)]
struct Kept {
    content: String,
    tool_calls: Vec<KeptCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct KeptCall {
    id: String,
    name: String,
    arguments: String,
}

impl AnswerCache {
    /// A cache in `dir` (created when first written), answers kept at most
    /// `max_age` (None: for ever).
    pub fn new(dir: PathBuf, max_age: Option<Duration>) -> Arc<Self> {
        Arc::new(AnswerCache {
            dir,
            max_age,
            reused: AtomicU64::new(0),
            asked: AtomicU64::new(0),
        })
    }

    /// Wraps `provider` so its answers go through the cache.
    pub fn wrap(self: &Arc<Self>, provider: Arc<dyn ModelProvider>) -> Arc<dyn ModelProvider> {
        Arc::new(Cached {
            inner: provider,
            cache: Arc::clone(self),
        })
    }

    /// Answers reused and requests that went to a model, so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.reused.load(Ordering::SeqCst),
            self.asked.load(Ordering::SeqCst),
        )
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    fn read(&self, key: &str) -> Option<ModelReply> {
        let path = self.path(key);
        let meta = std::fs::metadata(&path).ok()?;
        if let Some(max_age) = self.max_age {
            let age = SystemTime::now()
                .duration_since(meta.modified().ok()?)
                .ok()?;
            if age > max_age {
                return None;
            }
        }
        let bytes = crate::user_file::read(&path).ok()?;
        let kept: Kept = serde_json::from_slice(&bytes).ok()?;
        Some(ModelReply {
            content: kept.content,
            tool_calls: (kept.tool_calls.into_iter())
                .map(|c| ToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            usage: kept.usage,
            finish_reason: kept.finish_reason,
            kept: true,
        })
    }

    fn write(&self, key: &str, reply: &ModelReply) {
        let kept = Kept {
            content: reply.content.clone(),
            tool_calls: (reply.tool_calls.iter())
                .map(|c| KeptCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
            usage: reply.usage,
            finish_reason: reply.finish_reason.clone(),
        };
        let Ok(bytes) = serde_json::to_vec_pretty(&kept) else {
            return;
        };
        // A cache that cannot be written only costs the next run a request.
        if std::fs::create_dir_all(&self.dir).is_ok() {
            let _ = crate::atomic_file::replace_at(&self.path(key), &bytes);
        }
    }
}

/// How many model answers a live case's runs got (its judge's too), and how
/// many of them a cache gave rather than a model asked now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheUse {
    /// Answers a cache gave.
    pub reused: u64,
    /// Answers in all.
    pub answers: u64,
}

impl CacheUse {
    /// The two counts added up.
    pub fn plus(self, other: CacheUse) -> CacheUse {
        CacheUse {
            reused: self.reused + other.reused,
            answers: self.answers + other.answers,
        }
    }

    /// As the text format prints it when some answer was reused:
    /// `cache: 2 of 3 answers reused`.
    pub fn text(&self) -> String {
        format!("cache: {} of {} answers reused", self.reused, self.answers)
    }
}

/// Counts a case's answers ([`CacheUse`]) as its Host's models give them.
#[derive(Debug, Default)]
pub(crate) struct CacheCount {
    reused: AtomicU64,
    answers: AtomicU64,
}

impl CacheCount {
    /// Wraps `provider` so each answer it gives is counted here.
    pub(crate) fn wrap(
        self: &Arc<Self>,
        provider: Arc<dyn ModelProvider>,
    ) -> Arc<dyn ModelProvider> {
        Arc::new(Counted {
            inner: provider,
            count: Arc::clone(self),
        })
    }

    /// The counts so far.
    pub(crate) fn get(&self) -> CacheUse {
        CacheUse {
            reused: self.reused.load(Ordering::SeqCst),
            answers: self.answers.load(Ordering::SeqCst),
        }
    }
}

struct Counted {
    inner: Arc<dyn ModelProvider>,
    count: Arc<CacheCount>,
}

#[async_trait]
impl ModelProvider for Counted {
    fn kind(&self) -> &str {
        self.inner.kind()
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let reply = self.inner.complete(request, cancel).await?;
        self.count.answers.fetch_add(1, Ordering::SeqCst);
        if reply.kept {
            self.count.reused.fetch_add(1, Ordering::SeqCst);
        }
        Ok(reply)
    }

    fn wire_request(&self, request: &ModelRequest) -> Option<WireRequest> {
        self.inner.wire_request(request)
    }
}

/// The key of a request to a provider of `kind`: hex SHA-256.
fn key(kind: &str, wire: Option<&WireRequest>, request: &ModelRequest) -> String {
    let mut hasher = Sha256::new();
    hasher.update(kind.as_bytes());
    hasher.update([0]);
    match wire {
        Some(wire) => {
            hasher.update(wire.url.as_bytes());
            hasher.update([0]);
            hasher.update(wire.body.to_string().as_bytes());
        }
        None => hasher.update(request.as_json().to_string().as_bytes()),
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct Cached {
    inner: Arc<dyn ModelProvider>,
    cache: Arc<AnswerCache>,
}

#[async_trait]
impl ModelProvider for Cached {
    fn kind(&self) -> &str {
        self.inner.kind()
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let wire = self.inner.wire_request(request);
        let key = key(self.inner.kind(), wire.as_ref(), request);
        if let Some(reply) = self.cache.read(&key) {
            self.cache.reused.fetch_add(1, Ordering::SeqCst);
            return Ok(reply);
        }
        self.cache.asked.fetch_add(1, Ordering::SeqCst);
        let reply = self.inner.complete(request, cancel).await?;
        self.cache.write(&key, &reply);
        Ok(reply)
    }

    fn wire_request(&self, request: &ModelRequest) -> Option<WireRequest> {
        self.inner.wire_request(request)
    }
}
