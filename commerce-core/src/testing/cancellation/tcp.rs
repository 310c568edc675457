//! A bare HTTP/1.1 client over TCP, for clients that hang up.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn encode(request: &Request<Bytes>) -> Vec<u8> {
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let mut raw = format!(
        "{} {target} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n",
        request.method()
    );
    for (name, value) in request.headers() {
        raw.push_str(&format!(
            "{name}: {}\r\n",
            value.to_str().unwrap_or_default()
        ));
    }
    raw.push_str(&format!("content-length: {}\r\n\r\n", request.body().len()));
    let mut bytes = raw.into_bytes();
    bytes.extend_from_slice(request.body());
    bytes
}

/// Sends `request` and reads the whole answer: its status and body.
pub(super) async fn exchange(addr: SocketAddr, request: &Request<Bytes>) -> (u16, Bytes) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(&encode(request)).await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let text = String::from_utf8_lossy(&answer);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, Bytes::from(body.to_owned()))
}

/// Sends `request` (only its first half when `partial`), waits `delay` and hangs up.
pub(super) async fn abandon(
    addr: SocketAddr,
    request: &Request<Bytes>,
    partial: bool,
    delay: Duration,
) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let bytes = encode(request);
    let end = if partial {
        bytes.len() / 2
    } else {
        bytes.len()
    };
    let _ = stream.write_all(&bytes[..end]).await;
    tokio::time::sleep(delay).await;
    drop(stream);
}
