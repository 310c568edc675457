//! Helpers for adapter test suites (mounting, fall-through, prefixes), shared by the axum and
//! warp crates' tests.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use serde_json::{Value, json};

use crate::engine::Engine;
use crate::sandbox;

use super::fixtures::*;
use super::harness::*;

/// The request with `prefix` put before its path (an integration mounted under a prefix).
pub fn with_prefix(prefix: &str, mut request: Request<Bytes>) -> Request<Bytes> {
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |pq| pq.as_str())
        .to_owned();
    *request.uri_mut() = format!("{prefix}{target}").parse().expect("a valid path");
    request
}

/// Sends `method path` with marketer A's key and no body.
pub async fn send(integration: &dyn HttpIntegration, method: &str, path: &str) -> Response<Bytes> {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {A}"))
        .body(Bytes::new())
        .expect("request");
    integration.send(request).await
}

/// An engine over a fresh `MemoryStore` with the sandbox seeded.
pub async fn seeded_engine() -> Engine {
    let engine = Engine::new(Arc::new(crate::store::MemoryStore::new()));
    sandbox::seed(&engine).await.expect("the sandbox seeds");
    engine
}

/// A body as JSON (`Null` when it is not JSON).
pub fn json(body: &Bytes) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

/// Checks an app that serves `GET /` ("home") and `GET /shop/hello` ("hello") itself and
/// mounts the API both at the root and under `/shop`: its own routes answer, the API
/// answers at both mounts (its 404 and 405 included), and everything else falls through to
/// the app's empty 404, never the engine's JSON.
pub async fn assert_mounted_beside_the_apps_routes(app: &dyn HttpIntegration) {
    for (path, body) in [("/", &b"home"[..]), ("/shop/hello", &b"hello"[..])] {
        let r = send(app, "GET", path).await;
        assert_eq!(
            (r.status().as_u16(), r.body().as_ref()),
            (200, body),
            "{path}"
        );
    }
    for path in ["/api/v1/me", "/shop/api/v1/me"] {
        let r = send(app, "GET", path).await;
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(json(r.body())["data"]["side"], "marketer", "{path}");
    }
    let unknown = send(app, "GET", "/shop/api/v1/nothing").await;
    assert_eq!(unknown.status(), 404);
    assert_eq!(json(unknown.body())["error"]["code"], "not_found");
    let wrong_method = send(app, "DELETE", "/api/v1/orders").await;
    assert_eq!(wrong_method.status(), 405);
    assert_eq!(wrong_method.headers()["allow"], "GET, HEAD, POST");
    for path in [
        "/nothing",
        "/shop/nothing",
        "/api/v2/me",
        "/api/v10/me",
        "/shopping/api/v1/me",
    ] {
        let r = send(app, "GET", path).await;
        assert_eq!(r.status(), 404, "{path}");
        assert!(r.body().is_empty(), "{path} is not the engine's");
    }
}

/// Registers a sandbox order through `path` and returns the response's `Location`.
pub async fn order_location(integration: &dyn HttpIntegration, path: &str) -> String {
    let body = json!({
        "full_name": "سارة", "phone": "01112223334", "address": "عنوان",
        "governorate_id": 1, "shipping_option_id": 1,
        "lines": [{"variant_id": 3, "quantity": 1, "profit": "10"}],
    });
    let request = Request::post(path)
        .header("authorization", format!("Bearer {A}"))
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_string()))
        .expect("request");
    let response = integration.send(request).await;
    assert_eq!(response.status(), 201);
    response.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned()
}
