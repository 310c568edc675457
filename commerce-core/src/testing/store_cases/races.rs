//! Races of real tasks: no oversell, one record per key, exact rate windows, one release.

use std::sync::Arc;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

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

/// 50 concurrent begins on one key (50 requests): exactly one Started, the rest InFlight.
pub async fn concurrent_begin_idempotent_starts_once(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    let s = claim(a.id, "race");
    let mut tasks = Vec::new();
    for request in 0..50 {
        let store = store.clone();
        let s = another_request(&s, request);
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

/// Fenced, raced: 20 keys, each begun by a request that then stalled past the stale time;
/// per key, its late placement races a retry's takeover (and the retry's own placement). Each
/// key ends with exactly one order: either the late placement won and the retry recovered its
/// order, or the retry took the record over and the late placement was refused.
pub async fn concurrent_takeover_and_late_placement_place_one_order(store: Arc<dyn Store>) {
    const KEYS: u32 = 20;
    let f = fixture(&*store, 100, 0).await;
    let mut tasks = Vec::new();
    for k in 0..KEYS {
        let original = claim(f.account.id, &format!("race-{k}"));
        assert_eq!(
            begin(&*store, &original, "f", at(0)).await,
            IdempotencyBegin::Started
        );
        let retry = another_request(&original, 2);
        let late = order_under(&f, &original, 2 * k + 1, 1);
        let own = order_under(&f, &retry, 2 * k + 2, 61);
        let placing = tokio::spawn({
            let store = store.clone();
            async move { store.place_order(late).await }
        });
        let taking = tokio::spawn({
            let store = store.clone();
            async move {
                let begun = begin(&*store, &retry, "f", at(61)).await;
                let placed = match begun {
                    IdempotencyBegin::Started => Some(store.place_order(own).await),
                    _ => None,
                };
                (begun, placed)
            }
        });
        tasks.push((placing, taking));
    }
    let (mut late_won, mut retry_won) = (0, 0);
    for (placing, taking) in tasks {
        let late = placing.await.expect("task");
        let (begun, placed) = taking.await.expect("task");
        match (late, begun, placed) {
            (Ok(order), IdempotencyBegin::Recovered(Created::Order(id)), None)
                if order.id == id =>
            {
                late_won += 1
            }
            (Err(PlaceOrderError::IdempotencyLost), IdempotencyBegin::Started, Some(Ok(_))) => {
                retry_won += 1
            }
            other => panic!("two orders or none for one key: {other:?}"),
        }
    }
    eprintln!("takeover race: late placement won {late_won}, retry won {retry_won}");
    assert_eq!(
        all_orders(&*store, f.account.id).await.total,
        u64::from(KEYS)
    );
    assert_eq!(
        available(&*store, f.product.id, f.variant.id).await,
        100 - i64::from(KEYS)
    );
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
                let hit = store
                    .hit_rate_limit(k.id, RateWindow::from_minute(8), LIMIT)
                    .await
                    .expect("hit");
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
        store
            .hit_rate_limit(k.id, RateWindow::from_minute(8), LIMIT)
            .await
            .unwrap(),
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
            store
                .hit_rate_limit(k.id, RateWindow::from_minute(7), 20)
                .await
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
        store
            .hit_rate_limit(k.id, RateWindow::from_minute(7), 20)
            .await
            .unwrap(),
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
            c.bill_month = Some(month(MONTH));
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

/// 16 concurrent withdrawal requests of 100.00 on a ready balance of a few hundred: exactly
/// as many succeed as the balance covers, the rest are refused, and the balance never goes
/// below zero.
pub async fn concurrent_withdrawals_never_overdraw(store: Arc<dyn Store>) {
    let f = fixture(&*store, 1000, 0).await;
    let a = f.account.id;
    let balance = earn(&*store, &f, a, d("200.00"), &number(1)).await;
    let amount = d("100.00");
    let covered = (balance / amount).floor();
    let mut tasks = Vec::new();
    for n in 0..16 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .request_withdrawal(withdrawal(a, "100.00", None), no_hold(), at(100 + n))
                .await
        }));
    }
    let (mut accepted, mut refused) = (0, 0);
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => accepted += 1,
            Err(WithdrawalRequestError::OverReadyBalance { .. }) => refused += 1,
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!(
        (rust_decimal::Decimal::from(accepted), refused),
        (covered, 16 - accepted)
    );
    assert_eq!(
        store.withdrawals(a).await.expect("withdrawals").len(),
        accepted
    );
    assert_eq!(ready(&*store, a).await, balance - covered * amount);
}
