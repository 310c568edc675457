//! A plain hyper 1 server over the engine (no web framework): `Engine::serve` takes hyper's
//! `Request<Incoming>` as it comes, checks its head (route, key, rate limit, account) before
//! reading its body, then reads the body under the engine's limit and timeout. One route of
//! the app's own, `POST /admin/orders/{id}/confirm`, is the back office's, behind a token. It
//! runs what an app runs besides the API: the webhook dispatcher, the hourly purges, and a
//! clean shutdown on ctrl-c or SIGTERM (`examples/support/mod.rs`).
//!
//! Slow clients are cut off: hyper closes a connection whose request head has not arrived
//! within [`HEADER_READ_TIMEOUT`] (`http1::Builder::header_read_timeout`, which needs a
//! timer), and the engine answers `408 request_timeout` to a body not read whole within
//! `Config::body_timeout` ([`BODY_TIMEOUT`] here).
//!
//! ```text
//! cargo run --example hyper_service                   # 127.0.0.1:3003, prints the admin token
//! curl -s localhost:3003/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'
//! curl -s localhost:3003/api/v1/orders -H 'Authorization: Bearer sk_demo_marketer' \
//!   -H 'Content-Type: application/json' -d '{"full_name":"سارة حسن","phone":"01112223334",
//!   "address":"12 شارع النصر","governorate_id":1,"shipping_option_id":1,
//!   "lines":[{"variant_id":1,"quantity":1,"profit":"40.00"}]}'   # order 5 (the seed's 1 to 4 are past pending)
//! curl -s -X POST localhost:3003/admin/orders/5/confirm -H "Authorization: Bearer $TOKEN"
//! ```
//!
//! It serves the sandbox's published demo keys, so it listens on a loopback address unless
//! started with `--public`; its back-office route answers 401 without the token
//! (`COMMERCE_ADMIN_TOKEN`, at least 32 characters, or a random one printed on start).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use commerce::http_server::{ServeOptions, serve_connections};
use commerce::store::MemoryStore;
use commerce::{Engine, sandbox};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response};

#[path = "support/mod.rs"]
pub(crate) mod support;

/// How long a client may take to send a request's head.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's body once its head was admitted.
const BODY_TIMEOUT: Duration = Duration::from_secs(20);

/// The id of `POST /admin/orders/{id}/confirm`.
fn confirm_route(request: &Request<Incoming>) -> Option<i64> {
    if request.method() != Method::POST {
        return None;
    }
    let id = request
        .uri()
        .path()
        .strip_prefix("/admin/orders/")?
        .strip_suffix("/confirm")?;
    id.parse().ok()
}

/// One request: the back office's route, or both phases of the engine's pipeline.
async fn serve(
    engine: Engine,
    admin: support::AdminToken,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if let Some(id) = confirm_route(&request) {
        let (status, body) = support::confirm_order(&engine, &admin, request.headers(), id).await;
        let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
        *response.status_mut() = status;
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        return Ok(response);
    }
    Ok(engine.serve(request).await.map(Full::new))
}

/// The app as a hyper service: its back-office route and the engine.
pub(crate) fn service(
    engine: Engine,
    admin: support::AdminToken,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send,
> + Clone
+ Send
+ 'static {
    let state = Arc::new((engine, admin));
    hyper::service::service_fn(move |request| {
        let (engine, admin) = (state.0.clone(), state.1.clone());
        serve(engine, admin, request)
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = support::listen_addr("127.0.0.1:3003")?;
    let admin = support::AdminToken::from_env_or_random()?;

    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .configure(|c| c.body_timeout = Some(BODY_TIMEOUT))
        .build()?;
    sandbox::seed(&engine).await?;
    // The webhook dispatcher and the purges, until the shutdown signal.
    let background = support::Background::start(&engine);

    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("hyper_service on http://{addr}/api/v1 (key sk_demo_marketer)");
    let shutdown = background.shutdown();
    // The engine's own server loop, as `commerce::axum::serve` runs it for a router.
    let options = ServeOptions::default()
        .with_header_read_timeout(HEADER_READ_TIMEOUT)
        .with_drain_timeout(Some(support::DRAIN));
    let server = serve_connections(listener, service(engine, admin), options, shutdown);
    background.serve(server).await?;
    Ok(())
}
