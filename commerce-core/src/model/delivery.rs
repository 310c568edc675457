//! The deliveries of webhook events: what an event carries, the claimed delivery, an
//! attempt's outcome, the retry schedule and an endpoint's circuit breaker.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::*;

/// One event for one endpoint, with its attempts so far.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Delivery {
    /// Id.
    pub id: DeliveryId,
    /// The endpoint.
    pub webhook_id: WebhookId,
    /// The event's id (`evt_...`, the `webhook-id` header): the same on every attempt.
    pub event_id: String,
    /// The event's type.
    pub event_type: EventType,
    /// The order the event is about (`None` for `ping`): the deliveries of one order to one
    /// endpoint go out in the order they were created.
    pub order_id: Option<OrderId>,
    /// What the event says, kept as data: the dispatcher renders the request body from it
    /// when it sends (`webhooks::render_event`), the same bytes on every attempt.
    pub snapshot: EventSnapshot,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: u32,
    /// When the next attempt is due (`None` once delivered or failed).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The last attempt's instant.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// The last attempt's HTTP status (`None`: no answer).
    pub last_status_code: Option<u16>,
    /// What went wrong with the last attempt ([`EXPIRED`] or [`URL_CHANGED`] for one that
    /// ended without an attempt).
    pub last_error: Option<String>,
    /// When the event was queued for this endpoint.
    pub created_at: DateTime<Utc>,
    /// Queued on request (a ping or a redelivery), not by an order change: at most
    /// [`MAX_PENDING_MANUAL`](crate::store::MAX_PENDING_MANUAL) of them wait per endpoint.
    pub manual: bool,
}

/// The `last_error` of a pending delivery whose endpoint stayed disabled for 30 days: it
/// ended, failed, at the history purge
/// ([`WebhookStore::purge_deliveries`](crate::store::WebhookStore::purge_deliveries)).
pub const EXPIRED: &str = "expired";

/// The `last_error` of a pending delivery whose endpoint moved to another URL
/// ([`WebhookPatch::changes_url`]): it ended, failed, without being sent to the new URL.
pub const URL_CHANGED: &str = "url_changed";

impl Delivery {
    /// A new pending delivery of `event` to `webhook`, due at the event's instant.
    pub fn queued(id: DeliveryId, webhook: WebhookId, event: &NewEvent) -> Self {
        Self {
            id,
            webhook_id: webhook,
            event_id: event.id.clone(),
            event_type: event.kind,
            order_id: event.order_id,
            snapshot: event.snapshot.clone(),
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(event.created_at),
            last_attempt_at: None,
            last_status_code: None,
            last_error: None,
            created_at: event.created_at,
            manual: false,
        }
    }

    /// The same, queued on request (a ping or a redelivery).
    pub fn manual(mut self) -> Self {
        self.manual = true;
        self
    }

    /// Ends a pending delivery without an attempt: failed, nothing due, `reason` as its last
    /// error ([`EXPIRED`], [`URL_CHANGED`]).
    pub fn end(&mut self, reason: &str) {
        self.status = DeliveryStatus::Failed;
        self.next_attempt_at = None;
        self.last_error = Some(reason.to_owned());
    }

    /// The same event queued again at `now` (a redelivery: same `event_id` and snapshot, so
    /// the same body).
    pub fn requeued(&self, now: DateTime<Utc>) -> NewEvent {
        NewEvent {
            id: self.event_id.clone(),
            kind: self.event_type,
            order_id: self.order_id,
            snapshot: self.snapshot.clone(),
            created_at: now,
        }
    }

    /// Whether it waits for an attempt due by `now` (leases and ordering aside).
    pub fn is_due(&self, now: DateTime<Utc>) -> bool {
        self.status == DeliveryStatus::Pending && self.next_attempt_at.is_some_and(|at| at <= now)
    }

    /// Records an attempt's outcome (a backend that stores whole records; SQL backends write
    /// the same columns).
    pub fn record(&mut self, outcome: &AttemptOutcome) {
        self.status = outcome.status;
        self.attempts += 1;
        self.next_attempt_at = outcome.next_attempt_at;
        self.last_attempt_at = Some(outcome.attempted_at);
        self.last_status_code = outcome.status_code;
        self.last_error = outcome.error.clone();
    }
}

impl Webhook {
    /// Records what an attempt to it says of the endpoint: its failing streak, its breaker
    /// ([`Breaker::after`]), and disabling it when the outcome says so.
    pub fn record(&mut self, outcome: &AttemptOutcome) {
        self.failing_since = outcome.failing_since;
        self.failed_attempts = if outcome.status == DeliveryStatus::Delivered {
            0
        } else {
            self.failed_attempts.saturating_add(1)
        };
        self.breaker = self.breaker.after(outcome);
        if let Some(reason) = outcome.disable {
            self.enabled = false;
            self.disabled_reason = Some(reason);
            self.disabled_at = Some(outcome.attempted_at);
            self.updated_at = outcome.attempted_at;
        }
    }

    /// A new endpoint as registered (enabled, no failures).
    pub fn registered(id: WebhookId, new: NewWebhook) -> Self {
        Self {
            id,
            account_id: new.account_id,
            url: new.url,
            events: new.events,
            description: new.description,
            enabled: true,
            disabled_reason: None,
            disabled_at: None,
            secret: new.secret,
            previous_secret: None,
            failing_since: None,
            failed_attempts: 0,
            breaker: Breaker::CLOSED,
            created_at: new.created_at,
            updated_at: new.created_at,
        }
    }

    /// Replaces the secret at `now`; the old one signs for `overlap` more.
    pub fn rotate(
        &mut self,
        secret: WebhookSecret,
        now: DateTime<Utc>,
        overlap: chrono::TimeDelta,
    ) {
        let old = std::mem::replace(&mut self.secret, secret);
        self.previous_secret = Some((old, now + overlap));
        self.updated_at = now;
    }
}

/// The default payout hold, in days ([`Config::hold_days`](crate::config::Config::hold_days)).
pub const DEFAULT_HOLD_DAYS: i64 = 14;

/// What rendering an order's webhook event needs besides the order: carried by
/// [`NewOrder`] and `StatusChange` so that the store keeps it in the event's
/// [`EventSnapshot`] (written inside the change's own atomic operation, rendered when sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct EventContext {
    /// The payout hold ([`Config::hold_days`](crate::config::Config::hold_days)): the order's
    /// `payout` is shown as it stood at the event.
    pub hold_days: i64,
}

impl EventContext {
    /// A `EventContext` of its fields, in their order.
    pub fn new(hold_days: i64) -> Self {
        Self { hold_days }
    }
}

impl Default for EventContext {
    fn default() -> Self {
        Self {
            hold_days: DEFAULT_HOLD_DAYS,
        }
    }
}

/// An event to queue for an account's endpoints: [`NewEvent::order`] and [`NewEvent::ping`]
/// build them.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewEvent {
    /// Its id (`evt_` and 24 characters from `[a-z0-9]`).
    pub id: String,
    /// Its type.
    pub kind: EventType,
    /// The order it is about (`None` for `ping`).
    pub order_id: Option<OrderId>,
    /// What it says, kept as data (rendered when sent).
    pub snapshot: EventSnapshot,
    /// When it was queued (its deliveries are due then).
    pub created_at: DateTime<Utc>,
}

impl NewEvent {
    /// The event of an order change, at the order's `updated_at`, with a new id:
    /// `order.created` (no `previous`) or `order.status_changed` (from `previous`). Its
    /// snapshot keeps `order` as it is now; the body shows it as `GET /api/v1/orders/{id}`
    /// rendered it at that instant.
    pub fn order(
        kind: EventType,
        order: &Order,
        previous: Option<OrderStatus>,
        context: EventContext,
    ) -> Self {
        Self {
            id: new_event_id(),
            kind,
            order_id: Some(order.id),
            snapshot: EventSnapshot::Order {
                order: Arc::new(order.clone()),
                previous,
                context,
            },
            created_at: order.updated_at,
        }
    }

    /// The `quote.updated` event of a quote's move out of `previous`, at the quote's
    /// `updated_at`, with a new id. Its snapshot keeps `quote` as it stands after the move;
    /// the body shows it as `GET /api/v1/quotes/{id}` rendered it then.
    pub fn quote(quote: &Quote, previous: QuoteStatus) -> Self {
        Self {
            id: new_event_id(),
            kind: EventType::QuoteUpdated,
            order_id: None,
            snapshot: EventSnapshot::Quote {
                quote: Arc::new(quote.clone()),
                previous,
            },
            created_at: quote.updated_at,
        }
    }

    /// The `withdrawal.updated` event of a withdrawal's decision (out of `previous`), at its
    /// `decided_at`, with a new id. Its snapshot keeps `withdrawal` as it stands after the
    /// decision.
    pub fn withdrawal(withdrawal: &Withdrawal, previous: WithdrawalStatus) -> Self {
        Self {
            id: new_event_id(),
            kind: EventType::WithdrawalUpdated,
            order_id: None,
            snapshot: EventSnapshot::Withdrawal {
                withdrawal: Arc::new(withdrawal.clone()),
                previous,
            },
            created_at: withdrawal.decided_at.unwrap_or(withdrawal.created_at),
        }
    }

    /// A `catalog.changed` event at `at`, with a new id, naming `cursor`: the feed's cursor
    /// of its newest change as the sender read it (`GET /catalog/changes?after=`).
    pub fn catalog_changed(cursor: impl Into<String>, at: DateTime<Utc>) -> Self {
        Self {
            id: new_event_id(),
            kind: EventType::CatalogChanged,
            order_id: None,
            snapshot: EventSnapshot::CatalogChanged {
                cursor: cursor.into(),
                at,
            },
            created_at: at,
        }
    }

    /// A `ping` of the endpoint `webhook` at `at`, with a new id.
    pub fn ping(webhook: WebhookId, at: DateTime<Utc>) -> Self {
        Self {
            id: new_event_id(),
            kind: EventType::Ping,
            order_id: None,
            snapshot: EventSnapshot::Ping {
                webhook_id: webhook,
                at,
            },
            created_at: at,
        }
    }
}

/// What an event says, as data: the outbox keeps it and the dispatcher renders the JSON body
/// from it when it sends (`webhooks::render_event`, with the event's id and type), so a store
/// never renders. Rendering is a pure function of the snapshot, the id and the type: every
/// attempt (and a redelivery) sends the same bytes, and the signature of each stays stable.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EventSnapshot {
    /// An order event: the order as it stood right after the change (its `updated_at` is the
    /// event's instant), the status it left (`None` for `order.created`) and what rendering
    /// needs besides.
    Order {
        /// The order record as it was (shared by the event's deliveries).
        order: Arc<Order>,
        /// The status before the change.
        previous: Option<OrderStatus>,
        /// The payout hold the order's `payout` is shown with.
        context: EventContext,
    },
    /// A `quote.updated` event: the quote as it stood right after its move (its
    /// `updated_at` is the event's instant) and the status it left.
    Quote {
        /// The quote record as it was (shared by the event's deliveries).
        quote: Arc<Quote>,
        /// The status before the move.
        previous: QuoteStatus,
    },
    /// A `withdrawal.updated` event: the withdrawal as it stood right after its decision and
    /// the status it left.
    Withdrawal {
        /// The withdrawal record as it was.
        withdrawal: Arc<Withdrawal>,
        /// The status before the decision.
        previous: WithdrawalStatus,
    },
    /// A `catalog.changed` event: the cursor of the feed's newest change when it was sent.
    CatalogChanged {
        /// The cursor (`GET /catalog/changes?after=`).
        cursor: String,
        /// When.
        at: DateTime<Utc>,
    },
    /// A `ping` of one endpoint.
    Ping {
        /// The endpoint pinged.
        webhook_id: WebhookId,
        /// When.
        at: DateTime<Utc>,
    },
    /// A body rendered when the event was queued, sent as it is: the deliveries an earlier
    /// version wrote (it stored bodies, not snapshots), and bodies a caller made itself.
    Rendered(String),
}

/// A new event id: `evt_` and 24 characters from `[a-z0-9]`.
pub fn new_event_id() -> String {
    random_id("evt_")
}

/// `prefix` and 24 random characters from `[a-z0-9]` (event ids, request ids).
pub(crate) fn random_id(prefix: &str) -> String {
    let mut id = Vec::with_capacity(prefix.len() + RANDOM_ID_LEN);
    id.extend_from_slice(prefix.as_bytes());
    push_random_id(&mut id);
    String::from_utf8(id).expect("ASCII letters and digits")
}

/// How many random characters an id has after its prefix.
pub(crate) const RANDOM_ID_LEN: usize = 24;

/// Appends [`RANDOM_ID_LEN`] characters drawn uniformly from `[a-z0-9]` to `out`. Each comes
/// from one random byte under 252 (7 × 36, so that `% 36` is uniform); 32 bytes are drawn at
/// a time, which is almost always enough (one byte in 64 is rejected).
pub(crate) fn push_random_id(out: &mut Vec<u8>) {
    use rand::RngCore;
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let mut left = RANDOM_ID_LEN;
    while left > 0 {
        let mut bytes = [0u8; 32];
        rng.fill_bytes(&mut bytes);
        for byte in bytes.into_iter().filter(|&b| b < 252).take(left) {
            out.push(ALPHABET[usize::from(byte % 36)]);
            left -= 1;
        }
    }
}

/// The dispatcher's work as the store stands at an instant
/// ([`WebhookStore::webhook_backlog`](crate::store::WebhookStore::webhook_backlog)): what the
/// dispatcher exports as gauges with the feature `metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookBacklog {
    /// Pending deliveries of enabled endpoints that are due and not under a live lease: what
    /// waits for a dispatcher (those of an endpoint whose breaker is open included).
    pub due: u64,
    /// Pending deliveries under a live lease: attempts in flight, in every dispatcher.
    pub leased: u64,
    /// Enabled endpoints whose [`Breaker`] is open.
    pub open_breakers: u64,
}

impl WebhookBacklog {
    /// `due` deliveries waiting, `leased` in flight, `open_breakers` endpoints paused.
    pub fn new(due: u64, leased: u64, open_breakers: u64) -> Self {
        Self {
            due,
            leased,
            open_breakers,
        }
    }
}

/// A due delivery handed to one dispatcher until `lease_until`, with what is needed to send it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ClaimedDelivery {
    /// The delivery as claimed.
    pub delivery: Delivery,
    /// Its endpoint.
    pub webhook: Webhook,
    /// Proof of the claim: finishing the attempt needs it, so an attempt whose lease ran out
    /// (and was claimed again) cannot be recorded twice.
    pub lease: LeaseToken,
}

impl ClaimedDelivery {
    /// `delivery` to `webhook`, held under `lease`.
    pub fn new(delivery: Delivery, webhook: Webhook, lease: &LeaseToken) -> Self {
        Self {
            delivery,
            webhook,
            lease: lease.clone(),
        }
    }
}

/// The mark of one claim of deliveries
/// ([`WebhookStore::claim_deliveries`](crate::store::WebhookStore::claim_deliveries)): opaque;
/// a store keeps it with each delivery it hands out, and records an attempt only under the
/// token that still holds the delivery. The dispatcher makes one per claim (its random
/// instance id and a counter), so no two claims share one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LeaseToken(String);

impl LeaseToken {
    /// A token spelled `text` (unique per claim: the caller's to ensure).
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The token as stored (the SQL stores' `lease_owner`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What became of one attempt, decided by [`AttemptResult::decide`].
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct AttemptOutcome {
    /// The delivery's new status.
    pub status: DeliveryStatus,
    /// The next attempt (when still pending).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The attempt's instant.
    pub attempted_at: DateTime<Utc>,
    /// The HTTP status it got.
    pub status_code: Option<u16>,
    /// What went wrong.
    pub error: Option<String>,
    /// The endpoint's failing streak after this attempt.
    pub failing_since: Option<DateTime<Utc>>,
    /// Disable the endpoint for this reason.
    pub disable: Option<DisabledReason>,
    /// Whether the endpoint could not be reached ([`AttemptResult::Unreachable`]): counts
    /// toward its [`Breaker`].
    pub unreachable: bool,
}

/// The answer an attempt got.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptResult {
    /// An HTTP answer with this status.
    Answered(u16),
    /// No usable answer (TLS, a refused address, a broken request): the reason.
    NoAnswer(String),
    /// The endpoint could not be reached: the connection failed or the answer did not come
    /// within the timeout (the reason). Counts toward the endpoint's [`Breaker`].
    Unreachable(String),
}

/// An endpoint's circuit breaker: an endpoint that times out or refuses connections stops
/// taking the dispatcher's slots. After [`BREAKER_THRESHOLD`](crate::domain::delivery::BREAKER_THRESHOLD) unreachable attempts in a row it
/// opens: none of the endpoint's deliveries (pings and redeliveries too) is claimed until
/// `open_until`, the wait of [`RETRY_SCHEDULE`](crate::domain::delivery::RETRY_SCHEDULE) indexed by how many times it opened in a row
/// (5 s, then 5 min, 30 min, ... 10 h). Then its deliveries are tried again: another
/// unreachable attempt opens it for the next wait, a success closes it.
///
/// [`Breaker::after`] is the one rule; every store applies it when it records an attempt,
/// against the endpoint's state at that moment, so every dispatcher sharing the store sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Breaker {
    /// Unreachable attempts in a row (an answer ends the streak).
    pub failures: u32,
    /// Open until this instant (its deliveries are not claimed before); `None`: never opened
    /// since the last success.
    pub open_until: Option<DateTime<Utc>>,
}

impl Breaker {
    /// A `Breaker` of its fields, in their order.
    pub fn new(failures: u32, open_until: Option<DateTime<Utc>>) -> Self {
        Self {
            failures,
            open_until,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_use_every_character_of_the_alphabet_and_only_those() {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..500 {
            let id = random_id("evt_");
            let tail = id.strip_prefix("evt_").expect("the prefix");
            assert_eq!(tail.len(), RANDOM_ID_LEN, "{id}");
            assert!(
                tail.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{id}"
            );
            seen.extend(tail.bytes());
        }
        // 12,000 draws: each of the 36 characters is missed with probability about e^-333.
        assert_eq!(seen.len(), 36);
    }
}
