//! `catalog.changed` at scale: 10,000 subscribed marketer endpoints (1,000 accounts of 10).
//! A round's work grows with the endpoints, not with the changes since the last round: after
//! 10 changes and after 10,000 changes a round queues one delivery per endpoint, and takes
//! about as long.
//!
//! Ignored (it builds 10,000 endpoints and 10,000 changes); run it with
//! `cargo test --release -p commerce-core --all-features --test background catalog_changed -- --ignored --nocapture`
//! (a module of the `background` test binary: no binary of its own to build).

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeDelta, TimeZone, Utc};
use commerce_core::model::*;
use commerce_core::store::*;

const ACCOUNTS: usize = 1_000;

/// One round at `now` against the feed's newest change: how many endpoints were sent one and
/// how long the round took.
async fn round(store: &dyn Store, now: chrono::DateTime<Utc>) -> (u64, Duration) {
    let started = Instant::now();
    let head = store
        .newest_catalog_change()
        .await
        .unwrap()
        .expect("changes");
    let event = NewEvent::catalog_changed("cursor", now);
    let sent = store
        .queue_catalog_changed(head, event, now - TimeDelta::seconds(10))
        .await
        .unwrap();
    (sent, started.elapsed())
}

#[tokio::test]
#[ignore = "the scale run: 10,000 endpoints (see the file's doc)"]
async fn catalog_changed_work_grows_with_endpoints_not_changes() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let at = |s: i64| Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap();
    let category = store
        .insert_category(NewCategory::new(
            "عام".to_owned(),
            "general".to_owned(),
            None,
        ))
        .await
        .unwrap();
    let product = store
        .insert_product(
            NewProduct::builder()
                .category_id(category.id)
                .title("منتج".to_owned())
                .slug("p".to_owned())
                .url("https://shop.example.com/p".to_owned())
                .build(),
            at(0),
        )
        .await
        .unwrap();
    let variant = store
        .insert_variant(
            product.id,
            NewVariant::builder()
                .label("v".to_owned())
                .price("10.00".parse().unwrap())
                .available(1)
                .build(),
            at(0),
        )
        .await
        .unwrap();
    for n in 0..ACCOUNTS {
        let account = store
            .insert_account(
                NewAccount::marketer(
                    format!("m{n}"),
                    format!("store {n}"),
                    format!("m{n}@x.example"),
                    "01012345678",
                ),
                at(0),
            )
            .await
            .unwrap();
        for e in 0..MAX_WEBHOOKS_PER_ACCOUNT {
            let url = format!("https://h{n}.example/{e}");
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
                .unwrap();
        }
    }
    let endpoints = (ACCOUNTS * MAX_WEBHOOKS_PER_ACCOUNT) as u64;
    let change = |s: i64| {
        let store = store.clone();
        async move {
            let one = NewStockAdjustment::builder()
                .variant_id(variant.id)
                .delta(1)
                .reason(StockReason::Correction)
                .build();
            store.adjust_stock(one, at(s)).await.unwrap();
        }
    };
    assert_eq!(round(&*store, at(10)).await.0, endpoints, "never sent");
    for s in 0..10 {
        change(100 + s).await;
    }
    let (few_sent, few) = round(&*store, at(200)).await;
    for s in 0..10_000 {
        change(300 + s).await;
    }
    let (many_sent, many) = round(&*store, at(20_000)).await;
    println!("{endpoints} endpoints: after 10 changes {few:?}, after 10,000 changes {many:?}");
    assert_eq!(
        (few_sent, many_sent),
        (endpoints, endpoints),
        "one per endpoint"
    );
    assert!(
        many < few * 3 + Duration::from_millis(50),
        "the work grows with the changes: {few:?} then {many:?}"
    );
}
