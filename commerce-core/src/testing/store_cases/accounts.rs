//! Accounts, keys and the rate window.

use chrono::Duration;

use crate::model::*;
use crate::operator::MAX_LIVE_KEYS;
use crate::store::*;

use super::fixtures::*;

/// Accounts keep every field; `update_account` persists the fields given and keeps the others,
/// dating a new API status (the same status again keeps its date); unknown ids are
/// absent/NotFound, also to the writes that name an account.
pub async fn accounts_round_trip_and_change_state(store: &dyn Store) {
    let created = at(0) + Duration::microseconds(123_456);
    let supplier = store
        .insert_account(
            NewAccount {
                name: "مورد".into(),
                store_name: None,
                email: "s@example.com".into(),
                phone: "01100000000".into(),
                side: Side::Supplier,
                state: AccountState::Incomplete,
                api_status: ApiStatus::Pending,
            },
            created,
        )
        .await
        .unwrap();
    assert_eq!(supplier.name, "مورد");
    assert_eq!(supplier.store_name, None);
    assert_eq!(supplier.side, Side::Supplier);
    assert_eq!(supplier.state, AccountState::Incomplete);
    assert_eq!(supplier.api_status, ApiStatus::Pending);
    assert_eq!(supplier.created_at, created);
    assert_eq!(supplier.api_status_at, created);
    let marketer = account(store, "Alpha").await;
    assert_ne!(marketer.id, supplier.id);
    assert_eq!(marketer.store_name.as_deref(), Some("متجر Alpha"));

    assert_eq!(
        store.account(supplier.id).await.unwrap(),
        Some(supplier.clone())
    );
    assert_eq!(store.account(marketer.id).await.unwrap(), Some(marketer));

    let both = AccountPatch {
        state: Some(AccountState::Suspended),
        api_status: Some(ApiStatus::Suspended),
        ..AccountPatch::default()
    };
    let changed = store
        .update_account(supplier.id, both, at(5))
        .await
        .unwrap();
    assert_eq!(changed.state, AccountState::Suspended);
    assert_eq!(changed.api_status, ApiStatus::Suspended);
    assert_eq!(changed.api_status_at, at(5));
    assert_eq!(changed.name, supplier.name);
    assert_eq!(store.account(supplier.id).await.unwrap(), Some(changed));

    // One field given: the other keeps what the row holds.
    let only_status = AccountPatch {
        api_status: Some(ApiStatus::Approved),
        ..AccountPatch::default()
    };
    let changed = store
        .update_account(supplier.id, only_status, at(6))
        .await
        .unwrap();
    assert_eq!(
        (changed.state, changed.api_status, changed.api_status_at),
        (AccountState::Suspended, ApiStatus::Approved, at(6))
    );
    let only_state = AccountPatch {
        state: Some(AccountState::Active),
        ..AccountPatch::default()
    };
    let changed = store
        .update_account(supplier.id, only_state, at(7))
        .await
        .unwrap();
    assert_eq!(
        (changed.state, changed.api_status, changed.api_status_at),
        (AccountState::Active, ApiStatus::Approved, at(6))
    );
    // The same status again keeps its date.
    let again = AccountPatch::api_status(ApiStatus::Approved);
    let changed = store
        .update_account(supplier.id, again, at(8))
        .await
        .unwrap();
    assert_eq!(changed.api_status_at, at(6));
    assert_eq!(store.account(supplier.id).await.unwrap(), Some(changed));

    let unknown = supplier.id.absent();
    assert_eq!(store.account(unknown).await.unwrap(), None);
    assert!(matches!(
        store
            .update_account(unknown, AccountPatch::default(), at(9))
            .await,
        Err(StoreError::NotFound)
    ));
    let endpoint = NewWebhook::builder()
        .account_id(unknown)
        .url("https://a.example/1".to_owned())
        .secret(WebhookSecret::new("whsec_x"))
        .created_at(at(0))
        .build();
    assert!(matches!(
        store
            .insert_webhook(endpoint, MAX_WEBHOOKS_PER_ACCOUNT)
            .await,
        Err(InsertWebhookError::Store(StoreError::NotFound))
    ));
    assert!(matches!(
        store
            .request_withdrawal(withdrawal(unknown, "1.00", None), at(0), at(0))
            .await,
        Err(WithdrawalRequestError::Store(StoreError::NotFound))
    ));
    assert!(
        store
            .webhooks(unknown, page(1, 10))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(store.withdrawals(unknown).await.unwrap().is_empty());
}

/// A key is stored with every field, found by its hash (any byte values) and id.
pub async fn keys_are_found_by_hash_and_id(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let mut hash = [0u8; 32];
    for (i, b) in hash.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37).wrapping_add(200);
    }
    hash[0] = 0;
    hash[31] = 255;
    let expires = at(3600);
    let stored = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id,
                name: "مفتاح المتجر".into(),
                hash,
                abilities: vec![Ability::OrdersWrite, Ability::CatalogRead],
                expires_at: Some(expires),
                rate_limit: 120,
            },
            at(5),
            MAX_LIVE_KEYS,
        )
        .await
        .unwrap();
    assert_eq!(stored.account_id, a.id);
    assert_eq!(stored.name, "مفتاح المتجر");
    assert_eq!(stored.hash, hash);
    assert_eq!(
        stored.abilities,
        vec![Ability::OrdersWrite, Ability::CatalogRead]
    );
    assert_eq!(stored.expires_at, Some(expires));
    assert_eq!(stored.revoked_at, None);
    assert_eq!(stored.rate_limit, 120);
    assert_eq!(stored.created_at, at(5));

    let bare = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id,
                name: "bare".into(),
                hash: [9; 32],
                abilities: vec![],
                expires_at: None,
                rate_limit: 1_000_000,
            },
            at(6),
            MAX_LIVE_KEYS,
        )
        .await
        .unwrap();
    assert_ne!(bare.id, stored.id);

    assert_eq!(
        store.key_by_hash(&hash).await.unwrap(),
        Some(stored.clone())
    );
    assert_eq!(store.key(stored.id).await.unwrap(), Some(stored.clone()));
    assert_eq!(
        store.key_by_hash(&[9; 32]).await.unwrap(),
        Some(bare.clone())
    );
    assert!(
        store
            .key(bare.id)
            .await
            .unwrap()
            .unwrap()
            .abilities
            .is_empty()
    );
    assert_eq!(store.key_by_hash(&[1; 32]).await.unwrap(), None);
    assert_eq!(store.key(bare.id.absent()).await.unwrap(), None);

    let duplicate = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id,
                name: "dup".into(),
                hash,
                abilities: vec![],
                expires_at: None,
                rate_limit: 1,
            },
            at(7),
            MAX_LIVE_KEYS,
        )
        .await;
    assert!(
        matches!(
            duplicate,
            Err(InsertKeyError::Store(StoreError::Invalid(_)))
        ),
        "duplicate hash must be refused: {duplicate:?}"
    );
    let orphan = store
        .insert_key(
            NewKeyRecord {
                account_id: a.id.absent(),
                name: "orphan".into(),
                hash: [3; 32],
                abilities: vec![],
                expires_at: None,
                rate_limit: 1,
            },
            at(7),
            MAX_LIVE_KEYS,
        )
        .await;
    assert!(
        matches!(orphan, Err(InsertKeyError::Store(StoreError::NotFound))),
        "key of unknown account: {orphan:?}"
    );
    assert_eq!(store.key_by_hash(&[3; 32]).await.unwrap(), None);
}

/// `revoke_key` keeps the first revocation instant; everything else is unchanged.
pub async fn revoking_a_key_keeps_the_first_revocation_instant(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let k = key(store, a.id, 11).await;
    let other = key(store, a.id, 12).await;
    let revoked = store.revoke_key(k.id, at(10)).await.unwrap();
    assert_eq!(revoked.revoked_at, Some(at(10)));
    let again = store.revoke_key(k.id, at(20)).await.unwrap();
    assert_eq!(again.revoked_at, Some(at(10)));
    let found = store.key_by_hash(&[11; 32]).await.unwrap().unwrap();
    assert_eq!(found.revoked_at, Some(at(10)));
    assert_eq!(found.name, k.name);
    assert_eq!(found.abilities, k.abilities);
    assert_eq!(store.key(other.id).await.unwrap().unwrap().revoked_at, None);
    assert!(matches!(
        store.revoke_key(k.id.absent(), at(30)).await,
        Err(StoreError::NotFound)
    ));
}

/// `keys` lists an account's keys oldest first, revoked ones included, never another
/// account's, each with the minute of its latest counted request (from the rate window, the
/// authentication included) and none for a key never used or only refused.
pub async fn keys_are_listed_with_the_minute_last_used(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let first = key(store, a.id, 41).await;
    let second = key(store, a.id, 42).await;
    let third = key(store, a.id, 43).await;
    let others = key(store, b.id, 44).await;
    store.revoke_key(third.id, at(5)).await.unwrap();
    let window = 29_000_100;
    store
        .hit_rate_limit(first.id, RateWindow::from_minute(window - 3), 10)
        .await
        .unwrap();
    store
        .hit_rate_limit(first.id, RateWindow::from_minute(window), 10)
        .await
        .unwrap();
    store
        .hit_rate_limit(first.id, RateWindow::from_minute(window), 10)
        .await
        .unwrap();
    store
        .hit_rate_limit(others.id, RateWindow::from_minute(window + 1), 10)
        .await
        .unwrap();
    // A refused request is not counted, so it is no use either.
    let refused = store
        .hit_rate_limit(third.id, RateWindow::from_minute(window), 0)
        .await
        .unwrap();
    assert!(!refused.allowed);
    // Through the authentication, as every API request counts.
    let now = chrono::DateTime::from_timestamp((window + 2) * 60 + 30, 0).expect("instant");
    let check = store
        .authenticate(&[42; 32], now, RateWindow::from_minute(window + 2))
        .await
        .unwrap();
    assert!(check.is_some_and(|c| c.hit.is_some_and(|h| h.allowed)));

    let minute = |w: i64| chrono::DateTime::from_timestamp(w * 60, 0);
    let listed = store.keys(a.id).await.unwrap();
    let ids: Vec<KeyId> = listed.iter().map(|k| k.key.id).collect();
    assert_eq!(ids, [first.id, second.id, third.id]);
    assert_eq!(listed[0].key, first);
    assert_eq!(listed[0].last_used_at, minute(window));
    assert_eq!(listed[1].last_used_at, minute(window + 2));
    assert_eq!(listed[2].last_used_at, None);
    assert_eq!(listed[2].key.revoked_at, Some(at(5)));
    let theirs = store.keys(b.id).await.unwrap();
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].key.id, others.id);
    assert_eq!(theirs[0].last_used_at, minute(window + 1));
    assert!(store.keys(a.id.absent()).await.unwrap().is_empty());
}

/// `set_key_terms` replaces expiry (also with none) and limit, nothing else.
pub async fn key_terms_replace_expiry_and_limit(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let k = key(store, a.id, 21).await;
    let changed = store.set_key_terms(k.id, Some(at(99)), 5).await.unwrap();
    assert_eq!(changed.expires_at, Some(at(99)));
    assert_eq!(changed.rate_limit, 5);
    assert_eq!(changed.name, k.name);
    assert_eq!(changed.abilities, k.abilities);
    assert_eq!(changed.hash, k.hash);
    assert_eq!(store.key(k.id).await.unwrap(), Some(changed));
    let cleared = store.set_key_terms(k.id, None, 1_000_000).await.unwrap();
    assert_eq!(cleared.expires_at, None);
    assert_eq!(cleared.rate_limit, 1_000_000);
    assert_eq!(store.key_by_hash(&[21; 32]).await.unwrap(), Some(cleared));
    assert!(matches!(
        store.set_key_terms(k.id.absent(), None, 1).await,
        Err(StoreError::NotFound)
    ));
}

/// The rate window never goes back: a hit carrying an older window than the key's latest (an
/// instance whose clock is behind) is counted in that older window, and the latest window
/// keeps its count, so the next hit in it is still refused at the limit.
pub async fn a_rate_window_never_goes_back(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let k = key(store, a.id, 33).await;
    let window = 29_500_000;
    let hit = |minute: i64| store.hit_rate_limit(k.id, RateWindow::from_minute(minute), 3);
    for used in 1..=3 {
        assert_eq!(hit(window).await.unwrap(), RateLimitHit::new(true, used));
    }
    // Out of order: the minute before, counted on its own.
    assert_eq!(hit(window - 1).await.unwrap(), RateLimitHit::new(true, 1));
    assert_eq!(hit(window - 1).await.unwrap(), RateLimitHit::new(true, 2));
    // The latest window is still full: the out-of-order hits did not reset it.
    assert_eq!(hit(window).await.unwrap(), RateLimitHit::new(false, 3));
    assert_eq!(
        store.keys(a.id).await.unwrap()[0].last_used_at,
        RateWindow::from_minute(window).start()
    );
    // A newer window starts from zero.
    assert_eq!(hit(window + 1).await.unwrap(), RateLimitHit::new(true, 1));
    assert_eq!(hit(window + 1).await.unwrap(), RateLimitHit::new(true, 2));
}

/// Hits are counted up to the limit; refused hits are not counted; windows and keys are
/// independent.
pub async fn rate_limit_counts_exactly_up_to_the_limit_per_window(store: &dyn Store) {
    let a = account(store, "Alpha").await;
    let k = key(store, a.id, 31).await;
    let k2 = key(store, a.id, 32).await;
    let window = 29_000_000;
    for used in 1..=3 {
        assert_eq!(
            store
                .hit_rate_limit(k.id, RateWindow::from_minute(window), 3)
                .await
                .unwrap(),
            RateLimitHit {
                allowed: true,
                used
            }
        );
    }
    for _ in 0..3 {
        assert_eq!(
            store
                .hit_rate_limit(k.id, RateWindow::from_minute(window), 3)
                .await
                .unwrap(),
            RateLimitHit {
                allowed: false,
                used: 3
            }
        );
    }
    // A lower limit inside the window refuses without counting.
    assert_eq!(
        store
            .hit_rate_limit(k.id, RateWindow::from_minute(window), 2)
            .await
            .unwrap(),
        RateLimitHit {
            allowed: false,
            used: 3
        }
    );
    // A higher limit allows again, counting from where the window is.
    assert_eq!(
        store
            .hit_rate_limit(k.id, RateWindow::from_minute(window), 4)
            .await
            .unwrap(),
        RateLimitHit {
            allowed: true,
            used: 4
        }
    );
    // Another key has its own window.
    assert_eq!(
        store
            .hit_rate_limit(k2.id, RateWindow::from_minute(window), 3)
            .await
            .unwrap(),
        RateLimitHit {
            allowed: true,
            used: 1
        }
    );
    // The next window starts from zero.
    assert_eq!(
        store
            .hit_rate_limit(k.id, RateWindow::from_minute(window + 1), 3)
            .await
            .unwrap(),
        RateLimitHit {
            allowed: true,
            used: 1
        }
    );
    assert_eq!(
        store
            .hit_rate_limit(k.id, RateWindow::from_minute(window + 1), 3)
            .await
            .unwrap(),
        RateLimitHit {
            allowed: true,
            used: 2
        }
    );
}

/// Category slugs, account emails and governorate names are unique: a repeat is refused with
/// `Duplicate` naming what is taken, writes nothing (the lists are unchanged; a SQL sequence
/// may skip an id), and a value differing only in case is another value.
pub async fn repeated_slugs_emails_and_governorate_names_are_refused(store: &dyn Store) {
    let home = category(store, "home", None).await;
    let again = store
        .insert_category(NewCategory::new(
            "قسم آخر".to_owned(),
            "home".to_owned(),
            None,
        ))
        .await;
    assert!(
        matches!(again, Err(StoreError::Duplicate(Unique::CategorySlug))),
        "{again:?}"
    );
    // Not under another parent either: slugs are unique across the catalogue.
    let child = store
        .insert_category(NewCategory::new(
            "فرعي".to_owned(),
            "home".to_owned(),
            Some(home.id),
        ))
        .await;
    assert!(matches!(
        child,
        Err(StoreError::Duplicate(Unique::CategorySlug))
    ));
    assert_eq!(store.all_categories().await.unwrap(), vec![home.clone()]);
    let other_case = category(store, "Home", None).await;
    assert_eq!(
        store.all_categories().await.unwrap(),
        vec![home.clone(), other_case]
    );

    let alpha = account(store, "Alpha").await;
    let repeat = NewAccount::marketer("آخر", "متجر آخر", alpha.email.clone(), "01000000001");
    let refused = store.insert_account(repeat, at(1)).await;
    assert!(
        matches!(refused, Err(StoreError::Duplicate(Unique::AccountEmail))),
        "{refused:?}"
    );
    let supplier = NewAccount::supplier("مورد", alpha.email.clone(), "01000000002");
    let refused = store.insert_account(supplier, at(1)).await;
    assert!(matches!(
        refused,
        Err(StoreError::Duplicate(Unique::AccountEmail))
    ));
    let upper = NewAccount::marketer("آخر", "متجر آخر", alpha.email.to_uppercase(), "0100");
    let other = store.insert_account(upper, at(1)).await.unwrap();
    assert_ne!(other.id, alpha.id);
    assert_eq!(store.account(alpha.id).await.unwrap(), Some(alpha));

    let cairo = store.insert_governorate("القاهرة".into()).await.unwrap();
    let refused = store.insert_governorate("القاهرة".into()).await;
    assert!(
        matches!(refused, Err(StoreError::Duplicate(Unique::GovernorateName))),
        "{refused:?}"
    );
    let giza = store.insert_governorate("الجيزة".into()).await.unwrap();
    assert_eq!(store.governorates().await.unwrap(), vec![cairo, giza]);
}
