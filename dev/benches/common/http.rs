//! The HTTP side of the load and soak runs: axum servers on loopback and a raw HTTP/1.1
//! keep-alive client over tokio TCP (one request in flight per connection, `content-length`
//! bodies only, which is all axum sends for the engine), with a driver that counts requests,
//! errors and latency percentiles (one connection per client task).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use commerce::Engine;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// The key every request of the load benches carries (1,000,000 requests per minute).
pub const BENCH_KEY: &str = "sk_demo_bench";

/// What one phase measured.
pub struct Outcome {
    /// Answers with the expected status.
    pub requests: u64,
    /// Answers with another status, and connections that failed (each counted once).
    pub errors: u64,
    /// Wall time of the phase.
    pub seconds: f64,
    /// Median latency of the expected answers, microseconds.
    pub p50_us: u64,
    /// 99th percentile latency of the expected answers, microseconds.
    pub p99_us: u64,
}

impl Outcome {
    /// Expected answers per second.
    pub fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
}

/// What [`read_response`] read: the status, and where the head ends in the buffer.
#[derive(Debug, Clone, Copy)]
pub struct ResponseHead {
    /// HTTP status.
    pub status: u16,
    /// Length of the status line and headers (with the blank line) at the start of the buffer.
    pub head_len: usize,
}

impl ResponseHead {
    /// The value of header `name` (case-insensitive), from the buffer the response was read into.
    pub fn header<'a>(&self, buf: &'a [u8], name: &str) -> Option<&'a str> {
        let head = std::str::from_utf8(&buf[..self.head_len]).ok()?;
        head.lines().find_map(|line| {
            let (n, value) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// The body, from the buffer the response was read into.
    pub fn body<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.head_len..]
    }
}

/// Reads one HTTP/1.1 response with a `content-length` body into `buf` (cleared first).
pub async fn read_response(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<ResponseHead> {
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    let head_len = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let status: u16 = std::str::from_utf8(&buf[..head_len])
        .ok()
        .and_then(|head| head.get(9..12))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("bad status line"))?;
    let head = ResponseHead { status, head_len };
    let length: usize = head
        .header(buf, "content-length")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| std::io::Error::other("no content-length"))?;
    while buf.len() < head_len + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(head)
}

/// Drives `addr` with `connections` keep-alive clients sending `request` until `duration` ends;
/// any status but `expect` is an error, and so is a connection that fails (it stops there).
pub fn drive(
    client: &Runtime,
    addr: SocketAddr,
    request: Bytes,
    expect: u16,
    connections: usize,
    duration: Duration,
) -> Outcome {
    client
        .block_on(sample(addr, request, expect, connections, duration))
        .outcome()
}

/// [`drive`] on two servers in turns: `turns` times `addr[0]` then `addr[1]` for
/// `duration / turns` each, so that a machine that speeds up or slows down during the run
/// (other work, CPU frequency) weighs on both sides alike. The two outcomes, in `addr`'s order.
pub fn drive_in_turns(
    client: &Runtime,
    addr: [SocketAddr; 2],
    request: Bytes,
    expect: u16,
    connections: usize,
    duration: Duration,
    turns: u32,
) -> [Outcome; 2] {
    let slice = duration / turns.max(1);
    let mut samples = [Sample::default(), Sample::default()];
    for _ in 0..turns.max(1) {
        for (side, &addr) in addr.iter().enumerate() {
            let run = sample(addr, request.clone(), expect, connections, slice);
            samples[side].add(client.block_on(run));
        }
    }
    samples.map(Sample::outcome)
}

/// Requests answered as expected (their latencies, microseconds), errors, seconds taken.
#[derive(Default)]
struct Sample {
    latencies: Vec<u64>,
    errors: u64,
    seconds: f64,
}

impl Sample {
    fn add(&mut self, other: Sample) {
        self.latencies.extend(other.latencies);
        self.errors += other.errors;
        self.seconds += other.seconds;
    }

    fn outcome(mut self) -> Outcome {
        let all = &mut self.latencies;
        all.sort_unstable();
        let pick = |q: f64| {
            all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        };
        Outcome {
            requests: all.len() as u64,
            errors: self.errors,
            seconds: self.seconds,
            p50_us: pick(0.50),
            p99_us: pick(0.99),
        }
    }
}

/// One timed run of [`drive`].
async fn sample(
    addr: SocketAddr,
    request: Bytes,
    expect: u16,
    connections: usize,
    duration: Duration,
) -> Sample {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            let request = request.clone();
            tokio::spawn(async move {
                let mut stream = TcpStream::connect(addr).await.expect("connects");
                stream.set_nodelay(true).expect("nodelay");
                let mut buf = Vec::with_capacity(32 * 1024);
                let mut latencies = Vec::with_capacity(1 << 16);
                let mut errors = 0u64;
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    if stream.write_all(&request).await.is_err() {
                        errors += 1;
                        break;
                    }
                    match read_response(&mut stream, &mut buf).await {
                        Ok(head) if head.status == expect => {
                            latencies.push(sent.elapsed().as_micros() as u64)
                        }
                        Ok(_) => errors += 1,
                        Err(_) => {
                            errors += 1;
                            break;
                        }
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut sample = Sample::default();
    for task in tasks {
        let (latencies, errors) = task.await.expect("client task");
        sample.latencies.extend(latencies);
        sample.errors += errors;
    }
    sample.seconds = started.elapsed().as_secs_f64();
    sample
}

/// Serves `app` on a fresh loopback port from `server`'s runtime.
pub fn serve(server: &Runtime, app: Router) -> SocketAddr {
    server.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });
        addr
    })
}

/// One raw HTTP/1.1 request with the bench key (and a JSON body when `body` is not empty).
pub fn raw_request(method: &str, path: &str, body: &[u8]) -> Bytes {
    raw_request_as(method, path, BENCH_KEY, &[], body)
}

/// One raw HTTP/1.1 request: `authorization: Bearer {key}`, the `headers` given, and a JSON
/// `body` with its length when there is one.
pub fn raw_request_as(
    method: &str,
    path: &str,
    key: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Bytes {
    let mut out = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {key}\r\naccept: application/json\r\n"
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        out.push_str(&format!(
            "content-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        ));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    Bytes::from(bytes)
}

/// The engine's answer to `GET path` with the bench key, which must be a 200: the bytes the
/// bare handlers return.
pub async fn engine_body(engine: &Engine, path: &str) -> Bytes {
    engine_answer(engine, "GET", path, Bytes::new(), 200).await
}

/// The engine's answer to `method path` with `body` and the bench key, which must have the
/// status `expect`.
pub async fn engine_answer(
    engine: &Engine,
    method: &str,
    path: &str,
    body: Bytes,
    expect: u16,
) -> Bytes {
    let response = engine
        .handle(
            http::Request::builder()
                .method(method)
                .uri(path)
                .header("authorization", format!("Bearer {BENCH_KEY}"))
                .header("content-type", "application/json")
                .body(body)
                .expect("request"),
        )
        .await;
    assert_eq!(
        response.status(),
        expect,
        "{method} {path} through the engine"
    );
    response.into_body()
}

/// A 200 with ready JSON bytes and the engine's content type.
pub fn ready_json(body: Bytes) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body,
    )
        .into_response()
}

/// `p50 / p99` in milliseconds, two decimals.
pub fn latencies_ms(o: &Outcome) -> String {
    format!(
        "{:.2}/{:.2} ms",
        o.p50_us as f64 / 1000.0,
        o.p99_us as f64 / 1000.0
    )
}

/// One line for one phase of `load.rs`.
pub fn report(label: &str, connections: usize, o: &Outcome) {
    println!(
        "{label:<44} conns {connections:>3}  {:>9.0} req/s  p50 {:>6} us  p99 {:>6} us  ({} requests, {} errors, {:.1} s)",
        o.rps(),
        o.p50_us,
        o.p99_us,
        o.requests,
        o.errors,
        o.seconds
    );
}
