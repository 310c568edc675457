//! Orders: creation, input rules, stock, external references, idempotency, listing, cancel.

use bytes::Bytes;
use chrono::Duration;
use http::Method;
use serde_json::{Value, json};

use super::fixtures::*;
use super::harness::*;

/// A new order: 201, `Location`, pending, the quote's figures, stock reserved.
pub async fn order_creation_matches_the_quote_and_reserves_stock(h: &Harness) {
    let before = h.available(h.fixture.featured_variants[0]).await;
    let quote = h
        .post(A, "/api/v1/shipping/quote", &featured_quote_body(h))
        .await
        .json();
    let mut body = featured_quote_body(h);
    body["full_name"] = json!("سارة حسن");
    body["phone"] = json!("00201112223334");
    body["second_phone"] = json!("01012345678");
    body["address"] = json!("12 شارع النصر");
    body["external_reference"] = json!("SHOP-1001");
    body["store_link"] = json!("https://shop.example.com");
    let r = h.post(A, "/api/v1/orders", &body).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let order = r.json()["data"].clone();
    assert_eq!(
        r.header("location"),
        Some(format!("{}/api/v1/orders/{}", h.mount, order["id"]).as_str())
    );
    assert_eq!(r.header("idempotent-replayed"), Some("false"));
    let number = order["number"].as_str().expect("number");
    assert!(
        number.len() == 11
            && number.starts_with("EG-")
            && number[3..]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()),
        "{number}"
    );
    assert_eq!(order["status"]["key"], "order_pending");
    assert_eq!(order["family"], "pending");
    assert_eq!(order["customer"]["phone"], "01112223334");
    assert_eq!(order["customer"]["governorate"]["name"], "القاهرة");
    assert_eq!(
        order["payout"],
        json!({"state": "expected", "ready_at": null})
    );
    assert_eq!(order["timeline"].as_array().map(Vec::len), Some(1));
    assert_eq!(order["timeline"][0]["status"], "order_pending");
    let q = &quote["data"];
    for field in [
        "products",
        "warranties",
        "delivery_charge",
        "customer_total",
        "profit",
        "income_tax",
        "net_profit",
    ] {
        assert_eq!(order["totals"][field], q[field], "{field}");
    }
    assert_eq!(order["totals"]["income_tax_percent"], "4.00");
    let line = &order["lines"][0];
    assert_eq!(money(&line["sell_price"]), "300.00");
    assert_eq!(money(&line["profit"]), "50.01");
    assert_eq!(line["warranties"][0]["unit_price"], "30.00");
    assert_eq!(line["warranties"][0]["total"], "60.00");
    assert_eq!(line["warranties"][0]["quantity"], 2);
    assert_eq!(line["delivered_quantity"], Value::Null);
    assert_eq!(line["damaged_quantity"], 0);
    assert_eq!(
        h.available(h.fixture.featured_variants[0]).await,
        before - 2
    );
    let fetched = h.get(A, &format!("/api/v1/orders/{}", order["id"])).await;
    assert_eq!(fetched.json()["data"], order);
}

/// Every input rule of `POST /orders` is a 422 on its field, and nothing is written.
pub async fn order_input_rules_are_enforced(h: &Harness) {
    let before = h.order_count().await;
    let base = h.order_body(1, "10");
    let with = |field: &str, value: Value| {
        let mut b = base.clone();
        b[field] = value;
        b
    };
    let line_with = |field: &str, value: Value| {
        let mut b = base.clone();
        b["lines"][0][field] = value;
        b
    };
    let long = |n: usize| json!("x".repeat(n));
    let cases = vec![
        (with("phone", json!("0123")), "phone"),
        (with("phone", json!("+2001012345678")), "phone"),
        (with("second_phone", json!("12345")), "second_phone"),
        (with("full_name", long(256)), "full_name"),
        (with("full_name", json!("   ")), "full_name"),
        (with("address", long(256)), "address"),
        (with("store_name", long(256)), "store_name"),
        (
            with("store_link", json!("ftp://shop.example.com")),
            "store_link",
        ),
        (with("store_link", json!("not a url")), "store_link"),
        (with("note", long(1001)), "note"),
        (with("external_reference", long(101)), "external_reference"),
        (with("lines", json!([])), "lines"),
        (
            with(
                "lines",
                json!(vec![
                    json!({"variant_id": h.fixture.plain_variant, "quantity": 1, "profit": 1});
                    101
                ]),
            ),
            "lines",
        ),
        (line_with("quantity", json!(0)), "lines.0.quantity"),
        (line_with("quantity", json!(1000)), "lines.0.quantity"),
        (line_with("quantity", json!(1.5)), "lines.0.quantity"),
        (line_with("profit", json!(-1)), "lines.0.profit"),
        (line_with("profit", json!("1.234")), "lines.0.profit"),
        (line_with("profit", Value::Null), "lines.0.profit"),
        (
            line_with("warranty_ids", json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])),
            "lines.0.warranty_ids",
        ),
        (
            line_with("warranty_ids", json!([h.fixture.featured_warranties[0]])),
            "lines.0.warranty_ids",
        ),
        (line_with("variant_id", json!("abc")), "lines.0.variant_id"),
    ];
    for (body, field) in cases {
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        assert!(
            r.error_fields().contains(&field.to_owned()),
            "{field}: {}",
            String::from_utf8_lossy(&r.body)
        );
        assert_eq!(r.header("idempotent-replayed"), Some("false"));
        let messages = &r.json()["error"]["fields"][field];
        assert!(
            messages[0].as_str().is_some_and(|m| !m.is_ascii()),
            "Arabic message for {field}"
        );
    }
    // 100 lines and 999 pieces are the largest allowed.
    let mut max_lines = base.clone();
    max_lines["lines"] = json!(vec![
        json!({"variant_id": h.fixture.plain_variant, "quantity": 1, "profit": "1"});
        100
    ]);
    assert_eq!(h.post(A, "/api/v1/orders", &max_lines).await.status, 201);
    assert_eq!(h.order_count().await, before + 1);
    // A string profit and a numeric profit are the same amount.
    let numeric = h
        .post(A, "/api/v1/orders", &h.order_body(1, "12.50"))
        .await
        .json();
    assert_eq!(numeric["data"]["lines"][0]["profit"], "12.50");
}

/// A line above the stock is a 422 on its quantity and leaves stock and orders untouched.
pub async fn order_above_stock_is_refused_whole(h: &Harness) {
    let variant = h.fixture.featured_variants[1]; // 40 available
    let before = h.order_count().await;
    let mut body = h.order_body(1, "10");
    body["lines"] = json!([
        {"variant_id": h.fixture.plain_variant, "quantity": 5, "profit": "1"},
        {"variant_id": variant, "quantity": 30, "profit": "1"},
        {"variant_id": variant, "quantity": 11, "profit": "1"},
    ]);
    let plain_before = h.available(h.fixture.plain_variant).await;
    let r = h.post(A, "/api/v1/orders", &body).await;
    r.assert_error(422, "validation_failed");
    assert_eq!(r.error_fields(), vec!["lines.2.quantity"]);
    assert_eq!(h.available(variant).await, 40);
    assert_eq!(h.available(h.fixture.plain_variant).await, plain_before);
    assert_eq!(h.order_count().await, before);
}

/// A repeated `external_reference` is a 409 naming the order already registered; another
/// account may use the same reference.
pub async fn duplicate_external_reference_is_409_with_the_existing_order(h: &Harness) {
    let mut body = h.order_body(1, "10");
    body["external_reference"] = json!("DEMO-CONFIRMED");
    let r = h.post(A, "/api/v1/orders", &body).await;
    r.assert_conflict("duplicate_external_reference");
    let error = &r.json()["error"];
    assert_eq!(error["existing_order_id"], h.fixture.confirmed_order.get());
    let existing = h
        .get(A, &format!("/api/v1/orders/{}", h.fixture.confirmed_order))
        .await
        .json();
    assert_eq!(error["existing_order_number"], existing["data"]["number"]);
    assert_eq!(h.post(B, "/api/v1/orders", &body).await.status, 201);
}

/// `Idempotency-Key`: the replay is the first response byte for byte; other data is a 409;
/// a first request that failed stores nothing.
pub async fn idempotency_key_replays_byte_for_byte(h: &Harness) {
    let body = h.order_body(2, "15");
    let first = h.post_idempotent(A, "key-1", &body).await;
    assert_eq!(first.status, 201);
    assert_eq!(first.header("idempotent-replayed"), Some("false"));
    let count = h.order_count().await;
    let stock = h.available(h.fixture.plain_variant).await;
    // Same data with keys in another order and other spacing.
    let reordered: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&body).expect("json")).expect("json");
    let replay = h.post_idempotent(A, "key-1", &reordered).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body, first.body);
    assert_eq!(replay.header("location"), first.header("location"));
    // The replay is another request: its own id (the stored body, a 201, carries none).
    assert_ne!(replay.request_id(), first.request_id());
    assert_eq!(h.order_count().await, count);
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    h.post_idempotent(A, "key-1", &h.order_body(3, "15"))
        .await
        .assert_conflict("idempotency_key_reused");
    // The same key on another account is another scope.
    assert_eq!(h.post_idempotent(B, "key-1", &body).await.status, 201);
    // An error first: nothing stored, the key works after correction.
    let bad = h.post_idempotent(A, "key-2", &h.order_body(0, "15")).await;
    bad.assert_error(422, "validation_failed");
    let corrected = h.post_idempotent(A, "key-2", &h.order_body(1, "15")).await;
    assert_eq!(corrected.status, 201);
    assert_eq!(corrected.header("idempotent-replayed"), Some("false"));
    // A key over 100 characters is refused.
    h.post_idempotent(A, &"k".repeat(101), &body)
        .await
        .assert_error(422, "validation_failed");
}

/// After 24 hours a key no longer replays.
pub async fn idempotency_key_expires_after_24_hours(h: &Harness) {
    let body = h.order_body(1, "15");
    let first = h.post_idempotent(A, "key-expiring", &body).await;
    h.clock.advance(Duration::hours(23));
    assert_eq!(
        h.post_idempotent(A, "key-expiring", &body).await.body,
        first.body
    );
    h.clock.advance(Duration::hours(2));
    let fresh = h.post_idempotent(A, "key-expiring", &body).await;
    assert_eq!(fresh.status, 201);
    assert_eq!(fresh.header("idempotent-replayed"), Some("false"));
    assert_ne!(fresh.json()["data"]["id"], first.json()["data"]["id"]);
    assert_eq!(
        h.engine
            .operator()
            .purge_idempotency()
            .await
            .expect("purge"),
        0,
        "the fresh record is inside the window"
    );
    h.clock.advance(Duration::hours(25));
    assert_eq!(
        h.engine
            .operator()
            .purge_idempotency()
            .await
            .expect("purge"),
        1
    );
}

/// Orders list newest first and filter by every parameter.
pub async fn orders_list_and_filters(h: &Harness) {
    let created = h
        .post(A, "/api/v1/orders", &h.order_body(1, "10"))
        .await
        .json()["data"]
        .clone();
    let all = h.get(A, "/api/v1/orders").await.json();
    assert_eq!(all["meta"]["total"], 5);
    assert_eq!(all["data"][0]["id"], created["id"], "newest first");
    let ids = |v: &Value| {
        v["data"]
            .as_array()
            .expect("array")
            .iter()
            .map(|o| o["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&h.get(A, "/api/v1/orders?family=pending").await.json()),
        vec![created["id"].clone()]
    );
    assert_eq!(
        ids(&h
            .get(A, "/api/v1/orders?status=order_confirmed")
            .await
            .json()),
        vec![json!(h.fixture.confirmed_order)]
    );
    assert_eq!(
        h.get(A, "/api/v1/orders?family=delivered").await.json()["meta"]["total"],
        3
    );
    assert_eq!(
        ids(&h
            .get(A, "/api/v1/orders?external_reference=DEMO-CONFIRMED")
            .await
            .json()),
        vec![json!(h.fixture.confirmed_order)]
    );
    let number = created["number"].as_str().expect("number");
    let loose = number.replace('-', "").to_lowercase();
    assert_eq!(
        ids(&h
            .get(A, &format!("/api/v1/orders?number={loose}"))
            .await
            .json()),
        vec![created["id"].clone()]
    );
    assert_eq!(
        ids(&h
            .get(A, &format!("/api/v1/orders?number={number}"))
            .await
            .json()),
        vec![created["id"].clone()]
    );
    assert_eq!(
        ids(&h.get(A, "/api/v1/orders?number=100001").await.json()),
        vec![json!(h.fixture.legacy_order)]
    );
    let since = urlencode(&h.clock_stamp());
    assert_eq!(
        ids(&h
            .get(A, &format!("/api/v1/orders?updated_since={since}"))
            .await
            .json()),
        vec![created["id"].clone()]
    );
    let paged = h.get(A, "/api/v1/orders?per_page=2&page=3").await.json();
    assert_eq!(
        paged["meta"],
        json!({"page": 3, "per_page": 2, "total": 5, "last_page": 3})
    );
    assert_eq!(paged["data"].as_array().map(Vec::len), Some(1));
    // Marketer B sees none of them.
    assert_eq!(h.get(B, "/api/v1/orders").await.json()["meta"]["total"], 0);
}

/// Another account's order is a 404 identical to a missing one, for reading and cancelling.
pub async fn other_accounts_orders_are_not_found(h: &Harness) {
    let theirs = h
        .get(B, &format!("/api/v1/orders/{}", h.fixture.confirmed_order))
        .await;
    let missing = h.get(B, "/api/v1/orders/999999").await;
    theirs.assert_error(404, "not_found");
    assert_eq!(
        theirs.json_without_request_id(),
        missing.json_without_request_id()
    );
    h.post(
        B,
        &format!("/api/v1/orders/{}/cancel", h.fixture.confirmed_order),
        &json!({}),
    )
    .await
    .assert_error(404, "not_found");
}

/// Cancelling: only while pending, releases the stock, records the reason; 409 afterwards.
pub async fn cancel_only_while_pending_and_release_stock(h: &Harness) {
    let stock = h.available(h.fixture.plain_variant).await;
    let order = h
        .post(A, "/api/v1/orders", &h.order_body(3, "10"))
        .await
        .json()["data"]
        .clone();
    assert_eq!(h.available(h.fixture.plain_variant).await, stock - 3);
    let path = format!("/api/v1/orders/{}/cancel", order["id"]);
    h.post(A, &path, &json!({"reason_note": "x".repeat(501)}))
        .await
        .assert_error(422, "validation_failed");
    let cancelled = h
        .post(A, &path, &json!({"reason_note": "العميل غيّر رأيه"}))
        .await;
    assert_eq!(cancelled.status, 200);
    let data = &cancelled.json()["data"];
    assert_eq!(data["status"]["key"], "rejected_by_Marketer");
    assert_eq!(data["family"], "cancelled");
    assert_eq!(data["timeline"][1]["reason"], "العميل غيّر رأيه");
    assert_eq!(data["payout"]["state"], "none");
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    h.post(A, &path, &json!({}))
        .await
        .assert_conflict("not_cancellable");
    assert_eq!(
        h.available(h.fixture.plain_variant).await,
        stock,
        "released once"
    );
    // A confirmed order cannot be cancelled; an empty body is accepted.
    let confirmed = format!("/api/v1/orders/{}/cancel", h.fixture.confirmed_order);
    h.request(Method::POST, Some(A), &confirmed, Bytes::new(), &[])
        .await
        .assert_conflict("not_cancellable");
}
