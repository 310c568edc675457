//! Webhook endpoints and the types of the events they receive (their deliveries are in
//! `delivery.rs`).

use chrono::{DateTime, Utc};

use super::*;

string_enum! {
    /// What happened: the `type` of an event.
    EventType {
        /// An order was registered (through the API, by the platform or by an import).
        OrderCreated => "order.created",
        /// An order entered another status (every timeline entry after the first).
        OrderStatusChanged => "order.status_changed",
        /// A test event, sent on request (`POST /webhooks/{id}/ping`).
        Ping => "ping",
        /// A supplier's quote entered another status: accepted, rejected, withdrawn (by the
        /// supplier, or by the platform when its product moved to another supplier) or
        /// expired. To the supplier.
        QuoteUpdated => "quote.updated",
        /// A withdrawal was decided: paid (`completed`) or rejected. To its account, a
        /// marketer or a supplier.
        WithdrawalUpdated => "withdrawal.updated",
        /// The catalogue changed: its change feed (`GET /catalog/changes`) has entries past
        /// the cursor the endpoint was last sent. Derived from the feed, at most one every 10
        /// seconds per endpoint. To marketers.
        CatalogChanged => "catalog.changed",
    }
}

impl EventType {
    /// The types an endpoint can subscribe to (`ping` is sent on request, to whoever asks).
    pub const SUBSCRIBABLE: &'static [EventType] = &[
        EventType::OrderCreated,
        EventType::OrderStatusChanged,
        EventType::CatalogChanged,
        EventType::QuoteUpdated,
        EventType::WithdrawalUpdated,
    ];

    /// The types an endpoint of an account of `side` can subscribe to: a marketer's orders,
    /// catalogue and withdrawals; a supplier's quotes and withdrawals; none for a shipping
    /// company. A marketer never receives supply data, a supplier never a customer.
    pub fn for_side(side: Side) -> &'static [EventType] {
        match side {
            Side::Marketer => &[
                EventType::OrderCreated,
                EventType::OrderStatusChanged,
                EventType::CatalogChanged,
                EventType::WithdrawalUpdated,
            ],
            Side::Supplier => &[EventType::QuoteUpdated, EventType::WithdrawalUpdated],
            Side::Shipping => &[],
        }
    }

    /// Whether its events carry an order (whoever directs them needs `orders:read`).
    pub fn is_order_event(self) -> bool {
        matches!(
            self,
            EventType::OrderCreated | EventType::OrderStatusChanged
        )
    }
}

/// The event types an endpoint receives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventSelection {
    /// Every type its account's side can receive, types added in later versions included:
    /// an endpoint registered without `events`.
    All,
    /// These types only (chosen at registration or by a change).
    Only(Vec<EventType>),
}

impl EventSelection {
    /// Whether it takes events of `kind` (a `ping`, sent on request, is not chosen).
    pub fn contains(&self, kind: EventType) -> bool {
        match self {
            EventSelection::All => EventType::SUBSCRIBABLE.contains(&kind),
            EventSelection::Only(kinds) => kinds.contains(&kind),
        }
    }

    /// The types it takes today, as the API lists them for an endpoint of an account of
    /// `side` (for [`All`](Self::All), every type of that side in this version:
    /// [`EventType::for_side`]).
    pub fn listed(&self, side: Side) -> Vec<EventType> {
        match self {
            EventSelection::All => EventType::for_side(side).to_vec(),
            EventSelection::Only(kinds) => kinds.clone(),
        }
    }
}

string_enum! {
    /// Why an endpoint receives nothing any more.
    DisabledReason {
        /// It answered `410 Gone`.
        Gone => "gone",
        /// Every delivery to it failed for 5 days.
        Failing => "failing",
        /// Its owner or the platform disabled it.
        Manual => "manual",
    }
}

string_enum! {
    /// Where a delivery stands.
    DeliveryStatus {
        /// Waiting for its next attempt (or being attempted now).
        Pending => "pending",
        /// The endpoint answered 2xx.
        Delivered => "delivered",
        /// Every attempt failed, or the endpoint was gone: no more attempts.
        Failed => "failed",
    }
}

/// An endpoint's signing secret (`whsec_` and the base64 of 32 random bytes). It prints as
/// `whsec_***` (`Debug` and `Display`), so that no log, panic message or `{:?}` of a
/// [`Webhook`] shows it; [`expose`](Self::expose) gives the value, for the few places that
/// need it: the answers that show it once (creation, rotation), signing, and the stores'
/// persistence. Compared in constant time.
#[derive(Clone)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    /// How it prints.
    pub const REDACTED: &'static str = "whsec_***";

    /// Wraps a secret (see `webhooks::new_secret`).
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself: to show it once, to sign with it, or to store it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for WebhookSecret {
    fn from(secret: String) -> Self {
        Self(secret)
    }
}

impl From<&str> for WebhookSecret {
    fn from(secret: &str) -> Self {
        Self(secret.to_owned())
    }
}

impl PartialEq for WebhookSecret {
    fn eq(&self, other: &Self) -> bool {
        use subtle::ConstantTimeEq;
        self.0.as_bytes().ct_eq(other.0.as_bytes()).into()
    }
}

impl Eq for WebhookSecret {}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Self::REDACTED)
    }
}

impl std::fmt::Display for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Self::REDACTED)
    }
}

/// A URL an account receives events at.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Webhook {
    /// Id.
    pub id: WebhookId,
    /// Owning account.
    pub account_id: AccountId,
    /// Where events are sent (`https`, unless the platform allows `http`).
    pub url: String,
    /// The event types it receives.
    pub events: EventSelection,
    /// The owner's description.
    pub description: Option<String>,
    /// Whether it receives events.
    pub enabled: bool,
    /// Why not, when disabled.
    pub disabled_reason: Option<DisabledReason>,
    /// Since when, when disabled: its pending deliveries expire 30 days after it
    /// ([`WebhookStore::purge_deliveries`](crate::store::WebhookStore::purge_deliveries)).
    pub disabled_at: Option<DateTime<Utc>>,
    /// The signing secret (`whsec_...`), shown to the owner on creation and rotation only.
    pub secret: WebhookSecret,
    /// The secret before the last rotation, still signing until the instant given.
    pub previous_secret: Option<(WebhookSecret, DateTime<Utc>)>,
    /// Since when every attempt to it has failed (`None`: the last attempt succeeded).
    pub failing_since: Option<DateTime<Utc>>,
    /// Attempts in a row that failed, the last one included (`0`: the last attempt was
    /// delivered, or none was made): what [`WebhookQuery::failing_at_least`] filters on.
    pub failed_attempts: u32,
    /// Its circuit breaker: while open, its deliveries are not claimed.
    pub breaker: Breaker,
    /// Registration instant.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

impl Webhook {
    /// Whether it receives events of `kind` (a `ping` goes to whoever asked for it).
    pub fn receives(&self, kind: EventType) -> bool {
        self.enabled && (kind == EventType::Ping || self.events.contains(kind))
    }

    /// The secrets that sign an attempt at `now`: the current one, then the previous one
    /// during the 24 hours after a rotation.
    pub fn signing_secrets(&self, now: DateTime<Utc>) -> Vec<&str> {
        let mut secrets = vec![self.secret.expose()];
        if let Some((previous, until)) = &self.previous_secret
            && now < *until
        {
            secrets.push(previous.expose());
        }
        secrets
    }
}

/// A new endpoint: `NewWebhook::builder()`, with the account, the URL, the signing secret
/// and the registration instant; it receives every event type of its side, those of later
/// versions included ([`EventSelection::All`]), unless given `events`.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewWebhook {
    /// Owning account.
    pub account_id: AccountId,
    /// URL.
    pub url: String,
    /// Event types ([`EventSelection::All`] when the builder is not given them).
    #[builder(default = EventSelection::All)]
    pub events: EventSelection,
    /// Description.
    pub description: Option<String>,
    /// Signing secret (see `webhooks::new_secret`).
    pub secret: WebhookSecret,
    /// Registration instant.
    pub created_at: DateTime<Utc>,
}

/// A change to an endpoint: the fields set are changed, the others kept.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct WebhookPatch {
    /// New URL.
    pub url: Option<String>,
    /// New event types (from then on, only these).
    pub events: Option<Vec<EventType>>,
    /// New description (`Some(None)` clears it).
    pub description: Option<Option<String>>,
    /// Enable (clears the reason and the failing streak) or disable (reason `manual`).
    pub enabled: Option<bool>,
}

impl WebhookPatch {
    /// Whether it moves `webhook` to another URL: then the endpoint's pending deliveries end,
    /// failed with [`URL_CHANGED`], in the same atomic operation as the change (nothing
    /// queued for the old URL goes to the new one, except by an explicit redelivery).
    pub fn changes_url(&self, webhook: &Webhook) -> bool {
        self.url.as_ref().is_some_and(|url| *url != webhook.url)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 1, 10, 0, 0).unwrap()
    }

    /// An endpoint registered without `events` takes every subscribable type (so a type
    /// added to [`EventType::SUBSCRIBABLE`] reaches it), a chosen list only its types, and
    /// neither chooses `ping`; the API lists `All` as today's types.
    #[test]
    fn an_endpoint_without_events_takes_every_type() {
        let all = NewWebhook::builder()
            .account_id(AccountId::new(1))
            .url("https://a.example/h".to_owned())
            .secret(WebhookSecret::new("whsec_a"))
            .created_at(at())
            .build();
        assert_eq!(all.events, EventSelection::All);
        for kind in EventType::SUBSCRIBABLE {
            assert!(all.events.contains(*kind), "{kind:?}");
        }
        assert!(!all.events.contains(EventType::Ping));
        assert_eq!(
            all.events.listed(Side::Marketer),
            [
                EventType::OrderCreated,
                EventType::OrderStatusChanged,
                EventType::CatalogChanged,
                EventType::WithdrawalUpdated
            ]
        );
        assert_eq!(
            all.events.listed(Side::Supplier),
            [EventType::QuoteUpdated, EventType::WithdrawalUpdated]
        );
        // Every side's types are subscribable, and `All` takes each.
        for side in [Side::Marketer, Side::Supplier] {
            for kind in EventType::for_side(side) {
                assert!(EventType::SUBSCRIBABLE.contains(kind), "{kind:?}");
            }
        }
        let chosen = NewWebhook {
            events: EventSelection::Only(vec![EventType::OrderCreated]),
            ..all
        };
        assert!(chosen.events.contains(EventType::OrderCreated));
        assert!(!chosen.events.contains(EventType::OrderStatusChanged));
        let mut webhook = Webhook::registered(WebhookId::new(1), chosen);
        let patch = WebhookPatch {
            events: Some(vec![EventType::OrderStatusChanged]),
            ..WebhookPatch::default()
        };
        patch.apply(&mut webhook, at());
        assert_eq!(
            webhook.events,
            EventSelection::Only(vec![EventType::OrderStatusChanged])
        );
    }

    /// No `{:?}` of an endpoint, a new one or a claimed delivery shows a secret (current or
    /// previous); `expose` gives it.
    #[test]
    fn secrets_print_redacted() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let previous = "whsec_cHJldmlvdXMgc2VjcmV0IG9mIHRoaXM=";
        let new = NewWebhook::builder()
            .account_id(AccountId::new(1))
            .url("https://a.example/h".to_owned())
            .secret(WebhookSecret::new(secret))
            .created_at(at())
            .build();
        let mut webhook = Webhook::registered(WebhookId::new(7), new.clone());
        webhook.rotate(
            WebhookSecret::new(previous),
            at(),
            chrono::TimeDelta::hours(24),
        );
        webhook.rotate(
            WebhookSecret::new(secret),
            at(),
            chrono::TimeDelta::hours(24),
        );
        let event = NewEvent {
            id: "evt_1".into(),
            kind: EventType::Ping,
            order_id: None,
            snapshot: EventSnapshot::Rendered("{}".into()),
            created_at: at(),
        };
        let claimed = ClaimedDelivery::new(
            Delivery::queued(DeliveryId::new(1), webhook.id, &event),
            webhook.clone(),
            &LeaseToken::new("lease"),
        );
        for shown in [
            format!("{new:?}"),
            format!("{webhook:?}"),
            format!("{webhook:#?}"),
            format!("{claimed:?}"),
            format!("{}", webhook.secret),
        ] {
            assert!(
                !shown.contains(secret) && !shown.contains(previous),
                "a secret printed: {shown}"
            );
        }
        assert!(format!("{webhook:?}").contains("whsec_***"));
        assert_eq!(webhook.secret.expose(), secret);
        assert_eq!(webhook.signing_secrets(at()), [secret, previous]);
    }
}
