//! The storage trait and the in-memory store.
//!
//! Every method is one atomic domain operation: a store runs it under one lock, in one
//! transaction or as one conditional statement, so that a failure leaves nothing half-written.
//! The engine never sees a transaction. Implementations are checked by the conformance suite in
//! `commerce_core::testing` (feature `testing`).

mod memory;

pub use memory::MemoryStore;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::earnings::WalletTotals;
use crate::model::*;

/// A storage failure that is not a domain outcome (connection lost, constraint broken, ...).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The record named does not exist.
    #[error("record not found")]
    NotFound,
    /// The write would break a rule of the store (a unique slug, a wrong parent, ...).
    #[error("invalid write: {0}")]
    Invalid(String),
    /// The backend failed.
    #[error("storage backend failed: {0}")]
    Backend(#[from] Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// Wraps any backend error.
    pub fn backend(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Backend(Box::new(error))
    }
}

/// Why [`Store::place_order`] registered nothing.
#[derive(Debug, thiserror::Error)]
pub enum PlaceOrderError {
    /// The account already has an order with this `external_reference`.
    #[error("external_reference already used by order {existing_id}")]
    DuplicateExternalReference {
        /// The order already registered.
        existing_id: OrderId,
        /// Its number.
        existing_number: String,
    },
    /// A line asks for more pieces than are available.
    #[error("line {line_index} asks for more than the {available} available")]
    InsufficientStock {
        /// Index of the line in the request.
        line_index: usize,
        /// Pieces available now.
        available: i64,
    },
    /// The generated number is taken; the engine draws another.
    #[error("order number already taken")]
    NumberTaken,
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why [`Store::change_order_status`] changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum StatusChangeError {
    /// No such order (or it belongs to another account).
    #[error("order not found")]
    NotFound,
    /// The order's current status does not allow the move.
    #[error("order is {current} and cannot move to {requested}")]
    NotAllowed {
        /// Status now.
        current: OrderStatus,
        /// Status asked for.
        requested: OrderStatus,
    },
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A move of an order to another status.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusChange {
    /// Only an order of this account (API calls); `None` for the platform.
    pub account_id: Option<AccountId>,
    /// The order.
    pub order_id: OrderId,
    /// Status to enter.
    pub to: OrderStatus,
    /// Statuses the order must be in now (besides the lifecycle rule of
    /// [`OrderStatus::can_move_to`]); empty means any.
    pub only_from: Vec<OrderStatus>,
    /// Reason shown in the timeline.
    pub reason: Option<String>,
    /// When.
    pub at: DateTime<Utc>,
    /// Billing month to record one order operation in (`None`: not billed).
    pub bill_month: Option<String>,
}

/// The answer of [`Store::hit_rate_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitHit {
    /// Whether the request may proceed (it was counted).
    pub allowed: bool,
    /// Requests counted in this window, this one included when allowed.
    pub used: u32,
}

/// The answer of [`Store::authenticate`].
#[derive(Debug, Clone, PartialEq)]
pub struct KeyCheck {
    /// The key with the hash asked for (revoked and expired ones included).
    pub key: ApiKey,
    /// The request counted in the key's rate window; `None` when the key is not live.
    pub hit: Option<RateLimitHit>,
    /// The key's account; may be `None` when the key is not live or the request was refused.
    pub account: Option<Account>,
}

impl KeyCheck {
    /// A check of `key`: `hit` when the request was counted (`None` when the key is not live),
    /// and `account`, kept only when the request was allowed.
    pub fn of(key: ApiKey, hit: Option<RateLimitHit>, account: Option<Account>) -> Self {
        let allowed = hit.is_some_and(|h| h.allowed);
        Self {
            key,
            hit,
            account: account.filter(|_| allowed),
        }
    }
}

/// The answer of [`Store::begin_idempotent`].
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotencyBegin {
    /// No live record: one was created in flight; the caller goes on.
    Started,
    /// A finished request with the same fingerprint: replay this response.
    Replay(StoredResponse),
    /// The key was used with other data.
    Mismatch,
    /// The first request with this key is still being processed.
    InFlight,
    /// The first request registered this order but died before its response was kept: the
    /// caller answers with the order as it is now and keeps that response.
    Recovered(OrderId),
}

/// Storage of everything the engine reads and writes.
///
/// Used as `Arc<dyn Store>`. Reads of one account's data take the account id, so that another
/// account's records are never returned.
///
/// # What every implementation must hold
/// * **Atomicity**: each method is one domain operation; it happens whole or not at all
///   (one lock, one transaction or one conditional statement).
/// * **Cancellation safety**: the future of any method may be dropped at any `.await` (the
///   engine's own requests run in tasks of their own, but the operator API and the embedding
///   application call the store directly, under their own timeouts). A dropped operation has
///   either happened whole or not at all, and leaves no resource behind in a state that a later
///   operation could trip on: no pooled connection inside a transaction or with an unread
///   answer, no lock held, no half-written record. (The SQL stores begin and end transactions
///   on a connection of their own and close it, rather than pool it, when dropped in between.)
/// * **Races decided in the store**: no oversell, one order per `external_reference` and per
///   idempotency key, an exact rate window, also across several processes sharing a database.
///
/// The conformance suites in `commerce_core::testing` (feature `testing`) check all three,
/// cancellation included (`testing::cancellation`).
#[async_trait]
pub trait Store: Send + Sync + 'static {
    // ---- accounts and keys ----

    /// Registers an account.
    async fn insert_account(
        &self,
        new: NewAccount,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError>;
    /// One account.
    async fn account(&self, id: AccountId) -> Result<Option<Account>, StoreError>;
    /// Sets an account's life state and API status.
    async fn set_account_state(
        &self,
        id: AccountId,
        state: AccountState,
        api_status: ApiStatus,
    ) -> Result<Account, StoreError>;
    /// Stores a key (hash only).
    async fn insert_key(&self, key: NewKeyRecord, now: DateTime<Utc>)
    -> Result<ApiKey, StoreError>;
    /// The key with this hash, revoked and expired ones included.
    async fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError>;
    /// One key.
    async fn key(&self, id: KeyId) -> Result<Option<ApiKey>, StoreError>;
    /// Marks a key revoked (a revoked key stays revoked).
    async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError>;
    /// Sets a key's expiry and per-minute limit.
    async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> Result<ApiKey, StoreError>;
    /// Counts one request of `key` in the fixed window `window` (UTC minutes since the epoch)
    /// if fewer than `limit` were counted; a refused request is not counted.
    async fn hit_rate_limit(
        &self,
        key: KeyId,
        window: i64,
        limit: u32,
    ) -> Result<RateLimitHit, StoreError>;

    /// Everything an API request needs about its key, in one operation: the key with this
    /// hash; when it is live at `now` ([`ApiKey::is_live`]), one request counted in its rate
    /// window `window` exactly as [`hit_rate_limit`](Store::hit_rate_limit) does; and, when
    /// the request was counted, the key's account. The SQL stores answer it in one statement;
    /// the provided version makes the three calls.
    async fn authenticate(
        &self,
        hash: &KeyHash,
        now: DateTime<Utc>,
        window: i64,
    ) -> Result<Option<KeyCheck>, StoreError> {
        authenticate_by_calls(self, hash, now, window).await
    }

    // ---- catalogue ----

    /// Adds a category.
    async fn insert_category(&self, new: NewCategory) -> Result<Category, StoreError>;
    /// Lists or hides a category.
    async fn set_category_active(
        &self,
        id: CategoryId,
        active: bool,
    ) -> Result<Category, StoreError>;
    /// Every category, active or not, by id.
    async fn all_categories(&self) -> Result<Vec<Category>, StoreError>;
    /// Adds a product (active, no variants).
    async fn insert_product(
        &self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError>;
    /// Starts or stops selling a product.
    async fn set_product_active(
        &self,
        id: ProductId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError>;
    /// Adds a variant to a product.
    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError>;
    /// Changes a variant's price or stock; bumps the product's `updated_at`.
    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError>;
    /// Adds a warranty to a product.
    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError>;
    /// Offers or stops a warranty.
    async fn set_warranty_active(
        &self,
        id: WarrantyId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError>;
    /// Active products matching the filter, by id, one page.
    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<Product>, StoreError>;
    /// One product, active or stopped.
    async fn product(&self, id: ProductId) -> Result<Option<Product>, StoreError>;
    /// The products (active or stopped) that own any of these variants.
    async fn products_of_variants(
        &self,
        variants: &[VariantId],
    ) -> Result<Vec<Product>, StoreError>;

    // ---- shipping ----

    /// Adds a governorate.
    async fn insert_governorate(&self, name: String) -> Result<Governorate, StoreError>;
    /// Every governorate, by id.
    async fn governorates(&self) -> Result<Vec<Governorate>, StoreError>;
    /// Adds a shipping option (active, no governorates).
    async fn insert_shipping_option(&self, name: String) -> Result<ShippingOption, StoreError>;
    /// Offers or stops a shipping option.
    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError>;
    /// Sets (adds or replaces) what an option charges for a governorate.
    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError>;
    /// Every shipping option, active or not, by id, with rates by governorate id.
    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError>;

    // ---- orders ----

    /// Registers an order atomically (see [`NewOrder`]).
    async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError>;
    /// Moves an order to another status, appends a timeline entry, bumps `updated_at`, sets
    /// `confirmed_at`/`delivered_at` on entering those statuses, releases the reserved stock on
    /// entering the cancelled family, and records the billing entry: all atomically.
    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError>;
    /// Records what became of lines' pieces; bumps `updated_at`.
    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError>;
    /// Sets the courier tracking URL; bumps `updated_at`.
    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError>;
    /// One order; with `account`, only if it belongs to that account.
    async fn order(
        &self,
        account: Option<AccountId>,
        id: OrderId,
    ) -> Result<Option<Order>, StoreError>;
    /// An account's orders matching the filter ([`Order::matches`]), newest first
    /// (`created_at` then `id`, descending), one page.
    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<Order>, StoreError>;
    /// An account's wallet sums: the [`EarningsTotals`](crate::earnings::EarningsTotals) the
    /// store keeps, updated in the same atomic operation as every write that changes an
    /// order's [`OrderEarnings`](crate::earnings::OrderEarnings) (placing it, moving it,
    /// recording line outcomes), plus the net earnings and earliest delivery of the settled
    /// orders delivered after `held_after`. Costs the orders in their hold period, not every
    /// order of the account.
    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> Result<WalletTotals, StoreError>;

    // ---- idempotency ----

    /// Starts a request under an idempotency key (see [`IdempotencyBegin`]). A record older than
    /// `expires_before` counts as absent; an in-flight record older than `stale_before` is taken
    /// over (its request died).
    async fn begin_idempotent(
        &self,
        scope: &IdempotencyScope,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError>;
    /// Keeps the response of a successful request for replay.
    async fn finish_idempotent(
        &self,
        scope: &IdempotencyScope,
        response: StoredResponse,
    ) -> Result<(), StoreError>;
    /// Forgets an in-flight record whose request ended in an error.
    async fn abandon_idempotent(&self, scope: &IdempotencyScope) -> Result<(), StoreError>;
    /// Deletes records created before `before`; returns how many.
    async fn purge_idempotency(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;

    // ---- billing meter ----

    /// Records products pulled by an account in a month (each product once per month).
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &str,
        products: &[ProductId],
    ) -> Result<(), StoreError>;
    /// What the meter holds for an account and month (`YYYY-MM`, Cairo time).
    async fn meter(&self, account: AccountId, month: &str) -> Result<MeterReading, StoreError>;

    // ---- withdrawals ----

    /// Registers a withdrawal request (pending).
    async fn insert_withdrawal(
        &self,
        new: NewWithdrawal,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError>;
    /// Completes or rejects a pending withdrawal.
    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError>;
    /// An account's withdrawals, oldest first.
    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError>;
}

/// [`Store::authenticate`] made of its three calls ([`key_by_hash`](Store::key_by_hash),
/// [`hit_rate_limit`](Store::hit_rate_limit), [`account`](Store::account)): the provided
/// version, for a store that overrides it only on some backends.
pub async fn authenticate_by_calls<S: Store + ?Sized>(
    store: &S,
    hash: &KeyHash,
    now: DateTime<Utc>,
    window: i64,
) -> Result<Option<KeyCheck>, StoreError> {
    let Some(key) = store.key_by_hash(hash).await? else {
        return Ok(None);
    };
    if !key.is_live(now) {
        return Ok(Some(KeyCheck::of(key, None, None)));
    }
    let hit = store.hit_rate_limit(key.id, window, key.rate_limit).await?;
    let account = if hit.allowed {
        store.account(key.account_id).await?
    } else {
        None
    };
    Ok(Some(KeyCheck::of(key, Some(hit), account)))
}
