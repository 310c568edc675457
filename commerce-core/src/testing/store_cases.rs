//! Store-level conformance cases: every [`Store`] implementation must pass all of them.
//!
//! Each case is a `pub async fn` that builds its own fixture through the trait's `insert_*`
//! methods, so cases are independent and can run on a fresh store each. Most take
//! `&dyn Store`; the concurrency cases race real tokio tasks and take `Arc<dyn Store>`.
//!
//! A store crate runs them all with [`store_conformance_tests!`](crate::store_conformance_tests),
//! which expands to one `#[tokio::test]` per case:
//!
//! ```ignore
//! use std::sync::Arc;
//! use commerce_core::store::{MemoryStore, Store};
//!
//! async fn fresh_store() -> Arc<dyn Store> {
//!     Arc::new(MemoryStore::new())
//! }
//!
//! commerce_core::store_conformance_tests!(fresh_store());
//! ```
//!
//! The factory expression is evaluated once per test and must produce a future whose output
//! implements [`IntoTestStore`]: an `Arc<dyn Store>`, a [`TestStore`] (a store with a clean-up
//! step, e.g. dropping a PostgreSQL schema), or an `Option` of either, where `None` skips the
//! test (a database that is not configured). A skipped test still counts as passed; a leading
//! `#[cfg_attr(not(...), ignore = "...")]`, which the macro puts on every test, makes cargo
//! report it as ignored instead.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use rust_decimal::Decimal;

use crate::earnings::{OrderEarnings, WalletTotals};
use crate::model::*;
use crate::money::round_money;
use crate::store::*;

// ------------------------------------------------------------------------------------------
// Harness
// ------------------------------------------------------------------------------------------

/// A clean-up step run after a case (e.g. dropping the test's schema).
pub type Cleanup = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A store handed to one test, with an optional clean-up step.
pub struct TestStore {
    /// The store under test.
    pub store: Arc<dyn Store>,
    /// Run after the case returns (not after a panic).
    pub cleanup: Option<Cleanup>,
}

impl TestStore {
    /// A store without clean-up.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            cleanup: None,
        }
    }

    /// A store with a clean-up step.
    pub fn with_cleanup(
        store: Arc<dyn Store>,
        cleanup: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        Self {
            store,
            cleanup: Some(Box::pin(cleanup)),
        }
    }
}

/// What a conformance factory may return; `None` skips the test.
pub trait IntoTestStore {
    /// Converts into the store to test, or `None` to skip.
    fn into_test_store(self) -> Option<TestStore>;
}

impl IntoTestStore for TestStore {
    fn into_test_store(self) -> Option<TestStore> {
        Some(self)
    }
}

impl IntoTestStore for Arc<dyn Store> {
    fn into_test_store(self) -> Option<TestStore> {
        Some(TestStore::new(self))
    }
}

impl<T: IntoTestStore> IntoTestStore for Option<T> {
    fn into_test_store(self) -> Option<TestStore> {
        self.and_then(IntoTestStore::into_test_store)
    }
}

/// Runs one `&dyn Store` case on the factory's store (used by the macro).
#[doc(hidden)]
pub async fn run_case<F, Fut>(store: impl IntoTestStore, case: F)
where
    F: FnOnce(Arc<dyn Store>) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(test) = store.into_test_store() else {
        return;
    };
    case(test.store.clone()).await;
    if let Some(cleanup) = test.cleanup {
        cleanup.await;
    }
}

/// Expands to one `#[tokio::test(flavor = "multi_thread", worker_threads = 4)]` per
/// conformance case of [`store_cases`](crate::testing::store_cases), each calling `$factory`
/// (an expression producing a future whose output implements
/// [`IntoTestStore`](crate::testing::store_cases::IntoTestStore)) for a fresh store.
///
/// Outer attributes written before the factory are put on every generated test, e.g. to report
/// the tests as ignored (not passed) when their database is not configured:
/// `store_conformance_tests!(#[cfg_attr(not(db_tests), ignore = "needs DB_URL")] fresh_store())`.
///
/// The test crate needs `tokio` (features `macros`, `rt-multi-thread`) as a dev-dependency.
#[macro_export]
macro_rules! store_conformance_tests {
    (@ref $attrs:tt $factory:expr; $($case:ident),+ $(,)?) => {
        $(
            $crate::store_conformance_tests!(@one_ref $attrs $factory; $case);
        )+
    };
    (@arc $attrs:tt $factory:expr; $($case:ident),+ $(,)?) => {
        $(
            $crate::store_conformance_tests!(@one_arc $attrs $factory; $case);
        )+
    };
    (@one_ref [$(#[$attr:meta])*] $factory:expr; $case:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $case() {
            $crate::testing::store_cases::run_case($factory.await, |store| async move {
                $crate::testing::store_cases::$case(&*store).await
            })
            .await;
        }
    };
    (@one_arc [$(#[$attr:meta])*] $factory:expr; $case:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $case() {
            $crate::testing::store_cases::run_case($factory.await, |store| async move {
                $crate::testing::store_cases::$case(store).await
            })
            .await;
        }
    };
    // Leading attributes are gathered one by one (an expression may itself start with `#`).
    (@attrs [$($attrs:tt)*] #[$attr:meta] $($rest:tt)+) => {
        $crate::store_conformance_tests!(@attrs [$($attrs)* #[$attr]] $($rest)+);
    };
    (@attrs $attrs:tt $factory:expr) => {
        $crate::store_conformance_tests!(@ref $attrs $factory;
            accounts_round_trip_and_change_state,
            keys_are_found_by_hash_and_id,
            revoking_a_key_keeps_the_first_revocation_instant,
            key_terms_replace_expiry_and_limit,
            rate_limit_counts_exactly_up_to_the_limit_per_window,
            categories_round_trip_with_parents_and_activity,
            product_round_trips_with_variants_and_warranties,
            product_listing_filters_and_paginates,
            update_variant_patches_fields_and_bumps_product,
            stopping_a_warranty_keeps_it_on_the_product,
            products_of_variants_returns_each_owner_once,
            money_amounts_round_trip_to_the_piastre,
            shipping_rates_are_set_replaced_and_named,
            place_order_round_trips_and_reserves_stock,
            lines_of_one_variant_add_up_against_stock,
            insufficient_stock_writes_nothing,
            duplicate_external_reference_is_refused_per_account,
            taken_number_is_refused_and_writes_nothing,
            order_operations_are_billed_only_with_a_month,
            place_order_links_the_idempotency_record,
            status_change_respects_ownership_and_rules,
            status_change_sets_dates_and_appends_timeline,
            cancelling_releases_stock_exactly_once,
            line_outcomes_and_tracking_url_are_recorded,
            orders_list_newest_first_with_pagination,
            orders_filter_by_every_field,
            wallet_totals_follow_every_order_move,
            idempotency_start_in_flight_mismatch_replay_expiry,
            idempotency_stale_record_is_taken_over_or_recovered,
            abandon_removes_only_unanswered_unlinked_records,
            purge_deletes_only_older_records_and_counts,
            pulls_are_counted_once_per_product_and_month,
            withdrawals_are_listed_and_decided_once,
                );
        $crate::store_conformance_tests!(@arc $attrs $factory;
            concurrent_orders_never_oversell,
            concurrent_begin_idempotent_starts_once,
            concurrent_rate_limit_allows_exactly_the_limit,
            concurrent_rate_limit_with_a_high_limit_allows_exactly_the_limit,
            concurrent_same_external_reference_registers_one_order,
            concurrent_cancels_release_stock_once,
                );
    };
    (#[$attr:meta] $($rest:tt)+) => {
        $crate::store_conformance_tests!(@attrs [#[$attr]] $($rest)+);
    };
    ($factory:expr) => {
        $crate::store_conformance_tests!(@attrs [] $factory);
    };
}

// ------------------------------------------------------------------------------------------
// Fixture helpers
// ------------------------------------------------------------------------------------------

/// The instant fixtures count from (a whole second, UTC).
pub fn base_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap()
}

fn at(seconds: i64) -> DateTime<Utc> {
    base_time() + Duration::seconds(seconds)
}

fn d(text: &str) -> Decimal {
    text.parse().expect("decimal literal")
}

const MONTH: &str = "2026-03";

fn ids<T>(items: &[T], id: impl Fn(&T) -> i64) -> Vec<i64> {
    items.iter().map(id).collect()
}

fn order_ids(page: &Page<Order>) -> Vec<OrderId> {
    ids(&page.items, |o| o.id)
}

fn product_ids(page: &Page<Product>) -> Vec<ProductId> {
    ids(&page.items, |p| p.id)
}

fn page(page: u32, per_page: u32) -> PageRequest {
    PageRequest { page, per_page }
}

async fn account(store: &dyn Store, name: &str) -> Account {
    store
        .insert_account(
            NewAccount {
                name: name.to_owned(),
                store_name: Some(format!("متجر {name}")),
                email: format!("{}@example.com", name.to_lowercase()),
                phone: "01012345678".into(),
                side: Side::Marketer,
                state: AccountState::Active,
                api_status: ApiStatus::Approved,
            },
            at(0),
        )
        .await
        .expect("insert account")
}

async fn key(store: &dyn Store, account: AccountId, seed: u8) -> ApiKey {
    store
        .insert_key(
            NewKeyRecord {
                account_id: account,
                name: format!("key {seed}"),
                hash: [seed; 32],
                abilities: Ability::ALL.to_vec(),
                expires_at: None,
                rate_limit: 120,
            },
            at(0),
        )
        .await
        .expect("insert key")
}

async fn category(store: &dyn Store, slug: &str, parent: Option<CategoryId>) -> Category {
    store
        .insert_category(NewCategory {
            name: format!("قسم {slug}"),
            slug: slug.to_owned(),
            parent_id: parent,
        })
        .await
        .expect("insert category")
}

async fn product(store: &dyn Store, title: &str, category: CategoryId, now: i64) -> Product {
    store
        .insert_product(
            NewProduct {
                title: title.to_owned(),
                slug: title.to_lowercase().replace(' ', "-"),
                category_id: category,
                description: format!("وصف {title}\nسطر ثاني"),
                images: vec![
                    "https://img.example.com/1.jpg".into(),
                    "https://img.example.com/2.jpg".into(),
                ],
                files: vec![],
                video_url: None,
                marketing_files_url: Some("https://files.example.com/m.zip".into()),
                url: format!("https://shop.example.com/p/{}", title.len()),
            },
            at(now),
        )
        .await
        .expect("insert product")
}

async fn variant(
    store: &dyn Store,
    product: ProductId,
    label: &str,
    price: &str,
    available: i64,
    now: i64,
) -> Variant {
    store
        .insert_variant(
            product,
            NewVariant {
                label: label.to_owned(),
                price: d(price),
                suggested_min: d(price) + d("10.00"),
                suggested_max: d(price) + d("50.00"),
                available,
            },
            at(now),
        )
        .await
        .expect("insert variant")
}

async fn warranty(store: &dyn Store, product: ProductId, name: &str, now: i64) -> Warranty {
    store
        .insert_warranty(
            product,
            NewWarranty {
                name: name.to_owned(),
                admin_fee: d("15.00"),
                percent: d("2.50"),
                price_from: d("20.00"),
                duration_days: 365,
                terms: "الشروط:\n- سطر أول\n- سطر ثاني".into(),
                icon_url: Some("https://img.example.com/w.png".into()),
            },
            at(now),
        )
        .await
        .expect("insert warranty")
}

async fn available(store: &dyn Store, product: ProductId, variant: VariantId) -> i64 {
    store
        .product(product)
        .await
        .expect("product")
        .expect("product exists")
        .variants
        .iter()
        .find(|v| v.id == variant)
        .expect("variant exists")
        .available
}

/// A catalogue, a shipping option and two accounts.
struct Fixture {
    account: Account,
    other: Account,
    product: Product,
    variant: Variant,
    variant_b: Variant,
    warranty: Warranty,
    governorate: Governorate,
    option: ShippingOption,
}

async fn fixture(store: &dyn Store, stock: i64, stock_b: i64) -> Fixture {
    let account_a = account(store, "Alpha").await;
    let other = account(store, "Beta").await;
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Electric Kettle", cat.id, 0).await;
    let v = variant(store, p.id, "أبيض", "125.40", stock, 0).await;
    let vb = variant(store, p.id, "أسود", "99.99", stock_b, 0).await;
    let w = warranty(store, p.id, "ضمان سنة", 0).await;
    let g = store
        .insert_governorate("القاهرة".into())
        .await
        .expect("insert governorate");
    let option = store
        .insert_shipping_option("شحن عادي".into())
        .await
        .expect("insert option");
    let option = store
        .set_shipping_rate(
            option.id,
            ShippingRate {
                governorate_id: g.id,
                governorate_name: String::new(),
                delivery_charge: d("45.00"),
                shipping_tax_percent: d("14.00"),
                total_due_tax_percent: d("1.00"),
            },
        )
        .await
        .expect("set rate");
    let product = store.product(p.id).await.unwrap().unwrap();
    Fixture {
        account: account_a,
        other,
        product,
        variant: v,
        variant_b: vb,
        warranty: w,
        governorate: g,
        option,
    }
}

fn line(f: &Fixture, v: &Variant, quantity: i64, with_warranty: bool) -> NewOrderLine {
    let profit = d("10.50");
    let sell_price = v.price + profit;
    let warranties = if with_warranty {
        let unit = round_money(f.warranty.admin_fee + sell_price * f.warranty.percent / d("100"));
        vec![LineWarranty {
            warranty_id: f.warranty.id,
            name: f.warranty.name.clone(),
            unit_price: unit,
            quantity,
            total: unit * Decimal::from(quantity),
            duration_days: f.warranty.duration_days,
            terms: f.warranty.terms.clone(),
        }]
    } else {
        Vec::new()
    };
    NewOrderLine {
        variant_id: v.id,
        product_id: v.product_id,
        title: f.product.title.clone(),
        variant_label: v.label.clone(),
        quantity,
        sell_price,
        profit,
        commission_on: true,
        warranties,
    }
}

fn totals(lines: &[NewOrderLine]) -> Totals {
    let products: Decimal = lines
        .iter()
        .map(|l| l.sell_price * Decimal::from(l.quantity))
        .sum();
    let warranties: Decimal = lines
        .iter()
        .flat_map(|l| l.warranties.iter().map(|w| w.total))
        .sum();
    let profit: Decimal = lines
        .iter()
        .map(|l| l.profit * Decimal::from(l.quantity))
        .sum();
    let delivery_charge = d("51.30");
    let income_tax = round_money(profit * d("4") / d("100"));
    Totals {
        products: round_money(products),
        warranties: round_money(warranties),
        delivery_charge,
        customer_total: round_money(products + warranties + delivery_charge),
        profit: round_money(profit),
        income_tax,
        net_profit: round_money(profit - income_tax),
        income_tax_percent: d("4.00"),
    }
}

fn new_order(
    f: &Fixture,
    account: AccountId,
    number: &str,
    lines: Vec<NewOrderLine>,
    created: i64,
) -> NewOrder {
    NewOrder {
        account_id: account,
        number: number.to_owned(),
        legacy_number: None,
        external_reference: None,
        status: OrderStatus::Pending,
        customer: Customer {
            name: "محمد أحمد".into(),
            phone: "01012345678".into(),
            second_phone: None,
            address: "١٢ شارع التحرير".into(),
            governorate_id: f.governorate.id,
            governorate_name: f.governorate.name.clone(),
        },
        shipping_option_id: f.option.id,
        shipping_option_name: f.option.name.clone(),
        store_name: None,
        store_link: None,
        note: None,
        totals: totals(&lines),
        lines,
        created_at: at(created),
        bill_month: Some(MONTH.into()),
        idempotency: None,
    }
}

/// `EG-` plus eight characters from `A-Z0-9`.
fn number(n: u32) -> String {
    format!("EG-T{n:07}")
}

async fn place(store: &dyn Store, order: NewOrder) -> Order {
    store.place_order(order).await.expect("place order")
}

fn change(order: OrderId, to: OrderStatus, when: i64) -> StatusChange {
    StatusChange {
        account_id: None,
        order_id: order,
        to,
        only_from: Vec::new(),
        reason: None,
        at: at(when),
        bill_month: None,
    }
}

async fn move_to(store: &dyn Store, order: OrderId, path: &[OrderStatus], from: i64) -> Order {
    let mut last = None;
    for (i, status) in path.iter().enumerate() {
        last = Some(
            store
                .change_order_status(change(order, *status, from + i as i64))
                .await
                .expect("status change"),
        );
    }
    last.expect("non-empty path")
}

async fn meter_ops(store: &dyn Store, account: AccountId) -> u64 {
    store
        .meter(account, MONTH)
        .await
        .expect("meter")
        .order_operations
}

async fn all_orders(store: &dyn Store, account: AccountId) -> Page<Order> {
    store
        .orders(account, &OrderFilter::default(), page(1, 100))
        .await
        .expect("orders")
}

fn scope(account: AccountId, key: &str) -> IdempotencyScope {
    IdempotencyScope {
        account_id: account,
        key: key.to_owned(),
    }
}

/// `begin_idempotent` at `now` with a 24 h expiry and a 60 s staleness window.
async fn begin(
    store: &dyn Store,
    s: &IdempotencyScope,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> IdempotencyBegin {
    store
        .begin_idempotent(
            s,
            fingerprint,
            now,
            now - Duration::hours(24),
            now - Duration::seconds(60),
        )
        .await
        .expect("begin idempotent")
}

// ------------------------------------------------------------------------------------------
// Accounts and keys
// ------------------------------------------------------------------------------------------

/// Accounts keep every field; `set_account_state` persists; unknown ids are absent/NotFound.
pub async fn accounts_round_trip_and_change_state(store: &dyn Store) {
    let created = at(0) + Duration::microseconds(123_456);
    let supplier = store
        .insert_account(
            NewAccount {
                name: "مورد".into(),
                store_name: None,
                email: "s@example.com".into(),
                phone: "01100000000".into(),
                side: Side::Supplier,
                state: AccountState::Incomplete,
                api_status: ApiStatus::Pending,
            },
            created,
        )
        .await
        .unwrap();
    assert_eq!(supplier.name, "مورد");
    assert_eq!(supplier.store_name, None);
    assert_eq!(supplier.side, Side::Supplier);
    assert_eq!(supplier.state, AccountState::Incomplete);
    assert_eq!(supplier.api_status, ApiStatus::Pending);
    assert_eq!(supplier.created_at, created);
    let marketer = account(store, "Alpha").await;
    assert_ne!(marketer.id, supplier.id);
    assert_eq!(marketer.store_name.as_deref(), Some("متجر Alpha"));

    assert_eq!(
        store.account(supplier.id).await.unwrap(),
        Some(supplier.clone())
    );
    assert_eq!(store.account(marketer.id).await.unwrap(), Some(marketer));

    let changed = store
        .set_account_state(supplier.id, AccountState::Suspended, ApiStatus::Suspended)
        .await
        .unwrap();
    assert_eq!(changed.state, AccountState::Suspended);
    assert_eq!(changed.api_status, ApiStatus::Suspended);
    assert_eq!(changed.name, supplier.name);
    assert_eq!(store.account(supplier.id).await.unwrap(), Some(changed));

    let unknown = supplier.id + 1_000_000;
    assert_eq!(store.account(unknown).await.unwrap(), None);
    assert!(matches!(
        store
            .set_account_state(unknown, AccountState::Active, ApiStatus::Approved)
            .await,
        Err(StoreError::NotFound)
    ));
}

/// A key is stored with every field, found by its hash (any byte values) and id.
pub async fn keys_are_found_by_hash_and_id(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let mut hash = [0u8; 32];
    for (i, b) in hash.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37).wrapping_add(200);
    }
    hash[0] = 0;
    hash[31] = 255;
    let expires = at(3600);
    let stored = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id,
                name: "مفتاح المتجر".into(),
                hash,
                abilities: vec![Ability::OrdersWrite, Ability::CatalogRead],
                expires_at: Some(expires),
                rate_limit: 120,
            },
            at(5),
        )
        .await
        .unwrap();
    assert_eq!(stored.account_id, a.id);
    assert_eq!(stored.name, "مفتاح المتجر");
    assert_eq!(stored.hash, hash);
    assert_eq!(
        stored.abilities,
        vec![Ability::OrdersWrite, Ability::CatalogRead]
    );
    assert_eq!(stored.expires_at, Some(expires));
    assert_eq!(stored.revoked_at, None);
    assert_eq!(stored.rate_limit, 120);
    assert_eq!(stored.created_at, at(5));

    let bare = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id,
                name: "bare".into(),
                hash: [9; 32],
                abilities: vec![],
                expires_at: None,
                rate_limit: 1_000_000,
            },
            at(6),
        )
        .await
        .unwrap();
    assert_ne!(bare.id, stored.id);

    assert_eq!(
        store.key_by_hash(&hash).await.unwrap(),
        Some(stored.clone())
    );
    assert_eq!(store.key(stored.id).await.unwrap(), Some(stored.clone()));
    assert_eq!(
        store.key_by_hash(&[9; 32]).await.unwrap(),
        Some(bare.clone())
    );
    assert!(
        store
            .key(bare.id)
            .await
            .unwrap()
            .unwrap()
            .abilities
            .is_empty()
    );
    assert_eq!(store.key_by_hash(&[1; 32]).await.unwrap(), None);
    assert_eq!(store.key(bare.id + 1_000_000).await.unwrap(), None);

    let duplicate = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id,
                name: "dup".into(),
                hash,
                abilities: vec![],
                expires_at: None,
                rate_limit: 1,
            },
            at(7),
        )
        .await;
    assert!(
        matches!(duplicate, Err(StoreError::Invalid(_))),
        "duplicate hash must be refused: {duplicate:?}"
    );
    let orphan = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id + 1_000_000,
                name: "orphan".into(),
                hash: [3; 32],
                abilities: vec![],
                expires_at: None,
                rate_limit: 1,
            },
            at(7),
        )
        .await;
    assert!(
        matches!(orphan, Err(StoreError::NotFound)),
        "key of unknown account: {orphan:?}"
    );
    assert_eq!(store.key_by_hash(&[3; 32]).await.unwrap(), None);
}

/// `revoke_key` keeps the first revocation instant; everything else is unchanged.
pub async fn revoking_a_key_keeps_the_first_revocation_instant(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let k = key(store, a.id, 11).await;
    let other = key(store, a.id, 12).await;
    let revoked = store.revoke_key(k.id, at(10)).await.unwrap();
    assert_eq!(revoked.revoked_at, Some(at(10)));
    let again = store.revoke_key(k.id, at(20)).await.unwrap();
    assert_eq!(again.revoked_at, Some(at(10)));
    let found = store.key_by_hash(&[11; 32]).await.unwrap().unwrap();
    assert_eq!(found.revoked_at, Some(at(10)));
    assert_eq!(found.name, k.name);
    assert_eq!(found.abilities, k.abilities);
    assert_eq!(store.key(other.id).await.unwrap().unwrap().revoked_at, None);
    assert!(matches!(
        store.revoke_key(k.id + 1_000_000, at(30)).await,
        Err(StoreError::NotFound)
    ));
}

/// `set_key_terms` replaces expiry (also with none) and limit, nothing else.
pub async fn key_terms_replace_expiry_and_limit(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let k = key(store, a.id, 21).await;
    let changed = store.set_key_terms(k.id, Some(at(99)), 5).await.unwrap();
    assert_eq!(changed.expires_at, Some(at(99)));
    assert_eq!(changed.rate_limit, 5);
    assert_eq!(changed.name, k.name);
    assert_eq!(changed.abilities, k.abilities);
    assert_eq!(changed.hash, k.hash);
    assert_eq!(store.key(k.id).await.unwrap(), Some(changed));
    let cleared = store.set_key_terms(k.id, None, 1_000_000).await.unwrap();
    assert_eq!(cleared.expires_at, None);
    assert_eq!(cleared.rate_limit, 1_000_000);
    assert_eq!(store.key_by_hash(&[21; 32]).await.unwrap(), Some(cleared));
    assert!(matches!(
        store.set_key_terms(k.id + 1_000_000, None, 1).await,
        Err(StoreError::NotFound)
    ));
}

/// Hits are counted up to the limit; refused hits are not counted; windows and keys are
/// independent.
pub async fn rate_limit_counts_exactly_up_to_the_limit_per_window(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let k = key(store, a.id, 31).await;
    let k2 = key(store, a.id, 32).await;
    let window = 29_000_000;
    for used in 1..=3 {
        assert_eq!(
            store.hit_rate_limit(k.id, window, 3).await.unwrap(),
            RateLimitHit {
                allowed: true,
                used
            }
        );
    }
    for _ in 0..3 {
        assert_eq!(
            store.hit_rate_limit(k.id, window, 3).await.unwrap(),
            RateLimitHit {
                allowed: false,
                used: 3
            }
        );
    }
    // A lower limit inside the window refuses without counting.
    assert_eq!(
        store.hit_rate_limit(k.id, window, 2).await.unwrap(),
        RateLimitHit {
            allowed: false,
            used: 3
        }
    );
    // A higher limit allows again, counting from where the window is.
    assert_eq!(
        store.hit_rate_limit(k.id, window, 4).await.unwrap(),
        RateLimitHit {
            allowed: true,
            used: 4
        }
    );
    // Another key has its own window.
    assert_eq!(
        store.hit_rate_limit(k2.id, window, 3).await.unwrap(),
        RateLimitHit {
            allowed: true,
            used: 1
        }
    );
    // The next window starts from zero.
    assert_eq!(
        store.hit_rate_limit(k.id, window + 1, 3).await.unwrap(),
        RateLimitHit {
            allowed: true,
            used: 1
        }
    );
    assert_eq!(
        store.hit_rate_limit(k.id, window + 1, 3).await.unwrap(),
        RateLimitHit {
            allowed: true,
            used: 2
        }
    );
}

// ------------------------------------------------------------------------------------------
// Catalogue
// ------------------------------------------------------------------------------------------

/// Categories keep their parent, are listed by id, and can be hidden.
pub async fn categories_round_trip_with_parents_and_activity(store: &dyn Store) {
    let root = category(store, "home", None).await;
    assert!(root.active);
    assert_eq!(root.parent_id, None);
    assert_eq!(root.name, "قسم home");
    let child = category(store, "kitchen", Some(root.id)).await;
    assert_eq!(child.parent_id, Some(root.id));
    let orphan = store
        .insert_category(NewCategory {
            name: "x".into(),
            slug: "x".into(),
            parent_id: Some(child.id + 1_000_000),
        })
        .await;
    assert!(
        matches!(orphan, Err(StoreError::Invalid(_))),
        "unknown parent: {orphan:?}"
    );
    let hidden = store.set_category_active(root.id, false).await.unwrap();
    assert!(!hidden.active);
    assert_eq!(hidden.slug, "home");
    let all = store.all_categories().await.unwrap();
    assert_eq!(all, vec![hidden, child.clone()]);
    let shown = store.set_category_active(root.id, true).await.unwrap();
    assert!(shown.active);
    assert!(matches!(
        store.set_category_active(child.id + 1_000_000, true).await,
        Err(StoreError::NotFound)
    ));
}

/// A product keeps every field, its variants and warranties (stopped ones too) by id.
pub async fn product_round_trips_with_variants_and_warranties(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Electric Kettle", cat.id, 0).await;
    assert!(p.active);
    assert!(p.variants.is_empty() && p.warranties.is_empty());
    assert_eq!(p.updated_at, at(0));
    let v1 = variant(store, p.id, "أبيض", "125.40", 7, 1).await;
    let v2 = variant(store, p.id, "أسود", "0.01", 0, 2).await;
    let w1 = warranty(store, p.id, "ضمان سنة", 3).await;
    let w2 = warranty(store, p.id, "ضمان سنتين", 4).await;
    assert_eq!(v1.product_id, p.id);
    assert_eq!(v1.label, "أبيض");
    assert_eq!(v1.price.to_string(), "125.40");
    assert_eq!(v1.suggested_min.to_string(), "135.40");
    assert_eq!(v1.suggested_max.to_string(), "175.40");
    assert_eq!(v1.available, 7);
    assert_eq!(w1.product_id, p.id);
    assert!(w1.active);
    assert_eq!(w1.duration_days, 365);
    store
        .set_warranty_active(w2.id, false, at(5))
        .await
        .unwrap();
    let stored = store.product(p.id).await.unwrap().unwrap();
    assert_eq!(stored.title, "Electric Kettle");
    assert_eq!(stored.slug, "electric-kettle");
    assert_eq!(stored.category_id, cat.id);
    assert_eq!(stored.description, "وصف Electric Kettle\nسطر ثاني");
    assert_eq!(stored.images, p.images);
    assert_eq!(stored.images.len(), 2);
    assert!(stored.files.is_empty());
    assert_eq!(stored.video_url, None);
    assert_eq!(stored.marketing_files_url, p.marketing_files_url);
    assert_eq!(stored.url, p.url);
    assert_eq!(stored.variants, vec![v1.clone(), v2.clone()]);
    let w2_stopped = Warranty {
        active: false,
        ..w2.clone()
    };
    assert_eq!(stored.warranties, vec![w1.clone(), w2_stopped]);
    assert_eq!(stored.updated_at, at(5));
    // The listing returns the same full product.
    let listed = store
        .products(&ProductFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.items, vec![stored.clone()]);
    assert_eq!(listed.total, 1);

    assert_eq!(store.product(p.id + 1_000_000).await.unwrap(), None);
    let bad_category = store
        .insert_product(
            NewProduct {
                title: "x".into(),
                slug: "x".into(),
                category_id: cat.id + 1_000_000,
                description: String::new(),
                images: vec![],
                files: vec![],
                video_url: None,
                marketing_files_url: None,
                url: String::new(),
            },
            at(0),
        )
        .await;
    assert!(
        matches!(bad_category, Err(StoreError::Invalid(_))),
        "unknown category: {bad_category:?}"
    );
    let orphan_variant = store
        .insert_variant(
            p.id + 1_000_000,
            NewVariant {
                label: "x".into(),
                price: d("1.00"),
                suggested_min: d("1.00"),
                suggested_max: d("1.00"),
                available: 1,
            },
            at(0),
        )
        .await;
    assert!(matches!(orphan_variant, Err(StoreError::NotFound)));
    let orphan_warranty = store
        .insert_warranty(
            p.id + 1_000_000,
            NewWarranty {
                name: "x".into(),
                admin_fee: d("1.00"),
                percent: d("1.00"),
                price_from: d("1.00"),
                duration_days: 1,
                terms: String::new(),
                icon_url: None,
            },
            at(0),
        )
        .await;
    assert!(matches!(orphan_warranty, Err(StoreError::NotFound)));
    assert!(matches!(
        store
            .set_product_active(p.id + 1_000_000, false, at(0))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// Listing: only active products, by id; category ids, case-insensitive literal title
/// search, inclusive `updated_since`, pagination with totals.
pub async fn product_listing_filters_and_paginates(store: &dyn Store) {
    let c1 = category(store, "home", None).await;
    let c2 = category(store, "kitchen", Some(c1.id)).await;
    let c3 = category(store, "offers", None).await;
    let p1 = product(store, "Blue Kettle", c1.id, 0).await;
    let p2 = product(store, "Red kettle XL", c2.id, 10).await;
    let p3 = product(store, "Toaster 50% off", c3.id, 20).await;
    let p4 = product(store, "KETTLE mini", c1.id, 30).await;
    let stopped = store
        .set_product_active(p4.id, false, at(40))
        .await
        .unwrap();
    assert!(!stopped.active);
    assert_eq!(stopped.updated_at, at(40));
    let p5 = product(store, "Mixer", c1.id, 50).await;

    let list = |filter: ProductFilter, pr: PageRequest| async move {
        store.products(&filter, pr).await.expect("products")
    };
    let all = list(ProductFilter::default(), page(1, 25)).await;
    assert_eq!(product_ids(&all), vec![p1.id, p2.id, p3.id, p5.id]);
    assert_eq!(all.total, 4);

    let by_category = |ids: Vec<CategoryId>| ProductFilter {
        category_ids: Some(ids),
        ..Default::default()
    };
    let in_tree = list(by_category(vec![c1.id, c2.id]), page(1, 25)).await;
    assert_eq!(product_ids(&in_tree), vec![p1.id, p2.id, p5.id]);
    assert_eq!(in_tree.total, 3);
    let only_c3 = list(by_category(vec![c3.id]), page(1, 25)).await;
    assert_eq!(product_ids(&only_c3), vec![p3.id]);
    let none = list(by_category(vec![]), page(1, 25)).await;
    assert_eq!((none.items.len(), none.total), (0, 0));

    let by_query = |q: &str| ProductFilter {
        query: Some(q.to_owned()),
        ..Default::default()
    };
    for q in ["kettle", "KETTLE", "KeTtLe"] {
        let found = list(by_query(q), page(1, 25)).await;
        assert_eq!(product_ids(&found), vec![p1.id, p2.id], "query {q}");
        assert_eq!(found.total, 2);
    }
    // Search is a literal substring: SQL wildcards match only themselves.
    assert_eq!(
        product_ids(&list(by_query("50%"), page(1, 25)).await),
        vec![p3.id]
    );
    assert_eq!(
        product_ids(&list(by_query("%"), page(1, 25)).await),
        vec![p3.id]
    );
    assert_eq!(list(by_query("_"), page(1, 25)).await.total, 0);
    assert_eq!(
        product_ids(&list(by_query("e k"), page(1, 25)).await),
        vec![p1.id]
    );

    let since = |t: i64| ProductFilter {
        updated_since: Some(at(t)),
        ..Default::default()
    };
    assert_eq!(
        product_ids(&list(since(10), page(1, 25)).await),
        vec![p2.id, p3.id, p5.id],
        "updated_since is inclusive"
    );
    assert_eq!(
        product_ids(&list(since(11), page(1, 25)).await),
        vec![p3.id, p5.id]
    );
    assert_eq!(list(since(51), page(1, 25)).await.total, 0);

    let combined = ProductFilter {
        category_ids: Some(vec![c1.id]),
        query: Some("kettle".into()),
        updated_since: Some(at(0)),
    };
    assert_eq!(product_ids(&list(combined, page(1, 25)).await), vec![p1.id]);

    let first = list(ProductFilter::default(), page(1, 2)).await;
    assert_eq!((product_ids(&first), first.total), (vec![p1.id, p2.id], 4));
    let second = list(ProductFilter::default(), page(2, 2)).await;
    assert_eq!(
        (product_ids(&second), second.total),
        (vec![p3.id, p5.id], 4)
    );
    let beyond = list(ProductFilter::default(), page(3, 2)).await;
    assert_eq!((beyond.items.len(), beyond.total), (0, 4));
    let filtered_page = list(by_query("kettle"), page(2, 1)).await;
    assert_eq!(
        (product_ids(&filtered_page), filtered_page.total),
        (vec![p2.id], 2)
    );

    // A stopped product is still returned by `product`.
    let p4_read = store.product(p4.id).await.unwrap().unwrap();
    assert!(!p4_read.active);
    assert_eq!(p4_read.title, "KETTLE mini");
    // And comes back to the listing when restarted.
    store.set_product_active(p4.id, true, at(60)).await.unwrap();
    assert_eq!(
        product_ids(&list(since(60), page(1, 25)).await),
        vec![p4.id]
    );
}

/// `update_variant` changes only the given fields and bumps the product's `updated_at`.
pub async fn update_variant_patches_fields_and_bumps_product(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Kettle", cat.id, 0).await;
    let other = product(store, "Mixer", cat.id, 0).await;
    let v = variant(store, p.id, "أبيض", "100.00", 5, 0).await;
    let price_only = store
        .update_variant(
            v.id,
            VariantPatch {
                price: Some(d("110.55")),
                ..Default::default()
            },
            at(100),
        )
        .await
        .unwrap();
    assert_eq!(price_only.price.to_string(), "110.55");
    assert_eq!(price_only.suggested_min, v.suggested_min);
    assert_eq!(price_only.suggested_max, v.suggested_max);
    assert_eq!(price_only.available, 5);
    assert_eq!(price_only.label, v.label);
    let read = store.product(p.id).await.unwrap().unwrap();
    assert_eq!(read.updated_at, at(100));
    assert_eq!(read.variants, vec![price_only.clone()]);
    let since = ProductFilter {
        updated_since: Some(at(100)),
        ..Default::default()
    };
    let changed = store.products(&since, page(1, 25)).await.unwrap();
    assert_eq!(product_ids(&changed), vec![p.id]);
    assert_eq!(
        store.product(other.id).await.unwrap().unwrap().updated_at,
        at(0)
    );

    let all = store
        .update_variant(
            v.id,
            VariantPatch {
                price: None,
                suggested_min: Some(d("120.00")),
                suggested_max: Some(d("180.00")),
                available: Some(0),
            },
            at(200),
        )
        .await
        .unwrap();
    assert_eq!(all.price.to_string(), "110.55");
    assert_eq!(all.suggested_min.to_string(), "120.00");
    assert_eq!(all.suggested_max.to_string(), "180.00");
    assert_eq!(all.available, 0);
    assert_eq!(
        store.product(p.id).await.unwrap().unwrap().updated_at,
        at(200)
    );
    assert_eq!(available(store, p.id, v.id).await, 0);
    assert!(matches!(
        store
            .update_variant(v.id + 1_000_000, VariantPatch::default(), at(300))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// A stopped warranty stays on the product (inactive); the product's `updated_at` moves.
pub async fn stopping_a_warranty_keeps_it_on_the_product(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Kettle", cat.id, 0).await;
    let w = warranty(store, p.id, "ضمان", 1).await;
    assert_eq!(
        store.product(p.id).await.unwrap().unwrap().updated_at,
        at(1)
    );
    let stopped = store
        .set_warranty_active(w.id, false, at(200))
        .await
        .unwrap();
    assert!(!stopped.active);
    assert_eq!(stopped.name, w.name);
    let read = store.product(p.id).await.unwrap().unwrap();
    assert_eq!(read.warranties, vec![stopped]);
    assert_eq!(read.updated_at, at(200));
    let restarted = store
        .set_warranty_active(w.id, true, at(300))
        .await
        .unwrap();
    assert_eq!(restarted, w);
    assert!(matches!(
        store
            .set_warranty_active(w.id + 1_000_000, true, at(0))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// `products_of_variants` returns each owning product once, by id, stopped ones included.
pub async fn products_of_variants_returns_each_owner_once(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p1 = product(store, "Kettle", cat.id, 0).await;
    let p2 = product(store, "Mixer", cat.id, 0).await;
    let p3 = product(store, "Toaster", cat.id, 0).await;
    let v1 = variant(store, p1.id, "a", "1.00", 1, 0).await;
    let v2 = variant(store, p1.id, "b", "2.00", 1, 0).await;
    let v3 = variant(store, p2.id, "c", "3.00", 1, 0).await;
    let _v4 = variant(store, p3.id, "d", "4.00", 1, 0).await;
    store.set_product_active(p2.id, false, at(1)).await.unwrap();
    let found = store
        .products_of_variants(&[v3.id, v2.id, v1.id, v3.id + 1_000_000])
        .await
        .unwrap();
    assert_eq!(ids(&found, |p| p.id), vec![p1.id, p2.id]);
    assert_eq!(found[0].variants.len(), 2);
    assert!(!found[1].active);
    assert!(store.products_of_variants(&[]).await.unwrap().is_empty());
}

/// Money of every kind survives the store exactly (cents, zero, large amounts).
pub async fn money_amounts_round_trip_to_the_piastre(store: &dyn Store) {
    let f = fixture(store, 1_000, 1_000).await;
    let amounts = ["125.40", "0.01", "0.00", "99999999.99", "1000000.10"];
    for (i, amount) in amounts.iter().enumerate() {
        let v = store
            .insert_variant(
                f.product.id,
                NewVariant {
                    label: format!("v{i}"),
                    price: d(amount),
                    suggested_min: d(amount),
                    suggested_max: d("99999999.99"),
                    available: 3,
                },
                at(1),
            )
            .await
            .unwrap();
        assert_eq!(v.price.to_string(), *amount);
        let read = store.product(f.product.id).await.unwrap().unwrap();
        let read_v = read.variants.iter().find(|x| x.id == v.id).unwrap();
        assert_eq!(read_v.price.to_string(), *amount);
        assert_eq!(read_v.suggested_min.to_string(), *amount);
        assert_eq!(read_v.suggested_max.to_string(), "99999999.99");

        let w = store
            .insert_warranty(
                f.product.id,
                NewWarranty {
                    name: format!("w{i}"),
                    admin_fee: d(amount),
                    percent: d("12.34"),
                    price_from: d(amount),
                    duration_days: 30,
                    terms: String::new(),
                    icon_url: None,
                },
                at(1),
            )
            .await
            .unwrap();
        let read = store.product(f.product.id).await.unwrap().unwrap();
        let read_w = read.warranties.iter().find(|x| x.id == w.id).unwrap();
        assert_eq!(read_w.admin_fee.to_string(), *amount);
        assert_eq!(read_w.price_from.to_string(), *amount);
        assert_eq!(read_w.percent.to_string(), "12.34");

        let option = store
            .set_shipping_rate(
                f.option.id,
                ShippingRate {
                    governorate_id: f.governorate.id,
                    governorate_name: String::new(),
                    delivery_charge: d(amount),
                    shipping_tax_percent: d("14.00"),
                    total_due_tax_percent: d("0.75"),
                },
            )
            .await
            .unwrap();
        let rate = option.rate(f.governorate.id).unwrap();
        assert_eq!(rate.delivery_charge.to_string(), *amount);
        let options = store.shipping_options().await.unwrap();
        let rate = options[0].rate(f.governorate.id).unwrap();
        assert_eq!(rate.delivery_charge.to_string(), *amount);
        assert_eq!(rate.shipping_tax_percent.to_string(), "14.00");
        assert_eq!(rate.total_due_tax_percent.to_string(), "0.75");

        let wd = store
            .insert_withdrawal(
                NewWithdrawal {
                    account_id: f.account.id,
                    amount: d(amount),
                    supply_amount: d(amount),
                    wallet_number: "01012345678".into(),
                    wallet_description: "فودافون كاش".into(),
                    notes: None,
                },
                at(1),
            )
            .await
            .unwrap();
        let listed = store.withdrawals(f.account.id).await.unwrap();
        let listed = listed.iter().find(|x| x.id == wd.id).unwrap();
        assert_eq!(listed.amount.to_string(), *amount);
        assert_eq!(listed.supply_amount.to_string(), *amount);

        let mut order = new_order(&f, f.account.id, &number(i as u32), vec![], 10);
        let mut l = line(&f, &v, 1, false);
        l.sell_price = d(amount);
        l.profit = d(amount);
        l.warranties = vec![LineWarranty {
            warranty_id: w.id,
            name: w.name.clone(),
            unit_price: d(amount),
            quantity: 1,
            total: d(amount),
            duration_days: 30,
            terms: String::new(),
        }];
        order.lines = vec![l];
        order.totals = Totals {
            products: d(amount),
            warranties: d(amount),
            delivery_charge: d(amount),
            customer_total: d(amount),
            profit: d(amount),
            income_tax: d(amount),
            net_profit: d(amount),
            income_tax_percent: d("4.00"),
        };
        let placed = place(store, order).await;
        let read = store.order(None, placed.id).await.unwrap().unwrap();
        assert_eq!(read, placed);
        for t in [
            read.totals.products,
            read.totals.warranties,
            read.totals.delivery_charge,
            read.totals.customer_total,
            read.totals.profit,
            read.totals.income_tax,
            read.totals.net_profit,
        ] {
            assert_eq!(t.to_string(), *amount);
        }
        assert_eq!(read.totals.income_tax_percent.to_string(), "4.00");
        let rl = &read.lines[0];
        assert_eq!(rl.sell_price.to_string(), *amount);
        assert_eq!(rl.profit.to_string(), *amount);
        assert_eq!(rl.warranties[0].unit_price.to_string(), *amount);
        assert_eq!(rl.warranties[0].total.to_string(), *amount);
    }
}

// ------------------------------------------------------------------------------------------
// Shipping
// ------------------------------------------------------------------------------------------

/// Rates are added, replaced per governorate, sorted by governorate and named by the store.
pub async fn shipping_rates_are_set_replaced_and_named(store: &dyn Store) {
    let g1 = store.insert_governorate("القاهرة".into()).await.unwrap();
    let g2 = store.insert_governorate("الجيزة".into()).await.unwrap();
    let g3 = store.insert_governorate("أسوان".into()).await.unwrap();
    assert_eq!(
        store.governorates().await.unwrap(),
        vec![g1.clone(), g2.clone(), g3.clone()]
    );
    let standard = store.insert_shipping_option("عادي".into()).await.unwrap();
    assert!(standard.active && standard.rates.is_empty());
    let express = store.insert_shipping_option("سريع".into()).await.unwrap();
    let rate = |g: GovernorateId, charge: &str| ShippingRate {
        governorate_id: g,
        governorate_name: "ignored".into(),
        delivery_charge: d(charge),
        shipping_tax_percent: d("14.00"),
        total_due_tax_percent: d("1.50"),
    };
    let after = store
        .set_shipping_rate(standard.id, rate(g2.id, "45.50"))
        .await
        .unwrap();
    assert_eq!(after.rates.len(), 1);
    assert_eq!(after.rates[0].governorate_name, "الجيزة");
    let after = store
        .set_shipping_rate(standard.id, rate(g1.id, "40.00"))
        .await
        .unwrap();
    assert_eq!(ids(&after.rates, |r| r.governorate_id), vec![g1.id, g2.id]);
    let after = store
        .set_shipping_rate(standard.id, rate(g2.id, "50.00"))
        .await
        .unwrap();
    assert_eq!(after.rates.len(), 2, "a governorate's rate is replaced");
    assert_eq!(
        after.rate(g2.id).unwrap().delivery_charge.to_string(),
        "50.00"
    );
    assert_eq!(after.rate(g1.id).unwrap().governorate_name, "القاهرة");
    assert_eq!(after.rate(g3.id), None);
    let stopped = store
        .set_shipping_option_active(express.id, false)
        .await
        .unwrap();
    assert!(!stopped.active);
    let all = store.shipping_options().await.unwrap();
    assert_eq!(all, vec![after.clone(), stopped]);
    assert_eq!(
        all[0].rates[1],
        ShippingRate {
            governorate_id: g2.id,
            governorate_name: "الجيزة".into(),
            delivery_charge: d("50.00"),
            shipping_tax_percent: d("14.00"),
            total_due_tax_percent: d("1.50"),
        }
    );
    let unknown_governorate = store
        .set_shipping_rate(standard.id, rate(g3.id + 1_000_000, "1.00"))
        .await;
    assert!(
        matches!(unknown_governorate, Err(StoreError::Invalid(_))),
        "{unknown_governorate:?}"
    );
    let unknown_option = store
        .set_shipping_rate(express.id + 1_000_000, rate(g1.id, "1.00"))
        .await;
    assert!(
        matches!(unknown_option, Err(StoreError::NotFound)),
        "{unknown_option:?}"
    );
    assert!(matches!(
        store
            .set_shipping_option_active(express.id + 1_000_000, true)
            .await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(store.shipping_options().await.unwrap()[0], after);
}

// ------------------------------------------------------------------------------------------
// Orders
// ------------------------------------------------------------------------------------------

/// `place_order` keeps every field, starts the timeline, reserves stock, and is readable by
/// its owner only.
pub async fn place_order_round_trips_and_reserves_stock(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let mut order = new_order(
        &f,
        f.account.id,
        "EG-1A2B3C4D",
        vec![
            line(&f, &f.variant, 3, true),
            line(&f, &f.variant_b, 1, false),
        ],
        100,
    );
    order.created_at += Duration::microseconds(250_001);
    order.external_reference = Some("EXT-1".into());
    order.store_name = Some("متجري".into());
    order.store_link = Some("https://store.example.com".into());
    order.note = Some("اتصل قبل التوصيل\nشكرا".into());
    order.customer.second_phone = Some("01198765432".into());
    let placed = place(store, order.clone()).await;

    assert_eq!(placed.account_id, f.account.id);
    assert_eq!(placed.number, "EG-1A2B3C4D");
    assert_eq!(placed.legacy_number, None);
    assert_eq!(placed.external_reference.as_deref(), Some("EXT-1"));
    assert_eq!(placed.tracking_url, None);
    assert_eq!(placed.status, OrderStatus::Pending);
    assert_eq!(placed.customer, order.customer);
    assert_eq!(placed.shipping_option_id, f.option.id);
    assert_eq!(placed.shipping_option_name, f.option.name);
    assert_eq!(placed.store_name, order.store_name);
    assert_eq!(placed.store_link, order.store_link);
    assert_eq!(placed.note, order.note);
    assert_eq!(placed.totals, order.totals);
    assert_eq!(placed.created_at, order.created_at);
    assert_eq!(placed.updated_at, order.created_at);
    assert_eq!(placed.confirmed_at, None);
    assert_eq!(placed.delivered_at, None);
    assert_eq!(
        placed.timeline,
        vec![TimelineEntry {
            status: OrderStatus::Pending,
            at: order.created_at,
            reason: None
        }]
    );
    assert_eq!(placed.lines.len(), 2);
    assert_ne!(placed.lines[0].id, placed.lines[1].id);
    for (stored, sent) in placed.lines.iter().zip(&order.lines) {
        assert_eq!(stored.variant_id, sent.variant_id);
        assert_eq!(stored.product_id, sent.product_id);
        assert_eq!(stored.title, sent.title);
        assert_eq!(stored.variant_label, sent.variant_label);
        assert_eq!(stored.quantity, sent.quantity);
        assert_eq!(stored.sell_price, sent.sell_price);
        assert_eq!(stored.profit, sent.profit);
        assert_eq!(stored.commission_on, sent.commission_on);
        assert_eq!(stored.warranties, sent.warranties);
        assert_eq!(stored.outcome, LineOutcome::default());
    }
    assert_eq!(placed.lines[0].warranties.len(), 1);

    assert_eq!(
        store.order(None, placed.id).await.unwrap(),
        Some(placed.clone())
    );
    assert_eq!(
        store.order(Some(f.account.id), placed.id).await.unwrap(),
        Some(placed.clone())
    );
    assert_eq!(
        store.order(Some(f.other.id), placed.id).await.unwrap(),
        None
    );
    assert_eq!(
        store.order(None, placed.id + 1_000_000).await.unwrap(),
        None
    );

    assert_eq!(available(store, f.product.id, f.variant.id).await, 7);
    assert_eq!(available(store, f.product.id, f.variant_b.id).await, 4);
    let p = store.product(f.product.id).await.unwrap().unwrap();
    assert!(
        p.updated_at >= order.created_at,
        "reserving stock changes the product"
    );
    let listed = all_orders(store, f.account.id).await;
    assert_eq!((order_ids(&listed), listed.total), (vec![placed.id], 1));
    assert_eq!(listed.items[0], placed);
    assert_eq!(all_orders(store, f.other.id).await.total, 0);

    // A legacy (imported) order keeps its legacy number.
    let mut legacy = new_order(
        &f,
        f.account.id,
        "EG-LEGACY01",
        vec![line(&f, &f.variant, 1, false)],
        50,
    );
    legacy.legacy_number = Some("100001".into());
    legacy.bill_month = None;
    let legacy = place(store, legacy).await;
    assert_eq!(legacy.legacy_number.as_deref(), Some("100001"));
    assert_eq!(
        store
            .order(None, legacy.id)
            .await
            .unwrap()
            .unwrap()
            .legacy_number
            .as_deref(),
        Some("100001")
    );
}

/// Lines of one variant add up; the failing line is reported with what is left for it.
pub async fn lines_of_one_variant_add_up_against_stock(store: &dyn Store) {
    let f = fixture(store, 5, 5).await;
    let refused = store
        .place_order(new_order(
            &f,
            f.account.id,
            &number(1),
            vec![
                line(&f, &f.variant, 3, false),
                line(&f, &f.variant, 3, false),
            ],
            10,
        ))
        .await;
    assert!(
        matches!(
            refused,
            Err(PlaceOrderError::InsufficientStock {
                line_index: 1,
                available: 2
            })
        ),
        "{refused:?}"
    );
    assert_eq!(available(store, f.product.id, f.variant.id).await, 5);
    let exact = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(2),
            vec![
                line(&f, &f.variant, 2, false),
                line(&f, &f.variant_b, 5, false),
                line(&f, &f.variant, 3, false),
            ],
            20,
        ),
    )
    .await;
    assert_eq!(exact.lines.len(), 3);
    assert_eq!(available(store, f.product.id, f.variant.id).await, 0);
    assert_eq!(available(store, f.product.id, f.variant_b.id).await, 0);
    let empty = store
        .place_order(new_order(
            &f,
            f.account.id,
            &number(3),
            vec![line(&f, &f.variant, 1, false)],
            30,
        ))
        .await;
    assert!(
        matches!(
            empty,
            Err(PlaceOrderError::InsufficientStock {
                line_index: 0,
                available: 0
            })
        ),
        "{empty:?}"
    );
}

/// A refused order writes nothing: stock, orders, meter, idempotency link, reference and
/// number are all as before.
pub async fn insufficient_stock_writes_nothing(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let s = scope(f.account.id, "idem-1");
    assert_eq!(
        begin(store, &s, "fp", at(0)).await,
        IdempotencyBegin::Started
    );
    let mut order = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![
            line(&f, &f.variant_b, 2, true),
            line(&f, &f.variant, 11, false),
        ],
        10,
    );
    order.external_reference = Some("R-1".into());
    order.idempotency = Some(s.clone());
    let refused = store.place_order(order.clone()).await;
    assert!(
        matches!(
            refused,
            Err(PlaceOrderError::InsufficientStock {
                line_index: 1,
                available: 10
            })
        ),
        "{refused:?}"
    );
    assert_eq!(available(store, f.product.id, f.variant.id).await, 10);
    assert_eq!(available(store, f.product.id, f.variant_b.id).await, 5);
    assert_eq!(all_orders(store, f.account.id).await.total, 0);
    assert_eq!(meter_ops(store, f.account.id).await, 0);
    // The idempotency record was not linked to an order: a stale takeover starts afresh.
    let later = at(0) + Duration::minutes(5);
    assert_eq!(
        begin(store, &s, "fp", later).await,
        IdempotencyBegin::Started
    );
    // The reference and number are still free.
    order.lines = vec![line(&f, &f.variant, 10, false)];
    let placed = place(store, order).await;
    assert_eq!(placed.external_reference.as_deref(), Some("R-1"));
    assert_eq!(available(store, f.product.id, f.variant.id).await, 0);
    assert_eq!(meter_ops(store, f.account.id).await, 1);
}

/// A repeated `external_reference` on one account is refused with the existing order;
/// another account may use it.
pub async fn duplicate_external_reference_is_refused_per_account(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let mut first = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 2, false)],
        10,
    );
    first.external_reference = Some("SHOP-1001".into());
    let first = place(store, first).await;

    let mut again = new_order(
        &f,
        f.account.id,
        &number(2),
        vec![line(&f, &f.variant, 2, false)],
        20,
    );
    again.external_reference = Some("SHOP-1001".into());
    let refused = store.place_order(again.clone()).await;
    match refused {
        Err(PlaceOrderError::DuplicateExternalReference {
            existing_id,
            existing_number,
        }) => {
            assert_eq!(existing_id, first.id);
            assert_eq!(existing_number, first.number);
        }
        other => panic!("expected DuplicateExternalReference, got {other:?}"),
    }
    // Refused even when the stock would also be short: the duplicate is reported.
    let mut short = again.clone();
    short.lines = vec![line(&f, &f.variant, 100, false)];
    assert!(matches!(
        store.place_order(short).await,
        Err(PlaceOrderError::DuplicateExternalReference { .. })
    ));
    assert_eq!(available(store, f.product.id, f.variant.id).await, 8);
    assert_eq!(meter_ops(store, f.account.id).await, 1);
    assert_eq!(all_orders(store, f.account.id).await.total, 1);

    // The reference is case-sensitive and per account.
    let mut lower = again.clone();
    lower.external_reference = Some("shop-1001".into());
    place(store, lower).await;
    let mut other = again.clone();
    other.account_id = f.other.id;
    other.number = number(3);
    let other = place(store, other).await;
    assert_eq!(other.external_reference.as_deref(), Some("SHOP-1001"));
    assert_eq!(available(store, f.product.id, f.variant.id).await, 4);

    // Orders without a reference never collide.
    for n in 4..6 {
        place(
            store,
            new_order(
                &f,
                f.account.id,
                &number(n),
                vec![line(&f, &f.variant, 1, false)],
                30,
            ),
        )
        .await;
    }
    assert_eq!(all_orders(store, f.account.id).await.total, 4);
}

/// A taken number (of any account) is refused and nothing is written.
pub async fn taken_number_is_refused_and_writes_nothing(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let first = place(
        store,
        new_order(
            &f,
            f.account.id,
            "EG-AAAA1111",
            vec![line(&f, &f.variant, 2, false)],
            10,
        ),
    )
    .await;
    for account in [f.account.id, f.other.id] {
        let mut clash = new_order(
            &f,
            account,
            "EG-AAAA1111",
            vec![line(&f, &f.variant, 1, false)],
            20,
        );
        clash.external_reference = Some(format!("X-{account}"));
        let refused = store.place_order(clash).await;
        assert!(
            matches!(refused, Err(PlaceOrderError::NumberTaken)),
            "{refused:?}"
        );
    }
    assert_eq!(available(store, f.product.id, f.variant.id).await, 8);
    assert_eq!(meter_ops(store, f.account.id).await, 1);
    assert_eq!(meter_ops(store, f.other.id).await, 0);
    assert_eq!(all_orders(store, f.other.id).await.total, 0);
    assert_eq!(
        order_ids(&all_orders(store, f.account.id).await),
        vec![first.id]
    );
    // The references of the refused orders are still free.
    let mut retry = new_order(
        &f,
        f.other.id,
        "EG-AAAA2222",
        vec![line(&f, &f.variant, 1, false)],
        30,
    );
    retry.external_reference = Some(format!("X-{}", f.other.id));
    place(store, retry).await;
}

/// Order operations are recorded only when a billing month is given, per account and month.
pub async fn order_operations_are_billed_only_with_a_month(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let billed = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![line(&f, &f.variant, 1, false)],
            10,
        ),
    )
    .await;
    assert_eq!(meter_ops(store, f.account.id).await, 1);
    let mut free = new_order(
        &f,
        f.account.id,
        &number(2),
        vec![line(&f, &f.variant, 1, false)],
        11,
    );
    free.bill_month = None;
    place(store, free).await;
    let mut april = new_order(
        &f,
        f.account.id,
        &number(3),
        vec![line(&f, &f.variant, 1, false)],
        12,
    );
    april.bill_month = Some("2026-04".into());
    place(store, april).await;
    assert_eq!(meter_ops(store, f.account.id).await, 1);
    assert_eq!(
        store.meter(f.account.id, "2026-04").await.unwrap(),
        MeterReading {
            pulled_products: 0,
            order_operations: 1
        }
    );
    assert_eq!(meter_ops(store, f.other.id).await, 0);

    let mut cancel = change(billed.id, OrderStatus::RejectedByMarketer, 20);
    cancel.account_id = Some(f.account.id);
    cancel.bill_month = Some(MONTH.into());
    store.change_order_status(cancel.clone()).await.unwrap();
    assert_eq!(meter_ops(store, f.account.id).await, 2);
    // A refused move records nothing.
    assert!(matches!(
        store.change_order_status(cancel).await,
        Err(StatusChangeError::NotAllowed { .. })
    ));
    assert_eq!(meter_ops(store, f.account.id).await, 2);
    // A platform move without a month records nothing.
    let other = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(4),
            vec![line(&f, &f.variant, 1, false)],
            30,
        ),
    )
    .await;
    assert_eq!(meter_ops(store, f.account.id).await, 3);
    store
        .change_order_status(change(other.id, OrderStatus::Confirmed, 40))
        .await
        .unwrap();
    assert_eq!(meter_ops(store, f.account.id).await, 3);
}

/// `place_order` links the order to the idempotency record in the same operation.
pub async fn place_order_links_the_idempotency_record(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let s = scope(f.account.id, "key-1");
    assert_eq!(
        begin(store, &s, "fp", at(0)).await,
        IdempotencyBegin::Started
    );
    let mut order = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 1, false)],
        1,
    );
    order.idempotency = Some(s.clone());
    let placed = place(store, order).await;
    // Still processing: in flight.
    assert_eq!(
        begin(store, &s, "fp", at(30)).await,
        IdempotencyBegin::InFlight
    );
    // The request died after registering: the order is recovered, not registered again.
    assert_eq!(
        begin(store, &s, "fp", at(120)).await,
        IdempotencyBegin::Recovered(placed.id)
    );
    // Recovering refreshes the record: it is in flight again.
    assert_eq!(
        begin(store, &s, "fp", at(130)).await,
        IdempotencyBegin::InFlight
    );
    // A linked record survives abandon.
    store.abandon_idempotent(&s).await.unwrap();
    assert_eq!(
        begin(store, &s, "fp", at(300)).await,
        IdempotencyBegin::Recovered(placed.id)
    );
    // Another fingerprint is still a mismatch.
    assert_eq!(
        begin(store, &s, "other", at(301)).await,
        IdempotencyBegin::Mismatch
    );
    let response = StoredResponse {
        status: 201,
        body: b"{\"data\":{}}".to_vec(),
    };
    store.finish_idempotent(&s, response.clone()).await.unwrap();
    assert_eq!(
        begin(store, &s, "fp", at(400)).await,
        IdempotencyBegin::Replay(response)
    );
    // Linking to another account's scope does nothing to this one.
    let other_scope = scope(f.other.id, "key-1");
    assert_eq!(
        begin(store, &other_scope, "fp", at(500)).await,
        IdempotencyBegin::Started
    );
}

/// NotFound for unknown or foreign orders; NotAllowed for `only_from` or the lifecycle rule,
/// with nothing changed.
pub async fn status_change_respects_ownership_and_rules(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![line(&f, &f.variant, 2, false)],
            10,
        ),
    )
    .await;
    let mut foreign = change(order.id, OrderStatus::RejectedByMarketer, 20);
    foreign.account_id = Some(f.other.id);
    assert!(matches!(
        store.change_order_status(foreign).await,
        Err(StatusChangeError::NotFound)
    ));
    assert!(matches!(
        store
            .change_order_status(change(order.id + 1_000_000, OrderStatus::Confirmed, 20))
            .await,
        Err(StatusChangeError::NotFound)
    ));
    let mut guarded = change(order.id, OrderStatus::Cancelled, 20);
    guarded.only_from = vec![OrderStatus::Confirmed, OrderStatus::Preparing];
    match store.change_order_status(guarded).await {
        Err(StatusChangeError::NotAllowed { current, requested }) => {
            assert_eq!(current, OrderStatus::Pending);
            assert_eq!(requested, OrderStatus::Cancelled);
        }
        other => panic!("expected NotAllowed, got {other:?}"),
    }
    match store
        .change_order_status(change(order.id, OrderStatus::Shipped, 20))
        .await
    {
        Err(StatusChangeError::NotAllowed { current, requested }) => {
            assert_eq!(current, OrderStatus::Pending);
            assert_eq!(requested, OrderStatus::Shipped);
        }
        other => panic!("expected NotAllowed, got {other:?}"),
    }
    assert_eq!(
        store.order(None, order.id).await.unwrap(),
        Some(order.clone())
    );
    assert_eq!(available(store, f.product.id, f.variant.id).await, 8);

    let mut own = change(order.id, OrderStatus::RejectedByMarketer, 30);
    own.account_id = Some(f.account.id);
    own.only_from = vec![OrderStatus::Pending];
    own.reason = Some("العميل غير رأيه".into());
    let cancelled = store.change_order_status(own).await.unwrap();
    assert_eq!(cancelled.status, OrderStatus::RejectedByMarketer);
    assert_eq!(cancelled.status.family(), Family::Cancelled);
    assert_eq!(cancelled.updated_at, at(30));
    assert_eq!(cancelled.timeline.len(), 2);
    assert_eq!(
        cancelled.timeline[1],
        TimelineEntry {
            status: OrderStatus::RejectedByMarketer,
            at: at(30),
            reason: Some("العميل غير رأيه".into())
        }
    );
    assert_eq!(cancelled.confirmed_at, None);
    assert_eq!(
        store.order(None, order.id).await.unwrap(),
        Some(cancelled.clone())
    );
}

/// The full lifecycle sets `confirmed_at` and `delivered_at`, appends one timeline entry per
/// move and bumps `updated_at`; stock is not released by delivery.
pub async fn status_change_sets_dates_and_appends_timeline(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![line(&f, &f.variant, 2, false)],
            10,
        ),
    )
    .await;
    let confirmed = store
        .change_order_status(change(order.id, OrderStatus::Confirmed, 100))
        .await
        .unwrap();
    assert_eq!(confirmed.confirmed_at, Some(at(100)));
    assert_eq!(confirmed.delivered_at, None);
    assert_eq!(confirmed.updated_at, at(100));
    assert_eq!(confirmed.created_at, at(10));
    let delivered = move_to(
        store,
        order.id,
        &[
            OrderStatus::Preparing,
            OrderStatus::Shipped,
            OrderStatus::PartiallyDelivered,
        ],
        200,
    )
    .await;
    assert_eq!(delivered.status, OrderStatus::PartiallyDelivered);
    assert_eq!(delivered.confirmed_at, Some(at(100)));
    assert_eq!(delivered.delivered_at, Some(at(202)));
    assert_eq!(delivered.updated_at, at(202));
    assert_eq!(
        delivered
            .timeline
            .iter()
            .map(|e| (e.status, e.at))
            .collect::<Vec<_>>(),
        vec![
            (OrderStatus::Pending, at(10)),
            (OrderStatus::Confirmed, at(100)),
            (OrderStatus::Preparing, at(200)),
            (OrderStatus::Shipped, at(201)),
            (OrderStatus::PartiallyDelivered, at(202)),
        ]
    );
    let archived = store
        .change_order_status(change(order.id, OrderStatus::Archived, 300))
        .await
        .unwrap();
    assert_eq!(archived.delivered_at, Some(at(202)));
    assert_eq!(archived.timeline.len(), 6);
    assert_eq!(store.order(None, order.id).await.unwrap(), Some(archived));
    assert_eq!(available(store, f.product.id, f.variant.id).await, 8);

    let second = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(2),
            vec![line(&f, &f.variant, 1, false)],
            400,
        ),
    )
    .await;
    let delivered = move_to(
        store,
        second.id,
        &[
            OrderStatus::Confirmed,
            OrderStatus::Shipped,
            OrderStatus::Delivered,
        ],
        500,
    )
    .await;
    assert_eq!(delivered.delivered_at, Some(at(502)));
    assert_eq!(delivered.confirmed_at, Some(at(500)));
}

/// Entering the cancelled family releases every line's stock once; moving on does not
/// release again.
pub async fn cancelling_releases_stock_exactly_once(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![
                line(&f, &f.variant, 3, false),
                line(&f, &f.variant_b, 4, false),
                line(&f, &f.variant, 2, false),
            ],
            10,
        ),
    )
    .await;
    assert_eq!(available(store, f.product.id, f.variant.id).await, 5);
    assert_eq!(available(store, f.product.id, f.variant_b.id).await, 1);
    let cancelled = store
        .change_order_status(change(order.id, OrderStatus::RejectedByCustomer, 20))
        .await
        .unwrap();
    assert_eq!(cancelled.status, OrderStatus::RejectedByCustomer);
    assert_eq!(available(store, f.product.id, f.variant.id).await, 10);
    assert_eq!(available(store, f.product.id, f.variant_b.id).await, 5);
    assert!(
        store
            .product(f.product.id)
            .await
            .unwrap()
            .unwrap()
            .updated_at
            >= at(20),
        "releasing stock changes the product"
    );
    for to in [OrderStatus::Cancelled, OrderStatus::RejectedByMarketer] {
        assert!(matches!(
            store.change_order_status(change(order.id, to, 30)).await,
            Err(StatusChangeError::NotAllowed { .. })
        ));
    }
    store
        .change_order_status(change(order.id, OrderStatus::Archived, 40))
        .await
        .unwrap();
    assert_eq!(available(store, f.product.id, f.variant.id).await, 10);
    assert_eq!(available(store, f.product.id, f.variant_b.id).await, 5);

    // The platform's own cancellation of a confirmed order releases too.
    let confirmed = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(2),
            vec![line(&f, &f.variant, 4, false)],
            50,
        ),
    )
    .await;
    move_to(
        store,
        confirmed.id,
        &[OrderStatus::Confirmed, OrderStatus::Preparing],
        60,
    )
    .await;
    assert_eq!(available(store, f.product.id, f.variant.id).await, 6);
    store
        .change_order_status(change(confirmed.id, OrderStatus::Cancelled, 70))
        .await
        .unwrap();
    assert_eq!(available(store, f.product.id, f.variant.id).await, 10);
}

/// `set_line_outcomes` and `set_tracking_url` persist and bump `updated_at`; an unknown line
/// changes nothing.
pub async fn line_outcomes_and_tracking_url_are_recorded(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![
                line(&f, &f.variant, 3, false),
                line(&f, &f.variant_b, 1, false),
            ],
            10,
        ),
    )
    .await;
    let other = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(2),
            vec![line(&f, &f.variant, 1, false)],
            10,
        ),
    )
    .await;
    let outcome = LineOutcome {
        delivered_quantity: Some(1),
        returned_quantity: Some(2),
        damaged_quantity: 1,
        lost_quantity: 0,
        destroyed_quantity: 1,
    };
    let updated = store
        .set_line_outcomes(order.id, vec![(order.lines[0].id, outcome.clone())], at(50))
        .await
        .unwrap();
    assert_eq!(updated.lines[0].outcome, outcome);
    assert_eq!(updated.lines[1].outcome, LineOutcome::default());
    assert_eq!(updated.updated_at, at(50));
    assert_eq!(
        store.order(None, order.id).await.unwrap(),
        Some(updated.clone())
    );
    // A line of another order: NotFound, nothing changed.
    let refused = store
        .set_line_outcomes(
            order.id,
            vec![
                (order.lines[1].id, outcome.clone()),
                (other.lines[0].id, outcome.clone()),
            ],
            at(60),
        )
        .await;
    assert!(matches!(refused, Err(StoreError::NotFound)), "{refused:?}");
    assert_eq!(
        store.order(None, order.id).await.unwrap(),
        Some(updated.clone())
    );
    assert!(matches!(
        store
            .set_line_outcomes(order.id + 1_000_000, vec![], at(60))
            .await,
        Err(StoreError::NotFound)
    ));

    let tracked = store
        .set_tracking_url(order.id, Some("https://track.example.com/1".into()), at(70))
        .await
        .unwrap();
    assert_eq!(
        tracked.tracking_url.as_deref(),
        Some("https://track.example.com/1")
    );
    assert_eq!(tracked.updated_at, at(70));
    assert_eq!(tracked.lines[0].outcome, outcome);
    assert_eq!(store.order(None, order.id).await.unwrap(), Some(tracked));
    let cleared = store
        .set_tracking_url(order.id, None, at(80))
        .await
        .unwrap();
    assert_eq!(cleared.tracking_url, None);
    assert_eq!(cleared.updated_at, at(80));
    assert!(matches!(
        store
            .set_tracking_url(order.id + 1_000_000, None, at(80))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// Listing is newest first by `created_at`, then by id; pages and totals are exact; another
/// account's orders never appear.
pub async fn orders_list_newest_first_with_pagination(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let mut placed = Vec::new();
    for (n, created) in [(1, 10), (2, 30), (3, 20), (4, 30), (5, 40)] {
        placed.push(
            place(
                store,
                new_order(
                    &f,
                    f.account.id,
                    &number(n),
                    vec![line(&f, &f.variant, 1, false)],
                    created,
                ),
            )
            .await,
        );
    }
    place(
        store,
        new_order(
            &f,
            f.other.id,
            &number(9),
            vec![line(&f, &f.variant, 1, false)],
            35,
        ),
    )
    .await;
    let [o1, o2, o3, o4, o5] = [0, 1, 2, 3, 4].map(|i| placed[i].id);
    assert!(o4 > o2, "ids grow with insertion");
    let all = all_orders(store, f.account.id).await;
    assert_eq!(order_ids(&all), vec![o5, o4, o2, o3, o1]);
    assert_eq!(all.total, 5);
    let list = |p: u32| async move {
        store
            .orders(f.account.id, &OrderFilter::default(), page(p, 2))
            .await
            .unwrap()
    };
    let p1 = list(1).await;
    assert_eq!((order_ids(&p1), p1.total), (vec![o5, o4], 5));
    let p2 = list(2).await;
    assert_eq!((order_ids(&p2), p2.total), (vec![o2, o3], 5));
    let p3 = list(3).await;
    assert_eq!((order_ids(&p3), p3.total), (vec![o1], 5));
    let p4 = list(4).await;
    assert_eq!((p4.items.len(), p4.total), (0, 5));
    // Status changes do not reorder (ordering is by creation).
    store
        .change_order_status(change(o1, OrderStatus::Confirmed, 1000))
        .await
        .unwrap();
    assert_eq!(
        order_ids(&all_orders(store, f.account.id).await),
        vec![o5, o4, o2, o3, o1]
    );
    let empty = all_orders(store, f.account.id + 1_000_000).await;
    assert_eq!((empty.items.len(), empty.total), (0, 0));
}

/// Each `OrderFilter` field, alone and combined, including the normalised number matching
/// the `EG-` number or the legacy number.
pub async fn orders_filter_by_every_field(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let mk = |n: &str, created: i64| {
        new_order(
            &f,
            f.account.id,
            n,
            vec![line(&f, &f.variant, 1, false)],
            created,
        )
    };
    let mut a = mk("EG-1A2B3C4D", 10);
    a.external_reference = Some("A-1".into());
    let a = place(store, a).await;
    let mut b = mk("EG-ZZZZ0002", 20);
    b.external_reference = Some("B-2".into());
    let b = place(store, b).await;
    let c = place(store, mk("EG-ZZZZ0003", 30)).await;
    let mut legacy = mk("EG-ZZZZ0004", 40);
    legacy.legacy_number = Some("100001".into());
    let legacy = place(store, legacy).await;
    let mut foreign = new_order(
        &f,
        f.other.id,
        "EG-ZZZZ0005",
        vec![line(&f, &f.variant, 1, false)],
        50,
    );
    foreign.external_reference = Some("A-1".into());
    foreign.legacy_number = Some("100001".into());
    place(store, foreign).await;

    store
        .change_order_status(change(b.id, OrderStatus::Confirmed, 100))
        .await
        .unwrap();
    store
        .change_order_status(change(c.id, OrderStatus::RejectedByMarketer, 110))
        .await
        .unwrap();

    let q = |filter: OrderFilter| async move {
        store
            .orders(f.account.id, &filter, page(1, 25))
            .await
            .unwrap()
    };
    let check = |got: Page<Order>, want: Vec<OrderId>, what: &str| {
        assert_eq!(order_ids(&got), want, "{what}");
        assert_eq!(got.total, want.len() as u64, "{what}: total");
    };
    check(
        q(OrderFilter {
            status: Some(OrderStatus::Confirmed),
            ..Default::default()
        })
        .await,
        vec![b.id],
        "status",
    );
    check(
        q(OrderFilter {
            status: Some(OrderStatus::Shipped),
            ..Default::default()
        })
        .await,
        vec![],
        "status none",
    );
    check(
        q(OrderFilter {
            family: Some(Family::Cancelled),
            ..Default::default()
        })
        .await,
        vec![c.id],
        "family cancelled",
    );
    check(
        q(OrderFilter {
            family: Some(Family::Pending),
            ..Default::default()
        })
        .await,
        vec![legacy.id, a.id],
        "family pending",
    );
    check(
        q(OrderFilter {
            external_reference: Some("A-1".into()),
            ..Default::default()
        })
        .await,
        vec![a.id],
        "external_reference",
    );
    check(
        q(OrderFilter {
            external_reference: Some("a-1".into()),
            ..Default::default()
        })
        .await,
        vec![],
        "external_reference is exact",
    );
    for typed in ["eg1a2b3c4d", "EG-1A2B3C4D", "eg-1a2b3c4d", " EG 1A2B 3C4D "] {
        check(
            q(OrderFilter {
                number: Some(normalize_order_number(typed)),
                ..Default::default()
            })
            .await,
            vec![a.id],
            typed,
        );
    }
    check(
        q(OrderFilter {
            number: Some(normalize_order_number("100001")),
            ..Default::default()
        })
        .await,
        vec![legacy.id],
        "legacy number",
    );
    check(
        q(OrderFilter {
            number: Some(normalize_order_number("EG-ZZZZ0004")),
            ..Default::default()
        })
        .await,
        vec![legacy.id],
        "legacy order by its EG number",
    );
    check(
        q(OrderFilter {
            number: Some("EG1A2B3C4".into()),
            ..Default::default()
        })
        .await,
        vec![],
        "number is not a prefix match",
    );
    check(
        q(OrderFilter {
            updated_since: Some(at(100)),
            ..Default::default()
        })
        .await,
        vec![c.id, b.id],
        "updated_since inclusive",
    );
    check(
        q(OrderFilter {
            updated_since: Some(at(101)),
            ..Default::default()
        })
        .await,
        vec![c.id],
        "updated_since",
    );
    check(
        q(OrderFilter {
            updated_since: Some(at(40)),
            ..Default::default()
        })
        .await,
        vec![legacy.id, c.id, b.id],
        "updated_since covers creation",
    );
    check(
        q(OrderFilter {
            family: Some(Family::Pending),
            external_reference: Some("A-1".into()),
            ..Default::default()
        })
        .await,
        vec![a.id],
        "family and reference",
    );
    check(
        q(OrderFilter {
            status: Some(OrderStatus::Confirmed),
            external_reference: Some("A-1".into()),
            ..Default::default()
        })
        .await,
        vec![],
        "status and reference",
    );
    check(
        q(OrderFilter {
            family: Some(Family::Confirmed),
            number: Some("EGZZZZ0002".into()),
            updated_since: Some(at(100)),
            ..Default::default()
        })
        .await,
        vec![b.id],
        "family, number and updated_since",
    );
    let paged = store
        .orders(
            f.account.id,
            &OrderFilter {
                family: Some(Family::Pending),
                ..Default::default()
            },
            page(2, 1),
        )
        .await
        .unwrap();
    assert_eq!((order_ids(&paged), paged.total), (vec![a.id], 2));
}

/// The wallet sums the store keeps follow every write that changes an order's earnings
/// (placing, each status move, line outcomes) and equal the recomputation from all the
/// account's orders after each of them, at hold cut-offs before, between and after the
/// deliveries; another account's orders never count.
pub async fn wallet_totals_follow_every_order_move(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let account = f.account.id;
    let check = |label: &'static str| async move {
        let orders = all_orders_of(store, account).await;
        for held_after in [at(0), at(11), at(12), at(30), at(1_000)] {
            let kept = store.wallet_totals(account, held_after).await.unwrap();
            assert_eq!(
                kept,
                WalletTotals::of_orders(&orders, held_after),
                "after {label}, held after {held_after}"
            );
        }
    };
    let mk = |n: u32, account: AccountId, quantity: i64| {
        new_order(
            &f,
            account,
            &number(n),
            vec![
                line(&f, &f.variant, quantity, false),
                line(&f, &f.variant, 1, true),
            ],
            n as i64,
        )
    };
    let pending = place(store, mk(1, account, 1)).await;
    let confirmed = place(store, mk(2, account, 2)).await;
    let delivered = place(store, mk(3, account, 3)).await;
    let cancelled = place(store, mk(4, account, 1)).await;
    let returned = place(store, mk(5, account, 1)).await;
    let archived = place(store, mk(6, account, 2)).await;
    place(store, mk(7, f.other.id, 5)).await;
    check("placing").await;
    let expected: Decimal = [
        &pending, &confirmed, &delivered, &cancelled, &returned, &archived,
    ]
    .iter()
    .map(|o| o.totals.profit - o.totals.income_tax)
    .sum();
    let kept = store.wallet_totals(account, at(0)).await.unwrap();
    assert_eq!(kept.totals.expected, expected);
    assert_eq!(kept.totals.settled, Decimal::ZERO);

    move_to(store, confirmed.id, &[OrderStatus::Confirmed], 10).await;
    check("confirming").await;
    move_to(
        store,
        delivered.id,
        &[
            OrderStatus::Confirmed,
            OrderStatus::Shipped,
            OrderStatus::Delivered,
        ],
        10,
    )
    .await;
    check("delivering").await;
    move_to(store, cancelled.id, &[OrderStatus::Cancelled], 10).await;
    check("cancelling").await;
    move_to(
        store,
        returned.id,
        &[
            OrderStatus::Confirmed,
            OrderStatus::Shipped,
            OrderStatus::Returned,
        ],
        10,
    )
    .await;
    check("returning").await;
    let archived = move_to(
        store,
        archived.id,
        &[
            OrderStatus::Confirmed,
            OrderStatus::Shipped,
            OrderStatus::PartiallyDelivered,
        ],
        20,
    )
    .await;
    check("partially delivering").await;
    let outcome = LineOutcome {
        delivered_quantity: Some(1),
        returned_quantity: Some(1),
        ..LineOutcome::default()
    };
    store
        .set_line_outcomes(archived.id, vec![(archived.lines[0].id, outcome)], at(25))
        .await
        .unwrap();
    check("recording line outcomes").await;
    move_to(store, archived.id, &[OrderStatus::Archived], 26).await;
    check("archiving").await;

    // Settled: the delivered order (all pieces) and the archived one (1 + 1 pieces delivered).
    let kept = store.wallet_totals(account, at(0)).await.unwrap();
    let settled_orders = [
        store.order(None, delivered.id).await.unwrap().unwrap(),
        store.order(None, archived.id).await.unwrap().unwrap(),
    ];
    let settled: Decimal = settled_orders
        .iter()
        .map(|o| OrderEarnings::of(o).net)
        .sum();
    assert_eq!(kept.totals.settled, settled);
    assert_eq!(kept.held, settled, "both delivered after the cut-off");
    assert_eq!(kept.earliest_held_delivery, Some(at(12)));
    let later = store.wallet_totals(account, at(12)).await.unwrap();
    assert_eq!(later.held, OrderEarnings::of(&settled_orders[1]).net);
    assert_eq!(later.earliest_held_delivery, Some(at(22)));
    assert_eq!(
        store.wallet_totals(account, at(1_000)).await.unwrap().held,
        Decimal::ZERO
    );
    assert_eq!(
        store
            .wallet_totals(account + 1_000_000, at(0))
            .await
            .unwrap(),
        WalletTotals::default()
    );
}

async fn all_orders_of(store: &dyn Store, account: AccountId) -> Vec<Order> {
    store
        .orders(account, &OrderFilter::default(), page(1, 100))
        .await
        .unwrap()
        .items
}

// ------------------------------------------------------------------------------------------
// Idempotency
// ------------------------------------------------------------------------------------------

/// Started, InFlight, Mismatch, Replay (bytes exact), expiry via `expires_before`, and scopes
/// per account.
pub async fn idempotency_start_in_flight_mismatch_replay_expiry(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let s = scope(a.id, "order-42");
    let t0 = at(0);
    assert_eq!(begin(store, &s, "f1", t0).await, IdempotencyBegin::Started);
    assert_eq!(
        begin(store, &s, "f1", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::InFlight
    );
    assert_eq!(
        begin(store, &s, "f2", t0 + Duration::seconds(2)).await,
        IdempotencyBegin::Mismatch
    );
    let response = StoredResponse {
        status: 201,
        body: vec![b'{', 0, 159, 255, b'}', 0xd8, 0xa7],
    };
    store.finish_idempotent(&s, response.clone()).await.unwrap();
    assert_eq!(
        begin(store, &s, "f1", t0 + Duration::hours(23)).await,
        IdempotencyBegin::Replay(response.clone())
    );
    assert_eq!(
        begin(store, &s, "f2", t0 + Duration::hours(23)).await,
        IdempotencyBegin::Mismatch
    );
    // Another account's identical key is another scope.
    assert_eq!(
        begin(store, &scope(b.id, "order-42"), "f1", t0).await,
        IdempotencyBegin::Started
    );
    // Keys are exact (case-sensitive).
    assert_eq!(
        begin(store, &scope(a.id, "ORDER-42"), "f1", t0).await,
        IdempotencyBegin::Started
    );
    // Past the expiry, the record counts as absent: a new request starts, even with other data.
    let later = t0 + Duration::hours(25);
    assert_eq!(
        begin(store, &s, "f2", later).await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        begin(store, &s, "f2", later + Duration::seconds(1)).await,
        IdempotencyBegin::InFlight
    );
    assert_eq!(
        begin(store, &s, "f1", later + Duration::seconds(1)).await,
        IdempotencyBegin::Mismatch
    );
    // The boundary: a record created exactly at `expires_before` is live.
    let s2 = scope(a.id, "edge");
    assert_eq!(begin(store, &s2, "f", t0).await, IdempotencyBegin::Started);
    store
        .finish_idempotent(
            &s2,
            StoredResponse {
                status: 200,
                body: vec![],
            },
        )
        .await
        .unwrap();
    let edge = store
        .begin_idempotent(&s2, "f", t0 + Duration::hours(24), t0, t0)
        .await
        .unwrap();
    assert_eq!(
        edge,
        IdempotencyBegin::Replay(StoredResponse {
            status: 200,
            body: vec![]
        })
    );
    let unknown = store
        .finish_idempotent(
            &scope(a.id, "never-begun"),
            StoredResponse {
                status: 201,
                body: vec![],
            },
        )
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
}

/// An in-flight record older than `stale_before` is taken over (Started) unless it was linked
/// to an order (Recovered); a finished record is always replayed.
pub async fn idempotency_stale_record_is_taken_over_or_recovered(store: &dyn Store) {
    let f = fixture(store, 10, 10).await;
    let s = scope(f.account.id, "stale");
    let t0 = at(0);
    assert_eq!(begin(store, &s, "f1", t0).await, IdempotencyBegin::Started);
    let at_with = |now: DateTime<Utc>, stale: DateTime<Utc>, fp: &'static str| {
        let s = s.clone();
        async move {
            store
                .begin_idempotent(&s, fp, now, t0 - Duration::hours(24), stale)
                .await
                .unwrap()
        }
    };
    // Not yet stale at the boundary (created_at == stale_before).
    assert_eq!(
        at_with(t0 + Duration::seconds(10), t0, "f1").await,
        IdempotencyBegin::InFlight
    );
    // Stale: taken over, and the takeover's own record is fresh.
    assert_eq!(
        at_with(t0 + Duration::seconds(10), t0 + Duration::seconds(5), "f1").await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        at_with(t0 + Duration::seconds(11), t0 + Duration::seconds(5), "f1").await,
        IdempotencyBegin::InFlight
    );
    // A stale record with other data is still a mismatch.
    assert_eq!(
        at_with(
            t0 + Duration::seconds(100),
            t0 + Duration::seconds(50),
            "f2"
        )
        .await,
        IdempotencyBegin::Mismatch
    );
    // Linked to an order: recovered, not restarted.
    let mut order = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 1, false)],
        12,
    );
    order.idempotency = Some(s.clone());
    let placed = place(store, order).await;
    assert_eq!(
        at_with(
            t0 + Duration::seconds(200),
            t0 + Duration::seconds(100),
            "f1"
        )
        .await,
        IdempotencyBegin::Recovered(placed.id)
    );
    // A finished record is replayed however old it is (within the expiry).
    store
        .finish_idempotent(
            &s,
            StoredResponse {
                status: 201,
                body: b"ok".to_vec(),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        at_with(t0 + Duration::hours(2), t0 + Duration::hours(1), "f1").await,
        IdempotencyBegin::Replay(StoredResponse {
            status: 201,
            body: b"ok".to_vec()
        })
    );
}

/// `abandon_idempotent` removes only an in-flight record without response or order.
pub async fn abandon_removes_only_unanswered_unlinked_records(store: &dyn Store) {
    let f = fixture(store, 10, 10).await;
    let t0 = at(0);
    let open = scope(f.account.id, "open");
    assert_eq!(
        begin(store, &open, "f1", t0).await,
        IdempotencyBegin::Started
    );
    store.abandon_idempotent(&open).await.unwrap();
    // Gone: the key can be reused at once, with other data too.
    assert_eq!(
        begin(store, &open, "f2", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::Started
    );

    let answered = scope(f.account.id, "answered");
    assert_eq!(
        begin(store, &answered, "f1", t0).await,
        IdempotencyBegin::Started
    );
    let response = StoredResponse {
        status: 201,
        body: b"{}".to_vec(),
    };
    store
        .finish_idempotent(&answered, response.clone())
        .await
        .unwrap();
    store.abandon_idempotent(&answered).await.unwrap();
    assert_eq!(
        begin(store, &answered, "f1", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::Replay(response)
    );

    let linked = scope(f.account.id, "linked");
    assert_eq!(
        begin(store, &linked, "f1", t0).await,
        IdempotencyBegin::Started
    );
    let mut order = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 1, false)],
        0,
    );
    order.idempotency = Some(linked.clone());
    let placed = place(store, order).await;
    store.abandon_idempotent(&linked).await.unwrap();
    assert_eq!(
        begin(store, &linked, "f1", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::InFlight
    );
    assert_eq!(
        begin(store, &linked, "f1", t0 + Duration::minutes(5)).await,
        IdempotencyBegin::Recovered(placed.id)
    );
    // Abandoning an unknown scope is a no-op.
    store
        .abandon_idempotent(&scope(f.account.id, "unknown"))
        .await
        .unwrap();
}

/// `purge_idempotency` deletes records created strictly before the instant and counts them.
pub async fn purge_deletes_only_older_records_and_counts(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let t0 = at(0);
    let scopes: Vec<_> = (0..3).map(|i| scope(a.id, &format!("k{i}"))).collect();
    for (i, s) in scopes.iter().enumerate() {
        assert_eq!(
            begin(store, s, "f", t0 + Duration::seconds(10 * i as i64)).await,
            IdempotencyBegin::Started
        );
    }
    store
        .finish_idempotent(
            &scopes[1],
            StoredResponse {
                status: 201,
                body: b"x".to_vec(),
            },
        )
        .await
        .unwrap();
    assert_eq!(store.purge_idempotency(t0).await.unwrap(), 0);
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::seconds(10))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::seconds(10))
            .await
            .unwrap(),
        0
    );
    // The purged key starts afresh; the others are untouched.
    assert_eq!(
        begin(store, &scopes[0], "other", t0 + Duration::seconds(30)).await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        begin(store, &scopes[1], "f", t0 + Duration::seconds(30)).await,
        IdempotencyBegin::Replay(StoredResponse {
            status: 201,
            body: b"x".to_vec()
        })
    );
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::seconds(21))
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::hours(1))
            .await
            .unwrap(),
        1
    );
}

// ------------------------------------------------------------------------------------------
// Meter and withdrawals
// ------------------------------------------------------------------------------------------

/// Pulls count each product once per account and month.
pub async fn pulls_are_counted_once_per_product_and_month(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let cat = category(store, "kitchen", None).await;
    let p: Vec<ProductId> = {
        let mut v = Vec::new();
        for t in ["A", "B", "C"] {
            v.push(product(store, t, cat.id, 0).await.id);
        }
        v
    };
    assert_eq!(
        store.meter(a.id, MONTH).await.unwrap(),
        MeterReading::default()
    );
    store
        .record_pulls(a.id, MONTH, &[p[0], p[1], p[0]])
        .await
        .unwrap();
    assert_eq!(store.meter(a.id, MONTH).await.unwrap().pulled_products, 2);
    store
        .record_pulls(a.id, MONTH, &[p[1], p[2]])
        .await
        .unwrap();
    store.record_pulls(a.id, MONTH, &[]).await.unwrap();
    assert_eq!(
        store.meter(a.id, MONTH).await.unwrap(),
        MeterReading {
            pulled_products: 3,
            order_operations: 0
        }
    );
    store.record_pulls(a.id, "2026-04", &[p[0]]).await.unwrap();
    assert_eq!(
        store.meter(a.id, "2026-04").await.unwrap().pulled_products,
        1
    );
    assert_eq!(store.meter(a.id, MONTH).await.unwrap().pulled_products, 3);
    assert_eq!(store.meter(b.id, MONTH).await.unwrap().pulled_products, 0);
    store.record_pulls(b.id, MONTH, &[p[0]]).await.unwrap();
    assert_eq!(store.meter(b.id, MONTH).await.unwrap().pulled_products, 1);
    assert_eq!(store.meter(a.id, MONTH).await.unwrap().pulled_products, 3);
}

/// Withdrawals are listed oldest first per account and decided once.
pub async fn withdrawals_are_listed_and_decided_once(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let new = |account: AccountId, amount: &str, notes: Option<&str>| NewWithdrawal {
        account_id: account,
        amount: d(amount),
        supply_amount: d("0.01"),
        wallet_number: "01012345678".into(),
        wallet_description: "فودافون كاش".into(),
        notes: notes.map(str::to_owned),
    };
    let w1 = store
        .insert_withdrawal(new(a.id, "150.25", Some("أول طلب")), at(0))
        .await
        .unwrap();
    assert_eq!(w1.status, WithdrawalStatus::Pending);
    assert_eq!(w1.amount.to_string(), "150.25");
    assert_eq!(w1.supply_amount.to_string(), "0.01");
    assert_eq!(w1.notes.as_deref(), Some("أول طلب"));
    assert_eq!(w1.transfer_reference, None);
    assert_eq!(w1.receipt_url, None);
    assert_eq!(w1.created_at, at(0));
    assert_eq!(w1.decided_at, None);
    let w2 = store
        .insert_withdrawal(new(a.id, "100.00", None), at(10))
        .await
        .unwrap();
    let w3 = store
        .insert_withdrawal(new(b.id, "200.00", None), at(5))
        .await
        .unwrap();
    let w4 = store
        .insert_withdrawal(new(a.id, "300.00", Some("ملاحظة")), at(20))
        .await
        .unwrap();
    assert_eq!(
        store.withdrawals(a.id).await.unwrap(),
        vec![w1.clone(), w2.clone(), w4.clone()]
    );
    assert_eq!(store.withdrawals(b.id).await.unwrap(), vec![w3.clone()]);

    let completed = store
        .decide_withdrawal(
            w1.id,
            WithdrawalDecision::Complete {
                transfer_reference: "TRX-1".into(),
                receipt_url: Some("https://r.example.com/1".into()),
            },
            at(30),
        )
        .await
        .unwrap();
    assert_eq!(completed.status, WithdrawalStatus::Completed);
    assert_eq!(completed.transfer_reference.as_deref(), Some("TRX-1"));
    assert_eq!(
        completed.receipt_url.as_deref(),
        Some("https://r.example.com/1")
    );
    assert_eq!(completed.decided_at, Some(at(30)));
    assert_eq!(completed.amount, w1.amount);
    let second = store
        .decide_withdrawal(w1.id, WithdrawalDecision::Reject { notes: None }, at(40))
        .await;
    assert!(
        matches!(second, Err(StoreError::Invalid(_))),
        "second decision: {second:?}"
    );
    let rejected = store
        .decide_withdrawal(
            w2.id,
            WithdrawalDecision::Reject {
                notes: Some("رقم المحفظة غلط".into()),
            },
            at(50),
        )
        .await
        .unwrap();
    assert_eq!(rejected.status, WithdrawalStatus::Rejected);
    assert_eq!(rejected.notes.as_deref(), Some("رقم المحفظة غلط"));
    assert_eq!(rejected.transfer_reference, None);
    assert_eq!(rejected.decided_at, Some(at(50)));
    let kept_notes = store
        .decide_withdrawal(w4.id, WithdrawalDecision::Reject { notes: None }, at(60))
        .await
        .unwrap();
    assert_eq!(kept_notes.notes.as_deref(), Some("ملاحظة"));
    assert!(matches!(
        store
            .decide_withdrawal(
                w3.id,
                WithdrawalDecision::Complete {
                    transfer_reference: "T".into(),
                    receipt_url: None
                },
                at(70)
            )
            .await,
        Ok(Withdrawal {
            status: WithdrawalStatus::Completed,
            receipt_url: None,
            ..
        })
    ));
    assert_eq!(
        store.withdrawals(a.id).await.unwrap(),
        vec![completed, rejected, kept_notes]
    );
    assert!(matches!(
        store
            .decide_withdrawal(
                w4.id + 1_000_000,
                WithdrawalDecision::Reject { notes: None },
                at(80)
            )
            .await,
        Err(StoreError::NotFound)
    ));
    let orphan = store
        .insert_withdrawal(new(b.id + 1_000_000, "1.00", None), at(0))
        .await;
    assert!(matches!(orphan, Err(StoreError::NotFound)), "{orphan:?}");
}

// ------------------------------------------------------------------------------------------
// Concurrency
// ------------------------------------------------------------------------------------------

/// 50 concurrent orders of one piece on 10 available: exactly 10 succeed, none oversold.
pub async fn concurrent_orders_never_oversell(store: Arc<dyn Store>) {
    let f = fixture(&*store, 10, 0).await;
    let f = Arc::new(f);
    let mut tasks = Vec::new();
    for n in 0..50u32 {
        let store = store.clone();
        let f = f.clone();
        tasks.push(tokio::spawn(async move {
            let mut order = new_order(
                &f,
                f.account.id,
                &number(n),
                vec![line(&f, &f.variant, 1, false)],
                n as i64,
            );
            order.external_reference = Some(format!("R-{n}"));
            store.place_order(order).await
        }));
    }
    let mut ok = 0;
    let mut short = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => ok += 1,
            Err(PlaceOrderError::InsufficientStock {
                line_index: 0,
                available: 0,
            }) => short += 1,
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!((ok, short), (10, 40));
    assert_eq!(available(&*store, f.product.id, f.variant.id).await, 0);
    assert_eq!(all_orders(&*store, f.account.id).await.total, 10);
    assert_eq!(meter_ops(&*store, f.account.id).await, 10);
}

/// 50 concurrent begins on one scope: exactly one Started, the rest InFlight.
pub async fn concurrent_begin_idempotent_starts_once(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    let s = scope(a.id, "race");
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let store = store.clone();
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            begin(&*store, &s, "fp", at(0)).await
        }));
    }
    let mut started = 0;
    let mut in_flight = 0;
    for task in tasks {
        match task.await.expect("task") {
            IdempotencyBegin::Started => started += 1,
            IdempotencyBegin::InFlight => in_flight += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((started, in_flight), (1, 49));
}

/// 3,100 hits from 16 tasks on a key allowed 3,000 a minute (a store may spread such a key's
/// count over several rows): exactly 3,000 allowed, none reporting more than the limit, and the
/// window then refuses.
pub async fn concurrent_rate_limit_with_a_high_limit_allows_exactly_the_limit(
    store: Arc<dyn Store>,
) {
    const LIMIT: u32 = 3_000;
    let a = account(&*store, "Alpha").await;
    let k = key(&*store, a.id, 42).await;
    let mut tasks = Vec::new();
    for task in 0..16 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut allowed = 0u32;
            for _ in (task..3_100).step_by(16) {
                let hit = store.hit_rate_limit(k.id, 8, LIMIT).await.expect("hit");
                assert!(hit.used <= LIMIT, "{hit:?}");
                if hit.allowed {
                    allowed += 1;
                } else {
                    assert_eq!(hit.used, LIMIT);
                }
            }
            allowed
        }));
    }
    let mut allowed = 0;
    for task in tasks {
        allowed += task.await.expect("task");
    }
    assert_eq!(allowed, LIMIT);
    assert_eq!(
        store.hit_rate_limit(k.id, 8, LIMIT).await.unwrap(),
        RateLimitHit {
            allowed: false,
            used: LIMIT
        }
    );
}

/// 50 concurrent hits with limit 20: exactly 20 allowed, and the window holds 20.
pub async fn concurrent_rate_limit_allows_exactly_the_limit(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    let k = key(&*store, a.id, 41).await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store.hit_rate_limit(k.id, 7, 20).await
        }));
    }
    let mut allowed = Vec::new();
    let mut refused = 0;
    for task in tasks {
        let hit = task.await.expect("task").expect("hit");
        if hit.allowed {
            allowed.push(hit.used);
        } else {
            assert_eq!(hit.used, 20);
            refused += 1;
        }
    }
    allowed.sort_unstable();
    assert_eq!(allowed, (1..=20).collect::<Vec<u32>>());
    assert_eq!(refused, 30);
    assert_eq!(
        store.hit_rate_limit(k.id, 7, 20).await.unwrap(),
        RateLimitHit {
            allowed: false,
            used: 20
        }
    );
}

/// 20 concurrent orders with one `external_reference`: exactly one order, the others see it.
pub async fn concurrent_same_external_reference_registers_one_order(store: Arc<dyn Store>) {
    let f = Arc::new(fixture(&*store, 100, 0).await);
    let mut tasks = Vec::new();
    for n in 0..20u32 {
        let store = store.clone();
        let f = f.clone();
        tasks.push(tokio::spawn(async move {
            let mut order = new_order(
                &f,
                f.account.id,
                &number(n),
                vec![line(&f, &f.variant, 2, false)],
                n as i64,
            );
            order.external_reference = Some("SAME".into());
            store.place_order(order).await
        }));
    }
    let mut winners = Vec::new();
    let mut duplicates = Vec::new();
    for task in tasks {
        match task.await.expect("task") {
            Ok(order) => winners.push(order),
            Err(PlaceOrderError::DuplicateExternalReference {
                existing_id,
                existing_number,
            }) => duplicates.push((existing_id, existing_number)),
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1);
    assert_eq!(duplicates.len(), 19);
    let winner = &winners[0];
    for (id, number) in &duplicates {
        assert_eq!((*id, number), (winner.id, &winner.number));
    }
    assert_eq!(available(&*store, f.product.id, f.variant.id).await, 98);
    let listed = all_orders(&*store, f.account.id).await;
    assert_eq!(order_ids(&listed), vec![winner.id]);
    assert_eq!(meter_ops(&*store, f.account.id).await, 1);
}

/// 10 concurrent cancellations of one order: exactly one succeeds, stock is released once.
pub async fn concurrent_cancels_release_stock_once(store: Arc<dyn Store>) {
    let f = Arc::new(fixture(&*store, 10, 0).await);
    let order = place(
        &*store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![line(&f, &f.variant, 4, false)],
            1,
        ),
    )
    .await;
    let mut tasks = Vec::new();
    for i in 0..10 {
        let store = store.clone();
        let account = f.account.id;
        tasks.push(tokio::spawn(async move {
            let mut c = change(order.id, OrderStatus::RejectedByMarketer, 10 + i);
            c.account_id = Some(account);
            c.only_from = vec![OrderStatus::Pending];
            c.bill_month = Some(MONTH.into());
            store.change_order_status(c).await
        }));
    }
    let mut ok = 0;
    let mut refused = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => ok += 1,
            Err(StatusChangeError::NotAllowed { current, .. }) => {
                assert_eq!(current, OrderStatus::RejectedByMarketer);
                refused += 1;
            }
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!((ok, refused), (1, 9));
    assert_eq!(available(&*store, f.product.id, f.variant.id).await, 10);
    let read = store.order(None, order.id).await.unwrap().unwrap();
    assert_eq!(read.timeline.len(), 2);
    assert_eq!(meter_ops(&*store, f.account.id).await, 2);
}
