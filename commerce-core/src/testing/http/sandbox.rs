//! The sandbox's test mode (`/api/v1/sandbox/`): orders moved through every status with
//! webhooks and the wallet checked after each move, the clock, and the 404 of a production
//! engine.

use std::sync::Arc;

use bytes::Bytes;
use http::Method;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::fixtures::*;
use super::harness::*;
use super::receiver::Receiver;
use super::webhooks::{dispatcher, drain, register};
use crate::config::Config;
use crate::engine::Engine;
use crate::money::money_string;
use crate::time::cairo_timestamp;
use crate::webhooks::verify;

/// The hold period of the sandbox (the default), plus a minute.
const PAST_THE_HOLD: i64 = 14 * 24 * 3600 + 60;

fn status_path(id: i64) -> String {
    format!("/api/v1/sandbox/orders/{id}/status")
}

/// Moves an order through the sandbox and returns the order it answers.
async fn move_to(h: &Harness, id: i64, body: Value) -> Value {
    let r = h.post(A, &status_path(id), &body).await;
    r.assert_ok(&format!("move {id} with {body}"));
    let order = r.json()["data"].clone();
    assert_eq!(order["status"]["key"], body["status"], "{body}");
    // The same JSON as `GET /orders/{id}`.
    let shown = h.get(A, &format!("/api/v1/orders/{id}")).await;
    assert_eq!(
        shown.json()["data"],
        order,
        "the move answers the order as shown"
    );
    order
}

async fn place(h: &Harness, quantity: i64, profit: &str) -> Value {
    let r = h
        .post(A, "/api/v1/orders", &h.order_body(quantity, profit))
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()["data"].clone()
}

fn amount(v: &Value) -> Decimal {
    money(v).parse().expect("an amount")
}

/// `GET /wallet` equals the figures recomputed from every order and withdrawal of marketer A
/// at the engine's instant, to the piastre; returns the served wallet.
async fn assert_wallet_recomputed(h: &Harness, step: &str) -> Value {
    let served = h.get(A, "/api/v1/wallet").await;
    served.assert_ok(step);
    let w = served.json()["data"].clone();
    let f = crate::testing::wallet::recomputed_wallet(h, h.fixture.marketer_a).await;
    assert_eq!(w["ready"], money_string(f.ready), "{step}: ready");
    assert_eq!(w["held"]["amount"], money_string(f.held), "{step}: held");
    assert_eq!(
        w["held"]["next_ready_at"],
        json!(f.next_ready_at.map(cairo_timestamp)),
        "{step}: next_ready_at"
    );
    assert_eq!(w["expected"], money_string(f.expected), "{step}: expected");
    assert_eq!(w["received"], money_string(f.received), "{step}: received");
    assert_eq!(
        w["total_commission"],
        money_string(f.total_commission),
        "{step}: total_commission"
    );
    w
}

/// The events of order `id` the receiver got, in order: (type, status, previous status), each
/// with the order exactly as the move answered it.
fn events_of(receiver: &Receiver, secret: &str, h: &Harness, id: i64) -> Vec<Value> {
    receiver
        .received()
        .iter()
        .inspect(|r| {
            verify(
                secret,
                &r.headers,
                &r.body,
                h.engine.now(),
                chrono::TimeDelta::minutes(5),
            )
            .expect("signed");
        })
        .map(|r| r.json())
        .filter(|e| e["data"]["order"]["id"] == id)
        .collect()
}

fn summary(events: &[Value]) -> Vec<(String, String, String)> {
    events
        .iter()
        .map(|e| {
            let text = |v: &Value| v.as_str().unwrap_or("-").to_owned();
            (
                text(&e["type"]),
                text(&e["data"]["order"]["status"]["key"]),
                text(&e["data"]["previous_status"]["key"]),
            )
        })
        .collect()
}

fn changed(to: &str, from: &str) -> (String, String, String) {
    ("order.status_changed".into(), to.into(), from.into())
}

/// One order moved confirmed → preparing → shipped → delivered, another partially delivered
/// with line outcomes, one returned, one cancelled by the platform: each move answers the
/// order as `GET /orders/{id}` shows it, sends its signed event, is not billed, and leaves
/// `GET /wallet` equal to the recomputation from the orders; then the clock moves past the
/// hold period and `ready` grows by what was held.
pub async fn sandbox_moves_orders_through_every_status(h: &Harness) {
    let receiver = Receiver::start().await;
    let endpoint = register(h, &receiver.url).await;
    let d = dispatcher(h);
    let op = h.engine.operator();
    assert_wallet_recomputed(h, "start").await;

    // Delivered in full.
    let order = place(h, 2, "30.00").await;
    let id = order["id"].as_i64().expect("an id");
    let billed = op
        .meter_this_month(h.fixture.marketer_a)
        .await
        .expect("meter")
        .order_operations;
    let mut answers = vec![order];
    for status in [
        "order_confirmed",
        "order_preparing",
        "order_shipped",
        "order_delivered",
    ] {
        h.clock.advance(chrono::Duration::minutes(5));
        answers.push(move_to(h, id, json!({"status": status})).await);
        assert_wallet_recomputed(h, status).await;
    }
    let delivered = answers.last().cloned().unwrap_or_default();
    assert_eq!(delivered["payout"]["state"], "held");
    let timeline: Vec<&str> = delivered["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .filter_map(|t| t["status"].as_str())
        .collect();
    assert_eq!(
        timeline,
        [
            "order_pending",
            "order_confirmed",
            "order_preparing",
            "order_shipped",
            "order_delivered"
        ]
    );
    assert_ne!(delivered["updated_at"], answers[0]["updated_at"]);
    assert!(drain(&d).await >= 5);
    let events = events_of(&receiver, &endpoint.secret, h, id);
    assert_eq!(
        summary(&events),
        [
            ("order.created".into(), "order_pending".into(), "-".into()),
            changed("order_confirmed", "order_pending"),
            changed("order_preparing", "order_confirmed"),
            changed("order_shipped", "order_preparing"),
            changed("order_delivered", "order_shipped"),
        ]
    );
    for (event, answer) in events.iter().zip(&answers) {
        assert_eq!(
            &event["data"]["order"], answer,
            "the event carries the order"
        );
    }
    // Refused moves: not allowed (409), another account's order (404), no ability (403).
    let back = h
        .post(A, &status_path(id), &json!({"status": "order_confirmed"}))
        .await;
    back.assert_conflict("move_not_allowed");
    assert!(
        back.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.chars().any(|c| ('\u{0600}'..='\u{06FF}').contains(&c)))
    );
    h.post(B, &status_path(id), &json!({"status": "order_archived"}))
        .await
        .assert_error(404, "not_found");
    h.post(
        CATALOG_ONLY,
        &status_path(id),
        &json!({"status": "order_archived"}),
    )
    .await
    .assert_error(403, "forbidden_ability");

    // Partially delivered, with what became of the line's pieces.
    let order = place(h, 3, "20.00").await;
    let (partial, line) = (
        order["id"].as_i64().expect("an id"),
        order["lines"][0]["id"].as_i64().expect("a line id"),
    );
    move_to(h, partial, json!({"status": "order_confirmed"})).await;
    move_to(h, partial, json!({"status": "order_shipped"})).await;
    for (lines, field) in [
        (
            json!([{"id": line, "delivered_quantity": 3, "returned_quantity": 1}]),
            "lines.0",
        ),
        (
            json!([{"id": line + 1000, "delivered_quantity": 1}]),
            "lines.0.id",
        ),
        (
            json!([{"id": line, "lost_quantity": -1}]),
            "lines.0.lost_quantity",
        ),
        (json!({"id": line}), "lines"),
    ] {
        let body = json!({"status": "order_partially_delivered", "lines": lines});
        let r = h.post(A, &status_path(partial), &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), [field], "{body}");
    }
    let held = amount(&assert_wallet_recomputed(h, "shipped").await["held"]["amount"]);
    let moved = move_to(
        h,
        partial,
        json!({"status": "order_partially_delivered", "reason": "قطعة رجعت",
               "lines": [{"id": line, "delivered_quantity": 2, "returned_quantity": 1}]}),
    )
    .await;
    assert_eq!(moved["lines"][0]["delivered_quantity"], 2);
    assert_eq!(moved["lines"][0]["returned_quantity"], 1);
    assert_eq!(moved["timeline"][3]["reason"], "قطعة رجعت");
    // Held now: 2 of the 3 pieces at 20.00 profit, less 4%.
    let w = assert_wallet_recomputed(h, "partially delivered").await;
    assert_eq!(
        amount(&w["held"]["amount"]) - held,
        "38.40".parse::<Decimal>().expect("an amount")
    );

    // Returned in full.
    let returned = place(h, 1, "15.00").await["id"].as_i64().expect("an id");
    for status in ["order_confirmed", "order_shipped", "order_returned"] {
        move_to(h, returned, json!({"status": status})).await;
        assert_wallet_recomputed(h, status).await;
    }
    // Cancelled by the platform, with its reason.
    let cancelled = place(h, 1, "15.00").await["id"].as_i64().expect("an id");
    let moved = move_to(
        h,
        cancelled,
        json!({"status": "order_cancelled", "reason": "العميل مش بيرد"}),
    )
    .await;
    assert_eq!(moved["timeline"][1]["reason"], "العميل مش بيرد");
    assert_eq!(moved["payout"]["state"], "none");
    assert_wallet_recomputed(h, "cancelled").await;
    // A second on: the last moves' events are due (each is due at its order's `updated_at`).
    h.clock.advance(chrono::Duration::seconds(1));
    drain(&d).await;
    for (order, last) in [
        (
            partial,
            changed("order_partially_delivered", "order_shipped"),
        ),
        (returned, changed("order_returned", "order_shipped")),
        (cancelled, changed("order_cancelled", "order_pending")),
    ] {
        let events = summary(&events_of(&receiver, &endpoint.secret, h, order));
        assert_eq!(events.last(), Some(&last), "order {order}: {events:?}");
    }
    // The moves are free: only the four placements were billed.
    let after = op
        .meter_this_month(h.fixture.marketer_a)
        .await
        .expect("meter")
        .order_operations;
    assert_eq!(after, billed + 3, "sandbox moves are not billed");

    // Past the hold period, what was held is ready.
    let before = assert_wallet_recomputed(h, "before the clock").await;
    assert!(amount(&before["held"]["amount"]) > Decimal::ZERO);
    let shown = h.get(A, "/api/v1/sandbox/clock").await;
    shown.assert_ok("clock");
    assert_eq!(shown.json()["data"]["now"], cairo_timestamp(h.engine.now()));
    let advanced = h
        .post(
            A,
            "/api/v1/sandbox/clock",
            &json!({"advance_seconds": PAST_THE_HOLD}),
        )
        .await;
    advanced.assert_ok("advance");
    let expected_now = h.clock.now_utc() + chrono::Duration::seconds(PAST_THE_HOLD);
    assert_eq!(
        advanced.json()["data"]["now"],
        cairo_timestamp(expected_now)
    );
    assert_eq!(
        h.engine.now(),
        expected_now,
        "the engine reads the sandbox's clock"
    );
    let after = assert_wallet_recomputed(h, "after the clock").await;
    assert_eq!(after["held"]["amount"], "0.00");
    assert_eq!(
        amount(&after["ready"]),
        amount(&before["ready"]) + amount(&before["held"]["amount"]),
        "ready grew by what was held"
    );
    let order = h.get(A, &format!("/api/v1/orders/{id}")).await.json()["data"].clone();
    assert_eq!(order["payout"]["state"], "ready");
}

/// The clock answers every key (no ability), only moves forward, and refuses a step outside
/// 1 to 31,536,000 seconds with a 422 naming `advance_seconds` in Arabic.
pub async fn sandbox_clock_moves_forward_only(h: &Harness) {
    let start = h.engine.now();
    let r = h.get(CATALOG_ONLY, "/api/v1/sandbox/clock").await;
    r.assert_ok("clock with any key");
    assert_eq!(r.json(), json!({"data": {"now": cairo_timestamp(start)}}));
    for body in [
        json!({"advance_seconds": 0}),
        json!({"advance_seconds": -60}),
        json!({"advance_seconds": 31_536_001}),
        json!({"advance_seconds": "60"}),
        json!({"advance_seconds": 1.5}),
        json!({}),
    ] {
        let r = h.post(A, "/api/v1/sandbox/clock", &body).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["advance_seconds"], "{body}");
        let message = r.json()["error"]["fields"]["advance_seconds"][0].clone();
        assert!(
            message
                .as_str()
                .is_some_and(|m| m.chars().any(|c| ('\u{0600}'..='\u{06FF}').contains(&c))),
            "{message}"
        );
    }
    assert_eq!(h.engine.now(), start, "a refused step moves nothing");
    let r = h
        .post(
            CATALOG_ONLY,
            "/api/v1/sandbox/clock",
            &json!({"advance_seconds": 31_536_000}),
        )
        .await;
    r.assert_ok("a year");
    let later = start + chrono::Duration::days(365);
    assert_eq!(r.json()["data"]["now"], cairo_timestamp(later));
    // Keys expire by the sandbox's clock too: none of the demo keys has an expiry but the
    // expired one, which stays refused.
    h.get(A, "/api/v1/me").await.assert_ok("a live key");
    h.get("sk_demo_expired", "/api/v1/me")
        .await
        .assert_error(401, "unauthenticated");
    assert_eq!(
        h.get(A, "/api/v1/sandbox/clock").await.json()["data"]["now"],
        cairo_timestamp(later)
    );
}

/// The clock moves at most ten years ahead in total: the step past the bound is a 422 on
/// `advance_seconds` that moves nothing, and at the bound every store still takes orders
/// and answers them (an instant ten years on is stored and read back).
pub async fn sandbox_clock_stops_ten_years_ahead(h: &Harness) {
    let start = h.engine.now();
    let year = json!({"advance_seconds": 31_536_000});
    for _ in 0..10 {
        h.post(A, "/api/v1/sandbox/clock", &year)
            .await
            .assert_ok("a year");
    }
    let bound = start + chrono::Duration::days(3650);
    assert_eq!(h.engine.now(), bound);
    for step in [31_536_000, 1] {
        let r = h
            .post(
                A,
                "/api/v1/sandbox/clock",
                &json!({"advance_seconds": step}),
            )
            .await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["advance_seconds"], "{step}");
    }
    assert_eq!(h.engine.now(), bound, "a refused step moves nothing");
    let order = place(h, 1, "10.00").await;
    let shown = h.get(A, &format!("/api/v1/orders/{}", order["id"])).await;
    shown.assert_ok("the order read back");
    assert_eq!(shown.json()["data"]["created_at"], cairo_timestamp(bound));
}

/// A production engine (the test mode off) answers every sandbox path, whatever the method,
/// with the same bytes as any unknown path, through the same integration; the sandbox's
/// engine serves them.
pub async fn sandbox_paths_are_unknown_to_a_production_engine(h: &Harness) {
    let production = Engine::builder(h.engine.store().clone())
        .config(Config::default())
        .clock(Arc::new(h.clock.clone()))
        .build()
        .expect("the default settings");
    assert!(!production.config().test_mode && h.engine.config().test_mode);
    let client = h.mount_other(production);
    let order = h.fixture.confirmed_order;
    for (method, path, body) in [
        (
            Method::POST,
            status_path(order.get()),
            json!({"status": "order_shipped"}),
        ),
        (Method::GET, status_path(order.get()), Value::Null),
        (
            Method::POST,
            "/api/v1/sandbox/clock".into(),
            json!({"advance_seconds": 60}),
        ),
        (Method::GET, "/api/v1/sandbox/clock".into(), Value::Null),
        (Method::DELETE, "/api/v1/sandbox/clock".into(), Value::Null),
        (Method::GET, "/api/v1/sandbox".into(), Value::Null),
    ] {
        let body = if body.is_null() {
            Bytes::new()
        } else {
            Bytes::from(body.to_string())
        };
        let send = |path: &str| {
            client.send(build_request(
                method.clone(),
                Some(A),
                path,
                body.clone(),
                // The same request id on both, so that the answers can be the same bytes.
                &[("request-id", "req-sandbox-paths")],
            ))
        };
        let answer = send(&path).await;
        let unknown = send("/api/v1/no_such_path/7/status").await;
        assert_eq!(answer.status(), 404, "{method} {path}");
        assert_eq!(answer.headers(), unknown.headers(), "{method} {path}");
        assert_eq!(answer.body(), unknown.body(), "{method} {path}");
    }
    // Nothing moved.
    let shown = h.get(A, &format!("/api/v1/orders/{order}")).await;
    assert_eq!(shown.json()["data"]["status"]["key"], "order_confirmed");
    assert_eq!(h.engine.now(), h.clock.now_utc());
    // The sandbox's engine serves the same paths.
    h.get(A, "/api/v1/sandbox/clock").await.assert_ok("served");
    let r = h
        .request(
            Method::DELETE,
            Some(A),
            "/api/v1/sandbox/clock",
            Bytes::new(),
            &[],
        )
        .await;
    r.assert_error(405, "method_not_allowed");
}
