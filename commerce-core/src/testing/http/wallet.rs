//! The wallet, partial deliveries, and the billing meter.

use chrono::Duration;
use serde_json::json;

use crate::model::*;

use super::fixtures::*;
use super::harness::*;

/// The wallet of marketer A matches its seeded orders to the piastre.
pub async fn wallet_matches_the_orders(h: &Harness) {
    let r = h.get(A, "/api/v1/wallet").await;
    assert_eq!(r.status, 200);
    let w = &r.json()["data"];
    // ready: legacy 48.00 + ready 288.00 - received 200.00; held: 115.20; expected: 57.60.
    assert_eq!(w["ready"], "136.00");
    assert_eq!(w["held"]["amount"], "115.20");
    assert_eq!(w["expected"], "57.60");
    assert_eq!(w["received"], "200.00");
    assert_eq!(w["total_commission"], "18.80");
    assert_eq!(w["income_tax_percent"], "4.00");
    assert_eq!(w["currency"], "EGP");
    assert_eq!(
        w["pending_withdrawals"],
        json!({"count": 0, "amount": "0.00", "items": []})
    );
    assert_eq!(
        w["withdrawal"]["open"], true,
        "the harness starts on a Sunday"
    );
    assert_eq!(w["withdrawal"]["days"], json!(["sunday", "thursday"]));
    assert_eq!(w["withdrawal"]["timezone"], "Africa/Cairo");
    assert_eq!(w["withdrawal"]["minimum"], "100.00");
    // held.next_ready_at = delivered 3 days ago + 14 days.
    let expected_ready =
        crate::time::cairo_timestamp(start_instant() - Duration::days(3) + Duration::days(14));
    assert_eq!(w["held"]["next_ready_at"], expected_ready);
    // A pending withdrawal lowers `ready` and is listed.
    h.engine
        .operator()
        .request_withdrawal(NewWithdrawal {
            account_id: h.fixture.marketer_a,
            amount: "100.00".parse().expect("decimal"),
            supply_amount: "0.00".parse().expect("decimal"),
            wallet_number: "01012345678".into(),
            wallet_description: "محفظة".into(),
            notes: None,
        })
        .await
        .expect("withdrawal");
    let w = h.get(A, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(w["ready"], "36.00");
    assert_eq!(w["pending_withdrawals"]["count"], 1);
    assert_eq!(
        w["pending_withdrawals"]["items"][0]["status"]["key"],
        "pending"
    );
    // Eleven days later the held order is ready too.
    h.clock.advance(Duration::days(11));
    let w = h.get(A, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(w["held"]["amount"], "0.00");
    assert_eq!(w["ready"], "151.20");
}

/// A partially delivered order earns on its delivered pieces only.
pub async fn partial_delivery_earns_on_delivered_pieces(h: &Harness) {
    let order = h
        .post(A, "/api/v1/orders", &h.order_body(4, "25"))
        .await
        .json()["data"]
        .clone();
    let id = order["id"].as_i64().expect("id");
    let line = order["lines"][0]["id"].as_i64().expect("line id");
    let op = h.engine.operator();
    for status in [OrderStatus::Confirmed, OrderStatus::Shipped] {
        op.move_order(OrderId::new(id), status, None)
            .await
            .expect("move");
    }
    // The outcome and the move in one store operation.
    op.move_order_with_outcomes(
        OrderId::new(id),
        OrderStatus::PartiallyDelivered,
        None,
        vec![(
            LineId::new(line),
            LineOutcome {
                delivered_quantity: Some(3),
                returned_quantity: Some(1),
                ..LineOutcome::default()
            }
            .into(),
        )],
    )
    .await
    .expect("move");
    let shown = h.get(A, &format!("/api/v1/orders/{id}")).await.json()["data"].clone();
    assert_eq!(shown["family"], "delivered");
    assert_eq!(shown["lines"][0]["delivered_quantity"], 3);
    assert_eq!(shown["payout"]["state"], "held");
    assert_eq!(shown["timeline"].as_array().map(Vec::len), Some(4));
    assert!(shown["delivered_at"].is_string() && shown["confirmed_at"].is_string());
    // held: 115.20 + (75.00 - 3.00)
    assert_eq!(
        h.get(A, "/api/v1/wallet").await.json()["data"]["held"]["amount"],
        "187.20"
    );
    // Not a move the lifecycle allows.
    assert!(
        op.move_order(OrderId::new(id), OrderStatus::Pending, None)
            .await
            .is_err()
    );
}

/// Billing: distinct products per month, order operations when executed only.
pub async fn billing_meter_counts_what_the_spec_bills(h: &Harness) {
    let op = h.engine.operator();
    let account = h.fixture.marketer_a;
    let meter = || async { op.meter_this_month(account).await.expect("meter") };
    assert_eq!(meter().await, MeterReading::default());
    h.get(A, "/api/v1/me").await;
    h.get(A, "/api/v1/orders").await;
    assert_eq!(meter().await.pulled_products, 0, "free calls bill nothing");
    h.get(A, "/api/v1/products").await;
    h.get(A, "/api/v1/products").await;
    assert_eq!(meter().await.pulled_products, 25);
    h.get(
        A,
        &format!("/api/v1/products/{}", h.fixture.featured_product),
    )
    .await;
    assert_eq!(
        meter().await.pulled_products,
        25,
        "already pulled this month"
    );
    h.get(A, "/api/v1/products?page=2").await;
    assert_eq!(meter().await.pulled_products, 32);
    let order = h
        .post_idempotent(A, "bill-1", &h.order_body(1, "10"))
        .await
        .json()["data"]
        .clone();
    h.post_idempotent(A, "bill-1", &h.order_body(1, "10")).await;
    h.post(A, "/api/v1/orders", &h.order_body(0, "10")).await;
    assert_eq!(
        meter().await.order_operations,
        1,
        "replays and rejected requests bill nothing"
    );
    h.post(
        A,
        &format!("/api/v1/orders/{}/cancel", order["id"]),
        &json!({}),
    )
    .await;
    h.post(
        A,
        &format!("/api/v1/orders/{}/cancel", order["id"]),
        &json!({}),
    )
    .await;
    assert_eq!(meter().await.order_operations, 2);
}
