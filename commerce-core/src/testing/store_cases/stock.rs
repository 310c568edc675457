//! Stock by deltas: adjustments kept with their cause, never below zero, a compare-and-set
//! for counts, returned pieces given back once; and the supplier's snapshot on order lines.

use std::sync::Arc;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// The stock a variant has, and the adjustments kept for it (newest first).
async fn stock_and_history(store: &dyn Store, f: &Fixture) -> (i64, Vec<StockAdjustment>) {
    let history = store
        .stock_adjustments(f.variant.id, page(1, 100))
        .await
        .expect("history");
    assert_eq!(history.total, history.items.len() as u64);
    let stock = available(store, f.product.id, f.variant.id).await;
    (stock, history.items)
}

/// Pieces received while an order was placed after the stock was read: an absolute set of
/// "what I read plus what came in" would undo the order's reservation; a delta keeps it, and
/// a compare-and-set on the quantity read is refused (nothing written).
pub async fn stock_moves_by_deltas_and_keeps_reservations(store: &dyn Store) {
    let f = fixture(store, 10, 0).await;
    let read = available(store, f.product.id, f.variant.id).await;
    let order = vec![line(&f, &f.variant, 3, false)];
    place(store, new_order(&f, f.account.id, &number(1), order, 5)).await;
    let received = NewStockAdjustment::builder()
        .variant_id(f.variant.id)
        .delta(5)
        .reason(StockReason::Received)
        .quote_id(QuoteId::new(77))
        .note("شحنة المورد".to_owned())
        .build();
    let kept = store.adjust_stock(received, at(10)).await.unwrap();
    assert_eq!(kept.available_after, 12, "10 - 3 reserved + 5 received");
    assert_eq!(available(store, f.product.id, f.variant.id).await, 12);

    // The count the operator made before the order: refused, nothing written.
    let count = NewStockAdjustment::cycle_count(f.variant.id, read, read + 5, None);
    let refused = store.adjust_stock(count, at(20)).await;
    assert!(
        matches!(
            refused,
            Err(StockError::Conflict {
                expected: 10,
                available: 12
            })
        ),
        "{refused:?}"
    );
    let (stock, history) = stock_and_history(store, &f).await;
    // Its first stock, the order's reservation and the receipt.
    assert_eq!((stock, history.len()), (12, 3));
    assert_eq!(
        history.iter().map(|a| a.reason).collect::<Vec<_>>(),
        [
            StockReason::Received,
            StockReason::Reservation,
            StockReason::Initial
        ]
    );
    assert_eq!(history.iter().map(|a| a.delta).sum::<i64>(), stock);
    // On the quantity as it stands, the count applies as a delta.
    let count = NewStockAdjustment::cycle_count(f.variant.id, 12, 9, None);
    let counted = store.adjust_stock(count, at(30)).await.unwrap();
    assert_eq!(
        (counted.delta, counted.reason, counted.available_after),
        (-3, StockReason::CycleCount, 9)
    );
    assert_eq!(available(store, f.product.id, f.variant.id).await, 9);
}

/// A delta that would take `available` below zero is refused with the shortfall, and nothing
/// is written: not the stock, not an adjustment, not the product's `updated_at`.
pub async fn adjusting_below_zero_is_refused_and_writes_nothing(store: &dyn Store) {
    let f = fixture(store, 2, 0).await;
    let before = store.product(f.product.id).await.unwrap().unwrap();
    let damaged = NewStockAdjustment::builder()
        .variant_id(f.variant.id)
        .delta(-3)
        .reason(StockReason::Damaged)
        .build();
    let refused = store.adjust_stock(damaged, at(50)).await;
    assert!(
        matches!(
            refused,
            Err(StockError::Insufficient {
                available: 2,
                shortfall: 1
            })
        ),
        "{refused:?}"
    );
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!((stock, history.len()), (2, 1), "its first stock only");
    assert_eq!(store.product(f.product.id).await.unwrap().unwrap(), before);
    let unknown = NewStockAdjustment::builder()
        .variant_id(f.variant.id.absent())
        .delta(1)
        .reason(StockReason::Received)
        .build();
    assert!(matches!(
        store.adjust_stock(unknown, at(50)).await,
        Err(StockError::NotFound)
    ));
    // Down to exactly zero is allowed.
    let all = NewStockAdjustment::builder()
        .variant_id(f.variant.id)
        .delta(-2)
        .reason(StockReason::Shrinkage)
        .build();
    assert_eq!(
        store
            .adjust_stock(all, at(60))
            .await
            .unwrap()
            .available_after,
        0
    );
}

/// Each adjustment is kept with its cause and listed newest first, paged; each marks the
/// product changed (so a sync by `updated_since` sees the new stock).
pub async fn stock_history_is_listed_newest_first_with_its_cause(store: &dyn Store) {
    let f = fixture(store, 5, 0).await;
    let steps = [
        NewStockAdjustment::builder()
            .variant_id(f.variant.id)
            .delta(10)
            .reason(StockReason::Received)
            .quote_id(QuoteId::new(3))
            .build(),
        NewStockAdjustment::builder()
            .variant_id(f.variant.id)
            .delta(-2)
            .reason(StockReason::Damaged)
            .note("كسر".to_owned())
            .build(),
        NewStockAdjustment::builder()
            .variant_id(f.variant.id)
            .delta(1)
            .reason(StockReason::Correction)
            .build(),
    ];
    let mut kept = Vec::new();
    for (i, step) in steps.into_iter().enumerate() {
        kept.push(store.adjust_stock(step, at(100 + i as i64)).await.unwrap());
        let product = store.product(f.product.id).await.unwrap().unwrap();
        assert_eq!(product.updated_at, at(100 + i as i64));
    }
    assert_eq!(ids(&kept, |a| a.available_after), [15, 13, 14]);
    assert!(kept[0].id < kept[1].id && kept[1].id < kept[2].id);
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!(stock, 14);
    let newest_first: Vec<StockAdjustment> = kept.iter().rev().cloned().collect();
    assert_eq!(history[..3], newest_first);
    // The oldest entry is the variant's first stock.
    let first = &history[3];
    assert_eq!(
        (first.delta, first.reason, first.available_after),
        (5, StockReason::Initial, 5)
    );
    assert_eq!(history[2].quote_id, Some(QuoteId::new(3)));
    assert_eq!(history[1].note.as_deref(), Some("كسر"));
    assert_eq!(history[1].at, at(101));
    let second = store
        .stock_adjustments(f.variant.id, page(2, 2))
        .await
        .unwrap();
    assert_eq!(
        (second.total, second.items),
        (4, vec![kept[0].clone(), first.clone()])
    );
    let past = store
        .stock_adjustments(f.variant.id, page(3, 2))
        .await
        .unwrap();
    assert_eq!((past.total, past.items.len()), (4, 0));
    let other = store
        .stock_adjustments(f.variant_b.id, page(1, 10))
        .await
        .unwrap();
    assert_eq!(other.total, 0);
}

/// A product's supplier and a variant's supply price are stored; an order line keeps the
/// ones it was placed with, whatever changes after.
pub async fn order_lines_keep_the_supplier_and_supply_price_they_were_placed_with(
    store: &dyn Store,
) {
    let f = fixture(store, 10, 0).await;
    let supplier = NewAccount::supplier("Nour Factory", "nour@example.com", "01012345678");
    let supplier = store.insert_account(supplier, at(0)).await.unwrap();
    let cat = category(store, "tools", None).await;
    let new = NewProduct::builder()
        .category_id(cat.id)
        .title("Drill".to_owned())
        .slug("drill".to_owned())
        .url("https://shop.example.com/drill".to_owned())
        .supplier_id(supplier.id)
        .build();
    let owned = store.insert_product(new, at(0)).await.unwrap();
    assert_eq!(owned.supplier_id, Some(supplier.id));
    let new = NewVariant::builder()
        .label("18V".to_owned())
        .price(d("900.00"))
        .available(4)
        .supply_price(d("612.35"))
        .build();
    let v = store.insert_variant(owned.id, new, at(0)).await.unwrap();
    let read = store.product(owned.id).await.unwrap().unwrap();
    assert_eq!(read.supplier_id, Some(supplier.id));
    assert_eq!(read.variants[0].supply_price.to_string(), "612.35");

    let mut supplied = line(&f, &v, 2, false);
    (supplied.product_id, supplied.title) = (owned.id, owned.title.clone());
    supplied.supplier_id = Some(supplier.id);
    let plain = line(&f, &f.variant, 1, false);
    let lines = vec![supplied, plain];
    let placed = place(store, new_order(&f, f.account.id, &number(1), lines, 10)).await;
    let patch = VariantPatch::default().set_supply_price(d("700.00"));
    store.update_variant(v.id, patch, at(20)).await.unwrap();
    let order = store.order(None, placed.id).await.unwrap().unwrap();
    assert_eq!(order, placed);
    assert_eq!(order.lines[0].supplier_id, Some(supplier.id));
    assert_eq!(order.lines[0].supply_price.to_string(), "612.35");
    assert_eq!(order.lines[1].supplier_id, None);
    assert_eq!(order.lines[1].supply_price, f.variant.supply_price);
}

/// Returned pieces come back to stock with the move that records them, once: a repeated
/// identical outcome restocks nothing more, a correction moves the difference, and damaged
/// pieces never come back. Each restock is an adjustment of reason `restock` naming the order,
/// after the variant's first stock and the order's reservation.
pub async fn returned_pieces_are_restocked_once(store: &dyn Store) {
    let f = fixture(store, 10, 0).await;
    let lines = vec![line(&f, &f.variant, 4, false)];
    let order = place(store, new_order(&f, f.account.id, &number(1), lines, 10)).await;
    let path = [OrderStatus::Confirmed, OrderStatus::Shipped];
    move_to(store, order.id, &path, 20).await;
    assert_eq!(available(store, f.product.id, f.variant.id).await, 6);
    let line_id = order.lines[0].id;
    let mut partly = change(order.id, OrderStatus::PartiallyDelivered, 30);
    partly.outcomes = vec![(line_id, LineOutcome::partly_delivered(1, 3))];
    store.change_order_status(partly).await.unwrap();
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!(stock, 9);
    assert_eq!(history.len(), 3);
    assert_eq!(
        (history[1].delta, history[1].reason, history[1].order_id),
        (-4, StockReason::Reservation, Some(order.id))
    );
    assert_eq!(
        (history[0].delta, history[0].reason, history[0].order_id),
        (3, StockReason::Restock, Some(order.id))
    );
    assert!(
        store
            .product(f.product.id)
            .await
            .unwrap()
            .unwrap()
            .updated_at
            >= at(30)
    );

    // The same outcome again: nothing more.
    let same = vec![(line_id, LineOutcome::partly_delivered(1, 3))];
    store
        .set_line_outcomes(order.id, same, None, at(40))
        .await
        .unwrap();
    assert_eq!(stock_and_history(store, &f).await.0, 9);
    // A correction: one of the "returned" pieces was delivered after all.
    let fewer = vec![(line_id, LineOutcome::partly_delivered(2, 2))];
    store
        .set_line_outcomes(order.id, fewer, None, at(50))
        .await
        .unwrap();
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!((stock, history.len(), history[0].delta), (8, 4, -1));
    // Damaged pieces are recorded and never come back.
    let damaged = LineOutcome {
        damaged_quantity: 1,
        ..LineOutcome::partly_delivered(1, 2)
    };
    store
        .set_line_outcomes(order.id, vec![(line_id, damaged)], None, at(60))
        .await
        .unwrap();
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!((stock, history.len()), (8, 4));
    assert_eq!(history.iter().map(|a| a.delta).sum::<i64>(), stock);
    // The returned pieces sold out since: a correction that takes one back is refused,
    // writing nothing (never clamped to what is left).
    let empty = NewStockAdjustment::cycle_count(f.variant.id, 8, 0, None);
    store.adjust_stock(empty, at(70)).await.unwrap();
    let order_before = store.order(None, order.id).await.unwrap().unwrap();
    let fewer = vec![(line_id, LineOutcome::partly_delivered(2, 1))];
    let refused = store.set_line_outcomes(order.id, fewer, None, at(80)).await;
    assert!(
        matches!(
            refused,
            Err(StoreError::StockShortfall { variant, available: 0, shortfall: 1 })
                if variant == f.variant.id
        ),
        "{refused:?}"
    );
    assert_eq!(
        store.order(None, order.id).await.unwrap().unwrap(),
        order_before
    );
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!((stock, history.len()), (0, 5));
}

/// A cancelled order gave its pieces back when it was cancelled (one `release` naming it):
/// returned quantities recorded on it restock nothing, before or after (an order restocks only
/// once its pieces left and it is settled).
pub async fn a_cancelled_order_is_not_restocked_twice(store: &dyn Store) {
    let f = fixture(store, 10, 0).await;
    let lines = vec![line(&f, &f.variant, 3, false)];
    let order = place(store, new_order(&f, f.account.id, &number(1), lines, 10)).await;
    let mut cancel = change(order.id, OrderStatus::Cancelled, 20);
    cancel.outcomes = vec![(order.lines[0].id, LineOutcome::partly_delivered(0, 3))];
    store.change_order_status(cancel).await.unwrap();
    assert_eq!(available(store, f.product.id, f.variant.id).await, 10);
    let returned = vec![(order.lines[0].id, LineOutcome::partly_delivered(0, 3))];
    store
        .set_line_outcomes(order.id, returned, None, at(30))
        .await
        .unwrap();
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!((stock, history.len()), (10, 3));
    assert_eq!(
        (history[0].delta, history[0].reason, history[0].order_id),
        (3, StockReason::Release, Some(order.id))
    );

    // Returns recorded on an order that never shipped restock nothing; its cancellation then
    // gives its pieces back once.
    let lines = vec![line(&f, &f.variant, 2, false)];
    let early = place(store, new_order(&f, f.account.id, &number(2), lines, 40)).await;
    let returned = vec![(early.lines[0].id, LineOutcome::partly_delivered(0, 2))];
    store
        .set_line_outcomes(early.id, returned, None, at(50))
        .await
        .unwrap();
    assert_eq!(available(store, f.product.id, f.variant.id).await, 8);
    let cancel = change(early.id, OrderStatus::Cancelled, 60);
    store.change_order_status(cancel).await.unwrap();
    let (stock, history) = stock_and_history(store, &f).await;
    assert_eq!((stock, history.len()), (10, 5));
    assert_eq!(history.iter().map(|a| a.delta).sum::<i64>(), stock);
}

/// Pieces received and taken away while orders are placed on the same variant, all at once:
/// the stock ends exact (initial + received - taken - reserved), never below zero, and every
/// adjustment that succeeded is listed.
pub async fn concurrent_adjustments_and_orders_keep_stock_exact(store: Arc<dyn Store>) {
    const INITIAL: i64 = 10;
    let f = Arc::new(fixture(&*store, INITIAL, 0).await);
    let mut orders = Vec::new();
    let mut adjustments = Vec::new();
    for n in 0..30u32 {
        let (store, f) = (store.clone(), f.clone());
        orders.push(tokio::spawn(async move {
            let lines = vec![line(&f, &f.variant, 1, false)];
            let order = new_order(&f, f.account.id, &number(n), lines, n.into());
            store.place_order(order).await
        }));
    }
    for n in 0..20i64 {
        let (store, f) = (store.clone(), f.clone());
        adjustments.push(tokio::spawn(async move {
            let (delta, reason) = match n % 2 {
                0 => (2, StockReason::Received),
                _ => (-1, StockReason::Damaged),
            };
            let new = NewStockAdjustment::builder()
                .variant_id(f.variant.id)
                .delta(delta)
                .reason(reason)
                .build();
            store.adjust_stock(new, at(n)).await.map(|a| a.delta)
        }));
    }
    let mut placed = 0;
    for task in orders {
        match task.await.expect("task") {
            Ok(_) => placed += 1,
            Err(PlaceOrderError::InsufficientStock { .. }) => {}
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    let mut moved = 0;
    let mut applied = 0;
    for task in adjustments {
        match task.await.expect("task") {
            Ok(delta) => (moved, applied) = (moved + delta, applied + 1),
            Err(StockError::Insufficient { .. }) => {}
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    let (stock, history) = stock_and_history(&*store, &f).await;
    assert!(stock >= 0);
    assert_eq!(
        stock,
        INITIAL + moved - placed,
        "{placed} placed, {moved} moved"
    );
    // The first stock, each applied adjustment and each order's reservation.
    assert_eq!(history.len(), 1 + applied + placed as usize);
    assert_eq!(history.iter().map(|a| a.delta).sum::<i64>(), stock);
    assert!(history.iter().all(|a| a.available_after >= 0));
    assert_eq!(all_orders(&*store, f.account.id).await.total, placed as u64);
}
