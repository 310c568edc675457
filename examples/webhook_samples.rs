//! Prints signed webhook requests, one JSON object per line, for the interoperability check
//! (`.ci/webhooks_interop.sh` verifies them with the Standard Webhooks reference library):
//! real event bodies (an order placed and cancelled on the sandbox, a ping), signed by
//! `commerce::webhooks::sign` as the dispatcher signs them, with one secret and with two (the
//! day after a rotation).

#[path = "support/args.rs"]
mod args;

use std::sync::Arc;

use commerce::domain::fields::{DraftLine, OrderDraft};
use commerce::model::{EventType, NewEvent, OrderStatus, WebhookId};
use commerce::store::MemoryStore;
use commerce::webhooks::{new_secret, render_event, sign};
use commerce::{Engine, sandbox};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    args::arguments(&[], 0)?;
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let fixture = sandbox::seed(&engine).await?;
    let operator = engine.operator();
    let draft = OrderDraft::builder()
        .full_name("سارة حسن".to_owned())
        .phone("01112223334".to_owned())
        .address("12 شارع النصر، مدينة نصر".to_owned())
        .shipping_option_id(fixture.standard_shipping)
        .governorate_id(fixture.cairo)
        .lines(vec![DraftLine::new(
            fixture.plain_variant,
            1,
            "10.00".parse()?,
            Vec::new(),
        )])
        .build();
    let placed = operator.place_order(fixture.marketer_a, draft).await?;
    let cancelled = operator
        .move_order(placed.id, OrderStatus::Cancelled, Some("اختبار".into()))
        .await?;
    let context = engine.config().event_context();
    let events = [
        NewEvent::order(EventType::OrderCreated, &placed, None, context),
        NewEvent::order(
            EventType::OrderStatusChanged,
            &cancelled,
            Some(OrderStatus::Pending),
            context,
        ),
        NewEvent::ping(WebhookId::new(1), engine.now()),
    ];
    let (current, previous) = (new_secret(), new_secret());
    let timestamp = engine.now().timestamp();
    for event in &events {
        // What the dispatcher sends: the body rendered from the event's snapshot.
        let body = render_event(&event.id, event.kind, &event.snapshot);
        for secrets in [
            vec![current.as_str()],
            vec![current.as_str(), previous.as_str()],
        ] {
            let signature = sign(&secrets, &event.id, timestamp, body.as_bytes());
            let sample = json!({
                "secrets": secrets,
                "headers": {
                    "webhook-id": event.id,
                    "webhook-timestamp": timestamp.to_string(),
                    "webhook-signature": signature,
                },
                "body": body,
            });
            println!("{sample}");
        }
    }
    Ok(())
}
