//! `examples/hyper_service.rs` on a real socket: bodies are read only after the engine passed
//! the request's head, a stalled body is a 408 and a connection stalled mid-head is closed.

use std::net::SocketAddr;
use std::time::Duration;

use commerce_core::testing::wire;
use tokio::net::TcpListener;

#[allow(dead_code)] // its `main` and constants
#[path = "../examples/hyper_service.rs"]
mod example;

const HEADER_TIMEOUT: Duration = Duration::from_millis(400);
const BODY_TIMEOUT: Duration = Duration::from_millis(400);

/// The example's connections over a seeded engine with short timeouts, on a free port.
async fn start() -> SocketAddr {
    let engine = wire::sandbox_engine(BODY_TIMEOUT).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(example::serve_connection(
                engine.clone(),
                stream,
                HEADER_TIMEOUT,
            ));
        }
    });
    addr
}

#[tokio::test]
async fn bodies_are_read_only_after_the_head_passed() {
    wire::assert_bodies_are_read_after_the_head(start().await, "").await;
}

#[tokio::test]
async fn a_stalled_body_is_408() {
    wire::stalled_body_is_408(start().await, "", BODY_TIMEOUT).await;
}

#[tokio::test]
async fn a_connection_stalled_mid_head_is_closed() {
    wire::stalled_head_is_closed(start().await, "", HEADER_TIMEOUT).await;
}
