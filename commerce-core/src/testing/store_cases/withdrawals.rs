//! Withdrawals.

use rust_decimal::Decimal;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// Withdrawals are listed oldest first per account and decided once.
pub async fn withdrawals_are_listed_and_decided_once(store: &dyn Store) {
    let f = fixture(store, 1000, 0).await;
    let (a, b) = (&f.account, &f.other);
    earn(store, &f, a.id, d("600.00"), &number(1)).await;
    earn(store, &f, b.id, d("200.00"), &number(2)).await;
    let request =
        |new: NewWithdrawal, seconds: i64| store.request_withdrawal(new, no_hold(), at(seconds));
    let w1 = request(withdrawal(a.id, "150.25", Some("أول طلب")), 0)
        .await
        .unwrap();
    assert_eq!(w1.status, WithdrawalStatus::Pending);
    assert_eq!(w1.amount.to_string(), "150.25");
    assert_eq!(w1.supply_amount.to_string(), "0.01");
    assert_eq!(w1.notes.as_deref(), Some("أول طلب"));
    assert_eq!(w1.transfer_reference, None);
    assert_eq!(w1.receipt_url, None);
    assert_eq!(w1.created_at, at(0));
    assert_eq!(w1.decided_at, None);
    let w2 = request(withdrawal(a.id, "100.00", None), 10).await.unwrap();
    let w3 = request(withdrawal(b.id, "200.00", None), 5).await.unwrap();
    let w4 = request(withdrawal(a.id, "300.00", Some("ملاحظة")), 20)
        .await
        .unwrap();
    assert_eq!(
        store.withdrawals(a.id).await.unwrap(),
        vec![w1.clone(), w2.clone(), w4.clone()]
    );
    assert_eq!(store.withdrawals(b.id).await.unwrap(), vec![w3.clone()]);

    let completed = store
        .decide_withdrawal(
            w1.id,
            WithdrawalDecision::Complete {
                transfer_reference: "TRX-1".into(),
                receipt_url: Some("https://r.example.com/1".into()),
            },
            at(30),
        )
        .await
        .unwrap();
    assert_eq!(completed.status, WithdrawalStatus::Completed);
    assert_eq!(completed.transfer_reference.as_deref(), Some("TRX-1"));
    assert_eq!(
        completed.receipt_url.as_deref(),
        Some("https://r.example.com/1")
    );
    assert_eq!(completed.decided_at, Some(at(30)));
    assert_eq!(completed.amount, w1.amount);
    let second = store
        .decide_withdrawal(w1.id, WithdrawalDecision::Reject { notes: None }, at(40))
        .await;
    assert!(
        matches!(second, Err(StoreError::Invalid(_))),
        "second decision: {second:?}"
    );
    let rejected = store
        .decide_withdrawal(
            w2.id,
            WithdrawalDecision::Reject {
                notes: Some("رقم المحفظة غلط".into()),
            },
            at(50),
        )
        .await
        .unwrap();
    assert_eq!(rejected.status, WithdrawalStatus::Rejected);
    assert_eq!(rejected.notes.as_deref(), Some("رقم المحفظة غلط"));
    assert_eq!(rejected.transfer_reference, None);
    assert_eq!(rejected.decided_at, Some(at(50)));
    let kept_notes = store
        .decide_withdrawal(w4.id, WithdrawalDecision::Reject { notes: None }, at(60))
        .await
        .unwrap();
    assert_eq!(kept_notes.notes.as_deref(), Some("ملاحظة"));
    assert!(matches!(
        store
            .decide_withdrawal(
                w3.id,
                WithdrawalDecision::Complete {
                    transfer_reference: "T".into(),
                    receipt_url: None
                },
                at(70)
            )
            .await,
        Ok(Withdrawal {
            status: WithdrawalStatus::Completed,
            receipt_url: None,
            ..
        })
    ));
    assert_eq!(
        store.withdrawals(a.id).await.unwrap(),
        vec![completed, rejected, kept_notes]
    );
    assert!(matches!(
        store
            .decide_withdrawal(
                w4.id.absent(),
                WithdrawalDecision::Reject { notes: None },
                at(80)
            )
            .await,
        Err(StoreError::NotFound)
    ));
    let orphan = request(withdrawal(b.id.absent(), "1.00", None), 0).await;
    assert!(
        matches!(
            orphan,
            Err(WithdrawalRequestError::Store(StoreError::NotFound)
                | WithdrawalRequestError::OverReadyBalance { .. })
        ),
        "{orphan:?}"
    );
}

/// A request is refused above the ready balance and accepted up to it, to the piastre;
/// pending and completed requests count against it, rejected ones give it back.
pub async fn a_withdrawal_never_exceeds_the_ready_balance(store: &dyn Store) {
    let f = fixture(store, 1000, 0).await;
    let a = f.account.id;
    let nothing = store
        .request_withdrawal(withdrawal(a, "0.01", None), no_hold(), at(0))
        .await;
    assert!(
        matches!(
            nothing,
            Err(WithdrawalRequestError::OverReadyBalance { ready, .. }) if ready.is_zero()
        ),
        "{nothing:?}"
    );
    let ready_now = earn(store, &f, a, d("100.00"), &number(1)).await;
    assert!(ready_now >= d("100.00"), "{ready_now}");
    // Held orders are not ready: with the cut-off before the delivery nothing is.
    let held = store
        .request_withdrawal(withdrawal(a, "0.01", None), at(0), at(10))
        .await;
    assert!(
        matches!(held, Err(WithdrawalRequestError::OverReadyBalance { .. })),
        "{held:?}"
    );
    let over = (ready_now + d("0.01")).to_string();
    let refused = store
        .request_withdrawal(withdrawal(a, &over, None), no_hold(), at(10))
        .await;
    match refused {
        Err(WithdrawalRequestError::OverReadyBalance { requested, ready }) => {
            assert_eq!((requested, ready), (ready_now + d("0.01"), ready_now));
        }
        other => panic!("{other:?}"),
    }
    let first = store
        .request_withdrawal(withdrawal(a, "60.00", None), no_hold(), at(11))
        .await
        .unwrap();
    let rest = (ready_now - d("60.00")).to_string();
    let second = store
        .request_withdrawal(withdrawal(a, &rest, None), no_hold(), at(12))
        .await
        .unwrap();
    assert_eq!(ready(store, a).await, Decimal::ZERO);
    let third = store
        .request_withdrawal(withdrawal(a, "0.01", None), no_hold(), at(13))
        .await;
    assert!(third.is_err(), "{third:?}");
    store
        .decide_withdrawal(first.id, WithdrawalDecision::Reject { notes: None }, at(14))
        .await
        .unwrap();
    assert_eq!(ready(store, a).await, d("60.00"));
    store
        .decide_withdrawal(
            second.id,
            WithdrawalDecision::Complete {
                transfer_reference: "T-2".into(),
                receipt_url: None,
            },
            at(15),
        )
        .await
        .unwrap();
    assert_eq!(ready(store, a).await, d("60.00"));
    let again = store
        .request_withdrawal(withdrawal(a, "60.00", None), no_hold(), at(16))
        .await
        .unwrap();
    assert_eq!(again.amount, d("60.00"));
    assert_eq!(ready(store, a).await, Decimal::ZERO);
}
