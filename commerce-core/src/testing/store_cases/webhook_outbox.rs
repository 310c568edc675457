//! The outbox: an order change queues one delivery of its event per subscribed endpoint, in
//! the change's own operation, and a refused change queues nothing.

use serde_json::Value;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

use super::webhooks::{deliveries_of, register};

/// The body the dispatcher sends for `delivery`, rendered from its snapshot.
pub(super) fn body_of(delivery: &Delivery) -> String {
    crate::webhooks::render_event(&delivery.event_id, delivery.event_type, &delivery.snapshot)
}

pub(super) fn payload(delivery: &Delivery) -> Value {
    serde_json::from_str(&body_of(delivery)).expect("payload is JSON")
}

/// A placed order and each status move queue one delivery of their event per enabled
/// endpoint of the order's account that receives its type: none for a disabled endpoint, one
/// subscribed to the other type, or another account's.
pub async fn order_changes_queue_one_delivery_per_subscribed_endpoint(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    // Registered without events: every type ([`EventSelection::All`]).
    let all = store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(f.account.id)
                .url("https://a.example/all".to_owned())
                .secret(WebhookSecret::new("whsec_all"))
                .created_at(at(0))
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await
        .expect("insert webhook");
    let created = register(
        store,
        f.account.id,
        "https://a.example/created",
        &[EventType::OrderCreated],
        0,
    )
    .await;
    let moves = register(
        store,
        f.account.id,
        "https://a.example/moves",
        &[EventType::OrderStatusChanged],
        0,
    )
    .await;
    let off = register(
        store,
        f.account.id,
        "https://a.example/off",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let patch = WebhookPatch {
        enabled: Some(false),
        ..Default::default()
    };
    store
        .update_webhook(None, off.id, patch, at(0))
        .await
        .unwrap();
    let theirs = register(
        store,
        f.other.id,
        "https://b.example",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;

    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![line(&f, &f.variant, 2, false)],
            10,
        ),
    )
    .await;
    let queued = deliveries_of(store, all.id).await;
    assert_eq!(queued.len(), 1);
    let d = &queued[0];
    assert_eq!(
        (d.event_type, d.order_id),
        (EventType::OrderCreated, Some(order.id))
    );
    assert_eq!((d.status, d.attempts), (DeliveryStatus::Pending, 0));
    assert_eq!((d.next_attempt_at, d.created_at), (Some(at(10)), at(10)));
    assert_eq!(
        (
            d.last_attempt_at,
            d.last_status_code,
            d.last_error.as_deref()
        ),
        (None, None, None)
    );
    assert!(d.event_id.starts_with("evt_"), "{}", d.event_id);
    let body = payload(d);
    assert_eq!(body["type"], "order.created");
    assert_eq!(body["id"], d.event_id.as_str());
    assert_eq!(body["data"]["order"]["id"], order.id.get());
    assert_eq!(
        body["data"]["order"]["status"]["key"],
        OrderStatus::Pending.as_str()
    );
    assert_eq!(body["data"]["previous_status"], Value::Null);
    let to_created = deliveries_of(store, created.id).await;
    assert_eq!(to_created.len(), 1);
    assert_eq!(
        to_created[0].event_id, d.event_id,
        "one event, one id, every endpoint"
    );
    assert_eq!(body_of(&to_created[0]), body_of(d));
    assert!(deliveries_of(store, moves.id).await.is_empty());
    assert!(deliveries_of(store, off.id).await.is_empty());
    assert!(deliveries_of(store, theirs.id).await.is_empty());

    let mut confirm = change(order.id, OrderStatus::Confirmed, 20);
    confirm.account_id = Some(f.account.id);
    store.change_order_status(confirm).await.expect("confirm");
    let queued = deliveries_of(store, all.id).await;
    assert_eq!(queued.len(), 2);
    let moved = &queued[0];
    assert_eq!(
        (moved.event_type, moved.order_id),
        (EventType::OrderStatusChanged, Some(order.id))
    );
    assert_eq!(moved.created_at, at(20));
    assert_ne!(moved.event_id, d.event_id);
    let body = payload(moved);
    assert_eq!(body["type"], "order.status_changed");
    assert_eq!(
        body["data"]["order"]["status"]["key"],
        OrderStatus::Confirmed.as_str()
    );
    assert_eq!(
        body["data"]["previous_status"]["key"],
        OrderStatus::Pending.as_str()
    );
    let to_moves = deliveries_of(store, moves.id).await;
    assert_eq!(to_moves.len(), 1);
    assert_eq!(to_moves[0].event_id, moved.event_id);
    assert_eq!(deliveries_of(store, created.id).await.len(), 1);
    assert!(deliveries_of(store, off.id).await.is_empty());
    assert!(deliveries_of(store, theirs.id).await.is_empty());

    // The other account's own order reaches its own endpoint only.
    place(
        store,
        new_order(
            &f,
            f.other.id,
            &number(2),
            vec![line(&f, &f.variant, 1, false)],
            30,
        ),
    )
    .await;
    assert_eq!(deliveries_of(store, theirs.id).await.len(), 1);
    assert_eq!(deliveries_of(store, all.id).await.len(), 2);
}

/// A placement or a move that is refused queues nothing.
pub async fn refused_order_changes_queue_nothing(store: &dyn Store) {
    let f = fixture(store, 1, 0).await;
    let w = register(
        store,
        f.account.id,
        "https://a.example",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let short = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 2, false)],
        10,
    );
    assert!(matches!(
        store.place_order(short).await,
        Err(PlaceOrderError::InsufficientStock { .. })
    ));
    assert!(deliveries_of(store, w.id).await.is_empty());
    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(2),
            vec![line(&f, &f.variant, 1, false)],
            10,
        ),
    )
    .await;
    assert!(matches!(
        store
            .change_order_status(change(order.id, OrderStatus::Shipped, 20))
            .await,
        Err(StatusChangeError::NotAllowed { .. })
    ));
    let mut foreign = change(order.id, OrderStatus::Cancelled, 20);
    foreign.account_id = Some(f.other.id);
    assert!(matches!(
        store.change_order_status(foreign).await,
        Err(StatusChangeError::NotFound)
    ));
    let taken = new_order(
        &f,
        f.account.id,
        &number(2),
        vec![line(&f, &f.variant, 1, false)],
        30,
    );
    assert!(matches!(
        store.place_order(taken).await,
        Err(PlaceOrderError::NumberTaken)
    ));
    let queued = deliveries_of(store, w.id).await;
    assert_eq!(
        ids(&queued, |d| d.event_type),
        vec![EventType::OrderCreated]
    );
}

/// A delivery keeps its event as data, as it was: its snapshot is the order as the change
/// left it (read back equal, every field), the status it left and the change's payout hold;
/// what the order became since changes neither the snapshot nor the body rendered from it,
/// which is the same bytes on every read.
pub async fn a_delivery_keeps_its_order_as_the_change_left_it(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let w = register(
        store,
        f.account.id,
        "https://a.example",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let held = EventContext { hold_days: 3 };
    let mut new = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 2, true)],
        10,
    );
    new.events = held;
    let placed = place(store, new).await;
    let created = deliveries_of(store, w.id).await;
    assert_eq!(created.len(), 1);
    let first = &created[0];
    assert_eq!(
        first.snapshot,
        EventSnapshot::Order {
            order: std::sync::Arc::new(placed.clone()),
            previous: None,
            context: held,
        }
    );
    let first_body = body_of(first);
    assert_eq!(payload(first)["data"]["order"]["id"], placed.id.get());

    let mut confirm = change(placed.id, OrderStatus::Confirmed, 20);
    confirm.events = held;
    let confirmed = store.change_order_status(confirm).await.expect("confirm");
    store
        .change_order_status(change(placed.id, OrderStatus::Cancelled, 30))
        .await
        .expect("cancel");
    let queued = deliveries_of(store, w.id).await;
    assert_eq!(queued.len(), 3, "created, confirmed, cancelled");
    let (moved, again) = (&queued[1], &queued[2]);
    assert_eq!(again.id, first.id);
    assert_eq!(again.snapshot, first.snapshot, "the order as it was placed");
    assert_eq!(body_of(again), first_body, "the same bytes on every read");
    assert_eq!(
        payload(again)["data"]["order"]["status"]["key"],
        "order_pending"
    );
    assert_eq!(
        moved.snapshot,
        EventSnapshot::Order {
            order: std::sync::Arc::new(confirmed),
            previous: Some(OrderStatus::Pending),
            context: held,
        }
    );
    assert_eq!(
        payload(moved)["data"]["order"]["status"]["key"],
        "order_confirmed"
    );
}
