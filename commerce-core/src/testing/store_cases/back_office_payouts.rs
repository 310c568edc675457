//! The back office's queries across accounts: withdrawals (the payout queue, totals) and
//! webhook endpoints (disabled, failing in a row).

use crate::model::*;
use crate::store::*;

use super::back_office::{at_least, exact, listed};
use super::fixtures::*;
use super::webhooks::{attempt, claim, ping, register, webhook_of};

/// Withdrawals of every account: by status and account, newest or oldest first (the payout
/// queue), pages, the count's limit, and totals (count and amounts to the piastre) of exactly
/// the matching ones.
pub async fn withdrawals_across_accounts_queue_and_totals(store: &dyn Store) {
    let f = fixture(store, 100, 100).await;
    let (a, b) = (f.account.id, f.other.id);
    earn(store, &f, a, d("500.00"), &number(1)).await;
    earn(store, &f, b, d("500.00"), &number(2)).await;
    let request = async |account, amount: &str, when: i64| {
        store
            .request_withdrawal(withdrawal(account, amount, None), no_hold(), at(when))
            .await
            .expect("request withdrawal")
    };
    let w1 = request(a, "100.00", 100).await;
    let w2 = request(b, "50.50", 110).await;
    let w3 = request(a, "25.25", 120).await;
    let w4 = request(b, "10.00", 130).await;
    let paid = WithdrawalDecision::Complete {
        transfer_reference: "TRX-1".into(),
        receipt_url: None,
    };
    store.decide_withdrawal(w1.id, paid, at(140)).await.unwrap();
    let refused = WithdrawalDecision::Reject { notes: None };
    store
        .decide_withdrawal(w4.id, refused, at(150))
        .await
        .unwrap();
    let all = page(1, 100);
    let find = async |query: WithdrawalQuery| {
        let found = store.find_withdrawals(&query, all).await.expect("find");
        listed(&found, |w| w.id)
    };
    let totals = async |query: WithdrawalQuery| store.withdrawal_totals(&query).await.unwrap();
    let q = WithdrawalQuery::default;

    // The payout queue: pending, the oldest request first, with what it asks for in all.
    let queue = store
        .find_withdrawals(&WithdrawalQuery::payout_queue(), all)
        .await
        .unwrap();
    assert_eq!(listed(&queue, |w| w.id), [w2.id, w3.id]);
    assert_eq!(queue.total, exact(2));
    assert_eq!(queue.items[0], w2);
    assert_eq!(
        totals(WithdrawalQuery::payout_queue()).await,
        WithdrawalTotals {
            count: 2,
            amount: d("75.75"),
            supply_amount: d("0.02"),
        }
    );

    // Every account's, newest first; one account's; by status.
    assert_eq!(find(q()).await, [w4.id, w3.id, w2.id, w1.id]);
    assert_eq!(find(q().account(a)).await, [w3.id, w1.id]);
    assert_eq!(find(q().account(b)).await, [w4.id, w2.id]);
    let mine_pending = q().account(a).status(WithdrawalStatus::Pending);
    assert_eq!(find(mine_pending.clone()).await, [w3.id]);
    assert_eq!(find(q().status(WithdrawalStatus::Completed)).await, [w1.id]);
    assert_eq!(find(q().status(WithdrawalStatus::Rejected)).await, [w4.id]);
    assert!(find(q().account(a.absent())).await.is_empty());

    // Totals of exactly the matching ones.
    let everything = totals(q()).await;
    assert_eq!((everything.count, everything.amount), (4, d("185.75")));
    let of_b = totals(q().account(b)).await;
    assert_eq!((of_b.count, of_b.amount), (2, d("60.50")));
    let mine = totals(mine_pending).await;
    assert_eq!((mine.count, mine.amount), (1, d("25.25")));
    assert_eq!(
        totals(q().account(a.absent())).await,
        WithdrawalTotals::default()
    );

    // Pages, and a count stopped at the limit (the totals are not).
    let queue = WithdrawalQuery::payout_queue();
    let second = store.find_withdrawals(&queue, page(2, 1)).await.unwrap();
    assert_eq!(
        (listed(&second, |w| w.id), second.total),
        (vec![w3.id], exact(2))
    );
    let limited = queue.count_limit(1);
    let first = store.find_withdrawals(&limited, page(1, 1)).await.unwrap();
    assert_eq!(
        (listed(&first, |w| w.id), first.total),
        (vec![w2.id], at_least(1))
    );
    assert_eq!(totals(limited).await.count, 2);
}

/// Webhook endpoints of every account, by id: enabled or disabled and why, and the attempts
/// in a row that failed (a delivery ends the streak, enabling again clears it); another
/// account's endpoints only when the query names none.
pub async fn webhooks_across_accounts_by_state_and_failing_streak(store: &dyn Store) {
    let (a, b) = (
        account(store, "Alpha").await.id,
        account(store, "Beta").await.id,
    );
    let wa1 = register(store, a, "https://a.example/1", &[], 1).await;
    let wa2 = register(store, a, "https://a.example/2", &[], 2).await;
    let wb1 = register(store, b, "https://b.example/1", &[], 3).await;
    let wb2 = register(store, b, "https://b.example/2", &[], 4).await;
    let disable = WebhookPatch {
        enabled: Some(false),
        ..WebhookPatch::default()
    };
    store
        .update_webhook(None, wa2.id, disable, at(5))
        .await
        .unwrap();
    // Rounds of one ping per endpoint named, each attempt the last one (failed, no retry) or
    // delivered.
    let failed = AttemptResult::Answered(500);
    let rounds = [
        (10, vec![(wa1.id, false), (wb1.id, false), (wb2.id, false)]),
        (20, vec![(wb1.id, false), (wb2.id, true)]),
        (30, vec![(wb1.id, false)]),
    ];
    for (now, endpoints) in rounds {
        let mut pinged = Vec::new();
        for (endpoint, delivered) in &endpoints {
            pinged.push((ping(store, *endpoint, now).await.id, *delivered));
        }
        let lease = format!("lease-{now}");
        let claimed = claim(store, now, &lease, 100).await;
        assert_eq!(claimed.len(), pinged.len());
        for (delivery, delivered) in pinged {
            let result = if delivered {
                AttemptResult::Answered(200)
            } else {
                failed.clone()
            };
            assert!(attempt(store, delivery, &lease, result, 8, now).await);
        }
    }
    let streaks = [wa1.id, wa2.id, wb1.id, wb2.id];
    let mut found = Vec::new();
    for id in streaks {
        found.push(webhook_of(store, id).await.failed_attempts);
    }
    assert_eq!(found, [1, 0, 3, 0]);

    let all = page(1, 100);
    let find = async |query: WebhookQuery| {
        let found = store.find_webhooks(&query, all).await.expect("find");
        listed(&found, |w| w.id)
    };
    let q = WebhookQuery::default;
    let everything = store.find_webhooks(&q(), all).await.unwrap();
    assert_eq!(
        listed(&everything, |w| w.id),
        [wa1.id, wa2.id, wb1.id, wb2.id]
    );
    assert_eq!(everything.total, exact(4));
    assert_eq!(everything.items[2], webhook_of(store, wb1.id).await);

    // The failing streak, alone and with the account.
    assert_eq!(find(q().failing_at_least(1)).await, [wa1.id, wb1.id]);
    assert_eq!(find(q().failing_at_least(3)).await, [wb1.id]);
    assert!(find(q().failing_at_least(4)).await.is_empty());
    assert_eq!(find(q().failing_at_least(1).account(a)).await, [wa1.id]);
    assert_eq!(find(q().failing_at_least(0)).await, streaks);

    // Enabled or disabled, and why.
    assert_eq!(find(q().enabled(false)).await, [wa2.id]);
    assert_eq!(
        find(q().disabled_for(DisabledReason::Manual)).await,
        [wa2.id]
    );
    assert!(
        find(q().disabled_for(DisabledReason::Gone))
            .await
            .is_empty()
    );
    assert_eq!(find(q().enabled(true)).await, [wa1.id, wb1.id, wb2.id]);
    assert_eq!(find(q().enabled(true).account(b)).await, [wb1.id, wb2.id]);
    assert!(find(q().account(b.absent())).await.is_empty());

    // Disabling and enabling again clears the streak.
    for enabled in [false, true] {
        let patch = WebhookPatch {
            enabled: Some(enabled),
            ..WebhookPatch::default()
        };
        store
            .update_webhook(Some(b), wb1.id, patch, at(40))
            .await
            .unwrap();
    }
    assert_eq!(webhook_of(store, wb1.id).await.failed_attempts, 0);
    assert_eq!(find(q().failing_at_least(1)).await, [wa1.id]);

    // Pages and the count's limit.
    let third = store.find_webhooks(&q(), page(3, 1)).await.unwrap();
    assert_eq!(
        (listed(&third, |w| w.id), third.total),
        (vec![wb1.id], exact(4))
    );
    let limited = store
        .find_webhooks(&q().count_limit(3), page(2, 2))
        .await
        .unwrap();
    assert_eq!(
        (listed(&limited, |w| w.id), limited.total),
        (vec![wb1.id, wb2.id], at_least(3))
    );
}
