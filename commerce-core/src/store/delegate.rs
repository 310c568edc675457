//! The one delegation list of the store contract, and the macro that turns it into a wrapper.
//!
//! [`store_methods!`] names every method of the eight store traits once: its concern, its
//! arguments, what it returns, and (for the moves the engine reports) the event the tracing
//! layer emits after it. [`forward_store!`] implements the eight traits for a wrapper from
//! that list, each method one call of the wrapper's `around` with the [`Operation`] and the
//! wrapped backend's future; so a wrapper is its `around` and nothing else (the hook layer
//! [`Hooked`](super::Hooked), the tracing layer [`Traced`](super::Traced), the engine's
//! caching layer `CachingStore`, the test store that stalls `POST /orders`), as
//! tower-sessions' `CachingSessionStore` composes stores.
//!
//! A new store method is written in its trait and once here; every wrapper follows. A method
//! missing from the list fails to compile in every wrapper, except one with a default body
//! (`authenticate`, `close`, `key_page`, `set_product_active`, `set_warranty_active`, `product_versions`, `orders`,
//! `order_versions`, `webhooks`, `finish_deliveries`): list those too, or the wrappers run
//! the default instead of the backend's own version. `tests/store_hook.rs` checks that the
//! list names every method of the eight traits under its trait.
//!
//! [`Operation`]: super::Operation

/// Calls `$callback! { ($($args)*) <the list> }`: every store method, grouped by concern as
/// `Concern Trait { fn name(arg: Type, ...) -> Return [event]; ... }`, where the optional
/// `[event]` names the function of [`traced::events`](super::traced) that reports it.
macro_rules! store_methods {
    ($callback:ident ! ($($args:tt)*)) => {
        $callback! { ($($args)*)
            Accounts AccountStore {
                fn insert_account(new: NewAccount, now: DateTime<Utc>) -> Result<Account, StoreError>;
                fn account(id: AccountId) -> Result<Option<Account>, StoreError>;
                fn update_account(
                    id: AccountId,
                    patch: AccountPatch,
                    now: DateTime<Utc>
                ) -> Result<Account, StoreError>;
                fn find_accounts(
                    query: &AccountQuery,
                    page: PageRequest
                ) -> Result<Listing<Account>, StoreError>;
                fn insert_key(
                    key: NewKeyRecord,
                    now: DateTime<Utc>,
                    max_live: usize
                ) -> Result<ApiKey, InsertKeyError>;
                fn key_by_hash(hash: &KeyHash) -> Result<Option<ApiKey>, StoreError>;
                fn key(id: KeyId) -> Result<Option<ApiKey>, StoreError>;
                fn revoke_key(id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError>;
                fn set_key_terms(
                    id: KeyId,
                    expires_at: Option<DateTime<Utc>>,
                    rate_limit: u32
                ) -> Result<ApiKey, StoreError>;
                fn keys(account: AccountId) -> Result<Vec<KeyListing>, StoreError>;
                fn key_page(account: AccountId, page: PageRequest) -> Result<Page<KeyListing>, StoreError>;
                fn hit_rate_limit(key: KeyId, window: RateWindow, limit: u32) -> Result<RateLimitHit, StoreError>;
                fn authenticate(
                    hash: &KeyHash,
                    now: DateTime<Utc>,
                    window: RateWindow
                ) -> Result<Option<KeyCheck>, StoreError>;
                fn close() -> Result<(), StoreError>;
            }
            Catalog CatalogStore {
                fn insert_category(new: NewCategory) -> Result<Category, StoreError>;
                fn all_categories() -> Result<Vec<Category>, StoreError>;
                fn update_category(
                    id: CategoryId,
                    patch: CategoryPatch,
                    now: DateTime<Utc>
                ) -> Result<Category, StoreError>;
                fn insert_product(new: NewProduct, now: DateTime<Utc>) -> Result<Product, StoreError>;
                fn update_product(
                    id: ProductId,
                    patch: ProductPatch,
                    now: DateTime<Utc>
                ) -> Result<Product, StoreError>;
                fn update_warranty(
                    id: WarrantyId,
                    patch: WarrantyPatch,
                    now: DateTime<Utc>
                ) -> Result<Warranty, StoreError>;
                fn set_product_active(
                    id: ProductId,
                    active: bool,
                    now: DateTime<Utc>
                ) -> Result<Product, StoreError>;
                fn insert_variant(
                    product: ProductId,
                    new: NewVariant,
                    now: DateTime<Utc>
                ) -> Result<Variant, StoreError>;
                fn update_variant(
                    id: VariantId,
                    patch: VariantPatch,
                    now: DateTime<Utc>
                ) -> Result<Variant, StoreError>;
                fn adjust_stock(
                    new: NewStockAdjustment,
                    now: DateTime<Utc>
                ) -> Result<StockAdjustment, StockError>;
                fn stock_adjustments(
                    variant: VariantId,
                    page: PageRequest
                ) -> Result<Page<StockAdjustment>, StoreError>;
                fn insert_warranty(
                    product: ProductId,
                    new: NewWarranty,
                    now: DateTime<Utc>
                ) -> Result<Warranty, StoreError>;
                fn set_warranty_active(
                    id: WarrantyId,
                    active: bool,
                    now: DateTime<Utc>
                ) -> Result<Warranty, StoreError>;
                fn products(filter: &ProductFilter, page: PageRequest) -> Result<Page<Product>, StoreError>;
                fn removed_products(
                    since: DateTime<Utc>,
                    page: PageRequest
                ) -> Result<Page<RemovedProduct>, StoreError>;
                fn product(id: ProductId) -> Result<Option<Product>, StoreError>;
                fn product_versions(
                    filter: &ProductFilter,
                    page: PageRequest
                ) -> Result<Page<ProductVersion>, StoreError>;
                fn products_of_variants(variants: &[VariantId]) -> Result<Vec<Product>, StoreError>;
                fn catalog_changes(
                    after: Option<ChangePosition>,
                    limit: usize
                ) -> Result<CatalogChanges, StoreError>;
                fn newest_catalog_change() -> Result<Option<ChangePosition>, StoreError>;
                fn insert_governorate(name: String) -> Result<Governorate, StoreError>;
                fn governorates() -> Result<Vec<Governorate>, StoreError>;
                fn insert_shipping_option(name: String) -> Result<ShippingOption, StoreError>;
                fn set_shipping_option_active(
                    id: ShippingOptionId,
                    active: bool
                ) -> Result<ShippingOption, StoreError>;
                fn set_shipping_rate(
                    option: ShippingOptionId,
                    rate: ShippingRate
                ) -> Result<ShippingOption, StoreError>;
                fn shipping_options() -> Result<Vec<ShippingOption>, StoreError>;
            }
            Orders OrderStore {
                fn place_order(order: NewOrder) -> Result<Order, PlaceOrderError> [order_placed];
                fn change_order_status(change: StatusChange) -> Result<Order, StatusChangeError> [order_moved];
                fn set_line_outcomes(
                    order: OrderId,
                    outcomes: Vec<(LineId, LineOutcome)>,
                    read_at: Option<DateTime<Utc>>,
                    now: DateTime<Utc>
                ) -> Result<Order, StoreError>;
                fn set_tracking_url(
                    order: OrderId,
                    url: Option<String>,
                    now: DateTime<Utc>
                ) -> Result<Order, StoreError>;
                fn order(account: Option<AccountId>, id: OrderId) -> Result<Option<Order>, StoreError>;
                fn orders(
                    account: AccountId,
                    filter: &OrderFilter,
                    page: PageRequest
                ) -> Result<Page<Order>, StoreError>;
                fn order_versions(
                    account: AccountId,
                    filter: &OrderFilter,
                    page: PageRequest
                ) -> Result<Page<OrderVersion>, StoreError>;
                fn find_orders(query: &OrderQuery, page: PageRequest) -> Result<Listing<Order>, StoreError>;
                fn order_status_counts(query: &OrderQuery) -> Result<Vec<(OrderStatus, Count)>, StoreError>;
                fn wallet_totals(
                    account: AccountId,
                    held_after: DateTime<Utc>
                ) -> Result<WalletTotals, StoreError>;
                fn statement(
                    supplier: AccountId,
                    filter: &StatementFilter,
                    page: PageRequest
                ) -> Result<Page<StatementEntry>, StoreError>;
            }
            Idempotency IdempotencyStore {
                fn begin_idempotent(
                    claim: &IdempotencyClaim,
                    fingerprint: &str,
                    now: DateTime<Utc>,
                    expires_before: DateTime<Utc>,
                    stale_before: DateTime<Utc>
                ) -> Result<IdempotencyBegin, StoreError>;
                fn finish_idempotent(
                    claim: &IdempotencyClaim,
                    response: StoredResponse
                ) -> Result<(), StoreError>;
                fn abandon_idempotent(claim: &IdempotencyClaim) -> Result<(), StoreError>;
                fn purge_idempotency(before: DateTime<Utc>) -> Result<u64, StoreError>;
            }
            Meter MeterStore {
                fn record_pulls(
                    account: AccountId,
                    month: &BillingMonth,
                    products: &[ProductId]
                ) -> Result<(), StoreError>;
                fn meter(account: AccountId, month: &BillingMonth) -> Result<MeterReading, StoreError>;
            }
            Withdrawals WithdrawalStore {
                fn request_withdrawal(
                    new: NewWithdrawal,
                    held_after: DateTime<Utc>,
                    now: DateTime<Utc>
                ) -> Result<Withdrawal, WithdrawalRequestError> [withdrawal_requested];
                fn decide_withdrawal(
                    id: WithdrawalId,
                    decision: WithdrawalDecision,
                    now: DateTime<Utc>
                ) -> Result<Withdrawal, StoreError> [withdrawal_decided];
                fn withdrawals(account: AccountId) -> Result<Vec<Withdrawal>, StoreError>;
                fn find_withdrawals(
                    query: &WithdrawalQuery,
                    page: PageRequest
                ) -> Result<Listing<Withdrawal>, StoreError>;
                fn withdrawal_totals(query: &WithdrawalQuery) -> Result<WithdrawalTotals, StoreError>;
            }
            Webhooks WebhookStore {
                fn insert_webhook(new: NewWebhook, limit: usize) -> Result<Webhook, InsertWebhookError>;
                fn webhook(account: Option<AccountId>, id: WebhookId) -> Result<Option<Webhook>, StoreError>;
                fn webhooks(account: AccountId, page: PageRequest) -> Result<Page<Webhook>, StoreError>;
                fn find_webhooks(
                    query: &WebhookQuery,
                    page: PageRequest
                ) -> Result<Listing<Webhook>, StoreError>;
                fn update_webhook(
                    account: Option<AccountId>,
                    id: WebhookId,
                    patch: WebhookPatch,
                    now: DateTime<Utc>
                ) -> Result<Option<Webhook>, StoreError>;
                fn delete_webhook(account: Option<AccountId>, id: WebhookId) -> Result<bool, StoreError>;
                fn rotate_webhook_secret(
                    account: Option<AccountId>,
                    id: WebhookId,
                    secret: WebhookSecret,
                    now: DateTime<Utc>
                ) -> Result<Option<Webhook>, StoreError>;
                fn queue_event(
                    account: Option<AccountId>,
                    webhook: WebhookId,
                    event: NewEvent,
                    limit: usize
                ) -> Result<Delivery, QueueDeliveryError>;
                fn redeliver(
                    account: Option<AccountId>,
                    webhook: WebhookId,
                    delivery: DeliveryId,
                    now: DateTime<Utc>,
                    limit: usize
                ) -> Result<Delivery, QueueDeliveryError>;
                fn deliveries(
                    account: Option<AccountId>,
                    webhook: WebhookId,
                    status: Option<DeliveryStatus>,
                    page: PageRequest
                ) -> Result<Option<Page<Delivery>>, StoreError>;
                fn claim_deliveries(
                    now: DateTime<Utc>,
                    lease_for: chrono::TimeDelta,
                    lease: &LeaseToken,
                    limit: usize,
                    per_endpoint: usize,
                    per_account: usize
                ) -> Result<Vec<ClaimedDelivery>, StoreError>;
                fn finish_delivery(
                    delivery: DeliveryId,
                    lease: &LeaseToken,
                    outcome: AttemptOutcome
                ) -> Result<bool, StoreError>;
                fn finish_deliveries(
                    attempts: Vec<(DeliveryId, LeaseToken, AttemptOutcome)>
                ) -> Result<Vec<bool>, StoreError>;
                fn purge_deliveries(before: DateTime<Utc>) -> Result<u64, StoreError>;
                fn webhook_backlog(now: DateTime<Utc>) -> Result<WebhookBacklog, StoreError>;
                fn queue_catalog_changed(
                    head: ChangePosition,
                    event: NewEvent,
                    sent_before: DateTime<Utc>
                ) -> Result<u64, StoreError>;
            }
            Supply SupplyStore {
                fn insert_quote(
                    new: NewQuote,
                    claim: Option<&IdempotencyClaim>,
                    now: DateTime<Utc>
                ) -> Result<Quote, InsertQuoteError>;
                fn quote(
                    account: Option<AccountId>,
                    id: QuoteId,
                    now: DateTime<Utc>
                ) -> Result<Option<Quote>, StoreError>;
                fn quotes(
                    account: AccountId,
                    filter: &QuoteFilter,
                    page: PageRequest,
                    now: DateTime<Utc>
                ) -> Result<Page<Quote>, StoreError>;
                fn find_quotes(
                    query: &QuoteQuery,
                    page: PageRequest,
                    now: DateTime<Utc>
                ) -> Result<Page<Quote>, StoreError>;
                fn decide_quote(
                    account: Option<AccountId>,
                    id: QuoteId,
                    decision: QuoteDecision,
                    now: DateTime<Utc>
                ) -> Result<Quote, QuoteDecisionError> [quote_decided];
                fn expire_quotes(now: DateTime<Utc>, limit: usize) -> Result<u64, StoreError>;
                fn supply_variants(
                    account: AccountId,
                    updated_since: Option<DateTime<Utc>>,
                    page: PageRequest,
                    now: DateTime<Utc>
                ) -> Result<Page<SupplyVariant>, StoreError>;
            }
        }
    };
}

/// Implements the eight store traits for a wrapper from [`store_methods!`]:
///
/// ```ignore
/// forward_store!(impl for Wrapper => inner);
/// ```
///
/// Each method calls `self.around(op, event, call).await`, where `op` is its
/// [`Operation`](super::Operation), `event` what the tracing layer reports of a success
/// (`|_| {}` for most methods; [`Traced`](super::Traced) calls it, other wrappers drop it) and
/// `call` the future of the same method on `self.inner` (the field named after `=>`, any
/// [`Store`](super::Store)). The wrapper defines `around` as an inherent method:
///
/// ```ignore
/// async fn around<T, E: From<StoreError>>(
///     &self,
///     op: Operation,
///     event: impl FnOnce(&T) + Send,
///     call: impl Future<Output = Result<T, E>> + Send,
/// ) -> Result<T, E>
/// ```
///
/// The scope of the invocation must see the store's types (`use crate::store::*`,
/// `crate::model::*`, `WalletTotals`, `chrono::{DateTime, Utc}`).
macro_rules! forward_store {
    (impl for $ty:ty => $inner:ident) => {
        $crate::store::delegate::store_methods!(forward_store!(@impl [$ty] $inner));
    };
    ((@impl [$ty:ty] $inner:ident)
        $( $concern:ident $trait:ident {
            $( fn $name:ident ( $($arg:ident : $argty:ty),* $(,)? ) -> $ret:ty $([$event:ident])? ; )*
        } )*
    ) => {
        $(
            #[async_trait::async_trait]
            impl $trait for $ty {
                $(
                    async fn $name(&self, $($arg: $argty),*) -> $ret {
                        let op = $crate::store::Operation::new(
                            $crate::store::Concern::$concern,
                            stringify!($name),
                        );
                        let event = $crate::store::delegate::forward_store!(@event [$($event)?] ($($arg),*));
                        self.around(op, event, self.$inner.$name($($arg),*)).await
                    }
                )*
            }
        )*
    };
    (@event [] ($($arg:ident),*)) => {
        |_: &_| {}
    };
    (@event [$event:ident] ($($arg:ident),*)) => {
        $crate::store::traced::events::$event($(&$arg),*)
    };
}

pub(crate) use {forward_store, store_methods};
