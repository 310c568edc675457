//! The engine's metrics (feature `metrics`) after real requests against the sandbox, recorded
//! by `metrics-util`'s `DebuggingRecorder`: requests by endpoint and status, their duration,
//! rate-limit refusals and idempotent replays.
#![cfg(feature = "metrics")]

use std::sync::Arc;

use bytes::Bytes;
use commerce_core::store::MemoryStore;
use commerce_core::{Engine, sandbox};
use http::Request;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn request(method: &str, uri: &str, body: Option<Value>) -> Request<Bytes> {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let method = method.parse().expect("method");
    commerce_core::testing::http::build_request(method, Some("sk_demo_marketer"), uri, body, &[])
}

#[test]
fn requests_are_counted_and_timed() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        runtime().block_on(async {
            let engine = Engine::new(Arc::new(MemoryStore::new()));
            let fixture = sandbox::seed(&engine).await.expect("sandbox seeds");
            for _ in 0..2 {
                let me = engine.handle(request("GET", "/api/v1/me", None)).await;
                assert_eq!(me.status(), 200);
            }
            let order = json!({
                "full_name": "سارة حسن",
                "phone": "+201112223334",
                "address": "12 شارع النصر",
                "governorate_id": fixture.cairo,
                "shipping_option_id": fixture.standard_shipping,
                "lines": [{"variant_id": fixture.plain_variant, "quantity": 1, "profit": "40.00"}],
            });
            for expected in ["false", "true"] {
                let mut create = request("POST", "/api/v1/orders", Some(order.clone()));
                create
                    .headers_mut()
                    .insert("idempotency-key", "metrics-1".parse().unwrap());
                let created = engine.handle(create).await;
                assert_eq!(created.status(), 201);
                assert_eq!(created.headers()["idempotent-replayed"], expected);
            }
            let mut refused = 0;
            for _ in 0..10 {
                let limited = Request::get("/api/v1/me")
                    .header("authorization", "Bearer sk_demo_limited")
                    .body(Bytes::new())
                    .unwrap();
                if engine.handle(limited).await.status() == 429 {
                    refused += 1;
                }
            }
            assert!(refused > 0, "the limited key is refused within 10 requests");
        })
    });
    type Labels = Vec<(String, String)>;
    let values: Vec<(String, Labels, DebugValue)> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (key.name().to_owned(), labels, value)
        })
        .collect();
    let find = |name: &str, labels: &[(&str, &str)]| {
        values
            .iter()
            .find(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
            })
            .map(|(_, _, value)| value)
    };
    match find(
        "commerce_requests_total",
        &[("endpoint", "me.show"), ("status", "200")],
    ) {
        Some(DebugValue::Counter(n)) => assert!(*n >= 2, "{n}"),
        other => panic!("commerce_requests_total: {other:?} in {values:?}"),
    }
    match find(
        "commerce_request_duration_seconds",
        &[("endpoint", "me.show")],
    ) {
        Some(DebugValue::Histogram(samples)) => assert!(samples.len() >= 2),
        other => panic!("commerce_request_duration_seconds: {other:?}"),
    }
    match find("commerce_rate_limited_total", &[]) {
        Some(DebugValue::Counter(n)) => assert!(*n >= 1),
        other => panic!("commerce_rate_limited_total: {other:?}"),
    }
    assert!(matches!(
        find("commerce_idempotent_replays_total", &[]),
        Some(DebugValue::Counter(1))
    ));
    match find(
        "commerce_requests_total",
        &[("endpoint", "orders.create"), ("status", "201")],
    ) {
        Some(DebugValue::Counter(2)) => {}
        other => panic!("orders.create 201: {other:?}"),
    }
}
