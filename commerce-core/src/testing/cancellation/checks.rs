//! The checks run after a workload: the store is consistent with what it held before, and
//! every endpoint answers.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::Duration;
use serde_json::Value;

use crate::domain::webhooks::WebhookInput;
use crate::model::*;
use crate::testing::http::Harness;
use crate::testing::wallet::all_orders;

/// What the store holds before the workload, to compare with after it.
pub(super) struct Baseline {
    /// Per variant: available + pieces reserved by orders.
    stock: HashMap<VariantId, i64>,
    /// A webhook endpoint of marketer A, receiving every order event (the outbox).
    outbox: WebhookId,
    /// Marketer A's orders before the endpoint, with their timeline's length then.
    timelines: HashMap<OrderId, usize>,
}

impl Baseline {
    /// The stock now, and a webhook endpoint for marketer A's order events.
    pub(super) async fn take(h: &Harness) -> Self {
        let endpoint = h
            .engine
            .operator()
            .create_webhook(
                h.fixture.marketer_a,
                WebhookInput::url("https://127.0.0.1:9/hooks"),
            )
            .await
            .expect("a webhook endpoint");
        let timelines = all_orders(h, h.fixture.marketer_a)
            .await
            .into_iter()
            .map(|o| (o.id, o.timeline.len()))
            .collect();
        Self {
            stock: stock_totals(h).await,
            outbox: endpoint.id,
            timelines,
        }
    }
}

/// The outbox holds exactly one event per order change that happened since the endpoint was
/// registered: for every order of its account, one delivery per timeline entry added since
/// (`order.created` for a new order's first, `order.status_changed` into each later status),
/// and none of an order that does not exist.
async fn assert_outbox_matches_orders(h: &Harness, baseline: &Baseline, orders: &[Order]) {
    let outbox = baseline.outbox;
    let operator = h.engine.operator();
    let mut events: HashMap<i64, Vec<(String, String)>> = HashMap::new();
    for page in 1.. {
        let found = operator
            .webhook_deliveries(
                outbox,
                None,
                PageRequest::new(page, 100).expect("a valid page"),
            )
            .await
            .expect("deliveries");
        for delivery in found.items.iter().rev() {
            let body: Value = serde_json::from_str(&crate::webhooks::render_event(
                &delivery.event_id,
                delivery.event_type,
                &delivery.snapshot,
            ))
            .expect("JSON events");
            let order = &body["data"]["order"];
            events
                .entry(order["id"].as_i64().unwrap_or_default())
                .or_default()
                .push((
                    delivery.event_type.as_str().to_owned(),
                    order["status"]["key"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                ));
        }
        if u64::from(page) * 100 >= found.total {
            break;
        }
    }
    for order in orders {
        let before = baseline.timelines.get(&order.id).copied().unwrap_or(0);
        let mut expected: Vec<(String, String)> = order
            .timeline
            .iter()
            .enumerate()
            .skip(before)
            .map(|(i, entry)| {
                let kind = match i {
                    0 => EventType::OrderCreated,
                    _ => EventType::OrderStatusChanged,
                };
                (kind.as_str().to_owned(), entry.status.as_str().to_owned())
            })
            .collect();
        let mut got = events.remove(&order.id.get()).unwrap_or_default();
        got.sort();
        expected.sort();
        assert_eq!(got, expected, "the events of order {}", order.id);
    }
    assert!(
        events.is_empty(),
        "events of orders that do not exist: {events:?}"
    );
}

/// Pieces of each variant that its history does not explain: available minus the sum of
/// its history (reservations, releases, restocks, receipts and adjustments), which the
/// stock law keeps at 0 whatever request was dropped where.
async fn stock_totals(h: &Harness) -> HashMap<VariantId, i64> {
    let mut totals: HashMap<VariantId, i64> = HashMap::new();
    let mut variants = vec![h.fixture.plain_variant];
    variants.extend(&h.fixture.featured_variants);
    let operator = h.engine.operator();
    for variant in &variants {
        let mut adjusted = 0;
        for page in 1.. {
            let kept = operator
                .stock_adjustments(*variant, PageRequest::new(page, 100).expect("a valid page"))
                .await
                .expect("stock adjustments");
            adjusted += kept.items.iter().map(|a| a.delta).sum::<i64>();
            if kept.items.len() < 100 {
                break;
            }
        }
        totals.insert(*variant, h.available(*variant).await - adjusted);
    }
    totals
}

/// Asserts the invariants of the module docs.
pub(super) async fn assert_consistent(h: &Harness, baseline: &Baseline) {
    assert_eq!(
        stock_totals(h).await,
        baseline.stock,
        "stock not explained by its history"
    );
    let store = h.engine.store();
    for account in [h.fixture.marketer_a, h.fixture.marketer_b] {
        let orders = all_orders(h, account).await;
        for order in &orders {
            assert!(!order.lines.is_empty(), "order {} has no lines", order.id);
            assert!(
                !order.timeline.is_empty(),
                "order {} has no timeline",
                order.id
            );
        }
        let page = PageRequest::new(1, 1).expect("a valid page");
        for family in Family::ALL {
            let filter = OrderFilter {
                family: Some(*family),
                ..OrderFilter::default()
            };
            let counted = store.orders(account, &filter, page).await.expect("listed");
            let listed = orders
                .iter()
                .filter(|o| o.status.family() == *family)
                .count();
            assert_eq!(
                counted.total, listed as u64,
                "{family:?} count of {account}"
            );
        }
        if account == h.fixture.marketer_a {
            assert_outbox_matches_orders(h, baseline, &orders).await;
        }
        crate::testing::wallet::assert_wallet_matches_orders(h, account).await;
        let held_after = h.engine.now() - Duration::days(h.engine.config().hold_days);
        let wallet = store
            .wallet_totals(account, held_after)
            .await
            .expect("wallet totals");
        let withdrawals = store.withdrawals(account).await.expect("withdrawals");
        let withdrawn = crate::domain::earnings::Withdrawn::of(&withdrawals);
        assert!(
            withdrawn.received + withdrawn.pending <= wallet.totals.settled - wallet.held,
            "account {account} withdrew {withdrawn:?} of {wallet:?}"
        );
    }
    // The supplier's expected figure and statement were written with the orders, or not.
    let marketers = [h.fixture.marketer_a, h.fixture.marketer_b];
    crate::testing::wallet::assert_supplier_matches_orders(h, h.fixture.supplier, &marketers).await;
}

/// Every endpoint of the mix answers, many times over (more than any pool holds connections),
/// one after the other and all at once.
pub(super) async fn assert_every_endpoint_answers(h: &Harness, key: &str) {
    let paths = [
        "/api/v1/me".to_owned(),
        "/api/v1/products?per_page=25".to_owned(),
        format!("/api/v1/products/{}", h.fixture.featured_product),
        "/api/v1/orders?per_page=25".to_owned(),
        "/api/v1/wallet".to_owned(),
        "/api/v1/shipping/options".to_owned(),
    ];
    for _ in 0..4 {
        for path in &paths {
            let r = h.get(key, path).await;
            r.assert_ok(path);
        }
    }
    let h = Arc::new(h.clone_handle());
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let (h, key, path) = (h.clone(), key.to_owned(), paths[i % paths.len()].clone());
            tokio::spawn(async move { (h.get(&key, &path).await, path) })
        })
        .collect();
    for task in tasks {
        let (r, path) = task.await.expect("task finished");
        r.assert_ok(&path);
    }
}
