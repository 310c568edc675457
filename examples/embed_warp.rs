//! An existing warp app, with its own routes and state, that mounts the commerce API under
//! `/shop` and adds one route of its own over the operator API.
//!
//! ```text
//! cargo run --example embed_warp --features warp      # 127.0.0.1:3002
//! COMMERCE_ADDR=127.0.0.1:4002 cargo run --example embed_warp --features warp
//!
//! curl -s localhost:3002/                                                 # the app's page
//! curl -s localhost:3002/shop/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'
//! curl -s -X POST localhost:3002/admin/orders/5/confirm                   # the app's admin route
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use commerce::model::OrderStatus;
use commerce::store::MemoryStore;
use commerce::{Engine, OperatorError, sandbox};
use serde_json::json;
use warp::Filter;
use warp::http::StatusCode;

/// The platform's back office confirms an order (put it behind your own admin auth).
async fn confirm_order(id: i64, engine: Engine) -> warp::reply::Response {
    use warp::Reply;
    match engine
        .operator()
        .move_order(
            commerce::model::OrderId::new(id),
            OrderStatus::Confirmed,
            None,
        )
        .await
    {
        Ok(order) => warp::reply::json(&json!({
            "id": order.id,
            "number": order.number,
            "status": order.status.as_str(),
        }))
        .into_response(),
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
            let body = warp::reply::json(&json!({ "error": error.to_string(), "reason": reason }));
            warp::reply::with_status(body, status).into_response()
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::var("COMMERCE_ADDR")
        .unwrap_or_else(|_| "127.0.0.1:3002".into())
        .parse()?;

    let engine = Engine::new(Arc::new(MemoryStore::new()));
    sandbox::seed(&engine).await?;

    // The app's own state and routes.
    let visits = Arc::new(AtomicU64::new(0));
    // Path filters before method filters, so an unknown path is warp's 404, not a 405.
    let home = warp::path::end().and(warp::get()).map(move || {
        let visits = visits.fetch_add(1, Ordering::Relaxed) + 1;
        format!("my shop: visit {visits}; the API is under /shop/api/v1\n")
    });
    let with_engine = {
        let engine = engine.clone();
        warp::any().map(move || engine.clone())
    };
    let confirm = warp::path!("admin" / "orders" / i64 / "confirm")
        .and(warp::post())
        .and(with_engine)
        .then(confirm_order);

    // The API under the app's prefix; anything else falls through to the app's routes.
    let app = home
        .or(confirm)
        .or(commerce::warp::api_under("/shop", engine));

    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("embed_warp on http://{addr}/ (API: http://{addr}/shop/api/v1, key sk_demo_marketer)");
    warp::serve(app)
        .incoming(listener)
        .graceful(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .run()
        .await;
    Ok(())
}
