//! The outbox of webhook deliveries. It is written by the order writes themselves, inside
//! their transaction: the statement that updates the account's order counters also inserts a
//! delivery of the order's event ([`OutboxEvent`]) for every enabled endpoint of the account
//! that receives the event's type (on PostgreSQL in one statement, a data-modifying `WITH`; on
//! SQLite, or when no counter moves, in a statement of its own). Those writes learn whether
//! there is any such endpoint from a column of a statement they run anyway ([`subscribed`]), so
//! an account without endpoints pays no statement and no snapshot.
//!
//! The store never renders an event: each delivery keeps the event's snapshot (the order as it
//! stood after the change, the status it left, the payout hold) in its `snapshot` column, in
//! the storage format of [`snapshot_json`](crate::rows::snapshot_json), and the dispatcher
//! renders the body from it when it sends.

use commerce_core::model::*;

use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::rows::*;
use crate::sql_store::*;

/// A boolean select-list item: whether the account `account` (an SQL expression, e.g. a
/// column of the statement's own table) has an enabled endpoint that receives `kind`.
pub(crate) fn subscribed<DB: Dialect>(account: &str, kind: EventType) -> String {
    format!(
        "EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = {account} \
         AND e.enabled AND {})",
        receives::<DB>("e.events", kind)
    )
}

/// A boolean SQL condition: whether an endpoint whose `events` column is `events` takes
/// `kind` (every type, [`ALL_EVENTS`], or a list naming it).
fn receives<DB: Dialect>(events: &str, kind: EventType) -> String {
    format!(
        "({events} = '{ALL_EVENTS}' OR {}(',' || {events} || ',', ',{},') > 0)",
        DB::INSTR,
        kind.as_str()
    )
}

/// [`WebhookStore::queue_catalog_changed`](commerce_core::store::WebhookStore::queue_catalog_changed)
/// in the caller's transaction: marks the due endpoints (enabled, of an active marketer whose
/// API access is approved, taking `catalog.changed`, none of it pending, never sent one or last
/// sent a position before `head` at or before `sent_before`) with `head`, the event's instant
/// and its id, then inserts one delivery for
/// each endpoint marked with that id. Two statements, each one pass over the endpoints,
/// whatever the number of changes; on PostgreSQL the update locks the rows it marks, and a
/// concurrent round that meets them waits and then finds them no longer due.
pub(crate) async fn queue_catalog_changed<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    head: ChangePosition,
    event: &NewEvent,
    sent_before: chrono::DateTime<chrono::Utc>,
) -> StoreResult<u64> {
    let at = nanos(event.created_at)?;
    let marked = query::<DB>(sqlx::AssertSqlSafe(format!(
        "UPDATE webhook_endpoints SET catalog_sent_high = $1, catalog_sent_low = $2, \
         catalog_sent_at = $3, catalog_event_id = $4 \
         WHERE enabled AND {} \
         AND account_id IN (SELECT id FROM accounts WHERE side = 'marketer' \
           AND state = 'active' AND api_status = 'approved') \
         AND (catalog_sent_at IS NULL OR (catalog_sent_at <= $5 AND (catalog_sent_high < $1 \
         OR (catalog_sent_high = $1 AND catalog_sent_low < $2)))) \
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d \
           WHERE d.endpoint_id = webhook_endpoints.id AND d.status = 'pending' \
           AND d.event_type = 'catalog.changed')",
        receives::<DB>("events", EventType::CatalogChanged)
    )))
    .bind(head.high())
    .bind(head.low())
    .bind(at)
    .bind(&event.id)
    .bind(nanos(sent_before)?)
    .execute(&mut *c)
    .await
    .map_err(backend)?
    .rows_affected();
    if marked == 0 {
        return Ok(0);
    }
    query::<DB>(
        "INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, \
         payload, snapshot, status, attempts, next_attempt_at, created_at) \
         SELECT id, account_id, $1, $2, '', $3, 'pending', 0, $4, $4 \
         FROM webhook_endpoints WHERE catalog_event_id = $1",
    )
    .bind(&event.id)
    .bind(event.kind.as_str())
    .bind(snapshot_json(&event.snapshot)?)
    .bind(at)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    Ok(marked)
}

/// An event for the outbox (a snapshot, not a rendering), queued in the transaction of its
/// change: an order event with the account's counters
/// ([`count_families`](crate::order_reads::count_families)) in the transaction that wrote the
/// order, a quote's or a withdrawal's event ([`OutboxEvent::queue`]) in that of its move.
pub(crate) struct OutboxEvent {
    account: AccountId,
    event: NewEvent,
}

impl OutboxEvent {
    /// `event` for the endpoints of `account` that receive its type.
    pub(crate) fn new(account: AccountId, event: NewEvent) -> Self {
        OutboxEvent { account, event }
    }

    /// The event `kind` of `order` as it stands after the change.
    pub(crate) fn of(
        kind: EventType,
        order: &Order,
        previous: Option<OrderStatus>,
        context: EventContext,
    ) -> Self {
        OutboxEvent {
            account: order.account_id,
            event: NewEvent::order(kind, order, previous, context),
        }
    }

    /// Pushes the insert of one pending delivery of the event for every enabled endpoint of
    /// the account that receives its type, with its values bound.
    pub(crate) fn push_insert<DB: Dialect>(self, q: &mut QueryBuilder<DB>) -> StoreResult<()> {
        let OutboxEvent { account, event } = self;
        let at = nanos(event.created_at)?;
        q.push(
            "INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, \
             order_id, payload, snapshot, status, attempts, next_attempt_at, created_at) \
             SELECT id, account_id, ",
        )
        .push_arg(event.id)
        .push(", ")
        .push_arg(event.kind.as_str())
        .push(", ")
        .push_arg(event.order_id)
        .push(", ")
        .push_arg(payload_column(&event.snapshot))
        .push(", ")
        .push_arg(snapshot_json(&event.snapshot)?)
        .push(", 'pending', 0, ")
        .push_arg(at)
        .push(", ")
        .push_arg(at)
        .push(" FROM webhook_endpoints WHERE account_id = ")
        .push_arg(account)
        .push(format_args!(
            " AND enabled AND (events = '{ALL_EVENTS}' OR {}(',' || events || ',', ",
            DB::INSTR
        ))
        .push_arg(format!(",{},", event.kind.as_str()))
        .push(") > 0)");
        Ok(())
    }

    /// Inserts the event's deliveries (one statement).
    pub(crate) async fn queue<DB: Dialect>(self, c: &mut PoolConnection<DB>) -> StoreResult<()> {
        let mut q = QueryBuilder::new("");
        self.push_insert(&mut q)?;
        q.build_statement()
            .execute(&mut *c)
            .await
            .map_err(backend)?;
        Ok(())
    }
}
