//! A small real HTTP/1.1 server on 127.0.0.1 for the end-to-end suites: each
//! path answers with a fixed status, content type and body, and every request
//! line is recorded so a test can say what the binary asked for.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

/// One fixed answer.
#[derive(Debug, Clone)]
pub struct Page {
    /// The status code.
    pub status: u16,
    /// The `Content-Type` header.
    pub content_type: String,
    /// The body.
    pub body: String,
}

impl Page {
    /// A 200 answer.
    pub fn ok(content_type: &str, body: &str) -> Self {
        Page {
            status: 200,
            content_type: content_type.to_owned(),
            body: body.to_owned(),
        }
    }
}

/// A running server; it stops with the test process.
#[derive(Debug, Clone)]
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts a server answering `pages` by path (the query string included when
    /// the key has one, else ignored); any other path gets a 404.
    pub fn start(pages: HashMap<String, Page>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("the port").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let pages = Arc::new(pages);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let pages = pages.clone();
                let recorded = recorded.clone();
                thread::spawn(move || serve(stream, &pages, &recorded));
            }
        });
        Server {
            base: format!("http://127.0.0.1:{port}"),
            requests,
        }
    }

    /// Every request target received so far (`/path?query`), in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

fn serve(stream: TcpStream, pages: &HashMap<String, Page>, recorded: &Mutex<Vec<String>>) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let target = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("/")
            .to_owned();
        let mut header = String::new();
        while reader.read_line(&mut header).unwrap_or(0) > 0 && header.trim_end() != "" {
            header.clear();
        }
        if let Ok(mut r) = recorded.lock() {
            r.push(target.clone());
        }
        let path = target.split('?').next().unwrap_or("/");
        let page = pages
            .get(&target)
            .or_else(|| pages.get(path))
            .cloned()
            .unwrap_or(Page {
                status: 404,
                content_type: "text/plain".into(),
                body: "not found".into(),
            });
        let head = format!(
            "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n",
            page.status,
            page.content_type,
            page.body.len()
        );
        if stream.write_all(head.as_bytes()).is_err()
            || stream.write_all(page.body.as_bytes()).is_err()
        {
            return;
        }
    }
}
