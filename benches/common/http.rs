//! The loopback HTTP side of the load and soak runs: an axum app served on a fresh
//! `127.0.0.1` port, and a raw HTTP/1.1 keep-alive client over tokio TCP (one request in flight
//! per connection, `content-length` bodies only, which is all axum sends for the engine).

use std::net::SocketAddr;

use axum::Router;
use bytes::Bytes;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// Serves `app` on a fresh loopback port from `server`'s runtime.
pub fn serve(server: &Runtime, app: Router) -> SocketAddr {
    server.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });
        addr
    })
}

/// One HTTP/1.1 request as bytes: `authorization: Bearer {key}`, the `headers` given, and a
/// JSON `body` with its length when there is one.
pub fn raw_request(
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
