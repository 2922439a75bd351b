//! The workspace's one loopback HTTP test server: a real HTTP/1.1 server on
//! 127.0.0.1 that parses each request (request line, headers, body), records it,
//! and answers with a scripted reply, either the n-th reply for the n-th request or
//! the reply listed for the request's path. A stream is written as separate
//! `Transfer-Encoding: chunked` chunks with small delays between them.
//!
//! Async tests start it on their own runtime ([`Server::start`], [`Server::serve`]);
//! tests without one (e.g. those running the `promptforge` binary) start it on a
//! runtime of its own ([`Server::serve_blocking`]).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::task::{JoinHandle, JoinSet};

/// The sizes the stream bodies are cut into, in turn: boundaries land inside event
/// names, JSON strings, multi-byte characters and between CR and LF.
const CUTS: [usize; 7] = [7, 23, 3, 41, 13, 2, 31];

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body's pieces; more than one means a chunked stream.
    pub chunks: Vec<Vec<u8>>,
    /// True for a chunked body (a stream), false for a `Content-Length` one.
    pub chunked: bool,
    /// The wait before anything is written.
    pub delay_head: Duration,
    /// The wait between two chunks.
    pub gap: Duration,
    /// After this many chunks, the server stalls for `stall` before the rest.
    pub stall_after: Option<(usize, Duration)>,
    /// A chunk written this many times after the others (a stream that does not
    /// end), until the client hangs up.
    pub then_repeat: Option<(Vec<u8>, usize)>,
}

impl Reply {
    /// A reply with a whole body of content type `application/json`.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::body(status, "application/json", body)
    }

    /// A reply with a whole body of the given content type.
    pub fn body(status: u16, content_type: &str, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            chunks: vec![body.as_bytes().to_vec()],
            chunked: false,
            delay_head: Duration::ZERO,
            gap: Duration::ZERO,
            stall_after: None,
            then_repeat: None,
        }
    }

    /// A reply with a whole body of raw bytes (e.g. a latin-1 page).
    pub fn bytes(status: u16, content_type: &str, body: &[u8]) -> Reply {
        Reply {
            chunks: vec![body.to_vec()],
            ..Reply::body(status, content_type, "")
        }
    }

    /// A redirect (`status` 301, 302, 303, 307 or 308) to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::body(status, "text/plain", "").header("location", location)
    }

    /// A 200 `text/event-stream` reply of `body`, cut into many small chunks.
    pub fn sse(body: &str) -> Reply {
        let bytes = body.as_bytes();
        let mut chunks = Vec::new();
        let (mut at, mut turn) = (0, 0);
        while at < bytes.len() {
            let end = (at + CUTS[turn % CUTS.len()]).min(bytes.len());
            chunks.push(bytes[at..end].to_vec());
            at = end;
            turn += 1;
        }
        Reply {
            status: 200,
            headers: vec![
                (
                    "content-type".into(),
                    "text/event-stream; charset=utf-8".into(),
                ),
                ("cache-control".into(), "no-cache".into()),
            ],
            chunks,
            chunked: true,
            delay_head: Duration::ZERO,
            gap: Duration::from_millis(1),
            stall_after: None,
            then_repeat: None,
        }
    }

    /// A streamed OpenAI chat completion whose whole text is `text` (plain text:
    /// no quote or backslash to escape).
    pub fn chat_text(text: &str) -> Reply {
        let chunk = |delta: &str, finish: &str| {
            format!(
                "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
            )
        };
        let body = chunk(&format!("{{\"content\":\"{text}\"}}"), "null")
            + &chunk("{}", "\"stop\"")
            + "data: [DONE]\n\n";
        Reply::sse(&body)
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits `delay` before writing the status line.
    pub fn delay_head(mut self, delay: Duration) -> Reply {
        self.delay_head = delay;
        self
    }

    /// Stalls for `stall` after `chunks` chunks.
    pub fn stall_after(mut self, chunks: usize, stall: Duration) -> Reply {
        self.stall_after = Some((chunks, stall));
        self
    }

    /// Waits `gap` between two chunks (a stream that trickles).
    pub fn gap(mut self, gap: Duration) -> Reply {
        self.gap = gap;
        self
    }

    /// After the chunks, writes `chunk` `times` times more (the reply must be a
    /// stream), stopping early when the client hangs up: a stream that goes on
    /// for as long as a test needs, without holding it all.
    pub fn then_repeat(mut self, chunk: &[u8], times: usize) -> Reply {
        assert!(self.chunked, "only a stream repeats a chunk");
        self.then_repeat = Some((chunk.to_vec(), times));
        self
    }
}

/// How the server picks the reply to a request.
#[derive(Debug, Clone)]
pub enum Answers {
    /// The n-th request read gets the n-th reply; a 500 past the end.
    InOrder(Vec<Reply>),
    /// A request gets the reply listed for its whole target (`/path?query`), else
    /// the one listed for its path; a 404 when neither is listed.
    ByPath(Vec<(String, Reply)>),
}

impl Answers {
    /// Replies by path, from `(path, reply)` pairs.
    pub fn by_path<'a>(routes: impl IntoIterator<Item = (&'a str, Reply)>) -> Answers {
        Answers::ByPath(
            routes
                .into_iter()
                .map(|(path, reply)| (path.to_owned(), reply))
                .collect(),
        )
    }

    /// The reply to the `n`-th request (from 0), whose target is `target`.
    fn pick(&self, n: usize, target: &str) -> Reply {
        match self {
            Answers::InOrder(replies) => replies
                .get(n)
                .cloned()
                .unwrap_or_else(|| Reply::json(500, "no scripted reply")),
            Answers::ByPath(routes) => {
                let path = target.split('?').next().unwrap_or("/");
                let find = |wanted: &str| routes.iter().find(|(p, _)| p == wanted);
                find(target)
                    .or_else(|| find(path))
                    .map(|(_, reply)| reply.clone())
                    .unwrap_or_else(|| Reply::body(404, "text/plain", "not found"))
            }
        }
    }
}

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions` (with its query, if any).
    pub path: String,
    /// The headers, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When the request was read.
    pub at: Instant,
}

impl Recorded {
    /// The value of a header (name in lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

/// The running server; dropping it stops it and every connection.
pub struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
    /// The server's own runtime, when it was started by [`Server::serve_blocking`].
    runtime: Option<Runtime>,
}

impl Server {
    /// Starts a server answering the n-th request with `replies[n]` (a 500 past the end).
    pub async fn start(replies: Vec<Reply>) -> Server {
        Server::serve(Answers::InOrder(replies)).await
    }

    /// Starts a server on the current tokio runtime, answering as `answers` says.
    pub async fn serve(answers: Answers) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(answers);
        let count = Arc::new(AtomicUsize::new(0));
        let recorded = requests.clone();
        let accepted = Arc::new(AtomicUsize::new(0));
        let accepting = accepted.clone();
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((socket, _)) = listener.accept().await {
                accepting.fetch_add(1, Ordering::SeqCst);
                let (answers, count, recorded) = (answers.clone(), count.clone(), recorded.clone());
                connections.spawn(async move {
                    let Some((socket, request)) = read_request(socket).await else {
                        return;
                    };
                    let target = request.path.clone();
                    recorded.lock().unwrap().push(request);
                    let n = count.fetch_add(1, Ordering::SeqCst);
                    let _ = write_reply(socket, &answers.pick(n, &target)).await;
                });
            }
        });
        Server {
            addr,
            requests,
            accepted,
            task,
            runtime: None,
        }
    }

    /// Starts a server on a runtime of its own, for a test that has none; the
    /// runtime stops with the server.
    pub fn serve_blocking(answers: Answers) -> Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the server");
        let mut server = runtime.block_on(Server::serve(answers));
        server.runtime = Some(runtime);
        server
    }

    /// `http://127.0.0.1:{port}`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// The requests read so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// The target (`/path?query`) of every request read so far, in order.
    pub fn targets(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.path).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A URL on 127.0.0.1 where nothing listens (a port just released).
pub async fn refusing_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{addr}")
}

async fn read_request(mut socket: TcpStream) -> Option<(TcpStream, Recorded)> {
    let mut buffer = Vec::new();
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let (method, path) = (
        request_line.next()?.to_owned(),
        request_line.next()?.to_owned(),
    );
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Some((
        socket,
        Recorded {
            method,
            path,
            headers,
            body,
            at: Instant::now(),
        },
    ))
}

async fn write_reply(mut socket: TcpStream, reply: &Reply) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    tokio::time::sleep(reply.delay_head).await;
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\nconnection: close\r\n",
        reply.status
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if reply.chunked {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
    } else {
        let length: usize = reply.chunks.iter().map(Vec::len).sum();
        head.push_str(&format!("content-length: {length}\r\n\r\n"));
    }
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    let repeated = reply
        .then_repeat
        .iter()
        .flat_map(|(chunk, times)| std::iter::repeat_n(chunk, *times));
    for (i, chunk) in reply.chunks.iter().chain(repeated).enumerate() {
        if let Some((after, stall)) = reply.stall_after {
            if i == after {
                tokio::time::sleep(stall).await;
            }
        }
        if reply.chunked {
            socket
                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .await?;
            socket.write_all(chunk).await?;
            socket.write_all(b"\r\n").await?;
            socket.flush().await?;
            if !reply.gap.is_zero() {
                tokio::time::sleep(reply.gap).await;
            }
        } else {
            socket.write_all(chunk).await?;
        }
    }
    if reply.chunked {
        socket.write_all(b"0\r\n\r\n").await?;
    }
    socket.flush().await?;
    socket.shutdown().await
}
