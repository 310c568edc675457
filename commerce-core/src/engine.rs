//! [`Engine`]: the framework-neutral request handler.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures_util::FutureExt;
use http::{HeaderValue, Request, Response};
use tracing::{Instrument, Span, field};

use crate::api::{self, Ctx};
use crate::auth;
use crate::clock::{Clock, SystemClock};
pub use crate::config::Config;
use crate::error::{ApiError, ErrorCode};
use crate::observe;
use crate::operator::Operator;
use crate::pulls_seen::PullsSeen;
use crate::routes::{self, Endpoint};
use crate::shared::Shared;
use crate::store::{Composed, Store};

/// The API engine: `handle(http::Request<Bytes>) -> http::Response<Bytes>`.
///
/// Cheap to clone (an `Arc` inside); share one per application. Also a
/// [`tower::Service`], so any tower-based server can serve it directly.
///
/// ```
/// use std::sync::Arc;
/// use commerce_core::{Engine, store::MemoryStore};
///
/// # tokio_test_block(async {
/// let engine = Engine::new(Arc::new(MemoryStore::new()));
/// let request = http::Request::get("/api/v1/me").body(bytes::Bytes::new()).unwrap();
/// let response = engine.handle(request).await;
/// assert_eq!(response.status(), 401);
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone)]
pub struct Engine {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

/// Sets up an [`Engine`]: get one from [`Engine::builder`].
#[must_use = "call build() to get the engine"]
pub struct EngineBuilder {
    store: Arc<dyn Store>,
    config: Config,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl EngineBuilder {
    /// Replaces every setting.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Changes settings in place, starting from the defaults (or the last
    /// [`config`](Self::config)).
    pub fn configure(mut self, change: impl FnOnce(&mut Config)) -> Self {
        change(&mut self.config);
        self
    }

    /// The clock the engine reads "now" from (the system clock by default; a
    /// [`ManualClock`](crate::clock::ManualClock) in tests).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The engine.
    pub fn build(self) -> Engine {
        Engine::with(self.store, self.config, self.clock)
    }
}

impl Engine {
    /// An engine over `store` with the default [`Config`] and the system clock.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self::with(store, Config::default(), Arc::new(SystemClock))
    }

    /// Starts an engine over `store`: change settings with [`EngineBuilder::configure`] or
    /// [`EngineBuilder::config`], the clock with [`EngineBuilder::clock`], then
    /// [`EngineBuilder::build`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use commerce_core::{Engine, store::MemoryStore};
    ///
    /// let engine = Engine::builder(Arc::new(MemoryStore::new()))
    ///     .configure(|c| c.hold_days = 7)
    ///     .build();
    /// assert_eq!(engine.config().hold_days, 7);
    /// assert_eq!(engine.config().default_rate_limit, 120);
    /// ```
    pub fn builder(store: Arc<dyn Store>) -> EngineBuilder {
        EngineBuilder {
            store,
            config: Config::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// An engine with its settings and clock.
    ///
    /// The engine keeps `store` behind its tracing layer: each store operation of a request is
    /// a `commerce.store` span under the request's span (see [`observe`]).
    pub fn with(store: Arc<dyn Store>, config: Config, clock: Arc<dyn Clock>) -> Self {
        Self {
            shared: Arc::new(Shared {
                store: Arc::new(Composed::traced(store)),
                clock,
                config,
                pulls_seen: PullsSeen::default(),
            }),
        }
    }

    /// The answer to a request whose body is over [`Config::body_limit`] (an adapter stops
    /// reading at the limit and asks for this instead of [`handle`](Self::handle)): `404` or
    /// `405` when the engine does not serve that path or method, as it would answer before
    /// reading any body; else `413 payload_too_large`.
    pub fn body_too_large(&self, method: &http::Method, path: &str) -> Response<Bytes> {
        match routes::resolve(method, path) {
            Ok(_) => ApiError::new(ErrorCode::PayloadTooLarge).into_response(),
            Err(error) => error.into_response(),
        }
    }

    /// The store, behind the engine's tracing layer: operations called on it are traced as the
    /// engine's own are. (Pass the original store, not this one, to build another engine over
    /// the same data, or each operation is traced twice.)
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.shared.store
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The current instant, from the engine's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.shared.clock.now()
    }

    /// Answers one API request. Never fails: every error is a JSON error response, and a
    /// panic inside a handler becomes a 500 `server_error`.
    ///
    /// # Cancellation
    /// Inside a tokio runtime the request runs in a task of its own, and this future only waits
    /// for its answer: a caller that drops it (a client that disconnected, a timeout layer)
    /// does not cut the request short. An order being placed is placed, an `Idempotency-Key`
    /// record is finished or abandoned, never left in flight; the answer is simply not read.
    /// Outside a runtime the request runs in this future; the store contract (see
    /// [`Store`]) still keeps a dropped operation atomic.
    pub async fn handle(&self, request: Request<Bytes>) -> Response<Bytes> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return self.handle_here(request).await;
        };
        let engine = self.clone();
        let task = runtime.spawn(
            async move { engine.handle_here(request).await }.instrument(tracing::Span::current()),
        );
        match task.await {
            Ok(response) => response,
            // The runtime is shutting down (a panic is already a 500 inside the task).
            Err(_) => ApiError::server().into_response(),
        }
    }

    /// Answers one request in the current task, in its `commerce.request` span.
    pub(crate) async fn handle_here(&self, request: Request<Bytes>) -> Response<Bytes> {
        let started = std::time::Instant::now();
        let route = routes::resolve(request.method(), request.uri().path());
        let endpoint = route.as_ref().map_or(routes::UNMATCHED, |e| e.name());
        // Never the path (it holds ids), the query, a header or the body: the route's name.
        let span = tracing::info_span!(
            "commerce.request",
            endpoint,
            method = request.method().as_str(),
            account_id = field::Empty,
            key_id = field::Empty,
            status = field::Empty,
            latency_ms = field::Empty,
        );
        let answer = AssertUnwindSafe(self.dispatch(route, request, &span))
            .catch_unwind()
            .instrument(span.clone())
            .await;
        let response = answer.unwrap_or_else(|_| {
            span.in_scope(|| tracing::error!("handler panicked"));
            ApiError::server().into_response()
        });
        let took = started.elapsed();
        if !span.is_disabled() {
            span.record("status", response.status().as_u16());
            span.record("latency_ms", took.as_secs_f64() * 1000.0);
            span.in_scope(|| tracing::debug!("api request"));
        }
        observe::request_answered(endpoint, response.status(), took);
        response
    }

    async fn dispatch(
        &self,
        route: Result<Endpoint, ApiError>,
        request: Request<Bytes>,
        span: &Span,
    ) -> Response<Bytes> {
        let endpoint = match route {
            Ok(endpoint) => endpoint,
            Err(error) => return error.into_response(),
        };
        if request.body().len() > self.shared.config.body_limit {
            return ApiError::new(ErrorCode::PayloadTooLarge).into_response();
        }
        if let Some(response) = api::serve_keyless(endpoint) {
            return response;
        }
        let now = self.now();
        let window = now.timestamp().div_euclid(60);
        let check =
            match auth::authenticate(&*self.shared.store, request.headers(), now, window).await {
                Ok(check) => check,
                Err(error) => return error.into_response(),
            };
        if !span.is_disabled() {
            span.record("account_id", check.key.account_id.get());
            span.record("key_id", check.key.id.get());
        }
        let window = match auth::rate_window(&check, now, window) {
            Ok(window) => window,
            Err(error) => {
                observe::rate_limited();
                return error.into_response();
            }
        };
        let mut response = match auth::authorize(check.key, check.account, endpoint) {
            Ok(caller) => {
                let ctx = Ctx {
                    shared: &self.shared,
                    caller,
                    now,
                };
                api::serve(&ctx, endpoint, request)
                    .await
                    .unwrap_or_else(ApiError::into_response)
            }
            Err(error) => error.into_response(),
        };
        let headers = response.headers_mut();
        headers.insert("x-ratelimit-limit", HeaderValue::from(window.limit));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(window.remaining));
        response
    }
}

impl tower::Service<Request<Bytes>> for Engine {
    type Response = Response<Bytes>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Bytes>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        let engine = self.clone();
        Box::pin(async move { Ok(engine.handle(request).await) })
    }
}

impl Engine {
    /// The OpenAPI 3.1 document of the API, as served at `GET /api/v1/openapi.json` (without
    /// a key): every route of the dispatch table with its ability, bodies, errors and headers,
    /// and the webhook events. See [`crate::openapi`].
    pub fn openapi(&self) -> serde_json::Value {
        crate::openapi::document().clone()
    }

    /// The platform's Rust API over this engine's store, clock and settings.
    pub fn operator(&self) -> Operator {
        Operator::new(self.shared.clone())
    }

    /// The webhook dispatcher over this engine's store, clock and URL policy
    /// ([`Config::webhook_urls`]), with the default
    /// [`DispatcherConfig`](crate::webhooks::DispatcherConfig). Spawn its
    /// [`run`](crate::webhooks::Dispatcher::run) once per app instance:
    ///
    /// ```no_run
    /// # async fn demo(engine: commerce_core::Engine) {
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let dispatcher = tokio::spawn(engine.webhooks().run(async {
    ///     let _ = stopped.await;
    /// }));
    /// // ... on shutdown:
    /// let _ = stop.send(());
    /// dispatcher.await.unwrap();
    /// # }
    /// ```
    #[cfg(feature = "webhooks")]
    pub fn webhooks(&self) -> crate::webhooks::Dispatcher {
        crate::webhooks::Dispatcher::new(
            self.shared.store.clone(),
            self.shared.clock.clone(),
            self.shared.config.webhook_urls,
            crate::webhooks::DispatcherConfig::default(),
        )
    }
}
