//! The suppliers' money under races: deliveries, corrections and withdrawals of one supplier
//! at once reconcile, and a withdrawal never takes ready money a racing correction took back.

use std::sync::Arc;

use rust_decimal::Decimal;

use crate::domain::earnings::Withdrawn;
use crate::domain::pieces::delivered_pieces;
use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::statement::{assert_reconciled, deliver, entries, supplied, supplier, wallet};

/// Concurrent deliveries, corrections and withdrawals of one supplier: withdrawals never
/// overdraw what was delivered, no correction takes the balance below zero, and afterwards
/// the statement reconciles with the wallet and every delivery entry is its line's supply
/// price times its delivered pieces.
pub async fn concurrent_moves_and_supplier_withdrawals_reconcile(store: Arc<dyn Store>) {
    const ORDERS: u32 = 6;
    let f = Arc::new(fixture(&*store, 1000, 1000).await);
    let s = supplier(&*store, "Nile").await.id;
    let mut orders = Vec::new();
    for n in 0..ORDERS {
        let lines = vec![
            supplied(&f, &f.variant, 2, s, "60.00"),
            supplied(&f, &f.variant_b, 1, s, "35.50"),
        ];
        let order = place(&*store, new_order(&f, f.account.id, &number(n), lines, 1)).await;
        move_to(
            &*store,
            order.id,
            &[OrderStatus::Confirmed, OrderStatus::Shipped],
            2,
        )
        .await;
        orders.push(order);
    }
    // One order delivered first, so that the withdrawals have something to race for.
    store
        .change_order_status(change(orders[0].id, OrderStatus::Delivered, 10))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for (n, order) in orders.iter().enumerate().skip(1) {
        let store = store.clone();
        let (id, line) = (order.id, order.lines[0].id);
        tasks.push(tokio::spawn(async move {
            let moved = store
                .change_order_status(change(id, OrderStatus::Delivered, 20 + n as i64))
                .await
                .map(|_| ());
            // A correction: one piece of the first line not delivered after all.
            let corrected = store
                .set_line_outcomes(
                    id,
                    vec![(line, delivered_of(1, 2))],
                    None,
                    at(40 + n as i64),
                )
                .await
                .map(|_| ());
            (
                moved.map_err(|e| e.to_string()),
                corrected.map_err(|e| e.to_string()),
            )
        }));
    }
    let mut withdrawals = Vec::new();
    for n in 0..10 {
        let store = store.clone();
        withdrawals.push(tokio::spawn(async move {
            store
                .request_withdrawal(withdrawal(s, "100.00", None), no_hold(), at(30 + n))
                .await
        }));
    }
    for task in tasks {
        let (moved, corrected) = task.await.expect("task");
        moved.expect("delivered");
        // A correction may be refused only for the shortfall.
        if let Err(e) = corrected {
            assert!(e.contains("short"), "{e}");
        }
    }
    let mut accepted = Decimal::ZERO;
    for task in withdrawals {
        match task.await.expect("task") {
            Ok(w) => accepted += w.amount,
            Err(WithdrawalRequestError::OverReadyBalance { .. }) => {}
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    let all = entries(&*store, s).await;
    let settled: Decimal = all
        .items
        .iter()
        .filter(|e| e.order_id.is_some())
        .map(|e| match e.direction {
            Direction::Credit => e.amount,
            _ => -e.amount,
        })
        .sum();
    assert!(accepted <= settled, "withdrew {accepted} of {settled}");
    assert!(all.items.iter().all(|e| e.balance >= Decimal::ZERO));
    let debits: Decimal = all
        .items
        .iter()
        .filter(|e| e.kind == StatementEntryType::Withdrawal)
        .map(|e| e.amount)
        .sum();
    assert_eq!(debits, accepted);
    assert_eq!(all.items[0].balance, settled - accepted);
    // Every order's entries add up to its lines' supply price times their delivered pieces.
    for order in &orders {
        let order = store.order(None, order.id).await.unwrap().unwrap();
        let expected: Decimal = order
            .lines
            .iter()
            .map(|l| l.supply_price * Decimal::from(delivered_pieces(&order, l)))
            .sum();
        let booked: Decimal = all
            .items
            .iter()
            .filter(|e| e.order_id == Some(order.id))
            .map(|e| match e.direction {
                Direction::Credit => e.amount,
                _ => -e.amount,
            })
            .sum();
        assert_eq!(booked, expected, "order {}", order.id);
    }
    assert_reconciled(&*store, s, 0).await;
    assert_reconciled(&*store, s, 15).await;
    assert_eq!(wallet(&*store, s, 0).await.totals.expected, Decimal::ZERO);
}

/// A supplier's withdrawal of its whole ready balance and a correction that debits a ready
/// delivery, raced 24 times: they are taken one after the other. Either the withdrawal comes
/// first (both pass, the correction taking from the held money) or the correction does (the
/// withdrawal is refused: the ready money is smaller than asked). Never both with the
/// correction first: the withdrawal would have taken ready money the correction took back.
pub async fn a_supplier_withdrawal_never_takes_ready_money_a_racing_correction_took(
    store: Arc<dyn Store>,
) {
    const ROUNDS: i64 = 24;
    // Deliveries up to second 500 are ready, later ones held.
    let held_after = at(500);
    let f = fixture(&*store, 1000, 1000).await;
    let s = supplier(&*store, "Delta").await.id;
    let ready_order = place(
        &*store,
        new_order(
            &f,
            f.account.id,
            &number(1),
            vec![supplied(&f, &f.variant, 2, s, "60.00")],
            1,
        ),
    )
    .await;
    let held_order = place(
        &*store,
        new_order(
            &f,
            f.account.id,
            &number(2),
            vec![supplied(&f, &f.variant, 2, s, "60.00")],
            1,
        ),
    )
    .await;
    deliver(&*store, ready_order.id, 100, Vec::new(), false).await;
    deliver(&*store, held_order.id, 1000, Vec::new(), false).await;
    let line = ready_order.lines[0].id;
    let ready_now = |store: Arc<dyn Store>| async move {
        let withdrawals = store.withdrawals(s).await.expect("withdrawals");
        wallet(&*store, s, 500)
            .await
            .ready(Withdrawn::of(&withdrawals))
    };
    let (mut withdrawal_first, mut correction_first) = (0, 0);
    for round in 0..ROUNDS {
        let t = 2000 + round * 100;
        let ready = ready_now(store.clone()).await;
        assert_eq!(
            ready,
            Decimal::from(120),
            "round {round}: the ready delivery's 2 pieces"
        );
        let withdraw = {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .request_withdrawal(withdrawal(s, "120.00", None), held_after, at(t))
                    .await
            })
        };
        let correct = {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .set_line_outcomes(
                        ready_order.id,
                        vec![(line, delivered_of(1, 2))],
                        None,
                        at(t + 1),
                    )
                    .await
            })
        };
        let withdrawn = withdraw.await.expect("withdrawal task");
        correct
            .await
            .expect("correction task")
            .expect("the held money covers the debit");
        let all = entries(&*store, s).await.items;
        let position = |kind: StatementEntryType| {
            all.iter()
                .position(|e| e.kind == kind && e.at >= at(t))
                .expect("the round's entry")
        };
        match withdrawn {
            Ok(w) => {
                // Newest first: the withdrawal's entry must be the older one.
                assert!(
                    position(StatementEntryType::Withdrawal)
                        > position(StatementEntryType::Correction),
                    "round {round}: the withdrawal of 120.00 passed after the correction left \
                     60.00 ready"
                );
                withdrawal_first += 1;
                let reject = WithdrawalDecision::Reject { notes: None };
                store
                    .decide_withdrawal(w.id, reject, at(t + 50))
                    .await
                    .expect("reject");
            }
            Err(WithdrawalRequestError::OverReadyBalance { .. }) => correction_first += 1,
            Err(other) => panic!("round {round}: unexpected failure: {other:?}"),
        }
        // Every piece delivered again: the next round starts where this one did.
        store
            .set_line_outcomes(
                ready_order.id,
                vec![(line, delivered_of(2, 2))],
                None,
                at(t + 60),
            )
            .await
            .expect("undo the correction");
    }
    assert_eq!(withdrawal_first + correction_first, ROUNDS);
    assert_reconciled(&*store, s, 500).await;
}
