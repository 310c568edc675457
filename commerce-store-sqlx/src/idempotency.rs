//! Idempotency records.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::AssertSqlSafe;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::rows::*;
use crate::sql_store::*;

pub(crate) async fn begin_idempotent_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    claim: &IdempotencyClaim,
    fingerprint: &str,
    now: DateTime<Utc>,
    expires_before: DateTime<Utc>,
    stale_before: DateTime<Utc>,
) -> StoreResult<IdempotencyBegin> {
    let created = nanos(now)?;
    let (scope, token) = (&claim.scope, claim.token.0);
    // The unique key decides a race between first requests; the row lock decides
    // a race between takeovers. A record deleted between the two is retried.
    for _ in 0..5 {
        let inserted: Option<i64> = query_scalar::<DB, i64>(
            "INSERT INTO idempotency_records (account_id, idem_key, fingerprint, \
             created_at, holder_token) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (account_id, idem_key) DO NOTHING RETURNING account_id",
        )
        .bind(scope.account_id)
        .bind(&scope.key)
        .bind(fingerprint)
        .bind(created)
        .bind(token)
        .fetch_optional(&mut *c)
        .await
        .map_err(backend)?;
        if inserted.is_some() {
            return Ok(IdempotencyBegin::Started);
        }
        let record: Option<IdempotencyRow> =
            query_as::<DB, IdempotencyRow>(AssertSqlSafe(format!(
                "SELECT fingerprint, created_at, holder_token, order_id, quote_id, response_status, \
             response_body FROM idempotency_records \
             WHERE account_id = $1 AND idem_key = $2{}",
                DB::FOR_UPDATE
            )))
            .bind(scope.account_id)
            .bind(&scope.key)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
        let Some(record) = record else { continue };
        // The one rule of commerce-core decides; this function only carries it out.
        let record = record.into_record()?;
        let decision =
            IdempotencyRecord::decide(Some(&record), fingerprint, expires_before, stale_before);
        match &decision {
            IdempotencyDecision::Answer(_) => {}
            IdempotencyDecision::Recover(_) => {
                query::<DB>(
                    "UPDATE idempotency_records SET created_at = $3, holder_token = $4 \
                     WHERE account_id = $1 AND idem_key = $2",
                )
                .bind(scope.account_id)
                .bind(&scope.key)
                .bind(created)
                .bind(token)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
            }
            IdempotencyDecision::Start => {
                query::<DB>(
                    "UPDATE idempotency_records SET fingerprint = $3, created_at = $4, \
                     holder_token = $5, order_id = NULL, quote_id = NULL, response_status = NULL, \
                     response_body = NULL WHERE account_id = $1 AND idem_key = $2",
                )
                .bind(scope.account_id)
                .bind(&scope.key)
                .bind(fingerprint)
                .bind(created)
                .bind(token)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
            }
        }
        return Ok(decision.into_begin());
    }
    Err(StoreError::backend(CorruptRow(
        "idempotency record kept disappearing".into(),
    )))
}

/// Links the record `claim` holds to what its request created (inside the creation's
/// transaction): `false`, writing nothing, when the claim no longer holds it (a retry took it
/// over while the request stalled past the stale time), and the caller rolls back. Fenced by
/// the token; on PostgreSQL the update waits for a takeover under way and then sees its token.
pub(crate) async fn link_record<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    claim: &IdempotencyClaim,
    created: Created,
) -> StoreResult<bool> {
    let (column, id) = match created {
        Created::Order(id) => ("order_id", id.get()),
        Created::Quote(id) => ("quote_id", id.get()),
    };
    let linked = query::<DB>(AssertSqlSafe(format!(
        "UPDATE idempotency_records SET {column} = $3 \
         WHERE account_id = $1 AND idem_key = $2 AND holder_token = $4"
    )))
    .bind(claim.scope.account_id)
    .bind(&claim.scope.key)
    .bind(id)
    .bind(claim.token.0)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    Ok(linked.rows_affected() > 0)
}

#[async_trait]
impl<DB: Dialect> IdempotencyStore for SqlStore<DB> {
    async fn begin_idempotent(
        &self,
        claim: &IdempotencyClaim,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> StoreResult<IdempotencyBegin> {
        let mut tx = self.write().await?;
        let result = begin_idempotent_in(
            &mut tx.tx,
            claim,
            fingerprint,
            now,
            expires_before,
            stale_before,
        )
        .await;
        tx.finish(result).await
    }

    async fn finish_idempotent(
        &self,
        claim: &IdempotencyClaim,
        response: StoredResponse,
    ) -> StoreResult<()> {
        let mut tx = self.write().await?;
        let result = query::<DB>(
            "UPDATE idempotency_records SET response_status = $3, response_body = $4 \
             WHERE account_id = $1 AND idem_key = $2 AND holder_token = $5",
        )
        .bind(claim.scope.account_id)
        .bind(&claim.scope.key)
        .bind(i32::from(response.status))
        .bind(response.body.as_slice())
        .bind(claim.token.0)
        .execute(&mut tx.tx)
        .await
        .map_err(backend)
        .and_then(|done| found(done.rows_affected()));
        tx.finish(result).await
    }

    async fn abandon_idempotent(&self, claim: &IdempotencyClaim) -> StoreResult<()> {
        let mut tx = self.write().await?;
        let result = query::<DB>(
            "DELETE FROM idempotency_records WHERE account_id = $1 AND idem_key = $2 \
             AND holder_token = $3 AND response_status IS NULL AND order_id IS NULL \
             AND quote_id IS NULL",
        )
        .bind(claim.scope.account_id)
        .bind(&claim.scope.key)
        .bind(claim.token.0)
        .execute(&mut tx.tx)
        .await
        .map(|_| ())
        .map_err(backend);
        tx.finish(result).await
    }

    async fn purge_idempotency(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        let before = nanos(before)?;
        let mut tx = self.write().await?;
        let result = query::<DB>("DELETE FROM idempotency_records WHERE created_at < $1")
            .bind(before)
            .execute(&mut tx.tx)
            .await
            .map(|done| done.rows_affected())
            .map_err(backend);
        tx.finish(result).await
    }
}
