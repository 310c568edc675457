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
use http::request::Parts;
use http::{Request, Response};
use tracing::{Span, field};

use crate::api::{self, Ctx};
use crate::cache::CachingStore;
use crate::cache::pulls_seen::PullsSeen;
use crate::cache::shared::Shared;
use crate::clock::{Clock, OffsetClock, SystemClock};
use crate::config::{Config, ConfigError};
use crate::error::ApiError;
use crate::model::RateWindow;
use crate::observe;
use crate::operator::Operator;
use crate::render::request_id::RequestId;
use crate::store::{Store, Traced};
use crate::web::auth;
use crate::web::routes::{self, Endpoint};

mod background;
mod detached;

use detached::detached;

/// The API engine: `handle(http::Request<Bytes>) -> http::Response<Bytes>`.
///
/// Cheap to clone (an `Arc` inside); share one per application. Also a
/// [`tower::Service`], so any tower-based server can serve it directly.
///
/// An application serving it also runs, once per instance, the webhook dispatcher
/// (`Engine::dispatcher`, feature `webhooks`; without it, order events stay in the store's
/// outbox and no receiver hears of them) and the hourly purges
/// ([`Operator::purge_idempotency`], [`Operator::purge_webhook_deliveries`]), and closes the
/// store when it stops: [`Engine::run_background`] does all three.
///
/// ```
/// # use commerce_core as commerce;
/// use std::sync::Arc;
/// use commerce::{Engine, store::MemoryStore};
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
    /// The store as the builder was given it (`shared.store` is it behind the tracing layer
    /// and the rendered-JSON caches).
    given_store: Arc<dyn Store>,
    /// What [`dispatcher`](Self::dispatcher) (and so [`run_background`](Self::run_background))
    /// runs with ([`EngineBuilder::dispatcher_config`]).
    #[cfg(feature = "webhooks")]
    dispatcher_config: crate::webhooks::DispatcherConfig,
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
    #[cfg(feature = "webhooks")]
    dispatcher_config: crate::webhooks::DispatcherConfig,
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

    /// The webhook dispatcher's settings ([`Engine::dispatcher`] and
    /// [`Engine::run_background`] run with them; the default otherwise), checked by
    /// [`build`](Self::build) ([`DispatcherConfig::check`](crate::webhooks::DispatcherConfig::check)).
    #[cfg(feature = "webhooks")]
    #[cfg_attr(docsrs, doc(cfg(feature = "webhooks")))]
    pub fn dispatcher_config(mut self, config: crate::webhooks::DispatcherConfig) -> Self {
        self.dispatcher_config = config;
        self
    }

    /// The engine, once every setting passed [`Config::check`] (the error names the first
    /// one that did not).
    /// The engine keeps the store behind its tracing layer: each store operation of a request
    /// is a `commerce.store` span under the request's span (see [`observe`]).
    pub fn build(self) -> Result<Engine, ConfigError> {
        self.config.check()?;
        #[cfg(feature = "webhooks")]
        self.dispatcher_config.check()?;
        #[cfg_attr(not(feature = "webhooks"), allow(unused_mut))]
        let mut engine = Engine::start(self.store, self.config, self.clock);
        #[cfg(feature = "webhooks")]
        {
            engine.dispatcher_config = self.dispatcher_config;
        }
        Ok(engine)
    }
}

impl Engine {
    /// An engine over `store` with the default [`Config`] and the system clock.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self::start(store, Config::default(), Arc::new(SystemClock))
    }

    /// Starts an engine over `store`: change settings with [`EngineBuilder::configure`] or
    /// [`EngineBuilder::config`], the clock with [`EngineBuilder::clock`], then
    /// [`EngineBuilder::build`].
    ///
    /// ```
    /// # use commerce_core as commerce;
    /// use std::sync::Arc;
    /// use commerce::{Engine, store::MemoryStore};
    ///
    /// let engine = Engine::builder(Arc::new(MemoryStore::new()))
    ///     .configure(|c| c.hold_days = 7)
    ///     .build()
    ///     .expect("the settings are valid");
    /// assert_eq!(engine.config().hold_days, 7);
    /// assert_eq!(engine.config().default_rate_limit, 120);
    /// ```
    pub fn builder(store: Arc<dyn Store>) -> EngineBuilder {
        EngineBuilder {
            store,
            config: Config::default(),
            clock: Arc::new(SystemClock),
            #[cfg(feature = "webhooks")]
            dispatcher_config: crate::webhooks::DispatcherConfig::default(),
        }
    }

    fn start(store: Arc<dyn Store>, config: Config, clock: Arc<dyn Clock>) -> Self {
        // In test mode the engine reads an offset clock over the given one, which
        // `POST /sandbox/clock` moves forward.
        let test_clock = config
            .test_mode
            .then(|| Arc::new(OffsetClock::new(clock.clone())));
        let clock = match &test_clock {
            Some(test_clock) => test_clock.clone() as Arc<dyn Clock>,
            None => clock,
        };
        Self {
            #[cfg(feature = "webhooks")]
            dispatcher_config: crate::webhooks::DispatcherConfig::default(),
            given_store: store.clone(),
            shared: Arc::new(Shared {
                store: Arc::new(CachingStore::new(Arc::new(Traced::new(store)), &config)),
                clock,
                rendered_me: crate::cache::rendered_me::RenderedMe::new(),
                kept_products: crate::domain::kept::KeptProducts::new(
                    crate::domain::kept::KeptProducts::CAPACITY,
                ),
                unknown_keys: crate::cache::unknown_keys::UnknownKeys::new(
                    config.unknown_keys,
                    config.unknown_key_life,
                ),
                test_clock,
                config,
                pulls_seen: PullsSeen::default(),
            }),
        }
    }

    /// The store as the engine was given it, for an application's own reads and for another
    /// engine over the same data. Operations called on it directly are not traced (the
    /// engine's own and the [`Operator`]'s are: they go through its tracing layer).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.given_store
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
    /// This runs both phases of the pipeline: [`head`](Self::head) on the request's head (with
    /// the body's length as its declared length), then [`Admitted::handle`] with the body. An
    /// adapter that still has to read the body calls [`serve`](Self::serve) instead, so that a
    /// request refused on its head is refused before its body is read.
    ///
    /// # Cancellation
    /// Inside a tokio runtime a caller that drops this future (a client that disconnected, a
    /// timeout layer) does not cut the request short: the request runs in this future while
    /// it is polled, and what is left of it when it is dropped runs on in a task of its own. An order being placed is placed, an `Idempotency-Key`
    /// record is finished or abandoned, never left in flight; the answer is simply not read.
    /// Outside a runtime the request runs in this future; the store contract (see
    /// [`Store`]) still keeps a dropped operation atomic.
    pub async fn handle(&self, request: Request<Bytes>) -> Response<Bytes> {
        let engine = self.clone();
        let id = RequestId::of(request.headers());
        let shutdown = id.clone();
        detached(
            Box::pin(async move { engine.handle_here(request, id).await }),
            move || ApiError::server().render(&shutdown),
        )
        .await
    }

    /// Answers one request in the current task, both phases, in its `commerce.request` span.
    pub(crate) async fn handle_here(
        &self,
        request: Request<Bytes>,
        id: RequestId,
    ) -> Response<Bytes> {
        let (parts, body) = request.into_parts();
        let declared = u64::try_from(body.len()).ok();
        match self.head_here(parts, declared, id).await {
            Head::Admitted(admitted) => admitted.handle_here(body).await,
            Head::Answered(response) => response,
        }
    }

    /// The first phase of the pipeline, on the request's head alone: route (404, 405), the
    /// declared body length against the endpoint's limit ([`Config::order_body_limit`] for
    /// `POST /orders`, [`Config::body_limit`] for the others; 413), key (401; this counts the
    /// request in the key's rate window; an unknown key remembered by the engine is refused
    /// without a store query), rate limit (429), then account state, API status,
    /// side and ability (403). [`Head::Answered`] is the final answer: the adapter sends it
    /// without reading the body (nor sending `100 Continue`). [`Head::Admitted`] asks for the
    /// body: read it (at most the endpoint's limit, within [`Config::body_timeout`])
    /// and pass it to [`Admitted::handle`], or let [`Admitted::read_body`] do both.
    ///
    /// `declared_length` is what the client announced (`Content-Length`, or the body's exact
    /// size hint); `None` when unknown (a chunked body), in which case the limit is enforced
    /// while reading. Runs to its end like [`handle`](Self::handle) (on in a task of its own
    /// when this future is dropped): the key's rate window is counted whole or not at all.
    ///
    /// ```
    /// # use commerce_core as commerce;
    /// use std::sync::Arc;
    /// use commerce::{Engine, Head, store::MemoryStore};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let engine = Engine::new(Arc::new(MemoryStore::new()));
    /// let (parts, ()) = http::Request::post("/api/v1/orders").body(()).unwrap().into_parts();
    /// // No key: refused on the head, whatever the body would have been.
    /// let Head::Answered(response) = engine.head(parts, Some(1_000)).await else {
    ///     panic!("a request without a key is not admitted");
    /// };
    /// assert_eq!(response.status(), 401);
    /// # });
    /// ```
    pub async fn head(&self, parts: Parts, declared_length: Option<u64>) -> Head {
        let engine = self.clone();
        let id = RequestId::of(&parts.headers);
        let shutdown = id.clone();
        detached(
            Box::pin(async move { engine.head_here(parts, declared_length, id).await }),
            move || Head::Answered(ApiError::server().render(&shutdown)),
        )
        .await
    }

    /// Both phases for a request whose body is still to be read: [`head`](Self::head) with
    /// the body's exact size hint or its `Content-Length` as the declared length, then
    /// [`Admitted::read_body`]; a body whose exact size is 0 (nothing to read or wait for) is
    /// answered as [`handle`](Self::handle) answers it, in one phase. What the adapters call.
    pub async fn serve<B>(&self, request: Request<B>) -> Response<Bytes>
    where
        B: http_body::Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = request.into_parts();
        let exact = http_body::Body::size_hint(&body).exact();
        if exact == Some(0) {
            // Nothing to read (most GETs): both phases as one, as `handle` runs them.
            return self.handle(Request::from_parts(parts, Bytes::new())).await;
        }
        let declared = exact.or_else(|| declared_length(&parts.headers));
        match self.head(parts, declared).await {
            Head::Admitted(admitted) => admitted.read_body(body).await,
            Head::Answered(response) => response,
        }
    }

    /// The head phase in the current task: opens the request's span and answers or admits.
    async fn head_here(&self, parts: Parts, declared_length: Option<u64>, id: RequestId) -> Head {
        let started = std::time::Instant::now();
        let route = routes::resolve(
            &parts.method,
            parts.uri.path(),
            self.shared.config.test_mode,
        );
        let endpoint = route.as_ref().map_or(routes::UNMATCHED, |e| e.name());
        // Never the path (it holds ids), the query, a header or the body: the route's name.
        let span = tracing::info_span!(
            "commerce.request",
            endpoint,
            method = parts.method.as_str(),
            request_id = id.as_str(),
            account_id = field::Empty,
            key_id = field::Empty,
            status = field::Empty,
            latency_ms = field::Empty,
        );
        let trace = Trace {
            span,
            endpoint,
            started,
            id,
        };
        let checked = crate::observe::in_span(
            AssertUnwindSafe(self.check_head(route, &parts, declared_length, &trace.span))
                .catch_unwind(),
            trace.span.clone(),
        )
        .await;
        match checked {
            Ok(Checked::Pass(pass)) => Head::Admitted(Admitted {
                engine: self.clone(),
                parts: Box::new(parts),
                pass,
                trace,
            }),
            Ok(Checked::Keyless(response)) => Head::Answered(trace.answered(response)),
            Ok(Checked::Refused(error, window)) => {
                Head::Answered(trace.refused(error, window.as_ref()))
            }
            Err(_) => Head::Answered(trace.panicked()),
        }
    }

    /// Route, declared length, key, rate limit, account: the head's checks in their order.
    async fn check_head(
        &self,
        route: Result<Endpoint, ApiError>,
        parts: &Parts,
        declared_length: Option<u64>,
        span: &Span,
    ) -> Checked {
        let endpoint = match route {
            Ok(endpoint) => endpoint,
            Err(error) => return Checked::Refused(error, None),
        };
        let limit = crate::web::body::limit(&self.shared.config, endpoint);
        if declared_length.is_some_and(|length| length > u64::try_from(limit).unwrap_or(u64::MAX)) {
            return Checked::Refused(ApiError::payload_too_large(limit), None);
        }
        // An endpoint without a key (the OpenAPI document) is answered on the head.
        match api::serve_keyless(endpoint, parts) {
            Some(Ok(response)) => return Checked::Keyless(response),
            Some(Err(error)) => return Checked::Refused(error, None),
            None => {}
        }
        let now = self.now();
        let window = RateWindow::containing(now);
        let check = match auth::authenticate(&self.shared, &parts.headers, now, window).await {
            Ok(check) => check,
            Err(error) => return Checked::Refused(error, None),
        };
        if !span.is_disabled() {
            span.record("account_id", check.key.account_id.get());
            span.record("key_id", check.key.id.get());
        }
        let window = match auth::rate_allowance(&check, now, window) {
            Ok(window) => window,
            Err(error) => {
                observe::rate_limited();
                return Checked::Refused(error, None);
            }
        };
        match auth::authorize(check.key, check.account, endpoint) {
            Ok(caller) => Checked::Pass(Box::new(Pass {
                endpoint,
                caller,
                now,
                window,
            })),
            Err(error) => Checked::Refused(error, Some(window)),
        }
    }
}

/// What the head's checks decided, before anything is rendered.
enum Checked {
    /// Every check passed: the body may be read (boxed where it is made: the answer moves
    /// through the span's and the panic guard's futures as a pointer).
    Pass(Box<Pass>),
    /// The answer of an endpoint that needs no key (the OpenAPI document).
    Keyless(Response<Bytes>),
    /// Refused, with the key's rate window when the request was counted in it.
    Refused(ApiError, Option<auth::RateAllowance>),
}

/// What the head phase ([`Engine::head`]) decided.
#[derive(Debug)]
#[must_use = "send the answer, or read the body and call Admitted::handle"]
pub enum Head {
    /// The final answer (404, 405, 413, 401, 429, 403, a 500, or the answer of an endpoint
    /// that needs no key, such as the OpenAPI document): send it without reading the body.
    Answered(Response<Bytes>),
    /// The head passed every check: the body may be read.
    Admitted(Admitted),
}

/// A request whose head passed the engine's checks, waiting for its body (the second phase of
/// the pipeline). The key's rate window already counted it: every answer from here on carries
/// `X-RateLimit-*`.
pub struct Admitted {
    engine: Engine,
    // Boxed: a `Head` is moved between tasks, and these are the large parts of it.
    parts: Box<Parts>,
    pass: Box<Pass>,
    trace: Trace,
}

impl std::fmt::Debug for Admitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted")
            .field("method", &self.parts.method)
            .field("endpoint", &self.trace.endpoint)
            .finish_non_exhaustive()
    }
}

/// What the head's checks established.
struct Pass {
    endpoint: Endpoint,
    caller: auth::Caller,
    now: DateTime<Utc>,
    window: auth::RateAllowance,
}

/// The request's span and what its final record needs.
struct Trace {
    span: Span,
    endpoint: &'static str,
    started: std::time::Instant,
    /// The request's id, stamped on its answer.
    id: RequestId,
}

impl Trace {
    /// The answer to a refused request: `error` rendered once with the request's id, with the
    /// key's rate window when it was counted.
    fn refused(self, error: ApiError, window: Option<&auth::RateAllowance>) -> Response<Bytes> {
        let response = error.render(&self.id);
        let response = match window {
            Some(window) => window.stamp(response),
            None => response,
        };
        self.answered(response)
    }

    /// Records the answer on the span and in the metrics, and returns it with the request's
    /// id.
    fn answered(self, response: Response<Bytes>) -> Response<Bytes> {
        let response = self.id.stamp_last(response);
        let took = self.started.elapsed();
        if !self.span.is_disabled() {
            self.span.record("status", response.status().as_u16());
            self.span.record("latency_ms", took.as_secs_f64() * 1000.0);
            self.span.in_scope(|| tracing::debug!("api request"));
        }
        observe::request_answered(self.endpoint, response.status(), took);
        response
    }

    /// A 500 for a handler that panicked.
    fn panicked(self) -> Response<Bytes> {
        self.span.in_scope(|| tracing::error!("handler panicked"));
        self.refused(ApiError::server(), None)
    }
}

impl Admitted {
    /// Reads `body` under the endpoint's body limit and [`Config::body_timeout`], then answers
    /// with [`handle`](Self::handle); a body that cannot be read is answered here:
    /// over the limit `413 payload_too_large`, cut or malformed (a broken chunked encoding)
    /// `400 bad_request`, not read whole in time `408 request_timeout`.
    pub async fn read_body<B>(self, body: B) -> Response<Bytes>
    where
        B: http_body::Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let config = self.engine.config();
        let limit = crate::web::body::limit(config, self.pass.endpoint);
        match crate::web::body::read(body, limit, config.body_timeout).await {
            Ok(bytes) => self.handle(bytes).await,
            Err(error) => self.refuse(error),
        }
    }

    /// Answers the request with its body (the second phase: input, handler). A body over
    /// the endpoint's limit is a 413. Runs to its end like [`Engine::handle`], even if this
    /// future is dropped.
    pub async fn handle(self, body: Bytes) -> Response<Bytes> {
        let shutdown = self.trace.id.clone();
        detached(
            Box::pin(async move { self.handle_here(body).await }),
            move || ApiError::server().render(&shutdown),
        )
        .await
    }

    /// Answers without the body: `error` is why it could not be read (413, 400, 408).
    pub fn refuse(self, error: ApiError) -> Response<Bytes> {
        self.trace.refused(error, Some(&self.pass.window))
    }

    /// The second phase in the current task.
    async fn handle_here(self, body: Bytes) -> Response<Bytes> {
        let limit = crate::web::body::limit(&self.engine.shared.config, self.pass.endpoint);
        if body.len() > limit {
            return self.refuse(ApiError::payload_too_large(limit));
        }
        let Admitted {
            engine,
            parts,
            pass,
            trace,
        } = self;
        let Pass {
            endpoint,
            caller,
            now,
            window,
        } = *pass;
        let ctx = Ctx {
            shared: &engine.shared,
            caller,
            now,
        };
        let request = Request::from_parts(*parts, body);
        // Boxed before it is wrapped, so that the wrappers move a pointer, not the handler's
        // future (see `detached`).
        let answer = crate::observe::in_span(
            AssertUnwindSafe(Box::pin(api::serve(&ctx, endpoint, request))).catch_unwind(),
            trace.span.clone(),
        )
        .await;
        match answer {
            Ok(Ok(response)) => trace.answered(window.stamp(response)),
            Ok(Err(error)) => trace.refused(error, Some(&window)),
            Err(_) => trace.panicked(),
        }
    }
}

/// The `Content-Length` a request announces, when it is one number.
fn declared_length(headers: &http::HeaderMap) -> Option<u64> {
    let mut all = headers.get_all(http::header::CONTENT_LENGTH).iter();
    let (Some(value), None) = (all.next(), all.next()) else {
        return None;
    };
    value.to_str().ok()?.trim().parse().ok()
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
    /// and the webhook events.
    pub fn openapi(&self) -> serde_json::Value {
        crate::web::openapi::document().clone()
    }

    /// The platform's Rust API over this engine's store, clock and settings.
    pub fn operator(&self) -> Operator {
        Operator::new(self.shared.clone())
    }

    /// The owner-side Rust API for `account`, whose owner the embedding application's own
    /// login established (never an API key): API access, keys, wallet and withdrawals.
    pub fn owner(&self, account: crate::model::AccountId) -> crate::owner::Owner {
        crate::owner::Owner::new(self.shared.clone(), account)
    }

    /// The webhook dispatcher over this engine's store, clock and URL policy
    /// ([`Config::webhook_urls`]), with the
    /// [`DispatcherConfig`](crate::webhooks::DispatcherConfig) the builder was given
    /// ([`EngineBuilder::dispatcher_config`]; the default otherwise). Spawn its
    /// [`run`](crate::webhooks::Dispatcher::run) once per app instance:
    ///
    /// ```no_run
    /// # async fn demo(engine: commerce_core::Engine) {
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let dispatcher = tokio::spawn(engine.dispatcher().run(async {
    ///     let _ = stopped.await;
    /// }));
    /// // ... on shutdown:
    /// let _ = stop.send(());
    /// dispatcher.await.unwrap();
    /// # }
    /// ```
    #[cfg(feature = "webhooks")]
    #[cfg_attr(docsrs, doc(cfg(feature = "webhooks")))]
    pub fn dispatcher(&self) -> crate::webhooks::Dispatcher {
        crate::webhooks::Dispatcher::new(
            self.shared.store.clone(),
            self.shared.clock.clone(),
            self.shared.config.webhook_urls,
            self.dispatcher_config.clone(),
        )
    }
}
