//! `GET /me`'s body kept with the account and key it was rendered from.
//!
//! The body is a function of the account record and the key record alone
//! ([`AccountView::new`]), so, like a product's rendering
//! ([`rendered_products`](crate::cache::rendered_products)), it is reused exactly when the records the
//! store returned for this request are equal to the ones it was rendered from (`==` on the
//! whole [`Account`] and [`ApiKey`]): no version to bump, nothing to invalidate. Every request
//! reads both records from the store (the key's check does), so a change made by the operator,
//! the owner or another instance over the same database shows in the records compared and
//! the body is rendered again. Comparing costs a small part of rendering, whose Arabic names
//! serde_json escapes byte by byte; a kept body is served by reference count.
//!
//! Bounded by count: at most [`RenderedMe::CAPACITY`] keys; the least used go first.

use std::sync::Arc;

use bytes::Bytes;
use rustc_hash::FxBuildHasher;

use crate::model::{Account, ApiKey, KeyId};
use crate::render::wire::{self, AccountView};

/// Key → `GET /me`'s body and what it was rendered from.
pub(crate) struct RenderedMe {
    cache: Cache,
}

type Cache = quick_cache::sync::Cache<KeyId, Arc<Kept>, quick_cache::UnitWeighter, FxBuildHasher>;

/// One body and the records it was rendered from.
struct Kept {
    account: Account,
    key: ApiKey,
    body: Bytes,
}

impl RenderedMe {
    /// How many keys' bodies an engine keeps (about 1 KiB each with their records).
    pub(crate) const CAPACITY: usize = 1024;

    /// An empty cache.
    pub(crate) fn new() -> Self {
        Self {
            cache: quick_cache::sync::Cache::with(
                Self::CAPACITY,
                Self::CAPACITY as u64,
                quick_cache::UnitWeighter,
                FxBuildHasher,
                Default::default(),
            ),
        }
    }

    /// `{"data": account}` as `GET /me` answers it for `account` seen through `key`: the kept
    /// body when it was rendered from records equal to these, else rendered now and kept.
    pub(crate) fn body(&self, account: &Account, key: &ApiKey) -> Bytes {
        if let Some(kept) = self.cache.get(&key.id)
            && kept.key == *key
            && kept.account == *account
        {
            return kept.body.clone();
        }
        let body = Bytes::from(wire::data_body(&AccountView::new(account, key)));
        self.cache.insert(
            key.id,
            Arc::new(Kept {
                account: account.clone(),
                key: key.clone(),
                body: body.clone(),
            }),
        );
        body
    }
}
