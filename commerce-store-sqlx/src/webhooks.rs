//! Webhook endpoints, the outbox of their deliveries, and the dispatcher's leases.
//!
//! The outbox itself (what the order writes queue) is in [`outbox`](crate::outbox), the
//! dispatcher's claims and recorded attempts in [`dispatch`](crate::dispatch).

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, QueryBuilder};

use crate::dialect::*;
use crate::dispatch::{pick_claimable, record_attempts};
use crate::order_reads::limit;
use crate::rows::*;
use crate::sql_store::*;

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
         breaker_open_until = $13, disabled_at = $14, failed_attempts = $15 WHERE id = $1",
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
    .bind(i64::from(webhook.failed_attempts))
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
    let event = event(c).await?;
    let pending = query_scalar::<DB, i64>(
        "SELECT COUNT(*) FROM webhook_deliveries \
         WHERE endpoint_id = $1 AND status = 'pending' AND manual",
    )
    .bind(webhook)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    // The rule every store applies: no event, disabled, busy, in that order.
    let pending = usize::try_from(pending).unwrap_or(usize::MAX);
    let event = endpoint.admit_manual(event, pending, limit)?;
    let row = query_as::<DB, DeliveryRow>(concat!(
        "INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, \
         order_id, payload, snapshot, status, attempts, next_attempt_at, created_at, manual) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $8, $8, TRUE) RETURNING ",
        delivery_cols!()
    ))
    .bind(webhook)
    .bind(endpoint.account_id)
    .bind(event.id)
    .bind(event.kind.as_str())
    .bind(event.order_id)
    .bind(payload_column(&event.snapshot))
    .bind(snapshot_json(&event.snapshot)?)
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
        Ok(Webhook::registered(WebhookId::new(id), new))
    }

    async fn webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> StoreResult<Option<Webhook>> {
        find_webhook(&self.pool, account, id, "").await
    }

    async fn find_webhooks(
        &self,
        query: &WebhookQuery,
        page: PageRequest,
    ) -> StoreResult<Listing<Webhook>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        crate::back_office::find_webhooks(&mut c, query, page).await
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
        Ok(Page::new(
            rows.into_iter()
                .map(|(row, _)| row.into_domain())
                .collect::<StoreResult<_>>()?,
            total as u64,
        ))
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
            Ok(Some(Page::new(items, total as u64)))
        }
        .await;
        tx.finish(result).await
    }

    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_for: TimeDelta,
        lease: &LeaseToken,
        limit: usize,
        per_endpoint: usize,
        per_account: usize,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let at = nanos(now)?;
        let until = nanos(now + lease_for)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            if let Some(serialize) = DB::SERIALIZE_CLAIMS {
                query::<DB>(serialize)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
            }
            let leased: Vec<(i64, i64)> = query_as::<DB, (i64, i64)>(
                "SELECT d.endpoint_id, e.account_id FROM webhook_deliveries d \
                 JOIN webhook_endpoints e ON e.id = d.endpoint_id \
                 WHERE d.lease_until > $1 AND d.status = 'pending'",
            )
            .bind(at)
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
            let leased = leased
                .into_iter()
                .map(|(endpoint, account)| (WebhookId::new(endpoint), AccountId::new(account)));
            let room = ClaimRoom::new(per_endpoint, per_account, leased);
            let picked = pick_claimable(c, at, limit, room).await?;
            if picked.is_empty() {
                return Ok(Vec::new());
            }
            let mut q = QueryBuilder::<DB>::new("UPDATE webhook_deliveries SET lease_owner = ");
            q.push_arg(lease.as_str())
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
                    " FROM webhook_endpoints WHERE id"
                ),
                chunk,
                "",
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
        lease: &LeaseToken,
        outcome: AttemptOutcome,
    ) -> StoreResult<bool> {
        let recorded = self
            .finish_deliveries(vec![(delivery, lease.clone(), outcome)])
            .await?;
        Ok(recorded.first().copied().unwrap_or(false))
    }

    async fn finish_deliveries(
        &self,
        attempts: Vec<(DeliveryId, LeaseToken, AttemptOutcome)>,
    ) -> StoreResult<Vec<bool>> {
        if attempts.is_empty() {
            return Ok(Vec::new());
        }
        // One transaction (one commit) for the attempts that finished together.
        let mut tx = self.write().await?;
        let result = record_attempts(&mut tx.tx, attempts).await;
        tx.finish(result).await
    }

    async fn queue_catalog_changed(
        &self,
        head: ChangePosition,
        event: NewEvent,
        sent_before: DateTime<Utc>,
    ) -> StoreResult<u64> {
        let event = &event;
        retrying(|| async move {
            let mut tx = self.write().await?;
            let result =
                crate::outbox::queue_catalog_changed(&mut tx.tx, head, event, sent_before).await;
            tx.finish(result).await
        })
        .await
    }

    async fn webhook_backlog(&self, now: DateTime<Utc>) -> StoreResult<WebhookBacklog> {
        crate::dispatch::backlog(&self.pool, bound_nanos(now)).await
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
