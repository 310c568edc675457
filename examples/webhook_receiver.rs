//! A webhook receiver: verifies each request's Standard Webhooks signature with
//! `commerce::webhooks::verify` and prints the event.
//!
//! ```sh
//! cargo run --example webhook_receiver -- whsec_...   # the secret shown when registering
//! ```
//!
//! It listens on http://127.0.0.1:4000/webhooks (`COMMERCE_RECEIVER_ADDR` to change). Register it on
//! the sandbox (`cargo run --example server`) with:
//!
//! ```sh
//! curl -s http://127.0.0.1:8080/api/v1/webhooks -H 'Authorization: Bearer sk_demo_marketer' \
//!   -H 'Content-Type: application/json' -d '{"url": "http://127.0.0.1:4000/webhooks"}'
//! ```
//!
//! Answers 204 to a verified event (delivered), 401 to anything else (retried by the sender).
//! `verify` computes the HMAC once per request and looks at no more than the first
//! `MAX_SIGNATURES` (8) signatures of the header, so an unauthenticated request with thousands
//! of candidates costs what one does; any `webhook-timestamp`, however far off, is refused.

#[path = "support/args.rs"]
mod args;

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use bytes::Bytes;
use commerce::chrono::{TimeDelta, Utc};
use commerce::webhooks::verify;

async fn receive(State(secret): State<Arc<String>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if let Err(error) = verify(&secret, &headers, &body, Utc::now(), TimeDelta::minutes(5)) {
        println!("refused a request: {error}");
        return StatusCode::UNAUTHORIZED;
    }
    let event: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let order = &event["data"]["order"];
    match event["type"].as_str() {
        Some("ping") => println!(
            "{} ping (webhook {})",
            event["id"], event["data"]["webhook_id"]
        ),
        Some(kind) => println!(
            "{} {kind}: order {} is {} (was {})",
            event["id"],
            order["number"],
            order["status"]["key"],
            event["data"]["previous_status"]["key"],
        ),
        None => println!("an event without a type: {event}"),
    }
    StatusCode::NO_CONTENT
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let secret = args::arguments(&[], 1)?
        .pop()
        .or_else(|| std::env::var("COMMERCE_WEBHOOK_SECRET").ok())
        .ok_or("usage: webhook_receiver <whsec_... secret> (or COMMERCE_WEBHOOK_SECRET)")?;
    let addr = std::env::var("COMMERCE_RECEIVER_ADDR").unwrap_or_else(|_| "127.0.0.1:4000".into());
    let app = axum::Router::new()
        .route("/webhooks", post(receive))
        .with_state(Arc::new(secret));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("Receiving webhooks on http://{addr}/webhooks");
    axum::serve(listener, app).await?;
    Ok(())
}
