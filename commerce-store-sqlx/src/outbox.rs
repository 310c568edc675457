//! The outbox of webhook deliveries. It is written by the order writes themselves, inside
//! their transaction: the statement that records the order's timeline entry also inserts a delivery of its event
//! ([`OutboxEvent`]) for every enabled endpoint of the order's account that receives the
//! event's type (on PostgreSQL in one statement, a data-modifying `WITH`; on SQLite in two).
//! Those writes learn whether there is any such endpoint from a column of a statement they run
//! anyway ([`subscribed`]), so an account without endpoints pays no statement and no rendering.

use commerce_core::model::*;
use commerce_core::webhooks::order_event;

use crate::dialect::*;
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
