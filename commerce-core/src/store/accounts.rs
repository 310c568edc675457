//! Accounts, their API keys and the keys' rate windows.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::model::*;

/// The answer of [`AccountStore::hit_rate_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimitHit {
    /// Whether the request may proceed (it was counted).
    pub allowed: bool,
    /// Requests counted in this window, this one included when allowed.
    pub used: u32,
}

impl RateLimitHit {
    /// Whether the request was `allowed`, with `used` requests counted in the window.
    pub fn new(allowed: bool, used: u32) -> Self {
        Self { allowed, used }
    }
}

/// The answer of [`AccountStore::authenticate`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct KeyCheck {
    /// The key with the hash asked for (revoked and expired ones included), shared: the
    /// engine's request reads it without a copy.
    pub key: Arc<ApiKey>,
    /// The request counted in the key's rate window; `None` when the key is not live.
    pub hit: Option<RateLimitHit>,
    /// The key's account; may be `None` when the key is not live or the request was refused.
    pub account: Option<Arc<Account>>,
}

impl KeyCheck {
    /// A `KeyCheck` of its fields, in their order.
    pub fn new(key: Arc<ApiKey>, hit: Option<RateLimitHit>, account: Option<Arc<Account>>) -> Self {
        Self { key, hit, account }
    }
}

impl KeyCheck {
    /// A check of `key`: `hit` when the request was counted (`None` when the key is not live),
    /// and `account`, kept only when the request was allowed.
    pub fn of(key: Arc<ApiKey>, hit: Option<RateLimitHit>, account: Option<Arc<Account>>) -> Self {
        let allowed = hit.is_some_and(|h| h.allowed);
        Self {
            key,
            hit,
            account: account.filter(|_| allowed),
        }
    }
}

/// The [`StoreError::Invalid`] text of [`AccountStore::update_account`] when the patch's
/// [`only_from`](AccountPatch::only_from) no longer holds: nothing was written.
pub const ACCOUNT_CHANGED: &str = "the account's API status changed meanwhile";

/// The [`StoreError::Invalid`] text of [`AccountStore::insert_key`] when a key with the same
/// hash is stored already.
pub const KEY_HASH_STORED: &str = "key hash already stored";

/// Why [`AccountStore::insert_key`] stored nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InsertKeyError {
    /// The account has as many live keys as it may.
    #[error("the account has {limit} live keys already")]
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// The storage failed (`NotFound`: no such account; `Invalid`: the hash is stored).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Accounts, API keys and the per-key rate window.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// Registers an account ([`NewAccount::into_account`]); `Duplicate(AccountEmail)` when
    /// an account (of any state) has this email already ([`Unique`](super::Unique)). One
    /// atomic operation: the email's uniqueness decided with the insert (one `INSERT ... ON
    /// CONFLICT DO NOTHING` on the SQL stores), so two registrations at once never share it.
    async fn insert_account(
        &self,
        new: NewAccount,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError>;
    /// One account: one read of its record (one statement on the SQL stores).
    async fn account(&self, id: AccountId) -> Result<Option<Account>, StoreError>;
    /// Changes an account's life state and/or API status, field by field
    /// ([`AccountPatch::apply`] at `now`: a new API status is dated `now`, and who set it
    /// recorded), in one atomic operation: a concurrent change of the other field is kept.
    /// `NotFound` when there is no such account; `Invalid` (nothing written) when the patch
    /// names the status it moves from ([`AccountPatch::only_from`]) and the account's is no
    /// longer that one: that check is part of the write (one conditional `UPDATE` on the SQL
    /// stores), so two moves from one status never both apply.
    async fn update_account(
        &self,
        id: AccountId,
        patch: AccountPatch,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError>;
    /// Stores a key (hash only) unless its account has `max_live` keys live at `now` already
    /// ([`ApiKey::is_live`]: revoked and expired ones do not count), decided atomically with
    /// the insert, so that keys created at once never together pass it
    /// ([`InsertKeyError::TooMany`]). `NotFound` when the account does not exist, `Invalid`
    /// when a key with this hash is already stored.
    async fn insert_key(
        &self,
        key: NewKeyRecord,
        now: DateTime<Utc>,
        max_live: usize,
    ) -> Result<ApiKey, InsertKeyError>;
    /// The key with this hash, revoked and expired ones included: one read of its record (one
    /// statement on the SQL stores).
    async fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError>;
    /// One key: one read of its record.
    async fn key(&self, id: KeyId) -> Result<Option<ApiKey>, StoreError>;
    /// Marks a key revoked at `at`; a key revoked before keeps its first `revoked_at`.
    /// `NotFound` when there is none. One atomic write of the key: whether it is revoked is
    /// read with the write (one `UPDATE` on the SQL stores), so of two revocations at once the
    /// first one's time stays.
    async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError>;
    /// Sets a key's expiry and per-minute limit; `NotFound` when there is none. One atomic
    /// write of the key: both terms change together, and no request sees one without the
    /// other.
    async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> Result<ApiKey, StoreError>;
    /// The accounts `query` matches ([`AccountQuery::select`]: its filters and order), one
    /// page, with how many match counted up to the query's `count_limit`
    /// ([`Listing::of_selected`]). A page costs what its filters' index reads (a `search`
    /// reads every account the other filters leave), not the number of accounts. One read,
    /// not one snapshot: the SQL stores read the page and the count in two statements, so a
    /// write committed between them may show in one and not the other.
    async fn find_accounts(
        &self,
        query: &AccountQuery,
        page: PageRequest,
    ) -> Result<Listing<Account>, StoreError>;
    /// An account's keys, oldest first (revoked and expired ones included), each with the
    /// minute it was last used, read from the key's latest rate window
    /// ([`KeyListing::of`]): listing writes nothing, and requests write nothing for it.
    /// An account that does not exist has none. One read, not one snapshot: the SQL stores
    /// read the keys, then their windows, in two statements.
    async fn keys(&self, account: AccountId) -> Result<Vec<KeyListing>, StoreError>;
    /// One page of an account's keys, newest first (revoked and expired ones included), each
    /// with the minute it was last used as [`keys`](AccountStore::keys) gives it, and how many
    /// keys the account has. The provided version pages [`keys`](AccountStore::keys); a
    /// backend that can read one page's keys alone (the SQL stores) overrides it, so that a
    /// page costs its own keys, not the account's whole list.
    async fn key_page(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> Result<Page<KeyListing>, StoreError> {
        let mut keys = self.keys(account).await?;
        keys.reverse();
        Ok(Page::of_items(keys, page))
    }
    /// Counts one request of `key` in the fixed window `window` if fewer than `limit` were
    /// counted; a refused request is not counted. One atomic operation: the window's count
    /// checked and raised together (conditional upserts on the SQL stores), so requests at once
    /// never count past `limit`.
    async fn hit_rate_limit(
        &self,
        key: KeyId,
        window: RateWindow,
        limit: u32,
    ) -> Result<RateLimitHit, StoreError>;

    /// Everything an API request needs about its key, in one operation: the key with this
    /// hash; when it is live at `now` ([`ApiKey::is_live`]), one request counted in its rate
    /// window `window` exactly as [`hit_rate_limit`](AccountStore::hit_rate_limit) does; and, when
    /// the request was counted, the key's account. The SQL stores read the key and its account
    /// in one statement and count the request in the same one or from a lease of their rate
    /// window (a key allowed thousands a minute; on PostgreSQL its records are then kept with
    /// their rows' versions, and only the versions read while they are unchanged); the
    /// provided version makes the three calls.
    async fn authenticate(
        &self,
        hash: &KeyHash,
        now: DateTime<Utc>,
        window: RateWindow,
    ) -> Result<Option<KeyCheck>, StoreError> {
        authenticate_by_calls(self, hash, now, window).await
    }

    /// Ends this store's use by the application instance, once nothing runs on it any more
    /// (the last call of [`Engine::run_background`](crate::Engine::run_background)): a
    /// backend holding connections of its own closes them, waiting for those in use to come
    /// back, so the database sees every session end. Operations after it may fail with a
    /// [`StoreError`]; a second call does nothing more. The provided version does nothing (a
    /// store in memory holds no connection). It is declared here, on the first of the store
    /// traits, so that every `dyn Store` has it without a trait of its own to implement.
    async fn close(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// [`AccountStore::authenticate`] made of its three calls ([`key_by_hash`](AccountStore::key_by_hash),
/// [`hit_rate_limit`](AccountStore::hit_rate_limit), [`account`](AccountStore::account)): the provided
/// version, for a store that overrides it only on some backends.
pub async fn authenticate_by_calls<S: AccountStore + ?Sized>(
    store: &S,
    hash: &KeyHash,
    now: DateTime<Utc>,
    window: RateWindow,
) -> Result<Option<KeyCheck>, StoreError> {
    let Some(key) = store.key_by_hash(hash).await? else {
        return Ok(None);
    };
    if !key.is_live(now) {
        return Ok(Some(KeyCheck::of(Arc::new(key), None, None)));
    }
    let hit = store.hit_rate_limit(key.id, window, key.rate_limit).await?;
    let account = if hit.allowed {
        store.account(key.account_id).await?.map(Arc::new)
    } else {
        None
    };
    Ok(Some(KeyCheck::of(Arc::new(key), Some(hit), account)))
}

/// The rate windows of a backend that keeps them in process memory: per key, the windows it
/// was counted in, newest last (the caller holds its lock across each hit).
///
/// The window never goes back: a hit that carries an older window than the key's latest (an
/// instance whose clock is behind) is counted in that older window, as the SQL stores count
/// it in that minute's own row, and the latest window keeps its count. As in the SQL stores,
/// the first hit of a window forgets the key's windows older than it; at most
/// [`KEPT_WINDOWS`](Self::KEPT_WINDOWS) windows are kept per key.
#[derive(Debug, Default)]
pub struct RateWindows(std::collections::HashMap<KeyId, Vec<(RateWindow, u32)>>);

impl RateWindows {
    /// The most windows kept per key: the newest, and a few an instance with a late clock may
    /// still count in.
    pub const KEPT_WINDOWS: usize = 4;

    /// The latest window `key` was counted in, if any.
    pub fn latest(&self, key: KeyId) -> Option<RateWindow> {
        self.0
            .get(&key)?
            .iter()
            .rev()
            .find(|(_, used)| *used > 0)
            .map(|(window, _)| *window)
    }

    /// [`AccountStore::hit_rate_limit`]: counts one request of `key` in `window` if fewer than
    /// `limit` were counted in it; a new window starts from zero and forgets the older ones.
    pub fn hit(&mut self, key: KeyId, window: RateWindow, limit: u32) -> RateLimitHit {
        let windows = self.0.entry(key).or_default();
        let at = match windows.binary_search_by_key(&window, |(w, _)| *w) {
            Ok(at) => at,
            Err(0) if windows.len() >= Self::KEPT_WINDOWS => {
                // Older than every kept window: counted in a window of its own, as a SQL store
                // counts it in a new row of that minute.
                return RateLimitHit {
                    allowed: limit > 0,
                    used: u32::from(limit > 0),
                };
            }
            Err(at) => {
                windows.insert(at, (window, 0));
                windows.drain(..at);
                0
            }
        };
        let entry = &mut windows[at];
        let allowed = entry.1 < limit;
        entry.1 += u32::from(allowed);
        RateLimitHit {
            allowed,
            used: entry.1,
        }
    }
}
