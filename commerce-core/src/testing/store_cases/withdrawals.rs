//! Withdrawals.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// Withdrawals are listed oldest first per account and decided once.
pub async fn withdrawals_are_listed_and_decided_once(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let new = |account: AccountId, amount: &str, notes: Option<&str>| NewWithdrawal {
        account_id: account,
        amount: d(amount),
        supply_amount: d("0.01"),
        wallet_number: "01012345678".into(),
        wallet_description: "فودافون كاش".into(),
        notes: notes.map(str::to_owned),
    };
    let w1 = store
        .insert_withdrawal(new(a.id, "150.25", Some("أول طلب")), at(0))
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
    let w2 = store
        .insert_withdrawal(new(a.id, "100.00", None), at(10))
        .await
        .unwrap();
    let w3 = store
        .insert_withdrawal(new(b.id, "200.00", None), at(5))
        .await
        .unwrap();
    let w4 = store
        .insert_withdrawal(new(a.id, "300.00", Some("ملاحظة")), at(20))
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
                w4.id + 1_000_000,
                WithdrawalDecision::Reject { notes: None },
                at(80)
            )
            .await,
        Err(StoreError::NotFound)
    ));
    let orphan = store
        .insert_withdrawal(new(b.id + 1_000_000, "1.00", None), at(0))
        .await;
    assert!(matches!(orphan, Err(StoreError::NotFound)), "{orphan:?}");
}
