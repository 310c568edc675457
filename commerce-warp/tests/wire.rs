//! The warp filter on a real socket (`commerce_warp::serve`): bodies are read only after the
//! engine passed the request's head, a stalled body is a 408 and a stalled head is cut off.

use std::net::SocketAddr;
use std::time::Duration;

use commerce_core::testing::wire;
use tokio::net::TcpListener;
use warp::Filter;

const BODY_TIMEOUT: Duration = Duration::from_millis(400);
const HEADER_TIMEOUT: Duration = Duration::from_millis(400);

/// `commerce_warp::api_under(prefix, ..)` over a seeded engine with a short body timeout,
/// served on a free local port until the test ends.
async fn start(prefix: &'static str) -> SocketAddr {
    let engine = wire::sandbox_engine(BODY_TIMEOUT).await;
    let home = warp::path::end().map(|| "home");
    let app = home.or(commerce_warp::api_under(prefix, engine));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    let options = commerce_warp::ServeOptions::default().with_header_read_timeout(HEADER_TIMEOUT);
    tokio::spawn(commerce_warp::serve(
        listener,
        app,
        options,
        std::future::pending(),
    ));
    addr
}

#[tokio::test]
async fn bodies_are_read_only_after_the_head_passed() {
    let addr = start("").await;
    wire::assert_bodies_are_read_after_the_head(addr, "").await;
}

#[tokio::test]
async fn bodies_are_read_after_the_head_under_a_prefix() {
    let addr = start("shop").await;
    wire::assert_bodies_are_read_after_the_head(addr, "/shop").await;
}

#[tokio::test]
async fn a_stalled_body_is_408() {
    let addr = start("").await;
    wire::stalled_body_is_408(addr, "", BODY_TIMEOUT).await;
}

#[tokio::test]
async fn a_connection_stalled_mid_head_is_closed() {
    let addr = start("").await;
    wire::stalled_head_is_closed(addr, "", HEADER_TIMEOUT).await;
}
