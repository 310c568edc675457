//! Bounded work per request: each endpoint's body limit, and unknown keys refused without a
//! store query once one miss is remembered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::Method;
use serde_json::Value;

use crate::Engine;
use crate::domain::keys::KeySpec;
use crate::model::Ability;
use crate::sandbox;
use crate::store::{Hooked, Operation, StoreHook};

use super::fixtures::*;
use super::harness::*;

/// `value` as JSON padded with spaces to exactly `size` bytes.
fn padded(value: &Value, size: usize) -> Bytes {
    let mut body = value.to_string().into_bytes();
    assert!(body.len() <= size, "the JSON itself fits");
    body.resize(size, b' ');
    Bytes::from(body)
}

/// `POST /orders` takes bodies up to `order_body_limit` (256 KiB by default: a 200 KiB order is
/// placed), one byte more is a 413 naming 256 KiB; every other endpoint stops at `body_limit`
/// (16 KiB): one byte more is a 413 naming it, a body of exactly the limit is read.
pub async fn body_limits_are_per_endpoint(h: &Harness) {
    let config = h.engine.config();
    assert_eq!(
        (config.order_body_limit, config.body_limit),
        (256 * 1024, 16 * 1024)
    );
    let order = h.order_body(1, "10.00");
    let big_order = padded(&order, 200 * 1024);
    let r = h
        .request(Method::POST, Some(A), "/api/v1/orders", big_order, &[])
        .await;
    assert_eq!(r.status, 201, "a 200 KiB order is placed: {:?}", r.json());
    let over = padded(&order, config.order_body_limit + 1);
    let r = h
        .request(Method::POST, Some(A), "/api/v1/orders", over, &[])
        .await;
    r.assert_error(413, "payload_too_large");
    let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("256 كيلوبايت"), "{message}");
    let body = serde_json::json!({});
    for path in ["/api/v1/shipping/quote", "/api/v1/webhooks"] {
        let r = h
            .request(
                Method::POST,
                Some(A),
                path,
                padded(&body, config.body_limit + 1),
                &[],
            )
            .await;
        r.assert_error(413, "payload_too_large");
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("16 كيلوبايت"), "{path}: {message}");
        let r = h
            .request(
                Method::POST,
                Some(A),
                path,
                padded(&body, config.body_limit),
                &[],
            )
            .await;
        assert_ne!(r.status, 413, "{path}: a body of exactly the limit is read");
    }
}

/// Counts the store's `authenticate` operations.
#[derive(Default)]
struct CountAuthentications(AtomicUsize);

impl StoreHook for CountAuthentications {
    fn before(&self, op: Operation) -> Result<(), crate::store::StoreError> {
        if op.name == "authenticate" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// Another engine over the harness's store and clock (another instance), whose store
/// queries of keys are counted, mounted like the harness's own.
fn counted_engine(h: &Harness) -> (Arc<dyn HttpIntegration>, Engine, Arc<CountAuthentications>) {
    let count = Arc::new(CountAuthentications::default());
    let store = Hooked::new(h.engine.store().clone(), count.clone());
    let engine = Engine::builder(Arc::new(store))
        .config(sandbox::config())
        .clock(Arc::new(h.clock.clone()))
        .build()
        .expect("valid settings");
    (h.mount_other(engine.clone()), engine, count)
}

async fn me(client: &Arc<dyn HttpIntegration>, key: &str) -> u16 {
    let request = build_request(Method::GET, Some(key), "/api/v1/me", Bytes::new(), &[]);
    client.send(request).await.status().as_u16()
}

/// 50 requests with one unknown key make one store query, then none until the miss's life
/// (`unknown_key_life`) ends; a known key is asked of the store on every request, and a
/// revoked one is refused at once.
pub async fn an_unknown_key_costs_one_store_query(h: &Harness) {
    let (client, engine, count) = counted_engine(h);
    let unknown = crate::domain::keys::generate_key(crate::domain::keys::KEY_PREFIX);
    for _ in 0..50 {
        assert_eq!(me(&client, &unknown).await, 401);
    }
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        1,
        "one store query for 50 misses"
    );
    for _ in 0..3 {
        assert_eq!(me(&client, A).await, 200);
    }
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        4,
        "a known key is looked up each time"
    );
    h.clock
        .advance(chrono::Duration::from_std(engine.config().unknown_key_life).unwrap());
    assert_eq!(me(&client, &unknown).await, 401);
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        5,
        "asked again once the miss's life ended"
    );
    let created = h
        .engine
        .operator()
        .create_key(
            h.fixture.marketer_a,
            KeySpec::new("revoked".to_owned(), vec![Ability::CatalogRead], None, None),
        )
        .await
        .expect("key");
    assert_eq!(me(&client, &created.plaintext).await, 200);
    h.engine
        .operator()
        .revoke_key(created.key.id)
        .await
        .expect("revoked");
    assert_eq!(
        me(&client, &created.plaintext).await,
        401,
        "revoked: refused at once"
    );
}

/// A key stored after its plaintext was refused: a created key works at once on every engine
/// (its random plaintext was never sent before); an imported one works at once on the engine
/// that imported it, and on another engine that remembered its miss once that miss's life
/// has ended (`unknown_key_life`, as docs/authentication.md says).
pub async fn keys_stored_after_a_miss_work(h: &Harness) {
    let (client, engine, count) = counted_engine(h);
    let operator = h.engine.operator();
    // Misses remembered by the counted engine; then a key created by another engine.
    for i in 0..5 {
        assert_eq!(me(&client, &format!("sk_live_missing_{i:0>32}")).await, 401);
    }
    let created = operator
        .create_key(
            h.fixture.marketer_a,
            KeySpec::new(
                "created later".to_owned(),
                vec![Ability::CatalogRead],
                None,
                None,
            ),
        )
        .await
        .expect("key");
    assert_eq!(
        me(&client, &created.plaintext).await,
        200,
        "created: at once"
    );
    // The same plaintext refused, then imported by this very engine: at once.
    let own = format!(
        "legacy_own_{}",
        crate::domain::keys::generate_key(crate::domain::keys::KEY_PREFIX)
    );
    assert_eq!(me(&client, &own).await, 401);
    engine
        .operator()
        .import_key(
            h.fixture.marketer_a,
            &own,
            KeySpec::new(
                "imported here".to_owned(),
                vec![Ability::CatalogRead],
                None,
                None,
            ),
        )
        .await
        .expect("imported");
    assert_eq!(
        me(&client, &own).await,
        200,
        "imported on this engine: at once"
    );
    // Refused, then imported by another engine (as another instance would): it works once the
    // miss's life has ended, without the store being asked before.
    let elsewhere = format!(
        "legacy_far_{}",
        crate::domain::keys::generate_key(crate::domain::keys::KEY_PREFIX)
    );
    assert_eq!(me(&client, &elsewhere).await, 401);
    operator
        .import_key(
            h.fixture.marketer_a,
            &elsewhere,
            KeySpec::new(
                "imported there".to_owned(),
                vec![Ability::CatalogRead],
                None,
                None,
            ),
        )
        .await
        .expect("imported");
    let asked = count.0.load(Ordering::SeqCst);
    assert_eq!(
        me(&client, &elsewhere).await,
        401,
        "still within the miss's life"
    );
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        asked,
        "refused without a store query"
    );
    let life = chrono::Duration::from_std(engine.config().unknown_key_life).unwrap();
    h.clock.advance(life);
    assert_eq!(
        me(&client, &elsewhere).await,
        200,
        "once the miss's life ended"
    );
    // The harness's own engine never saw a miss of it: at once there.
    assert_eq!(h.get(&elsewhere, "/api/v1/me").await.status, 200);
}
