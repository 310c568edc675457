//! What the engine tells about itself: the names of its `tracing` spans and of its metrics,
//! and the events of the platform's money and order moves.
//!
//! # Spans
//!
//! - [`REQUEST_SPAN`] (`commerce.request`, level `INFO`), one per API request, with the fields
//!   `endpoint` (the route's stable name, e.g. `orders.create`, `me.show`; `"unmatched"`
//!   for a 404 or 405), `method`, `account_id` and `key_id` (recorded once the key is
//!   authenticated, empty before), `status` and `latency_ms` (recorded when the answer is ready).
//! - [`STORE_SPAN`] (`commerce.store`, level `DEBUG`), one per store operation, with `concern`
//!   ([`Concern::name`](crate::store::Concern::name)) and `operation` (the method's name); inside
//!   a request it is a child of the request's span.
//!
//! No span or event carries a key, a customer's name, phone or address, a request body or a
//! query string: ids, statuses, amounts and names of endpoints only.
//!
//! # Events (`INFO`, target `commerce_core::observe`)
//!
//! An order moved (by the API's cancel or the platform's [`Operator`](crate::Operator)), an
//! order placed, a withdrawal requested and a withdrawal decided.
//!
//! # Metrics (feature `metrics`)
//!
//! Through the [`metrics`](https://docs.rs/metrics) facade, to whatever recorder the
//! application installs (none: nothing is kept): [`REQUESTS_TOTAL`], [`REQUEST_DURATION`],
//! [`RATE_LIMITED_TOTAL`], [`IDEMPOTENT_REPLAYS_TOTAL`]; `describe_metrics` gives the
//! recorder their help texts.

use std::time::Duration;

use http::StatusCode;

use crate::model::{Order, Withdrawal};

/// Name of the span of one API request.
pub const REQUEST_SPAN: &str = "commerce.request";
/// Name of the span of one store operation.
pub const STORE_SPAN: &str = "commerce.store";

/// Counter of answered requests, labels `endpoint` and `status` (`"201"`).
pub const REQUESTS_TOTAL: &str = "commerce_requests_total";
/// Histogram of the time to answer a request, in seconds, label `endpoint`.
pub const REQUEST_DURATION: &str = "commerce_request_duration_seconds";
/// Counter of requests refused by a key's rate limit (429).
pub const RATE_LIMITED_TOTAL: &str = "commerce_rate_limited_total";
/// Counter of `POST /orders` answered from an `Idempotency-Key` record (replays).
pub const IDEMPOTENT_REPLAYS_TOTAL: &str = "commerce_idempotent_replays_total";

/// Describes the metrics to the installed recorder (help texts, the unit of the histogram),
/// for exporters that show them (Prometheus `# HELP`). Call once, after installing it.
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub fn describe_metrics() {
    metrics::describe_counter!(
        REQUESTS_TOTAL,
        "API requests answered, by endpoint and status"
    );
    metrics::describe_histogram!(
        REQUEST_DURATION,
        metrics::Unit::Seconds,
        "Time to answer an API request, by endpoint"
    );
    metrics::describe_counter!(
        RATE_LIMITED_TOTAL,
        "API requests refused by their key's rate limit (429)"
    );
    metrics::describe_counter!(
        IDEMPOTENT_REPLAYS_TOTAL,
        "POST /orders answered from an Idempotency-Key record"
    );
}

/// A request was answered.
#[inline]
pub(crate) fn request_answered(endpoint: &'static str, status: StatusCode, took: Duration) {
    #[cfg(feature = "metrics")]
    {
        metrics::counter!(REQUESTS_TOTAL, "endpoint" => endpoint, "status" => status.as_u16().to_string())
            .increment(1);
        metrics::histogram!(REQUEST_DURATION, "endpoint" => endpoint).record(took.as_secs_f64());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (endpoint, status, took);
}

/// A request was refused by its key's rate limit.
#[inline]
pub(crate) fn rate_limited() {
    #[cfg(feature = "metrics")]
    metrics::counter!(RATE_LIMITED_TOTAL).increment(1);
}

/// A `POST /orders` was answered from its idempotency record.
#[inline]
pub(crate) fn idempotent_replay() {
    #[cfg(feature = "metrics")]
    metrics::counter!(IDEMPOTENT_REPLAYS_TOTAL).increment(1);
}

/// An order was placed.
pub(crate) fn order_placed(order: &Order) {
    tracing::info!(
        order_id = order.id.get(),
        number = %order.number,
        account_id = order.account_id.get(),
        status = order.status.as_str(),
        lines = order.lines.len(),
        customer_total = %order.totals.customer_total,
        net_profit = %order.totals.net_profit,
        "order placed"
    );
}

/// An order moved to another status, `by` the `"api"` (a marketer's cancel) or the
/// `"platform"`.
pub(crate) fn order_moved(order: &Order, by: &'static str) {
    // The status it left: the timeline's entry before the one the move added.
    let from = order
        .timeline
        .len()
        .checked_sub(2)
        .and_then(|i| order.timeline.get(i))
        .map_or("", |entry| entry.status.as_str());
    tracing::info!(
        order_id = order.id.get(),
        number = %order.number,
        account_id = order.account_id.get(),
        from,
        to = order.status.as_str(),
        by,
        customer_total = %order.totals.customer_total,
        net_profit = %order.totals.net_profit,
        "order moved"
    );
}

/// A withdrawal was requested or decided (its status tells which).
pub(crate) fn withdrawal(withdrawal: &Withdrawal, what: &'static str) {
    tracing::info!(
        withdrawal_id = withdrawal.id.get(),
        account_id = withdrawal.account_id.get(),
        status = withdrawal.status.as_str(),
        amount = %withdrawal.amount,
        supply_amount = %withdrawal.supply_amount,
        "{what}"
    );
}
