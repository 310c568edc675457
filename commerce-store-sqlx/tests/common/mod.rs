//! Fault-injection scenarios shared by the SQLite and PostgreSQL test suites.
//!
//! Each scenario builds a fixture through the `Store` trait, arms a failure inside one
//! operation (a trigger that fails the operation's last write, or a closed pool), and then
//! checks that stock, orders, idempotency records and the meter are exactly as before.

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, Duration, TimeZone, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use rust_decimal::Decimal;

/// A future borrowed from the database handle.
pub type Fut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The pool-access methods of [`Database`] for a newtype over a sqlx pool (the same on every
/// backend; only the trigger SQL differs).
#[macro_export]
macro_rules! pool_access {
    () => {
        fn exec(&self, sql: &'static str) -> common::Fut<'_, ()> {
            Box::pin(async move {
                sqlx::raw_sql(sql).execute(&self.0).await.expect("exec");
            })
        }
        fn count(&self, sql: &'static str) -> common::Fut<'_, i64> {
            Box::pin(async move {
                sqlx::query_scalar(sql)
                    .fetch_one(&self.0)
                    .await
                    .expect("count")
            })
        }
        fn close(&self) -> common::Fut<'_, ()> {
            Box::pin(self.0.close())
        }
    };
}

/// Raw access to the database under a store.
pub trait Database: Sync {
    /// Runs raw SQL (one or more statements).
    fn exec(&self, sql: &'static str) -> Fut<'_, ()>;
    /// Runs a `SELECT COUNT(*) ...`.
    fn count(&self, sql: &'static str) -> Fut<'_, i64>;
    /// Closes the pool.
    fn close(&self) -> Fut<'_, ()>;
    /// SQL creating a trigger that fails every insert or update of `meter_order_operations`.
    fn fail_meter_sql(&self) -> &'static str;
    /// SQL creating a trigger that fails every insert into `webhook_deliveries` (an event queued).
    fn fail_event_sql(&self) -> &'static str;
    /// SQL dropping both triggers.
    fn disarm_sql(&self) -> &'static str;
}

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap() + Duration::seconds(seconds)
}

/// Rows where the order counters and earnings sums differ from the orders: 0 when in step.
pub const COUNTER_MISMATCHES: &str = include_str!("../queries/counter_mismatches.sql");

fn d(text: &str) -> Decimal {
    text.parse().unwrap()
}

const MONTH: &str = "2026-03";

fn month(text: &str) -> BillingMonth {
    BillingMonth::parse(text).expect("a billing month")
}

/// An approved marketer, a product with one variant of 10 pieces, a governorate and a
/// shipping option.
pub struct Fixture {
    pub account: Account,
    pub product: Product,
    pub variant: Variant,
    pub governorate: Governorate,
    pub option: ShippingOption,
}

/// Builds a [`Fixture`] through `store`.
pub async fn fixture(store: &dyn Store) -> Fixture {
    let account = store
        .insert_account(
            NewAccount::builder()
                .name("Alpha".to_owned())
                .email("a@example.com".to_owned())
                .phone("01012345678".to_owned())
                .side(Side::Marketer)
                .state(AccountState::Active)
                .api_status(ApiStatus::Approved)
                .build(),
            at(0),
        )
        .await
        .unwrap();
    let category = store
        .insert_category(NewCategory::new(
            "Kitchen".to_owned(),
            "kitchen".to_owned(),
            None,
        ))
        .await
        .unwrap();
    let product = store
        .insert_product(
            NewProduct::builder()
                .category_id(category.id)
                .title("Kettle".to_owned())
                .slug("kettle".to_owned())
                .url("https://example.com/kettle".to_owned())
                .build(),
            at(0),
        )
        .await
        .unwrap();
    let variant = store
        .insert_variant(
            product.id,
            NewVariant::builder()
                .label("White".to_owned())
                .price(d("125.40"))
                .available(10)
                .suggested_min(d("150.00"))
                .suggested_max(d("200.00"))
                .build(),
            at(0),
        )
        .await
        .unwrap();
    let governorate = store.insert_governorate("Cairo".into()).await.unwrap();
    let option = store
        .insert_shipping_option("Standard".into())
        .await
        .unwrap();
    Fixture {
        account,
        product,
        variant,
        governorate,
        option,
    }
}

/// A pending order of `quantity` pieces of the fixture's variant, numbered `number`.
pub fn order(f: &Fixture, number: &str, quantity: i64) -> NewOrder {
    NewOrder::builder()
        .account_id(f.account.id)
        .number(number.into())
        .maybe_legacy_number(None)
        .maybe_external_reference(Some(format!("REF-{number}")))
        .status(OrderStatus::Pending)
        .customer(
            Customer::builder()
                .name("Customer".into())
                .phone("01012345678".into())
                .maybe_second_phone(None)
                .address("Street 1".into())
                .governorate_id(f.governorate.id)
                .governorate_name(f.governorate.name.clone())
                .build(),
        )
        .shipping_option_id(f.option.id)
        .shipping_option_name(f.option.name.clone())
        .maybe_store_name(None)
        .maybe_store_link(None)
        .maybe_note(None)
        .lines(vec![
            NewOrderLine::builder()
                .variant_id(f.variant.id)
                .product_id(f.product.id)
                .title(f.product.title.clone())
                .variant_label(f.variant.label.clone())
                .quantity(quantity)
                .sell_price(d("135.40"))
                .profit(d("10.00"))
                .commission_on(true)
                .warranties(vec![])
                .maybe_supplier_id(f.product.supplier_id)
                .supply_price(f.variant.supply_price)
                .build(),
        ])
        .totals(
            Totals::builder()
                .products(d("135.40") * Decimal::from(quantity))
                .profit(d("10.00") * Decimal::from(quantity))
                .build(),
        )
        .created_at(at(10))
        .maybe_bill_month(Some(month(MONTH)))
        .idempotency(None)
        .events(Default::default())
        .priced_from(Vec::new())
        .build()
}

async fn available(store: &dyn Store, f: &Fixture) -> i64 {
    store.product(f.product.id).await.unwrap().unwrap().variants[0].available
}

/// What an order writes, counted: stock, orders, the meter, rows, timelines, idempotency
/// links and the order counters (equal before and after a refusal).
pub async fn snapshot(store: &dyn Store, db: &dyn Database, f: &Fixture) -> Vec<i64> {
    let orders = store
        .orders(
            f.account.id,
            &OrderFilter::default(),
            PageRequest::default(),
        )
        .await
        .unwrap();
    vec![
        available(store, f).await,
        orders.total as i64,
        store
            .meter(f.account.id, &month(MONTH))
            .await
            .unwrap()
            .order_operations as i64,
        db.count("SELECT COUNT(*) FROM orders").await,
        db.count("SELECT COUNT(*) FROM order_lines").await,
        orders.items.iter().map(|o| o.timeline.len() as i64).sum(),
        db.count("SELECT COUNT(*) FROM idempotency_records WHERE order_id IS NOT NULL")
            .await,
        // The order counters: pending, cancelled, and rows out of step with COUNT(*).
        db.count(
            "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM account_order_counts \
             WHERE family = 'pending'",
        )
        .await,
        db.count(
            "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM account_order_counts \
             WHERE family = 'cancelled'",
        )
        .await,
        db.count(COUNTER_MISMATCHES).await,
    ]
}

/// Registers an endpoint of the fixture's account receiving every order event.
async fn subscribe(store: &dyn Store, f: &Fixture) {
    store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(f.account.id)
                .url("https://hooks.example".to_owned())
                .secret(WebhookSecret::new("whsec_test"))
                .created_at(at(0))
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await
        .unwrap();
}

/// The deliveries queued of events of `kind`.
async fn queued(db: &dyn Database, kind: EventType) -> i64 {
    match kind {
        EventType::OrderCreated => {
            db.count("SELECT COUNT(*) FROM webhook_deliveries WHERE event_type = 'order.created'")
                .await
        }
        _ => {
            db.count(
                "SELECT COUNT(*) FROM webhook_deliveries \
                 WHERE event_type = 'order.status_changed'",
            )
            .await
        }
    }
}

/// `place_order` failing at its last write (the meter, after the outbox's insert) leaves
/// stock, orders, lines, timeline, idempotency link, meter and webhook deliveries exactly as
/// before; after the fault is removed the same order (same number and reference) goes
/// through, with its delivery.
pub async fn place_order_failing_at_its_last_write_leaves_nothing(
    store: &dyn Store,
    db: &dyn Database,
) {
    let f = fixture(store).await;
    subscribe(store, &f).await;
    store
        .place_order(order(&f, "EG-AAAA0001", 2))
        .await
        .unwrap();
    assert_eq!(queued(db, EventType::OrderCreated).await, 1);
    let scope = IdempotencyClaim::new(
        IdempotencyScope::new(f.account.id, "idem".into()),
        IdempotencyToken::random(),
    );
    let begin = |now: DateTime<Utc>| {
        let scope = scope.clone();
        async move {
            store
                .begin_idempotent(
                    &scope,
                    "fp",
                    now,
                    now - Duration::hours(24),
                    now - Duration::seconds(60),
                )
                .await
                .unwrap()
        }
    };
    assert_eq!(begin(at(20)).await, IdempotencyBegin::Started);
    let before = snapshot(store, db, &f).await;
    assert_eq!(before, vec![8, 1, 1, 1, 1, 1, 0, 1, 0, 0]);

    db.exec(db.fail_meter_sql()).await;
    let mut doomed = order(&f, "EG-AAAA0002", 3);
    doomed.idempotency = Some(scope.clone());
    let failed = store.place_order(doomed.clone()).await;
    assert!(
        matches!(failed, Err(PlaceOrderError::Store(StoreError::Backend(_)))),
        "{failed:?}"
    );
    db.exec(db.disarm_sql()).await;
    assert_eq!(snapshot(store, db, &f).await, before);
    assert_eq!(
        queued(db, EventType::OrderCreated).await,
        1,
        "no delivery left behind"
    );
    // The record was not linked: a stale takeover starts afresh instead of recovering.
    assert_eq!(begin(at(200)).await, IdempotencyBegin::Started);
    doomed.idempotency = Some(scope.clone());
    let placed = store.place_order(doomed).await.unwrap();
    assert_eq!(placed.number, "EG-AAAA0002");
    assert_eq!(
        snapshot(store, db, &f).await,
        vec![5, 2, 2, 2, 2, 2, 1, 2, 0, 0]
    );
    assert_eq!(queued(db, EventType::OrderCreated).await, 2);
}

/// A cancellation failing at its event's insert (after the order's row is written with its
/// status and timeline entry) releases no stock, bills nothing, queues no event and leaves the
/// order as it was.
pub async fn cancel_failing_at_its_event_changes_nothing(store: &dyn Store, db: &dyn Database) {
    let f = fixture(store).await;
    subscribe(store, &f).await;
    let placed = store
        .place_order(order(&f, "EG-AAAA0001", 4))
        .await
        .unwrap();
    let before = snapshot(store, db, &f).await;
    assert_eq!(before, vec![6, 1, 1, 1, 1, 1, 0, 1, 0, 0]);
    let cancel = StatusChange::builder()
        .account_id(Some(f.account.id))
        .order_id(placed.id)
        .to(OrderStatus::RejectedByMarketer)
        .only_from(vec![OrderStatus::Pending])
        .maybe_reason(None)
        .outcomes(Vec::new())
        .read_at(None)
        .at(at(30))
        .bill_month(Some(month(MONTH)))
        .events(Default::default())
        .build();
    db.exec(db.fail_event_sql()).await;
    let failed = store.change_order_status(cancel.clone()).await;
    assert!(
        matches!(
            failed,
            Err(StatusChangeError::Store(StoreError::Backend(_)))
        ),
        "{failed:?}"
    );
    db.exec(db.disarm_sql()).await;
    assert_eq!(snapshot(store, db, &f).await, before);
    assert_eq!(store.order(None, placed.id).await.unwrap().unwrap(), placed);
    assert_eq!(queued(db, EventType::OrderStatusChanged).await, 0);
    let cancelled = store.change_order_status(cancel).await.unwrap();
    assert_eq!(cancelled.status, OrderStatus::RejectedByMarketer);
    assert_eq!(available(store, &f).await, 10);
    // The counters moved with the status: pending 0, cancelled 1, in step with COUNT(*).
    assert_eq!(snapshot(store, db, &f).await[7..], [0, 1, 0]);
    assert_eq!(queued(db, EventType::OrderStatusChanged).await, 1);
}

/// With the pool closed, every operation fails with `StoreError::Backend` (no panic).
pub async fn closed_pool_surfaces_as_backend_errors(store: &dyn Store, db: &dyn Database) {
    let f = fixture(store).await;
    db.close().await;
    assert!(matches!(
        store.place_order(order(&f, "EG-AAAA0001", 1)).await,
        Err(PlaceOrderError::Store(StoreError::Backend(_)))
    ));
    assert!(matches!(
        store.order(None, OrderId::new(1)).await,
        Err(StoreError::Backend(_))
    ));
    assert!(matches!(
        store
            .hit_rate_limit(KeyId::new(1), RateWindow::from_minute(1), 10)
            .await,
        Err(StoreError::Backend(_))
    ));
    assert!(matches!(
        store.product(f.product.id).await,
        Err(StoreError::Backend(_))
    ));
    assert!(matches!(
        store.purge_idempotency(at(0)).await,
        Err(StoreError::Backend(_))
    ));
}

/// Amounts with more than two decimals are refused, never rounded silently.
pub async fn sub_piastre_amounts_are_refused(store: &dyn Store, db: &dyn Database) {
    let f = fixture(store).await;
    let refused = store
        .update_variant(
            f.variant.id,
            VariantPatch::default().set_price(d("1.005")),
            at(5),
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    assert_eq!(
        store.product(f.product.id).await.unwrap().unwrap().variants[0]
            .price
            .to_string(),
        "125.40"
    );
    let mut bad = order(&f, "EG-AAAA0001", 1);
    bad.totals.profit = d("0.001");
    assert!(matches!(
        store.place_order(bad).await,
        Err(PlaceOrderError::Store(StoreError::Invalid(_)))
    ));
    assert_eq!(db.count("SELECT COUNT(*) FROM orders").await, 0);
    assert_eq!(available(store, &f).await, 10);
}

/// PostgreSQL: a one-variant order is written by the one statement (`checkout`), not by the
/// transaction that takes over after a refusal: its id is the first of a block the store drew
/// ahead (64 ids), where the transaction would take the identity's next value, past the block;
/// the next order takes the next id of the block, drawing nothing. A refusal (a taken number)
/// still writes nothing, and the order after it is placed by the statement again.
pub async fn a_one_variant_order_is_written_by_one_statement(store: &dyn Store, db: &dyn Database) {
    const LAST_ORDER_ID: &str =
        "SELECT pg_sequence_last_value(pg_get_serial_sequence('orders', 'id')::regclass)";
    let f = fixture(store).await;
    let first = store
        .place_order(order(&f, "EG-ONE00001", 1))
        .await
        .unwrap();
    let drawn = db.count(LAST_ORDER_ID).await;
    assert!(
        drawn - first.id.get() >= 63,
        "order {} of a block drawn to {drawn}",
        first.id.get()
    );
    let taken = store.place_order(order(&f, "EG-ONE00001", 1)).await;
    assert!(
        matches!(
            taken,
            Err(PlaceOrderError::NumberTaken)
                | Err(PlaceOrderError::DuplicateExternalReference { .. })
        ),
        "{taken:?}"
    );
    let second = store
        .place_order(order(&f, "EG-ONE00002", 1))
        .await
        .unwrap();
    assert!(
        second.id.get() <= drawn,
        "from the block: {} <= {drawn}",
        second.id.get()
    );
    assert_eq!(
        db.count("SELECT COUNT(*) FROM orders").await,
        2,
        "the refused order wrote nothing"
    );
}

/// PostgreSQL: a store whose role may write the tables but not draw from their identities'
/// sequences (`limited`: no `USAGE` on them) cannot draw an order's ids ahead for the one
/// statement; it places the order by the transaction instead (the identity's own next value,
/// which an insert may take), with the same answer and stock, instead of failing.
pub async fn an_order_is_placed_when_ids_cannot_be_drawn(
    admin: &dyn Store,
    limited: &dyn Store,
    db: &dyn Database,
) {
    const LAST_ORDER_ID: &str = "SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('orders', 'id')::regclass), 0)";
    let f = fixture(admin).await;
    let placed = limited
        .place_order(order(&f, "EG-LIM00001", 2))
        .await
        .expect("placed by the transaction");
    assert_eq!(
        placed.id.get(),
        db.count(LAST_ORDER_ID).await,
        "the identity's own next value: no block was drawn"
    );
    assert_eq!(placed.lines[0].quantity, 2);
    assert_eq!(available(admin, &f).await, 8);
    assert_eq!(db.count("SELECT COUNT(*) FROM orders").await, 1);
    let again = limited.place_order(order(&f, "EG-LIM00001", 1)).await;
    assert!(
        matches!(
            again,
            Err(PlaceOrderError::NumberTaken)
                | Err(PlaceOrderError::DuplicateExternalReference { .. })
        ),
        "{again:?}"
    );
    assert_eq!(available(admin, &f).await, 8);
}
