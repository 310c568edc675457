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
            NewAccount::builder()
                .name("A".to_owned())
                .email("a@example.com".to_owned())
                .phone("01000000000".to_owned())
                .side(Side::Marketer)
                .state(AccountState::Active)
                .api_status(ApiStatus::Approved)
                .build(),
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

/// The methods of the store traits in `sources` (each a file of `src/store/`), by trait: every
/// `fn` between a `pub trait ...Store` line and the trait's closing brace.
fn trait_methods(sources: &[&str]) -> Vec<(String, String)> {
    let mut methods = Vec::new();
    for source in sources {
        let mut in_trait: Option<String> = None;
        for line in source.lines() {
            if let Some(rest) = line.strip_prefix("pub trait ") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
                in_trait = name.ends_with("Store").then_some(name);
                continue;
            }
            if line == "}" {
                in_trait = None;
            }
            let Some(store) = &in_trait else { continue };
            let signature = line.trim_start();
            let signature = signature.strip_prefix("async ").unwrap_or(signature);
            if let Some(rest) = signature.strip_prefix("fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                methods.push((store.clone(), name));
            }
        }
    }
    methods
}

/// The methods of `methods` that the delegation list (`delegate.rs`'s `store_methods!`) does
/// not name under their trait.
fn unlisted(methods: &[(String, String)], delegation: &str) -> Vec<String> {
    let list = delegation
        .split("macro_rules! store_methods")
        .nth(1)
        .and_then(|rest| rest.split("macro_rules!").next())
        .unwrap_or_default();
    // The list groups methods as `Concern Trait { fn name(...) ...; ... }`.
    let listed_under = |store: &str, name: &str| {
        list.split(&format!(" {store} {{"))
            .nth(1)
            .and_then(|group| group.split("\n            }").next())
            .is_some_and(|group| group.contains(&format!("fn {name}(")))
    };
    methods
        .iter()
        .filter(|(store, name)| !listed_under(store, name))
        .map(|(store, name)| format!("{store}::{name}"))
        .collect()
}

const STORE_TRAITS: [&str; 8] = [
    include_str!("../src/store/accounts.rs"),
    include_str!("../src/store/catalog.rs"),
    include_str!("../src/store/orders.rs"),
    include_str!("../src/store/idempotency.rs"),
    include_str!("../src/store/meter.rs"),
    include_str!("../src/store/withdrawals.rs"),
    include_str!("../src/store/webhooks.rs"),
    include_str!("../src/store/supply.rs"),
];

/// A provided method the delegation list leaves out still compiles in every wrapper, which
/// then runs the default body instead of the backend's own: so every method of every store
/// trait, required or provided, is in the list, under its trait.
#[test]
fn the_delegation_list_names_every_store_method() {
    let methods = trait_methods(&STORE_TRAITS);
    let traits: std::collections::BTreeSet<&str> =
        methods.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        traits.len(),
        8,
        "the scan found the eight traits: {traits:?}"
    );
    assert!(
        methods.len() > 60,
        "the scan found the methods: {}",
        methods.len()
    );
    let delegation = include_str!("../src/store/delegate.rs");
    assert_eq!(unlisted(&methods, delegation), Vec::<String>::new());
    // The check fails on a method left off the list, and on one listed under another trait.
    let planted = [("CatalogStore".to_owned(), "product_versions".to_owned())];
    let without = delegation.replace("fn product_versions(", "fn product_version_list(");
    assert_eq!(
        unlisted(&planted, &without),
        ["CatalogStore::product_versions"]
    );
    let elsewhere = [("OrderStore".to_owned(), "product_versions".to_owned())];
    assert_eq!(
        unlisted(&elsewhere, delegation),
        ["OrderStore::product_versions"]
    );
    // A group ends at its closing brace: a later trait's method is not under an earlier one.
    let later = [("AccountStore".to_owned(), "webhooks".to_owned())];
    assert_eq!(unlisted(&later, delegation), ["AccountStore::webhooks"]);
}
