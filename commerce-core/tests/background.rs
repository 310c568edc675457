//! `Engine::run_background`: the dispatcher delivers and the purges run while it runs; once
//! its shutdown future resolves it returns, the dispatcher stopped, and the store's last
//! operation is its `close`.

#[path = "background/catalog_changed_scale.rs"]
mod catalog_changed_scale;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use commerce_core::store::{Hooked, MemoryStore, Operation, StoreHook};
use commerce_core::testing::http::receiver::Receiver;
use commerce_core::{Engine, sandbox};
use http::Request;
use serde_json::{Value, json};

/// Records the name of every store operation that ran, in order.
#[derive(Default)]
struct Recorder(Mutex<Vec<&'static str>>);

impl Recorder {
    fn names(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().clone()
    }
}

impl StoreHook for Recorder {
    fn after(&self, op: Operation, _: bool, _: Duration) {
        self.0.lock().unwrap().push(op.name);
    }
}

async fn post(engine: &Engine, path: &str, headers: &[(&str, &str)], body: Value) -> Value {
    let mut request = Request::post(format!("/api/v1{path}"))
        .header("authorization", "Bearer sk_demo_marketer")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Bytes::from(body.to_string())).unwrap();
    let response = engine.handle(request).await;
    let status = response.status();
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert!(status.is_success(), "{path}: {status} {body}");
    body
}

/// Waits (at most `bound`) until `done` holds.
async fn until(bound: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < bound, "{what}: not within {bound:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_background_delivers_purges_then_stops_and_closes_the_store() {
    let recorder = Arc::new(Recorder::default());
    let store = Hooked::new(Arc::new(MemoryStore::new()), recorder.clone());
    let engine = Engine::builder(Arc::new(store))
        .config(sandbox::config())
        .build()
        .unwrap();
    sandbox::seed(&engine).await.unwrap();
    let receiver = Receiver::start().await;
    post(&engine, "/webhooks", &[], json!({"url": receiver.url})).await;

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let background = tokio::spawn(engine.clone().run_background(async {
        let _ = stopped.await;
    }));
    let order = json!({
        "external_reference": "BACKGROUND-1",
        "full_name": "سارة حسن",
        "phone": "01112223334",
        "address": "12 شارع النصر",
        "governorate_id": 1,
        "shipping_option_id": 1,
        "lines": [{"variant_id": 1, "quantity": 1, "profit": "40.00"}],
    });
    post(
        &engine,
        "/orders",
        &[("idempotency-key", "background-1")],
        order,
    )
    .await;

    // Running: the order's event reaches the receiver, and the purges ran once at start.
    until(Duration::from_secs(20), "order.created delivered", || {
        receiver
            .received()
            .iter()
            .any(|r| r.json()["type"] == "order.created")
    })
    .await;
    until(Duration::from_secs(20), "both purges ran", || {
        let names = recorder.names();
        names.contains(&"purge_idempotency") && names.contains(&"purge_deliveries")
    })
    .await;
    assert!(!recorder.names().contains(&"close"), "closed while running");

    // Stopped: it returns, so the dispatcher's run (joined in it) returned too, and the
    // store's last operation is its close.
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(20), background)
        .await
        .expect("run_background returns once its shutdown resolves")
        .expect("and does not panic");
    let names = recorder.names();
    assert_eq!(names.last(), Some(&"close"), "{names:?}");
    assert_eq!(names.iter().filter(|n| **n == "close").count(), 1);
}

/// A shutdown that resolved before it started: it stops at once, the store closed.
#[tokio::test]
async fn run_background_stops_at_once_on_a_resolved_shutdown() {
    let recorder = Arc::new(Recorder::default());
    let store = Hooked::new(Arc::new(MemoryStore::new()), recorder.clone());
    let engine = Engine::new(Arc::new(store));
    tokio::time::timeout(
        Duration::from_secs(20),
        engine.run_background(std::future::ready(())),
    )
    .await
    .expect("returns at once");
    assert_eq!(recorder.names().last(), Some(&"close"));
}

/// The dispatcher that `run_background` runs is the engine's, with the settings the builder
/// was given (an application's `COMMERCE_DISPATCHER__*`), not the defaults.
#[test]
fn the_dispatcher_runs_with_the_builders_settings() {
    use commerce_core::webhooks::DispatcherConfig;

    let custom = DispatcherConfig::default()
        .with_timeout(Duration::from_secs(3))
        .with_batch(7);
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .dispatcher_config(custom.clone())
        .build()
        .expect("the settings are valid");
    assert_eq!(engine.dispatcher().config(), &custom);
    assert_eq!(
        engine.clone().dispatcher().config(),
        &custom,
        "a clone keeps them"
    );
    // A lease no longer than the attempt it covers is refused, naming it.
    let refused = Engine::builder(Arc::new(MemoryStore::new()))
        .dispatcher_config(DispatcherConfig::default().with_timeout(Duration::from_secs(60)))
        .build()
        .expect_err("a 60 s attempt under a 60 s lease");
    assert_eq!(refused.setting, "lease");
    let plain = Engine::new(Arc::new(MemoryStore::new()));
    assert_eq!(plain.dispatcher().config(), &DispatcherConfig::default());
    assert_ne!(custom, DispatcherConfig::default());
}
