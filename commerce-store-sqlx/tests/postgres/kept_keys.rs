//! The key checks a PostgreSQL store answers from the records it kept (`auth_records`): a
//! key allowed thousands of requests a minute is read whole once, then by its rows' versions,
//! and every write another instance makes to the key or its account is seen at the next
//! check.

use std::sync::Arc;

use commerce_core::chrono::{DateTime, TimeDelta, TimeZone, Utc};
use commerce_core::model::{
    Account, AccountId, AccountPatch, ApiKey, ApiStatus, KeyHash, NewAccount, NewKeyRecord,
    RateWindow,
};
use commerce_core::store::prelude::*;
use commerce_store_sqlx::PgStore;
use commerce_store_sqlx::sqlx::{self, AssertSqlSafe};

use crate::pg::{self, database_url, drop_schema, open};

/// A marketer whose API access is approved, named after `name` (its e-mail too).
async fn approved_marketer(store: &PgStore, name: &str, now: DateTime<Utc>) -> Account {
    let mut new = NewAccount::marketer(name, name, format!("{name}@example.com"), "01000000000");
    new.api_status = ApiStatus::Approved;
    store.insert_account(new, now).await.unwrap()
}

/// A key of `account` with `hash`, allowed a million requests a minute (a high-volume key).
async fn high_volume_key(
    store: &PgStore,
    account: AccountId,
    hash: KeyHash,
    expires_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> ApiKey {
    let key = NewKeyRecord::builder()
        .account_id(account)
        .name("bench".into())
        .hash(hash)
        .abilities(vec![])
        .expires_at(expires_at)
        .rate_limit(1_000_000)
        .build();
    store
        .insert_key(key, now, commerce_core::operator::MAX_LIVE_KEYS)
        .await
        .unwrap()
}

/// A key allowed thousands of requests a minute is checked from the records its instance
/// kept, on their rows' versions: a second check of an unchanged key shares the first one's
/// records, and what another instance writes to the key or its account is seen at the next
/// check (an account suspended, a key's terms changed, a key revoked).
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_key_check_sees_what_another_instance_writes() {
    let url = database_url();
    let (one, schema) = open(&url).await;
    let two = pg::connect(&url, &schema).await;
    let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let window = RateWindow::containing(now);
    let account = approved_marketer(&one, "alpha", now).await;
    let hash = [7; 32];
    let key = high_volume_key(&one, account.id, hash, None, now).await;
    let check = || async { one.authenticate(&hash, now, window).await.unwrap().unwrap() };

    // The first check counts in the database and marks the key as high-volume; the second
    // reads the rows whole and keeps them; the third reads their versions only.
    check().await;
    let read = check().await;
    let kept = check().await;
    assert!(Arc::ptr_eq(&read.key, &kept.key), "the key read again");
    let account_of = |c: &commerce_core::store::KeyCheck| c.account.clone().expect("account");
    assert!(Arc::ptr_eq(&account_of(&read), &account_of(&kept)));
    assert_eq!(account_of(&kept).api_status, ApiStatus::Approved);

    two.update_account(
        account.id,
        AccountPatch::api_status(ApiStatus::Suspended),
        now,
    )
    .await
    .unwrap();
    assert_eq!(account_of(&check().await).api_status, ApiStatus::Suspended);

    two.set_key_terms(key.id, None, 5_000).await.unwrap();
    let terms = check().await;
    assert_eq!(terms.key.rate_limit, 5_000);
    assert!(terms.hit.is_some_and(|h| h.allowed));

    two.revoke_key(key.id, now).await.unwrap();
    let revoked = check().await;
    assert_eq!(revoked.key.revoked_at, Some(now));
    assert!(revoked.hit.is_none(), "a revoked key is not counted");

    drop_schema(&url, &[one.pool(), two.pool()], &schema).await;
}

/// The kept records under the writes that the version check must see and the locks
/// that must not force a whole read: a write made inside a savepoint (its row's `xmin` is the
/// subtransaction's), an update that sets a column to the value it has, a row lock held by
/// another transaction (`FOR UPDATE` sets `xmax`, not `xmin`), an update not yet committed
/// (the kept records stay right: the committed row is unchanged), a key deleted, and a key
/// deleted and inserted again with the same hash on another account.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_key_checks_see_savepoints_and_reinserts_and_ignore_row_locks() {
    let url = database_url();
    let (one, schema) = open(&url).await;
    let two = pg::connect(&url, &schema).await;
    let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let window = RateWindow::containing(now);
    let account = approved_marketer(&one, "alpha", now).await;
    let other = approved_marketer(&one, "beta", now).await;
    let hash = [9; 32];
    high_volume_key(&one, account.id, hash, None, now).await;
    let check = || async { one.authenticate(&hash, now, window).await.unwrap() };
    let account_of = |c: &commerce_core::store::KeyCheck| c.account.clone().expect("account");
    let sql = |s: String| {
        let pool = two.pool().clone();
        async move {
            sqlx::raw_sql(AssertSqlSafe(s))
                .execute(&pool)
                .await
                .unwrap();
        }
    };
    check().await.unwrap();
    let read = check().await.unwrap();
    assert!(Arc::ptr_eq(&read.key, &check().await.unwrap().key), "kept");

    // A row lock held by another transaction: not a change (the records stay shared), and
    // the check does not wait for it.
    let mut locker = two.pool().begin().await.unwrap();
    sqlx::raw_sql(AssertSqlSafe(format!(
        "SELECT 1 FROM accounts WHERE id = {} FOR UPDATE; \
         SELECT 1 FROM api_keys WHERE hash = '\\x{}' FOR UPDATE",
        account.id.get(),
        "09".repeat(32)
    )))
    .execute(&mut *locker)
    .await
    .unwrap();
    let locked = tokio::time::timeout(std::time::Duration::from_secs(5), check())
        .await
        .expect("a row lock does not hold the check")
        .unwrap();
    assert!(
        Arc::ptr_eq(&read.key, &locked.key),
        "a row lock is no change"
    );
    // An update not committed: the committed rows are the kept ones.
    sqlx::raw_sql(AssertSqlSafe(format!(
        "UPDATE accounts SET api_status = 'suspended' WHERE id = {}",
        account.id.get()
    )))
    .execute(&mut *locker)
    .await
    .unwrap();
    let before = check().await.unwrap();
    assert_eq!(account_of(&before).api_status, ApiStatus::Approved);
    locker.rollback().await.unwrap();
    let after_rollback = check().await.unwrap();
    assert_eq!(account_of(&after_rollback).api_status, ApiStatus::Approved);
    assert!(
        Arc::ptr_eq(&read.key, &after_rollback.key),
        "a rolled-back write is no change"
    );

    // A suspension written inside a savepoint, released, committed.
    sql(format!(
        "BEGIN; SAVEPOINT s; UPDATE accounts SET api_status = 'suspended' WHERE id = {id}; \
         RELEASE SAVEPOINT s; COMMIT",
        id = account.id.get()
    ))
    .await;
    assert_eq!(
        account_of(&check().await.unwrap()).api_status,
        ApiStatus::Suspended
    );
    // Two savepoints of one transaction: approved in the first, suspended again in the second.
    sql(format!(
        "BEGIN; SAVEPOINT a; UPDATE accounts SET api_status = 'approved' WHERE id = {id}; \
         RELEASE SAVEPOINT a; SAVEPOINT b; \
         UPDATE accounts SET api_status = 'suspended' WHERE id = {id}; ROLLBACK TO SAVEPOINT b; \
         COMMIT",
        id = account.id.get()
    ))
    .await;
    assert_eq!(
        account_of(&check().await.unwrap()).api_status,
        ApiStatus::Approved
    );

    // A write of the value the row has is a new version: read whole again, same values.
    let kept = check().await.unwrap();
    two.update_account(
        account.id,
        AccountPatch::api_status(ApiStatus::Approved),
        now,
    )
    .await
    .unwrap();
    let same = check().await.unwrap();
    assert!(!Arc::ptr_eq(&account_of(&kept), &account_of(&same)));
    assert_eq!(*account_of(&kept), *account_of(&same));

    // The key deleted, then inserted again with the same hash on another account, in one
    // transaction; then deleted.
    sql(format!(
        "BEGIN; DELETE FROM rate_limit_windows WHERE key_id IN (SELECT id FROM api_keys WHERE hash = '\\x{h}'); \
         DELETE FROM api_keys WHERE hash = '\\x{h}'; \
         INSERT INTO api_keys (account_id, name, hash, abilities, expires_at, rate_limit, created_at) \
         VALUES ({other}, 'again', '\\x{h}', '', NULL, 2000000, 0); COMMIT",
        h = "09".repeat(32),
        other = other.id.get()
    ))
    .await;
    let again = check().await.unwrap();
    assert_eq!(again.key.account_id, other.id);
    assert_eq!(account_of(&again).id, other.id);
    assert_eq!(again.key.rate_limit, 2_000_000);
    sql(format!(
        "DELETE FROM rate_limit_windows WHERE key_id IN (SELECT id FROM api_keys WHERE hash = '\\x{h}'); \
         DELETE FROM api_keys WHERE hash = '\\x{h}'",
        h = "09".repeat(32)
    ))
    .await;
    assert!(
        check().await.is_none(),
        "a deleted key is unknown at its next check"
    );

    drop_schema(&url, &[one.pool(), two.pool()], &schema).await;
}

/// A kept key whose expiry passes while it is kept is refused at its next check (the
/// expiry is compared with each check's `now`, not only when the rows are read).
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_key_whose_expiry_passes_is_refused() {
    let url = database_url();
    let (one, schema) = open(&url).await;
    let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let account = approved_marketer(&one, "alpha", now).await;
    let hash = [5; 32];
    high_volume_key(
        &one,
        account.id,
        hash,
        Some(now + TimeDelta::seconds(1)),
        now,
    )
    .await;
    let one = &one;
    let check = |at| async move {
        one.authenticate(&hash, at, RateWindow::containing(at))
            .await
            .unwrap()
            .unwrap()
    };
    check(now).await;
    let read = check(now).await;
    let kept = check(now).await;
    assert!(Arc::ptr_eq(&read.key, &kept.key));
    assert!(kept.hit.is_some_and(|h| h.allowed));
    let later = check(now + TimeDelta::seconds(2)).await;
    assert!(
        Arc::ptr_eq(&read.key, &later.key),
        "served from the kept records"
    );
    assert!(later.hit.is_none(), "an expired key is not counted");
    assert!(later.account.is_none());
    drop_schema(&url, &[one.pool()], &schema).await;
}
