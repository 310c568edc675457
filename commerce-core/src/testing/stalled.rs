//! A `POST /orders` or `POST /quotes` that stalls past the idempotency stale time (a paused
//! process, pool starvation), through the engine on any store, while a retry with its key
//! takes the key over: one order (or quote) for the key whatever the timing. Stalled before
//! placing, the request places nothing and answers 409; stalled after placing (or inserting
//! its quote), it answers 201 with the one order (or quote), and so does the retry.
//!
//! The stall is a gate in front of the store's `place_order` or `finish_idempotent` (a
//! wrapper of the whole store, every other operation passed through), the clock a
//! [`ManualClock`](crate::clock::ManualClock) moved past
//! [`Config::idempotency_stale_after`](crate::config::Config::idempotency_stale_after).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use std::future::Future;

use chrono::{DateTime, Duration, Utc};
use tokio::sync::Notify;

use super::http::supply::{SUPPLIER, free_variant, post_quote, quote_body};
use super::http::{Harness, TestResponse};
use crate::domain::earnings::WalletTotals;
use crate::model::*;
use crate::store::delegate::forward_store;
use crate::store::*;

const KEY: &str = "sk_demo_marketer";

/// Holds the first operation that [`pass`](Self::pass)es it after [`arm`](Self::arm) until
/// [`resume`](Self::resume).
#[derive(Default)]
struct Gate {
    armed: AtomicBool,
    reached: Notify,
    resumed: Notify,
}

impl Gate {
    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    async fn pass(&self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.reached.notify_one();
            self.resumed.notified().await;
        }
    }

    /// Waits until the armed operation is held.
    async fn reached(&self) {
        self.reached.notified().await;
    }

    fn resume(&self) {
        self.resumed.notify_one();
    }
}

/// A store with a gate before `place_order` and one before `finish_idempotent`; every
/// other operation goes straight to the store (a wrapper from the store's delegation list).
struct Stalling {
    inner: Arc<dyn Store>,
    place: Gate,
    finish: Gate,
}

impl Stalling {
    /// The harness over `store` behind the gates.
    async fn harness(store: Arc<dyn Store>) -> (Harness, Arc<Self>) {
        let stalling = Arc::new(Self {
            inner: store,
            place: Gate::default(),
            finish: Gate::default(),
        });
        (Harness::bare(stalling.clone()).await, stalling)
    }

    /// Holds the operation at its gate, if it has one, then runs it.
    async fn around<T, E: From<StoreError>>(
        &self,
        op: Operation,
        _event: impl FnOnce(&T) + Send,
        call: impl Future<Output = Result<T, E>> + Send,
    ) -> Result<T, E> {
        match op.name {
            "place_order" => self.place.pass().await,
            "finish_idempotent" => self.finish.pass().await,
            _ => {}
        }
        call.await
    }
}

forward_store!(impl for Stalling => inner);

/// The error object of a response (`{"error": {...}}`), without its request's id.
fn error_of(response: &TestResponse) -> serde_json::Value {
    response.json_without_request_id()["error"].clone()
}

/// The original request stalls before placing; past the stale time a retry with the same key
/// and body takes the key over and answers 201; a third request replays the retry's response.
/// When the original resumes, its order is not placed: it answers the same 409 as a request
/// sent while the first is in flight, and exactly one order, one stock reservation and one
/// meter entry stand. Returns the harness (its store is `store`, behind the gate).
pub async fn a_request_that_outlived_the_stale_time_answers_409_and_places_nothing<S: Store>(
    store: Arc<S>,
) -> Harness {
    let (h, stalling) = Stalling::harness(store as Arc<dyn Store>).await;
    let gate = &stalling.place;
    let body = h.order_body(2, "10");
    let orders = h.order_count().await;
    let stock = h.available(h.fixture.plain_variant).await;
    let operator = h.engine.operator();
    let meter = operator
        .meter_this_month(h.fixture.marketer_a)
        .await
        .expect("meter");

    // What a request sent while the first one with its key is still processing answers.
    gate.arm();
    let (first, in_flight) = tokio::join!(h.post_idempotent(KEY, "busy", &body), async {
        gate.reached().await;
        let answer = h.post_idempotent(KEY, "busy", &body).await;
        gate.resume();
        answer
    });
    assert_eq!(first.status, 201);
    in_flight.assert_error(409, "conflict");

    let stale = h.engine.config().idempotency_stale_after + Duration::seconds(1);
    gate.arm();
    let (original, (retry, replay)) = tokio::join!(h.post_idempotent(KEY, "slow", &body), async {
        gate.reached().await;
        h.clock.advance(stale);
        let retry = h.post_idempotent(KEY, "slow", &body).await;
        let replay = h.post_idempotent(KEY, "slow", &body).await;
        gate.resume();
        (retry, replay)
    });
    assert_eq!(
        retry.status,
        201,
        "{}",
        String::from_utf8_lossy(&retry.body)
    );
    assert_eq!(retry.header("idempotent-replayed"), Some("false"));
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body, retry.body);

    original.assert_error(409, "conflict");
    assert_eq!(error_of(&original), error_of(&in_flight));
    assert_eq!(original.header("idempotent-replayed"), Some("false"));

    // One order for each key: the stalled request placed nothing.
    assert_eq!(h.order_count().await, orders + 2);
    assert_eq!(h.available(h.fixture.plain_variant).await, stock - 4);
    let billed = operator
        .meter_this_month(h.fixture.marketer_a)
        .await
        .expect("meter");
    assert_eq!(billed.order_operations, meter.order_operations + 2);
    // The retry's response stands: the key replays it, later too.
    h.clock.advance(stale);
    let later = h.post_idempotent(KEY, "slow", &body).await;
    assert_eq!(later.status, 201);
    assert_eq!(later.body, retry.body);
    h
}

/// Sends a create (`send`) whose first request is held before keeping its response while the
/// clock moves past the stale time and it is sent twice more: a retry, then a replay. Checks
/// that the retry answers 201 with the first request's record, recovered
/// (`Idempotent-Replayed: true`, the same `Location`), the replay is the retry's answer, the
/// first request, resumed, answers 201 with the same record (not replayed), and a later request
/// replays the retry's answer. Returns the first answer and the retry's.
async fn outlived_after_creating<F: Future<Output = TestResponse>>(
    h: &Harness,
    stalling: &Stalling,
    send: impl Fn() -> F,
) -> (TestResponse, TestResponse) {
    let stale = h.engine.config().idempotency_stale_after + Duration::seconds(1);
    stalling.finish.arm();
    let (original, (retry, replay)) = tokio::join!(send(), async {
        stalling.finish.reached().await;
        h.clock.advance(stale);
        let retry = send().await;
        let replay = send().await;
        stalling.finish.resume();
        (retry, replay)
    });
    assert_eq!(
        retry.status,
        201,
        "{}",
        String::from_utf8_lossy(&retry.body)
    );
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(original.status, 201);
    assert_eq!(original.header("idempotent-replayed"), Some("false"));
    assert_eq!(original.json()["data"]["id"], retry.json()["data"]["id"]);
    assert_eq!(retry.header("location"), original.header("location"));
    assert_eq!(replay.body, retry.body);
    let later = send().await;
    assert_eq!(later.header("idempotent-replayed"), Some("true"));
    assert_eq!(later.body, retry.body);
    (original, retry)
}

/// The original request places its order and stalls before keeping its response, past the
/// stale time; a retry recovers that order (201, replayed) and keeps its response. When the
/// original resumes, its response is not kept over the retry's, and it answers 201 with the
/// same order: one order for the key, and the key replays the retry's response.
pub async fn a_request_that_outlived_the_stale_time_after_placing_answers_its_order<S: Store>(
    store: Arc<S>,
) -> Harness {
    let (h, stalling) = Stalling::harness(store as Arc<dyn Store>).await;
    let body = h.order_body(1, "10");
    let orders = h.order_count().await;
    outlived_after_creating(&h, &stalling, || h.post_idempotent(KEY, "placed", &body)).await;
    assert_eq!(h.order_count().await, orders + 1);
    h
}

/// `POST /quotes`: the original request inserts its quote and stalls before keeping its
/// response, past the stale time (as if it died); a retry with the same key and body answers
/// 201 with that same quote (`Idempotent-Replayed: true`, its `Location`), not 409
/// `quote_pending`, and keeps its response. When the original resumes, it answers 201 with the
/// same quote and its response is not kept over the retry's: one quote for the key.
pub async fn a_quote_request_that_outlived_the_stale_time_after_inserting_answers_its_quote<
    S: Store,
>(
    store: Arc<S>,
) -> Harness {
    let (h, stalling) = Stalling::harness(store as Arc<dyn Store>).await;
    let (variant, _, _) = free_variant(&h).await;
    let body = quote_body(variant, "31.50", 12);
    let before = h.get(SUPPLIER, "/api/v1/quotes").await.json()["meta"].clone();
    let send = || post_quote(&h, &body, Some("quote-died"));
    let (original, retry) = outlived_after_creating(&h, &stalling, send).await;
    let id = original.json()["data"]["id"].clone();
    assert_eq!(retry.json()["data"]["status"]["key"], "pending");
    // One quote for the key: the variant's pending quote, and one more in the list.
    let after = h.get(SUPPLIER, "/api/v1/quotes").await.json()["meta"].clone();
    assert_eq!(after["total"], before["total"].as_u64().unwrap_or(0) + 1);
    let shown = h
        .get(SUPPLIER, "/api/v1/supply/variants?per_page=100")
        .await
        .json();
    let pending: Vec<_> = shown["data"]
        .as_array()
        .expect("variants")
        .iter()
        .filter(|v| v["id"] == variant)
        .map(|v| v["pending_quote_id"].clone())
        .collect();
    assert_eq!(pending, vec![id]);
    h
}
