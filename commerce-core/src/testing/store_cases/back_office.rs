//! The back office's queries across accounts: orders (with the counts per status) and
//! accounts (search, filters, the approval queue).

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// The ids of a listing's page.
pub(super) fn listed<T, I>(listing: &Listing<T>, id: impl Fn(&T) -> I) -> Vec<I> {
    ids(&listing.items, id)
}

pub(super) fn exact(value: u64) -> Count {
    Count { value, exact: true }
}

pub(super) fn at_least(value: u64) -> Count {
    Count {
        value,
        exact: false,
    }
}

async fn orders_of(store: &dyn Store, query: &OrderQuery, p: PageRequest) -> Listing<Order> {
    store.find_orders(query, p).await.expect("find orders")
}

/// Orders of every account: each filter alone and with the account's, both orders, pages,
/// counts stopped at the limit, the counts per status; another account's orders only when
/// the query does not name an account.
pub async fn orders_across_accounts_filter_sort_page_and_count(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let (a, b) = (f.account.id, f.other.id);
    let order = |account, n, created| {
        let lines = vec![line(&f, &f.variant, 1, false)];
        new_order(&f, account, &number(n), lines, created)
    };
    let mut first = order(a, 1, 10);
    first.external_reference = Some("R-1".into());
    let a1 = place(store, first).await;
    let a2 = place(store, order(a, 2, 20)).await;
    let mut same_reference = order(b, 3, 15);
    same_reference.external_reference = Some("R-1".into());
    let b1 = place(store, same_reference).await;
    let mut legacy = order(a, 4, 30);
    legacy.legacy_number = Some("OLD77".into());
    let a3 = place(store, legacy).await;
    let b2 = place(store, order(b, 5, 40)).await;
    move_to(store, a2.id, &[OrderStatus::Confirmed], 50).await;
    move_to(store, b1.id, &[OrderStatus::Confirmed], 60).await;
    move_to(store, a3.id, &[OrderStatus::Cancelled], 70).await;
    let all = page(1, 100);
    let find = async |query: OrderQuery| listed(&orders_of(store, &query, all).await, |o| o.id);
    let q = OrderQuery::default;

    // Every account's, newest first; each order whole.
    let everything = orders_of(store, &q(), all).await;
    assert_eq!(
        listed(&everything, |o| o.id),
        [b2.id, a3.id, a2.id, b1.id, a1.id]
    );
    assert_eq!(everything.total, exact(5));
    let moved = store.order(None, a2.id).await.unwrap().unwrap();
    assert_eq!(everything.items[2], moved);
    assert_eq!(everything.items[2].lines.len(), 1);
    let oldest = [a1.id, b1.id, a2.id, a3.id, b2.id];
    assert_eq!(find(q().sort(SortOrder::OldestFirst)).await, oldest);

    // One account's: never another's.
    assert_eq!(find(q().account(a)).await, [a3.id, a2.id, a1.id]);
    assert_eq!(find(q().account(b)).await, [b2.id, b1.id]);
    assert!(find(q().account(a.absent())).await.is_empty());

    // Status and family, alone and with the account.
    let confirmed = q().status(OrderStatus::Confirmed);
    assert_eq!(find(confirmed.clone()).await, [a2.id, b1.id]);
    assert_eq!(find(confirmed.account(b)).await, [b1.id]);
    let pending = q()
        .status(OrderStatus::Pending)
        .sort(SortOrder::OldestFirst);
    assert_eq!(find(pending.clone()).await, [a1.id, b2.id]);
    assert_eq!(find(pending.account(b)).await, [b2.id]);
    assert_eq!(find(q().family(Family::Confirmed)).await, [a2.id, b1.id]);
    assert_eq!(find(q().family(Family::Cancelled)).await, [a3.id]);
    assert!(find(q().status(OrderStatus::Shipped)).await.is_empty());

    // Created and updated ranges: from included, until excluded.
    let created = TimeRange::between(at(15), at(30));
    assert_eq!(find(q().created(created)).await, [a2.id, b1.id]);
    assert_eq!(find(q().created(created).account(a)).await, [a2.id]);
    let changed = q().updated(TimeRange::since(at(50)));
    assert_eq!(find(changed).await, [a3.id, a2.id, b1.id]);
    let unchanged = q().updated(TimeRange::before(at(50)));
    assert_eq!(find(unchanged).await, [b2.id, a1.id]);

    // One order by its number as typed, or its legacy number; by external reference, one
    // per account.
    assert_eq!(find(q().number("eg-t000 0004")).await, [a3.id]);
    assert_eq!(find(q().number("OLD77")).await, [a3.id]);
    assert!(find(q().number("OLD77").account(b)).await.is_empty());
    assert_eq!(find(q().external_reference("R-1")).await, [b1.id, a1.id]);
    let mine = q().external_reference("R-1").account(a);
    assert_eq!(find(mine).await, [a1.id]);

    // Pages keep the order and the total; the count stops at the limit.
    let mut pages = Vec::new();
    for n in 1..=4 {
        pages.push(orders_of(store, &q(), page(n, 2)).await);
    }
    let paged: Vec<Vec<OrderId>> = pages.iter().map(|l| listed(l, |o| o.id)).collect();
    assert_eq!(
        paged,
        [
            vec![b2.id, a3.id],
            vec![a2.id, b1.id],
            vec![a1.id],
            Vec::new()
        ]
    );
    assert!(pages.iter().all(|l| l.total == exact(5)));
    let limited = orders_of(store, &q().count_limit(3), page(2, 2)).await;
    assert_eq!(
        (listed(&limited, |o| o.id), limited.total),
        (vec![a2.id, b1.id], at_least(3))
    );
    let just = orders_of(store, &q().count_limit(5), page(1, 1)).await;
    assert_eq!(just.total, exact(5));
    assert_eq!(just.total.to_string(), "5");
    assert_eq!(limited.total.to_string(), "3+");

    // The counts per status: every status, each stopped at the limit.
    let counts = |query: OrderQuery| async move {
        let found = store
            .order_status_counts(&query)
            .await
            .expect("status counts");
        assert_eq!(
            found.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            OrderStatus::ALL,
            "every status, in order"
        );
        found
            .into_iter()
            .filter(|(_, c)| *c != exact(0))
            .collect::<Vec<_>>()
    };
    use OrderStatus::{Cancelled, Confirmed, Pending};
    assert_eq!(
        counts(q()).await,
        [
            (Pending, exact(2)),
            (Confirmed, exact(2)),
            (Cancelled, exact(1))
        ]
    );
    assert_eq!(
        counts(q().account(a)).await,
        [
            (Pending, exact(1)),
            (Confirmed, exact(1)),
            (Cancelled, exact(1))
        ]
    );
    assert_eq!(
        counts(q().count_limit(1)).await,
        [
            (Pending, at_least(1)),
            (Confirmed, at_least(1)),
            (Cancelled, exact(1))
        ]
    );
    assert_eq!(
        counts(q().family(Family::Confirmed).account(b)).await,
        [(Confirmed, exact(1))]
    );
    assert_eq!(
        counts(q().created(TimeRange::since(at(30)))).await,
        [(Pending, exact(1)), (Cancelled, exact(1))]
    );
    assert!(counts(q().status(OrderStatus::Shipped)).await.is_empty());
}

/// Accounts: a case-insensitive substring of the name, e-mail, phone or store name; side,
/// state and API status; newest, oldest or by the API status's date (the approval queue,
/// where asking again keeps an account's place); pages and the count's limit.
pub async fn accounts_are_searched_filtered_and_queued(store: &dyn Store) {
    let new = |name: &str, store_name: Option<&str>, email: &str, phone: &str, side| NewAccount {
        name: name.into(),
        store_name: store_name.map(str::to_owned),
        email: email.into(),
        phone: phone.into(),
        side,
        state: AccountState::Active,
        api_status: ApiStatus::None,
    };
    let insert = async |account: NewAccount, created: i64| {
        store.insert_account(account, at(created)).await.unwrap()
    };
    let approved = NewAccount {
        state: AccountState::Active,
        api_status: ApiStatus::Approved,
        ..new(
            "Ahmed Ali",
            Some("Nile Shop"),
            "ahmed@example.com",
            "01011111111",
            Side::Marketer,
        )
    };
    let x1 = insert(approved, 1).await;
    let supplier = NewAccount {
        state: AccountState::Incomplete,
        api_status: ApiStatus::None,
        ..new(
            "سارة",
            None,
            "SARA@Example.com",
            "01022222222",
            Side::Supplier,
        )
    };
    let x2 = insert(supplier, 2).await;
    let suspended = NewAccount {
        state: AccountState::Suspended,
        api_status: ApiStatus::None,
        ..new(
            "Omar",
            Some("متجر عمر"),
            "omar@mail.test",
            "01233333333",
            Side::Marketer,
        )
    };
    let x3 = insert(suspended, 3).await;
    let x4 = insert(
        new(
            "Mona",
            Some("Bright"),
            "mona@example.com",
            "01144444444",
            Side::Marketer,
        ),
        4,
    )
    .await;
    let ask = AccountPatch::api_status(ApiStatus::Pending);
    for (account, when) in [(x4.id, 10), (x2.id, 20), (x3.id, 30), (x4.id, 40)] {
        store.update_account(account, ask, at(when)).await.unwrap();
    }
    let all = page(1, 100);
    let find = async |query: AccountQuery| {
        let found = store
            .find_accounts(&query, all)
            .await
            .expect("find accounts");
        listed(&found, |a| a.id)
    };
    let q = AccountQuery::default;

    // The approval queue: the oldest request first; asking again kept x4's place.
    let queue = store
        .find_accounts(&AccountQuery::waiting_for_approval(), all)
        .await
        .unwrap();
    assert_eq!(listed(&queue, |a| a.id), [x4.id, x2.id, x3.id]);
    assert_eq!(queue.total, exact(3));
    assert_eq!(queue.items[0].api_status_at, at(10));
    assert_eq!(queue.items[0], store.account(x4.id).await.unwrap().unwrap());
    let approve = AccountPatch::api_status(ApiStatus::Approved);
    store.update_account(x2.id, approve, at(50)).await.unwrap();
    let queue = AccountQuery::waiting_for_approval();
    assert_eq!(find(queue).await, [x4.id, x3.id]);

    // Registration order, both ways.
    assert_eq!(find(q()).await, [x4.id, x3.id, x2.id, x1.id]);
    let oldest = q().sort(AccountSort::OldestFirst);
    assert_eq!(find(oldest).await, [x1.id, x2.id, x3.id, x4.id]);

    // Search: any of the four fields, ASCII letters in either case, Arabic as it is.
    assert_eq!(find(q().search("AHMED")).await, [x1.id]);
    assert_eq!(find(q().search("example.COM")).await, [x4.id, x2.id, x1.id]);
    assert_eq!(find(q().search("nile")).await, [x1.id]);
    assert_eq!(find(q().search("0123")).await, [x3.id]);
    assert_eq!(find(q().search("متجر")).await, [x3.id]);
    assert_eq!(find(q().search("سارة")).await, [x2.id]);
    assert!(find(q().search("nobody")).await.is_empty());
    assert_eq!(find(q().search("")).await, [x4.id, x3.id, x2.id, x1.id]);
    let marketers = q().search("example").side(Side::Marketer);
    assert_eq!(find(marketers).await, [x4.id, x1.id]);

    // Side, state, API status.
    assert_eq!(find(q().side(Side::Supplier)).await, [x2.id]);
    assert_eq!(find(q().state(AccountState::Suspended)).await, [x3.id]);
    assert_eq!(
        find(q().api_status(ApiStatus::Approved)).await,
        [x2.id, x1.id]
    );
    let active_pending = q()
        .state(AccountState::Active)
        .api_status(ApiStatus::Pending);
    assert_eq!(find(active_pending).await, [x4.id]);
    assert!(find(q().side(Side::Shipping)).await.is_empty());

    // Pages and the count's limit.
    let second = store.find_accounts(&q(), page(2, 1)).await.unwrap();
    assert_eq!(
        (listed(&second, |a| a.id), second.total),
        (vec![x3.id], exact(4))
    );
    let limited = store
        .find_accounts(&q().count_limit(2), page(1, 1))
        .await
        .unwrap();
    assert_eq!(
        (listed(&limited, |a| a.id), limited.total),
        (vec![x4.id], at_least(2))
    );
    let beyond = store.find_accounts(&q(), page(5, 1)).await.unwrap();
    assert_eq!((beyond.items.len(), beyond.total), (0, exact(4)));
}
