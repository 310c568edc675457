//! [`Composed`]: a store made of one backend per concern, every operation seen by a
//! [`StoreHook`].

use std::future::Future;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::delegate::forward_store;
use super::hook::{self, Operation, StoreHook};
use super::*;
use crate::earnings::WalletTotals;
use crate::model::*;

/// A [`Store`] that takes each concern from its own backend and lets a [`StoreHook`] see
/// every operation.
///
/// [`Composed::of`] starts with one backend for everything; `with_*` replace one concern's
/// backend. Each concern's operations stay atomic within their own backend; nothing is atomic
/// across two backends, so concerns that one operation writes together must share a backend:
///
/// - [`OrderStore::place_order`] and [`OrderStore::change_order_status`] take and release
///   stock ([`CatalogStore`]), count order operations on the meter ([`MeterStore`]) and link
///   the order to its idempotency record ([`IdempotencyStore`], which answers a request that
///   died after placing its order with that order): catalogue, orders, meter and idempotency
///   go together;
/// - [`WithdrawalStore::request_withdrawal`] reads the account's wallet sums
///   ([`OrderStore::wallet_totals`]) in the same atomic operation as the insert: withdrawals
///   go with orders too;
/// - the order writes queue their webhook deliveries in the same atomic operation (the
///   outbox of [`WebhookStore`]): webhooks go with orders too.
///
/// So the useful split is two: accounts and keys (e.g. in the platform's own users
/// database, or keys and the rate window in a faster backend), and everything else.
///
/// ```
/// use std::sync::Arc;
/// use commerce_core::store::{Composed, MemoryStore};
/// use commerce_core::Engine;
///
/// // Accounts and keys in one backend, the rest in another.
/// let people = Arc::new(MemoryStore::new());
/// let commerce = Arc::new(MemoryStore::new());
/// let store = Composed::of(commerce).with_accounts(people);
/// let engine = Engine::new(Arc::new(store));
/// # let _ = engine;
/// ```
///
/// The conformance suites pass on that split (`commerce-core/tests/composed_store.rs`).
#[derive(Clone)]
pub struct Composed {
    accounts: Arc<dyn AccountStore>,
    catalog: Arc<dyn CatalogStore>,
    orders: Arc<dyn OrderStore>,
    idempotency: Arc<dyn IdempotencyStore>,
    meter: Arc<dyn MeterStore>,
    withdrawals: Arc<dyn WithdrawalStore>,
    webhooks: Arc<dyn WebhookStore>,
    hook: Option<Arc<dyn StoreHook>>,
}

impl std::fmt::Debug for Composed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Composed").finish_non_exhaustive()
    }
}

impl Composed {
    /// Every concern from `store`, no hook.
    pub fn of<S: Store>(store: Arc<S>) -> Self {
        Self {
            accounts: store.clone(),
            catalog: store.clone(),
            orders: store.clone(),
            idempotency: store.clone(),
            meter: store.clone(),
            withdrawals: store.clone(),
            webhooks: store,
            hook: None,
        }
    }

    /// Accounts, keys and rate windows from `backend`.
    pub fn with_accounts(mut self, backend: Arc<dyn AccountStore>) -> Self {
        self.accounts = backend;
        self
    }

    /// The catalogue and shipping from `backend`.
    pub fn with_catalog(mut self, backend: Arc<dyn CatalogStore>) -> Self {
        self.catalog = backend;
        self
    }

    /// Orders from `backend`.
    pub fn with_orders(mut self, backend: Arc<dyn OrderStore>) -> Self {
        self.orders = backend;
        self
    }

    /// Idempotency records from `backend`.
    pub fn with_idempotency(mut self, backend: Arc<dyn IdempotencyStore>) -> Self {
        self.idempotency = backend;
        self
    }

    /// The billing meter from `backend`.
    pub fn with_meter(mut self, backend: Arc<dyn MeterStore>) -> Self {
        self.meter = backend;
        self
    }

    /// Withdrawals from `backend`.
    pub fn with_withdrawals(mut self, backend: Arc<dyn WithdrawalStore>) -> Self {
        self.withdrawals = backend;
        self
    }

    /// Webhook endpoints and deliveries from `backend` (the orders' backend: it writes their
    /// deliveries).
    pub fn with_webhooks(mut self, backend: Arc<dyn WebhookStore>) -> Self {
        self.webhooks = backend;
        self
    }

    /// Every operation seen by `hook` (replacing any hook set before).
    pub fn with_hook(mut self, hook: Arc<dyn StoreHook>) -> Self {
        self.hook = Some(hook);
        self
    }

    /// Runs one operation under the hook, if any.
    async fn around<T, E: From<StoreError>>(
        &self,
        op: Operation,
        _event: impl FnOnce(&T) + Send,
        call: impl Future<Output = Result<T, E>> + Send,
    ) -> Result<T, E> {
        match &self.hook {
            Some(hook) => hook::run(&**hook, op, call).await,
            None => call.await,
        }
    }
}

forward_store!(impl for Composed => [per_concern]);
