//! The axum adapter on a real socket, served by `commerce_axum::serve`: every answer is the
//! engine's JSON (odd paths included, through `app` and `service`), bodies are read only after
//! the head passed, and slow clients are cut off by the header-read and body timeouts.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use commerce_core::Engine;
use commerce_core::testing::wire::{self, head};
use tokio::net::TcpListener;

const HEADER_TIMEOUT: Duration = Duration::from_millis(400);
const BODY_TIMEOUT: Duration = Duration::from_millis(400);

/// A seeded engine with a short body timeout.
async fn engine() -> Engine {
    wire::sandbox_engine(BODY_TIMEOUT).await
}

/// Serves `app` on a free local port; the server runs until the test ends.
async fn start(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    let options = commerce_axum::ServeOptions::default().with_header_read_timeout(HEADER_TIMEOUT);
    tokio::spawn(commerce_axum::serve(
        listener,
        app,
        options,
        std::future::pending(),
    ));
    addr
}

/// `GET path` without a key, its answer.
async fn get(addr: SocketAddr, path: &str) -> wire::WireAnswer {
    let request = head("GET", "", path, false, &[]);
    wire::exchange(addr, request.as_bytes(), Duration::from_secs(5))
        .await
        .expect("an answer")
}

#[tokio::test]
async fn every_path_of_the_api_server_answers_json() {
    let addr = start(commerce_axum::app(engine().await)).await;
    for path in [
        "/",
        "/api/v1",
        "/api/v1/",
        "//api/v1/me",
        "/API/v1/me",
        "/api/v2/me",
        "/api/v1/me/",
        "/favicon.ico",
    ] {
        get(addr, path).await.assert_error(404, "not_found");
    }
    get(addr, "/api/v1/me")
        .await
        .assert_error(401, "unauthenticated");
}

#[tokio::test]
async fn a_router_merged_into_an_app_owns_everything_under_the_api_prefix() {
    let app = Router::new()
        .route("/", axum::routing::get(|| async { "home" }))
        .merge(commerce_axum::router(engine().await));
    let addr = start(app).await;
    let home = get(addr, "/").await;
    assert_eq!((home.status, home.body.as_ref()), (200, &b"home"[..]));
    for path in ["/api/v1", "/api/v1/", "/api/v1/nothing"] {
        get(addr, path).await.assert_error(404, "not_found");
    }
    // Outside the prefix the app's own fallback answers (axum's empty 404).
    let other = get(addr, "/api/v2/me").await;
    assert_eq!((other.status, other.body.len()), (404, 0));
}

#[tokio::test]
async fn a_nested_service_answers_every_path_below_its_mount_with_json() {
    let app = Router::new().nest_service("/shop", commerce_axum::service(engine().await));
    let addr = start(app).await;
    for path in ["/shop", "/shop/", "/shop/API/v1/me", "/shop/api/v2/me"] {
        get(addr, path).await.assert_error(404, "not_found");
    }
}

#[tokio::test]
async fn bodies_are_read_only_after_the_head_passed() {
    let addr = start(commerce_axum::app(engine().await)).await;
    wire::assert_bodies_are_read_after_the_head(addr, "").await;
}

#[tokio::test]
async fn bodies_are_read_after_the_head_under_a_prefix() {
    let app = Router::new().nest("/shop", commerce_axum::router(engine().await));
    let addr = start(app).await;
    wire::assert_bodies_are_read_after_the_head(addr, "/shop").await;
}

#[tokio::test]
async fn a_stalled_body_is_408() {
    let addr = start(commerce_axum::app(engine().await)).await;
    wire::stalled_body_is_408(addr, "", BODY_TIMEOUT).await;
}

#[tokio::test]
async fn a_connection_stalled_mid_head_is_closed() {
    let addr = start(commerce_axum::app(engine().await)).await;
    wire::stalled_head_is_closed(addr, "", HEADER_TIMEOUT).await;
}
