//! Writing orders: placing (stock, references, numbers, billing, the idempotency link), status moves, line outcomes, tracking.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::domain::earnings::{EarningsTotals, WalletTotals};
use commerce_core::domain::pieces::stock_moves;
use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::*;
use sqlx::AssertSqlSafe;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::order_reads::*;
use crate::outbox::{OutboxEvent, subscribed};
use crate::placing::place_order_in;
use crate::rows::*;
use crate::sql_store::*;
use crate::statement::{book_supply, statement_page, supplier_wallet};
use crate::stock::apply_order_stock;
use crate::wallet::*;

/// Whether an order exists (`exists`).
const ORDER_EXISTS: &str = "SELECT id FROM orders WHERE id = $1";

/// The moving order's account, status, booked earnings (net, commission), timeline and
/// `updated_at`, and whether the account has an endpoint that receives the move.
type MovingRow = (i64, String, Option<i64>, Option<i64>, String, i64, bool);

pub(crate) async fn change_status_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    change: StatusChange,
) -> Result<Order, StatusChangeError> {
    // With whether the account has an endpoint that receives the move (see placing).
    let current: Option<MovingRow> = query_as::<DB, MovingRow>(AssertSqlSafe(format!(
        "SELECT account_id, status, earnings_net, earnings_commission, timeline, updated_at, \
             {} FROM orders WHERE id = $1{}",
        subscribed::<DB>("orders.account_id", EventType::OrderStatusChanged),
        DB::FOR_NO_KEY_UPDATE
    )))
    .bind(change.order_id)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?;
    let Some((account, current, net, commission, timeline, updated_at, hooked)) = current else {
        return Err(StatusChangeError::NotFound);
    };
    let was = Booked::from_row(&current, net, commission)?;
    // The one rule of commerce-core decides whether the order may move and what changes.
    let previous = status(&current)?;
    let step = StatusMove::check(&change, AccountId::new(account), previous)?;
    unchanged_since(change.read_at, instant(updated_at))?;
    let before = load_order(c, change.order_id.into()).await?;
    if step.names_unknown_line(&before.lines) {
        return Err(StatusChangeError::NotFound);
    }
    let at = nanos(step.at)?;
    // The stock the move makes (a release, a restock), from the order as it will stand.
    let mut after = before.clone();
    step.clone().apply(&mut after);
    check_marketer_covers(c, &before, &after).await?;
    apply_order_stock(
        c,
        change.order_id,
        &stock_moves(Some(&before), &after),
        step.at,
    )
    .await?;
    write_line_outcomes(c, change.order_id, &step.outcomes)
        .await
        .map_err(|e| match e {
            StoreError::NotFound => StatusChangeError::NotFound,
            other => StatusChangeError::Store(other),
        })?;
    // The status and the new timeline entry in one write of the order's row, which returns
    // the row as it stands after the move.
    let mut timeline = parse_timeline(change.order_id.into(), &timeline)?;
    timeline.push(step.timeline_entry);
    let moved: OrderRow = query_as::<DB, OrderRow>(concat!(
        "UPDATE orders SET status = $2, family = $3, ",
        updated_at_after!("$4"),
        ", confirmed_at = COALESCE($5, confirmed_at), \
             delivered_at = COALESCE($6, delivered_at), timeline = $7 WHERE id = $1 \
             RETURNING ",
        order_cols!()
    ))
    .bind(change.order_id)
    .bind(step.to.as_str())
    .bind(step.to.family().as_str())
    .bind(at)
    .bind(opt_nanos(step.confirmed_at)?)
    .bind(opt_nanos(step.delivered_at)?)
    .bind(timeline_json(&timeline)?)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    let id = moved.id;
    let order = with_lines(c, &[id], vec![moved])
        .await?
        .pop()
        .ok_or(StoreError::NotFound)?;
    let event = hooked.then(|| {
        OutboxEvent::of(
            EventType::OrderStatusChanged,
            &order,
            Some(previous),
            change.events,
        )
    });
    // The contended rows in the one order every operation takes them in (variants,
    // products, then the account's counters, with the event, then its meter): no deadlocks.
    rebook(c, &order, was, event, change.bill_month.as_ref()).await?;
    book_supply(
        c,
        SupplyBooking::of_order_write(Some(&before), &order, change.at),
    )
    .await?;
    Ok(order)
}

/// Replaces the outcome of each named line of `order`: `NotFound` at the first line the order
/// does not have (the caller's transaction then rolls back).
async fn write_line_outcomes<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    order: OrderId,
    outcomes: &[(LineId, LineOutcome)],
) -> StoreResult<()> {
    for (line, outcome) in outcomes {
        let done = query::<DB>(
            "UPDATE order_lines SET delivered_quantity = $3, \
             returned_quantity = $4, damaged_quantity = $5, \
             lost_quantity = $6, destroyed_quantity = $7 \
             WHERE id = $1 AND order_id = $2",
        )
        .bind(*line)
        .bind(order)
        .bind(outcome.delivered_quantity)
        .bind(outcome.returned_quantity)
        .bind(outcome.damaged_quantity)
        .bind(outcome.lost_quantity)
        .bind(outcome.destroyed_quantity)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
        found(done.rows_affected())?;
    }
    Ok(())
}

#[async_trait]
impl<DB: Dialect> OrderStore for SqlStore<DB> {
    async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError> {
        // The common order in one statement on PostgreSQL; any other, or one that statement
        // refused (having written nothing), by the transaction, which says why it refuses.
        if let Some(placed) = crate::checkout::place_at_once(self, &order).await? {
            return Ok(placed);
        }
        retrying(|| {
            let order = order.clone();
            async move {
                let mut tx = self.write().await?;
                let result = place_order_in(&mut tx.tx, order).await;
                tx.finish(result).await
            }
        })
        .await
    }

    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError> {
        retrying(|| {
            let change = change.clone();
            async move {
                let mut tx = self.write().await?;
                let result = change_status_in(&mut tx.tx, change).await;
                tx.finish(result).await
            }
        })
        .await
    }

    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        read_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> StoreResult<Order> {
        let at = nanos(now)?;
        let read_at = read_at.map(nanos).transpose()?;
        retrying(|| async {
            let mut tx = self.write().await?;
            let result = async {
                let c = &mut tx.tx;
                // Written only when the order is as the caller read it (`read_at`).
                let row: Option<(String, Option<i64>, Option<i64>)> =
                    query_as::<DB, (String, Option<i64>, Option<i64>)>(concat!(
                        "UPDATE orders SET ",
                        updated_at_after!("$2"),
                        " WHERE id = $1 AND ($3 IS NULL OR updated_at = $3) \
                         RETURNING status, earnings_net, earnings_commission"
                    ))
                    .bind(order)
                    .bind(at)
                    .bind(read_at)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                let Some((status_text, net, commission)) = row else {
                    return Err(
                        if read_at.is_some() && exists(c, ORDER_EXISTS, order.into()).await? {
                            StoreError::Changed
                        } else {
                            StoreError::NotFound
                        },
                    );
                };
                let was = Booked::from_row(&status_text, net, commission)?;
                let before = load_order(c, order.into()).await?;
                let mut after = before.clone();
                for (line_id, outcome) in &outcomes {
                    let line = after.lines.iter_mut().find(|l| l.id == *line_id);
                    line.ok_or(StoreError::NotFound)?.outcome = outcome.clone();
                }
                check_marketer_covers(c, &before, &after).await?;
                apply_order_stock(c, order, &stock_moves(Some(&before), &after), now).await?;
                write_line_outcomes(c, order, &outcomes).await?;
                let order = load_order(c, order.into()).await?;
                rebook(c, &order, was, None, None).await?;
                book_supply(c, SupplyBooking::of_order_write(Some(&before), &order, now)).await?;
                Ok(order)
            }
            .await;
            tx.finish(result).await
        })
        .await
    }

    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> StoreResult<Order> {
        let at = nanos(now)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            let done = query::<DB>(concat!(
                "UPDATE orders SET tracking_url = $2, ",
                updated_at_after!("$3"),
                " WHERE id = $1"
            ))
            .bind(order)
            .bind(&url)
            .bind(at)
            .execute(&mut *c)
            .await
            .map_err(backend)?;
            found(done.rows_affected())?;
            load_order(c, order.into()).await
        }
        .await;
        tx.finish(result).await
    }

    async fn order(&self, account: Option<AccountId>, id: OrderId) -> StoreResult<Option<Order>> {
        // Two statements, no transaction: the order row carries its status and
        // timeline together; its lines only change in their outcomes.
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let c = &mut c;
        let order = load_orders(c, &[id.into()]).await?.pop();
        Ok(order.filter(|o| account.is_none_or(|a| a == o.account_id)))
    }

    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> StoreResult<Page<Order>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        orders_page(&mut c, account, filter, page).await
    }

    async fn order_versions(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> StoreResult<Page<OrderVersion>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        order_versions_page(&mut c, account, filter, page).await
    }

    async fn find_orders(
        &self,
        query: &OrderQuery,
        page: PageRequest,
    ) -> StoreResult<Listing<Order>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        crate::back_office::find_orders(&mut c, query, page).await
    }

    async fn order_status_counts(
        &self,
        query: &OrderQuery,
    ) -> StoreResult<Vec<(OrderStatus, Count)>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        crate::back_office::order_status_counts(&mut c, query).await
    }

    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> StoreResult<WalletTotals> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        wallet_totals(&mut c, account, held_after).await
    }

    async fn statement(
        &self,
        supplier: AccountId,
        filter: &StatementFilter,
        page: PageRequest,
    ) -> StoreResult<Page<StatementEntry>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        statement_page(&mut c, supplier, filter, page).await
    }
}

/// An account's wallet sums: the family sums plus the orders delivered within the hold
/// period (`orders_delivered` index) in one statement (one snapshot), and the account's
/// supplier sums ([`supplier_wallet`]; zeros for a marketer, as the first are for a supplier).
pub(crate) async fn wallet_totals<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: AccountId,
    held_after: DateTime<Utc>,
) -> StoreResult<WalletTotals> {
    let (expected, settled, settled_commission, held, earliest): (i64, i64, i64, i64, Option<i64>) =
        query_as::<DB, (i64, i64, i64, i64, Option<i64>)>(
            "SELECT \
         (SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT) FROM account_order_counts \
          WHERE account_id = $1 AND family IN ('pending', 'confirmed', 'shipping')), \
         (SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT) FROM account_order_counts \
          WHERE account_id = $1 AND family IN ('delivered', 'archived')), \
         (SELECT CAST(COALESCE(SUM(commission), 0) AS BIGINT) \
          FROM account_order_counts \
          WHERE account_id = $1 AND family IN ('delivered', 'archived')), \
         CAST(COALESCE(SUM(earnings_net), 0) AS BIGINT), MIN(delivered_at) \
         FROM orders WHERE account_id = $1 AND delivered_at > $2 \
         AND family IN ('delivered', 'archived')",
        )
        .bind(account)
        .bind(bound_nanos(held_after))
        .fetch_one(&mut *c)
        .await
        .map_err(backend)?;
    let supplier = supplier_wallet(c, account, held_after).await?;
    Ok(WalletTotals::new(
        EarningsTotals::new(
            from_piastres(expected),
            from_piastres(settled),
            from_piastres(settled_commission),
        ),
        from_piastres(held),
        earliest.map(instant),
    )
    .and(supplier))
}
