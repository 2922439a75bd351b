//! Sending one round over HTTP: the attempt (request, status, streamed body read with a
//! timeout), the retries with backoff, and cancellation.
//!
//! Transport errors, timeouts, 429 and 5xx are retried up to `retries` times, waiting
//! an exponential backoff with jitter (250 ms doubling, at most 8 s), or what the
//! server asked for in `retry-after-ms` / `Retry-After` (seconds; at most 30 s).
//! Other statuses and malformed replies are not retried. The timeout is each attempt's
//! one deadline: the request, the reply's status and headers and its whole body,
//! streamed or not, must come within it, so a server that trickles a chunk now and
//! then cannot keep a call alive for ever. A reply's body, streamed or
//! whole, is read up to [`REPLY_BODY_LIMIT`]: past it the call fails at once, not
//! retried. Cancellation ends the call at once, whether it is connecting, streaming or
//! waiting to retry.

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, CONTENT_TYPE, RETRY_AFTER};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::failure::Failure;
use crate::sse::{SseEvent, SseParser};
use promptforge_engine::models::{ModelError, ModelReply};

/// The first backoff; each retry doubles it.
const BACKOFF_BASE: Duration = Duration::from_millis(250);
/// The longest backoff.
const BACKOFF_CAP: Duration = Duration::from_secs(8);
/// The longest wait a `Retry-After` header can impose.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);
/// How much of an error body is read.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// The most of a reply's body that is read, streamed (SSE) or whole (JSON): a reply
/// past it fails the call.
pub(crate) const REPLY_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// What a decoder wants after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Keep reading.
    More,
    /// The reply is complete (`[DONE]`, `message_stop`): stop reading.
    Done,
}

/// A provider's reading of one reply: streamed events, or a whole JSON body from a
/// server that answered without streaming.
pub(crate) trait Decoder {
    /// Takes the next event of the stream.
    fn event(&mut self, event: SseEvent) -> Result<Flow, Failure>;
    /// The reply, once the stream is done or has ended.
    fn end(self) -> Result<ModelReply, Failure>;
    /// The reply of a non-streamed (`application/json`) body.
    fn whole(self, body: &[u8]) -> Result<ModelReply, Failure>;
}

/// The HTTP side of a provider: the client and the Host model's settings.
#[derive(Debug)]
pub(crate) struct Transport {
    /// The client, or why it could not be built.
    client: Result<reqwest::Client, String>,
    /// The Host model's name, for messages.
    host_model: String,
    /// The deadline of one attempt, from its request to the reply's last byte.
    timeout: Duration,
    /// Retries after the first attempt.
    retries: u32,
    /// The API key, redacted from every message.
    secret: Option<String>,
}

impl Transport {
    /// A transport with a rustls client; an empty `secret` counts as none.
    pub(crate) fn new(
        host_model: String,
        timeout: Duration,
        retries: u32,
        secret: Option<String>,
    ) -> Self {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .user_agent(concat!("promptforge/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| crate::failure::one_line(&e.to_string()));
        let secret = secret.filter(|s| !s.is_empty());
        Transport {
            client,
            host_model,
            timeout,
            retries,
            secret,
        }
    }

    /// The API key, when one is set.
    pub(crate) fn secret(&self) -> Option<&str> {
        self.secret.as_deref()
    }

    /// Posts `body` to `url` and decodes the reply with a fresh decoder per attempt.
    pub(crate) async fn send<D: Decoder>(
        &self,
        url: &str,
        headers: HeaderMap,
        body: Vec<u8>,
        new_decoder: impl Fn() -> D,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::cancelled());
        }
        let client = match &self.client {
            Ok(client) => client,
            Err(why) => {
                let failure = Failure {
                    cause: format!("could not set up the HTTP client: {why}"),
                    retryable: false,
                    retry_after: None,
                };
                return Err(failure.into_error(&self.host_model, 1, self.secret()));
            }
        };
        let body = Bytes::from(body);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ModelError::cancelled()),
                outcome = self.attempt(client, url, &headers, body.clone(), new_decoder()) => outcome,
            };
            let failure = match outcome {
                Ok(reply) => return Ok(reply),
                Err(failure) => failure,
            };
            if !failure.retryable || attempt > self.retries {
                return Err(failure.into_error(&self.host_model, attempt, self.secret()));
            }
            let wait = match failure.retry_after {
                Some(asked) => asked.min(RETRY_AFTER_CAP),
                None => backoff(attempt),
            };
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ModelError::cancelled()),
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// One attempt: the request, its status, and the body read to the reply's end.
    async fn attempt<D: Decoder>(
        &self,
        client: &reqwest::Client,
        url: &str,
        headers: &HeaderMap,
        body: Bytes,
        mut decoder: D,
    ) -> Result<ModelReply, Failure> {
        let deadline = deadline_after(self.timeout);
        let request = client.post(url).headers(headers.clone()).body(body);
        let response = match tokio::time::timeout_at(deadline, request.send()).await {
            Err(_) => return Err(Failure::timeout(self.timeout, url)),
            Ok(Err(error)) => return Err(Failure::transport(&error, url, false)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let mut stream = response.bytes_stream();
        if !status.is_success() {
            // The error body only adds detail: a failure to read it leaves it out.
            let body = self
                .read_all(&mut stream, url, deadline, ERROR_BODY_LIMIT)
                .await
                .unwrap_or_default();
            return Err(Failure::http(status, &body, retry_after, self.secret()));
        }
        if content_type.starts_with("application/json") {
            let body = self
                .read_all(&mut stream, url, deadline, REPLY_BODY_LIMIT)
                .await?;
            if body.len() > REPLY_BODY_LIMIT {
                return Err(Failure::too_large(REPLY_BODY_LIMIT));
            }
            return decoder.whole(&body);
        }
        if content_type.starts_with("text/html") {
            // A proxy's or a portal's page, not the API.
            return Err(Failure::malformed(
                "an HTML page instead of an event stream",
            ));
        }
        let mut parser = SseParser::new();
        let mut read = 0usize;
        while let Some(chunk) = self.next_chunk(&mut stream, url, deadline).await? {
            read = read.saturating_add(chunk.len());
            if read > REPLY_BODY_LIMIT {
                return Err(Failure::too_large(REPLY_BODY_LIMIT));
            }
            for event in parser.feed(&chunk) {
                if decoder.event(event)? == Flow::Done {
                    return decoder.end();
                }
            }
        }
        if let Some(event) = parser.finish() {
            decoder.event(event)?;
        }
        decoder.end()
    }

    /// The next chunk of the body, `None` at its end; a timeout once `deadline` passes.
    async fn next_chunk<S>(
        &self,
        stream: &mut S,
        url: &str,
        deadline: Instant,
    ) -> Result<Option<Bytes>, Failure>
    where
        S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
    {
        match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) => Err(Failure::timeout(self.timeout, url)),
            Ok(None) => Ok(None),
            Ok(Some(Err(error))) => Err(Failure::transport(&error, url, true)),
            Ok(Some(Ok(chunk))) => Ok(Some(chunk)),
        }
    }

    /// The whole body up to `limit` bytes, and one byte more when there is more (the
    /// rest is not read), so a caller can tell a body cut at `limit` from one that ends
    /// there.
    async fn read_all<S>(
        &self,
        stream: &mut S,
        url: &str,
        deadline: Instant,
        limit: usize,
    ) -> Result<Vec<u8>, Failure>
    where
        S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
    {
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk(stream, url, deadline).await? {
            let room = (limit + 1).saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() > limit {
                break;
            }
        }
        Ok(body)
    }
}

/// The instant `timeout` from now; about thirty years from now when `timeout` goes
/// past what an instant can hold (`timeout_s` has no upper bound).
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 24 * 3600))
}

/// The wait before retry `attempt` (1-based): exponential, capped, with jitter in its
/// upper half.
fn backoff(attempt: u32) -> Duration {
    let exponential = BACKOFF_BASE.saturating_mul(1 << attempt.saturating_sub(1).min(16));
    let full = exponential.min(BACKOFF_CAP);
    full / 2 + full.mul_f64(rand::random_range(0.0..0.5))
}

/// The wait asked for by `retry-after-ms` (milliseconds) or `Retry-After` (seconds;
/// an HTTP date is not honoured).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(
            (ms / 1000.0).min(RETRY_AFTER_CAP.as_secs_f64()),
        ));
    }
    number(RETRY_AFTER.as_str())
        .map(|s| Duration::from_secs_f64(s.min(RETRY_AFTER_CAP.as_secs_f64())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_a_cap() {
        for attempt in 1..40 {
            let full = BACKOFF_BASE
                .saturating_mul(1 << (attempt - 1).min(16))
                .min(BACKOFF_CAP);
            let wait = backoff(attempt);
            assert!(
                wait >= full / 2 && wait <= full,
                "attempt {attempt}: {wait:?}"
            );
        }
    }

    #[test]
    fn a_deadline_past_what_an_instant_holds_is_far_away() {
        let far = deadline_after(Duration::from_secs(u64::MAX));
        assert!(far > Instant::now() + Duration::from_secs(365 * 24 * 3600));
        let near = deadline_after(Duration::from_millis(10));
        assert!(near <= Instant::now() + Duration::from_millis(10));
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(RETRY_AFTER, "3600".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(RETRY_AFTER_CAP));
        headers.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
    }
}
