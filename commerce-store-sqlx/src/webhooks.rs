//! Webhook endpoints, the outbox of their deliveries, and the dispatcher's leases.
//!
//! The outbox is written by the order writes themselves, inside their transaction: the
//! statement that records the order's timeline entry also inserts a delivery of its event
//! ([`OutboxEvent`]) for every enabled endpoint of the order's account that receives the
//! event's type (on PostgreSQL in one statement, a data-modifying `WITH`; on SQLite in two).
//! Those writes learn whether there is any such endpoint from a column of a statement they run
//! anyway ([`subscribed`]), so an account without endpoints pays no statement and no rendering.
//!
//! Claims are one transaction, serialised between the dispatchers sharing the database (a
//! transaction-scoped advisory lock on PostgreSQL, the writer lock on SQLite), so that each
//! counts the leases of the claims before it: the deliveries in flight per endpoint, read from
//! an index of the leased ones, then the due deliveries in claim order, passing over those of
//! endpoints that are full or whose breaker is open ([`ClaimRoom`] decides), then one
//! conditional `UPDATE` marks the picked ones with the dispatcher's lease. An attempt is
//! recorded only while that lease still holds the delivery.

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use commerce_core::webhooks::order_event;
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, QueryBuilder};

use crate::dialect::*;
use crate::order_reads::limit;
use crate::rows::*;
use crate::sql_store::*;

/// The head of an insert of deliveries, followed by a `SELECT` of their values.
macro_rules! insert_deliveries {
    () => {
        "INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, \
         order_id, payload, status, attempts, next_attempt_at, created_at) "
    };
}

/// A boolean select-list item: whether the account `account` (an SQL expression, e.g. a
/// column of the statement's own table) has an enabled endpoint that receives `kind`.
pub(crate) fn subscribed<DB: Dialect>(account: &str, kind: EventType) -> String {
    format!(
        "EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = {account} \
         AND e.enabled AND {}(',' || e.events || ',', ',{},') > 0)",
        DB::INSTR,
        kind.as_str()
    )
}

/// An order event rendered for the outbox (by `commerce_core::webhooks::order_event`), queued
/// by the statement that writes the order's timeline entry
/// ([`record_timeline_entry`](crate::orders::record_timeline_entry)).
pub(crate) struct OutboxEvent {
    account: AccountId,
    event: NewEvent,
}

impl OutboxEvent {
    /// Renders the event `kind` of `order` as it stands after the change.
    pub(crate) fn render(
        kind: EventType,
        order: &Order,
        previous: Option<OrderStatus>,
        context: EventContext,
    ) -> Self {
        OutboxEvent {
            account: order.account_id,
            event: order_event(kind, order, previous, context),
        }
    }

    /// The insert of one pending delivery of the event for every enabled endpoint of the
    /// account that receives its type; its 7 parameters are numbered from `$first`
    /// ([`bind`](Self::bind) binds them in that order).
    pub(crate) fn sql<DB: Dialect>(first: usize) -> String {
        let p = |n: usize| format!("${}", first + n);
        format!(
            concat!(
                insert_deliveries!(),
                "SELECT id, account_id, {event}, {kind}, {order}, {payload}, 'pending', 0, \
                 {at}, {at} FROM webhook_endpoints WHERE account_id = {account} AND enabled \
                 AND {instr}(',' || events || ',', {pattern}) > 0"
            ),
            account = p(0),
            event = p(1),
            kind = p(2),
            order = p(3),
            payload = p(4),
            at = p(5),
            pattern = p(6),
            instr = DB::INSTR,
        )
    }

    /// Binds the parameters of [`sql`](Self::sql), after those `q` has already.
    pub(crate) fn bind<DB: Dialect, O>(
        self,
        q: Q<'static, DB, O>,
    ) -> StoreResult<Q<'static, DB, O>> {
        let OutboxEvent { account, event } = self;
        Ok(q.bind(account)
            .bind(event.id)
            .bind(event.kind.as_str())
            .bind(event.order_id)
            .bind(event.payload)
            .bind(nanos(event.created_at)?)
            .bind(format!(",{},", event.kind.as_str())))
    }
}

/// `" AND <column> = $n"` when the call is limited to one account's endpoints.
fn owned_by(column: &str, n: usize, account: Option<AccountId>) -> String {
    match account {
        Some(_) => format!(" AND {column} = ${n}"),
        None => String::new(),
    }
}

/// Binds the account of [`owned_by`]'s condition, when there is one.
fn bind_owner<DB: Dialect, O>(
    q: Q<'static, DB, O>,
    account: Option<AccountId>,
) -> Q<'static, DB, O> {
    match account {
        Some(account) => q.bind(account),
        None => q,
    }
}

/// The endpoint `id` (of `account` when given); `lock` is a row-lock suffix or empty.
async fn find_webhook<'e, DB: Dialect>(
    on: impl Into<On<'e, DB>>,
    account: Option<AccountId>,
    id: WebhookId,
    lock: &str,
) -> StoreResult<Option<Webhook>> {
    let q = bind_owner(
        query_as::<DB, WebhookRow>(AssertSqlSafe(format!(
            concat!(
                "SELECT ",
                webhook_cols!(),
                " FROM webhook_endpoints WHERE id = $1{}{}"
            ),
            owned_by("account_id", 2, account),
            lock
        )))
        .bind(id),
        account,
    );
    let row = q.fetch_optional(on).await.map_err(backend)?;
    row.map(WebhookRow::into_domain).transpose()
}

/// Writes every changeable column of `webhook` (read and changed under its row lock).
async fn write_webhook<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    webhook: &Webhook,
) -> StoreResult<()> {
    let (previous, until) = match &webhook.previous_secret {
        Some((secret, until)) => (Some(secret.expose().to_owned()), Some(nanos(*until)?)),
        None => (None, None),
    };
    query::<DB>(
        "UPDATE webhook_endpoints SET url = $2, events = $3, description = $4, enabled = $5, \
         disabled_reason = $6, secret = $7, previous_secret = $8, previous_secret_until = $9, \
         failing_since = $10, updated_at = $11, breaker_failures = $12, \
         breaker_open_until = $13, disabled_at = $14 WHERE id = $1",
    )
    .bind(webhook.id)
    .bind(&webhook.url)
    .bind(events_text(&webhook.events))
    .bind(&webhook.description)
    .bind(webhook.enabled)
    .bind(webhook.disabled_reason.map(|r| r.as_str().to_owned()))
    .bind(webhook.secret.expose().to_owned())
    .bind(previous)
    .bind(until)
    .bind(opt_nanos(webhook.failing_since)?)
    .bind(nanos(webhook.updated_at)?)
    .bind(i64::from(webhook.breaker.failures))
    .bind(opt_nanos(webhook.breaker.open_until)?)
    .bind(opt_nanos(webhook.disabled_at)?)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    Ok(())
}

/// Ends the pending deliveries that `which` picks (a condition on `webhook_deliveries` whose
/// parameters are numbered from `$2`): failed, nothing due, no lease, `last_error` `$1`.
fn end_pending(which: &str) -> String {
    format!(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = $1, \
         next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL \
         WHERE status = 'pending' AND {which}"
    )
}

/// Queues `event` for the endpoint `webhook` (of `account` when given) on request, in the
/// open transaction `c` (see `WebhookStore::queue_event`): the endpoint's row lock puts
/// requests for one endpoint in a row, so each counts what the one before it inserted.
/// `event` gets the locked endpoint and returns the event to queue (`None`: not found).
async fn queue_manual<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: Option<AccountId>,
    webhook: WebhookId,
    limit: usize,
    event: impl AsyncFnOnce(&mut PoolConnection<DB>) -> StoreResult<Option<NewEvent>>,
) -> Result<Delivery, QueueDeliveryError> {
    let endpoint = find_webhook(&mut *c, account, webhook, DB::FOR_UPDATE)
        .await?
        .ok_or(QueueDeliveryError::NotFound)?;
    let event = event(c).await?.ok_or(QueueDeliveryError::NotFound)?;
    if !endpoint.enabled {
        return Err(QueueDeliveryError::Disabled);
    }
    let pending = query_scalar::<DB, i64>(
        "SELECT COUNT(*) FROM webhook_deliveries \
         WHERE endpoint_id = $1 AND status = 'pending' AND manual",
    )
    .bind(webhook)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    if usize::try_from(pending).unwrap_or(usize::MAX) >= limit {
        return Err(QueueDeliveryError::Busy { limit });
    }
    let row = query_as::<DB, DeliveryRow>(concat!(
        "INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, \
         order_id, payload, status, attempts, next_attempt_at, created_at, manual) \
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7, TRUE) RETURNING ",
        delivery_cols!()
    ))
    .bind(webhook)
    .bind(endpoint.account_id)
    .bind(event.id)
    .bind(event.kind.as_str())
    .bind(event.order_id)
    .bind(event.payload)
    .bind(nanos(event.created_at)?)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    Ok(row.into_domain()?)
}

// Crate-internal: `Dialect` is this crate's own seam.
#[allow(private_bounds)]
impl<DB: Dialect> SqlStore<DB> {
    /// Runs `change` on the locked endpoint and writes it back, in one transaction.
    async fn change_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        change: impl FnOnce(&mut Webhook) + Send,
    ) -> StoreResult<Option<Webhook>> {
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            let Some(mut webhook) = find_webhook(&mut *c, account, id, DB::FOR_UPDATE).await?
            else {
                return Ok(None);
            };
            change(&mut webhook);
            write_webhook(c, &webhook).await?;
            Ok(Some(webhook))
        }
        .await;
        tx.finish(result).await
    }
}

#[async_trait]
impl<DB: Dialect> WebhookStore for SqlStore<DB> {
    async fn insert_webhook(
        &self,
        new: NewWebhook,
        limit: usize,
    ) -> Result<Webhook, InsertWebhookError> {
        let at = nanos(new.created_at)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            // The account row is the lock that puts registrations of one account in a row:
            // each counts what the one before it inserted.
            if !lock_account(c, new.account_id).await? {
                return Err(StoreError::NotFound.into());
            }
            let count: i64 = query_scalar::<DB, i64>(
                "SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = $1",
            )
            .bind(new.account_id)
            .fetch_one(&mut *c)
            .await
            .map_err(backend)?;
            if usize::try_from(count).unwrap_or(usize::MAX) >= limit {
                return Err(InsertWebhookError::TooMany { limit });
            }
            query_scalar::<DB, i64>(
                "INSERT INTO webhook_endpoints (account_id, url, events, description, enabled, \
                 secret, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, TRUE, $5, $6, $6) RETURNING id",
            )
            .bind(new.account_id)
            .bind(&new.url)
            .bind(events_text(&new.events))
            .bind(&new.description)
            .bind(new.secret.expose().to_owned())
            .bind(at)
            .fetch_one(&mut *c)
            .await
            .map_err(|e| InsertWebhookError::Store(backend(e)))
        }
        .await;
        let id = tx.finish(result).await?;
        Ok(Webhook::registered(WebhookId(id), new))
    }

    async fn webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> StoreResult<Option<Webhook>> {
        find_webhook(&self.pool, account, id, "").await
    }

    async fn webhooks(&self, account: AccountId, page: PageRequest) -> StoreResult<Page<Webhook>> {
        let mut q = sqlx::QueryBuilder::<DB>::new(concat!(
            "SELECT ",
            webhook_cols!(),
            ", COUNT(*) OVER () AS total FROM webhook_endpoints WHERE account_id = "
        ));
        q.push_arg(account).push(" ORDER BY id");
        limit(&mut q, page)?;
        let rows: Vec<(WebhookRow, i64)> = q
            .build_as::<Counted<WebhookRow>>()
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
        let total = match rows.first() {
            Some((_, total)) => *total,
            None if page.offset() == 0 => 0,
            None => query_scalar::<DB, i64>(
                "SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = $1",
            )
            .bind(account)
            .fetch_one(&self.pool)
            .await
            .map_err(backend)?,
        };
        Ok(Page {
            items: rows
                .into_iter()
                .map(|(row, _)| row.into_domain())
                .collect::<StoreResult<_>>()?,
            total: total as u64,
        })
    }

    async fn update_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        patch: WebhookPatch,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Webhook>> {
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            let Some(mut webhook) = find_webhook(&mut *c, account, id, DB::FOR_UPDATE).await?
            else {
                return Ok(None);
            };
            let moved = patch.changes_url(&webhook);
            patch.apply(&mut webhook, now);
            write_webhook(c, &webhook).await?;
            if moved {
                query::<DB>(AssertSqlSafe(end_pending("endpoint_id = $2")))
                    .bind(URL_CHANGED)
                    .bind(id)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
            }
            Ok(Some(webhook))
        }
        .await;
        tx.finish(result).await
    }

    async fn delete_webhook(&self, account: Option<AccountId>, id: WebhookId) -> StoreResult<bool> {
        // The endpoint, then its deliveries, in one transaction (no foreign key cascades:
        // see the migration).
        let endpoint = bind_owner(
            query::<DB>(AssertSqlSafe(format!(
                "DELETE FROM webhook_endpoints WHERE id = $1{}",
                owned_by("account_id", 2, account)
            )))
            .bind(id),
            account,
        );
        let deliveries =
            query::<DB>("DELETE FROM webhook_deliveries WHERE endpoint_id = $1").bind(id);
        let mut tx = self.write().await?;
        let result = async {
            let deleted = endpoint.execute(&mut tx.tx).await.map_err(backend)?;
            if deleted.rows_affected() == 0 {
                return Ok(false);
            }
            deliveries.execute(&mut tx.tx).await.map_err(backend)?;
            Ok(true)
        }
        .await;
        tx.finish(result).await
    }

    async fn rotate_webhook_secret(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        secret: WebhookSecret,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Webhook>> {
        self.change_webhook(account, id, |webhook| {
            webhook.rotate(secret, now, SECRET_OVERLAP)
        })
        .await
    }

    async fn queue_event(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        event: NewEvent,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let mut tx = self.write().await?;
        let result = queue_manual(&mut tx.tx, account, webhook, limit, async |_| {
            Ok(Some(event))
        })
        .await;
        tx.finish(result).await
    }

    async fn redeliver(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        delivery: DeliveryId,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let original = async |c: &mut PoolConnection<DB>| {
            let row = query_as::<DB, DeliveryRow>(concat!(
                "SELECT ",
                delivery_cols!(),
                " FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2"
            ))
            .bind(delivery)
            .bind(webhook)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
            let original = row.map(DeliveryRow::into_domain).transpose()?;
            Ok(original.map(|d| d.requeued(now)))
        };
        let mut tx = self.write().await?;
        let result = queue_manual(&mut tx.tx, account, webhook, limit, original).await;
        tx.finish(result).await
    }

    async fn deliveries(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> StoreResult<Option<Page<Delivery>>> {
        // One snapshot: the endpoint's existence and the page agree.
        let mut tx = self.read().await?;
        let result = async {
            let c = &mut tx.tx;
            let found = bind_owner(
                query_scalar::<DB, i64>(AssertSqlSafe(format!(
                    "SELECT id FROM webhook_endpoints WHERE id = $1{}",
                    owned_by("account_id", 2, account)
                )))
                .bind(webhook),
                account,
            );
            if found
                .fetch_optional(&mut *c)
                .await
                .map_err(backend)?
                .is_none()
            {
                return Ok(None);
            }
            let filter = |q: &mut sqlx::QueryBuilder<DB>| {
                q.push(" FROM webhook_deliveries WHERE endpoint_id = ")
                    .push_arg(webhook);
                if let Some(status) = status {
                    q.push(" AND status = ").push_arg(status.as_str());
                }
            };
            let mut q = sqlx::QueryBuilder::<DB>::new(concat!(
                "SELECT ",
                delivery_cols!(),
                ", COUNT(*) OVER () AS total"
            ));
            filter(&mut q);
            q.push(" ORDER BY id DESC");
            limit(&mut q, page)?;
            let rows: Vec<(DeliveryRow, i64)> = q
                .build_as::<Counted<DeliveryRow>>()
                .fetch_all(&mut *c)
                .await
                .map_err(backend)?;
            let total = match rows.first() {
                Some((_, total)) => *total,
                None if page.offset() == 0 => 0,
                None => {
                    let mut count = sqlx::QueryBuilder::<DB>::new("SELECT COUNT(*)");
                    filter(&mut count);
                    count
                        .build_scalar::<i64>()
                        .fetch_one(&mut *c)
                        .await
                        .map_err(backend)?
                }
            };
            let items = rows
                .into_iter()
                .map(|(row, _)| row.into_domain())
                .collect::<StoreResult<_>>()?;
            Ok(Some(Page {
                items,
                total: total as u64,
            }))
        }
        .await;
        tx.finish(result).await
    }

    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_for: TimeDelta,
        lease: &str,
        limit: usize,
        per_endpoint: usize,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let at = nanos(now)?;
        let until = nanos(now + lease_for)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            if !DB::FOR_UPDATE.is_empty() {
                // PostgreSQL: one claim at a time per schema, each in a snapshot taken after
                // the one before it committed (SQLite's writer lock does the same).
                query::<DB>(
                    "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.webhook_claims'))",
                )
                .execute(&mut *c)
                .await
                .map_err(backend)?;
            }
            let leased: Vec<i64> = query_scalar::<DB, i64>(
                "SELECT endpoint_id FROM webhook_deliveries \
                 WHERE lease_until > $1 AND status = 'pending'",
            )
            .bind(at)
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
            let mut counts = std::collections::HashMap::<WebhookId, usize>::new();
            for endpoint in leased {
                *counts.entry(WebhookId(endpoint)).or_default() += 1;
            }
            let mut room = ClaimRoom::new(per_endpoint, counts);
            let picked = pick_claimable(c, at, limit, &mut room).await?;
            if picked.is_empty() {
                return Ok(Vec::new());
            }
            let mut q = QueryBuilder::<DB>::new("UPDATE webhook_deliveries SET lease_owner = ");
            q.push_arg(lease)
                .push(", lease_until = ")
                .push_arg(until)
                .push(" WHERE status = 'pending' AND (lease_until IS NULL OR lease_until <= ")
                .push_arg(at)
                .push(") AND id IN (");
            crate::push_list(&mut q, &picked);
            q.push(concat!(") RETURNING ", delivery_cols!()));
            q.build_as::<DeliveryRow>()
                .fetch_all(&mut *c)
                .await
                .map_err(backend)
        }
        .await;
        let mut rows = tx.finish(result).await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        rows.sort_by_key(DeliveryRow::claim_order);
        // Then their endpoints (a dropped future here leaves leases that run out).
        let mut ids: Vec<WebhookId> = rows.iter().map(DeliveryRow::endpoint).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut webhooks = std::collections::HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(crate::MAX_BIND_CHUNK) {
            let mut q = crate::in_list::<DB, _>(
                concat!(
                    "SELECT ",
                    webhook_cols!(),
                    " FROM webhook_endpoints WHERE id IN ("
                ),
                chunk,
                ")",
            );
            let found: Vec<WebhookRow> = q
                .build_as::<WebhookRow>()
                .fetch_all(&self.pool)
                .await
                .map_err(backend)?;
            for row in found {
                let webhook = row.into_domain()?;
                webhooks.insert(webhook.id, webhook);
            }
        }
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            // An endpoint deleted since the claim took its deliveries with it.
            let Some(webhook) = webhooks.get(&row.endpoint()) else {
                continue;
            };
            claimed.push(ClaimedDelivery::new(
                row.into_domain()?,
                webhook.clone(),
                lease,
            ));
        }
        Ok(claimed)
    }

    async fn finish_delivery(
        &self,
        delivery: DeliveryId,
        lease: &str,
        outcome: AttemptOutcome,
    ) -> StoreResult<bool> {
        let recorded = self
            .finish_deliveries(vec![(delivery, lease.to_owned(), outcome)])
            .await?;
        Ok(recorded.first().copied().unwrap_or(false))
    }

    async fn finish_deliveries(
        &self,
        attempts: Vec<(DeliveryId, String, AttemptOutcome)>,
    ) -> StoreResult<Vec<bool>> {
        if attempts.is_empty() {
            return Ok(Vec::new());
        }
        // One transaction (one commit) for the attempts that finished together.
        let mut tx = self.write().await?;
        let result = record_attempts(&mut tx.tx, attempts).await;
        tx.finish(result).await
    }

    async fn purge_deliveries(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        let before = bound_nanos(before);
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            // The pending deliveries of endpoints disabled for 30 days expire first, so that
            // the delete takes them with the rest of the history.
            query::<DB>(AssertSqlSafe(end_pending(
                "endpoint_id IN (SELECT id FROM webhook_endpoints \
                 WHERE NOT enabled AND disabled_at < $2)",
            )))
            .bind(EXPIRED)
            .bind(before)
            .execute(&mut *c)
            .await
            .map_err(backend)?;
            let done = query::<DB>(
                "DELETE FROM webhook_deliveries WHERE (status <> 'pending' AND created_at < $1) \
                 OR NOT EXISTS (SELECT 1 FROM webhook_endpoints e \
                 WHERE e.id = webhook_deliveries.endpoint_id)",
            )
            .bind(before)
            .execute(&mut *c)
            .await
            .map_err(backend)?;
            Ok(done.rows_affected())
        }
        .await;
        tx.finish(result).await
    }
}

/// The ids of up to `limit` deliveries a claim may take at `at` (see
/// `WebhookStore::claim_deliveries`), in claim order, each allowed by `room`: read in windows
/// of the due deliveries in claim order, each window after the last one read and without the
/// endpoints that are full, so that a long backlog of a full endpoint is not read again and
/// again (at most a few windows per claim).
async fn pick_claimable<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    at: i64,
    limit: usize,
    room: &mut ClaimRoom,
) -> StoreResult<Vec<i64>> {
    const WINDOWS: usize = 8;
    let window = limit.max(16) * 2;
    let mut picked = Vec::new();
    let mut after: Option<(i64, i64)> = None;
    for _ in 0..WINDOWS {
        let mut q = QueryBuilder::<DB>::new(
            "SELECT d.id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d \
             JOIN webhook_endpoints e ON e.id = d.endpoint_id \
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
        let full: Vec<WebhookId> = room.full().collect();
        if !full.is_empty() {
            q.push(" AND d.endpoint_id NOT IN (");
            crate::push_list(&mut q, &full);
            q.push(")");
        }
        q.push(" ORDER BY d.next_attempt_at, d.id LIMIT ")
            .push_arg(i64::try_from(window).unwrap_or(i64::MAX));
        let rows: Vec<(i64, i64, i64)> = q
            .build_as::<(i64, i64, i64)>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        let read = rows.len();
        for (id, endpoint, due) in rows {
            if picked.len() >= limit {
                break;
            }
            if room.take(WebhookId(endpoint)) {
                picked.push(id);
            }
            after = Some((due, id));
        }
        if picked.len() >= limit || read < window {
            break;
        }
    }
    Ok(picked)
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
async fn record_attempts<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    attempts: Vec<(DeliveryId, String, AttemptOutcome)>,
) -> StoreResult<Vec<bool>> {
    // A success (a delivery delivered) ends the failing streak and closes the breaker
    // (`Breaker::after` of a success is `Breaker::CLOSED`, whatever it was).
    let (succeeded, failed): (Vec<_>, Vec<_>) = attempts
        .iter()
        .partition(|(_, _, o)| o.status == DeliveryStatus::Delivered);
    for chunk in succeeded.chunks(crate::MAX_BIND_CHUNK / 2) {
        let mut q = QueryBuilder::<DB>::new(
            "UPDATE webhook_endpoints SET failing_since = NULL, breaker_failures = 0, \
             breaker_open_until = NULL WHERE (failing_since IS NOT NULL \
             OR breaker_failures <> 0 OR breaker_open_until IS NOT NULL) \
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
        let breaker = Breaker {
            failures: u32::try_from(failures).unwrap_or(u32::MAX),
            open_until: open_until.map(crate::rows::instant),
        }
        .after(outcome);
        query::<DB>(
            "UPDATE webhook_endpoints SET failing_since = $2, \
             enabled = CASE WHEN $3 IS NULL THEN enabled ELSE FALSE END, \
             disabled_reason = COALESCE($3, disabled_reason), \
             updated_at = CASE WHEN $3 IS NULL THEN updated_at ELSE $4 END, \
             disabled_at = CASE WHEN $3 IS NULL THEN disabled_at ELSE $4 END, \
             breaker_failures = $5, breaker_open_until = $6 WHERE id = $1",
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
