//! Placing orders: stock, references, numbers, billing, the idempotency link.

use chrono::Duration;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

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
    assert_eq!(store.order(None, placed.id.absent()).await.unwrap(), None);

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

    // An order of one variant stamps its product as well (on PostgreSQL the stamp rides in
    // the stock's statement).
    let before = store
        .product(f.product.id)
        .await
        .unwrap()
        .unwrap()
        .updated_at;
    let one = new_order(
        &f,
        f.account.id,
        "EG-ONEVAR01",
        vec![line(&f, &f.variant_b, 1, false)],
        5_000,
    );
    let one = place(store, one).await;
    let after = store
        .product(f.product.id)
        .await
        .unwrap()
        .unwrap()
        .updated_at;
    assert!(
        after > before && after >= one.created_at,
        "an order of one variant changes its product: {before} -> {after}"
    );
    assert_eq!(available(store, f.product.id, f.variant_b.id).await, 3);
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
    let s = claim(f.account.id, "idem-1");
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
    april.bill_month = Some(month("2026-04"));
    place(store, april).await;
    assert_eq!(meter_ops(store, f.account.id).await, 1);
    assert_eq!(
        store.meter(f.account.id, &month("2026-04")).await.unwrap(),
        MeterReading {
            pulled_products: 0,
            order_operations: 1
        }
    );
    assert_eq!(meter_ops(store, f.other.id).await, 0);

    let mut cancel = change(billed.id, OrderStatus::RejectedByMarketer, 20);
    cancel.account_id = Some(f.account.id);
    cancel.bill_month = Some(month(MONTH));
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
    let s = claim(f.account.id, "key-1");
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
        IdempotencyBegin::Recovered(Created::Order(placed.id))
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
        IdempotencyBegin::Recovered(Created::Order(placed.id))
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
    let other_scope = claim(f.other.id, "key-1");
    assert_eq!(
        begin(store, &other_scope, "fp", at(500)).await,
        IdempotencyBegin::Started
    );
}

/// The version check of `place_order` (`NewOrder::priced_from`): an order priced from a
/// record whose variant's price or product's revision has changed is refused as `Stale` and
/// writes nothing, whatever its stock, for an order of one variant and of two; stock moves
/// (orders, adjustments) leave the revision alone, so orders priced from one record do not
/// refuse each other; every catalogue edit of the product moves it.
pub async fn an_order_priced_from_a_changed_product_is_stale_and_writes_nothing(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let read = |id| async move { store.product(id).await.expect("read").expect("product") };
    let priced = |product: &Product, variants: &[&Variant]| -> Vec<PricedFrom> {
        variants
            .iter()
            .map(|v| {
                let stored = product
                    .variants
                    .iter()
                    .find(|s| s.id == v.id)
                    .expect("variant");
                PricedFrom::of(product, stored)
            })
            .collect()
    };
    let order = |n: u32, lines: Vec<NewOrderLine>, from: Vec<PricedFrom>| {
        let mut order = new_order(&f, f.account.id, &number(n), lines, 10 + i64::from(n));
        order.priced_from = from;
        order
    };
    let first = read(f.product.id).await;
    // Orders priced from one record all go through: their stock writes move `updated_at`, not
    // the revision; so does an operator's stock adjustment.
    let one = priced(&first, &[&f.variant]);
    let both = priced(&first, &[&f.variant, &f.variant_b]);
    place(
        store,
        order(1, vec![line(&f, &f.variant, 1, false)], one.clone()),
    )
    .await;
    let two_lines = vec![
        line(&f, &f.variant, 1, false),
        line(&f, &f.variant_b, 1, true),
    ];
    place(store, order(2, two_lines.clone(), both.clone())).await;
    store
        .adjust_stock(
            NewStockAdjustment::builder()
                .variant_id(f.variant.id)
                .delta(1)
                .reason(StockReason::Received)
                .build(),
            at(13),
        )
        .await
        .expect("adjust");
    let after_stock = read(f.product.id).await;
    assert_eq!(after_stock.revision, first.revision);
    assert!(after_stock.updated_at > first.updated_at);
    place(
        store,
        order(3, vec![line(&f, &f.variant, 1, false)], one.clone()),
    )
    .await;

    // A price change: the orders priced before it are refused, writing nothing.
    let stock = (
        available(store, f.product.id, f.variant.id).await,
        available(store, f.product.id, f.variant_b.id).await,
    );
    let orders = all_orders(store, f.account.id).await.total;
    let patch = VariantPatch {
        price: Some(d("130.00")),
        ..VariantPatch::default()
    };
    store
        .update_variant(f.variant.id, patch, at(20))
        .await
        .expect("reprice");
    let repriced = read(f.product.id).await;
    assert!(repriced.revision > first.revision);
    let stale = |result: Result<Order, PlaceOrderError>, variant: VariantId| match result {
        Err(PlaceOrderError::Stale { variant_id }) => assert_eq!(variant_id, variant),
        other => panic!("expected Stale on {variant}, got {other:?}"),
    };
    stale(
        store
            .place_order(order(4, vec![line(&f, &f.variant, 1, false)], one.clone()))
            .await,
        f.variant.id,
    );
    // Stale whatever the stock: the check comes before the stock's.
    stale(
        store
            .place_order(order(4, vec![line(&f, &f.variant, 99, false)], one.clone()))
            .await,
        f.variant.id,
    );
    // Two variants, the other one's price unchanged: refused through the product's revision.
    let only_b = priced(&first, &[&f.variant_b]);
    stale(
        store
            .place_order(order(4, vec![line(&f, &f.variant_b, 1, false)], only_b))
            .await,
        f.variant_b.id,
    );
    assert!(
        store
            .place_order(order(4, two_lines.clone(), both))
            .await
            .is_err(),
        "two variants priced from the old record"
    );
    assert_eq!(available(store, f.product.id, f.variant.id).await, stock.0);
    assert_eq!(
        available(store, f.product.id, f.variant_b.id).await,
        stock.1
    );
    assert_eq!(all_orders(store, f.account.id).await.total, orders);
    // Priced from the record as it is now: placed, with the same number.
    let now_both = priced(&repriced, &[&f.variant, &f.variant_b]);
    place(store, order(4, two_lines, now_both)).await;

    // Every catalogue edit of the product moves its revision.
    let mut last = read(f.product.id).await.revision;
    let mut moved = |revision: i64, edit: &str| {
        assert!(revision > last, "{edit} moves the revision");
        last = revision;
    };
    let product_patch = ProductPatch {
        title: Some("Kettle 2".into()),
        ..ProductPatch::default()
    };
    let p = store
        .update_product(f.product.id, product_patch, at(30))
        .await
        .expect("edit product");
    moved(p.revision, "a product edit");
    let w = warranty(store, f.product.id, "ضمان سنتين", 31).await;
    moved(read(f.product.id).await.revision, "a new warranty");
    let warranty_patch = WarrantyPatch {
        name: Some("ضمان ٢".into()),
        ..WarrantyPatch::default()
    };
    store
        .update_warranty(w.id, warranty_patch, at(32))
        .await
        .expect("edit warranty");
    moved(read(f.product.id).await.revision, "a warranty edit");
    store
        .set_warranty_active(w.id, false, at(33))
        .await
        .expect("stop warranty");
    moved(read(f.product.id).await.revision, "a warranty stopped");
    variant(store, f.product.id, "أحمر", "10.00", 1, 34).await;
    moved(read(f.product.id).await.revision, "a new variant");
    let p = store
        .set_product_active(f.product.id, false, at(35))
        .await
        .expect("stop");
    moved(p.revision, "the product stopped");
}
