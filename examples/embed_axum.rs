//! An existing axum app, with its own routes and state, that mounts the commerce API under
//! `/shop` and adds one route of its own over the operator API.
//!
//! ```text
//! cargo run --example embed_axum                      # 127.0.0.1:3001
//! COMMERCE_ADDR=127.0.0.1:4001 cargo run --example embed_axum
//!
//! curl -s localhost:3001/                                                 # the app's page
//! curl -s localhost:3001/shop/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'
//! curl -s -X POST localhost:3001/admin/orders/5/confirm                   # the app's admin route
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use commerce::model::OrderStatus;
use commerce::store::MemoryStore;
use commerce::webhooks::UrlPolicy;
use commerce::{Engine, OperatorError, sandbox};
use serde_json::json;

/// The app's own state: its visit counter and its handle on the engine.
#[derive(Clone)]
struct AppState {
    visits: Arc<AtomicU64>,
    engine: Engine,
}

async fn home(State(app): State<AppState>) -> String {
    let visits = app.visits.fetch_add(1, Ordering::Relaxed) + 1;
    format!("my shop: visit {visits}; the API is under /shop/api/v1\n")
}

/// A JSON response (the crate builds axum without its `json` feature).
fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (status, headers, body.to_string()).into_response()
}

/// The platform's back office confirms an order (put it behind your own admin auth).
async fn confirm_order(State(app): State<AppState>, Path(id): Path<i64>) -> Response {
    match app
        .engine
        .operator()
        .move_order(
            commerce::model::OrderId::new(id),
            OrderStatus::Confirmed,
            None,
        )
        .await
    {
        Ok(order) => json_response(
            StatusCode::OK,
            json!({
                "id": order.id,
                "number": order.number,
                "status": order.status.as_str(),
            }),
        ),
        Err(error) => {
            let (status, reason) = match &error {
                OperatorError::NotFound => (StatusCode::NOT_FOUND, None),
                // A 409 names its reason, as the API's do (`move_not_allowed` here).
                OperatorError::Conflict(conflict) => {
                    (StatusCode::CONFLICT, conflict.reason().map(|r| r.as_str()))
                }
                OperatorError::Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, None),
                _ => (StatusCode::INTERNAL_SERVER_ERROR, None),
            };
            json_response(
                status,
                json!({ "error": error.to_string(), "reason": reason }),
            )
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::var("COMMERCE_ADDR")
        .unwrap_or_else(|_| "127.0.0.1:3001".into())
        .parse()?;

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
    // The webhook dispatcher: the admin route's moves reach registered receivers too.
    tokio::spawn(engine.dispatcher().run(std::future::pending()));
    let state = AppState {
        visits: Arc::new(AtomicU64::new(0)),
        engine: engine.clone(),
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
    // would hold its connection for ever. A head must arrive within 10 s.
    commerce::axum::serve(listener, app, Duration::from_secs(10), async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}
