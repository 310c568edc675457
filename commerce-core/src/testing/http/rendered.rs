//! The rendered-product, rendered-page and rendered-order caches never serve a stale product,
//! page or order: changes and reads interleaved at random, each read compared byte for byte
//! with an engine that keeps no rendering (and so no page).

use std::sync::Arc;

use bytes::Bytes;
use chrono::Duration;
use http::Method;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;
use serde_json::json;

use crate::Engine;
use crate::domain::keys::KeySpec;
use crate::domain::pieces::OutcomeReport;
use crate::model::*;

use super::harness::*;

/// Marketer A's key for load runs: its limit leaves room for both engines' reads.
const KEY: &str = "sk_demo_bench";

/// Every change that shows in a product's JSON (price, stock by the operator and by orders
/// and cancellations, stopping and restarting, warranties added and stopped, time passing),
/// and a write that changes nothing but the record (the same price again),
/// interleaved with reads of the list and of the product: each answer of the engine, which
/// keeps renderings and whole pages, equals byte for byte the answer of an engine over the
/// same store and clock that keeps neither. Three seeds, 40 steps each.
///
/// The pages read include two whose renderings a stopped or restarted product does not change
/// while their `total` changes: a page past the end (no product on it) and the first product
/// alone (when it is not the one stopped). First, before the random steps, the product is
/// stopped and restarted between reads of the page past the end, so a kept page reused
/// under another total fails at once.
pub async fn rendered_products_are_never_stale(h: &Harness) {
    let mut config = h.engine.config().clone();
    config.rendered_products_bytes = 0;
    let uncached = Engine::builder(h.engine.store().clone())
        .config(config)
        .clock(Arc::new(h.clock.clone()))
        .build()
        .expect("valid settings");
    let product = h.fixture.featured_product;
    let variant = h.fixture.featured_variants[0];
    let operator = h.engine.operator();
    let past_the_end = "/api/v1/products?per_page=100&page=50";
    for active in [false, true] {
        assert_same(h, &uncached, past_the_end, "before the change").await;
        operator
            .set_product_active(product, active)
            .await
            .expect("activity");
        let when = if active { "restarted" } else { "stopped" };
        assert_same(h, &uncached, past_the_end, when).await;
    }
    let mut orders = Vec::new();
    for seed in [7_u64, 1_234, 99_999] {
        let mut rng = StdRng::seed_from_u64(seed);
        for step in 0..40 {
            h.clock.advance(Duration::seconds(1));
            match rng.random_range(0..9) {
                0 => {
                    let price = Decimal::new(rng.random_range(10_000..99_999), 2);
                    let patch = VariantPatch {
                        price: Some(price),
                        ..VariantPatch::default()
                    };
                    operator
                        .update_variant(variant, patch)
                        .await
                        .expect("price");
                }
                1 => {
                    let received = rng.random_range(50..500);
                    let new = NewStockAdjustment::builder()
                        .variant_id(variant)
                        .delta(received)
                        .reason(StockReason::Received)
                        .build();
                    operator.adjust_stock(new).await.expect("stock");
                }
                2 => {
                    // Refused (422) while the product is stopped: nothing changes then.
                    let r = h.post(KEY, "/api/v1/orders", &order_of(h, variant)).await;
                    if r.status == 201 {
                        orders.push(r.json()["data"]["id"].as_i64().expect("order id"));
                    }
                }
                3 => {
                    if let Some(order) = orders.pop() {
                        let path = format!("/api/v1/orders/{order}/cancel");
                        h.post(KEY, &path, &json!({})).await.assert_ok("cancel");
                    }
                }
                4 => {
                    let active = rng.random_bool(0.5);
                    operator
                        .set_product_active(product, active)
                        .await
                        .expect("activity");
                }
                5 => {
                    let warranty = h.fixture.featured_warranties[step % 2];
                    let active = rng.random_bool(0.5);
                    operator
                        .set_warranty_active(warranty, active)
                        .await
                        .expect("warranty");
                }
                6 => {
                    operator
                        .add_warranty(product, warranty(step))
                        .await
                        .expect("new warranty");
                }
                7 => {
                    // The same price again within the same second: a new record that looks
                    // like the old one, but for its change time.
                    let same = h
                        .engine
                        .store()
                        .product(product)
                        .await
                        .expect("read")
                        .and_then(|p| p.variants.into_iter().find(|v| v.id == variant))
                        .expect("the variant");
                    let patch = VariantPatch {
                        price: Some(same.price),
                        ..VariantPatch::default()
                    };
                    operator
                        .update_variant(variant, patch)
                        .await
                        .expect("same price");
                }
                _ => h.clock.advance(Duration::minutes(5)),
            }
            for path in [
                "/api/v1/products?per_page=100".to_owned(),
                "/api/v1/products?per_page=1".to_owned(),
                past_the_end.to_owned(),
                format!("/api/v1/products/{product}"),
            ] {
                let when = format!("seed {seed}, step {step}");
                assert_same(h, &uncached, &path, &when).await;
            }
        }
    }
}

/// Every change that shows in an order's JSON (placing, cancelling through the API, the
/// operator's moves along the lifecycle, a partial delivery with its line outcomes, outcome
/// corrections, tracking URLs, and time passing, which ends delivered orders' hold and turns
/// their payout from `held` to `ready`) interleaved with reads of order lists (all, a small
/// page, a family, a status): each answer of the engine, which keeps orders' JSON, equals byte
/// for byte the answer of an engine over the same store and clock that keeps none. Three seeds,
/// 40 steps each; each kind of change must have happened at least once.
pub async fn rendered_orders_are_never_stale(h: &Harness) {
    let mut config = h.engine.config().clone();
    config.rendered_orders_bytes = 0;
    let uncached = Engine::builder(h.engine.store().clone())
        .config(config)
        .clock(Arc::new(h.clock.clone()))
        .build()
        .expect("valid settings");
    let operator = h.engine.operator();
    let mut orders: Vec<OrderId> = Vec::new();
    // How many changes of each kind took effect: placed, cancelled, moved, partially
    // delivered, corrected, tracked, hold ended.
    let mut done = [0_u32; 7];
    let paths = [
        "/api/v1/orders?per_page=100",
        "/api/v1/orders?per_page=2",
        "/api/v1/orders?family=delivered",
        "/api/v1/orders?status=order_pending&per_page=5",
    ];
    for seed in [11_u64, 2_024, 77_777] {
        let mut rng = StdRng::seed_from_u64(seed);
        for step in 0..40 {
            h.clock.advance(Duration::seconds(1));
            let pick = (!orders.is_empty()).then(|| orders[rng.random_range(0..orders.len())]);
            match (rng.random_range(0..8), pick) {
                (0, _) | (_, None) => {
                    let r = h
                        .post(KEY, "/api/v1/orders", &h.order_body(2, "10.00"))
                        .await;
                    if r.status == 201 {
                        orders.push(OrderId::new(r.json()["data"]["id"].as_i64().expect("id")));
                        done[0] += 1;
                    }
                }
                (1, Some(order)) => {
                    let path = format!("/api/v1/orders/{order}/cancel");
                    if h.post(KEY, &path, &json!({})).await.status == 200 {
                        done[1] += 1;
                    }
                }
                (2 | 3, Some(order)) => {
                    let status = operator.order(order).await.expect("order").status;
                    let next = match status {
                        OrderStatus::Pending => OrderStatus::Confirmed,
                        OrderStatus::Confirmed => OrderStatus::Preparing,
                        OrderStatus::Preparing => OrderStatus::Shipped,
                        _ => OrderStatus::Delivered,
                    };
                    let reason = Some(format!("خطوة {step}"));
                    if operator.move_order(order, next, reason).await.is_ok() {
                        done[2] += 1;
                    }
                }
                (4, Some(order)) => {
                    let current = operator.order(order).await.expect("order");
                    let line = current.lines[0].id;
                    match current.status {
                        // Shipped: delivered in part, one piece back.
                        OrderStatus::Shipped => {
                            let outcome = OutcomeReport::builder().delivered(1).returned(1).build();
                            let to = OrderStatus::PartiallyDelivered;
                            if operator
                                .move_order_with_outcomes(order, to, None, vec![(line, outcome)])
                                .await
                                .is_ok()
                            {
                                done[3] += 1;
                            }
                        }
                        // Settled: a correction, one piece returned or none.
                        OrderStatus::Delivered | OrderStatus::PartiallyDelivered => {
                            let returned =
                                OutcomeReport::builder().returned((step % 2) as i64).build();
                            if operator
                                .set_line_outcomes(order, vec![(line, returned)])
                                .await
                                .is_ok()
                            {
                                done[4] += 1;
                            }
                        }
                        // Earlier: a step towards shipping.
                        status => {
                            let next = match status {
                                OrderStatus::Pending => OrderStatus::Confirmed,
                                _ => OrderStatus::Shipped,
                            };
                            if operator.move_order(order, next, None).await.is_ok() {
                                done[2] += 1;
                            }
                        }
                    }
                }
                (5, Some(order)) => {
                    let url = format!("https://track.example/{seed}/{step}");
                    operator
                        .set_tracking_url(order, Some(url))
                        .await
                        .expect("tracking");
                    done[5] += 1;
                }
                (6, _) => {
                    h.clock.advance(Duration::days(rng.random_range(1..10)));
                    done[6] += 1;
                }
                _ => h.clock.advance(Duration::hours(3)),
            }
            for path in paths {
                let when = format!("seed {seed}, step {step}");
                assert_same(h, &uncached, path, &when).await;
            }
        }
    }
    assert!(
        done.iter().all(|&n| n > 0),
        "every kind of change happened (placed, cancelled, moved, partially delivered, \
         corrected, tracked, hold ended): {done:?}"
    );
}

/// `GET path` answers the same status and bytes from the harness's engine as from `uncached`.
async fn assert_same(h: &Harness, uncached: &Engine, path: &str, when: &str) {
    // One request id for both, so that a 404 (the product stopped) is the same bytes.
    let id = [("request-id", "req-rendered-products")];
    let cached = h
        .request(Method::GET, Some(KEY), path, Bytes::new(), &id)
        .await;
    let request = build_request(Method::GET, Some(KEY), path, Bytes::new(), &id);
    let fresh = uncached.handle(request).await;
    assert_eq!(cached.status, fresh.status(), "{path}, {when}");
    assert_eq!(
        &cached.body,
        fresh.body(),
        "{path}, {when}: the kept rendering or page is stale"
    );
}

fn order_of(h: &Harness, variant: VariantId) -> serde_json::Value {
    let mut body = h.order_body(1, "10.00");
    body["lines"] = json!([{"variant_id": variant, "quantity": 1, "profit": "10.00"}]);
    body
}

fn warranty(step: usize) -> NewWarranty {
    NewWarranty {
        name: format!("ضمان رقم {step}"),
        admin_fee: Decimal::new(1_000 + step as i64, 2),
        percent: Decimal::new(5, 0),
        price_from: Decimal::new(1_000, 2),
        duration_days: 30,
        terms: "الضمان بيغطي عيوب الصناعة.".into(),
        icon_url: None,
    }
}

/// `GET /me`'s kept body follows every change of its key, made through this engine or through
/// another engine over the same store (a second instance, which keeps bodies of its own): each
/// answer of either equals byte for byte the answer of an engine that never answered before.
/// The key's expiry is set by the other instance, then cleared by this one, while both keep
/// the body of the key's earlier state.
pub async fn rendered_me_is_never_stale(h: &Harness) {
    let instance = || {
        Engine::builder(h.engine.store().clone())
            .config(h.engine.config().clone())
            .clock(Arc::new(h.clock.clone()))
            .build()
            .expect("valid settings")
    };
    let other = instance();
    let created = other
        .operator()
        .create_key(
            h.fixture.marketer_a,
            KeySpec::new(
                "مفتاح المتجر".to_owned(),
                vec![Ability::CatalogRead, Ability::OrdersRead],
                None,
                None,
            ),
        )
        .await
        .expect("key");
    let key = created.plaintext.as_str();
    let id = created.key.id;
    let expiry = h.clock.now_utc() + Duration::days(30);
    let steps: [(&Engine, Option<chrono::DateTime<chrono::Utc>>); 3] = [
        (&other, Some(expiry)),
        (&h.engine, None),
        (&other, Some(expiry)),
    ];
    for (step, (writer, expires_at)) in [(None, None)]
        .into_iter()
        .chain(steps.map(|(w, e)| (Some(w), e)))
        .enumerate()
    {
        if let Some(writer) = writer {
            writer
                .operator()
                .set_key_terms(id, expires_at, 60)
                .await
                .expect("terms");
        }
        let fresh = me_of(&instance(), key).await;
        assert_eq!(fresh.status(), 200, "step {step}");
        let shown: serde_json::Value = serde_json::from_slice(fresh.body()).expect("json");
        assert_eq!(
            shown["data"]["token"]["expires_at"].is_null(),
            expires_at.is_none(),
            "step {step}: {shown}"
        );
        let here = h.get(key, "/api/v1/me").await;
        assert_eq!(here.status, 200, "step {step}");
        assert_eq!(
            &here.body,
            fresh.body(),
            "step {step}: this instance's /me is stale"
        );
        let there = me_of(&other, key).await;
        assert_eq!(
            there.body(),
            fresh.body(),
            "step {step}: the other instance's /me is stale"
        );
    }
}

/// `GET /me` with `key`, answered by `engine` itself.
async fn me_of(engine: &Engine, key: &str) -> http::Response<Bytes> {
    let request = build_request(Method::GET, Some(key), "/api/v1/me", Bytes::new(), &[]);
    engine.handle(request).await
}
