//! Webhooks at their edges: the manual deliveries an endpoint may have pending, the expiry of
//! a disabled endpoint's deliveries, and what a URL change does to those queued before it.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::webhooks::{attempt, claim, deliveries_of, ping, register, webhook_of};

/// A day, in the seconds of [`at`].
const DAY: i64 = 86_400;

async fn queue_ping(
    store: &dyn Store,
    webhook: WebhookId,
    now: i64,
    limit: usize,
) -> Result<Delivery, QueueDeliveryError> {
    store
        .queue_event(None, webhook, NewEvent::ping(webhook, at(now)), limit)
        .await
}

async fn set_enabled(store: &dyn Store, webhook: WebhookId, enabled: bool, now: i64) -> Webhook {
    let patch = WebhookPatch {
        enabled: Some(enabled),
        ..Default::default()
    };
    store
        .update_webhook(None, webhook, patch, at(now))
        .await
        .expect("update webhook")
        .expect("webhook exists")
}

fn pending(deliveries: &[Delivery]) -> Vec<DeliveryId> {
    deliveries
        .iter()
        .filter(|d| d.status == DeliveryStatus::Pending)
        .map(|d| d.id)
        .collect()
}

/// Pings and redeliveries are manual deliveries: at most `limit` pending per endpoint (one
/// sent, or failed for good, makes room; another endpoint has its own count); none for a
/// disabled endpoint; an unknown endpoint or delivery is `NotFound` first.
pub async fn manual_deliveries_are_bounded_per_endpoint(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(
        store,
        a.id,
        "https://a.example/1",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let other = register(
        store,
        a.id,
        "https://a.example/2",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let first = queue_ping(store, w.id, 1, 3).await.expect("first");
    assert!(first.manual);
    let again = store
        .redeliver(None, w.id, first.id, at(2), 3)
        .await
        .expect("a redelivery");
    assert!(again.manual);
    assert_eq!(again.event_id, first.event_id);
    queue_ping(store, w.id, 3, 3).await.expect("third");
    assert!(matches!(
        queue_ping(store, w.id, 4, 3).await,
        Err(QueueDeliveryError::Busy { limit: 3 })
    ));
    assert!(matches!(
        store.redeliver(None, w.id, first.id, at(4), 3).await,
        Err(QueueDeliveryError::Busy { limit: 3 })
    ));
    assert!(matches!(
        store
            .redeliver(None, w.id, DeliveryId::new(999_999), at(4), 3)
            .await,
        Err(QueueDeliveryError::NotFound)
    ));
    queue_ping(store, other.id, 4, 3)
        .await
        .expect("another endpoint's own count");
    assert_eq!(pending(&deliveries_of(store, w.id).await).len(), 3);
    assert!(deliveries_of(store, w.id).await.iter().all(|d| d.manual));

    // One delivered and one failed for good: room for two.
    let claimed = claim(store, 10, "l", 2).await;
    assert_eq!(claimed, vec![first.id, again.id]);
    assert!(attempt(store, first.id, "l", AttemptResult::Answered(200), 1, 10).await);
    assert!(attempt(store, again.id, "l", AttemptResult::Answered(400), 8, 10).await);
    queue_ping(store, w.id, 11, 3)
        .await
        .expect("room after a delivery");
    queue_ping(store, w.id, 12, 3)
        .await
        .expect("room after a failure");
    assert!(matches!(
        queue_ping(store, w.id, 13, 3).await,
        Err(QueueDeliveryError::Busy { limit: 3 })
    ));

    // Disabled: nothing queued, whatever the count.
    let fresh = register(
        store,
        a.id,
        "https://a.example/3",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let sent = queue_ping(store, fresh.id, 1, 3).await.expect("queued");
    set_enabled(store, fresh.id, false, 20).await;
    assert!(matches!(
        queue_ping(store, fresh.id, 21, 3).await,
        Err(QueueDeliveryError::Disabled)
    ));
    assert!(matches!(
        store.redeliver(None, fresh.id, sent.id, at(21), 3).await,
        Err(QueueDeliveryError::Disabled)
    ));
    assert_eq!(deliveries_of(store, fresh.id).await.len(), 1);
    set_enabled(store, fresh.id, true, 22).await;
    queue_ping(store, fresh.id, 23, 3)
        .await
        .expect("enabled again");
}

/// 30 pings and 30 redeliveries for one endpoint at once: exactly [`MAX_PENDING_MANUAL`]
/// queued, every other refused `Busy` (the count and the insert are one atomic operation).
pub async fn concurrent_manual_deliveries_never_exceed_the_limit(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    let w = register(
        &*store,
        a.id,
        "https://a.example",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let sent = queue_ping(&*store, w.id, 0, 1).await.expect("a ping");
    assert_eq!(claim(&*store, 1, "l", 10).await, vec![sent.id]);
    assert!(attempt(&*store, sent.id, "l", AttemptResult::Answered(200), 1, 1).await);
    let mut tasks = Vec::new();
    for n in 0..60 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            if n % 2 == 0 {
                queue_ping(&*store, w.id, 2, MAX_PENDING_MANUAL).await
            } else {
                store
                    .redeliver(None, w.id, sent.id, at(2), MAX_PENDING_MANUAL)
                    .await
            }
        }));
    }
    let (mut queued, mut busy) = (0, 0);
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => queued += 1,
            Err(QueueDeliveryError::Busy {
                limit: MAX_PENDING_MANUAL,
            }) => busy += 1,
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!(
        (queued, busy),
        (MAX_PENDING_MANUAL, 60 - MAX_PENDING_MANUAL)
    );
    assert_eq!(
        pending(&deliveries_of(&*store, w.id).await).len(),
        MAX_PENDING_MANUAL
    );
}

/// The history purge ends the pending deliveries of an endpoint disabled before its cut
/// (failed, `last_error` "expired") and deletes them with the old history; an endpoint
/// enabled, disabled since the cut, or enabled again keeps its pending deliveries.
pub async fn pending_deliveries_of_a_long_disabled_endpoint_expire(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let urls = [
        "https://a.example/1",
        "https://a.example/2",
        "https://a.example/3",
    ];
    let mut endpoints = Vec::new();
    for url in urls {
        endpoints.push(register(store, a.id, url, EventType::SUBSCRIBABLE, 0).await);
    }
    let [enabled, disabled, reenabled] = [&endpoints[0], &endpoints[1], &endpoints[2]];
    let kept = ping(store, enabled.id, 10).await;
    let old = ping(store, disabled.id, 10).await;
    // Queued with an instant after the cut (another instance's clock ahead): expired, and
    // kept as history until its own 30 days.
    let late = ping(store, disabled.id, 40 * DAY).await;
    let back = ping(store, reenabled.id, 10).await;
    let at_disable = set_enabled(store, disabled.id, false, DAY).await;
    assert_eq!(at_disable.disabled_at, Some(at(DAY)));
    assert_eq!(
        webhook_of(store, disabled.id).await.disabled_at,
        Some(at(DAY))
    );
    set_enabled(store, reenabled.id, false, DAY).await;
    assert_eq!(
        set_enabled(store, reenabled.id, true, 2 * DAY)
            .await
            .disabled_at,
        None
    );

    // Disabled at the cut, not before: nothing expires.
    assert_eq!(store.purge_deliveries(at(DAY)).await.unwrap(), 0);
    assert_eq!(
        pending(&deliveries_of(store, disabled.id).await),
        vec![late.id, old.id]
    );

    let cut: DateTime<Utc> = at(31 * DAY);
    assert_eq!(store.purge_deliveries(cut).await.unwrap(), 1, "the old one");
    let left = deliveries_of(store, disabled.id).await;
    assert_eq!(left.len(), 1);
    assert_eq!(
        (left[0].id, left[0].status, left[0].last_error.as_deref()),
        (late.id, DeliveryStatus::Failed, Some(EXPIRED))
    );
    assert_eq!(left[0].next_attempt_at, None);
    assert_eq!(
        pending(&deliveries_of(store, enabled.id).await),
        vec![kept.id]
    );
    assert_eq!(
        pending(&deliveries_of(store, reenabled.id).await),
        vec![back.id]
    );
    assert_eq!(store.purge_deliveries(cut).await.unwrap(), 0);
    assert_eq!(store.purge_deliveries(at(41 * DAY)).await.unwrap(), 1);
    assert!(deliveries_of(store, disabled.id).await.is_empty());
    // An endpoint disabled by its failures has its instant too.
    let gone = ping(store, enabled.id, 50 * DAY).await;
    let claimed = claim(store, 50 * DAY, "l", 10).await;
    assert!(claimed.contains(&gone.id));
    assert!(
        attempt(
            store,
            gone.id,
            "l",
            AttemptResult::Answered(410),
            1,
            50 * DAY
        )
        .await
    );
    assert_eq!(
        webhook_of(store, enabled.id).await.disabled_at,
        Some(at(50 * DAY))
    );
}

/// A change of URL ends the endpoint's pending deliveries (failed, `last_error`
/// "url_changed", their leases with them: an attempt in flight records nothing), and only
/// those; the same URL, or another field, ends nothing; what is queued after goes out.
pub async fn a_url_change_ends_the_pending_deliveries(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(
        store,
        a.id,
        "https://a.example/old",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let other = register(
        store,
        a.id,
        "https://a.example/other",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let in_flight = ping(store, w.id, 1).await;
    assert_eq!(claim(store, 1, "l", 1).await, vec![in_flight.id]);
    ping(store, w.id, 2).await;
    ping(store, w.id, 0).await;
    let untouched = ping(store, other.id, 2).await;
    let same = WebhookPatch {
        url: Some("https://a.example/old".into()),
        description: Some(Some("d".into())),
        ..Default::default()
    };
    store
        .update_webhook(None, w.id, same, at(3))
        .await
        .unwrap()
        .expect("webhook");
    assert_eq!(pending(&deliveries_of(store, w.id).await).len(), 3);

    let moved = WebhookPatch {
        url: Some("https://a.example/new".into()),
        ..Default::default()
    };
    let changed = store
        .update_webhook(Some(a.id), w.id, moved, at(4))
        .await
        .unwrap()
        .expect("webhook");
    assert_eq!(changed.url, "https://a.example/new");
    for d in deliveries_of(store, w.id).await {
        assert_eq!(
            (d.status, d.last_error.as_deref(), d.next_attempt_at),
            (DeliveryStatus::Failed, Some(URL_CHANGED), None),
            "{:?}",
            d.id
        );
    }
    assert!(
        !attempt(store, in_flight.id, "l", AttemptResult::Answered(200), 1, 5).await,
        "the lease ended with the delivery"
    );
    assert_eq!(claim(store, 10, "m", 10).await, vec![untouched.id]);
    let after = ping(store, w.id, 11).await;
    assert_eq!(claim(store, 11, "n", 10).await, vec![after.id]);
}
