//! Webhooks end to end: registration through the API, the outbox, the dispatcher sending to
//! a real receiver on 127.0.0.1, retries, ordering, disabling, rotation.

use std::time::Duration;

use bytes::Bytes;
use chrono::TimeDelta;
use http::Method;
use serde_json::{Value, json};

use super::harness::{Harness, TestResponse};
use super::receiver::Receiver;
use crate::domain::delivery::RETRY_SCHEDULE;
use crate::domain::webhooks::WebhookInput;
use crate::model::{AccountId, OrderId, OrderStatus};
use crate::operator::OperatorError;
use crate::webhooks::{Dispatcher, DispatcherConfig, verify};

const KEY: &str = "sk_demo_marketer";
const TOLERANCE: TimeDelta = TimeDelta::minutes(5);

/// A registered endpoint: its id and secret.
pub(super) struct Endpoint {
    pub(super) id: i64,
    pub(super) secret: String,
}

pub(super) async fn register(h: &Harness, url: &str) -> Endpoint {
    let created = h.post(KEY, "/api/v1/webhooks", &json!({"url": url})).await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let data = &created.json()["data"];
    Endpoint {
        id: data["id"].as_i64().expect("an id"),
        secret: data["secret"]
            .as_str()
            .expect("the secret, once")
            .to_owned(),
    }
}

pub(super) fn dispatcher(h: &Harness) -> Dispatcher {
    h.engine
        .dispatcher()
        .with_config(DispatcherConfig::default().with_timeout(Duration::from_millis(300)))
}

/// Passes until one attempts nothing; how many attempts in all.
pub(super) async fn drain(d: &Dispatcher) -> usize {
    let mut attempted = 0;
    loop {
        match d.deliver_due().await.expect("a dispatcher pass") {
            0 => return attempted,
            n => attempted += n,
        }
    }
}

pub(super) async fn place(h: &Harness) -> (OrderId, Value) {
    let created = h
        .post(KEY, "/api/v1/orders", &h.order_body(1, "10.00"))
        .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let order = created.json()["data"].clone();
    (OrderId::new(order["id"].as_i64().expect("an id")), order)
}

async fn shown(h: &Harness, id: OrderId) -> Value {
    h.get(KEY, &format!("/api/v1/orders/{id}")).await.json()["data"].clone()
}

pub(super) async fn deliveries(h: &Harness, endpoint: &Endpoint) -> Vec<Value> {
    let listed = h
        .get(KEY, &format!("/api/v1/webhooks/{}/deliveries", endpoint.id))
        .await;
    listed.assert_ok("deliveries");
    listed.json()["data"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

async fn send(h: &Harness, method: Method, path: &str, body: Value) -> TestResponse {
    h.request(method, Some(KEY), path, Bytes::from(body.to_string()), &[])
        .await
}

/// Every event kind arrives signed (Standard Webhooks), with the order exactly as
/// `GET /orders/{id}` showed it at that moment; polling agrees; ping names the endpoint.
pub async fn webhooks_deliver_every_event_signed(h: &Harness) {
    let receiver = Receiver::start().await;
    let endpoint = register(h, &receiver.url).await;
    let listed = h.get(KEY, "/api/v1/webhooks").await;
    assert_eq!(listed.json()["meta"]["total"], 1);
    assert!(
        listed.json()["data"][0].get("secret").is_none(),
        "never listed with its secret"
    );
    let (id, _) = place(h).await;
    let at_creation = shown(h, id).await;
    h.clock.advance(chrono::Duration::minutes(1));
    h.post(KEY, &format!("/api/v1/orders/{id}/cancel"), &json!({}))
        .await
        .assert_ok("cancel");
    let at_cancel = shown(h, id).await;
    assert_eq!(drain(&dispatcher(h)).await, 2);

    let got = receiver.received();
    assert_eq!(got.len(), 2);
    for request in &got {
        verify(
            &endpoint.secret,
            &request.headers,
            &request.body,
            h.engine.now(),
            TOLERANCE,
        )
        .expect("signed with the endpoint's secret");
        assert_eq!(request.header("webhook-id"), request.json()["id"]);
        assert!(request.header("webhook-id").starts_with("evt_"));
    }
    let (created, changed) = (got[0].json(), got[1].json());
    assert_eq!(created["type"], "order.created");
    assert_eq!(created["data"]["order"], at_creation);
    assert_eq!(created["data"]["previous_status"], Value::Null);
    assert_eq!(changed["type"], "order.status_changed");
    assert_eq!(changed["data"]["order"], at_cancel);
    assert_eq!(
        changed["data"]["previous_status"]["key"],
        OrderStatus::Pending.as_str()
    );

    // Polling agrees with the last event of the order.
    let polled = h
        .get(
            KEY,
            "/api/v1/orders?updated_since=2026-11-22T00:00:00%2B02:00",
        )
        .await;
    let polled = polled.json()["data"]
        .as_array()
        .and_then(|orders| orders.iter().find(|o| o["id"] == id.get()).cloned())
        .expect("the order is polled");
    assert_eq!(polled["status"], changed["data"]["order"]["status"]);

    let listed = deliveries(h, &endpoint).await;
    assert_eq!(listed.len(), 2);
    assert_eq!(
        listed[0]["event_type"], "order.status_changed",
        "newest first"
    );
    for d in &listed {
        assert_eq!(
            (d["status"].clone(), d["attempts"].clone()),
            (json!("delivered"), json!(1))
        );
        assert_eq!(d["last_status_code"], 204);
    }

    let ping = h
        .post(
            KEY,
            &format!("/api/v1/webhooks/{}/ping", endpoint.id),
            &json!({}),
        )
        .await;
    assert_eq!(ping.status, 202);
    assert_eq!(ping.json()["data"]["status"], "pending");
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let pinged = receiver.received()[2].json();
    assert_eq!(
        (pinged["type"].clone(), pinged["data"]["webhook_id"].clone()),
        (json!("ping"), json!(endpoint.id))
    );
}

/// A failing receiver is retried on the schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h),
/// always with the same `webhook-id`, then the delivery fails; redelivering sends it again.
pub async fn webhook_failures_retry_on_schedule_then_fail(h: &Harness) {
    let receiver = Receiver::start().await;
    receiver.always_answer(500);
    let endpoint = register(h, &receiver.url).await;
    place(h).await;
    let d = dispatcher(h);
    assert_eq!(drain(&d).await, 1);
    for wait in RETRY_SCHEDULE {
        h.clock.advance(wait - TimeDelta::seconds(1));
        assert_eq!(drain(&d).await, 0, "not due before its wait of {wait}");
        h.clock.advance(TimeDelta::seconds(1));
        assert_eq!(drain(&d).await, 1, "due after {wait}");
    }
    let listed = deliveries(h, &endpoint).await;
    assert_eq!(listed[0]["status"], "failed");
    assert_eq!(listed[0]["attempts"], 8);
    assert_eq!(listed[0]["last_status_code"], 500);
    assert_eq!(listed[0]["next_attempt_at"], Value::Null);
    h.clock.advance(TimeDelta::days(1));
    assert_eq!(
        drain(&d).await,
        0,
        "a failed delivery is not attempted again"
    );
    let got = receiver.received();
    assert_eq!(got.len(), 8);
    assert!(
        got.iter()
            .all(|r| r.header("webhook-id") == got[0].header("webhook-id"))
    );

    receiver.always_answer(204);
    let path = format!(
        "/api/v1/webhooks/{}/deliveries/{}/redeliver",
        endpoint.id, listed[0]["id"]
    );
    let again = h.post(KEY, &path, &json!({})).await;
    assert_eq!(again.status, 202);
    assert_eq!(again.json()["data"]["event_id"], listed[0]["event_id"]);
    assert_eq!(drain(&d).await, 1);
    assert_eq!(
        receiver.received()[8].header("webhook-id"),
        got[0].header("webhook-id")
    );
    assert_eq!(deliveries(h, &endpoint).await[0]["status"], "delivered");
}

/// An attempt without an answer within the timeout, or answered with a redirect (never
/// followed), is retried like a failure.
pub async fn webhook_timeouts_are_retried(h: &Harness) {
    let receiver = Receiver::start().await;
    receiver.then_stall(Duration::from_secs(2));
    let endpoint = register(h, &receiver.url).await;
    place(h).await;
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let listed = deliveries(h, &endpoint).await;
    assert_eq!(listed[0]["status"], "pending");
    assert_eq!(listed[0]["last_error"], "timeout");
    assert_eq!(listed[0]["last_status_code"], Value::Null);
    receiver.then_answer(&[302]);
    h.clock.advance(RETRY_SCHEDULE[0]);
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let listed = deliveries(h, &endpoint).await;
    assert_eq!(listed[0]["status"], "pending");
    assert_eq!(listed[0]["last_status_code"], 302);
    assert!(
        receiver.received().iter().all(|r| r.path == "/hooks"),
        "the redirect was not followed"
    );
    h.clock.advance(RETRY_SCHEDULE[1]);
    assert_eq!(drain(&dispatcher(h)).await, 1);
    assert_eq!(deliveries(h, &endpoint).await[0]["status"], "delivered");
}

/// 410 Gone disables the endpoint at once (nothing more is queued for it) until it is
/// enabled again; after a rotation both secrets sign for 24 hours, then only the new one.
pub async fn webhook_gone_disables_and_rotation_signs_with_both(h: &Harness) {
    let receiver = Receiver::start().await;
    receiver.then_answer(&[410]);
    let endpoint = register(h, &receiver.url).await;
    let path = format!("/api/v1/webhooks/{}", endpoint.id);
    place(h).await;
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let shown = h.get(KEY, &path).await.json()["data"].clone();
    assert_eq!(
        (shown["enabled"].clone(), shown["disabled_reason"].clone()),
        (json!(false), json!("gone"))
    );
    assert_eq!(deliveries(h, &endpoint).await[0]["status"], "failed");
    place(h).await;
    assert_eq!(
        deliveries(h, &endpoint).await.len(),
        1,
        "nothing queued while disabled"
    );

    let enabled = send(h, Method::PATCH, &path, json!({"enabled": true})).await;
    enabled.assert_ok("enable");
    assert_eq!(enabled.json()["data"]["disabled_reason"], Value::Null);
    let rotated = h
        .post(KEY, &format!("{path}/rotate_secret"), &json!({}))
        .await;
    rotated.assert_ok("rotate");
    let new_secret = rotated.json()["data"]["secret"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(new_secret.starts_with("whsec_") && new_secret != endpoint.secret);
    place(h).await;
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let both = receiver
        .received()
        .last()
        .cloned()
        .expect("the new order's event");
    assert_eq!(both.header("webhook-signature").split(' ').count(), 2);
    for secret in [&endpoint.secret, &new_secret] {
        verify(secret, &both.headers, &both.body, h.engine.now(), TOLERANCE)
            .expect("both secrets sign during the overlap");
    }
    h.clock
        .advance(TimeDelta::hours(24) + TimeDelta::seconds(1));
    h.post(KEY, &format!("{path}/ping"), &json!({})).await;
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let later = receiver.received().last().cloned().expect("the ping");
    assert!(
        verify(
            &new_secret,
            &later.headers,
            &later.body,
            h.engine.now(),
            TOLERANCE
        )
        .is_ok()
    );
    assert!(
        verify(
            &endpoint.secret,
            &later.headers,
            &later.body,
            h.engine.now(),
            TOLERANCE
        )
        .is_err()
    );
}

/// Three quick moves of one order reach the endpoint in order, also when the first attempt
/// of the first event failed; another order's events do not wait for them.
pub async fn webhook_events_of_one_order_arrive_in_order(h: &Harness) {
    let receiver = Receiver::start().await;
    receiver.then_answer(&[500]);
    register(h, &receiver.url).await;
    let (first, _) = place(h).await;
    let operator = h.engine.operator();
    for to in [
        OrderStatus::Confirmed,
        OrderStatus::Preparing,
        OrderStatus::Shipped,
    ] {
        operator.move_order(first, to, None).await.expect("a move");
    }
    let d = dispatcher(h);
    assert_eq!(
        drain(&d).await,
        1,
        "the first event failed; the later ones wait for it"
    );
    let (second, _) = place(h).await;
    assert_eq!(drain(&d).await, 1, "another order does not wait");
    h.clock.advance(RETRY_SCHEDULE[0]);
    assert_eq!(drain(&d).await, 4);
    let statuses: Vec<(i64, String)> = receiver
        .received()
        .iter()
        .filter(|r| r.answered.is_success())
        .map(|r| {
            let order = &r.json()["data"]["order"];
            (
                order["id"].as_i64().unwrap_or_default(),
                order["status"]["key"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    let of_first: Vec<&str> = statuses
        .iter()
        .filter(|(id, _)| *id == first.get())
        .map(|(_, s)| s.as_str())
        .collect();
    let expected = [
        OrderStatus::Pending,
        OrderStatus::Confirmed,
        OrderStatus::Preparing,
        OrderStatus::Shipped,
    ]
    .map(OrderStatus::as_str);
    assert_eq!(of_first, expected);
    assert_eq!(
        statuses[0],
        (second.get(), OrderStatus::Pending.as_str().to_owned())
    );
}

/// The registration rules: the ability, the side, the fields, the limit of 10, ownership.
pub async fn webhook_registration_rules(h: &Harness) {
    let refused = h
        .post(
            "sk_demo_catalog_only",
            "/api/v1/webhooks",
            &json!({"url": "https://127.0.0.1/h"}),
        )
        .await;
    refused.assert_error(403, "forbidden_ability");
    for (body, field) in [
        (json!({"url": "ftp://example.com/h"}), "url"),
        (json!({"url": "https:///nohost"}), "url"),
        (
            json!({"url": "https://127.0.0.1/h", "events": ["order.created", "nope"]}),
            "events",
        ),
        (
            json!({"url": "https://127.0.0.1/h", "events": []}),
            "events",
        ),
        (
            json!({"url": "https://127.0.0.1/h", "description": "a\u{7}b"}),
            "description",
        ),
    ] {
        let invalid = h.post(KEY, "/api/v1/webhooks", &body).await;
        invalid.assert_error(422, "validation_failed");
        assert_eq!(invalid.error_fields(), [field], "{body}");
    }
    let missing = h
        .post(KEY, "/api/v1/webhooks", &json!({"description": "x"}))
        .await;
    assert_eq!(missing.error_fields(), ["url"]);
    let only_created = h
        .post(KEY, "/api/v1/webhooks", &json!({"url": "https://127.0.0.1/1", "events": ["order.created"], "description": "متجري"}))
        .await;
    assert_eq!(only_created.status, 201);
    assert_eq!(
        only_created.json()["data"]["events"],
        json!(["order.created"])
    );
    for n in 2..=10 {
        let url = format!("https://127.0.0.1/{n}");
        assert_eq!(
            h.post(KEY, "/api/v1/webhooks", &json!({"url": url}))
                .await
                .status,
            201
        );
    }
    h.post(
        KEY,
        "/api/v1/webhooks",
        &json!({"url": "https://127.0.0.1/11"}),
    )
    .await
    .assert_conflict("webhook_limit");
    let id = only_created.json()["data"]["id"]
        .as_i64()
        .unwrap_or_default();
    let path = format!("/api/v1/webhooks/{id}");
    h.get("sk_demo_marketer_b", &path)
        .await
        .assert_error(404, "not_found");
    for (body, field) in [
        (json!({"enabled": "yes"}), "enabled"),
        (json!({"url": "not a url"}), "url"),
        (json!({"events": "order.created"}), "events"),
    ] {
        let bad = send(h, Method::PATCH, &path, body).await;
        bad.assert_error(422, "validation_failed");
        assert_eq!(bad.error_fields(), [field]);
    }
    let off = send(
        h,
        Method::PATCH,
        &path,
        json!({"enabled": false, "description": null}),
    )
    .await;
    off.assert_ok("disable");
    assert_eq!(off.json()["data"]["disabled_reason"], "manual");
    assert_eq!(off.json()["data"]["description"], Value::Null);
    let deleted = h
        .request(Method::DELETE, Some(KEY), &path, Bytes::new(), &[])
        .await;
    assert_eq!(deleted.status, 204);
    assert!(deleted.body.is_empty());
    h.get(KEY, &path).await.assert_error(404, "not_found");
    let nobody = h
        .engine
        .operator()
        .create_webhook(
            AccountId::new(i64::MAX),
            WebhookInput::url("https://127.0.0.1/n"),
        )
        .await;
    assert!(
        matches!(nobody, Err(OperatorError::NotFound)),
        "an endpoint of an account that does not exist: {nobody:?}"
    );
}
