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
         AND e.enabled AND (e.events = '{ALL_EVENTS}' OR {}(',' || e.events || ',', ',{},') > 0))",
        DB::INSTR,
        kind.as_str()
    )
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
