//! The outbox of webhook deliveries. It is written by the order writes themselves, inside
//! their transaction: after the order's row (with its timeline entry), one statement inserts a
//! delivery of its event ([`OutboxEvent`]) for every enabled endpoint of the order's account
//! that receives the event's type. Those writes learn whether there is any such endpoint from a
//! column of a statement they run anyway ([`subscribed`]), so an account without endpoints pays
//! no statement and no rendering.

use commerce_core::model::*;
use commerce_core::webhooks::order_event;

use sqlx::AssertSqlSafe;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::rows::*;
use crate::sql_store::*;

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
/// by [`queue`](Self::queue) in the transaction that wrote the order.
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

    /// Inserts one pending delivery of the event for every enabled endpoint of the account
    /// that receives its type (one statement).
    pub(crate) async fn queue<DB: Dialect>(self, c: &mut PoolConnection<DB>) -> StoreResult<()> {
        let sql = format!(
            "INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, \
             order_id, payload, status, attempts, next_attempt_at, created_at) \
             SELECT id, account_id, $2, $3, $4, $5, 'pending', 0, $6, $6 \
             FROM webhook_endpoints WHERE account_id = $1 AND enabled \
             AND {}(',' || events || ',', $7) > 0",
            DB::INSTR,
        );
        let OutboxEvent { account, event } = self;
        query::<DB>(AssertSqlSafe(sql))
            .bind(account)
            .bind(event.id)
            .bind(event.kind.as_str())
            .bind(event.order_id)
            .bind(event.payload)
            .bind(nanos(event.created_at)?)
            .bind(format!(",{},", event.kind.as_str()))
            .execute(&mut *c)
            .await
            .map_err(backend)?;
        Ok(())
    }
}
