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

/// `sql` with a request's start bound: `$1` the account, `$2` the key, `$3` the fingerprint,
/// `$4` the start (nanoseconds), `$5` the request's token.
fn started<DB: Dialect>(
    sql: impl sqlx::SqlSafeStr,
    claim: &IdempotencyClaim,
    fingerprint: &str,
    created: i64,
) -> Q<'static, DB, ()> {
    query::<DB>(sql)
        .bind(claim.scope.account_id)
        .bind(&claim.scope.key)
        .bind(fingerprint)
        .bind(created)
        .bind(claim.token.0)
}

/// [`IdempotencyStore::begin_idempotent`] in the transaction of `c`: a request with
/// `fingerprint` and `claim`, started at `created` (nanoseconds), carrying out `decide`
/// ([`IdempotencyRecord::decide`]) on the record found under the key.
async fn begin_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    claim: &IdempotencyClaim,
    fingerprint: &str,
    created: i64,
    decide: impl Fn(&IdempotencyRecord) -> IdempotencyDecision,
) -> StoreResult<IdempotencyBegin> {
    let scope = &claim.scope;
    // The unique key decides a race between first requests; the row lock decides
    // a race between takeovers. A record deleted between the two is retried.
    for _ in 0..5 {
        let inserted = started::<DB>(
            "INSERT INTO idempotency_records (account_id, idem_key, fingerprint, \
             created_at, holder_token) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (account_id, idem_key) DO NOTHING",
            claim,
            fingerprint,
            created,
        )
        .execute(&mut *c)
        .await
        .map_err(backend)?;
        if inserted.rows_affected() > 0 {
            return Ok(IdempotencyBegin::Started);
        }
        let record: Option<IdempotencyRow> =
            query_as::<DB, IdempotencyRow>(AssertSqlSafe(format!(
                "SELECT fingerprint, created_at, holder_token, order_id, quote_id, \
                 response_status, response_body FROM idempotency_records \
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
        let decision = decide(&record);
        // Both take the record over with this request's start and token (the fingerprint is
        // the same on a recovery); a start also forgets what the record held.
        let cleared = match &decision {
            IdempotencyDecision::Answer(_) => None,
            IdempotencyDecision::Recover(_) => Some(""),
            IdempotencyDecision::Start => Some(
                ", order_id = NULL, quote_id = NULL, response_status = NULL, \
                 response_body = NULL",
            ),
        };
        if let Some(cleared) = cleared {
            let sql = format!(
                "UPDATE idempotency_records SET fingerprint = $3, created_at = $4, \
                 holder_token = $5{cleared} WHERE account_id = $1 AND idem_key = $2"
            );
            started::<DB>(AssertSqlSafe(sql), claim, fingerprint, created)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
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
    let mut q = sqlx::QueryBuilder::<DB>::new("");
    push_link(&mut q, claim, created);
    let linked = q
        .build_statement()
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    Ok(linked.rows_affected() > 0)
}

/// Pushes [`link_record`]'s fenced update (it changes no row when the claim no longer holds
/// the record), its values bound.
pub(crate) fn push_link<DB: Dialect>(
    q: &mut sqlx::QueryBuilder<DB>,
    claim: &IdempotencyClaim,
    created: Created,
) {
    let (column, id) = match created {
        Created::Order(id) => ("order_id", id.get()),
        Created::Quote(id) => ("quote_id", id.get()),
    };
    q.push(format_args!("UPDATE idempotency_records SET {column} = "))
        .push_arg(id)
        .push(" WHERE account_id = ")
        .push_arg(claim.scope.account_id)
        .push(" AND idem_key = ")
        .push_arg(claim.scope.key.as_str())
        .push(" AND holder_token = ")
        .push_arg(claim.token.0);
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
        let created = nanos(now)?;
        let decide = |record: &IdempotencyRecord| {
            IdempotencyRecord::decide(Some(record), fingerprint, expires_before, stale_before)
        };
        let mut tx = self.write().await?;
        let result = begin_in(&mut tx.tx, claim, fingerprint, created, decide).await;
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
