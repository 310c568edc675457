//! [`AccountStore`] for [`MemoryStore`]: accounts, keys and the per-key rate window.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::MemoryStore;
use crate::model::*;
use crate::store::*;

#[async_trait]
impl AccountStore for MemoryStore {
    async fn insert_account(
        &self,
        new: NewAccount,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError> {
        let mut s = self.lock();
        s.claim_unique(Unique::AccountEmail, &new.email)?;
        let account = new.into_account(AccountId::new(s.next_id("accounts")), now);
        s.accounts.insert(account.id, Arc::new(account.clone()));
        Ok(account)
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        Ok(self.lock().accounts.get(&id).map(|a| Account::clone(a)))
    }

    async fn update_account(
        &self,
        id: AccountId,
        patch: AccountPatch,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError> {
        let mut s = self.lock();
        let account = Arc::make_mut(s.accounts.get_mut(&id).ok_or(StoreError::NotFound)?);
        if !patch.applies_to(account) {
            return Err(StoreError::Invalid(ACCOUNT_CHANGED.into()));
        }
        patch.apply(account, now);
        Ok(account.clone())
    }

    async fn find_accounts(
        &self,
        query: &AccountQuery,
        page: PageRequest,
    ) -> Result<Listing<Account>, StoreError> {
        let s = self.lock();
        let found = query.select(s.accounts.values().map(|a| &**a));
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn insert_key(
        &self,
        key: NewKeyRecord,
        now: DateTime<Utc>,
        max_live: usize,
    ) -> Result<ApiKey, InsertKeyError> {
        let mut s = self.lock();
        if !s.accounts.contains_key(&key.account_id) {
            return Err(StoreError::NotFound.into());
        }
        if s.key_by_hash.contains_key(&key.hash) {
            return Err(StoreError::Invalid(KEY_HASH_STORED.into()).into());
        }
        let live = s
            .keys
            .values()
            .filter(|k| k.account_id == key.account_id && k.is_live(now))
            .count();
        if live >= max_live {
            return Err(InsertKeyError::TooMany { limit: max_live });
        }
        let key = key.into_key(KeyId::new(s.next_id("keys")), now);
        s.key_by_hash.insert(key.hash, key.id);
        s.keys.insert(key.id, Arc::new(key.clone()));
        Ok(key)
    }

    async fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError> {
        let s = self.lock();
        Ok(s.key_by_hash
            .get(hash)
            .and_then(|id| s.keys.get(id))
            .map(|k| ApiKey::clone(k)))
    }

    async fn key(&self, id: KeyId) -> Result<Option<ApiKey>, StoreError> {
        Ok(self.lock().keys.get(&id).map(|k| ApiKey::clone(k)))
    }

    async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError> {
        let mut s = self.lock();
        let key = Arc::make_mut(s.keys.get_mut(&id).ok_or(StoreError::NotFound)?);
        key.revoked_at.get_or_insert(at);
        Ok(key.clone())
    }

    async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> Result<ApiKey, StoreError> {
        let mut s = self.lock();
        let key = Arc::make_mut(s.keys.get_mut(&id).ok_or(StoreError::NotFound)?);
        key.expires_at = expires_at;
        key.rate_limit = rate_limit;
        Ok(key.clone())
    }

    async fn keys(&self, account: AccountId) -> Result<Vec<KeyListing>, StoreError> {
        let s = self.lock();
        let mut keys: Vec<KeyListing> = s
            .keys
            .values()
            .filter(|k| k.account_id == account)
            .map(|k| KeyListing::of(ApiKey::clone(k), s.rate_windows.latest(k.id)))
            .collect();
        keys.sort_by_key(|k| k.key.id);
        Ok(keys)
    }

    async fn hit_rate_limit(
        &self,
        key: KeyId,
        window: RateWindow,
        limit: u32,
    ) -> Result<RateLimitHit, StoreError> {
        Ok(self.lock().rate_windows.hit(key, window, limit))
    }

    /// [`authenticate_by_calls`]'s three reads under one lock, in one call: the key, the
    /// request counted, the account (both shared with the maps, not copied).
    async fn authenticate(
        &self,
        hash: &KeyHash,
        now: DateTime<Utc>,
        window: RateWindow,
    ) -> Result<Option<KeyCheck>, StoreError> {
        let mut s = self.lock();
        let Some(key) = s.key_by_hash.get(hash).and_then(|id| s.keys.get(id)) else {
            return Ok(None);
        };
        if !key.is_live(now) {
            return Ok(Some(KeyCheck::of(key.clone(), None, None)));
        }
        let key = key.clone();
        let hit = s.rate_windows.hit(key.id, window, key.rate_limit);
        let account = hit
            .allowed
            .then(|| s.accounts.get(&key.account_id).cloned())
            .flatten();
        Ok(Some(KeyCheck::of(key, Some(hit), account)))
    }
}
