//! The dispatcher's claims across accounts: at most `per_account` deliveries of one account
//! under a live lease, whoever claimed them, and the accounts with the fewest in flight served
//! first.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::webhooks::{attempt, claim_capped, ping, race_claims, register};

/// At most `per_account` deliveries of one account are under a live lease, whoever claimed
/// them, and a claim takes one at a time from the account with the fewest in flight: a busy
/// account's older backlog does not go before a quiet account's newer events; a claim counts
/// the leases of the claims before it; an attempt recorded frees a slot of the account.
pub async fn claims_serve_the_accounts_with_the_fewest_in_flight_first(store: &dyn Store) {
    let busy = account(store, "Busy").await;
    let quiet = account(store, "Quiet").await;
    let third = account(store, "Third").await;
    let mut busy_pings = Vec::new();
    for (n, url) in ["https://a.example/1", "https://a.example/2"]
        .into_iter()
        .enumerate()
    {
        let endpoint = register(store, busy.id, url, EventType::SUBSCRIBABLE, 0).await;
        for k in 1..=2 {
            busy_pings.push(ping(store, endpoint.id, 2 * n as i64 + k).await.id);
        }
    }
    let q = register(
        store,
        quiet.id,
        "https://q.example",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let quiet_pings = [
        ping(store, q.id, 10).await.id,
        ping(store, q.id, 11).await.id,
    ];
    let t = register(
        store,
        third.id,
        "https://t.example",
        EventType::SUBSCRIBABLE,
        0,
    )
    .await;
    let third_ping = ping(store, t.id, 12).await.id;

    // 2 per endpoint, 3 per account: the busy account's 4 are the oldest, yet the claim
    // alternates between the accounts, the one with the fewest in flight first.
    let first = claim_capped(store, 20, "one", 4, 2, 3).await;
    assert_eq!(
        first,
        vec![busy_pings[0], busy_pings[1], quiet_pings[0], third_ping],
        "one each, then the busy account's second (ties go to the oldest)"
    );
    assert_eq!(
        claim_capped(store, 20, "two", 10, 2, 3).await,
        vec![busy_pings[2], quiet_pings[1]],
        "another claim counts the first one's leases: the busy account reaches its cap of 3 \
         (its first endpoint has its 2), the quiet one takes its second"
    );
    assert!(
        claim_capped(store, 21, "three", 10, 2, 3).await.is_empty(),
        "the busy account is at its cap, the others have nothing due"
    );
    assert!(
        attempt(
            store,
            busy_pings[0],
            "one",
            AttemptResult::Answered(200),
            1,
            22
        )
        .await
    );
    assert_eq!(
        claim_capped(store, 22, "three", 10, 2, 3).await,
        vec![busy_pings[3]],
        "a recorded attempt frees one slot of the account: its oldest claimable goes"
    );
    // A lower limit, as a dispatcher's reserved slots ask: only accounts below it are served.
    let late = ping(store, t.id, 23).await.id;
    assert_eq!(
        claim_capped(store, 23, "four", 10, 2, 2).await,
        vec![late],
        "under a limit of 2, the account with 1 in flight is served, the busy one is not"
    );
}

/// Dispatchers claiming at once never hold more than `per_account` deliveries of one account
/// between them, over all its endpoints (the limit is decided in the claim, across claims).
pub async fn concurrent_claims_keep_the_per_account_limit(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    let b = account(&*store, "Beta").await;
    let mut endpoints = Vec::new();
    for n in 0..3 {
        let url = format!("https://a.example/{n}");
        endpoints.push(register(&*store, a.id, &url, EventType::SUBSCRIBABLE, 0).await);
    }
    endpoints.push(
        register(
            &*store,
            b.id,
            "https://b.example",
            EventType::SUBSCRIBABLE,
            0,
        )
        .await,
    );
    for n in 0..10 {
        for endpoint in &endpoints {
            ping(&*store, endpoint.id, n).await;
        }
    }
    let mut per_account = BTreeMap::new();
    for claimed in race_claims(store, 10, 5).await {
        *per_account.entry(claimed.webhook.account_id).or_insert(0) += 1;
    }
    assert_eq!(
        per_account,
        [(a.id, 5), (b.id, 5)].into_iter().collect(),
        "five in flight per account, over its endpoints, whoever claimed them"
    );
}
