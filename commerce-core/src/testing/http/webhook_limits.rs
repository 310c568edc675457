//! Webhooks at their edges: what a key can queue (bounded), who may direct order data, and
//! the reason of every refusal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use super::fixtures::race;
use super::harness::{Harness, TestResponse};
use super::receiver::Receiver;
use super::webhooks::{deliveries, dispatcher, drain, place, register};
use crate::domain::keys::KeySpec;
use crate::model::{Ability, EventType, Side};
use crate::store::MAX_PENDING_MANUAL;

/// Marketer A's key: `orders:read` and `webhooks:manage` among others.
const KEY: &str = "sk_demo_marketer";
/// Marketer B's key.
const OTHER: &str = "sk_demo_marketer_b";
/// A generous bound on one request's answer while another account floods (the goal is "as
/// without the flood", measured in milliseconds; this only catches a request held behind it).
const UNHINDERED: Duration = Duration::from_secs(5);

async fn send(h: &Harness, key: &str, method: Method, path: &str, body: Value) -> TestResponse {
    h.request(method, Some(key), path, Bytes::from(body.to_string()), &[])
        .await
}

fn ping_path(id: i64) -> String {
    format!("/api/v1/webhooks/{id}/ping")
}

fn redeliver_path(id: i64, delivery: &Value) -> String {
    format!(
        "/api/v1/webhooks/{id}/deliveries/{}/redeliver",
        delivery["id"].as_i64().expect("a delivery id")
    )
}

/// The pending deliveries of an endpoint, as its owner lists them.
async fn pending(h: &Harness, id: i64) -> u64 {
    let listed = h
        .get(
            KEY,
            &format!("/api/v1/webhooks/{id}/deliveries?status=pending"),
        )
        .await;
    listed.assert_ok("pending deliveries");
    listed.json()["meta"]["total"].as_u64().expect("a total")
}

/// A key floods ping (30 at once) and redeliver (50 at once): at most 10 manual deliveries
/// wait for the endpoint, every other request is a 409 `webhook_busy`; another account's
/// requests answer meanwhile as usual. Once they are sent the endpoint takes 10 more. A
/// disabled endpoint queues nothing: 409 `webhook_disabled`.
pub async fn webhook_manual_deliveries_are_bounded(h: &Harness) {
    let h = Arc::new(h.clone_handle());
    let receiver = Receiver::start().await;
    let endpoint = register(&h, &receiver.url).await;
    let id = endpoint.id;
    let first = h.post(KEY, &ping_path(id), &json!({})).await;
    assert_eq!(
        first.status,
        202,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    assert_eq!(drain(&dispatcher(&h)).await, 1);
    let delivered = first.json()["data"].clone();

    let others = {
        let h = h.clone();
        tokio::spawn(async move {
            let mut slowest = Duration::ZERO;
            for _ in 0..20 {
                let started = Instant::now();
                h.get(OTHER, "/api/v1/orders").await.assert_ok("B's orders");
                slowest = slowest.max(started.elapsed());
            }
            slowest
        })
    };
    let pings = race(30, |_| {
        let h = h.clone();
        async move { h.post(KEY, &ping_path(id), &json!({})).await }
    });
    let redelivers = race(50, |_| {
        let (h, path) = (h.clone(), redeliver_path(id, &delivered));
        async move { h.post(KEY, &path, &json!({})).await }
    });
    let (pings, redelivers) = tokio::join!(pings, redelivers);
    let slowest = others.await.expect("B's requests");
    let answers: Vec<&TestResponse> = pings.iter().chain(&redelivers).collect();
    let accepted = answers.iter().filter(|r| r.status == 202).count();
    assert_eq!(
        accepted, MAX_PENDING_MANUAL,
        "10 queued, whatever the flood"
    );
    for refused in answers.iter().filter(|r| r.status != 202) {
        refused.assert_conflict("webhook_busy");
    }
    assert_eq!(pending(&h, id).await, MAX_PENDING_MANUAL as u64);
    assert!(
        slowest < UNHINDERED,
        "another account waited {slowest:?} during the flood"
    );

    // Sent: room for 10 more, no more.
    assert_eq!(drain(&dispatcher(&h)).await, MAX_PENDING_MANUAL);
    assert_eq!(receiver.received().len(), 1 + MAX_PENDING_MANUAL);
    for _ in 0..MAX_PENDING_MANUAL {
        let again = h
            .post(KEY, &redeliver_path(id, &delivered), &json!({}))
            .await;
        assert_eq!(again.status, 202);
    }
    h.post(KEY, &ping_path(id), &json!({}))
        .await
        .assert_conflict("webhook_busy");
    assert_eq!(drain(&dispatcher(&h)).await, MAX_PENDING_MANUAL);

    // Disabled: nothing queued, whoever asks.
    let path = format!("/api/v1/webhooks/{id}");
    send(&h, KEY, Method::PATCH, &path, json!({"enabled": false}))
        .await
        .assert_ok("disable");
    for _ in 0..3 {
        h.post(KEY, &ping_path(id), &json!({}))
            .await
            .assert_conflict("webhook_disabled");
        h.post(KEY, &redeliver_path(id, &delivered), &json!({}))
            .await
            .assert_conflict("webhook_disabled");
    }
    let operator = h.engine.operator();
    let refused = operator
        .ping_webhook(crate::model::WebhookId::new(id))
        .await;
    assert!(
        matches!(
            refused,
            Err(crate::operator::OperatorError::Conflict(
                crate::operator::Conflict::WebhookDisabled
            ))
        ),
        "{refused:?}"
    );
    assert_eq!(pending(&h, id).await, 0);
    send(&h, KEY, Method::PATCH, &path, json!({"enabled": true}))
        .await
        .assert_ok("enable");
    assert_eq!(h.post(KEY, &ping_path(id), &json!({})).await.status, 202);
    // Unknown ids stay 404, before any limit.
    h.post(KEY, &ping_path(id + 1_000), &json!({}))
        .await
        .assert_error(404, "not_found");
}

/// A key with `webhooks:manage` but not `orders:read` cannot register an endpoint, move it
/// (`url`) or change its `events`, nor redeliver (403 `forbidden_ability`); it can still
/// describe, disable, ping and read deliveries. A URL change sends nothing queued before to
/// the new URL: those deliveries end, failed `url_changed`, and only an explicit redelivery
/// goes there.
pub async fn webhook_order_data_needs_orders_read(h: &Harness) {
    let hooks_only = h
        .engine
        .operator()
        .create_key(
            h.fixture.marketer_a,
            KeySpec::new(
                "hooks only".to_owned(),
                vec![Ability::WebhooksManage],
                None,
                None,
            ),
        )
        .await
        .expect("key")
        .plaintext;
    let old = Receiver::start().await;
    let new = Receiver::start().await;
    for body in [
        json!({"url": old.url}),
        json!({"url": old.url, "events": ["order.created"]}),
    ] {
        h.post(&hooks_only, "/api/v1/webhooks", &body)
            .await
            .assert_error(403, "forbidden_ability");
    }
    assert_eq!(
        h.get(KEY, "/api/v1/webhooks").await.json()["meta"]["total"],
        0,
        "nothing registered"
    );
    let endpoint = register(h, &old.url).await;
    let path = format!("/api/v1/webhooks/{}", endpoint.id);
    for body in [
        json!({"url": new.url}),
        json!({"events": ["order.status_changed"]}),
        json!({"url": new.url, "description": "x"}),
    ] {
        send(h, &hooks_only, Method::PATCH, &path, body)
            .await
            .assert_error(403, "forbidden_ability");
    }
    for body in [
        json!({"description": "shop"}),
        json!({"enabled": false}),
        json!({"enabled": true}),
    ] {
        send(h, &hooks_only, Method::PATCH, &path, body)
            .await
            .assert_ok("a change that directs no order data");
    }
    let shown = h.get(KEY, &path).await.json()["data"].clone();
    assert_eq!(
        (
            shown["url"].as_str(),
            shown["events"].as_array().map(Vec::len)
        ),
        (
            Some(old.url.as_str()),
            Some(EventType::for_side(Side::Marketer).len())
        )
    );
    assert_eq!(
        h.post(&hooks_only, &ping_path(endpoint.id), &json!({}))
            .await
            .status,
        202
    );
    let (order, _) = place(h).await;
    let queued = deliveries(h, &endpoint).await;
    assert_eq!(queued.len(), 2, "the ping and the order's event");
    let event = queued
        .iter()
        .find(|d| d["event_type"] == "order.created")
        .expect("the order's event")
        .clone();
    h.get(
        &hooks_only,
        &format!("/api/v1/webhooks/{}/deliveries", endpoint.id),
    )
    .await
    .assert_ok("deliveries");
    h.post(
        &hooks_only,
        &redeliver_path(endpoint.id, &event),
        &json!({}),
    )
    .await
    .assert_error(403, "forbidden_ability");

    // The owner moves the endpoint: what was queued for the old URL goes nowhere.
    send(h, KEY, Method::PATCH, &path, json!({"url": new.url}))
        .await
        .assert_ok("move");
    for delivery in deliveries(h, &endpoint).await {
        assert_eq!(
            (&delivery["status"], &delivery["last_error"]),
            (&json!("failed"), &json!("url_changed")),
            "{delivery}"
        );
    }
    assert_eq!(drain(&dispatcher(h)).await, 0);
    assert!(old.received().is_empty() && new.received().is_empty());
    // An explicit redelivery, by a key that may read orders, does.
    let again = h
        .post(KEY, &redeliver_path(endpoint.id, &event), &json!({}))
        .await;
    assert_eq!(
        again.status,
        202,
        "{}",
        String::from_utf8_lossy(&again.body)
    );
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let got = new.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].json()["data"]["order"]["id"], order.get());
    assert!(old.received().is_empty());
}
