//! Webhook endpoints: registration to the limit, patches, deletion, secret rotation; and the
//! helpers the other webhook cases share.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

const LIMIT: usize = MAX_WEBHOOKS_PER_ACCOUNT;

/// Registers an endpoint of `account` receiving `events` at `now`.
pub(super) async fn register(
    store: &dyn Store,
    account: AccountId,
    url: &str,
    events: &[EventType],
    now: i64,
) -> Webhook {
    store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(account)
                .url(url.to_owned())
                .secret(WebhookSecret::new(format!("whsec_{url}")))
                .created_at(at(now))
                .events(EventSelection::Only(events.to_vec()))
                .build(),
            LIMIT,
        )
        .await
        .expect("insert webhook")
}

/// Every delivery of an endpoint, newest first.
pub(super) async fn deliveries_of(store: &dyn Store, webhook: WebhookId) -> Vec<Delivery> {
    store
        .deliveries(None, webhook, None, page(1, 100))
        .await
        .expect("deliveries")
        .expect("webhook exists")
        .items
}

/// Queues a ping for `webhook` at `now` (no limit on those pending: the limit has its own
/// cases).
pub(super) async fn ping(store: &dyn Store, webhook: WebhookId, now: i64) -> Delivery {
    store
        .queue_event(None, webhook, NewEvent::ping(webhook, at(now)), usize::MAX)
        .await
        .expect("queue event")
}

/// An event about `order` for `webhook` at `now` (what the outbox writes, by hand).
pub(super) async fn order_event_for(
    store: &dyn Store,
    webhook: WebhookId,
    order: OrderId,
    now: i64,
) -> Delivery {
    let event = NewEvent {
        id: new_event_id(),
        kind: EventType::OrderStatusChanged,
        order_id: Some(order),
        snapshot: EventSnapshot::Rendered(format!("{{\"order\":{order}}}")),
        created_at: at(now),
    };
    store
        .queue_event(None, webhook, event, usize::MAX)
        .await
        .expect("queue event")
}

pub(super) async fn claim(
    store: &dyn Store,
    now: i64,
    lease: &str,
    limit: usize,
) -> Vec<DeliveryId> {
    claim_within(store, now, lease, limit, 100).await
}

/// Claims with at most `per_endpoint` in flight per endpoint (and no limit per account).
pub(super) async fn claim_within(
    store: &dyn Store,
    now: i64,
    lease: &str,
    limit: usize,
    per_endpoint: usize,
) -> Vec<DeliveryId> {
    claim_capped(store, now, lease, limit, per_endpoint, usize::MAX).await
}

/// Claims with at most `per_endpoint` in flight per endpoint and `per_account` per account.
pub(super) async fn claim_capped(
    store: &dyn Store,
    now: i64,
    lease: &str,
    limit: usize,
    per_endpoint: usize,
    per_account: usize,
) -> Vec<DeliveryId> {
    let lease = LeaseToken::new(lease);
    store
        .claim_deliveries(
            at(now),
            Duration::seconds(30),
            &lease,
            limit,
            per_endpoint,
            per_account,
        )
        .await
        .expect("claim")
        .into_iter()
        .map(|c| {
            assert_eq!(c.lease, lease);
            c.delivery.id
        })
        .collect()
}

/// 8 dispatchers claiming at once, 3 claims each of up to 3 deliveries at `now` 100, with at
/// most `per_endpoint` in flight per endpoint and `per_account` per account: every delivery
/// claimed.
pub(super) async fn race_claims(
    store: Arc<dyn Store>,
    per_endpoint: usize,
    per_account: usize,
) -> Vec<ClaimedDelivery> {
    let mut tasks = Vec::new();
    for t in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let lease = LeaseToken::new(format!("dispatcher-{t}"));
            let mut mine = Vec::new();
            for _ in 0..3 {
                let claimed = store.claim_deliveries(
                    at(100),
                    Duration::seconds(30),
                    &lease,
                    3,
                    per_endpoint,
                    per_account,
                );
                mine.extend(claimed.await.expect("claim"));
                tokio::task::yield_now().await;
            }
            mine
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("task"));
    }
    all
}

pub(super) fn outcome(result: AttemptResult, attempts: u32, now: DateTime<Utc>) -> AttemptOutcome {
    result.decide(attempts, now, None)
}

pub(super) async fn finish(
    store: &dyn Store,
    delivery: DeliveryId,
    lease: &str,
    o: AttemptOutcome,
) -> bool {
    store
        .finish_delivery(delivery, &LeaseToken::new(lease), o)
        .await
        .expect("finish delivery")
}

/// Records an attempt of `delivery` under `lease` that got `result` at `now` (no earlier
/// failing streak); whether it was recorded.
pub(super) async fn attempt(
    store: &dyn Store,
    delivery: DeliveryId,
    lease: &str,
    result: AttemptResult,
    attempts: u32,
    now: i64,
) -> bool {
    finish(store, delivery, lease, outcome(result, attempts, at(now))).await
}

/// Claims up to `limit` due deliveries at `now` under `lease` and delivers each; their ids.
pub(super) async fn deliver_due(
    store: &dyn Store,
    now: i64,
    lease: &str,
    limit: usize,
) -> Vec<DeliveryId> {
    let claimed = claim(store, now, lease, limit).await;
    for id in &claimed {
        let ok = attempt(store, *id, lease, AttemptResult::Answered(200), 1, now).await;
        assert!(ok, "a live lease records");
    }
    claimed
}

pub(super) async fn webhook_of(store: &dyn Store, id: WebhookId) -> Webhook {
    store
        .webhook(None, id)
        .await
        .expect("webhook")
        .expect("webhook exists")
}

/// Registration up to the limit, reads oldest first and by page, and every operation on
/// another account's endpoint finding nothing.
pub async fn webhooks_register_to_the_limit_and_belong_to_their_account(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let mut mine = Vec::new();
    for n in 0..LIMIT {
        mine.push(
            register(
                store,
                a.id,
                &format!("https://a.example/{n}"),
                EventType::SUBSCRIBABLE,
                n as i64,
            )
            .await,
        );
    }
    let first = &mine[0];
    assert!(first.enabled && first.disabled_reason.is_none() && first.failing_since.is_none());
    assert_eq!(first.previous_secret, None);
    assert_eq!((first.created_at, first.updated_at), (at(0), at(0)));
    assert_eq!(webhook_of(store, first.id).await, *first);
    let described = NewWebhook::builder()
        .account_id(a.id)
        .url("https://a.example/x".to_owned())
        .secret(WebhookSecret::new("whsec_x"))
        .created_at(at(99))
        .description("مخزن".to_owned())
        .build();
    assert!(matches!(
        store.insert_webhook(described, LIMIT).await,
        Err(InsertWebhookError::TooMany { limit: LIMIT })
    ));
    let theirs = store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(b.id)
                .url("https://b.example".to_owned())
                .secret(WebhookSecret::new("whsec_b"))
                .created_at(at(1))
                .description("مخزن".to_owned())
                .events(EventSelection::Only(vec![EventType::OrderCreated]))
                .build(),
            LIMIT,
        )
        .await
        .expect("another account has its own limit");
    assert_eq!(theirs.description.as_deref(), Some("مخزن"));
    assert_eq!(
        theirs.events,
        EventSelection::Only(vec![EventType::OrderCreated])
    );
    assert_eq!(webhook_of(store, theirs.id).await, theirs);

    let listed = store.webhooks(a.id, page(2, 4)).await.expect("webhooks");
    assert_eq!(listed.total, LIMIT as u64);
    assert_eq!(ids(&listed.items, |w| w.id), ids(&mine[4..8], |w| w.id));
    let past = store.webhooks(a.id, page(9, 4)).await.expect("webhooks");
    assert_eq!((past.items.len(), past.total), (0, LIMIT as u64));
    assert_eq!(
        store.webhooks(b.id, page(1, 20)).await.unwrap().items,
        vec![theirs.clone()]
    );
    // Registered without events: every type of its side, later versions' included, kept as
    // such (not as today's list, which no later type would reach).
    let every = store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(b.id)
                .url("https://b.example/all".to_owned())
                .secret(WebhookSecret::new("whsec_all"))
                .created_at(at(2))
                .build(),
            LIMIT,
        )
        .await
        .expect("a second endpoint");
    assert_eq!(every.events, EventSelection::All);
    assert_eq!(
        webhook_of(store, every.id).await.events,
        EventSelection::All
    );

    let other = Some(b.id);
    let id = first.id;
    assert_eq!(store.webhook(other, id).await.unwrap(), None);
    assert_eq!(
        store.webhook(Some(a.id), id).await.unwrap().as_ref(),
        Some(first)
    );
    assert_eq!(store.webhook(None, id.absent()).await.unwrap(), None);
    let patch = WebhookPatch {
        enabled: Some(false),
        ..Default::default()
    };
    assert_eq!(
        store
            .update_webhook(other, id, patch, at(50))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .rotate_webhook_secret(other, id, "whsec_new".into(), at(50))
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        store
            .queue_event(other, id, NewEvent::ping(id, at(50)), LIMIT)
            .await,
        Err(QueueDeliveryError::NotFound)
    ));
    let queued = ping(store, id, 50).await;
    assert!(matches!(
        store.redeliver(other, id, queued.id, at(51), LIMIT).await,
        Err(QueueDeliveryError::NotFound)
    ));
    assert!(
        matches!(
            store
                .redeliver(None, theirs.id, queued.id, at(51), LIMIT)
                .await,
            Err(QueueDeliveryError::NotFound)
        ),
        "a delivery of another endpoint"
    );
    assert_eq!(
        store
            .deliveries(other, id, None, page(1, 10))
            .await
            .unwrap(),
        None
    );
    assert!(!store.delete_webhook(other, id).await.unwrap());
    assert_eq!(webhook_of(store, id).await, *first, "nothing changed");
    assert_eq!(deliveries_of(store, id).await, vec![queued]);
}

/// A patch changes what it sets; enabling clears the reason and the failing streak,
/// disabling says `manual` (and keeps an earlier reason).
pub async fn webhook_patch_enables_disables_and_changes_fields(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(
        store,
        a.id,
        "https://a.example/hook",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let patch = WebhookPatch {
        url: Some("https://a.example/new".into()),
        events: Some(vec![EventType::OrderStatusChanged]),
        description: Some(Some("وصف".into())),
        enabled: None,
    };
    let changed = store
        .update_webhook(Some(a.id), w.id, patch, at(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed.url, "https://a.example/new");
    assert_eq!(
        changed.events,
        EventSelection::Only(vec![EventType::OrderStatusChanged])
    );
    assert_eq!(changed.description.as_deref(), Some("وصف"));
    assert_eq!((changed.updated_at, changed.created_at), (at(10), at(0)));
    assert!(changed.enabled);
    assert_eq!(webhook_of(store, w.id).await, changed);

    let disable = WebhookPatch {
        enabled: Some(false),
        description: Some(None),
        ..Default::default()
    };
    let disabled = store
        .update_webhook(None, w.id, disable.clone(), at(20))
        .await
        .unwrap()
        .unwrap();
    assert!(!disabled.enabled);
    assert_eq!(disabled.disabled_reason, Some(DisabledReason::Manual));
    assert_eq!(disabled.description, None);
    assert_eq!(webhook_of(store, w.id).await, disabled);

    // A failing endpoint that answered 410: disabled `gone`, with a streak.
    let enable = WebhookPatch {
        enabled: Some(true),
        ..Default::default()
    };
    store
        .update_webhook(None, w.id, enable.clone(), at(30))
        .await
        .unwrap();
    let d = ping(store, w.id, 30).await;
    assert_eq!(claim(store, 31, "lease-1", 10).await, vec![d.id]);
    assert!(attempt(store, d.id, "lease-1", AttemptResult::Answered(410), 1, 31).await);
    let gone = webhook_of(store, w.id).await;
    assert_eq!(
        (gone.enabled, gone.disabled_reason),
        (false, Some(DisabledReason::Gone))
    );
    assert_eq!(gone.failing_since, Some(at(31)));
    let still = store
        .update_webhook(None, w.id, disable, at(40))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        still.disabled_reason,
        Some(DisabledReason::Gone),
        "disabling keeps the reason"
    );
    let enabled = store
        .update_webhook(None, w.id, enable, at(50))
        .await
        .unwrap()
        .unwrap();
    assert!(enabled.enabled);
    assert_eq!(
        (enabled.disabled_reason, enabled.failing_since),
        (None, None)
    );
    assert_eq!(enabled.updated_at, at(50));
    assert_eq!(webhook_of(store, w.id).await, enabled);
}

/// Deleting an endpoint deletes its deliveries, pending or not, and no other's.
pub async fn deleting_a_webhook_drops_its_deliveries(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(
        store,
        a.id,
        "https://a.example/1",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let kept = register(
        store,
        a.id,
        "https://a.example/2",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let done = ping(store, w.id, 1).await;
    assert_eq!(claim(store, 2, "l", 1).await, vec![done.id]);
    assert!(attempt(store, done.id, "l", AttemptResult::Answered(200), 1, 2).await);
    ping(store, w.id, 3).await;
    let other = ping(store, kept.id, 3).await;
    assert!(store.delete_webhook(Some(a.id), w.id).await.unwrap());
    assert_eq!(store.webhook(None, w.id).await.unwrap(), None);
    assert_eq!(
        store
            .deliveries(None, w.id, None, page(1, 10))
            .await
            .unwrap(),
        None
    );
    assert!(
        !store.delete_webhook(None, w.id).await.unwrap(),
        "deleted once"
    );
    assert_eq!(
        claim(store, 10, "l2", 10).await,
        vec![other.id],
        "only the other's is left"
    );
    assert_eq!(store.purge_deliveries(at(1_000)).await.unwrap(), 0);
}

/// Rotation replaces the secret and keeps the previous one signing for 24 hours after it.
pub async fn rotating_a_secret_keeps_the_previous_one_for_a_day(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(store, a.id, "https://a.example", EventType::SUBSCRIBABLE, 0).await;
    let rotated = store
        .rotate_webhook_secret(Some(a.id), w.id, "whsec_second".into(), at(100))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rotated.secret.expose(), "whsec_second");
    // Neither secret shows in `{:?}` or `{}`, as returned or as read back.
    let stored = webhook_of(store, w.id).await;
    for shown in [
        format!("{rotated:?}"),
        format!("{stored:?}"),
        stored.secret.to_string(),
    ] {
        assert!(
            !shown.contains("whsec_second") && !shown.contains(w.secret.expose()),
            "a secret printed: {shown}"
        );
    }
    assert_eq!(
        rotated.previous_secret,
        Some((w.secret.clone(), at(100) + SECRET_OVERLAP))
    );
    assert_eq!(rotated.updated_at, at(100));
    assert_eq!(webhook_of(store, w.id).await, rotated);
    assert_eq!(
        rotated.signing_secrets(at(101)),
        vec!["whsec_second", w.secret.expose()]
    );
    assert_eq!(
        rotated.signing_secrets(at(100) + SECRET_OVERLAP),
        vec!["whsec_second"]
    );
    let again = store
        .rotate_webhook_secret(None, w.id, "whsec_third".into(), at(200))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        again.previous_secret,
        Some(("whsec_second".into(), at(200) + SECRET_OVERLAP))
    );
    assert_eq!(webhook_of(store, w.id).await, again);
}

/// 16 tasks registering at once for an account with 4 endpoints: exactly 6 more succeed.
pub async fn concurrent_webhook_registrations_never_exceed_the_limit(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    for n in 0..4 {
        register(
            &*store,
            a.id,
            &format!("https://a.example/{n}"),
            EventType::SUBSCRIBABLE,
            0,
        )
        .await;
    }
    let mut tasks = Vec::new();
    for n in 0..16 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .insert_webhook(
                    NewWebhook::builder()
                        .account_id(a.id)
                        .url(format!("https://a.example/r{n}"))
                        .secret(WebhookSecret::new("whsec_r"))
                        .created_at(at(1))
                        .build(),
                    LIMIT,
                )
                .await
        }));
    }
    let (mut ok, mut refused) = (0, 0);
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => ok += 1,
            Err(InsertWebhookError::TooMany { limit: LIMIT }) => refused += 1,
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!((ok, refused), (6, 10));
    assert_eq!(
        store.webhooks(a.id, page(1, 50)).await.unwrap().total,
        LIMIT as u64
    );
}
