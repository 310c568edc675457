//! An existing warp app, with its own routes and state, that mounts the commerce API under
//! `/shop` and adds one route of its own over the operator API, behind a token. It runs what
//! an app runs besides the API: the webhook dispatcher, the hourly purges, and a clean
//! shutdown on ctrl-c or SIGTERM (`examples/support/mod.rs`).
//!
//! ```text
//! cargo run --example embed_warp --features warp      # 127.0.0.1:3002, prints the admin token
//! COMMERCE_ADDR=127.0.0.1:4002 cargo run --example embed_warp --features warp
//!
//! curl -s localhost:3002/                                                 # the app's page
//! curl -s localhost:3002/shop/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'
//! curl -s localhost:3002/shop/api/v1/orders -H 'Authorization: Bearer sk_demo_marketer' \
//!   -H 'Content-Type: application/json' -d '{"full_name":"سارة حسن","phone":"01112223334",
//!   "address":"12 شارع النصر","governorate_id":1,"shipping_option_id":1,
//!   "lines":[{"variant_id":1,"quantity":1,"profit":"40.00"}]}'   # order 5 (the seed's 1 to 4 are past pending)
//! curl -s -X POST localhost:3002/admin/orders/5/confirm -H "Authorization: Bearer $TOKEN"
//! ```
//!
//! It serves the sandbox's published demo keys, so it listens on a loopback address unless
//! started with `--public`; its back-office route answers 401 without the token
//! (`COMMERCE_ADMIN_TOKEN`, at least 32 characters, or a random one printed on start).
//!
//! Slow clients are cut off as in the other examples: `warp::serve` has no header-read
//! timeout, so the filter is served by `commerce::warp::serve`, whose connections close when a
//! request head takes longer than [`HEADER_READ_TIMEOUT`] and whose drain on shutdown is
//! bounded (`support::DRAIN`); a body not read whole within `Config::body_timeout`
//! ([`BODY_TIMEOUT`]) is a `408 request_timeout`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use commerce::store::MemoryStore;
use commerce::{Engine, sandbox};
use warp::Filter;
use warp::http::HeaderMap;

#[path = "support/mod.rs"]
mod support;

/// How long a client may take to send a request's head.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's body once its head was admitted.
const BODY_TIMEOUT: Duration = Duration::from_secs(20);

/// The platform's back office confirms an order, behind the admin token.
async fn confirm_order(
    id: i64,
    headers: HeaderMap,
    (engine, admin): (Engine, support::AdminToken),
) -> warp::reply::Response {
    use warp::Reply;
    let (status, body) = support::confirm_order(&engine, &admin, &headers, id).await;
    warp::reply::with_status(warp::reply::json(&body), status).into_response()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = support::listen_addr("127.0.0.1:3002")?;
    let admin = support::AdminToken::from_env_or_random()?;

    // The production settings (`Config::default()`: webhooks to `https` on public hosts
    // only), with the body timeout.
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .configure(|c| c.body_timeout = Some(BODY_TIMEOUT))
        .build()?;
    sandbox::seed(&engine).await?;
    // The webhook dispatcher and the purges, until the shutdown signal.
    let background = support::Background::start(&engine);

    // The app's own state and routes.
    let visits = Arc::new(AtomicU64::new(0));
    // Path filters before method filters, so an unknown path is warp's 404, not a 405.
    let home = warp::path::end().and(warp::get()).map(move || {
        let visits = visits.fetch_add(1, Ordering::Relaxed) + 1;
        format!("my shop: visit {visits}; the API is under /shop/api/v1\n")
    });
    let with_state = {
        let state = (engine.clone(), admin);
        warp::any().map(move || state.clone())
    };
    let confirm = warp::path!("admin" / "orders" / i64 / "confirm")
        .and(warp::post())
        .and(warp::header::headers_cloned())
        .and(with_state)
        .then(confirm_order);

    // The API under the app's prefix; anything else falls through to the app's routes.
    let app = home
        .or(confirm)
        .or(commerce::warp::api_under("/shop", engine));

    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("embed_warp on http://{addr}/ (API: http://{addr}/shop/api/v1, key sk_demo_marketer)");
    let shutdown = background.shutdown();
    let options = commerce::http_server::ServeOptions::default()
        .with_header_read_timeout(HEADER_READ_TIMEOUT)
        .with_drain_timeout(Some(support::DRAIN));
    let server = commerce::warp::serve(listener, app, options, shutdown);
    background.serve(server).await?;
    Ok(())
}
