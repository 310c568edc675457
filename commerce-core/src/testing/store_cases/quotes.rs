//! Suppliers' quotes and their view of their variants.

use std::sync::Arc;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// A supplier account.
async fn supplier(store: &dyn Store, name: &str) -> Account {
    store
        .insert_account(
            NewAccount::builder()
                .name(name.to_owned())
                .email(format!("{name}@supply.example.com"))
                .phone("01112345678".to_owned())
                .side(Side::Supplier)
                .state(AccountState::Active)
                .api_status(ApiStatus::Approved)
                .build(),
            at(0),
        )
        .await
        .expect("insert supplier")
}

/// The marketers' fixture, and two suppliers: `supplier` owns `product` (variants `v1`,
/// `v2`), `rival` owns `rivals` (variant `w`); the fixture's product has no supplier.
pub(super) struct Supply {
    pub(super) f: Fixture,
    pub(super) supplier: Account,
    pub(super) rival: Account,
    pub(super) product: Product,
    pub(super) v1: Variant,
    pub(super) v2: Variant,
    pub(super) w: Variant,
}

async fn supplied_product(
    store: &dyn Store,
    f: &Fixture,
    title: &str,
    owner: AccountId,
) -> Product {
    let new = NewProduct::builder()
        .category_id(f.product.category_id)
        .title(title.to_owned())
        .slug(title.to_lowercase().replace(' ', "-"))
        .url(format!("https://shop.example.com/s/{}", title.len()))
        .description(format!("وصف {title}"))
        .images(vec!["https://img.example.com/s.jpg".to_owned()])
        .supplier_id(owner)
        .build();
    store
        .insert_product(new, at(0))
        .await
        .expect("insert supplied product")
}

pub(super) async fn supply(store: &dyn Store, stock: i64) -> Supply {
    let f = fixture(store, 100, 0).await;
    let s = supplier(store, "Sawa").await;
    let rival = supplier(store, "Rival").await;
    let p = supplied_product(store, &f, "Supplied Fan", s.id).await;
    let v1 = variant(store, p.id, "صغير", "80.00", stock, 0).await;
    let v2 = variant(store, p.id, "كبير", "120.00", 3, 0).await;
    let r = supplied_product(store, &f, "Rival Lamp", rival.id).await;
    let w = variant(store, r.id, "لمبة", "20.00", 1, 0).await;
    let product = store.product(p.id).await.unwrap().unwrap();
    Supply {
        f,
        supplier: s,
        rival,
        product,
        v1,
        v2,
        w,
    }
}

pub(super) fn offer(
    account: AccountId,
    variant: VariantId,
    price: &str,
    quantity: i64,
) -> NewQuote {
    NewQuote::builder()
        .account_id(account)
        .variant_id(variant)
        .unit_price(d(price))
        .quantity(quantity)
        .build()
}

pub(super) async fn quote(store: &dyn Store, new: NewQuote, now: i64) -> Quote {
    store
        .insert_quote(new, None, at(now))
        .await
        .expect("insert quote")
}

async fn variant_now(store: &dyn Store, product: ProductId, variant: VariantId) -> Variant {
    store
        .product(product)
        .await
        .unwrap()
        .unwrap()
        .variants
        .into_iter()
        .find(|v| v.id == variant)
        .expect("variant")
}

pub(super) fn quote_ids(page: &Page<Quote>) -> Vec<QuoteId> {
    ids(&page.items, |q| q.id)
}

/// A quote is registered only on one of the supplier's own variants, one pending per
/// variant; it round-trips every field, and another supplier never reads it.
pub async fn quotes_are_inserted_one_pending_per_variant(store: &dyn Store) {
    let s = supply(store, 5).await;
    let (me, rival) = (s.supplier.id, s.rival.id);
    for variant in [s.w.id, s.f.variant.id, s.v1.id.absent()] {
        let refused = store
            .insert_quote(offer(me, variant, "10.00", 1), None, at(1))
            .await;
        assert!(
            matches!(refused, Err(InsertQuoteError::NotSuppliers)),
            "{variant}: {refused:?}"
        );
    }
    let q1 = quote(
        store,
        NewQuote {
            note: Some("تسليم خلال أسبوع".into()),
            ..offer(me, s.v1.id, "45.50", 30)
        },
        10,
    )
    .await;
    assert_eq!(q1.account_id, me);
    assert_eq!((q1.variant_id, q1.product_id), (s.v1.id, s.product.id));
    assert_eq!(
        (q1.title.as_str(), q1.label.as_str()),
        ("Supplied Fan", "صغير")
    );
    assert_eq!((q1.unit_price, q1.quantity), (d("45.50"), 30));
    assert_eq!(q1.status, QuoteStatus::Pending);
    assert_eq!(q1.note.as_deref(), Some("تسليم خلال أسبوع"));
    assert_eq!(
        (q1.valid_until, q1.decided_at, q1.decision_note.clone()),
        (None, None, None)
    );
    assert_eq!((q1.created_at, q1.updated_at), (at(10), at(10)));
    let again = store
        .insert_quote(offer(me, s.v1.id, "40.00", 5), None, at(11))
        .await;
    assert!(
        matches!(again, Err(InsertQuoteError::Pending { existing }) if existing == q1.id),
        "{again:?}"
    );
    let q2 = quote(
        store,
        NewQuote {
            valid_until: Some(at(500)),
            ..offer(me, s.v2.id, "99.99", 2)
        },
        12,
    )
    .await;
    assert_eq!(q2.valid_until, Some(at(500)));
    let q3 = quote(store, offer(rival, s.w.id, "19.00", 4), 13).await;
    let all = store
        .quotes(me, &QuoteFilter::default(), page(1, 25), at(20))
        .await
        .unwrap();
    assert_eq!((quote_ids(&all), all.total), (vec![q2.id, q1.id], 2));
    assert_eq!(
        store.quote(Some(me), q1.id, at(20)).await.unwrap(),
        Some(q1.clone())
    );
    assert_eq!(
        store.quote(None, q1.id, at(20)).await.unwrap(),
        Some(q1.clone())
    );
    assert_eq!(store.quote(Some(rival), q1.id, at(20)).await.unwrap(), None);
    assert_eq!(store.quote(Some(me), q3.id, at(20)).await.unwrap(), None);
    assert_eq!(
        store.quote(None, q3.id.absent(), at(20)).await.unwrap(),
        None
    );
}

/// A pending quote past its `valid_until` reads `expired` (updated when it expired) in every
/// read and filter alike, can no longer be decided, and frees its variant for a new quote.
pub async fn a_quote_past_its_end_is_expired_and_frees_its_variant(store: &dyn Store) {
    let s = supply(store, 5).await;
    let me = s.supplier.id;
    let q = quote(
        store,
        NewQuote {
            valid_until: Some(at(100)),
            ..offer(me, s.v1.id, "10.00", 3)
        },
        10,
    )
    .await;
    let read = |now: i64| store.quote(Some(me), q.id, at(now));
    assert_eq!(
        read(99).await.unwrap().unwrap().status,
        QuoteStatus::Pending
    );
    let expired = read(100).await.unwrap().unwrap();
    assert_eq!(expired.status, QuoteStatus::Expired);
    assert_eq!(expired.updated_at, at(100));
    let listed = |status: QuoteStatus, now: i64| {
        let filter = QuoteFilter {
            status: Some(status),
            ..QuoteFilter::default()
        };
        async move {
            let found = store
                .quotes(me, &filter, page(1, 25), at(now))
                .await
                .unwrap();
            quote_ids(&found)
        }
    };
    assert_eq!(listed(QuoteStatus::Pending, 99).await, vec![q.id]);
    assert_eq!(
        listed(QuoteStatus::Expired, 99).await,
        Vec::<QuoteId>::new()
    );
    assert_eq!(
        listed(QuoteStatus::Pending, 100).await,
        Vec::<QuoteId>::new()
    );
    assert_eq!(listed(QuoteStatus::Expired, 100).await, vec![q.id]);
    let since = |since: i64| {
        let filter = QuoteFilter {
            updated_since: Some(at(since)),
            ..QuoteFilter::default()
        };
        async move {
            let found = store
                .quotes(me, &filter, page(1, 25), at(200))
                .await
                .unwrap();
            quote_ids(&found)
        }
    };
    assert_eq!(since(100).await, vec![q.id], "expiry is a change");
    assert_eq!(since(101).await, Vec::<QuoteId>::new());
    for decision in [
        QuoteDecision::Accept { note: None },
        QuoteDecision::Reject { note: None },
        QuoteDecision::Withdraw,
    ] {
        let refused = store
            .decide_quote(None, q.id, decision.clone(), at(100))
            .await;
        assert!(
            matches!(
                refused,
                Err(QuoteDecisionError::NotPending {
                    status: QuoteStatus::Expired
                })
            ),
            "{decision:?}: {refused:?}"
        );
    }
    assert_eq!(variant_now(store, s.product.id, s.v1.id).await.available, 5);
    let variants = |now: i64| store.supply_variants(me, None, page(1, 25), at(now));
    let pending = |p: &Page<SupplyVariant>| p.items[0].pending_quote_id;
    assert_eq!(pending(&variants(99).await.unwrap()), Some(q.id));
    assert_eq!(pending(&variants(100).await.unwrap()), None);
    let next = quote(store, offer(me, s.v1.id, "11.00", 1), 150).await;
    assert_eq!(pending(&variants(150).await.unwrap()), Some(next.id));
    let old = read(150).await.unwrap().unwrap();
    assert_eq!(
        (old.status, old.updated_at),
        (QuoteStatus::Expired, at(100))
    );
    assert_eq!(listed(QuoteStatus::Expired, 150).await, vec![q.id]);
    assert_eq!(listed(QuoteStatus::Pending, 150).await, vec![next.id]);
}

/// A supplier's quotes newest first, each filter and the pages; the platform's list puts
/// the pending first, each part oldest first, across suppliers.
pub async fn quotes_are_listed_newest_first_and_pending_first(store: &dyn Store) {
    let s = supply(store, 5).await;
    let (me, rival) = (s.supplier.id, s.rival.id);
    let a = quote(store, offer(me, s.v1.id, "10.00", 1), 10).await;
    let b = quote(store, offer(me, s.v2.id, "20.00", 2), 20).await;
    let c = quote(store, offer(rival, s.w.id, "30.00", 3), 30).await;
    let none = QuoteDecision::Reject { note: None };
    store.decide_quote(None, a.id, none, at(40)).await.unwrap();
    let d1 = quote(store, offer(me, s.v1.id, "12.00", 4), 50).await;
    let list = |filter: QuoteFilter, p: PageRequest| async move {
        let found = store.quotes(me, &filter, p, at(60)).await.unwrap();
        (quote_ids(&found), found.total)
    };
    let all = QuoteFilter::default();
    assert_eq!(
        list(all.clone(), page(1, 25)).await,
        (vec![d1.id, b.id, a.id], 3)
    );
    assert_eq!(list(all.clone(), page(2, 2)).await, (vec![a.id], 3));
    assert_eq!(list(all, page(3, 2)).await, (vec![], 3));
    let of_v1 = QuoteFilter {
        variant_id: Some(s.v1.id),
        ..QuoteFilter::default()
    };
    assert_eq!(list(of_v1, page(1, 25)).await, (vec![d1.id, a.id], 2));
    let rejected = QuoteFilter {
        status: Some(QuoteStatus::Rejected),
        ..QuoteFilter::default()
    };
    assert_eq!(list(rejected, page(1, 25)).await, (vec![a.id], 1));
    let since = QuoteFilter {
        updated_since: Some(at(40)),
        ..QuoteFilter::default()
    };
    assert_eq!(list(since, page(1, 25)).await, (vec![d1.id, a.id], 2));
    let find = |query: QuoteQuery, p: PageRequest| async move {
        let found = store.find_quotes(&query, p, at(60)).await.unwrap();
        (quote_ids(&found), found.total)
    };
    let every = QuoteQuery::default();
    assert_eq!(
        find(every.clone(), page(1, 25)).await,
        (vec![b.id, c.id, d1.id, a.id], 4)
    );
    // Pages past, across and after the pending ones' end, and past the last.
    let pages = [
        (2, 3, vec![a.id]),
        (2, 2, vec![d1.id, a.id]),
        (4, 1, vec![a.id]),
    ];
    for (n, per, want) in pages.into_iter().chain([(5, 1, vec![])]) {
        assert_eq!(find(every.clone(), page(n, per)).await, (want, 4));
    }
    let mine = QuoteQuery {
        account_id: Some(me),
        status: Some(QuoteStatus::Pending),
        ..QuoteQuery::default()
    };
    assert_eq!(find(mine, page(1, 25)).await, (vec![b.id, d1.id], 2));
    let rivals = QuoteQuery {
        variant_id: Some(s.w.id),
        ..QuoteQuery::default()
    };
    assert_eq!(find(rivals, page(1, 25)).await, (vec![c.id], 1));
    let empty = store
        .quotes(s.f.account.id, &QuoteFilter::default(), page(1, 25), at(60))
        .await
        .unwrap();
    assert_eq!((empty.items.len(), empty.total), (0, 0));
}

/// Accepting a quote, once: the quote accepted with its note, the variant's supply price its
/// unit price, its pieces added as an adjustment `received` naming it, the product bumped.
pub async fn accepting_a_quote_receives_its_pieces_at_its_price(store: &dyn Store) {
    let s = supply(store, 5).await;
    let me = s.supplier.id;
    let q = quote(store, offer(me, s.v1.id, "40.50", 7), 10).await;
    let note = Some("اتفقنا".to_owned());
    let by_rival = store
        .decide_quote(Some(s.rival.id), q.id, QuoteDecision::Withdraw, at(15))
        .await;
    assert!(
        matches!(by_rival, Err(QuoteDecisionError::NotFound)),
        "{by_rival:?}"
    );
    let missing = store
        .decide_quote(None, q.id.absent(), QuoteDecision::Withdraw, at(15))
        .await;
    assert!(
        matches!(missing, Err(QuoteDecisionError::NotFound)),
        "{missing:?}"
    );
    let accepted = store
        .decide_quote(
            None,
            q.id,
            QuoteDecision::Accept { note: note.clone() },
            at(20),
        )
        .await
        .unwrap();
    assert_eq!(accepted.status, QuoteStatus::Accepted);
    assert_eq!(accepted.decision_note, note);
    assert_eq!(
        (accepted.decided_at, accepted.updated_at),
        (Some(at(20)), at(20))
    );
    assert_eq!(
        store.quote(Some(me), q.id, at(30)).await.unwrap(),
        Some(accepted.clone())
    );
    let v = variant_now(store, s.product.id, s.v1.id).await;
    assert_eq!((v.available, v.supply_price), (12, d("40.50")));
    let product = store.product(s.product.id).await.unwrap().unwrap();
    assert!(product.updated_at >= at(20), "{}", product.updated_at);
    let history = store.stock_adjustments(s.v1.id, page(1, 25)).await.unwrap();
    let received: Vec<_> = history
        .items
        .iter()
        .filter(|a| a.reason == StockReason::Received)
        .collect();
    assert_eq!(received.len(), 1);
    assert_eq!(
        (
            received[0].delta,
            received[0].quote_id,
            received[0].available_after
        ),
        (7, Some(q.id), 12)
    );
    for decision in [
        QuoteDecision::Accept { note: None },
        QuoteDecision::Reject { note: None },
        QuoteDecision::Withdraw,
    ] {
        let again = store.decide_quote(Some(me), q.id, decision, at(40)).await;
        assert!(
            matches!(
                again,
                Err(QuoteDecisionError::NotPending {
                    status: QuoteStatus::Accepted
                })
            ),
            "{again:?}"
        );
    }
    assert_eq!(
        variant_now(store, s.product.id, s.v1.id).await.available,
        12
    );
    let variants = store
        .supply_variants(me, None, page(1, 25), at(50))
        .await
        .unwrap();
    assert_eq!(variants.items[0].pending_quote_id, None);
    assert_eq!(variants.items[0].supply_price, d("40.50"));
}

/// Rejecting and withdrawing move no stock and no price; each keeps what it says.
pub async fn rejecting_and_withdrawing_move_no_stock(store: &dyn Store) {
    let s = supply(store, 5).await;
    let me = s.supplier.id;
    let before = variant_now(store, s.product.id, s.v1.id).await;
    let q1 = quote(store, offer(me, s.v1.id, "40.50", 7), 10).await;
    let rejected = store
        .decide_quote(
            None,
            q1.id,
            QuoteDecision::Reject {
                note: Some("السعر عالي".into()),
            },
            at(20),
        )
        .await
        .unwrap();
    assert_eq!(rejected.status, QuoteStatus::Rejected);
    assert_eq!(rejected.decision_note.as_deref(), Some("السعر عالي"));
    assert_eq!(rejected.decided_at, Some(at(20)));
    let q2 = quote(store, offer(me, s.v1.id, "30.00", 2), 30).await;
    let withdrawn = store
        .decide_quote(Some(me), q2.id, QuoteDecision::Withdraw, at(40))
        .await
        .unwrap();
    assert_eq!(withdrawn.status, QuoteStatus::Withdrawn);
    assert_eq!(
        (withdrawn.decision_note, withdrawn.decided_at),
        (None, Some(at(40)))
    );
    let after = variant_now(store, s.product.id, s.v1.id).await;
    assert_eq!(after.available, before.available);
    assert_eq!(after.supply_price, before.supply_price);
    let q3 = quote(store, offer(me, s.v1.id, "31.00", 2), 50).await;
    assert_eq!(
        q3.status,
        QuoteStatus::Pending,
        "a decided quote frees its variant"
    );
}

/// 10 concurrent accepts of one quote: one wins; the pieces are received once.
pub async fn concurrent_accepts_of_one_quote_accept_once(store: Arc<dyn Store>) {
    let s = supply(&*store, 5).await;
    let q = quote(&*store, offer(s.supplier.id, s.v1.id, "10.00", 9), 10).await;
    let mut tasks = Vec::new();
    for n in 0..10 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let decision = QuoteDecision::Accept { note: None };
            store.decide_quote(None, q.id, decision, at(20 + n)).await
        }));
    }
    let mut won = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(quote) => {
                assert_eq!(quote.status, QuoteStatus::Accepted);
                won += 1;
            }
            Err(QuoteDecisionError::NotPending {
                status: QuoteStatus::Accepted,
            }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1);
    assert_eq!(
        variant_now(&*store, s.product.id, s.v1.id).await.available,
        14
    );
    let history = store.stock_adjustments(s.v1.id, page(1, 25)).await.unwrap();
    let received = history
        .items
        .iter()
        .filter(|a| a.quote_id == Some(q.id))
        .count();
    assert_eq!(received, 1);
}

/// A quote withdrawn while it is being accepted: one of the two happens, and the stock says
/// which (12 rounds, each on a fresh quote).
pub async fn a_quote_withdrawn_while_accepted_has_one_outcome(store: Arc<dyn Store>) {
    let s = supply(&*store, 0).await;
    let me = s.supplier.id;
    let mut expected = 0;
    for round in 0..12i64 {
        let q = quote(&*store, offer(me, s.v1.id, "10.00", 3), 10 * round).await;
        let accept = {
            let store = store.clone();
            tokio::spawn(async move {
                let decision = QuoteDecision::Accept { note: None };
                store
                    .decide_quote(None, q.id, decision, at(10 * round + 1))
                    .await
            })
        };
        let withdraw = {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .decide_quote(Some(me), q.id, QuoteDecision::Withdraw, at(10 * round + 1))
                    .await
            })
        };
        let (accepted, withdrawn) = (accept.await.unwrap(), withdraw.await.unwrap());
        let final_status = store
            .quote(None, q.id, at(10 * round + 2))
            .await
            .unwrap()
            .unwrap()
            .status;
        match (accepted, withdrawn) {
            (Ok(_), Err(QuoteDecisionError::NotPending { status })) => {
                assert_eq!(
                    (status, final_status),
                    (QuoteStatus::Accepted, QuoteStatus::Accepted)
                );
                expected += 3;
            }
            (Err(QuoteDecisionError::NotPending { status }), Ok(_)) => {
                assert_eq!(
                    (status, final_status),
                    (QuoteStatus::Withdrawn, QuoteStatus::Withdrawn)
                );
            }
            other => panic!("round {round}: {other:?}"),
        }
        assert_eq!(
            variant_now(&*store, s.product.id, s.v1.id).await.available,
            expected
        );
    }
}

/// 20 concurrent quotes on one variant: one is pending, the others name it.
pub async fn concurrent_quotes_on_one_variant_leave_one_pending(store: Arc<dyn Store>) {
    let s = supply(&*store, 5).await;
    let me = s.supplier.id;
    let mut tasks = Vec::new();
    for n in 0..20 {
        let store = store.clone();
        let variant = s.v1.id;
        tasks.push(tokio::spawn(async move {
            store
                .insert_quote(offer(me, variant, "10.00", 1 + n), None, at(n))
                .await
        }));
    }
    let (mut made, mut named) = (Vec::new(), Vec::new());
    for task in tasks {
        match task.await.expect("task") {
            Ok(quote) => made.push(quote.id),
            Err(InsertQuoteError::Pending { existing }) => named.push(existing),
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(made.len(), 1, "one pending quote");
    assert_eq!(named.len(), 19);
    assert!(named.iter().all(|id| *id == made[0]), "{named:?}");
    let all = store
        .quotes(me, &QuoteFilter::default(), page(1, 25), at(100))
        .await
        .unwrap();
    assert_eq!(quote_ids(&all), made);
}

/// A quote accepted while 40 orders of one piece race for the same variant (10 in stock, 30
/// received): no oversell, and the stock ends exact: received + initial - reserved.
pub async fn quote_acceptance_and_concurrent_orders_keep_stock_exact(store: Arc<dyn Store>) {
    let s = Arc::new(supply(&*store, 10).await);
    let q = quote(&*store, offer(s.supplier.id, s.v1.id, "10.00", 30), 1).await;
    let mut orders = Vec::new();
    let mut acceptance = None;
    for n in 0..40u32 {
        let store = store.clone();
        let s = s.clone();
        if n == 15 {
            let store = store.clone();
            acceptance = Some(tokio::spawn(async move {
                let decision = QuoteDecision::Accept { note: None };
                store.decide_quote(None, q.id, decision, at(20)).await
            }));
        }
        orders.push(tokio::spawn(async move {
            let order = new_order(
                &s.f,
                s.f.account.id,
                &number(n),
                vec![line(&s.f, &s.v1, 1, false)],
                i64::from(n) + 2,
            );
            store.place_order(order).await
        }));
    }
    let mut placed = 0i64;
    for task in orders {
        match task.await.expect("task") {
            Ok(_) => placed += 1,
            Err(PlaceOrderError::InsufficientStock { .. }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    let acceptance = acceptance.expect("spawned").await.expect("task");
    assert!(acceptance.is_ok(), "{acceptance:?}");
    let accepted = store.quote(None, q.id, at(30)).await.unwrap().unwrap();
    assert_eq!(accepted.status, QuoteStatus::Accepted);
    assert!(placed >= 10, "{placed}");
    let left = variant_now(&*store, s.product.id, s.v1.id).await.available;
    assert_eq!(left, 10 + 30 - placed);
    assert!(left >= 0);
    assert_eq!(
        all_orders(&*store, s.f.account.id).await.total,
        placed as u64
    );
}

/// An accept refused for its received pieces (the variant would pass
/// [`MAX_AVAILABLE`](crate::domain::pieces::MAX_AVAILABLE)) writes nothing: the quote stays
/// pending, and the variant's supply price (what the suppliers' bookings are valued at), its
/// stock and its product's revision and stamp stay as they were.
pub async fn a_refused_accept_writes_nothing(store: &dyn Store) {
    let s = supply(store, crate::domain::pieces::MAX_AVAILABLE).await;
    let q = quote(store, offer(s.supplier.id, s.v1.id, "55.00", 5), 1).await;
    let product = || async { store.product(s.product.id).await.unwrap().unwrap() };
    let before = (
        product().await,
        variant_now(store, s.product.id, s.v1.id).await,
    );
    let accept = QuoteDecision::Accept { note: None };
    let refused = store.decide_quote(None, q.id, accept, at(2)).await;
    assert!(
        matches!(refused, Err(QuoteDecisionError::AboveMaximum { .. })),
        "{refused:?}"
    );
    let after = (
        product().await,
        variant_now(store, s.product.id, s.v1.id).await,
    );
    assert_eq!(
        after, before,
        "a refused accept wrote the variant or its product"
    );
    let still = store.quote(None, q.id, at(3)).await.unwrap().unwrap();
    assert_eq!(still.status, QuoteStatus::Pending);
}
