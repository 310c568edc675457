//! Rows of webhook endpoints and deliveries.

use commerce_core::model::*;
use commerce_core::store::StoreError;

use super::*;

/// What `webhook_endpoints.events` holds for an endpoint that takes every type of its side
/// ([`EventSelection::All`]), types of later versions included.
pub(crate) const ALL_EVENTS: &str = "*";

/// An endpoint's event types as stored: [`ALL_EVENTS`], or comma-joined
/// (`order.created,order.status_changed`).
pub(crate) fn events_text(events: &EventSelection) -> String {
    match events {
        EventSelection::Only(kinds) => kinds
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(","),
        _ => ALL_EVENTS.to_owned(),
    }
}

fn parse_events(text: &str) -> Result<EventSelection, StoreError> {
    if text == ALL_EVENTS {
        return Ok(EventSelection::All);
    }
    text.split(',')
        .filter(|e| !e.is_empty())
        .map(|e| parse(e, EventType::parse, "event type"))
        .collect::<Result<_, _>>()
        .map(EventSelection::Only)
}

db_row! {
    pub(crate) struct WebhookRow {
        id: i64,
        account_id: i64,
        url: String,
        events: String,
        description: Option<String>,
        enabled: bool,
        disabled_reason: Option<String>,
        secret: String,
        previous_secret: Option<String>,
        previous_secret_until: Option<i64>,
        failing_since: Option<i64>,
        breaker_failures: i64,
        breaker_open_until: Option<i64>,
        created_at: i64,
        updated_at: i64,
        disabled_at: Option<i64>,
        failed_attempts: i64,
    }
}

impl WebhookRow {
    pub(crate) fn into_domain(self) -> Result<Webhook, StoreError> {
        let previous_secret = match (self.previous_secret, self.previous_secret_until) {
            (Some(secret), Some(until)) => Some((WebhookSecret::new(secret), instant(until))),
            (None, None) => None,
            _ => return Err(corrupt("previous secret without its end, or the reverse")),
        };
        Ok(Webhook::builder()
            .id(WebhookId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .url(self.url)
            .events(parse_events(&self.events)?)
            .maybe_description(self.description)
            .enabled(self.enabled)
            .maybe_disabled_reason(
                self.disabled_reason
                    .map(|r| parse(&r, DisabledReason::parse, "disabled reason"))
                    .transpose()?,
            )
            .maybe_disabled_at(self.disabled_at.map(instant))
            .secret(WebhookSecret::new(self.secret))
            .maybe_previous_secret(previous_secret)
            .maybe_failing_since(self.failing_since.map(instant))
            .failed_attempts(
                u32::try_from(self.failed_attempts)
                    .map_err(|_| corrupt("failed attempts out of range"))?,
            )
            .breaker(Breaker::new(
                u32::try_from(self.breaker_failures)
                    .map_err(|_| corrupt("breaker failures out of range"))?,
                self.breaker_open_until.map(instant),
            ))
            .created_at(instant(self.created_at))
            .updated_at(instant(self.updated_at))
            .build())
    }
}

db_row! {
    pub(crate) struct DeliveryRow {
        id: i64,
        endpoint_id: i64,
        event_id: String,
        event_type: String,
        order_id: Option<i64>,
        payload: String,
        snapshot: Option<String>,
        status: String,
        attempts: i64,
        next_attempt_at: Option<i64>,
        last_attempt_at: Option<i64>,
        last_status_code: Option<i32>,
        last_error: Option<String>,
        created_at: i64,
        manual: bool,
    }
}

impl DeliveryRow {
    /// The order claims are made in: due first, then oldest.
    pub(crate) fn claim_order(&self) -> (Option<i64>, i64) {
        (self.next_attempt_at, self.id)
    }

    /// The endpoint the delivery is for.
    pub(crate) fn endpoint(&self) -> WebhookId {
        WebhookId::new(self.endpoint_id)
    }

    pub(crate) fn into_domain(self) -> Result<Delivery, StoreError> {
        Ok(Delivery::builder()
            .id(DeliveryId::new(self.id))
            .webhook_id(WebhookId::new(self.endpoint_id))
            .event_id(self.event_id)
            .event_type(parse(&self.event_type, EventType::parse, "event type")?)
            .maybe_order_id(self.order_id.map(OrderId::new))
            .snapshot(parse_snapshot(
                self.id,
                self.snapshot.as_deref(),
                self.payload,
            )?)
            .status(parse(
                &self.status,
                DeliveryStatus::parse,
                "delivery status",
            )?)
            .attempts(u32_of(self.attempts, "attempts")?)
            .maybe_next_attempt_at(self.next_attempt_at.map(instant))
            .maybe_last_attempt_at(self.last_attempt_at.map(instant))
            .maybe_last_status_code(
                self.last_status_code
                    .map(|code| {
                        u16::try_from(code).map_err(|_| corrupt(format!("HTTP status {code}")))
                    })
                    .transpose()?,
            )
            .maybe_last_error(self.last_error)
            .created_at(instant(self.created_at))
            .manual(self.manual)
            .build())
    }
}

/// A row of a page read with its total (`COUNT(*) OVER () AS total`): the row and the total.
pub(crate) struct Counted<T>(std::marker::PhantomData<T>);

impl<DB: crate::dialect::Dialect, T: crate::dialect::FromDbRow<DB>> crate::dialect::FromDbRow<DB>
    for Counted<T>
{
    type Output = (T::Output, i64);
    fn from_db_row(row: &DB::Row) -> Result<Self::Output, sqlx::Error> {
        Ok((
            T::from_db_row(row)?,
            crate::dialect::col::<DB, i64>(row, "total")?,
        ))
    }
}
