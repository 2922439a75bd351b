//! The causes of a failed model call and the one-line message built from them.
//!
//! Every message has one of two shapes:
//! `model "{host model}" failed: {cause}` or, when the call was retried,
//! `model "{host model}" failed after {n} attempts: {cause}`, where the cause is one of
//!
//! - `HTTP {code} {reason}` or `HTTP {code} {reason}: {the server's message}`
//!   (one line, at most 200 characters),
//! - `connection refused ({url})`, `could not connect: {detail} ({url})`,
//!   `connection lost while reading the reply: {detail} ({url})`,
//!   `request failed: {detail} ({url})`,
//! - `timed out after {duration} ({url})` (the attempt's deadline, from the request
//!   to the reply's last byte),
//! - `the server reported an error: {message}` (an error inside a 200 stream),
//! - `the reply is larger than 16 MiB` (streamed or whole; not retried),
//! - `malformed reply: {what}`.
//!
//! The API key is replaced by `[redacted]` wherever it appears, before any cut.

use std::error::Error as _;
use std::fmt::Write as _;
use std::time::Duration;

use reqwest::StatusCode;

use promptforge_engine::messages;
use promptforge_engine::models::ModelError;

/// The longest server message kept in a cause, in characters.
const SERVER_MESSAGE_CHARS: usize = 200;

/// Why one attempt failed, and whether another attempt may help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The cause, one line.
    pub(crate) cause: String,
    /// True for transport errors, timeouts, 429 and 5xx.
    pub(crate) retryable: bool,
    /// The wait the server asked for (`Retry-After`), if any.
    pub(crate) retry_after: Option<Duration>,
}

impl Failure {
    /// A reply that does not follow the provider's wire format.
    pub(crate) fn malformed(what: impl std::fmt::Display) -> Self {
        Failure {
            cause: format!("malformed reply: {what}"),
            retryable: false,
            retry_after: None,
        }
    }

    /// A reply whose body goes past `limit` bytes: the same reply again would too.
    pub(crate) fn too_large(limit: usize) -> Self {
        Failure {
            cause: format!("the reply is larger than {}", size(limit)),
            retryable: false,
            retry_after: None,
        }
    }

    /// An error the server reported inside a successful stream; `retryable` for overload.
    pub(crate) fn server(message: &str, retryable: bool, secret: Option<&str>) -> Self {
        let message = cut(&redact(&one_line(message), secret), SERVER_MESSAGE_CHARS);
        Failure {
            cause: format!("the server reported an error: {message}"),
            retryable,
            retry_after: None,
        }
    }

    /// A reply with an error status; `body` is the server's error body, in which `secret`
    /// is redacted before the message is cut.
    pub(crate) fn http(
        status: StatusCode,
        body: &[u8],
        retry_after: Option<Duration>,
        secret: Option<&str>,
    ) -> Self {
        let mut cause = format!("HTTP {}", status.as_u16());
        if let Some(reason) = status.canonical_reason() {
            let _ = write!(cause, " {reason}");
        }
        let message = server_message(body, secret);
        if !message.is_empty() {
            let _ = write!(cause, ": {message}");
        }
        let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
        Failure {
            cause,
            retryable,
            retry_after,
        }
    }

    /// The attempt's deadline (the timeout) passed before the reply's end.
    pub(crate) fn timeout(after: Duration, url: &str) -> Self {
        Failure {
            cause: format!("timed out after {} ({})", duration(after), display_url(url)),
            retryable: true,
            retry_after: None,
        }
    }

    /// A transport error of reqwest; `reading` when the reply had already begun.
    pub(crate) fn transport(error: &reqwest::Error, url: &str, reading: bool) -> Self {
        let detail = innermost(error);
        let url = display_url(url);
        let cause = if reading {
            format!("connection lost while reading the reply: {detail} ({url})")
        } else if refused(error) {
            format!("connection refused ({url})")
        } else if error.is_connect() {
            format!("could not connect: {detail} ({url})")
        } else {
            format!("request failed: {detail} ({url})")
        };
        Failure {
            cause,
            retryable: true,
            retry_after: None,
        }
    }

    /// The failure as the call's error, naming the Host model, with `secret` redacted.
    pub(crate) fn into_error(
        self,
        host_model: &str,
        attempts: u32,
        secret: Option<&str>,
    ) -> ModelError {
        let message = if attempts > 1 {
            messages::model_failure_after(host_model, attempts, &self.cause)
        } else {
            messages::model_failure(host_model, &self.cause)
        };
        ModelError::naming_model(redact(&one_line(&message), secret))
    }
}

/// Replaces every occurrence of `secret` (when non-empty) with `[redacted]`.
pub(crate) fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if !secret.is_empty() => text.replace(secret, "[redacted]"),
        _ => text.to_owned(),
    }
}

/// Collapses runs of whitespace and control characters to one space.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(|c: char| c.is_whitespace() || c.is_control()) {
        if !word.is_empty() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
    }
    out
}

/// The message of an error body: `error.message` (OpenAI, Anthropic), `error` as a
/// string, a top-level `message` or `detail`, or else the body's text; one line,
/// `secret` redacted, cut to 200 characters.
fn server_message(body: &[u8], secret: Option<&str>) -> String {
    let text = String::from_utf8_lossy(body);
    let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let picked = json.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(|m| m.as_str())
    });
    let message = redact(&one_line(picked.unwrap_or(&text)), secret);
    cut(&message, SERVER_MESSAGE_CHARS)
}

/// The first `max` characters of `text`, with `…` when something was cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// A size in bytes as `16 MiB`, `64 KiB` or `100 bytes`.
fn size(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A duration as `2s`, `1.5s` or `300ms`.
fn duration(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{}s", d.as_secs())
    } else if d.as_secs() > 0 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The URL without any user name or password it may carry.
fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// True when the connection was refused.
fn refused(error: &reqwest::Error) -> bool {
    let mut source = error.source();
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = err.source();
    }
    false
}

/// The message of the innermost error of the chain (reqwest's outer messages repeat the URL).
fn innermost(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(err) = source {
        message = err.to_string();
        source = err.source();
    }
    one_line(&message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_messages() {
        let body = br#"{"error":{"message":"bad\nkey sk-123","type":"invalid_request_error"}}"#;
        let failure = Failure::http(StatusCode::UNAUTHORIZED, body, None, Some("sk-123"));
        assert!(!failure.retryable);
        let error = failure.into_error("local", 1, Some("sk-123"));
        assert_eq!(
            error.message,
            "model \"local\" failed: HTTP 401 Unauthorized: bad key [redacted]"
        );
        let failure = Failure::http(StatusCode::SERVICE_UNAVAILABLE, b"", None, None);
        assert!(failure.retryable);
        assert_eq!(
            failure.into_error("m", 3, None).message,
            "model \"m\" failed after 3 attempts: HTTP 503 Service Unavailable"
        );
        let long = format!("{}KEY-12345678", "x".repeat(195));
        let failure = Failure::http(
            StatusCode::BAD_REQUEST,
            long.as_bytes(),
            None,
            Some("KEY-12345678"),
        );
        assert_eq!(
            failure.cause,
            format!("HTTP 400 Bad Request: {}[reda…", "x".repeat(195))
        );
    }

    #[test]
    fn durations_and_urls() {
        assert_eq!(duration(Duration::from_secs(2)), "2s");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(duration(Duration::from_millis(300)), "300ms");
        assert_eq!(display_url("http://u:p@h:1/v1"), "http://h:1/v1");
        assert_eq!(display_url("http://h:1/v1"), "http://h:1/v1");
        assert_eq!(size(16 * 1024 * 1024), "16 MiB");
        assert_eq!(size(64 * 1024), "64 KiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
