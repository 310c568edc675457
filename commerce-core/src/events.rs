//! The webhook events' JSON bodies, rendered once when the event happens (below `store`,
//! which renders an order's events inside the change's own atomic operation; re-exported by
//! [`webhooks`](crate::webhooks)).

use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::Serialize;

use crate::earnings::PayoutRules;
use crate::model::{EventContext, EventType, NewEvent, Order, OrderStatus, WebhookId};
use crate::wire::{OrderView, Stamp, StatusView};

/// A new event id: `evt_` and 24 characters from `[a-z0-9]`.
pub fn new_event_id() -> String {
    random_id("evt_")
}

/// `prefix` and 24 random characters from `[a-z0-9]` (event ids, request ids), each equally
/// likely: the thread's random generator fills a block of bytes at a time, a byte below 252
/// (7 × 36) gives a character by its remainder modulo 36, and one at or above it is drawn again.
pub(crate) fn random_id(prefix: &str) -> String {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    /// The largest multiple of 36 a byte holds: bytes below it are uniform modulo 36.
    const UNIFORM_BELOW: u8 = 252;
    let mut rng = rand::rng();
    let mut id = String::with_capacity(prefix.len() + 24);
    id.push_str(prefix);
    let mut bytes = [0_u8; 32];
    let mut unused = 0;
    let mut wanted = 24;
    while wanted > 0 {
        if unused == 0 {
            rng.fill_bytes(&mut bytes);
            unused = bytes.len();
        }
        unused -= 1;
        let byte = bytes[unused];
        if byte < UNIFORM_BELOW {
            id.push(char::from(ALPHABET[usize::from(byte % 36)]));
            wanted -= 1;
        }
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
    let rules = PayoutRules {
        now: at,
        hold_days: context.hold_days,
    };
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
    fn random_ids_use_every_character_about_equally() {
        let mut counts = std::collections::HashMap::new();
        for _ in 0..10_000 {
            let id = random_id("x_");
            assert_eq!(id.len(), 26);
            for b in id[2..].bytes() {
                *counts.entry(b).or_insert(0_u32) += 1;
            }
        }
        // 240,000 characters: 6,667 expected of each (standard deviation 81), so every count
        // falls within 6,267..7,067 but once in tens of thousands of runs; a byte taken modulo
        // 36 without drawing again would give four characters 7,500 each.
        assert_eq!(counts.len(), 36, "{counts:?}");
        assert!(
            counts.values().all(|&n| (6_267..7_067).contains(&n)),
            "{counts:?}"
        );
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
