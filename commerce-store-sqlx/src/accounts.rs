//! Accounts, keys and the per-key rate window, and the one-statement authentication.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::pool::PoolConnection;

use crate::auth_records::{KEY_AND_ACCOUNT, KEY_AND_ACCOUNT_VERSIONED, VERSIONS, VersionedAuthRow};
use crate::dialect::*;
use crate::rate_slots::{RateOutcome, Slots, lease_size};
use crate::rows::*;
use crate::sql_store::*;

pub(crate) async fn key_by_id<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: i64,
) -> StoreResult<Option<ApiKey>> {
    let row: Option<KeyRow> = query_as::<DB, KeyRow>(concat!(
        "SELECT ",
        key_cols!(),
        " FROM api_keys WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?;
    row.map(KeyRow::into_domain).transpose()
}

/// A new window started: the key's older windows are done with.
pub(crate) async fn forget_older_windows<'e, DB: Dialect>(
    on: impl Into<On<'e, DB>>,
    key: i64,
    window: i64,
) -> StoreResult<()> {
    query::<DB>("DELETE FROM rate_limit_windows WHERE key_id = $1 AND window_minute < $2")
        .bind(key)
        .bind(window)
        .execute(on)
        .await
        .map_err(backend)?;
    Ok(())
}

/// Counts a hit in the first slot still under its share, trying the slots from
/// `start` on (see `rate_slots`); refused when every slot is full. Each try is one
/// conditional upsert, atomic by itself; the first hit of a slot in a window deletes
/// the key's older windows.
pub(crate) async fn rate_limit_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    key: i64,
    window: i64,
    limit: u32,
    start: u32,
) -> StoreResult<RateOutcome> {
    if limit == 0 {
        return Ok(RateOutcome::Counted(RateLimitHit::new(false, 0)));
    }
    let slots = Slots::new(limit, DB::RATE_SLOTS);
    let lease = lease_size(limit);
    if lease > 1 {
        // A whole lease from the first slot that still holds one.
        for slot in slots.from(start) {
            let leased: Option<(i64, i64)> = query_as::<DB, (i64, i64)>(
                "INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (key_id, window_minute, slot) \
                 DO UPDATE SET used = rate_limit_windows.used + $4 \
                 WHERE rate_limit_windows.used + $4 <= $5 RETURNING used, \
                 (SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
                  WHERE key_id = $1 AND window_minute = $2 AND slot <> $3)",
            )
            .bind(key)
            .bind(window)
            .bind(i64::from(slot))
            .bind(i64::from(lease))
            .bind(i64::from(slots.share(slot)))
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
            if let Some((used, others)) = leased {
                if used == i64::from(lease) {
                    forget_older_windows(&mut *c, key, window).await?;
                }
                let counted = u32_of(used + others, "rate-limit count")?.min(limit);
                return Ok(RateOutcome::Leased {
                    tokens: lease,
                    counted,
                });
            }
        }
    }
    Ok(RateOutcome::Counted(
        count_one_in(c, key, window, slots, start).await?,
    ))
}

/// Counts one request in the first slot still under its share, from `start` on.
pub(crate) async fn count_one_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    key: i64,
    window: i64,
    slots: Slots,
    start: u32,
) -> StoreResult<RateLimitHit> {
    let limit = slots.limit();
    for slot in slots.from(start) {
        // With one slot its count is the window's; with several, the other slots'
        // counts as the statement began are added (for the remaining-requests header).
        let sql = if slots.count() == 1 {
            "INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
             VALUES ($1, $2, $3, 1) ON CONFLICT (key_id, window_minute, slot) \
             DO UPDATE SET used = rate_limit_windows.used + 1 \
             WHERE rate_limit_windows.used < $4 RETURNING used, used - 1"
        } else {
            "INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
             VALUES ($1, $2, $3, 1) ON CONFLICT (key_id, window_minute, slot) \
             DO UPDATE SET used = rate_limit_windows.used + 1 \
             WHERE rate_limit_windows.used < $4 RETURNING used, \
             (SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
              WHERE key_id = $1 AND window_minute = $2)"
        };
        let counted: Option<(i64, i64)> = query_as::<DB, (i64, i64)>(sql)
            .bind(key)
            .bind(window)
            .bind(i64::from(slot))
            .bind(i64::from(slots.share(slot)))
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
        if let Some((used, before)) = counted {
            if used == 1 {
                forget_older_windows(&mut *c, key, window).await?;
            }
            let total = u32_of(before + 1, "rate-limit count")?.min(limit);
            return Ok(RateLimitHit::new(true, total));
        }
    }
    // Every slot is full: the window holds at least the limit (more if the limit
    // was lowered within it).
    let used: i64 = query_scalar::<DB, i64>(
        "SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
         WHERE key_id = $1 AND window_minute = $2",
    )
    .bind(key)
    .bind(window)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    Ok(RateLimitHit::new(false, u32_of(used, "rate-limit count")?))
}

/// The listings of `rows`, each with its key's latest rate window (the store keeps only the
/// latest: `forget_older_windows`), read in one statement.
async fn listings<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    rows: Vec<KeyRow>,
) -> StoreResult<Vec<KeyListing>> {
    let keys = rows
        .into_iter()
        .map(KeyRow::into_domain)
        .collect::<StoreResult<Vec<ApiKey>>>()?;
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    // Key ids are integers: written into the statement, one statement whatever the page.
    let ids: Vec<String> = keys.iter().map(|key| key.id.get().to_string()).collect();
    let windows: Vec<(i64, i64)> = query_as::<DB, (i64, i64)>(sqlx::AssertSqlSafe(format!(
        "SELECT key_id, MAX(window_minute) FROM rate_limit_windows \
         WHERE key_id IN ({}) AND used > 0 GROUP BY key_id",
        ids.join(", ")
    )))
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    let windows: std::collections::HashMap<i64, i64> = windows.into_iter().collect();
    Ok(keys
        .into_iter()
        .map(|key| {
            let window = windows
                .get(&key.id.get())
                .copied()
                .map(RateWindow::from_minute);
            KeyListing::of(key, window)
        })
        .collect())
}

#[async_trait]
impl<DB: Dialect> AccountStore for SqlStore<DB> {
    async fn insert_account(&self, new: NewAccount, now: DateTime<Utc>) -> StoreResult<Account> {
        let created = nanos(now)?;
        let tx = self.write().await?;
        let mut tx = tx;
        let result = query_scalar::<DB, i64>(
            "INSERT INTO accounts (name, store_name, email, phone, side, state, \
             api_status, api_status_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
             ON CONFLICT DO NOTHING RETURNING id",
        )
        .bind(&new.name)
        .bind(&new.store_name)
        .bind(&new.email)
        .bind(&new.phone)
        .bind(new.side.as_str())
        .bind(new.state.as_str())
        .bind(new.api_status.as_str())
        .bind(created)
        .fetch_optional(&mut tx.tx)
        .await
        .map_err(backend)
        // The one unique value of the row (its id is the sequence's): the email.
        .and_then(|id| id.ok_or(StoreError::Duplicate(Unique::AccountEmail)));
        let id: i64 = tx.finish(result).await?;
        Ok(new.into_account(AccountId::new(id), now))
    }

    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        let row: Option<AccountRow> = query_as::<DB, AccountRow>(concat!(
            "SELECT ",
            account_cols!(),
            " FROM accounts WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(backend)?;
        row.map(AccountRow::into_domain).transpose()
    }

    async fn update_account(
        &self,
        id: AccountId,
        patch: AccountPatch,
        now: DateTime<Utc>,
    ) -> StoreResult<Account> {
        let mut tx = self.write().await?;
        // One statement: each field not given keeps the value the row has when it is written;
        // a new API status is dated `now` (`AccountPatch::apply`), and who gave a status is
        // recorded; a patch moving from a status applies only while the row has it.
        let (from_status, from_by) = patch
            .only_from
            .map(|(status, by)| (status.as_str().to_owned(), by.as_str().to_owned()))
            .unzip();
        let result = async {
            let row = query_as::<DB, AccountRow>(concat!(
                "UPDATE accounts SET state = COALESCE($2, state), \
                 api_status_at = CASE WHEN $3 IS NOT NULL AND $3 <> api_status THEN $4 \
                 ELSE api_status_at END, \
                 api_status_by = CASE WHEN $3 IS NOT NULL THEN $5 ELSE api_status_by END, \
                 api_status = COALESCE($3, api_status) WHERE id = $1 \
                 AND ($6 IS NULL OR (api_status = $6 AND api_status_by = $7)) RETURNING ",
                account_cols!()
            ))
            .bind(id)
            .bind(patch.state.map(|s| s.as_str().to_owned()))
            .bind(patch.api_status.map(|s| s.as_str().to_owned()))
            .bind(nanos(now)?)
            .bind(patch.api_status_by.as_str())
            .bind(from_status)
            .bind(from_by)
            .fetch_optional(&mut tx.tx)
            .await
            .map_err(backend)?;
            match row {
                Some(row) => Ok(row),
                None if exists(
                    &mut tx.tx,
                    "SELECT id FROM accounts WHERE id = $1",
                    id.get(),
                )
                .await? =>
                {
                    Err(StoreError::Invalid(ACCOUNT_CHANGED.into()))
                }
                None => Err(StoreError::NotFound),
            }
        }
        .await;
        tx.finish(result).await?.into_domain()
    }

    async fn find_accounts(
        &self,
        query: &AccountQuery,
        page: PageRequest,
    ) -> StoreResult<Listing<Account>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        crate::back_office::find_accounts(&mut c, query, page).await
    }

    async fn insert_key(
        &self,
        key: NewKeyRecord,
        now: DateTime<Utc>,
        max_live: usize,
    ) -> Result<ApiKey, InsertKeyError> {
        let created = nanos(now)?;
        let expires = opt_nanos(key.expires_at)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            // The account row is the lock that puts an account's new keys in a row: each
            // counts the live keys the one before it left.
            if !lock_account(c, key.account_id).await? {
                return Err(StoreError::NotFound.into());
            }
            let live: i64 = query_scalar::<DB, i64>(
                "SELECT COUNT(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL \
                 AND (expires_at IS NULL OR expires_at > $2)",
            )
            .bind(key.account_id)
            .bind(created)
            .fetch_one(&mut *c)
            .await
            .map_err(backend)?;
            if usize::try_from(live).unwrap_or(usize::MAX) >= max_live {
                return Err(InsertKeyError::TooMany { limit: max_live });
            }
            let id: Option<i64> = query_scalar::<DB, i64>(
                "INSERT INTO api_keys (account_id, name, hash, abilities, expires_at, \
                 rate_limit, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (hash) DO NOTHING RETURNING id",
            )
            .bind(key.account_id)
            .bind(&key.name)
            .bind(key.hash.as_slice())
            .bind(abilities_text(&key.abilities))
            .bind(expires)
            .bind(i64::from(key.rate_limit))
            .bind(created)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
            id.ok_or_else(|| StoreError::Invalid(KEY_HASH_STORED.into()).into())
        }
        .await;
        let id = tx.finish(result).await?;
        Ok(key.into_key(KeyId::new(id), now))
    }

    async fn key_by_hash(&self, hash: &KeyHash) -> StoreResult<Option<ApiKey>> {
        let row: Option<KeyRow> = query_as::<DB, KeyRow>(concat!(
            "SELECT ",
            key_cols!(),
            " FROM api_keys WHERE hash = $1"
        ))
        .bind(hash.as_slice())
        .fetch_optional(&self.pool)
        .await
        .map_err(backend)?;
        row.map(KeyRow::into_domain).transpose()
    }

    async fn key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let c = &mut c;
        key_by_id(c, id.into()).await
    }

    async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> StoreResult<ApiKey> {
        let at = nanos(at)?;
        let mut tx = self.write().await?;
        let result = query_as::<DB, KeyRow>(concat!(
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) \
             WHERE id = $1 RETURNING ",
            key_cols!()
        ))
        .bind(id)
        .bind(at)
        .fetch_optional(&mut tx.tx)
        .await
        .map_err(backend)
        .and_then(|r| r.ok_or(StoreError::NotFound));
        tx.finish(result).await?.into_domain()
    }

    async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> StoreResult<ApiKey> {
        let expires = opt_nanos(expires_at)?;
        let mut tx = self.write().await?;
        let result = query_as::<DB, KeyRow>(concat!(
            "UPDATE api_keys SET expires_at = $2, rate_limit = $3 \
             WHERE id = $1 RETURNING ",
            key_cols!()
        ))
        .bind(id)
        .bind(expires)
        .bind(i64::from(rate_limit))
        .fetch_optional(&mut tx.tx)
        .await
        .map_err(backend)
        .and_then(|r| r.ok_or(StoreError::NotFound));
        tx.finish(result).await?.into_domain()
    }

    async fn keys(&self, account: AccountId) -> StoreResult<Vec<KeyListing>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let rows: Vec<KeyRow> = query_as::<DB, KeyRow>(concat!(
            "SELECT ",
            key_cols!(),
            " FROM api_keys WHERE account_id = $1 ORDER BY id"
        ))
        .bind(account)
        .fetch_all(&mut c)
        .await
        .map_err(backend)?;
        listings(&mut c, rows).await
    }

    async fn key_page(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Page<KeyListing>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let rows: Vec<KeyRow> = query_as::<DB, KeyRow>(concat!(
            "SELECT ",
            key_cols!(),
            " FROM api_keys WHERE account_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(account)
        .bind(i64::from(page.per_page()))
        .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
        .fetch_all(&mut c)
        .await
        .map_err(backend)?;
        let total: i64 =
            query_scalar::<DB, i64>("SELECT COUNT(*) FROM api_keys WHERE account_id = $1")
                .bind(account)
                .fetch_one(&mut c)
                .await
                .map_err(backend)?;
        let items = listings(&mut c, rows).await?;
        Ok(Page::new(items, u64::try_from(total).unwrap_or(0)))
    }

    async fn hit_rate_limit(
        &self,
        key: KeyId,
        window: RateWindow,
        limit: u32,
    ) -> StoreResult<RateLimitHit> {
        let window = window.minute();
        // Each turn either hands out a leased request or visits the database,
        // which counts one, refuses, or leases more (then the next turn hands one
        // out, unless other tasks of this process took them all first).
        loop {
            // Leased requests first: they are counted in the window already, and the window
            // may have been seen full by another task while this one's last lease was on its
            // way (refusing before handing them out would leave them unused: fewer than the
            // limit allowed).
            if let Some(used) = self.leases.take(key.into(), window, limit) {
                return Ok(RateLimitHit::new(true, used));
            }
            if let Some(used) = self.full_windows.full(key.into(), window, limit) {
                return Ok(RateLimitHit::new(false, used));
            }
            let start = rand::random::<u32>();
            let outcome = if DB::SINGLE_STATEMENT_TX {
                let mut tx = self.write().await?;
                let result = rate_limit_in(&mut tx.tx, key.into(), window, limit, start).await;
                tx.finish(result).await?
            } else {
                // Each statement is atomic on its own: no transaction to open.
                let mut c = self.pool.acquire().await.map_err(backend)?;
                let c = &mut c;
                rate_limit_in(c, key.into(), window, limit, start).await?
            };
            match outcome {
                RateOutcome::Leased { tokens, counted } => {
                    self.leases
                        .grant(key.into(), window, limit, tokens, counted);
                }
                RateOutcome::Counted(hit) => {
                    if !hit.allowed {
                        self.full_windows
                            .mark_full(key.into(), window, limit, hit.used);
                    }
                    return Ok(hit);
                }
            }
        }
    }

    /// Closes the pool the store opened (`connect*`), waiting for the connections in use to
    /// come back; a pool given to `from_pool` stays open, the application's to close.
    async fn close(&self) -> StoreResult<()> {
        if self.owns_pool {
            self.pool.close().await;
        }
        Ok(())
    }

    async fn authenticate(
        &self,
        hash: &KeyHash,
        now: DateTime<Utc>,
        window: RateWindow,
    ) -> StoreResult<Option<KeyCheck>> {
        if DB::SINGLE_STATEMENT_TX || self.leases.is_high_volume(hash) {
            // SQLite (no data-modifying CTE), or a key allowed thousands a minute:
            // read the key and its account (on PostgreSQL, their rows' versions alone
            // while this process keeps the records they were read at: `auth_records`),
            // then count the request (from this process's lease when the key has one:
            // a statement only when a new lease is needed).
            let Some((key, account)) = self.key_and_account(hash).await? else {
                return Ok(None);
            };
            if key.rate_limit < crate::rate_slots::PER_SLOT && !DB::SINGLE_STATEMENT_TX {
                self.leases.forget_high_volume(hash);
            }
            if !key.is_live(now) {
                return Ok(Some(KeyCheck::of(key, None, account)));
            }
            let hit = self.hit_rate_limit(key.id, window, key.rate_limit).await?;
            return Ok(Some(KeyCheck::of(key, Some(hit), account)));
        }
        // One statement: the key, the rate-limit upsert in one random slot when
        // the key is live (the same conditional upsert as `rate_limit_in`), and the
        // account. When that slot is full, the other slots are tried after it.
        let start = rand::random::<u32>();
        let row: Option<AuthRow> = query_as::<DB, AuthRow>(concat!(
            "WITH k AS (SELECT ",
            key_cols!(),
            " FROM api_keys WHERE hash = $1), \
             s AS (SELECT id, rate_limit, \
             GREATEST(LEAST($5, rate_limit / $6), 1) AS n FROM k), \
             hit AS (INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
             SELECT id, $2, $4 % n, 1 FROM k JOIN s USING (id, rate_limit) \
             WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3) \
             AND rate_limit > 0 \
             ON CONFLICT (key_id, window_minute, slot) \
             DO UPDATE SET used = rate_limit_windows.used + 1 \
             WHERE rate_limit_windows.used < (SELECT rate_limit / n + \
             CASE WHEN $4 % n < rate_limit % n THEN 1 ELSE 0 END FROM s) \
             RETURNING used) \
             SELECT k.*, ",
            account_aliases!(),
            ", (SELECT used FROM hit) AS counted, \
             (SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
              WHERE key_id = k.id AND window_minute = $2) AS seen \
             FROM k LEFT JOIN accounts a ON a.id = k.account_id"
        ))
        .bind(hash.as_slice())
        .bind(window.minute())
        .bind(bound_nanos(now))
        .bind(i64::from(start))
        .bind(i64::from(DB::RATE_SLOTS))
        .bind(i64::from(crate::rate_slots::PER_SLOT))
        .fetch_optional(&self.pool)
        .await
        .map_err(backend)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (key, account, counted) = row.into_parts()?;
        if key.rate_limit >= crate::rate_slots::PER_SLOT {
            self.leases.mark_high_volume(*hash);
        }
        if !key.is_live(now) {
            return Ok(Some(KeyCheck::of(
                Arc::new(key),
                None,
                account.map(Arc::new),
            )));
        }
        let hit = match counted {
            Some((used, seen)) => {
                if used == 1 {
                    forget_older_windows(&self.pool, key.id.into(), window.minute()).await?;
                }
                // The other slots as the statement began, plus this request.
                let total = u32_of(seen + 1, "rate-limit count")?;
                RateLimitHit::new(true, total.min(key.rate_limit))
            }
            // That slot was full (or the limit is 0): every slot decides.
            None => self.hit_rate_limit(key.id, window, key.rate_limit).await?,
        };
        Ok(Some(KeyCheck::of(
            Arc::new(key),
            Some(hit),
            account.map(Arc::new),
        )))
    }
}

#[allow(private_bounds)]
impl<DB: Dialect> SqlStore<DB> {
    /// The key with `hash` and its account, nothing counted: on PostgreSQL from the records
    /// kept for it while both rows' versions are the ones they were read at (`auth_records`:
    /// why a row's `xmin` is its version), otherwise read whole (and kept).
    pub(crate) async fn key_and_account(
        &self,
        hash: &KeyHash,
    ) -> StoreResult<Option<(Arc<ApiKey>, Option<Arc<Account>>)>> {
        if !DB::ROW_VERSIONS {
            let row = query_as::<DB, AuthRow>(KEY_AND_ACCOUNT)
                .bind(hash.as_slice())
                .fetch_optional(&self.pool)
                .await
                .map_err(backend)?;
            let Some(row) = row else {
                return Ok(None);
            };
            let (key, account, _) = row.into_parts()?;
            return Ok(Some((Arc::new(key), account.map(Arc::new))));
        }
        if let Some(kept) = self.auth_records.get(hash) {
            let versions = query_as::<DB, (i64, Option<i64>)>(VERSIONS)
                .bind(hash.as_slice())
                .fetch_optional(&self.pool)
                .await
                .map_err(backend)?;
            match versions {
                None => {
                    self.auth_records.forget(hash);
                    return Ok(None);
                }
                Some(now) if now == kept.versions => return Ok(Some((kept.key, kept.account))),
                Some(_) => {}
            }
        }
        let row = query_as::<DB, VersionedAuthRow>(KEY_AND_ACCOUNT_VERSIONED)
            .bind(hash.as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(backend)?;
        let Some((row, versions)) = row else {
            self.auth_records.forget(hash);
            return Ok(None);
        };
        let (key, account, _) = row.into_parts()?;
        let (key, account) = (Arc::new(key), account.map(Arc::new));
        self.auth_records
            .keep(*hash, versions, key.clone(), account.clone());
        Ok(Some((key, account)))
    }
}
