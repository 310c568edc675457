//! A store failure or a panic inside a handler is a 500 `server_error`, and nothing of the
//! failed request is left behind: no order, no stock taken, no meter entry, no idempotency key.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::earnings::WalletTotals;
use commerce_core::model::*;
use commerce_core::store::*;
use commerce_core::testing::http::Harness;

/// Delegates to a `MemoryStore`, failing `place_order` with a backend error (or panicking
/// inside `shipping_options`) while the switch is on.
struct FaultyStore {
    inner: MemoryStore,
    fail_place_order: AtomicBool,
    panic_on_shipping: AtomicBool,
}

#[derive(Debug)]
struct Boom;
impl std::fmt::Display for Boom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection reset")
    }
}
impl std::error::Error for Boom {}

/// Implements `Store` for `FaultyStore`: the listed methods delegate, the items after `;` are
/// written out (async_trait must see the expanded methods, so it is applied inside).
macro_rules! faulty_store {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)* ; $($own:item)*) => {
        #[async_trait]
        impl Store for FaultyStore {
            $(async fn $name(&self, $($arg: $ty),*) -> $ret { self.inner.$name($($arg),*).await })*
            $($own)*
        }
    };
}

faulty_store! {
        insert_account(new: NewAccount, now: DateTime<Utc>) -> Result<Account, StoreError>;
        account(id: AccountId) -> Result<Option<Account>, StoreError>;
        set_account_state(id: AccountId, state: AccountState, api_status: ApiStatus) -> Result<Account, StoreError>;
        insert_key(key: NewKeyRecord, now: DateTime<Utc>) -> Result<ApiKey, StoreError>;
        key_by_hash(hash: &KeyHash) -> Result<Option<ApiKey>, StoreError>;
        key(id: KeyId) -> Result<Option<ApiKey>, StoreError>;
        revoke_key(id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError>;
        set_key_terms(id: KeyId, expires_at: Option<DateTime<Utc>>, rate_limit: u32) -> Result<ApiKey, StoreError>;
        hit_rate_limit(key: KeyId, window: i64, limit: u32) -> Result<RateLimitHit, StoreError>;
        insert_category(new: NewCategory) -> Result<Category, StoreError>;
        set_category_active(id: CategoryId, active: bool) -> Result<Category, StoreError>;
        all_categories() -> Result<Vec<Category>, StoreError>;
        insert_product(new: NewProduct, now: DateTime<Utc>) -> Result<Product, StoreError>;
        set_product_active(id: ProductId, active: bool, now: DateTime<Utc>) -> Result<Product, StoreError>;
        insert_variant(product: ProductId, new: NewVariant, now: DateTime<Utc>) -> Result<Variant, StoreError>;
        update_variant(id: VariantId, patch: VariantPatch, now: DateTime<Utc>) -> Result<Variant, StoreError>;
        insert_warranty(product: ProductId, new: NewWarranty, now: DateTime<Utc>) -> Result<Warranty, StoreError>;
        set_warranty_active(id: WarrantyId, active: bool, now: DateTime<Utc>) -> Result<Warranty, StoreError>;
        products(filter: &ProductFilter, page: PageRequest) -> Result<Page<Product>, StoreError>;
        product(id: ProductId) -> Result<Option<Product>, StoreError>;
        products_of_variants(variants: &[VariantId]) -> Result<Vec<Product>, StoreError>;
        insert_governorate(name: String) -> Result<Governorate, StoreError>;
        governorates() -> Result<Vec<Governorate>, StoreError>;
        insert_shipping_option(name: String) -> Result<ShippingOption, StoreError>;
        set_shipping_option_active(id: ShippingOptionId, active: bool) -> Result<ShippingOption, StoreError>;
        set_shipping_rate(option: ShippingOptionId, rate: ShippingRate) -> Result<ShippingOption, StoreError>;
        change_order_status(change: StatusChange) -> Result<Order, StatusChangeError>;
        set_line_outcomes(order: OrderId, outcomes: Vec<(LineId, LineOutcome)>, now: DateTime<Utc>) -> Result<Order, StoreError>;
        set_tracking_url(order: OrderId, url: Option<String>, now: DateTime<Utc>) -> Result<Order, StoreError>;
        order(account: Option<AccountId>, id: OrderId) -> Result<Option<Order>, StoreError>;
        orders(account: AccountId, filter: &OrderFilter, page: PageRequest) -> Result<Page<Order>, StoreError>;
        wallet_totals(account: AccountId, held_after: DateTime<Utc>) -> Result<WalletTotals, StoreError>;
        begin_idempotent(scope: &IdempotencyScope, fingerprint: &str, now: DateTime<Utc>, expires_before: DateTime<Utc>, stale_before: DateTime<Utc>) -> Result<IdempotencyBegin, StoreError>;
        finish_idempotent(scope: &IdempotencyScope, response: StoredResponse) -> Result<(), StoreError>;
        abandon_idempotent(scope: &IdempotencyScope) -> Result<(), StoreError>;
        purge_idempotency(before: DateTime<Utc>) -> Result<u64, StoreError>;
        record_pulls(account: AccountId, month: &str, products: &[ProductId]) -> Result<(), StoreError>;
        meter(account: AccountId, month: &str) -> Result<MeterReading, StoreError>;
        insert_withdrawal(new: NewWithdrawal, now: DateTime<Utc>) -> Result<Withdrawal, StoreError>;
        decide_withdrawal(id: WithdrawalId, decision: WithdrawalDecision, now: DateTime<Utc>) -> Result<Withdrawal, StoreError>;
        withdrawals(account: AccountId) -> Result<Vec<Withdrawal>, StoreError>;
    ;

    async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError> {
        if self.fail_place_order.load(Ordering::SeqCst) {
            return Err(StoreError::backend(Boom).into());
        }
        self.inner.place_order(order).await
    }

    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError> {
        if self.panic_on_shipping.load(Ordering::SeqCst) {
            panic!("a bug inside a handler");
        }
        self.inner.shipping_options().await
    }
}

async fn harness() -> (Harness, Arc<FaultyStore>) {
    let store = Arc::new(FaultyStore {
        inner: MemoryStore::new(),
        fail_place_order: AtomicBool::new(false),
        panic_on_shipping: AtomicBool::new(false),
    });
    (Harness::bare(store.clone()).await, store)
}

#[tokio::test]
async fn a_store_failure_is_a_500_and_leaves_nothing_behind() {
    let (h, store) = harness().await;
    let body = h.order_body(2, "10");
    let orders = h.order_count().await;
    let stock = h.available(h.fixture.plain_variant).await;
    let meter = h
        .engine
        .operator()
        .meter_this_month(h.fixture.marketer_a)
        .await
        .unwrap();

    store.fail_place_order.store(true, Ordering::SeqCst);
    let failed = h
        .post_idempotent("sk_demo_marketer", "retry-me", &body)
        .await;
    failed.assert_error(500, "server_error");
    assert_eq!(failed.header("idempotent-replayed"), Some("false"));
    assert_eq!(h.order_count().await, orders);
    assert_eq!(h.available(h.fixture.plain_variant).await, stock);
    assert_eq!(
        h.engine
            .operator()
            .meter_this_month(h.fixture.marketer_a)
            .await
            .unwrap(),
        meter
    );

    // The key was not kept: the retry registers the order.
    store.fail_place_order.store(false, Ordering::SeqCst);
    let retried = h
        .post_idempotent("sk_demo_marketer", "retry-me", &body)
        .await;
    assert_eq!(retried.status, 201);
    assert_eq!(retried.header("idempotent-replayed"), Some("false"));
    assert_eq!(h.available(h.fixture.plain_variant).await, stock - 2);
}

#[tokio::test]
async fn a_panic_inside_a_handler_is_a_500() {
    let (h, store) = harness().await;
    store.panic_on_shipping.store(true, Ordering::SeqCst);
    let r = h.get("sk_demo_marketer", "/api/v1/shipping/options").await;
    r.assert_error(500, "server_error");
    store.panic_on_shipping.store(false, Ordering::SeqCst);
    assert_eq!(
        h.get("sk_demo_marketer", "/api/v1/shipping/options")
            .await
            .status,
        200
    );
}
