//! An account's live keys, capped ([`MAX_LIVE_KEYS`]) and listed a page at a time, and the
//! API status moves that name the status they move from (the owner's).

use std::sync::Arc;

use crate::model::*;
use crate::operator::MAX_LIVE_KEYS;
use crate::store::*;

use super::fixtures::*;

/// A key of `account` with hash `[seed, n, ...]` (`n` in 0..=255), expiring at `expires_at`.
fn record(account: AccountId, seed: u8, n: u8, expires_at: Option<i64>) -> NewKeyRecord {
    let mut hash = [seed; 32];
    hash[1] = n;
    NewKeyRecord {
        account_id: account,
        name: format!("key {seed}-{n}"),
        hash,
        abilities: vec![Ability::CatalogRead],
        expires_at: expires_at.map(at),
        rate_limit: 120,
    }
}

/// An account keeps at most [`MAX_LIVE_KEYS`] live keys: one more is `TooMany` and stores
/// nothing; a revoked key and one expired by the insert's instant do not count (one expiring
/// later does); another account's keys are its own.
pub async fn live_keys_are_capped_per_account(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let mut keys = Vec::new();
    for n in 0..MAX_LIVE_KEYS as u8 {
        // One of them expires at 100 s.
        let expiry = (n == 3).then_some(100);
        let key = store
            .insert_key(record(a.id, 61, n, expiry), at(10), MAX_LIVE_KEYS)
            .await
            .expect("under the cap");
        keys.push(key);
    }
    let over = store
        .insert_key(record(a.id, 61, 200, None), at(20), MAX_LIVE_KEYS)
        .await;
    assert!(
        matches!(over, Err(InsertKeyError::TooMany { limit }) if limit == MAX_LIVE_KEYS),
        "{over:?}"
    );
    let mut over_hash = [61; 32];
    over_hash[1] = 200;
    assert_eq!(store.key_by_hash(&over_hash).await.unwrap(), None);
    // Another account is not concerned.
    store
        .insert_key(record(b.id, 62, 0, None), at(20), MAX_LIVE_KEYS)
        .await
        .expect("another account's first key");
    // A revoked key frees its place.
    store.revoke_key(keys[0].id, at(30)).await.unwrap();
    store
        .insert_key(record(a.id, 61, 201, None), at(40), MAX_LIVE_KEYS)
        .await
        .expect("a revoked key does not count");
    let full = store
        .insert_key(record(a.id, 61, 202, None), at(50), MAX_LIVE_KEYS)
        .await;
    assert!(
        matches!(full, Err(InsertKeyError::TooMany { .. })),
        "{full:?}"
    );
    // At 100 s the key expiring then is no longer live.
    store
        .insert_key(record(a.id, 61, 203, None), at(100), MAX_LIVE_KEYS)
        .await
        .expect("an expired key does not count");
    let live = store
        .keys(a.id)
        .await
        .unwrap()
        .iter()
        .filter(|k| k.key.is_live(at(100)))
        .count();
    assert_eq!(live, MAX_LIVE_KEYS);
    // Another limit is the caller's.
    let small = store
        .insert_key(record(b.id, 62, 1, None), at(100), 1)
        .await;
    assert!(
        matches!(small, Err(InsertKeyError::TooMany { limit: 1 })),
        "{small:?}"
    );
}

/// `key_page` lists an account's keys newest first, a page at a time, revoked ones included,
/// each with the minute last used as `keys` gives it, with the account's count; a page past
/// the end is empty, and another account's keys never show.
pub async fn keys_are_paged_newest_first(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let mut ids = Vec::new();
    for n in 0..7u8 {
        let key = store
            .insert_key(record(a.id, 63, n, None), at(i64::from(n)), MAX_LIVE_KEYS)
            .await
            .expect("a key");
        ids.push(key.id);
    }
    store
        .insert_key(record(b.id, 64, 0, None), at(9), MAX_LIVE_KEYS)
        .await
        .expect("another account's key");
    store.revoke_key(ids[6], at(10)).await.unwrap();
    store
        .hit_rate_limit(ids[5], RateWindow::from_minute(29_000_000), 10)
        .await
        .unwrap();
    let newest_first: Vec<KeyId> = ids.iter().rev().copied().collect();
    let first = store.key_page(a.id, page(1, 3)).await.unwrap();
    assert_eq!(first.total, 7);
    let of = |p: &Page<KeyListing>| -> Vec<KeyId> { p.items.iter().map(|k| k.key.id).collect() };
    assert_eq!(of(&first), newest_first[..3]);
    assert_eq!(first.items[0].key.revoked_at, Some(at(10)));
    assert_eq!(
        first.items[1].last_used_at,
        chrono::DateTime::from_timestamp(29_000_000 * 60, 0)
    );
    assert_eq!(first.items[2].last_used_at, None);
    let all = store.keys(a.id).await.unwrap();
    assert_eq!(
        first.items[..],
        all.iter().rev().take(3).cloned().collect::<Vec<_>>()[..]
    );
    let third = store.key_page(a.id, page(3, 3)).await.unwrap();
    assert_eq!(of(&third), newest_first[6..]);
    let past = store.key_page(a.id, page(4, 3)).await.unwrap();
    assert!(past.items.is_empty());
    assert_eq!(past.total, 7);
    let none = store.key_page(a.id.absent(), page(1, 20)).await.unwrap();
    assert_eq!((none.items.len(), none.total), (0, 0));
}

/// A status given records who gave it (the team unless said otherwise, also when the status
/// is the same); a patch that names the status it moves from applies only while the account
/// has that status from that setter: otherwise `Invalid`, nothing written.
pub async fn api_status_moves_record_who_and_hold_their_origin(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    assert_eq!(a.api_status_by, ChangedBy::Team);
    let owners =
        AccountPatch::owners_api_move(ApiStatus::Suspended, (ApiStatus::Approved, ChangedBy::Team));
    let suspended = store.update_account(a.id, owners, at(5)).await.unwrap();
    assert_eq!(
        (
            suspended.api_status,
            suspended.api_status_by,
            suspended.api_status_at
        ),
        (ApiStatus::Suspended, ChangedBy::Owner, at(5))
    );
    assert_eq!(store.account(a.id).await.unwrap(), Some(suspended));
    // The team suspends it too: the same status, now the team's, its date kept.
    let team = AccountPatch::api_status(ApiStatus::Suspended);
    let teams = store.update_account(a.id, team, at(6)).await.unwrap();
    assert_eq!(
        (teams.api_status, teams.api_status_by, teams.api_status_at),
        (ApiStatus::Suspended, ChangedBy::Team, at(5))
    );
    // The owner's request, decided on the owner's suspension, no longer applies.
    let lift =
        AccountPatch::owners_api_move(ApiStatus::Pending, (ApiStatus::Suspended, ChangedBy::Owner));
    let refused = store.update_account(a.id, lift, at(7)).await;
    assert!(
        matches!(&refused, Err(StoreError::Invalid(text)) if text == ACCOUNT_CHANGED),
        "{refused:?}"
    );
    assert_eq!(store.account(a.id).await.unwrap(), Some(teams.clone()));
    // A life-state change leaves who set the API status as it is.
    let state = AccountPatch::state(AccountState::Suspended);
    let changed = store.update_account(a.id, state, at(8)).await.unwrap();
    assert_eq!(
        (changed.state, changed.api_status_by),
        (AccountState::Suspended, ChangedBy::Team)
    );
    assert!(matches!(
        store.update_account(a.id.absent(), lift, at(9)).await,
        Err(StoreError::NotFound)
    ));
}

/// 30 keys created at once for an account with 15 live ones (and a revoked and an expired
/// one): exactly 5 are stored, 25 refused `TooMany`, and the account ends with exactly
/// [`MAX_LIVE_KEYS`] live keys.
pub async fn concurrent_key_creations_never_exceed_the_cap(store: Arc<dyn Store>) {
    let a = account(&*store, "Alpha").await;
    for n in 0..15u8 {
        store
            .insert_key(record(a.id, 65, n, None), at(0), MAX_LIVE_KEYS)
            .await
            .expect("a live key");
    }
    let revoked = store
        .insert_key(record(a.id, 65, 100, None), at(0), MAX_LIVE_KEYS)
        .await
        .expect("a key");
    store.revoke_key(revoked.id, at(1)).await.unwrap();
    store
        .insert_key(record(a.id, 65, 101, Some(5)), at(0), MAX_LIVE_KEYS)
        .await
        .expect("a key expiring at 5 s");
    let mut tasks = Vec::new();
    for n in 0..30u8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .insert_key(record(a.id, 66, n, None), at(10), MAX_LIVE_KEYS)
                .await
        }));
    }
    let (mut stored, mut refused) = (0, 0);
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => stored += 1,
            Err(InsertKeyError::TooMany { .. }) => refused += 1,
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!(
        (stored, refused),
        (MAX_LIVE_KEYS - 15, 30 - (MAX_LIVE_KEYS - 15))
    );
    let keys = store.keys(a.id).await.unwrap();
    assert_eq!(
        keys.iter().filter(|k| k.key.is_live(at(10))).count(),
        MAX_LIVE_KEYS
    );
    assert_eq!(keys.len(), MAX_LIVE_KEYS + 2);
}
