//! [`StoreHook`]: what sees every operation of a store (metrics, fault injection), the
//! [`Operation`] it sees, and [`Hooked`], a store under a hook.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::delegate::forward_store;
use super::*;
use crate::domain::earnings::WalletTotals;
use crate::model::*;

/// The concern a store operation belongs to: which of the eight store traits declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Concern {
    /// [`AccountStore`](super::AccountStore).
    Accounts,
    /// [`CatalogStore`](super::CatalogStore).
    Catalog,
    /// [`OrderStore`](super::OrderStore).
    Orders,
    /// [`IdempotencyStore`](super::IdempotencyStore).
    Idempotency,
    /// [`MeterStore`](super::MeterStore).
    Meter,
    /// [`WithdrawalStore`](super::WithdrawalStore).
    Withdrawals,
    /// [`WebhookStore`](super::WebhookStore).
    Webhooks,
    /// [`SupplyStore`](super::SupplyStore).
    Supply,
}

impl Concern {
    /// The concern's name in spans and logs (`"orders"`).
    pub fn name(self) -> &'static str {
        match self {
            Concern::Accounts => "accounts",
            Concern::Catalog => "catalog",
            Concern::Orders => "orders",
            Concern::Idempotency => "idempotency",
            Concern::Meter => "meter",
            Concern::Withdrawals => "withdrawals",
            Concern::Webhooks => "webhooks",
            Concern::Supply => "supply",
        }
    }
}

/// One store operation as a [`StoreHook`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Operation {
    /// The trait that declares it.
    pub concern: Concern,
    /// The method's name (`"place_order"`).
    pub name: &'static str,
}

impl Operation {
    /// An `Operation` of its fields, in their order: what a wrapper of its own (or a test of
    /// a hook) hands to a [`StoreHook`].
    pub fn new(concern: Concern, name: &'static str) -> Self {
        Self { concern, name }
    }
}

/// Sees every operation of a [`Hooked`] store: metrics, fault injection, logs.
///
/// Both methods have empty defaults; a hook implements what it needs.
///
/// ```
/// # use commerce_core as commerce;
/// use std::sync::Arc;
/// use std::time::Duration;
/// use commerce::store::{Hooked, MemoryStore, Operation, StoreError, StoreHook};
///
/// /// Refuses every write of orders, as a database in read-only mode would.
/// struct ReadOnlyOrders;
///
/// impl StoreHook for ReadOnlyOrders {
///     fn before(&self, op: Operation) -> Result<(), StoreError> {
///         match op.name {
///             "place_order" | "change_order_status" => {
///                 Err(StoreError::Invalid("orders are read-only".into()))
///             }
///             _ => Ok(()),
///         }
///     }
///
///     fn after(&self, op: Operation, succeeded: bool, took: Duration) {
///         tracing::debug!(op = op.name, succeeded, ?took, "store operation");
///     }
/// }
///
/// let store = Hooked::new(Arc::new(MemoryStore::new()), Arc::new(ReadOnlyOrders));
/// # let _ = store;
/// ```
pub trait StoreHook: Send + Sync + 'static {
    /// Runs before the operation; an error fails the operation without running it.
    fn before(&self, op: Operation) -> Result<(), StoreError> {
        let _ = op;
        Ok(())
    }

    /// Runs after the operation ran (not when [`before`](StoreHook::before) refused it, nor
    /// when its future was dropped first), with whether it succeeded and how long it took.
    fn after(&self, op: Operation, succeeded: bool, took: Duration) {
        let _ = (op, succeeded, took);
    }
}

/// A store whose every operation runs under a [`StoreHook`]: the hook's
/// [`before`](StoreHook::before) may refuse it (the backend then never sees it),
/// [`after`](StoreHook::after) sees whether it succeeded and how long it took.
///
/// It is a [`Store`] itself, so the engine takes it as it takes any backend:
///
/// ```
/// # use commerce_core as commerce;
/// use std::sync::Arc;
/// use commerce::store::{Hooked, MemoryStore, StoreHook};
/// use commerce::Engine;
///
/// struct Quiet;
/// impl StoreHook for Quiet {}
///
/// let store = Hooked::new(Arc::new(MemoryStore::new()), Arc::new(Quiet));
/// let engine = Engine::new(Arc::new(store));
/// # let _ = engine;
/// ```
///
/// Every concern comes from the one store it wraps: a store is not assembled from one backend
/// per concern (see [the module](crate::store)'s "One backend" for why).
#[derive(Clone)]
pub struct Hooked {
    inner: Arc<dyn Store>,
    hook: Arc<dyn StoreHook>,
}

impl std::fmt::Debug for Hooked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooked").finish_non_exhaustive()
    }
}

impl Hooked {
    /// `store`, every operation of it seen by `hook`.
    pub fn new(store: Arc<dyn Store>, hook: Arc<dyn StoreHook>) -> Self {
        Self { inner: store, hook }
    }

    /// Runs one operation under the hook.
    async fn around<T, E: From<StoreError>>(
        &self,
        op: Operation,
        _event: impl FnOnce(&T) + Send,
        call: impl Future<Output = Result<T, E>> + Send,
    ) -> Result<T, E> {
        self.hook.before(op)?;
        let started = Instant::now();
        let result = call.await;
        self.hook.after(op, result.is_ok(), started.elapsed());
        result
    }
}

forward_store!(impl for Hooked => inner);
