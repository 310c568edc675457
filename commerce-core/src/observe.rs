//! What the engine tells about itself: the names of its `tracing` spans and of its metrics,
//! and the events of the platform's money and order moves.
//!
//! # Spans
//!
//! - [`REQUEST_SPAN`] (`commerce.request`, level `INFO`), one per API request, with the fields
//!   `endpoint` (the route's stable name, e.g. `orders.create`, `me.show`; `"unmatched"`
//!   for a 404 or 405), `method`, `request_id` (the answer's `Request-Id`: the client's own
//!   when valid, else `req_` and 24 characters), `account_id` and `key_id` (recorded once the key is
//!   authenticated, empty before), `status` and `latency_ms` (recorded when the answer is ready).
//! - [`STORE_SPAN`] (`commerce.store`, level `DEBUG`), one per store operation, with `concern`
//!   ([`Concern::name`](crate::store::Concern::name)) and `operation` (the method's name); inside
//!   a request it is a child of the request's span.
//! - [`WEBHOOK_SPAN`] (`commerce.webhook`, level `INFO`), one per webhook attempt of the
//!   dispatcher (feature `webhooks`), with `delivery_id`, `webhook_id`, `event_type`, `attempt`
//!   (1 for the first) and `status` (the receiver's HTTP status, or why there was none:
//!   `timeout`, `connection refused`, ...); never the URL, the secret or the payload.
//!
//! # Log targets
//!
//! Spans and events have the target of the module that makes them: `commerce_core::...`,
//! `commerce_store_sqlx::...` (sqlx's own are `sqlx::...`). A `tracing-subscriber` filter
//! directive matches every target it starts, so `commerce` selects all of the library's
//! (`RUST_LOG=warn,commerce=info`; `commerce=debug` adds the store spans), whichever crate,
//! facade or not, the application depends on.
//!
//! No span or event carries a key, a customer's name, phone or address, a request body or a
//! query string: ids, statuses, amounts and names of endpoints only.
//!
//! # Events (`INFO`, target `commerce_core::observe`)
//!
//! An order moved (by the API's cancel or the platform's [`Operator`](crate::operator::Operator)), an
//! order placed, a withdrawal requested and a withdrawal decided.
//!
//! # Metrics (feature `metrics`)
//!
//! Through the [`metrics`](https://docs.rs/metrics) facade, to whatever recorder the
//! application installs (none: nothing is kept): [`REQUESTS_TOTAL`], [`REQUEST_DURATION`],
//! [`RATE_LIMITED_TOTAL`], [`IDEMPOTENT_REPLAYS_TOTAL`]; and from the webhook dispatcher
//! (feature `webhooks` too) [`WEBHOOK_ATTEMPTS_TOTAL`], [`WEBHOOK_ENDPOINTS_DISABLED_TOTAL`],
//! [`WEBHOOK_IN_FLIGHT`], and, sampled from the store every [`BACKLOG_SAMPLE`] while
//! `Dispatcher::run` runs, [`WEBHOOK_BACKLOG`],
//! [`WEBHOOK_LEASED`] and [`WEBHOOK_OPEN_BREAKERS`]. `describe_metrics` gives the recorder
//! their help texts.

use std::time::Duration;

use http::StatusCode;

use crate::model::{Order, Quote, Withdrawal};

/// Name of the span of one API request.
pub const REQUEST_SPAN: &str = "commerce.request";
/// Name of the span of one store operation.
pub const STORE_SPAN: &str = "commerce.store";
/// Name of the span of one webhook attempt.
pub const WEBHOOK_SPAN: &str = "commerce.webhook";

/// Counter of answered requests, labels `endpoint` and `status` (`"201"`).
pub const REQUESTS_TOTAL: &str = "commerce_requests_total";
/// Histogram of the time to answer a request, in seconds, label `endpoint`.
pub const REQUEST_DURATION: &str = "commerce_request_duration_seconds";
/// Counter of requests refused by a key's rate limit (429).
pub const RATE_LIMITED_TOTAL: &str = "commerce_rate_limited_total";
/// Counter of `POST /orders` answered from an `Idempotency-Key` record (replays).
pub const IDEMPOTENT_REPLAYS_TOTAL: &str = "commerce_idempotent_replays_total";

/// Counter of webhook attempts, labels `outcome` (`delivered`, `retry`: another attempt is
/// scheduled, `failed`: the last one) and `answer` (`answered`: an HTTP status came back,
/// `no_answer`, `unreachable`: a timeout or a refused connection, which feeds the breaker).
pub const WEBHOOK_ATTEMPTS_TOTAL: &str = "commerce_webhook_attempts_total";
/// Counter of endpoints disabled by an attempt's outcome, label `reason`.
pub const WEBHOOK_ENDPOINTS_DISABLED_TOTAL: &str = "commerce_webhook_endpoints_disabled_total";
/// Gauge of the attempts this dispatcher has in flight.
pub const WEBHOOK_IN_FLIGHT: &str = "commerce_webhook_in_flight";
/// Gauge of the deliveries due and waiting for a dispatcher, in the whole store
/// ([`WebhookBacklog::due`](crate::model::WebhookBacklog::due)).
pub const WEBHOOK_BACKLOG: &str = "commerce_webhook_backlog";
/// Gauge of the deliveries under a lease (in flight in any dispatcher sharing the store).
pub const WEBHOOK_LEASED: &str = "commerce_webhook_leased";
/// Gauge of the enabled endpoints whose circuit breaker is open.
pub const WEBHOOK_OPEN_BREAKERS: &str = "commerce_webhook_open_breakers";
/// How often a running dispatcher samples the backlog gauges (one store read of three counts).
pub const BACKLOG_SAMPLE: Duration = Duration::from_secs(15);

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
    metrics::describe_counter!(
        WEBHOOK_ATTEMPTS_TOTAL,
        "Webhook attempts, by outcome (delivered, retry, failed) and answer"
    );
    metrics::describe_counter!(
        WEBHOOK_ENDPOINTS_DISABLED_TOTAL,
        "Webhook endpoints disabled by an attempt's outcome, by reason"
    );
    metrics::describe_gauge!(
        WEBHOOK_IN_FLIGHT,
        "Webhook attempts in flight in this dispatcher"
    );
    metrics::describe_gauge!(
        WEBHOOK_BACKLOG,
        "Webhook deliveries due and waiting for a dispatcher (whole store)"
    );
    metrics::describe_gauge!(
        WEBHOOK_LEASED,
        "Webhook deliveries under a lease, in every dispatcher (whole store)"
    );
    metrics::describe_gauge!(
        WEBHOOK_OPEN_BREAKERS,
        "Enabled webhook endpoints whose circuit breaker is open"
    );
}

/// The `answer` label of an attempt's result.
#[cfg(feature = "webhooks")]
pub(crate) fn answer_of(result: &crate::model::AttemptResult) -> &'static str {
    use crate::model::AttemptResult;
    match result {
        AttemptResult::Answered(_) => "answered",
        AttemptResult::NoAnswer(_) => "no_answer",
        AttemptResult::Unreachable(_) => "unreachable",
    }
}

/// A webhook attempt ended with `outcome`; `answer` is [`answer_of`] its result.
#[cfg(feature = "webhooks")]
#[inline]
pub(crate) fn webhook_attempted(answer: &'static str, outcome: &crate::model::AttemptOutcome) {
    #[cfg(feature = "metrics")]
    {
        use crate::model::DeliveryStatus;
        let decided = match outcome.status {
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Pending => "retry",
            _ => "failed",
        };
        metrics::counter!(WEBHOOK_ATTEMPTS_TOTAL, "outcome" => decided, "answer" => answer)
            .increment(1);
        if let Some(reason) = outcome.disable {
            metrics::counter!(WEBHOOK_ENDPOINTS_DISABLED_TOTAL, "reason" => reason.as_str())
                .increment(1);
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (answer, outcome);
}

/// The dispatcher has `count` attempts in flight.
#[cfg(feature = "webhooks")]
#[inline]
pub(crate) fn webhooks_in_flight(count: usize) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(WEBHOOK_IN_FLIGHT).set(count as f64);
    #[cfg(not(feature = "metrics"))]
    let _ = count;
}

/// The backlog as last sampled.
#[cfg(feature = "webhooks")]
#[inline]
pub(crate) fn webhook_backlog(backlog: crate::model::WebhookBacklog) {
    #[cfg(feature = "metrics")]
    {
        metrics::gauge!(WEBHOOK_BACKLOG).set(backlog.due as f64);
        metrics::gauge!(WEBHOOK_LEASED).set(backlog.leased as f64);
        metrics::gauge!(WEBHOOK_OPEN_BREAKERS).set(backlog.open_breakers as f64);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = backlog;
}

/// `future` in `span`, or as it is when the span is disabled (no subscriber wants it): a
/// disabled span still costs an enter and an exit on every poll and at the drop (with the
/// `log` bridge that sqlx and warp turn on, a check of the `log` crate's level each time),
/// which a request pays for each of its phases and store calls.
pub(crate) fn in_span<F: std::future::Future>(
    future: F,
    span: tracing::Span,
) -> futures_util::future::Either<F, tracing::instrument::Instrumented<F>> {
    use futures_util::future::Either;
    use tracing::Instrument;
    if span.is_disabled() {
        Either::Left(future)
    } else {
        Either::Right(future.instrument(span))
    }
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

/// A quote decided (accepted, rejected or withdrawn), as an `INFO` event.
pub(crate) fn quote_decided(quote: &Quote) {
    tracing::info!(
        quote_id = quote.id.get(),
        account_id = quote.account_id.get(),
        variant_id = quote.variant_id.get(),
        status = quote.status.as_str(),
        unit_price = %quote.unit_price,
        quantity = quote.quantity,
        "quote decided"
    );
}
