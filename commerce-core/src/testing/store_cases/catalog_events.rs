//! `catalog.changed`, derived from the change feed: to the marketers' endpoints that receive
//! it, one per round while the feed's head is past what the endpoint was last sent, at most
//! one per interval, however many changes came between.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::quotes::supply;
use super::webhooks::{attempt, claim, deliveries_of, register};

/// The position of the feed's newest change once it is `product`'s change at or after
/// `since` (the test's last write), as a read of the whole feed ends on it: a store with a
/// fence (PostgreSQL) shows a change once every older transaction of the server has ended, a
/// moment later when other sessions write; at most 60 s.
async fn head(store: &dyn Store, product: ProductId, since: i64) -> ChangePosition {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let newest = store.newest_catalog_change().await.expect("the feed");
        let all = store.catalog_changes(None, 1000).await.expect("the feed");
        if let Some(last) = all.changes.last()
            && last.product_id == product
            && last.at >= at(since)
            && newest == Some(last.position)
        {
            return last.position;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the feed never showed {product}'s change: {newest:?} {all:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A round at `now` for `head`, with the interval's start `sent_before`.
async fn round(
    store: &dyn Store,
    head: ChangePosition,
    cursor: &str,
    now: i64,
    sent_before: i64,
) -> u64 {
    let event = NewEvent::catalog_changed(cursor, at(now));
    store
        .queue_catalog_changed(head, event, at(sent_before))
        .await
        .expect("a round")
}

/// Claims every delivery due at `now` and records each as answered 204.
async fn deliver_all(store: &dyn Store, now: i64) {
    let lease = format!("deliver-{now}");
    for id in claim(store, now, &lease, 100).await {
        assert!(attempt(store, id, &lease, AttemptResult::Answered(204), 1, now).await);
    }
}

/// A marketer endpoint of a new account in `state` with API access `api` (every type).
async fn endpoint_of(store: &dyn Store, state: AccountState, api: ApiStatus) -> Webhook {
    let name = format!("{}-{}", state.as_str(), api.as_str());
    let account = store
        .insert_account(
            NewAccount::builder()
                .name(name.clone())
                .store_name("متجر".to_owned())
                .email(format!("{name}@x.example"))
                .phone("01012345678".to_owned())
                .side(Side::Marketer)
                .state(state)
                .api_status(api)
                .build(),
            at(0),
        )
        .await
        .expect("an account");
    let url = format!("https://{name}.example/all");
    store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(account.id)
                .url(url)
                .secret(WebhookSecret::new("whsec_x"))
                .created_at(at(0))
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await
        .expect("an endpoint")
}

/// The cursors of an endpoint's `catalog.changed` deliveries, oldest first.
async fn cursors(store: &dyn Store, webhook: WebhookId) -> Vec<String> {
    let mut found: Vec<String> = deliveries_of(store, webhook)
        .await
        .into_iter()
        .map(|d| match (d.event_type, d.snapshot) {
            (EventType::CatalogChanged, EventSnapshot::CatalogChanged { cursor, .. }) => cursor,
            (kind, snapshot) => panic!("only catalog.changed here: {kind:?} {snapshot:?}"),
        })
        .collect();
    found.reverse();
    found
}

/// A round sends one `catalog.changed` (one event id) to each enabled marketer endpoint that
/// receives it (registered without `events`, or naming it) and is due; none to an endpoint
/// that chose other types, a disabled one, a supplier's, or one of a marketer that may not
/// read the feed (suspended, or its API access not approved). An endpoint is due again only
/// once the head moved past what it was sent, the interval passed and its last one is no
/// longer pending: many changes between two rounds make one event per endpoint, not one per
/// change, and a receiver that is down has one nudge waiting, not one per round.
pub async fn catalog_changed_is_derived_once_per_endpoint_and_interval(store: &dyn Store) {
    let s = supply(store, 50).await;
    let (a, b) = (s.f.account.id, s.f.other.id);
    let every = store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(b)
                .url("https://b.example/all".to_owned())
                .secret(WebhookSecret::new("whsec_b"))
                .created_at(at(0))
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await
        .unwrap();
    let chosen = register(
        store,
        a,
        "https://a.example/c",
        &[EventType::CatalogChanged],
        0,
    )
    .await;
    let orders = register(
        store,
        a,
        "https://a.example/o",
        &[EventType::OrderCreated],
        0,
    )
    .await;
    let disabled = register(
        store,
        b,
        "https://b.example/off",
        &[EventType::CatalogChanged],
        0,
    )
    .await;
    let off = WebhookPatch {
        enabled: Some(false),
        ..WebhookPatch::default()
    };
    store
        .update_webhook(None, disabled.id, off, at(0))
        .await
        .unwrap();
    let suspended = endpoint_of(store, AccountState::Suspended, ApiStatus::Approved).await;
    let not_approved = endpoint_of(store, AccountState::Active, ApiStatus::Pending).await;
    let supplier = store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(s.supplier.id)
                .url("https://s.example/all".to_owned())
                .secret(WebhookSecret::new("whsec_s"))
                .created_at(at(0))
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await
        .unwrap();

    let h1 = head(store, s.w.product_id, 0).await;
    assert_eq!(round(store, h1, "c1", 100, 90).await, 2, "never sent: due");
    assert_eq!(
        round(store, h1, "c1b", 200, 190).await,
        0,
        "the head did not move"
    );
    let ids_of = |d: Vec<Delivery>| ids(&d, |d| d.event_id.clone());
    let first = ids_of(deliveries_of(store, every.id).await);
    assert_eq!(
        first,
        ids_of(deliveries_of(store, chosen.id).await),
        "one event"
    );
    let sent = deliveries_of(store, every.id).await;
    assert_eq!(sent[0].next_attempt_at, Some(at(100)));
    deliver_all(store, 200).await;

    // Twenty changes between two rounds: one event per endpoint.
    let adjust = |seconds: i64| async move {
        let one = NewStockAdjustment::builder()
            .variant_id(s.v1.id)
            .delta(1)
            .reason(StockReason::Correction)
            .build();
        store.adjust_stock(one, at(seconds)).await.expect("adjust");
    };
    for n in 0..20 {
        adjust(201 + n).await;
    }
    let h2 = head(store, s.product.id, 220).await;
    assert!(h2 > h1);
    assert_eq!(round(store, h2, "c2", 221, 211).await, 2);
    adjust(222).await;
    let h3 = head(store, s.product.id, 222).await;
    assert!(h3 > h2);
    assert_eq!(
        round(store, h3, "c3", 225, 215).await,
        0,
        "within the interval"
    );
    assert_eq!(
        round(store, h3, "c3", 231, 221).await,
        0,
        "the interval passed, the last one still pending"
    );
    deliver_all(store, 232).await;
    assert_eq!(
        round(store, h3, "c3", 233, 223).await,
        2,
        "the interval passed, the last one delivered"
    );
    assert_eq!(
        round(store, h3, "c4", 300, 290).await,
        0,
        "the head did not move"
    );

    for endpoint in [every.id, chosen.id] {
        assert_eq!(cursors(store, endpoint).await, ["c1", "c2", "c3"]);
    }
    for endpoint in [
        orders.id,
        disabled.id,
        supplier.id,
        suspended.id,
        not_approved.id,
    ] {
        assert!(
            deliveries_of(store, endpoint).await.is_empty(),
            "endpoint {endpoint}"
        );
    }
}
