//! The harness: an integration over a seeded engine with a manual clock, the responses it
//! returns, request building, and the runner the macro calls.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use chrono::{DateTime, TimeZone, Utc};
use futures_util::FutureExt;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::Engine;
use crate::clock::ManualClock;
use crate::model::*;
use crate::sandbox::{self, Sandbox};
use crate::store::Store;

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
#[non_exhaustive]
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
    mounter: Arc<Mounter>,
    cleanup: Mutex<Option<Cleanup>>,
}

/// How a harness mounts an engine with its integration.
type Mounter = dyn Fn(Engine) -> Arc<dyn HttpIntegration> + Send + Sync;

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
#[non_exhaustive]
pub struct TestResponse {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes.
    pub body: Bytes,
}

impl TestResponse {
    /// A `TestResponse` of its fields, in their order.
    pub fn new(status: StatusCode, headers: HeaderMap, body: Bytes) -> Self {
        Self {
            status,
            headers,
            body,
        }
    }
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

    /// The `Request-Id` header.
    pub fn request_id(&self) -> &str {
        self.header("request-id").unwrap_or_default()
    }

    /// Asserts the request id: `sent` when given, else `req_` and 24 characters from
    /// `[a-z0-9]`; an error body repeats it as `error.request_id`, and no other body has it.
    #[track_caller]
    pub fn assert_request_id(&self, sent: Option<&str>) {
        let id = self.request_id();
        match sent {
            Some(sent) => assert_eq!(id, sent, "the client's Request-Id is echoed"),
            None => {
                let tail = id.strip_prefix("req_").unwrap_or_default();
                assert!(
                    tail.len() == 24
                        && tail
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                    "Request-Id {id:?} on a {} answer",
                    self.status
                );
            }
        }
        let body = self.json();
        if self.status.as_u16() >= 400 {
            assert_eq!(
                body["error"]["request_id"], id,
                "an error body repeats the Request-Id: {body}"
            );
        } else {
            assert!(
                body.pointer("/error/request_id").is_none(),
                "a success has no error: {body}"
            );
        }
    }

    /// The body as JSON without `error.request_id`, to compare two answers of different
    /// requests.
    pub fn json_without_request_id(&self) -> Value {
        let mut json = self.json();
        if let Some(error) = json.get_mut("error").and_then(Value::as_object_mut) {
            error.remove("request_id");
        }
        json
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

    /// Asserts a 409 `conflict` with this `reason` (every 409 names one).
    #[track_caller]
    pub fn assert_conflict(&self, reason: &str) {
        self.assert_error(409, "conflict");
        assert_eq!(
            self.json()["error"]["reason"],
            reason,
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
    /// Seeds the sandbox on `store` and mounts the engine with `mount` (kept, to mount other
    /// engines the same way: [`mount_other`](Self::mount_other)).
    pub async fn new(
        store: Arc<dyn Store>,
        mount: impl Fn(Engine) -> Arc<dyn HttpIntegration> + Send + Sync + 'static,
    ) -> Self {
        let clock = ManualClock::new(start_instant());
        let engine = Engine::builder(store)
            .config(sandbox::config())
            .clock(Arc::new(clock.clone()))
            .build()
            .expect("valid settings");
        let fixture = sandbox::seed(&engine).await.expect("the sandbox seeds");
        let client = mount(engine.clone());
        Self {
            engine,
            clock,
            fixture,
            mount: String::new(),
            client,
            mounter: Arc::new(mount),
            cleanup: Mutex::new(None),
        }
    }

    /// Another engine (other settings over the same store, say) mounted with this harness's
    /// integration, as its own client.
    pub fn mount_other(&self, engine: Engine) -> Arc<dyn HttpIntegration> {
        (self.mounter)(engine)
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

    /// Sends a request. Every answer is checked for its request id: a `Request-Id` header,
    /// the one sent when it was valid, repeated as `error.request_id` in an error body.
    pub async fn send(&self, request: Request<Bytes>) -> TestResponse {
        let sent = request
            .headers()
            .get("request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty() && v.len() <= 100)
            .map(str::to_owned);
        let response = self.client.send(request).await;
        let (parts, body) = response.into_parts();
        let response = TestResponse {
            status: parts.status,
            headers: parts.headers,
            body,
        };
        response.assert_request_id(sent.as_deref());
        response
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
        let page = PageRequest::new(1, 1).expect("a valid page");
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
        // As an HTTP client sends them: the engine refuses a declared length over the limit
        // on the head, before reading the body.
        builder = builder
            .header("content-type", "application/json")
            .header("content-length", body.len());
    }
    builder.body(body).expect("valid request")
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
            mounter: self.mounter.clone(),
            cleanup: Mutex::new(None),
        }
    }

    /// The clock's instant as RFC 3339.
    pub(super) fn clock_stamp(&self) -> String {
        crate::time::cairo_timestamp(self.clock.now_utc())
    }
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
            crate::testing::wallet::assert_wallet_matches_orders(&checked, account).await;
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
