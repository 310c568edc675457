//! [`Hooked`]: a store under a hook passes the store and HTTP conformance suites (the wrapper
//! generated from the delegation list forwards every operation to its store), and the hook
//! sees every operation once (and can refuse one before it reaches the store).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use commerce_core::model::{AccountState, ApiStatus, BillingMonth, NewAccount, RateWindow, Side};
use commerce_core::store::*;
use commerce_core::testing::http::Harness;

/// Sees everything, refuses nothing.
struct Watching;
impl StoreHook for Watching {}

fn hooked() -> Hooked {
    Hooked::new(Arc::new(MemoryStore::new()), Arc::new(Watching))
}

async fn fresh_store() -> Arc<dyn Store> {
    Arc::new(hooked())
}

mod store_cases {
    use super::*;
    commerce_core::store_conformance_tests!(fresh_store());
}

mod http_cases {
    use super::*;
    commerce_core::http_conformance_tests!(Harness::bare(Arc::new(hooked())));
}

/// Records what it saw; refuses `account` reads while `refuse` is on.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<(Concern, &'static str, bool)>>,
    refuse: AtomicBool,
}

impl StoreHook for Recorder {
    fn before(&self, op: Operation) -> Result<(), StoreError> {
        if op.name == "account" && self.refuse.load(Ordering::SeqCst) {
            return Err(StoreError::Invalid("refused by the hook".into()));
        }
        Ok(())
    }

    fn after(&self, op: Operation, succeeded: bool, _took: Duration) {
        self.seen
            .lock()
            .unwrap()
            .push((op.concern, op.name, succeeded));
    }
}

#[tokio::test]
async fn a_hook_sees_each_operation_once_and_may_refuse_it() {
    let recorder = Arc::new(Recorder::default());
    let backend = Arc::new(MemoryStore::new());
    let store = Hooked::new(backend.clone(), recorder.clone());
    let account = store
        .insert_account(
            NewAccount::of_side(Side::Marketer, "A", "a@example.com", "01000000000")
                .with_states(AccountState::Active, ApiStatus::Approved),
            Utc::now(),
        )
        .await
        .unwrap();
    assert_eq!(
        store.account(account.id).await.unwrap(),
        Some(account.clone())
    );
    assert_eq!(
        store
            .meter(account.id, &BillingMonth::parse("2026-11").unwrap())
            .await
            .unwrap()
            .order_operations,
        0
    );
    // Methods with a default body reach the backend's own version as one operation (not the
    // default's calls through the wrapper).
    assert_eq!(
        store
            .authenticate(&[7; 32], Utc::now(), RateWindow::from_minute(0))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.finish_deliveries(Vec::new()).await.unwrap(),
        Vec::<bool>::new()
    );

    recorder.refuse.store(true, Ordering::SeqCst);
    let refused = store.account(account.id).await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    // The backend itself still answers: the hook refused before reaching it.
    assert!(backend.account(account.id).await.unwrap().is_some());

    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (Concern::Accounts, "insert_account", true),
            (Concern::Accounts, "account", true),
            (Concern::Meter, "meter", true),
            (Concern::Accounts, "authenticate", true),
            (Concern::Webhooks, "finish_deliveries", true),
        ]
    );
}

/// Before every `place_order`, the operator's price of `variant` changes (a catalogue edit
/// between the checkout's pricing and its stock write, every time).
struct Repricing {
    store: Arc<MemoryStore>,
    variant: Mutex<Option<commerce_core::model::VariantId>>,
    edits: std::sync::atomic::AtomicI64,
}

impl StoreHook for Repricing {
    fn before(&self, op: Operation) -> Result<(), StoreError> {
        let Some(variant) = *self.variant.lock().unwrap() else {
            return Ok(());
        };
        if op.name == "place_order" {
            let n = self.edits.fetch_add(1, Ordering::SeqCst) + 1;
            let patch = commerce_core::model::VariantPatch::default()
                .set_price(rust_decimal::Decimal::from(700 + n));
            use std::future::Future as _;
            // The memory store answers on the first poll.
            let edit = self.store.update_variant(variant, patch, Utc::now());
            let mut edit = std::pin::pin!(edit);
            let waker = std::task::Waker::noop();
            let polled = edit
                .as_mut()
                .poll(&mut std::task::Context::from_waker(waker));
            assert!(matches!(polled, std::task::Poll::Ready(Ok(_))));
        }
        Ok(())
    }
}

/// An order whose stock write finds its price changed is priced again from the store and
/// written again, once; when the price has changed again by then, the answer is a 409
/// `catalogue_changed` and nothing is written. With the edits stopped, the same request is
/// placed at the price as it is.
#[tokio::test]
async fn an_order_the_catalogue_changes_under_twice_is_a_409_that_writes_nothing() {
    let memory = Arc::new(MemoryStore::new());
    let hook = Arc::new(Repricing {
        store: memory.clone(),
        variant: Mutex::new(None),
        edits: Default::default(),
    });
    let h = Harness::bare(Arc::new(Hooked::new(memory.clone(), hook.clone()))).await;
    let variant = h.fixture.plain_variant;
    *hook.variant.lock().unwrap() = Some(variant);
    let (orders, stock) = (h.order_count().await, h.available(variant).await);
    let refused = h
        .post("sk_demo_bench", "/api/v1/orders", &h.order_body(1, "10"))
        .await;
    refused.assert_conflict("catalogue_changed");
    assert_eq!(
        hook.edits.load(Ordering::SeqCst),
        2,
        "priced twice, written twice"
    );
    assert_eq!(h.order_count().await, orders);
    assert_eq!(h.available(variant).await, stock);

    *hook.variant.lock().unwrap() = None;
    let placed = h
        .post("sk_demo_bench", "/api/v1/orders", &h.order_body(1, "10"))
        .await;
    assert_eq!(placed.status, 201);
    let line = &placed.json()["data"]["lines"][0];
    // Price 702 (the last edit) plus the profit of 10.
    assert_eq!(line["sell_price"], "712.00", "{line}");
    assert_eq!(h.order_count().await, orders + 1);
}
