//! The rendered-product and rendered-page caches never serve a stale product or page: changes
//! and reads interleaved at random, each read compared byte for byte with an engine that keeps
//! no rendering (and so no page).

use std::sync::Arc;

use bytes::Bytes;
use chrono::Duration;
use http::Method;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;
use serde_json::json;

use crate::Engine;
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
    config.rendered_products = 0;
    let uncached = Engine::with(h.engine.store().clone(), config, Arc::new(h.clock.clone()))
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
                    let patch = VariantPatch {
                        available: Some(rng.random_range(50..500)),
                        ..VariantPatch::default()
                    };
                    operator
                        .update_variant(variant, patch)
                        .await
                        .expect("stock");
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
