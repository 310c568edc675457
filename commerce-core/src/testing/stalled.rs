//! A `POST /orders` that stalls between its idempotency begin and its placement past the
//! stale time (a paused process, pool starvation), through the engine on any store: the
//! retry's order is the key's only order, and the stalled request answers 409.
//!
//! The stall is a gate in front of the store's `place_order` ([`Composed::with_orders`]), the
//! clock a [`ManualClock`](crate::clock::ManualClock) moved past
//! [`Config::idempotency_stale_after`](crate::Config::idempotency_stale_after).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use tokio::sync::Notify;

use super::http::{Harness, TestResponse};
use crate::earnings::WalletTotals;
use crate::model::*;
use crate::store::{
    Composed, OrderStore, PlaceOrderError, StatusChange, StatusChangeError, Store, StoreError,
};

const KEY: &str = "sk_demo_marketer";

/// Holds the first `place_order` after [`arm`](Self::arm) until [`resume`](Self::resume);
/// every other operation goes straight to the backend.
struct StallingOrders<S> {
    inner: Arc<S>,
    armed: AtomicBool,
    reached: Notify,
    resumed: Notify,
}

impl<S> StallingOrders<S> {
    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Waits until the armed placement is held.
    async fn reached(&self) {
        self.reached.notified().await;
    }

    fn resume(&self) {
        self.resumed.notify_one();
    }
}

#[async_trait]
impl<S: Store> OrderStore for StallingOrders<S> {
    async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError> {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.reached.notify_one();
            self.resumed.notified().await;
        }
        self.inner.place_order(order).await
    }
    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError> {
        self.inner.change_order_status(change).await
    }
    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        self.inner.set_line_outcomes(order, outcomes, now).await
    }
    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        self.inner.set_tracking_url(order, url, now).await
    }
    async fn order(
        &self,
        account: Option<AccountId>,
        id: OrderId,
    ) -> Result<Option<Order>, StoreError> {
        self.inner.order(account, id).await
    }
    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<Order>, StoreError> {
        self.inner.orders(account, filter, page).await
    }
    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> Result<WalletTotals, StoreError> {
        self.inner.wallet_totals(account, held_after).await
    }
}

/// The error object of a response (`{"error": {...}}`).
fn error_of(response: &TestResponse) -> serde_json::Value {
    response.json()["error"].clone()
}

/// The original request stalls before placing; past the stale time a retry with the same key
/// and body takes the key over and answers 201; a third request replays the retry's response.
/// When the original resumes, its order is not placed: it answers the same 409 as a request
/// sent while the first is in flight, and exactly one order, one stock reservation and one
/// meter entry stand. Returns the harness (its store is `store`, behind the gate).
pub async fn a_request_that_outlived_the_stale_time_answers_409_and_places_nothing<S: Store>(
    store: Arc<S>,
) -> Harness {
    let gate = Arc::new(StallingOrders {
        inner: store.clone(),
        armed: AtomicBool::new(false),
        reached: Notify::new(),
        resumed: Notify::new(),
    });
    let h = Harness::bare(Arc::new(Composed::of(store).with_orders(gate.clone()))).await;
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
