//! The supply side: a supplier's variants and quotes, and what each side never sees.

use chrono::Duration;
use http::Method;
use serde_json::{Value, json};

use crate::model::*;

use super::fixtures::*;
use super::harness::*;

/// The sandbox's supplier key.
pub(crate) const SUPPLIER: &str = "sk_demo_supplier";

/// The supplier's variants as `GET /supply/variants` lists them.
async fn supply_variants(h: &Harness) -> Vec<Value> {
    let r = h
        .get(SUPPLIER, "/api/v1/supply/variants?per_page=100")
        .await;
    r.assert_ok("supply variants");
    r.json()["data"].as_array().cloned().unwrap_or_default()
}

/// A variant of the supplier's with no pending quote: its id, its product's id and its stock.
pub(crate) async fn free_variant(h: &Harness) -> (i64, i64, i64) {
    let variants = supply_variants(h).await;
    let free = variants
        .iter()
        .find(|v| v["pending_quote_id"].is_null())
        .expect("the supplier has a variant without a pending quote");
    (
        free["id"].as_i64().expect("id"),
        free["product"]["id"].as_i64().expect("product id"),
        free["available"].as_i64().expect("available"),
    )
}

fn text(r: &TestResponse) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

pub(crate) fn quote_body(variant: i64, price: &str, quantity: i64) -> Value {
    json!({"variant_id": variant, "unit_price": price, "quantity": quantity})
}

pub(crate) async fn post_quote(h: &Harness, body: &Value, key: Option<&str>) -> TestResponse {
    let headers: Vec<(&str, &str)> = key.map(|k| ("idempotency-key", k)).into_iter().collect();
    h.request(
        Method::POST,
        Some(SUPPLIER),
        "/api/v1/quotes",
        body.to_string(),
        &headers,
    )
    .await
}

/// Every text of `body` (keys and values), to assert what a side never reads.
fn keys_of(body: &Value, out: &mut Vec<String>) {
    match body {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys_of(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys_of(v, out)),
        _ => {}
    }
}

fn assert_no_keys(body: &Value, forbidden: &[&str], context: &str) {
    let mut keys = Vec::new();
    keys_of(body, &mut keys);
    for key in forbidden {
        assert!(!keys.iter().any(|k| k == key), "{context}: {key} in {body}");
    }
}

/// Only a supplier reaches the supply side: a marketer's key is 403 `wrong_side` on every
/// supply endpoint, and a supplier key without `quotes:write` is `forbidden_ability` on the
/// writes.
pub async fn supply_endpoints_are_for_suppliers_only(h: &Harness) {
    for (method, path) in [
        (Method::GET, "/api/v1/supply/variants"),
        (Method::POST, "/api/v1/quotes"),
        (Method::GET, "/api/v1/quotes"),
        (Method::GET, "/api/v1/quotes/1"),
        (Method::POST, "/api/v1/quotes/1/withdraw"),
        (Method::POST, "/api/v1/sandbox/quotes/1/decision"),
    ] {
        h.request(method.clone(), Some(A), path, "{}", &[])
            .await
            .assert_error(403, "wrong_side");
    }
    let read_only = h
        .engine
        .operator()
        .create_key(
            h.fixture.supplier,
            crate::domain::keys::KeySpec::new(
                "قراءة".to_owned(),
                vec![Ability::QuotesRead],
                None,
                None,
            ),
        )
        .await
        .expect("key");
    let key = read_only.plaintext.as_str();
    let r = h.get(key, "/api/v1/quotes").await;
    r.assert_ok("quotes:read lists");
    let (variant, _, _) = free_variant(h).await;
    h.request(
        Method::POST,
        Some(key),
        "/api/v1/quotes",
        quote_body(variant, "10.00", 1).to_string(),
        &[],
    )
    .await
    .assert_error(403, "forbidden_ability");
}

/// A quote's whole life: the supplier's variants, a quote made (201, `Location`, every
/// field), read and listed, accepted through test mode; the variant's `available` grows by
/// its quantity on the marketer's `GET /products/{id}`, and its supply price is the quote's.
pub async fn a_quote_is_made_accepted_and_received(h: &Harness) {
    // The seed: one quote of each decision, as docs/sandbox.md says.
    assert_eq!(h.fixture.supplier_quotes.len(), 3);
    for status in ["pending", "accepted", "rejected"] {
        let r = h
            .get(SUPPLIER, &format!("/api/v1/quotes?status={status}"))
            .await;
        assert_eq!(r.json()["meta"]["total"], 1, "{status}");
    }
    let variants = supply_variants(h).await;
    assert!(!variants.is_empty(), "the demo supplier owns products");
    for v in &variants {
        let mut keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "available",
                "id",
                "label",
                "pending_quote_id",
                "product",
                "supply_price"
            ]
        );
        assert!(v["product"]["title"].is_string() && v["product"]["id"].is_i64());
        assert!(money(&v["supply_price"]).contains('.'));
    }
    let (variant, product, before) = free_variant(h).await;
    let until = crate::time::cairo_timestamp(h.clock.now_utc() + Duration::days(30));
    let mut body = quote_body(variant, "37.25", 40);
    body["valid_until"] = json!(until);
    body["note"] = json!("أول دفعة");
    let r = post_quote(h, &body, None).await;
    assert_eq!(r.status, 201, "{}", text(&r));
    assert_eq!(r.header("idempotent-replayed"), Some("false"));
    let quote = r.json()["data"].clone();
    let id = quote["id"].as_i64().expect("id");
    assert_eq!(
        r.header("location"),
        Some(format!("{}/api/v1/quotes/{id}", h.mount).as_str())
    );
    assert_eq!(quote["variant"]["id"], variant);
    assert_eq!(quote["variant"]["product_id"], product);
    assert!(quote["variant"]["title"].is_string() && quote["variant"]["label"].is_string());
    assert_eq!(quote["unit_price"], "37.25");
    assert_eq!(quote["quantity"], 40);
    assert_eq!(quote["status"]["key"], "pending");
    assert!(quote["status"]["label"].is_string());
    assert_eq!(quote["valid_until"], until);
    assert_eq!(quote["note"], "أول دفعة");
    assert_eq!(quote["decision_note"], Value::Null);
    assert_eq!(quote["decided_at"], Value::Null);
    assert_eq!(quote["created_at"], h.clock_stamp());
    assert_eq!(quote["updated_at"], h.clock_stamp());
    let shown = h.get(SUPPLIER, &format!("/api/v1/quotes/{id}")).await;
    assert_eq!(shown.json()["data"], quote);
    let listed = h
        .get(SUPPLIER, "/api/v1/quotes?status=pending")
        .await
        .json();
    assert!(
        listed["data"]
            .as_array()
            .expect("list")
            .iter()
            .any(|q| q["id"] == id)
    );
    let pending = supply_variants(h).await;
    let row = pending.iter().find(|v| v["id"] == variant).expect("listed");
    assert_eq!(row["pending_quote_id"], id);

    h.clock.advance(Duration::minutes(5));
    let decided = h
        .post(
            SUPPLIER,
            &format!("/api/v1/sandbox/quotes/{id}/decision"),
            &json!({"decision": "accept", "note": "تمام"}),
        )
        .await;
    decided.assert_ok("accepted");
    let accepted = decided.json()["data"].clone();
    assert_eq!(accepted["status"]["key"], "accepted");
    assert_eq!(accepted["decision_note"], "تمام");
    assert_eq!(accepted["decided_at"], h.clock_stamp());
    let product_view = h.get(A, &format!("/api/v1/products/{product}")).await;
    product_view.assert_ok("product");
    let shown = product_view.json()["data"]["variants"]
        .as_array()
        .expect("variants")
        .iter()
        .find(|v| v["id"] == variant)
        .cloned()
        .expect("variant shown");
    assert_eq!(shown["stock_hint"], json!((before + 40).min(100)));
    assert_eq!(h.available(VariantId::new(variant)).await, before + 40);
    assert_no_keys(
        &product_view.json(),
        &["supply_price", "supplier", "supplier_id"],
        "product",
    );
    let after = supply_variants(h).await;
    let row = after.iter().find(|v| v["id"] == variant).expect("listed");
    assert_eq!(
        (row["available"].as_i64(), &row["supply_price"]),
        (Some(before + 40), &json!("37.25"))
    );
    assert_eq!(row["pending_quote_id"], Value::Null);
    let again = h
        .post(
            SUPPLIER,
            &format!("/api/v1/sandbox/quotes/{id}/decision"),
            &json!({"decision": "reject"}),
        )
        .await;
    again.assert_conflict("move_not_allowed");
}

/// The input rules of `POST /quotes` and the 409 of a variant that has a pending quote.
pub async fn quote_input_rules_are_enforced(h: &Harness) {
    let (variant, _, _) = free_variant(h).await;
    let now = h.clock.now_utc();
    let stamp = |d: Duration| crate::time::cairo_timestamp(now + d);
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "variant_id"),
        (json!({"variant_id": variant, "quantity": 1}), "unit_price"),
        (quote_body(variant, "0.00", 1), "unit_price"),
        (quote_body(variant, "-1", 1), "unit_price"),
        (quote_body(variant, "1.005", 1), "unit_price"),
        (
            json!({"variant_id": variant, "unit_price": "5.00"}),
            "quantity",
        ),
        (quote_body(variant, "5.00", 0), "quantity"),
        (quote_body(variant, "5.00", 100_001), "quantity"),
        (
            json!({"variant_id": "x", "unit_price": "5.00", "quantity": 1}),
            "variant_id",
        ),
        (
            json!({"variant_id": variant, "unit_price": "5.00", "quantity": 1, "valid_until": stamp(Duration::seconds(-1))}),
            "valid_until",
        ),
        (
            json!({"variant_id": variant, "unit_price": "5.00", "quantity": 1, "valid_until": stamp(Duration::days(91))}),
            "valid_until",
        ),
        (
            json!({"variant_id": variant, "unit_price": "5.00", "quantity": 1, "valid_until": "tomorrow"}),
            "valid_until",
        ),
        (
            json!({"variant_id": variant, "unit_price": "5.00", "quantity": 1, "note": "ن".repeat(501)}),
            "note",
        ),
        (
            json!({"variant_id": variant, "unit_price": "5.00", "quantity": 1, "note": "a\u{0}b"}),
            "note",
        ),
        (
            quote_body(h.fixture.plain_variant.get(), "5.00", 1),
            "variant_id",
        ),
        (quote_body(999_999, "5.00", 1), "variant_id"),
    ];
    for (body, field) in cases {
        let r = post_quote(h, &body, None).await;
        r.assert_error(422, "validation_failed");
        assert!(
            r.error_fields().contains(&field.to_owned()),
            "{body}: {:?}",
            r.error_fields()
        );
        assert_eq!(r.header("idempotent-replayed"), Some("false"));
    }
    let at_limit = json!({"variant_id": variant, "unit_price": 5, "quantity": 100_000, "valid_until": stamp(Duration::days(90)), "note": "ن".repeat(500)});
    let first = post_quote(h, &at_limit, None).await;
    assert_eq!(first.status, 201, "{}", text(&first));
    let id = first.json()["data"]["id"].clone();
    let second = post_quote(h, &quote_body(variant, "6.00", 2), None).await;
    second.assert_conflict("quote_pending");
    assert_eq!(second.json()["error"]["existing_quote_id"], id);
}

/// The replay of `POST /quotes` with its `Idempotency-Key` answers the first response
/// whatever the clock says now: `valid_until` an hour ahead, the clock two hours on (the key
/// lives 24 hours), the same request is the first 201 again (not a 422 on `valid_until`).
pub async fn a_quote_replay_ignores_the_clock(h: &Harness) {
    let (variant, _, _) = free_variant(h).await;
    let mut body = quote_body(variant, "12.00", 3);
    body["valid_until"] = json!(crate::time::cairo_timestamp(
        h.clock.now_utc() + Duration::hours(1)
    ));
    let first = post_quote(h, &body, Some("quote-clock")).await;
    assert_eq!(first.status, 201, "{}", text(&first));
    h.clock.advance(Duration::hours(2));
    let replay = post_quote(h, &body, Some("quote-clock")).await;
    assert_eq!(replay.status, 201, "{}", text(&replay));
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        replay.json_without_request_id(),
        first.json_without_request_id()
    );
    // Without the key, the same body is checked against the clock now.
    let fresh = post_quote(h, &body, None).await;
    fresh.assert_error(422, "validation_failed");
    assert_eq!(fresh.error_fields(), ["valid_until"]);
    // And a price above the most a quote may ask is refused on `unit_price`.
    let dear = post_quote(h, &quote_body(variant, "1000000.01", 1), None).await;
    dear.assert_error(422, "validation_failed");
    assert_eq!(dear.error_fields(), ["unit_price"]);
}

/// `POST /quotes` with an `Idempotency-Key` replays its first answer byte for byte; the same
/// key with another body is 409 `idempotency_key_reused`.
pub async fn quote_idempotency_replays_byte_for_byte(h: &Harness) {
    let (variant, _, _) = free_variant(h).await;
    let body = quote_body(variant, "12.00", 3);
    let first = post_quote(h, &body, Some("quote-1")).await;
    assert_eq!(first.status, 201, "{}", text(&first));
    assert_eq!(first.header("idempotent-replayed"), Some("false"));
    h.clock.advance(Duration::minutes(1));
    let replay = post_quote(h, &body, Some("quote-1")).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        replay.json_without_request_id(),
        first.json_without_request_id()
    );
    assert_eq!(replay.header("location"), first.header("location"));
    let quotes = h.get(SUPPLIER, "/api/v1/quotes").await.json();
    let made = quotes["data"]
        .as_array()
        .expect("list")
        .iter()
        .filter(|q| q["variant"]["id"] == variant && q["status"]["key"] == "pending")
        .count();
    assert_eq!(made, 1);
    let other = post_quote(h, &quote_body(variant, "13.00", 3), Some("quote-1")).await;
    other.assert_conflict("idempotency_key_reused");
    let refused = post_quote(h, &quote_body(variant, "13.00", 3), Some("quote-2")).await;
    refused.assert_conflict("quote_pending");
    let retried = post_quote(h, &quote_body(variant, "13.00", 3), Some("quote-2")).await;
    retried.assert_conflict("quote_pending");
    assert_eq!(retried.header("idempotent-replayed"), Some("false"));
}

/// Withdraw a pending quote once (then 409 `not_withdrawable`), never another account's
/// (404); a quote past its `valid_until` is `expired` and can no longer be withdrawn.
pub async fn quotes_are_withdrawn_once_and_expire(h: &Harness) {
    let (variant, _, _) = free_variant(h).await;
    let q = post_quote(h, &quote_body(variant, "8.00", 2), None)
        .await
        .json()["data"]
        .clone();
    let id = q["id"].as_i64().expect("id");
    let withdrawn = h
        .post(
            SUPPLIER,
            &format!("/api/v1/quotes/{id}/withdraw"),
            &json!({}),
        )
        .await;
    withdrawn.assert_ok("withdrawn");
    assert_eq!(withdrawn.json()["data"]["status"]["key"], "withdrawn");
    h.post(
        SUPPLIER,
        &format!("/api/v1/quotes/{id}/withdraw"),
        &json!({}),
    )
    .await
    .assert_conflict("not_withdrawable");
    h.post(
        SUPPLIER,
        &format!("/api/v1/sandbox/quotes/{id}/decision"),
        &json!({"decision": "accept"}),
    )
    .await
    .assert_conflict("move_not_allowed");
    h.post(
        SUPPLIER,
        &format!("/api/v1/sandbox/quotes/{id}/decision"),
        &json!({"decision": "maybe"}),
    )
    .await
    .assert_error(422, "validation_failed");
    // Another supplier's quote is not found.
    let op = h.engine.operator();
    let other = NewAccount::builder()
        .name("مورد تاني".to_owned())
        .email("other-supplier@example.com".to_owned())
        .phone("01112223334".to_owned())
        .side(Side::Supplier)
        .state(AccountState::Active)
        .api_status(ApiStatus::Approved)
        .build();
    let other = op.create_account(other).await.expect("account");
    let key = op
        .create_key(
            other.id,
            crate::domain::keys::KeySpec::new(
                "مورد".to_owned(),
                vec![Ability::QuotesRead, Ability::QuotesWrite],
                None,
                None,
            ),
        )
        .await
        .expect("key");
    let key = key.plaintext.as_str();
    h.get(key, &format!("/api/v1/quotes/{id}"))
        .await
        .assert_error(404, "not_found");
    h.post(key, &format!("/api/v1/quotes/{id}/withdraw"), &json!({}))
        .await
        .assert_error(404, "not_found");
    assert_eq!(
        h.get(key, "/api/v1/quotes").await.json()["meta"]["total"],
        0
    );
    assert_eq!(
        h.get(key, "/api/v1/supply/variants").await.json()["meta"]["total"],
        0
    );
    // Expiry.
    let until = crate::time::cairo_timestamp(h.clock.now_utc() + Duration::days(1));
    let mut body = quote_body(variant, "9.00", 2);
    body["valid_until"] = json!(until);
    let q = post_quote(h, &body, None).await.json()["data"].clone();
    let id = q["id"].as_i64().expect("id");
    h.clock.advance(Duration::days(2));
    let expired = h
        .get(SUPPLIER, &format!("/api/v1/quotes/{id}"))
        .await
        .json()["data"]
        .clone();
    assert_eq!(expired["status"]["key"], "expired");
    assert_eq!(expired["updated_at"], until);
    let listed = h
        .get(SUPPLIER, "/api/v1/quotes?status=expired")
        .await
        .json();
    assert!(
        listed["data"]
            .as_array()
            .expect("list")
            .iter()
            .any(|q| q["id"] == id)
    );
    h.post(
        SUPPLIER,
        &format!("/api/v1/quotes/{id}/withdraw"),
        &json!({}),
    )
    .await
    .assert_conflict("not_withdrawable");
    let fresh = post_quote(h, &quote_body(variant, "9.50", 2), None).await;
    assert_eq!(
        fresh.status,
        201,
        "an expired quote frees its variant: {}",
        text(&fresh)
    );
}

/// A supplier's answers never carry a customer (its own `GET /me` has its own phone, not a
/// customer's: not checked here); a marketer's never carry the supply price or the supplier.
pub async fn each_side_sees_only_its_own(h: &Harness) {
    let customer_keys = ["customer", "phone", "address", "full_name", "second_phone"];
    for path in [
        "/api/v1/supply/variants",
        "/api/v1/quotes",
        "/api/v1/quotes?status=accepted",
        "/api/v1/wallet",
    ] {
        let r = h.get(SUPPLIER, path).await;
        r.assert_ok(path);
        assert_no_keys(&r.json(), &customer_keys, path);
    }
    let supply_keys = ["supply_price", "supplier", "supplier_id"];
    let featured = h.fixture.featured_product;
    for path in [
        "/api/v1/products?per_page=100".to_owned(),
        format!("/api/v1/products/{featured}"),
        "/api/v1/orders?per_page=100".to_owned(),
        format!("/api/v1/orders/{}", h.fixture.confirmed_order),
    ] {
        let r = h.get(A, &path).await;
        r.assert_ok(&path);
        assert_no_keys(&r.json(), &supply_keys, &path);
    }
}
