//! The HTTP conformance suite through the bare engine, on the in-memory store.

use std::sync::Arc;

use commerce_core::store::MemoryStore;
use commerce_core::testing::http::Harness;

commerce_core::http_conformance_tests!(Harness::bare(Arc::new(MemoryStore::new())));

/// The 413's message names the engine's own body limit, not the default one, on the head
/// (declared length) and while reading (a body over it).
#[tokio::test]
async fn the_413_message_names_the_configured_body_limit() {
    let engine = commerce_core::Engine::builder(Arc::new(MemoryStore::new()))
        .configure(|c| c.order_body_limit = 64 * 1024)
        .build()
        .expect("valid settings");
    let body = bytes::Bytes::from(vec![b' '; 64 * 1024 + 1]);
    let request = http::Request::post("/api/v1/orders").body(body).unwrap();
    let response = engine.handle(request).await;
    assert_eq!(response.status(), 413);
    let json: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
    let message = json["error"]["message"].as_str().unwrap();
    assert!(message.contains("64 كيلوبايت"), "{message}");
    assert!(!message.contains("ميجابايت"), "{message}");
    assert!(
        json["error"]["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_")
    );
}
