//! Idempotency records.

use chrono::{DateTime, Duration, Utc};

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// Started, InFlight, Mismatch, Replay (bytes exact), expiry via `expires_before`, and scopes
/// per account.
pub async fn idempotency_start_in_flight_mismatch_replay_expiry(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let s = claim(a.id, "order-42");
    let t0 = at(0);
    assert_eq!(begin(store, &s, "f1", t0).await, IdempotencyBegin::Started);
    assert_eq!(
        begin(store, &s, "f1", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::InFlight
    );
    assert_eq!(
        begin(store, &s, "f2", t0 + Duration::seconds(2)).await,
        IdempotencyBegin::Mismatch
    );
    let response = StoredResponse {
        status: 201,
        body: vec![b'{', 0, 159, 255, b'}', 0xd8, 0xa7],
    };
    store.finish_idempotent(&s, response.clone()).await.unwrap();
    assert_eq!(
        begin(store, &s, "f1", t0 + Duration::hours(23)).await,
        IdempotencyBegin::Replay(response.clone())
    );
    assert_eq!(
        begin(store, &s, "f2", t0 + Duration::hours(23)).await,
        IdempotencyBegin::Mismatch
    );
    // Another account's identical key is another scope.
    assert_eq!(
        begin(store, &claim(b.id, "order-42"), "f1", t0).await,
        IdempotencyBegin::Started
    );
    // Keys are exact (case-sensitive).
    assert_eq!(
        begin(store, &claim(a.id, "ORDER-42"), "f1", t0).await,
        IdempotencyBegin::Started
    );
    // Past the expiry, the record counts as absent: a new request starts, even with other data.
    let later = t0 + Duration::hours(25);
    assert_eq!(
        begin(store, &s, "f2", later).await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        begin(store, &s, "f2", later + Duration::seconds(1)).await,
        IdempotencyBegin::InFlight
    );
    assert_eq!(
        begin(store, &s, "f1", later + Duration::seconds(1)).await,
        IdempotencyBegin::Mismatch
    );
    // The boundary: a record created exactly at `expires_before` is live.
    let s2 = claim(a.id, "edge");
    assert_eq!(begin(store, &s2, "f", t0).await, IdempotencyBegin::Started);
    store
        .finish_idempotent(
            &s2,
            StoredResponse {
                status: 200,
                body: vec![],
            },
        )
        .await
        .unwrap();
    let edge = store
        .begin_idempotent(&s2, "f", t0 + Duration::hours(24), t0, t0)
        .await
        .unwrap();
    assert_eq!(
        edge,
        IdempotencyBegin::Replay(StoredResponse {
            status: 200,
            body: vec![]
        })
    );
    let unknown = store
        .finish_idempotent(
            &claim(a.id, "never-begun"),
            StoredResponse {
                status: 201,
                body: vec![],
            },
        )
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
}

/// An in-flight record older than `stale_before` is taken over (Started) unless it was linked
/// to an order (Recovered); a finished record is always replayed.
pub async fn idempotency_stale_record_is_taken_over_or_recovered(store: &dyn Store) {
    let f = fixture(store, 10, 10).await;
    let s = claim(f.account.id, "stale");
    let t0 = at(0);
    assert_eq!(begin(store, &s, "f1", t0).await, IdempotencyBegin::Started);
    let at_with = |now: DateTime<Utc>, stale: DateTime<Utc>, fp: &'static str| {
        let s = s.clone();
        async move {
            store
                .begin_idempotent(&s, fp, now, t0 - Duration::hours(24), stale)
                .await
                .unwrap()
        }
    };
    // Not yet stale at the boundary (created_at == stale_before).
    assert_eq!(
        at_with(t0 + Duration::seconds(10), t0, "f1").await,
        IdempotencyBegin::InFlight
    );
    // Stale: taken over, and the takeover's own record is fresh.
    assert_eq!(
        at_with(t0 + Duration::seconds(10), t0 + Duration::seconds(5), "f1").await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        at_with(t0 + Duration::seconds(11), t0 + Duration::seconds(5), "f1").await,
        IdempotencyBegin::InFlight
    );
    // A stale record with other data is still a mismatch.
    assert_eq!(
        at_with(
            t0 + Duration::seconds(100),
            t0 + Duration::seconds(50),
            "f2"
        )
        .await,
        IdempotencyBegin::Mismatch
    );
    // Linked to an order: recovered, not restarted.
    let mut order = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 1, false)],
        12,
    );
    order.idempotency = Some(s.clone());
    let placed = place(store, order).await;
    assert_eq!(
        at_with(
            t0 + Duration::seconds(200),
            t0 + Duration::seconds(100),
            "f1"
        )
        .await,
        IdempotencyBegin::Recovered(Created::Order(placed.id))
    );
    // A finished record is replayed however old it is (within the expiry).
    store
        .finish_idempotent(
            &s,
            StoredResponse {
                status: 201,
                body: b"ok".to_vec(),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        at_with(t0 + Duration::hours(2), t0 + Duration::hours(1), "f1").await,
        IdempotencyBegin::Replay(StoredResponse {
            status: 201,
            body: b"ok".to_vec()
        })
    );
}

/// `abandon_idempotent` removes only an in-flight record without response or order.
pub async fn abandon_removes_only_unanswered_unlinked_records(store: &dyn Store) {
    let f = fixture(store, 10, 10).await;
    let t0 = at(0);
    let open = claim(f.account.id, "open");
    assert_eq!(
        begin(store, &open, "f1", t0).await,
        IdempotencyBegin::Started
    );
    store.abandon_idempotent(&open).await.unwrap();
    // Gone: the key can be reused at once, with other data too.
    assert_eq!(
        begin(store, &open, "f2", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::Started
    );

    let answered = claim(f.account.id, "answered");
    assert_eq!(
        begin(store, &answered, "f1", t0).await,
        IdempotencyBegin::Started
    );
    let response = StoredResponse {
        status: 201,
        body: b"{}".to_vec(),
    };
    store
        .finish_idempotent(&answered, response.clone())
        .await
        .unwrap();
    store.abandon_idempotent(&answered).await.unwrap();
    assert_eq!(
        begin(store, &answered, "f1", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::Replay(response)
    );

    let linked = claim(f.account.id, "linked");
    assert_eq!(
        begin(store, &linked, "f1", t0).await,
        IdempotencyBegin::Started
    );
    let mut order = new_order(
        &f,
        f.account.id,
        &number(1),
        vec![line(&f, &f.variant, 1, false)],
        0,
    );
    order.idempotency = Some(linked.clone());
    let placed = place(store, order).await;
    store.abandon_idempotent(&linked).await.unwrap();
    assert_eq!(
        begin(store, &linked, "f1", t0 + Duration::seconds(1)).await,
        IdempotencyBegin::InFlight
    );
    assert_eq!(
        begin(store, &linked, "f1", t0 + Duration::minutes(5)).await,
        IdempotencyBegin::Recovered(Created::Order(placed.id))
    );
    // Abandoning an unknown scope is a no-op.
    store
        .abandon_idempotent(&claim(f.account.id, "unknown"))
        .await
        .unwrap();
}

/// `purge_idempotency` deletes records created strictly before the instant and counts them.
pub async fn purge_deletes_only_older_records_and_counts(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let t0 = at(0);
    let scopes: Vec<_> = (0..3).map(|i| claim(a.id, &format!("k{i}"))).collect();
    for (i, s) in scopes.iter().enumerate() {
        assert_eq!(
            begin(store, s, "f", t0 + Duration::seconds(10 * i as i64)).await,
            IdempotencyBegin::Started
        );
    }
    store
        .finish_idempotent(
            &scopes[1],
            StoredResponse {
                status: 201,
                body: b"x".to_vec(),
            },
        )
        .await
        .unwrap();
    assert_eq!(store.purge_idempotency(t0).await.unwrap(), 0);
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::seconds(10))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::seconds(10))
            .await
            .unwrap(),
        0
    );
    // The purged key starts afresh; the others are untouched.
    assert_eq!(
        begin(store, &scopes[0], "other", t0 + Duration::seconds(30)).await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        begin(store, &scopes[1], "f", t0 + Duration::seconds(30)).await,
        IdempotencyBegin::Replay(StoredResponse {
            status: 201,
            body: b"x".to_vec()
        })
    );
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::seconds(21))
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store
            .purge_idempotency(t0 + Duration::hours(1))
            .await
            .unwrap(),
        1
    );
}

/// Fenced: the original request begins and stalls before placing, past the stale time; a
/// retry takes the record over, places its order and keeps its response. When the original
/// resumes, its order is refused and writes nothing (no order, stock, meter entry or webhook
/// event), its finish and abandon change nothing, and a third request replays the retry's
/// response: one order for the key.
pub async fn a_request_that_outlived_the_stale_time_places_nothing(store: &dyn Store) {
    let f = fixture(store, 10, 10).await;
    let endpoint = store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(f.account.id)
                .url("https://a.example".to_owned())
                .secret(WebhookSecret::new("whsec_a"))
                .created_at(at(0))
                .events(EventSelection::Only(vec![EventType::OrderCreated]))
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await
        .expect("insert webhook");
    let original = claim(f.account.id, "slow");
    let retry = another_request(&original, 2);
    let t0 = at(0);
    assert_eq!(
        begin(store, &original, "f", t0).await,
        IdempotencyBegin::Started
    );
    // The original stalls; past the stale time (60 s) the retry takes the record over.
    assert_eq!(
        begin(store, &retry, "f", t0 + Duration::seconds(61)).await,
        IdempotencyBegin::Started
    );
    let placed = place(store, order_under(&f, &retry, 1, 61)).await;
    let response = StoredResponse {
        status: 201,
        body: b"the retry's order".to_vec(),
    };
    store
        .finish_idempotent(&retry, response.clone())
        .await
        .unwrap();

    // The original resumes.
    let late = store.place_order(order_under(&f, &original, 2, 62)).await;
    assert!(
        matches!(late, Err(PlaceOrderError::IdempotencyLost)),
        "{late:?}"
    );
    assert_eq!(
        order_ids(&all_orders(store, f.account.id).await),
        vec![placed.id]
    );
    assert_eq!(available(store, f.product.id, f.variant.id).await, 9);
    assert_eq!(meter_ops(store, f.account.id).await, 1);
    let queued = store
        .deliveries(None, endpoint.id, None, page(1, 100))
        .await
        .expect("deliveries")
        .expect("webhook exists");
    assert_eq!(queued.total, 1, "one order.created event");
    let finished = store
        .finish_idempotent(
            &original,
            StoredResponse {
                status: 201,
                body: b"the original's order".to_vec(),
            },
        )
        .await;
    assert!(
        matches!(finished, Err(StoreError::NotFound)),
        "{finished:?}"
    );
    store.abandon_idempotent(&original).await.unwrap();
    assert_eq!(
        begin(
            store,
            &another_request(&original, 3),
            "f",
            t0 + Duration::seconds(63)
        )
        .await,
        IdempotencyBegin::Replay(response)
    );
}

/// Fenced: a request that lost its record to a retry can neither abandon it (the retry's
/// record stays in flight) nor keep its response over the retry's (after a recovery), and an
/// order under a claim that holds no record is refused.
pub async fn a_request_that_lost_its_record_can_neither_abandon_nor_finish_it(store: &dyn Store) {
    let f = fixture(store, 10, 10).await;
    let t0 = at(0);
    let seconds = |s: i64| t0 + Duration::seconds(s);

    // The original ends in an error after the retry took over: its abandon comes late.
    let original = claim(f.account.id, "abandoned-late");
    let retry = another_request(&original, 2);
    let third = another_request(&original, 3);
    assert_eq!(
        begin(store, &original, "f", t0).await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        begin(store, &retry, "f", seconds(61)).await,
        IdempotencyBegin::Started
    );
    store.abandon_idempotent(&original).await.unwrap();
    assert_eq!(
        begin(store, &third, "f", seconds(62)).await,
        IdempotencyBegin::InFlight
    );
    // The holder's own abandon still forgets it.
    store.abandon_idempotent(&retry).await.unwrap();
    assert_eq!(
        begin(store, &third, "other data", seconds(63)).await,
        IdempotencyBegin::Started
    );

    // The original placed its order and stalled before keeping its response: the retry
    // recovers that order and keeps its own response, which the original cannot overwrite.
    let original = claim(f.account.id, "finished-late");
    let retry = another_request(&original, 2);
    assert_eq!(
        begin(store, &original, "f", t0).await,
        IdempotencyBegin::Started
    );
    let placed = place(store, order_under(&f, &original, 1, 1)).await;
    assert_eq!(
        begin(store, &retry, "f", seconds(61)).await,
        IdempotencyBegin::Recovered(Created::Order(placed.id))
    );
    let kept = StoredResponse {
        status: 201,
        body: b"recovered".to_vec(),
    };
    store.finish_idempotent(&retry, kept.clone()).await.unwrap();
    let late = store
        .finish_idempotent(
            &original,
            StoredResponse {
                status: 201,
                body: b"late".to_vec(),
            },
        )
        .await;
    assert!(matches!(late, Err(StoreError::NotFound)), "{late:?}");
    assert_eq!(
        begin(store, &another_request(&original, 3), "f", seconds(62)).await,
        IdempotencyBegin::Replay(kept)
    );

    // A claim on a key never begun holds nothing.
    let stranger = claim(f.account.id, "never-begun");
    let refused = store.place_order(order_under(&f, &stranger, 2, 3)).await;
    assert!(
        matches!(refused, Err(PlaceOrderError::IdempotencyLost)),
        "{refused:?}"
    );
    assert_eq!(
        order_ids(&all_orders(store, f.account.id).await),
        vec![placed.id]
    );
    assert_eq!(available(store, f.product.id, f.variant.id).await, 9);
}
