//! The HTTP conformance suite: every endpoint and error case, written once, run through any
//! integration (the bare engine, the axum router, the warp filter) over any store.
//!
//! In the style of juniper's `HttpIntegration`: an integration is anything that turns an
//! `http::Request<Bytes>` into an `http::Response<Bytes>`. [`Harness`] seeds the sandbox on a
//! store with a [`ManualClock`], mounts the engine with the integration, and each case drives
//! it with real requests. [`http_conformance_tests!`](crate::http_conformance_tests) expands
//! to one `#[tokio::test]` per case:
//!
//! ```ignore
//! use std::sync::Arc;
//! use commerce_core::store::MemoryStore;
//! use commerce_core::testing::http::Harness;
//!
//! commerce_core::http_conformance_tests!(Harness::bare(Arc::new(MemoryStore::new())));
//! ```
//!
//! The factory may also produce an `Option<Harness>` (see [`IntoHarness`]): `None` skips the
//! test, for a database that is not configured; such a test still counts as passed, so a
//! suite that needs a database is better given a leading
//! `#[cfg_attr(not(...), ignore = "...")]`, which the macro puts on every test, so that cargo
//! reports it as ignored. A harness built with
//! [`Harness::with_cleanup`] runs its clean-up (e.g. dropping a PostgreSQL schema) once the
//! case is over, whether it passed or panicked.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use chrono::{DateTime, Duration, TimeZone, Utc};
use futures_util::FutureExt;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::clock::ManualClock;
use crate::model::*;
use crate::operator::KeySpec;
use crate::sandbox::{self, Sandbox};
use crate::store::Store;
use crate::{Config, Engine};

/// Something that serves the API: the engine itself or the engine mounted in a framework.
#[async_trait]
pub trait HttpIntegration: Send + Sync + 'static {
    /// Sends one request and returns the whole response.
    async fn send(&self, request: Request<Bytes>) -> Response<Bytes>;
}

#[async_trait]
impl HttpIntegration for Engine {
    async fn send(&self, request: Request<Bytes>) -> Response<Bytes> {
        self.handle(request).await
    }
}

/// The instant every harness starts at: Sunday 22 November 2026, 10:00:00 in Cairo.
pub fn start_instant() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 8, 0, 0)
        .single()
        .expect("valid instant")
}

/// A seeded engine behind an integration, with a clock the cases move.
pub struct Harness {
    /// The engine (for the operator API and the meter).
    pub engine: Engine,
    /// The engine's clock.
    pub clock: ManualClock,
    /// Ids of the sandbox records.
    pub fixture: Sandbox,
    /// The path the integration mounts the API under (`""` at the root, `"/shop"`, ...): the
    /// `Location` of a new order starts with it.
    pub mount: String,
    client: Arc<dyn HttpIntegration>,
    cleanup: Mutex<Option<Cleanup>>,
}

type Cleanup = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What the factory of [`http_conformance_tests!`](crate::http_conformance_tests) produces: a
/// [`Harness`], or an `Option` of one where `None` skips the test (e.g. PostgreSQL is not
/// configured).
pub trait IntoHarness {
    /// The harness to run the case on, or `None` to skip it.
    fn into_harness(self) -> Option<Harness>;
}

impl IntoHarness for Harness {
    fn into_harness(self) -> Option<Harness> {
        Some(self)
    }
}

impl<T: IntoHarness> IntoHarness for Option<T> {
    fn into_harness(self) -> Option<Harness> {
        self.and_then(IntoHarness::into_harness)
    }
}

/// A response read whole.
#[derive(Debug, Clone)]
pub struct TestResponse {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes.
    pub body: Bytes,
}

impl TestResponse {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `error.code` of an error body.
    pub fn error_code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Asserts the status and error code, with the body in the failure message.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(
            self.status.as_u16(),
            status,
            "body: {}",
            String::from_utf8_lossy(&self.body)
        );
        assert_eq!(
            self.error_code(),
            code,
            "body: {}",
            String::from_utf8_lossy(&self.body)
        );
    }

    /// Asserts a 200, with `context` and the body in the failure message.
    #[track_caller]
    pub fn assert_ok(&self, context: &str) {
        assert_eq!(
            self.status,
            200,
            "{context}: {}",
            String::from_utf8_lossy(&self.body)
        );
    }

    /// The field keys of a 422.
    pub fn error_fields(&self) -> Vec<String> {
        self.json()["error"]["fields"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }
}

impl Harness {
    /// Seeds the sandbox on `store` and mounts the engine with `mount`.
    pub async fn new(
        store: Arc<dyn Store>,
        mount: impl FnOnce(Engine) -> Arc<dyn HttpIntegration>,
    ) -> Self {
        let clock = ManualClock::new(start_instant());
        let engine = Engine::with(store, Config::default(), Arc::new(clock.clone()));
        let fixture = sandbox::seed(&engine).await.expect("the sandbox seeds");
        let client = mount(engine.clone());
        Self {
            engine,
            clock,
            fixture,
            mount: String::new(),
            client,
            cleanup: Mutex::new(None),
        }
    }

    /// Declares the path the integration mounts the API under (the suite keeps sending
    /// `/api/v1/...`; the integration adds the prefix).
    pub fn with_mount(mut self, mount: &str) -> Self {
        self.mount = mount.to_owned();
        self
    }

    /// Runs `cleanup` when [`finish`](Self::finish) is called (the conformance macro calls it
    /// after each case, also after a failed one), e.g. to drop the test's database schema.
    pub fn with_cleanup(self, cleanup: impl Future<Output = ()> + Send + 'static) -> Self {
        *self.cleanup.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::pin(cleanup));
        self
    }

    /// Runs the clean-up given to [`with_cleanup`](Self::with_cleanup), if any.
    pub async fn finish(self) {
        let cleanup = self.take_cleanup();
        drop(self);
        if let Some(cleanup) = cleanup {
            cleanup.await;
        }
    }

    fn take_cleanup(&self) -> Option<Cleanup> {
        self.cleanup
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The bare engine as the integration.
    pub async fn bare(store: Arc<dyn Store>) -> Self {
        Self::new(store, |engine| Arc::new(engine)).await
    }

    /// Sends a request.
    pub async fn send(&self, request: Request<Bytes>) -> TestResponse {
        let response = self.client.send(request).await;
        let (parts, body) = response.into_parts();
        TestResponse {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    /// Sends `method path` with a key and a raw body.
    pub async fn request(
        &self,
        method: Method,
        key: Option<&str>,
        path: &str,
        body: impl Into<Bytes>,
        headers: &[(&str, &str)],
    ) -> TestResponse {
        self.send(build_request(method, key, path, body, headers))
            .await
    }

    /// `GET path` with a key.
    pub async fn get(&self, key: &str, path: &str) -> TestResponse {
        self.request(Method::GET, Some(key), path, Bytes::new(), &[])
            .await
    }

    /// `POST path` with a key and a JSON body.
    pub async fn post(&self, key: &str, path: &str, body: &Value) -> TestResponse {
        self.request(Method::POST, Some(key), path, body.to_string(), &[])
            .await
    }

    /// `POST /api/v1/orders` with an `Idempotency-Key`.
    pub async fn post_idempotent(
        &self,
        key: &str,
        idempotency_key: &str,
        body: &Value,
    ) -> TestResponse {
        self.request(
            Method::POST,
            Some(key),
            "/api/v1/orders",
            body.to_string(),
            &[("idempotency-key", idempotency_key)],
        )
        .await
    }

    /// A valid order body: one line of the plain variant.
    pub fn order_body(&self, quantity: i64, profit: &str) -> Value {
        json!({
            "full_name": "سارة حسن",
            "phone": "+201112223334",
            "address": "12 شارع النصر، مدينة نصر",
            "governorate_id": self.fixture.cairo,
            "shipping_option_id": self.fixture.standard_shipping,
            "lines": [{"variant_id": self.fixture.plain_variant, "quantity": quantity, "profit": profit}],
        })
    }

    /// A variant's `available`, read through the operator API.
    pub async fn available(&self, variant: VariantId) -> i64 {
        let products = self
            .engine
            .store()
            .products_of_variants(&[variant])
            .await
            .expect("store answers");
        products
            .iter()
            .flat_map(|p| &p.variants)
            .find(|v| v.id == variant)
            .map(|v| v.available)
            .expect("variant exists")
    }

    /// Marketer A's order count.
    pub async fn order_count(&self) -> u64 {
        let page = PageRequest {
            page: 1,
            per_page: 1,
        };
        self.engine
            .store()
            .orders(self.fixture.marketer_a, &OrderFilter::default(), page)
            .await
            .expect("store answers")
            .total
    }
}

/// `method path` with a bearer key, extra headers and a body (JSON when not empty).
pub fn build_request(
    method: Method,
    key: Option<&str>,
    path: &str,
    body: impl Into<Bytes>,
    headers: &[(&str, &str)],
) -> Request<Bytes> {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("accept", "application/json");
    if let Some(key) = key {
        builder = builder.header("authorization", format!("Bearer {key}"));
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let body: Bytes = body.into();
    if !body.is_empty() {
        builder = builder.header("content-type", "application/json");
    }
    builder.body(body).expect("valid request")
}

/// Helpers for adapter test suites (mounting, fall-through, prefixes), shared by the axum and
/// warp crates' tests.
pub mod adapters {
    use super::*;

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
    pub async fn send(
        integration: &dyn HttpIntegration,
        method: &str,
        path: &str,
    ) -> Response<Bytes> {
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
}

const A: &str = "sk_demo_marketer";
const B: &str = "sk_demo_marketer_b";

fn money(v: &Value) -> &str {
    v.as_str().unwrap_or("<not a string>")
}

// ---------------------------------------------------------------- authentication and pipeline

/// `GET /me` returns the account, its key and the rate-limit headers.
pub async fn me_returns_account_token_and_rate_headers(h: &Harness) {
    let r = h.get(A, "/api/v1/me").await;
    assert_eq!(r.status, 200);
    let d = &r.json()["data"];
    assert_eq!(d["id"], h.fixture.marketer_a);
    assert_eq!(d["side"], "marketer");
    assert_eq!(d["email"], "ahmed@example.com");
    assert!(d["store_name"].is_string());
    assert_eq!(
        d["token"]["abilities"],
        json!(["catalog:read", "orders:read", "orders:write", "wallet:read"])
    );
    assert_eq!(d["token"]["expires_at"], Value::Null);
    assert_eq!(r.header("x-ratelimit-limit"), Some("120"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("119"));
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/json"))
    );
}

/// A supplier's `/me` shows `side` supplier and a null `store_name`; its catalogue calls are
/// `wrong_side`, its wallet works.
pub async fn supplier_sees_me_and_wallet_but_not_the_catalogue(h: &Harness) {
    let r = h.get("sk_demo_supplier", "/api/v1/me").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["data"]["side"], "supplier");
    assert_eq!(r.json()["data"]["store_name"], Value::Null);
    h.get("sk_demo_supplier", "/api/v1/products")
        .await
        .assert_error(403, "wrong_side");
    h.get("sk_demo_supplier", "/api/v1/orders")
        .await
        .assert_error(403, "wrong_side");
    let wallet = h.get("sk_demo_supplier", "/api/v1/wallet").await;
    assert_eq!(wallet.status, 200);
    assert_eq!(wallet.json()["data"]["side"], "supplier");
}

/// Missing, malformed, unknown, expired and revoked keys are all 401, without rate headers.
pub async fn bad_keys_are_unauthenticated(h: &Harness) {
    let none = h
        .request(Method::GET, None, "/api/v1/me", Bytes::new(), &[])
        .await;
    none.assert_error(401, "unauthenticated");
    assert!(none.header("x-ratelimit-limit").is_none());
    let basic = h
        .request(
            Method::GET,
            None,
            "/api/v1/me",
            Bytes::new(),
            &[("authorization", "Basic c2tfZGVtbw==")],
        )
        .await;
    basic.assert_error(401, "unauthenticated");
    for key in [
        "sk_nope",
        "sk_demo_expired",
        "sk_demo_revoked",
        "SK_DEMO_MARKETER",
    ] {
        h.get(key, "/api/v1/me")
            .await
            .assert_error(401, "unauthenticated");
    }
    assert!(
        !none.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
    );
}

/// Account state, API status and abilities are checked in that order, each with its code.
pub async fn account_api_status_and_ability_errors(h: &Harness) {
    h.get("sk_demo_inactive", "/api/v1/me")
        .await
        .assert_error(403, "account_inactive");
    let pending = h.get("sk_demo_api_pending", "/api/v1/me").await;
    pending.assert_error(403, "api_not_enabled");
    assert_eq!(pending.json()["error"]["api_status"], "pending");
    let catalog_only = "sk_demo_catalog_only";
    assert_eq!(h.get(catalog_only, "/api/v1/products").await.status, 200);
    h.get(catalog_only, "/api/v1/orders")
        .await
        .assert_error(403, "forbidden_ability");
    h.get(catalog_only, "/api/v1/wallet")
        .await
        .assert_error(403, "forbidden_ability");
    h.post(catalog_only, "/api/v1/orders", &h.order_body(1, "10"))
        .await
        .assert_error(403, "forbidden_ability");
    // Suspending the account stops its keys at once.
    h.engine
        .operator()
        .set_account_state(h.fixture.marketer_b, AccountState::Suspended)
        .await
        .expect("operator");
    h.get(B, "/api/v1/me")
        .await
        .assert_error(403, "account_inactive");
}

/// Unknown paths are 404, wrong methods 405 with `Allow`, before any key check.
pub async fn unknown_paths_and_wrong_methods(h: &Harness) {
    h.request(Method::GET, None, "/api/v1/nothing", Bytes::new(), &[])
        .await
        .assert_error(404, "not_found");
    h.get(A, "/api/v1/products/abc")
        .await
        .assert_error(404, "not_found");
    let r = h
        .request(Method::DELETE, None, "/api/v1/orders", Bytes::new(), &[])
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, HEAD, POST"));
    let r = h
        .request(
            Method::GET,
            Some(A),
            "/api/v1/shipping/quote",
            Bytes::new(),
            &[],
        )
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("POST"));
}

/// The per-key limit: headers count down, the next request is a 429 with `retry_after`,
/// refused requests do not count, and the next minute starts afresh.
pub async fn rate_limit_counts_down_then_refuses(h: &Harness) {
    let key = "sk_demo_limited";
    for remaining in (0..5).rev() {
        let r = h.get(key, "/api/v1/me").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-ratelimit-limit"), Some("5"));
        assert_eq!(
            r.header("x-ratelimit-remaining"),
            Some(remaining.to_string().as_str())
        );
    }
    h.clock.advance(Duration::seconds(15));
    let refused = h.get(key, "/api/v1/me").await;
    refused.assert_error(429, "rate_limited");
    assert_eq!(refused.json()["error"]["retry_after"], 45);
    assert_eq!(refused.header("retry-after"), Some("45"));
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    h.clock.advance(Duration::seconds(45));
    let next = h.get(key, "/api/v1/me").await;
    assert_eq!(next.status, 200);
    assert_eq!(next.header("x-ratelimit-remaining"), Some("4"));
}

// ---------------------------------------------------------------- catalogue

/// Categories are listed with `meta`.
pub async fn categories_are_listed_with_meta(h: &Harness) {
    let r = h.get(A, "/api/v1/categories").await;
    assert_eq!(r.status, 200);
    let body = r.json();
    let data = body["data"].as_array().expect("array");
    assert_eq!(data.len(), 3);
    assert_eq!(
        body["meta"],
        json!({"page": 1, "per_page": 25, "total": 3, "last_page": 1})
    );
    let child = data
        .iter()
        .find(|c| c["id"] == h.fixture.child_category)
        .expect("child listed");
    assert_eq!(child["parent_id"], h.fixture.parent_category);
    let empty = h.get(A, "/api/v1/categories?page=9").await.json();
    assert_eq!(empty["data"], json!([]));
    assert_eq!(empty["meta"]["last_page"], 1);
}

/// Products page at 25 by default, and stopped products are never listed.
pub async fn products_paginate_and_hide_stopped_products(h: &Harness) {
    let first = h.get(A, "/api/v1/products").await.json();
    assert_eq!(first["data"].as_array().map(Vec::len), Some(25));
    assert_eq!(
        first["meta"],
        json!({"page": 1, "per_page": 25, "total": 32, "last_page": 2})
    );
    let second = h.get(A, "/api/v1/products?page=2").await.json();
    assert_eq!(second["data"].as_array().map(Vec::len), Some(7));
    let all = h.get(A, "/api/v1/products?per_page=100").await.json();
    let ids: Vec<i64> = all["data"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|p| p["id"].as_i64())
        .collect();
    assert!(!ids.contains(&h.fixture.stopped_product));
    h.get(
        A,
        &format!("/api/v1/products/{}", h.fixture.stopped_product),
    )
    .await
    .assert_error(404, "not_found");
}

/// The product shape: variants with money strings and stock, warranties with numbers.
pub async fn product_detail_has_every_field(h: &Harness) {
    let r = h
        .get(
            A,
            &format!("/api/v1/products/{}", h.fixture.featured_product),
        )
        .await;
    assert_eq!(r.status, 200);
    let p = &r.json()["data"];
    for field in [
        "id",
        "title",
        "slug",
        "category",
        "description",
        "images",
        "files",
        "video_url",
        "marketing_files_url",
        "url",
        "variants",
        "warranties",
        "updated_at",
    ] {
        assert!(p.get(field).is_some(), "missing {field}");
    }
    assert_eq!(p["category"]["id"], h.fixture.child_category);
    let variants = p["variants"].as_array().expect("variants");
    assert_eq!(variants.len(), 3);
    assert_eq!(variants[0]["price"], "249.99");
    assert_eq!(variants[0]["stock_hint"], 100);
    assert_eq!(variants[2]["available"], 0);
    assert_eq!(variants[2]["in_stock"], false);
    assert_eq!(variants[2]["price"], "275.50");
    let warranty = &p["warranties"][0];
    assert_eq!(warranty["admin_fee"], json!(15.0));
    assert_eq!(warranty["percent"], json!(5.0));
    assert!(warranty["price_rule"].is_string());
    assert_eq!(warranty["duration_days"], 180);
    let stamp = p["updated_at"].as_str().expect("timestamp");
    assert!(stamp.ends_with("+02:00") && stamp.len() == 25, "{stamp}");
}

/// `category_id` includes subcategories; `q` searches titles; unknown category is a 422.
pub async fn products_filter_by_category_and_title(h: &Harness) {
    let parent = h
        .get(
            A,
            &format!(
                "/api/v1/products?per_page=100&category_id={}",
                h.fixture.parent_category
            ),
        )
        .await
        .json();
    assert_eq!(
        parent["meta"]["total"], 25,
        "10 in the child category + 15 in the parent"
    );
    let child = h
        .get(
            A,
            &format!(
                "/api/v1/products?per_page=100&category_id={}",
                h.fixture.child_category
            ),
        )
        .await
        .json();
    assert_eq!(child["meta"]["total"], 10);
    let search = h
        .get(A, "/api/v1/products?q=%D8%B3%D9%85%D8%A7%D8%B9%D8%A9")
        .await
        .json(); // سماعة
    assert_eq!(search["meta"]["total"], 3);
    let unknown = h.get(A, "/api/v1/products?category_id=999999").await;
    unknown.assert_error(422, "validation_failed");
    assert_eq!(unknown.error_fields(), vec!["category_id"]);
}

/// Moves the clock an hour on and gives the plain variant `price`: the instant of the change.
async fn reprice_plain_variant_an_hour_later(h: &Harness, price: &str) -> DateTime<Utc> {
    h.clock.advance(Duration::hours(1));
    let at = h.clock.now_utc();
    h.engine
        .operator()
        .update_variant(
            h.fixture.plain_variant,
            VariantPatch {
                price: Some(price.parse().expect("decimal")),
                ..VariantPatch::default()
            },
        )
        .await
        .expect("operator");
    at
}

/// `updated_since` returns what changed at or after the instant, price changes included.
pub async fn products_sync_with_updated_since(h: &Harness) {
    let since =
        crate::time::cairo_timestamp(reprice_plain_variant_an_hour_later(h, "130.00").await);
    let changed = h
        .get(
            A,
            &format!("/api/v1/products?updated_since={}", urlencode(&since)),
        )
        .await
        .json();
    assert_eq!(changed["meta"]["total"], 1, "{changed}");
    assert_eq!(changed["data"][0]["variants"][0]["price"], "130.00");
    let later = (h.clock.now_utc() + Duration::seconds(1)).to_rfc3339();
    let none = h
        .get(
            A,
            &format!("/api/v1/products?updated_since={}", urlencode(&later)),
        )
        .await
        .json();
    assert_eq!(none["meta"]["total"], 0);
}

/// Invalid paging and timestamps are 422, never clamped.
pub async fn invalid_query_parameters_are_422(h: &Harness) {
    for query in [
        "per_page=0",
        "per_page=101",
        "page=0",
        "page=abc",
        "updated_since=yesterday",
    ] {
        let r = h.get(A, &format!("/api/v1/products?{query}")).await;
        r.assert_error(422, "validation_failed");
    }
    h.get(A, "/api/v1/orders?status=shipped")
        .await
        .assert_error(422, "validation_failed");
    h.get(A, "/api/v1/orders?family=lost")
        .await
        .assert_error(422, "validation_failed");
}

/// A query parameter given with an empty or blank value is a 422 naming it, never taken as
/// absent (decisions 14); an empty parameter the endpoint does not read is ignored.
pub async fn empty_query_values_are_422(h: &Harness) {
    let cases = [
        ("/api/v1/categories", "page"),
        ("/api/v1/categories", "per_page"),
        ("/api/v1/products", "page"),
        ("/api/v1/products", "per_page"),
        ("/api/v1/products", "category_id"),
        ("/api/v1/products", "updated_since"),
        ("/api/v1/products", "q"),
        ("/api/v1/orders", "page"),
        ("/api/v1/orders", "per_page"),
        ("/api/v1/orders", "status"),
        ("/api/v1/orders", "family"),
        ("/api/v1/orders", "external_reference"),
        ("/api/v1/orders", "number"),
        ("/api/v1/orders", "updated_since"),
    ];
    for (path, name) in cases {
        for query in [format!("{name}="), format!("{name}=%20"), name.to_owned()] {
            let r = h.get(A, &format!("{path}?{query}")).await;
            r.assert_error(422, "validation_failed");
            assert_eq!(r.error_fields(), vec![name], "{path}?{query}");
            assert!(
                r.json()["error"]["fields"][name][0]
                    .as_str()
                    .is_some_and(|m| !m.is_ascii()),
                "Arabic message for {path}?{query}"
            );
        }
    }
    let r = h.get(A, "/api/v1/products?per_page=&q=&page=2").await;
    r.assert_error(422, "validation_failed");
    assert_eq!(r.error_fields(), vec!["per_page", "q"]);
    let ignored = h.get(A, "/api/v1/products?unknown=&page=1").await;
    assert_eq!(
        ignored.status,
        200,
        "{}",
        String::from_utf8_lossy(&ignored.body)
    );
}

/// Every text field and string query parameter holds printable text: a control character
/// (NUL, a C1 control) or a bidirectional override is a 422 naming the field on every store,
/// nothing is written; tab and line breaks are text only in `note`, `address`, `reason_note`.
pub async fn control_characters_in_text_are_422(h: &Harness) {
    const REFUSED: [&str; 3] = ["\u{0}", "\u{9B}", "\u{202E}"];
    let before = h.order_count().await;
    let base = h.order_body(1, "10");
    let mut optional = base.clone();
    optional["second_phone"] = json!("01012345678");
    optional["store_name"] = json!("متجر سارة");
    optional["store_link"] = json!("https://shop.example.com/sara");
    optional["note"] = json!("كلم العميل قبل التوصيل");
    optional["external_reference"] = json!("EXT-CTRL-1");
    let fields = [
        "external_reference",
        "full_name",
        "phone",
        "second_phone",
        "address",
        "store_name",
        "store_link",
        "note",
    ];
    for field in fields {
        for bad in REFUSED {
            let mut body = optional.clone();
            let value = body[field].as_str().expect("a string field").to_owned();
            let cut = value.char_indices().nth(3).map_or(value.len(), |(i, _)| i);
            body[field] = json!(format!("{}{bad}{}", &value[..cut], &value[cut..]));
            let r = h.post(A, "/api/v1/orders", &body).await;
            r.assert_error(422, "validation_failed");
            assert_eq!(r.error_fields(), vec![field], "{field} with {bad:?}");
            assert!(
                r.json()["error"]["fields"][field][0]
                    .as_str()
                    .is_some_and(|m| !m.is_ascii()),
                "Arabic message for {field}"
            );
        }
    }
    // Tab and line breaks: text in `note` and `address`, refused in a single-line field.
    for breaks in ["\t", "\n", "\r\n"] {
        let mut body = base.clone();
        body["full_name"] = json!(format!("سارة{breaks}حسن"));
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), vec!["full_name"], "{breaks:?}");
    }
    assert_eq!(h.order_count().await, before, "nothing refused was written");
    let mut multi_line = base.clone();
    let address = "12 شارع النصر\nالدور التالت،\tشقة 5\r\nمدينة نصر";
    multi_line["address"] = json!(address);
    multi_line["note"] = json!("سطر أول\nسطر تاني\tبعد مسافة");
    let created = h.post(A, "/api/v1/orders", &multi_line).await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let order = created.json()["data"].clone();
    assert_eq!(order["customer"]["address"], address);
    assert_eq!(h.order_count().await, before + 1);
    // The cancel body's `reason_note` is multi-line.
    let cancel = format!("/api/v1/orders/{}/cancel", order["id"]);
    for bad in REFUSED {
        let r = h
            .post(
                A,
                &cancel,
                &json!({"reason_note": format!("العميل{bad}غيّر رأيه")}),
            )
            .await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), vec!["reason_note"], "{bad:?}");
    }
    let reason = "العميل غيّر رأيه\nوهيطلب تاني";
    let cancelled = h.post(A, &cancel, &json!({"reason_note": reason})).await;
    assert_eq!(cancelled.status, 200);
    assert_eq!(cancelled.json()["data"]["timeline"][1]["reason"], reason);
    // String query parameters, on the catalogue and the orders list.
    for bad in REFUSED.iter().chain(&["\t", "\n"]) {
        for (path, name) in [
            ("/api/v1/products", "q"),
            ("/api/v1/orders", "number"),
            ("/api/v1/orders", "external_reference"),
        ] {
            let value = urlencode(&format!("EG{bad}X"));
            let r = h.get(A, &format!("{path}?{name}={value}")).await;
            r.assert_error(422, "validation_failed");
            assert_eq!(r.error_fields(), vec![name], "{path}?{name}={value}");
        }
    }
    // Arabic, an emoji and a right-to-left mark are text.
    let search = urlencode("سماعة\u{200F} 🎧");
    let r = h.get(A, &format!("/api/v1/products?q={search}")).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["meta"]["total"], 0);
}

/// Any valid `updated_since` is served on every store: one before every record (even before
/// the range a store keeps in nanoseconds, 1677-2262) returns everything, one after returns
/// nothing; never a 5xx (decisions 14).
pub async fn updated_since_far_past_and_future_are_served(h: &Harness) {
    let ids = |v: &Value| {
        v["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|item| item["id"].clone())
            .collect::<Vec<_>>()
    };
    for path in ["/api/v1/products", "/api/v1/orders"] {
        let all = h.get(A, &format!("{path}?per_page=100")).await;
        assert_eq!(all.status, 200);
        let all = all.json();
        assert!(
            all["meta"]["total"].as_u64().is_some_and(|n| n > 0),
            "{path}"
        );
        for since in [
            "1500-01-01T00:00:00Z",
            "1677-09-21T00:00:00Z",
            "0001-01-01T00:00:00+02:00",
            "1970-01-01T00:00:00Z",
        ] {
            let r = h
                .get(
                    A,
                    &format!("{path}?per_page=100&updated_since={}", urlencode(since)),
                )
                .await;
            r.assert_ok(&format!("{path} {since}"));
            let body = r.json();
            assert_eq!(body["meta"], all["meta"], "{path} {since}");
            assert_eq!(ids(&body), ids(&all), "{path} {since}");
        }
        for since in [
            "9999-12-31T23:59:59Z",
            "2262-04-12T00:00:00Z",
            "9999-12-31T23:59:59.999999999-05:00",
        ] {
            let r = h
                .get(A, &format!("{path}?updated_since={}", urlencode(since)))
                .await;
            r.assert_ok(&format!("{path} {since}"));
            let body = r.json();
            assert_eq!(body["meta"]["total"], 0, "{path} {since}");
            assert_eq!(body["data"], json!([]), "{path} {since}");
        }
    }
}

// ---------------------------------------------------------------- shipping

/// Shipping options list governorates with money strings and the 500.00 example.
pub async fn shipping_options_show_rates_and_example(h: &Harness) {
    let r = h.get(A, "/api/v1/shipping/options").await;
    assert_eq!(r.status, 200);
    let options = r.json()["data"].as_array().cloned().expect("array");
    assert_eq!(options.len(), 2);
    let standard = options
        .iter()
        .find(|o| o["id"] == h.fixture.standard_shipping)
        .expect("standard");
    assert_eq!(standard["governorates"].as_array().map(Vec::len), Some(27));
    let cairo = standard["governorates"]
        .as_array()
        .expect("array")
        .iter()
        .find(|g| g["id"] == h.fixture.cairo)
        .expect("cairo")
        .clone();
    assert_eq!(cairo["name"], "القاهرة");
    assert_eq!(cairo["delivery_charge"], "45.00");
    assert_eq!(cairo["shipping_tax_percent"], "14.00");
    assert_eq!(cairo["total_due_tax_percent"], "1.00");
    // 45 x 1.14 + 500 x 1% = 51.30 + 5.00
    assert_eq!(
        cairo["example"],
        json!({"goods": "500.00", "delivery_charge": "56.30"})
    );
    let express = options
        .iter()
        .find(|o| o["id"] == h.fixture.express_shipping)
        .expect("express");
    assert_eq!(express["governorates"].as_array().map(Vec::len), Some(3));
}

fn featured_quote_body(h: &Harness) -> Value {
    json!({
        "shipping_option_id": h.fixture.standard_shipping,
        "governorate_id": h.fixture.cairo,
        "lines": [{"variant_id": h.fixture.featured_variants[0], "quantity": 2, "profit": "50.01", "warranty_ids": [h.fixture.featured_warranties[0]]}],
    })
}

/// The quote computes every figure to the piastre.
pub async fn quote_computes_to_the_piastre(h: &Harness) {
    let r = h
        .post(A, "/api/v1/shipping/quote", &featured_quote_body(h))
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // sale 249.99 + 50.01 = 300.00; x2 = 600.00; warranty 15 + 300 x 5% = 30.00, x2 = 60.00;
    // delivery 45 x 1.14 + 660 x 1% = 57.90; profit 100.02; commission 4.0008 -> 4.00.
    assert_eq!(
        r.json()["data"],
        json!({
            "shipping_option_id": h.fixture.standard_shipping,
            "governorate_id": h.fixture.cairo,
            "products": "600.00",
            "warranties": "60.00",
            "delivery_charge": "57.90",
            "customer_total": "717.90",
            "profit": "100.02",
            "income_tax": "4.00",
            "net_profit": "96.02",
        })
    );
    // Without profit the line's profit is 0.
    let no_profit = json!({"shipping_option_id": h.fixture.standard_shipping, "governorate_id": h.fixture.cairo, "lines": [{"variant_id": h.fixture.plain_variant, "quantity": 1}]});
    let r = h.post(A, "/api/v1/shipping/quote", &no_profit).await.json();
    assert_eq!(r["data"]["profit"], "0.00");
    assert_eq!(r["data"]["income_tax"], "0.00");
}

/// The quote validates exactly as checkout: shipping, governorate, variant, warranty, stock.
pub async fn quote_validates_like_checkout(h: &Harness) {
    let f = &h.fixture;
    let cases = [
        (
            json!({}),
            vec!["governorate_id", "lines", "shipping_option_id"],
        ),
        (
            json!({"shipping_option_id": 999999, "governorate_id": f.cairo, "lines": [{"variant_id": f.plain_variant, "quantity": 1}]}),
            vec!["shipping_option_id"],
        ),
        (
            json!({"shipping_option_id": f.express_shipping, "governorate_id": f.aswan, "lines": [{"variant_id": f.plain_variant, "quantity": 1}]}),
            vec!["governorate_id"],
        ),
        (
            json!({"shipping_option_id": f.standard_shipping, "governorate_id": f.cairo, "lines": [{"variant_id": 999999, "quantity": 1}]}),
            vec!["lines.0.variant_id"],
        ),
        (
            json!({"shipping_option_id": f.standard_shipping, "governorate_id": f.cairo, "lines": [{"variant_id": f.featured_variants[0], "quantity": 1, "warranty_ids": [f.foreign_warranty]}]}),
            vec!["lines.0.warranty_ids"],
        ),
        (
            json!({"shipping_option_id": f.standard_shipping, "governorate_id": f.cairo, "lines": [{"variant_id": f.plain_variant, "quantity": 1}, {"variant_id": f.featured_variants[2], "quantity": 1}]}),
            vec!["lines.1.quantity"],
        ),
        (
            json!({"shipping_option_id": "1", "governorate_id": f.cairo, "lines": "x"}),
            vec!["lines", "shipping_option_id"],
        ),
    ];
    for (body, fields) in cases {
        let r = h.post(A, "/api/v1/shipping/quote", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), fields, "{body}");
    }
}

// ---------------------------------------------------------------- orders

/// A new order: 201, `Location`, pending, the quote's figures, stock reserved.
pub async fn order_creation_matches_the_quote_and_reserves_stock(h: &Harness) {
    let before = h.available(h.fixture.featured_variants[0]).await;
    let quote = h
        .post(A, "/api/v1/shipping/quote", &featured_quote_body(h))
        .await
        .json();
    let mut body = featured_quote_body(h);
    body["full_name"] = json!("سارة حسن");
    body["phone"] = json!("00201112223334");
    body["second_phone"] = json!("01012345678");
    body["address"] = json!("12 شارع النصر");
    body["external_reference"] = json!("SHOP-1001");
    body["store_link"] = json!("https://shop.example.com");
    let r = h.post(A, "/api/v1/orders", &body).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let order = r.json()["data"].clone();
    assert_eq!(
        r.header("location"),
        Some(format!("{}/api/v1/orders/{}", h.mount, order["id"]).as_str())
    );
    assert_eq!(r.header("idempotent-replayed"), Some("false"));
    let number = order["number"].as_str().expect("number");
    assert!(
        number.len() == 11
            && number.starts_with("EG-")
            && number[3..]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()),
        "{number}"
    );
    assert_eq!(order["status"]["key"], "order_pending");
    assert_eq!(order["family"], "pending");
    assert_eq!(order["customer"]["phone"], "01112223334");
    assert_eq!(order["customer"]["governorate"]["name"], "القاهرة");
    assert_eq!(
        order["payout"],
        json!({"state": "expected", "ready_at": null})
    );
    assert_eq!(order["timeline"].as_array().map(Vec::len), Some(1));
    assert_eq!(order["timeline"][0]["status"], "order_pending");
    let q = &quote["data"];
    for field in [
        "products",
        "warranties",
        "delivery_charge",
        "customer_total",
        "profit",
        "income_tax",
        "net_profit",
    ] {
        assert_eq!(order["totals"][field], q[field], "{field}");
    }
    assert_eq!(order["totals"]["income_tax_percent"], "4.00");
    let line = &order["lines"][0];
    assert_eq!(money(&line["sell_price"]), "300.00");
    assert_eq!(money(&line["profit"]), "50.01");
    assert_eq!(line["warranties"][0]["unit_price"], "30.00");
    assert_eq!(line["warranties"][0]["total"], "60.00");
    assert_eq!(line["warranties"][0]["quantity"], 2);
    assert_eq!(line["delivered_quantity"], Value::Null);
    assert_eq!(line["damaged_quantity"], 0);
    assert_eq!(
        h.available(h.fixture.featured_variants[0]).await,
        before - 2
    );
    let fetched = h.get(A, &format!("/api/v1/orders/{}", order["id"])).await;
    assert_eq!(fetched.json()["data"], order);
}

/// Every input rule of `POST /orders` is a 422 on its field, and nothing is written.
pub async fn order_input_rules_are_enforced(h: &Harness) {
    let before = h.order_count().await;
    let base = h.order_body(1, "10");
    let with = |field: &str, value: Value| {
        let mut b = base.clone();
        b[field] = value;
        b
    };
    let line_with = |field: &str, value: Value| {
        let mut b = base.clone();
        b["lines"][0][field] = value;
        b
    };
    let long = |n: usize| json!("x".repeat(n));
    let cases = vec![
        (with("phone", json!("0123")), "phone"),
        (with("phone", json!("+2001012345678")), "phone"),
        (with("second_phone", json!("12345")), "second_phone"),
        (with("full_name", long(256)), "full_name"),
        (with("full_name", json!("   ")), "full_name"),
        (with("address", long(256)), "address"),
        (with("store_name", long(256)), "store_name"),
        (
            with("store_link", json!("ftp://shop.example.com")),
            "store_link",
        ),
        (with("store_link", json!("not a url")), "store_link"),
        (with("note", long(1001)), "note"),
        (with("external_reference", long(101)), "external_reference"),
        (with("lines", json!([])), "lines"),
        (
            with(
                "lines",
                json!(vec![
                    json!({"variant_id": h.fixture.plain_variant, "quantity": 1, "profit": 1});
                    101
                ]),
            ),
            "lines",
        ),
        (line_with("quantity", json!(0)), "lines.0.quantity"),
        (line_with("quantity", json!(1000)), "lines.0.quantity"),
        (line_with("quantity", json!(1.5)), "lines.0.quantity"),
        (line_with("profit", json!(-1)), "lines.0.profit"),
        (line_with("profit", json!("1.234")), "lines.0.profit"),
        (line_with("profit", Value::Null), "lines.0.profit"),
        (
            line_with("warranty_ids", json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])),
            "lines.0.warranty_ids",
        ),
        (
            line_with("warranty_ids", json!([h.fixture.featured_warranties[0]])),
            "lines.0.warranty_ids",
        ),
        (line_with("variant_id", json!("abc")), "lines.0.variant_id"),
    ];
    for (body, field) in cases {
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        assert!(
            r.error_fields().contains(&field.to_owned()),
            "{field}: {}",
            String::from_utf8_lossy(&r.body)
        );
        assert_eq!(r.header("idempotent-replayed"), Some("false"));
        let messages = &r.json()["error"]["fields"][field];
        assert!(
            messages[0].as_str().is_some_and(|m| !m.is_ascii()),
            "Arabic message for {field}"
        );
    }
    // 100 lines and 999 pieces are the largest allowed.
    let mut max_lines = base.clone();
    max_lines["lines"] = json!(vec![
        json!({"variant_id": h.fixture.plain_variant, "quantity": 1, "profit": "1"});
        100
    ]);
    assert_eq!(h.post(A, "/api/v1/orders", &max_lines).await.status, 201);
    assert_eq!(h.order_count().await, before + 1);
    // A string profit and a numeric profit are the same amount.
    let numeric = h
        .post(A, "/api/v1/orders", &h.order_body(1, "12.50"))
        .await
        .json();
    assert_eq!(numeric["data"]["lines"][0]["profit"], "12.50");
}

/// A line above the stock is a 422 on its quantity and leaves stock and orders untouched.
pub async fn order_above_stock_is_refused_whole(h: &Harness) {
    let variant = h.fixture.featured_variants[1]; // 40 available
    let before = h.order_count().await;
    let mut body = h.order_body(1, "10");
    body["lines"] = json!([
        {"variant_id": h.fixture.plain_variant, "quantity": 5, "profit": "1"},
        {"variant_id": variant, "quantity": 30, "profit": "1"},
        {"variant_id": variant, "quantity": 11, "profit": "1"},
    ]);
    let plain_before = h.available(h.fixture.plain_variant).await;
    let r = h.post(A, "/api/v1/orders", &body).await;
    r.assert_error(422, "validation_failed");
    assert_eq!(r.error_fields(), vec!["lines.2.quantity"]);
    assert_eq!(h.available(variant).await, 40);
    assert_eq!(h.available(h.fixture.plain_variant).await, plain_before);
    assert_eq!(h.order_count().await, before);
}

/// A repeated `external_reference` is a 409 naming the order already registered; another
/// account may use the same reference.
pub async fn duplicate_external_reference_is_409_with_the_existing_order(h: &Harness) {
    let mut body = h.order_body(1, "10");
    body["external_reference"] = json!("DEMO-CONFIRMED");
    let r = h.post(A, "/api/v1/orders", &body).await;
    r.assert_error(409, "conflict");
    let error = &r.json()["error"];
    assert_eq!(error["existing_order_id"], h.fixture.confirmed_order);
    let existing = h
        .get(A, &format!("/api/v1/orders/{}", h.fixture.confirmed_order))
        .await
        .json();
    assert_eq!(error["existing_order_number"], existing["data"]["number"]);
    assert_eq!(h.post(B, "/api/v1/orders", &body).await.status, 201);
}

/// `Idempotency-Key`: the replay is the first response byte for byte; other data is a 409;
/// a first request that failed stores nothing.
pub async fn idempotency_key_replays_byte_for_byte(h: &Harness) {
    let body = h.order_body(2, "15");
    let first = h.post_idempotent(A, "key-1", &body).await;
    assert_eq!(first.status, 201);
    assert_eq!(first.header("idempotent-replayed"), Some("false"));
    let count = h.order_count().await;
    let stock = h.available(h.fixture.plain_variant).await;
    // Same data with keys in another order and other spacing.
    let reordered: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&body).expect("json")).expect("json");
    let replay = h.post_idempotent(A, "key-1", &reordered).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body, first.body);
    assert_eq!(replay.header("location"), first.header("location"));
    assert_eq!(h.order_count().await, count);
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    h.post_idempotent(A, "key-1", &h.order_body(3, "15"))
        .await
        .assert_error(409, "conflict");
    // The same key on another account is another scope.
    assert_eq!(h.post_idempotent(B, "key-1", &body).await.status, 201);
    // An error first: nothing stored, the key works after correction.
    let bad = h.post_idempotent(A, "key-2", &h.order_body(0, "15")).await;
    bad.assert_error(422, "validation_failed");
    let corrected = h.post_idempotent(A, "key-2", &h.order_body(1, "15")).await;
    assert_eq!(corrected.status, 201);
    assert_eq!(corrected.header("idempotent-replayed"), Some("false"));
    // A key over 100 characters is refused.
    h.post_idempotent(A, &"k".repeat(101), &body)
        .await
        .assert_error(422, "validation_failed");
}

/// After 24 hours a key no longer replays.
pub async fn idempotency_key_expires_after_24_hours(h: &Harness) {
    let body = h.order_body(1, "15");
    let first = h.post_idempotent(A, "key-expiring", &body).await;
    h.clock.advance(Duration::hours(23));
    assert_eq!(
        h.post_idempotent(A, "key-expiring", &body).await.body,
        first.body
    );
    h.clock.advance(Duration::hours(2));
    let fresh = h.post_idempotent(A, "key-expiring", &body).await;
    assert_eq!(fresh.status, 201);
    assert_eq!(fresh.header("idempotent-replayed"), Some("false"));
    assert_ne!(fresh.json()["data"]["id"], first.json()["data"]["id"]);
    assert_eq!(
        h.engine
            .operator()
            .purge_idempotency()
            .await
            .expect("purge"),
        0,
        "the fresh record is inside the window"
    );
    h.clock.advance(Duration::hours(25));
    assert_eq!(
        h.engine
            .operator()
            .purge_idempotency()
            .await
            .expect("purge"),
        1
    );
}

/// Orders list newest first and filter by every parameter.
pub async fn orders_list_and_filters(h: &Harness) {
    let created = h
        .post(A, "/api/v1/orders", &h.order_body(1, "10"))
        .await
        .json()["data"]
        .clone();
    let all = h.get(A, "/api/v1/orders").await.json();
    assert_eq!(all["meta"]["total"], 5);
    assert_eq!(all["data"][0]["id"], created["id"], "newest first");
    let ids = |v: &Value| {
        v["data"]
            .as_array()
            .expect("array")
            .iter()
            .map(|o| o["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&h.get(A, "/api/v1/orders?family=pending").await.json()),
        vec![created["id"].clone()]
    );
    assert_eq!(
        ids(&h
            .get(A, "/api/v1/orders?status=order_confirmed")
            .await
            .json()),
        vec![json!(h.fixture.confirmed_order)]
    );
    assert_eq!(
        h.get(A, "/api/v1/orders?family=delivered").await.json()["meta"]["total"],
        3
    );
    assert_eq!(
        ids(&h
            .get(A, "/api/v1/orders?external_reference=DEMO-CONFIRMED")
            .await
            .json()),
        vec![json!(h.fixture.confirmed_order)]
    );
    let number = created["number"].as_str().expect("number");
    let loose = number.replace('-', "").to_lowercase();
    assert_eq!(
        ids(&h
            .get(A, &format!("/api/v1/orders?number={loose}"))
            .await
            .json()),
        vec![created["id"].clone()]
    );
    assert_eq!(
        ids(&h
            .get(A, &format!("/api/v1/orders?number={number}"))
            .await
            .json()),
        vec![created["id"].clone()]
    );
    assert_eq!(
        ids(&h.get(A, "/api/v1/orders?number=100001").await.json()),
        vec![json!(h.fixture.legacy_order)]
    );
    let since = urlencode(&h.clock_stamp());
    assert_eq!(
        ids(&h
            .get(A, &format!("/api/v1/orders?updated_since={since}"))
            .await
            .json()),
        vec![created["id"].clone()]
    );
    let paged = h.get(A, "/api/v1/orders?per_page=2&page=3").await.json();
    assert_eq!(
        paged["meta"],
        json!({"page": 3, "per_page": 2, "total": 5, "last_page": 3})
    );
    assert_eq!(paged["data"].as_array().map(Vec::len), Some(1));
    // Marketer B sees none of them.
    assert_eq!(h.get(B, "/api/v1/orders").await.json()["meta"]["total"], 0);
}

/// Another account's order is a 404 identical to a missing one, for reading and cancelling.
pub async fn other_accounts_orders_are_not_found(h: &Harness) {
    let theirs = h
        .get(B, &format!("/api/v1/orders/{}", h.fixture.confirmed_order))
        .await;
    let missing = h.get(B, "/api/v1/orders/999999").await;
    theirs.assert_error(404, "not_found");
    assert_eq!(theirs.body, missing.body);
    h.post(
        B,
        &format!("/api/v1/orders/{}/cancel", h.fixture.confirmed_order),
        &json!({}),
    )
    .await
    .assert_error(404, "not_found");
}

/// Cancelling: only while pending, releases the stock, records the reason; 409 afterwards.
pub async fn cancel_only_while_pending_and_release_stock(h: &Harness) {
    let stock = h.available(h.fixture.plain_variant).await;
    let order = h
        .post(A, "/api/v1/orders", &h.order_body(3, "10"))
        .await
        .json()["data"]
        .clone();
    assert_eq!(h.available(h.fixture.plain_variant).await, stock - 3);
    let path = format!("/api/v1/orders/{}/cancel", order["id"]);
    h.post(A, &path, &json!({"reason_note": "x".repeat(501)}))
        .await
        .assert_error(422, "validation_failed");
    let cancelled = h
        .post(A, &path, &json!({"reason_note": "العميل غيّر رأيه"}))
        .await;
    assert_eq!(cancelled.status, 200);
    let data = &cancelled.json()["data"];
    assert_eq!(data["status"]["key"], "rejected_by_Marketer");
    assert_eq!(data["family"], "cancelled");
    assert_eq!(data["timeline"][1]["reason"], "العميل غيّر رأيه");
    assert_eq!(data["payout"]["state"], "none");
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    h.post(A, &path, &json!({}))
        .await
        .assert_error(409, "conflict");
    assert_eq!(
        h.available(h.fixture.plain_variant).await,
        stock,
        "released once"
    );
    // A confirmed order cannot be cancelled; an empty body is accepted.
    let confirmed = format!("/api/v1/orders/{}/cancel", h.fixture.confirmed_order);
    h.request(Method::POST, Some(A), &confirmed, Bytes::new(), &[])
        .await
        .assert_error(409, "conflict");
}

/// The wallet of marketer A matches its seeded orders to the piastre.
pub async fn wallet_matches_the_orders(h: &Harness) {
    let r = h.get(A, "/api/v1/wallet").await;
    assert_eq!(r.status, 200);
    let w = &r.json()["data"];
    // ready: legacy 48.00 + ready 288.00 - received 200.00; held: 115.20; expected: 57.60.
    assert_eq!(w["ready"], "136.00");
    assert_eq!(w["held"]["amount"], "115.20");
    assert_eq!(w["expected"], "57.60");
    assert_eq!(w["received"], "200.00");
    assert_eq!(w["total_commission"], "18.80");
    assert_eq!(w["income_tax_percent"], "4.00");
    assert_eq!(w["currency"], "EGP");
    assert_eq!(
        w["pending_withdrawals"],
        json!({"count": 0, "amount": "0.00", "items": []})
    );
    assert_eq!(
        w["withdrawal"]["open"], true,
        "the harness starts on a Sunday"
    );
    assert_eq!(w["withdrawal"]["days"], json!(["sunday", "thursday"]));
    assert_eq!(w["withdrawal"]["timezone"], "Africa/Cairo");
    assert_eq!(w["withdrawal"]["minimum"], "100.00");
    // held.next_ready_at = delivered 3 days ago + 14 days.
    let expected_ready =
        crate::time::cairo_timestamp(start_instant() - Duration::days(3) + Duration::days(14));
    assert_eq!(w["held"]["next_ready_at"], expected_ready);
    // A pending withdrawal lowers `ready` and is listed.
    h.engine
        .operator()
        .request_withdrawal(NewWithdrawal {
            account_id: h.fixture.marketer_a,
            amount: "100.00".parse().expect("decimal"),
            supply_amount: "0.00".parse().expect("decimal"),
            wallet_number: "01012345678".into(),
            wallet_description: "محفظة".into(),
            notes: None,
        })
        .await
        .expect("withdrawal");
    let w = h.get(A, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(w["ready"], "36.00");
    assert_eq!(w["pending_withdrawals"]["count"], 1);
    assert_eq!(
        w["pending_withdrawals"]["items"][0]["status"]["key"],
        "pending"
    );
    // Eleven days later the held order is ready too.
    h.clock.advance(Duration::days(11));
    let w = h.get(A, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(w["held"]["amount"], "0.00");
    assert_eq!(w["ready"], "151.20");
}

/// A partially delivered order earns on its delivered pieces only.
pub async fn partial_delivery_earns_on_delivered_pieces(h: &Harness) {
    let order = h
        .post(A, "/api/v1/orders", &h.order_body(4, "25"))
        .await
        .json()["data"]
        .clone();
    let id = order["id"].as_i64().expect("id");
    let line = order["lines"][0]["id"].as_i64().expect("line id");
    let op = h.engine.operator();
    for status in [OrderStatus::Confirmed, OrderStatus::Shipped] {
        op.move_order(id, status, None).await.expect("move");
    }
    op.set_line_outcomes(
        id,
        vec![(
            line,
            LineOutcome {
                delivered_quantity: Some(3),
                returned_quantity: Some(1),
                ..LineOutcome::default()
            },
        )],
    )
    .await
    .expect("outcomes");
    op.move_order(id, OrderStatus::PartiallyDelivered, None)
        .await
        .expect("move");
    let shown = h.get(A, &format!("/api/v1/orders/{id}")).await.json()["data"].clone();
    assert_eq!(shown["family"], "delivered");
    assert_eq!(shown["lines"][0]["delivered_quantity"], 3);
    assert_eq!(shown["payout"]["state"], "held");
    assert_eq!(shown["timeline"].as_array().map(Vec::len), Some(4));
    assert!(shown["delivered_at"].is_string() && shown["confirmed_at"].is_string());
    // held: 115.20 + (75.00 - 3.00)
    assert_eq!(
        h.get(A, "/api/v1/wallet").await.json()["data"]["held"]["amount"],
        "187.20"
    );
    // Not a move the lifecycle allows.
    assert!(op.move_order(id, OrderStatus::Pending, None).await.is_err());
}

/// Billing: distinct products per month, order operations when executed only.
pub async fn billing_meter_counts_what_the_spec_bills(h: &Harness) {
    let op = h.engine.operator();
    let account = h.fixture.marketer_a;
    let meter = || async { op.meter_this_month(account).await.expect("meter") };
    assert_eq!(meter().await, MeterReading::default());
    h.get(A, "/api/v1/me").await;
    h.get(A, "/api/v1/orders").await;
    assert_eq!(meter().await.pulled_products, 0, "free calls bill nothing");
    h.get(A, "/api/v1/products").await;
    h.get(A, "/api/v1/products").await;
    assert_eq!(meter().await.pulled_products, 25);
    h.get(
        A,
        &format!("/api/v1/products/{}", h.fixture.featured_product),
    )
    .await;
    assert_eq!(
        meter().await.pulled_products,
        25,
        "already pulled this month"
    );
    h.get(A, "/api/v1/products?page=2").await;
    assert_eq!(meter().await.pulled_products, 32);
    let order = h
        .post_idempotent(A, "bill-1", &h.order_body(1, "10"))
        .await
        .json()["data"]
        .clone();
    h.post_idempotent(A, "bill-1", &h.order_body(1, "10")).await;
    h.post(A, "/api/v1/orders", &h.order_body(0, "10")).await;
    assert_eq!(
        meter().await.order_operations,
        1,
        "replays and rejected requests bill nothing"
    );
    h.post(
        A,
        &format!("/api/v1/orders/{}/cancel", order["id"]),
        &json!({}),
    )
    .await;
    h.post(
        A,
        &format!("/api/v1/orders/{}/cancel", order["id"]),
        &json!({}),
    )
    .await;
    assert_eq!(meter().await.order_operations, 2);
}

/// Bad bodies never reach a 5xx: malformed JSON, non-objects, deep nesting, huge numbers and
/// a 2 MiB body each get their 4xx.
pub async fn hostile_bodies_get_a_4xx(h: &Harness) {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge_number = format!(
        r#"{{"shipping_option_id": 1{}, "governorate_id": 1, "lines": []}}"#,
        "0".repeat(400)
    );
    for body in [
        "{",
        "[]",
        "\"text\"",
        "null",
        "{\"lines\": [1]}",
        deep.as_str(),
        huge_number.as_str(),
        "\u{feff}{}",
    ] {
        for path in ["/api/v1/orders", "/api/v1/shipping/quote"] {
            let r = h
                .request(
                    Method::POST,
                    Some("sk_demo_bench"),
                    path,
                    body.to_owned(),
                    &[],
                )
                .await;
            assert_eq!(r.status, 422, "{path} {}", &body[..body.len().min(40)]);
            assert_eq!(r.error_code(), "validation_failed");
        }
    }
    let big = vec![b' '; 2 * 1024 * 1024];
    let r = h
        .request(
            Method::POST,
            Some("sk_demo_bench"),
            "/api/v1/orders",
            big,
            &[],
        )
        .await;
    r.assert_error(413, "payload_too_large");
    let cancel = format!("/api/v1/orders/{}/cancel", h.fixture.confirmed_order);
    h.request(Method::POST, Some("sk_demo_bench"), &cancel, "[1]", &[])
        .await
        .assert_error(422, "validation_failed");
}

/// Every client-facing text is Arabic: messages, field messages and status labels.
pub async fn messages_and_labels_are_arabic(h: &Harness) {
    let is_arabic = |s: &str| s.chars().any(|c| ('\u{0600}'..='\u{06FF}').contains(&c));
    let r = h.post(A, "/api/v1/orders", &json!({})).await.json();
    assert!(is_arabic(
        r["error"]["message"].as_str().unwrap_or_default()
    ));
    for messages in r["error"]["fields"].as_object().expect("fields").values() {
        assert!(
            messages
                .as_array()
                .expect("array")
                .iter()
                .all(|m| is_arabic(m.as_str().unwrap_or_default()))
        );
    }
    let order = h
        .get(A, &format!("/api/v1/orders/{}", h.fixture.confirmed_order))
        .await
        .json();
    assert!(is_arabic(
        order["data"]["status"]["label"]
            .as_str()
            .unwrap_or_default()
    ));
    assert!(
        order["data"]["timeline"]
            .as_array()
            .expect("timeline")
            .iter()
            .all(|e| is_arabic(e["label"].as_str().unwrap_or_default()))
    );
}

// ---------------------------------------------------------------- races

async fn race<F, Fut>(count: usize, task: F) -> Vec<TestResponse>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = TestResponse> + Send + 'static,
{
    let handles: Vec<_> = (0..count).map(|i| tokio::spawn(task(i))).collect();
    let mut responses = Vec::with_capacity(count);
    for handle in handles {
        responses.push(handle.await.expect("task finished"));
    }
    responses
}

/// 50 concurrent creates with one `Idempotency-Key` register exactly one order; the others
/// are replays of it or 409 while it is in flight.
pub async fn race_one_idempotency_key_makes_one_order(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let before = h.order_count().await;
    let body = h.order_body(1, "10");
    let responses = race(50, |_| {
        let (h, body) = (h.clone(), body.clone());
        async move { h.post_idempotent("sk_demo_bench", "race-key", &body).await }
    })
    .await;
    let created: Vec<_> = responses.iter().filter(|r| r.status == 201).collect();
    assert!(
        responses.iter().all(|r| r.status == 201 || r.status == 409),
        "only 201 or 409"
    );
    assert!(!created.is_empty());
    assert!(
        created.iter().all(|r| r.body == created[0].body),
        "every 201 is the same order"
    );
    assert_eq!(h.order_count().await, before + 1);
}

/// 50 concurrent single-piece orders on a variant with 10 available: exactly 10 orders.
pub async fn race_no_oversell(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let variant = h.fixture.featured_variants[1];
    h.engine
        .operator()
        .update_variant(
            variant,
            VariantPatch {
                available: Some(10),
                ..VariantPatch::default()
            },
        )
        .await
        .expect("stock");
    let before = h.order_count().await;
    let responses = race(50, |_| {
        let h = h.clone();
        async move {
            let mut body = h.order_body(1, "10");
            body["lines"][0]["variant_id"] = json!(variant);
            h.post("sk_demo_bench", "/api/v1/orders", &body).await
        }
    })
    .await;
    let created = responses.iter().filter(|r| r.status == 201).count();
    let refused = responses.iter().filter(|r| r.status == 422).count();
    assert_eq!((created, refused), (10, 40));
    assert_eq!(h.available(variant).await, 0);
    assert_eq!(h.order_count().await, before + 10);
}

/// A key with a limit of 20 hit 50 times concurrently lets exactly 20 through.
pub async fn race_rate_limit_is_exact(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let spec = KeySpec {
        name: "race".into(),
        abilities: vec![Ability::CatalogRead],
        expires_at: None,
        rate_limit: Some(20),
    };
    let key = h
        .engine
        .operator()
        .create_key(h.fixture.marketer_a, spec)
        .await
        .expect("key")
        .plaintext;
    let responses = race(50, |_| {
        let (h, key) = (h.clone(), key.clone());
        async move { h.get(&key, "/api/v1/me").await }
    })
    .await;
    assert_eq!(responses.iter().filter(|r| r.status == 200).count(), 20);
    assert_eq!(responses.iter().filter(|r| r.status == 429).count(), 30);
}

/// `updated_since` accepts `Z`, `+hh`, `+hhmm` and `+hh:mm` offsets, fractional seconds, and an
/// unencoded `+` (which arrives as a space): all name the same instant and give the same
/// answer; a date-time without an offset is a 422 naming the parameter.
pub async fn updated_since_accepts_every_offset_form(h: &Harness) {
    let since = reprice_plain_variant_an_hour_later(h, "131.00").await;
    let cairo = since.with_timezone(&chrono_tz::Africa::Cairo);
    let local = cairo.format("%Y-%m-%dT%H:%M:%S").to_string();
    let offset = cairo.format("%z").to_string(); // +0200
    let forms = [
        urlencode(&since.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
        urlencode(&format!("{local}{}", &offset[..3])),
        urlencode(&format!("{local}{offset}")),
        urlencode(&format!("{local}.000{}:{}", &offset[..3], &offset[3..])),
        format!("{local}{}:{}", &offset[..3], &offset[3..]),
    ];
    for form in &forms {
        for path in ["/api/v1/products", "/api/v1/orders"] {
            let r = h.get(A, &format!("{path}?updated_since={form}")).await;
            r.assert_ok(&format!("{path} {form}"));
        }
        let r = h
            .get(A, &format!("/api/v1/products?updated_since={form}"))
            .await;
        assert_eq!(r.json()["meta"]["total"], 1, "{form}");
    }
    let r = h
        .get(
            A,
            &format!("/api/v1/products?updated_since={}", urlencode(&local)),
        )
        .await;
    r.assert_error(422, "validation_failed");
    assert_eq!(r.error_fields(), vec!["updated_since".to_owned()]);
}

/// Blank and malformed input named as it should be: a 401 carries `WWW-Authenticate: Bearer`; a
/// blank `phone` is a 422 naming `phone`; an `Idempotency-Key` is 1 to 100 printable ASCII
/// characters with spaces allowed inside, anything else a 422 naming the header with a
/// message that says what is allowed (the same for a short key as for a long one).
pub async fn blank_and_malformed_input_is_named(h: &Harness) {
    let r = h
        .request(Method::GET, None, "/api/v1/me", Bytes::new(), &[])
        .await;
    r.assert_error(401, "unauthenticated");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert_eq!(
        h.get("sk_nope", "/api/v1/me")
            .await
            .header("www-authenticate"),
        Some("Bearer")
    );
    for blank in ["", "   "] {
        let mut body = h.order_body(1, "10");
        body["phone"] = json!(blank);
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), vec!["phone".to_owned()], "{blank:?}");
    }
    let body = h.order_body(1, "10");
    let spaced = h.post_idempotent(A, "order 1001", &body).await;
    assert_eq!(
        spaced.status,
        201,
        "{}",
        String::from_utf8_lossy(&spaced.body)
    );
    let long = "k".repeat(101);
    let mut messages = Vec::new();
    for bad in ["", "   ", "tab\there", long.as_str()] {
        let r = h.post_idempotent(A, bad, &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(
            r.error_fields(),
            vec!["Idempotency-Key".to_owned()],
            "{bad:?}"
        );
        messages.push(r.json()["error"]["fields"]["Idempotency-Key"][0].clone());
    }
    assert!(messages.windows(2).all(|m| m[0] == m[1]), "{messages:?}");
    assert_eq!(messages[0], json!(crate::messages::IDEMPOTENCY_KEY_FORM));
}

/// 30 tasks each place an order and cancel it at once, all at the same time: every answer is
/// 201 then 200 (the rows every order and cancel contend for, stock, counters and meter, are
/// locked in one order: no deadlock), and stock and the meter end where they should.
pub async fn race_places_and_cancels_never_deadlock(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let stock = h.available(h.fixture.plain_variant).await;
    let month = crate::time::cairo_month(h.clock.now_utc());
    let meter = |h: Arc<Harness>| {
        let month = month.clone();
        async move {
            h.engine
                .operator()
                .meter(h.fixture.marketer_a, &month)
                .await
                .expect("meter")
                .order_operations
        }
    };
    let operations = meter(h.clone()).await;
    // Two variants: a cancel of one never waits on the other's stock row first.
    let featured = h.fixture.featured_variants[0];
    let featured_stock = h.available(featured).await;
    let responses = race(30, |i| {
        let h = h.clone();
        let mut body = h.order_body(1, "10");
        if i % 2 == 1 {
            body["lines"][0]["variant_id"] = json!(featured);
        }
        async move {
            let created = h.post("sk_demo_bench", "/api/v1/orders", &body).await;
            if created.status != 201 {
                return created;
            }
            let id = created.json()["data"]["id"].clone();
            h.post(
                "sk_demo_bench",
                &format!("/api/v1/orders/{id}/cancel"),
                &json!({}),
            )
            .await
        }
    })
    .await;
    for r in &responses {
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    }
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    assert_eq!(h.available(featured).await, featured_stock);
    assert_eq!(
        meter(h.clone()).await,
        operations + 60,
        "30 orders + 30 cancels"
    );
}

impl Harness {
    /// Another handle on the same engine, clock and integration (for spawned tasks).
    pub fn clone_handle(&self) -> Harness {
        Harness {
            engine: self.engine.clone(),
            clock: self.clock.clone(),
            fixture: self.fixture.clone(),
            mount: self.mount.clone(),
            client: self.client.clone(),
            cleanup: Mutex::new(None),
        }
    }

    /// The clock's instant as RFC 3339.
    fn clock_stamp(&self) -> String {
        crate::time::cairo_timestamp(self.clock.now_utc())
    }
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Runs one case on the harness the factory produced (skipped when it is `None`), checks that
/// the wallet the store keeps equals the recomputation from every order, then runs the
/// harness's clean-up, also when the case panicked (the panic is then resumed).
#[doc(hidden)]
pub async fn run_case<F, Fut>(harness: impl IntoHarness, case: F)
where
    F: FnOnce(Arc<Harness>) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(harness) = harness.into_harness() else {
        return;
    };
    let harness = Arc::new(harness);
    let checked = harness.clone();
    let outcome = AssertUnwindSafe(async move {
        case(checked.clone()).await;
        // After every case: the wallet the store keeps equals the recomputation from all the
        // orders, for both marketers.
        for account in [checked.fixture.marketer_a, checked.fixture.marketer_b] {
            super::wallet::assert_wallet_matches_orders(&checked, account).await;
        }
    })
    .catch_unwind()
    .await;
    let cleanup = harness.take_cleanup();
    drop(harness);
    if let Some(cleanup) = cleanup {
        cleanup.await;
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Expands to one `#[tokio::test]` per HTTP case; `$harness` is an expression evaluating to a
/// future of an [`IntoHarness`] (a [`Harness`], or an `Option` of one where `None` skips the
/// test), evaluated once per test.
///
/// Outer attributes written before the expression are put on every generated test, e.g. to
/// report the tests as ignored (not passed) when their database is not configured:
/// `http_conformance_tests!(#[cfg_attr(not(db_tests), ignore = "needs DB_URL")] harness())`.
#[macro_export]
macro_rules! http_conformance_tests {
    (@cases $attrs:tt $harness:expr; $($case:ident),* $(,)?) => {
        $(
            $crate::http_conformance_tests!(@one $attrs $harness; $case);
        )*
    };
    (@one [$(#[$attr:meta])*] $harness:expr; $case:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $case() {
            $crate::testing::http::run_case($harness.await, |harness| async move {
                $crate::testing::http::$case(&harness).await
            })
            .await;
        }
    };
    // Leading attributes are gathered one by one (an expression may itself start with `#`).
    (@attrs [$($attrs:tt)*] #[$attr:meta] $($rest:tt)+) => {
        $crate::http_conformance_tests!(@attrs [$($attrs)* #[$attr]] $($rest)+);
    };
    (@attrs $attrs:tt $harness:expr) => {
        $crate::http_conformance_tests!(@cases $attrs $harness;
            me_returns_account_token_and_rate_headers,
            supplier_sees_me_and_wallet_but_not_the_catalogue,
            bad_keys_are_unauthenticated,
            account_api_status_and_ability_errors,
            unknown_paths_and_wrong_methods,
            rate_limit_counts_down_then_refuses,
            categories_are_listed_with_meta,
            products_paginate_and_hide_stopped_products,
            product_detail_has_every_field,
            products_filter_by_category_and_title,
            products_sync_with_updated_since,
            invalid_query_parameters_are_422,
            empty_query_values_are_422,
            updated_since_far_past_and_future_are_served,
            shipping_options_show_rates_and_example,
            quote_computes_to_the_piastre,
            quote_validates_like_checkout,
            order_creation_matches_the_quote_and_reserves_stock,
            order_input_rules_are_enforced,
            control_characters_in_text_are_422,
            order_above_stock_is_refused_whole,
            duplicate_external_reference_is_409_with_the_existing_order,
            idempotency_key_replays_byte_for_byte,
            idempotency_key_expires_after_24_hours,
            orders_list_and_filters,
            other_accounts_orders_are_not_found,
            cancel_only_while_pending_and_release_stock,
            wallet_matches_the_orders,
            partial_delivery_earns_on_delivered_pieces,
            billing_meter_counts_what_the_spec_bills,
            hostile_bodies_get_a_4xx,
            messages_and_labels_are_arabic,
            race_one_idempotency_key_makes_one_order,
            race_no_oversell,
            race_rate_limit_is_exact,
            race_places_and_cancels_never_deadlock,
            updated_since_accepts_every_offset_form,
            blank_and_malformed_input_is_named,
                );
    };
    (#[$attr:meta] $($rest:tt)+) => {
        $crate::http_conformance_tests!(@attrs [#[$attr]] $($rest)+);
    };
    ($harness:expr) => {
        $crate::http_conformance_tests!(@attrs [] $harness);
    };
}
