//! [`Engine`]: the framework-neutral request handler, and its [`Config`].

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use chrono::{DateTime, Duration, Utc};
use futures_util::FutureExt;
use http::{HeaderValue, Request, Response, header};
use rust_decimal::Decimal;
use tracing::Instrument;

use crate::api;
use crate::auth;
use crate::clock::{Clock, SystemClock};
use crate::error::{ApiError, ErrorCode};
use crate::model::{Account, AccountState, ApiKey, ApiStatus, Side};
use crate::pulls_seen::PullsSeen;
use crate::routes::{self, Endpoint, Sides};
use crate::store::{KeyCheck, RateLimitHit, Store};
use crate::wire::PayoutRules;

/// Platform settings of an engine. `Config::default()` holds the product's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Platform commission on the marketer's profit, percent (default 4).
    pub commission_percent: Decimal,
    /// Days between delivery and payout readiness (default 14).
    pub hold_days: i64,
    /// Smallest withdrawal, EGP (default 100.00).
    pub withdrawal_minimum: Decimal,
    /// Referral percent shown in the wallet (default 0).
    pub referral_percent: Decimal,
    /// Per-minute limit of keys created without their own (default 120).
    pub default_rate_limit: u32,
    /// Largest request body in bytes (default 1 MiB); larger is a 413.
    pub body_limit: usize,
    /// How long an `Idempotency-Key` replays its first response (default 24 hours).
    pub idempotency_ttl: Duration,
    /// After how long a request still in flight under a key is taken to have died (default 2 minutes).
    pub idempotency_stale_after: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            commission_percent: Decimal::from(4),
            hold_days: 14,
            withdrawal_minimum: Decimal::new(10_000, 2),
            referral_percent: Decimal::ZERO,
            default_rate_limit: 120,
            body_limit: 1024 * 1024,
            idempotency_ttl: Duration::hours(24),
            idempotency_stale_after: Duration::minutes(2),
        }
    }
}

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
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) config: Config,
    /// Catalogue pulls already recorded this month (writes skipped).
    pub(crate) pulls_seen: PullsSeen,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Who is calling, once the key passed every check.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The key used.
    pub key: ApiKey,
    /// Its account.
    pub account: Account,
}

/// Everything a handler needs.
pub(crate) struct Ctx<'a> {
    pub engine: &'a Engine,
    pub caller: Caller,
    pub now: DateTime<Utc>,
}

impl Ctx<'_> {
    pub fn store(&self) -> &dyn Store {
        &*self.engine.inner.store
    }

    pub fn config(&self) -> &Config {
        &self.engine.inner.config
    }

    pub fn payout_rules(&self) -> PayoutRules {
        PayoutRules {
            now: self.now,
            hold_days: self.config().hold_days,
        }
    }
}

struct RateWindow {
    limit: u32,
    remaining: u32,
}

impl Engine {
    /// An engine over `store` with the default [`Config`] and the system clock.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self::with(store, Config::default(), Arc::new(SystemClock))
    }

    /// An engine with its settings and clock.
    pub fn with(store: Arc<dyn Store>, config: Config, clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                clock,
                config,
                pulls_seen: PullsSeen::default(),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The current instant, from the engine's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
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

    /// Answers one request in the current task.
    pub(crate) async fn handle_here(&self, request: Request<Bytes>) -> Response<Bytes> {
        let method = request.method().clone();
        let started = std::time::Instant::now();
        let response = match AssertUnwindSafe(self.dispatch(request))
            .catch_unwind()
            .await
        {
            Ok(response) => response,
            Err(_) => {
                tracing::error!("handler panicked");
                ApiError::server().into_response()
            }
        };
        tracing::debug!(%method, status = response.status().as_u16(), elapsed_us = started.elapsed().as_micros() as u64, "api request");
        response
    }

    async fn dispatch(&self, request: Request<Bytes>) -> Response<Bytes> {
        let endpoint = match routes::resolve(request.method(), request.uri().path()) {
            Ok(endpoint) => endpoint,
            Err(error) => return error.into_response(),
        };
        if request.body().len() > self.inner.config.body_limit {
            return ApiError::new(ErrorCode::PayloadTooLarge).into_response();
        }
        let now = self.now();
        let window = now.timestamp().div_euclid(60);
        let check =
            match auth::authenticate(&*self.inner.store, request.headers(), now, window).await {
                Ok(check) => check,
                Err(error) => return error.into_response(),
            };
        let window = match rate_window(&check, now, window) {
            Ok(window) => window,
            Err(error) => return error.into_response(),
        };
        let mut response = match authorize(check.key, check.account, endpoint) {
            Ok(caller) => {
                let ctx = Ctx {
                    engine: self,
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

/// The rate window after the request was counted; 429 when it was refused.
fn rate_window(check: &KeyCheck, now: DateTime<Utc>, window: i64) -> Result<RateWindow, ApiError> {
    let key = &check.key;
    let hit = check.hit.unwrap_or(RateLimitHit {
        allowed: false,
        used: key.rate_limit,
    });
    if hit.allowed {
        return Ok(RateWindow {
            limit: key.rate_limit,
            remaining: key.rate_limit.saturating_sub(hit.used),
        });
    }
    let retry_after = ((window + 1) * 60 - now.timestamp()).max(1);
    Err(ApiError::new(ErrorCode::RateLimited)
        .with_extra("retry_after", retry_after)
        .with_header(header::RETRY_AFTER, HeaderValue::from(retry_after))
        .with_header(
            "x-ratelimit-limit".parse().expect("static header name"),
            HeaderValue::from(key.rate_limit),
        )
        .with_header(
            "x-ratelimit-remaining".parse().expect("static header name"),
            HeaderValue::from(0),
        ))
}

/// Account state, API status, side and ability, in that order (decisions 8).
fn authorize(
    key: ApiKey,
    account: Option<Account>,
    endpoint: Endpoint,
) -> Result<Caller, ApiError> {
    let account = account.ok_or_else(|| ApiError::new(ErrorCode::AccountInactive))?;
    if account.state != AccountState::Active {
        return Err(ApiError::new(ErrorCode::AccountInactive));
    }
    if account.api_status != ApiStatus::Approved {
        return Err(ApiError::new(ErrorCode::ApiNotEnabled)
            .with_extra("api_status", account.api_status.as_str()));
    }
    let side_ok = match endpoint.sides() {
        Sides::All => true,
        Sides::MarketerOrSupplier => matches!(account.side, Side::Marketer | Side::Supplier),
        Sides::Marketer => account.side == Side::Marketer,
    };
    if !side_ok {
        return Err(ApiError::new(ErrorCode::WrongSide));
    }
    if let Some(ability) = endpoint.ability()
        && !key.abilities.contains(&ability)
    {
        return Err(ApiError::new(ErrorCode::ForbiddenAbility));
    }
    Ok(Caller { key, account })
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
