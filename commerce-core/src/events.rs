//! The webhook events' JSON bodies, rendered once when the event happens (below `store`,
//! which renders an order's events inside the change's own atomic operation; re-exported by
//! [`webhooks`](crate::webhooks)).

use chrono::{DateTime, Utc};
use rand::Rng;
use serde::Serialize;

use crate::domain::earnings::PayoutRules;
use crate::model::{EventContext, EventType, NewEvent, Order, OrderStatus, WebhookId};
use crate::web::wire::{OrderView, Stamp, StatusView};

/// A new event id: `evt_` and 24 characters from `[a-z0-9]`.
pub fn new_event_id() -> String {
    random_id("evt_")
}

/// `prefix` and 24 random characters from `[a-z0-9]` (event ids, request ids).
pub(crate) fn random_id(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let mut id = String::with_capacity(prefix.len() + 24);
    id.push_str(prefix);
    for _ in 0..24 {
        id.push(char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]));
    }
    id
}

#[derive(Serialize)]
struct Envelope<'a, D> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    created_at: Stamp,
    data: D,
}

#[derive(Serialize)]
struct OrderData<'a> {
    order: OrderView<'a>,
    previous_status: Option<StatusView>,
}

#[derive(Serialize)]
struct PingData {
    webhook_id: WebhookId,
}

fn render<D: Serialize>(id: &str, kind: EventType, at: DateTime<Utc>, data: D) -> String {
    serde_json::to_string(&Envelope {
        id,
        kind: kind.as_str(),
        created_at: Stamp(at),
        data,
    })
    .expect("events always serialise")
}

/// The event of an order change, at the order's `updated_at`: `order.created` (no
/// `previous`) or `order.status_changed` (from `previous`). `data.order` is the order exactly
/// as `GET /api/v1/orders/{id}` renders it at that instant.
pub fn order_event(
    kind: EventType,
    order: &Order,
    previous: Option<OrderStatus>,
    context: EventContext,
) -> NewEvent {
    let id = new_event_id();
    let at = order.updated_at;
    let rules = PayoutRules::clamped(at, context.hold_days);
    let data = OrderData {
        order: OrderView::new(order, rules),
        previous_status: previous.map(StatusView::of),
    };
    NewEvent {
        payload: render(&id, kind, at, data),
        id,
        kind,
        order_id: Some(order.id),
        created_at: at,
    }
}

/// A `ping` event for one endpoint.
pub fn ping_event(webhook: WebhookId, at: DateTime<Utc>) -> NewEvent {
    let id = new_event_id();
    NewEvent {
        payload: render(
            &id,
            EventType::Ping,
            at,
            PingData {
                webhook_id: webhook,
            },
        ),
        id,
        kind: EventType::Ping,
        order_id: None,
        created_at: at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_have_the_documented_shape() {
        let id = new_event_id();
        assert_eq!(id.len(), 28);
        assert!(id.starts_with("evt_"));
        assert!(
            id[4..]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        );
        assert_ne!(id, new_event_id());
    }

    #[test]
    fn a_ping_names_its_endpoint() {
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let event = ping_event(WebhookId::new(7), at);
        let body: serde_json::Value = serde_json::from_str(&event.payload).unwrap();
        assert_eq!(body["type"], "ping");
        assert_eq!(body["id"], event.id.as_str());
        assert_eq!(body["data"], serde_json::json!({"webhook_id": 7}));
        assert!(body["created_at"].as_str().unwrap().ends_with("+02:00"));
    }
}
