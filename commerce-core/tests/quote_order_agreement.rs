//! Property: for any lines, the quote and the order registered from the same body agree to the
//! piastre, and the order's figures satisfy the pricing invariants.

use std::sync::Arc;

use commerce_core::store::MemoryStore;
use commerce_core::testing::http::Harness;
use proptest::prelude::*;
use rust_decimal::Decimal;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct Line {
    variant: usize,
    quantity: i64,
    profit_piastres: i64,
    as_string: bool,
    warranties: Vec<usize>,
}

fn line() -> impl Strategy<Value = Line> {
    (
        0usize..3,
        1i64..=5,
        0i64..=2_000_000,
        any::<bool>(),
        prop::sample::subsequence(vec![0usize, 1], 0..=2),
    )
        .prop_map(
            |(variant, quantity, profit_piastres, as_string, warranties)| Line {
                variant,
                quantity,
                profit_piastres,
                as_string,
                warranties,
            },
        )
}

fn amount(v: &Value) -> Decimal {
    v.as_str().expect("money string").parse().expect("decimal")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn quote_and_order_agree_to_the_piastre(lines in prop::collection::vec(line(), 1..=4)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let h = Harness::bare(Arc::new(MemoryStore::new())).await;
            let f = &h.fixture;
            // The featured product's two stocked variants carry its warranties; the plain one has none.
            let variants = [f.featured_variants[0], f.featured_variants[1], f.plain_variant];
            let body_lines: Vec<Value> = lines.iter().map(|l| {
                let profit = Decimal::new(l.profit_piastres, 2);
                let warranty_ids: Vec<commerce_core::model::WarrantyId> = if l.variant < 2 { l.warranties.iter().map(|w| f.featured_warranties[*w]).collect() } else { Vec::new() };
                json!({
                    "variant_id": variants[l.variant],
                    "quantity": l.quantity,
                    "profit": if l.as_string { json!(profit.to_string()) } else { serde_json::from_str::<Value>(&profit.to_string()).unwrap() },
                    "warranty_ids": warranty_ids,
                })
            }).collect();
            let mut body = json!({"shipping_option_id": f.standard_shipping, "governorate_id": f.cairo, "lines": body_lines});
            let quote = h.post("sk_demo_bench", "/api/v1/shipping/quote", &body).await;
            prop_assert_eq!(quote.status.as_u16(), 200, "{}", String::from_utf8_lossy(&quote.body));
            body["full_name"] = json!("اختبار");
            body["phone"] = json!("01012345678");
            body["address"] = json!("عنوان");
            let order = h.post("sk_demo_bench", "/api/v1/orders", &body).await;
            prop_assert_eq!(order.status.as_u16(), 201);
            let q = quote.json()["data"].clone();
            let t = order.json()["data"]["totals"].clone();
            for field in ["products", "warranties", "delivery_charge", "customer_total", "profit", "income_tax", "net_profit"] {
                prop_assert_eq!(&q[field], &t[field], "{}", field);
            }
            prop_assert_eq!(amount(&t["net_profit"]) + amount(&t["income_tax"]), amount(&t["profit"]));
            prop_assert_eq!(amount(&t["customer_total"]), amount(&t["products"]) + amount(&t["warranties"]) + amount(&t["delivery_charge"]));
            let order_lines = order.json()["data"]["lines"].clone();
            let line_products: Decimal = order_lines.as_array().unwrap().iter().map(|l| amount(&l["sell_price"]) * Decimal::from(l["quantity"].as_i64().unwrap())).sum();
            prop_assert_eq!(line_products, amount(&t["products"]));
            let line_warranties: Decimal = order_lines.as_array().unwrap().iter().flat_map(|l| l["warranties"].as_array().unwrap().clone()).map(|w| amount(&w["total"])).sum();
            prop_assert_eq!(line_warranties, amount(&t["warranties"]));
            Ok(())
        })?;
    }
}
