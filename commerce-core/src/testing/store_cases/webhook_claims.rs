//! The dispatcher's claims: due deliveries only, exclusive per lease, each order's events in
//! order, each endpoint within its in-flight limit and held while its breaker is open; the
//! outcome of an attempt and the purge of old deliveries.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::domain::delivery::{FAILING_FOR, RETRY_SCHEDULE};
use crate::model::*;
use crate::store::*;

use super::fixtures::*;

use super::webhook_outbox::body_of;
use super::webhooks::{
    attempt, claim, claim_within, deliver_due, deliveries_of, finish, order_event_for, outcome,
    ping, race_claims, register, webhook_of,
};

/// Claims: due ones only, exclusive per lease, again once a lease ran out; a wrong lease
/// records nothing; an attempt is recorded with its outcome and releases the lease.
pub async fn claims_are_due_exclusive_and_leased(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(store, a.id, "https://a.example", EventType::SUBSCRIBABLE, 0).await;
    let first = ping(store, w.id, 10).await;
    let second = ping(store, w.id, 11).await;
    let later = ping(store, w.id, 100).await;
    assert!(
        claim(store, 9, "early", 10).await.is_empty(),
        "nothing due yet"
    );
    let one = claim(store, 50, "one", 1).await;
    assert_eq!(one, vec![first.id], "oldest first, up to the limit");
    let two = claim(store, 50, "two", 10).await;
    assert_eq!(
        two,
        vec![second.id],
        "the other lease's delivery is not claimed again"
    );
    assert!(claim(store, 60, "three", 10).await.is_empty());

    // A wrong lease writes nothing.
    let ok = outcome(AttemptResult::Answered(204), 1, at(61));
    assert!(!finish(store, first.id, "two", ok.clone()).await);
    assert_eq!(
        deliveries_of(store, w.id)
            .await
            .iter()
            .find(|d| d.id == first.id),
        Some(&first)
    );
    assert!(finish(store, first.id, "one", ok.clone()).await);
    assert!(
        !finish(store, first.id, "one", ok).await,
        "the lease is released"
    );
    let delivered = store
        .deliveries(None, w.id, Some(DeliveryStatus::Delivered), page(1, 10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivered.total, 1);
    let d = &delivered.items[0];
    assert_eq!(
        (d.id, d.status, d.attempts),
        (first.id, DeliveryStatus::Delivered, 1)
    );
    assert_eq!(
        (d.next_attempt_at, d.last_attempt_at, d.last_status_code),
        (None, Some(at(61)), Some(204))
    );

    // `second`'s lease (until 80) runs out: another dispatcher takes it over, and the first
    // one's late attempt is not recorded.
    assert!(claim(store, 79, "four", 10).await.is_empty());
    assert_eq!(claim(store, 80, "four", 10).await, vec![second.id]);
    let failed = outcome(
        AttemptResult::NoAnswer("connection refused".into()),
        1,
        at(81),
    );
    assert!(!finish(store, second.id, "two", failed.clone()).await);
    assert!(finish(store, second.id, "four", failed).await);
    let pending = store
        .deliveries(None, w.id, Some(DeliveryStatus::Pending), page(1, 10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ids(&pending.items, |d| d.id), vec![later.id, second.id]);
    let retried = &pending.items[1];
    assert_eq!(retried.attempts, 1);
    assert_eq!(retried.next_attempt_at, Some(at(81) + RETRY_SCHEDULE[0]));
    assert_eq!(
        (retried.last_status_code, retried.last_error.as_deref()),
        (None, Some("connection refused"))
    );
    assert_eq!(webhook_of(store, w.id).await.failing_since, Some(at(81)));
    assert!(
        claim(store, 85, "five", 10).await.is_empty(),
        "not before the wait"
    );
    assert_eq!(
        claim(store, 86, "five", 10).await,
        vec![second.id],
        "due again after the wait"
    );
    assert_eq!(claim(store, 100, "six", 10).await, vec![later.id]);
    let ok = outcome(AttemptResult::Answered(200), 2, at(101));
    assert!(finish(store, second.id, "five", ok.clone()).await);
    assert!(finish(store, later.id, "six", ok).await);

    // A redelivery is a new pending delivery of the same event, due now.
    let again = store
        .redeliver(Some(a.id), w.id, first.id, at(200), MAX_PENDING_MANUAL)
        .await
        .unwrap();
    assert_ne!(again.id, first.id);
    assert_eq!(
        (again.event_id.clone(), body_of(&again)),
        (first.event_id.clone(), body_of(&first))
    );
    assert_eq!(
        (again.status, again.attempts, again.next_attempt_at),
        (DeliveryStatus::Pending, 0, Some(at(200)))
    );
    assert_eq!(claim(store, 200, "seven", 10).await, vec![again.id]);
}

/// The deliveries of one order to one endpoint go out one at a time, in order: the second
/// is not claimable while the first is pending (even when the first waits for a retry), and
/// is once the first is delivered or failed. Other orders and endpoints are not held up.
pub async fn claims_keep_each_orders_events_in_order(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(
        store,
        a.id,
        "https://a.example/1",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let w2 = register(
        store,
        a.id,
        "https://a.example/2",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let (x, y) = (OrderId::new(1_000_001), OrderId::new(1_000_002));
    let x1 = order_event_for(store, w.id, x, 10).await;
    let x2 = order_event_for(store, w.id, x, 11).await;
    let x3 = order_event_for(store, w.id, x, 12).await;
    let y1 = order_event_for(store, w.id, y, 13).await;
    let x_other = order_event_for(store, w2.id, x, 14).await;
    let claimed = claim(store, 20, "l1", 10).await;
    assert_eq!(claimed, vec![x1.id, y1.id, x_other.id]);
    // x1 fails once: x2 still waits behind it, even when x1 is not due.
    let retry = outcome(AttemptResult::Answered(500), 1, at(21));
    assert!(finish(store, x1.id, "l1", retry).await);
    assert!(claim(store, 22, "l2", 10).await.is_empty());
    assert_eq!(claim(store, 26, "l3", 10).await, vec![x1.id]);
    assert!(attempt(store, x1.id, "l3", AttemptResult::Answered(200), 2, 27).await);
    assert_eq!(claim(store, 28, "l4", 10).await, vec![x2.id]);
    // A failed delivery (410) no longer holds the next one back.
    assert!(attempt(store, x2.id, "l4", AttemptResult::Answered(410), 1, 29).await);
    let gone = webhook_of(store, w.id).await;
    assert!(!gone.enabled);
    assert!(
        claim(store, 30, "l5", 10).await.is_empty(),
        "a disabled endpoint's deliveries wait"
    );
    let enable = WebhookPatch {
        enabled: Some(true),
        ..Default::default()
    };
    store
        .update_webhook(None, w.id, enable, at(31))
        .await
        .unwrap();
    assert_eq!(claim(store, 32, "l6", 10).await, vec![x3.id]);
}

/// An outcome that disables the endpoint (failing for 5 days) records the reason.
pub async fn a_failing_endpoint_is_disabled_by_the_outcome(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(store, a.id, "https://a.example", EventType::SUBSCRIBABLE, 0).await;
    let d = ping(store, w.id, 10).await;
    assert_eq!(claim(store, 10, "l", 1).await, vec![d.id]);
    let since = at(10) - FAILING_FOR;
    let o = AttemptResult::Answered(503).decide(1, at(10), Some(since));
    assert_eq!(o.disable, Some(DisabledReason::Failing));
    assert!(finish(store, d.id, "l", o).await);
    let w = webhook_of(store, w.id).await;
    assert!(!w.enabled);
    assert_eq!(w.disabled_reason, Some(DisabledReason::Failing));
    assert_eq!((w.failing_since, w.updated_at), (Some(since), at(10)));
    // An endpoint that answers again ends its streak.
    let enable = WebhookPatch {
        enabled: Some(true),
        ..Default::default()
    };
    store
        .update_webhook(None, w.id, enable, at(20))
        .await
        .unwrap();
    let d2 = ping(store, w.id, 20).await;
    let mut due = claim(store, 30, "m", 10).await;
    due.sort();
    assert_eq!(due, vec![d.id, d2.id], "the first is retried too");
    let o = AttemptResult::Answered(500).decide(2, at(31), Some(at(25)));
    assert!(finish(store, d2.id, "m", o).await);
    assert_eq!(webhook_of(store, w.id).await.failing_since, Some(at(25)));
    assert!(attempt(store, d.id, "m", AttemptResult::Answered(200), 2, 32).await);
    let w = webhook_of(store, w.id).await;
    assert_eq!(
        (w.enabled, w.failing_since, w.updated_at),
        (true, None, at(20))
    );
}

/// Purging deletes the deliveries created before the cut that are delivered or failed.
pub async fn purging_deletes_only_old_finished_deliveries(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let w = register(store, a.id, "https://a.example", EventType::SUBSCRIBABLE, 0).await;
    let delivered = ping(store, w.id, 10).await;
    let failed = ping(store, w.id, 11).await;
    let pending = ping(store, w.id, 12).await;
    let recent = ping(store, w.id, 100).await;
    let claimed = claim(store, 100, "l", 10).await;
    assert_eq!(claimed.len(), 4);
    assert!(
        attempt(
            store,
            delivered.id,
            "l",
            AttemptResult::Answered(200),
            1,
            101
        )
        .await
    );
    assert!(attempt(store, failed.id, "l", AttemptResult::Answered(410), 1, 101).await);
    assert!(attempt(store, recent.id, "l", AttemptResult::Answered(200), 1, 101).await);
    assert_eq!(store.purge_deliveries(at(50)).await.unwrap(), 2);
    assert_eq!(
        ids(&deliveries_of(store, w.id).await, |d| d.id),
        vec![recent.id, pending.id]
    );
    assert_eq!(store.purge_deliveries(at(50)).await.unwrap(), 0);
}

/// 8 dispatchers claiming and finishing 60 due deliveries at once: each is claimed and
/// delivered exactly once.
pub async fn concurrent_claims_never_share_a_delivery(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    let w1 = register(
        &*store,
        a.id,
        "https://a.example/1",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let w2 = register(
        &*store,
        a.id,
        "https://a.example/2",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let mut queued = BTreeSet::new();
    for n in 0..30 {
        queued.insert(ping(&*store, w1.id, n).await.id);
        queued.insert(
            order_event_for(&*store, w2.id, OrderId::new(2_000_000 + n % 7), n)
                .await
                .id,
        );
    }
    let mut tasks = Vec::new();
    for t in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let lease = format!("dispatcher-{t}");
            let mut mine = Vec::new();
            let mut idle = 0;
            while idle < 3 {
                let delivered = deliver_due(&*store, 1_000, &lease, 3).await;
                if delivered.is_empty() {
                    idle += 1;
                    tokio::task::yield_now().await;
                } else {
                    idle = 0;
                    mine.extend(delivered);
                }
            }
            mine
        }));
    }
    let mut seen = Vec::new();
    for task in tasks {
        seen.extend(task.await.expect("task"));
    }
    // What the order of events held back until the dispatchers had stopped.
    loop {
        let left = deliver_due(&*store, 1_000, "last", 100).await;
        if left.is_empty() {
            break;
        }
        seen.extend(left);
    }
    let delivered: BTreeSet<DeliveryId> = seen.iter().copied().collect();
    assert_eq!(delivered.len(), seen.len(), "a delivery was claimed twice");
    assert_eq!(delivered, queued);
    let pending = store
        .deliveries(None, w2.id, Some(DeliveryStatus::Pending), page(1, 100))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pending.total, 0);
}

/// At most `per_endpoint` deliveries of one endpoint are under a live lease, whoever claimed
/// them: a claim passes over the due deliveries of an endpoint that has as many in flight as
/// it may and takes others' behind them (another account's first: it has fewer in flight); an
/// attempt recorded, or a lease run out, frees a slot.
pub async fn claims_keep_each_endpoint_within_its_in_flight_limit(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let busy = register(store, a.id, "https://a.example", EventType::SUBSCRIBABLE, 0).await;
    let other = register(store, b.id, "https://b.example", EventType::SUBSCRIBABLE, 0).await;
    let mut queued = Vec::new();
    for n in 1..=6 {
        queued.push(ping(store, busy.id, n).await.id);
    }
    let theirs = [
        ping(store, other.id, 7).await.id,
        ping(store, other.id, 8).await.id,
    ];
    let first = claim_within(store, 10, "one", 5, 4).await;
    assert_eq!(
        first,
        vec![queued[0], queued[1], queued[2], theirs[0], theirs[1]],
        "the fifth of the busy endpoint waits; the other account's are taken behind it, \
         ahead of the busy account's fourth (the fewest in flight first)"
    );
    assert_eq!(
        claim_within(store, 10, "two", 10, 4).await,
        vec![queued[3]],
        "another dispatcher's claim counts the first one's leases"
    );
    assert!(claim_within(store, 11, "three", 10, 4).await.is_empty());
    assert!(attempt(store, queued[0], "one", AttemptResult::Answered(200), 1, 12).await);
    assert_eq!(
        claim_within(store, 12, "three", 10, 4).await,
        vec![queued[4]],
        "a recorded attempt frees its slot"
    );
    // The first claim's leases (until 40) run out: their slots are free again.
    assert!(claim_within(store, 39, "four", 10, 4).await.is_empty());
    let mut after = claim_within(store, 40, "four", 10, 4).await;
    after.sort();
    assert_eq!(
        after,
        vec![queued[1], queued[2], queued[3], theirs[0], theirs[1]],
        "three of the busy endpoint (one is still in flight), the other's two"
    );
}

/// Dispatchers claiming at once never hold more than `per_endpoint` deliveries of one
/// endpoint between them (the limit is decided in the claim, across claims).
pub async fn concurrent_claims_keep_the_per_endpoint_limit(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    let w1 = register(
        &*store,
        a.id,
        "https://a.example/1",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let w2 = register(
        &*store,
        a.id,
        "https://a.example/2",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    for n in 0..20 {
        ping(&*store, w1.id, n).await;
        ping(&*store, w2.id, n).await;
    }
    let mut per_endpoint = std::collections::BTreeMap::new();
    for claimed in race_claims(store, 3, usize::MAX).await {
        *per_endpoint.entry(claimed.delivery.webhook_id).or_insert(0) += 1;
    }
    assert_eq!(
        per_endpoint,
        [(w1.id, 3), (w2.id, 3)].into_iter().collect(),
        "three in flight per endpoint, whoever claimed them"
    );
}

/// Queues a ping for `webhook` at `now`, claims what is due then and records every claimed
/// attempt as `result` at `now`; the ids claimed.
async fn attempt_all(
    store: &dyn Store,
    webhook: WebhookId,
    now: i64,
    result: AttemptResult,
) -> Vec<DeliveryId> {
    ping(store, webhook, now).await;
    let lease = format!("lease-{now}");
    let claimed = claim(store, now, &lease, 100).await;
    for id in &claimed {
        assert!(attempt(store, *id, &lease, result.clone(), 1, now).await);
    }
    claimed
}

/// After 5 unreachable attempts in a row an endpoint's breaker opens: none of its deliveries
/// (a new ping, a redelivery, retries) is claimed until its wait has passed, other endpoints'
/// are; an unreachable attempt after the wait opens it for the next wait of the schedule; a
/// success closes it. HTTP error answers do not open it; enabling the endpoint closes it.
pub async fn an_open_breaker_holds_its_endpoints_deliveries_until_its_wait(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let dead = register(
        store,
        a.id,
        "https://a.example/dead",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let fine = register(
        store,
        a.id,
        "https://a.example/fine",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let timeout = || AttemptResult::Unreachable("timeout".into());
    for now in 100..104 {
        assert_eq!(attempt_all(store, dead.id, now, timeout()).await.len(), 1);
    }
    let streak = webhook_of(store, dead.id).await.breaker;
    assert_eq!(
        streak,
        Breaker {
            failures: 4,
            open_until: None
        }
    );
    assert_eq!(attempt_all(store, dead.id, 104, timeout()).await.len(), 1);
    let open = webhook_of(store, dead.id).await.breaker;
    assert_eq!(
        open,
        Breaker {
            failures: 5,
            open_until: Some(at(104) + RETRY_SCHEDULE[0])
        }
    );
    // Open: a ping, a redelivery and the retries (due from 105) wait; the other endpoint not.
    let pinged = ping(store, dead.id, 105).await;
    let again = store
        .redeliver(None, dead.id, pinged.id, at(105), MAX_PENDING_MANUAL)
        .await
        .unwrap();
    let other = ping(store, fine.id, 105).await;
    assert_eq!(claim(store, 108, "open", 100).await, vec![other.id]);
    assert!(
        attempt(
            store,
            other.id,
            "open",
            AttemptResult::Answered(200),
            1,
            108
        )
        .await
    );
    // The wait passed: the endpoint's deliveries are claimed again.
    let retried = claim(store, 109, "probe", 100).await;
    assert!(retried.contains(&pinged.id) && retried.contains(&again.id));
    assert_eq!(
        retried.len(),
        7,
        "the five retries, the ping and the redelivery"
    );
    // The first unreachable attempt after the wait opens it for the next wait (5 min);
    // the attempts sent with it, ending while it is open, change nothing.
    for id in &retried {
        assert!(attempt(store, *id, "probe", timeout(), 2, 110).await);
    }
    let reopened = webhook_of(store, dead.id).await.breaker;
    assert_eq!(
        reopened,
        Breaker {
            failures: 6,
            open_until: Some(at(110) + RETRY_SCHEDULE[1])
        }
    );
    let until = 110 + RETRY_SCHEDULE[1].num_seconds();
    assert!(claim(store, until - 1, "still", 100).await.is_empty());
    let probe = claim(store, until, "later", 1).await;
    assert_eq!(probe.len(), 1);
    assert!(
        attempt(
            store,
            probe[0],
            "later",
            AttemptResult::Answered(204),
            3,
            until
        )
        .await
    );
    assert_eq!(
        webhook_of(store, dead.id).await.breaker,
        Breaker::CLOSED,
        "a success closes it"
    );
    assert_eq!(
        claim(store, until, "closed", 100).await.len(),
        6,
        "the rest at once"
    );

    // HTTP error answers are answers: they do not open it.
    let answering = register(
        store,
        a.id,
        "https://a.example/500",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    for now in 1_000..1_006 {
        attempt_all(store, answering.id, now, AttemptResult::Answered(500)).await;
    }
    assert_eq!(
        webhook_of(store, answering.id).await.breaker,
        Breaker::CLOSED
    );

    // Enabling an endpoint closes its breaker.
    let flaky = register(
        store,
        a.id,
        "https://a.example/flaky",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    for now in 2_000..2_005 {
        attempt_all(store, flaky.id, now, timeout()).await;
    }
    assert!(webhook_of(store, flaky.id).await.breaker.is_open(at(2_005)));
    for enabled in [false, true] {
        let patch = WebhookPatch {
            enabled: Some(enabled),
            ..Default::default()
        };
        store
            .update_webhook(None, flaky.id, patch, at(2_005))
            .await
            .unwrap();
    }
    assert_eq!(webhook_of(store, flaky.id).await.breaker, Breaker::CLOSED);
}

/// The backlog counts the due pending deliveries of enabled endpoints not under a live lease
/// (those waiting for an open breaker included), the pending ones under a live lease, and the
/// enabled endpoints whose breaker is open; a lease that ran out puts its delivery back among
/// the due ones.
pub async fn webhook_backlog_counts_due_leased_and_open_breakers(store: &dyn Store) {
    let backlog = |now: i64| async move { store.webhook_backlog(at(now)).await.unwrap() };
    let counts = |b: WebhookBacklog| (b.due, b.leased, b.open_breakers);
    let a = account(store, "Alpha").await;
    let dead = register(
        store,
        a.id,
        "https://a.example/dead",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let w = register(store, a.id, "https://a.example", EventType::SUBSCRIBABLE, 0).await;
    assert_eq!(backlog(0).await, WebhookBacklog::default());

    // Five unreachable attempts in a row (1 to 5) open `dead`'s breaker until 10; its retries
    // (due 5 s after each attempt) count as due while they wait for it.
    for now in 1..6 {
        let unreachable = AttemptResult::Unreachable("timeout".into());
        assert_eq!(attempt_all(store, dead.id, now, unreachable).await.len(), 1);
    }
    assert_eq!(
        counts(backlog(6).await),
        (1, 0, 1),
        "the retry of 1 is due, the breaker open"
    );
    assert_eq!(
        counts(backlog(10).await),
        (5, 0, 0),
        "every retry due, the breaker closed"
    );
    // A disabled endpoint's pending deliveries wait for it to be enabled: not in the backlog.
    let disable = WebhookPatch {
        enabled: Some(false),
        ..WebhookPatch::default()
    };
    store
        .update_webhook(None, dead.id, disable, at(11))
        .await
        .unwrap();
    assert_eq!(backlog(11).await, WebhookBacklog::default());

    let first = ping(store, w.id, 20).await;
    ping(store, w.id, 21).await;
    ping(store, w.id, 100).await;
    assert_eq!(counts(backlog(50).await), (2, 0, 0));
    assert_eq!(claim(store, 50, "one", 1).await, vec![first.id]);
    assert_eq!(counts(backlog(50).await), (1, 1, 0));
    assert_eq!(
        counts(backlog(80).await),
        (2, 0, 0),
        "the lease ran out at 80"
    );
    assert_eq!(counts(backlog(100).await), (3, 0, 0));
}
