//! The dispatcher's side of the outbox: claims and recorded attempts.
//!
//! Claims are one transaction, serialised between the dispatchers sharing the database (a
//! transaction-scoped advisory lock on PostgreSQL, the writer lock on SQLite), so that each
//! counts the leases of the claims before it: the deliveries in flight per endpoint and per
//! account, read from an index of the leased ones, then the due deliveries in claim order,
//! passing over those of endpoints or accounts that are full or whose breaker is open, offered
//! to a [`ClaimRoom`] until it has enough candidates; it picks among them (the accounts with
//! the fewest in flight first), then one conditional `UPDATE` marks the picked ones with the
//! dispatcher's lease. An attempt is
//! recorded only while that lease still holds the delivery.

use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, QueryBuilder};

use crate::dialect::*;
use crate::rows::*;
use crate::sql_store::*;

/// The ids of up to `limit` deliveries a claim may take at `at` (see
/// `WebhookStore::claim_deliveries`), chosen by `room` among the candidates offered to it: read
/// in windows of the due deliveries in claim order ([`CANDIDATES_PER_CLAIMED`] per delivery it
/// may take, so one window is enough when the backlog has room), each window after the last one
/// read and without the endpoints and accounts that are full, so that a long backlog of a
/// full endpoint or account is not read again and again (at most a few windows per claim).
pub(crate) async fn pick_claimable<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    at: i64,
    limit: usize,
    mut room: ClaimRoom,
) -> StoreResult<Vec<i64>> {
    const WINDOWS: usize = 8;
    let window = limit.max(16) * CANDIDATES_PER_CLAIMED;
    let mut after: Option<(i64, i64)> = None;
    for _ in 0..WINDOWS {
        let mut q = QueryBuilder::<DB>::new(
            "SELECT d.id, d.endpoint_id, e.account_id, d.next_attempt_at \
             FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id \
             WHERE d.status = 'pending' AND d.next_attempt_at <= ",
        );
        q.push_arg(at)
            .push(" AND (d.lease_until IS NULL OR d.lease_until <= ")
            .push_arg(at)
            // The breaker's rule (`Breaker::is_open`): open while `now < open_until`.
            .push(") AND e.enabled AND (e.breaker_open_until IS NULL OR e.breaker_open_until <= ")
            .push_arg(at)
            .push(
                ") AND (d.order_id IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_deliveries p \
                 WHERE p.endpoint_id = d.endpoint_id AND p.order_id = d.order_id \
                 AND p.status = 'pending' AND p.id < d.id))",
            );
        if let Some((due, id)) = after {
            q.push(" AND (d.next_attempt_at > ")
                .push_arg(due)
                .push(" OR (d.next_attempt_at = ")
                .push_arg(due)
                .push(" AND d.id > ")
                .push_arg(id)
                .push("))");
        }
        let full: Vec<WebhookId> = room.full_endpoints().collect();
        if !full.is_empty() {
            q.push(" AND d.endpoint_id NOT IN (");
            crate::push_list(&mut q, &full);
            q.push(")");
        }
        let full: Vec<AccountId> = room.full_accounts().collect();
        if !full.is_empty() {
            q.push(" AND e.account_id NOT IN (");
            crate::push_list(&mut q, &full);
            q.push(")");
        }
        q.push(" ORDER BY d.next_attempt_at, d.id LIMIT ")
            .push_arg(i64::try_from(window).unwrap_or(i64::MAX));
        let rows: Vec<(i64, i64, i64, i64)> = q
            .build_as::<(i64, i64, i64, i64)>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        let read = rows.len();
        for (id, endpoint, account, due) in rows {
            room.offer(
                DeliveryId::new(id),
                WebhookId::new(endpoint),
                AccountId::new(account),
            );
            after = Some((due, id));
        }
        if room.has_enough(limit) || read < window {
            break;
        }
    }
    Ok(room.pick(limit).into_iter().map(DeliveryId::get).collect())
}

/// Records attempts, each of a delivery held by its lease (see
/// `WebhookStore::finish_delivery`), in a few statements, whatever their number: whether each
/// was recorded (`false`, and nothing written to the delivery, when its lease does not hold it
/// any more).
///
/// The endpoints first, as every write of an endpoint and its deliveries takes them
/// (deleting one locks it, then its deliveries): no deadlock. An endpoint is written only
/// when an outcome changes it, so that the attempts of one endpoint, sent at once, do not
/// queue on its row lock: a success clears the failing streak and closes the breaker of an
/// endpoint that has either (one statement for all); a failure (rarer) reads the endpoint's
/// breaker under its row lock, applies [`Breaker::after`] and writes it with the failing
/// streak, or disables the endpoint (two statements each, after the successes: of attempts
/// that finished together, a failure is kept).
pub(crate) async fn record_attempts<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    attempts: Vec<(DeliveryId, LeaseToken, AttemptOutcome)>,
) -> StoreResult<Vec<bool>> {
    // A success (a delivery delivered) ends the failing streak and closes the breaker
    // (`Breaker::after` of a success is `Breaker::CLOSED`, whatever it was).
    let (succeeded, failed): (Vec<_>, Vec<_>) = attempts
        .iter()
        .partition(|(_, _, o)| o.status == DeliveryStatus::Delivered);
    for chunk in succeeded.chunks(crate::MAX_BIND_CHUNK / 2) {
        let mut q = QueryBuilder::<DB>::new(
            "UPDATE webhook_endpoints SET failing_since = NULL, breaker_failures = 0, \
             breaker_open_until = NULL, failed_attempts = 0 WHERE (failing_since IS NOT NULL \
             OR breaker_failures <> 0 OR breaker_open_until IS NOT NULL \
             OR failed_attempts <> 0) \
             AND id IN (SELECT d.endpoint_id FROM webhook_deliveries d WHERE ",
        );
        for (n, (delivery, lease, _)) in chunk.iter().enumerate() {
            if n > 0 {
                q.push(" OR ");
            }
            q.push("(d.id = ")
                .push_arg(*delivery)
                .push(" AND d.lease_owner = ")
                .push_arg(lease.as_str())
                .push(")");
        }
        q.push(")");
        q.build_statement()
            .execute(&mut *c)
            .await
            .map_err(backend)?;
    }
    for (delivery, lease, outcome) in failed {
        let held: Option<(i64, i64, Option<i64>)> =
            query_as::<DB, (i64, i64, Option<i64>)>(AssertSqlSafe(format!(
                "SELECT e.id, e.breaker_failures, e.breaker_open_until FROM webhook_endpoints e \
                 WHERE e.id = (SELECT endpoint_id FROM webhook_deliveries \
                 WHERE id = $1 AND lease_owner = $2){}",
                DB::FOR_UPDATE
            )))
            .bind(*delivery)
            .bind(lease.as_str())
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
        let Some((endpoint, failures, open_until)) = held else {
            continue;
        };
        let breaker = Breaker::new(
            u32::try_from(failures).unwrap_or(u32::MAX),
            open_until.map(crate::rows::instant),
        )
        .after(outcome);
        query::<DB>(
            "UPDATE webhook_endpoints SET failing_since = $2, \
             enabled = CASE WHEN $3 IS NULL THEN enabled ELSE FALSE END, \
             disabled_reason = COALESCE($3, disabled_reason), \
             updated_at = CASE WHEN $3 IS NULL THEN updated_at ELSE $4 END, \
             disabled_at = CASE WHEN $3 IS NULL THEN disabled_at ELSE $4 END, \
             breaker_failures = $5, breaker_open_until = $6, \
             failed_attempts = failed_attempts + 1 WHERE id = $1",
        )
        .bind(endpoint)
        .bind(opt_nanos(outcome.failing_since)?)
        .bind(outcome.disable.map(|r| r.as_str().to_owned()))
        .bind(nanos(outcome.attempted_at)?)
        .bind(i64::from(breaker.failures))
        .bind(opt_nanos(breaker.open_until)?)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    }

    // Then the deliveries: one statement per chunk, the values of each row in a `VALUES`
    // list (its columns are `column1`, ... on both databases).
    let mut rows = Vec::with_capacity(attempts.len());
    for (delivery, lease, outcome) in &attempts {
        rows.push((
            *delivery,
            lease.as_str(),
            outcome.status.as_str(),
            opt_nanos(outcome.next_attempt_at)?,
            nanos(outcome.attempted_at)?,
            outcome.status_code.map(i32::from),
            &outcome.error,
        ));
    }
    let mut recorded = std::collections::HashSet::with_capacity(rows.len());
    for chunk in rows.chunks(ROWS_PER_STATEMENT) {
        let mut q = QueryBuilder::<DB>::new(
            "UPDATE webhook_deliveries SET status = v.column3, attempts = attempts + 1, \
             next_attempt_at = v.column4, last_attempt_at = v.column5, \
             last_status_code = v.column6, last_error = v.column7, lease_owner = NULL, \
             lease_until = NULL FROM (",
        );
        q.push_values(
            chunk,
            |mut row, (id, lease, status, next, at, code, error)| {
                row.push_arg(*id)
                    .push_arg(*lease)
                    .push_arg(*status)
                    .push_arg(*next)
                    .push_arg(*at)
                    .push_arg(*code)
                    .push_arg(*error);
            },
        );
        q.push(
            ") AS v WHERE webhook_deliveries.id = v.column1 \
             AND webhook_deliveries.lease_owner = v.column2 RETURNING webhook_deliveries.id",
        );
        let done: Vec<i64> = q
            .build_scalar::<i64>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        recorded.extend(done);
    }
    Ok(attempts
        .iter()
        .map(|(id, _, _)| recorded.contains(&id.get()))
        .collect())
}

/// Rows of one multi-row statement (7 values each).
const ROWS_PER_STATEMENT: usize = 100;

/// [`WebhookBacklog`] at `now` (nanoseconds): one statement of three counts, the due ones read
/// from the partial index of pending deliveries (`webhook_deliveries_due`).
pub(crate) async fn backlog<DB: Dialect>(
    pool: &sqlx::Pool<DB>,
    now: i64,
) -> StoreResult<WebhookBacklog> {
    let (due, leased, open_breakers) = query_as::<DB, (i64, i64, i64)>(
        "SELECT (SELECT COUNT(*) FROM webhook_deliveries d \
         JOIN webhook_endpoints e ON e.id = d.endpoint_id \
         WHERE d.status = 'pending' AND d.next_attempt_at <= $1 \
         AND (d.lease_until IS NULL OR d.lease_until <= $1) AND e.enabled), \
         (SELECT COUNT(*) FROM webhook_deliveries \
         WHERE status = 'pending' AND lease_until > $1), \
         (SELECT COUNT(*) FROM webhook_endpoints WHERE enabled AND breaker_open_until > $1)",
    )
    .bind(now)
    .fetch_one(pool)
    .await
    .map_err(backend)?;
    let count = |n: i64| u64::try_from(n).unwrap_or_default();
    Ok(WebhookBacklog::new(
        count(due),
        count(leased),
        count(open_breakers),
    ))
}
