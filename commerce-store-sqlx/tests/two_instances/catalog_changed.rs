//! `catalog.changed` with two instances on one database, one of its receivers hostile (it takes
//! the request and never answers within the attempt's timeout).

use std::time::Duration;

use chrono::TimeDelta;
use commerce_core::domain::webhooks::WebhookInput;
use commerce_core::model::{
    DeliveryStatus, EventType, NewStockAdjustment, PageRequest, StockReason,
};
use commerce_core::testing::http::receiver::Receiver;
use commerce_core::webhooks::DispatcherConfig;
use http::StatusCode;

use super::{Pair, dispatchers, drain_both, feed_until, get, with_pair};

/// Both instances run their round at once, twice per change: each endpoint gets one event per
/// change, never two. The hostile receiver's attempt times out and waits for its retry, and
/// while it waits no other `catalog.changed` is queued for it (one nudge waiting, not one per
/// round); the polite receiver gets each event, naming the feed's newest cursor, all the same.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn catalog_changed_is_sent_once_per_endpoint_by_two_instances() {
    with_pair(|p| async move {
        let polite = Receiver::start().await;
        let hostile = Receiver::start().await;
        for _ in 0..8 {
            hostile.then_stall(Duration::from_secs(30));
        }
        let operator = p.engines[0].operator();
        let polite_hook = operator
            .create_webhook(p.fixture.marketer_a, WebhookInput::url(&polite.url))
            .await
            .expect("the polite endpoint");
        let hostile_hook = operator
            .create_webhook(p.fixture.marketer_b, WebhookInput::url(&hostile.url))
            .await
            .expect("the hostile endpoint");
        let mut config = DispatcherConfig::default();
        config.timeout = Duration::from_millis(500);
        let dispatchers = dispatchers(&p, config);

        let plain = p.engines[0]
            .store()
            .products_of_variants(&[p.fixture.plain_variant])
            .await
            .expect("the plain variant's product")[0]
            .id
            .get();
        for change in 1..=2_i64 {
            let (_, before) = feed_until(&p, 0, None, &[]).await;
            let stock = NewStockAdjustment::builder()
                .variant_id(p.fixture.plain_variant)
                .delta(1)
                .reason(StockReason::Received)
                .build();
            p.engines[1]
                .operator()
                .adjust_stock(stock)
                .await
                .expect("a change");
            // The feed's head past the change (another test's transaction on the server can
            // hold it back for a moment).
            feed_until(&p, 1, Some(&before), &[plain]).await;
            // Past the interval of the round before (rounds are at most one per 10 s).
            p.clock.advance(TimeDelta::seconds(11));
            // One event per endpoint from 4 rounds; the second time the hostile endpoint
            // still has its first waiting for a retry, and a round passes over it.
            let sent = rounds_at_once(&p, 4).await;
            let due = if change == 1 { 2 } else { 1 };
            assert_eq!(
                sent, due,
                "change {change}: one event per endpoint due, from 4 rounds"
            );
            drain_both(&dispatchers).await;
            let events: Vec<_> = polite
                .received()
                .into_iter()
                .filter(|r| r.json()["type"] == "catalog.changed")
                .collect();
            assert_eq!(
                events.len() as i64,
                change,
                "the polite receiver, change {change}"
            );
            // The event names the feed's newest change: nothing comes after its cursor.
            let latest = events.last().expect("an event").json()["data"]["cursor"].clone();
            let latest = latest.as_str().expect("a cursor").to_owned();
            let after = p
                .send(0, get(&format!("/api/v1/catalog/changes?after={latest}")))
                .await;
            assert_eq!(after.status, StatusCode::OK);
            assert_eq!(
                after.json()["data"],
                serde_json::json!([]),
                "change {change}"
            );
        }
        for (hook, want) in [(polite_hook.id, 2), (hostile_hook.id, 1)] {
            let all = p.engines[1]
                .operator()
                .webhook_deliveries(hook, None, PageRequest::new(1, 100).expect("a page"))
                .await
                .expect("deliveries");
            let catalog = all
                .items
                .iter()
                .filter(|d| d.event_type == EventType::CatalogChanged)
                .count();
            assert_eq!(catalog, want, "endpoint {hook}: one delivery per change");
        }
        let retried = p.engines[0]
            .operator()
            .webhook_deliveries(
                hostile_hook.id,
                Some(DeliveryStatus::Pending),
                PageRequest::new(1, 100).expect("a page"),
            )
            .await
            .expect("deliveries");
        assert_eq!(
            retried.total, 1,
            "the hostile endpoint's one event waits for a retry"
        );
    })
    .await;
}

/// `count` rounds of `catalog.changed` at once, alternating instances, released together: how
/// many events they queued in all.
async fn rounds_at_once(p: &Pair, count: usize) -> u64 {
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(count));
    let rounds: Vec<_> = (0..count)
        .map(|i| {
            let (operator, barrier) = (p.engines[i % 2].operator(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                operator.send_catalog_changed().await.expect("a round")
            })
        })
        .collect();
    let mut sent = 0;
    for round in rounds {
        sent += round.await.expect("a round's task");
    }
    sent
}
