//! The earnings booked on each order and summed per account and family, and the booking of orders stored before those sums were kept.

use commerce_core::domain::earnings::{OrderEarnings, Withdrawn, settled_taken, shortfall};
use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::*;
use sqlx::AssertSqlSafe;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::order_reads::*;
use crate::outbox::OutboxEvent;
use crate::rows::*;
use crate::sql_store::*;

/// Books `order`'s earnings as it stands now (it was booked as `was`): writes them on
/// its row and moves the account's family sums, queuing `event` and counting one order
/// operation for `bill_month` with the sums ([`count_families`]), in the caller's transaction.
pub(crate) async fn rebook<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    order: &Order,
    was: Booked,
    event: Option<OutboxEvent>,
    bill_month: Option<&BillingMonth>,
) -> StoreResult<()> {
    let now = Booked::new(order.status.family(), OrderEarnings::of(order))?;
    if (now.net, now.commission) != (was.net, was.commission) {
        query::<DB>(
            "UPDATE orders SET earnings_net = $2, earnings_commission = $3 \
             WHERE id = $1",
        )
        .bind(order.id)
        .bind(now.net)
        .bind(now.commission)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    }
    let deltas = FamilyDelta::moving(was, now);
    count_families(c, order.account_id.into(), &deltas, event, bill_month).await
}

// Crate-internal methods only: `Dialect` is this crate's own seam.
#[allow(private_bounds)]
impl<DB: Dialect> SqlStore<DB> {
    /// Books the earnings of orders stored before the earnings columns existed
    /// (NULL), a batch per transaction; returns how many. Each row is booked once,
    /// also when several instances migrate at the same time.
    pub(crate) async fn book_unbooked_orders(&self) -> StoreResult<u64> {
        let mut booked = 0;
        loop {
            let ids: Vec<i64> = query_scalar::<DB, i64>(
                "SELECT id FROM orders WHERE earnings_net IS NULL ORDER BY id LIMIT 200",
            )
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
            if ids.is_empty() {
                return Ok(booked);
            }
            let mut tx = self.write().await?;
            let result = async {
                let c = &mut tx.tx;
                let mut count = 0;
                for order in load_orders(c, &ids).await? {
                    let now = Booked::new(order.status.family(), OrderEarnings::of(&order))?;
                    let done = query::<DB>(
                        "UPDATE orders SET earnings_net = $2, earnings_commission = $3 \
                         WHERE id = $1 AND earnings_net IS NULL",
                    )
                    .bind(order.id)
                    .bind(now.net)
                    .bind(now.commission)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                    if done.rows_affected() == 1 {
                        let delta = FamilyDelta {
                            family: now.family.as_str(),
                            count: 0,
                            net: now.net,
                            commission: now.commission,
                        };
                        count_families(c, order.account_id.into(), &[delta], None, None).await?;
                        count += 1;
                    }
                }
                Ok::<u64, StoreError>(count)
            }
            .await;
            booked += tx.finish(result).await?;
        }
    }
}

/// Refuses a write of `before` into `after` that takes from its marketer's settled earnings
/// more than is left over its withdrawals
/// ([`shortfall`](commerce_core::domain::earnings::shortfall)), in the caller's transaction:
/// the account's row is locked first (`FOR NO KEY UPDATE`, as a withdrawal request locks it),
/// so a withdrawal and a correction of one account apply one after the other. No statement
/// when the write takes nothing.
pub(crate) async fn check_marketer_covers<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    before: &Order,
    after: &Order,
) -> StoreResult<()> {
    let taken = settled_taken(OrderEarnings::of(before), OrderEarnings::of(after));
    if taken.is_zero() {
        return Ok(());
    }
    let account = before.account_id;
    query::<DB>(AssertSqlSafe(format!(
        "SELECT id FROM accounts WHERE id = $1{}",
        DB::FOR_NO_KEY_UPDATE
    )))
    .bind(account)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    let settled: i64 = query_scalar::<DB, i64>(
        "SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT) FROM account_order_counts \
         WHERE account_id = $1 AND family IN ('delivered', 'archived')",
    )
    .bind(account)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    let withdrawn = withdrawn(c, account).await?;
    match shortfall(from_piastres(settled), taken, withdrawn) {
        Some(shortfall) => Err(StoreError::MarketerShortfall { account, shortfall }),
        None => Ok(()),
    }
}

/// What `account` has withdrawn (completed) and asked to withdraw (pending), in one statement.
pub(crate) async fn withdrawn<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: AccountId,
) -> StoreResult<Withdrawn> {
    let (received, pending): (i64, i64) = query_as::<DB, (i64, i64)>(
        "SELECT \
         CAST(COALESCE(SUM(CASE WHEN status = 'completed' THEN amount END), 0) AS BIGINT), \
         CAST(COALESCE(SUM(CASE WHEN status = 'pending' THEN amount END), 0) AS BIGINT) \
         FROM withdrawals WHERE account_id = $1",
    )
    .bind(account)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    Ok(Withdrawn::new(
        from_piastres(received),
        from_piastres(pending),
    ))
}
