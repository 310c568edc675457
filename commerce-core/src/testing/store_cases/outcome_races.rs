//! Writes of lines' outcomes decided on a read: a store refuses one whose order changed since
//! the read, and the operator's corrections made at once each keep the other's counts.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::domain::earnings::WalletTotals;
use chrono::{DateTime, Utc};

use crate::domain::pieces::OutcomeReport;
use crate::model::*;
use crate::operator::{Conflict, OperatorError};
use crate::store::delegate::forward_store;
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
            OutcomeReport::builder().damaged(1).build(),
            OutcomeReport::builder().lost(2).build(),
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

/// A store where another write of one order (its tracking URL) comes between the operator's
/// read and each of its next `times` outcome writes; every operation goes to the store.
struct Interfering {
    inner: Arc<dyn Store>,
    order: OrderId,
    times: AtomicUsize,
}

impl Interfering {
    async fn around<T, E: From<StoreError>>(
        &self,
        op: Operation,
        _event: impl FnOnce(&T) + Send,
        call: impl Future<Output = Result<T, E>> + Send,
    ) -> Result<T, E> {
        let writes_outcomes = matches!(op.name, "set_line_outcomes" | "change_order_status");
        let counted = |n: usize| n.checked_sub(1);
        if writes_outcomes
            && self
                .times
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, counted)
                .is_ok()
        {
            let url = Some("https://track.example.com/1".to_owned());
            self.inner.set_tracking_url(self.order, url, at(90)).await?;
        }
        call.await
    }
}

forward_store!(impl for Interfering => inner);

/// The operator's outcome writes when another write of the order comes between their read and
/// their write: decided again on the order as it is, once (the correction and the move with
/// outcomes land, the other write kept too); refused as a conflict when it comes every time,
/// writing nothing.
pub async fn an_outcome_write_another_came_before_is_decided_again(store: Arc<dyn Store>) {
    let f = fixture(&*store, 100, 100).await;
    let corrected = delivered_order(&*store, &f, 0, 4).await;
    let moved = {
        let lines = vec![line(&f, &f.variant, 3, false)];
        let order = place(&*store, new_order(&f, f.account.id, &number(1), lines, 1)).await;
        let path = [OrderStatus::Confirmed, OrderStatus::Shipped];
        move_to(&*store, order.id, &path, 2).await
    };
    let engine_over = |order: OrderId, times: usize| {
        let interfering = Interfering {
            inner: store.clone(),
            order,
            times: AtomicUsize::new(times),
        };
        crate::Engine::new(Arc::new(interfering)).operator()
    };
    let damaged = || {
        vec![(
            corrected.lines[0].id,
            OutcomeReport::builder().damaged(1).build(),
        )]
    };

    let once = engine_over(corrected.id, 1);
    let order = once
        .set_line_outcomes(corrected.id, damaged())
        .await
        .expect("decided again");
    assert_eq!(order.lines[0].outcome.damaged_quantity, 1);
    assert!(order.tracking_url.is_some(), "the other write is kept");
    let delivered = OutcomeReport::builder().delivered(2).returned(1).build();
    let order = engine_over(moved.id, 1)
        .move_order_with_outcomes(
            moved.id,
            OrderStatus::PartiallyDelivered,
            None,
            vec![(moved.lines[0].id, delivered)],
        )
        .await
        .expect("moved on the second read");
    assert_eq!(order.status, OrderStatus::PartiallyDelivered);
    assert_eq!(order.lines[0].outcome.delivered_quantity, Some(2));
    assert!(order.tracking_url.is_some());

    // Another write before every attempt: refused, nothing of the correction written.
    let before = store.order(None, corrected.id).await.unwrap().unwrap();
    let always = engine_over(corrected.id, usize::MAX);
    let refused = always
        .set_line_outcomes(
            corrected.id,
            vec![(
                corrected.lines[0].id,
                OutcomeReport::builder().lost(1).build(),
            )],
        )
        .await;
    assert!(
        matches!(refused, Err(OperatorError::Conflict(Conflict::Refused(_)))),
        "{refused:?}"
    );
    let after = store.order(None, corrected.id).await.unwrap().unwrap();
    assert_eq!(after.lines[0].outcome, before.lines[0].outcome);
}
