//! [`StoreHook`]: what sees every operation of a store (metrics, fault injection), and the
//! [`Operation`] it sees.

use std::future::Future;
use std::time::{Duration, Instant};

use super::StoreError;

/// The concern a store operation belongs to: which of the seven store traits declares it.
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
        }
    }
}

/// One store operation as a [`StoreHook`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Operation {
    /// The trait that declares it.
    pub concern: Concern,
    /// The method's name (`"place_order"`).
    pub name: &'static str,
}

impl Operation {
    pub(crate) fn new(concern: Concern, name: &'static str) -> Self {
        Self { concern, name }
    }
}

/// Sees every operation of a [`Composed`](super::Composed) store: tracing, metrics, fault injection.
///
/// Both methods have empty defaults; a hook implements what it needs.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use commerce_core::store::{Composed, MemoryStore, Operation, StoreError, StoreHook};
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
/// let store = Composed::of(Arc::new(MemoryStore::new())).with_hook(Arc::new(ReadOnlyOrders));
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

/// Runs one operation under `hook`: `before` may refuse it (the operation then never starts),
/// `after` sees whether it succeeded and how long it took.
pub(crate) async fn run<T, E: From<StoreError>>(
    hook: &dyn StoreHook,
    op: Operation,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    hook.before(op)?;
    let started = Instant::now();
    let result = call.await;
    hook.after(op, result.is_ok(), started.elapsed());
    result
}
