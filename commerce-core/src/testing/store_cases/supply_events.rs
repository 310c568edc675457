//! The outbox of quotes and withdrawals: `quote.updated` on every move of a quote out of
//! `pending` (a decision, the end of a quote whose product moved, an expiry), and
//! `withdrawal.updated` on every decision, each written with its change to the endpoints of
//! the account it concerns, and only to those that receive its type.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::quotes::{offer, quote, supply};
use super::webhooks::{deliveries_of, register};

/// An endpoint of `account` registered without `events` (every type of its side).
async fn register_all(store: &dyn Store, account: AccountId, url: &str) -> Webhook {
    store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(account)
                .url(url.to_owned())
                .secret(WebhookSecret::new(format!("whsec_{url}")))
                .created_at(at(0))
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await
        .expect("insert webhook")
}

/// The quotes (as their events keep them) and the statuses they left, of the
/// `quote.updated` deliveries of `webhook`, oldest first.
async fn quote_events(store: &dyn Store, webhook: WebhookId) -> Vec<(Quote, QuoteStatus)> {
    let mut found: Vec<(Quote, QuoteStatus)> = deliveries_of(store, webhook)
        .await
        .into_iter()
        .filter(|d| d.event_type == EventType::QuoteUpdated)
        .map(|d| match d.snapshot {
            EventSnapshot::Quote { quote, previous } => ((*quote).clone(), previous),
            other => panic!("a quote event keeps its quote: {other:?}"),
        })
        .collect();
    found.reverse();
    found
}

/// The withdrawals (as their events keep them) of the `withdrawal.updated` deliveries of
/// `webhook`, oldest first.
async fn withdrawal_events(store: &dyn Store, webhook: WebhookId) -> Vec<Withdrawal> {
    let mut found: Vec<Withdrawal> = deliveries_of(store, webhook)
        .await
        .into_iter()
        .filter(|d| d.event_type == EventType::WithdrawalUpdated)
        .map(|d| match d.snapshot {
            EventSnapshot::Withdrawal {
                withdrawal,
                previous,
            } => {
                assert_eq!(previous, WithdrawalStatus::Pending);
                assert_eq!(d.status, DeliveryStatus::Pending);
                (*withdrawal).clone()
            }
            other => panic!("a withdrawal event keeps its withdrawal: {other:?}"),
        })
        .collect();
    found.reverse();
    found
}

/// Every decision of a quote (accepted, rejected, withdrawn) queues one `quote.updated`
/// delivery per endpoint of its supplier that receives the type, the quote as the decision
/// left it (as read) and `pending` as the status it left, due at the decision; an endpoint
/// that chose other types, another supplier's and a marketer's get nothing, and a refused
/// decision queues nothing.
pub async fn quote_decisions_queue_their_event_for_the_supplier(store: &dyn Store) {
    let s = supply(store, 5).await;
    let me = s.supplier.id;
    let all = register_all(store, me, "https://supplier.example/all").await;
    let chosen = register(
        store,
        me,
        "https://supplier.example/quotes",
        &[EventType::QuoteUpdated],
        0,
    )
    .await;
    let other_types = register(
        store,
        me,
        "https://supplier.example/w",
        &[EventType::WithdrawalUpdated],
        0,
    )
    .await;
    let rival = register_all(store, s.rival.id, "https://rival.example/all").await;
    let marketer = register_all(store, s.f.account.id, "https://marketer.example/all").await;

    let q1 = quote(store, offer(me, s.v1.id, "45.50", 3), 10).await;
    let q2 = quote(store, offer(me, s.v2.id, "20.00", 1), 11).await;
    assert!(quote_events(store, all.id).await.is_empty(), "a new quote");
    let accepted = store
        .decide_quote(None, q1.id, QuoteDecision::Accept { note: None }, at(20))
        .await
        .expect("accept");
    let rejected = store
        .decide_quote(
            None,
            q2.id,
            QuoteDecision::Reject {
                note: Some("غالي".into()),
            },
            at(30),
        )
        .await
        .expect("reject");
    let q3 = quote(store, offer(me, s.v2.id, "19.00", 1), 40).await;
    let withdrawn = store
        .decide_quote(Some(me), q3.id, QuoteDecision::Withdraw, at(50))
        .await
        .expect("withdraw");
    let refused = store
        .decide_quote(None, q1.id, QuoteDecision::Reject { note: None }, at(60))
        .await;
    assert!(
        matches!(refused, Err(QuoteDecisionError::NotPending { .. })),
        "{refused:?}"
    );

    for endpoint in [all.id, chosen.id] {
        let events = quote_events(store, endpoint).await;
        let expected = vec![
            (accepted.clone(), QuoteStatus::Pending),
            (rejected.clone(), QuoteStatus::Pending),
            (withdrawn.clone(), QuoteStatus::Pending),
        ];
        assert_eq!(events, expected, "endpoint {endpoint}");
        let due: Vec<_> = deliveries_of(store, endpoint)
            .await
            .iter()
            .rev()
            .map(|d| d.next_attempt_at)
            .collect();
        assert_eq!(due, [Some(at(20)), Some(at(30)), Some(at(50))]);
    }
    assert_eq!(
        ids(&[&accepted, &rejected, &withdrawn], |q| q.status),
        [
            QuoteStatus::Accepted,
            QuoteStatus::Rejected,
            QuoteStatus::Withdrawn
        ]
    );
    for endpoint in [other_types.id, rival.id, marketer.id] {
        assert!(
            deliveries_of(store, endpoint).await.is_empty(),
            "endpoint {endpoint} receives no quote event"
        );
    }
}

/// The moves no one decides queue their event too, once: a quote past its end written
/// `expired` by [`SupplyStore::expire_quotes`] (at most `limit`, a second sweep finds none)
/// or by the next quote on its variant, and a quote withdrawn by the platform because its
/// product moved to another supplier.
pub async fn expired_and_ended_quotes_queue_their_event_once(store: &dyn Store) {
    let s = supply(store, 5).await;
    let me = s.supplier.id;
    let endpoint = register_all(store, me, "https://supplier.example/all").await;
    let until = |seconds| at(seconds);
    let q1 = quote(
        store,
        NewQuote {
            valid_until: Some(until(100)),
            ..offer(me, s.v1.id, "45.50", 3)
        },
        10,
    )
    .await;
    let q2 = quote(
        store,
        NewQuote {
            valid_until: Some(until(150)),
            ..offer(me, s.v2.id, "20.00", 1)
        },
        11,
    )
    .await;
    assert_eq!(store.expire_quotes(at(99), 10).await.unwrap(), 0);
    assert_eq!(store.expire_quotes(at(200), 1).await.unwrap(), 1);
    assert_eq!(store.expire_quotes(at(200), 10).await.unwrap(), 1);
    assert_eq!(store.expire_quotes(at(300), 10).await.unwrap(), 0);
    let events = quote_events(store, endpoint.id).await;
    assert_eq!(ids(&events, |(q, _)| q.id), [q1.id, q2.id], "oldest first");
    for ((quote, previous), end) in events.iter().zip([100, 150]) {
        assert_eq!(*previous, QuoteStatus::Pending);
        assert_eq!(quote.status, QuoteStatus::Expired);
        assert_eq!(quote.updated_at, until(end), "expired at its end");
    }
    // Reads agree with the events.
    let read = store.quote(None, q1.id, at(400)).await.unwrap().unwrap();
    assert_eq!(read, events[0].0);

    // Expired, then replaced by the next quote on its variant: one event, whether the insert
    // wrote it expired (the memory and SQL stores) or the next sweep does.
    let q3 = quote(
        store,
        NewQuote {
            valid_until: Some(until(500)),
            ..offer(me, s.v1.id, "44.00", 2)
        },
        400,
    )
    .await;
    let q4 = quote(store, offer(me, s.v1.id, "43.00", 2), 600).await;
    assert!(store.expire_quotes(at(700), 10).await.unwrap() <= 1);
    assert_eq!(store.expire_quotes(at(700), 10).await.unwrap(), 0);
    // Moved to another supplier while pending: withdrawn by the platform, one event.
    let patch = ProductPatch {
        supplier_id: Some(Some(s.rival.id)),
        ..ProductPatch::default()
    };
    store
        .update_product(s.product.id, patch, at(800))
        .await
        .unwrap();
    let events = quote_events(store, endpoint.id).await;
    assert_eq!(ids(&events, |(q, _)| q.id), [q1.id, q2.id, q3.id, q4.id]);
    assert_eq!(events[2].0.status, QuoteStatus::Expired);
    assert_eq!(events[2].0.updated_at, until(500));
    assert_eq!(events[3].0.status, QuoteStatus::Withdrawn);
    assert_eq!(
        events[3].0.decision_note.as_deref(),
        Some(crate::domain::supply::MOVED_PRODUCT_NOTE)
    );
    assert_eq!(events[3].0.decided_at, Some(at(800)));
    assert!(events.iter().all(|(_, p)| *p == QuoteStatus::Pending));
}

/// Every decision of a withdrawal (paid or rejected) queues one `withdrawal.updated`
/// delivery per endpoint of its account that receives the type, a marketer's or a
/// supplier's, the withdrawal as the decision left it; another account's endpoints and a
/// refused decision get nothing.
pub async fn withdrawal_decisions_queue_their_event_for_the_account(store: &dyn Store) {
    let s = supply(store, 5).await;
    let f = &s.f;
    let (a, b) = (&f.account, &f.other);
    let mine = register_all(store, a.id, "https://a.example/all").await;
    let chosen = register(
        store,
        a.id,
        "https://a.example/w",
        &[EventType::WithdrawalUpdated],
        0,
    )
    .await;
    let orders_only = register(
        store,
        a.id,
        "https://a.example/o",
        &[EventType::OrderCreated],
        0,
    )
    .await;
    let theirs = register_all(store, b.id, "https://b.example/all").await;
    let supplier = register_all(store, s.supplier.id, "https://s.example/all").await;
    earn(store, f, a.id, d("300.00"), &number(1)).await;
    let request = |amount: &str, seconds: i64| {
        store.request_withdrawal(withdrawal(a.id, amount, None), no_hold(), at(seconds))
    };
    let w1 = request("100.00", 10).await.unwrap();
    let w2 = request("50.00", 11).await.unwrap();
    let paid = store
        .decide_withdrawal(
            w1.id,
            WithdrawalDecision::Complete {
                transfer_reference: "TR-1".into(),
                receipt_url: None,
            },
            at(20),
        )
        .await
        .unwrap();
    let rejected = store
        .decide_withdrawal(
            w2.id,
            WithdrawalDecision::Reject {
                notes: Some("رقم المحفظة غلط".into()),
            },
            at(30),
        )
        .await
        .unwrap();
    let again = store
        .decide_withdrawal(w2.id, WithdrawalDecision::Reject { notes: None }, at(40))
        .await;
    assert!(again.is_err(), "decided once: {again:?}");
    assert_eq!(
        (paid.status, rejected.status),
        (WithdrawalStatus::Completed, WithdrawalStatus::Rejected)
    );
    for endpoint in [mine.id, chosen.id] {
        let events = withdrawal_events(store, endpoint).await;
        assert_eq!(events, [paid.clone(), rejected.clone()], "{endpoint}");
    }
    for endpoint in [orders_only.id, theirs.id, supplier.id] {
        assert!(
            withdrawal_events(store, endpoint).await.is_empty(),
            "endpoint {endpoint}"
        );
    }
    assert!(
        deliveries_of(store, orders_only.id)
            .await
            .iter()
            .all(|d| d.event_type == EventType::OrderCreated)
    );
}

/// An endpoint registered without `events` is stored as "every type" (not as the list of
/// the types of its version): it receives the types this version added (`quote.updated`,
/// `withdrawal.updated`), as it will those of later versions; one registered with a list
/// receives only its list.
pub async fn a_webhook_without_events_receives_types_added_later(store: &dyn Store) {
    let s = supply(store, 5).await;
    let me = s.supplier.id;
    let all = register_all(store, me, "https://supplier.example/all").await;
    let listed = register(
        store,
        me,
        "https://supplier.example/orders",
        &[EventType::OrderCreated, EventType::OrderStatusChanged],
        0,
    )
    .await;
    let stored = store.webhook(None, all.id).await.unwrap().expect("webhook");
    assert_eq!(stored.events, EventSelection::All, "stored as every type");
    let q = quote(store, offer(me, s.v1.id, "45.50", 3), 10).await;
    store
        .decide_quote(None, q.id, QuoteDecision::Reject { note: None }, at(20))
        .await
        .unwrap();
    let kinds = |deliveries: Vec<Delivery>| ids(&deliveries, |d| d.event_type);
    assert_eq!(
        kinds(deliveries_of(store, all.id).await),
        [EventType::QuoteUpdated]
    );
    assert!(deliveries_of(store, listed.id).await.is_empty());
}
