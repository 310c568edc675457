//! The platform's settings of an engine.

use chrono::Duration;
use rust_decimal::Decimal;

use crate::webhooks::UrlPolicy;

/// Platform settings of an engine. `Config::default()` holds the product's defaults; change
/// a field on it, or with [`Engine::builder`](crate::Engine::builder)`(store).configure(|c| ..)`.
/// New settings may be added (`#[non_exhaustive]`), each with a default.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// How long an adapter waits for a request's whole body once its head was admitted
    /// (default 30 seconds); a body not read whole by then is a `408 request_timeout`, so a
    /// client trickling its body cannot hold a connection and its buffer for ever. `None`
    /// waits as long as the body lasts.
    pub body_timeout: Option<std::time::Duration>,
    /// How long an `Idempotency-Key` replays its first response (default 24 hours).
    pub idempotency_ttl: Duration,
    /// After how long a request still in flight under a key is taken to have died (default 2 minutes).
    pub idempotency_stale_after: Duration,
    /// Which webhook URLs may be registered and called besides `https` ones of public
    /// addresses (default [`UrlPolicy::STRICT`]: none; the sandbox's [`UrlPolicy::SANDBOX`]
    /// allows `http` and loopback receivers, nothing else private).
    pub webhook_urls: UrlPolicy,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            commission_percent: Decimal::from(4),
            hold_days: crate::model::DEFAULT_HOLD_DAYS,
            withdrawal_minimum: Decimal::new(10_000, 2),
            referral_percent: Decimal::ZERO,
            default_rate_limit: 120,
            body_limit: 1024 * 1024,
            body_timeout: Some(std::time::Duration::from_secs(30)),
            idempotency_ttl: Duration::hours(24),
            idempotency_stale_after: Duration::minutes(2),
            webhook_urls: UrlPolicy::default(),
        }
    }
}

impl Config {
    /// What the store needs to render an order's webhook events under these settings.
    pub fn event_context(&self) -> crate::model::EventContext {
        crate::model::EventContext {
            hold_days: self.hold_days,
        }
    }
}
