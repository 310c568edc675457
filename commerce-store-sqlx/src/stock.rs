//! Stock adjustments: a variant's stock moved by a delta under its row's lock, the adjustment
//! kept, the product stamped; the stock an order's write moves (reservations, releases,
//! restocks); a variant's history.
//!
//! [`adjust_stock_in`] and [`apply_order_stock`] take the open transaction's connection, so
//! that any operation applies an adjustment in its own transaction (a quote's acceptance, an
//! order's move).

use chrono::{DateTime, Utc};
use commerce_core::domain::pieces::StockMove;
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, QueryBuilder};

use crate::dialect::*;
use crate::order_reads::{Totalled, page_rows};
use crate::products::{touch_product, touch_products};
use crate::rows::*;
use crate::sql_store::*;

/// Locks a variant's row until the transaction ends: its `available` and its product.
async fn lock_variant<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    variant: VariantId,
) -> StoreResult<Option<(i64, i64)>> {
    query_as::<DB, (i64, i64)>(AssertSqlSafe(format!(
        "SELECT available, product_id FROM variants WHERE id = $1{}",
        DB::FOR_UPDATE
    )))
    .bind(variant)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)
}

/// Applies one stock adjustment in the caller's open transaction
/// ([`CatalogStore::adjust_stock`]): the variant's row locked and read, the rule of
/// commerce-core ([`NewStockAdjustment::decide`]), then `available`, the product's
/// `updated_at` and the kept adjustment (four statements). A refusal writes nothing (the
/// caller rolls back).
pub(crate) async fn adjust_stock_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    new: NewStockAdjustment,
    now: DateTime<Utc>,
) -> Result<StockAdjustment, StockError> {
    let at = nanos(now)?;
    let (available, product) = lock_variant(c, new.variant_id)
        .await?
        .ok_or(StockError::NotFound)?;
    let held = if new.delta > 0 {
        held_by_orders_in(c, new.variant_id).await?
    } else {
        0
    };
    let after = new.decide(available, held)?;
    query::<DB>("UPDATE variants SET available = $2 WHERE id = $1")
        .bind(new.variant_id)
        .bind(after)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    touch_product(c, product, at).await?;
    let id: i64 = query_scalar::<DB, i64>(
        "INSERT INTO stock_adjustments (variant_id, delta, reason, note, order_id, quote_id, \
         available_after, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(new.variant_id)
    .bind(new.delta)
    .bind(new.reason.as_str())
    .bind(&new.note)
    .bind(new.order_id)
    .bind(new.quote_id)
    .bind(after)
    .bind(at)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    Ok(new.into_adjustment(StockAdjustmentId::new(id), after, instant(at)))
}

/// The pieces of a variant its orders hold and may still give back
/// ([`held_by_orders`](commerce_core::domain::pieces::held_by_orders)), summed from its history in one
/// statement (the `stock_adjustments_variant` index); read under the variant's row lock.
async fn held_by_orders_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    variant: VariantId,
) -> StoreResult<i64> {
    query_scalar::<DB, i64>(
        "SELECT CAST(-COALESCE(SUM(delta), 0) AS BIGINT) FROM stock_adjustments \
         WHERE variant_id = $1 AND reason IN ('reservation', 'release', 'restock')",
    )
    .bind(variant)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)
}

/// Applies the stock an order's write moves ([`stock_moves`]) in the caller's open
/// transaction: variant by variant in id order (the one order every transaction locks
/// variants in), each with one conditional update that refuses to take more pieces than the
/// variant has ([`StoreError::StockShortfall`]; the caller rolls back), kept in the variant's
/// history naming the order (in the update's statement on PostgreSQL), then the products
/// stamped after every variant.
pub(crate) async fn apply_order_stock<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    order: OrderId,
    moves: &[StockMove],
    now: DateTime<Utc>,
) -> StoreResult<()> {
    let at = nanos(now)?;
    let mut products = Vec::with_capacity(moves.len());
    for m in moves {
        let moved: Option<(i64, i64)> = if DB::WRITES_IN_WITH {
            query_as::<DB, (i64, i64)>(
                "WITH moved AS (UPDATE variants SET available = available + $2 \
                 WHERE id = $1 AND available + $2 >= 0 RETURNING product_id, available), \
                 kept AS (INSERT INTO stock_adjustments (variant_id, delta, reason, order_id, \
                 available_after, at) SELECT $1, $2, $3, $4, available, $5 FROM moved) \
                 SELECT product_id, available FROM moved",
            )
            .bind(m.variant_id)
            .bind(m.delta)
            .bind(m.reason.as_str())
            .bind(order)
            .bind(at)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?
        } else {
            let moved = query_as::<DB, (i64, i64)>(
                "UPDATE variants SET available = available + $2 \
                 WHERE id = $1 AND available + $2 >= 0 RETURNING product_id, available",
            )
            .bind(m.variant_id)
            .bind(m.delta)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
            if let Some((_, after)) = moved {
                keep_order_adjustment(c, order, m, after, at).await?;
            }
            moved
        };
        let Some((product, _)) = moved else {
            let available: i64 =
                query_scalar::<DB, i64>("SELECT available FROM variants WHERE id = $1")
                    .bind(m.variant_id)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?
                    .unwrap_or(0);
            return Err(StoreError::StockShortfall {
                variant: m.variant_id,
                available,
                shortfall: m.delta.saturating_neg().saturating_sub(available),
            });
        };
        products.push(product);
    }
    touch_products(c, products, at).await
}

/// Keeps one stock move of an order in its variant's history, `after` pieces left.
pub(crate) async fn keep_order_adjustment<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    order: OrderId,
    m: &StockMove,
    after: i64,
    at: i64,
) -> StoreResult<()> {
    query::<DB>(
        "INSERT INTO stock_adjustments (variant_id, delta, reason, order_id, available_after, \
         at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(m.variant_id)
    .bind(m.delta)
    .bind(m.reason.as_str())
    .bind(order)
    .bind(after)
    .bind(at)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    Ok(())
}

/// A variant's adjustments, newest first, one page ([`CatalogStore::stock_adjustments`]): the
/// page with its total in one statement (the `stock_adjustments_variant` index).
pub(crate) async fn stock_adjustments<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    variant: VariantId,
    page: PageRequest,
) -> StoreResult<Page<StockAdjustment>> {
    let mut q = QueryBuilder::<DB>::new(concat!(
        "SELECT ",
        adjustment_cols!(),
        ", COUNT(*) OVER () AS total FROM stock_adjustments WHERE variant_id = "
    ));
    q.push_arg(variant.get());
    q.push(" ORDER BY id DESC");
    let mut count =
        QueryBuilder::<DB>::new("SELECT COUNT(*) FROM stock_adjustments WHERE variant_id = ");
    count.push_arg(variant.get());
    let (rows, total) = page_rows::<DB, PagedAdjustmentRow>(c, q, count, page, false).await?;
    let items = rows
        .into_iter()
        .map(|r| r.row.into_domain())
        .collect::<StoreResult<_>>()?;
    Ok(Page::new(items, total))
}

impl Totalled for PagedAdjustmentRow {
    fn total(&self) -> i64 {
        self.total
    }
}
