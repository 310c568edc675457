//! Status moves, stock release, line outcomes and tracking.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

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
            .change_order_status(change(order.id.absent(), OrderStatus::Confirmed, 20))
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

/// A move with outcomes records both in one operation: when the move is refused (the
/// lifecycle, or an outcome naming another order's line), neither the outcomes nor the status
/// change; when it is made, the order read back has both, and its earnings count the
/// outcomes.
pub async fn a_move_records_its_outcomes_or_nothing(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let (order, other) = two_orders(store, &f).await;
    let outcome = LineOutcome {
        delivered_quantity: Some(2),
        returned_quantity: Some(1),
        ..LineOutcome::default()
    };
    let with_outcomes = |order_id, to, when, outcomes| {
        let mut move_ = change(order_id, to, when);
        move_.outcomes = outcomes;
        move_
    };

    // Pending cannot become partially delivered: refused, the outcome not written.
    let refused = store
        .change_order_status(with_outcomes(
            order.id,
            OrderStatus::PartiallyDelivered,
            20,
            vec![(order.lines[0].id, outcome.clone())],
        ))
        .await;
    assert!(
        matches!(refused, Err(StatusChangeError::NotAllowed { .. })),
        "{refused:?}"
    );
    assert_eq!(
        store.order(None, order.id).await.unwrap(),
        Some(order.clone())
    );

    for (to, when) in [
        (OrderStatus::Confirmed, 30),
        (OrderStatus::Preparing, 31),
        (OrderStatus::Shipped, 32),
    ] {
        store
            .change_order_status(change(order.id, to, when))
            .await
            .unwrap();
    }
    let shipped = store.order(None, order.id).await.unwrap().unwrap();

    // A line of another order: NotFound, neither the outcomes nor the status written.
    let refused = store
        .change_order_status(with_outcomes(
            order.id,
            OrderStatus::PartiallyDelivered,
            40,
            vec![
                (order.lines[0].id, outcome.clone()),
                (other.lines[0].id, outcome.clone()),
            ],
        ))
        .await;
    assert!(
        matches!(refused, Err(StatusChangeError::NotFound)),
        "{refused:?}"
    );
    assert_eq!(store.order(None, order.id).await.unwrap(), Some(shipped));

    let moved = store
        .change_order_status(with_outcomes(
            order.id,
            OrderStatus::PartiallyDelivered,
            50,
            vec![(order.lines[0].id, outcome.clone())],
        ))
        .await
        .unwrap();
    assert_eq!(moved.status, OrderStatus::PartiallyDelivered);
    assert_eq!(moved.lines[0].outcome, outcome);
    assert_eq!(moved.lines[1].outcome, LineOutcome::default());
    assert_eq!(
        store.order(None, order.id).await.unwrap(),
        Some(moved.clone())
    );
    // The wallet counts the order as its outcomes say: the kept sums equal a recomputation
    // from both orders as read back.
    let other = store.order(None, other.id).await.unwrap().unwrap();
    let kept = store.wallet_totals(f.account.id, at(0)).await.unwrap();
    let recomputed = crate::domain::earnings::WalletTotals::of_orders([&moved, &other], at(0));
    assert_eq!(kept, recomputed);
    assert!(
        recomputed.totals.settled > rust_decimal::Decimal::ZERO,
        "{recomputed:?}"
    );
}

/// `set_line_outcomes` and `set_tracking_url` persist and bump `updated_at`; an unknown line
/// changes nothing.
pub async fn line_outcomes_and_tracking_url_are_recorded(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let (order, other) = two_orders(store, &f).await;
    let outcome = LineOutcome {
        delivered_quantity: Some(1),
        returned_quantity: Some(2),
        damaged_quantity: 1,
        lost_quantity: 0,
        destroyed_quantity: 1,
    };
    let updated = store
        .set_line_outcomes(
            order.id,
            vec![(order.lines[0].id, outcome.clone())],
            None,
            at(50),
        )
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
            None,
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
            .set_line_outcomes(order.id.absent(), vec![], None, at(60))
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
            .set_tracking_url(order.id.absent(), None, at(80))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// Two app instances whose clocks disagree write the same order and product: each write's
/// `updated_at` is the later of its clock and the stored stamp plus one microsecond, so it never
/// decreases, and a sync by `updated_since` = the last stamp seen finds every change.
pub async fn updated_at_never_decreases_when_clocks_disagree(store: &dyn Store) {
    let tick = chrono::TimeDelta::microseconds(1);
    let f = fixture(store, 10, 5).await;
    // The instance ahead placed the order at 100 s; the one behind writes at 40 s and 30 s.
    let order = place(
        store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![line(&f, &f.variant, 2, false)],
            100,
        ),
    )
    .await;
    let seen = order.updated_at;
    let confirmed = store
        .change_order_status(change(order.id, OrderStatus::Confirmed, 40))
        .await
        .unwrap();
    assert_eq!(confirmed.updated_at, seen + tick);
    let synced = store
        .orders(
            f.account.id,
            &OrderFilter {
                updated_since: Some(confirmed.updated_at),
                ..OrderFilter::default()
            },
            page(1, 10),
        )
        .await
        .unwrap();
    assert_eq!(order_ids(&synced), vec![order.id]);
    let outcome = LineOutcome {
        delivered_quantity: Some(2),
        ..LineOutcome::default()
    };
    let outcomes = store
        .set_line_outcomes(order.id, vec![(order.lines[0].id, outcome)], None, at(30))
        .await
        .unwrap();
    assert_eq!(outcomes.updated_at, seen + tick + tick);
    let tracked = store
        .set_tracking_url(order.id, Some("https://track.example.com/1".into()), at(20))
        .await
        .unwrap();
    assert_eq!(tracked.updated_at, seen + tick * 3);
    assert_eq!(
        store
            .order(None, order.id)
            .await
            .unwrap()
            .unwrap()
            .updated_at,
        tracked.updated_at
    );
    // A clock ahead of the stamp wins as it is.
    let ahead = store
        .set_tracking_url(order.id, None, at(500))
        .await
        .unwrap();
    assert_eq!(ahead.updated_at, at(500));

    // The product: stamped by the stock taken at 100 s; a change at 10 s still moves it.
    let product = store.product(f.product.id).await.unwrap().unwrap();
    assert!(product.updated_at >= at(100), "{:?}", product.updated_at);
    let stopped = store
        .set_product_active(f.product.id, false, at(10))
        .await
        .unwrap();
    assert_eq!(stopped.updated_at, product.updated_at + tick);
    let patched = store
        .update_variant(
            f.variant.id,
            VariantPatch::default().set_label("مقاس 7"),
            at(5),
        )
        .await
        .unwrap();
    assert_eq!(patched.label, "مقاس 7");
    let product = store.product(f.product.id).await.unwrap().unwrap();
    assert_eq!(product.updated_at, stopped.updated_at + tick);
}

/// Two pending orders of `f.account`: one of two lines (3 pieces of `variant`, 1 of
/// `variant_b`), one of one line.
async fn two_orders(store: &dyn Store, f: &Fixture) -> (Order, Order) {
    let order = place(
        store,
        new_order(
            f,
            f.account.id,
            &number(1),
            vec![
                line(f, &f.variant, 3, false),
                line(f, &f.variant_b, 1, false),
            ],
            10,
        ),
    )
    .await;
    let other = place(
        store,
        new_order(
            f,
            f.account.id,
            &number(2),
            vec![line(f, &f.variant, 1, false)],
            10,
        ),
    )
    .await;
    (order, other)
}
