//! Writes of lines' outcomes decided on a read: a store refuses one whose order changed since
//! the read, and the operator's corrections made at once each keep the other's counts.

use std::sync::Arc;

use crate::domain::pieces::OutcomeReport;
use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// A delivered order of one line of `quantity` pieces, placed as order `n`.
async fn delivered_order(store: &dyn Store, f: &Fixture, n: u32, quantity: i64) -> Order {
    let lines = vec![line(f, &f.variant, quantity, false)];
    let order = place(store, new_order(f, f.account.id, &number(n), lines, 1)).await;
    let path = [
        OrderStatus::Confirmed,
        OrderStatus::Shipped,
        OrderStatus::Delivered,
    ];
    move_to(store, order.id, &path, 2).await
}

/// `set_line_outcomes` and `change_order_status` with the `updated_at` the caller read: written
/// when the order is still as read, refused with `Changed` (nothing written: outcome,
/// `updated_at`, status and stock as they were) once another write came between.
pub async fn a_write_decided_on_an_older_read_is_refused(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let order = delivered_order(store, &f, 0, 4).await;
    let line_id = order.lines[0].id;
    let read = order.updated_at;

    let first = store
        .set_line_outcomes(
            order.id,
            vec![(line_id, delivered_of(3, 4))],
            Some(read),
            at(50),
        )
        .await
        .expect("written: the order is as read");
    assert_eq!(first.lines[0].outcome, delivered_of(3, 4));
    assert!(first.updated_at > read);
    let stock = available(store, f.product.id, f.variant.id).await;

    // Decided on the first read, after the write above: refused.
    let late = store
        .set_line_outcomes(
            order.id,
            vec![(line_id, delivered_of(2, 4))],
            Some(read),
            at(60),
        )
        .await;
    assert!(matches!(late, Err(StoreError::Changed)), "{late:?}");
    let mut archived = change(order.id, OrderStatus::Archived, 70);
    archived.outcomes = vec![(line_id, delivered_of(2, 4))];
    archived.read_at = Some(read);
    let moved = store.change_order_status(archived.clone()).await;
    assert!(
        matches!(moved, Err(StatusChangeError::Store(StoreError::Changed))),
        "{moved:?}"
    );
    let now = store.order(None, order.id).await.unwrap().unwrap();
    assert_eq!(now.lines[0].outcome, delivered_of(3, 4), "nothing written");
    assert_eq!(now.updated_at, first.updated_at);
    assert_eq!(now.status, OrderStatus::Delivered);
    assert_eq!(available(store, f.product.id, f.variant.id).await, stock);

    // Decided on the order as it stands: written.
    archived.read_at = Some(now.updated_at);
    let moved = store.change_order_status(archived).await.expect("moved");
    assert_eq!(moved.status, OrderStatus::Archived);
    assert_eq!(moved.lines[0].outcome, delivered_of(2, 4));
    // An order that does not exist is still `NotFound`, with a read instant or not.
    let absent = store
        .set_line_outcomes(order.id.absent(), Vec::new(), Some(read), at(80))
        .await;
    assert!(matches!(absent, Err(StoreError::NotFound)), "{absent:?}");
}

/// Two corrections of one delivered line made at once through the operator, each naming
/// another count (one piece damaged, two lost): both are kept, whichever wrote first, in every
/// one of 12 rounds; neither is refused.
pub async fn corrections_made_at_once_each_keep_the_others_counts(store: Arc<dyn Store>) {
    const ROUNDS: u32 = 12;
    let f = fixture(&*store, 1000, 1000).await;
    let operator = crate::Engine::new(store.clone()).operator();
    for round in 0..ROUNDS {
        let order = delivered_order(&*store, &f, round, 6).await;
        let line_id = order.lines[0].id;
        let reports = [
            OutcomeReport::new().with_damaged(1),
            OutcomeReport::new().with_lost(2),
        ];
        let tasks = reports.map(|report| {
            let operator = operator.clone();
            tokio::spawn(async move {
                operator
                    .set_line_outcomes(order.id, vec![(line_id, report)])
                    .await
            })
        });
        for task in tasks {
            task.await.expect("task").expect("corrected");
        }
        let outcome = store.order(None, order.id).await.unwrap().unwrap().lines[0]
            .outcome
            .clone();
        assert_eq!(
            (outcome.damaged_quantity, outcome.lost_quantity),
            (1, 2),
            "round {round}: a correction's count was lost ({outcome:?})"
        );
    }
}
