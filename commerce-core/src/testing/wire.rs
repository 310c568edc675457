//! Checks of a server on a real socket: what clients that lie about, break or trickle their
//! requests get. Each check takes the address of a running server that mounts the API at
//! `{prefix}/api/v1` over an engine with the sandbox seeded (its demo keys), and writes raw
//! HTTP/1.1 bytes, which no HTTP client library would send.
//!
//! A server passes [`assert_bodies_are_read_after_the_head`] when it hands requests to
//! [`Engine::serve`](crate::Engine::serve) (or the head phase by hand);
//! [`stalled_body_is_408`] needs the engine's [`Config::body_timeout`](crate::config::Config::body_timeout)
//! short, and [`stalled_head_is_closed`] a server with a header-read timeout.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The sandbox's marketer A key (all four abilities).
const KEY: &str = crate::sandbox::DEMO_KEYS[0].0;

/// One response read off the socket.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WireAnswer {
    /// The status line's code.
    pub status: u16,
    /// The headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (`Content-Length` bytes of it).
    pub body: Bytes,
}

impl WireAnswer {
    /// A `WireAnswer` of its fields, in their order.
    pub fn new(status: u16, headers: Vec<(String, String)>, body: Bytes) -> Self {
        Self {
            status,
            headers,
            body,
        }
    }
}

impl WireAnswer {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// Asserts the engine's JSON error shape with `status` and `code`, and its request id
    /// (the `Request-Id` header, repeated as `error.request_id`).
    pub fn assert_error(&self, status: u16, code: &str) {
        let body = self.json();
        assert_eq!(
            (self.status, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/json; charset=utf-8")
        );
        let id = self.header("request-id").unwrap_or_default();
        assert!(id.starts_with("req_"), "Request-Id {id:?}");
        assert_eq!(body["error"]["request_id"], id, "{body}");
    }
}

/// A connection to `addr`.
pub async fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.expect("the server accepts")
}

/// Reads the next response (skipping none: a `100 Continue` is returned as such) within
/// `wait`; `None` when the server closed the connection or said nothing in time.
pub async fn read_answer(stream: &mut TcpStream, wait: Duration) -> Option<WireAnswer> {
    tokio::time::timeout(wait, read_answer_now(stream))
        .await
        .ok()
        .flatten()
}

async fn read_answer_now(stream: &mut TcpStream) -> Option<WireAnswer> {
    let mut buffer = BytesMut::new();
    let head_end = loop {
        if let Some(end) = find(&buffer, b"\r\n\r\n") {
            break end;
        }
        if stream.read_buf(&mut buffer).await.ok()? == 0 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let _ = buffer.split_to(head_end + 4);
    while buffer.len() < length {
        if stream.read_buf(&mut buffer).await.ok()? == 0 {
            return None;
        }
    }
    Some(WireAnswer {
        status,
        headers,
        body: buffer.split_to(length).freeze(),
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether the server closes `stream` within `wait` (end of stream or a reset).
pub async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut sink = [0u8; 1024];
    tokio::time::timeout(wait, async {
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// Writes `bytes` on a new connection and reads the answer within `wait`.
pub async fn exchange(addr: SocketAddr, bytes: &[u8], wait: Duration) -> Option<WireAnswer> {
    let mut stream = connect(addr).await;
    stream.write_all(bytes).await.expect("the server reads");
    read_answer(&mut stream, wait).await
}

/// The head of a request: `method {prefix}{path}`, `Host`, the demo marketer's key when
/// `keyed`, then `extra` header lines, then the blank line.
pub fn head(method: &str, prefix: &str, path: &str, keyed: bool, extra: &[&str]) -> String {
    let mut head = format!("{method} {prefix}{path} HTTP/1.1\r\nhost: localhost\r\n");
    if keyed {
        head.push_str(&format!("authorization: Bearer {KEY}\r\n"));
    }
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head
}

/// The head of `POST {prefix}/api/v1/orders` (see [`head`]).
fn orders_head(prefix: &str, keyed: bool, extra: &[&str]) -> String {
    head("POST", prefix, "/api/v1/orders", keyed, extra)
}

/// An engine over a fresh `MemoryStore` with the sandbox seeded and `body_timeout` as its
/// [`Config::body_timeout`](crate::config::Config::body_timeout), for a server under these checks.
pub async fn sandbox_engine(body_timeout: Duration) -> crate::Engine {
    let engine = crate::Engine::builder(std::sync::Arc::new(crate::store::MemoryStore::new()))
        .configure(|c| c.body_timeout = Some(body_timeout))
        .build()
        .expect("valid settings");
    crate::sandbox::seed(&engine)
        .await
        .expect("the sandbox seeds");
    engine
}

/// How long a check waits for an answer that should come at once.
const PROMPTLY: Duration = Duration::from_secs(5);

/// A chunked body whose chunk size is not hexadecimal is a `400 bad_request` with the JSON
/// error body, not a 413.
pub async fn malformed_chunked_body_is_400(addr: SocketAddr, prefix: &str) {
    let mut request = orders_head(
        prefix,
        true,
        &[
            "content-type: application/json",
            "transfer-encoding: chunked",
        ],
    );
    request.push_str("zz\r\n{}\r\n0\r\n\r\n");
    let answer = exchange(addr, request.as_bytes(), PROMPTLY)
        .await
        .expect("an answer");
    answer.assert_error(400, "bad_request");
    assert_eq!(answer.header("x-ratelimit-limit"), Some("120"));
}

/// `Content-Length: 99999999999` and no body: a `413 payload_too_large` at once (the declared
/// length is over the limit), whether or not the request has a key.
pub async fn huge_declared_length_is_413_at_once(addr: SocketAddr, prefix: &str) {
    for keyed in [true, false] {
        let request = orders_head(
            prefix,
            keyed,
            &[
                "content-type: application/json",
                "content-length: 99999999999",
            ],
        );
        let started = Instant::now();
        let answer = exchange(addr, request.as_bytes(), PROMPTLY)
            .await
            .expect("an answer without the body");
        answer.assert_error(413, "payload_too_large");
        assert!(started.elapsed() < PROMPTLY);
    }
}

/// `Expect: 100-continue` with a 2 MB body declared: `413` straight away, never
/// `100 Continue`; with a body under the limit, `100 Continue` and then the answer.
pub async fn expect_continue_is_refused_before_100(addr: SocketAddr, prefix: &str) {
    let request = orders_head(
        prefix,
        true,
        &[
            "content-type: application/json",
            "content-length: 2000000",
            "expect: 100-continue",
        ],
    );
    let answer = exchange(addr, request.as_bytes(), PROMPTLY)
        .await
        .expect("an answer before the body");
    answer.assert_error(413, "payload_too_large");
    // Keyless: refused on its key, still without `100 Continue`.
    let request = orders_head(
        prefix,
        false,
        &["content-length: 2", "expect: 100-continue"],
    );
    let answer = exchange(addr, request.as_bytes(), PROMPTLY)
        .await
        .expect("an answer before the body");
    answer.assert_error(401, "unauthenticated");
    // Admitted: the server asks for the body, then answers it.
    let request = orders_head(
        prefix,
        true,
        &[
            "content-type: application/json",
            "content-length: 2",
            "expect: 100-continue",
        ],
    );
    let mut stream = connect(addr).await;
    stream.write_all(request.as_bytes()).await.expect("sent");
    let go_on = read_answer(&mut stream, PROMPTLY)
        .await
        .expect("100 Continue");
    assert_eq!(go_on.status, 100);
    stream.write_all(b"{}").await.expect("sent");
    let answer = read_answer(&mut stream, PROMPTLY).await.expect("an answer");
    answer.assert_error(422, "validation_failed");
}

/// 100 connections without a key, each announcing the default limit of `POST /orders` less 10
/// bytes (256 KiB − 10) and sending only the
/// first kilobyte, are all answered `401` without the server waiting for (or holding) the
/// rest of their bodies.
pub async fn keyless_bodies_are_refused_unread(addr: SocketAddr, prefix: &str) {
    let length = crate::config::Config::default().order_body_limit - 10;
    let request = orders_head(
        prefix,
        false,
        &[
            "content-type: application/json",
            &format!("content-length: {length}"),
        ],
    );
    let mut clients = Vec::new();
    for _ in 0..100 {
        let mut stream = connect(addr).await;
        stream.write_all(request.as_bytes()).await.expect("sent");
        stream.write_all(&[b' '; 1024]).await.expect("sent");
        clients.push(stream);
    }
    for stream in &mut clients {
        let answer = read_answer(stream, PROMPTLY)
            .await
            .expect("an answer before the body");
        answer.assert_error(401, "unauthenticated");
    }
}

/// A body that stops coming is answered `408 request_timeout` once the engine's body timeout
/// (`body_timeout`, short on the server under test) has passed.
pub async fn stalled_body_is_408(addr: SocketAddr, prefix: &str, body_timeout: Duration) {
    let request = orders_head(
        prefix,
        true,
        &["content-type: application/json", "content-length: 100"],
    );
    let mut stream = connect(addr).await;
    stream.write_all(request.as_bytes()).await.expect("sent");
    stream.write_all(b"{\"full_name\": ").await.expect("sent");
    let started = Instant::now();
    let answer = read_answer(&mut stream, body_timeout + PROMPTLY)
        .await
        .expect("an answer once the body timed out");
    answer.assert_error(408, "request_timeout");
    assert!(started.elapsed() >= body_timeout.mul_f64(0.9));
}

/// A connection that stops in the middle of a request's head is closed once the server's
/// header-read timeout (`header_timeout`) has passed, and not before half of it.
pub async fn stalled_head_is_closed(addr: SocketAddr, prefix: &str, header_timeout: Duration) {
    let mut stream = connect(addr).await;
    let partial = format!("GET {prefix}/api/v1/me HTTP/1.1\r\nhost: localhost\r\nx-slow: ");
    stream.write_all(partial.as_bytes()).await.expect("sent");
    let started = Instant::now();
    assert!(
        closed_within(&mut stream, header_timeout + PROMPTLY).await,
        "the stalled connection is still open"
    );
    assert!(started.elapsed() >= header_timeout / 2);
}

/// Every check above but the two timeouts: how a server that uses the engine's head phase
/// treats bodies.
pub async fn assert_bodies_are_read_after_the_head(addr: SocketAddr, prefix: &str) {
    malformed_chunked_body_is_400(addr, prefix).await;
    huge_declared_length_is_413_at_once(addr, prefix).await;
    expect_continue_is_refused_before_100(addr, prefix).await;
    keyless_bodies_are_refused_unread(addr, prefix).await;
}

#[cfg(test)]
mod tests {
    /// Every error answer is rendered once, already with the request's id: one body per
    /// answer (`crate::error::RENDERED` counts them; a render without the id, parked and
    /// rendered again, would count two), and the body's `error.request_id` is the
    /// `Request-Id` header. Refusals of the head (route, key, ability), of the body (413) and
    /// a handler's errors alike.
    #[tokio::test]
    async fn every_error_is_rendered_once_with_its_request_id() {
        let engine = crate::Engine::new(std::sync::Arc::new(crate::store::MemoryStore::new()));
        crate::sandbox::seed(&engine)
            .await
            .expect("the sandbox seeds");
        let marketer = Some(crate::sandbox::DEMO_KEYS[0].0);
        let catalog_only = Some(crate::sandbox::DEMO_KEYS[2].0);
        let big = "x".repeat(engine.config().body_limit + 1);
        let cases = [
            ("GET", "/api/v1/nowhere", None, "", 404),
            ("DELETE", "/api/v1/me", marketer, "", 405),
            ("GET", "/api/v1/me", None, "", 401),
            ("GET", "/api/v1/orders", catalog_only, "", 403),
            ("POST", "/api/v1/webhooks", marketer, big.as_str(), 413),
            ("GET", "/api/v1/orders/999999", marketer, "", 404),
            ("POST", "/api/v1/webhooks", marketer, "{}", 422),
        ];
        for (method, path, key, body, status) in cases {
            let mut request = http::Request::builder()
                .method(method)
                .uri(path)
                .header("request-id", "once-7");
            if let Some(key) = key {
                request = request.header("authorization", format!("Bearer {key}"));
            }
            let request = request.body(bytes::Bytes::from(body.to_owned())).unwrap();
            crate::error::RENDERED.with(|count| count.set(0));
            let response = engine.handle(request).await;
            assert_eq!(response.status(), status, "{method} {path}");
            assert_eq!(
                crate::error::RENDERED.with(std::cell::Cell::get),
                1,
                "{method} {path}"
            );
            assert_eq!(response.headers()["request-id"], "once-7");
            let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
            assert_eq!(body["error"]["request_id"], "once-7", "{method} {path}");
        }
    }
}
