//! Shipping options and the shipping quote.

use serde_json::json;

use super::fixtures::*;
use super::harness::*;

/// Shipping options list governorates with money strings and the 500.00 example.
pub async fn shipping_options_show_rates_and_example(h: &Harness) {
    let r = h.get(A, "/api/v1/shipping/options").await;
    assert_eq!(r.status, 200);
    let options = r.json()["data"].as_array().cloned().expect("array");
    assert_eq!(options.len(), 2);
    let standard = options
        .iter()
        .find(|o| o["id"] == h.fixture.standard_shipping.get())
        .expect("standard");
    assert_eq!(standard["governorates"].as_array().map(Vec::len), Some(27));
    let cairo = standard["governorates"]
        .as_array()
        .expect("array")
        .iter()
        .find(|g| g["id"] == h.fixture.cairo.get())
        .expect("cairo")
        .clone();
    assert_eq!(cairo["name"], "القاهرة");
    assert_eq!(cairo["delivery_charge"], "45.00");
    assert_eq!(cairo["shipping_tax_percent"], "14.00");
    assert_eq!(cairo["total_due_tax_percent"], "1.00");
    // 45 x 1.14 + 500 x 1% = 51.30 + 5.00
    assert_eq!(
        cairo["example"],
        json!({"goods": "500.00", "delivery_charge": "56.30"})
    );
    let express = options
        .iter()
        .find(|o| o["id"] == h.fixture.express_shipping.get())
        .expect("express");
    assert_eq!(express["governorates"].as_array().map(Vec::len), Some(3));
}

/// The quote computes every figure to the piastre.
pub async fn quote_computes_to_the_piastre(h: &Harness) {
    let r = h
        .post(A, "/api/v1/shipping/quote", &featured_quote_body(h))
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // sale 249.99 + 50.01 = 300.00; x2 = 600.00; warranty 15 + 300 x 5% = 30.00, x2 = 60.00;
    // delivery 45 x 1.14 + 660 x 1% = 57.90; profit 100.02; commission 4.0008 -> 4.00.
    assert_eq!(
        r.json()["data"],
        json!({
            "shipping_option_id": h.fixture.standard_shipping,
            "governorate_id": h.fixture.cairo,
            "products": "600.00",
            "warranties": "60.00",
            "delivery_charge": "57.90",
            "customer_total": "717.90",
            "profit": "100.02",
            "income_tax": "4.00",
            "net_profit": "96.02",
        })
    );
    // Without profit the line's profit is 0.
    let no_profit = json!({"shipping_option_id": h.fixture.standard_shipping, "governorate_id": h.fixture.cairo, "lines": [{"variant_id": h.fixture.plain_variant, "quantity": 1}]});
    let r = h.post(A, "/api/v1/shipping/quote", &no_profit).await.json();
    assert_eq!(r["data"]["profit"], "0.00");
    assert_eq!(r["data"]["income_tax"], "0.00");
}

/// The quote validates exactly as checkout: shipping, governorate, variant, warranty, stock.
pub async fn quote_validates_like_checkout(h: &Harness) {
    let f = &h.fixture;
    let cases = [
        (
            json!({}),
            vec!["governorate_id", "lines", "shipping_option_id"],
        ),
        (
            json!({"shipping_option_id": 999999, "governorate_id": f.cairo, "lines": [{"variant_id": f.plain_variant, "quantity": 1}]}),
            vec!["shipping_option_id"],
        ),
        (
            json!({"shipping_option_id": f.express_shipping, "governorate_id": f.aswan, "lines": [{"variant_id": f.plain_variant, "quantity": 1}]}),
            vec!["governorate_id"],
        ),
        (
            json!({"shipping_option_id": f.standard_shipping, "governorate_id": f.cairo, "lines": [{"variant_id": 999999, "quantity": 1}]}),
            vec!["lines.0.variant_id"],
        ),
        (
            json!({"shipping_option_id": f.standard_shipping, "governorate_id": f.cairo, "lines": [{"variant_id": f.featured_variants[0], "quantity": 1, "warranty_ids": [f.foreign_warranty]}]}),
            vec!["lines.0.warranty_ids"],
        ),
        (
            json!({"shipping_option_id": f.standard_shipping, "governorate_id": f.cairo, "lines": [{"variant_id": f.plain_variant, "quantity": 1}, {"variant_id": f.featured_variants[2], "quantity": 1}]}),
            vec!["lines.1.quantity"],
        ),
        (
            json!({"shipping_option_id": "1", "governorate_id": f.cairo, "lines": "x"}),
            vec!["lines", "shipping_option_id"],
        ),
    ];
    for (body, fields) in cases {
        let r = h.post(A, "/api/v1/shipping/quote", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), fields, "{body}");
    }
}
