//! Reading orders: lists, filters, pagination, the wallet sums.

use rust_decimal::Decimal;

use crate::domain::earnings::{OrderEarnings, WalletTotals};
use crate::model::*;
use crate::store::*;

use super::fixtures::*;

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
    let empty = all_orders(store, f.account.id.absent()).await;
    assert_eq!((empty.items.len(), empty.total), (0, 0));
}

/// [`OrderStore::order_versions`]: the same page and total as `orders`, each order as its
/// version; a write of an order (a tracking URL, a move, line outcomes, each at the same
/// instant as the write before) gives it a new version, which the next listing shows.
pub async fn order_versions_list_the_page_of_orders(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let mut placed = Vec::new();
    for (n, created) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
        let lines = vec![line(&f, &f.variant, 1, n % 2 == 0)];
        placed.push(
            place(
                store,
                new_order(&f, f.account.id, &number(n), lines, created),
            )
            .await,
        );
    }
    let lines = vec![line(&f, &f.variant, 1, false)];
    place(store, new_order(&f, f.other.id, &number(9), lines, 35)).await;
    let read = |filter: OrderFilter, p: PageRequest| async move {
        let listed = store
            .order_versions(f.account.id, &filter, p)
            .await
            .expect("order versions");
        let whole = store
            .orders(f.account.id, &filter, p)
            .await
            .expect("orders");
        (listed, whole)
    };
    for (filter, p, expected) in [
        (OrderFilter::default(), page(1, 25), vec![3, 2, 1, 0]),
        (OrderFilter::default(), page(2, 2), vec![1, 0]),
        (OrderFilter::default(), page(9, 2), vec![]),
        (
            OrderFilter {
                family: Some(Family::Pending),
                ..OrderFilter::default()
            },
            page(1, 3),
            vec![3, 2, 1],
        ),
        (
            OrderFilter {
                status: Some(OrderStatus::Pending),
                ..OrderFilter::default()
            },
            page(1, 25),
            vec![3, 2, 1, 0],
        ),
    ] {
        let (listed, whole) = read(filter.clone(), p).await;
        let versions: Vec<OrderVersion> = whole.items.iter().map(OrderVersion::of).collect();
        let placed_versions: Vec<OrderVersion> = expected
            .iter()
            .map(|&i| OrderVersion::of(&placed[i]))
            .collect();
        assert_eq!(
            listed.items, versions,
            "{filter:?} {p:?}: the page of `orders`"
        );
        assert_eq!(
            listed.items, placed_versions,
            "{filter:?} {p:?}: newest first"
        );
        assert_eq!(
            listed.total, whole.total,
            "{filter:?} {p:?}: the same total"
        );
        assert_eq!(
            listed.total, 4,
            "{filter:?} {p:?}: the account's four orders"
        );
    }
    let other = store
        .order_versions(f.other.id, &OrderFilter::default(), page(1, 25))
        .await
        .expect("the other account's versions");
    assert_eq!(
        (other.items.len(), other.total),
        (1, 1),
        "only the account's own"
    );

    // Every kind of write gives the order a new version, even at the same instant.
    let third = placed[2].id;
    let mut before = OrderVersion::of(&placed[2]);
    let writes: [&str; 3] = ["tracking", "move", "outcomes"];
    for write in writes {
        let after = match write {
            "tracking" => store
                .set_tracking_url(third, Some("https://track.example/1".into()), at(30))
                .await
                .expect("tracking"),
            "move" => store
                .change_order_status(change(third, OrderStatus::Confirmed, 30))
                .await
                .expect("move"),
            _ => {
                let line = placed[2].lines[0].id;
                let outcome = LineOutcome {
                    damaged_quantity: 1,
                    ..LineOutcome::default()
                };
                store
                    .set_line_outcomes(third, vec![(line, outcome)], None, at(30))
                    .await
                    .expect("outcomes")
            }
        };
        assert!(
            after.updated_at > before.updated_at,
            "{write}: a write moves the version forward"
        );
        let (listed, whole) = read(OrderFilter::default(), page(1, 25)).await;
        assert_eq!(
            listed.items[1],
            OrderVersion::of(&after),
            "{write}: listed anew"
        );
        assert_eq!(whole.items[1], after);
        assert_eq!(
            listed.items[3],
            OrderVersion::of(&placed[0]),
            "others unchanged"
        );
        before = OrderVersion::of(&after);
    }
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
        .set_line_outcomes(
            archived.id,
            vec![(archived.lines[0].id, outcome)],
            None,
            at(25),
        )
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
        store.wallet_totals(account.absent(), at(0)).await.unwrap(),
        WalletTotals::default()
    );
}

pub(super) async fn all_orders_of(store: &dyn Store, account: AccountId) -> Vec<Order> {
    store
        .orders(account, &OrderFilter::default(), page(1, 100))
        .await
        .unwrap()
        .items
}
