//! Adapter parity: one script of requests (every endpoint and every error status) sent
//! through the bare engine, the axum router and the warp filter, on identically seeded
//! stores with the same clock, gives the same status, body and headers from all three.
//! Each request sends its own `Request-Id` (the step's number), so the answers, error bodies'
//! `error.request_id` included, are the same byte for byte; a request without one gets a
//! generated id from each, compared with the id masked.
#![cfg(all(feature = "axum", feature = "warp"))]

use std::sync::Arc;

use async_trait::async_trait;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request, Response};
use commerce::Engine;
use commerce::store::MemoryStore;
use commerce_core::testing::http::{Harness, HttpIntegration, TestResponse};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

struct Axum(axum::Router);

#[async_trait]
impl HttpIntegration for Axum {
    async fn send(&self, request: Request<Bytes>) -> Response<Bytes> {
        let response = self.0.clone().oneshot(request.map(Body::from)).await;
        let (parts, body) = response.unwrap_or_else(|never| match never {}).into_parts();
        Response::from_parts(parts, body.collect().await.expect("body").to_bytes())
    }
}

struct Warp<F>(F);

#[async_trait]
impl<F> HttpIntegration for Warp<F>
where
    F: warp::Filter<Extract = (commerce::warp::WarpResponse,), Error = warp::Rejection>
        + Clone
        + Send
        + Sync
        + 'static,
{
    async fn send(&self, request: Request<Bytes>) -> Response<Bytes> {
        let request = request.map(http_body_util::Full::new);
        let response = warp::service(self.0.clone()).oneshot(request).await;
        let (parts, body) = response.unwrap_or_else(|never| match never {}).into_parts();
        Response::from_parts(parts, body.collect().await.expect("body").to_bytes())
    }
}

fn mount_axum(engine: Engine) -> Arc<dyn HttpIntegration> {
    Arc::new(Axum(commerce::axum::router(engine)))
}

fn mount_warp(engine: Engine) -> Arc<dyn HttpIntegration> {
    Arc::new(Warp(commerce::warp::api(engine)))
}

/// One scripted request.
struct Step {
    method: Method,
    key: Option<&'static str>,
    path: String,
    body: Bytes,
    headers: Vec<(&'static str, &'static str)>,
}

fn step(method: Method, key: Option<&'static str>, path: impl Into<String>) -> Step {
    Step {
        method,
        key,
        path: path.into(),
        body: Bytes::new(),
        headers: Vec::new(),
    }
}

const A: Option<&str> = Some("sk_demo_marketer");

fn get(key: Option<&'static str>, path: impl Into<String>) -> Step {
    step(Method::GET, key, path)
}

fn post(key: Option<&'static str>, path: impl Into<String>, body: impl Into<Bytes>) -> Step {
    Step {
        body: body.into(),
        ..step(Method::POST, key, path)
    }
}

/// The script: every endpoint, then 401, the 403s, 404, 405, 409, 413, 422 and 429.
fn script(h: &Harness) -> Vec<Step> {
    let f = &h.fixture;
    let order = |reference: &str| {
        let mut body = h.order_body(2, "40.00");
        body["external_reference"] = json!(reference);
        body["lines"][0]["warranty_ids"] = json!([]);
        body.to_string()
    };
    let quote = json!({
        "shipping_option_id": f.standard_shipping,
        "governorate_id": f.cairo,
        "lines": [{"variant_id": f.featured_variants[0], "quantity": 2, "profit": "50.01",
                   "warranty_ids": [f.featured_warranties[0]]}],
    });
    let mut steps = vec![
        get(A, "/api/v1/me"),
        step(Method::HEAD, A, "/api/v1/me"),
        get(A, "/api/v1/categories"),
        get(A, "/api/v1/products?per_page=5&page=2"),
        get(
            A,
            format!("/api/v1/products?category_id={}", f.child_category),
        ),
        get(A, "/api/v1/products?q=%D8%B3%D9%85%D8%A7%D8%B9%D8%A9"),
        get(
            A,
            "/api/v1/products?updated_since=2026-01-01T00:00:00%2B02:00",
        ),
        get(A, format!("/api/v1/products/{}", f.featured_product)),
        get(A, "/api/v1/shipping/options"),
        post(A, "/api/v1/shipping/quote", quote.to_string()),
        Step {
            headers: vec![("idempotency-key", "parity-1")],
            ..post(A, "/api/v1/orders", order("PARITY-1"))
        },
        Step {
            headers: vec![("idempotency-key", "parity-1")],
            ..post(A, "/api/v1/orders", order("PARITY-1"))
        },
        post(A, "/api/v1/orders", order("PARITY-1")), // 409 duplicate reference
        post(A, "/api/v1/orders", order("PARITY-2")),
        get(A, "/api/v1/orders"),
        get(A, "/api/v1/orders?family=delivered"),
        get(A, "/api/v1/orders?number=100001"),
        get(A, format!("/api/v1/orders/{}", f.confirmed_order)),
        post(
            A,
            format!("/api/v1/orders/{}/cancel", f.confirmed_order),
            r#"{"reason_note":"العميل غيّر رأيه"}"#,
        ),
        get(A, "/api/v1/wallet"),
        get(Some("sk_demo_supplier"), "/api/v1/wallet"),
        // 401
        get(None, "/api/v1/me"),
        get(Some("sk_demo_revoked"), "/api/v1/me"),
        // 403s
        get(Some("sk_demo_inactive"), "/api/v1/me"),
        get(Some("sk_demo_api_pending"), "/api/v1/me"),
        get(Some("sk_demo_supplier"), "/api/v1/products"),
        get(Some("sk_demo_catalog_only"), "/api/v1/orders"),
        // 404
        get(A, "/api/v1/nothing"),
        get(A, "/api/v1/products/999999"),
        get(
            Some("sk_demo_marketer_b"),
            format!("/api/v1/orders/{}", f.held_order),
        ),
        // 405 with Allow
        step(Method::DELETE, None, "/api/v1/orders"),
        get(A, "/api/v1/shipping/quote"),
        // 413, on a known path and an unknown one
        post(A, "/api/v1/orders", vec![b' '; 2 * 1024 * 1024]),
        post(A, "/api/v1/nothing", vec![b' '; 2 * 1024 * 1024]),
        // 422
        post(A, "/api/v1/orders", "{"),
        post(A, "/api/v1/orders", "{}"),
        get(A, "/api/v1/products?per_page=1000"),
    ];
    // 429: the limited key allows 5 a minute.
    for _ in 0..6 {
        steps.push(get(Some("sk_demo_limited"), "/api/v1/me"));
    }
    steps
}

/// Order numbers (`number`, `existing_order_number`) are random per store: mask them
/// (legacy numbers, all digits, are kept).
fn mask_numbers(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match field {
                    Value::String(text)
                        if key.ends_with("number") && text.as_bytes().get(2) == Some(&b'-') =>
                    {
                        *field = json!("<number>");
                    }
                    other => mask_numbers(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_numbers),
        _ => {}
    }
}

/// What must be identical: status, body (numbers masked) and the headers that matter.
fn observed(r: &TestResponse) -> (u16, Value, Vec<(String, Option<String>)>) {
    let body = if r.body.is_empty() {
        Value::Null
    } else {
        let mut json: Value = serde_json::from_slice(&r.body).expect("a JSON body");
        mask_numbers(&mut json);
        json
    };
    let headers = [
        "content-type",
        "cache-control",
        "allow",
        "retry-after",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "location",
        "idempotent-replayed",
        "request-id",
    ]
    .iter()
    .map(|name| (name.to_string(), r.header(name).map(str::to_owned)))
    .collect();
    (r.status.as_u16(), body, headers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_axum_and_warp_answer_identically() {
    let bare = Harness::bare(Arc::new(MemoryStore::new())).await;
    let axum = Harness::new(Arc::new(MemoryStore::new()), mount_axum).await;
    let warp = Harness::new(Arc::new(MemoryStore::new()), mount_warp).await;
    assert_eq!(bare.fixture, axum.fixture);
    assert_eq!(bare.fixture, warp.fixture);
    let mut statuses = Vec::new();
    for (i, s) in script(&bare).into_iter().enumerate() {
        let mut answers = Vec::new();
        let mut masked = Vec::new();
        let id = format!("parity-{i}");
        let mut headers: Vec<(&str, &str)> = s.headers.clone();
        headers.push(("request-id", id.as_str()));
        for h in [&bare, &axum, &warp] {
            let r = h
                .request(s.method.clone(), s.key, &s.path, s.body.clone(), &headers)
                .await;
            assert_eq!(r.request_id(), id);
            answers.push(observed(&r));
            if s.method == Method::GET {
                // Sent again without an id: the same answer apart from the generated id.
                let again = h
                    .request(s.method.clone(), s.key, &s.path, s.body.clone(), &s.headers)
                    .await;
                let mut json = again.json_without_request_id();
                mask_numbers(&mut json);
                masked.push((again.status, json));
            }
        }
        if let [first, rest @ ..] = masked.as_slice() {
            let what = format!("step {i} without an id: {} {}", s.method, s.path);
            assert!(rest.iter().all(|other| other == first), "{what}");
        }
        let what = format!("step {i}: {} {}", s.method, s.path);
        assert_eq!(
            answers[0], answers[1],
            "axum differs from the engine at {what}"
        );
        assert_eq!(
            answers[0], answers[2],
            "warp differs from the engine at {what}"
        );
        statuses.push(answers[0].0);
    }
    // The script really covers every status it means to.
    for status in [200, 201, 401, 403, 404, 405, 409, 413, 422, 429] {
        assert!(statuses.contains(&status), "no {status} in the script");
    }
    // And the API really moved the same way in all three.
    for h in [&axum, &warp] {
        assert_eq!(h.order_count().await, bare.order_count().await);
    }
}
