//! A small scripted HTTP/1.1 server on a loopback socket, for wire tests.
//!
//! It records every request exactly as it arrived (method, raw target, headers, body
//! bytes) and answers each one from a handler: a status, headers and body, optionally
//! after a delay, or an abrupt close (a TCP reset) to simulate a dropped connection. It
//! listens on `127.0.0.1:0` only and stops when the [`MockServer`] is dropped.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// The largest request head or body the server reads; anything larger closes the
/// connection, so a broken client cannot make a test use unbounded memory.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The raw request target: path and query exactly as sent, e.g. `/v1/a%2Fb?x=1`.
    pub target: String,
    /// The headers in arrival order (names as sent).
    pub headers: Vec<(String, String)>,
    /// The body bytes (chunked bodies already decoded).
    pub body: Vec<u8>,
    /// When the request was complete.
    pub at: Instant,
    /// Which connection (in accept order, from 0) carried it.
    pub connection: usize,
}

impl Recorded {
    /// The target without its query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The raw query (after `?`), if any.
    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, q)| q)
    }

    /// The value of a query key as sent (still percent-encoded).
    pub fn query_value(&self, key: &str) -> Option<&str> {
        self.query()?.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == key).then_some(v)
        })
    }

    /// Every header, as a web framework hands them to a handler (those that are not valid
    /// header names or values left out).
    pub fn header_map(&self) -> reqwest::header::HeaderMap {
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &self.headers {
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        headers
    }

    /// The first header with this name (any casing).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// Whether the request has this method and path (query ignored).
    pub fn is(&self, method: &str, path: &str) -> bool {
        self.method == method && self.path() == path
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
    Respond,
    Reset,
    /// Streams `total` bytes of filler after the head, declaring the length or chunked.
    Stream {
        total: u64,
        declared: bool,
    },
}

/// The most a streamed answer sends, and the longest it streams, whatever the client
/// does: the server stops by itself.
const STREAM_CAP_BYTES: u64 = 4 * 1024 * 1024 * 1024;
const STREAM_CAP_TIME: Duration = Duration::from_secs(30);

/// How the server answers one request.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    delay: Option<Duration>,
    action: Action,
}

impl Reply {
    /// An answer with a JSON body.
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Reply::text(status, &body.to_string()).header("Content-Type", "application/json")
    }

    /// An answer with the given body text, sent as is.
    pub fn text(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
            delay: None,
            action: Action::Respond,
        }
    }

    /// An answer with no body.
    pub fn empty(status: u16) -> Self {
        Reply::text(status, "")
    }

    /// The standard envelope `{code: "00", description: "Success", data}` with HTTP 200.
    pub fn ok(data: serde_json::Value) -> Self {
        Reply::json(200, serde_json::json!({"code": "00", "description": "Success", "data": data}))
    }

    /// No answer: the connection is closed abruptly (TCP reset) after the request was read.
    pub fn reset() -> Self {
        Reply { action: Action::Reset, ..Reply::empty(500) }
    }

    /// An answer whose body is `total` bytes of JSON-looking filler, with a
    /// `Content-Length` that says so: a huge answer without holding it in memory.
    pub fn huge(status: u16, total: u64) -> Self {
        Reply { action: Action::Stream { total, declared: true }, ..Reply::empty(status) }
    }

    /// A chunked answer that never ends (until the client goes away, or the server's own
    /// caps of 4 GiB and 30 s).
    pub fn endless_chunked(status: u16) -> Self {
        Reply { action: Action::Stream { total: u64::MAX, declared: false }, ..Reply::empty(status) }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Waits this long before answering (or resetting).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }
}

type Handler = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

struct Shared {
    log: Mutex<Vec<Recorded>>,
    handler: Box<Handler>,
    /// Body bytes written by streamed answers.
    streamed: std::sync::atomic::AtomicU64,
}

impl Shared {
    fn log(&self) -> MutexGuard<'_, Vec<Recorded>> {
        // A panicking handler must not hide the requests from the test's assertions.
        self.log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A scripted loopback HTTP/1.1 server. Dropping it stops it and every connection.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockServer {
    /// Starts a server whose answers come from `handler`. The handler gets the request
    /// and how many earlier requests had the same method and path (query ignored), which
    /// makes sequences easy: `if nth == 0 { Reply::empty(503) } else { ... }`.
    pub async fn start(
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> io::Result<MockServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            log: Mutex::new(Vec::new()),
            handler: Box::new(handler),
            streamed: std::sync::atomic::AtomicU64::new(0),
        });
        let accept_shared = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            // Connections live in this set, so aborting the accept task ends them all.
            let mut connections = JoinSet::new();
            let mut next_id = 0usize;
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let id = next_id;
                        next_id += 1;
                        connections.spawn(serve(stream, id, Arc::clone(&accept_shared)));
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(MockServer { addr, shared, task })
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, e.g. `http://127.0.0.1:40123`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.log().clone()
    }

    /// The requests with this method and path (query ignored).
    pub fn requests_to(&self, method: &str, path: &str) -> Vec<Recorded> {
        self.shared.log().iter().filter(|r| r.is(method, path)).cloned().collect()
    }

    /// How many requests had this method and path (query ignored).
    pub fn count(&self, method: &str, path: &str) -> usize {
        self.shared.log().iter().filter(|r| r.is(method, path)).count()
    }

    /// How many body bytes streamed answers managed to write before the client stopped
    /// reading (or the server's caps were reached).
    pub fn streamed_bytes(&self) -> u64 {
        self.shared.streamed.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads more bytes into `buf`; false on end of stream, error, or too much data.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 8192];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            buf.len() <= MAX_REQUEST_BYTES
        }
    }
}

struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

fn parse_head(head: &[u8]) -> Option<Head> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let target = request_line.next()?.to_owned();
    let headers = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Some(Head { method, target, headers })
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// Reads a body of `len` bytes from `buf` and the stream.
async fn read_sized(stream: &mut TcpStream, buf: &mut Vec<u8>, len: usize) -> Option<Vec<u8>> {
    if len > MAX_REQUEST_BYTES {
        return None;
    }
    while buf.len() < len {
        if !fill(stream, buf).await {
            return None;
        }
    }
    Some(buf.drain(..len).collect())
}

/// Reads a chunked body from `buf` and the stream.
async fn read_chunked(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = find(buf, b"\r\n") {
                break i;
            }
            if !fill(stream, buf).await {
                return None;
            }
        };
        let size_text = std::str::from_utf8(&buf[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        buf.drain(..line_end + 2);
        if size == 0 {
            // Trailers are not used by the client; skip to the final empty line.
            loop {
                if let Some(i) = find(buf, b"\r\n") {
                    let empty = i == 0;
                    buf.drain(..i + 2);
                    if empty {
                        return Some(body);
                    }
                } else if !fill(stream, buf).await {
                    return None;
                }
            }
        }
        let chunk = read_sized(stream, buf, size + 2).await?;
        body.extend_from_slice(&chunk[..size]);
        if body.len() > MAX_REQUEST_BYTES {
            return None;
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

async fn serve(mut stream: TcpStream, connection: usize, shared: Arc<Shared>) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i;
            }
            if !fill(&mut stream, &mut buf).await {
                return;
            }
        };
        let Some(head) = parse_head(&buf[..head_end]) else {
            return;
        };
        buf.drain(..head_end + 4);
        let chunked = header(&head.headers, "transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        let body = if chunked {
            read_chunked(&mut stream, &mut buf).await
        } else {
            let len = header(&head.headers, "content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
            read_sized(&mut stream, &mut buf, len).await
        };
        let Some(body) = body else {
            return;
        };
        let close_after =
            header(&head.headers, "connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let request = Recorded {
            method: head.method,
            target: head.target,
            headers: head.headers,
            body,
            at: Instant::now(),
            connection,
        };
        let nth = {
            let mut log = shared.log();
            let nth = log.iter().filter(|r| r.method == request.method && r.path() == request.path()).count();
            log.push(request.clone());
            nth
        };
        let reply = (shared.handler)(&request, nth);
        if let Some(delay) = reply.delay {
            tokio::time::sleep(delay).await;
        }
        if reply.action == Action::Reset {
            // SO_LINGER 0 turns the close into a TCP reset, as a crashed peer would send.
            #[allow(deprecated)]
            let _ = stream.set_linger(Some(Duration::ZERO));
            return;
        }
        if let Action::Stream { total, declared } = reply.action {
            write_stream(&mut stream, &reply, total, declared, &shared).await;
            return;
        }
        let mut out = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
        for (k, v) in &reply.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str(&format!("Content-Length: {}\r\n\r\n", reply.body.len()));
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&reply.body);
        if stream.write_all(&bytes).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        if close_after {
            return;
        }
    }
}

/// Writes a streamed answer: the head, then filler until `total`, the caps, or a failed
/// write (the client closed the connection).
async fn write_stream(stream: &mut TcpStream, reply: &Reply, total: u64, declared: bool, shared: &Shared) {
    let mut head =
        format!("HTTP/1.1 {} {}\r\nContent-Type: application/json\r\n", reply.status, reason(reply.status));
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if declared {
        head.push_str(&format!("Content-Length: {total}\r\n\r\n"));
    } else {
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
    }
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let filler = vec![b' '; 64 * 1024];
    let started = Instant::now();
    let mut sent = 0u64;
    while sent < total.min(STREAM_CAP_BYTES) && started.elapsed() < STREAM_CAP_TIME {
        let n = usize::try_from((total - sent).min(filler.len() as u64)).unwrap_or(filler.len());
        let written = if declared {
            stream.write_all(&filler[..n]).await
        } else {
            let mut framed = Vec::with_capacity(n + 16);
            framed.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            framed.extend_from_slice(&filler[..n]);
            framed.extend_from_slice(b"\r\n");
            stream.write_all(&framed).await
        };
        if written.is_err() {
            return;
        }
        sent += n as u64;
        shared.streamed.fetch_add(n as u64, std::sync::atomic::Ordering::SeqCst);
    }
}
