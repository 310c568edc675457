//! The catalogue after it is made: what a marketer sees of the supply side (nothing).

use serde_json::json;

use super::fixtures::*;
use super::harness::*;

/// Fails when `r`'s body names the supply side anywhere.
fn assert_no_supply_side(r: &TestResponse, what: &str) {
    assert!(r.status.is_success(), "{what}: {}", r.status);
    let body = String::from_utf8_lossy(&r.body);
    for key in ["supplier", "supply_price"] {
        assert!(!body.contains(key), "{what} shows `{key}`: {body}");
    }
}

/// A marketer never sees a product's supplier or a variant's supply price: not on the
/// products (the sandbox's featured product is the demo supplier's), not on the order lines
/// that keep them.
pub async fn marketer_answers_never_show_the_supply_side(h: &Harness) {
    let featured = h.fixture.featured_product;
    let product = h.get(A, &format!("/api/v1/products/{featured}")).await;
    assert_no_supply_side(&product, "the featured product");
    assert_no_supply_side(&h.get(A, "/api/v1/products?per_page=100").await, "products");
    let mut body = h.order_body(1, "10");
    body["lines"] =
        json!([{"variant_id": h.fixture.featured_variants[0], "quantity": 2, "profit": "15"}]);
    let created = h.post(A, "/api/v1/orders", &body).await;
    assert_eq!(created.status, 201, "{:?}", created.json());
    assert_no_supply_side(&created, "the created order");
    let id = created.json()["data"]["id"].as_i64().expect("an id");
    let order = h.get(A, &format!("/api/v1/orders/{id}")).await;
    assert_no_supply_side(&order, "the order");
    assert_no_supply_side(&h.get(A, "/api/v1/orders").await, "orders");
    // The order keeps the snapshot all the same.
    let stored = h
        .engine
        .operator()
        .order(crate::model::OrderId::new(id))
        .await
        .expect("the order");
    assert!(stored.lines[0].supplier_id.is_some());
    assert!(stored.lines[0].supply_price > rust_decimal::Decimal::ZERO);
}
