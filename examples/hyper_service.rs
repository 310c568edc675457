//! A plain hyper 1 server over the engine (no web framework): `Engine::serve` takes hyper's
//! `Request<Incoming>` as it comes, checks its head (route, key, rate limit, account) before
//! reading its body, then reads the body under the engine's limit and timeout.
//!
//! Slow clients are cut off: hyper closes a connection whose request head has not arrived
//! within [`HEADER_READ_TIMEOUT`] (`http1::Builder::header_read_timeout`, which needs a
//! timer), and the engine answers `408 request_timeout` to a body not read whole within
//! `Config::body_timeout` ([`BODY_TIMEOUT`] here).
//!
//! ```text
//! cargo run --example hyper_service                   # 127.0.0.1:3003
//! curl -s localhost:3003/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use commerce::store::MemoryStore;
use commerce::{Engine, sandbox};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;

/// How long a client may take to send a request's head.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's body once its head was admitted.
const BODY_TIMEOUT: Duration = Duration::from_secs(20);

/// One request, both phases of the engine's pipeline.
async fn serve(
    engine: Engine,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(engine.serve(request).await.map(Full::new))
}

/// Serves one connection until it closes; one whose request head takes longer than
/// `header_read_timeout` is closed.
pub(crate) async fn serve_connection(
    engine: Engine,
    stream: TcpStream,
    header_read_timeout: Duration,
) {
    let service = hyper::service::service_fn(move |request| serve(engine.clone(), request));
    if let Err(error) = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        eprintln!("connection error: {error}");
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::var("COMMERCE_ADDR")
        .unwrap_or_else(|_| "127.0.0.1:3003".into())
        .parse()?;

    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .configure(|c| c.body_timeout = Some(BODY_TIMEOUT))
        .build()?;
    sandbox::seed(&engine).await?;

    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("hyper_service on http://{addr}/api/v1 (key sk_demo_marketer)");
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(serve_connection(
            engine.clone(),
            stream,
            HEADER_READ_TIMEOUT,
        ));
    }
}
