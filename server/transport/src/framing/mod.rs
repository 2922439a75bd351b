//! The framing layer in front of a protocol server: it reads the client's frames
//! (`Content-Length` headers, then a body), answers a well-framed body that is
//! not a JSON-RPC message itself, forwards the others, and ends the session with
//! one clear cause when the stream cannot be re-synchronised (issue 9).
//!
//! [`judge`] decides on each body: tower-lsp 0.20 stops reading at the first
//! body it cannot decode, so it is only given bodies it decodes. A body is
//! forwarded as it came, except `shutdown` and `exit` sent with `"params": null`
//! or `{}`, whose `params` are dropped (issue 10: tower-lsp rejects them, and
//! Emacs Eglot sends `null`).
//!
//! The pieces of the pipeline: [`read_client`] (client frames -> the server's
//! input, answers -> the output queue), [`FrameReader`] (a server's own output
//! -> whole bodies, as the language server's relay reads tower-lsp) and
//! [`write_frames`] (the output queue -> the client), so that stdout has one
//! writer and answers are interleaved with the server's output only at frame
//! boundaries. [`decide`] and [`decide_bytes`]
//! run the reader's decisions alone (tests, fuzzing).

use std::fmt;
use std::io;

use futures_util::FutureExt;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
    BufWriter,
};
use tokio::sync::mpsc;

pub mod judge;

pub use judge::{judge, Verdict, INVALID_REQUEST, PARSE_ERROR};

/// The largest `Content-Length` accepted from the client (64 MiB): a larger one
/// ends the session instead of being allocated.
pub const MAX_CONTENT_LENGTH: usize = 64 * 1024 * 1024;

/// The longest header section accepted (every header line and the empty line
/// that ends it, line ends included).
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// How much of a body is reserved before its bytes arrive (a body grows as it is read).
const INITIAL_BODY_CAPACITY: usize = 64 * 1024;

/// How much of a header line or value an error message quotes.
const QUOTED_CHARS: usize = 60;

/// Why the client's stream cannot go on: the session ends with this cause.
#[derive(Debug)]
pub enum Fatal {
    /// The header section has no `Content-Length`.
    NoContentLength,
    /// The `Content-Length` value is not a decimal number.
    LengthNotANumber(String),
    /// The `Content-Length` value is over the limit (the value, the limit).
    LengthOverLimit(String, usize),
    /// Two `Content-Length` headers with different values.
    TwoLengths(usize, usize),
    /// A header line that is not `Name: value`.
    BadHeaderLine(String),
    /// The header section is longer than [`MAX_HEADER_BYTES`].
    HeaderTooLong,
    /// The input ended inside a header section.
    EndInHeader,
    /// The input ended inside a body (expected, got).
    EndInBody(usize, usize),
    /// Reading the input failed.
    Read(io::Error),
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const HEADER: &str = "malformed message header";
        match self {
            Fatal::NoContentLength => write!(f, "{HEADER}: no Content-Length"),
            Fatal::LengthNotANumber(value) => {
                write!(f, "{HEADER}: Content-Length {value:?} is not a number")
            }
            Fatal::LengthOverLimit(value, limit) => write!(
                f,
                "{HEADER}: Content-Length {value} is over the limit of {limit} bytes"
            ),
            Fatal::TwoLengths(first, second) => write!(
                f,
                "{HEADER}: two different Content-Length values ({first} and {second})"
            ),
            Fatal::BadHeaderLine(line) => {
                write!(f, "{HEADER}: {line:?} is not a \"Name: value\" line")
            }
            Fatal::HeaderTooLong => write!(
                f,
                "{HEADER}: the header section is longer than {MAX_HEADER_BYTES} bytes"
            ),
            Fatal::EndInHeader => write!(f, "the input ended inside a message header"),
            Fatal::EndInBody(expected, got) => write!(
                f,
                "the input ended inside a message body (expected {expected} bytes, got {got})"
            ),
            Fatal::Read(error) => write!(f, "cannot read the input: {error}"),
        }
    }
}

impl std::error::Error for Fatal {}

/// At most [`QUOTED_CHARS`] characters of `bytes` (lossy UTF-8), for a message.
fn quoted(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars();
    let mut shown: String = chars.by_ref().take(QUOTED_CHARS).collect();
    if chars.next().is_some() {
        shown.push('…');
    }
    shown
}

/// `bytes` without leading and trailing spaces and tabs.
fn trim(bytes: &[u8]) -> &[u8] {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |at| at + 1);
    bytes.get(start..end).unwrap_or_default()
}

/// A character of a header name (an HTTP token, RFC 9110).
fn is_token(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// How reading one header line ended.
enum Line {
    /// A line ending with `\n` is in the buffer.
    Complete,
    /// The input ended (the buffer holds what came before).
    End,
}

/// Reads frames (`Content-Length` headers, then a body) from any byte stream.
///
/// Header names are case-insensitive; `Content-Length` is required,
/// `Content-Type` and unknown headers are ignored; lines end with `\r\n` (a bare
/// `\n` is accepted too).
pub struct FrameReader<R> {
    input: BufReader<R>,
    max_length: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader of the client's frames, bodies up to [`MAX_CONTENT_LENGTH`].
    pub fn new(input: R) -> Self {
        Self::with_limit(input, MAX_CONTENT_LENGTH)
    }

    /// A reader of frames whose bodies may be up to `max_length` bytes.
    pub fn with_limit(input: R, max_length: usize) -> Self {
        FrameReader {
            input: BufReader::new(input),
            max_length,
        }
    }

    /// The next frame's body; None when the input ends at a frame boundary.
    pub async fn next_frame(&mut self) -> Result<Option<Vec<u8>>, Fatal> {
        let mut length: Option<usize> = None;
        let mut header_bytes = 0;
        let mut line = Vec::new();
        loop {
            line.clear();
            let budget = MAX_HEADER_BYTES.saturating_sub(header_bytes);
            let ended = read_line(&mut self.input, &mut line, budget).await?;
            header_bytes += line.len();
            if let Line::End = ended {
                return if header_bytes == 0 {
                    Ok(None)
                } else {
                    Err(Fatal::EndInHeader)
                };
            }
            let content = line.strip_suffix(b"\n").unwrap_or(&line);
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            if content.is_empty() {
                break;
            }
            if let Some(value) = self.content_length(content)? {
                match length {
                    Some(first) if first != value => return Err(Fatal::TwoLengths(first, value)),
                    _ => length = Some(value),
                }
            }
        }
        let length = length.ok_or(Fatal::NoContentLength)?;
        let mut body = Vec::with_capacity(length.min(INITIAL_BODY_CAPACITY));
        (&mut self.input)
            .take(length as u64)
            .read_to_end(&mut body)
            .await
            .map_err(Fatal::Read)?;
        if body.len() < length {
            return Err(Fatal::EndInBody(length, body.len()));
        }
        Ok(Some(body))
    }

    /// The value of a `Content-Length` header line; None for another header.
    fn content_length(&self, line: &[u8]) -> Result<Option<usize>, Fatal> {
        let colon = line.iter().position(|b| *b == b':');
        let (name, value) = match colon {
            Some(at) => (
                line.get(..at).unwrap_or_default(),
                trim(line.get(at + 1..).unwrap_or_default()),
            ),
            None => return Err(Fatal::BadHeaderLine(quoted(line))),
        };
        if name.is_empty() || !name.iter().all(|b| is_token(*b)) {
            return Err(Fatal::BadHeaderLine(quoted(line)));
        }
        if !name.eq_ignore_ascii_case(b"Content-Length") {
            return Ok(None);
        }
        if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return Err(Fatal::LengthNotANumber(quoted(value)));
        }
        let parsed = std::str::from_utf8(value)
            .ok()
            .and_then(|digits| digits.parse::<usize>().ok());
        match parsed {
            Some(length) if length <= self.max_length => Ok(Some(length)),
            _ => Err(Fatal::LengthOverLimit(quoted(value), self.max_length)),
        }
    }
}

/// Appends one line (up to and including `\n`) to `line`, at most `budget` bytes.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    budget: usize,
) -> Result<Line, Fatal> {
    loop {
        let available = input.fill_buf().await.map_err(Fatal::Read)?;
        if available.is_empty() {
            return Ok(Line::End);
        }
        let (take, complete) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if line.len() + take > budget {
            return Err(Fatal::HeaderTooLong);
        }
        line.extend_from_slice(available.get(..take).unwrap_or_default());
        input.consume(take);
        if complete {
            return Ok(Line::Complete);
        }
    }
}

/// Writes `body` framed with its `Content-Length`.
async fn write_frame<W: AsyncWrite + Unpin>(output: &mut W, body: &[u8]) -> io::Result<()> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    output.write_all(header.as_bytes()).await?;
    output.write_all(body).await
}

/// Reads the client's frames from `input`: forwards each message (framed) to
/// `to_server`, queues the answer to each other body on `answers`, and returns
/// the cause when the stream cannot go on. Ok at the end of the input at a frame
/// boundary, or when `to_server` or `answers` is closed.
pub async fn read_client<R, W>(
    input: R,
    mut to_server: W,
    answers: mpsc::Sender<Vec<u8>>,
) -> Result<(), Fatal>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut frames = FrameReader::new(input);
    while let Some(body) = frames.next_frame().await? {
        match judge(body) {
            Verdict::Forward(body) => {
                let written = async {
                    write_frame(&mut to_server, &body).await?;
                    to_server.flush().await
                };
                if written.await.is_err() {
                    return Ok(());
                }
            }
            Verdict::Answer(response) => {
                if answers.send(response).await.is_err() {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// Writes each queued body to `output` as one frame, flushing whenever the
/// queue is empty, until every sender is gone. When `output` fails, the rest of
/// the queue is read and dropped, so that no sender waits forever.
pub async fn write_frames<W: AsyncWrite + Unpin>(mut bodies: mpsc::Receiver<Vec<u8>>, output: W) {
    let mut output = BufWriter::new(output);
    'writing: while let Some(body) = bodies.recv().await {
        if write_frame(&mut output, &body).await.is_err() {
            break;
        }
        while let Ok(body) = bodies.try_recv() {
            if write_frame(&mut output, &body).await.is_err() {
                break 'writing;
            }
        }
        if output.flush().await.is_err() {
            break;
        }
    }
    while bodies.recv().await.is_some() {}
}

/// One decision of the frame reader, for tests and fuzzing.
#[derive(Debug)]
pub enum Decision {
    /// This body goes to tower-lsp.
    Forward(Vec<u8>),
    /// This error response goes to the client.
    Answer(Vec<u8>),
    /// The session ends with this cause (always the last decision).
    Fatal(Fatal),
}

/// Every decision the frame reader takes on `input`, up to its end or a fatal error.
pub async fn decide<R: AsyncRead + Unpin>(input: R) -> Vec<Decision> {
    let mut frames = FrameReader::new(input);
    let mut decisions = Vec::new();
    loop {
        match frames.next_frame().await {
            Ok(None) => return decisions,
            Ok(Some(body)) => decisions.push(match judge(body) {
                Verdict::Forward(body) => Decision::Forward(body),
                Verdict::Answer(response) => Decision::Answer(response),
            }),
            Err(fatal) => {
                decisions.push(Decision::Fatal(fatal));
                return decisions;
            }
        }
    }
}

/// [`decide`] on bytes in memory (which never makes the reader wait).
pub fn decide_bytes(input: &[u8]) -> Vec<Decision> {
    decide(input).now_or_never().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        framed.extend_from_slice(body);
        framed
    }

    #[test]
    fn headers_take_lf_alone_and_any_case_and_ignore_others() {
        let input = b"content-length: 2\nX-Other: y\n\n{}Content-Length:2\r\n\r\n[]";
        let decisions = decide_bytes(input);
        assert_eq!(decisions.len(), 2, "{decisions:?}");
        assert!(matches!(&decisions[0], Decision::Answer(_)));
        assert!(matches!(&decisions[1], Decision::Answer(_)));
    }

    #[test]
    fn unrecoverable_streams_end_with_their_cause() {
        let cause = |input: &[u8]| match decide_bytes(input).pop() {
            Some(Decision::Fatal(fatal)) => fatal.to_string(),
            other => format!("no fatal error: {other:?}"),
        };
        assert_eq!(
            cause(b"Content-Type: x\r\n\r\n{}"),
            "malformed message header: no Content-Length"
        );
        assert_eq!(
            cause(b"Content-Length: +2\r\n\r\n{}"),
            "malformed message header: Content-Length \"+2\" is not a number"
        );
        assert_eq!(
            cause(b"Content-Length: 99999999999999999999999\r\n\r\n"),
            "malformed message header: Content-Length 99999999999999999999999 is over the limit of 67108864 bytes"
        );
        assert_eq!(
            cause(b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
            "malformed message header: two different Content-Length values (2 and 3)"
        );
        assert_eq!(
            cause(b"{\"jsonrpc\":\"2.0\"}\r\n\r\n"),
            "malformed message header: \"{\\\"jsonrpc\\\":\\\"2.0\\\"}\" is not a \"Name: value\" line"
        );
        assert_eq!(
            cause(&vec![b'a'; MAX_HEADER_BYTES + 1]),
            "malformed message header: the header section is longer than 8192 bytes"
        );
        assert_eq!(
            cause(b"Content-Length: 2\r\n"),
            "the input ended inside a message header"
        );
        assert_eq!(
            cause(&frame(b"{}")[..22]),
            "the input ended inside a message body (expected 2 bytes, got 1)"
        );
        assert!(decide_bytes(&frame(b"{}")).len() == 1);
        assert!(decide_bytes(b"").is_empty());
    }
}
