//! Concurrency: many requests at once on one engine.

use std::sync::Arc;

use rust_decimal::Decimal;
use serde_json::json;

use crate::domain::keys::KeySpec;
use crate::model::*;

use super::fixtures::*;
use super::harness::*;

/// 50 concurrent creates with one `Idempotency-Key` register exactly one order; the others
/// are replays of it or 409 while it is in flight.
pub async fn race_one_idempotency_key_makes_one_order(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let before = h.order_count().await;
    let body = h.order_body(1, "10");
    let responses = race(50, |_| {
        let (h, body) = (h.clone(), body.clone());
        async move { h.post_idempotent("sk_demo_bench", "race-key", &body).await }
    })
    .await;
    let created: Vec<_> = responses.iter().filter(|r| r.status == 201).collect();
    assert!(
        responses.iter().all(|r| r.status == 201 || r.status == 409),
        "only 201 or 409"
    );
    for conflict in responses.iter().filter(|r| r.status == 409) {
        conflict.assert_conflict("idempotency_in_progress");
    }
    assert!(!created.is_empty());
    assert!(
        created.iter().all(|r| r.body == created[0].body),
        "every 201 is the same order"
    );
    assert_eq!(h.order_count().await, before + 1);
}

/// 50 concurrent single-piece orders on a variant with 10 available: exactly 10 orders.
pub async fn race_no_oversell(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let variant = h.fixture.featured_variants[1];
    let stock = h.available(variant).await;
    h.engine
        .operator()
        .set_stock(variant, stock, 10, None)
        .await
        .expect("stock");
    let before = h.order_count().await;
    let responses = race(50, |_| {
        let h = h.clone();
        async move {
            let mut body = h.order_body(1, "10");
            body["lines"][0]["variant_id"] = json!(variant);
            h.post("sk_demo_bench", "/api/v1/orders", &body).await
        }
    })
    .await;
    let created = responses.iter().filter(|r| r.status == 201).count();
    let refused = responses.iter().filter(|r| r.status == 422).count();
    assert_eq!((created, refused), (10, 40));
    assert_eq!(h.available(variant).await, 0);
    assert_eq!(h.order_count().await, before + 10);
}

/// A key with a limit of 20 hit 50 times concurrently lets exactly 20 through.
pub async fn race_rate_limit_is_exact(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let spec = KeySpec {
        name: "race".into(),
        abilities: vec![Ability::CatalogRead],
        expires_at: None,
        rate_limit: Some(20),
    };
    let key = h
        .engine
        .operator()
        .create_key(h.fixture.marketer_a, spec)
        .await
        .expect("key")
        .plaintext;
    let responses = race(50, |_| {
        let (h, key) = (h.clone(), key.clone());
        async move { h.get(&key, "/api/v1/me").await }
    })
    .await;
    assert_eq!(responses.iter().filter(|r| r.status == 200).count(), 20);
    assert_eq!(responses.iter().filter(|r| r.status == 429).count(), 30);
}

/// 30 tasks each place an order and cancel it at once, all at the same time: every answer is
/// 201 then 200 (the rows every order and cancel contend for, stock, counters and meter, are
/// locked in one order: no deadlock), and stock and the meter end where they should.
pub async fn race_places_and_cancels_never_deadlock(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let stock = h.available(h.fixture.plain_variant).await;
    let month = crate::model::BillingMonth::of(h.clock.now_utc());
    let meter = |h: Arc<Harness>| {
        let month = month.clone();
        async move {
            h.engine
                .operator()
                .meter(h.fixture.marketer_a, &month)
                .await
                .expect("meter")
                .order_operations
        }
    };
    let operations = meter(h.clone()).await;
    // Two variants: a cancel of one never waits on the other's stock row first.
    let featured = h.fixture.featured_variants[0];
    let featured_stock = h.available(featured).await;
    let responses = race(30, |i| {
        let h = h.clone();
        let mut body = h.order_body(1, "10");
        if i % 2 == 1 {
            body["lines"][0]["variant_id"] = json!(featured);
        }
        async move {
            let created = h.post("sk_demo_bench", "/api/v1/orders", &body).await;
            if created.status != 201 {
                return created;
            }
            let id = created.json()["data"]["id"].clone();
            h.post(
                "sk_demo_bench",
                &format!("/api/v1/orders/{id}/cancel"),
                &json!({}),
            )
            .await
        }
    })
    .await;
    for r in &responses {
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    }
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    assert_eq!(h.available(featured).await, featured_stock);
    assert_eq!(
        meter(h.clone()).await,
        operations + 60,
        "30 orders + 30 cancels"
    );
}

/// The platform changes an account's life state and its API status at the same moment, 30
/// times over: neither change is ever lost (each is one field-wise store operation, not a read
/// of the whole account followed by a write of it).
pub async fn race_account_state_and_api_status_both_stick(h: &Harness) {
    let operator = h.engine.operator();
    let account = h.fixture.marketer_b;
    for round in 0..30 {
        let (state, status) = if round % 2 == 0 {
            (AccountState::Suspended, ApiStatus::Rejected)
        } else {
            (AccountState::Active, ApiStatus::Approved)
        };
        let (a, b) = (operator.clone(), operator.clone());
        let state_change = tokio::spawn(async move { a.set_account_state(account, state).await });
        let status_change = tokio::spawn(async move { b.set_api_status(account, status).await });
        state_change.await.expect("task").expect("state set");
        status_change.await.expect("task").expect("status set");
        let now = h
            .engine
            .store()
            .account(account)
            .await
            .expect("read")
            .expect("account");
        assert_eq!(
            (now.state, now.api_status),
            (state, status),
            "round {round}: one of two concurrent changes was lost"
        );
    }
}

/// Prices change while orders are placed, and every order is priced at the variant's price
/// current at its stock write (the version-checked checkout: the engine prices from the
/// product records it kept, and the order's stock write refuses a record an edit replaced).
///
/// Exact, not probable: each edit sets a new, higher price, and its answer is the variant as
/// the edit found it under the variant's lock, its stock included. Every order takes one
/// piece, so the orders whose stock writes fell between edit k and edit k + 1 are exactly the
/// pieces taken between them (stock at edit k minus stock at edit k + 1), and each of them
/// must be priced at edit k's price. An order priced before an edit and written after it would
/// add one to an earlier price's count and take one from a later one's; no order can make up
/// for it, since none is priced at a price set after its write.
pub async fn race_orders_are_priced_at_their_stock_write(h: &Harness) {
    const ORDERS: i64 = 48;
    const EDITS: i64 = 8;
    let h = Arc::new(h.clone_handle());
    let variant = h.fixture.plain_variant;
    // The first order reads the product from the store; the engine keeps it for the others.
    let first = h
        .post("sk_demo_bench", "/api/v1/orders", &h.order_body(1, "10"))
        .await;
    assert_eq!(
        first.status,
        201,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    let stock = h.available(variant).await;
    let operator = h.engine.operator();
    operator
        .set_stock(variant, stock, ORDERS, None)
        .await
        .expect("stock");
    let base = Decimal::from(500);
    operator
        .update_variant(
            variant,
            VariantPatch {
                price: Some(base),
                ..VariantPatch::default()
            },
        )
        .await
        .expect("first price");
    // Edit k sets price base + k and sees the stock as it stands at that edit. The edits are
    // spread over the race by its progress (edit k once k ninths of the orders have answered),
    // not by the clock, so that orders are in flight at every edit however slow the machine.
    let answered = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let progress = answered.clone();
    let edits = tokio::spawn(async move {
        let mut seen = vec![(base, ORDERS)];
        for k in 1..=EDITS {
            while progress.load(std::sync::atomic::Ordering::SeqCst) < k * ORDERS / (EDITS + 1) {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
            let price = base + Decimal::from(k);
            let patch = VariantPatch {
                price: Some(price),
                ..VariantPatch::default()
            };
            let edited = operator.update_variant(variant, patch).await.expect("edit");
            seen.push((price, edited.available));
        }
        seen
    });
    let responses = race(ORDERS as usize, |i| {
        let (h, answered) = (h.clone(), answered.clone());
        async move {
            tokio::time::sleep(std::time::Duration::from_millis(i as u64)).await;
            let response = h
                .post("sk_demo_bench", "/api/v1/orders", &h.order_body(1, "10"))
                .await;
            answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            response
        }
    })
    .await;
    let seen = edits.await.expect("edits");
    // A second change found by an order's retry: a 409 that placed nothing (every order here
    // queues on one variant's row while the edits go on).
    for refused in responses.iter().filter(|r| r.status != 201) {
        refused.assert_conflict("catalogue_changed");
    }
    let mut priced_at: Vec<Decimal> = Vec::new();
    for created in responses.iter().filter(|r| r.status == 201) {
        let id = OrderId::new(created.json()["data"]["id"].as_i64().expect("order id"));
        let order = h.engine.store().order(None, id).await.expect("read");
        let line = &order.expect("the order").lines[0];
        priced_at.push(line.sell_price - line.profit);
    }
    let left = h.available(variant).await;
    assert_eq!(priced_at.len() as i64, ORDERS - left, "one piece per order");
    assert!(!priced_at.is_empty(), "orders were placed");
    for (k, &(price, at_edit)) in seen.iter().enumerate() {
        let at_next = seen.get(k + 1).map_or(left, |&(_, available)| available);
        let count = priced_at.iter().filter(|&&p| p == price).count() as i64;
        assert_eq!(
            count,
            at_edit - at_next,
            "orders priced at {price} (edits and the stock they saw: {seen:?}; prices: {priced_at:?})"
        );
    }
    assert_eq!(
        seen.iter()
            .map(|&(price, _)| priced_at.iter().filter(|&&p| p == price).count())
            .sum::<usize>(),
        priced_at.len(),
        "every order at one of the prices set"
    );
}
