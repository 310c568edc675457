//! Helpers the cases share: the sandbox keys, amounts, a repricing, a quote body, races.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use crate::model::*;

use super::harness::*;

pub(super) const A: &str = "sk_demo_marketer";
pub(super) const B: &str = "sk_demo_marketer_b";
/// Marketer A's key with `catalog:read` only.
pub(super) const CATALOG_ONLY: &str = "sk_demo_catalog_only";

pub(super) fn money(v: &Value) -> &str {
    v.as_str().unwrap_or("<not a string>")
}

/// Moves the clock an hour on and gives the plain variant `price`: the instant of the change.
pub(super) async fn reprice_plain_variant_an_hour_later(h: &Harness, price: &str) -> DateTime<Utc> {
    h.clock.advance(Duration::hours(1));
    let at = h.clock.now_utc();
    h.engine
        .operator()
        .update_variant(
            h.fixture.plain_variant,
            VariantPatch {
                price: Some(price.parse().expect("decimal")),
                ..VariantPatch::default()
            },
        )
        .await
        .expect("operator");
    at
}

pub(super) fn featured_quote_body(h: &Harness) -> Value {
    json!({
        "shipping_option_id": h.fixture.standard_shipping,
        "governorate_id": h.fixture.cairo,
        "lines": [{"variant_id": h.fixture.featured_variants[0], "quantity": 2, "profit": "50.01", "warranty_ids": [h.fixture.featured_warranties[0]]}],
    })
}

pub(super) async fn race<F, Fut>(count: usize, task: F) -> Vec<TestResponse>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = TestResponse> + Send + 'static,
{
    let handles: Vec<_> = (0..count).map(|i| tokio::spawn(task(i))).collect();
    let mut responses = Vec::with_capacity(count);
    for handle in handles {
        responses.push(handle.await.expect("task finished"));
    }
    responses
}

pub(super) fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
