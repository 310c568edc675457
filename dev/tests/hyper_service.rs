//! `examples/hyper_service.rs` on a real socket: bodies are read only after the engine passed
//! the request's head, a stalled body is a 408 and a connection stalled mid-head is closed;
//! the back-office route answers only with its token; the examples listen on loopback unless
//! told otherwise and refuse a short admin token.

use std::net::SocketAddr;
use std::time::Duration;

use commerce::http_server::{ServeOptions, serve_connections};
use commerce_core::testing::wire;
use tokio::net::TcpListener;

#[allow(dead_code)] // its `main` and constants
#[path = "../../examples/hyper_service.rs"]
mod example;

use example::support;

const HEADER_TIMEOUT: Duration = Duration::from_millis(400);
const BODY_TIMEOUT: Duration = Duration::from_millis(400);
const ADMIN_TOKEN: &str = "test-admin-token-0123456789abcdef";

/// The example's service over a seeded engine with short timeouts, on a free port.
async fn start() -> SocketAddr {
    let engine = wire::sandbox_engine(BODY_TIMEOUT).await;
    let admin = support::AdminToken::new(ADMIN_TOKEN).expect("a long enough token");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    let service = example::service(engine, admin);
    let options = ServeOptions::default().with_header_read_timeout(HEADER_TIMEOUT);
    tokio::spawn(serve_connections(
        listener,
        service,
        options,
        std::future::pending(),
    ));
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

/// `POST /admin/orders/{id}/confirm` without the token, or with another, is 401 and moves
/// nothing; with it, the operator's answer (404 for no such order, 409 `move_not_allowed` for
/// the sandbox's delivered order 1).
#[tokio::test]
async fn the_back_office_route_needs_its_token() {
    let addr = start().await;
    let wait = Duration::from_secs(5);
    let confirm = |id: i64, auth: Option<&str>| {
        let line = auth.map(|token| format!("authorization: Bearer {token}"));
        let extra: Vec<&str> = line.iter().map(String::as_str).collect();
        let path = format!("/admin/orders/{id}/confirm");
        let mut head = wire::head("POST", "", &path, false, &extra);
        head.insert_str(head.len() - 2, "content-length: 0\r\n");
        head
    };
    for auth in [None, Some("sk_demo_marketer"), Some(&ADMIN_TOKEN[1..])] {
        let answer = wire::exchange(addr, confirm(1, auth).as_bytes(), wait)
            .await
            .expect("an answer");
        assert_eq!(answer.status, 401, "{auth:?}");
    }
    let missing = wire::exchange(addr, confirm(999_999, Some(ADMIN_TOKEN)).as_bytes(), wait)
        .await
        .expect("an answer");
    assert_eq!(missing.status, 404);
    let delivered = wire::exchange(addr, confirm(1, Some(ADMIN_TOKEN)).as_bytes(), wait)
        .await
        .expect("an answer");
    assert_eq!(delivered.status, 409);
    assert_eq!(delivered.json()["reason"], "move_not_allowed");
}

/// The examples listen on loopback unless `--public` says otherwise, and refuse an admin
/// token shorter than 32 characters.
#[test]
fn examples_listen_on_loopback_and_want_a_long_admin_token() {
    for loopback in ["127.0.0.1:3003", "127.8.0.1:1", "[::1]:3003"] {
        assert!(support::listen_on(loopback, false).is_ok(), "{loopback}");
    }
    for open in ["0.0.0.0:3003", "192.168.1.10:3003", "[::]:3003"] {
        assert!(support::listen_on(open, false).is_err(), "{open}");
        assert!(support::listen_on(open, true).is_ok(), "{open}");
    }
    assert!(support::listen_on("localhost:3003", false).is_err());
    assert!(support::AdminToken::new("secret").is_err());
    assert!(support::AdminToken::new(&"x".repeat(31)).is_err());
    let token = support::AdminToken::new(&"x".repeat(32)).expect("32 characters");
    assert!(!format!("{token:?}").contains("xxxx"), "never shown");
}
