//! [`Composed`]: a store made of one backend per concern, every operation seen by a
//! [`StoreHook`].

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tracing::Instrument;

use super::*;
use crate::earnings::WalletTotals;
use crate::model::*;
use crate::observe;

/// The concern a store operation belongs to: which of the seven store traits declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Concern {
    /// [`AccountStore`].
    Accounts,
    /// [`CatalogStore`].
    Catalog,
    /// [`OrderStore`].
    Orders,
    /// [`IdempotencyStore`].
    Idempotency,
    /// [`MeterStore`].
    Meter,
    /// [`WithdrawalStore`].
    Withdrawals,
    /// [`WebhookStore`].
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
    fn new(concern: Concern, name: &'static str) -> Self {
        Self { concern, name }
    }
}

/// Sees every operation of a [`Composed`] store: tracing, metrics, fault injection.
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
    /// The engine's own layer: a span per operation and the events of order and withdrawal
    /// moves ([`Composed::traced`]).
    traced: bool,
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
            traced: false,
        }
    }

    /// The engine's tracing layer over `store`: every operation in a `commerce.store` span
    /// ([`observe::STORE_SPAN`], level `DEBUG`, fields `concern` and `operation`), a child of
    /// the request's span, and an `INFO` event when an order is placed or moved and when a
    /// withdrawal is requested or decided.
    ///
    /// Why here: every store call of the engine and its operator goes through one
    /// `Arc<dyn Store>`, so wrapping it once covers them all without touching a handler or a
    /// backend, and [`Composed`] already turns each of the ~45 methods into one call of
    /// [`run`](Self::run). What it costs when no subscriber wants the span: one more boxed
    /// future and virtual call per store operation, and a disabled span (one relaxed atomic
    /// load of the callsite's interest); no clock read, since there is no hook.
    pub(crate) fn traced(store: Arc<dyn Store>) -> Self {
        Self {
            accounts: store.clone(),
            catalog: store.clone(),
            orders: store.clone(),
            idempotency: store.clone(),
            meter: store.clone(),
            withdrawals: store.clone(),
            webhooks: store,
            hook: None,
            traced: true,
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

    /// Runs one operation under the hook (and in its span, when traced).
    async fn run<T, E: From<StoreError>>(
        &self,
        op: Operation,
        operation: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let Some(hook) = &self.hook else {
            return self.in_span(op, operation).await;
        };
        hook.before(op)?;
        let started = Instant::now();
        let result = self.in_span(op, operation).await;
        hook.after(op, result.is_ok(), started.elapsed());
        result
    }

    /// [`run`](Self::run), then, when traced, `report` on what a committed operation returned
    /// (the `info` events of `observe`).
    async fn run_reported<T, E: From<StoreError>>(
        &self,
        op: Operation,
        operation: impl Future<Output = Result<T, E>>,
        report: impl FnOnce(&T),
    ) -> Result<T, E> {
        let result = self.run(op, operation).await;
        if self.traced
            && let Ok(value) = &result
        {
            report(value);
        }
        result
    }

    /// The operation in a `commerce.store` span when traced.
    async fn in_span<T>(&self, op: Operation, operation: impl Future<Output = T>) -> T {
        if !self.traced {
            return operation.await;
        }
        let span = tracing::debug_span!(
            "commerce.store",
            concern = op.concern.name(),
            operation = op.name
        );
        operation.instrument(span).await
    }
}

#[async_trait]
impl AccountStore for Composed {
    async fn insert_account(
        &self,
        new: NewAccount,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "insert_account"),
            self.accounts.insert_account(new, now),
        )
        .await
    }
    async fn account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "account"),
            self.accounts.account(id),
        )
        .await
    }
    async fn update_account(
        &self,
        id: AccountId,
        patch: AccountPatch,
    ) -> Result<Account, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "update_account"),
            self.accounts.update_account(id, patch),
        )
        .await
    }
    async fn insert_key(
        &self,
        key: NewKeyRecord,
        now: DateTime<Utc>,
    ) -> Result<ApiKey, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "insert_key"),
            self.accounts.insert_key(key, now),
        )
        .await
    }
    async fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "key_by_hash"),
            self.accounts.key_by_hash(hash),
        )
        .await
    }
    async fn key(&self, id: KeyId) -> Result<Option<ApiKey>, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "key"),
            self.accounts.key(id),
        )
        .await
    }
    async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "revoke_key"),
            self.accounts.revoke_key(id, at),
        )
        .await
    }
    async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> Result<ApiKey, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "set_key_terms"),
            self.accounts.set_key_terms(id, expires_at, rate_limit),
        )
        .await
    }
    async fn hit_rate_limit(
        &self,
        key: KeyId,
        window: i64,
        limit: u32,
    ) -> Result<RateLimitHit, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "hit_rate_limit"),
            self.accounts.hit_rate_limit(key, window, limit),
        )
        .await
    }
    async fn authenticate(
        &self,
        hash: &KeyHash,
        now: DateTime<Utc>,
        window: i64,
    ) -> Result<Option<KeyCheck>, StoreError> {
        self.run(
            Operation::new(Concern::Accounts, "authenticate"),
            self.accounts.authenticate(hash, now, window),
        )
        .await
    }
}

#[async_trait]
impl CatalogStore for Composed {
    async fn insert_category(&self, new: NewCategory) -> Result<Category, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "insert_category"),
            self.catalog.insert_category(new),
        )
        .await
    }
    async fn set_category_active(
        &self,
        id: CategoryId,
        active: bool,
    ) -> Result<Category, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "set_category_active"),
            self.catalog.set_category_active(id, active),
        )
        .await
    }
    async fn all_categories(&self) -> Result<Vec<Category>, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "all_categories"),
            self.catalog.all_categories(),
        )
        .await
    }
    async fn insert_product(
        &self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "insert_product"),
            self.catalog.insert_product(new, now),
        )
        .await
    }
    async fn set_product_active(
        &self,
        id: ProductId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "set_product_active"),
            self.catalog.set_product_active(id, active, now),
        )
        .await
    }
    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "insert_variant"),
            self.catalog.insert_variant(product, new, now),
        )
        .await
    }
    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "update_variant"),
            self.catalog.update_variant(id, patch, now),
        )
        .await
    }
    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "insert_warranty"),
            self.catalog.insert_warranty(product, new, now),
        )
        .await
    }
    async fn set_warranty_active(
        &self,
        id: WarrantyId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "set_warranty_active"),
            self.catalog.set_warranty_active(id, active, now),
        )
        .await
    }
    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<Product>, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "products"),
            self.catalog.products(filter, page),
        )
        .await
    }
    async fn product(&self, id: ProductId) -> Result<Option<Product>, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "product"),
            self.catalog.product(id),
        )
        .await
    }
    async fn products_of_variants(
        &self,
        variants: &[VariantId],
    ) -> Result<Vec<Product>, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "products_of_variants"),
            self.catalog.products_of_variants(variants),
        )
        .await
    }
    async fn insert_governorate(&self, name: String) -> Result<Governorate, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "insert_governorate"),
            self.catalog.insert_governorate(name),
        )
        .await
    }
    async fn governorates(&self) -> Result<Vec<Governorate>, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "governorates"),
            self.catalog.governorates(),
        )
        .await
    }
    async fn insert_shipping_option(&self, name: String) -> Result<ShippingOption, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "insert_shipping_option"),
            self.catalog.insert_shipping_option(name),
        )
        .await
    }
    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "set_shipping_option_active"),
            self.catalog.set_shipping_option_active(id, active),
        )
        .await
    }
    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "set_shipping_rate"),
            self.catalog.set_shipping_rate(option, rate),
        )
        .await
    }
    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError> {
        self.run(
            Operation::new(Concern::Catalog, "shipping_options"),
            self.catalog.shipping_options(),
        )
        .await
    }
}

#[async_trait]
impl OrderStore for Composed {
    async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError> {
        self.run_reported(
            Operation::new(Concern::Orders, "place_order"),
            self.orders.place_order(order),
            observe::order_placed,
        )
        .await
    }
    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError> {
        let by = if change.account_id.is_some() {
            "api"
        } else {
            "platform"
        };
        self.run_reported(
            Operation::new(Concern::Orders, "change_order_status"),
            self.orders.change_order_status(change),
            |order| observe::order_moved(order, by),
        )
        .await
    }
    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        self.run(
            Operation::new(Concern::Orders, "set_line_outcomes"),
            self.orders.set_line_outcomes(order, outcomes, now),
        )
        .await
    }
    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        self.run(
            Operation::new(Concern::Orders, "set_tracking_url"),
            self.orders.set_tracking_url(order, url, now),
        )
        .await
    }
    async fn order(
        &self,
        account: Option<AccountId>,
        id: OrderId,
    ) -> Result<Option<Order>, StoreError> {
        self.run(
            Operation::new(Concern::Orders, "order"),
            self.orders.order(account, id),
        )
        .await
    }
    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<Order>, StoreError> {
        self.run(
            Operation::new(Concern::Orders, "orders"),
            self.orders.orders(account, filter, page),
        )
        .await
    }
    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> Result<WalletTotals, StoreError> {
        self.run(
            Operation::new(Concern::Orders, "wallet_totals"),
            self.orders.wallet_totals(account, held_after),
        )
        .await
    }
}

#[async_trait]
impl IdempotencyStore for Composed {
    async fn begin_idempotent(
        &self,
        claim: &IdempotencyClaim,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError> {
        self.run(
            Operation::new(Concern::Idempotency, "begin_idempotent"),
            self.idempotency.begin_idempotent(
                claim,
                fingerprint,
                now,
                expires_before,
                stale_before,
            ),
        )
        .await
    }
    async fn finish_idempotent(
        &self,
        claim: &IdempotencyClaim,
        response: StoredResponse,
    ) -> Result<(), StoreError> {
        self.run(
            Operation::new(Concern::Idempotency, "finish_idempotent"),
            self.idempotency.finish_idempotent(claim, response),
        )
        .await
    }
    async fn abandon_idempotent(&self, claim: &IdempotencyClaim) -> Result<(), StoreError> {
        self.run(
            Operation::new(Concern::Idempotency, "abandon_idempotent"),
            self.idempotency.abandon_idempotent(claim),
        )
        .await
    }
    async fn purge_idempotency(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        self.run(
            Operation::new(Concern::Idempotency, "purge_idempotency"),
            self.idempotency.purge_idempotency(before),
        )
        .await
    }
}

#[async_trait]
impl MeterStore for Composed {
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &str,
        products: &[ProductId],
    ) -> Result<(), StoreError> {
        self.run(
            Operation::new(Concern::Meter, "record_pulls"),
            self.meter.record_pulls(account, month, products),
        )
        .await
    }
    async fn meter(&self, account: AccountId, month: &str) -> Result<MeterReading, StoreError> {
        self.run(
            Operation::new(Concern::Meter, "meter"),
            self.meter.meter(account, month),
        )
        .await
    }
}

#[async_trait]
impl WithdrawalStore for Composed {
    async fn request_withdrawal(
        &self,
        new: NewWithdrawal,
        held_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, WithdrawalRequestError> {
        self.run_reported(
            Operation::new(Concern::Withdrawals, "request_withdrawal"),
            self.withdrawals.request_withdrawal(new, held_after, now),
            |withdrawal| observe::withdrawal(withdrawal, "withdrawal requested"),
        )
        .await
    }
    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError> {
        self.run_reported(
            Operation::new(Concern::Withdrawals, "decide_withdrawal"),
            self.withdrawals.decide_withdrawal(id, decision, now),
            |withdrawal| observe::withdrawal(withdrawal, "withdrawal decided"),
        )
        .await
    }
    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError> {
        self.run(
            Operation::new(Concern::Withdrawals, "withdrawals"),
            self.withdrawals.withdrawals(account),
        )
        .await
    }
}

#[async_trait]
impl WebhookStore for Composed {
    async fn insert_webhook(
        &self,
        new: NewWebhook,
        limit: usize,
    ) -> Result<Webhook, InsertWebhookError> {
        self.run(
            Operation::new(Concern::Webhooks, "insert_webhook"),
            self.webhooks.insert_webhook(new, limit),
        )
        .await
    }
    async fn webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<Option<Webhook>, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "webhook"),
            self.webhooks.webhook(account, id),
        )
        .await
    }
    async fn webhooks(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> Result<Page<Webhook>, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "webhooks"),
            self.webhooks.webhooks(account, page),
        )
        .await
    }
    async fn update_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        patch: WebhookPatch,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "update_webhook"),
            self.webhooks.update_webhook(account, id, patch, now),
        )
        .await
    }
    async fn delete_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<bool, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "delete_webhook"),
            self.webhooks.delete_webhook(account, id),
        )
        .await
    }
    async fn rotate_webhook_secret(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        secret: WebhookSecret,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "rotate_webhook_secret"),
            self.webhooks
                .rotate_webhook_secret(account, id, secret, now),
        )
        .await
    }
    async fn queue_event(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        event: NewEvent,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        self.run(
            Operation::new(Concern::Webhooks, "queue_event"),
            self.webhooks.queue_event(account, webhook, event, limit),
        )
        .await
    }
    async fn redeliver(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        delivery: DeliveryId,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        self.run(
            Operation::new(Concern::Webhooks, "redeliver"),
            self.webhooks
                .redeliver(account, webhook, delivery, now, limit),
        )
        .await
    }
    async fn deliveries(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> Result<Option<Page<Delivery>>, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "deliveries"),
            self.webhooks.deliveries(account, webhook, status, page),
        )
        .await
    }
    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_for: chrono::TimeDelta,
        lease: &str,
        limit: usize,
        per_endpoint: usize,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "claim_deliveries"),
            self.webhooks
                .claim_deliveries(now, lease_for, lease, limit, per_endpoint),
        )
        .await
    }
    async fn finish_delivery(
        &self,
        delivery: DeliveryId,
        lease: &str,
        outcome: AttemptOutcome,
    ) -> Result<bool, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "finish_delivery"),
            self.webhooks.finish_delivery(delivery, lease, outcome),
        )
        .await
    }
    async fn finish_deliveries(
        &self,
        attempts: Vec<(DeliveryId, String, AttemptOutcome)>,
    ) -> Result<Vec<bool>, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "finish_deliveries"),
            self.webhooks.finish_deliveries(attempts),
        )
        .await
    }
    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        self.run(
            Operation::new(Concern::Webhooks, "purge_deliveries"),
            self.webhooks.purge_deliveries(before),
        )
        .await
    }
}
