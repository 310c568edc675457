//! A store failure or a panic inside a handler is a 500 `server_error`, and nothing of the
//! failed request is left behind: no order, no stock taken, no meter entry, no idempotency key.
//! A request that stalls past the idempotency stale time places nothing once a retry took its
//! key over.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use commerce_core::store::{Hooked, MemoryStore, Operation, StoreError, StoreHook};
use commerce_core::testing::http::Harness;

/// Fails `place_order` with a backend error (or panics inside `shipping_options`) while the
/// switch is on: a hook on a `MemoryStore`, no method forwarding.
#[derive(Default)]
struct Faults {
    fail_place_order: AtomicBool,
    panic_on_shipping: AtomicBool,
}

#[derive(Debug)]
struct Boom;
impl std::fmt::Display for Boom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection reset")
    }
}
impl std::error::Error for Boom {}

impl StoreHook for Faults {
    fn before(&self, op: Operation) -> Result<(), StoreError> {
        match op.name {
            "place_order" if self.fail_place_order.load(Ordering::SeqCst) => {
                Err(StoreError::backend(Boom))
            }
            "shipping_options" if self.panic_on_shipping.load(Ordering::SeqCst) => {
                panic!("a bug inside a handler")
            }
            _ => Ok(()),
        }
    }
}

async fn harness() -> (Harness, Arc<Faults>) {
    let faults = Arc::new(Faults::default());
    let store = Hooked::new(Arc::new(MemoryStore::new()), faults.clone());
    (Harness::bare(Arc::new(store)).await, faults)
}

#[tokio::test]
async fn a_store_failure_is_a_500_and_leaves_nothing_behind() {
    let (h, store) = harness().await;
    let body = h.order_body(2, "10");
    let orders = h.order_count().await;
    let stock = h.available(h.fixture.plain_variant).await;
    let meter = h
        .engine
        .operator()
        .meter_this_month(h.fixture.marketer_a)
        .await
        .unwrap();

    store.fail_place_order.store(true, Ordering::SeqCst);
    let failed = h
        .post_idempotent("sk_demo_marketer", "retry-me", &body)
        .await;
    failed.assert_error(500, "server_error");
    assert_eq!(failed.header("idempotent-replayed"), Some("false"));
    assert_eq!(h.order_count().await, orders);
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    assert_eq!(
        h.engine
            .operator()
            .meter_this_month(h.fixture.marketer_a)
            .await
            .unwrap(),
        meter
    );

    // The key was not kept: the retry registers the order.
    store.fail_place_order.store(false, Ordering::SeqCst);
    let retried = h
        .post_idempotent("sk_demo_marketer", "retry-me", &body)
        .await;
    assert_eq!(retried.status, 201);
    assert_eq!(retried.header("idempotent-replayed"), Some("false"));
    assert_eq!(h.available(h.fixture.plain_variant).await, stock - 2);
}

#[tokio::test]
async fn a_panic_inside_a_handler_is_a_500() {
    let (h, store) = harness().await;
    store.panic_on_shipping.store(true, Ordering::SeqCst);
    let r = h.get("sk_demo_marketer", "/api/v1/shipping/options").await;
    r.assert_error(500, "server_error");
    store.panic_on_shipping.store(false, Ordering::SeqCst);
    assert_eq!(
        h.get("sk_demo_marketer", "/api/v1/shipping/options")
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn a_request_stalled_past_the_stale_time_answers_409_and_places_nothing() {
    commerce_core::testing::stalled::a_request_that_outlived_the_stale_time_answers_409_and_places_nothing(
        Arc::new(MemoryStore::new()),
    )
    .await;
}

#[tokio::test]
async fn a_request_stalled_past_the_stale_time_after_placing_answers_its_order() {
    commerce_core::testing::stalled::a_request_that_outlived_the_stale_time_after_placing_answers_its_order(
        Arc::new(MemoryStore::new()),
    )
    .await;
}

#[tokio::test]
async fn a_quote_request_stalled_past_the_stale_time_after_inserting_answers_its_quote() {
    commerce_core::testing::stalled::a_quote_request_that_outlived_the_stale_time_after_inserting_answers_its_quote(
        Arc::new(MemoryStore::new()),
    )
    .await;
}
