//! An existing axum app, with its own routes and state, that mounts the commerce API under
//! `/shop` and adds one route of its own over the operator API, behind a token. It runs what
//! an app runs besides the API: the webhook dispatcher, the hourly purges, and a clean
//! shutdown on ctrl-c or SIGTERM (`examples/support/mod.rs`).
//!
//! ```text
//! cargo run --example embed_axum                      # 127.0.0.1:3001, prints the admin token
//! COMMERCE_ADDR=127.0.0.1:4001 cargo run --example embed_axum
//! COMMERCE_ADDR=0.0.0.0:3001 cargo run --example embed_axum -- --public   # other machines too
//!
//! curl -s localhost:3001/                                                 # the app's page
//! curl -s localhost:3001/shop/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'
//! curl -s localhost:3001/shop/api/v1/orders -H 'Authorization: Bearer sk_demo_marketer' \
//!   -H 'Content-Type: application/json' -d '{"full_name":"سارة حسن","phone":"01112223334",
//!   "address":"12 شارع النصر","governorate_id":1,"shipping_option_id":1,
//!   "lines":[{"variant_id":1,"quantity":1,"profit":"40.00"}]}'   # order 5 (the seed's 1 to 4 are past pending)
//! curl -s -X POST localhost:3001/admin/orders/5/confirm -H "Authorization: Bearer $TOKEN"
//! ```
//!
//! It serves the sandbox's published demo keys, so it listens on a loopback address unless
//! started with `--public`; its back-office route answers 401 without the token
//! (`COMMERCE_ADMIN_TOKEN`, at least 32 characters, or a random one printed on start).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use commerce::store::MemoryStore;
use commerce::webhooks::UrlPolicy;
use commerce::{Engine, sandbox};

#[path = "support/mod.rs"]
mod support;

/// The app's own state: its visit counter, its handle on the engine, the back office's token.
#[derive(Clone)]
struct AppState {
    visits: Arc<AtomicU64>,
    engine: Engine,
    admin: support::AdminToken,
}

async fn home(State(app): State<AppState>) -> String {
    let visits = app.visits.fetch_add(1, Ordering::Relaxed) + 1;
    format!("my shop: visit {visits}; the API is under /shop/api/v1\n")
}

/// The platform's back office confirms an order, behind the admin token.
async fn confirm_order(
    State(app): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Response {
    let (status, body) = support::confirm_order(&app.engine, &app.admin, &headers, id).await;
    // A JSON response (the crate builds axum without its `json` feature).
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (status, headers, body.to_string()).into_response()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = support::listen_addr("127.0.0.1:3001")?;
    let admin = support::AdminToken::from_env_or_random()?;

    // The production settings (`Config::default()`): webhooks go to `https` URLs of public
    // hosts only (`UrlPolicy::STRICT`; the sandbox server alone allows `http` and loopback
    // receivers). A body must arrive within 20 s of its head (else a 408), so that a client
    // trickling it cannot hold the connection and its buffer.
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .configure(|c| {
            c.webhook_urls = UrlPolicy::STRICT;
            c.body_timeout = Some(Duration::from_secs(20));
        })
        .build()?;
    sandbox::seed(&engine).await?;
    // The webhook dispatcher (the admin route's moves reach registered receivers too) and
    // the purges, until the shutdown signal.
    let background = support::Background::start(&engine);
    let state = AppState {
        visits: Arc::new(AtomicU64::new(0)),
        engine: engine.clone(),
        admin,
    };

    let app = Router::new()
        .route("/", get(home))
        .route("/admin/orders/{id}/confirm", post(confirm_order))
        .with_state(state)
        // The API, under the app's prefix; other /shop/... paths stay the app's.
        .nest("/shop", commerce::axum::router(engine));

    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("embed_axum on http://{addr}/ (API: http://{addr}/shop/api/v1, key sk_demo_marketer)");
    // Not `axum::serve`: it has no header-read timeout, and a client that stops mid-headers
    // would hold its connection for ever; nor a bound on its drain. A head must arrive within
    // 10 s, and on shutdown the requests in flight get `support::DRAIN` (10 s).
    let shutdown = background.shutdown();
    let options = commerce::http_server::ServeOptions::default()
        .with_header_read_timeout(Duration::from_secs(10))
        .with_drain_timeout(Some(support::DRAIN));
    let server = commerce::axum::serve(listener, app, options, shutdown);
    background.serve(server).await?;
    Ok(())
}
